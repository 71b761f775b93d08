// Validation (spec/validation.md): the structural checks, the operand and
// declaration checks, and the flow checks along every path of the mask stack.
// Messages are checked loosely (a substring), locations exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "support.h"

namespace simt {
namespace {

using syntax::DiagKind;

// Program text from lines: line i of the list is line i + 1 of the program.
std::string lines(std::initializer_list<std::string_view> ls) {
  std::string s;
  for (auto l : ls) s += std::string(l) + "\n";
  return s;
}

std::vector<syntax::Diagnostic> sorted(const syntax::Diagnostics& d) {
  std::vector<syntax::Diagnostic> out = d.list();
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.span.line != b.span.line ? a.span.line < b.span.line : a.span.col < b.span.col;
  });
  return out;
}

std::string show(const syntax::Diagnostics& d) {
  return d.format("test");
}

host::LoadOptions no_flow() {
  host::LoadOptions o;
  o.validate_flow = false;
  return o;
}

// The program loads.
void expect_valid(const std::string& src, host::LoadOptions opt = {}) {
  SCOPED_TRACE(testing::Message() << "program:\n" << src);
  auto r = test::load(src, opt);
  EXPECT_TRUE(r.loaded.has_value()) << show(r.diags);
}

// The program is rejected with exactly one `invalid program` diagnostic at line:col.
void expect_invalid(const std::string& src, uint32_t line, uint32_t col, std::string_view substr,
                    host::LoadOptions opt = {}) {
  SCOPED_TRACE(testing::Message() << "program:\n" << src);
  auto r = test::load(src, opt);
  ASSERT_FALSE(r.loaded.has_value());
  auto ds = sorted(r.diags);
  ASSERT_EQ(ds.size(), 1u) << show(r.diags);
  EXPECT_EQ(ds[0].kind, DiagKind::Invalid) << show(r.diags);
  EXPECT_EQ(ds[0].span.line, line) << show(r.diags);
  EXPECT_EQ(ds[0].span.col, col) << show(r.diags);
  EXPECT_NE(ds[0].message.find(substr), std::string::npos)
      << "message: " << ds[0].message << "\nexpected to contain: " << substr;
}

// The program is rejected, and one of its `invalid program` diagnostics is at
// line:col and contains `substr`.
void expect_invalid_among(const std::string& src, uint32_t line, uint32_t col,
                          std::string_view substr) {
  SCOPED_TRACE(testing::Message() << "program:\n" << src);
  auto r = test::load(src);
  ASSERT_FALSE(r.loaded.has_value());
  bool found = false;
  for (const auto& d : r.diags.list())
    found = found || (d.kind == DiagKind::Invalid && d.span.line == line && d.span.col == col &&
                      d.message.find(substr) != std::string::npos);
  EXPECT_TRUE(found) << "no diagnostic at " << line << ":" << col << " containing '" << substr
                     << "' among:\n"
                     << show(r.diags);
}

// ---- valid.struct.nesting ---------------------------------------------------------

TEST(StructNesting, WellNestedBlocks) {
  expect_valid(lines({
      "    cmp.eq p0, v0, 0",
      "    loop",
      "        if p0",
      "            loop",
      "                break",
      "            endloop",
      "        else",
      "            if !p0",
      "                continue p0",
      "            endif",
      "        endif",
      "        break",
      "    endloop",
      "    exit",
  }));
}

TEST(StructNesting, UnclosedIfIsReportedAtTheIf) {
  expect_invalid(lines({"    nop", "  if p0", "    nop", "    exit"}), 2, 3,
                 "'if' is never closed");
  expect_invalid_among(lines({"    loop", "    break", "    if p1", "    endloop", "    exit"}), 4,
                       5, "'endloop' closes the 'if' on line 3");
}

TEST(StructNesting, UnclosedLoopIsReportedAtTheLoop) {
  expect_invalid(lines({"    nop", "    loop", "      break", "    exit"}), 2, 5,
                 "'loop' is never closed");
}

TEST(StructNesting, StrayClosers) {
  expect_invalid(lines({"    nop", "    endloop", "    exit"}), 2, 5, "'endloop' without");
  expect_invalid(lines({"    endif", "    exit"}), 1, 5, "'endif' without");
  expect_invalid(lines({"    loop", "    break", "      endif", "    endloop", "    exit"}), 3, 7,
                 "'endif' closes the 'loop' on line 1");
}

TEST(StructNesting, EveryProblemIsReported) {
  auto r = test::load(lines({"    endif", "    if p0", "    loop", "    else", "    exit"}));
  ASSERT_FALSE(r.loaded.has_value());
  auto ds = sorted(r.diags);
  ASSERT_EQ(ds.size(), 4u) << show(r.diags);
  EXPECT_EQ(ds[0].span.line, 1u);  // stray endif
  EXPECT_EQ(ds[1].span.line, 2u);  // unclosed if
  EXPECT_EQ(ds[2].span.line, 3u);  // unclosed loop
  EXPECT_EQ(ds[3].span.line, 4u);  // else not directly inside the if
}

