// The mode-selection pass (spec/wave.md, wave.modesel.*): segments and their
// needs, groups, each refusal at its line, the three strategies (their outputs
// validate, run to the input's outcome at several (wave, simd) shapes, and give
// themselves back when transformed again), --explain, the example program and the
// `simtspec modesel` command's exit codes.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "passes/modesel.h"
#include "support.h"
#include "text/parser.h"
#include "text/printer.h"

namespace simt {
namespace {

using passes::ModeselResult;
using passes::Strategy;

struct Shape {
  uint32_t wave, simd;
};
constexpr Shape kShapes[] = {{64, 32}, {64, 16}, {32, 16}, {16, 8}, {32, 8}, {32, 32}, {8, 8}};

host::LoadOptions at(std::optional<Shape> shape) {
  host::LoadOptions opt;
  if (shape) {
    opt.cli.wave = shape->wave;
    opt.cli.simd = shape->simd;
  }
  return opt;
}

// The pass on a program that must load.
ModeselResult sel(std::string_view text, std::optional<uint32_t> threshold,
                  Strategy s = Strategy::Switch, std::optional<Shape> shape = {}) {
  auto r = test::load(text, at(shape));
  if (!r.loaded) {
    ADD_FAILURE() << "program did not load:\n" << r.diags.format("test") << text;
    return {};
  }
  return passes::modesel(r.loaded->ast, r.loaded->config, threshold, s);
}

std::vector<uint32_t> needs(const ModeselResult& r) {
  std::vector<uint32_t> out;
  for (const auto& s : r.segments) out.push_back(s.need);
  return out;
}
std::vector<int> groups(const ModeselResult& r) {
  std::vector<int> out;
  for (const auto& s : r.segments) out.push_back(s.group);
  return out;
}
std::vector<std::string> kinds(const ModeselResult& r) {
  std::vector<std::string> out;
  for (const auto& s : r.segments) out.push_back(s.kind);
  return out;
}
syntax::Program parsed(std::string_view text) {
  auto p = text::parse(text);
  EXPECT_TRUE(p.ok()) << p.diags.format("test");
  return p.program;
}

// ---- needs (wave.modesel.need) and segments (wave.modesel.segments) -------------

constexpr const char* kStraight = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    add v1, %lane, 1
    add v2, v1, 5
    add v1, v1, v2
    st out[v0], v1
    exit
)";

TEST(Modesel, NeedOfStraightCode) {
  // The most registers live around one instruction: v0, v1, v2 at the third and
  // fourth instructions.
  auto r = sel(kStraight, 8);
  ASSERT_TRUE(r.program);
  EXPECT_EQ(kinds(r), std::vector<std::string>{"chunk"});
  EXPECT_EQ(needs(r), std::vector<uint32_t>{3});
  EXPECT_EQ(r.segments[0].first_line, 2u);
  EXPECT_EQ(r.segments[0].last_line, 7u);
  EXPECT_EQ(r.segments[0].index, 1u);
}

TEST(Modesel, AWriteUnderAMaskDoesNotKill) {
  // v3 written inside the if keeps the other lanes' values: it is live from the
  // start, so the first segment needs v0 and v3.
  constexpr const char* masked = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    cmp.lt p0, %lane, 4
next:
    if p0
        mov v3, 1
    endif
    st out[v0], v3
    exit
)";
  EXPECT_EQ(needs(sel(masked, 8)), (std::vector<uint32_t>{2, 2}));
  constexpr const char* plain = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    cmp.lt p0, %lane, 4
next:
    mov v3, 1
    st out[v0], v3
    exit
)";
  EXPECT_EQ(needs(sel(plain, 8)), (std::vector<uint32_t>{1, 2}));
}

constexpr const char* kCall = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    add v1, %lane, 1
    call f
    st out[v0], v1
    exit
f:
    add v2, v1, 1
    add v3, v2, v1
    mul v1, v3, v2
    ret
)";

TEST(Modesel, ACallNeedsWhatItsCodeNeeds) {
  // In f, v0 (live after the call: ret's live-out) is live with v1, v2 and v3.
  auto r = sel(kCall, 8);
  EXPECT_EQ(kinds(r), (std::vector<std::string>{"chunk", "call", "chunk"}));
  EXPECT_EQ(needs(r), (std::vector<uint32_t>{2, 4, 2}));
  EXPECT_EQ(r.segments[1].first_line, 4u);
  EXPECT_EQ(r.segments[1].last_line, 4u);
}

