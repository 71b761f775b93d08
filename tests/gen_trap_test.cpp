// ci: not sanitized: the trap invariants over generated programs: a semantic sweep (release build)
// Trapping generated programs and the trap invariants (spec/oracles.md,
// oracle.model.handler, oracle.model.host, oracle.invariant.trap_transparency,
// oracle.invariant.trap_record, oracle.invariant.all_or_none, and the structured
// and differential invariants on handler programs).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

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
#include "process.h"
#include "reference.h"
#include "shrink.h"
#include "support.h"
#include "warp_eval.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using gen::Program;
using namespace test::genb;

using test::check;

// The reference's outcome of a generated program, with its host script.
exec::Outcome reference(const Program& p) {
  host::LoadOptions opt;
  opt.host = p.host;
  return test::outcome(gen::print(p), opt);
}

// ---- the program model ----------------------------------------------------------

// oracle.model.handler: the recording handler logs each event of the raising
// warp (cause word, TGID, resume PC, lane, address, space, global ESR, barrier
// status), skips exceptions and resumes system calls after them; the structured
// evaluator says the same as the reference.
TEST(TrapModel, RecordingHandlerLogsSkipsAndResumes) {
  Stmt vdiv = trap(gen::TrapKind::VectorDivZero, 1);  // and v19, %lane, 3; div v3, 9, v19
  vdiv.op = "div";
  vdiv.a = Lane();
  vdiv.b = I(9);
  Stmt ld = trap(gen::TrapKind::LoadOutOfRange, 0);  // shl v19, v1, 2; ld v2, out[v19]
  ld.limit = 1;
  Stmt sys;
  sys.kind = Kind::Sys;
  sys.a = I(7);
  Program p = prog(4, 2,
                   {alu("mov", 0, I(5)), trap(gen::TrapKind::ScalarDivZero), sys, vdiv, ld,
                    alu("add", 1, R(1), I(1))});
  p.handler = Program::Handler::Record;
  const std::string text = gen::print(p);
  ASSERT_NE(text.find(".handler trap_record"), std::string::npos) << text;
  ASSERT_NE(text.find(".buffer trec u32[warps * workgroups * 64] out"), std::string::npos);
  exec::Outcome o = reference(p);
  ASSERT_EQ(o.status, exec::Status::Completed) << text;
  const std::vector<uint32_t> log = test::words(o, "trec");
  ASSERT_EQ(log.size(), 64u);
  // PCs: 0 shl v1; 1 mov v2; 2 div s5; 3 sys; 4 and v19; 5 div v3; 6 shl v19; 7 ld.
  const uint32_t none = 0xffffffffu;
  const std::vector<uint32_t> want = {
      4,                                        // events
      1,           0, 2, none, 0,  none, 0, 0,  // div_zero (scalar): no lane
      11 | 7 << 8, 0, 4, none, 0,  none, 0, 0,  // syscall 7: resumes after the sys
      1,           0, 5, 0,    0,  none, 0, 0,  // div_zero in lane 0
      2,           0, 7, 2,    32, 0,    0, 0,  // mem_out_of_bounds, lane 2, out (buffer 0)
  };
  EXPECT_EQ(std::vector<uint32_t>(log.begin(), log.begin() + 33), want);
  for (size_t i = 33; i < log.size(); ++i) EXPECT_EQ(log[i], 0u) << i;
  // Skipped instructions committed nothing: v2 keeps 5, v3 is 0 + 1.
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{5, 5, 5, 5, 1, 1, 1, 1}));
  gen::StructuredResult r = gen::evaluate_structured(p);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.outcome.status, "completed");
  EXPECT_TRUE(check("structured", p).ok) << check("structured", p).message;
  // Without the handler the program traps at its first event.
  p.handler = Program::Handler::None;
  o = reference(p);
  ASSERT_EQ(o.status, exec::Status::Trapped);
  EXPECT_EQ(o.event->pc, 2u);
  EXPECT_EQ(gen::evaluate_structured(p).outcome.event->pc, 2u);
}

