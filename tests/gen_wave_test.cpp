// ci: not sanitized: the wave invariants over generated programs: a semantic sweep (release build)
// Mixed-wave-size programs and the wave chapter's invariants (spec/oracles.md,
// oracle.model.regions, oracle.invariant.mode_equivalence,
// oracle.invariant.wave_equivalence, oracle.invariant.software_loop,
// oracle.invariant.modesel, and the structured and differential invariants on
// programs with sub-vector regions, spec/wave.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "fuzz.h"
#include "gen_builders.h"
#include "generate.h"
#include "harness.h"
#include "host/host.h"
#include "lint.h"
#include "oracles.h"
#include "passes/modesel.h"
#include "process.h"
#include "reference.h"
#include "shrink.h"
#include "support.h"
#include "text/printer.h"
#include "warp_eval.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using gen::Program;
using namespace test::genb;

constexpr uint64_t kCiSeed = 20261122;  // .ci/test: simtspec fuzz --seed 20261122

Operand Sh(int t) {  // a shared temporary, v(64 + t)
  return {Operand::K::Shared, t};
}
Stmt region(std::vector<Stmt> body) {
  return block(Kind::Region, std::move(body));
}
Stmt shared_alu(const std::string& op, int temp, Operand a, Operand b = I(0)) {
  Stmt s = alu(op, 0, a, b);
  s.kind = Kind::SharedAlu;
  s.slot = temp;
  return s;
}
// A scalar statement of a region within the model: its result in s13.
Stmt region_scalar(const std::string& op, Operand a, Operand b, int accumulate_into) {
  Stmt s = scalar(op, a, b, accumulate_into);
  s.region_scalar = true;
  return s;
}
Stmt exit_lanes_below(int32_t lane) {
  return exit_(cmp("cmp.lt", Lane(), I(lane), 2));
}

using test::check;

exec::Outcome reference(const Program& p) {
  return test::outcome(gen::print(p));
}

size_t count_kind(const std::vector<Stmt>& b, Kind k) {
  size_t n = 0;
  for (const auto& s : b)
    n += (s.kind == k) + count_kind(s.body, k) + count_kind(s.other, k) + count_kind(s.again, k);
  return n;
}

// ---- the program model ----------------------------------------------------------

