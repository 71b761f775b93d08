// Generators, invariant oracles, the shrinker and regression files
// (spec/oracles.md). The properties run with the fixed seed CI sets in RC_PARAMS.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fuzz.h"
#include "generate.h"
#include "harness.h"
#include "host/host.h"
#include "lint.h"
#include "oracles.h"
#include "process.h"
#include "shrink.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using gen::Program;

using test::check;

void assert_holds(const std::string& invariant, uint64_t seed = 0) {
  Program p = *gen::program(gen::options_for(invariant));
  auto c = check(invariant, p, seed);
  if (!c.ok) RC_FAIL(invariant + ": " + c.message + "\n" + gen::print(p));
  RC_TAG(p.warps * p.workgroups > 1 ? "multi-warp" : "one warp");
}

// oracle.model.print, oracle.invariant.status: whatever is generated loads and
// ends as the generator meant it to: completed, or (with trap statements or
// stack limits, in single-warp programs) trapped, or deadlocked when a warp
// retires before a barrier; never step_limit or livelock.
RC_GTEST_PROP(Generators, EveryProgramLoadsAndEndsAsIntended, ()) {
  Program p = *gen::program(gen::Options{});
  auto r = host::load(gen::print(p));
  if (!r.loaded) RC_FAIL(r.diags.format("generated") + gen::print(p));
  exec::Machine m(r.loaded->program);
  auto o = m.run();
  const auto want = gen::intended_status(p);
  RC_ASSERT(want.has_value());
  RC_ASSERT(std::string(exec::status_name(o.status)) == *want);
  RC_ASSERT(o.status != exec::Status::StepLimit && o.status != exec::Status::Livelock);
  if (p.warps * p.workgroups > 1) RC_ASSERT(o.status != exec::Status::Trapped);
  RC_CLASSIFY(o.status == exec::Status::Trapped, "trapped");
  RC_CLASSIFY(o.status == exec::Status::Deadlock, "deadlock");
}

// oracle.gen.options: each invariant generates from its own options.
TEST(Generators, OptionsPerInvariant) {
  size_t communicating = 0, small_depth = 0, sequential_communicating = 0, exact = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    for (const char* inv : {"sequential", "scheduler", "differential"}) {
      Program p = gen::generate_one(*gen::find_invariant(inv), seed, 100);
      const bool one_warp = p.warps * p.workgroups == 1;
      if (std::string(inv) == "sequential") {
        sequential_communicating += gen::communicates(p);
        // oracle.model.traps: a stack limit is never below what the program needs.
        EXPECT_TRUE(p.mask_depth == 0 || p.mask_depth >= gen::mask_need(p)) << gen::print(p);
        EXPECT_TRUE(p.call_depth == 0 || p.call_depth >= gen::call_need(p)) << gen::print(p);
        exact += p.mask_depth != 0 && p.mask_depth == gen::mask_need(p);
      } else if (std::string(inv) == "scheduler") {
        communicating += gen::communicates(p);
        if (!one_warp) {
          EXPECT_TRUE(p.mask_depth == 0 || p.mask_depth >= gen::mask_need(p)) << gen::print(p);
          EXPECT_TRUE(p.call_depth == 0 || p.call_depth >= gen::call_need(p)) << gen::print(p);
          EXPECT_FALSE(gen::uses(p, gen::Kind::Trap)) << gen::print(p);
        }
      } else if (p.mask_depth != 0 && p.mask_depth <= 4) {
        ++small_depth;
      }
    }
  }
  EXPECT_EQ(sequential_communicating, 0u);
  EXPECT_GT(communicating, 30u);
  EXPECT_GT(small_depth, 30u);
  EXPECT_GT(exact, 10u);  // stack depths at their limits
}