// oracle.shrink: the shrinker's marking handlers store the raising warp's cause
// word and its global ESR view (Mark) or its resume PC (MarkPc) at the head of
// its log; the reference and the structured evaluator agree, and an exception
// under them is outside the evaluator's domain (and never a shrink candidate).
TEST(TrapModel, MarkingHandlersStoreCauseAndGesrOrPc) {
  Stmt sys;
  sys.kind = Kind::Sys;
  sys.a = I(7);
  Program p = prog(4, 1, {alu("mov", 0, I(5)), sys, alu("add", 0, R(0), I(1))});
  p.warps = 2;
  for (auto h : {Program::Handler::Mark, Program::Handler::MarkPc}) {
    p.handler = h;
    exec::Outcome o = reference(p);
    ASSERT_EQ(o.status, exec::Status::Completed) << gen::print(p);
    const std::vector<uint32_t> log = test::words(o, "trec");
    ASSERT_EQ(log.size(), 128u);
    for (uint32_t g = 0; g < 2; ++g) {
      EXPECT_EQ(log[64 * g], 11u | 7u << 8) << g;  // syscall, code 7
      EXPECT_EQ(log[64 * g + 1], 0u);              // no global interrupt
      // PCs: 0 mul s0; 1 add v0; 2 shl v1; 3 mov v2; 4 sys: resumes at 5.
      EXPECT_EQ(log[64 * g + 2], h == Program::Handler::MarkPc ? 5u : 0u) << gen::print(p);
    }
    EXPECT_TRUE(check("structured", p).ok) << check("structured", p).message;
  }
  Program e = prog(4, 1, {trap(gen::TrapKind::ScalarDivZero)});
  e.handler = Program::Handler::Mark;
  gen::Check c = check("structured", e);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.outside) << c.message;
}

// trap.frame.room: with a stack below 64 bytes the first event ends the launch
// with frame_overflow at the raising instruction, and the evaluator agrees.
TEST(TrapModel, SmallStackEndsWithFrameOverflow) {
  Stmt sys;
  sys.kind = Kind::Sys;
  sys.a = I(3);
  Program p = prog(8, 1, {alu("mov", 0, I(1)), sys});
  p.handler = Program::Handler::Record;
  p.stack = 48;
  ASSERT_NE(gen::print(p).find(".stack 48"), std::string::npos);
  exec::Outcome o = reference(p);
  ASSERT_EQ(o.status, exec::Status::Trapped);
  EXPECT_EQ(o.event->code, isa::Event::FrameOverflow);
  EXPECT_EQ(o.event->pc, 2u);
  auto c = check("structured", p);
  EXPECT_TRUE(c.ok) << c.message;
}

