// The launch configuration (spec/state.md, state.launch.*): defaults, the priority
// of its sources, its limits, the TOML file, and the buffer sizes and initialisers
// evaluated for it (spec/syntax.md, syntax.buffer.size, syntax.buffer.init).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "exec/config.h"
#include "format.h"
#include "host/toml_text.h"
#include "process.h"
#include "support.h"

namespace simt {
namespace {

using exec::LaunchConfig;
using exec::Policy;
using syntax::DiagKind;

std::string show(const syntax::Diagnostics& d) {
  return d.format("test");
}

LaunchConfig config_of(const std::string& src, const host::LoadOptions& opt = {}) {
  auto r = test::load(src, opt);
  EXPECT_TRUE(r.loaded.has_value()) << src << "\n" << show(r.diags);
  return r.loaded ? r.loaded->config : LaunchConfig{};
}

// Exactly one configuration error at line:col containing `substr`.
void expect_config_error(const std::string& src, uint32_t line, uint32_t col,
                         std::string_view substr, const host::LoadOptions& opt = {}) {
  SCOPED_TRACE(testing::Message() << "program:\n" << src);
  auto r = test::load(src, opt);
  ASSERT_FALSE(r.loaded.has_value());
  ASSERT_EQ(r.diags.size(), 1u) << show(r.diags);
  const auto& d = r.diags.list()[0];
  EXPECT_EQ(d.kind, DiagKind::Config) << show(r.diags);
  EXPECT_EQ(d.span.line, line) << show(r.diags);
  EXPECT_EQ(d.span.col, col) << show(r.diags);
  EXPECT_NE(d.message.find(substr), std::string::npos)
      << "message: " << d.message << "\nexpected to contain: " << substr;
}

// ---- state.launch.defaults ------------------------------------------------------------

TEST(Defaults, AsSpecified) {
  const LaunchConfig c = config_of("    exit\n");
  EXPECT_EQ(c.wave, 32u);
  EXPECT_EQ(c.simd_width(), 32u);  // simd equals wave
  EXPECT_EQ(c.warps, 1u);
  EXPECT_EQ(c.workgroups, 1u);
  EXPECT_EQ(c.cores, 1u);
  EXPECT_EQ(c.slm, 0u);
  EXPECT_EQ(c.vregs, 32u);
  EXPECT_EQ(c.sregs, 32u);
  EXPECT_EQ(c.mask_depth, 32u);
  EXPECT_EQ(c.call_depth, 16u);
  EXPECT_EQ(c.stack, 1024u);
  EXPECT_EQ(c.policy, Policy::RoundRobin);
  EXPECT_EQ(c.seed, 0u);
  EXPECT_EQ(c.max_steps, 10'000'000u);
  EXPECT_TRUE(c.livelock_check);
  // simd follows a wave set by any source.
  EXPECT_EQ(config_of(".wave 8\n    exit\n").simd_width(), 8u);
  host::LoadOptions o;
  o.cli.wave = 4;
  EXPECT_EQ(config_of(".wave 8\n    exit\n", o).simd_width(), 4u);
}

// ---- state.launch.sources ------------------------------------------------------------------

struct U32Field {
  const char* name;
  std::optional<uint32_t> host::Overrides::*over;
  uint32_t LaunchConfig::*field;
  uint32_t dir, toml, cli;  // three valid values
};
const U32Field kU32Fields[] = {
    {"wave", &host::Overrides::wave, &LaunchConfig::wave, 8, 16, 64},
    {"simd", &host::Overrides::simd, &LaunchConfig::simd, 8, 16, 32},
    {"warps", &host::Overrides::warps, &LaunchConfig::warps, 2, 3, 4},
    {"workgroups", &host::Overrides::workgroups, &LaunchConfig::workgroups, 2, 3, 4},
    {"cores", &host::Overrides::cores, &LaunchConfig::cores, 2, 3, 4},
    {"slm", &host::Overrides::slm, &LaunchConfig::slm, 16, 32, 64},
    {"vregs", &host::Overrides::vregs, &LaunchConfig::vregs, 8, 16, 64},
    {"sregs", &host::Overrides::sregs, &LaunchConfig::sregs, 8, 16, 64},
    {"mask_depth", &host::Overrides::mask_depth, &LaunchConfig::mask_depth, 2, 3, 4},
    {"call_depth", &host::Overrides::call_depth, &LaunchConfig::call_depth, 2, 3, 4},
    {"stack", &host::Overrides::stack, &LaunchConfig::stack, 16, 32, 48},
};

TEST(Sources, DirectiveThenTomlThenCommandLine) {
  for (const auto& f : kU32Fields) {
    SCOPED_TRACE(f.name);
    const std::string src =
        "." + std::string(f.name) + " " + std::to_string(f.dir) + "\n    exit\n";
    host::LoadOptions o;
    EXPECT_EQ(config_of(src, o).*(f.field), f.dir);
    o.toml.*(f.over) = f.toml;
    EXPECT_EQ(config_of(src, o).*(f.field), f.toml);
    o.cli.*(f.over) = f.cli;
    EXPECT_EQ(config_of(src, o).*(f.field), f.cli);
    o.toml.*(f.over) = std::nullopt;
    EXPECT_EQ(config_of(src, o).*(f.field), f.cli);
    // Without a directive.
    host::LoadOptions t;
    t.toml.*(f.over) = f.toml;
    EXPECT_EQ(config_of("    exit\n", t).*(f.field), f.toml);
  }
}

TEST(Sources, SeedMaxStepsPolicyLivelock) {
  const std::string src = ".seed 1\n.max_steps 5\n.policy random\n    exit\n";
  host::LoadOptions o;
  LaunchConfig c = config_of(src, o);
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.max_steps, 5u);
  EXPECT_EQ(c.policy, Policy::Random);
  o.toml.seed = 2;
  o.toml.max_steps = 6;
  o.toml.policy = Policy::LowestPcFirst;
  o.toml.livelock_check = false;
  c = config_of(src, o);
  EXPECT_EQ(c.seed, 2u);
  EXPECT_EQ(c.max_steps, 6u);
  EXPECT_EQ(c.policy, Policy::LowestPcFirst);
  EXPECT_FALSE(c.livelock_check);
  o.cli.seed = 3;
  o.cli.max_steps = 7;
  o.cli.policy = Policy::OldestFirst;
  o.cli.livelock_check = true;
  c = config_of(src, o);
  EXPECT_EQ(c.seed, 3u);
  EXPECT_EQ(c.max_steps, 7u);
  EXPECT_EQ(c.policy, Policy::OldestFirst);
  EXPECT_TRUE(c.livelock_check);
}

TEST(Sources, EveryPolicyName) {
  const std::pair<const char*, Policy> names[] = {{"round_robin", Policy::RoundRobin},
                                                  {"lowest_pc_first", Policy::LowestPcFirst},
                                                  {"oldest_first", Policy::OldestFirst},
                                                  {"random", Policy::Random}};
  for (const auto& [name, p] : names) {
    EXPECT_EQ(config_of(std::string(".policy ") + name + "\n    exit\n").policy, p);
    EXPECT_EQ(exec::find_policy(name), p);
    EXPECT_EQ(exec::policy_name(p), name);
  }
  expect_config_error("    exit\n  .policy fastest\n", 2, 3, "unknown policy 'fastest'");
  expect_config_error(".policy Random\n    exit\n", 1, 1, "unknown policy");
}

// Limits are checked after the overrides: a bad directive value overridden by a good
// one is fine, and a good directive value overridden by a bad one is not.
TEST(Sources, LimitsApplyToTheFinalValue) {
  host::LoadOptions o;
  o.cli.wave = 8;
  EXPECT_EQ(config_of(".wave 3\n    exit\n", o).wave, 8u);
  // A value from the TOML file or the command line has no place in the program; the
  // message says where it came from.
  o = {};
  o.toml.vregs = 0;
  auto t = test::load("  nop\n.vregs 8\n    exit\n", o);
  ASSERT_EQ(t.diags.size(), 1u);
  EXPECT_EQ(t.diags.list()[0].kind, DiagKind::Config);
  EXPECT_EQ(t.diags.format("f").rfind("f:1:1: bad launch configuration: vregs 0", 0), 0u)
      << show(t.diags);
  EXPECT_NE(t.diags.format("f").find("(set by the configuration file)"), std::string::npos);
  o = {};
  o.cli.cores = 65;
  auto c = test::load("  nop\n.cores 8\n    exit\n", o);
  ASSERT_EQ(c.diags.size(), 1u);
  EXPECT_EQ(c.diags.format("f").rfind("f:1:1: bad launch configuration: cores 65", 0), 0u)
      << show(c.diags);
  EXPECT_NE(c.diags.format("f").find("(set on the command line)"), std::string::npos);
}

// ---- state.launch.limits ----------------------------------------------------------------------

struct Limit {
  std::string directive;  // e.g. ".wave"
  std::vector<std::string> good, bad;
  std::string prelude = "";  // other directives the case needs
};

TEST(Limits, AcceptedAtTheBoundRejectedPastIt) {
  const Limit limits[] = {
      {".wave", {"1", "2", "4", "8", "16", "32", "64"}, {"0", "3", "48", "128", "4294967295"}},
      {".simd", {"64", "32", "16"}, {"8", "128", "3", "48"}, ".wave 64\n"},
      {".simd", {"1"}, {"2"}, ".wave 1\n"},
      {".simd", {"4", "2", "1"}, {"8"}, ".wave 4\n"},
      {".warps", {"1", "4096"}, {"0", "4097"}},
      {".workgroups", {"1", "4096"}, {"0", "4097"}},
      {".workgroups", {"64"}, {"65"}, ".warps 64\n"},
      {".cores", {"1", "64"}, {"0", "65"}},
      {".slm", {"0", "65536"}, {"65537"}},
      {".vregs", {"1", "256"}, {"0", "257"}},
      {".sregs", {"1", "256"}, {"0", "257"}},
      {".mask_depth", {"1", "1024"}, {"0", "1025"}},
      {".call_depth", {"1", "1024"}, {"0", "1025"}},
      {".stack", {"0", "16", "1048576"}, {"8", "1048577", "1048592"}},
      {".max_steps", {"1", "18446744073709551615"}, {"0"}},
      {".seed", {"0", "18446744073709551615"}, {}},
  };
  for (const auto& l : limits) {
    for (const auto& v : l.good) {
      const std::string src = l.prelude + "    nop\n  " + l.directive + " " + v + "\n    exit\n";
      SCOPED_TRACE(src);
      auto r = test::load(src);
      EXPECT_TRUE(r.loaded.has_value()) << show(r.diags);
    }
    for (const auto& v : l.bad) {
      const std::string src = l.prelude + "    nop\n  " + l.directive + " " + v + "\n    exit\n";
      const uint32_t line = l.prelude.empty() ? 2 : 3;
      // The error is located at the directive that set the value.
      expect_config_error(src, line, 3, "");
    }
  }
}

TEST(Limits, ProductOfWarpsAndWorkgroups) {
  auto r = test::load(".warps 65\n.workgroups 64\n    exit\n");
  ASSERT_FALSE(r.loaded.has_value());
  ASSERT_EQ(r.diags.size(), 1u);
  const auto& d = r.diags.list()[0];
  EXPECT_EQ(d.kind, DiagKind::Config);
  EXPECT_TRUE(d.span.line == 1 || d.span.line == 2) << show(r.diags);
  EXPECT_EQ(d.span.col, 1u);
  EXPECT_NE(d.message.find("4096"), std::string::npos) << d.message;
  EXPECT_TRUE(test::load(".warps 1024\n.workgroups 4\n    exit\n").loaded.has_value());
}

// state.launch.limits: simd is a power of two from 1 to 64, so 0 is not a SIMD width.
TEST(Limits, SimdZeroIsRejected) {
  auto r = test::load("  .simd 0\n    exit\n");
  EXPECT_FALSE(r.loaded.has_value());
  expect_config_error("  .simd 0\n    exit\n", 1, 3, "simd");
}

// syntax.directive: values are checked after the overrides, so a simd of 0 that an
// override replaces is not an error, and an override of 0 is.
TEST(Limits, SimdZeroOverriddenIsFine) {
  host::LoadOptions o;
  o.cli.simd = 0;
  auto bad = test::load("  .simd 8\n    exit\n", o);
  ASSERT_FALSE(bad.loaded.has_value());
  EXPECT_NE(bad.diags.format("f").find("(set on the command line)"), std::string::npos)
      << show(bad.diags);
  o.cli.simd = 8;
  auto r = test::load("  .simd 0\n    exit\n", o);
  host::LoadOptions t;
  t.toml.simd = 0;
  t.cli.simd = 16;
  auto r2 = test::load("    exit\n", t);
  ASSERT_TRUE(r.loaded && r2.loaded) << show(r.diags) << show(r2.diags);
  EXPECT_EQ(r.loaded->config.simd_width(), 8u);
  EXPECT_EQ(r2.loaded->config.simd_width(), 16u);
}

TEST(Limits, MessagesNameTheSetting) {
  expect_config_error("    exit\n.wave 3\n", 2, 1, "wave 3");
  expect_config_error(".wave 16\n.simd 2\n    exit\n", 2, 1, "simd");
  expect_config_error(".stack 24\n    exit\n", 1, 1, "multiple of 16");
  expect_config_error(".max_steps 0\n    exit\n", 1, 1, "max_steps");
  expect_config_error(".mask_depth 2000\n    exit\n", 1, 1, "mask_depth");
  auto r = test::load(".wave 3\n    exit\n");
  EXPECT_EQ(r.diags.format("p.simt").rfind("p.simt:1:1: bad launch configuration: wave 3", 0), 0u)
      << show(r.diags);
}

TEST(Limits, CheckFunction) {
  LaunchConfig c;
  EXPECT_FALSE(exec::check(c).has_value());
  c.wave = 64;
  c.simd = 16;
  c.cores = 64;
  c.slm = 65536;
  c.vregs = 256;
  c.sregs = 256;
  c.mask_depth = 1024;
  c.call_depth = 1024;
  c.stack = 1u << 20;
  c.max_steps = 1;
  EXPECT_FALSE(exec::check(c).has_value());
  auto bad = [&](auto mutate, const char* field) {
    LaunchConfig d = c;
    mutate(d);
    auto e = exec::check(d);
    ASSERT_TRUE(e.has_value()) << field;
    EXPECT_EQ(e->field, field);
  };
  bad([](LaunchConfig& d) { d.wave = 128; }, "wave");
  bad([](LaunchConfig& d) { d.simd = 8; }, "simd");
  bad(
      [](LaunchConfig& d) {
        d.warps = 64;
        d.workgroups = 65;
      },
      "workgroups");
  bad([](LaunchConfig& d) { d.workgroups = 4097; }, "workgroups");
  bad([](LaunchConfig& d) { d.warps = 0; }, "warps");
  bad([](LaunchConfig& d) { d.cores = 65; }, "cores");
  bad([](LaunchConfig& d) { d.slm = 65537; }, "slm");
  bad([](LaunchConfig& d) { d.vregs = 257; }, "vregs");
  bad([](LaunchConfig& d) { d.sregs = 0; }, "sregs");
  bad([](LaunchConfig& d) { d.mask_depth = 1025; }, "mask_depth");
  bad([](LaunchConfig& d) { d.call_depth = 0; }, "call_depth");
  bad([](LaunchConfig& d) { d.stack = (1u << 20) + 16; }, "stack");
  bad([](LaunchConfig& d) { d.max_steps = 0; }, "max_steps");
}

// state.launch.limits: the state of all warps together is at most 256 MiB: 4 bytes per
// vector register per lane and per scalar register, the stack, 24 bytes per mask-stack
// entry, 4 per PC-stack entry and 256 per warp, plus slm per workgroup.
uint64_t spec_state_bytes(const LaunchConfig& c) {
  const uint64_t per_warp = (uint64_t{c.vregs} * c.wave + c.sregs) * 4 + c.stack +
                            uint64_t{c.mask_depth} * 24 + uint64_t{c.call_depth} * 4 + 256;
  return per_warp * c.warps * c.workgroups + uint64_t{c.slm} * c.workgroups;
}

TEST(Limits, StateOfAllWarpsAtMost256MiB) {
  // 4096 warps x (250 x 64 x 4 + 1 x 4 + 1248 + 24 + 4 + 256) = 4096 x 65536 = 256 MiB.
  const std::string at_bound =
      ".wave 64\n.warps 4096\n.vregs 250\n.sregs 1\n.stack 1248\n.mask_depth 1\n"
      ".call_depth 1\n    exit\n";
  auto r = test::load(at_bound);
  ASSERT_TRUE(r.loaded.has_value()) << show(r.diags);
  EXPECT_EQ(spec_state_bytes(r.loaded->config), 256u << 20);
  // One more stack granule per warp, or some SLM, or one more register: over.
  for (const char* over : {
           ".wave 64\n.warps 4096\n.vregs 250\n.sregs 1\n.stack 1264\n.mask_depth 1\n"
           ".call_depth 1\n    exit\n",
           ".wave 64\n.warps 4096\n.vregs 250\n.sregs 1\n.stack 1248\n.mask_depth 1\n"
           ".call_depth 1\n.slm 16\n    exit\n",
           ".wave 64\n.warps 4096\n.vregs 250\n.sregs 2\n.stack 1248\n.mask_depth 1\n"
           ".call_depth 1\n    exit\n",
           ".wave 64\n.warps 4096\n.vregs 250\n.sregs 1\n.stack 1248\n.mask_depth 2\n"
           ".call_depth 1\n    exit\n",
       }) {
    SCOPED_TRACE(over);
    auto o = test::load(std::string(over));
    ASSERT_FALSE(o.loaded.has_value());
    ASSERT_EQ(o.diags.size(), 1u) << show(o.diags);
    const auto& d = o.diags.list()[0];
    EXPECT_EQ(d.kind, DiagKind::Config);
    // Located at one of the directives that contribute.
    EXPECT_GE(d.span.line, 1u) << show(o.diags);
    EXPECT_LE(d.span.line, 8u) << show(o.diags);
    EXPECT_EQ(d.span.col, 1u) << show(o.diags);
  }
  // The same limit applies to overrides, and the workgroups multiply the SLM.
  host::LoadOptions opt;
  opt.cli.workgroups = 4096;
  opt.cli.slm = 65536;  // 4096 x 64 KiB = 256 MiB of SLM alone
  EXPECT_FALSE(test::load("    exit\n", opt).loaded.has_value());
  // 4096 x (default warp: 4224 + 1024 + 768 + 64 + 256 = 6336, + 59200 SLM) = 256 MiB.
  opt.cli.slm = 59200;
  auto ok = test::load("    exit\n", opt);
  ASSERT_TRUE(ok.loaded.has_value()) << show(ok.diags);
  EXPECT_EQ(spec_state_bytes(ok.loaded->config), 256u << 20);
  opt.cli.slm = 59201;
  EXPECT_FALSE(test::load("    exit\n", opt).loaded.has_value());
}

// ---- the TOML file (state.launch.sources) ---------------------------------------------------

TEST(Toml, EveryKey) {
  host::Overrides o;
  auto err = host::parse_config_toml(R"(# a comment
[launch]
wave = 16
simd = 8
warps = 2
workgroups = 3
cores = 2
slm = 1024
vregs = 64
sregs = 16
mask_depth = 8
call_depth = 4
stack = 256
policy = "random"
seed = 9223372036854775807
max_steps = 1000
livelock_check = false
)",
                                     "cfg.toml", o);
  ASSERT_FALSE(err.has_value()) << *err;
  EXPECT_EQ(o.wave, 16u);
  EXPECT_EQ(o.simd, 8u);
  EXPECT_EQ(o.warps, 2u);
  EXPECT_EQ(o.workgroups, 3u);
  EXPECT_EQ(o.cores, 2u);
  EXPECT_EQ(o.slm, 1024u);
  EXPECT_EQ(o.vregs, 64u);
  EXPECT_EQ(o.sregs, 16u);
  EXPECT_EQ(o.mask_depth, 8u);
  EXPECT_EQ(o.call_depth, 4u);
  EXPECT_EQ(o.stack, 256u);
  EXPECT_EQ(o.policy, Policy::Random);
  EXPECT_EQ(o.seed, 9223372036854775807u);
  EXPECT_EQ(o.max_steps, 1000u);
  EXPECT_EQ(o.livelock_check, false);
  host::LoadOptions opt;
  opt.toml = o;
  const LaunchConfig c = config_of(".wave 64\n    exit\n", opt);
  EXPECT_EQ(c.wave, 16u);
  EXPECT_EQ(c.simd_width(), 8u);
  EXPECT_EQ(c.workgroups, 3u);
  EXPECT_EQ(c.policy, Policy::Random);
  EXPECT_FALSE(c.livelock_check);
}

