// Preempted generated programs and the preemption invariants (spec/oracles.md,
// oracle.model.preempt, oracle.invariant.preempt_transparency,
// oracle.invariant.image_stable, oracle.invariant.image_exchange, oracle.shrink):
// what the generator makes, the standard routine it carries, the baseline of the
// transparency invariant, and the invariants failing on each planted fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "exec/machine.h"
#include "fuzz.h"
#include "generate.h"
#include "host/host.h"
#include "oracles.h"
#include "shrink.h"
#include "support.h"
#include "sysroutine.h"
#include "warp_eval.h"

namespace simt {
namespace {

using gen::Program;
constexpr uint64_t kSeed = 20261122;

Program generated(const char* invariant, uint64_t k) {
  return gen::generate_one(*gen::find_invariant(invariant), gen::program_seed(kSeed, k), 100);
}

host::LoadResult load(const Program& p) {
  host::LoadOptions opt;
  opt.host = p.host;
  return host::load(gen::print(p), opt);
}

// oracle.model.preempt: the generator's copy of the standard routine is the
// library file, byte for byte (the file stays the source).
TEST(GenPreempt, RoutineCopyEqualsTheLibrary) {
  const std::string lib = test::read_all(test::source_path("suites/lib/sysroutine.simtlib"));
  ASSERT_FALSE(lib.empty());
  EXPECT_EQ(std::string(gen::kSysRoutine), lib)
      << "generators/sysroutine.h must hold suites/lib/sysroutine.simtlib verbatim";
  EXPECT_EQ(gen::sys_routine_instructions(), 28u);  // 13 saves, 13 loads, 2 sysret
}

// oracle.model.preempt: a share of differential programs carries preemption
// points; exactly those print the routine's directives and the routine, verbatim,
// at the end; every one loads with its script; intruders keep to
// preempt.intruder.
TEST(GenPreempt, ProgramsWithPointsCarryTheRoutineAndLoad) {
  size_t with = 0, points = 0, flow_b = 0, intruders = 0, one_core = 0;
  for (uint64_t k = 0; k < 400; ++k) {
    const Program p = generated("differential", k);
    const std::string text = gen::print(p);
    const bool has = gen::preempts(p);
    EXPECT_EQ(text.find(".sys_save sys_save") != std::string::npos, has) << text;
    EXPECT_EQ(text.find(".sys_restore sys_restore") != std::string::npos, has);
    if (p.line_end == Program::LineEnd::LF) {
      EXPECT_EQ(text.ends_with(gen::kSysRoutine), has);
    }
    auto r = load(p);
    ASSERT_TRUE(r.loaded) << r.diags.format("generated") << text;
    if (!has) continue;
    ++with;
    EXPECT_TRUE(std::is_sorted(p.host.begin(), p.host.end(),
                               [](const auto& a, const auto& b) { return a.step < b.step; }));
    for (const auto& h : p.host) {
      if (h.kind != syntax::HostKind::Preempt) continue;
      ++points;
      one_core += h.core != syntax::kAllCores;
      flow_b += h.flow == syntax::PreemptFlow::B;
      if (h.intruder.empty()) continue;
      ++intruders;
      EXPECT_EQ(h.flow, syntax::PreemptFlow::B);
      auto ir = host::load(h.intruder);
      ASSERT_TRUE(ir.loaded) << h.intruder;
      const auto& ic = ir.loaded->config;
      EXPECT_EQ(ic.cores, h.core == syntax::kAllCores ? p.cores : 1u);
      EXPECT_GE(ic.slm, 256u);
      EXPECT_EQ(exec::Machine(ir.loaded->program).run().status, exec::Status::Completed);
    }
  }
  // differential: half the programs (preempt_share 2 of 4).
  EXPECT_GT(with, 120u);
  EXPECT_LT(with, 280u);
  EXPECT_GT(points, with);
  EXPECT_GT(flow_b, 0u);
  EXPECT_GT(intruders, 0u);
  EXPECT_GT(one_core, 0u);
}

// oracle.gen.capabilities: without the preempt feature or the host extra, no
// preemption points.
TEST(GenPreempt, RunnerWithoutPreemptGetsNoPoints) {
  runners::Capabilities caps;
  caps.waves = caps.simds = {1, 2, 4, 8, 16, 32, 64};
  caps.policies = {"round_robin", "lowest_pc_first", "oldest_first", "random"};
  caps.features = {"alu", "mem", "xlane", "bar", "branch", "watomic", "trap", "wave"};
  caps.extras = {"host"};
  const gen::Invariant& inv = *gen::find_invariant("differential");
  size_t with_feature = 0;
  for (uint64_t k = 0; k < 200; ++k) {
    EXPECT_FALSE(gen::preempts(gen::generate_one(inv, gen::program_seed(kSeed, k), 100, &caps)));
    runners::Capabilities full = caps;
    full.features.insert("preempt");
    with_feature += gen::preempts(gen::generate_one(inv, gen::program_seed(kSeed, k), 100, &full));
    runners::Capabilities no_host = full;
    no_host.extras.clear();
    EXPECT_FALSE(gen::preempts(gen::generate_one(inv, gen::program_seed(kSeed, k), 100, &no_host)));
  }
  EXPECT_GT(with_feature, 0u);
}

// The structured evaluator accepts a script of preemption points only (no model:
// transparency is the oracle), and not a script with other actions.
TEST(GenPreempt, StructuredEvaluatorRunsPreemptedPrograms) {
  size_t run = 0;
  for (uint64_t k = 0; k < 300 && run < 20; ++k) {
    const Program p = generated("structured", k);
    if (!gen::preempts(p)) continue;
    gen::StructuredResult r = gen::evaluate_structured(p);
    EXPECT_TRUE(r.error.empty()) << r.error;
    gen::OracleContext ctx;
    gen::Check c = gen::find_invariant("structured")->check(p, gen::print(p), ctx);
    EXPECT_TRUE(c.ok) << c.message;
    Program q = p;
    syntax::HostStep resume;
    resume.kind = syntax::HostKind::Resume;
    q.host.insert(q.host.begin(), resume);
    EXPECT_FALSE(gen::evaluate_structured(q).error.empty());
    ++run;
  }
  EXPECT_EQ(run, 20u);
}

// oracle.invariant.preempt_transparency: the baseline cannot hide a difference.
// Each planted fault (exec::PreemptFaults, one at a time, on the preempted
// launches only) makes the invariant fail on some of the first generated
// programs, while without a fault it holds on all of them.
TEST(PreemptTransparency, FindsEveryPlantedFault) {
  using F = exec::PreemptFaults;
  const std::pair<const char*, bool F::*> faults[] = {
      {"mask stack not saved", &F::mask_stack_not_saved},
      {"cursor not saved", &F::cursor_not_saved},
      {"SLM not restored", &F::slm_not_restored},
      {"part restarts", &F::part_restarts},
      {"barrier unwound", &F::barrier_unwound}};
  for (const auto& [name, field] : faults) {
    SCOPED_TRACE(name);
    F f;
    f.*field = true;
    bool found = false;
    for (uint64_t k = 0; k < 3000 && !found; ++k) {
      const Program p = generated("preempt-transparency", k);
      gen::OracleContext ctx;
      ctx.seed = gen::program_seed(kSeed, k);
      const gen::Check good = gen::preempt_transparency_with(p, F{}, ctx);
      ASSERT_TRUE(good.ok) << good.message;
      const gen::Check bad = gen::preempt_transparency_with(p, f, ctx);
      found = !bad.ok;
      if (found) {
        EXPECT_NE(bad.message.find("preempted by flow"), std::string::npos) << bad.message;
        EXPECT_FALSE(bad.host.empty());
      }
    }
    EXPECT_TRUE(found) << name << " was not found";
  }
}

// The baseline (PreemptUnit::set_baseline) carries out nothing: no preemption,
// no image, and the outcome and trace of the launch without the actions.
TEST(PreemptTransparency, BaselineChangesNothing) {
  const char* text = R"(.wave 4
.warps 2
.slm 32
.sys_save sys_save
.sys_restore sys_restore
    shl v1, %lane, 2
    mul s0, %warp, 16
    add v1, v1, s0
    st slm[v1], %lane
    bar
    ld v2, slm[v1]
    exit
)";
  const std::string full = text + std::string(gen::kSysRoutine);
  host::LoadOptions opt;
  for (uint64_t s : {0, 3, 5}) {
    syntax::HostStep h;
    h.kind = syntax::HostKind::Preempt;
    h.step = s;
    h.flow = syntax::PreemptFlow::B;
    opt.host.push_back(h);
  }
  auto with = host::load(full, opt);
  ASSERT_TRUE(with.loaded) << with.diags.format("t");
  auto without = host::load(full);
  ASSERT_TRUE(without.loaded);
  std::vector<uint32_t> pcs_a, pcs_b;
  exec::Machine a(with.loaded->program), b(without.loaded->program), c(with.loaded->program);
  a.preempt().set_baseline(true);
  a.set_trace([&](const exec::TraceRecord& r) { pcs_a.push_back(r.pc); });
  b.set_trace([&](const exec::TraceRecord& r) { pcs_b.push_back(r.pc); });
  const exec::Outcome oa = a.run(), ob = b.run(), oc = c.run();
  EXPECT_EQ(a.preemptions(), 0u);
  EXPECT_TRUE(a.last_image().empty());
  EXPECT_EQ(c.preemptions(), 3u);  // the same launch without the baseline preempts
  EXPECT_TRUE(oa.same_result(ob));
  EXPECT_EQ(oa.steps, ob.steps);
  EXPECT_EQ(pcs_a, pcs_b);
}

// oracle.invariant.preempt_transparency, image-stable: hold on generated programs.
TEST(PreemptInvariants, HoldOnGeneratedPrograms) {
  for (const char* name : {"preempt-transparency", "image-stable"}) {
    const gen::Invariant& inv = *gen::find_invariant(name);
    size_t preempted = 0;
    for (uint64_t k = 0; k < 150; ++k) {
      Program p;
      gen::Check c = gen::check_one(inv, gen::program_seed(kSeed, k), 100, nullptr, &p);
      EXPECT_TRUE(c.ok) << name << " seed " << gen::program_seed(kSeed, k) << ": " << c.message;
      preempted += std::any_of(c.host.begin(), c.host.end(),
                               [](const auto& h) { return h.kind == syntax::HostKind::Preempt; });
    }
    EXPECT_GT(preempted, 100u) << name;
  }
}

// oracle.invariant.image_stable fails on a save or restore that is not exact:
// with the reference's part fault, a warp stopped in a later pass of a region
// comes back in part 0, so a second save differs from the first.
TEST(PreemptInvariants, ImageStableFindsARestoreThatIsNotExact) {
  exec::PreemptFaults f;
  f.part_restarts = true;
  bool found = false;
  for (uint64_t k = 0; k < 2000 && !found; ++k) {
    const Program p = generated("image-stable", k);
    gen::OracleContext ctx;
    ctx.seed = gen::program_seed(kSeed, k);
    ASSERT_TRUE(gen::image_stable_with(p, exec::PreemptFaults{}, ctx).ok);
    const gen::Check c = gen::image_stable_with(p, f, ctx);
    found = !c.ok;
    if (found) {
      EXPECT_NE(c.message.find("the images differ"), std::string::npos) << c.message;
    }
  }
  EXPECT_TRUE(found);
}

// oracle.invariant.image_exchange: the faulty implementation's images are
// exchanged and compared byte for byte: faults found there, and none with the
// fault `none`.
TEST(PreemptInvariants, ImageExchangeFindsFaultsInTheImage) {
  for (const char* fault : {"preempt-cursor-lost", "preempt-barrier-unwound"}) {
    SCOPED_TRACE(fault);
    auto runner = test::faulty_runner(fault);
    const gen::Invariant& inv = *gen::find_invariant("image-exchange");
    bool found = false;
    for (uint64_t k = 0; k < 100 && !found; ++k) {
      gen::Check c = gen::check_one(inv, gen::program_seed(kSeed, k), 100, runner.get());
      found = !c.ok;
    }
    EXPECT_TRUE(found);
    runner->shutdown();
  }
  auto none = test::faulty_runner("none");
  for (uint64_t k = 0; k < 60; ++k) {
    gen::Check c = gen::check_one(*gen::find_invariant("image-exchange"),
                                  gen::program_seed(kSeed, k), 100, none.get());
    EXPECT_TRUE(c.ok) << c.message;
  }
  none->shutdown();
}

// oracle.shrink: preemption points are removed, moved earlier, turned from flow
// B into A and lose their intruders; the routine is never shrunk and its
// instructions are not counted.
TEST(GenPreempt, ShrinkerSimplifiesPreemptionPoints) {
  Program p;
  p.wave = 4;
  p.nregs = 1;
  syntax::HostStep h;
  h.kind = syntax::HostKind::Preempt;
  h.step = 9;
  h.flow = syntax::PreemptFlow::B;
  h.intruder = gen::intruder_text(p, syntax::kAllCores, 7);
  p.host = {h};
  bool removed = false, earlier = false, flow_a = false, no_intruder = false;
  for (const Program& q : gen::simplifications(p)) {
    if (q.host.empty()) {
      removed = true;
      continue;
    }
    ASSERT_EQ(q.host.size(), 1u);
    earlier |= q.host[0].step < 9;
    flow_a |= q.host[0].flow == syntax::PreemptFlow::A && q.host[0].intruder.empty();
    no_intruder |= q.host[0].flow == syntax::PreemptFlow::B && q.host[0].intruder.empty();
  }
  EXPECT_TRUE(removed);
  EXPECT_TRUE(earlier);
  EXPECT_TRUE(flow_a);
  EXPECT_TRUE(no_intruder);
  Program plain = p;
  plain.host.clear();
  EXPECT_EQ(gen::instruction_count(p), gen::instruction_count(plain));
  EXPECT_GT(gen::instruction_count(p), 0u);
  EXPECT_NE(gen::print(p).find("sys_restore:"), std::string::npos);
}

}  // namespace
}  // namespace simt