// valid.struct.nesting: crossed blocks give an error at the endif (which closes
// nothing) and one at the if left open (the endloop closes the loop); the if's is
// the first.
TEST(StructNesting, CrossedBlocksAreReportedAtTheEndifAndTheIf) {
  auto r = test::load(lines(
      {"    nop", "    if p0", "    loop", "    break", "    endif", "    endloop", "    exit"}));
  ASSERT_FALSE(r.loaded.has_value());
  auto ds = sorted(r.diags);
  ASSERT_EQ(ds.size(), 2u) << show(r.diags);
  EXPECT_EQ(ds[0].span.line, 2u);
  EXPECT_NE(ds[0].message.find("'if' is never closed"), std::string::npos);
  EXPECT_EQ(ds[1].span.line, 5u);
  EXPECT_NE(ds[1].message.find("'endif' closes the 'loop' on line 3"), std::string::npos);
  EXPECT_EQ(r.diags.first().span.line, 2u);
}

// ---- valid.struct.else -----------------------------------------------------------

TEST(StructElse, ElseTwice) {
  expect_invalid(
      lines({"    if p0", "    nop", "    else", "    nop", "   else", "    endif", "    exit"}), 5,
      4, "second 'else' for the 'if' on line 1");
}

TEST(StructElse, ElseOutsideIf) {
  expect_invalid(lines({"    else", "    exit"}), 1, 5, "'else' without a matching 'if'");
  // Directly inside: not inside a loop that is inside the if.
  expect_invalid(lines({"    if p0", "    loop", "      else", "      break", "    endloop",
                        "    endif", "    exit"}),
                 3, 7, "'else'");
  // An inner if's else does not count for the outer if.
  expect_valid(lines({"    if p0", "      if p1", "      else", "      endif", "    else",
                      "    endif", "    exit"}));
}

// ---- valid.struct.loopctl ------------------------------------------------------------

TEST(StructLoopCtl, BreakAndContinueOutsideLoop) {
  expect_invalid(lines({"    nop", "    break", "    exit"}), 2, 5, "'break' outside of a loop");
  expect_invalid(lines({"    if p0", "      continue p1", "    endif", "    exit"}), 2, 7,
                 "'continue' outside of a loop");
  expect_invalid(lines({"    loop", "      break", "    endloop", "    break p0", "    exit"}), 4,
                 5, "'break' outside");
}

TEST(StructLoopCtl, InsideIfsOfTheLoop) {
  expect_valid(lines({"    loop", "      if p0", "        if p1", "          break", "        else",
                      "          continue !p2", "        endif", "      endif", "      break",
                      "    endloop", "    exit"}));
}

// ---- valid.label.unique, valid.label.defined -----------------------------------------

TEST(ValidLabels, DuplicateLabel) {
  expect_invalid(lines({"a:  nop", "    jmp b", "b:", "  a: exit"}), 4, 3,
                 "label 'a' is defined twice");
}

TEST(ValidLabels, UndefinedLabel) {
  expect_invalid(lines({"    cbr p0, nowhere", "    exit"}), 1, 13, "undefined label 'nowhere'");
  expect_invalid(lines({"    nop", "    call f", "    exit"}), 2, 10, "undefined label 'f'");
}

TEST(ValidLabels, LabelAtTheEndAndGeneratedLoopLabels) {
  // A user label named like a generated one does not clash (branch.struct.expand).
  expect_valid(lines({"__loop0: nop", "    loop", "      break", "    endloop", "    jmp fin",
                      "__loop1:", "fin: exit"}));
}

// ---- valid.reg.range ----------------------------------------------------------------

TEST(RegRange, DefaultsAre32Registers) {
  expect_valid(lines({"    mov v31, s31", "    cmp.eq p15, v31, 0", "    exit"}));
  expect_invalid(lines({"    nop", "    mov v32, 0", "    exit"}), 2, 9, "v32");
  expect_invalid(lines({"    add v1, v2, s32", "    exit"}), 1, 17, "s32");
}

TEST(RegRange, AgainstDirectives) {
  expect_valid(lines({".vregs 8", ".sregs 4", "    add v7, v7, s3", "    exit"}));
  expect_invalid(lines({".vregs 8", ".sregs 4", "    add v8, v7, s3", "    exit"}), 3, 9, ".vregs");
  expect_invalid(lines({".vregs 8", ".sregs 4", "    add v7, v7, s4", "    exit"}), 3, 17,
                 ".sregs");
  expect_invalid(lines({".vregs 256", "    mov v256, 0", "    exit"}), 2, 9, "v256");
  expect_valid(lines({".vregs 256", ".sregs 256", "    mov v255, s255", "    exit"}));
}

TEST(RegRange, AgainstOverrides) {
  host::LoadOptions o;
  o.cli.vregs = 4;
  expect_invalid(lines({".vregs 64", "    mov v4, 0", "    exit"}), 2, 9, "v4", o);
  o.cli.vregs = 5;
  expect_valid(lines({".vregs 2", "    mov v4, 0", "    exit"}), o);
}

TEST(RegRange, PredicatesBelow16) {
  expect_invalid(lines({"    cmp.eq p16, v0, 0", "    exit"}), 1, 12, "p16");
  expect_invalid(lines({"    cbr !p99, l", "l:  exit"}), 1, 9, "p99");
  // Registers in memory operands and in structured statements count too; a generated
  // instruction keeps the location of its statement (branch.struct.expand).
  expect_invalid(lines({".buffer b u32[4] out", "    ld v1, b[v40]", "    exit"}), 2, 12, "v40");
  expect_invalid(lines({"    if p20", "    endif", "    exit"}), 1, 5, "p20");
}

