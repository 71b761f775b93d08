// ci: not sanitized: the sequential evaluator against the reference on generated programs: a
// semantic sweep (release build) The sequential evaluator (generators/evaluator.h): hand-written
// programs with known results, each also run through the reference interpreter, and a property
// comparing the evaluator with the reference on generated lane-independent
// programs (oracle.invariant.sequential).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "evaluator.h"
#include "gen_builders.h"
#include "generate.h"
#include "program.h"
#include "support.h"

namespace simt {
namespace {

using namespace test::genb;  // program building blocks (gen_builders.h)
using gen::Expected;

// The `out` words, register by register, from one function per data register of
// the thread index (nullopt: the thread exited, all its words are 0).
using PerThread = std::function<std::optional<std::vector<uint32_t>>(uint32_t t)>;
std::vector<uint32_t> layout(const Program& p, const PerThread& f) {
  const uint32_t n = p.threads();
  std::vector<uint32_t> out(static_cast<size_t>(p.nregs) * n, 0);
  for (uint32_t t = 0; t < n; ++t) {
    auto regs = f(t);
    if (!regs) continue;
    EXPECT_EQ(regs->size(), static_cast<size_t>(p.nregs));
    for (size_t j = 0; j < regs->size() && j < static_cast<size_t>(p.nregs); ++j)
      out[j * n + t] = (*regs)[j];
  }
  return out;
}

// Checks the evaluator and the reference interpreter against the expected buffers.
void check(const Program& p, const std::vector<uint32_t>& out,
           const std::vector<uint32_t>& scratch = {}) {
  const std::string text = gen::print(p);
  SCOPED_TRACE(text);
  Expected e = gen::evaluate_sequential(p);
  ASSERT_EQ(e.error, "");
  EXPECT_EQ(e.out, out);
  EXPECT_EQ(e.scratch, scratch);
  test::Run r = test::run(text);
  ASSERT_TRUE(r.ok()) << r.diags;
  ASSERT_EQ(r.status(), exec::Status::Completed) << exec::status_name(r.status());
  EXPECT_EQ(r.outcome->words("out"), out);
  if (!scratch.empty()) {
    EXPECT_EQ(r.outcome->words("scratch"), scratch);
  }
}

// ---------------------------------------------------------------------------
// ALU (spec/alu.md)

struct AluCase {
  std::string op;
  int32_t a, b;
  uint32_t want;
};

// alu.add .. alu.minmax, with immediates: every operation, its wrapping and its
// corner cases. Divisors are printed `| 1`, so the ones here are odd (but see
// EvenDivisorsAreMadeOdd).
TEST(EvaluatorAlu, EveryOperationOnImmediates) {
  const std::vector<AluCase> cases = {
      {"mov", -5, 0, 0xFFFFFFFBu},
      {"not", 0, 0, 0xFFFFFFFFu},
      {"not", 0x0F0F0F0F, 0, 0xF0F0F0F0u},
      {"popc", -1, 0, 32},
      {"popc", 0x55, 0, 4},
      {"popc", 0, 0, 0},
      {"add", -1, 2, 1},
      {"add", INT32_MAX, 1, 0x80000000u},
      {"sub", 0, 1, 0xFFFFFFFFu},
      {"sub", INT32_MIN, 1, 0x7FFFFFFFu},
      {"mul", 0x10000, 0x10000, 0},
      {"mul", -3, 7, static_cast<uint32_t>(-21)},
      {"mul", 0x12345, 0x6789, 0x12345u * 0x6789u},
      {"mulhi", -1, 1, 0xFFFFFFFFu},
      {"mulhi", -1, -1, 0},
      {"mulhi", INT32_MIN, INT32_MIN, 0x40000000u},
      {"mulhi", -2, INT32_MAX, 0xFFFFFFFFu},
      {"mulhi", INT32_MAX, 2, 0},
      {"mulhi", 0x10000, 0x10000, 1},
      {"mulhi.u", -1, 1, 0},
      {"mulhi.u", -1, -1, 0xFFFFFFFEu},
      {"mulhi.u", INT32_MIN, 2, 1},
      {"div", 7, 3, 2},
      {"div", -7, 3, static_cast<uint32_t>(-2)},
      {"div", 7, -3, static_cast<uint32_t>(-2)},
      {"div", -7, -3, 2},
      {"div", INT32_MIN, -1, 0x80000000u},
      {"div", INT32_MIN, 1, 0x80000000u},
      {"div", INT32_MAX, -1, static_cast<uint32_t>(-INT32_MAX)},
      {"div", 1, 3, 0},
      {"div", -1, 3, 0},
      {"div.u", -7, 3, 0xFFFFFFF9u / 3},
      {"div.u", INT32_MIN, -1, 0},
      {"div.u", -1, -1, 1},
      {"rem", 7, 3, 1},
      {"rem", -7, 3, static_cast<uint32_t>(-1)},
      {"rem", 7, -3, 1},
      {"rem", -7, -3, static_cast<uint32_t>(-1)},
      {"rem", INT32_MIN, -1, 0},
      {"rem", INT32_MIN, 3, static_cast<uint32_t>(-2)},
      {"rem.u", -1, 7, 3},
      {"rem.u", -7, -1, 0xFFFFFFF9u},
      {"and", 0x0FF0, 0x00FF, 0x00F0},
      {"or", 0x0F00, 0x00F0, 0x0FF0},
      {"xor", -1, 0x0F, 0xFFFFFFF0u},
      {"shl", 1, 31, 0x80000000u},
      {"shl", 1, 32, 1},
      {"shl", 1, 33, 2},
      {"shl", 1, -1, 0x80000000u},
      {"shl", 3, 30, 0xC0000000u},
      {"shr", INT32_MIN, 31, 1},
      {"shr", -1, 32, 0xFFFFFFFFu},
      {"shr", -1, 4, 0x0FFFFFFFu},
      {"sra", -8, 1, static_cast<uint32_t>(-4)},
      {"sra", INT32_MIN, 63, 0xFFFFFFFFu},
      {"sra", 0x40000000, 30, 1},
      {"sra", -1, 5, 0xFFFFFFFFu},
      {"min", -1, 1, 0xFFFFFFFFu},
      {"max", -1, 1, 1},
      {"min", INT32_MIN, INT32_MAX, 0x80000000u},
      {"min.u", -1, 1, 1},
      {"max.u", -1, 1, 0xFFFFFFFFu},
      {"max.u", INT32_MIN, INT32_MAX, 0x80000000u},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op + " " + std::to_string(c.a) + ", " + std::to_string(c.b));
    check(prog(1, 1, {alu(c.op, 0, I(c.a), I(c.b))}), {c.want});
  }
}

// The printer makes every divisor odd: an immediate as `b | 1`, any other operand
// through `or v20, b, 1`. INT_MIN / -1 through a register divisor.
TEST(EvaluatorAlu, EvenDivisorsAreMadeOdd) {
  check(prog(1, 1, {alu("div", 0, I(-7), I(2))}), {static_cast<uint32_t>(-2)});  // -7 / 3
  check(prog(1, 1, {alu("rem", 0, I(-7), I(0))}), {0});                          // -7 rem 1
  check(prog(1, 1, {alu("div.u", 0, I(10), I(4))}), {2});                        // 10 / 5
  Program p = prog(1, 3,
                   {alu("mov", 1, I(-2)),         // d1 = -2, divisor -2 | 1 = -1
                    alu("mov", 2, I(INT32_MIN)),  //
                    alu("div", 0, R(2), R(1)),    // INT_MIN / -1 = INT_MIN
                    alu("rem", 2, R(2), R(1))});  // INT_MIN rem -1 = 0
  check(p, {0x80000000u, 0xFFFFFFFEu, 0});
  // %lane as a divisor: lane | 1.
  check(prog(4, 1, {alu("div", 0, I(12), Lane())}), {12, 12, 4, 4});
}

// Per-lane sources: %lane and registers (alu.form).
TEST(EvaluatorAlu, LaneAndRegisterOperands) {
  Program p = prog(8, 2, {alu("mul", 0, Lane(), I(3)), alu("sub", 1, R(0), Lane())});
  check(p, layout(p, [](uint32_t t) { return std::vector<uint32_t>{3 * t, 2 * t}; }));
  // A data index maps to v(2 + i % nregs): index 5 of 2 registers is register 1.
  Program q = prog(4, 2, {alu("add", 5, Lane(), I(100)), alu("add", 2, R(7), I(1))});
  check(q, layout(q, [](uint32_t t) { return std::vector<uint32_t>{t + 101, t + 100}; }));
}

// alu.cmp with sel: every comparison, signed and unsigned.
TEST(EvaluatorAlu, EveryComparison) {
  struct Case {
    std::string cmp;
    int32_t a, b;
    bool want;
  };
  const std::vector<Case> cases = {
      {"cmp.eq", 3, 3, true},     {"cmp.eq", 3, -3, false},   {"cmp.ne", 3, -3, true},
      {"cmp.ne", -3, -3, false},  {"cmp.lt", -1, 1, true},    {"cmp.lt", 1, 1, false},
      {"cmp.le", 1, 1, true},     {"cmp.le", 1, -1, false},   {"cmp.gt", 1, -1, true},
      {"cmp.gt", -1, 1, false},   {"cmp.ge", -1, -1, true},   {"cmp.ge", -2, -1, false},
      {"cmp.lt.u", 1, -1, true},  {"cmp.lt.u", -1, 1, false}, {"cmp.le.u", -1, -1, true},
      {"cmp.le.u", -1, 1, false}, {"cmp.gt.u", -1, 1, true},  {"cmp.gt.u", 1, -1, false},
      {"cmp.ge.u", -1, -1, true}, {"cmp.ge.u", 1, -1, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cmp + " " + std::to_string(c.a) + ", " + std::to_string(c.b));
    check(prog(1, 1, {sel(0, cmp(c.cmp, I(c.a), I(c.b), 2), I(1), I(0))}), {c.want ? 1u : 0u});
    // Negated.
    check(prog(1, 1, {sel(0, cmp(c.cmp, I(c.a), I(c.b), 2, true), I(1), I(0))}),
          {c.want ? 0u : 1u});
  }
}

// A reused predicate keeps its value; predicates start false (state.init).
TEST(EvaluatorAlu, ReusedPredicates) {
  Program p = prog(8, 3,
                   {sel(0, reuse(3), I(1), I(2)),  // p3 is false: 2
                    sel(1, cmp("cmp.lt", Lane(), I(5), 1), I(7), I(8)), alu("mov", 2, I(0)),
                    sel(2, reuse(1, true), I(10), I(20)),  // !p1
                    sel(0, reuse(9), R(0), I(3))});        // p9 prints as p1
  check(p, layout(p, [](uint32_t t) {
          const bool lt = t < 5;
          return std::vector<uint32_t>{lt ? 2u : 3u, lt ? 7u : 8u, lt ? 20u : 10u};
        }));
}

// ---------------------------------------------------------------------------
// Control flow (spec/branch.md, structured statements)

TEST(EvaluatorControl, NestedIfElse) {
  Program p =
      prog(8, 2,
           {if_(cmp("cmp.lt", Lane(), I(4), 0),
                {if_(cmp("cmp.eq", Lane(), I(1), 1), {alu("mov", 0, I(10))},
                     std::vector<Stmt>{alu("mov", 0, I(20))})},
                std::vector<Stmt>{if_(cmp("cmp.ge.u", Lane(), I(6), 1), {alu("mov", 0, I(30))})}),
            // p0 still holds lane < 4.
            sel(1, reuse(0, true), I(1), I(2))});
  const std::vector<uint32_t> d0 = {20, 10, 20, 20, 0, 0, 30, 30};
  check(p, layout(p, [&](uint32_t t) { return std::vector<uint32_t>{d0[t], t < 4 ? 2u : 1u}; }));
}

TEST(EvaluatorControl, LoopsWithLaneDependentLimits) {
  // The limit register is a & 7: lane & 7 iterations, wave 16 wraps.
  Program p = prog(16, 3,
                   {loop_reg(Lane(), {alu("add", 0, R(0), I(1))}),
                    loop_reg(Lane(), {loop(3, {alu("add", 1, R(1), I(1))})}), alu("mov", 2, I(-1)),
                    loop_reg(R(2), {alu("add", 2, R(2), I(1))})});  // -1 & 7 = 7 iterations
  check(p, layout(p, [](uint32_t t) { return std::vector<uint32_t>{t & 7, 3 * (t & 7), 6}; }));
  // Zero and negative immediate limits: no iteration.
  check(prog(2, 1, {loop(0, {alu("add", 0, R(0), I(1))}), loop(-3, {alu("add", 0, R(0), I(1))})}),
        {0, 0});
}

TEST(EvaluatorControl, BreakAndContinueInsideNestedIfs) {
  // d1 counts iterations 1..4; when it equals the lane, lanes above 2 break and
  // the others skip the rest of that iteration.
  Program p = prog(8, 2,
                   {loop(4, {alu("add", 1, R(1), I(1)),
                             if_(cmp("cmp.eq", R(1), Lane(), 0),
                                 {if_(cmp("cmp.gt", Lane(), I(2), 1), {brk(reuse(1))},
                                      std::vector<Stmt>{cont(reuse(0))})}),
                             alu("add", 0, R(0), I(1))})});
  const std::vector<uint32_t> d0 = {4, 3, 3, 2, 3, 4, 4, 4}, d1 = {4, 4, 4, 3, 4, 4, 4, 4};
  check(p, layout(p, [&](uint32_t t) { return std::vector<uint32_t>{d0[t], d1[t]}; }));
}

TEST(EvaluatorControl, BreakLeavesOnlyTheInnermostLoop) {
  Program p =
      prog(8, 2,
           {loop(3, {loop(5, {alu("add", 0, R(0), I(1)), brk(cmp("cmp.lt", Lane(), I(4), 2))}),
                     alu("add", 1, R(1), I(1))})});
  check(p, layout(p, [](uint32_t t) { return std::vector<uint32_t>{t < 4 ? 3u : 15u, 3}; }));
  // continue with a negated condition: only odd lanes count.
  Program q = prog(4, 2,
                   {loop(5, {alu("and", 1, Lane(), I(1)), cont(cmp("cmp.ne", R(1), I(0), 0, true)),
                             alu("add", 0, R(0), I(1))})});
  check(q, layout(q, [](uint32_t t) { return std::vector<uint32_t>{t % 2 ? 5u : 0u, t % 2}; }));
}

// branch.exit: an exited lane stores nothing at the end, but its earlier stores stay.
TEST(EvaluatorControl, ExitInsideALoop) {
  Program p = prog(8, 2,
                   {loop(5, {alu("add", 0, R(0), I(1)), store_scratch(0, R(0)),
                             exit_(cmp("cmp.eq", R(0), Lane(), 3))}),
                    alu("mov", 1, I(99))});
  auto exits = [](uint32_t t) { return t >= 1 && t <= 5; };
  std::vector<uint32_t> scratch(4 * 8, 0);
  for (uint32_t t = 0; t < 8; ++t) scratch[t] = exits(t) ? t : 5;
  check(p,
        layout(p,
               [&](uint32_t t) -> std::optional<std::vector<uint32_t>> {
                 if (exits(t)) return std::nullopt;
                 return std::vector<uint32_t>{5, 99};
               }),
        scratch);
}

TEST(EvaluatorControl, ExitInsideAFunction) {
  Program p = prog(4, 2, {alu("mov", 0, Lane()), call(0), call(0), call(3), call(1)},
                   {{alu("add", 0, R(0), I(7)), exit_(cmp("cmp.lt.u", Lane(), I(2), 0)),
                     alu("add", 0, R(0), I(1))},
                    // A call inside a function prints nothing.
                    {call(0), alu("add", 1, R(1), I(100))}});
  check(p, layout(p, [](uint32_t t) -> std::optional<std::vector<uint32_t>> {
          if (t < 2) return std::nullopt;
          return std::vector<uint32_t>{t + 16, 200};  // f0, f0, f1 (3 % 2), f1
        }));
}

TEST(EvaluatorControl, CallsFromLoopsUseTheirOwnCounters) {
  // A function's loops count in v14.., main's in v10..; a function starts at depth 0.
  Program p = prog(
      8, 2, {loop(3, {call(0), loop_reg(Lane(), {call(1)})})},
      {{loop(2, {alu("add", 0, R(0), I(1))})},
       {loop(2, {loop(2, {alu("add", 1, R(1), I(1)), brk(cmp("cmp.ge", R(1), I(1000), 1))})})}});
  check(p, layout(p, [](uint32_t t) { return std::vector<uint32_t>{6, 3 * (t & 7) * 4}; }));
  // Break inside a function's loop leaves that loop, not the caller's.
  Program q = prog(2, 1, {loop(4, {call(0), alu("add", 0, R(0), I(10))})},
                   {{loop(5, {alu("add", 0, R(0), I(1)), brk(cmp("cmp.eq", I(0), I(0), 0))})}});
  check(q, {44, 44});
}

// ---------------------------------------------------------------------------
// Memory (spec/memory.md) and launch shapes

TEST(EvaluatorMemory, InputAndScratchOverSeveralWarpsAndWorkgroups) {
  Program p = prog(4, 2,
                   {load_input(0), store_scratch(1, R(0)), store_scratch(6, Lane()),
                    load_scratch(1, 5), alu("add", 1, R(1), I(1))});
  p.warps = 2;
  p.workgroups = 2;
  const uint32_t n = p.threads();
  for (uint32_t t = 0; t < n; ++t) p.input.push_back(t * 1000 + 7);
  std::vector<uint32_t> scratch(4 * n, 0);
  for (uint32_t t = 0; t < n; ++t) {
    scratch[1 * n + t] = t * 1000 + 7;
    scratch[2 * n + t] = t % 4;
  }
  check(p,
        layout(p,
               [](uint32_t t) {
                 return std::vector<uint32_t>{t * 1000 + 7, t * 1000 + 8};
               }),
        scratch);
}

TEST(EvaluatorMemory, UnwrittenScratchReadsZeroAndEmptyInputReadsZero) {
  Program p =
      prog(2, 2, {alu("mov", 0, I(5)), load_scratch(0, 3), alu("mov", 1, I(5)), load_input(1)});
  check(p, {0, 0, 0, 0}, std::vector<uint32_t>(8, 0));
}

TEST(EvaluatorMemory, ScratchInAnUncalledFunctionStillDeclaresTheBuffer) {
  Program p = prog(2, 1, {alu("mov", 0, Lane())}, {{store_scratch(0, I(1))}});
  check(p, {0, 1}, std::vector<uint32_t>(8, 0));
}

TEST(EvaluatorLaunch, LanesAndWarps) {
  // %lane is t % wave; the per-thread words follow the global thread id.
  Program p = prog(2, 1, {alu("mov", 0, Lane())});
  p.warps = 3;
  p.workgroups = 2;
  p.policy = "random";
  p.seed = 17;
  check(p, layout(p, [](uint32_t t) { return std::vector<uint32_t>{t % 2}; }));
  // With no register the out buffer is empty.
  Expected e = gen::evaluate_sequential(prog(4, 0, {alu("mov", 0, I(1))}));
  EXPECT_EQ(e.error, "");
  EXPECT_TRUE(e.out.empty());
}

// Data registers beyond v9 are the printed program's loop counters: the
// evaluator follows the printed registers, not the model's intent.
TEST(EvaluatorLaunch, DataRegistersAliasLoopCountersAsPrinted) {
  // nregs 9: data register 8 is v10, main's outer loop counter.
  Program p = prog(1, 9, {loop(5, {alu("add", 8, R(8), I(1))})});
  check(p, {0, 0, 0, 0, 0, 0, 0, 0, 6});
}

// ---------------------------------------------------------------------------
// What the evaluator refuses

TEST(EvaluatorErrors, RefusesWhatItCannotPredict) {
  Stmt shfl;
  shfl.kind = Kind::Shfl;
  EXPECT_NE(gen::evaluate_sequential(prog(4, 1, {shfl})).error, "");
  EXPECT_NE(gen::evaluate_sequential(prog(4, 1, {brk(reuse(0))})).error, "");
  // Break in a function called from a loop is still outside any loop of its own.
  EXPECT_NE(gen::evaluate_sequential(prog(4, 1, {loop(2, {call(0)})}, {{cont(reuse(0))}})).error,
            "");
  EXPECT_NE(gen::evaluate_sequential(prog(4, 1, {alu("frob", 0, I(1), I(2))})).error, "");
  EXPECT_NE(gen::evaluate_sequential(prog(3, 1, {})).error, "");
  Program deep = prog(4, 1, {if_(reuse(0), {loop(1, {if_(reuse(1), {})})})});
  deep.mask_depth = 2;
  EXPECT_NE(gen::evaluate_sequential(deep).error, "");
  deep.mask_depth = 3;
  EXPECT_EQ(gen::evaluate_sequential(deep).error, "");
  // A loop that never ends (the counter is reset by the body).
  EXPECT_NE(gen::evaluate_sequential(prog(1, 9, {loop(2, {alu("mov", 8, I(0))})})).error, "");
}

// ---------------------------------------------------------------------------
// The property: every lane alone gives what the SIMT reference gives.

std::string first_difference(const std::vector<uint32_t>& want, const std::vector<uint32_t>& got,
                             uint32_t threads) {
  if (want.size() != got.size())
    return std::to_string(got.size()) + " words, expected " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i])
      return "word " + std::to_string(i) + " (thread " + std::to_string(i % threads) + ") is " +
             std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
  return "";
}