// oracle.model.handler, oracle.gen.options: which invariants get handler
// programs, system calls in programs of several warps, small stacks and host
// scripts; every one loads with its script; the handler's registers are not
// the model's.
TEST(TrapModel, GeneratedHandlerProgramsPerInvariant) {
  std::map<std::string, size_t> handler, host, sys_multi, stack;
  for (const char* inv : {"structured", "trap-record", "all-or-none", "trap-transparency",
                          "sequential", "livelock", "policy", "scheduler"})
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      Program p = gen::generate_one(*gen::find_invariant(inv), seed, 100);
      if (p.host_program) continue;  // oracle.model.hostprog: gen_host_test.cpp
      handler[inv] += p.handler == Program::Handler::Record;
      // oracle.model.preempt: preemption points need no handler; the trap
      // chapter's actions are the others.
      const bool actions = gen::preemption_points(p) != p.host.size();
      host[inv] += actions;
      stack[inv] += p.stack != 0;
      const bool multi = p.warps * p.workgroups > 1;
      sys_multi[inv] += multi && gen::uses(p, Kind::Sys);
      if (multi) {
        EXPECT_FALSE(gen::uses(p, Kind::Trap)) << gen::print(p);
      }
      if (multi) {  // the schedule would pick the overflowing warp
        EXPECT_EQ(p.stack, 0u);
      }
      if (actions || p.stack) {
        EXPECT_EQ(p.handler, Program::Handler::Record);
      }
      if (p.handler == Program::Handler::Record) {  // no push may overflow under it
        EXPECT_TRUE(p.mask_depth == 0 || p.mask_depth >= gen::mask_need(p)) << gen::print(p);
      }
      // Without the handler the schedule would decide whose call ends the launch.
      if (multi && gen::uses(p, Kind::Sys)) {
        EXPECT_EQ(p.handler, Program::Handler::Record);
      }
      host::LoadOptions opt;
      opt.host = p.host;
      auto r = host::load(gen::print(p), opt);
      ASSERT_TRUE(r.loaded) << inv << " seed " << seed << "\n"
                            << r.diags.format("generated") << gen::print(p);
    }
  EXPECT_EQ(handler["trap-record"], 200u);
  EXPECT_GT(handler["all-or-none"], 100u);  // one in four is a host program
  for (const char* inv : {"trap-record", "all-or-none"}) {
    EXPECT_GT(host[inv], 50u) << inv;
    EXPECT_GT(sys_multi[inv], 20u) << inv;
  }
  EXPECT_GT(handler["structured"], 25u);
  EXPECT_LT(handler["structured"], 100u);
  EXPECT_GT(stack["structured"] + stack["trap-record"] + stack["all-or-none"], 5u);
  EXPECT_EQ(host["structured"], 0u);  // the evaluator keeps no step counts
  for (const char* inv : {"trap-transparency", "sequential", "livelock", "policy"}) {
    EXPECT_EQ(handler[inv], 0u) << inv;
    EXPECT_EQ(host[inv], 0u) << inv;
  }
  EXPECT_EQ(host["scheduler"], 0u);  // interrupts land where the schedule puts them
  EXPECT_GT(handler["scheduler"], 0u);
  // The handler's registers: s48-s51 and p11, which no printed statement writes.
  Program p = gen::generate_one(*gen::find_invariant("trap-record"), 3, 100);
  p.handler = Program::Handler::None;
  const std::string user = gen::print(p);
  for (const char* r : {"s48", "s49", "s50", "s51", "p11"})
    EXPECT_EQ(user.find(std::string(r) + ","), std::string::npos) << r;
}

// oracle.invariant.structured: the evaluator's model of the recording handler
// agrees with the reference on handler programs whose statements raise every
// kind of event the generator plants; the logs show them all.
TEST(TrapModel, StructuredCoversTheEventsUnderTheHandler) {
  gen::Options o;
  o.handler_share = 4;
  o.trap_always = true;
  o.trap_weight = 12;
  o.multi_warp = false;
  std::map<uint32_t, size_t> causes;  // event code -> records
  std::set<uint32_t> lanes_seen;
  size_t logged_programs = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    Program p = gen::program(o)(rc::Random(seed), 20 + seed % 80).value();
    ASSERT_EQ(p.handler, Program::Handler::Record);
    gen::OracleContext ctx;
    auto c = gen::find_invariant("structured")->check(p, gen::print(p), ctx);
    ASSERT_TRUE(c.ok) << "seed " << seed << ": " << c.message << "\n" << gen::print(p);
    ASSERT_TRUE(c.expected);
    for (const auto& b : c.expected->buffers) {
      if (b.name != "trec") continue;
      const uint32_t n = static_cast<uint32_t>(b.values[0]);
      logged_programs += n > 0;
      for (uint32_t k = 0; k < std::min(n, gen::kRecords); ++k) {
        const size_t at = 1 + k * gen::kRecordFields;
        ++causes[static_cast<uint32_t>(b.values[at + gen::kRecCause]) & 0xff];
        lanes_seen.insert(static_cast<uint32_t>(b.values[at + gen::kRecLane]));
      }
    }
  }
  EXPECT_GT(logged_programs, 400u);
  for (isa::Event e : {isa::Event::DivZero, isa::Event::MemOutOfBounds, isa::Event::MemMisaligned,
                       isa::Event::CallOverflow, isa::Event::Syscall})
    EXPECT_GT(causes[static_cast<uint32_t>(e)], 0u) << isa::event_name(e);
  EXPECT_TRUE(lanes_seen.count(0xffffffffu));  // scalar events carry no lane
  EXPECT_GT(lanes_seen.size(), 3u);
}