// oracle.invariant.*
RC_GTEST_PROP(Oracles, Sequential, ()) {
  assert_holds("sequential");
}
RC_GTEST_PROP(Oracles, Scheduler, ()) {
  assert_holds("scheduler");
}
RC_GTEST_PROP(Oracles, Snapshot, (uint64_t seed)) {
  assert_holds("snapshot", seed);
}
// oracle.model.spin, oracle.invariant.snapshot: a share of the snapshot programs
// of the CI seed end livelock, snapshotted before the detection step (and after
// it: k is chosen up to the step count); restored, they detect it at the same
// step. The launch's detector is part of the snapshot (exec.snapshot): a restore
// that kept the fresh machine's finds the livelock at another step
// (tests/mutation/patches/livelock-restore-drops-detector.patch).
TEST(Oracles, SnapshotSeesLivelocks) {
  const gen::Invariant& inv = *gen::find_invariant("snapshot");
  size_t livelocks = 0;
  for (uint64_t k = 0; k < 400; ++k) {
    Program p;
    gen::Check c = gen::check_one(inv, gen::program_seed(20261122, k), 100, nullptr, &p);
    ASSERT_TRUE(c.ok) << c.message << "\n" << gen::print(p);
    livelocks += c.expected && c.expected->status == "livelock";
    if (gen::uses(p, gen::Kind::Spin)) {
      EXPECT_NE(p.policy, "random");
    }
  }
  EXPECT_GT(livelocks, 30u);
  // The premise, on one spinning program: a snapshot's detector decides the step.
  auto loaded = host::load(
      ".wave 1\n.buffer out u32[1] out\nl:  add s0, s0, 1\n"
      "    and s0, s0, 3\n    jmp l\n");
  ASSERT_TRUE(loaded.loaded);
  exec::Machine a(loaded.loaded->program);
  const exec::Outcome whole = exec::Machine(loaded.loaded->program).run();
  ASSERT_EQ(whole.status, exec::Status::Livelock);
  a.advance(5);
  exec::Snapshot s = a.snapshot();
  exec::Machine b(loaded.loaded->program);
  ASSERT_TRUE(b.restore(s));
  EXPECT_EQ(b.run().steps, whole.steps);
  s.detector = exec::LivelockDetector{};  // what a restore without it would have
  s.detector.tortoise = exec::Machine(loaded.loaded->program).state();
  exec::Machine c(loaded.loaded->program);
  ASSERT_TRUE(c.restore(s));
  EXPECT_NE(c.run().steps, whole.steps);
}

RC_GTEST_PROP(Oracles, Expansion, ()) {
  assert_holds("expansion");
}
RC_GTEST_PROP(Oracles, Roundtrip, ()) {
  assert_holds("roundtrip");
}

// oracle.invariant.differential: the reference behind the protocol (no fault)
// agrees with the reference in process on generated programs.
std::unique_ptr<runners::Runner> process_runner(const std::string& toml) {
  auto spec = runners::parse_process_spec(toml, "runner.toml");
  EXPECT_TRUE(std::holds_alternative<runners::ProcessSpec>(spec));
  return runners::make_process_runner(std::get<runners::ProcessSpec>(spec));
}

TEST(Oracles, DifferentialAgreesWithTheReferenceBehindTheProtocol) {
  auto runner = process_runner(test::faulty_runner_toml("none"));
  const auto* inv = gen::find_invariant("differential");
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    auto c = gen::check_one(*inv, seed, 100, runner.get());
    ASSERT_TRUE(c.ok) << "seed " << seed << ": " << c.message;
    ASSERT_EQ(c.unsupported, "") << "seed "
                                 << seed;  // a runner with every capability runs them all
    ASSERT_TRUE(c.expected.has_value());
  }
  runner->shutdown();
}

// A runner claiming only wave 32, two warps, no random policy and no cross-lane
// feature: as many warps of wave 32 as it supports.
std::string narrow_runner_toml() {
  std::string toml = test::faulty_runner_toml("none");
  auto replace = [&](const std::string& from, const std::string& to) {
    auto at = toml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) toml.replace(at, from.size(), to);
  };
  replace("waves = [1, 2, 4, 8, 16, 32, 64]", "waves = [32]\nmax_warps = 2");
  replace(", \"random\"]", "]");
  replace("\"xlane\", ", "");
  return toml;
}

// oracle.gen.capabilities: differential programs stay within the runner's
// capabilities where the generator has the choice.
TEST(Oracles, DifferentialGeneratesWithinTheRunnersCapabilities) {
  auto runner = process_runner(narrow_runner_toml());
  const runners::Capabilities& caps = runner->capabilities();
  ASSERT_EQ(caps.waves, std::set<uint32_t>{32});
  const auto* inv = gen::find_invariant("differential");
  std::set<uint32_t> warps;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    Program p = gen::generate_one(*inv, seed, 100, &caps);
    ASSERT_EQ(p.wave, 32u) << gen::print(p);
    ASSERT_LE(p.warps * p.workgroups, 2u) << gen::print(p);
    ASSERT_NE(p.policy, "random") << gen::print(p);
    ASSERT_FALSE(gen::communicates(p)) << gen::print(p);
    warps.insert(p.warps * p.workgroups);
    auto c = gen::check_one(*inv, seed, 100, runner.get());
    ASSERT_TRUE(c.ok) << "seed " << seed << ": " << c.message;
    ASSERT_EQ(c.unsupported, "") << "seed " << seed << "\n" << gen::print(p);
  }
  EXPECT_EQ(warps, (std::set<uint32_t>{1, 2}));
  // Without the capabilities, the same seeds use other wave sizes too.
  std::set<uint32_t> waves;
  for (uint64_t seed = 1; seed <= 150; ++seed)
    waves.insert(gen::generate_one(*inv, seed, 100).wave);
  EXPECT_GT(waves.size(), 3u);
  runner->shutdown();
}

