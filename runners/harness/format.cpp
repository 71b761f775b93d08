#include "format.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <toml.hpp>

#include "exec/outcome.h"
#include "host/toml_text.h"
#include "reference.h"
#include "text/parser.h"

namespace simt::harness {

namespace fs = std::filesystem;

const std::set<std::string>& known_features() {
  static const std::set<std::string> f = [] {
    std::set<std::string> r;
    for (isa::Feature x : isa::kAllFeatures) r.emplace(isa::feature_name(x));
    return r;
  }();
  return f;
}

const std::set<std::string>& known_statuses() {
  static const std::set<std::string> s = [] {
    std::set<std::string> r = {"rejected"};
    for (exec::Status st : exec::kAllStatuses) r.emplace(exec::status_name(st));
    return r;
  }();
  return s;
}

host::Overrides Settings::overrides() const {
  return runners::load_options(request()).cli;
}

runners::RunConfig Settings::request() const {
  runners::RunConfig c;
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, ...) \
  SIMT_SETTING_IF_##mx(c.name = name;)
#include "exec/settings.def"
  return c;
}

namespace {

std::string setting_text(const std::string& v) {
  return v;
}
std::string setting_text(uint64_t v) {
  return std::to_string(v);
}

}  // namespace

std::string Settings::key() const {
  std::string k;
  auto add = [&](const char* name, const std::string& v) {
    if (!k.empty()) k += ",";
    k += std::string(name) + "=" + v;
  };
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, ...) \
  SIMT_SETTING_IF_##mx(if (name) add(#name, setting_text(*name));)
#include "exec/settings.def"
  return k;
}

json::Value Settings::to_json() const {
  json::Value v = json::Object{};
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, ...) \
  SIMT_SETTING_IF_##mx(if (name) v[#name] = *name;)
#include "exec/settings.def"
  return v;
}