TEST(Modesel, SegmentsOfLoopsLabelsAndRegions) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    mov v1, 0
    loop
        add v1, v1, 1
        cmp.ge p0, v1, 3
        break p0
    endloop
    st out[v0], v1
again:
    subv.begin
    add v1, v1, 1
    subv.end
    st out[v0], v1
    exit
)";
  auto r = sel(text, 8);
  ASSERT_TRUE(r.program);
  EXPECT_EQ(kinds(r),
            (std::vector<std::string>{"chunk", "loop", "chunk", "chunk", "region", "chunk"}));
  EXPECT_EQ(r.segments[1].first_line, 4u);
  EXPECT_EQ(r.segments[1].last_line, 8u);
  EXPECT_EQ(r.segments[3].first_line, 10u);  // a label alone before the region
  EXPECT_EQ(r.segments[3].last_line, 10u);
  EXPECT_EQ(r.segments[3].need, 0u);  // no instruction
  EXPECT_EQ(r.segments[4].group, -1);
  // Region segments are kept even at threshold 0; the others go into groups.
  auto z = sel(text, 0);
  ASSERT_TRUE(z.program) << z.diags.format("test");
  EXPECT_EQ(groups(z), (std::vector<int>{1, 1, 1, 0, -1, 2}));
}

TEST(Modesel, FunctionAndUnreachedCodeAreNotSegments) {
  auto r = sel(kCall, 0, Strategy::Duplicate);
  ASSERT_TRUE(r.program) << r.diags.format("test");
  ASSERT_EQ(r.segments.size(), 3u);
  EXPECT_EQ(r.segments.back().last_line, 6u);  // f's code is not main's
}

// ---- the threshold and groups (wave.modesel.threshold) -----------------------------

TEST(Modesel, ANeedEqualToTheThresholdStaysNormal) {
  auto r = sel(kStraight, 3);
  ASSERT_TRUE(r.program);
  EXPECT_EQ(groups(r), std::vector<int>{0});
  EXPECT_EQ(*r.program, parsed(kStraight));
  auto h = sel(kStraight, 2);
  ASSERT_TRUE(h.program);
  EXPECT_EQ(groups(h), std::vector<int>{1});
  EXPECT_NE(text::print(*h.program).find("    subv.begin\n      shl v0, %lane, 2"),
            std::string::npos)
      << text::print(*h.program);
}

TEST(Modesel, TheDefaultThresholdIsVregsOverParts) {
  EXPECT_EQ(sel(kStraight, {}, Strategy::Switch, Shape{64, 32}).threshold, 16u);
  EXPECT_EQ(sel(kStraight, {}, Strategy::Switch, Shape{64, 16}).threshold, 8u);
  EXPECT_EQ(sel(kStraight, {}, Strategy::Switch, Shape{32, 32}).threshold, 32u);
}

constexpr const char* kThreeSegments = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    add v1, v0, 1
    add v2, v0, v1
    add v3, v2, v1
    add v4, v3, v2
    st out[v0], v4
narrow:
    add v4, v4, 1
    st out[v0], v4
wide:
    add v1, v4, 2
    add v2, v4, 3
    add v3, v1, v2
    add v3, v3, v4
    st out[v0], v3
    exit
)";

TEST(Modesel, HotSegmentsMergeUnlessACoolOneIsBetween) {
  auto r = sel(kThreeSegments, 0);
  ASSERT_TRUE(r.program) << r.diags.format("test");
  EXPECT_EQ(needs(r), (std::vector<uint32_t>{4, 2, 5}));
  EXPECT_EQ(groups(r), (std::vector<int>{1, 1, 1}));  // threshold 0: one group
  auto s = sel(kThreeSegments, 2);
  ASSERT_TRUE(s.program) << s.diags.format("test");
  EXPECT_EQ(groups(s), (std::vector<int>{1, 0, 2}));  // the middle one needs 2
  const std::string out = text::print(*s.program);
  size_t begins = 0;
  for (size_t at = out.find("subv.begin"); at != std::string::npos;
       at = out.find("subv.begin", at + 1))
    ++begins;
  EXPECT_EQ(begins, 2u) << out;
  // The label of the third segment stays before its region: a branch to it
  // enters the region at its subv.begin.
  EXPECT_NE(out.find("wide:\n    subv.begin"), std::string::npos) << out;
}

