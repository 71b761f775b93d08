// The Vulkan runner end to end (runners/vulkan/main.cpp): simtspec-vulkan started
// through its runner description (runners/vulkan/lavapipe.toml, with the command
// of this build), speaking the process protocol (spec/runner.md). Outcomes are
// compared with the reference's; unsupported programs and waves, rejections, a
// crashing driver and a shader that runs too long are checked.
//
// Without a Vulkan device every test skips, unless SIMT_REQUIRE_VULKAN=1 (CI),
// which turns the skip into a failure.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"
#include "process.h"
#include "readme_text.h"
#include "reference.h"
#include "results.h"
#include "runner.h"
#include "vulkan_test_support.h"

namespace simt {
namespace {

using runners::RunRequest;
using runners::RunResult;
using K = RunResult::Kind;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A runner description of runners/vulkan as shipped, with this build's
// simtspec-vulkan and extra arguments.
runners::ProcessSpec description(const std::string& file, std::vector<std::string> extra_args) {
  auto s = runners::load_process_spec(std::string(SIMT_SOURCE_DIR) + "/runners/vulkan/" + file);
  if (auto* err = std::get_if<std::string>(&s)) {
    ADD_FAILURE() << *err;
    return {};
  }
  runners::ProcessSpec spec = std::get<runners::ProcessSpec>(s);
  spec.command = std::string(SIMT_BINARY_DIR) + "/simtspec-vulkan";
  spec.args.insert(spec.args.end(), extra_args.begin(), extra_args.end());
  return spec;
}

runners::ProcessSpec lavapipe(std::vector<std::string> extra_args = {}) {
  return description("lavapipe.toml", std::move(extra_args));
}

// SwiftShader's driver as Debian's chromium ships it (.ci/setup installs chromium).
constexpr const char* kSwiftShaderIcd = "/usr/lib/chromium/vk_swiftshader_icd.json";
constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

bool have_file(const char* path) {
  return std::ifstream(path).good();
}

// Skips (or fails under SIMT_REQUIRE_VULKAN=1) without SwiftShader's driver.
#define SKIP_WITHOUT_SWIFTSHADER()                                     \
  if (!have_file(kSwiftShaderIcd))                                     \
  SIMT_NO_VULKAN_DEVICE("no SwiftShader driver at " << kSwiftShaderIcd \
                                                    << " (Debian's chromium package)")

RunRequest request(std::string program, uint32_t wave) {
  RunRequest r;
  r.program = std::move(program);
  r.config.wave = wave;
  return r;
}

// A divergent program with loops, loads and stores, completed on the reference.
const char* kDivergent = R"(
.warps 2
.workgroups 2
.buffer in  u32[threads] in = iota(7, 3)
.buffer out u32[threads] out
    mov s0, %wave
    mul s0, s0, %nwarps
    mul s0, s0, %wg
    mul s1, %warp, %wave
    add s0, s0, s1
    add v0, %lane, s0
    shl v0, v0, 2
    ld v1, in[v0]
    and v2, %lane, 1
    cmp.eq p0, v2, 0
    if p0
      mov v3, 0
      loop
        add v3, v3, 1
        cmp.lt p1, v3, %lane
        break !p1
      endloop
      mul v1, v1, v3
    else
      xor v1, v1, 0xffff
    endif
    st out[v0], v1
    exit
)";

// True when the driver processes answered that there is no Vulkan device.
bool device_missing(const RunResult& r) {
  return r.kind == K::Error && r.message.find("no Vulkan device") != std::string::npos;
}

// Skips (or fails under SIMT_REQUIRE_VULKAN=1) when there is no device.
#define SKIP_WITHOUT_DEVICE(r) \
  if (device_missing(r)) SIMT_NO_VULKAN_DEVICE((r).message)

// runner.differential: at each wave lavapipe runs, the same outcome as the reference.
TEST(VulkanRunner, MatchesTheReferenceAtEachWave) {
  auto runner = runners::make_process_runner(lavapipe());
  for (uint32_t wave : {2u, 4u, 8u, 16u}) {
    RunRequest req = request(kDivergent, wave);
    RunResult got = runner->run(req);
    SKIP_WITHOUT_DEVICE(got);
    ASSERT_EQ(got.kind, K::Outcome) << "wave " << wave << ": " << got.message << got.stderr_text;
    RunResult want = runners::run_reference(req);
    ASSERT_EQ(want.outcome.status, "completed");
    EXPECT_EQ(got.outcome.status, want.outcome.status) << "wave " << wave;
    EXPECT_EQ(got.outcome.buffers, want.outcome.buffers) << "wave " << wave;
  }
  runner->shutdown();
}

// mem.check: an event in a non-first lane, with the reference's lane, pc and address.
TEST(VulkanRunner, TrapsLikeTheReference) {
  auto runner = runners::make_process_runner(lavapipe());
  RunRequest req = request(R"(
.buffer out u32[8] out
    cmp.ge p0, %lane, 3
    if p0
      shl v0, %lane, 3
      st out[v0], %lane
    endif
    exit
)",
                           8);
  RunResult got = runner->run(req);
  SKIP_WITHOUT_DEVICE(got);
  RunResult want = runners::run_reference(req);
  ASSERT_EQ(want.outcome.status, "trapped");
  ASSERT_EQ(got.kind, K::Outcome) << got.message << got.stderr_text;
  EXPECT_EQ(got.outcome.status, "trapped");
  EXPECT_EQ(got.outcome.event, want.outcome.event);
  EXPECT_EQ(got.outcome.buffers, want.outcome.buffers);
}