// ---- valid.form.uniform ---------------------------------------------------------------

TEST(FormUniform, ScalarFormWithPerLaneSource) {
  expect_invalid(lines({"    add s1, v2, 1", "    exit"}), 1, 13, "v2");
  expect_invalid(lines({"    nop", "    mul s1, s2, %lane", "    exit"}), 2, 17, "%lane");
  expect_invalid(lines({"    mov %exec, v3", "    exit"}), 1, 16, "per-lane");
  expect_invalid(lines({"    not s0, v1", "    exit"}), 1, 13, "per-lane");
}

TEST(FormUniform, ScalarLoadsWithPerLaneAddress) {
  expect_invalid(lines({".buffer b u32[64] in", "    ld s1, b[v2]", "    exit"}), 2, 12,
                 "per-lane");
  expect_invalid(lines({".buffer b u32[64] in", "    ld.u8 s1, b[%lane+4]", "    exit"}), 2, 15,
                 "per-lane");
}

TEST(FormUniform, UniformSourcesAreFine) {
  expect_valid(lines({".buffer b u32[64] inout", "    add s1, s2, %warp", "    mov s3, %exec_hi",
                      "    ld s4, b[s1]", "    ld s5, b[%gwarp+4]", "    ld s6, b[8]",
                      "    add v1, s1, v2", "    ld v2, b[%lane]", "    st b[v1], s1",
                      "    readlane s7, v1, s2", "    ballot s8, p0", "    exit"}));
}

// ---- valid.form.dest ---------------------------------------------------------------------

TEST(FormDest, PtIsNeverADestination) {
  expect_invalid(lines({"    cmp.eq pt, v1, 0", "    exit"}), 1, 12, "pt");
  expect_invalid(lines({"    nop", "    pand pt, p0, p1", "    exit"}), 2, 10, "pt");
  expect_invalid(lines({"    vote.any pt, p0", "    exit"}), 1, 14, "pt");
}

TEST(FormDest, SpecialDestinations) {
  expect_invalid(lines({"    mov %lane, 1", "    exit"}), 1, 9, "read-only");
  expect_invalid(lines({"    mov %wave, s1", "    exit"}), 1, 9, "read-only");
  expect_invalid(lines({"    add %exec, s1, 1", "    exit"}), 1, 9, "only 'mov'");
  expect_invalid(lines({".buffer b u32[4] in", "    ld %exec_lo, b[0]", "    exit"}), 2, 8,
                 "only 'mov'");
  expect_valid(lines(
      {"    mov %exec, s1", "    mov %exec_lo, 0", "    mov %exec_hi, %exec_lo", "    exit"}));
}

// ---- valid.mem.space, valid.buffer.unique ----------------------------------------------

TEST(MemSpace, UnknownBuffer) {
  expect_invalid(lines({".buffer a u32[4] in", "    ld v1, nobuf[v0]", "    exit"}), 2, 12,
                 "no buffer named 'nobuf'");
  expect_invalid(lines({"    st out[0], 1", "    exit"}), 1, 8, "'out'");
}

TEST(MemSpace, SlmNeedsSlmDirective) {
  expect_invalid(lines({"    ld v1, slm[%lane]", "    exit"}), 1, 12, ".slm");
  expect_invalid(lines({".slm 0", "    st slm[0], 1", "    exit"}), 2, 8, ".slm");
  expect_valid(lines({".slm 16", "    st slm[0], 1", "    exit"}));
  // The configuration, not the directive, decides (state.launch.sources).
  host::LoadOptions o;
  o.cli.slm = 64;
  expect_valid(lines({"    st slm[0], 1", "    exit"}), o);
  o.cli.slm = 0;
  expect_invalid(lines({".slm 64", "    st slm[0], 1", "    exit"}), 2, 8, ".slm", o);
}

TEST(BufferUnique, DuplicateBuffer) {
  expect_invalid(lines({".buffer a u32[4] in", "    nop", ".buffer   a u8[2] out", "    exit"}), 3,
                 11, "already declared on line 1");
}

TEST(BufferUnique, BufferNamedSlm) {
  expect_invalid(lines({"    exit", ".buffer slm u32[4] out"}), 2, 9, "'slm' is reserved");
}

// ---- valid.flow.join ---------------------------------------------------------------------

TEST(FlowJoin, JumpIntoTheMiddleOfAnIf) {
  const std::string src = lines({
      "    cmp.eq p0, v0, 0",  // 1
      "    cbr p0, inside",    // 2
      "    if p0",             // 3
      "inside:",               // 4
      "        nop",           // 5: reached with and without the if's entry
      "    endif",             // 6
      "    exit",              // 7
  });
  expect_invalid_among(src, 5, 9, "differs where paths join");
}

TEST(FlowJoin, BackEdgeWithADifferentStack) {
  expect_invalid(lines({"top:", "    push p0", "    jmp top"}), 2, 5, "differs where paths join");
}

