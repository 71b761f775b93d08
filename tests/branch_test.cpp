// The branch unit (spec/branch.md): one or more tests per clause, each citing its
// clause id. Behaviour is observed through output buffers, through the machine
// state after single steps (exec, mask stack, PC stack), and through the events
// that end a launch. Programs that break the programming model on purpose are
// loaded without the flow checks (valid.flow.*) so that run-time events show.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support.h"
#include "text/parser.h"
#include "text/printer.h"
#include "valid/valid.h"

namespace simt::exec {
// Readable failure messages for mask-stack comparisons.
void PrintTo(const MaskEntry& e, std::ostream* os) {
  *os << (e.kind == MaskKind::If ? "If" : "Loop") << std::hex << "(saved=0x" << e.saved
      << ", other=0x" << e.other << ")" << std::dec;
}
}  // namespace simt::exec

namespace simt {
namespace {

using exec::Machine;
using exec::MaskEntry;
using exec::MaskKind;
using exec::Status;
using exec::WarpState;
using exec::WarpStatus;
using isa::Event;
using Masks = std::vector<MaskEntry>;

MaskEntry If(uint64_t saved, uint64_t other) {
  return {saved, other, MaskKind::If};
}
MaskEntry Loop(uint64_t saved, uint64_t other) {
  return {saved, other, MaskKind::Loop};
}

using test::build;
using test::outcome;
using test::outcome_unvalidated;

// The PC of the first instruction printed as `insn` (the listing's text).
uint32_t pc_of(const exec::Program& p, std::string_view insn) {
  for (uint32_t i = 0; i < p.text.size(); ++i)
    if (p.text[i] == insn) return i;
  ADD_FAILURE() << "no instruction '" << insn << "'";
  return UINT32_MAX;
}

host::LoadOptions with_policy(exec::Policy p, uint64_t seed = 0) {
  host::LoadOptions opt;
  opt.cli.policy = p;
  opt.cli.seed = seed;
  return opt;
}

constexpr exec::Policy kPolicies[] = {exec::Policy::RoundRobin, exec::Policy::LowestPcFirst,
                                      exec::Policy::OldestFirst, exec::Policy::Random};

// Checks the event of a trapped outcome.
void expect_trap(const exec::Outcome& o, Event code, uint32_t pc, uint32_t warp = 0) {
  ASSERT_EQ(o.status, Status::Trapped) << exec::status_name(o.status);
  ASSERT_TRUE(o.event.has_value());
  EXPECT_EQ(o.event->code, code) << isa::event_name(o.event->code);
  EXPECT_EQ(o.event->pc, pc);
  EXPECT_EQ(o.event->warp, warp);
  EXPECT_EQ(o.event->lane, -1) << "branch-unit events are not per-lane";
}

// exec.commit, applied to the branch unit: steps the program until an instruction
// raises an event, and checks that the faulting step changed nothing at all.
void expect_fault_commits_nothing(std::string_view text, Event code, bool validate = false) {
  host::LoadOptions opt;
  opt.validate_flow = validate;
  auto prog = build(text, opt);
  ASSERT_TRUE(prog);
  Machine m(prog);
  for (int i = 0; i < 100000; ++i) {
    const exec::Snapshot before = m.snapshot();
    const uint64_t hash_before = m.hash();
    auto st = m.step();
    if (!st) continue;
    ASSERT_EQ(*st, Status::Trapped) << exec::status_name(*st);
    EXPECT_EQ(m.outcome().event->code, code);
    EXPECT_TRUE(m.state() == before.state) << "the faulting instruction changed the state";
    EXPECT_EQ(m.hash(), hash_before);
    EXPECT_EQ(m.steps(), before.steps) << "the faulting instruction was counted as a step";
    return;
  }
  FAIL() << "no event raised";
}

const WarpState& warp0(const Machine& m) {
  return m.state().warps.at(0);
}

// ---------------------------------------------------------------------------------
// branch.warp.independent
// ---------------------------------------------------------------------------------

// Six warps (two workgroups of three) whose lanes take different paths (an if/else,
// a loop with a per-lane trip count, a call from divergent code) depending on %gwarp.
constexpr const char* kPerWarpDivergence = R"(
.wave 16
.warps 3
.workgroups 2
.buffer out  u32[threads] out
.buffer path u32[threads] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v0, v0, 2
    and s1, %gwarp, 3
    add s1, s1, 1
    rem.u v1, %lane, s1
    cmp.eq p0, v1, 0
    mov v2, 0
    if p0
        add v3, %lane, %gwarp
        rem.u v3, v3, 5
        mov v4, 0
        loop
            cmp.ge p1, v4, v3
            break p1
            add v4, v4, 1
            add v2, v2, v4
        endloop
        mov v5, 1
    else
        mul v2, %lane, %gwarp
        and v6, %lane, 2
        cmp.ne p2, v6, 0
        if p2
            call addhundred
        endif
        mov v5, 2
    endif
    st out[v0], v2
    st path[v0], v5
    exit
addhundred:
    add v2, v2, 100
    ret
)";

void expect_per_warp_results(const exec::Outcome& o) {
  ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
  auto out = test::words(o, "out");
  auto path = test::words(o, "path");
  ASSERT_EQ(out.size(), 96u);
  ASSERT_EQ(path.size(), 96u);
  for (uint32_t g = 0; g < 6; ++g) {
    for (uint32_t l = 0; l < 16; ++l) {
      uint32_t m = (g & 3) + 1, want_out, want_path;
      if (l % m == 0) {
        uint32_t n = (l + g) % 5;
        want_out = n * (n + 1) / 2;
        want_path = 1;
      } else {
        want_out = l * g + ((l & 2) ? 100 : 0);
        want_path = 2;
      }
      EXPECT_EQ(out[g * 16 + l], want_out) << "warp " << g << " lane " << l;
      EXPECT_EQ(path[g * 16 + l], want_path) << "warp " << g << " lane " << l;
    }
  }
}

// branch.warp.independent, exec.sched.independence
TEST(BranchWarp, WarpsDivergeIndependentlyUnderEveryPolicy) {
  for (auto p : kPolicies) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      if (p != exec::Policy::Random && seed != 1) continue;
      SCOPED_TRACE(std::string(exec::policy_name(p)) + " seed " + std::to_string(seed));
      expect_per_warp_results(outcome(kPerWarpDivergence, with_policy(p, seed)));
    }
  }
}