// runner.protocol.response: what cannot be translated, and waves lavapipe cannot
// run, are `unsupported` with the reason; an invalid program is rejected with its
// line (the runner's front end is simtspec's).
TEST(VulkanRunner, UnsupportedAndRejectedCarryTheirReasons) {
  auto runner = runners::make_process_runner(lavapipe());
  RunResult probe = runner->run(request(kDivergent, 8));
  SKIP_WITHOUT_DEVICE(probe);
  RunResult raw = runner->run(request(R"(
.buffer out u32[8] out
    cmp.eq p0, %lane, 0
    cbr p0, skip
    nop
skip:
    exit
)",
                                      8));
  EXPECT_EQ(raw.kind, K::Unsupported) << raw.message;
  EXPECT_NE(raw.message.find("not translated"), std::string::npos) << raw.message;

  RunResult wide = runner->run(request(kDivergent, 32));
  EXPECT_EQ(wide.kind, K::Unsupported) << wide.message;
  EXPECT_NE(wide.message.find("executes only 16"), std::string::npos) << wide.message;

  RunResult bad = runner->run(request(".buffer out u32[8] out\n    add v0, v1\n    exit\n", 8));
  EXPECT_EQ(bad.kind, K::Rejected) << bad.message;
  EXPECT_EQ(bad.line, std::optional<uint32_t>(2));
}

// runner.protocol.errors: a driver that crashes (lavapipe at one lane, let through
// with --allow-wave 1) is an error for that request, and the next request runs.
TEST(VulkanRunner, DriverCrashIsAnErrorAndTheRunGoesOn) {
  auto runner = runners::make_process_runner(lavapipe({"--allow-wave", "1"}));
  RunResult probe = runner->run(request(kDivergent, 8));
  SKIP_WITHOUT_DEVICE(probe);
  RunResult crash = runner->run(request(kDivergent, 1));
  EXPECT_EQ(crash.kind, K::Error) << crash.message;
  EXPECT_NE(crash.message.find("driver process for wave 1"), std::string::npos) << crash.message;
  EXPECT_NE(crash.message.find("signal"), std::string::npos) << crash.message;
  RunResult after = runner->run(request(kDivergent, 8));
  EXPECT_EQ(after.kind, K::Outcome) << after.message;
  EXPECT_EQ(after.outcome.buffers, runners::run_reference(request(kDivergent, 8)).outcome.buffers);
}

// A shader that runs longer than --dispatch-timeout is an error, and the next
// request runs on a fresh driver process.
TEST(VulkanRunner, ShaderThatRunsTooLongIsAnError) {
  // 2 s: the next request's first dispatch compiles its shader (LLVM), which takes
  // over 0.5 s under ASan on a loaded machine.
  auto runner = runners::make_process_runner(lavapipe({"--dispatch-timeout", "2"}));
  RunResult probe = runner->run(request(kDivergent, 8));
  SKIP_WITHOUT_DEVICE(probe);
  // 60,000 iterations of a long body in 128 workgroups of 32 warps: about 30 s
  // on lavapipe (one workgroup takes about 0.25 s).
  std::string body;
  for (int i = 0; i < 24; ++i) body += "      mul v1, v1, 0x9e3779b9\n      add v1, v1, v2\n";
  RunRequest slow = request(
      ".warps 32\n.workgroups 128\n.max_steps 4000000000\n.buffer out u32[threads] out\n"
      "    mov v1, %lane\n"
      "    mov v2, 0\n    loop\n" +
          body +
          "      add v2, v2, 1\n      cmp.lt p0, v2, 60000\n      break !p0\n    endloop\n"
          "    mov s0, %wave\n    mul s0, s0, %warp\n    add v0, %lane, s0\n    shl v0, v0, 2\n"
          "    st out[v0], v1\n    exit\n",
      8);
  auto t0 = std::chrono::steady_clock::now();
  RunResult got = runner->run(slow);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(got.kind, K::Error) << got.message;
  EXPECT_NE(got.message.find("did not finish within"), std::string::npos) << got.message;
  EXPECT_LT(secs, 15.0);
  RunResult after = runner->run(request(kDivergent, 8));
  EXPECT_EQ(after.kind, K::Outcome) << after.message << after.stderr_text;
}