// oracle.invariant.differential: a program needing what the runner lacks is
// unsupported, neither a pass nor a failure, and is not sent to the runner.
TEST(Oracles, DifferentialCountsWhatTheRunnerLacksAsUnsupported) {
  auto runner = process_runner(narrow_runner_toml());
  Program p;
  p.wave = 8;  // the runner has only wave 32
  p.nregs = 1;
  auto c = check("differential", p, 0, runner.get());
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.unsupported, "the runner lacks wave:8");
  p.wave = 32;
  gen::Stmt shfl;
  shfl.kind = gen::Kind::Shfl;
  p.main.push_back(shfl);
  c = check("differential", p, 0, runner.get());
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.unsupported, "the runner lacks feature:xlane");
  p.main.clear();
  c = check("differential", p, 0, runner.get());
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.unsupported, "");
  runner->shutdown();
}

// The oracles can fail: each notices a broken program model of its kind.
TEST(Oracles, DetectWhatTheyCheck) {
  Program p;
  p.wave = 4;
  p.nregs = 1;
  gen::Stmt shfl;
  shfl.kind = gen::Kind::Shfl;
  p.main.push_back(shfl);
  EXPECT_FALSE(check("sequential", p).ok);            // lanes communicate
  EXPECT_FALSE(check("differential", Program{}).ok);  // no runner
  // Two warps racing to store their index to one word: the scheduler decides.
  const std::string race =
      ".wave 1\n.warps 2\n.buffer out u32[1] out\n    mov v1, %warp\n    cmp.eq p0, v1, 0\n    if "
      "p0\n"
      "      add v2, v1, 1\n      add v2, v2, 1\n    endif\n    st out[0], v1\n    exit\n";
  gen::OracleContext ctx;
  auto c = gen::find_invariant("scheduler")->check(Program{}, race, ctx);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("differs from round_robin"), std::string::npos) << c.message;
}

// oracle.fuzz.seeds: a program is a function of its seed.
TEST(Fuzz, ProgramsAreReproducibleFromTheirSeed) {
  const auto* inv = gen::find_invariant("roundtrip");
  for (uint64_t seed : {0ull, 7ull, 123456789ull}) {
    Program a, b;
    gen::check_one(*inv, seed, 100, nullptr, &a);
    gen::check_one(*inv, seed, 100, nullptr, &b);
    EXPECT_EQ(gen::print(a), gen::print(b));
  }
  Program c, d;
  gen::check_one(*inv, 1, 100, nullptr, &c);
  gen::check_one(*inv, 2, 100, nullptr, &d);
  EXPECT_NE(gen::print(c), gen::print(d));
  EXPECT_EQ(gen::program_seed(40, 2), 42u);
  for (uint64_t s = 0; s < 500; ++s) {
    int z = gen::program_size(s, 100);
    EXPECT_GE(z, 1);
    EXPECT_LE(z, 100);
  }
}

// oracle.shrink: a planted "bug" (any readlane whose result reaches out) shrinks to
// the few statements that show it, and every candidate on the way loads.
TEST(Shrink, ReducesToTheStatementsThatMatter) {
  auto fails = [](const Program&, const std::string& t) {
    return t.find("readlane") != std::string::npos && t.find("loop") != std::string::npos;
  };
  const auto* inv = gen::find_invariant("roundtrip");
  size_t found = 0;
  for (uint64_t seed = 1; seed < 400 && found < 5; ++seed) {
    Program p;
    gen::check_one(*inv, seed, 100, nullptr, &p);
    if (!fails(p, gen::print(p))) continue;
    ++found;
    gen::ShrinkStats st;
    Program s = gen::shrink(p, fails, 5000, &st);
    EXPECT_TRUE(fails(s, gen::print(s)));
    EXPECT_TRUE(host::load(gen::print(s)).loaded.has_value());
    EXPECT_LE(gen::statement_count(s), 2u)
        << gen::print(s);  // the loop and the readlane in it (or next to it)
    EXPECT_EQ(s.warps, 1u);
    EXPECT_LE(s.wave, 1u);
    EXPECT_LE(gen::instruction_count(s), gen::instruction_count(p));
    EXPECT_GT(st.accepted, 0u);
  }
  EXPECT_EQ(found, 5u);
}