// ---- the invariants hold on the reference -----------------------------------------

void assert_holds(const std::string& invariant, uint64_t seed) {
  Program p = *gen::program(gen::options_for(invariant));
  auto c = check(invariant, p, seed);
  if (!c.ok) RC_FAIL(invariant + ": " + c.message + "\n" + gen::print(p));
  RC_TAG(p.warps * p.workgroups > 1 ? "multi-warp" : "one warp");
}

RC_GTEST_PROP(TrapInvariants, TrapTransparency, (uint64_t seed)) {
  assert_holds("trap-transparency", seed);
}
RC_GTEST_PROP(TrapInvariants, TrapRecord, ()) {
  assert_holds("trap-record", 0);
}
RC_GTEST_PROP(TrapInvariants, AllOrNone, ()) {
  assert_holds("all-or-none", 0);
}

// Each invariant on the programs `simtspec fuzz` checks (seeds of the CI run):
// they hold, and they check something: interrupts are taken, programs trap
// without a handler, handlers run with several warps on a core.
TEST(TrapInvariants, HoldAndCheckSomethingOnTheReference) {
  std::map<std::string, std::map<std::string, uint64_t>> counts;
  for (const char* inv : {"trap-transparency", "trap-record", "all-or-none"})
    for (uint64_t k = 0; k < 300; ++k) {
      const uint64_t seed = gen::program_seed(20261122, k);
      auto c = gen::check_one(*gen::find_invariant(inv), seed, 100, nullptr);
      ASSERT_TRUE(c.ok) << inv << " seed " << seed << ": " << c.message;
      ASSERT_TRUE(c.expected) << inv;
      for (const auto& [name, n] : c.counts) counts[inv][name] += n > 0;
    }
  EXPECT_GT(counts["trap-transparency"]["oracle:runs-with-entries"], 200u);
  EXPECT_GT(counts["trap-record"]["oracle:trapped-without-handler"], 80u);
  EXPECT_GT(counts["all-or-none"]["oracle:boundaries-in-handler"], 100u);
}

// ---- the invariants can fail --------------------------------------------------------

// oracle.invariant.trap_transparency: a handler that writes a data register, or
// that logs to an output buffer, changes what the program shows.
TEST(TrapInvariants, TransparencyFailsForHandlersThatChangeState) {
  // v3 (data register 1) is never written: only a handler could change it.
  Program p = prog(4, 2, {alu("add", 0, Lane(), I(3))});
  gen::OracleContext ctx;
  ctx.seed = 5;
  Program returns;
  returns.handler = Program::Handler::Return;
  auto c = gen::trap_transparency_with(p, returns, ctx);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_NE(c.regression_text.find("tclear"), std::string::npos);
  ASSERT_FALSE(c.host.empty());
  Program writes;
  writes.handler = Program::Handler::Custom;
  writes.handler_code = "mov v3, 77\ntclear\ntret";
  size_t failed = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    ctx.seed = seed;
    c = gen::trap_transparency_with(p, writes, ctx);
    if (c.ok) continue;
    ++failed;
    EXPECT_NE(c.message.find("out["), std::string::npos) << c.message;
    EXPECT_NE(c.message.find("with the host actions"), std::string::npos) << c.message;
  }
  // Interrupts before the stores show; one at the last steps may come too late.
  EXPECT_GT(failed, 10u);
  Program logs;
  logs.handler = Program::Handler::Record;
  c = gen::trap_transparency_with(p, logs, ctx);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("output buffer trec"), std::string::npos) << c.message;
  // A program that raises events is outside the invariant.
  p.main.push_back(trap(gen::TrapKind::ScalarDivZero));
  EXPECT_FALSE(gen::trap_transparency_with(p, returns, ctx).ok);
}