TEST(Modesel, ALoopIsNeverSplit) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    mov v1, 0
    mov v2, 5
    loop
        add v3, v1, v2
        add v1, v1, 1
        cmp.ge p0, v1, v3
        break p0
    endloop
    st out[v0], v1
    exit
)";
  auto r = sel(text, 3);
  ASSERT_TRUE(r.program) << r.diags.format("test");
  EXPECT_EQ(kinds(r), (std::vector<std::string>{"chunk", "loop", "chunk"}));
  EXPECT_EQ(groups(r), (std::vector<int>{1, 1, 0}));
  EXPECT_NE(text::print(*r.program).find("endloop\n    subv.end\n    st out"), std::string::npos)
      << text::print(*r.program);
}

TEST(Modesel, ACallIsOneSegmentOfItsGroup) {
  auto r = sel(kCall, 3, Strategy::Duplicate);
  ASSERT_TRUE(r.program) << r.diags.format("test");
  EXPECT_EQ(groups(r), (std::vector<int>{0, 1, 0}));
  const std::string out = text::print(*r.program);
  // Both copies call f; f itself is not copied.
  EXPECT_NE(out.find("__modsel1_p0:\n    call f\n"), std::string::npos) << out;
  EXPECT_NE(out.find("__modsel1_end:\n    st out[v0], v1"), std::string::npos) << out;
}

TEST(Modesel, ThresholdAtTheLargestNeedGivesTheInput) {
  for (Strategy s : {Strategy::Switch, Strategy::Duplicate, Strategy::Software}) {
    auto r = sel(kThreeSegments, 5, s, Shape{64, 32});
    ASSERT_TRUE(r.program) << r.diags.format("test");
    EXPECT_EQ(*r.program, parsed(kThreeSegments));
  }
}

TEST(Modesel, ThresholdZeroPutsEverySegmentWithANeedInAGroup) {
  for (const char* text : {kStraight, kCall, kThreeSegments}) {
    auto r = sel(text, 0, Strategy::Duplicate, Shape{64, 16});
    ASSERT_TRUE(r.program) << r.diags.format("test");
    for (const auto& s : r.segments) EXPECT_EQ(s.group > 0, s.need >= 1) << text;
  }
}

// ---- refusals (wave.modesel.safe, .shared, .strategy) ------------------------------

// The program is refused with `clause` at `line` (the first error by position).
void expect_refused(std::string_view text, uint32_t threshold, uint32_t line,
                    std::string_view clause, std::string_view words = "",
                    Strategy s = Strategy::Switch, std::optional<Shape> shape = {}) {
  auto r = sel(text, threshold, s, shape);
  EXPECT_FALSE(r.program) << text;
  ASSERT_FALSE(r.diags.empty()) << text;
  const auto& d = r.diags.first();
  EXPECT_EQ(d.span.line, line) << r.diags.format("test");
  EXPECT_EQ(d.clause, clause) << r.diags.format("test");
  EXPECT_NE(d.message.find(words), std::string::npos) << r.diags.format("test");
}

std::string one_line_program(std::string_view instr) {
  return ".buffer out u32[threads] inout\n    shl v0, %lane, 2\n    " + std::string(instr) +
         "\n    st out[v0], v0\n    exit\n";
}

TEST(Modesel, RefusesInstructionsThatActOncePerWaveOrSeeOtherParts) {
  for (const char* instr : {"bar", "sys 5", "watom.add v1, out[v0], 1", "ballot s1, pt",
                            "vote.any p1, pt", "shfl v1, v0, 1", "mov %exec_lo, 3",
                            "mov %exec_hi, 0", "mov s1, %exec_lo", "add v1, v0, %exec"})
    expect_refused(one_line_program(instr), 0, 3, "wave.modesel.safe", "", Strategy::Switch);
}

TEST(Modesel, RefusesACbrOnAPredicateOtherThanPt) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    cmp.lt p0, %lane, 4
    cbr p0, skip
    st out[v0], v0
