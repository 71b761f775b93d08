// The host script and the state it drives (spec/trap.md): pending interrupts, open
// single-step rounds, outstanding resumes, the global ESR, the bound TBAs and
// vector table and the script's position are machine state (trap.state):
// snapshots restore them, hashes and equality see them, livelock detection
// includes them. Host-script errors are located (trap.host.errors) for `simtspec
// run --host`, and the protocol carries the script in `host` at version 1.1
// (runner.protocol.version, trap.host.toml).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "protocol.h"
#include "reference.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using exec::Machine;
using exec::MachineState;
using exec::Status;
using test::read_all;
using test::write_all;

// A host script from TOML (trap.host.toml); a parse error fails the test.
std::vector<syntax::HostStep> script(const std::string& toml) {
  std::vector<syntax::HostStep> out;
  auto err = host::parse_host_toml(toml, "script.toml", out);
  EXPECT_FALSE(err.has_value()) << *err;
  return out;
}

std::shared_ptr<const exec::Program> build_with(std::string_view text, const std::string& toml,
                                                exec::Policy policy = exec::Policy::RoundRobin,
                                                uint64_t seed = 0) {
  host::LoadOptions opt;
  opt.host = script(toml);
  opt.cli.policy = policy;
  opt.cli.seed = seed;
  return test::build(text, opt);
}

// The rest of a launch: its outcome, its trace from here on and the final hash.
struct Rest {
  exec::Outcome outcome;
  std::vector<std::string> trace;
  uint64_t hash = 0;
};

Rest finish(Machine& m) {
  Rest r;
  m.set_trace(
      [&](const exec::TraceRecord& t) { r.trace.push_back(exec::format_trace(m.program(), t)); });
  r.outcome = m.run();
  r.hash = m.hash();
  m.set_trace(nullptr);
  return r;
}

// Runs `prog` for `n` steps, requires `at` of the state there (the state the test
// is about), snapshots it and restores the snapshot into a fresh machine: the two
// have the same state and hash and continue identically (exec.snapshot,
// trap.state), like a machine that never stopped.
void expect_snapshot_continues(const std::shared_ptr<const exec::Program>& prog, uint64_t n,
                               const std::function<bool(const MachineState&)>& at,
                               const std::string& what) {
  SCOPED_TRACE(what + " at step " + std::to_string(n));
  Machine a(prog);
  a.advance(n);
  ASSERT_EQ(a.steps(), n);
  ASSERT_TRUE(at(a.state())) << "the state at this step is not the one the test is about";
  const exec::Snapshot s = a.snapshot();
  Machine b(prog);
  ASSERT_TRUE(b.restore(s));
  EXPECT_TRUE(b.state() == a.state());
  EXPECT_EQ(b.hash(), a.hash());
  const Rest ra = finish(a), rb = finish(b);
  EXPECT_TRUE(ra.outcome.same_result(rb.outcome));
  EXPECT_EQ(ra.outcome.steps, rb.outcome.steps);
  EXPECT_EQ(ra.trace, rb.trace);
  EXPECT_EQ(ra.hash, rb.hash);
  Machine c(prog);
  const Rest rc = finish(c);
  EXPECT_TRUE(rc.outcome.same_result(rb.outcome));
  EXPECT_EQ(rc.outcome.steps, rb.outcome.steps);
  EXPECT_EQ(rc.hash, rb.hash);
}

// Two warps count to 40 in a loop; the handler logs each entry's cause word (by
// TGID, in order) and spins 8 times first, so that a core stays in its handler
// for a while; a system call (code 0x5) makes the raising warp pause.
const char* const kCounter = R"(
.wave 4
.warps 2
.handler H
.buffer log u32[32] out
.buffer out u32[threads] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    mov s1, 0
count:
    add s1, s1, 1
    cmp.lt p0, s1, 40
    cbr p0, count
    sys 5
    st out[v1], s1
    exit
H:
    mov s24, 0
H_spin:
    add s24, s24, 1
    cmp.lt p14, s24, 8
    cbr p14, H_spin
    mov s20, %esr
    cmp.eq p14, s20, 0
    cbr p14, H_return
    ld s21, log[0]
    add s21, s21, 1
    st log[0], s21
    shl s21, s21, 2
    st log[s21], s20
    tclear
    and s20, s20, 0xff
    cmp.eq p14, s20, 11
    cbr p14, H_pause
H_return:
    tret
H_pause:
    tpause
)";

// trap.state, exec.snapshot: a snapshot taken while an interrupt is pending (the
// core is in its handler for an earlier one) restores it.
TEST(TrapState, SnapshotWithAPendingInterrupt) {
  auto prog = build_with(kCounter, R"(
[[host]]
step = 3
action = "interrupt"
code = 5
[[host]]
step = 3
action = "interrupt"
code = 6
[[host]]
step = 900
action = "resume"
)");
  ASSERT_TRUE(prog);
  expect_snapshot_continues(
      prog, 4, [](const MachineState& s) { return s.trap.cores[0].pending.size() == 1; },
      "interrupt pending");
  // And the pending interrupt is taken after the restore: both codes are logged.
  Machine m(prog);
  m.advance(4);
  Machine r(prog);
  ASSERT_TRUE(r.restore(m.snapshot()));
  auto o = r.run();
  ASSERT_EQ(o.status, Status::Completed);
  auto log = test::words(o, "log");
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log[1], 0x50cu);
  EXPECT_EQ(log[2], 0x60cu);
}