// trap.allornone, trap.join: the state check notices a core whose ready warps
// are in different modes, and a warp left waiting for a join.
TEST(TrapInvariants, AllOrNoneNoticesMixedCoresAndStrandedWarps) {
  auto program = test::build(
      ".warps 2\n.cores 2\n.workgroups 2\n.buffer out u32[1] out\n"
      "    nop\n    nop\n    exit\n");
  ASSERT_TRUE(program);
  exec::Machine m(program);
  m.advance(1);
  EXPECT_EQ(gen::allornone_problem(m), "");
  // Warps 0 and 1 are on core 0 (workgroup 0), 2 and 3 on core 1.
  ASSERT_EQ(m.trap().core_of(1), 0u);
  ASSERT_EQ(m.trap().core_of(2), 1u);
  m.mutable_state().warps[1].in_handler = true;
  std::string d = gen::allornone_problem(m);
  EXPECT_NE(d.find("core 0"), std::string::npos) << d;
  EXPECT_NE(d.find("(trap.allornone)"), std::string::npos) << d;
  m.mutable_state().warps[1].in_handler = false;
  m.mutable_state().warps[3].status = exec::WarpStatus::Returned;
  d = gen::allornone_problem(m);
  EXPECT_NE(d.find("core 1 warp 3"), std::string::npos) << d;
  EXPECT_NE(d.find("(trap.join)"), std::string::npos) << d;
  // A core in its handler with the returned warp waiting is fine.
  m.mutable_state().warps[2].in_handler = true;
  EXPECT_EQ(gen::allornone_problem(m), "");
}

// The trap invariants with --runner, and differential and structured on handler
// and host programs, find the trap chapter's planted faults of the faulty implementation,
// and write a regression test (with its host script) that the reference passes
// and the fault fails.
struct Case {
  const char* invariant;
  const char* fault;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.invariant << " against " << c.fault;
}
class TrapFault : public ::testing::TestWithParam<Case> {};

TEST_P(TrapFault, IsFoundAndWrittenAsARegressionTest) {
  test::FoundFault found;
  test::fuzz_finds_fault(GetParam().invariant, GetParam().fault, &found);
}

