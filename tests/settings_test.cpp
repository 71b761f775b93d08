// The launch settings' table (exec/settings.def) against the spec's list of them
// (spec/state.md: state.launch, .defaults, .limits, .check), and every row's
// reach: a directive, a TOML key, a protocol key and a `simtspec run` flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "exec/config.h"
#include "exec/settings.h"
#include "host/host.h"
#include "json.h"
#include "reference.h"
#include "runner.h"
#include "support.h"
#include "text/parser.h"
#include "text/printer.h"

namespace simt {
namespace {

using exec::kSettings;
using exec::Limit;
using exec::Setting;

// The paragraph of spec/state.md that starts with **[id]**, its lines joined.
std::string paragraph(const std::string& id) {
  const std::string spec = test::read_all(test::source_path("spec/state.md"));
  const size_t a = spec.find("**[" + id + "]**");
  if (a == std::string::npos) return "";
  std::string p = spec.substr(a, spec.find("\n\n", a) - a);
  std::replace(p.begin(), p.end(), '\n', ' ');
  return p;
}

// "10 000 000" -> 10000000, "1 MiB" -> 1048576.
uint64_t spec_number(std::string s) {
  uint64_t unit = 1;
  if (s.size() > 4 && s.substr(s.size() - 4) == " MiB") unit = 1 << 20, s.resize(s.size() - 4);
  std::erase(s, ' ');
  return std::stoull(s) * unit;
}

// The backquoted names in `s`, in order.
std::vector<std::string> names_in(const std::string& s) {
  std::vector<std::string> out;
  static const std::regex name("`([a-z_]+)`");
  for (std::sregex_iterator it(s.begin(), s.end(), name), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

std::vector<std::string> table_names(bool (*keep)(const exec::SettingInfo&)) {
  std::vector<std::string> out;
  for (const auto& i : kSettings)
    if (keep(i)) out.emplace_back(i.name);
  return out;
}

// A resolved value as the spec (and TOML, and the command line) writes it: a
// number, a policy's name, true or false.
std::string value_text(const exec::LaunchConfig& c, Setting s) {
  std::string out;
  const auto text = [](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, exec::Policy>)
      return std::string(exec::policy_name(v));
    else if constexpr (std::is_same_v<V, bool>)
      return std::string(v ? "true" : "false");
    else
      return std::to_string(v);
  };
#define SIMT_SETTING(name, ...) \
  if (s == Setting::name) out = text(c.name);
#include "exec/settings.def"
  return out;
}

std::string default_text(Setting s) {
  return value_text(exec::kDefaultLaunch, s);
}

// state.launch: the names, in order, and the clause each is given ("state.launch"
// where the list gives none); livelock_check is the one that state.launch.sources
// adds ("plus `livelock_check`, a boolean").
TEST(SettingsSpec, NamesAndClausesMatchTheTable) {
  const std::string list = paragraph("state.launch");
  ASSERT_NE(list.find("made of:"), std::string::npos) << list;
  std::vector<std::string> names;
  std::map<std::string, std::string> clause;
  std::vector<std::string> pending;  // names since the last parenthesis
  static const std::regex part(R"(`([a-z_]+)`|\(([^)]*)\))");
  const std::string body = list.substr(list.find("made of:"));
  for (std::sregex_iterator it(body.begin(), body.end(), part), end; it != end; ++it) {
    if ((*it)[1].matched) {
      names.push_back((*it)[1]);
      pending.push_back((*it)[1]);
      continue;
    }
    std::smatch id;
    const std::string inside = (*it)[2];
    const bool cited = std::regex_search(inside, id, std::regex(R"(\[([a-z_.]+)\])"));
    for (const auto& n : pending) clause[n] = cited ? id[1].str() : "state.launch";
    pending.clear();
  }
  for (const auto& n : pending) clause[n] = "state.launch";
  std::smatch plus;
  const std::string sources = paragraph("state.launch.sources");
  ASSERT_TRUE(std::regex_search(sources, plus, std::regex("plus `([a-z_]+)`, a boolean")))
      << sources;
  names.push_back(plus[1]);

  EXPECT_EQ(names, table_names([](const exec::SettingInfo&) { return true; }))
      << "spec/state.md's launch settings and exec/settings.def disagree";
  for (const auto& i : kSettings) {
    auto it = clause.find(std::string(i.name));
    if (it != clause.end()) {
      EXPECT_EQ(it->second, i.clause) << i.name;
    }
    EXPECT_EQ(i.type == exec::SettingType::Bool, i.name == plus[1].str()) << i.name;
  }
  // livelock_check's clause, as the protocol's chapter gives it.
  const std::string runner = test::read_all(test::source_path("spec/runner.md"));
  EXPECT_NE(runner.find("`livelock_check` (a boolean, [" +
                        std::string(exec::setting_info(Setting::livelock_check).clause) + "])"),
            std::string::npos);
}

// state.launch.defaults: "`a`, `b` and `c` are 1", "`p` is `round_robin`",
// "`simd` equals `wave`" (the table's 0).
TEST(SettingsSpec, DefaultsMatchTheTable) {
  const std::string text = paragraph("state.launch.defaults");
  static const std::regex group(
      R"(((?:`[a-z_]+`(?:, | and )?)+) (is|are|equals) (`[a-z_]+`|\d+(?: \d{3})*))");
  std::vector<std::string> seen;
  for (std::sregex_iterator it(text.begin(), text.end(), group), end; it != end; ++it) {
    std::string value = (*it)[3];
    std::erase(value, '`');
    for (const auto& n : names_in((*it)[1])) {
      seen.push_back(n);
      const exec::SettingInfo* row = nullptr;
      for (const auto& i : kSettings)
        if (i.name == n) row = &i;
      ASSERT_NE(row, nullptr) << "the spec gives a default to " << n << ", not in the table";
      if ((*it)[2] == "equals") {  // "simd equals wave": 0, which simd_width() reads as wave
        EXPECT_EQ(n, "simd");
        EXPECT_EQ(value, "wave");
        EXPECT_EQ(default_text(row->id), "0");
        EXPECT_EQ(exec::kDefaultLaunch.simd_width(), exec::kDefaultLaunch.wave);
      } else if (value[0] >= '0' && value[0] <= '9') {
        EXPECT_EQ(default_text(row->id), std::to_string(spec_number(value))) << n;
      } else {
        EXPECT_EQ(default_text(row->id), value) << n;
      }
    }
  }
  // Every setting but the tooling one has its default in the paragraph.
  EXPECT_EQ(seen, table_names([](const exec::SettingInfo& i) {
              return i.type != exec::SettingType::Bool;
            }));
  EXPECT_EQ(default_text(Setting::livelock_check), "true");  // exec.livelock: on unless off
}

// state.launch.limits: "`a` is a power of two from L to H", "`a` and `b` L to H",
// "`a` at least L".
TEST(SettingsSpec, LimitsMatchTheTable) {
  const std::string text = paragraph("state.launch.limits");
  static const std::regex group(
      R"(((?:`[a-z_]+`(?: and )?)+) (?:is |are )?(a power of two from )?(?:(\d+(?: \d{3})*) to (\d+(?: \d{3})*(?: MiB)?)|at least (\d+)))");
  std::vector<std::string> seen;
  for (std::sregex_iterator it(text.begin(), text.end(), group), end; it != end; ++it) {
    for (const auto& n : names_in((*it)[1])) {
      seen.push_back(n);
      const exec::SettingInfo* row = nullptr;
      for (const auto& i : kSettings)
        if (i.name == n) row = &i;
      ASSERT_NE(row, nullptr) << n;
      if ((*it)[5].matched) {  // at least L (warps and workgroups: and their product at most)
        EXPECT_TRUE(row->limit == Limit::AtLeast || row->limit == Limit::Range) << n;
        EXPECT_EQ(row->lo, spec_number((*it)[5])) << n;
        if (row->limit == Limit::Range) {
          EXPECT_EQ(row->hi, exec::kMaxTotalWarps) << n;
        }
      } else {
        EXPECT_EQ(row->limit, (*it)[2].matched ? Limit::Pow2 : Limit::Range) << n;
        EXPECT_EQ(row->lo, spec_number((*it)[3])) << n;
        EXPECT_EQ(row->hi, spec_number((*it)[4])) << n;
      }
    }
  }
  std::sort(seen.begin(), seen.end());
  std::vector<std::string> limited =
      table_names([](const exec::SettingInfo& i) { return i.limit != Limit::None; });
  std::sort(limited.begin(), limited.end());
  EXPECT_EQ(seen, limited);
}

// state.launch.check: the order of the settings' checks is the table's.
TEST(SettingsSpec, CheckOrderMatchesTheTable) {
  const std::string text = paragraph("state.launch.check");
  const size_t a = text.find("reported: "), b = text.find("the total state.");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  std::vector<std::string> order;
  static const std::regex item(R"(^\s*`([a-z_]+)`(?: \([^)]*\))?\s*$)");
  std::stringstream items(text.substr(a + 10, b - a - 10));
  for (std::string one; std::getline(items, one, ';');) {
    std::smatch m;
    if (std::regex_match(one, m, item)) order.push_back(m[1]);
  }
  EXPECT_EQ(order, table_names([](const exec::SettingInfo& i) { return i.limit != Limit::None; }));
}

// A value outside the row's limit (state.launch.limits).
uint64_t bad_value(const exec::SettingInfo& i) {
  switch (i.limit) {
    case Limit::None:
      return 0;
    case Limit::Range:
    case Limit::Pow2:
      return i.hi + 1 == 0 ? i.lo - 1 : i.hi + 1;
    case Limit::AtLeast:
      return i.lo - 1;
  }
  return 0;
}

void set_number(exec::LaunchConfig& c, Setting s, uint64_t v) {
  const auto put = [v](auto& field) {
    using V = std::decay_t<decltype(field)>;
    if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) field = static_cast<V>(v);
  };
#define SIMT_SETTING(name, ...) \
  if (s == Setting::name) put(c.name);
#include "exec/settings.def"
}

// exec::check reports the first failing setting in the table's order: with every
// limited setting out of its limit, fixing them one at a time reports each next.
TEST(Settings, CheckReportsInTableOrder) {
  exec::LaunchConfig c;
  for (const auto& i : kSettings)
    if (i.limit != Limit::None) set_number(c, i.id, bad_value(i));
  for (const auto& i : kSettings) {
    if (i.limit == Limit::None) continue;
    auto e = exec::check(c);
    ASSERT_TRUE(e.has_value()) << i.name;
    EXPECT_EQ(e->field, i.name);
    EXPECT_NE(e->message.find(std::string(i.name)), std::string::npos) << e->message;
    c = [&] {
      exec::LaunchConfig fixed = c;
#define SIMT_SETTING(name, ...) \
  if (i.id == Setting::name) fixed.name = exec::kDefaultLaunch.name;
#include "exec/settings.def"
      return fixed;
    }();
  }
  EXPECT_FALSE(exec::check(c).has_value());
}

// A valid value of the row's type other than its default, as TOML, JSON and the
// command line write it (stack wants a multiple of 16, simd a quarter of wave 32
// or more).
std::string some_value(const exec::SettingInfo& i) {
  switch (i.type) {
    case exec::SettingType::U32:
    case exec::SettingType::U64:
      return i.id == Setting::stack || i.id == Setting::simd ? "16" : "2";
    case exec::SettingType::Policy:
      return "oldest_first";
    case exec::SettingType::Bool:
      return "false";
  }
  return "";
}

constexpr const char* kBody = ".buffer out u32[1] out\n  exit\n";

// The setting's resolved value for a program with these load options.
std::string resolved(const std::string& program, const host::LoadOptions& opt, Setting s) {
  auto r = host::load(program + kBody, opt);
  EXPECT_TRUE(r.loaded.has_value()) << r.diags.format("program");
  return r.loaded ? value_text(r.loaded->config, s) : "(rejected)";
}

// Every row reaches every place a setting may be written: its directive (when it
// has one, printed back as written), its TOML key and its protocol key; each sets
// the resolved configuration, and a value of the wrong type is an error there.
TEST(Settings, EveryRowIsReadEverywhere) {
  for (const auto& i : kSettings) {
    const std::string name(i.name), v = some_value(i);
    SCOPED_TRACE(name);
    const std::string quoted = i.type == exec::SettingType::Policy ? "\"" + v + "\"" : v;
    ASSERT_NE(default_text(i.id), v);
    if (i.directive) {
      const std::string line = "." + name + " " + v + "\n";
      auto p = text::parse(line + kBody);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(text::print_directives(p.program.launch), line);
      EXPECT_EQ(resolved(line, {}, i.id), v);
    } else {
      EXPECT_FALSE(text::parse("." + name + " " + v + "\n" + kBody).ok());
    }
    host::LoadOptions toml;
    EXPECT_FALSE(
        host::parse_config_toml("[launch]\n" + name + " = " + quoted + "\n", "t", toml.toml));
    EXPECT_EQ(resolved("", toml, i.id), v);
    host::Overrides bad;
    EXPECT_TRUE(host::parse_config_toml("[launch]\n" + name + " = [1]\n", "t", bad));

    runners::RunConfig rc;
    std::string err;
    auto j = json::parse("{\"" + name + "\": " + quoted + "}");
    ASSERT_TRUE(std::holds_alternative<json::Value>(j));
    EXPECT_TRUE(runners::RunConfig::from_json(std::get<json::Value>(j), rc, err)) << err;
    EXPECT_EQ(json::dump(rc.to_json()), json::dump(std::get<json::Value>(j)));
    EXPECT_EQ(resolved("", runners::load_options(rc), i.id), v);
    auto wrong = json::parse("{\"" + name + "\": [1]}");
    EXPECT_FALSE(runners::RunConfig::from_json(std::get<json::Value>(wrong), rc, err));
    EXPECT_NE(err.find("config." + name), std::string::npos) << err;
  }
}

class SettingsCli : public test::TempDirSuite<SettingsCli> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_settings_test_";
};

// `simtspec run` has a flag for every setting: a valid value reaches the launch
// (its --json config), a value outside the setting's limit or of the wrong type
// is bad usage (exit 2), like a directive's, said to come from the command line.
TEST_F(SettingsCli, RunAcceptsEverySettingAsAFlag) {
  const auto program = dir() / "p.simt";
  test::write_all(program, kBody);
  const std::string simtspec = SIMT_BINARY_DIR "/simtspec";
  for (const auto& i : kSettings) {
    const std::string flag(i.flag), v = some_value(i);
    SCOPED_TRACE(flag);
    auto ok = test::run_command(
        simtspec, "run --json " + test::shell_quote(program.string()) + " " + flag + " " + v,
        dir());
    EXPECT_EQ(ok.code, 0) << ok.err;
    auto out = json::parse(ok.out);
    ASSERT_TRUE(std::holds_alternative<json::Value>(out)) << ok.out;
    const json::Value* config = std::get<json::Value>(out).find("config");
    ASSERT_NE(config, nullptr) << ok.out;
    const json::Value* got = config->find(i.name);
    ASSERT_NE(got, nullptr) << ok.out;
    EXPECT_EQ(json::dump(*got), i.type == exec::SettingType::Policy ? "\"" + v + "\"" : v);

    const std::string bad = i.type == exec::SettingType::Policy ? "nonesuch"
                            : i.type == exec::SettingType::Bool ? "maybe"
                            : i.limit == Limit::None            ? "x1"
                                                                : std::to_string(bad_value(i));
    auto no = test::run_command(
        simtspec, "run " + test::shell_quote(program.string()) + " " + flag + " " + bad, dir());
    EXPECT_EQ(no.code, 2) << no.err;
    if (i.limit != Limit::None) {
      EXPECT_NE(no.err.find("(set on the command line)"), std::string::npos) << no.err;
    }
  }
}

}  // namespace
}  // namespace simt