skip:
    st out[v0], v0
    exit
)";
  expect_refused(text, 0, 4, "wave.modesel.safe", "other than pt");
}

TEST(Modesel, RefusesABranchOutOfTheGroup) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    add v1, v0, 1
    add v2, v1, v0
    st out[v0], v2
    jmp done
done:
    exit
)";
  expect_refused(text, 2, 6, "wave.modesel.safe", "outside the group");
}

TEST(Modesel, RefusesALabelThatCodeOutsideBranchesTo) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    mov s1, 0
    cbr pt, L
    nop
top:
    shl v0, %lane, 2
    add v1, v0, 1
    st out[v0], v1
L:
    shl v2, %lane, 2
    st out[v2], v2
    exit
)";
  expect_refused(text, 0, 9, "wave.modesel.safe", "branch target of line 3");
}

TEST(Modesel, AGroupsFirstLabelMayBeBranchedToFromOutside) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    mov s1, 0
    cbr pt, L
    shl v0, %lane, 2
    st out[v0], v0
L:
    shl v2, %lane, 2
    add v3, v2, 1
    st out[v2], v3
    exit
)";
  auto r = sel(text, 1);
  ASSERT_TRUE(r.program) << r.diags.format("test");
  EXPECT_EQ(groups(r), (std::vector<int>{0, 1}));
  EXPECT_NE(text::print(*r.program).find("L:\n    subv.begin\n"), std::string::npos)
      << text::print(*r.program);
}

TEST(Modesel, RefusesAScalarReadBeforeWrittenAndWritten) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    mov s1, 0
L1:
    shl v0, %lane, 2
    add s1, s1, 1
    st out[v0], s1
    exit
)";
  expect_refused(text, 0, 5, "wave.modesel.safe", "s1 is read before it is written");
  // Written first in the group: every pass computes the same value.
  constexpr const char* fine = R"(.buffer out u32[threads] out
    mov s1, 0
L1:
    shl v0, %lane, 2
    mov s1, 4
    add s1, s1, 1
    st out[v0], s1
    exit
)";
  EXPECT_TRUE(sel(fine, 0).program);
}

TEST(Modesel, RefusesAScalarLoadFromASpaceTheGroupStoresTo) {
  constexpr const char* text = R"(.buffer b u32[threads] inout
    shl v0, %lane, 2
    st b[v0], v0
    ld s1, b[0]
    st b[v0], s1
    exit
)";
  expect_refused(text, 0, 4, "wave.modesel.safe", "scalar-form 'ld' from 'b'");
}

TEST(Modesel, SwitchRefusesACallTheOtherStrategiesCopyIt) {
  expect_refused(kCall, 3, 4, "wave.valid.branch", "'call'");
  EXPECT_TRUE(sel(kCall, 3, Strategy::Duplicate).program);
  EXPECT_TRUE(sel(kCall, 3, Strategy::Software, Shape{64, 32}).program);
  // ... as long as the called code satisfies the conditions.
  constexpr const char* bad = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    call f
    st out[v0], v0
    exit
f:
    bar
    ret
)";
  expect_refused(bad, 0, 7, "wave.modesel.safe", "in code the group calls", Strategy::Duplicate);
}

constexpr const char* kSharedIn = R"(.vregs 8
.vshared 4
.buffer out u32[threads] out
    mov v4, 7
next:
    shl v0, %lane, 2
    add v1, v0, v4
    st out[v0], v1
    exit
)";

constexpr const char* kSharedOut = R"(.vregs 8
.vshared 4
.buffer out u32[threads] out
    shl v0, %lane, 2
    add v4, v0, 1
    add v1, v4, v0
    st out[v0], v1
cold:
    st out[v0], v4
    exit
)";

TEST(Modesel, RefusesASharedRegisterLiveAcrossTheGroup) {
  expect_refused(kSharedIn, 1, 7, "wave.modesel.shared",
                 "shared register v4 is live into the group that starts on line 5",
                 Strategy::Switch, Shape{64, 32});
  expect_refused(kSharedOut, 2, 5, "wave.modesel.shared",
                 "shared register v4 is live out of the group that starts on line 4",
                 Strategy::Switch, Shape{64, 32});
  // Software and duplicated copies run in normal mode, where no register is shared.
  EXPECT_TRUE(sel(kSharedIn, 1, Strategy::Duplicate, Shape{64, 32}).program);
  EXPECT_TRUE(sel(kSharedOut, 2, Strategy::Software, Shape{64, 32}).program);
}

