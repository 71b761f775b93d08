// ci: not sanitized: the whole suite through the faulty implementation: an end-to-end sweep
// (release build) Every planted fault of the test-only faulty implementation, run through the
// process runner over the whole suite, must be reported as failures whose first
// difference names the faulty behaviour; a crashing, hanging or garbage-talking
// implementation must give `error` results while the run completes
// (runner.harness, runner.firstdiff, runner.protocol.errors).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness.h"
#include "process.h"
#include "support.h"

namespace simt {
namespace {

struct RunSummary {
  harness::Summary sum;
  std::vector<json::Value> failures;
};

runners::ProcessSpec faulty(const std::string& fault, double timeout) {
  auto s = runners::parse_process_spec(test::faulty_runner_toml(fault, timeout), "faulty.toml");
  EXPECT_TRUE(std::holds_alternative<runners::ProcessSpec>(s));
  return std::get<runners::ProcessSpec>(s);
}

RunSummary run_suite(const std::string& fault, const std::string& filter = "",
                     double timeout = 20) {
  std::string err;
  static const harness::Suite suite =
      harness::load_suite(harness::discover({test::source_path("suites")}, err));
  EXPECT_GT(suite.tests.size(), 60u);
  EXPECT_TRUE(suite.bad.empty());
  harness::Options o;
  o.jobs = 2;
  o.filter = filter;
  auto runner = runners::make_process_runner(faulty(fault, timeout));
  RunSummary r;
  r.sum =
      harness::run(*runner, suite, harness::select(suite, o), o, [&](const reports::Record& rec) {
        if (rec.status == reports::Status::fail) r.failures.push_back(reports::to_json(rec));
      });
  runner->shutdown();
  return r;
}

TEST(Faults, NoFaultMeansNoFailure) {
  auto r = run_suite("none");
  EXPECT_TRUE(r.sum.ok());
  EXPECT_EQ(r.sum.counts["pass"], r.sum.total);
}

// Each semantic fault: failures, each with a first difference, and among them a
// test about the behaviour the fault breaks. Each fault runs the tests about its
// topic only (the whole suite, twenty times over, took most of CI's test time); the
// mutation score (tests/mutation/run) is what runs every fault against everything.
TEST(Faults, EverySemanticFaultIsFoundWithItsFirstDifference) {
  const std::map<std::string, std::string> fault_to_test = {
      {"invert-all", "invert"},
      {"cbr-empty-taken", "cbr"},
      {"readlane-off-by-one", "readlane"},
      {"cmp-unsigned", "cmp"},
      {"barrier-early", "bar"},
      {"mask-overflow-late", "overflow"},
      {"shfl-stale", "shfl"},
      {"store-lowest-wins", "store"},
      {"atom-broadcast-inactive", "atom.warp"},
      {"atom-warp-lane0", "atom.warp"},
      {"atom-lane-descending", "atom.lane"},
      {"esr-bystander", "trap.esr"},
      {"barrier-count-kept", "barrier_unwind"},
      {"syscall-skip", "trap.sys"},
      {"syscall-pc-same", "trap.sys"},
      {"frame-exec-live", "trap.resume"},
      {"tclear-core-only", "trap.clear"},
      {"empty-part-not-skipped", "wave.union"},
      {"shared-private", "wave.shared"},
      {"scalar-once-per-region", "wave.scalar"},
      // spec/preempt.md: each fault breaks one step of a save or a restore.
      {"preempt-mstack-lost", "preempt.flow.a.nested_if_else"},
      {"preempt-cursor-lost", "preempt.sched.round_robin"},
      {"preempt-slm-not-restored", "preempt.intruder"},
      {"preempt-part-restart", "preempt.stop.subvector"},
      {"preempt-barrier-unwound", "preempt.barrier"},
  };
  for (const auto& [fault, topic] : fault_to_test) {
    auto r = run_suite(fault, "*" + topic + "*");
    EXPECT_GT(r.sum.counts["fail"], 0u) << fault << " was not detected";
    EXPECT_EQ(r.sum.counts["error"], 0u) << fault;
    bool on_topic = false;
    for (const auto& f : r.failures) {
      const json::Value* d = f.find("first_diff");
      EXPECT_TRUE(d && d->is_object())
          << fault << ": " << f.find("id")->as_string() << " has no first difference";
      if (f.find("id")->as_string().find(topic) != std::string::npos) on_topic = true;
    }
    EXPECT_TRUE(on_topic) << fault << ": no failing test about '" << topic << "'";
  }
}

// runner.protocol.errors: the run goes on and every configuration is an error.
TEST(Faults, CrashHangAndGarbageAreErrorsAndTheRunCompletes) {
  for (const char* fault : {"crash", "hang", "garbage"}) {
    auto r = run_suite(fault, "alu.add*", 0.5);
    EXPECT_GT(r.sum.total, 0u);
    EXPECT_EQ(r.sum.counts["error"], r.sum.total) << fault;
    EXPECT_FALSE(r.sum.ok());
  }
}

}  // namespace
}  // namespace simt