TEST(Toml, EmptyFilesAndTables) {
  host::Overrides o;
  EXPECT_FALSE(host::parse_config_toml("", "cfg.toml", o).has_value());
  EXPECT_FALSE(host::parse_config_toml("[launch]\n", "cfg.toml", o).has_value());
  EXPECT_FALSE(o.wave.has_value());
  EXPECT_FALSE(o.policy.has_value());
  EXPECT_FALSE(o.livelock_check.has_value());
}

void expect_toml_error(std::string_view text, std::string_view substr) {
  SCOPED_TRACE(testing::Message() << "toml:\n" << text);
  host::Overrides o;
  auto err = host::parse_config_toml(text, "cfg.toml", o);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find(substr), std::string::npos) << *err;
}

TEST(Toml, UnknownKeys) {
  expect_toml_error("[launch]\nwave = 8\nfoo = 1\n", "cfg.toml:3: unknown key 'foo'");
  expect_toml_error("[launch]\nWave = 8\n", "unknown key 'Wave'");
  expect_toml_error("[launch]\nthreads = 8\n", "unknown key 'threads'");
  expect_toml_error("[other]\nwave = 8\n", "unknown table or key 'other'");
  expect_toml_error("wave = 8\n", "unknown table or key 'wave'");
  expect_toml_error("launch = 5\n", "'launch' must be a table");
  expect_toml_error("[launch.sub]\nx = 1\n", "unknown key 'sub'");
}