TEST(Modesel, RefusesTheSoftwareLoopOutsideWave64Simd32) {
  expect_refused(kStraight, 0, 2, "wave.modesel.strategy", "wave 64 and simd 32",
                 Strategy::Software, Shape{64, 16});
  expect_refused(kStraight, 0, 2, "wave.modesel.strategy", "wave 32, simd 32", Strategy::Software);
}

TEST(Modesel, RefusesAJmpLoopThatOnlyExitEnds) {
  // A pass whose part's lanes have all exited would loop without end.
  constexpr const char* text = R"(.buffer out u32[threads] out
    mov v0, 0
    shl v1, %lane, 2
top:
    add v0, v0, 1
    cmp.gt p0, v0, %lane
    if p0
        st out[v1], v0
        exit
    endif
    jmp top
)";
  expect_refused(text, 0, 11, "wave.modesel.safe", "'jmp' back to 'top'");
}

TEST(Modesel, RefusesAScalarALoopCarriesPastItsEnd) {
  // The warp counts the loop's passes: part by part, each part counts its own.
  constexpr const char* text = R"(.buffer out u32[threads] out
.buffer n u32[1] out
    shl v0, %lane, 2
    rem.u v2, %lane, 5
    mov v1, 0
    mov s1, 0
    loop
        cmp.ge p0, v1, v2
        break p0
        add s1, s1, 1
        add v1, v1, 1
    endloop
    st out[v0], v1
    st n[0], s1
    exit
)";
  expect_refused(text, 0, 12, "wave.modesel.safe", "s1 carries a value");
}

TEST(Modesel, RefusesARegionInsideAGroup) {
  constexpr const char* text = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    cmp.lt p0, %lane, 4
    if p0
        subv.begin
        add v1, v0, 1
        subv.end
    endif
    st out[v0], v0
    exit
)";
  expect_refused(text, 0, 5, "wave.valid.nest", "do not nest");
}

TEST(Modesel, RefusesAGroupThatLeavesAMaskEntryOpen) {
  // The push is in the group, its pop after it.
  constexpr const char* text = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    add v1, v0, 1
    add v2, v1, v0
    add v3, v2, v1
    st out[v0], v3
    cmp.lt p0, %lane, 4
    push p0
L:
    st out[v0], v0
    pop
    exit
)";
  expect_refused(text, 2, 8, "wave.valid.balance", "'push'");
}

TEST(Modesel, AnInvalidProgramIsReportedNotTransformed) {
  auto p = text::parse(".buffer out u32[threads] out\n    st out[v0], v0\n");
  ASSERT_TRUE(p.ok());
  auto r = passes::modesel(p.program, exec::LaunchConfig{}, 0, Strategy::Switch);
  EXPECT_FALSE(r.program);
  EXPECT_FALSE(r.diags.empty());
}

// ---- the strategies: validity, outcome, idempotence ------------------------------

constexpr const char* kDivergent = R"(.buffer a u32[threads] in = iota(3, 7)
.buffer out u32[threads] out
.buffer side u32[threads] out
    mul s0, %gwarp, %wave
    add v0, s0, %lane
    shl v1, v0, 2
    ld v2, a[v1]
    and v3, %lane, 3
    cmp.eq p0, v3, 1
    if p0
        add v2, v2, 1000
        st side[v1], v2
        exit
    else
        mul v2, v2, 3
    endif
    mov v4, 0
    loop
        add v4, v4, 1
        add v2, v2, v4
        cmp.ge p1, v4, v3
        break p1
    endloop
    st side[v1], v4
next:
    and v5, v2, 255
    add v6, v5, v4
    xor v7, v6, v2
    st out[v1], v7
    exit
)";

constexpr const char* kLoopWithCall = R"(.buffer out u32[threads] out
    shl v0, %lane, 2
    add v1, %lane, 2
    mov s2, 3
    call twice
    loop
        add v1, v1, 5
        cmp.gt p0, v1, 40
        break p0
        call twice
    endloop
    st out[v0], v1
    exit