// oracle.model.regions, oracle.model.print: a region prints as subv.begin and
// subv.end around its body, `.vshared 64` with `.vregs 68` for the shared
// temporaries v64-v67; as nops (the same PCs) and as the software loop of
// wave.soft.loop for the twins of mode-equivalence and software-loop.
TEST(WaveModel, PrintsRegionsSharedRegistersAndTheirTwins) {
  Program p = prog(64, 1,
                   {region({shared_alu("mov", 0, Lane()), alu("add", 0, Sh(0), I(1)),
                            region_scalar("add", I(2), I(3), 0)})});
  p.simd = 32;
  p.vshared = true;
  const std::string text = gen::print(p);
  for (const char* want : {".vregs 68\n", ".vshared 64\n", ".simd 32\n", "    subv.begin\n",
                           "      mov v64, %lane\n", "      add v2, v64, 1\n",
                           "      add s13, 2, 3\n", "      add v2, v2, s13\n", "    subv.end\n"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  EXPECT_EQ(gen::region_problem(p), "");
  gen::Layout hw, nops;
  gen::print(p, &hw);
  Program n = p;
  n.region_form = Program::RegionForm::Nops;
  n.vshared = false;
  const std::string nt = gen::print(n, &nops);
  EXPECT_EQ(nt.find("subv."), std::string::npos) << nt;
  EXPECT_EQ(nt.find(".vshared"), std::string::npos) << nt;
  EXPECT_EQ(hw.size, nops.size);  // the same PCs: events compare as they are
  Program s = n;
  s.region_form = Program::RegionForm::Software;
  const std::string st = gen::print(s);
  // wave.soft.loop, line by line (sH = s60, sL = s61).
  for (const char* want :
       {"    mov s60, %exec_hi\n    mov s61, 0\n    mov %exec_hi, 0\n    cbr pt, L0\n    jmp "
        "L1\nL0:\n",
        "    or s61, s61, %exec_lo\n    mov %exec_lo, 0\n    cbr pt, L2\nL1:\n"
        "    mov %exec_hi, s60\n    mov s60, 0\n    cbr pt, L0\nL2:\n    mov %exec_lo, s61\n"})
    EXPECT_NE(st.find(want), std::string::npos) << st;
  for (const Program* q : {&p, &n, &s}) {
    auto r = host::load(gen::print(*q));
    EXPECT_TRUE(r.loaded) << r.diags.format("generated") << gen::print(*q);
  }
  // All three give the same outcome here: lane + 1 + 5 in every lane.
  const auto want = test::words(reference(p), "out");
  ASSERT_EQ(want.size(), 64u);
  for (uint32_t l = 0; l < 64; ++l) EXPECT_EQ(want[l], l + 6) << l;
  EXPECT_EQ(test::words(reference(n), "out"), want);
  EXPECT_EQ(test::words(reference(s), "out"), want);
}

// oracle.model.regions: what region_problem accepts and names.
TEST(WaveModel, RegionProblemNamesWhatBreaksTheModel) {
  auto problem = [](std::vector<Stmt> main) { return gen::region_problem(prog(8, 2, main)); };
  EXPECT_EQ(problem({region({shared_alu("mov", 1, Lane()), alu("add", 0, Sh(1), I(1))})}), "");
  EXPECT_NE(problem({region({alu("add", 0, Sh(1), I(1))})}).find("before the region's top level"),
            std::string::npos);
  // A write inside an if is not a write of every lane.
  EXPECT_NE(problem({region({if_(cmp("cmp.lt", Lane(), I(3)), {shared_alu("mov", 0, Lane())}),
                             alu("add", 0, Sh(0), I(1))})})
                .find("v64 read"),
            std::string::npos);
  EXPECT_NE(problem({region({scalar("add", I(1), I(2), 0)})}).find("writes s5"), std::string::npos);
  EXPECT_NE(problem({region({alu("add", 0, S5(), I(1))})}).find("s5 read"), std::string::npos);
  EXPECT_NE(problem({region({alu("mov", 0, Sp(isa::Special::Exec))})}).find("%exec"),
            std::string::npos);
  Stmt shfl;
  shfl.kind = Kind::Shfl;
  EXPECT_NE(problem({region({shfl})}).find("shfl"), std::string::npos);
  EXPECT_NE(problem({region({}), alu("mov", 0, Sh(0))}).find("outside the regions"),
            std::string::npos);
  EXPECT_NE(problem({if_(cmp("cmp.lt", Lane(), I(3)), {region({})})}).find("below the top level"),
            std::string::npos);
}

// oracle.model.regions, oracle.gen.options: every program of the wave invariants
// is a mixed-wave-size program at one of the six (wave, simd) pairs, within the
// model, with regions of several shapes; a share of the structured programs have
// regions, beyond the model, with a SIMD width below the wave.
TEST(WaveModel, GeneratedRegionProgramsHaveRegionsAtSeveralShapes) {
  const std::set<std::pair<uint32_t, uint32_t>> six(gen::region_shapes().begin(),
                                                    gen::region_shapes().end());
  ASSERT_EQ(six.size(), 6u);
  std::map<std::string, uint64_t> n;
  std::set<std::pair<uint32_t, uint32_t>> shapes;
  for (uint64_t k = 0; k < 300; ++k) {
    const uint64_t seed = gen::program_seed(kCiSeed, k);
    Program p = gen::generate_one(*gen::find_invariant("mode-equivalence"), seed, 100);
    ASSERT_EQ(gen::region_model_problem(p), "") << gen::print(p);
    shapes.insert({p.wave, p.simd_width()});
    const size_t regions = count_kind(p.main, Kind::Region);
    ASSERT_GE(regions, 1u) << gen::print(p);
    ASSERT_LE(regions, 3u);
    n["regions"] += regions;
    n["several regions"] += regions > 1;
    n["vshared"] += p.vshared;
    n["several warps"] += p.warps * p.workgroups > 1;
    for (const Stmt& s : p.main) {
      if (s.kind != Kind::Region) {
        ASSERT_EQ(count_kind({s}, Kind::Region), 0u);  // top level only
        continue;
      }
      n["shared temporaries"] += count_kind(s.body, Kind::SharedAlu) > 0;
      n["if"] += count_kind(s.body, Kind::If) > 0;
      n["loop"] += count_kind(s.body, Kind::Loop) > 0;
      n["exit"] += count_kind(s.body, Kind::Exit) > 0;
      n["scalar"] += count_kind(s.body, Kind::ScalarAlu) > 0;
      n["empty"] += s.body.empty();
    }
    auto r = host::load(gen::print(p));
    ASSERT_TRUE(r.loaded) << r.diags.format("generated") << gen::print(p);
  }
  EXPECT_EQ(shapes, six);
  EXPECT_GT(n["regions"], 500u);
  EXPECT_GT(n["several regions"], 150u);
  EXPECT_GT(n["vshared"], 220u);
  EXPECT_GT(n["several warps"], 50u);
  for (const char* what : {"shared temporaries", "if", "loop", "exit", "scalar"})
    EXPECT_GT(n[what], 60u) << what;
  EXPECT_GT(n["empty"], 0u);
  // structured: one program in four, bodies beyond the model, parts below the wave.
  std::map<std::string, uint64_t> st;
  for (uint64_t k = 0; k < 400; ++k) {
    Program p =
        gen::generate_one(*gen::find_invariant("structured"), gen::program_seed(kCiSeed, k), 100);
    if (!gen::uses(p, Kind::Region)) continue;
    ++st["programs"];
    st["parts"] += p.wave > p.simd_width();
    st["beyond the model"] += !gen::region_problem(p).empty();
    for (Kind k : {Kind::Shfl, Kind::Ballot, Kind::Trap, Kind::ExecNarrow})
      for (const Stmt& s : p.main)
        if (s.kind == Kind::Region) st[std::string(gen::kind_name(k))] += count_kind(s.body, k);
  }
  EXPECT_GT(st["programs"], 60u);
  EXPECT_LT(st["programs"], 150u);
  EXPECT_GT(st["parts"], st["programs"] * 2 / 3);
  EXPECT_GT(st["beyond the model"], st["programs"] / 3);
  for (const char* k : {"shfl", "ballot", "trap", "exec_narrow"}) EXPECT_GT(st[k], 0u) << k;
  // Version 4's programs of the invariants that did not opt in are unchanged:
  // no regions, no shared registers.
  for (const char* inv : {"sequential", "policy", "livelock", "validator", "trap-record",
                          "atomic-broadcast", "atomic-count"})
    for (uint64_t seed = 1; seed < 60; ++seed) {
      Program p = gen::generate_one(*gen::find_invariant(inv), seed, 100);
      EXPECT_FALSE(gen::uses(p, Kind::Region)) << inv;
      EXPECT_FALSE(p.vshared) << inv;
    }
  // oracle.gen.options: these take regions beyond the model in one program in four.
  for (const char* inv : {"scheduler", "snapshot", "expansion", "roundtrip", "trap-transparency",
                          "all-or-none", "differential"}) {
    size_t with = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed)
      with += gen::uses(gen::generate_one(*gen::find_invariant(inv), seed, 100), Kind::Region);
    EXPECT_GT(with, 25u) << inv;
    EXPECT_LT(with, 80u) << inv;
  }
}

// oracle.invariant.wave_equivalence, oracle.invariant.software_loop: their
// programs are shape-free with 64 or 128 threads, and at wave 64, simd 32.
TEST(WaveModel, WaveAndSoftwareLoopProgramsHaveTheirShapes) {
  for (uint64_t k = 0; k < 200; ++k) {
    const uint64_t seed = gen::program_seed(kCiSeed, k);
    Program w = gen::generate_one(*gen::find_invariant("wave-equivalence"), seed, 100);
    EXPECT_TRUE(w.threads() == 64 || w.threads() == 128) << w.threads();
    EXPECT_EQ(gen::shape_problem(w), "") << gen::print(w);
    EXPECT_FALSE(w.input.empty());
    Program s = gen::generate_one(*gen::find_invariant("software-loop"), seed, 100);
    EXPECT_EQ(s.wave, 64u);
    EXPECT_EQ(s.simd_width(), 32u);
  }
}

// ---- the structured evaluator models regions --------------------------------------

// oracle.invariant.structured, wave.union, wave.scalar, wave.shared.observe: part
// 0's lanes exit before a region, which then runs part 1's pass alone; a pass
// counter in s5 counts one; a shared register written in the pass holds, after the
// region, the pass's value in part 0's lanes only. The evaluator agrees with the
// reference; with the empty part run, or shared registers private, it does not.
TEST(WaveEval, RegionsSkipEmptyPartsAndShareRegisters) {
  Program p = prog(8, 3,
                   {exit_lanes_below(4),
                    region({shared_alu("mov", 0, Lane()), scalar("add", S5(), I(1), 0),
                            alu("add", 1, Sh(0), I(0))}),
                    alu("mov", 2, Sh(0))});
  p.simd = 4;
  p.vshared = true;
  const auto out = test::words(reference(p), "out");
  ASSERT_EQ(out.size(), 24u);
  for (uint32_t l = 4; l < 8; ++l) {
    EXPECT_EQ(out[l], 1u) << l;       // v2: one pass, s5 = 1
    EXPECT_EQ(out[8 + l], l) << l;    // v3: the lane, in its pass
    EXPECT_EQ(out[16 + l], 0u) << l;  // v4: lane l's own storage, untouched
  }
  gen::OracleContext ctx;
  auto c = gen::structured_with(p, gen::EvalOptions{}, ctx);
  EXPECT_TRUE(c.ok) << c.message;
  gen::EvalOptions empty;
  empty.run_empty_parts = true;
  c = gen::structured_with(p, empty, ctx);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("out[4] (thread 4, lane 4) is 1, expected 2"), std::string::npos)
      << c.message;
  gen::EvalOptions priv;
  priv.private_shared = true;
  c = gen::structured_with(p, priv, ctx);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("out[20] (thread 4, lane 4) is 0, expected 4"), std::string::npos)
      << c.message;
  // Without .vshared the register is private in both.
  p.vshared = false;
  EXPECT_TRUE(check("structured", p).ok);
  EXPECT_EQ(test::words(reference(p), "out")[20], 4u);
}