// branch.warp.independent: a step changes only the state of the warp that ran it.
TEST(BranchWarp, StepChangesOnlyTheRunningWarp) {
  for (auto p : kPolicies) {
    SCOPED_TRACE(exec::policy_name(p));
    auto prog = build(kPerWarpDivergence, with_policy(p, 7));
    ASSERT_TRUE(prog);
    Machine m(prog);
    uint32_t ran = UINT32_MAX;
    m.set_trace([&](const exec::TraceRecord& r) { ran = r.warp; });
    size_t divergent_steps = 0;
    for (int i = 0; i < 100000; ++i) {
      const std::vector<WarpState> before = m.state().warps;
      auto st = m.step();
      if (st) {
        EXPECT_EQ(*st, Status::Completed);
        break;
      }
      const auto& after = m.state().warps;
      for (uint32_t g = 0; g < after.size(); ++g) {
        if (g == ran) {
          divergent_steps += after[g].exec != 0xffff && !after[g].mask_stack.empty();
          continue;
        }
        EXPECT_TRUE(after[g] == before[g])
            << "warp " << g << " changed when warp " << ran << " ran";
      }
    }
    EXPECT_GT(divergent_steps, 0u);
    expect_per_warp_results(m.outcome());
  }
}

// ---------------------------------------------------------------------------------
// branch.pc.table, branch.jmp, branch.nop
// ---------------------------------------------------------------------------------

// branch.pc.table, branch.jmp, branch.call, branch.ret, branch.cbr.divergent,
// branch.cbr.uniform, bar.release, branch.exit
TEST(BranchPcTable, NextPcOfEveryInstructionKind) {
  auto prog = build(R"(
.wave 4
        nop
        jmp a
        exit
a:      call f
        cmp.lt p0, %lane, 2
        cbr p0, b
        cbr pt, b
        exit
b:      bar
        push p0
        exit
        pop
        exit
f:      ret
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  struct Expect {
    uint32_t pc;
    uint64_t exec;
    std::vector<uint32_t> pcs;
  };
  const std::vector<Expect> want = {
      {1, 0xf, {}},    // nop: pc + 1
      {3, 0xf, {}},    // jmp a
      {13, 0xf, {4}},  // call f: pushes pc + 1
      {4, 0xf, {}},    // ret: the popped address
      {5, 0xf, {}},    // cmp
      {6, 0xf, {}},    // cbr p0 with lanes 0-1 only: pc + 1
      {8, 0xf, {}},    // cbr pt: taken
      {9, 0xf, {}},    // bar (one warp: released at once): pc + 1
      {10, 0x3, {}},   // push
      {11, 0x0, {}},   // exit of lanes 0-1: pc + 1, lanes 2-3 carry on
      {12, 0xc, {}},   // pop
  };
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).pc, want[i].pc);
    EXPECT_EQ(warp0(m).exec, want[i].exec);
    EXPECT_EQ(warp0(m).pc_stack, want[i].pcs);
    EXPECT_EQ(warp0(m).status, WarpStatus::Ready);
  }
  EXPECT_EQ(m.step(), Status::Completed);
  EXPECT_EQ(warp0(m).status, WarpStatus::Done);
  EXPECT_EQ(m.steps(), 12u);
}

// branch.pc.table: control instructions execute once per warp whatever exec is.
// branch.jmp, branch.call, branch.ret, branch.cbr.empty with no active lane.
TEST(BranchPcTable, ControlInstructionsRunWithNoActiveLane) {
  auto prog = build(R"(
.wave 4
        mov %exec, 0
        jmp a
        nop
a:      call f
        cbr !pt, a
        cbr pt, a
        mov %exec, 15
        exit
f:      ret
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  const std::vector<uint32_t> pcs = {1, 3, 8, 4, 5, 6, 7};
  for (size_t i = 0; i < pcs.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).pc, pcs[i]);
    EXPECT_EQ(warp0(m).exec, i + 1 < pcs.size() ? 0u : 0xfu);
  }
  EXPECT_EQ(m.run().status, Status::Completed);
}

// branch.jmp: the skipped instructions do not run.
TEST(BranchJmp, JumpsOverInstructions) {
  auto o = outcome(R"(
.wave 4
.buffer out u32[wave] out
    shl v0, %lane, 2
    mov v1, 1
    jmp over
    mov v1, 2
over:
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(o.steps, 5u);
}

// branch.nop: nothing but the pc changes.
TEST(BranchNop, ChangesNothingButThePc) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 5
    push p0
    mov v1, 3
    nop
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(3);
  ASSERT_EQ(warp0(m).pc, 3u);
  exec::MachineState before = m.state();
  ASSERT_FALSE(m.step().has_value());
  before.warps[0].pc = 4;
  EXPECT_TRUE(m.state() == before);
}

// ---------------------------------------------------------------------------------
// branch.cbr.*
// ---------------------------------------------------------------------------------

// branch.cbr, branch.cbr.uniform: only the active lanes' P counts; exec is unchanged.
TEST(BranchCbr, TakenWhenEveryActiveLaneHasP) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[wave] out
.buffer info u32[1] out
    shl v0, %lane, 2
    mov v1, 5
    cmp.lt p0, %lane, 4     ; p0 holds in lanes 0-3 only
    push p0                 ; lanes 0-3 active
    cbr p0, taken
    mov v1, 2
    jmp join
taken:
    mov v1, 1
    mov s0, %exec
    st info[0], s0
join:
    pop
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{1, 1, 1, 1, 5, 5, 5, 5}));
  EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{0x0f}));
}

// branch.cbr.uniform: a negated predicate that no active lane has is true everywhere.
TEST(BranchCbr, NegatedPredicateTaken) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[wave] out
    shl v0, %lane, 2
    mov v1, 0
    cmp.gt p0, %lane, 100
    cbr !p0, taken
    mov v1, 2
taken:
    add v1, v1, 1
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), std::vector<uint32_t>(8, 1));
}

// branch.cbr.divergent: some active lanes lack P, so every active lane falls through
// and exec is unchanged.
TEST(BranchCbr, DivergentPredicateFallsThroughForEveryLane) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[wave] out
.buffer info u32[1] out
    shl v0, %lane, 2
    mov v1, 0
    and v2, %lane, 1
    cmp.eq p0, v2, 1
    cbr p0, taken
    mov v1, 2
    mov s0, %exec
    st info[0], s0
taken:
    add v1, v1, 1
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), std::vector<uint32_t>(8, 3));
  EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{0xff}));
}

// branch.cbr.divergent, branch.pc.table: no active lane has P: not taken.
TEST(BranchCbr, NoActiveLaneHasPFallsThrough) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 4
    push !p0
    cbr p0, skip
    nop