// valid.flow.join: the message names the entry kinds of both stacks.
TEST(FlowJoin, MessageNamesTheEntryKinds) {
  // The cbr sends (loop) to join at once; the fall-through path arrives later
  // with (if) (valid.flow.order).
  expect_invalid_among(lines({"    lpush",         // 1
                              "    cbr p0, join",  // 2
                              "    pop",           // 3
                              "    push p1",       // 4
                              "join:",             // 5
                              "    nop",           // 6
                              "    exit"}),        // 7
                       6, 5, "one path arrives with 1 entry (loop), another with 1 entry (if)");
  expect_invalid_among(
      lines({"    push p0", "    lpush", "    cbr p1, j", "    pop", "j:", "    pop", "    exit"}),
      6, 5, "one path arrives with 2 entries (if, loop), another with 1 entry (if)");
  expect_invalid(lines({"top:", "    push p0", "    jmp top"}), 2, 5,
                 "one path arrives with no entry, another with 1 entry (if)");
}

// valid.flow.join: past eight entries the message names the innermost eight after
// `...` (it named every entry, so a deep join's message grew with the nesting).
TEST(FlowJoin, MessageNamesTheInnermostEightEntries) {
  // `depth` entries (a loop, then ifs) reach `j` from the cbr; one more if from
  // the fall-through, which arrives second.
  auto program = [](int depth) {
    std::string s = "    lpush\n";
    for (int i = 1; i < depth; ++i) s += "    push p0\n";
    return s + "    cbr p1, j\n    push p2\nj:\n    nop\n    exit\n";
  };
  // The join is at `nop`, on line depth + 4.
  expect_invalid_among(program(7), 11, 5,
                       "one path arrives with 7 entries (loop, if, if, if, if, if, if), another "
                       "with 8 entries (loop, if, if, if, if, if, if, if)");
  expect_invalid_among(program(40), 44, 5,
                       "one path arrives with 40 entries (..., if, if, if, if, if, if, if, if), "
                       "another with 41 entries (..., if, if, if, if, if, if, if, if)");
}

// valid.flow.order: breadth-first, fall-through before the branch target; the
// first stack to reach an instruction is its stack and a later different one is
// the error there.
TEST(FlowOrder, TheFirstArrivalFixesTheStack) {
  // pc 0 (cbr) queues pc 1 (push), then pc 3 (b) with no entry. pc 3 is a pop:
  // with no entry, an error there; the push's path arrives at b later, with a
  // different stack, which is also reported at b but is the same instruction.
  expect_invalid(lines({"    cbr p0, b",  // 1
                        "    push p1",    // 2
                        "    jmp b",      // 3
                        "b:",             // 4
                        "    pop",        // 5
                        "    exit"}),     // 6
                 5, 5, "pop with no push open");
  // Here the fall-through path reaches b first, with (if): the pop is fine on
  // it; the cbr's branch arrives with no entry and the join is reported at b.
  auto r = test::load(lines({"    cbr p0, b",  // 1
                             "    push p1",    // 2
                             "b:",             // 3
                             "    pop",        // 4
                             "    exit"}));    // 5
  ASSERT_FALSE(r.loaded.has_value());
  auto ds = sorted(r.diags);
  ASSERT_EQ(ds.size(), 1u) << show(r.diags);
  EXPECT_EQ(ds[0].span.line, 4u);
  EXPECT_NE(ds[0].message.find("one path arrives with no entry, another with 1 entry (if)"),
            std::string::npos)
      << show(r.diags);
}

TEST(FlowJoin, SameStackOnBothPathsIsFine) {
  expect_valid(lines({"    cbr p0, skip", "    add v1, v1, 1", "skip:", "    push p1",
                      "    cbr p2, join", "    nop", "join:", "    pop", "    exit"}));
}

// ---- valid.flow.pop --------------------------------------------------------------------

TEST(FlowPop, PopWithoutPush) {
  expect_invalid(lines({"    nop", "    pop", "    exit"}), 2, 5, "pop with no push open");
  expect_invalid(lines({"    push p0", "    pop", "    pop", "    exit"}), 3, 5, "pop");
}

TEST(FlowPop, InvertNeedsAnIfEntryOnTop) {
  expect_invalid(lines({"    invert", "    exit"}), 1, 5, "invert");
  expect_invalid(lines({"    lpush", "    invert", "    pop", "    exit"}), 2, 5, "invert");
  expect_valid(lines({"    lpush", "    push p0", "    invert", "    pop", "    pop", "    exit"}));
}

TEST(FlowPop, LNextNeedsALoopEntryOnTop) {
  expect_invalid(lines({"    lnext", "    exit"}), 1, 5, "lnext");
  expect_invalid(lines({"    lpush", "    push p0", "    lnext", "    pop", "    pop", "    exit"}),
                 3, 5, "lnext");
}

TEST(FlowPop, BrkAndContNeedALoopEntry) {
  expect_invalid(lines({"    brk p0", "    exit"}), 1, 5, "brk");
  expect_invalid(lines({"    push p1", "    cont p0", "    pop", "    exit"}), 2, 5, "cont");
  // A loop entry below an if entry is enough.
  expect_valid(lines(
      {"    lpush", "    push p1", "    brk p0", "    cont p2", "    pop", "    pop", "    exit"}));
}