// oracle.invariant.structured on generated region programs: it holds on the
// reference, and the evaluator's two deliberately wrong variants each fail on
// some of the same programs.
TEST(WaveEval, StructuredHoldsOnRegionProgramsAndItsWrongVariantsDoNot) {
  gen::Options o = gen::options_for("structured");
  o.region_share = 4;
  size_t empty_found = 0, private_found = 0, passes = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Program p = gen::program(o)(rc::Random(seed), 1 + seed % 100).value();
    ASSERT_TRUE(gen::uses(p, Kind::Region));
    gen::OracleContext ctx;
    auto c = gen::structured_with(p, gen::EvalOptions{}, ctx);
    ASSERT_TRUE(c.ok) << "seed " << seed << ": " << c.message << "\n" << gen::print(p);
    passes += c.expected && c.expected->status == "completed";
    gen::EvalOptions e;
    e.run_empty_parts = true;
    empty_found += !gen::structured_with(p, e, ctx).ok;
    gen::EvalOptions s;
    s.private_shared = true;
    private_found += !gen::structured_with(p, s, ctx).ok;
  }
  EXPECT_GT(passes, 250u);
  EXPECT_GT(empty_found, 10u);
  EXPECT_GT(private_found, 10u);
}

// ---- the invariants hold on the reference, and check something -------------------