namespace {

struct Bad {
  uint32_t line;
  std::string message;
};

json::Value to_json(const toml::value& v) {
  if (v.is_boolean()) return v.as_boolean();
  if (v.is_integer()) return static_cast<int64_t>(v.as_integer());
  if (v.is_floating()) return static_cast<double>(v.as_floating());
  if (v.is_string()) return v.as_string().str;
  if (v.is_array()) {
    json::Array a;
    for (const auto& e : v.as_array()) a.push_back(to_json(e));
    return a;
  }
  if (v.is_table()) {
    json::Value o = json::Object{};
    // toml11 tables are unordered; sort keys for stable output.
    std::vector<std::string> keys;
    for (const auto& [k, e] : v.as_table()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    for (const auto& k : keys) o[k] = to_json(v.as_table().at(k));
    return o;
  }
  return json::Value{};
}

class HeaderReader {
 public:
  HeaderReader(const host::TomlDoc& doc, TestFile& t, std::vector<FormatError>& errs)
      : toml_(doc), doc_(doc.root), t_(t), errs_(errs) {}

  void run() {
    static const std::set<std::string> allowed = {"id",        "title",    "clauses", "features",
                                                  "requires",  "validate", "matrix",  "expect",
                                                  "generated", "origin",   "host",    "restore"};
    for (const auto& [k, v] : doc_.as_table())
      if (!allowed.count(k)) err(v, "unknown key '" + k + "'");
    t_.id = str("id", true);
    if (doc_.contains("id")) t_.id_line = toml_.line(doc_.at("id"));
    if (!t_.id.empty() && !std::regex_match(t_.id, std::regex("[a-z0-9_.\\-]+")))
      err(doc_.at("id"), "id '" + t_.id + "' may only use a-z, 0-9, '_', '.' and '-'");
    t_.title = str("title", true);
    t_.clauses = strs("clauses", true);
    if (doc_.contains("clauses") && doc_.at("clauses").is_array())  // format.lint: per clause
      for (const auto& c : doc_.at("clauses").as_array())
        if (c.is_string()) t_.clause_lines.push_back(toml_.line(c));
    t_.features = strs("features", true);
    t_.required = strs("requires", false);
    if (doc_.contains("host"))  // trap.host.toml: the launch's host script
      if (auto e = host::host_from_toml(toml_, doc_.at("host"), t_.path, t_.host))
        errs_.push_back({e->line, e->message});
    for (const auto& f : t_.features)
      if (!known_features().count(f)) err(doc_.at("features"), "unknown feature tag '" + f + "'");
    if (doc_.contains("validate")) {  // format.validate
      const auto& v = doc_.at("validate");
      if (!v.is_boolean())
        err(v, "'validate' must be true or false");
      else
        t_.validate = v.as_boolean();
    }
    if (doc_.contains("generated")) {
      const auto& g = doc_.at("generated");
      if (!g.is_boolean())
        err(g, "'generated' must be true or false");
      else
        t_.generated = g.as_boolean();
    }
    if (doc_.contains("origin")) {
      if (!doc_.at("origin").is_table())
        err(doc_.at("origin"), "'origin' must be a table");
      else
        t_.origin = to_json(doc_.at("origin"));
    }
    matrix();
    expect();
    if (doc_.contains("restore")) t_.restore = image_words(doc_.at("restore"), "restore", false);
    // format.expect.image, format.restore: an image holds the launch's max_steps,
    // so the program sets it (else the harness's cap, which `--max-steps` changes,
    // would be part of the expectation).
    if ((t_.expect.image || t_.restore) && !t_.sets_max_steps)
      errs_.push_back({t_.expect_line,
                       "a test with [expect.image] or [restore] sets .max_steps "
                       "in its program: the image holds it"});
  }

 private:
  void err(const toml::value& v, std::string m) { errs_.push_back({toml_.line(v), std::move(m)}); }
  // A key that is missing has no line of its own: it is reported at the header's
  // first line (format.lint), never at line 0.
  void err0(std::string m) { errs_.push_back({1, std::move(m)}); }

  std::string str(const char* key, bool required) {
    if (!doc_.contains(key)) {
      if (required) err0(std::string("missing '") + key + "'");
      return "";
    }
    const auto& v = doc_.at(key);
    if (!v.is_string() || v.as_string().str.empty()) {
      err(v, std::string("'") + key + "' must be a non-empty string");
      return "";
    }
    return v.as_string().str;
  }
  std::vector<std::string> strs(const char* key, bool required) {
    std::vector<std::string> out;
    if (!doc_.contains(key)) {
      if (required) err0(std::string("missing '") + key + "'");
      return out;
    }
    const auto& v = doc_.at(key);
    if (!v.is_array()) {
      err(v, std::string("'") + key + "' must be an array of strings");
      return out;
    }
    for (const auto& e : v.as_array()) {
      if (!e.is_string())
        err(v, std::string("'") + key + "' must be an array of strings");
      else
        out.push_back(e.as_string().str);
    }
    if (required && out.empty()) err(v, std::string("'") + key + "' must not be empty");
    return out;
  }

  // One item of a [matrix] key, of its row's type, into field F of s (format.matrix).
  template <exec::SettingType T, exec::Setting S, auto F>
  bool matrix_item(const toml::value& v, const toml::value& it, Settings& s) {
    const std::string k(exec::setting_info(S).name);
    if constexpr (T == exec::SettingType::Policy) {
      if (!it.is_string()) return err(v, "matrix '" + k + "' must hold strings"), false;
      s.*F = it.as_string().str;
    } else if constexpr (T == exec::SettingType::Bool) {
      if (!it.is_boolean()) return err(v, "matrix '" + k + "' must hold true or false"), false;
      s.*F = it.as_boolean();
    } else {
      if (!it.is_integer() || it.as_integer() < 0 ||
          (T == exec::SettingType::U32 && it.as_integer() > 0xffffffffll))
        return err(v, "matrix '" + k + "' must hold non-negative integers"), false;
      s.*F = static_cast<exec::SettingWritten<T>>(it.as_integer());
    }
    return true;
  }

  void matrix() {
    std::vector<Settings> configs{Settings{}};
    if (!doc_.contains("matrix")) {
      t_.configs = configs;
      return;
    }
    const auto& m = doc_.at("matrix");
    if (!m.is_table()) {
      err(m, "'matrix' must be a table");
      t_.configs = configs;
      return;
    }
    // format.matrix: the keys are the table's rows that a matrix may vary, applied
    // in the table's order.
    struct Key {
      const char* name;
      // Sets the row's field of `s` from one item; false (after reporting) if the
      // item is not of the row's type.
      bool (HeaderReader::*set)(const toml::value& v, const toml::value& item, Settings& s);
    };
    static constexpr Key order[] = {
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, ...) \
  SIMT_SETTING_IF_##mx(                                             \
      {#name,                                                       \
       &HeaderReader::matrix_item<exec::SettingType::T, exec::Setting::name, &Settings::name>}, )
#include "exec/settings.def"
    };
    for (const auto& [k, v] : m.as_table()) {
      bool known = false;
      for (const Key& o : order) known = known || k == o.name;
      if (!known) err(v, "unknown matrix key '" + k + "'");
    }
    for (const Key& o : order) {
      const char* key = o.name;
      if (!m.contains(key)) continue;
      const auto& v = m.at(key);
      t_.matrix_lines[key] = toml_.line(v);
      std::vector<toml::value> items;
      if (v.is_array())
        items = v.as_array();
      else
        items.push_back(v);
      if (items.empty()) {
        err(v, std::string("matrix '") + key + "' is empty");
        continue;
      }
      std::vector<Settings> next;
      for (const auto& base : configs) {
        for (const auto& it : items) {
          Settings s = base;
          if (!(this->*o.set)(v, it, s)) continue;
          next.push_back(s);
        }
      }
      configs = std::move(next);
      if (configs.size() > 4096) {
        err(v, "matrix has more than 4096 configurations");
        configs.resize(1);
        break;
      }
    }
    if (configs.empty()) configs.push_back(Settings{});
    t_.configs = configs;
  }