// ---- valid.flow.ret ----------------------------------------------------------------------

TEST(FlowRet, RetInMain) {
  expect_invalid(lines({"    nop", "    ret"}), 2, 5, "ret outside a called function");
  // Reached from the entry by falling into a function body.
  expect_invalid_among(lines({"    call f", "f:  nop", "    ret"}), 3, 5, "ret outside");
}

TEST(FlowRet, RetWithAnOpenEntryInAFunction) {
  expect_invalid(lines({"    call f", "    exit", "f:", "    push p0", "    ret"}), 5, 5,
                 "ret with 1 mask-stack entry still open");
  expect_invalid(
      lines({"    call f", "    exit", "f:  lpush", "    push p0", "    pop", "    ret"}), 6, 5,
      "still open");
}

TEST(FlowRet, BalancedFunctionIsFine) {
  expect_valid(lines({"    push p0", "    call f", "    pop", "    exit", "f:  push p1",
                      "    invert", "    pop", "    ret"}));
}

// ---- valid.flow.end ----------------------------------------------------------------------

TEST(FlowEnd, FallingOffTheEnd) {
  expect_invalid(lines({"    nop", "    add v1, v1, 1"}), 2, 5, "past the end");
  expect_invalid(lines({"    cbr p0, end", "    exit", "end:"}), 1, 5, "past the end");
  expect_invalid(lines({"    jmp end", "end:"}), 1, 5, "past the end");
}

TEST(FlowEnd, EmptyProgramRunsPastTheEnd) {
  auto r = test::load("; nothing\n.wave 8\n");
  EXPECT_FALSE(r.loaded.has_value());
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags.list()[0].kind, DiagKind::Invalid);
}

TEST(FlowEnd, ExitAtTopLevelEndsThePath) {
  expect_valid(lines({"    exit"}));
  // Unreachable code after the exit may fall off the end.
  expect_valid(lines({"    exit", "    nop"}));
  expect_valid(lines({"    lpush", "    brk pt", "    lnext", "    pop", "    exit"}));
}

TEST(FlowEnd, ExitInsideAnIfFallsThrough) {
  expect_valid(lines({"    if p0", "        exit", "    endif", "    exit"}));
  // With nothing after the endif the path runs off the end.
  expect_invalid(lines({"    if p0", "        exit", "    endif"}), 3, 5, "past the end");
  expect_invalid(lines({"    push p0", "    exit"}), 2, 5, "past the end");
  // Inside a loop too.
  expect_invalid(lines({"    loop", "      exit", "    endloop"}), 3, 5, "past the end");
}

TEST(FlowEnd, ExitInAFunctionFallsThrough) {
  // In a called context exit never ends the path: the caller's lanes may remain.
  expect_invalid(lines({"    call f", "    exit", "f:  exit"}), 3, 5, "past the end");
  expect_valid(lines({"    call f", "    exit", "f:  exit", "    ret"}));
}

TEST(FlowEnd, CallToTheEndOfTheProgram) {
  // The called context starts past the last instruction (valid.flow.end,
  // valid.flow.calls: such a call is rejected).
  auto r = test::load(lines({"    call end", "    exit", "end:"}));
  ASSERT_FALSE(r.loaded.has_value());
  ASSERT_EQ(r.diags.size(), 1u) << show(r.diags);
  EXPECT_EQ(r.diags.list()[0].kind, DiagKind::Invalid);
  EXPECT_EQ(r.diags.list()[0].span.line, 1u) << show(r.diags);  // at the call
}

// ---- valid.flow.calls ----------------------------------------------------------------------

TEST(FlowCalls, RecursionIsFine) {
  expect_valid(lines({
      "    call f",
      "    exit",
      "f:  cmp.gt p0, v0, 0",
      "    if p0",
      "        sub v0, v0, 1",
      "        call f",
      "    endif",
      "    ret",
  }));
}

TEST(FlowCalls, CalleeIsASeparateContext) {
  // The caller's open entry is not the callee's to pop.
  expect_invalid(lines({"    push p0", "    call f", "    pop", "    exit", "f:  pop", "    ret"}),
                 5, 5, "pop with no push open in this function");
  // Nor is the caller's loop the callee's to break.
  expect_invalid(lines({"    lpush", "l:  call f", "    lnext", "    cbr pt, l", "    pop",
                        "    exit", "f:  brk pt", "    ret"}),
                 7, 5, "brk outside of any loop in this function");
  // A function falling off the end.
  expect_invalid(lines({"    call f", "    exit", "f:  nop"}), 3, 5, "inside the function");
}

TEST(FlowCalls, CallToTheProgramEntryIsACalledContextToo) {
  // PC 0 is also a call target here, so it is checked both as the entry and as a
  // called context (valid.flow.calls). As a called context its exit falls through
  // (valid.flow.end) and the path reaches the end after the second exit.
  const std::string src = lines({
      "top:   cbr p0, other",  // 1
      "       exit",           // 2
      "other: call top",       // 3
      "       exit",           // 4
  });
  auto r = test::load(src);
  EXPECT_FALSE(r.loaded.has_value());
  expect_invalid_among(src, 4, 8, "past the end");
}