// Each wave invariant on the programs `simtspec fuzz` checks with the CI seed.
TEST(WaveInvariants, HoldAndCheckSomethingOnTheReference) {
  std::map<std::string, std::map<std::string, uint64_t>> counts;
  for (const char* inv : {"mode-equivalence", "wave-equivalence", "software-loop"})
    for (uint64_t k = 0; k < 300; ++k) {
      const uint64_t seed = gen::program_seed(kCiSeed, k);
      auto c = gen::check_one(*gen::find_invariant(inv), seed, 100, nullptr);
      ASSERT_TRUE(c.ok) << inv << " seed " << seed << ": " << c.message;
      ASSERT_FALSE(c.outside) << inv;
      ASSERT_TRUE(c.expected) << inv;
      for (const auto& [name, n] : c.counts) counts[inv][name] += n;
      counts[inv]["status:" + c.expected->status] += 1;
    }
  for (const char* inv : {"mode-equivalence", "wave-equivalence", "software-loop"}) {
    // Passes after the first of a region (wave.exit: the region runs again).
    EXPECT_GT(counts[inv]["oracle:programs-with-several-passes"], 150u) << inv;
    EXPECT_GT(counts[inv]["oracle:region-passes"], counts[inv]["oracle:region-steps-begin"]) << inv;
    EXPECT_GT(counts[inv]["status:completed"], 200u) << inv;
  }
  // Every program ran at two shapes at least; most at several.
  EXPECT_GE(counts["wave-equivalence"]["oracle:shapes-run"], 600u);
  EXPECT_GT(counts["wave-equivalence"]["oracle:shapes-run"], 1000u);
}

