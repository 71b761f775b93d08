#include "pools.h"

#include <algorithm>
#include <array>

namespace simt::gen::pools {

namespace {

using isa::Family;
using isa::Feature;
using isa::Op;

constexpr Family kAluFamilies[] = {Family::Unary, Family::Binary};
constexpr Family kCompare[] = {Family::Compare};
constexpr Family kPredOp[] = {Family::PredOp};
constexpr Family kBallot[] = {Family::Ballot};
constexpr Family kVote[] = {Family::Vote};
constexpr Family kBinary[] = {Family::Binary};
constexpr Family kAtomics[] = {Family::AtomLane, Family::AtomWarp};
constexpr Family kAtomLane[] = {Family::AtomLane};

// alu.div, alu.rem: the operations that raise div_zero (alu.div.zero).
constexpr std::string_view kDivisionClauses[] = {"alu.div", "alu.rem"};

// The order of generate.cpp's former list of ALU operations.
constexpr Op kAluFirst[] = {Op::Add,  Op::Sub,   Op::Mul,    Op::Xor, Op::And, Op::Or,
                            Op::Shl,  Op::Shr,   Op::Sra,    Op::Min, Op::Max, Op::MinU,
                            Op::MaxU, Op::MulHi, Op::MulHiU, Op::Mov, Op::Not, Op::Popc,
                            Op::Div,  Op::DivU,  Op::Rem,    Op::RemU};
// The former list of comparisons began with cmp.lt (the default of Cond::cmp).
constexpr Op kCompareFirst[] = {Op::CmpLt};
// The counter words, in the order of the `counters` buffer (spec/oracles.md:
// add, and, or, xor, min, max, min.u, max.u; counter_init gives their values).
constexpr Op kCounterFirst[] = {Op::AtomAdd, Op::AtomAnd, Op::AtomOr,   Op::AtomXor,
                                Op::AtomMin, Op::AtomMax, Op::AtomMinU, Op::AtomMaxU};
constexpr Excluded kCounterExcluded[] = {
    {Op::AtomSub,
     "not one of the eight counter operations of spec/oracles.md (`counters` has one word "
     "per operation); drawn on `shared` by the atomic pool"},
    {Op::AtomXchg, "the final word is the A of whichever lane goes last: it depends on the order"},
    {Op::AtomCas, "whether a lane's compare succeeds depends on the order of the lanes"},
    {Op::AtomLock, "takes no operand (atom.lock); not a counter operation of spec/oracles.md"},
    {Op::AtomUnlock, "takes no operand (atom.unlock); not a counter operation of spec/oracles.md"},
};

constexpr Pool kPools[] = {
    {.id = Id::Alu,
     .name = "alu",
     .families = kAluFamilies,
     .feature = Feature::alu,
     .clauses = {},
     .excluded = {},
     .first = kAluFirst},
    {.id = Id::Compare,
     .name = "compare",
     .families = kCompare,
     .feature = Feature::alu,
     .clauses = {},
     .excluded = {},
     .first = kCompareFirst},
    {.id = Id::PredOp,
     .name = "pred_op",
     .families = kPredOp,
     .feature = Feature::alu,
     .clauses = {},
     .excluded = {},
     .first = {}},
    {.id = Id::Ballot,
     .name = "ballot",
     .families = kBallot,
     .feature = Feature::xlane,
     .clauses = {},
     .excluded = {},
     .first = {}},
    {.id = Id::Vote,
     .name = "vote",
     .families = kVote,
     .feature = Feature::xlane,
     .clauses = {},
     .excluded = {},
     .first = {}},
    {.id = Id::Division,
     .name = "division",
     .families = kBinary,
     .feature = Feature::alu,
     .clauses = kDivisionClauses,
     .excluded = {},
     .first = {}},
    {.id = Id::Atomic,
     .name = "atomic",
     .families = kAtomics,
     .feature = Feature::watomic,
     .clauses = {},
     .excluded = {},
     .first = {}},
    {.id = Id::Counter,
     .name = "counter",
     .families = kAtomLane,
     .feature = Feature::watomic,
     .clauses = {},
     .excluded = kCounterExcluded,
     .first = kCounterFirst,
     .closed = true},
};
static_assert(std::size(kPools) == static_cast<size_t>(Id::kCount), "a pool is missing");

constexpr Excluded kUnpooled[] = {
    {Op::Sel, "written for a select statement (Kind::Select), its only form"},
    {Op::Ld, "written by load_mnemonic() for the statement's Width (program.cpp)"},
    {Op::LdU8, "written by load_mnemonic() for the statement's Width (program.cpp)"},
    {Op::LdS8, "written by load_mnemonic() for the statement's Width (program.cpp)"},
    {Op::LdU16, "written by load_mnemonic() for the statement's Width (program.cpp)"},
    {Op::LdS16, "written by load_mnemonic() for the statement's Width (program.cpp)"},
    {Op::St, "written by store_mnemonic() for the statement's Width (program.cpp)"},
    {Op::St8, "written by store_mnemonic() for the statement's Width (program.cpp)"},
    {Op::St16, "written by store_mnemonic() for the statement's Width (program.cpp)"},
    {Op::ReadLane, "written for a readlane statement and the atomic broadcast sequences"},
    {Op::Shfl, "written for a shfl statement (Kind::Shfl)"},
    {Op::ShflXor, "written for a shfl_xor statement (Kind::ShflXor)"},
    {Op::Bar, "written for a barrier statement and by the barrier-using sequences"},
    {Op::Exit, "written for an exit statement and at the end of the program"},
    {Op::Nop, "written for a nop statement (Kind::Nop)"},
    {Op::Cbr, "part of the printed control flow (if, loop, skip, jump, spin)"},
    {Op::Jmp, "part of the printed control flow (jump, raw if/else)"},
    {Op::Call, "written for a call statement (Kind::Call)"},
    {Op::Ret, "ends each printed function"},
    {Op::Push, "part of a printed raw if (push, invert, pop)"},
    {Op::Invert, "part of a printed raw if/else (push, invert, pop)"},
    {Op::Pop, "part of a printed raw if or loop"},
    {Op::LPush, "part of a printed raw loop (lpush, lnext)"},
    {Op::Brk, "written for a break statement and each loop's guard"},
    {Op::Cont, "written for a continue statement (Kind::Continue)"},
    {Op::LNext, "part of a printed raw loop (lpush, lnext)"},
    {Op::Sys, "written for a sys statement (Kind::Sys)"},
    {Op::TRet, "part of the printed trap handlers (Program::Handler)"},
    {Op::TPause, "part of the printed trap handlers (Program::Handler)"},
    {Op::TClear, "part of the printed trap handlers (Program::Handler)"},
    {Op::FrameLd, "part of the printed trap handlers (Program::Handler)"},
    {Op::FrameSt, "part of the printed trap handlers (Program::Handler)"},
    {Op::VCall, "written for a vcall statement (Kind::VCall)"},
    {Op::SubvBegin, "opens a printed sub-vector region (Kind::Region)"},
    {Op::SubvEnd, "closes a printed sub-vector region (Kind::Region)"},
// preempt.valid.mode: system instructions stand only in system code, which the
// suite's library routine (suites/lib/sysroutine.simtlib) writes; generated code is
// user and handler code.
#define SIMT_CTX_FIELD(id, name, summary)                                                     \
  {Op::CtxSave##id, "system code only, written by the library routine (sysroutine.simtlib)"}, \
      {Op::CtxLoad##id, "system code only, written by the library routine (sysroutine.simtlib)"},
#include "isa/context.def"
#undef SIMT_CTX_FIELD
    {Op::SysRet, "system code only, written by the library routine (sysroutine.simtlib)"},
};

std::vector<Op> members(const Pool& p) {
  std::vector<Op> v(p.first.begin(), p.first.end());
  if (p.closed) return v;
  for (const isa::OpInfo& row : isa::table()) {
    if (!selects(p, row)) continue;
    if (std::ranges::find(v, row.op) != v.end()) continue;
    if (std::ranges::any_of(p.excluded, [&](const Excluded& e) { return e.op == row.op; }))
      continue;
    v.push_back(row.op);
  }
  return v;
}

}  // namespace

std::span<const Pool> all() {
  return kPools;
}
const Pool& pool(Id id) {
  return kPools[static_cast<size_t>(id)];
}

bool selects(const Pool& p, const isa::OpInfo& row) {
  return std::ranges::find(p.families, row.family) != p.families.end() &&
         (!p.feature || *p.feature == row.feature) &&
         (p.clauses.empty() || std::ranges::find(p.clauses, row.clause) != p.clauses.end());
}

const std::vector<Op>& ops(Id id) {
  static const auto all_ops = [] {
    std::array<std::vector<Op>, static_cast<size_t>(Id::kCount)> a;
    for (const Pool& p : kPools) a[static_cast<size_t>(p.id)] = members(p);
    return a;
  }();
  return all_ops[static_cast<size_t>(id)];
}

const std::vector<std::string>& mnemonics(Id id) {
  static const auto all_names = [] {
    std::array<std::vector<std::string>, static_cast<size_t>(Id::kCount)> a;
    for (const Pool& p : kPools)
      for (Op op : ops(p.id)) a[static_cast<size_t>(p.id)].emplace_back(isa::info(op).mnemonic);
    return a;
  }();
  return all_names[static_cast<size_t>(id)];
}

bool contains(Id id, std::string_view mnemonic) {
  const auto& v = mnemonics(id);
  return std::ranges::find(v, mnemonic) != v.end();
}

std::span<const Excluded> unpooled() {
  return kUnpooled;
}

}  // namespace simt::gen::pools