skip:
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(3);
  EXPECT_EQ(warp0(m).pc, 3u);
  EXPECT_EQ(warp0(m).exec, 0xf0u);
}

// branch.cbr.empty: with no active lane the branch is not taken, whether P is true
// (vacuously, in every active lane) or false.
TEST(BranchCbr, ZeroActiveLanesFallsThrough) {
  for (const char* pred : {"pt", "!pt", "p0", "!p0"}) {
    for (std::string empty : {"push !pt", "mov %exec, 0"}) {
      SCOPED_TRACE(std::string(pred) + " after " + empty);
      // `push !pt` opens a second entry to close; `mov %exec, 0` does not.
      const std::string pops = empty == "push !pt" ? "    pop\n    pop\n" : "    pop\n";
      const std::string text =
          ".wave 8\n.buffer info u32[2] out\n"
          "    cmp.lt p0, %lane, 4\n    mov s0, 0\n    mov s1, %exec\n    push pt\n    " +
          empty + "\n    cbr " + pred + ", taken\n" +
          "    mov s0, 1\n"  // fell through: scalar code runs with no active lane
          "    mov s1, %exec\n"
          "taken:\n" +
          pops + "    st info[0], s0\n    st info[4], s1\n    exit\n";
      auto o = outcome(text);
      ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
      EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{1, 0}));
    }
  }
}

// ---------------------------------------------------------------------------------
// branch.call, branch.ret
// ---------------------------------------------------------------------------------

// branch.call, branch.ret: return addresses are pushed and popped in LIFO order;
// exec and the mask stack are unchanged by call and ret.
TEST(BranchCall, PushesReturnAddressesAndKeepsMasks) {
  auto prog = build(R"(
.wave 8
        cmp.lt p0, %lane, 3
        push p0
        call f
        pop
        exit
f:      call g
        ret
g:      ret
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(2);
  const Masks masks = {If(0xff, 0xf8)};
  ASSERT_EQ(warp0(m).mask_stack, masks);
  struct Expect {
    uint32_t pc;
    std::vector<uint32_t> pcs;
  };
  const std::vector<Expect> want = {{5, {3}}, {7, {3, 6}}, {6, {3}}, {3, {}}};
  for (const auto& w : want) {
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).pc, w.pc);
    EXPECT_EQ(warp0(m).pc_stack, w.pcs);
    EXPECT_EQ(warp0(m).exec, 0x07u);
    EXPECT_EQ(warp0(m).mask_stack, masks);
  }
  EXPECT_EQ(m.run().status, Status::Completed);
}

// branch.call: a function called from divergent code runs with the caller's lanes.
TEST(BranchCall, CallsFromDivergentCode) {
  auto o = outcome(R"(
.wave 8
.buffer out   u32[wave] out
.buffer calls u32[wave] out
.buffer seen  u32[8] out
    shl v0, %lane, 2
    mov s3, 0
    and v1, %lane, 3
    cmp.eq p0, v1, 0
    cmp.eq p1, v1, 1
    if p0
        call f
    else
        if p1
            call g
        else
            call f
        endif
    endif
    call f
    st out[v0], v2
    st calls[v0], v3
    exit
f:
    mov s2, %exec
    st seen[s3], s2
    add s3, s3, 4
    add v3, v3, 1
    add v2, v2, %lane
    ret
g:
    add v2, v2, 1000
    call f
    add v2, v2, 1000
    ret
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "seen"), (std::vector<uint32_t>{0x11, 0x22, 0xcc, 0xff, 0, 0, 0, 0}));
  EXPECT_EQ(test::words(o, "calls"), std::vector<uint32_t>(8, 2));
  std::vector<uint32_t> out;
  for (uint32_t l = 0; l < 8; ++l) out.push_back(2 * l + (l % 4 == 1 ? 2000 : 0));
  EXPECT_EQ(test::words(o, "out"), out);
}

// branch.call: unbounded recursion overflows the PC stack at `.call_depth`.
TEST(BranchCall, UnboundedRecursionOverflowsAtCallDepth) {
  auto o = outcome(R"(
.call_depth 5
.warps 2
    mov s0, %gwarp
    cmp.eq p0, s0, 1
    cbr p0, recurse
    exit
recurse:
    call f
    exit
f:
    call f
    ret
)");
  expect_trap(o, Event::CallOverflow, 6, 1);
  EXPECT_EQ(o.steps, 4u + 3u + 5u);
}

// branch.call, state.launch.defaults: the default call_depth is 16.
TEST(BranchCall, DefaultCallDepthIsSixteen) {
  auto o = outcome("    call f\n    exit\nf:\n    call f\n    ret\n");
  expect_trap(o, Event::CallOverflow, 2);
  EXPECT_EQ(o.steps, 16u);
}

// branch.call: recursion exactly `call_depth` deep is allowed.
TEST(BranchCall, RecursionAtCallDepthCompletes) {
  auto o = outcome(R"(
.call_depth 4
.buffer out u32[1] out
    mov s0, 4
    call f
    st out[0], s1
    exit
f:
    sub s0, s0, 1
    add s1, s1, 1
    cmp.eq p0, s0, 0
    cbr p0, done
    call f
done:
    ret
)");
  ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{4}));
  auto deeper = outcome(R"(
.call_depth 4
    mov s0, 5
    call f
    exit
f:
    sub s0, s0, 1
    cmp.eq p0, s0, 0
    cbr p0, done
    call f
done:
    ret
)");
  expect_trap(deeper, Event::CallOverflow, 6);
}

// branch.call, exec.commit: the overflowing call commits nothing.
TEST(BranchCall, OverflowCommitsNothing) {
  expect_fault_commits_nothing(".call_depth 3\n    call f\n    exit\nf:\n    call f\n    ret\n",
                               Event::CallOverflow, true);
}

// branch.ret: `ret` with an empty PC stack raises call_underflow.
TEST(BranchRet, EmptyPcStackUnderflows) {
  expect_trap(outcome_unvalidated("    ret\n    exit\n"), Event::CallUnderflow, 0);
  // Returning twice from one call; valid.flow.ret rejects it, so it runs unvalidated.
  const char* twice = "    call f\n    ret\n    exit\nf:\n    ret\n";
  EXPECT_FALSE(test::run(twice).ok());
  auto o = outcome_unvalidated(twice);
  expect_trap(o, Event::CallUnderflow, 1);
  EXPECT_EQ(o.steps, 2u);
  // With no active lane the control instruction still runs, and still underflows.
  expect_trap(outcome_unvalidated("    mov %exec, 0\n    ret\n    exit\n"), Event::CallUnderflow,
              1);
  expect_fault_commits_nothing("    call f\n    ret\n    exit\nf:\n    ret\n",
                               Event::CallUnderflow);
}