  std::optional<Expr> expr_of(const toml::value& v, const std::string& what) {
    auto e = Expr::parse(v.as_string().str);
    if (auto* msg = std::get_if<std::string>(&e)) {
      err(v, what + ": " + *msg);
      return std::nullopt;
    }
    return std::get<Expr>(std::move(e));
  }

  void expect() {
    if (!doc_.contains("expect")) {
      err0("missing [expect]: a test must state its expected outcome");
      return;
    }
    const auto& e = doc_.at("expect");
    t_.expect_line = toml_.line(e);
    if (!e.is_table()) {
      err(e, "'expect' must be a table");
      return;
    }
    t_.expect.raw = to_json(e);
    for (const auto& [k, v] : e.as_table())
      if (k != "status" && k != "event" && k != "line" && k != "buffers" && k != "image" &&
          k != "image_offset")
        err(v, "unknown key 'expect." + k + "'");
    if (!e.contains("status") || !e.at("status").is_string()) {
      err(e,
          "expect.status is required (completed, trapped, deadlock, livelock, step_limit, paused, "
          "rejected)");
      return;
    }
    auto& X = t_.expect;
    X.status = e.at("status").as_string().str;
    if (!known_statuses().count(X.status)) err(e.at("status"), "unknown status '" + X.status + "'");
    if (e.contains("line")) {
      const auto& l = e.at("line");
      if (!l.is_integer() || l.as_integer() < 1)
        err(l, "expect.line must be a positive integer");
      else
        X.line = static_cast<uint32_t>(l.as_integer());
      if (X.status != "rejected") err(l, "expect.line is only for status = \"rejected\"");
    }
    if (e.contains("event")) {
      const auto& ev = e.at("event");
      if (!ev.is_table()) {
        err(ev, "expect.event must be a table");
      } else {
        for (const auto& [k, v] : ev.as_table()) {
          if (k == "name") {
            if (!v.is_string())
              err(v, "expect.event.name must be a string");
            else
              X.event_name = v.as_string().str;
          } else if (k == "space" || k == "inner") {
            if (!v.is_string())
              err(v, "expect.event." + k + " must be a string");
            else
              X.event_fields.push_back({k, std::nullopt, std::nullopt, v.as_string().str});
          } else if (k == "warp" || k == "pc" || k == "lane" || k == "addr" || k == "code") {
            EventField f{k, std::nullopt, std::nullopt, ""};
            if (v.is_integer())
              f.value = v.as_integer();
            else if (k == "lane" && v.is_string() && v.as_string().str == "none")
              f.text = "none";  // format.expect.event: the event has no lane
            else if (v.is_string())
              f.expr = expr_of(v, "expect.event." + k);
            else
              err(v, "expect.event." + k + " must be an integer or an expression string");
            X.event_fields.push_back(std::move(f));
          } else {
            err(v, "unknown key 'expect.event." + k + "'");
          }
        }
        if (!X.event_name) err(ev, "expect.event needs 'name'");
        if (X.status != "trapped") err(ev, "expect.event is only for status = \"trapped\"");
      }
    }
    if (e.contains("buffers")) {
      const auto& bufs = e.at("buffers");
      if (!bufs.is_table()) {
        err(bufs, "expect.buffers must be a table of tables");
      } else {
        std::vector<std::string> names;
        for (const auto& [k, v] : bufs.as_table()) names.push_back(k);
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
          const auto& b = bufs.as_table().at(name);
          BufferExpect be;
          be.name = name;
          if (!b.is_table()) {
            err(b, "expect.buffers." + name + " must be a table with 'values' or 'each'");
            continue;
          }
          for (const auto& [k, v] : b.as_table())
            if (k != "values" && k != "each")
              err(v, "unknown key 'expect.buffers." + name + "." + k + "'");
          if (b.contains("values") == b.contains("each")) {
            err(b, "expect.buffers." + name + " needs exactly one of 'values' and 'each'");
            continue;
          }
          if (b.contains("values")) {
            const auto& vals = b.at("values");
            if (!vals.is_array()) {
              err(vals, "expect.buffers." + name + ".values must be an array of integers");
              continue;
            }
            std::vector<int64_t> out;
            for (const auto& x : vals.as_array()) {
              if (!x.is_integer())
                err(vals, "expect.buffers." + name + ".values must be integers");
              else
                out.push_back(x.as_integer());
            }
            be.values = std::move(out);
          } else {
            const auto& each = b.at("each");
            if (!each.is_string()) {
              err(each, "expect.buffers." + name + ".each must be an expression string");
              continue;
            }
            be.each = expr_of(each, "expect.buffers." + name + ".each");
            if (!be.each) continue;
          }
          X.buffers.push_back(std::move(be));
        }
      }
    }
    if (e.contains("image")) {  // format.expect.image
      X.image = image_words(e.at("image"), "expect.image", true);
      if (X.status == "rejected") err(e.at("image"), "expect.image is for a launch that runs");
    }
    if (e.contains("image_offset")) {  // format.expect.rejected, preempt.image.check
      const auto& o = e.at("image_offset");
      if (!o.is_integer() || o.as_integer() < 0)
        err(o, "expect.image_offset must be a byte offset (an integer from 0)");
      else
        X.image_offset = static_cast<uint64_t>(o.as_integer());
      if (X.status != "rejected") err(o, "expect.image_offset is only for status = \"rejected\"");
    }
    // format.expect.nonempty
    if (X.status == "completed" && X.buffers.empty() && !X.image)
      err(e, "a test expecting completed must check at least one buffer ([expect.buffers.NAME])");
    if (X.status == "trapped" && !X.event_name)
      err(e, "a test expecting trapped must name the event ([expect.event] name = ...)");
  }

  // format.expect.image, format.restore: `size`, `words` (byte offset -> 32-bit
  // word) and, for expect.image only, `rest` (the value of every other byte).
  std::optional<ImageWords> image_words(const toml::value& v, const std::string& what,
                                        bool rest_allowed) {
    if (!v.is_table()) {
      err(v, "'" + what + "' must be a table with 'size' and 'words'");
      return std::nullopt;
    }
    ImageWords w;
    bool ok = true;
    for (const auto& [k, x] : v.as_table())
      if (k != "size" && k != "words" && !(rest_allowed && k == "rest")) {
        err(x, "unknown key '" + what + "." + k + "'");
        ok = false;
      }
    if (!v.contains("size") || !v.at("size").is_integer() || v.at("size").as_integer() < 0) {
      err(v, what + ".size must be the image's length in bytes (an integer)");
      return std::nullopt;
    }
    w.size = static_cast<uint64_t>(v.at("size").as_integer());
    // A restore image is built in memory: at most what a run would accept.
    if (w.size > (uint64_t{1} << 30)) {
      err(v.at("size"), what + ".size is larger than 1 GiB");
      return std::nullopt;
    }
    if (v.contains("words")) {
      const auto& ws = v.at("words");
      if (!ws.is_table()) {
        err(ws, what + ".words must be a table of \"OFFSET\" = WORD");
        return std::nullopt;
      }
      for (const auto& [k, x] : ws.as_table()) {
        uint64_t off = 0;
        bool digits = !k.empty() && k.size() <= 19;
        for (char c : k) digits &= c >= '0' && c <= '9';
        if (digits) off = std::stoull(k);
        if (!digits || off % 4 != 0 || off + 4 > w.size) {
          err(x, what + ".words: '" + k.substr(0, 40) +
                     "' is not the offset of a whole word of the image (a multiple of 4, below "
                     "size - 3)");
          ok = false;
          continue;
        }
        if (!x.is_integer() || x.as_integer() < 0 || x.as_integer() > 0xffffffffll) {
          err(x, what + ".words." + k + " must be a 32-bit word (0 to 0xffffffff)");
          ok = false;
          continue;
        }
        w.words.emplace_back(off, static_cast<uint32_t>(x.as_integer()));
      }
      std::sort(w.words.begin(), w.words.end());
    }
    if (v.contains("rest")) {
      const auto& r = v.at("rest");
      if (!r.is_integer() || r.as_integer() < 0 || r.as_integer() > 255)
        err(r, what + ".rest must be a byte value (0 to 255)");
      else
        w.rest = static_cast<uint8_t>(r.as_integer());
    }
    if (!ok) return std::nullopt;
    return w;
  }

  const host::TomlDoc& toml_;  // the lines of its values are lines of the file
  const toml::value& doc_;
  TestFile& t_;
  std::vector<FormatError>& errs_;
};

}  // namespace