// trap.state: a snapshot taken while a single-step round is open, with debts
// (one warp has stepped, the other is owed its step).
TEST(TrapState, SnapshotWithAnOpenSingleStepRound) {
  for (auto policy : {exec::Policy::RoundRobin, exec::Policy::Random}) {
    auto prog = build_with(kCounter, R"(
[[host]]
step = 0
action = "single_step"
on = true
[[host]]
step = 200
action = "single_step"
on = false
[[host]]
step = 900
action = "resume"
)",
                           policy, 7);
    ASSERT_TRUE(prog);
    expect_snapshot_continues(
        prog, 1,
        [](const MachineState& s) {
          return s.trap.cores[0].round_open && s.trap.cores[0].single_step &&
                 s.warps[0].ss_owed != s.warps[1].ss_owed;
        },
        "round open");
  }
}

// trap.state: a snapshot taken while a resume request is outstanding (requested
// while the core is in its handler).
TEST(TrapState, SnapshotWithAnOutstandingResume) {
  auto prog = build_with(kCounter, R"(
[[host]]
step = 10
action = "interrupt"
code = 1
[[host]]
step = 12
action = "resume"
)");
  ASSERT_TRUE(prog);
  // The interrupt enters at step 10 and the handler spins for 25 steps per warp,
  // so at step 13 the resume is outstanding.
  expect_snapshot_continues(
      prog, 13, [](const MachineState& s) { return s.trap.cores[0].resume; }, "resume outstanding");
}

// A program that uses every piece of host-driven state: two cores, the vector
// table, TBAs bound by the host, global and per-core interrupts, single-step on
// one core, pauses and resumes.
const char* const kEverything = R"(
.wave 4
.warps 2
.workgroups 2
.cores 2
.handler_entry H
.vtable ops F0, F1
.buffer log u32[64] out
.buffer out u32[threads] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    mov v2, 0
    mov s1, 0
loop_k:
    and s2, s1, 1
    vcall s2
    add s1, s1, 1
    cmp.lt p0, s1, 6
    cbr p0, loop_k
    sys 3
    st out[v1], v2
    exit
F0:
    add v2, v2, 1
    ret
F1:
    add v2, v2, 10
    ret
H:
    mov s20, %esr
    cmp.eq p14, s20, 0
    cbr p14, H_return
    mov s25, %gesr
    ld s21, log[0]
    add s21, s21, 1
    and s21, s21, 31
    st log[0], s21
    shl s22, s21, 2
    st log[s22], s20
    st log[s22 + 128], s25
    and s23, s20, 0xff
    cmp.eq p13, s23, 11
    tclear
    cbr p13, H_pause
H_return:
    tret
H_pause:
    tpause
)";

const char* const kEverythingHost = R"(
[[host]]
step = 0
action = "bind_vtable"
table = "ops"
[[host]]
step = 0
action = "bind_tba"
label = "H"
[[host]]
step = 4
action = "interrupt"
core = "all"
code = 1
[[host]]
step = 6
action = "single_step"
core = 1
on = true
[[host]]
step = 60
action = "single_step"
core = 1
on = false
[[host]]
step = 70
action = "interrupt"
core = 0
code = 2
[[host]]
step = 70
action = "interrupt"
core = 0
code = 3
[[host]]
step = 71
action = "resume"
core = 0
[[host]]
step = 400
action = "resume"
[[host]]
step = 401
action = "resume"
core = 1
)";

// exec.snapshot, trap.state: a snapshot taken at any step boundary of a launch
// driven by the host restores into a fresh machine that continues exactly as the
// original; the hashes agree all along.
TEST(TrapState, SnapshotAtEveryBoundaryOfAHostDrivenLaunch) {
  for (auto policy : {exec::Policy::RoundRobin, exec::Policy::Random}) {
    auto prog = build_with(kEverything, kEverythingHost, policy, 3);
    ASSERT_TRUE(prog);
    Machine whole(prog);
    const Rest all = finish(whole);
    ASSERT_EQ(all.outcome.status, Status::Completed);
    ASSERT_GT(all.outcome.steps, 100u);
    // The launch went through every kind of host-driven state.
    bool pending = false, round = false, resume = false, gesr = false;
    Machine probe(prog);
    for (uint64_t n = 0; n < all.outcome.steps; ++n) {
      probe.advance(1);
      const MachineState& s = probe.state();
      for (const auto& c : s.trap.cores) {
        pending |= !c.pending.empty();
        round |= c.round_open;
        resume |= c.resume;
      }
      gesr |= s.trap.gesr_cores != 0;
    }
    EXPECT_TRUE(pending && round && resume && gesr)
        << pending << round << resume << gesr << ": the program no longer covers the state";
    for (uint64_t n = 0; n < all.outcome.steps; ++n) {
      Machine a(prog);
      a.advance(n);
      Machine b(prog);
      ASSERT_TRUE(b.restore(a.snapshot()));
      ASSERT_EQ(b.hash(), a.hash()) << "step " << n;
      const Rest rb = finish(b);
      ASSERT_TRUE(rb.outcome.same_result(all.outcome)) << "restored at step " << n;
      ASSERT_EQ(rb.outcome.steps, all.outcome.steps) << "restored at step " << n;
      ASSERT_EQ(rb.hash, all.hash) << "restored at step " << n;
    }
  }
}