// A program outside the model is outside the invariant (never a failure to
// shrink towards, oracle.shrink).
TEST(WaveInvariants, ProgramsOutsideTheModelAreOutside) {
  Program p = prog(64, 1, {region({alu("add", 0, S5(), I(1))})});
  p.simd = 32;
  for (const char* inv : {"mode-equivalence", "wave-equivalence", "software-loop"}) {
    auto c = check(inv, p);
    EXPECT_FALSE(c.ok) << inv;
    EXPECT_TRUE(c.outside) << inv << ": " << c.message;
  }
  p.main = {region({alu("add", 0, Lane(), I(1))})};
  EXPECT_TRUE(check("mode-equivalence", p).ok);
  EXPECT_TRUE(check("software-loop", p).ok);
  auto c = check("wave-equivalence", p);  // %lane depends on the shape
  EXPECT_TRUE(c.outside) << c.message;
  p.simd = 16;
  c = check("software-loop", p);  // wave.soft.loop: wave 64, simd 32 only
  EXPECT_TRUE(c.outside) << c.message;
}

// ---- the invariants can fail ----------------------------------------------------------

// oracle.invariant.mode_equivalence, wave.scalar: a region whose scalar
// statements the second pass skips (as the faulty implementation's
// scalar-once-per-region does) adds the first pass's last s13 to part 1's lanes.
TEST(WaveInvariants, ModeEquivalenceSeesScalarsOncePerPass) {
  Program p =
      prog(64, 1,
           {region({region_scalar("add", I(3), I(0), 0), region_scalar("add", I(100), I(0), -1)})});
  p.simd = 32;
  auto c = check("mode-equivalence", p);
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.counts["oracle:region-passes"], 2u);
  auto runner = test::faulty_runner("scalar-once-per-region");
  gen::OracleContext ctx;
  ctx.runner = runner.get();
  c = gen::find_invariant("mode-equivalence")->check(p, gen::print(p), ctx);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("out[32] (thread 32, lane 32) is 100, expected 3"), std::string::npos)
      << c.message;
  runner->shutdown();
}

// oracle.invariant.software_loop, wave.soft.source.agree: the one-scalar sequence
// of the design brief's source loses the low half's lanes when the high pass
// empties its own half; the software-loop invariant with it in place of the
// software loop fails there, and on generated programs too.
TEST(WaveInvariants, SoftwareLoopFailsWithTheSourceSequence) {
  Program p =
      prog(64, 1, {region({exit_(cmp("cmp.ge", Lane(), I(32), 2))}), alu("add", 0, Lane(), I(1))});
  p.simd = 32;
  gen::OracleContext ctx;
  auto c = gen::software_loop_with(p, Program::RegionForm::Software, ctx);
  EXPECT_TRUE(c.ok) << c.message;
  // Every lane is lost: the epilogue's exit has none to retire, and the warp runs
  // past the end of its code.
  c = gen::software_loop_with(p, Program::RegionForm::SoftwareSource, ctx);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("(wave.soft.source) the program ends trapped"), std::string::npos)
      << c.message;
  size_t failed = 0;
  for (uint64_t k = 0; k < 600; ++k) {
    Program q = gen::generate_one(*gen::find_invariant("software-loop"),
                                  gen::program_seed(kCiSeed, k), 100);
    ctx.seed = k;
    failed += !gen::software_loop_with(q, Program::RegionForm::SoftwareSource, ctx).ok;
  }
  // wave.soft.source.agree: only where a half ends empty, which is rare.
  EXPECT_GT(failed, 0u);
}

