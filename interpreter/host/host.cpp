#include "host/host.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <toml.hpp>
#include <type_traits>

#include "host/toml_text.h"
#include "text/parser.h"
#include "valid/valid.h"

namespace simt::host {

using syntax::DiagKind;

namespace {

// Reads a whole file into `out` (a string or a byte vector), at most `limit`
// bytes; `too_large` says why in the message when it is larger.
template <class Out>
bool read_whole(const std::string& path, Out& out, std::string& err, size_t limit,
                const std::string& too_large) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    err = "cannot read '" + path + "': it is a directory, not a file";
    return false;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    err = "cannot open '" + path + "'";
    return false;
  }
  out.clear();
  char buf[1 << 16];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    if (out.size() + static_cast<size_t>(f.gcount()) > limit) {
      err = "cannot read '" + path + "': larger than " + too_large;
      out.clear();
      return false;
    }
    out.insert(out.end(), buf, buf + f.gcount());
    if (!f) break;
  }
  if (f.bad()) {
    err = "cannot read '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace

// syntax.file.size: an input file is at most kMaxInputBytes; reading stops there.
bool read_file(const std::string& path, std::string& out, std::string& err) {
  return read_whole(
      path, out, err, kMaxInputBytes,
      std::to_string(kMaxInputBytes >> 20) + " MiB (the largest input file, syntax.file.size)");
}

// preempt.tool.run, preempt.tool.image: a context image is at most 1 GiB (the
// state limit, the buffers and the SLM of the largest launch fit well within).
bool read_binary(const std::string& path, std::vector<uint8_t>& out, std::string& err) {
  return read_whole(path, out, err, kMaxImageBytes, "1 GiB");
}

namespace {

// state.launch.sources: one `[launch]` key's value, of its row's type. Returns the
// error (prefixed by `where`, the file and line) or nothing.
template <exec::SettingType T>
std::optional<std::string> toml_setting(const toml::value& v, const std::string& key,
                                        const std::string& where,
                                        std::optional<exec::SettingValue<T>>& out) {
  auto integer = [&](uint64_t max) -> std::optional<uint64_t> {
    if (!v.is_integer() || v.as_integer() < 0 || static_cast<uint64_t>(v.as_integer()) > max)
      return std::nullopt;
    return static_cast<uint64_t>(v.as_integer());
  };
  if constexpr (T == exec::SettingType::U32) {
    auto n = integer(0xffffffffu);
    if (!n) return where + "'" + key + "' must be a non-negative 32-bit integer";
    out = static_cast<uint32_t>(*n);
  } else if constexpr (T == exec::SettingType::U64) {
    auto n = integer(static_cast<uint64_t>(INT64_MAX));
    if (!n) return where + "'" + key + "' must be a non-negative integer";
    out = *n;
  } else if constexpr (T == exec::SettingType::Policy) {
    if (!v.is_string()) return where + "'" + key + "' must be a string";
    auto p = exec::find_policy(v.as_string().str);
    if (!p) return where + "unknown policy '" + v.as_string().str + "'";
    out = *p;
  } else {
    static_assert(T == exec::SettingType::Bool);
    if (!v.is_boolean()) return where + "'" + key + "' must be true or false";
    out = v.as_boolean();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> parse_config_toml(std::string_view text, const std::string& name,
                                             Overrides& out) {
  auto parsed = parse_toml(text);
  if (auto* e = std::get_if<TomlError>(&parsed))
    return name + ":" + (e->line ? std::to_string(e->line) + ":" : std::string()) + " " +
           e->message;
  try {
    const TomlDoc& doc = std::get<TomlDoc>(parsed);
    const toml::value& data = doc.root;
    for (const auto& [key, value] : data.as_table()) {
      if (key != "launch") return name + ": unknown table or key '" + key + "' (expected [launch])";
      if (!value.is_table()) return name + ": 'launch' must be a table";
    }
    if (!data.contains("launch")) return std::nullopt;
    for (const auto& entry : toml::find(data, "launch").as_table()) {
      const std::string& key = entry.first;
      const toml::value& v = entry.second;  // a plain reference: lambdas may capture it
      auto where = name + ":" + std::to_string(doc.line(v)) + ": ";
      std::optional<std::optional<std::string>> read;  // set when the key is a setting's
#define SIMT_SETTING(name, T, ...) \
  if (key == #name) read = toml_setting<exec::SettingType::T>(v, key, where, out.name);
#include "exec/settings.def"
      if (!read) return where + "unknown key '" + key + "' in [launch]";
      if (*read) return **read;
    }
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::optional<std::string> load_config_toml(const std::string& path, Overrides& out) {
  std::string text, err;
  if (!read_file(path, text, err)) return err;
  return parse_config_toml(text, path, out);
}

std::optional<std::string> host_step_from(const std::vector<HostField>& keys,
                                          syntax::HostStep& out) {
  using syntax::HostKind;
  auto find = [&](std::string_view k) -> const HostValue* {
    for (const auto& f : keys)
      if (f.key == k) return &f.value;
    return nullptr;
  };
  const HostValue* step = find("step");
  const HostValue* action = find("action");
  const HostInt* step_n = step ? std::get_if<HostInt>(step) : nullptr;
  if (!step_n || step_n->negative)
    return std::string("'step' must be given as an integer from 0 to 18446744073709551615");
  out.step = step_n->magnitude;
  if (!action || !std::holds_alternative<std::string>(*action))
    return "'action' must be given as a string (" + syntax::host_kind_list() + ")";
  const std::string& a = std::get<std::string>(*action);
  const HostKind* kind = nullptr;
  for (const HostKind& k : syntax::kAllHostKinds)
    if (syntax::host_kind_name(k) == a) kind = &k;
  if (!kind) return "unknown action '" + a.substr(0, 40) + "' (" + syntax::host_kind_list() + ")";
  out.kind = *kind;
  for (const auto& f : keys) {
    if (f.key == "step" || f.key == "action") continue;
    bool known = false;
    for (std::string_view rest = syntax::host_kind_keys(out.kind); !rest.empty();) {
      const size_t sp = rest.find(' ');
      known |= rest.substr(0, sp) == f.key;
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    }
    if (!known) return "unknown key '" + f.key.substr(0, 40) + "' for the action " + a;
  }
  out.core = syntax::kAllCores;
  if (const HostValue* c = find("core")) {
    if (auto* n = std::get_if<HostInt>(c); n && !n->negative && n->magnitude < exec::kMaxCores)
      out.core = static_cast<int32_t>(n->magnitude);
    else if (auto* str = std::get_if<std::string>(c); !str || *str != "all")
      return std::string("'core' must be a core index or \"all\"");
  }
  out.code = 0;
  if (const HostValue* c = find("code")) {
    auto* n = std::get_if<HostInt>(c);
    if (!n || n->negative || n->magnitude > 0xffffff)
      return std::string("'code' must be an integer from 0 to 16777215 (trap.cause)");
    out.code = static_cast<uint32_t>(n->magnitude);
  }
  if (out.kind == HostKind::SingleStep) {
    const HostValue* on = find("on");
    if (!on || !std::holds_alternative<bool>(*on))
      return std::string("single_step needs 'on' = true or false");
    out.on = std::get<bool>(*on);
  }
  if (out.kind == HostKind::Preempt) {  // trap.host.preempt, preempt.request
    out.flow = syntax::PreemptFlow::A;
    if (const HostValue* f = find("flow")) {
      auto* str = std::get_if<std::string>(f);
      if (!str || (*str != "A" && *str != "B"))
        return std::string("'flow' must be \"A\" or \"B\" (preempt.request)");
      out.flow = *str == "A" ? syntax::PreemptFlow::A : syntax::PreemptFlow::B;
    }
    out.intruder.clear();
    if (const HostValue* t = find("intruder")) {
      auto* str = std::get_if<std::string>(t);
      if (!str) return std::string("'intruder' must be the intruder program's text, a string");
      if (out.flow != syntax::PreemptFlow::B)
        return std::string("'intruder' is for flow \"B\" only (preempt.request)");
      out.intruder = *str;
    }
  }
  if (out.kind == HostKind::BindTba || out.kind == HostKind::BindVtable) {
    const char* key = out.kind == HostKind::BindTba ? "label" : "table";
    const HostValue* n = find(key);
    if (!n || !std::holds_alternative<std::string>(*n))
      return a + " needs '" + key + "' as a string";
    out.name = std::get<std::string>(*n);
  }
  return std::nullopt;
}

std::optional<std::string> parse_host_toml(std::string_view text, const std::string& name,
                                           std::vector<syntax::HostStep>& out) {
  auto parsed = parse_toml(text);
  if (auto* e = std::get_if<TomlError>(&parsed))
    return name + ":" + std::to_string(e->line ? e->line : 1) + ":1: " + e->message;
  try {
    const TomlDoc& doc = std::get<TomlDoc>(parsed);
    const toml::value& data = doc.root;
    for (const auto& [key, value] : data.as_table())
      if (key != "host")
        return name + ":" + std::to_string(doc.line(value)) + ":1: unknown key '" +
               key.substr(0, 40) + "' (a host script holds [[host]] tables only)";
    if (!data.contains("host")) return std::nullopt;
    if (auto e = host_from_toml(doc, data.at("host"), name, out))
      return name + ":" + std::to_string(e->line ? e->line : 1) + ":1: host script: " + e->message;
  } catch (const std::exception& e) {
    return name + ": " + e.what();
  }
  return std::nullopt;
}

std::optional<std::string> load_host_toml(const std::string& path,
                                          std::vector<syntax::HostStep>& out) {
  std::string text, err;
  if (!read_file(path, text, err)) return err;
  return parse_host_toml(text, path, out);
}

namespace {
// A TOML basic string (one line, escaped).
std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      const char* hexd = "0123456789abcdef";
      out += "\\u00";
      out += hexd[c >> 4];
      out += hexd[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}
}  // namespace

std::string host_to_toml(const std::vector<syntax::HostStep>& host) {
  std::string out;
  for (const auto& h : host) {
    out += "[[host]]\nstep = " + std::to_string(h.step) + "\naction = \"" +
           std::string(syntax::host_kind_name(h.kind)) + "\"\n";
    if (h.kind != syntax::HostKind::BindVtable)
      out += "core = " + (h.core == syntax::kAllCores ? "\"all\"" : std::to_string(h.core)) + "\n";
    if (h.kind == syntax::HostKind::Interrupt) out += "code = " + std::to_string(h.code) + "\n";
    if (h.kind == syntax::HostKind::SingleStep)
      out += std::string("on = ") + (h.on ? "true" : "false") + "\n";
    if (h.kind == syntax::HostKind::BindTba) out += "label = \"" + h.name + "\"\n";
    if (h.kind == syntax::HostKind::BindVtable) out += "table = \"" + h.name + "\"\n";
    if (h.kind == syntax::HostKind::Preempt) {
      out += std::string("flow = \"") + (h.flow == syntax::PreemptFlow::A ? "A" : "B") + "\"\n";
      if (!h.intruder.empty()) out += "intruder = " + toml_string(h.intruder) + "\n";
    }
  }
  return out;
}

exec::LaunchConfig resolve_config(const syntax::LaunchDirectives& d, const LoadOptions& opt,
                                  syntax::Diagnostics& diags) {
  exec::LaunchConfig c;
  // Where each field's final value came from, for locating errors.
  // The third member is the diagnostic's origin when the value came from a
  // request's config (LoadOptions::cli_origin): "config.wave".
  struct From {
    syntax::Span span;
    std::string suffix, where;
  };
  std::map<std::string, From> origin;
  // An override equal to the directive's value leaves the directive as the origin,
  // so that errors keep pointing at the program line. `dir` is null for a setting
  // without a directive; a policy's directive names it (an unknown name is an error
  // at the directive, and leaves the setting to the overrides and the default).
  auto apply = [&](const char* name, auto& field, const auto* dir, const auto& toml,
                   const auto& cli) {
    using V = std::remove_cvref_t<decltype(field)>;
    std::optional<V> written;
    if (dir && dir->value) {
      if constexpr (std::is_same_v<V, exec::Policy>) {
        if (auto p = exec::find_policy(*dir->value))
          written = *p;
        else
          diags.add(DiagKind::Config, dir->span,
                    "unknown policy '" + *dir->value +
                        "' (round_robin, lowest_pc_first, oldest_first, random)");
      } else {
        written = *dir->value;
      }
    }
    if (written) field = *written, origin[name] = {dir->span, "", ""};
    if (toml && !(written && *written == *toml))
      field = *toml, origin[name] = {syntax::Span{}, " (set by the configuration file)", ""};
    if (cli && !(written && *written == *cli))
      field = *cli, origin[name] = opt.cli_origin.empty()
                                       ? From{syntax::Span{}, " (set on the command line)", ""}
                                       : From{syntax::Span{}, "", opt.cli_origin + name};
  };
  const Overrides& t = opt.toml;
  const Overrides& k = opt.cli;
  using NoDirective = const syntax::Directive<bool>*;
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, ...) \
  apply(#name, c.name, SIMT_SETTING_PICK_##dir(&d.name, NoDirective{}), t.name, k.name);
#include "exec/settings.def"
  // simd 0 is how LaunchConfig spells "not set" (= wave); as the value that wins
  // after overrides, it is not a width.
  const std::optional<uint32_t>& final_simd = k.simd ? k.simd : t.simd ? t.simd : d.simd.value;
  if (final_simd && *final_simd == 0) {
    auto it = origin.find("simd");
    const From from = it == origin.end() ? From{} : it->second;
    diags.add(DiagKind::Config, from.span,
              "simd 0 must be a power of two from 1 to 64" + from.suffix, {}, from.where);
    return c;
  }
  if (auto e = exec::check(c)) {
    auto it = origin.find(e->field);
    const From from = it == origin.end() ? From{} : it->second;
    diags.add(DiagKind::Config, from.span, e->message + from.suffix, {}, from.where);
  }
  return c;
}

LoadResult load(std::string_view text, const LoadOptions& opt) {
  LoadResult r;
  auto parsed = text::parse(text);
  if (!parsed.ok()) {
    r.diags = std::move(parsed.diags);
    return r;
  }
  // exec.pipeline: each stage runs only when the earlier ones found no error.
  Loaded L;
  L.ast = std::move(parsed.program);
  L.config = resolve_config(L.ast.launch, opt, r.diags);  // launch settings
  if (!r.diags.empty()) return r;
  auto buffers = exec::layout_buffers(L.ast, L.config, r.diags);  // buffer sizes and data
  if (!r.diags.empty()) return r;
  valid::check_structure(L.ast, r.diags);
  if (!r.diags.empty()) return r;
  L.expanded = valid::expand(L.ast);
  valid::Options vo;
  vo.flow = opt.validate_flow;
  valid::validate(L.expanded, L.config, r.diags, vo);
  if (!r.diags.empty()) return r;
  auto prog = exec::predecode(L.expanded, L.config, std::move(buffers), r.diags, opt.host);
  if (!prog) return r;
  // preempt.intruder: each intruder is a program of its own, assembled here.
  for (size_t i = 0; i < opt.host.size() && i < prog->host.size(); ++i) {
    const syntax::HostStep& h = opt.host[i];
    if (h.kind != syntax::HostKind::Preempt || h.intruder.empty()) continue;
    auto err = [&](const std::string& m) {
      r.diags.add(syntax::DiagKind::Config, h.span, "host script: " + m, "preempt.intruder",
                  h.origin);
    };
    LoadResult ir = load(h.intruder, LoadOptions{});
    if (!ir.loaded) {
      const auto& first = ir.diags.list().front();
      err("the intruder does not assemble: line " + std::to_string(first.span.line) + ": " +
          first.message);
      return r;
    }
    const exec::LaunchConfig& ic = ir.loaded->config;
    if (h.core == syntax::kAllCores ? ic.cores > L.config.cores : ic.cores != 1) {
      err("the intruder has " + std::to_string(ic.cores) + " cores; " +
          (h.core == syntax::kAllCores ? "at most the launch's " + std::to_string(L.config.cores)
                                       : std::string("one core was preempted, so 1")) +
          " (preempt.intruder)");
      return r;
    }
    prog->host[i].intruder = static_cast<int32_t>(prog->intruders.size());
    prog->intruders.push_back(ir.loaded->program);
  }
  L.program = std::make_shared<const exec::Program>(std::move(*prog));
  r.loaded = std::move(L);
  return r;
}

}  // namespace simt::host