// trap.state: two machines that differ only in a pending interrupt have
// different hashes and states, and different futures.
TEST(TrapState, APendingInterruptChangesTheHash) {
  auto prog = build_with(kCounter, R"(
[[host]]
step = 900
action = "resume"
)");
  ASSERT_TRUE(prog);
  Machine a(prog);
  a.advance(5);
  exec::Snapshot s = a.snapshot();
  s.state.trap.cores[0].pending.push_back(0x70c);  // an interrupt with code 7
  Machine b(prog);
  ASSERT_TRUE(b.restore(s));
  EXPECT_FALSE(b.state() == a.state());
  EXPECT_NE(b.hash(), a.hash());
  const Rest ra = finish(a), rb = finish(b);
  EXPECT_EQ(test::words(ra.outcome, "log")[0], 2u);  // the two system calls
  auto lb = test::words(rb.outcome, "log");
  EXPECT_EQ(lb[0], 3u);
  EXPECT_EQ(lb[1], 0x70cu);  // taken at the next boundary (restore set the boundary work)
}

// trap.state: every piece of host-driven state takes part in the hash and in
// equality: changing any one of them alone changes both.
TEST(TrapState, EveryHostDrivenFieldIsHashed) {
  auto prog = build_with(kEverything, kEverythingHost);
  ASSERT_TRUE(prog);
  Machine base(prog);
  base.advance(20);
  const exec::Snapshot s0 = base.snapshot();
  struct Edit {
    const char* name;
    std::function<void(MachineState&)> edit;
  };
  const Edit edits[] = {
      {"pending", [](MachineState& s) { s.trap.cores[1].pending.push_back(0x10c); }},
      {"resume", [](MachineState& s) { s.trap.cores[0].resume = !s.trap.cores[0].resume; }},
      {"single_step",
       [](MachineState& s) { s.trap.cores[0].single_step = !s.trap.cores[0].single_step; }},
      {"round_open",
       [](MachineState& s) { s.trap.cores[0].round_open = !s.trap.cores[0].round_open; }},
      {"owed", [](MachineState& s) { s.warps[1].ss_owed = !s.warps[1].ss_owed; }},
      {"tba", [](MachineState& s) { s.trap.cores[1].tba += 1; }},
      {"tba_valid",
       [](MachineState& s) { s.trap.cores[1].tba_valid = !s.trap.cores[1].tba_valid; }},
      {"global_esr", [](MachineState& s) { s.trap.global_esr ^= 0x100; }},
      {"gesr_cores", [](MachineState& s) { s.trap.gesr_cores ^= 2; }},
      {"host_next", [](MachineState& s) { s.trap.host_next += 1; }},
      {"vtable", [](MachineState& s) { s.trap.vtable = s.trap.vtable < 0 ? 0 : -1; }},
  };
  for (const auto& e : edits) {
    exec::Snapshot s = s0;
    e.edit(s.state);
    Machine m(prog);
    ASSERT_TRUE(m.restore(s)) << e.name;
    EXPECT_FALSE(m.state() == base.state()) << e.name;
    EXPECT_NE(m.hash(), base.hash()) << e.name;
  }
  // Pending interrupts are compared in order: the same two in the other order differ.
  exec::Snapshot x = s0, y = s0;
  x.state.trap.cores[0].pending = {0x20c, 0x30c};
  y.state.trap.cores[0].pending = {0x30c, 0x20c};
  Machine mx(prog), my(prog);
  ASSERT_TRUE(mx.restore(x) && my.restore(y));
  EXPECT_FALSE(mx.state() == my.state());
  EXPECT_NE(mx.hash(), my.hash());
  // The unedited snapshot hashes the same.
  Machine same(prog);
  ASSERT_TRUE(same.restore(s0));
  EXPECT_EQ(same.hash(), base.hash());
}

// exec.livelock, trap.clear: a handler that never clears and loops while %esr is
// not null never leaves: the launch ends livelock after the interrupt entered;
// the same handler with a tclear completes.
TEST(TrapState, HandlerLoopThatNeverClearsLivelocks) {
  const std::string text = R"(
.wave 4
.warps 2
.handler H
.buffer out u32[threads] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    mov s1, 0
count:
    add s1, s1, 1
    cmp.lt p0, s1, 50
    cbr p0, count
    st out[v1], s1
    exit
H:
    CLEAR
H_wait:
    mov s20, %esr
    cmp.ne p14, s20, 0
    cbr p14, H_wait
    tret
)";
  const std::string toml = R"(
[[host]]
step = 20
action = "interrupt"
code = 9
)";
  auto with = [&](const char* clear) {
    std::string t = text;
    t.replace(t.find("CLEAR"), 5, clear);
    return t;
  };
  auto never = build_with(with("nop"), toml);
  ASSERT_TRUE(never);
  Machine m(never);
  auto o = m.run();
  EXPECT_EQ(o.status, Status::Livelock);
  EXPECT_GT(o.steps, 20u);  // not before the interrupt: the user code alone ends
  EXPECT_LT(o.steps, 200u);
  auto cleared = build_with(with("tclear"), toml);
  ASSERT_TRUE(cleared);
  Machine c(cleared);
  auto oc = c.run();
  EXPECT_EQ(oc.status, Status::Completed);
  EXPECT_EQ(test::words(oc, "out"), std::vector<uint32_t>(8, 50));
}