// ---------------------------------------------------------------------------------
// Mask stack: branch.mask.entry, branch.push, branch.invert, branch.pop
// ---------------------------------------------------------------------------------

// branch.mask.entry, branch.push, branch.invert, branch.pop: the entries pushed and the
// exec mask after each step.
TEST(BranchMask, PushInvertPopStepByStep) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 3
    and v1, %lane, 1
    cmp.eq p1, v1, 1
    push p1
    push p0
    invert
    invert
    pop
    invert
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(3);
  struct Expect {
    uint64_t exec;
    Masks stack;
  };
  const std::vector<Expect> want = {
      {0xaa, {If(0xff, 0x55)}},                  // push p1
      {0x02, {If(0xff, 0x55), If(0xaa, 0xa8)}},  // push p0
      {0xa8, {If(0xff, 0x55), If(0xaa, 0x02)}},  // invert: the other side
      {0x02, {If(0xff, 0x55), If(0xaa, 0xa8)}},  // invert again: back to the original lanes
      {0xaa, {If(0xff, 0x55)}},                  // pop
      {0x55, {If(0xff, 0xaa)}},                  // invert
      {0xff, {}},                                // pop
  };
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("after step " + std::to_string(3 + i));
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).exec, want[i].exec);
    EXPECT_EQ(warp0(m).mask_stack, want[i].stack);
  }
}

// branch.push: the lanes without P are remembered; exec keeps only the lanes with P.
TEST(BranchPush, SelectsLanesWithP) {
  auto o = outcome(R"(
.wave 16
.buffer out u32[wave] out
    shl v0, %lane, 2
    rem.u v1, %lane, 3
    cmp.eq p0, v1, 0
    mov v2, 1
    push p0
    mov v2, 2
    push !p0            ; none of the lanes with p0 lacks it: exec empty
    mov v2, 3
    pop
    pop
    st out[v0], v2
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  std::vector<uint32_t> want;
  for (uint32_t l = 0; l < 16; ++l) want.push_back(l % 3 == 0 ? 2 : 1);
  EXPECT_EQ(test::words(o, "out"), want);
}

// branch.invert: a second invert returns to the lanes with P, less the lanes that
// exited or left a loop meanwhile.
TEST(BranchInvert, TwiceReturnsToOriginalLanesLessDeparted) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 4
    cmp.eq p1, %lane, 1
    cmp.eq p2, %lane, 2
    lpush
    push p0
    invert
    invert
    push p1
    exit
    pop
    brk p2
    invert
    invert
    pop
    lnext
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(4);
  const std::vector<uint64_t> exec = {0x0f, 0xf0, 0x0f, 0x02, 0x00, 0x0d,
                                      0x09, 0xf0, 0x09, 0xf9, 0xf9};
  for (size_t i = 0; i < exec.size(); ++i) {
    SCOPED_TRACE("after step " + std::to_string(4 + i));
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).exec, exec[i]);
  }
  // The final pop of the loop restores the lanes that entered it, less lane 1 (exited).
  ASSERT_FALSE(m.step().has_value());
  EXPECT_EQ(warp0(m).exec, 0xfdu);
  EXPECT_EQ(warp0(m).live, 0xfdu);
  EXPECT_TRUE(warp0(m).mask_stack.empty());
}

// branch.pop: the saved mask no longer contains exited lanes, so pop cannot revive them.
TEST(BranchPop, RestoresSavedMaskLessExitedLanes) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 6
    cmp.lt p1, %lane, 2
    push p0
    push p1
    exit
    pop
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(5);
  Masks want = {If(0xfc, 0xc0), If(0x3c, 0x3c)};
  EXPECT_EQ(warp0(m).mask_stack, want);
  EXPECT_EQ(warp0(m).live, 0xfcu);
  m.step();
  EXPECT_EQ(warp0(m).exec, 0x3cu);
  m.step();
  EXPECT_EQ(warp0(m).exec, 0xfcu);
  EXPECT_TRUE(warp0(m).mask_stack.empty());
}

// ---------------------------------------------------------------------------------
// Loops: branch.lpush, branch.loop.find, branch.brk, branch.cont, branch.lnext
// ---------------------------------------------------------------------------------

// branch.lpush, branch.loop.find, branch.brk, branch.cont, branch.lnext,
// branch.mask.entry: every entry and exec after each step.
TEST(BranchLoop, LpushBrkContLnextStepByStep) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 2
    cmp.ge p1, %lane, 6
    cmp.eq p2, %lane, 4
    push !p2
    lpush
    push !p0
    brk p1
    invert
    cont pt
    pop
    lnext
    brk pt
    lnext
    pop
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(3);
  struct Expect {
    const char* what;
    uint64_t exec;
    Masks stack;
  };
  const std::vector<Expect> want = {
      {"push !p2", 0xef, {If(0xff, 0x10)}},
      {"lpush", 0xef, {If(0xff, 0x10), Loop(0xef, 0)}},
      {"push !p0", 0xec, {If(0xff, 0x10), Loop(0xef, 0), If(0xef, 0x03)}},
      // brk: lanes 6-7 leave exec and every entry above the loop, not the loop's saved.
      {"brk p1", 0x2c, {If(0xff, 0x10), Loop(0xef, 0), If(0x2f, 0x03)}},
      {"invert", 0x03, {If(0xff, 0x10), Loop(0xef, 0), If(0x2f, 0x2c)}},
      // cont: like brk, and the lanes wait in the loop entry's other.
      {"cont pt", 0x00, {If(0xff, 0x10), Loop(0xef, 0x03), If(0x2c, 0x2c)}},
      {"pop", 0x2c, {If(0xff, 0x10), Loop(0xef, 0x03)}},
      // lnext: the lanes that continued rejoin; other becomes empty.
      {"lnext", 0x2f, {If(0xff, 0x10), Loop(0xef, 0)}},
      {"brk pt", 0x00, {If(0xff, 0x10), Loop(0xef, 0)}},
      {"lnext", 0x00, {If(0xff, 0x10), Loop(0xef, 0)}},
      // pop of the loop entry: the lanes that left are active again.
      {"pop", 0xef, {If(0xff, 0x10)}},
      {"pop", 0xff, {}},
  };
  for (const auto& w : want) {
    SCOPED_TRACE(w.what);
    ASSERT_EQ(prog->text.at(warp0(m).pc), w.what);
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).exec, w.exec);
    EXPECT_EQ(warp0(m).mask_stack, w.stack);
  }
  EXPECT_EQ(m.step(), Status::Completed);
}