twice:
    add v2, v1, v1
    mov v1, v2
    ret
)";

const std::string& example_text() {
  static const std::string text =
      test::read_all(test::source_path("examples/modesel_example.simt"));
  return text;
}

// What a strategy may refuse in these programs: the software loop at a shape
// other than (64, 32), a call under switch.
bool expected_refusal(const ModeselResult& r, Strategy s, Shape sh) {
  for (const auto& d : r.diags.list()) {
    if (s == Strategy::Software && d.clause == "wave.modesel.strategy" &&
        !(sh.wave == 64 && sh.simd == 32))
      continue;
    if (s == Strategy::Switch && d.clause == "wave.valid.branch") continue;
    return false;
  }
  return true;
}

void expect_strategy_keeps_outcomes(Strategy s) {
  size_t transformed = 0;
  for (const std::string& text :
       {std::string(kStraight), std::string(kCall), std::string(kThreeSegments),
        std::string(kDivergent), std::string(kLoopWithCall), example_text()}) {
    for (const Shape sh : kShapes) {
      auto want = test::run(text, at(sh));
      ASSERT_TRUE(want.ok()) << want.diags << text;
      for (uint32_t threshold : {0u, 2u, 8u}) {
        auto r = sel(text, threshold, s, sh);
        const std::string where = "wave " + std::to_string(sh.wave) + ", simd " +
                                  std::to_string(sh.simd) + ", threshold " +
                                  std::to_string(threshold) + "\n" + text;
        if (!r.program) {
          EXPECT_TRUE(expected_refusal(r, s, sh)) << r.diags.format("test") << where;
          continue;
        }
        // wave.modesel.output: it validates (and prints back to itself) ...
        EXPECT_EQ(text::roundtrip_problem(*r.program), std::nullopt) << where;
        const std::string out = text::print(*r.program);
        auto got = test::run(out, at(sh));
        ASSERT_TRUE(got.ok()) << got.diags << out << where;
        ++transformed;
        // ... runs to the same outcome (wave.modesel.model) ...
        EXPECT_TRUE(got.outcome->same_result(*want.outcome)) << out << where;
        // ... and is its own transformation.
        auto again = sel(out, threshold, s, sh);
        ASSERT_TRUE(again.program) << again.diags.format("test") << out << where;
        EXPECT_EQ(*again.program, parsed(out)) << text::print(*again.program) << where;
      }
    }
  }
  EXPECT_GT(transformed, 20u);
}

TEST(ModeselStrategy, SwitchKeepsOutcomes) {
  expect_strategy_keeps_outcomes(Strategy::Switch);
}

TEST(ModeselStrategy, DuplicateKeepsOutcomes) {
  expect_strategy_keeps_outcomes(Strategy::Duplicate);
}

TEST(ModeselStrategy, SoftwareKeepsOutcomes) {
  expect_strategy_keeps_outcomes(Strategy::Software);
}

TEST(ModeselStrategy, DuplicateGuardsEachPartAndRenamesItsLabels) {
  constexpr const char* text = R"(.sregs 4
.buffer out u32[threads] out
    shl v0, %lane, 2
    mov v1, 0
again:
    add v1, v1, 3
    cmp.lt p0, v1, 10
    if p0
        add v1, v1, 1
    endif
    st out[v0], v1
    exit
)";
  auto r = sel(text, 0, Strategy::Duplicate, Shape{32, 16});
  ASSERT_TRUE(r.program) << r.diags.format("test");
  const std::string out = text::print(*r.program);
  // .sregs is raised by the entry exec, the accumulator and a temporary.
  EXPECT_EQ(r.program->launch.sregs.value, std::optional<uint32_t>(7));
  const std::string want_head = R"(__modsel1:
    mov s4, %exec_lo
    mov s5, 0
    and s6, s4, 0x0000FFFF
    mov %exec_lo, s6
    cbr pt, __modsel1_p0
    jmp __modsel1_s0
__modsel1_p0:
    shl v0, %lane, 2
    mov v1, 0
again__p0:
)";
  EXPECT_NE(out.find(want_head), std::string::npos) << out;
  const std::string want_second = R"(    or s5, s5, %exec_lo