TEST(Shrink, StopsWhenNothingFailsAndRespectsTheBudget) {
  const auto* inv = gen::find_invariant("roundtrip");
  Program p;
  gen::check_one(*inv, 99, 100, nullptr, &p);
  gen::ShrinkStats st;
  Program same = gen::shrink(
      p, [](const Program&, const std::string&) { return false; }, 5000, &st);
  EXPECT_EQ(same, p);
  EXPECT_EQ(st.accepted, 0u);
  size_t calls = 0;
  gen::shrink(
      p, [&](const Program&, const std::string&) { return ++calls, true; }, 7, &st);
  EXPECT_LE(st.attempts, 7u);
  EXPECT_LE(calls, 7u);
}

// oracle.shrink: a slow failure (an implementation that hangs until its timeout)
// stops shrinking at the time budget, keeping the simplest failing program so far.
TEST(Shrink, StopsAtTheTimeBudgetWithAFailingProgram) {
  const auto* inv = gen::find_invariant("roundtrip");
  Program p;
  gen::check_one(*inv, 99, 100, nullptr, &p);
  auto slow_fail = [](const Program&, const std::string&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return true;
  };
  gen::ShrinkStats unlimited;
  gen::shrink(
      p, [](const Program&, const std::string&) { return true; }, 5000, &unlimited);
  ASSERT_GE(unlimited.attempts, 8u);  // more than the budget below allows
  gen::ShrinkStats st;
  Program s = gen::shrink(p, slow_fail, 5000, &st, 0.1);
  EXPECT_TRUE(st.out_of_time);
  EXPECT_GE(st.attempts, 1u);
  EXPECT_LT(st.attempts, unlimited.attempts);
  // What comes back is the last accepted simplification, not the original (how
  // many are accepted before the deadline depends on the machine's speed, so the
  // simplification need not have removed an instruction yet).
  EXPECT_TRUE(host::load(gen::print(s)).loaded.has_value());
  EXPECT_GE(st.accepted, 1u);
  EXPECT_NE(gen::print(s), gen::print(p));
  EXPECT_FALSE(unlimited.out_of_time);
}

// oracle.regress: a regression test is a valid test that the reference passes.
TEST(Regress, WrittenTestLintsAndPassesOnTheReference) {
  fs::path dir = fs::temp_directory_path() / ("simtspec_regress_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* name : {"sequential", "scheduler", "snapshot", "expansion", "roundtrip"}) {
    const auto* inv = gen::find_invariant(name);
    Program p;
    gen::Check c = gen::check_one(*inv, 5, 60, nullptr, &p);
    ASSERT_TRUE(c.ok && c.expected) << name << ": " << c.message;
    gen::FuzzFailure f;
    f.invariant = name;
    f.seed = 5;
    f.size = 60;
    f.shrunk = p;
    f.message = "planted for the test";
    fs::create_directories(dir);
    std::ofstream(dir / (std::string(name) + ".simt")) << gen::regression_test(f, c, "");
  }
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  ASSERT_EQ(suite.tests.size(), 5u)
      << (suite.bad.empty() ? "" : suite.bad.begin()->second[0].message);
  for (const auto& t : suite.tests) {
    EXPECT_TRUE(t.generated);
    ASSERT_TRUE(t.origin.is_object());
    EXPECT_NE(t.origin.find("seed"), nullptr);
    EXPECT_NE(t.origin.find("invariant"), nullptr);
    EXPECT_NE(t.origin.find("generator_version"), nullptr);
  }
  test::expect_lints(suite);
  auto runner = runners::make_reference_runner();
  auto sum = test::run_suite(*runner, suite, [](const json::Value& r) {
    EXPECT_EQ(r.find("status")->as_string(), "pass") << json::dump(r).substr(0, 800);
  });
  EXPECT_TRUE(sum.ok());
  EXPECT_GE(sum.total, 5u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace simt
