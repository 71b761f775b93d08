// ci: not sanitized: the host-script invariant over generated programs: a semantic sweep (release
// build) Host programs and the host-script invariant (spec/oracles.md, oracle.model.hostprog,
// oracle.invariant.host_script): what the generator makes, the host model on programs worked out by
// hand, and the invariant failing on implementations that get the trap chapter wrong.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fuzz.h"
#include "generate.h"
#include "host/host.h"
#include "host_model.h"
#include "oracles.h"
#include "reference.h"
#include "stats.h"
#include "support.h"

namespace simt {
namespace {

using gen::Program;

// The host model's and the reference's outcomes of a program text with a host
// script written in TOML ([[host]] tables, trap.host.toml).
struct Both {
  gen::HostModelResult model;
  model::Outcome reference;
};
Both run_both(const std::string& text, const std::string& host_toml) {
  host::LoadOptions opt;
  if (!host_toml.empty()) {
    auto err = host::parse_host_toml(host_toml, "host.toml", opt.host);
    EXPECT_FALSE(err) << *err;
  }
  auto r = host::load(text, opt);
  EXPECT_TRUE(r.loaded) << r.diags.format("program");
  if (!r.loaded) return {};
  Both b;
  b.model = gen::run_host_model(*r.loaded->program);
  b.reference = runners::to_model(exec::Machine(r.loaded->program).run());
  return b;
}

const model::Buffer* buffer(const model::Outcome& o, const std::string& name) {
  for (const auto& b : o.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

// ---- the host model on programs worked out by hand ---------------------------------

// The issue's reproducer (trap.single_step, trap.boundary, trap.host.resume): with
// single-step on for core 0 only, a resume request for core 1 (which has no paused
// warp) does nothing to core 1. Two cores, one warp each, a handler that counts
// its entries per core; oldest_first. The reference before the fix opened a round
// on core 1 that nothing closed, and ended deadlock after 26 steps.
TEST(HostModel, ResumeForAnotherCoreLeavesItsWarpsReady) {
  const char* text = R"(.wave 4
.workgroups 2
.cores 2
.policy oldest_first
.handler H
.buffer cnt u32[2] out
.buffer out u32[8] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    add v2, v0, 1
    st out[v1], v2
    exit
H:
    shl s20, %core, 2
    ld s21, cnt[s20]
    add s21, s21, 1
    st cnt[s20], s21
    tclear
    tret
)";
  const char* host = R"([[host]]
step = 0
action = "single_step"
core = 0
on = true
[[host]]
step = 2
action = "resume"
core = 1
)";
  Both b = run_both(text, host);
  ASSERT_EQ(b.model.error, "");
  const model::Outcome& m = b.model.outcome;
  EXPECT_EQ(m.status, "completed");
  // Core 0 traps after each of its warp's 6 user steps but the last (exit: done,
  // nothing enters); each entry is 6 handler steps. Core 1 never enters.
  ASSERT_NE(buffer(m, "cnt"), nullptr);
  EXPECT_EQ(buffer(m, "cnt")->values, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(m.steps, 2u * 6 + 5u * 6);
  EXPECT_EQ(b.reference.status, m.status);
  EXPECT_EQ(b.reference.steps, m.steps);
  EXPECT_EQ(b.reference.buffers, m.buffers);
}

// trap.pause, trap.join, trap.host.resume, trap.paused: a handler that pauses;
// the host resumes core 0 only, so core 1's warp stays paused and the launch
// ends paused once nothing else can run.
TEST(HostModel, PausedWarpsWaitForTheHostAndTheLaunchEndsPaused) {
  const char* text = R"(.wave 2
.workgroups 2
.cores 2
.handler P
.buffer out u32[4] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    sys 3
    st out[v1], 9
    exit
P:
    tclear
    tpause
)";
  const char* host = R"([[host]]
step = 50
action = "resume"
core = 0
)";
  Both b = run_both(text, host);
  ASSERT_EQ(b.model.error, "");
  EXPECT_EQ(b.model.outcome.status, "paused");
  // Warp 0 resumed (by the idle host: no warp was ready before step 50) after its
  // sys and stored; warp 1 did not.
  EXPECT_EQ(buffer(b.model.outcome, "out")->values, (std::vector<int64_t>{9, 9, 0, 0}));
  EXPECT_EQ(b.reference.status, "paused");
  EXPECT_EQ(b.reference.buffers, b.model.outcome.buffers);
  EXPECT_EQ(b.reference.steps, b.model.outcome.steps);
}

// trap.interrupt, trap.none, trap.double, trap.vector: an interrupt for a core
// without a handler ends the launch with it; a fault in handler code is a double
// fault naming the inner event; a vcall with no table bound raises vector_unbound.
TEST(HostModel, InterruptWithoutHandlerDoubleFaultAndUnboundVcall) {
  Both b = run_both(
      ".wave 1\n.workgroups 2\n.cores 2\n.buffer out u32[2] out\n"
      "    nop\n    nop\n    nop\n    exit\n",
      "[[host]]\nstep = 1\naction = \"interrupt\"\ncore = 1\ncode = 77\n");
  ASSERT_EQ(b.model.error, "");
  ASSERT_TRUE(b.model.outcome.event);
  const model::Event& e = *b.model.outcome.event;
  EXPECT_EQ(e.name, "interrupt");
  EXPECT_EQ(e.warp, 1u);
  EXPECT_EQ(e.pc, 0u);  // round_robin ran warp 0 at step 1; warp 1 has not run
  EXPECT_EQ(e.code, 77u);
  EXPECT_EQ(b.reference.event, b.model.outcome.event);

  b = run_both(
      ".wave 4\n.handler H\n.buffer out u32[4] out\n    sys 1\n    exit\n"
      "H:\n    mov s20, 0\n    div s21, s20, s20\n    tret\n",
      "");
  ASSERT_TRUE(b.model.outcome.event);
  EXPECT_EQ(b.model.outcome.event->name, "double_fault");
  EXPECT_EQ(b.model.outcome.event->inner, "div_zero");
  EXPECT_EQ(b.model.outcome.event->pc, 3u);
  EXPECT_EQ(b.reference.event, b.model.outcome.event);

  b = run_both(".wave 1\n.vtable t f\n.buffer out u32[1] out\n    vcall 0\n    exit\nf:\n    ret\n",
               "");
  ASSERT_TRUE(b.model.outcome.event);
  EXPECT_EQ(b.model.outcome.event->name, "vector_unbound");
  EXPECT_EQ(b.reference.event, b.model.outcome.event);
}

// oracle.invariant.host_script: a program that uses the mask stack is outside the
// model.
TEST(HostModel, MaskStackIsOutsideTheModel) {
  auto r = host::load(".wave 1\n.buffer out u32[1] out\n    if pt\n    endif\n    exit\n");
  ASSERT_TRUE(r.loaded);
  EXPECT_NE(gen::run_host_model(*r.loaded->program).error.find("push"), std::string::npos);
}

// ---- generation -----------------------------------------------------------------------

// oracle.model.hostprog, oracle.fuzz.stats: the host-script programs of the CI
// seed hold the invariant and, together, reach every host action kind, the
// statuses completed, trapped, paused and deadlock, and the events only the
// trap chapter raises, with tpause and vcall among their instructions.
TEST(HostPrograms, ReachEveryActionStatusAndTrapEvent) {
  const gen::Invariant& inv = *gen::find_invariant("host-script");
  std::map<std::string, uint64_t> counts;
  for (uint64_t k = 0; k < 1500; ++k) {
    Program p;
    gen::Check c = gen::check_one(inv, gen::program_seed(20261122, k), 100, nullptr, &p);
    ASSERT_TRUE(c.ok) << "program " << k << ": " << c.message << "\n" << gen::print(p);
    ASSERT_TRUE(p.host_program);
    gen::count_constructs(p, c, counts);
  }
  for (const auto& key : gen::host_action_keys()) EXPECT_GT(counts[key], 0u) << key;
  for (const char* key :
       {"status:completed", "status:trapped", "status:paused", "status:deadlock", "event:interrupt",
        "event:single_step", "event:double_fault", "event:vector_unbound", "event:vector_range",
        "event:frame_overflow", "event:syscall", "instr:tpause", "instr:vcall", "kind:vcall",
        "kind:exec_clear", "launch:vtable"})
    EXPECT_GT(counts[key], 0u) << key;
}

// oracle.gen.options: host programs are every host-script program, about one in
// four of snapshot, all-or-none and differential, and none elsewhere; they keep
// their branch-free model and their statements' registers clear of the logging
// handlers' s48-s52.
TEST(HostPrograms, SharesPerInvariant) {
  std::map<std::string, size_t> share;
  for (const char* inv :
       {"host-script", "snapshot", "all-or-none", "structured", "trap-record", "scheduler"})
    for (uint64_t seed = 1; seed <= 400; ++seed) {
      Program p = gen::generate_one(*gen::find_invariant(inv), seed, 100);
      share[inv] += p.host_program;
      if (!p.host_program) continue;
      Program user = p;
      user.handler = Program::Handler::None;
      user.host.clear();
      const std::string text = gen::print(user);
      for (const char* r : {"s48", "s49", "s50", "s51", "s52"})
        EXPECT_EQ(text.find(std::string(r) + ","), std::string::npos) << r << "\n" << text;
    }
  EXPECT_EQ(share["host-script"], 400u);
  for (const char* inv : {"snapshot", "all-or-none"}) {
    EXPECT_GT(share[inv], 60u) << inv;
    EXPECT_LT(share[inv], 140u) << inv;
  }
  for (const char* inv : {"structured", "trap-record", "scheduler"})
    EXPECT_EQ(share[inv], 0u) << inv;
}

// ---- the invariant fails where the trap chapter is wrong -------------------------------

// The reference behind a wrapper that gets one thing of trap.host wrong.
class WrongHost : public runners::Runner {
 public:
  enum class Fault { ActionLate, ResumeDropped };
  explicit WrongHost(Fault f) : fault_(f), ref_(runners::make_reference_runner()) {}
  std::string name() const override { return "wrong-host"; }
  std::string version() const override { return "1"; }
  const runners::Capabilities& capabilities() const override { return ref_->capabilities(); }
  runners::RunResult run(const runners::RunRequest& req) override {
    runners::RunRequest r = req;
    std::vector<syntax::HostStep> host;
    for (auto h : r.host) {
      if (fault_ == Fault::ActionLate) ++h.step;  // one step late (stays below max_steps)
      if (fault_ == Fault::ResumeDropped && h.kind == syntax::HostKind::Resume) continue;
      host.push_back(h);
    }
    r.host = host;
    return ref_->run(r);
  }

 private:
  Fault fault_;
  std::unique_ptr<runners::Runner> ref_;
};

TEST(HostScript, FailsOnWrongHostScripts) {
  const gen::Invariant& inv = *gen::find_invariant("host-script");
  for (auto f : {WrongHost::Fault::ActionLate, WrongHost::Fault::ResumeDropped}) {
    WrongHost wrong(f);
    size_t failed = 0;
    std::string first;
    for (uint64_t k = 0; k < 300; ++k) {
      gen::Check c = gen::check_one(inv, gen::program_seed(20261122, k), 100, &wrong);
      ASSERT_TRUE(c.unsupported.empty()) << c.unsupported;
      if (!c.ok && first.empty()) first = c.message;
      failed += !c.ok;
    }
    EXPECT_GT(failed, 3u) << static_cast<int>(f);
    EXPECT_NE(first.find("the host model"), std::string::npos) << first;
  }
}

}  // namespace
}  // namespace simt