TEST(FlowCalls, CallersAtDifferentDepthsShareOneCheck) {
  expect_valid(lines({"    call f", "    push p0", "    call f", "    lpush", "    call f",
                      "    pop", "    pop", "    exit", "f:  nop", "    ret"}));
}

TEST(FlowCalls, CallLeavesTheCallersStackUnchanged) {
  expect_valid(lines({"    push p0", "    call f", "    pop", "    exit", "f:  ret"}));
  expect_invalid(lines({"    call f", "    pop", "    exit", "f:  ret"}), 2, 5, "pop");
}

// ---- valid.scope -----------------------------------------------------------------------------

TEST(Scope, DepthIsCheckedAtRunTime) {
  std::string deep = ".wave 4\n.mask_depth 4\n";
  for (int i = 0; i < 10; ++i) deep += "    if pt\n";
  for (int i = 0; i < 10; ++i) deep += "    endif\n";
  deep += "    exit\n";
  auto r = test::run(deep);
  ASSERT_TRUE(r.ok()) << r.diags;
  EXPECT_EQ(r.status(), exec::Status::Trapped);
  ASSERT_TRUE(r.outcome->event.has_value());
  EXPECT_EQ(r.outcome->event->code, isa::Event::MaskOverflow);
  // Unbounded recursion validates; it overflows the PC stack when run.
  auto rec = test::run(lines({".wave 4", "    call f", "    exit", "f:  call f", "    ret"}));
  ASSERT_TRUE(rec.ok()) << rec.diags;
  EXPECT_EQ(rec.status(), exec::Status::Trapped);
  EXPECT_EQ(rec.outcome->event->code, isa::Event::CallOverflow);
}

TEST(Scope, BarrierUniformityIsNotChecked) {
  expect_valid(lines({".warps 2", "    cmp.eq p0, %lane, 0", "    if p0", "        bar",
                      "    endif", "    exit"}));
}

// ---- --no-validate: only the flow checks are skipped --------------------------------------

TEST(NoValidate, SkipsTheFlowChecks) {
  for (const std::string& src : {
           lines({"    pop", "    exit"}),
           lines({"    nop"}),
           lines({"    ret"}),
           lines({"    invert", "    exit"}),
           lines({"    brk p0", "    exit"}),
           lines({"top:", "    push p0", "    jmp top"}),
           lines({"    call f", "    exit", "f:  push p0", "    ret"}),
       }) {
    SCOPED_TRACE(src);
    EXPECT_FALSE(test::load(src).loaded.has_value());
    expect_valid(src, no_flow());
  }
  // What the executor then reports (events instead of validation errors).
  auto r = test::run_unvalidated(lines({".wave 4", "    pop", "    exit"}));
  ASSERT_TRUE(r.ok()) << r.diags;
  EXPECT_EQ(r.status(), exec::Status::Trapped);
  EXPECT_EQ(r.outcome->event->code, isa::Event::MaskUnderflow);
}

TEST(NoValidate, KeepsEveryOtherCheck) {
  const auto o = no_flow();
  expect_invalid(lines({"    if p0", "    exit"}), 1, 5, "never closed", o);
  expect_invalid(lines({"    else", "    exit"}), 1, 5, "'else'", o);
  expect_invalid(lines({"    break", "    exit"}), 1, 5, "'break'", o);
  expect_invalid(lines({"a:  nop", "a:  exit"}), 2, 1, "twice", o);
  expect_invalid(lines({"    jmp nowhere"}), 1, 9, "undefined label", o);
  expect_invalid(lines({"    mov v32, 0", "    exit"}), 1, 9, "v32", o);
  expect_invalid(lines({"    add s1, v1, 0", "    exit"}), 1, 13, "per-lane", o);
  expect_invalid(lines({"    cmp.eq pt, v1, 0", "    exit"}), 1, 12, "pt", o);
  expect_invalid(lines({"    mov %lane, 0", "    exit"}), 1, 9, "read-only", o);
  expect_invalid(lines({"    ld v1, b[0]", "    exit"}), 1, 12, "no buffer", o);
  expect_invalid(lines({"    ld v1, slm[0]", "    exit"}), 1, 12, ".slm", o);
  expect_invalid(lines({".buffer a u8[1] in", ".buffer a u8[1] in", "    exit"}), 2, 9,
                 "already declared", o);
  expect_invalid(lines({".buffer slm u8[1] in", "    exit"}), 1, 9, "reserved", o);
}

// Validation errors are formatted `file:line:col: invalid program: message`.
TEST(ValidFormat, InvalidProgramPrefix) {
  auto r = test::load(lines({"    nop", "    jmp nowhere"}));
  const std::string text = r.diags.format("p.simt");
  EXPECT_EQ(text.rfind("p.simt:2:9: invalid program: ", 0), 0u) << text;
  EXPECT_NE(text.find("'nowhere'"), std::string::npos) << text;
}

