// ci: not sanitized: the structured evaluator against the reference on generated programs: a
// semantic sweep (release build) The structured warp evaluator (generators/warp_eval.h,
// oracle.invariant.structured): hand-written programs with known outcomes, each
// also run through the reference interpreter and by the evaluator in the
// reverse warp order; and a property over generated communicating programs.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "gen_builders.h"
#include "generate.h"
#include "reference.h"
#include "support.h"
#include "warp_eval.h"

namespace simt {
namespace {

using namespace test::genb;
using gen::TrapKind;
using isa::Special;

std::vector<uint32_t> buffer(const model::Outcome& o, const std::string& name) {
  for (const auto& b : o.buffers)
    if (b.name == name) return std::vector<uint32_t>(b.values.begin(), b.values.end());
  ADD_FAILURE() << "no buffer " << name;
  return {};
}

std::string show(const model::Outcome& o) {
  return json::dump(model::to_json(o));
}

// The evaluator's outcome, checked to be the reference's and the same in both
// warp orders.
model::Outcome evaluate(const Program& p) {
  const std::string text = gen::print(p);
  SCOPED_TRACE(text);
  gen::StructuredResult r = gen::evaluate_structured(p);
  EXPECT_EQ(r.error, "");
  gen::StructuredResult back = gen::evaluate_structured(p, true);
  EXPECT_EQ(show(back.outcome), show(r.outcome)) << "the warp order changes the outcome";
  test::Run run = test::run(text);
  EXPECT_TRUE(run.ok()) << run.diags;
  if (run.ok()) {
    model::Outcome ref = runners::to_model(*run.outcome);
    ref.steps = 0;
    EXPECT_EQ(show(ref), show(r.outcome)) << "the reference disagrees";
  }
  return r.outcome;
}

Stmt exit_raw() {
  Stmt s = exit_(reuse(0));
  s.raw = true;
  return s;
}

// branch.struct.if: each side runs with its own lanes.
TEST(WarpEval, IfAndElseRunWithTheirSubsets) {
  Program p = prog(
      8, 1, {if_(cmp("cmp.lt", Lane(), I(3)), {alu("mov", 0, I(1))}, {{alu("mov", 0, I(2))}})});
  EXPECT_EQ(buffer(evaluate(p), "out"), (std::vector<uint32_t>{1, 1, 1, 2, 2, 2, 2, 2}));
}

// branch.struct.empty, exec.form: a side no lane selects still runs: its scalar
// statements execute once, its vector ones change nothing.
TEST(WarpEval, AnEmptySideRunsScalarStatementsOnly) {
  Program p =
      prog(4, 2,
           {if_(cmp("cmp.lt", Lane(), I(0)), {scalar("add", S5(), I(5)), alu("mov", 1, I(7))}),
            scalar("add", S5(), I(0), 0)});
  EXPECT_EQ(buffer(evaluate(p), "out"), (std::vector<uint32_t>{5, 5, 5, 5, 0, 0, 0, 0}));
}

// branch.brk, branch.cont, branch.lnext: lanes leave or wait per lane; the
// loop iterates while any lane is in it.
TEST(WarpEval, BreakAndContinueChangeTheSetPerLane) {
  Program p = prog(4, 2,
                   {loop(4, {alu("add", 0, R(0), I(1)), brk(cmp("cmp.eq", Lane(), I(0), 1)),
                             cont(cmp("cmp.eq", Lane(), I(1), 2)), alu("add", 1, R(1), I(1))})});
  EXPECT_EQ(buffer(evaluate(p), "out"), (std::vector<uint32_t>{1, 4, 4, 4, 0, 0, 4, 4}));
}

// branch.exit: a bare exit retires the active lanes, here the caller's in a function;
// the warp ends with its last live lane.
TEST(WarpEval, ExitRetiresTheActiveLanes) {
  Program p = prog(4, 1, {alu("mov", 0, I(3)), if_(cmp("cmp.lt", Lane(), I(2)), {call(0)})},
                   {{exit_raw()}});
  EXPECT_EQ(buffer(evaluate(p), "out"), (std::vector<uint32_t>{0, 0, 3, 3}));
  p.main.push_back(exit_raw());  // every lane: the warp is done before the epilogue
  EXPECT_EQ(buffer(evaluate(p), "out"), (std::vector<uint32_t>{0, 0, 0, 0}));
}

// xlane.shfl, xlane.inactive: an inactive or out-of-range source reads 0.
TEST(WarpEval, ShufflesSeeOnlyActiveLanes) {
  Stmt x4;
  x4.kind = Kind::ShflXor;
  x4.dst = 1;
  x4.a = R(0);
  x4.slot = 4;
  Stmt x1 = x4;
  x1.slot = 1;
  x1.dst = 2;
  Stmt far;
  far.kind = Kind::Shfl;
  far.dst = 3;
  far.a = R(0);
  far.b = I(9);
  Program p =
      prog(8, 4, {alu("add", 0, Lane(), I(10)), if_(cmp("cmp.lt", Lane(), I(4)), {x4, x1, far})});
  const auto out = buffer(evaluate(p), "out");
  EXPECT_EQ(std::vector<uint32_t>(out.begin() + 8, out.begin() + 16),
            (std::vector<uint32_t>(8, 0)));  // lanes 4-7 inactive, and v3 untouched there
  EXPECT_EQ(std::vector<uint32_t>(out.begin() + 16, out.begin() + 24),
            (std::vector<uint32_t>{11, 10, 13, 12, 0, 0, 0, 0}));
  EXPECT_EQ(std::vector<uint32_t>(out.begin() + 24, out.end()), (std::vector<uint32_t>(8, 0)));
}

// xlane.readlane, xlane.ballot: an inactive lane reads 0; ballot.hi gives bits
// 32-63 of the active lanes' predicate.
TEST(WarpEval, ReadlaneAndBallotSeeOnlyActiveLanes) {
  Stmt rd;
  rd.kind = Kind::ReadLane;
  rd.dst = 0;
  rd.a = R(1);
  rd.slot = 3;
  Stmt rd_reg = rd;
  rd_reg.slot = 45;
  rd_reg.limit = 1;  // the lane from s6
  rd_reg.dst = 2;
  Stmt hi;
  hi.kind = Kind::Ballot;
  hi.op = "ballot.hi";
  hi.dst = 3;
  hi.cond = cmp("cmp.ne", Lane(), I(50));
  Program p = prog(
      64, 4, {alu("add", 1, Lane(), I(100)), if_(cmp("cmp.ge", Lane(), I(40)), {rd, rd_reg, hi})});
  const auto out = buffer(evaluate(p), "out");
  EXPECT_EQ(out[40], 0u);          // lane 3 is inactive
  EXPECT_EQ(out[128 + 40], 145u);  // lane 45 is active
  EXPECT_EQ(out[192 + 63], 0xffffff00u & ~(1u << (50 - 32)));
  EXPECT_EQ(out[192 + 0], 0u);
}

// xlane.vote: votes over the active lanes only.
TEST(WarpEval, VotesSeeOnlyActiveLanes) {
  Stmt any;
  any.kind = Kind::Vote;
  any.op = "vote.any";
  any.dst = 0;
  any.cond = cmp("cmp.eq", Lane(), I(2));
  Stmt any_low = any;  // lane 2 is not active
  any_low.dst = 1;
  Stmt all_low = any;
  all_low.op = "vote.all";
  all_low.dst = 2;
  all_low.cond = cmp("cmp.lt", Lane(), I(2));
  // The if's condition in p1: p0 keeps lane 2's bit from the first vote's compare,
  // which an inactive lane must not contribute.
  Program p = prog(4, 3, {any, if_(cmp("cmp.lt", Lane(), I(2), 1), {any_low, all_low})});
  EXPECT_EQ(buffer(evaluate(p), "out"),
            (std::vector<uint32_t>{1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0}));
}

// bar.release: an exchange reads the next warp's value after the barrier.
TEST(WarpEval, ExchangesReadTheNeighbourAfterTheBarrier) {
  Stmt ex;
  ex.kind = Kind::Exchange;
  ex.dst = 0;
  ex.a = Sp(Special::GWarp);
  Program p = prog(4, 1, {ex});
  p.warps = 2;
  p.workgroups = 2;
  EXPECT_EQ(buffer(evaluate(p), "out"),
            (std::vector<uint32_t>{1, 1, 1, 1, 0, 0, 0, 0, 3, 3, 3, 3, 2, 2, 2, 2}));
}

// bar.exited: a warp that retired before a barrier leaves the others waiting.
TEST(WarpEval, AWarpRetiringBeforeABarrierDeadlocks) {
  Program p =
      prog(4, 1,
           {store_scratch(0, Sp(Special::GWarp)), exit_(cmp("cmp.eq", Sp(Special::Warp), I(1))),
            block(Kind::Barrier), store_scratch(1, I(9))});
  p.warps = 2;
  const model::Outcome o = evaluate(p);
  EXPECT_EQ(o.status, "deadlock");
  const auto scratch = buffer(o, "scratch");
  EXPECT_EQ(scratch[4], 1u);  // warp 1 stored before it retired
  EXPECT_EQ(scratch[8], 0u);  // nobody got past the barrier
}

// event.lane, mem.check, exec.commit: the lowest failing active lane, nothing
// committed by the others.
TEST(WarpEval, TrapsReportTheLowestActiveFailingLane) {
  auto in_upper = [](Stmt t) { return if_(cmp("cmp.ge", Lane(), I(2)), {t}); };
  Stmt div = trap(TrapKind::VectorDivZero);
  div.a = Lane();  // divisor lane mod 4: zero in lanes 0 and 4
  model::Outcome o = evaluate(prog(8, 1, {in_upper(div)}));
  ASSERT_EQ(o.status, "trapped");
  EXPECT_EQ(o.event->name, "div_zero");
  EXPECT_EQ(o.event->lane, 4);
  Stmt mis = trap(TrapKind::Misaligned);
  mis.width = gen::Width::U16;  // v1 + lane misaligned in odd lanes
  o = evaluate(prog(8, 1, {in_upper(mis)}));
  EXPECT_EQ(o.event->name, "mem_misaligned");
  EXPECT_EQ(o.event->lane, 3);
  EXPECT_EQ(o.event->addr, 15u);
  EXPECT_EQ(o.event->space, "out");
  o = evaluate(prog(8, 1, {trap(TrapKind::NegativeAddress)}));
  EXPECT_EQ(o.event->name, "mem_out_of_bounds");
  EXPECT_EQ(o.event->lane, 0);
  EXPECT_EQ(o.event->addr, 0xfffffffcu);
  Stmt st = trap(TrapKind::StoreOutOfRange);
  st.a = I(7);
  st.limit = 1;  // v1 << 2: lanes 2.. of 8 are past 32 bytes
  o = evaluate(prog(8, 1, {st}));
  EXPECT_EQ(o.event->lane, 2);
  EXPECT_EQ(buffer(o, "out"), std::vector<uint32_t>(8, 0));  // lanes 0 and 1 stored nothing
  o = evaluate(prog(8, 1, {if_(cmp("cmp.lt", Lane(), I(0)), {trap(TrapKind::ScalarLoadOut)})}));
  EXPECT_EQ(o.event->name, "mem_out_of_bounds");
  EXPECT_EQ(o.event->lane, -1);  // a scalar load has no lane, and runs with no lane active
  // mem.check: an address both misaligned and past the end is misaligned.
  Stmt past = trap(TrapKind::MisalignedPast);
  o = evaluate(prog(8, 1, {in_upper(past)}));
  EXPECT_EQ(o.event->name, "mem_misaligned");
  EXPECT_EQ(o.event->lane, 2);
  EXPECT_EQ(o.event->addr % 4, 1u);
  // mem.check: a word whose first byte is inside the buffer but not its last.
  o = evaluate(prog(8, 1, {trap(TrapKind::StraddleEnd)}));
  EXPECT_EQ(o.event->name, "mem_out_of_bounds");
  EXPECT_EQ(o.event->lane, 0);
  EXPECT_EQ(o.event->addr, 4u);
  EXPECT_EQ(o.event->space, "tail");
  EXPECT_EQ(buffer(o, "tail"), std::vector<uint32_t>(6, 0));
  // atom.lane.check: every active lane's address, the lowest bad one reported;
  // atom.warp.check: only the lowest active lane's (v1 << 2: lanes 2.. past the end).
  Stmt lane_atom = trap(TrapKind::AtomicLaneOut);
  lane_atom.op = "atom.add";
  lane_atom.a = I(5);
  lane_atom.limit = 1;
  o = evaluate(prog(8, 1, {if_(cmp("cmp.ge", Lane(), I(1)), {lane_atom})}));
  EXPECT_EQ(o.event->name, "mem_out_of_bounds");
  EXPECT_EQ(o.event->lane, 2);
  EXPECT_EQ(o.event->addr, 32u);
  EXPECT_EQ(buffer(o, "out"), std::vector<uint32_t>(8, 0));  // lane 1 acted on nothing
  Stmt warp_atom = lane_atom;
  warp_atom.slot = static_cast<int>(TrapKind::AtomicWarpOut);
  warp_atom.op = "watom.add";
  o = evaluate(prog(8, 1, {if_(cmp("cmp.ge", Lane(), I(1)), {warp_atom})}));
  EXPECT_EQ(o.status, "completed");  // lane 1's word 16 only
  o = evaluate(prog(8, 1, {if_(cmp("cmp.ge", Lane(), I(2)), {warp_atom})}));
  EXPECT_EQ(o.event->name, "mem_out_of_bounds");
  EXPECT_EQ(o.event->lane, 2);
}

// branch.mask.overflow: nesting that exactly fits completes; one entry less traps
// at the deepest push.
TEST(WarpEval, MaskDepthAtItsLimit) {
  Program p =
      prog(4, 1,
           {if_(cmp("cmp.lt", Lane(), I(3)),
                {loop(1, {if_(cmp("cmp.lt", Lane(), I(2)), {alu("add", 0, R(0), I(1))})})})});
  p.mask_depth = 3;
  EXPECT_EQ(gen::mask_need(p), 3u);
  EXPECT_EQ(evaluate(p).status, "completed");
  p.mask_depth = 2;
  const model::Outcome o = evaluate(p);
  ASSERT_EQ(o.status, "trapped");
  EXPECT_EQ(o.event->name, "mask_overflow");
  EXPECT_EQ(o.event->lane, -1);
}

// branch.call: recursion to its budget fits call_depth exactly; one less traps.
// With no active lane the recursion stops at once (its branch falls through).
TEST(WarpEval, RecursionToTheCallDepth) {
  Program p = prog(
      4, 1, {call(0), if_(cmp("cmp.lt", Lane(), I(0)), {call(0)}), scalar("add", S5(), I(0), 0)},
      {{scalar("add", S5(), I(1)), block(Kind::Recurse)}});
  p.budget = 3;
  p.call_depth = 4;
  EXPECT_EQ(gen::call_need(p), 4u);
  // Four calls with lanes (1 + 3 recursive), one with none.
  EXPECT_EQ(buffer(evaluate(p), "out"), std::vector<uint32_t>(4, 5));
  p.call_depth = 3;
  const model::Outcome o = evaluate(p);
  ASSERT_EQ(o.status, "trapped");
  EXPECT_EQ(o.event->name, "call_overflow");
}

// state.special.exec: a narrowed exec, restored afterwards less the lanes that
// exited meanwhile; at wave 64 through both halves.
TEST(WarpEval, ExecNarrowingAndRestore) {
  Stmt n = block(Kind::ExecNarrow, {alu("mov", 0, I(1)), exit_(cmp("cmp.eq", Lane(), I(33)))});
  n.mask = (1ull << 0) | (1ull << 33) | (1ull << 63);
  Program p = prog(64, 2, {n, alu("mov", 1, I(2))});
  const auto out = buffer(evaluate(p), "out");
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(out[1], 0u);
  EXPECT_EQ(out[63], 1u);
  EXPECT_EQ(out[33], 0u);       // exited: nothing stored
  EXPECT_EQ(out[64 + 1], 2u);   // restored
  EXPECT_EQ(out[64 + 33], 0u);  // not live any more
  n.slot = 1;                   // %exec instead of %exec_lo at wave 32
  n.mask = 0b1010;
  EXPECT_EQ(buffer(evaluate(prog(4, 2, {n, alu("mov", 1, I(2))})), "out"),
            (std::vector<uint32_t>{0, 1, 0, 1, 2, 2, 2, 2}));
}

// branch.cbr: a uniform condition skips; a divergent one, or no active lane, runs
// the body with every active lane.
TEST(WarpEval, SkipsAreTakenOnlyWhenUniform) {
  Stmt all = block(Kind::Skip, {alu("add", 0, R(0), I(1))});
  all.cond = cmp("cmp.lt", Lane(), I(4));
  Stmt some = all;
  some.cond = cmp("cmp.lt", Lane(), I(2));
  Stmt none = block(Kind::Skip, {scalar("add", S5(), I(10))});
  none.cond = cmp("cmp.lt", Lane(), I(4));
  Program p = prog(
      4, 2, {all, some, if_(cmp("cmp.lt", Lane(), I(0)), {none}), scalar("add", S5(), I(0), 1)});
  EXPECT_EQ(buffer(evaluate(p), "out"), (std::vector<uint32_t>{1, 1, 1, 1, 10, 10, 10, 10}));
}

// A counted loop's back edge is taken only with some lane active: with none its
// body runs once.
TEST(WarpEval, CountedLoopsStopWhenNoLaneIsActive) {
  Stmt c = block(Kind::CountedLoop, {scalar("add", S5(), I(1))});
  c.limit = 3;
  Program p = prog(4, 1, {c, if_(cmp("cmp.lt", Lane(), I(0)), {c}), scalar("add", S5(), I(0), 0)});
  EXPECT_EQ(buffer(evaluate(p), "out"), std::vector<uint32_t>(4, 4));
}

// mem.store.order: lanes store in ascending order; the highest active lane wins.
TEST(WarpEval, StoresToOneWordKeepTheHighestActiveLane) {
  Stmt st;
  st.kind = Kind::SharedStore;
  st.slot = 0;  // the warp's uniform address
  st.a = Lane();
  Program p = prog(8, 1, {if_(cmp("cmp.lt", Lane(), I(5)), {st})});
  EXPECT_EQ(buffer(evaluate(p), "shared")[0], 4u);
}

// Outside the domain: a spin never ends.
TEST(WarpEval, RefusesSpins) {
  Program p = prog(4, 1, {block(Kind::Spin, {alu("not", 0, R(0))})});
  EXPECT_NE(gen::evaluate_structured(p).error, "");
}

// oracle.invariant.structured: on generated programs (communicating, several
// warps, traps and deadlocks included) the evaluator, in both warp orders,
// gives the reference's outcome.
RC_GTEST_PROP(WarpEvalProperty, BothOrdersMatchTheReference, ()) {
  const Program p = *gen::program(gen::options_for("structured"));
  const std::string text = gen::print(p);
  gen::StructuredResult a = gen::evaluate_structured(p), b = gen::evaluate_structured(p, true);
  if (!a.error.empty()) RC_FAIL(a.error + "\n" + text);
  RC_ASSERT(show(a.outcome) == show(b.outcome));
  test::Run run = test::run(text);
  if (!run.ok()) RC_FAIL(run.diags);
  model::Outcome ref = runners::to_model(*run.outcome);
  ref.steps = 0;
  if (show(ref) != show(a.outcome))
    RC_FAIL("reference " + show(ref) + "\nevaluator " + show(a.outcome) + "\n" + text);
  RC_CLASSIFY(p.warps * p.workgroups > 1, "several warps");
  RC_CLASSIFY(a.outcome.status != "completed", a.outcome.status);
}

}  // namespace
// oracle.invariant.atomic_broadcast, atom.warp: the lowering has no warp-wide
// atomic left and the reference gives both forms the same outcome, with lane 0
// inactive, per-lane addresses that differ, and an %exec operand.
TEST(AtomicBroadcast, LoweringKeepsTheOutcome) {
  for (const char* op : {"watom.add", "watom.cas", "watom.lock", "watom.xchg"}) {
    SCOPED_TRACE(op);
    Stmt at;
    at.kind = gen::Kind::Atomic;
    at.op = op;
    at.slot = 1;  // per-lane address from b
    at.b = Lane();
    at.a = Operand{Operand::K::Special, static_cast<int32_t>(isa::Special::ExecLo),
                   gen::Notation::Dec};
    Program p = prog(8, 2, {if_(cmp("cmp.ge", Lane(), I(1)), {at})});
    Program low = p;
    low.lower_warp_atomics = true;
    const std::string direct = gen::print(p), lowered = gen::print(low);
    EXPECT_NE(direct.find("watom."), std::string::npos);
    EXPECT_EQ(lowered.find("watom."), std::string::npos) << lowered;
    test::Run a = test::run(direct), b = test::run(lowered);
    ASSERT_TRUE(a.ok() && b.ok()) << a.diags << b.diags;
    EXPECT_TRUE(a.outcome->same_result(*b.outcome)) << lowered;
    // The structured evaluator agrees with the reference on the direct form.
    evaluate(p);
  }
}

}  // namespace simt

