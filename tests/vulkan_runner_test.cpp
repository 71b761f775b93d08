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
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "harness.h"
#include "process.h"
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

// lavapipe.toml as shipped, with this build's simtspec-vulkan and extra arguments.
runners::ProcessSpec lavapipe(std::vector<std::string> extra_args = {}) {
  auto s =
      runners::load_process_spec(std::string(SIMT_SOURCE_DIR) + "/runners/vulkan/lavapipe.toml");
  if (auto* err = std::get_if<std::string>(&s)) {
    ADD_FAILURE() << *err;
    return {};
  }
  runners::ProcessSpec spec = std::get<runners::ProcessSpec>(s);
  spec.command = std::string(SIMT_BINARY_DIR) + "/simtspec-vulkan";
  spec.args.insert(spec.args.end(), extra_args.begin(), extra_args.end());
  return spec;
}

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
  auto runner = runners::make_process_runner(lavapipe({"--dispatch-timeout", "0.5"}));
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

// The figures the READMEs state for lavapipe are those of a run of this suite: the
// configurations and tests of the suite, and how many of them run and pass on
// lavapipe (README.md "every configuration it runs passes (...)", and the
// certification section of runners/vulkan/README.md).
TEST(VulkanRunner, TheReadmeFiguresAreThoseOfThisSuiteOnLavapipe) {
  auto probe = runners::make_process_runner(lavapipe());
  auto first = probe->run(request(kDivergent, 8));
  probe->shutdown();
  SKIP_WITHOUT_DEVICE(first);
  std::string err;
  auto suite =
      harness::load_suite(harness::discover({std::string(SIMT_SOURCE_DIR) + "/suites"}, err));
  ASSERT_TRUE(err.empty()) << err;
  harness::Options o;
  o.jobs = 2;
  auto cases = harness::select(suite, o);
  auto runner = runners::make_process_runner(lavapipe());
  harness::Summary sum = harness::run(*runner, suite, cases, o, [](const json::Value&) {});
  runner->shutdown();
  auto n = [&](const char* k) { return reports::count_of(sum.counts, k); };
  const std::string th_configs = reports::thousands(cases.size());
  const std::string th_tests = reports::thousands(suite.tests.size());
  const std::string readme = read_text(std::string(SIMT_SOURCE_DIR) + "/README.md");
  const std::string want = "every configuration it runs passes (" + reports::thousands(sum.run()) +
                           " of the suite's " + th_configs + " configurations, in " + th_tests +
                           " tests;";
  EXPECT_NE(readme.find(want), std::string::npos) << "README.md should say: " << want;
  const std::string vreadme = read_text(std::string(SIMT_SOURCE_DIR) + "/runners/vulkan/README.md");
  const std::string vwant =
      th_configs + " configurations of " + th_tests + " tests: **" + reports::thousands(n("pass")) +
      " pass, " + reports::thousands(n("fail")) + " fail, " + reports::thousands(n("error")) +
      " error, " + reports::thousands(n("xfail")) + " xfail, " +
      reports::thousands(n("unsupported")) + "\nunsupported**";
  EXPECT_NE(vreadme.find(vwant), std::string::npos)
      << "runners/vulkan/README.md should say: " << vwant;
  EXPECT_EQ(n("fail") + n("error") + n("xpass"), 0u);
}

}  // namespace
}  // namespace simt