TEST(Toml, WrongTypes) {
  expect_toml_error("[launch]\nwave = \"8\"\n", "cfg.toml:2: 'wave' must be");
  expect_toml_error("[launch]\nwave = 8.0\n", "'wave' must be");
  expect_toml_error("[launch]\nwave = true\n", "'wave' must be");
  expect_toml_error("[launch]\nslm = -1\n", "'slm' must be");
  expect_toml_error("[launch]\nstack = 4294967296\n", "'stack' must be");
  expect_toml_error("[launch]\nseed = -1\n", "'seed' must be");
  expect_toml_error("[launch]\nmax_steps = \"many\"\n", "'max_steps' must be");
  expect_toml_error("[launch]\npolicy = 3\n", "'policy' must be a string");
  expect_toml_error("[launch]\nlivelock_check = 1\n", "'livelock_check' must be true or false");
  expect_toml_error("[launch]\nwarps = [1, 2]\n", "'warps' must be");
}

TEST(Toml, UnknownPolicy) {
  expect_toml_error("[launch]\npolicy = \"fastest\"\n", "unknown policy 'fastest'");
  expect_toml_error("[launch]\npolicy = \"Round_Robin\"\n", "unknown policy");
}

TEST(Toml, Malformed) {
  for (std::string_view bad : {"[launch\nwave = 8\n", "[launch]\nwave = \n", "[launch]\nwave 8\n",
                               "[launch]\nwave = 8\nwave = 16\n", "[launch]\n[launch]\n",
                               "[launch]\npolicy = \"random\n", "\x01\x02\x03"}) {
    SCOPED_TRACE(testing::PrintToString(std::string(bad)));
    host::Overrides o;
    auto err = host::parse_config_toml(bad, "cfg.toml", o);
    ASSERT_TRUE(err.has_value());
    EXPECT_FALSE(err->empty());
  }
}