// Two warps spin on flag[0]; the handler of the interrupt at step 1000 (SET) may
// set it.
const char* const kSpin = R"(
.wave 4
.warps 2
.handler H
.buffer out u32[threads] out
.buffer flag u32[1] inout
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
spin:
    ld s1, flag[0]
    cmp.eq p0, s1, 0
    cbr p0, spin
    st out[v1], s1
    exit
H:
    mov s20, %esr
    cmp.eq p14, s20, 0
    cbr p14, H_return
    SET
    tclear
H_return:
    tret
)";

std::string spin(const char* set) {
  std::string t = kSpin;
  t.replace(t.find("SET"), 3, set);
  return t;
}

const char* const kInterruptAt1000 = "[[host]]\nstep = 1000\naction = \"interrupt\"\ncode = 7\n";

// trap.state, exec.livelock: the spin repeats its state from its first turns, but
// a host action remains that changes the state (the interrupt, whose handler sets
// the flag): that is not a livelock, and the warps leave the spin after step 1000.
TEST(TrapState, NoLivelockWhileAHostActionRemains) {
  for (auto policy : {exec::Policy::RoundRobin, exec::Policy::OldestFirst}) {
    auto prog = build_with(spin("frame.ld s21, 36\n    shr s21, s21, 8\n    st flag[0], s21"),
                           kInterruptAt1000, policy);
    ASSERT_TRUE(prog);
    Machine m(prog);
    auto o = m.run();
    EXPECT_EQ(o.status, Status::Completed) << "after " << o.steps << " steps";
    EXPECT_GT(o.steps, 1000u);
    EXPECT_EQ(test::words(o, "out"), std::vector<uint32_t>(8, 7));
  }
}

// exec.livelock: with a handler that does not set the flag the spin is a livelock,
// found only once the script's last action has been applied.
TEST(TrapState, LivelockFoundAfterTheLastAction) {
  auto prog = build_with(spin("nop"), kInterruptAt1000);
  ASSERT_TRUE(prog);
  Machine m(prog);
  auto o = m.run();
  EXPECT_EQ(o.status, Status::Livelock);
  EXPECT_GT(o.steps, 1000u);
  EXPECT_LT(o.steps, 1100u);
}

// ---- simtspec run --host: located errors (trap.host.errors, trap.host.toml) -------

const std::string kBinary = SIMT_BINARY_DIR "/simtspec";

std::string quote(std::string_view s) {
  return test::shell_quote(s);
}

using Cmd = test::CommandResult;

class HostCli : public test::TempDirSuite<HostCli> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_trap_host_test_";

 protected:
  static Cmd simtspec(const std::string& args) { return test::run_command(kBinary, args, dir()); }
};

const char* const kCliProgram = R"(.max_steps 100
.wave 4
.cores 2
.workgroups 2
.handler_entry H
.vtable ops F
.buffer out u32[threads] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    st out[v1], 1
    exit
F:
    ret
H:
    tclear
    tret
)";

// A valid first action (lines 1-3), a blank line, then the action under test at
// line 5.
const char* const kFirstAction = "[[host]]\nstep = 1\naction = \"interrupt\"\n\n";