// branch.loop.find, branch.brk: brk acts on the innermost loop entry even below if
// entries; the lanes that left the inner loop resume in the outer loop.
TEST(BranchLoop, BreakLeavesOnlyTheInnermostLoop) {
  auto prog = build(R"(
.wave 4
    cmp.lt p0, %lane, 2
    lpush
    lpush
    push pt
    push p0
    brk pt
    pop
    pop
    lnext
    pop
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(6);
  const Masks want = {Loop(0xf, 0), Loop(0xf, 0), If(0xc, 0), If(0xc, 0xc)};
  EXPECT_EQ(warp0(m).mask_stack, want);
  EXPECT_EQ(warp0(m).exec, 0u);
  m.advance(3);  // pop, pop, lnext
  EXPECT_EQ(warp0(m).exec, 0xcu);
  m.step();  // pop of the inner loop
  EXPECT_EQ(warp0(m).exec, 0xfu);
  const Masks outer = {Loop(0xf, 0)};
  EXPECT_EQ(warp0(m).mask_stack, outer);
}

// branch.brk, branch.cont with no lane selected: nothing changes.
TEST(BranchLoop, BreakAndContinueWithoutLanesChangeNothing) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 4
    lpush
    push p0
    brk !p0
    cont !p0
    pop
    lnext
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(3);
  const exec::MachineState before = m.state();
  m.advance(2);
  exec::MachineState after = m.state();
  after.warps[0].pc -= 2;
  EXPECT_TRUE(after == before);
}

// branch.brk, branch.cont, branch.struct.loop: break and continue inside nested ifs
// inside nested loops; every lane's result equals the same loop run lane by lane.
TEST(BranchLoop, BreakAndContinueInsideNestedIfs) {
  auto o = outcome(R"(
.wave 16
.buffer acc   u32[wave] out
.buffer iters u32[wave] out
.buffer inner u32[wave] out
.buffer info  u32[1] out
    shl v0, %lane, 2
    mov v1, 0
    mov v2, 0
    mov v3, 0
    mov v7, 0
    loop
        add v3, v3, 1
        and v4, %lane, 3
        cmp.eq p0, v4, 0
        if p0
            cmp.ge p1, v1, 3
            if p1
                break
            endif
            add v2, v2, 1000
        else
            and v5, v1, 1
            cmp.eq p2, v5, 1
            if p2
                add v1, v1, 1
                continue
            else
                cmp.ge p3, v1, %lane
                if p3
                    break
                endif
                mov v8, 0
                loop
                    cmp.ge p4, v8, v4
                    break p4
                    add v8, v8, 1
                    and v9, v8, 1
                    cmp.eq p5, v9, 0
                    if p5
                        continue
                    endif
                    add v7, v7, 1
                endloop
            endif
            add v2, v2, v1
        endif
        add v1, v1, 1
    endloop
    mov s0, %exec
    st info[0], s0
    st acc[v0], v2
    st iters[v0], v3
    st inner[v0], v7
    exit
)");
  ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
  std::vector<uint32_t> acc, iters, inner;
  for (uint32_t l = 0; l < 16; ++l) {
    uint32_t i = 0, a = 0, it = 0, in = 0;
    for (;;) {
      ++it;
      uint32_t r = l & 3;
      if (r == 0) {
        if (i >= 3) break;
        a += 1000;
      } else {
        if (i & 1) {
          ++i;
          continue;
        }
        if (i >= l) break;
        for (uint32_t j = 0; j < r;) {
          ++j;
          if (j % 2 == 0) continue;
          ++in;
        }
        a += i;
      }
      ++i;
    }
    acc.push_back(a);
    iters.push_back(it);
    inner.push_back(in);
  }
  EXPECT_EQ(test::words(o, "acc"), acc);
  EXPECT_EQ(test::words(o, "iters"), iters);
  EXPECT_EQ(test::words(o, "inner"), inner);
  EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{0xffff}));
}

// branch.struct.loop, branch.cbr.uniform, branch.cbr.empty: every lane leaves at a
// different iteration; the back edge is taken while any lane remains and falls
// through exactly when the last one has left.
TEST(BranchLoop, LanesLeaveAtDifferentIterations) {
  auto o = outcome(R"(
.wave 32
.buffer out u32[wave] out
.buffer info u32[2] out
    shl v0, %lane, 2
    mul v2, %lane, 7
    and v2, v2, 31          ; lane l leaves at iteration (7 l) mod 32
    mov v1, 0
    mov s0, 0
    loop
        add s0, s0, 1
        cmp.ge p0, v1, v2
        break p0
        add v1, v1, 1
    endloop
    mov s1, %exec
    st info[0], s0
    st info[4], s1
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  std::vector<uint32_t> out;
  for (uint32_t l = 0; l < 32; ++l) out.push_back((7 * l) % 32);
  EXPECT_EQ(test::words(o, "out"), out);
  EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{32, 0xffffffff}));
}

// ---------------------------------------------------------------------------------
// branch.exit
// ---------------------------------------------------------------------------------

// branch.exit, branch.pop, branch.invert: lanes that exit inside divergent code are
// gone for good: neither invert nor pop revives them.
TEST(BranchExit, ExitInDivergentCodeIsFinal) {
  auto o = outcome(R"(
.wave 8
.buffer out  u32[wave] out
.buffer info u32[2] out
    shl v0, %lane, 2
    mov v1, 7
    st out[v0], v1
    cmp.lt p0, %lane, 3
    and v2, %lane, 1
    cmp.eq p1, v2, 1
    if p0
        exit
    else
        if p1
            mov v1, 8
        else
            exit
        endif
        mov s0, %exec
        st info[0], s0
    endif
    mov s1, %exec
    st info[4], s1
    add v1, v1, 1
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{7, 7, 7, 9, 7, 9, 7, 9}));
  EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{0xa8, 0xa8}));
}

// branch.exit, branch.struct.loop: lanes exiting inside a loop are not restored by
// the loop's final pop; the lanes that broke out are.
TEST(BranchExit, ExitInsideLoop) {
  auto o = outcome(R"(
.wave 8
.buffer out  u32[wave] out
.buffer info u32[1] out
    shl v0, %lane, 2
    and v2, %lane, 1
    cmp.eq p1, v2, 1
    mov v1, 0
    loop
        cmp.ge p0, v1, %lane
        pand p2, p0, p1
        pand p3, p0, !p1
        if p2
            exit
        endif
        break p3
        add v1, v1, 1
    endloop
    mov s0, %exec
    st info[0], s0
    add v1, v1, 100
    st out[v0], v1
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{100, 0, 102, 0, 104, 0, 106, 0}));
  EXPECT_EQ(test::words(o, "info"), (std::vector<uint32_t>{0x55}));
}