TEST(Toml, MissingFile) {
  host::Overrides o;
  auto err = host::load_config_toml("/nonexistent/dir/cfg.toml", o);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("cannot open"), std::string::npos) << *err;
}

// ---- syntax.buffer.size: evaluated for the launch configuration -----------------------------

const exec::BufferLayout* find_buffer(const host::LoadResult& r, std::string_view name) {
  if (!r.loaded) return nullptr;
  for (const auto& b : r.loaded->program->buffers)
    if (b.name == name) return &b;
  return nullptr;
}

TEST(BufferSize, EvaluatedPerConfiguration) {
  const std::string src =
      ".buffer a u32[threads * 2 + wave - simd] out\n"
      ".buffer b u8[2 + 3 * 4] out\n"
      ".buffer c u8[(2 + 3) * 4] out\n"
      ".buffer d u8[10 - 3 - 2] out\n"
      ".buffer e u8[10 - (3 - 2)] out\n"
      ".buffer f u16[warps * workgroups] in\n"
      ".buffer g i32[0] out\n"
      "    exit\n";
  auto r = test::load(src);
  ASSERT_TRUE(r.loaded.has_value()) << show(r.diags);
  EXPECT_EQ(find_buffer(r, "a")->count, 64u);  // 32 * 2 + 32 - 32
  EXPECT_EQ(find_buffer(r, "a")->bytes, 256u);
  EXPECT_EQ(find_buffer(r, "b")->count, 14u);
  EXPECT_EQ(find_buffer(r, "c")->count, 20u);
  EXPECT_EQ(find_buffer(r, "d")->count, 5u);
  EXPECT_EQ(find_buffer(r, "e")->count, 9u);
  EXPECT_EQ(find_buffer(r, "f")->count, 1u);
  EXPECT_EQ(find_buffer(r, "f")->bytes, 2u);
  EXPECT_EQ(find_buffer(r, "g")->count, 0u);
  host::LoadOptions o;
  o.cli.wave = 64;
  o.cli.simd = 16;
  o.cli.warps = 2;
  o.cli.workgroups = 3;
  auto r2 = test::load(src, o);
  ASSERT_TRUE(r2.loaded.has_value()) << show(r2.diags);
  EXPECT_EQ(find_buffer(r2, "a")->count, 816u);  // 384 * 2 + 64 - 16
  EXPECT_EQ(find_buffer(r2, "a")->bytes, 3264u);
  EXPECT_EQ(find_buffer(r2, "f")->count, 6u);
  EXPECT_EQ(find_buffer(r2, "f")->bytes, 12u);
}