// trap.host.errors: each kind of error makes `simtspec run --host` exit 2 with a
// diagnostic naming the script file and the line of the action.
TEST_F(HostCli, ErrorsAreLocatedAtTheAction) {
  const fs::path prog = dir() / "prog.simt";
  write_all(prog, kCliProgram);
  struct Case {
    const char* what;
    const char* action;  // the TOML of the bad action, from line 5
    const char* message;
  };
  const Case cases[] = {
      {"unknown action", "[[host]]\nstep = 2\naction = \"explode\"\n", "unknown action 'explode'"},
      {"unknown key", "[[host]]\nstep = 2\naction = \"interrupt\"\ncolour = 3\n",
       "unknown key 'colour'"},
      {"key of another action",
       "[[host]]\nstep = 2\naction = \"bind_vtable\"\ntable = \"ops\"\n"
       "core = 0\n",
       "unknown key 'core'"},
      {"missing step", "[[host]]\naction = \"resume\"\n", "'step'"},
      {"missing label", "[[host]]\nstep = 2\naction = \"bind_tba\"\n", "'label'"},
      {"missing on", "[[host]]\nstep = 2\naction = \"single_step\"\n", "'on'"},
      {"wrong type: step", "[[host]]\nstep = \"2\"\naction = \"resume\"\n", "'step'"},
      {"wrong type: on", "[[host]]\nstep = 2\naction = \"single_step\"\non = 1\n", "'on'"},
      {"wrong type: core", "[[host]]\nstep = 2\naction = \"resume\"\ncore = \"ALL\"\n", "'core'"},
      {"code out of range", "[[host]]\nstep = 2\naction = \"interrupt\"\ncode = 16777216\n",
       "'code'"},
      {"step at max_steps", "[[host]]\nstep = 100\naction = \"interrupt\"\n", "max_steps"},
      {"step decreases", "[[host]]\nstep = 0\naction = \"interrupt\"\n", "must not decrease"},
      {"undefined label", "[[host]]\nstep = 2\naction = \"bind_tba\"\nlabel = \"nowhere\"\n",
       "undefined label 'nowhere'"},
      {"label not a handler entry", "[[host]]\nstep = 2\naction = \"bind_tba\"\nlabel = \"F\"\n",
       "not a handler entry"},
      {"undeclared table", "[[host]]\nstep = 2\naction = \"bind_vtable\"\ntable = \"F\"\n",
       "no vector table named 'F'"},
      {"core out of range", "[[host]]\nstep = 2\naction = \"resume\"\ncore = 2\n",
       "core 2 is out of range"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const fs::path bad = dir() / "bad.toml";
    write_all(bad, std::string(kFirstAction) + c.action);
    const Cmd r = simtspec("run " + quote(prog.string()) + " --host " + quote(bad.string()));
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    const std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_NE(first.find(bad.string() + ":5:"), std::string::npos) << r.err;
    EXPECT_NE(first.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("status:"), std::string::npos) << "the program ran:\n" << r.out;
  }
  // The valid first action alone runs (no handler bound: the interrupt traps).
  const fs::path good = dir() / "good.toml";
  write_all(good, kFirstAction);
  const Cmd ok = simtspec("run " + quote(prog.string()) + " --host " + quote(good.string()));
  EXPECT_EQ(ok.code, 1) << ok.err;
  EXPECT_NE(ok.out.find("status: trapped"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("event: interrupt in warp 0"), std::string::npos) << ok.out;
  // A file with anything but [[host]] tables is an error at that key's line.
  write_all(good, "\nlaunch = 3\n\n" + std::string(kFirstAction));
  const Cmd extra = simtspec("run " + quote(prog.string()) + " --host " + quote(good.string()));
  EXPECT_EQ(extra.code, 2);
  EXPECT_NE(extra.err.find(good.string() + ":2:"), std::string::npos) << extra.err;
}

// trap.host.toml: --host takes a TOML file of [[host]] tables or a test file, whose
// header's [[host]] is used; the script's actions take effect (bind, interrupt).
TEST_F(HostCli, HostScriptFromTomlOrTestFile) {
  const fs::path prog = dir() / "prog.simt";
  write_all(prog, kCliProgram);
  const fs::path toml = dir() / "host.toml";
  write_all(toml,
            "[[host]]\nstep = 0\naction = \"bind_tba\"\nlabel = \"H\"\n\n"
            "[[host]]\nstep = 2\naction = \"interrupt\"\ncore = 1\ncode = 77\n");
  Cmd r = simtspec("run " + quote(prog.string()) + " --host " + quote(toml.string()) + " --trace");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("core 1 enters its handler at pc=6: interrupt code 77, raised by w1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("w1 leaves the handler of core 1: pc="), std::string::npos) << r.out;
  // Without --host the program runs without a script: no entry.
  r = simtspec("run " + quote(prog.string()) + " --trace");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("enters its handler"), std::string::npos) << r.out;
  // A test file as the script: its header's [[host]] (no handler bound: trapped).
  const fs::path testfile = dir() / "t.simt";
  write_all(testfile,
            "; simtspec-test 1\n; id = \"x.host\"\n; title = \"t\"\n; clauses = "
            "[\"trap.host\"]\n; features = [\"trap\"]\n; [expect]\n; status = \"trapped\"\n"
            "; [expect.event]\n; name = \"interrupt\"\n; [[host]]\n; step = 3\n"
            "; action = \"interrupt\"\n; code = 5\n" +
                std::string(kCliProgram));
  r = simtspec("run " + quote(prog.string()) + " --host " + quote(testfile.string()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("code 5"), std::string::npos) << r.out;
  // A test file whose header script is wrong: located in that file.
  std::string bad = read_all(testfile);
  bad.replace(bad.find("; step = 3"), 10, "; step = 300");
  write_all(testfile, bad);
  r = simtspec("run " + quote(prog.string()) + " --host " + quote(testfile.string()));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find(testfile.string() + ":10:"), std::string::npos) << r.err;
}

// trap.host.toml: steps go up to 2^64 - 1 (max_steps does), in a host file as in a
// test file's header: one at max_steps = 2^64 - 1 is the located error of a step at
// max_steps (toml11 alone clamps it to 2^63 - 1, which would run), one past 2^64 - 1
// is a located error too, and 2^64 - 2 runs.
TEST_F(HostCli, StepsUpTo2To64Minus1InHostAndTestFiles) {
  const fs::path prog = dir() / "prog.simt";
  std::string text = kCliProgram;
  text.replace(text.find(".max_steps 100"), 14, ".max_steps 18446744073709551615");
  write_all(prog, text);
  struct Case {
    const char* step;
    int code;
    const char* message;  // on the error stream, at the action's line
  };
  const Case cases[] = {{"18446744073709551615", 2, "max_steps"},
                        {"0xffff_ffff_ffff_ffff", 2, "max_steps"},
                        {"18446744073709551616", 2, "out of range"},
                        {"18446744073709551614", 1, nullptr},
                        {"9223372036854775808", 1, nullptr}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.step);
    const fs::path toml = dir() / "big.toml";
    write_all(toml, std::string(kFirstAction) + "[[host]]\nstep = " + c.step +
                        "\naction = \"interrupt\"\n");
    const fs::path testfile = dir() / "big.simt";
    write_all(testfile, std::string("; simtspec-test 1\n; id = \"x.host\"\n; title = \"t\"\n") +
                            "; clauses = [\"trap.host\"]\n; features = [\"trap\"]\n" +
                            "; [expect]\n; status = \"trapped\"\n; [expect.event]\n" +
                            "; name = \"interrupt\"\n; [[host]]\n; step = 1\n" +
                            "; action = \"interrupt\"\n; [[host]]\n; step = " + c.step +
                            "\n; action = \"interrupt\"\n" + text);
    for (const fs::path& script : {toml, testfile}) {
      const Cmd r = simtspec("run " + quote(prog.string()) + " --host " + quote(script.string()));
      EXPECT_EQ(r.code, c.code) << script << "\n" << r.out << r.err;
      if (!c.message) continue;
      const std::string where = script.string() + (script == toml ? ":5:" : ":13:");
      EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
      EXPECT_EQ(r.out.find("status:"), std::string::npos) << "the program ran:\n" << r.out;
    }
  }
}

// ---- the protocol (runner.protocol.request, runner.protocol.version) -----------------

const char* const kProtocolProgram =
    ".wave 4\n.handler_entry H\n.buffer out u32[4] out\n    shl v1, %lane, 2\n"
    "    st out[v1], 1\n    exit\nH:\n    mov s1, %esr\n    shr s1, s1, 8\n"
    "    st out[0], s1\n    tclear\n    tret\n";

std::string run_line(const char* protocol, const std::string& host_json, int id = 5) {
  std::string program;
  for (const char* p = kProtocolProgram; *p; ++p)
    program += *p == '\n' ? std::string("\\n") : std::string(1, *p);
  std::string line = std::string("{\"protocol\": \"") + protocol +
                     "\", \"op\": \"run\", \"id\": " + std::to_string(id) + ", \"program\": \"" +
                     program + "\"";
  if (!host_json.empty()) line += ", \"host\": " + host_json;
  return line + "}";
}

const char* const kBindAndInterrupt =
    R"([{"step": 0, "action": "bind_tba", "label": "H", "core": "all"},)"
    R"( {"step": 2, "action": "interrupt", "core": 0, "code": 42}])";

// runner.protocol.version, trap.host.toml: a 1.1 request carries the script, and the
// reference runs it: the handler bound at step 0 takes the interrupt at step 2
// (after the warp's store) and stores the code in out[0].
TEST(TrapProtocol, Version11RunsTheHostScript) {
  auto parsed = runners::parse_request_line(run_line("simtspec-runner/1.1", kBindAndInterrupt));
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed))
      << std::get<std::string>(parsed);
  const auto& sr = std::get<runners::ServerRequest>(parsed);
  ASSERT_EQ(sr.req.host.size(), 2u);
  EXPECT_EQ(sr.req.host[0].kind, syntax::HostKind::BindTba);
  EXPECT_EQ(sr.req.host[0].name, "H");
  EXPECT_EQ(sr.req.host[0].core, syntax::kAllCores);
  EXPECT_EQ(sr.req.host[1].kind, syntax::HostKind::Interrupt);
  EXPECT_EQ(sr.req.host[1].step, 2u);
  EXPECT_EQ(sr.req.host[1].core, 0);
  EXPECT_EQ(sr.req.host[1].code, 42u);
  auto r = runners::run_reference(sr.req);
  ASSERT_EQ(r.kind, runners::RunResult::Kind::Outcome) << r.message;
  EXPECT_EQ(r.outcome.status, "completed");
  ASSERT_EQ(r.outcome.buffers.size(), 1u);
  EXPECT_EQ(r.outcome.buffers[0].values, (std::vector<int64_t>{42, 1, 1, 1}));
  // Without the script the handler never runs.
  runners::RunRequest bare = sr.req;
  bare.host.clear();
  auto b = runners::run_reference(bare);
  ASSERT_EQ(b.kind, runners::RunResult::Kind::Outcome) << b.message;
  EXPECT_EQ(b.outcome.buffers[0].values, (std::vector<int64_t>{1, 1, 1, 1}));
  // Version 1.1 without host is accepted too.
  EXPECT_TRUE(std::holds_alternative<runners::ServerRequest>(
      runners::parse_request_line(run_line("simtspec-runner/1.1", ""))));
}