__modsel1_s0:
    and s6, s4, 0xFFFF0000
    mov %exec_lo, s6
    cbr pt, __modsel1_p1
    jmp __modsel1_s1
__modsel1_p1:
    shl v0, %lane, 2
    mov v1, 0
again__p1:
)";
  EXPECT_NE(out.find(want_second), std::string::npos) << out;
  EXPECT_NE(out.find("__modsel1_s1:\n    mov %exec_lo, s5\n__modsel1_end:\n"), std::string::npos)
      << out;
  // The group ended the warp: so does the block.
  EXPECT_NE(out.find("__modsel1_end:\n    exit\n"), std::string::npos) << out;
}

TEST(ModeselStrategy, SoftwareIsTheSoftwareLoop) {
  auto r = sel(kStraight, 0, Strategy::Software, Shape{64, 32});
  ASSERT_TRUE(r.program) << r.diags.format("test");
  // wave.soft.loop, with sH = s32 and sL = s33 above the program's 32 scalars.
  EXPECT_EQ(r.program->launch.sregs.value, std::optional<uint32_t>(34));
  EXPECT_EQ(text::print(*r.program), R"(.sregs 34
.buffer out u32[threads] out

__modsel1:
    mov s32, %exec_hi
    mov s33, 0
    mov %exec_hi, 0
    cbr pt, __modsel1_top
    jmp __modsel1_next
__modsel1_top:
    shl v0, %lane, 2
    add v1, %lane, 1
    add v2, v1, 5
    add v1, v1, v2
    st out[v0], v1
    exit
    or s33, s33, %exec_lo
    mov %exec_lo, 0
    cbr pt, __modsel1_fin
__modsel1_next:
    mov %exec_hi, s32
    mov s32, 0
    cbr pt, __modsel1_top
__modsel1_fin:
    mov %exec_lo, s33
__modsel1_end:
    exit
)");
}

TEST(ModeselStrategy, GeneratedBlocksAreRegionSegments) {
  for (Strategy s : {Strategy::Duplicate, Strategy::Software}) {
    auto r = sel(kThreeSegments, 2, s, Shape{64, 32});
    ASSERT_TRUE(r.program) << r.diags.format("test");
    auto again = sel(text::print(*r.program), 2, s, Shape{64, 32});
    ASSERT_TRUE(again.program);
    // The second block's label stays before it (the group's first statement), and
    // an exit follows it (its group ended the warp).
    EXPECT_EQ(kinds(again),
              (std::vector<std::string>{"region", "chunk", "chunk", "region", "chunk"}));
    EXPECT_EQ(groups(again), (std::vector<int>{-1, 0, 0, -1, 0}));
    // A generated block's need is its group's.
    EXPECT_EQ(needs(again), (std::vector<uint32_t>{4, 2, 0, 5, 0}));
  }
}

// ---- --explain and the example -----------------------------------------------------

TEST(Modesel, ExplainLines) {
  auto r = sel(kThreeSegments, 2);
  EXPECT_EQ(passes::explain(r),
            "; modesel: threshold 2, 3 segments\n"
            "; segment 1: chunk, lines 2-7, need 4: region 1\n"
            "; segment 2: chunk, lines 8-10, need 2: normal\n"
            "; segment 3: chunk, lines 11-17, need 5: region 2\n");
}