TEST(BufferSize, NegativeCountIsAConfigurationError) {
  const std::string src = ".buffer ok u8[4] out\n.buffer  neg u32[wave - 33] out\n    exit\n";
  expect_config_error(src, 2, 10, "'neg'");
  host::LoadOptions o;
  o.cli.wave = 64;
  auto r = test::load(src, o);
  ASSERT_TRUE(r.loaded.has_value()) << show(r.diags);
  EXPECT_EQ(find_buffer(r, "neg")->count, 31u);
}

TEST(BufferSize, OverflowingExpressionsAreErrors) {
  expect_config_error(".buffer x u8[4294967295 * 4294967295 * 4294967295] out\n    exit\n", 1, 9,
                      "'x'");
  expect_config_error(".buffer x u8[0 - 4294967295 * 4294967295 * 4294967295] out\n    exit\n", 1,
                      9, "'x'");
  expect_config_error(
      ".buffer x u8[threads * 4294967295 * 4294967295 - threads * 4294967295 * 4294967295] "
      "out\n    exit\n",
      1, 9, "'x'");
}

// syntax.buffer.size: a buffer over 256 MiB, or buffers over 256 MiB in total.
TEST(BufferSize, SizeLimits) {
  {
    auto r = test::load(".buffer big u32[67108864] out\n    exit\n");  // exactly 256 MiB
    ASSERT_TRUE(r.loaded.has_value()) << show(r.diags);
    EXPECT_EQ(find_buffer(r, "big")->bytes, 256u << 20);
  }
  expect_config_error(".buffer big u32[67108865] out\n    exit\n", 1, 9, "256 MiB");
  expect_config_error(".buffer big u8[268435457] out\n    exit\n", 1, 9, "256 MiB");
  {
    auto r = test::load(".buffer a u8[134217728] out\n.buffer b u16[67108864] in\n    exit\n");
    ASSERT_TRUE(r.loaded.has_value()) << show(r.diags);
  }
  expect_config_error(".buffer a u8[134217728] out\n.buffer b u16[67108865] in\n    exit\n", 2, 9,
                      "in total");
}

// ---- syntax.buffer.init ---------------------------------------------------------------------

std::vector<uint8_t> init_bytes(const std::string& decl, host::LoadOptions o = {}) {
  auto r = test::load(decl + "\n    exit\n", o);
  EXPECT_TRUE(r.loaded.has_value()) << decl << "\n" << show(r.diags);
  if (!r.loaded || r.loaded->program->buffers.empty()) return {};
  return r.loaded->program->buffers[0].init;
}