// The wave invariants with --runner find the faulty implementation's wave faults
// (runners/faulty/README.md), shrink the failure and write a regression test that
// lints, passes on the reference and fails on the fault. The model's invariants
// cannot see the faults whose effect the model excludes (an empty part's pass,
// registers shared across parts); structured, whose regions go beyond the
// model, sees all three.
struct Case {
  const char* invariant;
  const char* fault;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.invariant << " against " << c.fault;
}
class WaveFault : public ::testing::TestWithParam<Case> {};

TEST_P(WaveFault, IsFoundShrunkAndWrittenAsARegressionTest) {
  test::FoundFault found;
  test::fuzz_finds_fault(GetParam().invariant, GetParam().fault, &found);
  if (HasFatalFailure()) return;
  EXPECT_LT(found.shrunk_instructions, found.original_instructions) << found.text;
  EXPECT_LE(found.shrunk_instructions, 20u) << found.text;
  EXPECT_NE(found.text.find("generator_version = " + std::to_string(gen::kGeneratorVersion)),
            std::string::npos);
  EXPECT_NE(found.text.find("subv.begin"), std::string::npos) << found.text;
}

INSTANTIATE_TEST_SUITE_P(Faults, WaveFault,
                         ::testing::Values(Case{"structured", "empty-part-not-skipped"},
                                           Case{"structured", "shared-private"},
                                           Case{"structured", "scalar-once-per-region"},
                                           Case{"mode-equivalence", "scalar-once-per-region"},
                                           Case{"wave-equivalence", "scalar-once-per-region"},
                                           Case{"software-loop", "scalar-once-per-region"}),
                         [](const auto& info) {
                           return test::fault_case_name(info.param.invariant, info.param.fault);
                         });

// ---- modesel ------------------------------------------------------------------------

// oracle.invariant.modesel on the programs `simtspec fuzz` checks with the CI
// seed: it holds, and the pass makes groups of every kind of segment.
TEST(WaveModesel, HoldsOnGeneratedPrograms) {
  const gen::Invariant* inv = gen::find_invariant("modesel");
  ASSERT_NE(inv, nullptr);
  std::map<std::string, uint64_t> counts;
  for (uint64_t k = 0; k < 300; ++k) {
    const uint64_t seed = gen::program_seed(kCiSeed, k);
    auto c = gen::check_one(*inv, seed, 100, nullptr);
    ASSERT_TRUE(c.ok) << "seed " << seed << ": " << c.message;
    ASSERT_FALSE(c.outside);
    for (const auto& [name, n] : c.counts) counts[name] += n > 0;
  }
  EXPECT_GT(counts["oracle:modesel-groups"], 200u);
  EXPECT_GT(counts["oracle:modesel-segments"], 250u);
  EXPECT_GT(counts["oracle:modesel-shared-refusals"], 0u);
  EXPECT_GT(counts["oracle:modesel-shared-runs"], 100u);
}