using test_text::section_of;
using test_text::words;

// The suite on one runner description: the summary, and the sentences that state
// its figures in README.md and runners/vulkan/README.md.
struct Certified {
  harness::Summary sum;
  std::string readme;   // "every configuration it runs passes (N of the suite's ..."
  std::string vreadme;  // "C configurations of T tests: **P pass, ... U unsupported**"
};

// The suite of this checkout, every configuration selected, run with 2 jobs.
struct WholeSuite {
  harness::Suite suite;
  harness::Options options;
  std::vector<harness::Case> cases;
};

WholeSuite whole_suite() {
  std::string err;
  WholeSuite w;
  w.suite = harness::load_suite(harness::discover({std::string(SIMT_SOURCE_DIR) + "/suites"}, err));
  EXPECT_TRUE(err.empty()) << err;
  w.options.jobs = 2;
  w.cases = harness::select(w.suite, w.options);
  return w;
}

// Configurations that failed, ended in error or passed unexpectedly.
size_t failures(const harness::Summary& s) {
  return reports::count_of(s.counts, "fail") + reports::count_of(s.counts, "error") +
         reports::count_of(s.counts, "xpass");
}

Certified certify(const runners::ProcessSpec& spec) {
  const WholeSuite w = whole_suite();
  const harness::Suite& suite = w.suite;
  const auto& cases = w.cases;
  const harness::Options& o = w.options;
  auto runner = runners::make_process_runner(spec);
  Certified c;
  c.sum = harness::run(*runner, suite, cases, o, [](const reports::Record&) {});
  runner->shutdown();
  auto n = [&](const char* k) { return reports::thousands(reports::count_of(c.sum.counts, k)); };
  const std::string th_configs = reports::thousands(cases.size());
  const std::string th_tests = reports::thousands(suite.tests.size());
  c.readme = "every configuration it runs passes (" + reports::thousands(c.sum.run()) +
             " of the suite's " + th_configs + " configurations, in " + th_tests + " tests;";
  c.vreadme = th_configs + " configurations of " + th_tests + " tests: **" + n("pass") + " pass, " +
              n("fail") + " fail, " + n("error") + " error, " + n("xfail") + " xfail, " +
              n("unsupported") + " unsupported**";
  return c;
}

// The figures the READMEs state for lavapipe are those of a run of this suite: the
// configurations and tests of the suite, and how many of them run and pass on
// lavapipe (README.md "every configuration it runs passes (...)", and the
// certification section of runners/vulkan/README.md).
TEST(VulkanRunner, TheReadmeFiguresAreThoseOfThisSuiteOnLavapipe) {
  auto probe = runners::make_process_runner(lavapipe());
  auto first = probe->run(request(kDivergent, 8));
  probe->shutdown();
  SKIP_WITHOUT_DEVICE(first);
  const Certified c = certify(lavapipe());
  const std::string readme = words(read_text(std::string(SIMT_SOURCE_DIR) + "/README.md"));
  EXPECT_NE(readme.find(c.readme), std::string::npos) << "README.md should say: " << c.readme;
  const std::string section = section_of("runners/vulkan/README.md", "Certification of lavapipe");
  EXPECT_NE(section.find(c.vreadme), std::string::npos)
      << "runners/vulkan/README.md should say in its lavapipe section: " << c.vreadme;
  EXPECT_EQ(failures(c.sum), 0u);
}