std::vector<Case> trap_cases() {
  std::vector<Case> out;
  for (const char* f :
       {"syscall-skip", "syscall-pc-same", "frame-exec-live", "esr-bystander", "barrier-count-kept",
        "tclear-core-only", "pause-as-return", "vcall-depth-unchecked", "frame-sp-after-push"})
    out.push_back({"differential", f});
  // oracle.invariant.host_script with --runner: host programs against the host model.
  for (const char* f : {"pause-as-return", "vcall-depth-unchecked", "frame-sp-after-push",
                        "tclear-core-only", "barrier-count-kept"})
    out.push_back({"host-script", f});
  out.push_back({"structured", "syscall-skip"});
  out.push_back({"structured", "frame-exec-live"});
  out.push_back({"trap-transparency", "frame-exec-live"});
  out.push_back({"trap-transparency", "barrier-count-kept"});
  out.push_back({"trap-record", "syscall-skip"});
  out.push_back({"trap-record", "esr-bystander"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Faults, TrapFault, ::testing::ValuesIn(trap_cases()),
                         [](const auto& info) {
                           return test::fault_case_name(info.param.invariant, info.param.fault);
                         });

// ---- regression tests and shrinking -------------------------------------------------

// oracle.regress, trap.host.toml: a regression test of a program that runs with a
// host script carries it as [[host]] in its header; it lints and passes on the
// reference.
TEST(TrapRegress, WrittenTestsCarryTheHostScript) {
  fs::path dir = fs::temp_directory_path() / ("simtspec_trapregress_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  size_t written = 0;
  for (const char* name : {"trap-transparency", "trap-record", "all-or-none", "snapshot"}) {
    const auto* inv = gen::find_invariant(name);
    for (uint64_t seed = 1; seed < 200; ++seed) {
      Program p;
      gen::Check c = gen::check_one(*inv, seed, 60, nullptr, &p);
      ASSERT_TRUE(c.ok && c.expected) << name << ": " << c.message;
      if (c.host.empty()) continue;
      gen::FuzzFailure f;
      f.invariant = name;
      f.seed = seed;
      f.size = 60;
      f.shrunk = p;
      f.message = "planted for the test";
      const std::string text = gen::regression_test(f, c, "");
      EXPECT_NE(text.find("; [[host]]\n; step = "), std::string::npos) << text;
      std::ofstream(dir / (std::string(name) + ".simt")) << text;
      ++written;
      break;
    }
  }
  ASSERT_EQ(written, 4u);
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  ASSERT_EQ(suite.tests.size(), 4u)
      << (suite.bad.empty() ? "" : suite.bad.begin()->second[0].message);
  for (const auto& t : suite.tests) EXPECT_FALSE(t.host.empty()) << t.id;
  test::expect_lints(suite);
  auto runner = runners::make_reference_runner();
  auto sum = test::run_suite(*runner, suite, [](const json::Value& r) {
    EXPECT_EQ(r.find("status")->as_string(), "pass") << json::dump(r).substr(0, 800);
  });
  EXPECT_TRUE(sum.ok());
  fs::remove_all(dir);
}

// oracle.shrink: the host script shrinks (fewer actions, all cores, code 0,
// earlier steps), the handler and small stack go, and every candidate kept
// loads with its own script (a core index past the cores does not).
TEST(TrapShrink, ShrinksHostScriptsAndHandlers) {
  const auto* inv = gen::find_invariant("all-or-none");
  size_t found = 0;
  for (uint64_t seed = 1; seed < 300 && found < 5; ++seed) {
    Program p = gen::generate_one(*inv, seed, 100);
    if (p.host.size() < 2 || p.cores < 2) continue;
    ++found;
    // A planted failure: any program that runs with a host script and has two cores.
    auto fails = [](const Program& q, const std::string&) {
      return !q.host.empty() && q.cores > 1;
    };
    Program s = gen::shrink(p, fails, 5000);
    ASSERT_EQ(s.host.size(), 1u);
    EXPECT_EQ(s.host[0].step, 0u);
    EXPECT_EQ(s.host[0].core, syntax::kAllCores);
    EXPECT_EQ(s.host[0].code, 0u);
    EXPECT_EQ(s.handler, Program::Handler::None);
    EXPECT_EQ(s.stack, 0u);
    EXPECT_EQ(gen::statement_count(s), 0u);
    host::LoadOptions opt;
    opt.host = s.host;
    EXPECT_TRUE(host::load(gen::print(s), opt).loaded);
  }
  EXPECT_EQ(found, 5u);
  // A program of several warps with system calls keeps its handler: without it
  // the schedule would decide which warp's call ends the launch.
  Stmt sys;
  sys.kind = Kind::Sys;
  Program p = prog(4, 1, {sys});
  p.warps = 2;
  p.handler = Program::Handler::Record;
  for (const Program& q : gen::simplifications(p))
    if (q.warps == 2 && gen::uses(q, Kind::Sys)) {
      EXPECT_NE(q.handler, Program::Handler::None);
    }
  // oracle.shrink: the recording handler is offered as the marking, the
  // PC-marking and the returning handler.
  std::set<Program::Handler> offered;
  for (const Program& q : gen::simplifications(p)) offered.insert(q.handler);
  EXPECT_TRUE(offered.count(Program::Handler::Mark));
  EXPECT_TRUE(offered.count(Program::Handler::MarkPc));
  EXPECT_TRUE(offered.count(Program::Handler::Return));
}

}  // namespace
}  // namespace simt