namespace simt {
namespace {

using namespace test::genb;

gen::Stmt atomic(const std::string& op, int slot) {
  gen::Stmt s;
  s.kind = gen::Kind::Atomic;
  s.op = op;
  s.slot = slot;
  s.a = gen::Operand{gen::Operand::K::Imm, 1, gen::Notation::Dec};
  s.b = gen::Operand{gen::Operand::K::Lane, 0, gen::Notation::Dec};
  return s;
}

// oracle.invariant.atomic_count, atom.lane, atom.warp, atom.warp.empty: on two
// warps of 8 lanes, a per-lane atomic in lanes 3-7 inside a loop of 2, a warp-wide
// one for every warp and one in an if no lane takes: 20 per-lane participants,
// 2 warp-wide executions (the empty one does not count); the counting program's
// outcome passes, and each counting buffer is what the clause says.
TEST(AtomicCount, CountsParticipantsAndLogsOldValues) {
  using gen::Program;
  Program p = prog(8, 2,
                   {loop(2, {if_(cmp("cmp.ge", Lane(), I(3)), {atomic("atom.add", 0)})}),
                    atomic("watom.or", gen::kCounterSlot),
                    if_(cmp("cmp.lt", Lane(), I(0)), {atomic("watom.add", 1)})});
  p.warps = 2;
  const gen::Invariant* inv = gen::find_invariant("atomic-count");
  ASSERT_NE(inv, nullptr);
  gen::OracleContext ctx;
  gen::Check c = inv->check(p, gen::print(p), ctx);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.counts["oracle:lane-atomic-participants"], 20u);
  EXPECT_EQ(c.counts["oracle:warp-atomic-executions"], 2u);
  ASSERT_TRUE(c.expected.has_value());
  auto buffer = [&](const std::string& name) {
    for (const auto& b : c.expected->buffers)
      if (b.name == name) return b.values;
    return std::vector<int64_t>{};
  };
  EXPECT_EQ(buffer("tally"), (std::vector<int64_t>{20, 2}));
  EXPECT_EQ(buffer("execs"), (std::vector<int64_t>{2, 1, 2, 1}));
  // Warp 0's first execution (lanes 3-7, ordinal 1) has old values 0-4.
  const std::vector<int64_t> log = buffer("lane_log");
  ASSERT_EQ(log.size(), gen::kCountLog);
  EXPECT_EQ(log[0], (1 << 14) + 0 * 128 + 3 + 1);
  EXPECT_EQ(log[4], (1 << 14) + 0 * 128 + 7 + 1);
  EXPECT_EQ(log[19] != 0 && log[20] == 0, true);
  const std::string text = c.regression_text;
  EXPECT_NE(text.find("atom.add v60, tally[0], 1"), std::string::npos) << text;
  EXPECT_NE(text.find("watom.add v60, tally[4], 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace simt
