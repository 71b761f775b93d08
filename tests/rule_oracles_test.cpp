// ci: not sanitized: policy, livelock and validator oracles over generated programs: a semantic
// sweep (release build) The oracles for what no second semantics covers
// (generators/rule_oracles.h): policy, livelock and validator (spec/oracles.md,
// oracle.invariant.*).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gen_builders.h"
#include "generate.h"
#include "rule_oracles.h"
#include "support.h"

namespace simt {
namespace {

using namespace test::genb;

gen::Check run_oracle(gen::Check (*oracle)(const Program&, const std::string&, gen::OracleContext&),
                      const Program& p, uint64_t seed = 7) {
  gen::OracleContext ctx;
  ctx.seed = seed;
  return oracle(p, gen::print(p), ctx);
}

// A program with loops, a function, a skip, an else and barriers: every mutation
// of oracle.invariant.validator applies.
Program rich() {
  Stmt skip = block(Kind::Skip, {alu("add", 0, R(0), I(1))});
  skip.cond = cmp("cmp.lt", Lane(), I(2));
  Stmt counted = block(Kind::CountedLoop, {alu("add", 0, R(0), I(1))});
  counted.limit = 2;
  Program p = prog(4, 2,
                   {loop(2, {alu("add", 0, R(0), I(1))}), skip, counted,
                    if_(cmp("cmp.lt", Lane(), I(1)), {call(0)}, {{alu("mov", 1, I(3))}}),
                    scalar("add", S5(), Sp(isa::Special::Wave), 1), load_scratch(1, 2)},
                   {{alu("add", 1, R(1), I(2))}});
  return p;
}

// oracle.invariant.validator: each mutation names its rule, and the validator
// rejects it with that clause first.
TEST(ValidatorOracle, EveryMutationIsRejectedWithItsClause) {
  Program p = rich();
  auto ms = gen::mutations(gen::print(p));
  std::set<std::string> names, clauses;
  for (const auto& m : ms) {
    SCOPED_TRACE(m.name + "\n" + m.text);
    names.insert(m.name);
    clauses.insert(m.clause);
    auto r = test::load(m.text);
    ASSERT_FALSE(r.loaded.has_value());
    EXPECT_EQ(r.diags.first().clause, m.clause) << r.diags.format("mutated");
  }
  for (const char* n : {"v-register-out-of-range",
                        "s-register-out-of-range",
                        "predicate-out-of-range",
                        "pt-destination",
                        "read-only-special-destination",
                        "scalar-form-with-per-lane-source",
                        "undeclared-buffer",
                        "undefined-label",
                        "label-defined-twice",
                        "pop-with-nothing-open",
                        "brk-outside-loops",
                        "lnext-outside-loops",
                        "invert-on-a-loop-entry",
                        "ret-in-main",
                        "ret-with-an-open-push",
                        "push-before-a-back-edge",
                        "closing-statement-removed",
                        "second-else",
                        "else-in-a-loop",
                        "break-outside-loops",
                        "scalar-load-with-per-lane-base",
                        "lnext-on-an-if-entry",
                        "tret-in-user-code",
                        "tclear-in-user-code",
                        "vcall-in-handler-code",
                        "sys-in-handler-code",
                        "exit-in-handler-code"})
    EXPECT_TRUE(names.count(n)) << n;
  // Every rule of the chapter but valid.buffer.unique, which no instruction
  // breaks, and the trap chapter's trap.valid.mode.
  EXPECT_EQ(clauses.size(), 13u);
  EXPECT_TRUE(run_oracle(gen::validator_oracle, p).ok);
  // Without functions, removing the final exit runs past the end.
  p.functions.clear();
  bool end = false;
  for (const auto& m : gen::mutations(gen::print(p))) end = end || m.name == "final-exit-removed";
  EXPECT_TRUE(end);
}

// valid.flow.end: a program that writes exec is outside the flow checks'
// reasoning; flow mutations that rely on reachability are not made there.
TEST(ValidatorOracle, NoReachabilityMutationsWhereExecIsWritten) {
  Program p = rich();
  Stmt n = block(Kind::ExecNarrow, {alu("add", 0, R(0), I(1))});
  n.mask = 1;
  p.main.push_back(n);
  for (const auto& m : gen::mutations(gen::print(p)))
    EXPECT_TRUE(m.name != "push-before-a-back-edge" && m.name != "ret-with-an-open-push" &&
                m.name != "invert-on-a-loop-entry")
        << m.name;
}

// oracle.invariant.livelock: a spin ends livelock at the detection step and the
// oracle holds; a loop whose state does not repeat (a counter) is not a spin the
// oracle accepts: it fails, so the oracle can see a missed livelock.
TEST(LivelockOracle, HoldsOnSpinsAndSeesALoopThatNeverRepeats) {
  for (bool raw : {false, true}) {
    Stmt spin = block(Kind::Spin, {alu("not", 0, R(0)), alu("xor", 1, R(1), I(5))});
    spin.raw = raw;
    Program p = prog(4, 2, {alu("mov", 0, Lane()), spin});
    p.warps = 2;
    gen::Check c = run_oracle(gen::livelock_oracle, p);
    EXPECT_TRUE(c.ok) << c.message << gen::print(p);
    ASSERT_TRUE(c.expected.has_value());
    EXPECT_EQ(c.expected->status, "livelock");
  }
  Stmt counting = block(Kind::Spin, {alu("add", 0, R(0), I(1))});
  Program p = prog(1, 1, {counting});
  gen::Check c = run_oracle(gen::livelock_oracle, p);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("ends step_limit"), std::string::npos) << c.message;
  // A terminating program never ends livelock, at any limit.
  EXPECT_TRUE(run_oracle(gen::livelock_oracle, rich(), 3).ok);
}

// oracle.invariant.policy: holds on programs of several warps with barriers and
// a deadlock, under every policy.
TEST(PolicyOracle, HoldsAcrossWarpsBarriersAndDeadlock) {
  Stmt ex;
  ex.kind = Kind::Exchange;
  ex.a = Sp(isa::Special::GWarp);
  Program p = prog(4, 1, {loop_reg(Sp(isa::Special::GWarp), {alu("add", 0, R(0), I(1))}), ex});
  p.warps = 3;
  p.workgroups = 2;
  gen::Check c = run_oracle(gen::policy_oracle, p);
  EXPECT_TRUE(c.ok) << c.message;
  p.main.insert(p.main.begin(), exit_(cmp("cmp.eq", Sp(isa::Special::Warp), I(2))));
  c = run_oracle(gen::policy_oracle, p);
  EXPECT_TRUE(c.ok) << c.message;
  ASSERT_TRUE(c.expected.has_value());
  EXPECT_EQ(c.expected->status, "deadlock");
}

}  // namespace
}  // namespace simt