// runner.protocol.version: a version-1 request carrying host (even an empty one)
// is an error, answered with status error by `serve`; so is another version.
TEST(TrapProtocol, Version1WithHostIsAnError) {
  for (const std::string& host : {std::string(kBindAndInterrupt), std::string("[]")}) {
    auto parsed = runners::parse_request_line(run_line("simtspec-runner/1", host));
    ASSERT_TRUE(std::holds_alternative<std::string>(parsed)) << host;
    EXPECT_NE(std::get<std::string>(parsed).find("simtspec-runner/1.1"), std::string::npos)
        << std::get<std::string>(parsed);
  }
  EXPECT_TRUE(std::holds_alternative<std::string>(
      runners::parse_request_line(run_line("simtspec-runner/1.3", ""))));
  std::istringstream in(run_line("simtspec-runner/1", kBindAndInterrupt, 8) + "\n" +
                        run_line("simtspec-runner/1.1", kBindAndInterrupt, 9) + "\n");
  std::ostringstream out;
  runners::serve(in, out, runners::run_reference);
  std::istringstream lines(out.str());
  std::string first, second;
  ASSERT_TRUE(std::getline(lines, first));
  ASSERT_TRUE(std::getline(lines, second));
  EXPECT_NE(first.find("\"status\":\"error\""), std::string::npos) << first;
  EXPECT_NE(first.find("\"id\":8"), std::string::npos) << first;  // runner.serve: echoed
  EXPECT_NE(second.find("\"id\":9"), std::string::npos) << second;
  EXPECT_NE(second.find("\"status\":\"completed\""), std::string::npos) << second;
  EXPECT_NE(second.find("[42,1,1,1]"), std::string::npos) << second;
}