// oracle.invariant.modesel fails on wrong passes: one that groups the segments
// whose need equals the threshold (wave.modesel.threshold), one whose output
// drops a store of `out` (the outcome differs, wave.modesel.output) and one that
// adds a nop to main each time it runs (not idempotent, wave.modesel.output).
TEST(WaveModesel, FailsOnWrongPasses) {
  const gen::Invariant* inv = gen::find_invariant("modesel");
  size_t grouping = 0, outcome = 0, idempotence = 0, tried = 0;
  for (uint64_t k = 0; k < 60; ++k) {
    const uint64_t seed = gen::program_seed(kCiSeed, k);
    Program p = gen::generate_one(*inv, seed, 100);
    gen::OracleContext ctx;
    ctx.seed = seed;
    auto off_by_one = [](const syntax::Program& a, const exec::LaunchConfig& cfg,
                         std::optional<uint32_t> t, passes::Strategy s) {
      return passes::modesel(a, cfg, t && *t > 0 ? std::optional<uint32_t>(*t - 1) : t, s);
    };
    auto drops_a_store = [](const syntax::Program& a, const exec::LaunchConfig& cfg,
                            std::optional<uint32_t> t, passes::Strategy s) {
      auto r = passes::modesel(a, cfg, t, s);
      if (r.program && t == 0u)
        for (size_t i = 0; i < r.program->stmts.size(); ++i) {
          const auto& st = r.program->stmts[i];
          if (st.kind == syntax::StmtKind::Instr && isa::info(st.op).mnemonic == "st" &&
              st.operands[0].name == "out") {
            r.program->stmts.erase(r.program->stmts.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        }
      return r;
    };
    auto adds_a_nop = [](const syntax::Program& a, const exec::LaunchConfig& cfg,
                         std::optional<uint32_t> t, passes::Strategy s) {
      auto r = passes::modesel(a, cfg, t, s);
      if (r.program && t == 0u) {
        syntax::Stmt nop;
        nop.kind = syntax::StmtKind::Instr;
        nop.op = *isa::find("nop");
        r.program->stmts.insert(r.program->stmts.begin(), nop);
      }
      return r;
    };
    ++tried;
    auto a = gen::modesel_with(p, off_by_one, ctx);
    grouping += !a.ok && !a.outside;
    auto b = gen::modesel_with(p, drops_a_store, ctx);
    outcome += !b.ok && b.message.find("out[") != std::string::npos;
    auto c = gen::modesel_with(p, adds_a_nop, ctx);
    idempotence += !c.ok && c.message.find("on its own output changes it") != std::string::npos;
  }
  EXPECT_GT(grouping, tried / 2);
  EXPECT_GT(outcome, tried / 4);
  EXPECT_GT(idempotence, tried / 2);
}

// ---- shrinking ----------------------------------------------------------------------

// oracle.shrink: regions are dropped, unwrapped (their shared temporaries made
// data registers) and shrunk like other bodies; a failing region program (the
// structured evaluator without empty-part skipping) shrinks to a few
// instructions that still hold a region and still fail.
TEST(WaveShrink, ShrinksRegionPrograms) {
  Program p = prog(8, 2,
                   {region({shared_alu("mov", 1, Lane()), alu("add", 0, Sh(1), I(2))}),
                    alu("add", 1, R(0), I(1))});
  p.simd = 4;
  p.vshared = true;
  bool dropped = false, unwrapped = false, body = false, vshared = false, smaller = false;
  for (const Program& q : gen::simplifications(p)) {
    dropped = dropped || (q.main.size() == 1 && q.main[0].kind == Kind::Alu);
    if (q.main.size() == 3 && q.main[0].kind == Kind::Alu && q.main[0].dst == 1 &&
        q.main[1].a == R(1) && !gen::uses_shared_temps(q))
      unwrapped = true;
    body = body || (q.main[0].kind == Kind::Region && q.main[0].body.size() == 1);
    vshared = vshared || (!q.vshared && q.main == p.main);
    smaller = smaller || (q.wave == 4 && q.simd == 2);
  }
  EXPECT_TRUE(dropped);
  EXPECT_TRUE(unwrapped);
  EXPECT_TRUE(body);
  EXPECT_TRUE(vshared);
  EXPECT_TRUE(smaller);
  // A planted failure found by a wrong evaluator, shrunk.
  gen::Options o = gen::options_for("structured");
  o.region_share = 4;
  gen::EvalOptions wrong;
  wrong.run_empty_parts = true;
  auto fails = [&](const Program& q, const std::string&) {
    gen::OracleContext ctx;
    auto c = gen::structured_with(q, wrong, ctx);
    return !c.ok && !c.outside;
  };
  size_t shrunk = 0;
  for (uint64_t seed = 1; seed <= 300 && shrunk < 3; ++seed) {
    Program q = gen::program(o)(rc::Random(seed), 1 + seed % 100).value();
    if (!fails(q, "")) continue;
    gen::ShrinkStats st;
    Program s = gen::shrink(q, fails, 2000, &st);
    ++shrunk;
    EXPECT_TRUE(fails(s, ""));
    EXPECT_TRUE(gen::uses(s, Kind::Region)) << gen::print(s);
    EXPECT_LT(gen::instruction_count(s), gen::instruction_count(q));
    EXPECT_LE(gen::instruction_count(s), 12u) << gen::print(s);
  }
  EXPECT_EQ(shrunk, 3u);
}

}  // namespace
}  // namespace simt