// The same for SwiftShader (runners/vulkan/swiftshader.toml): its certification
// section of runners/vulkan/README.md and the sentence of README.md.
TEST(VulkanRunner, TheReadmeFiguresAreThoseOfThisSuiteOnSwiftShader) {
  SKIP_WITHOUT_SWIFTSHADER();
  const Certified c = certify(description("swiftshader.toml", {}));
  ASSERT_GT(c.sum.run(), 0u) << "SwiftShader ran nothing: is its driver usable?";
  const std::string readme = words(read_text(std::string(SIMT_SOURCE_DIR) + "/README.md"));
  const size_t at = readme.find("SwiftShader");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(readme.find(c.readme, at), std::string::npos)
      << "README.md should say of SwiftShader: " << c.readme;
  const std::string section =
      section_of("runners/vulkan/README.md", "Certification of SwiftShader");
  EXPECT_NE(section.find(c.vreadme), std::string::npos)
      << "runners/vulkan/README.md should say in its SwiftShader section: " << c.vreadme;
  EXPECT_EQ(failures(c.sum), 0u);
}

// The suite's configurations that pass on `spec`, as "id settings-but-wave-and-simd",
// among the cases whose matrix gives `wave` or no wave (the records name the wave
// each ran at).
std::set<std::string> passing_at(const runners::ProcessSpec& spec, uint32_t wave) {
  WholeSuite w = whole_suite();
  const harness::Suite& suite = w.suite;
  auto& cases = w.cases;
  const harness::Options& o = w.options;
  std::erase_if(
      cases, [&](const harness::Case& c) { return c.settings.wave && *c.settings.wave != wave; });
  std::set<std::string> keys;
  auto runner = runners::make_process_runner(spec);
  harness::run(*runner, suite, cases, o, [&](const reports::Record& rec) {
    const json::Value r = reports::to_json(rec);
    const json::Value* config = r.find("config");
    const json::Value* status = r.find("status");
    if (!config || !status || status->as_string() != "pass") return;
    if (config->find("wave")->as_uint() != wave) return;
    std::string key = r.find("id")->as_string();
    for (const auto& [name, value] : config->as_object())
      if (name != "wave" && name != "simd") key += " " + name + "=" + json::dump(value);
    keys.insert(key);
  });
  runner->shutdown();
  return keys;
}

// The suite's matrices give wave 4 wherever lavapipe runs a configuration at wave 8,
// so that SwiftShader (wave 4 only) runs the same tests: every configuration that
// passes at wave 8 on lavapipe has a twin (the same test and settings) that passes
// at wave 4 on SwiftShader.
TEST(VulkanRunner, SwiftShaderRunsTheWave4TwinOfEveryWave8ConfigurationLavapipeRuns) {
  SKIP_WITHOUT_SWIFTSHADER();
  const std::set<std::string> eight = passing_at(lavapipe(), 8);
  if (eight.empty()) SIMT_NO_VULKAN_DEVICE("lavapipe ran nothing at wave 8");
  const std::set<std::string> four = passing_at(description("swiftshader.toml", {}), 4);
  std::string missing;
  for (const std::string& k : eight)
    if (!four.count(k)) missing += "\n  " + k;
  EXPECT_TRUE(missing.empty()) << "passes at wave 8 on lavapipe, no passing wave-4 twin on "
                                  "SwiftShader (add 4 to the test's wave matrix):"
                               << missing;
  EXPECT_GE(four.size(), eight.size());
}

// `simtspec-vulkan --info` with two drivers: both devices, each with its subgroup
// sizes and operations, and the waves the runner runs on the one --device picks.
// Returns the index --info gives the device whose name contains `name`.
std::optional<uint32_t> device_index(const std::string& info, const std::string& name) {
  std::istringstream in(info);
  std::string line;
  while (std::getline(in, line)) {
    uint32_t i = 0;
    char colon = 0;
    std::istringstream l(line);
    std::string word;
    if (l >> word && word == "device" && l >> i >> colon && colon == ':' &&
        line.find(name) != std::string::npos)
      return i;
  }
  return std::nullopt;
}

std::string run_info(const std::vector<std::string>& args, int& status) {
  std::string cmd = std::string(SIMT_BINARY_DIR) + "/simtspec-vulkan --info";
  for (const std::string& a : args) cmd += " " + runners::shell_quote(a);
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    status = ::pclose(f);
  }
  return out;
}

const std::string kBothIcds = std::string(kLavapipeIcd) + ":" + kSwiftShaderIcd;