// runner.protocol.request, trap.host.toml: request_json names 1.1 exactly when the
// request has a script, and the script round-trips through parse_request_line.
TEST(TrapProtocol, RequestJsonNames11AndRoundTrips) {
  runners::RunRequest req;
  req.program = kProtocolProgram;
  req.config.cores = 2;
  const json::Value plain = runners::request_json(req, 1);
  EXPECT_EQ(plain.find("protocol")->as_string(), "simtspec-runner/1");
  EXPECT_EQ(plain.find("host"), nullptr);
  req.host = script(R"(
[[host]]
step = 0
action = "bind_tba"
core = 1
label = "H"
[[host]]
step = 0
action = "bind_vtable"
table = "t"
[[host]]
step = 3
action = "interrupt"
code = 16777215
[[host]]
step = 3
action = "interrupt"
core = 1
[[host]]
step = 7
action = "single_step"
core = "all"
on = true
[[host]]
step = 9
action = "single_step"
core = 0
on = false
[[host]]
step = 18446744073709
action = "resume"
core = 1
)");
  ASSERT_EQ(req.host.size(), 7u);
  const json::Value v = runners::request_json(req, 12);
  EXPECT_EQ(v.find("protocol")->as_string(), "simtspec-runner/1.1");
  ASSERT_TRUE(v.find("host") && v.find("host")->is_array());
  EXPECT_EQ(v.find("host")->as_array().size(), 7u);
  const std::string line = runners::request_line(req, 12);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto parsed = runners::parse_request_line(line.substr(0, line.size() - 1));
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed))
      << std::get<std::string>(parsed);
  const auto& sr = std::get<runners::ServerRequest>(parsed);
  EXPECT_EQ(sr.id, 12);
  EXPECT_EQ(sr.req.program, req.program);
  ASSERT_EQ(sr.req.host.size(), req.host.size());
  for (size_t i = 0; i < req.host.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(sr.req.host[i] == req.host[i]);
    EXPECT_EQ(sr.req.host[i].step, req.host[i].step);
    EXPECT_EQ(sr.req.host[i].kind, req.host[i].kind);
    EXPECT_EQ(sr.req.host[i].core, req.host[i].core);
    EXPECT_EQ(sr.req.host[i].code, req.host[i].code);
    EXPECT_EQ(sr.req.host[i].on, req.host[i].on);
    EXPECT_EQ(sr.req.host[i].name, req.host[i].name);
  }
}

// trap.host.toml: host steps are exact up to 2^64 - 1 in TOML and in the protocol,
// read and written (the request carries them in full); a larger value, or a
// negative step, is an error naming the key, never a clamped value.
TEST(TrapProtocol, StepsAreExactUpTo2To64Minus1) {
  const uint64_t big[] = {uint64_t{1} << 63, (uint64_t{1} << 63) + 5, UINT64_MAX - 1, UINT64_MAX};
  for (uint64_t step : big) {
    SCOPED_TRACE(step);
    const auto host =
        script("[[host]]\nstep = " + std::to_string(step) + "\naction = \"resume\"\n");
    ASSERT_EQ(host.size(), 1u);
    EXPECT_EQ(host[0].step, step);
    runners::RunRequest req;
    req.program = kProtocolProgram;
    req.host = host;
    const std::string line = runners::request_line(req, 3);
    EXPECT_NE(line.find("\"step\":" + std::to_string(step) + ","), std::string::npos) << line;
    auto parsed = runners::parse_request_line(line.substr(0, line.size() - 1));
    ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed))
        << std::get<std::string>(parsed);
    ASSERT_EQ(std::get<runners::ServerRequest>(parsed).req.host.size(), 1u);
    EXPECT_EQ(std::get<runners::ServerRequest>(parsed).req.host[0].step, step);
  }
  // Other spellings of 2^64 - 1.
  for (const char* spelled : {"0xffff_ffff_ffff_ffff", "0o1777777777777777777777",
                              "0b"
                              "1111111111111111111111111111111111111111111111111111111111111111",
                              "+18_446_744_073_709_551_615"}) {
    SCOPED_TRACE(spelled);
    const auto host =
        script(std::string("[[host]]\nstep = ") + spelled + "\naction = \"resume\"\n");
    ASSERT_EQ(host.size(), 1u);
    EXPECT_EQ(host[0].step, UINT64_MAX);
  }
  // A binary literal of 63 digits or more (toml11 alone overflows a signed integer
  // on it, undefined behaviour), leading zeros included.
  {
    const auto host = script("[[host]]\nstep = 0b" + std::string(70, '0') + "101" +
                             "\naction = \"resume\"\n[[host]]\nstep = 0b1" + std::string(62, '0') +
                             "\naction = \"resume\"\n");
    ASSERT_EQ(host.size(), 2u);
    EXPECT_EQ(host[0].step, 5u);
    EXPECT_EQ(host[1].step, uint64_t{1} << 62);
  }
  // Past 2^64 - 1, or negative: errors located at the action, naming the key.
  for (const char* bad : {"18446744073709551616", "0x1_0000_0000_0000_0000",
                          "0b1"
                          "0000000000000000000000000000000000000000000000000000000000000000",
                          "99999999999999999999999", "-1", "-18446744073709551616"}) {
    SCOPED_TRACE(bad);
    std::vector<syntax::HostStep> out;
    auto err = host::parse_host_toml(
        std::string("[[host]]\naction = \"resume\"\nstep = ") + bad + "\n", "s.toml", out);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->rfind("s.toml:", 0), 0u) << *err;
    EXPECT_NE(err->find("'step'"), std::string::npos) << *err;
  }
  std::vector<syntax::HostStep> out;
  auto code = host::parse_host_toml(
      "[[host]]\nstep = 1\naction = \"interrupt\"\n"
      "code = 18446744073709551617\n",
      "s.toml", out);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(code->find("s.toml:1:"), std::string::npos) << *code;
  EXPECT_NE(code->find("'code' is out of range"), std::string::npos) << *code;
  // The protocol: 2^64 - 1 is read exactly, 2^64 and a negative step are errors.
  auto max = runners::parse_request_line(
      run_line("simtspec-runner/1.1", R"([{"step": 18446744073709551615, "action": "resume"}])"));
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(max)) << std::get<std::string>(max);
  EXPECT_EQ(std::get<runners::ServerRequest>(max).req.host.at(0).step, UINT64_MAX);
  for (const char* bad : {R"([{"step": 18446744073709551616, "action": "resume"}])",
                          R"([{"step": -1, "action": "resume"}])",
                          R"([{"step": -9223372036854775808, "action": "resume"}])"}) {
    SCOPED_TRACE(bad);
    auto parsed = runners::parse_request_line(run_line("simtspec-runner/1.1", bad));
    ASSERT_TRUE(std::holds_alternative<std::string>(parsed));
    EXPECT_NE(std::get<std::string>(parsed).find("host[0]: 'step'"), std::string::npos)
        << std::get<std::string>(parsed);
  }
}