// branch.exit: exiting lanes leave exec, live, and saved and other of every entry.
TEST(BranchExit, RemovesLanesFromEveryEntry) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 4
    lpush
    cont !p0
    push p0
    mov %exec, 0x3c
    exit
    invert
    pop
    lnext
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(5);
  const Masks before = {Loop(0xff, 0xf0), If(0x0f, 0)};
  ASSERT_EQ(warp0(m).mask_stack, before);
  ASSERT_EQ(warp0(m).exec, 0x3cu);
  m.step();  // exit of lanes 2-5
  const Masks after = {Loop(0xc3, 0xc0), If(0x03, 0)};
  EXPECT_EQ(warp0(m).mask_stack, after);
  EXPECT_EQ(warp0(m).exec, 0u);
  EXPECT_EQ(warp0(m).live, 0xc3u);
  EXPECT_EQ(warp0(m).pc, 6u);
  EXPECT_EQ(warp0(m).status, WarpStatus::Ready);
  m.step();  // invert: the other side of the if lost nothing, it had no lanes
  EXPECT_EQ(warp0(m).exec, 0u);
  m.step();  // pop
  EXPECT_EQ(warp0(m).exec, 0x03u);
  m.step();  // lnext: lanes 6-7 rejoin, not 4-5
  EXPECT_EQ(warp0(m).exec, 0xc3u);
  m.step();  // pop
  EXPECT_EQ(warp0(m).exec, 0xc3u);
  EXPECT_EQ(m.step(), Status::Completed);
}

// branch.exit: with no active lane nothing retires and the warp carries on; when the
// last live lanes exit the warp is done.
TEST(BranchExit, NoActiveLaneAndLastLanes) {
  auto prog = build(R"(
.wave 8
.buffer out u32[1] out
    cmp.lt p0, %lane, 4
    push !pt
    exit
    pop
    push p0
    exit
    pop
    st out[0], %exec
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(3);
  EXPECT_EQ(warp0(m).live, 0xffu);
  EXPECT_EQ(warp0(m).pc, 3u);
  EXPECT_EQ(warp0(m).status, WarpStatus::Ready);
  m.advance(3);
  EXPECT_EQ(warp0(m).live, 0xf0u);
  EXPECT_EQ(warp0(m).status, WarpStatus::Ready);
  auto o = m.run();
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{0xf0}));
  EXPECT_EQ(warp0(m).status, WarpStatus::Done);
  EXPECT_EQ(warp0(m).live, 0u);
  EXPECT_EQ(warp0(m).exec, 0u);
}

// ---------------------------------------------------------------------------------
// branch.mask.overflow, branch.mask.underflow, branch.mask.mismatch
// ---------------------------------------------------------------------------------

// branch.mask.overflow: nested ifs past `.mask_depth`.
TEST(BranchMaskEvents, NestedIfsOverflow) {
  const char* text = R"(
.mask_depth 3
    cmp.lt p0, %lane, 16
    if p0
      if p0
        if p0
          if p0
            nop
          endif
        endif
      endif
    endif
    exit
)";
  auto o = outcome(text);
  expect_trap(o, Event::MaskOverflow, 4);
  EXPECT_EQ(o.steps, 4u);
  expect_fault_commits_nothing(text, Event::MaskOverflow, true);
  // At exactly `.mask_depth` levels the program completes.
  std::string exact = text;
  exact.replace(exact.find(".mask_depth 3"), 13, ".mask_depth 4");
  EXPECT_EQ(outcome(exact).status, Status::Completed);
}

// branch.mask.overflow: lpush past `.mask_depth`, and push with no active lane.
TEST(BranchMaskEvents, LoopsAndEmptyPushesOverflow) {
  const char* loops = R"(
.mask_depth 2
    loop
      loop
        loop
          break
        endloop
        break
      endloop
      break
    endloop
    exit
)";
  auto o = outcome(loops);
  expect_trap(o, Event::MaskOverflow, 2);
  EXPECT_EQ(o.steps, 2u);
  expect_fault_commits_nothing(loops, Event::MaskOverflow, true);
  const char* empty = R"(
.mask_depth 2
    if !pt
      if pt
        if pt
        endif
      endif
    endif
    exit
)";
  o = outcome(empty);
  expect_trap(o, Event::MaskOverflow, 2);
  expect_fault_commits_nothing(empty, Event::MaskOverflow, true);
}

// branch.mask.underflow: invert, pop and lnext with an empty mask stack, with and
// without active lanes.
TEST(BranchMaskEvents, EmptyStackUnderflows) {
  for (const char* insn : {"pop", "invert", "lnext"}) {
    SCOPED_TRACE(insn);
    std::string text = std::string("    ") + insn + "\n    exit\n";
    EXPECT_FALSE(test::run(text).ok()) << "valid.flow.pop should reject " << insn;
    expect_trap(outcome_unvalidated(text), Event::MaskUnderflow, 0);
    expect_fault_commits_nothing(text, Event::MaskUnderflow);
    std::string balanced = std::string("    push pt\n    pop\n    ") + insn + "\n    exit\n";
    auto o = outcome_unvalidated(balanced);
    expect_trap(o, Event::MaskUnderflow, 2);
    EXPECT_EQ(o.steps, 2u);
    std::string no_lane = std::string("    mov %exec, 0\n    ") + insn + "\n    exit\n";
    expect_trap(outcome_unvalidated(no_lane), Event::MaskUnderflow, 1);
    expect_fault_commits_nothing(no_lane, Event::MaskUnderflow);
  }
}