using Bytes = std::vector<uint8_t>;

TEST(BufferInit, ListsFillAndIota) {
  EXPECT_EQ(init_bytes(".buffer b u8[4] in = 1, 255, -128"), (Bytes{1, 255, 0x80, 0}));
  EXPECT_EQ(init_bytes(".buffer b u16[3] in = 0x1234, -1"), (Bytes{0x34, 0x12, 0xff, 0xff, 0, 0}));
  EXPECT_EQ(init_bytes(".buffer b u32[2] in = 0x01020304"), (Bytes{4, 3, 2, 1, 0, 0, 0, 0}));
  EXPECT_EQ(init_bytes(".buffer b i32[2] out = -1, 4294967295"), (Bytes(8, 0xff)));
  EXPECT_EQ(init_bytes(".buffer b i32[1] out = -2147483648"), (Bytes{0, 0, 0, 0x80}));
  EXPECT_EQ(init_bytes(".buffer b u16[3] in = fill(7)"), (Bytes{7, 0, 7, 0, 7, 0}));
  EXPECT_EQ(init_bytes(".buffer b u8[3] in = fill(-1)"), (Bytes{255, 255, 255}));
  EXPECT_EQ(init_bytes(".buffer b u32[3] in = iota"), (Bytes{0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}));
  // iota(a, b): a + b*i wrapped to the element width.
  EXPECT_EQ(init_bytes(".buffer b u8[4] in = iota(254, 1)"), (Bytes{254, 255, 0, 1}));
  EXPECT_EQ(init_bytes(".buffer b u8[3] in = iota(0, 128)"), (Bytes{0, 128, 0}));
  EXPECT_EQ(init_bytes(".buffer b i32[3] in = iota(5, -6)"),
            (Bytes{5, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xf9, 0xff, 0xff, 0xff}));
  EXPECT_EQ(init_bytes(".buffer b u16[2] in = iota(65535, 2)"), (Bytes{0xff, 0xff, 1, 0}));
  EXPECT_EQ(init_bytes(".buffer b u8[0] in = fill(3)"), Bytes{});
  EXPECT_EQ(init_bytes(".buffer b u8[0] in = iota"), Bytes{});
}

// Each value fits the element width as a signed or unsigned number.
TEST(BufferInit, ValuesMustFitTheElement) {
  init_bytes(".buffer b u8[2] in = 255, -128");
  init_bytes(".buffer b u16[2] in = 65535, -32768");
  init_bytes(".buffer b u32[2] in = 4294967295, -2147483648");
  expect_config_error(".buffer b u8[2] in = 256\n    exit\n", 1, 9, "does not fit u8");
  expect_config_error(".buffer b u8[2] in = 1, -129\n    exit\n", 1, 9, "-129");
  expect_config_error(".buffer b u16[2] in = 65536\n    exit\n", 1, 9, "does not fit u16");
  expect_config_error(".buffer b u16[2] in = -32769\n    exit\n", 1, 9, "does not fit u16");
  expect_config_error(".buffer b u8[2] in = fill(256)\n    exit\n", 1, 9, "does not fit u8");
  expect_config_error(".buffer b u16[2] in = fill(-32769)\n    exit\n", 1, 9, "does not fit");
  // The u32/i32 range is the immediate range, checked when parsing.
  auto r = test::load(".buffer b i32[2] in = 4294967296\n    exit\n");
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags.list()[0].kind, DiagKind::Syntax);
}

// At most COUNT values; the count depends on the configuration.
TEST(BufferInit, AtMostCountValues) {
  EXPECT_EQ(init_bytes(".buffer b u8[3] in = 1, 2, 3"), (Bytes{1, 2, 3}));
  expect_config_error(".buffer b u8[2] in = 1, 2, 3\n    exit\n", 1, 9, "3 initial values");
  const std::string src = ".buffer b u32[wave] in = 1, 2, 3, 4, 5\n    exit\n";
  host::LoadOptions o;
  o.cli.wave = 4;
  expect_config_error(src, 1, 9, "5 initial values", o);
  o.cli.wave = 8;
  EXPECT_EQ(init_bytes(".buffer b u8[wave] in = 1, 2, 3, 4, 5", o),
            (Bytes{1, 2, 3, 4, 5, 0, 0, 0}));
}

// The initial contents are what the program reads (state.memory.buffer).
TEST(BufferInit, ProgramSeesTheInitialContents) {
  auto r = test::run(R"(
.wave 4
.buffer in8 u8[8] in = 1, 2, 255
.buffer res u32[4] out
    ld.u8 v1, in8[%lane]
    shl v2, %lane, 2
    st res[v2], v1
    exit
)");
  ASSERT_TRUE(r.ok()) << r.diags;
  EXPECT_EQ(test::words(*r.outcome, "res"), (std::vector<uint32_t>{1, 2, 255, 0}));
}

// state.launch.sources, format.header, runner.toml: TOML text must be UTF-8.
// Debian's toml11 reads out of bounds on a literal string holding bytes that are
// not UTF-8 (found by fuzz_protocol); every TOML text is checked for UTF-8 first.
TEST(Utf8, FirstInvalidSequence) {
  using host::first_invalid_utf8;
  EXPECT_FALSE(first_invalid_utf8("plain ASCII\nand more\n"));
  EXPECT_FALSE(first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));
  struct Bad {
    std::string text;
    uint32_t line;
    uint8_t byte;
  };
  const Bad bad[] = {
      {"a\nb\n\xff", 3, 0xff},             // never valid
      {"\xc0\xaf", 1, 0xc0},               // overlong two-byte form
      {"\xe0\x80\xaf", 1, 0xe0},           // overlong three-byte form
      {"\xed\xa0\x80", 1, 0xed},           // surrogate U+D800
      {"\xf4\x90\x80\x80", 1, 0xf4},       // above U+10FFFF
      {"x\n\xe2\x82", 2, 0xe2},            // truncated at the end
      {"\xc3(", 1, 0xc3},                  // continuation byte missing
      {"ok \xe2\x82\xac\n\x80", 2, 0x80},  // stray continuation byte
  };
  for (const auto& b : bad) {
    auto p = first_invalid_utf8(b.text);
    ASSERT_TRUE(p.has_value()) << b.text;
    EXPECT_EQ(p->line, b.line);
    EXPECT_EQ(p->byte, b.byte);
  }
  EXPECT_EQ(first_invalid_utf8("\xff")->message(), "not UTF-8 (byte 0xff)");
}