// syntax.errors: every error is reported, in order of position, whatever order the
// checks found them in.
TEST(ValidFormat, EveryErrorInOrderOfPosition) {
  auto r = test::load(
      lines({".buffer b u32[4] out", "    mov v40, 0", "    jmp nowhere", "    st c[0], 1",
             "    cmp.eq pt, v1, 0", ".buffer b u8[1] in", "    exit"}));
  ASSERT_FALSE(r.loaded.has_value());
  const std::pair<const char*, const char*> want[] = {{"p:2:9: invalid program: ", "v40"},
                                                      {"p:3:9: invalid program: ", "nowhere"},
                                                      {"p:4:8: invalid program: ", "'c'"},
                                                      {"p:5:12: invalid program: ", "pt"},
                                                      {"p:6:9: invalid program: ", "line 1"}};
  std::vector<std::string> got;
  std::string text = r.diags.format("p");
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    got.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  ASSERT_EQ(got.size(), std::size(want)) << text;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].rfind(want[i].first, 0), 0u) << got[i];
    EXPECT_NE(got[i].find(want[i].second), std::string::npos) << got[i];
  }
  auto s = test::load(lines({"    endif", "    if p0", "    loop", "    else", "    exit"}));
  text = s.diags.format("p");
  size_t last = 0;
  for (const char* where : {"p:1:5:", "p:2:5:", "p:3:5:", "p:4:5:"}) {
    const size_t at = text.find(where);
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_GE(at, last) << text;
    last = at;
  }
}

// exec.pipeline: stages in order, each only if the earlier ones found nothing.
TEST(Pipeline, StagesInOrder) {
  // A launch-setting error hides an unclosed if on an earlier line.
  auto a = test::load(lines({"    if p0", "    nop", ".wave 3", "    exit"}));
  ASSERT_EQ(a.diags.size(), 1u) << show(a.diags);
  EXPECT_EQ(a.diags.first().kind, DiagKind::Config);
  EXPECT_EQ(a.diags.first().span.line, 3u);
  // A buffer-size error (configuration) hides an undefined label on an earlier line.
  auto b = test::load(lines({"    jmp nowhere", ".buffer x u32[wave - 64] out", "    exit"}));
  ASSERT_EQ(b.diags.size(), 1u) << show(b.diags);
  EXPECT_EQ(b.diags.first().kind, DiagKind::Config);
  EXPECT_EQ(b.diags.first().span.line, 2u);
  // Launch settings before buffers: a bad wave hides a bad buffer on an earlier line.
  auto c = test::load(lines({".buffer x u32[-1] out", ".wave 3", "    exit"}));
  ASSERT_EQ(c.diags.size(), 1u) << show(c.diags);
  EXPECT_EQ(c.diags.first().span.line, 2u);
  // Structure before validation: an unclosed if hides an undefined label before it.
  auto d = test::load(lines({"    jmp nowhere", "    if p0", "    exit"}));
  ASSERT_EQ(d.diags.size(), 1u) << show(d.diags);
  EXPECT_EQ(d.diags.first().span.line, 2u);
  // Within validation: an undefined label (line 4) hides a flow error (line 1).
  auto e = test::load(lines({"    pop", "    exit", "x:", "    jmp nowhere"}));
  ASSERT_EQ(e.diags.size(), 1u) << show(e.diags);
  EXPECT_EQ(e.diags.first().span.line, 4u);
  // state.launch.check: only the first failing limit, in the stated order: warps
  // (line 1) is checked after wave (line 2), so line 2 is reported.
  auto f = test::load(lines({".warps 0", ".wave 3", "    exit"}));
  ASSERT_EQ(f.diags.size(), 1u) << show(f.diags);
  EXPECT_EQ(f.diags.first().span.line, 2u);
}

}  // namespace
}  // namespace simt