// branch.mask.mismatch: invert on a loop entry, lnext on an if entry, brk and cont
// with no loop entry (empty stack or if entries only), with and without lanes.
TEST(BranchMaskEvents, MismatchedEntries) {
  struct Case {
    const char* text;
    uint32_t pc;
  };
  const Case cases[] = {
      {"    lpush\n    invert\n    exit\n", 1},
      {"    push pt\n    lnext\n    exit\n", 1},
      {"    brk pt\n    exit\n", 0},
      {"    cont pt\n    exit\n", 0},
      {"    push pt\n    push pt\n    brk pt\n    exit\n", 2},
      {"    push pt\n    cont !pt\n    exit\n", 1},
      {"    lpush\n    pop\n    brk p0\n    exit\n", 2},
      {"    mov %exec, 0\n    brk pt\n    exit\n", 1},
      {"    mov %exec, 0\n    cont pt\n    exit\n", 1},
      {"    mov %exec, 0\n    lpush\n    invert\n    exit\n", 2},
      {"    mov %exec, 0\n    push pt\n    lnext\n    exit\n", 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_FALSE(test::run(c.text).ok()) << "valid.flow.pop should reject this program";
    expect_trap(outcome_unvalidated(c.text), Event::MaskMismatch, c.pc);
    expect_fault_commits_nothing(c.text, Event::MaskMismatch);
  }
}

// branch.loop.find, branch.mask.mismatch: brk and cont find a loop entry below if
// entries: no mismatch.
TEST(BranchMaskEvents, LoopEntryBelowIfEntriesIsFound) {
  auto o = outcome_unvalidated(R"(
    lpush
    push pt
    push pt
    cont pt
    brk pt
    pop
    pop
    lnext
    pop
    exit
)");
  EXPECT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
}

// ---------------------------------------------------------------------------------
// Zero active lanes for every mask instruction (branch.*, exec.form)
// ---------------------------------------------------------------------------------

// branch.push, branch.invert, branch.pop, branch.lpush, branch.brk, branch.cont,
// branch.lnext, branch.exit with exec = 0: each follows its formula and raises nothing.
TEST(BranchEmpty, MaskInstructionsWithNoActiveLane) {
  auto prog = build(R"(
.wave 8
    cmp.lt p0, %lane, 4
    push p0
    push !p0
    push pt
    invert
    pop
    lpush
    brk pt
    cont pt
    lnext
    pop
    exit
    invert
    invert
    invert
    pop
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(1);
  struct Expect {
    const char* what;
    uint64_t exec;
    Masks stack;
  };
  const Masks base = {If(0xff, 0xf0), If(0x0f, 0x0f)};
  auto plus = [&](MaskEntry e) {
    Masks s = base;
    s.push_back(e);
    return s;
  };
  const std::vector<Expect> want = {
      {"push p0", 0x0f, {If(0xff, 0xf0)}},
      {"push !p0", 0x00, base},  // every active lane has p0: none selected
      {"push pt", 0x00, plus(If(0, 0))},
      {"invert", 0x00, plus(If(0, 0))},
      {"pop", 0x00, base},
      {"lpush", 0x00, plus(Loop(0, 0))},
      {"brk pt", 0x00, plus(Loop(0, 0))},
      {"cont pt", 0x00, plus(Loop(0, 0))},
      {"lnext", 0x00, plus(Loop(0, 0))},
      {"pop", 0x00, base},
      {"exit", 0x00, base},  // nothing retires
      {"invert", 0x0f, {If(0xff, 0xf0), If(0x0f, 0x00)}},
      {"invert", 0x00, base},
      {"invert", 0x0f, {If(0xff, 0xf0), If(0x0f, 0x00)}},
      {"pop", 0x0f, {If(0xff, 0xf0)}},
      {"pop", 0xff, {}},
  };
  for (const auto& w : want) {
    SCOPED_TRACE(w.what);
    ASSERT_EQ(prog->text.at(warp0(m).pc), w.what);
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(warp0(m).exec, w.exec);
    EXPECT_EQ(warp0(m).mask_stack, w.stack);
    EXPECT_EQ(warp0(m).live, 0xffu);
  }
  EXPECT_EQ(m.step(), Status::Completed);
}

// ---------------------------------------------------------------------------------
// Nested divergence 8 levels deep
// ---------------------------------------------------------------------------------

// A complete binary tree of if/else, 8 levels deep; level k splits on bit k of a
// per-lane key (an injective function of the lane: 157 l + 31 mod 256). Each leaf
// records its id in the lanes that reach it and the exec mask it runs with.
std::string nested_program(uint32_t wave, uint32_t mask_depth) {
  std::ostringstream s;
  s << ".wave " << wave << "\n.mask_depth " << mask_depth << "\n"
    << ".buffer leaf  u32[wave] out\n.buffer depth u32[wave] out\n"
    << ".buffer seen  u32[512] out\n.buffer misc  u32[3] out\n"
    << "    shl v0, %lane, 2\n    mul v1, %lane, 157\n    add v1, v1, 31\n    and v1, v1, 255\n";
  for (int k = 0; k < 8; ++k)
    s << "    shr v2, v1, " << k << "\n    and v2, v2, 1\n    cmp.eq p" << k << ", v2, 1\n";
  s << "    mov v3, 999\n    mov v5, 0\n    mov s3, 0\n";
  auto gen = [&](auto& self, int level, uint32_t id) -> void {
    std::string ind(4 + 2 * level, ' ');
    if (level == 8) {
      s << ind << "mov v3, " << id << "\n"
        << ind << "mov s1, %exec_lo\n"
        << ind << "mov s2, %exec_hi\n"
        << ind << "st seen[" << id * 8 << "], s1\n"
        << ind << "st seen[" << id * 8 + 4 << "], s2\n"
        << ind << "add s3, s3, 1\n";
      return;
    }
    s << ind << "if p" << level << "\n" << ind << "  add v5, v5, 1\n";
    self(self, level + 1, id | (1u << level));
    s << ind << "else\n" << ind << "  add v5, v5, 1\n";
    self(self, level + 1, id);
    s << ind << "endif\n";
  };
  gen(gen, 0, 0);
  s << "    st leaf[v0], v3\n    st depth[v0], v5\n"
    << "    mov s4, %exec_lo\n    mov s5, %exec_hi\n"
    << "    st misc[0], s3\n    st misc[4], s4\n    st misc[8], s5\n    exit\n";
  return s.str();
}

// branch.push, branch.invert, branch.pop, branch.struct.if, branch.struct.empty
TEST(BranchNested, EightLevelsOfDivergence) {
  for (uint32_t wave : {64u, 32u}) {
    SCOPED_TRACE("wave " + std::to_string(wave));
    auto o = outcome(nested_program(wave, 8));
    ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
    auto key = [](uint32_t l) { return (l * 157 + 31) & 255; };
    std::vector<uint32_t> leaf, seen(512, 0);
    for (uint32_t l = 0; l < wave; ++l) {
      leaf.push_back(key(l));
      uint64_t bit = uint64_t{1} << l;
      seen[2 * key(l)] |= static_cast<uint32_t>(bit);
      seen[2 * key(l) + 1] |= static_cast<uint32_t>(bit >> 32);
    }
    EXPECT_EQ(test::words(o, "leaf"), leaf);
    EXPECT_EQ(test::words(o, "depth"), std::vector<uint32_t>(wave, 8));
    EXPECT_EQ(test::words(o, "seen"), seen);
    // Every one of the 256 leaves was passed over (most with no lane), and the exec
    // mask is whole again after the last endif.
    EXPECT_EQ(test::words(o, "misc"),
              (std::vector<uint32_t>{256, 0xffffffff, wave == 64 ? 0xffffffffu : 0u}));
  }
}

// branch.mask.overflow: the same tree with one level fewer of mask stack.
TEST(BranchNested, EightLevelsOverflowSevenEntries) {
  std::string text = nested_program(64, 7);
  auto prog = build(text);
  ASSERT_TRUE(prog);
  auto o = outcome(text);
  expect_trap(o, Event::MaskOverflow, pc_of(*prog, "push p7"));
}

// ---------------------------------------------------------------------------------
// Structured control flow: branch.struct.*
// ---------------------------------------------------------------------------------

constexpr const char* kStructured = R"(__loop0:
    cmp.lt p0, %lane, 4
    if p0
        nop
    else
        nop
    endif
    loop
        break p0
        continue !p0
        loop
            break
            continue
        endloop
    endloop
__loop2:
    exit
)";

// branch.struct.expand, branch.struct.if, branch.struct.loop: the primitives, the
// generated labels (avoiding the program's own __loop0 and __loop2) and their lines.
TEST(BranchStruct, ExpansionOfStatements) {
  auto parsed = text::parse(kStructured);
  ASSERT_TRUE(parsed.ok()) << parsed.diags.format("test");
  auto expanded = valid::expand(parsed.program);
  struct Want {
    const char* text;
    uint32_t line;
  };
  const std::vector<Want> want = {
      {"__loop0:", 1},
      {"cmp.lt p0, %lane, 4", 2},
      {"push p0", 3},
      {"nop", 4},
      {"invert", 5},
      {"nop", 6},
      {"pop", 7},
      {"lpush", 8},
      {"__loop1:", 8},
      {"brk p0", 9},
      {"cont !p0", 10},
      {"lpush", 11},
      {"__loop3:", 11},
      {"brk pt", 12},
      {"cont pt", 13},
      {"lnext", 14},
      {"cbr pt, __loop3", 14},
      {"pop", 14},
      {"lnext", 15},
      {"cbr pt, __loop1", 15},
      {"pop", 15},
      {"__loop2:", 16},
      {"exit", 17},
  };
  ASSERT_EQ(expanded.stmts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(text::print_stmt(expanded.stmts[i]), want[i].text) << "statement " << i;
    EXPECT_EQ(expanded.stmts[i].span.line, want[i].line) << want[i].text;
    EXPECT_TRUE(expanded.stmts[i].kind == syntax::StmtKind::Instr ||
                expanded.stmts[i].kind == syntax::StmtKind::Label);
  }
  // The predecoded program (what `listing` and traces show) keeps the same lines.
  auto prog = build(kStructured);
  ASSERT_TRUE(prog);
  std::vector<std::string> texts;
  std::vector<uint32_t> lines;
  for (const auto& w : want) {
    if (std::string_view(w.text).ends_with(":")) continue;
    texts.push_back(w.text);
    lines.push_back(w.line);
  }
  EXPECT_EQ(prog->text, texts);
  ASSERT_EQ(prog->spans.size(), lines.size());
  for (size_t pc = 0; pc < lines.size(); ++pc) EXPECT_EQ(prog->spans[pc].line, lines[pc]);
}

// branch.struct.expand: `simtspec listing` shows the expanded program.
TEST(BranchStruct, ListingShowsExpansion) {
  namespace fs = std::filesystem;
  const fs::path binary = fs::path(SIMT_BINARY_DIR) / "simtspec";
  ASSERT_TRUE(fs::exists(binary)) << binary << " is not built";
  fs::path file = fs::path(testing::TempDir()) / "branch_test_listing.simt";
  {
    std::ofstream f(file);
    f << kStructured;
  }
  std::string cmd = binary.string() + " listing '" + file.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << out;
  fs::remove(file);
  size_t at = 0;
  for (const char* piece : {"push p0", "invert", "pop", "lpush", "__loop1:", "brk p0", "cont !p0",
                            "lpush", "__loop3:", "brk pt", "cont pt", "lnext", "cbr pt, __loop3",
                            "pop", "lnext", "cbr pt, __loop1", "pop", "exit"}) {
    size_t found = out.find(piece, at);
    ASSERT_NE(found, std::string::npos) << "'" << piece << "' missing (in order) from\n" << out;
    at = found + 1;
  }
}

// branch.struct.empty, exec.form: a side no lane selects is still passed over:
// scalar instructions execute, vector instructions change nothing.
TEST(BranchStruct, EmptyRegionsAreNotSkipped) {
  auto o = outcome(R"(
.wave 8
.buffer out  u32[wave] out
.buffer misc u32[3] out
    shl v0, %lane, 2
    mov s0, 0
    mov s1, 77
    mov s2, 77
    mov v1, 5
    cmp.lt p0, %lane, 0
    if p0
        add s0, s0, 1
        mov v1, 9
        ballot s1, pt
        mov s2, %exec
    else
        add s0, s0, 10
    endif
    if !p0
        add s0, s0, 100
    else
        add s0, s0, 1000
        mov v1, 11
    endif
    loop
        break
        add s0, s0, 10000
        mov v1, 13
    endloop
    st out[v0], v1
    st misc[0], s0
    st misc[4], s1
    st misc[8], s2
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(test::words(o, "out"), std::vector<uint32_t>(8, 5));
  EXPECT_EQ(test::words(o, "misc"), (std::vector<uint32_t>{11111, 0, 0}));
}

// branch.struct.if: if/else/endif selects per lane, and nested ifs restore exec.
TEST(BranchStruct, IfElseSelectsPerLane) {
  auto o = outcome(R"(
.wave 16
.buffer out u32[wave] out
    shl v0, %lane, 2
    and v1, %lane, 1
    cmp.eq p0, v1, 0
    cmp.lt p1, %lane, 8
    if p0
        if p1
            mov v2, 1
        else
            mov v2, 2
        endif
        add v2, v2, 10
    else
        mov v2, 3
    endif
    add v2, v2, 100
    st out[v0], v2
    exit
)");
  ASSERT_EQ(o.status, Status::Completed);
  std::vector<uint32_t> want;
  for (uint32_t l = 0; l < 16; ++l) want.push_back(l % 2 ? 103 : (l < 8 ? 111 : 112));
  EXPECT_EQ(test::words(o, "out"), want);
}

}  // namespace
}  // namespace simt