std::variant<TestFile, std::vector<FormatError>, NotATest> parse_test(const std::string& path,
                                                                      const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) return NotATest{};
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.rfind(kMagic, 0) != 0) return NotATest{};
  std::vector<FormatError> errs;
  std::string version = line.substr(std::string(kMagic).size());
  while (!version.empty() && version.front() == ' ') version.erase(version.begin());
  if (version != "1") {
    errs.push_back(
        {1, "unsupported test format version '" + version + "' (this simtspec reads 1)"});
    return errs;
  }
  TestFile t;
  t.path = path;
  t.source = text;
  {
    const auto& ms = text::parse(text).program.launch.max_steps;
    t.sets_max_steps = ms.value.has_value();
    t.max_steps = ms.value.value_or(0);
    t.max_steps_line = ms.span.line;
  }
  std::string toml_text;
  uint32_t n = 1;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] != ';') break;
    ++n;
    std::string body = line.substr(1);
    if (!body.empty() && body[0] == ' ') body.erase(0, 1);
    toml_text += body + "\n";
  }
  t.header_lines = n;
  // format.header: the header is TOML (so UTF-8); its line 1 is the file's line 2.
  auto parsed = host::parse_toml(toml_text, 2);
  if (auto* e = std::get_if<host::TomlError>(&parsed)) {
    errs.push_back({e->line, "header is not valid TOML: " + e->message});
    return errs;
  }
  HeaderReader(std::get<host::TomlDoc>(parsed), t, errs).run();
  if (!errs.empty()) return errs;
  return t;
}

std::vector<std::string> discover(const std::vector<std::string>& paths, std::string& error) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".simt")
          out.push_back(it->path().string());
    } else if (fs::is_regular_file(p, ec)) {
      out.push_back(p);
    } else {
      error = "no such file or directory: " + p;
      return {};
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace simt::harness

namespace simt::harness {

std::vector<uint8_t> ImageWords::bytes() const {
  std::vector<uint8_t> b(size, rest.value_or(0));
  for (const auto& [off, w] : words)
    for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(w >> (8 * i));
  return b;
}

}  // namespace simt::harness