TEST(ModeselExample, RegionsForSegments3To5AndFor7) {
  auto r = sel(example_text(), 8);
  ASSERT_TRUE(r.program) << r.diags.format("modesel_example.simt");
  EXPECT_EQ(kinds(r), (std::vector<std::string>{"chunk", "call", "chunk", "loop", "chunk", "loop",
                                                "chunk", "chunk"}));
  EXPECT_EQ(needs(r), (std::vector<uint32_t>{2, 3, 11, 11, 9, 8, 9, 3}));
  EXPECT_EQ(groups(r), (std::vector<int>{0, 0, 1, 1, 1, 0, 2, 0}));
  EXPECT_EQ(passes::explain(r),
            "; modesel: threshold 8, 8 segments\n"
            "; segment 1: chunk, lines 34-37, need 2: normal\n"
            "; segment 2: call, lines 38-38, need 3: normal\n"
            "; segment 3: chunk, lines 39-49, need 11: region 1\n"
            "; segment 4: loop, lines 50-62, need 11: region 1\n"
            "; segment 5: chunk, lines 63-71, need 9: region 1\n"
            "; segment 6: loop, lines 72-81, need 8: normal\n"
            "; segment 7: chunk, lines 82-94, need 9: region 2\n"
            "; segment 8: chunk, lines 95-98, need 3: normal\n");
  // Its header describes this table.
  EXPECT_NE(example_text().find(";   3        chunk  39-49    spread"), std::string::npos);
  const std::string out = text::print(*r.program);
  EXPECT_NE(out.find("    call square\nspread:\n    subv.begin\n"), std::string::npos) << out;
  EXPECT_NE(out.find("      mov v13, 0\n    subv.end\n    loop\n"), std::string::npos) << out;
  EXPECT_NE(out.find("again:\n    subv.begin\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    subv.end\ndone:\n"), std::string::npos) << out;
  // The same outcome at every shape, in normal mode and part by part.
  for (const Shape sh : kShapes) {
    auto want = test::run(example_text(), at(sh));
    ASSERT_TRUE(want.ok()) << want.diags;
    EXPECT_EQ(want.status(), exec::Status::Completed);
    auto got =
        test::run(text::print(*sel(example_text(), 8, Strategy::Switch, sh).program), at(sh));
    ASSERT_TRUE(got.ok()) << got.diags;
    EXPECT_TRUE(got.outcome->same_result(*want.outcome))
        << "wave " << sh.wave << ", simd " << sh.simd;
  }
}

// ---- the command (exit codes) ------------------------------------------------------

class ModeselCli : public test::TempDirSuite<ModeselCli> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_modesel_test_";

 protected:
  static test::CommandResult simtspec(const std::string& args) {
    return test::run_command(SIMT_BINARY_DIR "/simtspec", args, dir());
  }
  static std::string file(std::string_view name, std::string_view text) {
    const auto p = dir() / name;
    test::write_all(p, text);
    return test::shell_quote(p.string());
  }
};

TEST_F(ModeselCli, PrintsTheProgramAndTheExplanation) {
  const std::string f = file("ok.simt", kThreeSegments);
  auto r = simtspec("modesel " + f + " --threshold 2");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, text::print(*sel(kThreeSegments, 2).program));
  auto e = simtspec("modesel " + f + " --threshold 2 --explain --strategy switch");
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(e.out, passes::explain(sel(kThreeSegments, 2)) + r.out);
  // The default threshold (vregs: one part) changes nothing here.
  auto d = simtspec("modesel " + f);
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(d.out, text::print(parsed(kThreeSegments)));
  auto dup = simtspec("modesel " + f + " --threshold 0 --strategy duplicate");
  EXPECT_EQ(dup.code, 0) << dup.err;
  EXPECT_NE(dup.out.find("__modsel1:"), std::string::npos) << dup.out;
}

TEST_F(ModeselCli, ARefusalIsLocatedWithExitCode2) {
  const std::string f = file("bar.simt", one_line_program("bar"));
  auto r = simtspec("modesel " + f + " --threshold 0");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("bar.simt:3:5: error: modesel cannot transform the group of lines 2-5: "
                       "'bar'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(wave.modesel.safe)\n"), std::string::npos) << r.err;
  const std::string sw = file("sw.simt", kStraight);
  auto s = simtspec("modesel " + sw + " --threshold 0 --strategy software");
  EXPECT_EQ(s.code, 2);
  EXPECT_NE(s.err.find("sw.simt:2:5: "), std::string::npos) << s.err;
}

TEST_F(ModeselCli, BadUsageAndBadInputExitWith2) {
  const std::string f = file("ok2.simt", kStraight);
  const std::vector<std::string> bad_usage{
      "modesel", "modesel " + f + " --strategy sideways", "modesel " + f + " --threshold x",
      "modesel " + f + " --threshold -1", "modesel /nonexistent/file.simt"};
  for (const std::string& args : bad_usage) {
    auto r = simtspec(args);
    ASSERT_TRUE(r.exited) << args;
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  }
  const std::string bad = file("bad.simt", ".buffer out u32[threads] out\n    frob v0\n");
  auto r = simtspec("modesel " + bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.simt:2:5: "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace simt
