// The control-flow module (interpreter/flow) and the instruction table's Control and
// Mode columns it reads: the columns agree with what the spec's clauses say of each
// instruction (the clauses are read from spec/, so a row whose column disagrees, or
// a clause that names another instruction, fails here), and the successors, the
// region pairing and the abstract mask stack behave as the flow checks need.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include "flow/flow.h"
#include "isa/isa.h"
#include "support.h"

namespace simt {
namespace {

using flow::Entry;
using flow::Fault;
using flow::Stack;
using isa::Control;
using isa::Mode;
using Names = std::set<std::string>;

// The paragraph that defines clause `id` in spec/`file`, with line breaks as spaces.
std::string clause_text(const std::string& file, const std::string& id) {
  const std::string text = test::read_all(test::source_path("spec/" + file));
  const size_t a = text.find("**[" + id + "]**");
  if (a == std::string::npos) {
    ADD_FAILURE() << "spec/" << file << " does not define " << id;
    return "";
  }
  std::string p = text.substr(a, text.find("\n\n", a) - a);
  for (char& c : p)
    if (c == '\n') c = ' ';
  return p;
}

// The part of `text` from the end of `from` (the start if empty) to `to`.
std::string part(const std::string& text, const std::string& from, const std::string& to) {
  const size_t a = from.empty() ? 0 : text.find(from);
  const size_t b = text.find(to, a == std::string::npos ? 0 : a);
  if (a == std::string::npos || b == std::string::npos) {
    ADD_FAILURE() << "'" << from << "' ... '" << to << "' not found in: " << text;
    return "";
  }
  return text.substr(a + from.size(), b - a - from.size());
}

// The mnemonics quoted in `text` (`mnemonic`).
Names mnemonics_in(const std::string& text) {
  Names out;
  static const std::regex quoted("`([a-z0-9.]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it)
    if (isa::find((*it)[1].str())) out.insert((*it)[1].str());
  return out;
}

// The mnemonics of the rows for which `pred` holds.
template <typename Pred>
Names rows(Pred pred) {
  Names out;
  for (const auto& row : isa::table())
    if (pred(row)) out.insert(std::string(row.mnemonic));
  return out;
}

// ---- the columns -------------------------------------------------------------------

TEST(FlowTable, OnlyControlFamilyRowsAffectControl) {
  for (const auto& row : isa::table()) {
    if (row.family == isa::Family::Control) continue;
    EXPECT_EQ(row.control, Control::Next) << row.mnemonic << " is not of family Control";
    EXPECT_EQ(row.mode, Mode::Any) << row.mnemonic << " is not of family Control";
  }
}

// The analyses take a jmp's, cbr's or call's target from its last operand, and
// modesel reads cbr's predicate from its first.
TEST(FlowTable, LabelOperandsAreTheTargetsOfJumpsBranchesAndCalls) {
  for (const auto& row : isa::table()) {
    const auto kinds = row.sig.view();
    const bool label =
        std::find(kinds.begin(), kinds.end(), isa::OperandKind::Label) != kinds.end();
    const bool targets = row.control == Control::Jump || row.control == Control::Branch ||
                         row.control == Control::Call;
    EXPECT_EQ(label, targets) << row.mnemonic;
    if (targets) {
      EXPECT_EQ(kinds.back(), isa::OperandKind::Label) << row.mnemonic;
    }
    if (row.control == Control::Branch) {
      EXPECT_EQ(kinds.front(), isa::OperandKind::Pred) << row.mnemonic;
    }
  }
}

TEST(FlowTable, EveryKindAndModeHasARowAndADistinctName) {
  std::set<Control> kinds;
  std::set<Mode> modes;
  for (const auto& row : isa::table()) kinds.insert(row.control), modes.insert(row.mode);
  EXPECT_EQ(kinds.size(), isa::kControlCount);
  EXPECT_EQ(modes.size(), isa::kModeCount);
  std::set<std::string_view> control_names, mode_names;
  for (size_t i = 0; i < isa::kControlCount; ++i)
    control_names.insert(isa::control_name(static_cast<Control>(i)));
  for (size_t i = 0; i < isa::kModeCount; ++i)
    mode_names.insert(isa::mode_name(static_cast<Mode>(i)));
  EXPECT_EQ(control_names.size(), isa::kControlCount);
  EXPECT_EQ(mode_names.size(), isa::kModeCount);
  EXPECT_FALSE(control_names.contains("?"));
  EXPECT_FALSE(mode_names.contains("?"));
}

// preempt.valid.mode names the system instructions: `ctx.save.F`, `ctx.load.F` and
// `sysret`, with F each field preempt.ctx lists.
Names system_instructions() {
  const std::string list =
      part(clause_text("preempt.md", "preempt.valid.mode"), "only system instructions (", ")");
  const std::string fields = part(clause_text("preempt.md", "preempt.ctx"),
                                  "The fields F are those of the slot table:", ". Executed");
  Names out = mnemonics_in(list);
  static const std::regex tmpl("`([a-z.]+)\\.F`"), field("`([a-z]+)`");
  for (std::sregex_iterator t(list.begin(), list.end(), tmpl), end; t != end; ++t)
    for (std::sregex_iterator f(fields.begin(), fields.end(), field); f != end; ++f)
      out.insert((*t)[1].str() + "." + (*f)[1].str());
  return out;
}

// trap.valid.mode and wave.valid.handler name the instructions that user code or
// handler code may not hold; preempt.valid.mode those that only system code holds.
TEST(FlowSpec, ModeColumnIsWhatTrapValidModeAndWaveValidHandlerSay) {
  const std::string mode = clause_text("trap.md", "trap.valid.mode");
  const Names handler_only = mnemonics_in(part(mode, "", "not user code"));
  const Names user_only = mnemonics_in(part(mode, "not user code", "not handler code"));
  const Names switching =
      mnemonics_in(part(clause_text("wave.md", "wave.valid.handler"), "", "not handler code"));
  EXPECT_EQ(handler_only, (Names{"tret", "tpause", "tclear", "frame.ld", "frame.st"}));
  EXPECT_EQ(rows([](auto& r) { return r.mode == Mode::Handler; }), handler_only);
  EXPECT_EQ(rows([](auto& r) { return r.mode == Mode::User; }), user_only);
  EXPECT_EQ(rows([](auto& r) { return r.mode == Mode::Switch; }), switching);
  const Names system = system_instructions();
  EXPECT_EQ(system.size(), 2 * isa::kCtxFieldCount + 1);
  EXPECT_TRUE(system.contains("sysret"));
  EXPECT_EQ(rows([](auto& r) { return r.mode == Mode::System; }), system);
  EXPECT_EQ(user_only.size() + switching.size() + handler_only.size() + system.size(),
            rows([](auto& r) { return r.mode != Mode::Any; }).size());
}

Names operator|(Names a, const Names& b) {
  a.insert(b.begin(), b.end());
  return a;
}
Names operator-(Names a, const Names& b) {
  for (const auto& n : b) a.erase(n);
  return a;
}

// Abstract stacks, entries from the bottom up.
struct Stacks {
  flow::Stacks S;
  Stack empty = flow::kEmpty;
  Stack if_ = S.push(flow::kEmpty, Entry::If);
  Stack loop = S.push(flow::kEmpty, Entry::Loop);
  Stack region = S.push(flow::kEmpty, Entry::Region);
  Stack loop_region = S.push(loop, Entry::Region);
  Stack region_if = S.push(region, Entry::If);
  // The rows whose transfer from `s` faults with one of `which`.
  Names faulting(Stack s, const std::set<Fault>& which) {
    return rows([&](const isa::OpInfo& r) { return which.contains(S.step(s, r.control).fault); });
  }
};

// valid.flow.pop: "`pop` and `invert` have an entry of their context to act on;
// `invert` and `lnext` find an entry of the right kind on top ...; `brk` and `cont`
// have a *loop* entry of their context."
TEST(FlowSpec, TransferFaultsAreWhatValidFlowPopSays) {
  const std::string pop = clause_text("validation.md", "valid.flow.pop");
  Stacks f;
  const std::set<Fault> on_top{Fault::LoopOnTop, Fault::NoLoopOnTop};
  EXPECT_EQ(f.faulting(f.empty, {Fault::NoEntry}), mnemonics_in(part(pop, "", "act on;")));
  EXPECT_EQ(f.faulting(f.if_, on_top) | f.faulting(f.loop, on_top),
            mnemonics_in(part(pop, "act on;", "on top")));
  EXPECT_EQ(f.faulting(f.if_, {Fault::NoLoop}), mnemonics_in(part(pop, "on top", "of their")));
  // With no region open nothing else faults but subv.end (wave.valid.balance).
  const std::set<Fault> any{Fault::NoEntry,     Fault::LoopOnTop, Fault::NoLoop,
                            Fault::NoLoopOnTop, Fault::AtFloor,   Fault::RegionOpen};
  EXPECT_EQ(f.faulting(f.empty, any) | f.faulting(f.if_, any) | f.faulting(f.loop, any),
            mnemonics_in(pop) | Names{"subv.end"});
}

// wave.valid.balance: "the flow checks treat `subv.begin` as opening a region entry
// of the abstract stack and `subv.end` as closing it, which it must find on top.
// Inside a region, `pop`, `invert` and `lnext` need an entry opened inside it, and
// `brk` and `cont` a loop opened inside it."
TEST(FlowSpec, TransferAtARegionIsWhatWaveValidBalanceSays) {
  const std::string balance = clause_text("wave.md", "wave.valid.balance");
  Stacks f;
  EXPECT_EQ(rows([&](const isa::OpInfo& r) {
              const Stack after = f.S.step(f.if_, r.control).after;
              return f.S.size(after) == 2 && f.S.top(after) == Entry::Region;
            }),
            mnemonics_in(part(balance, "treat", "as opening")));
  EXPECT_EQ(f.faulting(f.region_if, {Fault::RegionOpen}) | f.faulting(f.empty, {Fault::RegionOpen}),
            mnemonics_in(part(balance, "entry", "as closing")));
  EXPECT_EQ(f.S.step(f.region, Control::RegionEnd).fault, Fault::None);
  EXPECT_EQ(f.S.step(f.region, Control::RegionEnd).after, flow::kEmpty);
  EXPECT_EQ(f.faulting(f.region, {Fault::AtFloor}),
            mnemonics_in(part(balance, "Inside a region,", "need an entry")));
  EXPECT_EQ(f.faulting(f.loop_region, {Fault::NoLoop}),
            mnemonics_in(part(balance, "need an entry opened inside it, and", "a loop opened")));
  // Entries opened inside the region are in reach.
  const Stack loop_region_loop = f.S.push(f.loop_region, Entry::Loop);
  for (const auto& row : isa::table()) {
    if (row.control == Control::RegionEnd) continue;
    EXPECT_EQ(f.S.step(f.region_if, row.control).fault == Fault::None,
              row.control != Control::LoopControl && row.control != Control::LoopNext)
        << row.mnemonic;
    EXPECT_EQ(f.S.step(loop_region_loop, row.control).fault == Fault::None,
              row.control != Control::Invert)
        << row.mnemonic;
  }
}

// wave.valid.branch: "a `jmp` or `cbr` in a region targets an instruction of the
// same region ...; `call`, `vcall` and `ret` do not appear in a region": those are
// the rows with a target in their context and the rows whose control leaves it.
TEST(FlowSpec, EdgesAreWhatWaveValidBranchSays) {
  const std::string branch = clause_text("wave.md", "wave.valid.branch");
  const Names targeting = mnemonics_in(part(branch, "except through", "in a region targets")) -
                          Names{"subv.begin", "subv.end"};
  EXPECT_EQ(rows([](const isa::OpInfo& r) { return flow::in_context(r.control, false).target; }),
            targeting);
  EXPECT_EQ(rows([](const isa::OpInfo& r) {
              const flow::Edges e = flow::in_program(r.control, false);
              return e.callees || e.returns;
            }),
            mnemonics_in(part(branch, "is outside it);", "do not appear")));
}

// valid.flow.end: "An `exit` ends the path in the entry context when no entry of
// that context is open"; trap.valid.mode: "`tret` and `tpause` end a path";
// valid.flow.ret: `ret` ends a called context's path; preempt.valid.mode: "`sysret` ends a
// path" of system code.
TEST(FlowSpec, PathEndsAreWhatValidFlowEndAndTrapValidModeSay) {
  EXPECT_EQ(rows([](const isa::OpInfo& r) {
              return flow::in_context(r.control, true).next !=
                     flow::in_context(r.control, false).next;
            }),
            mnemonics_in(
                part(clause_text("validation.md", "valid.flow.end"), "instruction.", "ends the")));
  auto no_edges = [](const flow::Edges& e) {
    return !e.next && !e.target && !e.callees && !e.returns && !e.mate;
  };
  EXPECT_EQ(
      rows([&](const isa::OpInfo& r) { return no_edges(flow::in_context(r.control, false)); }),
      mnemonics_in(
          part(clause_text("trap.md", "trap.valid.mode"), "([valid.flow.calls])", "end a path")) |
          mnemonics_in(part(clause_text("preempt.md", "preempt.valid.mode"),
                            "a context of its own in which", "ends a path")) |
          Names{"ret"});
  EXPECT_EQ(rows([&](const isa::OpInfo& r) { return flow::in_program(r.control, false).returns; }),
            Names{"ret"});
}

// ---- successors ----------------------------------------------------------------

TEST(FlowEdges, ExitEndsThePathOnlyInTheEntryContextWithNoEntryOrInAHandler) {
  using flow::Context;
  EXPECT_TRUE(flow::exit_ends(Context::Main, true));
  EXPECT_FALSE(flow::exit_ends(Context::Main, false));
  EXPECT_TRUE(flow::exit_ends(Context::Handler, false));
  EXPECT_FALSE(flow::exit_ends(Context::Function, true));
}

TEST(FlowEdges, TheThreeViewsOfEachKind) {
  for (size_t i = 0; i < isa::kControlCount; ++i) {
    const auto k = static_cast<Control>(i);
    SCOPED_TRACE(isa::control_name(k));
    const flow::Edges c = flow::in_context(k, false), p = flow::in_program(k, false),
                      s = flow::straight(k);
    // Only jmp cannot go on at the next instruction, whatever the view.
    EXPECT_EQ(s.next, k != Control::Jump);
    EXPECT_EQ(s.target, c.target);
    EXPECT_FALSE(s.callees || s.returns || s.mate || c.callees || c.returns || c.mate);
    // A call goes into its callees across the program, on at the next in its context.
    const bool call = k == Control::Call || k == Control::VectorCall;
    EXPECT_EQ(p.callees, call);
    if (call) {
      EXPECT_TRUE(c.next && !p.next);
    }
    EXPECT_EQ(p.mate, k == Control::RegionBegin || k == Control::RegionEnd);
    EXPECT_EQ(p.target, c.target);
    if (!call && k != Control::Return) {
      EXPECT_EQ(p.next, c.next);
    }
    // Pushes and pops, in the abstract stack too.
    Stacks f;
    const int change = flow::depth_change(k);
    EXPECT_EQ(static_cast<int>(f.S.size(f.S.step(f.if_, k).after)) - 1, change);
  }
}

// ---- regions ---------------------------------------------------------------------

TEST(FlowRegions, PairsEachBeginWithTheNextEnd) {
  using isa::Op;
  const std::vector<Op> code{Op::Nop,     Op::SubvBegin, Op::Add,
                             Op::SubvEnd, Op::SubvBegin, Op::SubvEnd};
  const flow::Regions r = flow::pair_regions(code);
  ASSERT_EQ(r.list.size(), 2u);
  EXPECT_EQ(r.list[0].begin, 1u);
  EXPECT_EQ(r.list[0].end, 3u);
  EXPECT_EQ(r.list[1].begin, 4u);
  EXPECT_EQ(r.list[1].end, 5u);
  EXPECT_TRUE(r.errors.empty());
}

TEST(FlowRegions, ErrorsInProgramOrderAnUnclosedRegionLast) {
  using isa::Op;
  using K = flow::RegionError::Kind;
  // subv.end(0) with none open; begin(1); begin(2) nested in 1; end(3) closes 1; begin(4) unclosed.
  const std::vector<Op> code{Op::SubvEnd, Op::SubvBegin, Op::SubvBegin, Op::SubvEnd, Op::SubvBegin};
  const flow::Regions r = flow::pair_regions(code);
  ASSERT_EQ(r.list.size(), 1u);
  EXPECT_EQ(r.list[0].begin, 1u);
  EXPECT_EQ(r.list[0].end, 3u);
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].kind, K::Unopened);
  EXPECT_EQ(r.errors[0].pc, 0u);
  EXPECT_EQ(r.errors[1].kind, K::Nested);
  EXPECT_EQ(r.errors[1].pc, 2u);
  EXPECT_EQ(r.errors[1].open, 1u);
  EXPECT_EQ(r.errors[2].kind, K::Unclosed);
  EXPECT_EQ(r.errors[2].pc, 4u);
}

// ---- the abstract mask stack -------------------------------------------------------

TEST(FlowStacks, InternedStacksCompareByIdentity) {
  flow::Stacks S;
  const Stack a = S.push(S.push(flow::kEmpty, Entry::If), Entry::Loop);
  const Stack b = S.push(S.push(flow::kEmpty, Entry::If), Entry::Loop);
  const Stack c = S.push(S.push(flow::kEmpty, Entry::Loop), Entry::If);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(S.size(a), 2u);
  EXPECT_EQ(S.top(a), Entry::Loop);
  EXPECT_EQ(S.pop(S.pop(a)), flow::kEmpty);
  EXPECT_TRUE(S.extends(a, S.pop(a)));
  EXPECT_TRUE(S.extends(a, a));
  EXPECT_TRUE(S.extends(a, flow::kEmpty));
  EXPECT_FALSE(S.extends(a, S.pop(c)));
  EXPECT_FALSE(S.extends(S.pop(a), a));
}

TEST(FlowStacks, FloorsAndLoopsAboveThem) {
  flow::Stacks S;
  const Stack loop = S.push(flow::kEmpty, Entry::Loop);
  const Stack region = S.push(loop, Entry::Region);
  const Stack inner = S.push(region, Entry::If);
  EXPECT_EQ(S.floor(inner), 2u);
  EXPECT_FALSE(S.has_loop(inner));  // the loop is below the region
  EXPECT_FALSE(S.loop_above(inner, 2));
  EXPECT_TRUE(S.loop_above(inner, 0));  // an explicit floor below the loop
  EXPECT_TRUE(S.loop_above(inner, 1) == false);
  EXPECT_TRUE(S.has_loop(loop));
  EXPECT_EQ(S.step(inner, Control::LoopControl).fault, Fault::NoLoop);
  EXPECT_EQ(S.step(inner, Control::LoopControl, 0).fault, Fault::None);
  EXPECT_EQ(S.step(inner, Control::Pop, 3).fault, Fault::AtFloor);
  EXPECT_EQ(S.step(inner, Control::Pop).fault, Fault::None);
}

TEST(FlowStacks, DescribeNamesTheKindsFromTheBottomUp) {
  flow::Stacks S;
  EXPECT_EQ(S.describe(flow::kEmpty), "no entry");
  Stack s = S.push(flow::kEmpty, Entry::If);
  EXPECT_EQ(S.describe(s), "1 entry (if)");
  s = S.push(S.push(s, Entry::Loop), Entry::Region);
  EXPECT_EQ(S.describe(s), "3 entries (if, loop, sub-vector region)");
  for (int i = 0; i < 6; ++i) s = S.push(s, Entry::Loop);
  EXPECT_EQ(S.describe(s),
            "9 entries (..., loop, sub-vector region, loop, loop, loop, loop, "
            "loop, loop)");
}

// After a fault the transfer still closes the top entry for pop and subv.end (what
// modesel, which never meets a fault on a validated program, relies on).
TEST(FlowStacks, AfterAFaultPopAndRegionEndStillClose) {
  Stacks f;
  EXPECT_EQ(f.S.step(f.region, Control::Pop).fault, Fault::AtFloor);
  EXPECT_EQ(f.S.step(f.region, Control::Pop).after, flow::kEmpty);
  EXPECT_EQ(f.S.step(f.if_, Control::RegionEnd).fault, Fault::RegionOpen);
  EXPECT_EQ(f.S.step(f.if_, Control::RegionEnd).after, flow::kEmpty);
  EXPECT_EQ(f.S.step(f.empty, Control::Pop).after, flow::kEmpty);
  EXPECT_EQ(f.S.step(f.loop, Control::Invert).after, f.loop);
}

}  // namespace
}  // namespace simt