TEST(VulkanRunner, InfoListsEveryDeviceWithItsSubgroupSizes) {
  SKIP_WITHOUT_SWIFTSHADER();
  int status = -1;
  const std::string info = run_info({"--icd", kBothIcds}, status);
  auto sw = device_index(info, "SwiftShader"), lvp = device_index(info, "llvmpipe");
  if (!sw || !lvp) SIMT_NO_VULKAN_DEVICE("--info lists no SwiftShader and lavapipe: " << info);
  EXPECT_NE(info.find("SwiftShader Device (Subzero), SwiftShader driver , Vulkan 1.3"),
            std::string::npos)
      << info;
  EXPECT_NE(info.find("subgroup 4 (sizes 4; basic vote arithmetic ballot shuffle"),
            std::string::npos)
      << info;
  for (auto [index, waves] : {std::pair{*sw, "waves: 4\n"}, std::pair{*lvp, "waves: 2 4 8 16\n"}}) {
    const std::string one =
        run_info({"--icd", kBothIcds, "--device", std::to_string(index)}, status);
    EXPECT_EQ(status, 0) << one;
    EXPECT_NE(one.find(waves), std::string::npos) << one;
  }
  const std::string none = run_info({"--icd", kBothIcds, "--device", "7"}, status);
  EXPECT_NE(status, 0) << none;
  EXPECT_NE(none.find("no Vulkan device: --device 7: the loader lists 2 devices"),
            std::string::npos)
      << none;
}

// The probe and the per-wave checks run through a shell: a driver path with a
// space and a quote reaches them as one word.
TEST(VulkanRunner, InfoTakesAnIcdPathWithAQuote) {
  if (!have_file(kLavapipeIcd)) SIMT_NO_VULKAN_DEVICE("no lavapipe driver at " << kLavapipeIcd);
  const std::string dir = ::testing::TempDir() + "/it's an icd";
  std::filesystem::create_directories(dir);
  const std::string icd = dir + "/lvp.json";
  std::filesystem::copy_file(kLavapipeIcd, icd, std::filesystem::copy_options::overwrite_existing);
  int status = -1;
  const std::string info = run_info({"--icd", icd}, status);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 0) << info;
  EXPECT_NE(info.find("waves: 2 4 8 16\n"), std::string::npos) << info;
  EXPECT_NE(info.find("wave 16: llvmpipe"), std::string::npos) << info;
}

// --device picks the device: with both drivers visible, SwiftShader runs wave 4
// and answers `unsupported` for wave 8 with its subgroup size; lavapipe runs both;
// a device the loader does not list is an error for every request.
TEST(VulkanRunner, DeviceSelectsAmongLavapipeAndSwiftShader) {
  SKIP_WITHOUT_SWIFTSHADER();
  int status = -1;
  const std::string info = run_info({"--icd", kBothIcds}, status);
  auto sw = device_index(info, "SwiftShader"), lvp = device_index(info, "llvmpipe");
  if (!sw || !lvp) SIMT_NO_VULKAN_DEVICE("--info lists no SwiftShader and lavapipe: " << info);
  auto on = [&](uint32_t device) {
    return runners::make_process_runner(
        description("lavapipe.toml", {"--icd", kBothIcds, "--device", std::to_string(device)}));
  };
  {
    auto runner = on(*sw);
    RunResult four = runner->run(request(kDivergent, 4));
    ASSERT_EQ(four.kind, K::Outcome) << four.message << four.stderr_text;
    EXPECT_EQ(four.outcome.buffers, runners::run_reference(request(kDivergent, 4)).outcome.buffers);
    RunResult eight = runner->run(request(kDivergent, 8));
    EXPECT_EQ(eight.kind, K::Unsupported) << eight.message;
    EXPECT_NE(eight.message.find("wave 8: SwiftShader Device (Subzero) runs compute subgroups of "
                                 "4 lanes (subgroup size control from 4 to 4)"),
              std::string::npos)
        << eight.message;
    runner->shutdown();
  }
  {
    auto runner = on(*lvp);
    for (uint32_t wave : {4u, 8u}) {
      RunResult got = runner->run(request(kDivergent, wave));
      ASSERT_EQ(got.kind, K::Outcome) << wave << ": " << got.message << got.stderr_text;
      EXPECT_EQ(got.outcome.buffers,
                runners::run_reference(request(kDivergent, wave)).outcome.buffers);
    }
    runner->shutdown();
  }
  auto runner = on(7);
  RunResult none = runner->run(request(kDivergent, 8));
  EXPECT_EQ(none.kind, K::Error) << none.message;
  EXPECT_NE(none.message.find("no Vulkan device: --device 7"), std::string::npos) << none.message;
  runner->shutdown();
}

}  // namespace
}  // namespace simt