namespace simt {
namespace {

// valid.report: every validation error of every rejected conformance test names
// a clause, and that clause is defined in the spec; the formatted line ends with it.
TEST(ValidReport, EveryErrorNamesADefinedClause) {
  std::string spec;
  for (const auto& f : std::filesystem::directory_iterator(test::source_path("spec")))
    spec += test::read_all(f.path());
  size_t checked = 0;
  for (const auto& f : std::filesystem::directory_iterator(test::source_path("suites/valid"))) {
    auto r = test::load(test::read_all(f.path()));
    for (const auto& d : r.diags.list()) {
      if (d.kind != DiagKind::Invalid) continue;
      SCOPED_TRACE(f.path().string() + ": " + d.message);
      ASSERT_FALSE(d.clause.empty());
      EXPECT_NE(spec.find("**[" + d.clause + "]**"), std::string::npos);
      const std::string line = syntax::format_diag("f", d);
      EXPECT_EQ(line.substr(line.size() - d.clause.size() - 3), " (" + d.clause + ")");
      ++checked;
    }
  }
  EXPECT_GT(checked, 20u);
}

// valid.report: the clause of each kind of error.
TEST(ValidReport, ClausePerRule) {
  const std::pair<std::string, const char*> cases[] = {
      {lines({"    mov v40, 0", "    exit"}), "valid.reg.range"},
      {lines({"    cmp.eq pt, v1, 0", "    exit"}), "valid.form.dest"},
      {lines({"    mov %lane, 1", "    exit"}), "valid.form.dest"},
      {lines({"    add s1, v1, 1", "    exit"}), "valid.form.uniform"},
      {lines({"    st nowhere[0], 1", "    exit"}), "valid.mem.space"},
      {lines({"    jmp nowhere"}), "valid.label.defined"},
      {lines({"a:", "a:", "    exit"}), "valid.label.unique"},
      {lines({"    pop", "    exit"}), "valid.flow.pop"},
      {lines({"    lpush", "    invert", "    exit"}), "valid.flow.pop"},
      {lines({"    ret"}), "valid.flow.ret"},
      {lines({"    nop"}), "valid.flow.end"},
      {lines({"l:  nop", "    push pt", "    jmp l"}), "valid.flow.join"},
      {lines({"    if pt", "    exit"}), "valid.struct.nesting"},
      {lines({"    else", "    exit"}), "valid.struct.else"},
      {lines({"    break", "    exit"}), "valid.struct.loopctl"},
  };
  for (const auto& [src, clause] : cases) {
    SCOPED_TRACE(src);
    auto r = test::load(src);
    ASSERT_FALSE(r.loaded.has_value());
    ASSERT_FALSE(r.diags.empty());
    EXPECT_EQ(r.diags.first().clause, clause) << show(r.diags);
  }
}

// The messages of the flow checks built from the Control and Mode columns
// (interpreter/flow): each fault of the transfer function, each mode, each region
// rule, exactly as formatted (location, message, clause).
TEST(ValidReport, FlowMessagesAreExact) {
  const std::pair<std::string, const char*> cases[] = {
      {lines({"    pop", "    exit"}),
       "test:1:5: invalid program: pop with no push open (valid.flow.pop)"},
      {lines({"    call f", "    exit", "f:  invert", "    ret"}),
       "test:3:5: invalid program: invert with no push open in this function (valid.flow.pop)"},
      {lines({"    lpush", "    invert", "    exit"}),
       "test:2:5: invalid program: invert inside a loop but outside any push of that loop "
       "(valid.flow.pop)"},
      {lines({"    push p0", "    lnext", "    exit"}),
       "test:2:5: invalid program: lnext with a push still open, or outside a loop "
       "(valid.flow.pop)"},
      {lines({"    call f", "    exit", "f:  cont p0", "    ret"}),
       "test:3:5: invalid program: cont outside of any loop in this function (valid.flow.pop)"},
      {lines({"    lpush", "    subv.begin", "    brk p0", "    subv.end", "    exit"}),
       "test:3:5: invalid program: brk with no loop opened inside the sub-vector region "
       "(wave.valid.balance)"},
      {lines({"    subv.begin", "    pop", "    subv.end", "    exit"}),
       "test:2:5: invalid program: pop inside a sub-vector region with no push of the region "
       "open (wave.valid.balance)"},
      {lines({"    lpush", "    subv.begin", "    lnext", "    subv.end", "    exit"}),
       "test:3:5: invalid program: lnext inside a sub-vector region with no loop of the region "
       "open (wave.valid.balance)"},
      {lines({"    subv.begin", "    push p0", "    lpush", "    subv.end", "    exit"}),
       "test:4:5: invalid program: the mask stack is not balanced across the sub-vector region: "
       "2 entries pushed in it still open (wave.valid.balance)"},
      {lines({"    tclear", "    exit"}),
       "test:1:5: invalid program: tclear outside handler code (trap.valid.mode)"},
      {lines({".handler H", "    exit", "H:  sys 1", "    tret"}),
       "test:3:5: invalid program: sys in handler code (trap.valid.mode)"},
      {lines({".handler H", "    exit", "H:  subv.begin", "    subv.end", "    tret"}),
       "test:3:5: invalid program: subv.begin in handler code: handler code runs in normal mode "
       "(wave.valid.handler)"},
      {lines({"    subv.begin", "    ret", "    subv.end", "    exit"}),
       "test:2:5: invalid program: ret inside a sub-vector region: control would leave the "
       "region (wave.valid.branch)"},
      {lines({"    call f", "    subv.begin", "f:  nop", "    subv.end", "    exit"}),
       "test:1:5: invalid program: call to 'f', inside a sub-vector region (wave.valid.branch)"},
      {lines({"    subv.begin", "    jmp out", "    subv.end", "out:", "    exit"}),
       "test:2:5: invalid program: jmp to 'out' leaves the sub-vector region "
       "(wave.valid.branch)"},
      {lines({"    cbr p0, in", "    subv.begin", "in: nop", "    subv.end", "    exit"}),
       "test:1:5: invalid program: cbr to 'in' enters a sub-vector region other than at its "
       "subv.begin (wave.valid.branch)"},
      {lines({"    subv.begin", "    subv.begin", "    subv.end", "    exit"}),
       "test:2:5: invalid program: sub-vector regions do not nest: the region opened on line 1 "
       "is still open (wave.valid.nest)"},
      {lines({"    subv.end", "    exit"}),
       "test:1:5: invalid program: subv.end with no sub-vector region open (wave.valid.pair)"},
      {lines({"    subv.begin", "    exit"}),
       "test:1:5: invalid program: subv.begin with no subv.end after it (wave.valid.pair)"},
  };
  for (const auto& [src, expected] : cases) {
    SCOPED_TRACE(src);
    auto r = test::load(src);
    ASSERT_FALSE(r.loaded.has_value());
    EXPECT_NE(show(r.diags).find(expected), std::string::npos)
        << "expected: " << expected << "\namong:\n"
        << show(r.diags);
  }
}

}  // namespace
}  // namespace simt