RC_GTEST_PROP(EvaluatorProperty, LanesAloneMatchTheReference, ()) {
  const Program p = *gen::program(gen::options_for("sequential"));
  RC_ASSERT(!gen::communicates(p));
  const std::string text = gen::print(p);
  RC_CLASSIFY(p.threads() > p.wave, "several warps");
  RC_CLASSIFY(gen::uses(p, Kind::Loop), "loop");
  RC_CLASSIFY(gen::uses(p, Kind::Break) || gen::uses(p, Kind::Continue), "break/continue");
  RC_CLASSIFY(gen::uses(p, Kind::Exit), "exit");
  RC_CLASSIFY(gen::uses(p.main, Kind::Call) && !p.functions.empty(), "call");
  RC_CLASSIFY(gen::uses(p, Kind::StoreScratch), "scratch");
  Expected e = gen::evaluate_sequential(p);
  if (!e.error.empty()) RC_FAIL("evaluator: " + e.error + "\n" + text);
  test::Run r = test::run(text);
  if (!r.ok()) RC_FAIL("the printed program does not load: " + r.diags + "\n" + text);
  if (r.status() != exec::Status::Completed)
    RC_FAIL("the reference ends " + std::string(exec::status_name(r.status())) + "\n" + text);
  for (const auto& [name, want] :
       {std::pair<std::string, const std::vector<uint32_t>*>{"out", &e.out},
        {"scratch", &e.scratch}}) {
    if (name == "scratch" && want->empty()) continue;
    auto got = r.outcome->words(name);
    if (!got) RC_FAIL("the reference has no buffer " + name + "\n" + text);
    std::string d = first_difference(*want, *got, p.threads());
    if (!d.empty()) RC_FAIL(name + ": " + d + "\n" + text);
  }
}

}  // namespace
}  // namespace simt
