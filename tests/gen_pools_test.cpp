// The generators' instruction pools (generators/pools.h) against the instruction
// table: every row is drawn from a pool or excluded with a reason; the draw order
// is the one the fuzz seeds were recorded with; and the hand-written semantics of
// the oracles (spec_alu, the sequential and the structured evaluator) cover
// exactly the table rows of the families they claim.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "evaluator.h"
#include "gen_builders.h"
#include "isa/isa.h"
#include "pools.h"
#include "program.h"
#include "spec_alu.h"
#include "warp_eval.h"

namespace simt {
namespace {

using namespace test::genb;  // program building blocks (gen_builders.h)
namespace pools = gen::pools;

bool in(const std::vector<isa::Op>& v, isa::Op op) {
  return std::ranges::find(v, op) != v.end();
}

std::set<std::string> rows(isa::Family f) {
  std::set<std::string> out;
  for (const isa::OpInfo& row : isa::table())
    if (row.family == f && row.feature == isa::Feature::alu) out.emplace(row.mnemonic);
  return out;
}

// A row added to instructions.def and nowhere else fails here unless it joins a
// pool by its family and feature.
TEST(GenPools, EveryTableRowIsInAPoolOrExcludedWithAReason) {
  for (const isa::OpInfo& row : isa::table()) {
    SCOPED_TRACE(std::string(row.mnemonic));
    bool pooled = false, excluded = false;
    for (const pools::Pool& p : pools::all()) {
      pooled = pooled || in(pools::ops(p.id), row.op);
      for (const pools::Excluded& e : p.excluded)
        if (e.op == row.op) excluded = excluded || !e.reason.empty();
    }
    bool unpooled = false;
    for (const pools::Excluded& e : pools::unpooled())
      if (e.op == row.op) {
        unpooled = true;
        EXPECT_FALSE(e.reason.empty());
      }
    EXPECT_TRUE(pooled || excluded || unpooled) << "in no generator pool and not excluded";
    EXPECT_FALSE(pooled && unpooled) << "in a pool and in unpooled()";
  }
}

TEST(GenPools, ExclusionsAndTheDrawOrderNameRowsOfTheSelection) {
  ASSERT_EQ(pools::all().size(), static_cast<size_t>(pools::Id::kCount));
  for (size_t i = 0; i < pools::all().size(); ++i) {
    const pools::Pool& p = pools::all()[i];
    SCOPED_TRACE(std::string(p.name));
    EXPECT_EQ(static_cast<size_t>(p.id), i);
    EXPECT_FALSE(pools::ops(p.id).empty());
    EXPECT_EQ(pools::ops(p.id).size(), pools::mnemonics(p.id).size());
    std::set<isa::Op> seen;
    for (isa::Op op : pools::ops(p.id)) {
      EXPECT_TRUE(pools::selects(p, isa::info(op))) << isa::info(op).mnemonic;
      EXPECT_TRUE(seen.insert(op).second) << "twice: " << isa::info(op).mnemonic;
    }
    for (const pools::Excluded& e : p.excluded) {
      EXPECT_TRUE(pools::selects(p, isa::info(e.op))) << "excludes a row it does not select";
      EXPECT_FALSE(e.reason.empty());
      EXPECT_FALSE(in(pools::ops(p.id), e.op)) << isa::info(e.op).mnemonic;
    }
    // A closed pool lists every row of its selection, as a member or excluded.
    if (!p.closed) continue;
    for (const isa::OpInfo& row : isa::table()) {
      if (!pools::selects(p, row)) continue;
      const bool excluded =
          std::ranges::any_of(p.excluded, [&](const pools::Excluded& e) { return e.op == row.op; });
      EXPECT_TRUE(in(pools::ops(p.id), row.op) || excluded)
          << "closed pool: classify " << row.mnemonic;
    }
  }
}

// The generators draw by index: these are the lists the pools replaced, in their
// order, so that a seed still means the same program. A new row may follow them.
TEST(GenPools, TheDrawOrderStartsWithTheFormerLists) {
  auto starts_with = [](pools::Id id, const std::vector<std::string>& former) {
    const auto& now = pools::mnemonics(id);
    return now.size() >= former.size() && std::equal(former.begin(), former.end(), now.begin());
  };
  EXPECT_TRUE(starts_with(pools::Id::Alu,
                          {"add", "sub",  "mul", "xor",   "and",   "or",    "shl",     "shr",
                           "sra", "min",  "max", "min.u", "max.u", "mulhi", "mulhi.u", "mov",
                           "not", "popc", "div", "div.u", "rem",   "rem.u"}));
  EXPECT_TRUE(
      starts_with(pools::Id::Compare, {"cmp.lt", "cmp.eq", "cmp.ne", "cmp.le", "cmp.gt", "cmp.ge",
                                       "cmp.lt.u", "cmp.le.u", "cmp.gt.u", "cmp.ge.u"}));
  EXPECT_TRUE(starts_with(pools::Id::PredOp, {"pand", "por", "pxor", "pmov"}));
  EXPECT_TRUE(starts_with(pools::Id::Ballot, {"ballot", "ballot.hi"}));
  EXPECT_TRUE(starts_with(pools::Id::Vote, {"vote.any", "vote.all"}));
  EXPECT_TRUE(starts_with(pools::Id::Division, {"div", "div.u", "rem", "rem.u"}));
  std::vector<std::string> atomics;
  for (const char* family : {"atom.", "watom."})
    for (const char* op : {"add", "sub", "min", "max", "min.u", "max.u", "and", "or", "xor", "xchg",
                           "cas", "lock", "unlock"})
      atomics.push_back(std::string(family) + op);
  EXPECT_TRUE(starts_with(pools::Id::Atomic, atomics));
  // The counters buffer has one word per operation, in this order (spec/oracles.md).
  EXPECT_EQ(gen::commutative_atomics(),
            (std::vector<std::string>{"add", "and", "or", "xor", "min", "max", "min.u", "max.u"}));
}

// spec_alu stays a semantics written from spec/alu.md; only its coverage is tied
// to the table: a new ALU row without an oracle case fails here.
TEST(GenPools, SpecAluCoversExactlyTheAluRows) {
  EXPECT_EQ(gen::spec::unary_ops(), rows(isa::Family::Unary));
  EXPECT_EQ(gen::spec::binary_ops(), rows(isa::Family::Binary));
  EXPECT_EQ(gen::spec::compare_ops(), rows(isa::Family::Compare));
  const auto& division = pools::mnemonics(pools::Id::Division);
  EXPECT_EQ(gen::spec::division_ops(), std::set<std::string>(division.begin(), division.end()));
  for (const auto& f : {rows(isa::Family::Unary), rows(isa::Family::Binary)})
    for (const std::string& mn : f) EXPECT_NO_THROW(gen::spec::alu(mn, 7, 3)) << mn;
  for (const std::string& mn : rows(isa::Family::Compare))
    EXPECT_NO_THROW(gen::spec::compare(mn, 7, 3)) << mn;
  EXPECT_THROW(gen::spec::alu("ld", 7, 3), std::logic_error);
  EXPECT_THROW(gen::spec::compare("cmp.xx", 7, 3), std::logic_error);
}

// The sequential and the structured evaluator accept every row of the families
// their statements draw from (ALU, comparison, predicate logic).
TEST(GenPools, TheEvaluatorsCoverEveryRowOfTheirFamilies) {
  auto check = [](const std::string& mn, const Stmt& s) {
    SCOPED_TRACE(mn);
    const Program p = prog(4, 1, {s});
    EXPECT_EQ(gen::evaluate_sequential(p).error, "");
    EXPECT_EQ(gen::evaluate_structured(p).error, "");
  };
  for (const auto& f : {rows(isa::Family::Unary), rows(isa::Family::Binary)})
    for (const std::string& mn : f) check(mn, alu(mn, 0, Lane(), I(3)));
  for (const std::string& mn : rows(isa::Family::Compare))
    check(mn, sel(0, cmp(mn, Lane(), I(2)), I(1), I(0)));
  for (const std::string& mn : rows(isa::Family::PredOp)) {
    Stmt s;
    s.kind = Kind::PredOp;
    s.op = mn;
    s.dst = 0;
    s.cond.pred = 1;
    s.p2 = 2;
    check(mn, s);
  }
}

}  // namespace
}  // namespace simt