// state.launch.sources: a configuration file that is not UTF-8 is refused with its
// line, before toml11 sees it.
TEST(ConfigFile, NotUtf8IsALocatedError) {
  host::Overrides o;
  auto e = host::parse_config_toml("[launch]\nwave = 8\npolicy = '\xff\xff'\n", "l.toml", o);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, "l.toml:3: not UTF-8 (byte 0xff); TOML text must be UTF-8");
}

// state.launch.sources, format.header, runner.toml (bad input gets a located error).
// The other toml11 failures fuzz_protocol found are refused before toml11 reads the
// text: a key path through an empty array (a null dereference in toml11) and deep
// nesting (a stack overflow); equivalent valid documents still read the same.
TEST(TomlGuard, EmptyArrayPathsAndDeepNestingAreErrors) {
  auto err = [](const std::string& text) {
    auto r = host::parse_toml(text);
    return std::holds_alternative<host::TomlError>(r) ? std::get<host::TomlError>(r)
                                                      : host::TomlError{0, "(parsed)"};
  };
  for (const char* text : {"features=[]\nfeatures.l=\"\"\n", "features=[]\n[features.l]\n",
                           "[a]\nb = [ # empty\n ]\n[a.b.c]\n"}) {
    SCOPED_TRACE(text);
    auto e = err(text);
    EXPECT_NE(e.message, "(parsed)");
    EXPECT_GE(e.line, 1u);  // toml11 names the line of the array or of the key
  }
  std::string deep = "x = " + std::string(40, '[') + std::string(40, ']') + "\n";
  auto e = err("a = 1\n" + deep);
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.message, "arrays or inline tables nested more than 32 deep");
  EXPECT_EQ(err("x = " + std::string(30, '[') + std::string(30, ']') + "\n").message, "(parsed)");
  // Empty arrays, brackets inside strings and comments, and table headers read as
  // written (the probe copy is only a check).
  auto ok = host::parse_toml(
      "a = []\nb = [[], [1]]\ns = \"[]\" # [] here\nt = '''x[]'''\n[tab]\nc = { d = [] }\n");
  ASSERT_TRUE(std::holds_alternative<host::TomlDoc>(ok)) << std::get<host::TomlError>(ok).message;
  const auto& v = std::get<host::TomlDoc>(ok).root;
  EXPECT_TRUE(toml::find(v, "a").as_array().empty());
  EXPECT_EQ(toml::find(v, "b").as_array().size(), 2u);
  EXPECT_TRUE(toml::find(v, "b").as_array()[0].as_array().empty());
  EXPECT_EQ(toml::find<std::string>(v, "s"), "[]");
  EXPECT_EQ(toml::find<std::string>(v, "t"), "x[]");
  EXPECT_TRUE(toml::find(toml::find(toml::find(v, "tab"), "c"), "d").as_array().empty());
  // toml11's own syntax errors keep their line.
  auto syn = err("a = 1\nb = = 2\n");
  EXPECT_EQ(syn.line, 2u);
}

// format.toml: a key defined twice is reported at the second definition, naming the
// key and the line of the first, in each kind of TOML file simtspec reads (toml11
// names the first place only, and the message was its own).
TEST(TomlGuard, DuplicateKeyIsReportedAtTheSecondDefinition) {
  host::Overrides o;
  EXPECT_EQ(host::parse_config_toml("[launch]\nwave = 8\nsimd = 8\nwave = 16\n", "c.toml", o),
            "c.toml:4: duplicate key 'wave' (first at line 2)");
  EXPECT_EQ(host::parse_config_toml("[launch]\nwave = 8\n\n[launch]\nsimd = 8\n", "c.toml", o),
            "c.toml:4: duplicate key 'launch' (first at line 1)");
  std::vector<syntax::HostStep> steps;
  EXPECT_EQ(
      host::parse_host_toml("[[host]]\nstep = 1\naction = 'resume'\nstep = 2\n", "h.toml", steps),
      "h.toml:4:1: duplicate key 'step' (first at line 2)");
  auto spec = runners::parse_process_spec(
      "name = \"a\"\ncommand = \"b\"\n[capabilities]\nwaves = [8]\nwaves = [4]\n", "r.toml");
  ASSERT_TRUE(std::holds_alternative<std::string>(spec));
  EXPECT_EQ(std::get<std::string>(spec),
            "r.toml:5: not a usable TOML document: duplicate key 'waves' (first at line 4)");
  // A test header: its TOML line 1 is the file's line 2.
  auto test = harness::parse_test(
      "t.simt", "; simtspec-test 1\n; id = \"a.b\"\n; title = \"t\"\n; id = \"a.c\"\nexit\n");
  ASSERT_TRUE(std::holds_alternative<std::vector<harness::FormatError>>(test));
  const auto& errs = std::get<std::vector<harness::FormatError>>(test);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].line, 4u);
  EXPECT_EQ(errs[0].message, "header is not valid TOML: duplicate key 'id' (first at line 2)");
  // Dotted keys, table headers and arrays of tables over what is already there.
  auto err = [](const std::string& text) {
    auto r = host::parse_toml(text);
    return std::holds_alternative<host::TomlError>(r) ? std::get<host::TomlError>(r)
                                                      : host::TomlError{0, "(parsed)"};
  };
  struct Case {
    const char* text;
    uint32_t line;
    const char* message;
  };
  for (const Case& c :
       {Case{"a.b = 1\nc = 2\na.b = 3\n", 3, "duplicate key 'a.b' (first at line 1)"},
        Case{"[a]\nb.c = 1\n[a.b]\n", 3, "duplicate key 'a.b' (first at line 2)"},
        Case{"x = {k = 1, k = 2}\n", 1, "duplicate key 'k' (first at line 1)"},
        Case{"a = [1]\n\n[[a]]\n", 3, "duplicate key 'a' (first at line 1)"},
        Case{"a = 1\na.b = 2\n", 2, "duplicate key 'a' (first at line 1)"}}) {
    SCOPED_TRACE(c.text);
    auto e = err(c.text);
    EXPECT_EQ(e.line, c.line);
    EXPECT_EQ(e.message, c.message);
  }
}