// runner.protocol.request: top-level fields the protocol does not name are ignored,
// in either version; unknown keys inside `config` or a host action are errors.
TEST(TrapProtocol, UnknownTopLevelFieldsAreIgnored) {
  for (const char* version : {"simtspec-runner/1", "simtspec-runner/1.1"}) {
    SCOPED_TRACE(version);
    std::string line = run_line(version, "");
    line.insert(line.size() - 1, R"(, "priority": 3, "tags": ["a", {"b": null}], "config2": {})");
    auto parsed = runners::parse_request_line(line);
    ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed))
        << std::get<std::string>(parsed);
    auto r = runners::run_reference(std::get<runners::ServerRequest>(parsed).req);
    ASSERT_EQ(r.kind, runners::RunResult::Kind::Outcome) << r.message;
    EXPECT_EQ(r.outcome.status, "completed");
  }
  std::string config = run_line("simtspec-runner/1", "");
  config.insert(config.size() - 1, R"(, "config": {"wave": 4, "colour": 1})");
  auto bad_config = runners::parse_request_line(config);
  ASSERT_TRUE(std::holds_alternative<std::string>(bad_config));
  EXPECT_NE(std::get<std::string>(bad_config).find("colour"), std::string::npos)
      << std::get<std::string>(bad_config);
  auto bad_action = runners::parse_request_line(
      run_line("simtspec-runner/1.1", R"([{"step": 1, "action": "resume", "colour": 1}])"));
  ASSERT_TRUE(std::holds_alternative<std::string>(bad_action));
  EXPECT_NE(std::get<std::string>(bad_action).find("colour"), std::string::npos)
      << std::get<std::string>(bad_action);
}

// trap.host.errors: in the protocol, an error of the script against the program
// (here an undefined label, at index 1) is a rejection without a line.
TEST(TrapProtocol, ScriptErrorsAreRejectionsWithoutALine) {
  const char* const cases[] = {
      R"([{"step": 0, "action": "interrupt"}, {"step": 1, "action": "bind_tba", "label": "nowhere"}])",
      R"([{"step": 0, "action": "interrupt"}, {"step": 1, "action": "bind_vtable", "table": "t"}])",
      R"([{"step": 0, "action": "interrupt"}, {"step": 1, "action": "resume", "core": 1}])",
      R"([{"step": 0, "action": "interrupt"}, {"step": 10000000, "action": "resume"}])",
      R"([{"step": 5, "action": "interrupt"}, {"step": 1, "action": "resume"}])",
  };
  for (const char* host : cases) {
    SCOPED_TRACE(host);
    auto parsed = runners::parse_request_line(run_line("simtspec-runner/1.1", host));
    ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed))
        << std::get<std::string>(parsed);
    auto r = runners::run_reference(std::get<runners::ServerRequest>(parsed).req);
    EXPECT_EQ(r.kind, runners::RunResult::Kind::Rejected) << r.message;
    EXPECT_FALSE(r.line.has_value()) << *r.line;
    EXPECT_NE(r.message.find("host[1]"), std::string::npos) << r.message;
    EXPECT_FALSE(runners::response_json(r, 1).find("line"));
  }
}

}  // namespace
}  // namespace simt