// format.toml: keys have at most 32 parts and inline tables at most 256 keys (the
// parts of a long dotted key overflowed toml11's stack; the keys of an inline table,
// which cannot span lines, cost toml11 a scan of the whole line each). The limits
// are errors at their line; documents within them read.
TEST(TomlGuard, KeyPartsAndInlineTableKeysAreBounded) {
  auto err = [](const std::string& text) {
    auto r = host::parse_toml(text);
    return std::holds_alternative<host::TomlError>(r) ? std::get<host::TomlError>(r)
                                                      : host::TomlError{0, "(parsed)"};
  };
  auto dotted = [](size_t parts) {
    std::string k = "a";
    for (size_t i = 1; i < parts; ++i) k += ".a";
    return k;
  };
  EXPECT_EQ(err(dotted(32) + " = 1\n").message, "(parsed)");
  EXPECT_EQ(err("[" + dotted(32) + "]\n[[" + dotted(31) + ".b]]\n").message, "(parsed)");
  for (const std::string& text :
       {"\n" + dotted(33) + " = 1\n", "\n[" + dotted(33) + "]\n", "\n[[" + dotted(33) + "]]\n",
        "\nx = {" + dotted(33) + " = 1}\n", "\n" + dotted(100000) + " = 1\n"}) {
    SCOPED_TRACE(text.substr(0, 80));
    auto e = err(text);
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.message, "a key has more than 32 parts");
  }
  // Dots in strings and in values are not parts of a key.
  EXPECT_EQ(err("\"" + dotted(40) + "\" = 1.5\nv = [1.5, \"" + dotted(40) + "\"]\n").message,
            "(parsed)");
  auto keys = [](size_t n) {
    std::string t = "x = {";
    for (size_t i = 0; i < n; ++i) t += (i ? ", k" : "k") + std::to_string(i) + " = 1";
    return t + "}\n";
  };
  EXPECT_EQ(err(keys(256)).message, "(parsed)");
  EXPECT_EQ(err("a = 1\n" + keys(257)).message, "an inline table holds more than 256 keys");
  EXPECT_EQ(err("a = 1\n" + keys(257)).line, 2u);
  // Nested inline tables count toward the outermost; arrays inside do not.
  std::string many = "1";
  for (int i = 0; i < 1000; ++i) many += ", 1";
  EXPECT_EQ(err("x = {a = {b = 1, c = 2}, d = [" + many + "]}\n").message, "(parsed)");
  std::string nested = "x = {";
  for (size_t i = 0; i < 200; ++i) nested += "k" + std::to_string(i) + " = {a = 1}, ";
  EXPECT_EQ(err(nested + "z = 1}\n").message, "an inline table holds more than 256 keys");
}

// format.toml: toml11 reads an array with a line break after each comma; values,
// errors and the lines they are reported at are those of the text as written.
TEST(TomlGuard, ArraysReadAsWrittenAtTheirLines) {
  auto r = host::parse_toml("a = [1, [2, 3], {k = [4, 5]}, 'x,y', # c, d\n 6]\nb = \"z\"\n");
  ASSERT_TRUE(std::holds_alternative<host::TomlDoc>(r)) << std::get<host::TomlError>(r).message;
  const auto& doc = std::get<host::TomlDoc>(r);
  const auto& a = toml::find(doc.root, "a").as_array();
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[1].as_array().size(), 2u);
  EXPECT_EQ(toml::find(a[2], "k").as_array().size(), 2u);
  EXPECT_EQ(a[3].as_string().str, "x,y");
  EXPECT_EQ(a[4].as_integer(), 6);
  EXPECT_EQ(doc.line(a[0]), 1u);
  EXPECT_EQ(doc.line(a[3]), 1u);
  EXPECT_EQ(doc.line(a[4]), 2u);
  EXPECT_EQ(doc.line(toml::find(doc.root, "b")), 3u);
  // Lines counted from the first line given.
  auto h = host::parse_toml("a = [1, 2,\n 3]\nb = 1\n", 10);
  ASSERT_TRUE(std::holds_alternative<host::TomlDoc>(h));
  EXPECT_EQ(std::get<host::TomlDoc>(h).line(toml::find(std::get<host::TomlDoc>(h).root, "b")), 12u);
  // toml11's own errors after a long array are at their line.
  auto e = host::parse_toml("a = [1, 2, 3, 4, 5, 6]\nb = = 1\n");
  ASSERT_TRUE(std::holds_alternative<host::TomlError>(e));
  EXPECT_EQ(std::get<host::TomlError>(e).line, 2u);
  e = host::parse_toml("a = [1, 2, 3, 4, 5, 6]\nb = [1, 2, 3,\n x]\n", 5);
  ASSERT_TRUE(std::holds_alternative<host::TomlError>(e));
  EXPECT_EQ(std::get<host::TomlError>(e).line, 6u);  // toml11 shows where the array starts
}

}  // namespace
}  // namespace simt
