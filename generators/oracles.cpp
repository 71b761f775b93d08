#include "oracles.h"

#include <algorithm>

#include "compare.h"
#include "evaluator.h"
#include "exec/machine.h"
#include "generate.h"
#include "host/host.h"
#include "host_model.h"
#include "isa/isa.h"
#include "passes/modesel.h"
#include "reference.h"
#include "rule_oracles.h"
#include "text/parser.h"
#include "text/printer.h"
#include "warp_eval.h"

namespace simt::gen {

namespace {

using exec::Machine;

// Loads generated text; a program the generator made must always load.
std::optional<host::Loaded> load(const std::string& text, Check& c, host::LoadOptions opt = {}) {
  auto r = host::load(text, opt);
  if (!r.loaded) {
    c = failing("the generated program does not load:\n" + r.diags.format("generated"));
    return std::nullopt;
  }
  return std::move(r.loaded);
}

// A program text with the host script it runs with (trap.host).
std::optional<host::Loaded> load(const std::string& text, Check& c,
                                 const std::vector<syntax::HostStep>& script) {
  host::LoadOptions opt;
  opt.host = script;
  return load(text, c, opt);
}

std::string show(const model::Outcome& o) {
  return json::dump(model::to_json(o)).substr(0, 600);
}

std::string first_difference(const std::string& buffer, const std::vector<uint32_t>& want,
                             const std::vector<uint32_t>& got, uint32_t threads, uint32_t wave) {
  if (want.size() != got.size())
    return buffer + " has " + std::to_string(got.size()) + " words, expected " +
           std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) {
      if (buffer == "trec") {  // oracle.model.handler: the recording handler's log
        static const char* const fields[] = {"cause word", "TGID",  "resume PC",  "lane",
                                             "address",    "space", "global ESR", "barrier status"};
        static_assert(std::size(fields) == kRecordFields);
        const size_t g = i / kRecordWords, k = i % kRecordWords;
        const std::string what = k == 0 ? "event count"
                                 : k <= kRecords * kRecordFields
                                     ? "record " + std::to_string((k - 1) / kRecordFields) + " " +
                                           fields[(k - 1) % kRecordFields]
                                     : "unused word";
        return buffer + "[" + std::to_string(i) + "] (warp " + std::to_string(g) + "'s " + what +
               ") is " + std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
      }
      size_t t = threads ? i % threads : i;
      return buffer + "[" + std::to_string(i) + "] (thread " + std::to_string(t) + ", lane " +
             std::to_string(t % wave) + ") is " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]);
    }
  return "";
}

// The first difference between an expected outcome and an implementation's, in
// words ("" if they are equal): status, then the event field by field, then the
// first buffer element (with its thread and lane for per-thread buffers).
std::string outcome_difference(const model::Outcome& want, const model::Outcome& got,
                               const Program& p, const std::string& who) {
  if (want.status != got.status)
    return "status is " + got.status + ", " + who + " says " + want.status;
  if (want.event != got.event) {
    if (!want.event || !got.event) return "the event differs: " + show(got) + " vs " + show(want);
    const model::Event &w = *want.event, &g = *got.event;
    auto field = [&](const std::string& name, const std::string& gv, const std::string& wv) {
      return "event " + name + " is " + gv + ", " + who + " says " + wv;
    };
    if (w.name != g.name) return field("name", g.name, w.name);
    if (w.warp != g.warp) return field("warp", std::to_string(g.warp), std::to_string(w.warp));
    if (w.pc != g.pc) return field("pc", std::to_string(g.pc), std::to_string(w.pc));
    if (w.lane != g.lane) return field("lane", std::to_string(g.lane), std::to_string(w.lane));
    if (w.addr != g.addr) return field("addr", std::to_string(g.addr), std::to_string(w.addr));
    return field("space", g.space, w.space);
  }
  for (const auto& wb : want.buffers) {
    const model::Buffer* gb = nullptr;
    for (const auto& b : got.buffers)
      if (b.name == wb.name) gb = &b;
    if (!gb) return "there is no output buffer " + wb.name;
    std::vector<uint32_t> wv(wb.values.begin(), wb.values.end()),
        gv(gb->values.begin(), gb->values.end());
    std::string d =
        first_difference(wb.name, wv, gv, wb.name == "shared" ? 0 : p.threads(), p.wave);
    if (!d.empty()) return d + " (" + who + ")";
  }
  for (const auto& gb : got.buffers) {
    bool known = false;
    for (const auto& wb : want.buffers) known = known || wb.name == gb.name;
    if (!known) return "there is an output buffer " + gb.name + " that " + who + " does not have";
  }
  return "";
}

// The request that runs a generated program on ctx.runner: its text, with the
// resolved launch configuration and its host script.
runners::RunRequest runner_request(const host::Loaded& loaded, const std::string& text,
                                   const std::vector<syntax::HostStep>& script = {}) {
  runners::RunRequest req;
  req.program = text;
  req.config = runners::run_config(loaded.config);
  req.host = script;
  return req;
}

// Whether ctx.runner can run `req`: it has every capability the program needs
// (runner.capabilities), and for a runner with its own scheduler the outcome does
// not depend on the policy (runner.own_scheduler). Otherwise c.unsupported says why.
bool runnable(const host::Loaded& loaded, const runners::RunRequest& req, OracleContext& ctx,
              Check& c) {
  const runners::Capabilities& caps = ctx.runner->capabilities();
  const bool own_scheduler = caps.extras.count("own_scheduler") > 0;
  std::vector<std::string> needs = req.config.needs();
  if (own_scheduler)
    std::erase_if(needs, [](const std::string& n) { return n.rfind("policy:", 0) == 0; });
  const Uses uses = uses_of(*loaded.program);
  for (const auto& f : uses.features) needs.push_back("feature:" + f);
  if (!req.host.empty()) needs.push_back("host");  // format.requires, trap.host.toml
  // format.requires: the mnemonics as written (structured statements need none).
  for (const auto& st : loaded.ast.stmts)
    if (st.kind == syntax::StmtKind::Instr)
      needs.push_back("instr:" + std::string(isa::info(st.op).mnemonic));
  if (auto miss = caps.missing(needs)) {
    c.unsupported = "the runner lacks " + *miss;
    return false;
  }
  if (own_scheduler) {
    harness::Layout l;
    l.wave = loaded.config.wave;
    l.simd = loaded.config.simd_width();
    l.warps = loaded.config.warps;
    l.workgroups = loaded.config.workgroups;
    harness::PolicyCheck pc = harness::policy_dependence(req, l, runners::kDefaultTimeout);
    if (!pc.error.empty()) {
      c = failing(pc.error);
      return false;
    }
    if (!pc.depends.empty()) {
      c.unsupported = pc.depends;
      return false;
    }
  }
  return true;
}

// runner.lifecycle.restart: an implementation that could not run the program (it
// died, hung or answered wrongly) fails it, with how it ended and the first line
// of what it wrote to its error stream.
std::string run_error(const runners::Runner& runner, const runners::RunResult& got) {
  std::string msg = runner.name() + " failed to run the program: " + got.message;
  if (!got.stderr_text.empty()) {
    std::string err = got.stderr_text.substr(0, got.stderr_text.find('\n'));
    msg += "; its standard error: " + err.substr(0, 300);
  }
  return msg;
}

// The outcome of the program on the implementation under test: the reference in
// process, or ctx.runner. Unset (with c.unsupported or a failure in c) if it
// could not be run.
std::optional<model::Outcome> run_implementation(const host::Loaded& loaded,
                                                 const std::string& text, OracleContext& ctx,
                                                 Check& c,
                                                 const std::vector<syntax::HostStep>& script = {}) {
  if (!ctx.runner) return runners::to_model(Machine(loaded.program).run());
  runners::RunRequest req = runner_request(loaded, text, script);
  if (!runnable(loaded, req, ctx, c)) return std::nullopt;
  runners::RunResult got = ctx.runner->run(req);
  if (got.kind == runners::RunResult::Kind::Unsupported) {
    c.unsupported = "the implementation: " + got.message;
    return std::nullopt;
  }
  if (got.kind == runners::RunResult::Kind::Error) {
    c = failing(run_error(*ctx.runner, got));
    return std::nullopt;
  }
  if (got.kind == runners::RunResult::Kind::Rejected) {
    c = failing(ctx.runner->name() + " rejects the program: " + got.message);
    return std::nullopt;
  }
  return got.outcome;
}

// oracle.invariant.status: the outcome's status is the one the generator meant.
bool status_as_intended(const Program& p, const std::string& got, const std::string& what,
                        Check& c) {
  std::optional<std::string> want = intended_status(p);
  if (!want || *want == got) return true;
  c.ok = false;
  c.message = what + " ends " + got + "; the generator meant it to end " + *want +
              " (the structured evaluator's status)";
  return false;
}

// oracle.invariant.structured (with the evaluator's options: tests use wrong ones)
Check structured_eval(const Program& p, const std::string& text, const EvalOptions& eval,
                      OracleContext& ctx) {
  Check c;
  auto loaded = load(text, c, p.host);
  if (!loaded) return c;
  StructuredResult want = evaluate_structured(p, eval);
  if (!want.error.empty()) {
    Check out = failing("the structured evaluator cannot run this program: " + want.error);
    out.outside = true;
    return out;
  }
  c.host = p.host;  // oracle.model.preempt: its preemption points
  std::optional<model::Outcome> got = run_implementation(*loaded, text, ctx, c, p.host);
  if (!got) return c;
  c.expected = want.outcome;
  const std::string who = "the structured evaluator";
  if (want.status_only) {
    // The schedule decides which warp traps first: the status alone is defined.
    c.expected = *got;
    if (got->status != want.outcome.status)
      return failing("status is " + got->status + ", " + who + " says " + want.outcome.status);
    return c;
  }
  std::string d = outcome_difference(want.outcome, *got, p, who);
  if (!d.empty()) c.ok = false, c.message = d;
  return c;
}

Check structured(const Program& p, const std::string& text, OracleContext& ctx) {
  return structured_eval(p, text, EvalOptions{}, ctx);
}

// oracle.invariant.sequential
Check sequential(const Program& p, const std::string& text, OracleContext&) {
  Check c;
  if (communicates(p)) return failing("sequential needs a program whose lanes do not communicate");
  auto loaded = load(text, c);
  if (!loaded) return c;
  Expected want = evaluate_sequential(p);
  if (!want.error.empty())
    return failing("the sequential evaluator cannot run this program: " + want.error);
  model::Outcome exp;
  exp.status = "completed";
  exp.buffers.push_back({"out", "u32", std::vector<int64_t>(want.out.begin(), want.out.end())});
  if (!want.scratch.empty())
    exp.buffers.push_back(
        {"scratch", "u32", std::vector<int64_t>(want.scratch.begin(), want.scratch.end())});
  c.expected = exp;
  Machine m(loaded->program);
  exec::Outcome o = m.run();
  if (o.status != exec::Status::Completed)
    return c.ok = false,
           c.message = "the SIMT run ends " + std::string(exec::status_name(o.status)) +
                       "; every lane alone completes",
           c;
  for (const auto& [name, w] :
       {std::pair<std::string, const std::vector<uint32_t>*>{"out", &want.out},
        {"scratch", &want.scratch}}) {
    if (name == "scratch" && w->empty()) continue;
    auto got = o.words(name);
    if (!got) return c.ok = false, c.message = "the SIMT run has no buffer " + name, c;
    std::string d = first_difference(name, *w, *got, p.threads(), p.wave);
    if (!d.empty()) return c.ok = false, c.message = "SIMT and per-lane results differ: " + d, c;
  }
  return c;
}

// oracle.invariant.scheduler
Check scheduler(const Program& p, const std::string& text, OracleContext&) {
  Check c;
  struct Run {
    exec::Policy policy;
    uint64_t seed;
  };
  const Run runs[] = {{exec::Policy::RoundRobin, 0},  {exec::Policy::LowestPcFirst, 0},
                      {exec::Policy::OldestFirst, 0}, {exec::Policy::Random, 1},
                      {exec::Policy::Random, 2},      {exec::Policy::Random, 3}};
  auto loaded = load(text, c);
  if (!loaded) return c;
  std::optional<exec::Outcome> first;
  // The same predecoded program under each policy: only the launch configuration
  // differs (as `--policy P --seed N` would make it). One copy serves every run:
  // each machine is gone before the next configuration is set.
  auto program = std::make_shared<exec::Program>(*loaded->program);
  for (const auto& r : runs) {
    program->config.policy = r.policy;
    program->config.seed = r.seed;
    Machine m(program);
    exec::Outcome o = m.run();
    std::string name = std::string(exec::policy_name(r.policy)) +
                       (r.policy == exec::Policy::Random ? " seed " + std::to_string(r.seed) : "");
    if (!first) {
      first = o;
      c.expected = runners::to_model(o);
      c.policies = {"round_robin", "lowest_pc_first", "oldest_first", "random"};
      if (!status_as_intended(p, c.expected->status, "under round_robin the program", c)) return c;
      continue;
    }
    if (!o.same_result(*first))
      return c.ok = false,
             c.message = "outcome under " + name +
                         " differs from round_robin: " + show(runners::to_model(o)) + " vs " +
                         show(*c.expected),
             c;
  }
  return c;
}

// oracle.invariant.snapshot
Check snapshot(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  auto loaded = load(text, c, p.host);
  c.host = p.host;
  if (!loaded) return c;
  auto prog = loaded->program;
  // Each trace line with the step count it was recorded at: a step's own line
  // and the handler entries and resumes it causes carry its number, an entry at
  // the boundary before it too (exec.trace.format, trap.entry).
  std::vector<std::pair<uint64_t, std::string>> trace;
  Machine full(prog);
  full.set_trace([&](const exec::TraceRecord& r) {
    trace.emplace_back(r.step, exec::format_trace(*prog, r));
  });
  exec::Outcome o = full.run();
  c.expected = runners::to_model(o);
  if (!status_as_intended(p, c.expected->status, "the program", c)) return c;
  const uint64_t k = ctx.seed % (o.steps + 1);
  Machine a(prog);
  a.advance(k);
  exec::Snapshot s = a.snapshot();
  Machine b(prog);
  if (!b.restore(s))
    return c.ok = false, c.message = "restore refused a snapshot of the same program", c;
  if (!(b.state() == a.state()) || b.hash() != a.hash())
    return c.ok = false,
           c.message = "the restored state differs from the snapshot at step " + std::to_string(k),
           c;
  std::vector<std::string> after;
  b.set_trace([&](const exec::TraceRecord& r) { after.push_back(exec::format_trace(*prog, r)); });
  exec::Outcome ob = b.run();
  if (!ob.same_result(o) || ob.steps != o.steps)
    return c.ok = false,
           c.message = "after a snapshot at step " + std::to_string(k) +
                       " and restore, the outcome is " + show(runners::to_model(ob)) +
                       ", uninterrupted " + show(*c.expected),
           c;
  // What the uninterrupted run traced from step k on: the boundary after step k
  // is the restored machine's to cross.
  std::vector<std::string> suffix;
  for (const auto& [step, line] : trace)
    if (step >= k) suffix.push_back(line);
  if (after != suffix) {
    size_t i = 0;
    while (i < after.size() && i < suffix.size() && after[i] == suffix[i]) ++i;
    return c.ok = false,
           c.message = "after restore at step " + std::to_string(k) +
                       " the trace from there differs at its line " + std::to_string(i + 1) +
                       ": '" + (i < after.size() ? after[i] : "<end>") + "' vs '" +
                       (i < suffix.size() ? suffix[i] : "<end>") + "'",
           c;
  }
  return c;
}

// oracle.invariant.expansion
Check expansion(const Program& p, const std::string& text, OracleContext&) {
  Check c;
  auto structured = load(text, c);
  if (!structured) return c;
  std::string expanded_text = text::print(structured->expanded);
  auto expanded = load(expanded_text, c);
  if (!expanded) return c.message = "the printed expansion does not load: " + c.message, c;
  Machine m1(structured->program), m2(expanded->program);
  exec::Outcome o1 = m1.run(), o2 = m2.run();
  c.expected = runners::to_model(o1);
  if (!status_as_intended(p, c.expected->status, "the structured program", c)) return c;
  if (!o1.same_result(o2))
    return c.ok = false,
           c.message =
               "structured " + show(*c.expected) + " but expanded " + show(runners::to_model(o2)),
           c;
  if (structured->program->size() != expanded->program->size())
    return c.ok = false,
           c.message = "the expansion has a different number of instructions when re-read", c;
  return c;
}

// oracle.invariant.atomic_broadcast: a warp-wide atomic is the per-lane one in
// the lowest active lane followed by a readlane broadcast (atom.warp).
Check atomic_broadcast(const Program& p, const std::string&, OracleContext& ctx) {
  Check c;
  const bool has_warp_atomic = uses_warp_atomic(p);
  c.counts["oracle:warp-atomic-programs"] = has_warp_atomic ? 1 : 0;
  if (!has_warp_atomic) return c;
  // The lowering nests one more if: both forms run with the default mask depth.
  Program direct = p, lowered = p;
  direct.mask_depth = lowered.mask_depth = 0;
  lowered.lower_warp_atomics = true;
  const std::string direct_text = print(direct), lowered_text = print(lowered);
  auto a = load(direct_text, c);
  if (!a) return c;
  auto b = load(lowered_text, c);
  if (!b) return c.message = "the lowered program does not load: " + c.message, c;
  // The reference's outcome is the regression test's expectation; the
  // implementation (the reference, or --runner) runs both forms.
  c.expected = runners::to_model(Machine(a->program).run());
  c.regression_text = direct_text;
  if (!status_as_intended(direct, c.expected->status, "the program", c)) return c;
  std::optional<model::Outcome> got = run_implementation(*a, direct_text, ctx, c);
  if (!got) return c;
  std::optional<model::Outcome> want = run_implementation(*b, lowered_text, ctx, c);
  if (!want) return c;
  std::string d = outcome_difference(
      *want, *got, p, "with per-lane atomics in the lowest active lane and a readlane");
  if (!d.empty()) c.ok = false, c.message = "with warp-wide atomics " + d;
  return c;
}

// oracle.invariant.atomic_count: the counting atomics after each atomic
// statement (Program::count_atomics) count exactly their participants, and
// their old values are 0, 1, 2, ... in an order the spec allows.
std::string count_problem(const model::Outcome& o, uint32_t threads, uint32_t gwarps,
                          std::map<std::string, uint64_t>& counts) {
  auto words = [&](const std::string& name) -> std::vector<uint32_t> {
    for (const auto& b : o.buffers)
      if (b.name == name) return std::vector<uint32_t>(b.values.begin(), b.values.end());
    return {};
  };
  const std::vector<uint32_t> tally = words("tally"), lanes = words("lanes"),
                              execs = words("execs"), lane_log = words("lane_log"),
                              warp_log = words("warp_log");
  if (tally.size() != 2 || lanes.size() != threads || execs.size() != 2 * gwarps ||
      lane_log.size() != kCountLog || warp_log.size() != kCountLog)
    return "the outcome lacks the counting buffers (tally, lanes, execs, lane_log, warp_log)";
  uint64_t participants = 0, executions = 0;
  for (uint32_t t : lanes) participants += t;
  for (uint32_t g = 0; g < gwarps; ++g) executions += execs[2 * g + 1];
  counts["oracle:lane-atomic-participants"] += participants;
  counts["oracle:warp-atomic-executions"] += executions;
  // [atom.lane] once per active lane; [atom.warp] once per warp with an active lane.
  if (tally[0] != participants)
    return "tally[0] is " + std::to_string(tally[0]) + " after per-lane atom.add of 1, but " +
           std::to_string(participants) + " lanes took part (the sum of lanes[])";
  if (tally[1] != executions)
    return "tally[1] is " + std::to_string(tally[1]) + " after warp-wide watom.add of 1, but " +
           std::to_string(executions) + " of them ran with an active lane (the sum of execs[odd])";
  // The log holds an entry at every old value below the count (each old value
  // returned once), nothing above; the last word collects the overflow.
  auto filled = [&](const std::vector<uint32_t>& log, uint64_t n,
                    const std::string& name) -> std::string {
    for (uint32_t i = 0; i + 1 < kCountLog; ++i)
      if ((log[i] != 0) != (i < n))
        return name + "[" + std::to_string(i) + "] is " + std::to_string(log[i]) + " with " +
               std::to_string(n) + " old values: " +
               (i < n ? "no lane received old value " + std::to_string(i) +
                            " (another one was returned twice)"
                      : "an old value at or above the count was returned");
    if ((log[kCountLog - 1] != 0) != (n >= kCountLog))
      return name + " overflow word is wrong for " + std::to_string(n) + " old values";
    return "";
  };
  if (auto d = filled(lane_log, participants, "lane_log"); !d.empty()) return d;
  if (auto d = filled(warp_log, executions, "warp_log"); !d.empty()) return d;
  // Per-lane: each warp's executions appear in its program order (ordinals 1, 2,
  // ...), each as one contiguous run of old values in ascending lane order
  // ([atom.lane.order]); a warp that completes its runs has them all.
  std::vector<uint32_t> last(gwarps, 0);
  const uint64_t logged = std::min<uint64_t>(participants, kCountLog - 1);
  for (uint64_t i = 0; i < logged; ++i) {
    const uint32_t e = lane_log[i], lane = (e & 127) - 1, g = (e >> 7) & 127, ord = e >> 14;
    const std::string at = "lane_log[" + std::to_string(i) + "] (warp " + std::to_string(g) +
                           ", execution " + std::to_string(ord) + ", lane " + std::to_string(lane) +
                           ")";
    if (g >= gwarps || lane >= threads) return at + " names no lane of the launch";
    if (ord == last[g]) {
      const uint32_t prev = i ? lane_log[i - 1] : 0;
      if (i == 0 || (prev >> 7) != (e >> 7))
        return at + ": the execution's old values are not contiguous";
      if ((prev & 127) >= (e & 127))
        return at + ": lanes of one execution are not in ascending order (previous lane " +
               std::to_string((prev & 127) - 1) + ")";
    } else if (ord != last[g] + 1) {
      return at + ": the warp's previous execution in the log is " + std::to_string(last[g]);
    } else {
      last[g] = ord;
    }
  }
  if (participants < kCountLog)
    for (uint32_t g = 0; g < gwarps; ++g)
      if (last[g] != execs[2 * g])
        return "warp " + std::to_string(g) + " ran " + std::to_string(execs[2 * g]) +
               " per-lane counting atomics with an active lane, the log shows " +
               std::to_string(last[g]);
  // Warp-wide: one old value per execution, the warp's in program order.
  std::fill(last.begin(), last.end(), 0);
  for (uint64_t i = 0; i < std::min<uint64_t>(executions, kCountLog - 1); ++i) {
    const uint32_t e = warp_log[i], g = (e & 127) - 1, ord = e >> 7;
    if (g >= gwarps || ord != last[g] + 1)
      return "warp_log[" + std::to_string(i) + "] is " + std::to_string(e) +
             ": expected the next execution of a warp (warp " + std::to_string(g) + ", execution " +
             std::to_string(ord) + ")";
    last[g] = ord;
  }
  return "";
}

Check atomic_count(const Program& p, const std::string&, OracleContext& ctx) {
  Check c;
  const bool atomics = uses(p, Kind::Atomic);
  c.counts["oracle:atomic-programs"] = atomics ? 1 : 0;
  if (!atomics) return c;
  Program counted = p;
  counted.count_atomics = true;
  const std::string text = print(counted);
  auto loaded = load(text, c);
  if (!loaded) return c;
  c.regression_text = text;
  std::optional<model::Outcome> got = run_implementation(*loaded, text, ctx, c);
  if (!got) return c;
  // A regression test expects the reference's outcome of the counting program.
  c.expected = ctx.runner ? runners::to_model(Machine(loaded->program).run()) : *got;
  if (!status_as_intended(p, got->status, "the counting program", c)) return c;
  std::string d = count_problem(*got, p.threads(), p.warps * p.workgroups, c.counts);
  if (!d.empty()) c.ok = false, c.message = d;
  return c;
}

// oracle.invariant.roundtrip
Check roundtrip(const Program& p, const std::string& text, OracleContext&) {
  Check c;
  // The loaded program carries the text's parse; parse again only to explain a
  // text that does not load.
  auto r = host::load(text);
  if (!r.loaded) {
    auto first = text::parse(text);
    if (!first.ok())
      return failing("the generated text does not parse:\n" + first.diags.format("generated"));
    if (auto problem = text::roundtrip_problem(first.program)) return failing(*problem);
    return failing("the generated program does not load:\n" + r.diags.format("generated"));
  }
  if (auto problem = text::roundtrip_problem(r.loaded->ast)) return failing(*problem);
  Machine m(r.loaded->program);
  c.expected = runners::to_model(m.run());
  status_as_intended(p, c.expected->status, "the program", c);
  return c;
}

// The comparison's layout of a generated program (runner.firstdiff).
harness::Layout layout_of(const Program& p) {
  harness::Layout l;
  l.wave = p.wave;
  l.simd = p.wave;
  l.warps = p.warps;
  l.workgroups = p.workgroups;
  return l;
}

}  // namespace

// oracle.fuzz.signature
Difference difference_of(const harness::Verdict& v, const runners::RunResult& ref,
                         const runners::RunResult& got, const exec::Program& prog) {
  Difference d;
  const json::Value* kind = v.first_diff.find("kind");
  const json::Value* field = v.first_diff.find("field");
  if (kind && kind->is_string() && kind->as_string() == "buffer")
    d.kind = "buffer";
  else if (field && field->is_string())
    d.kind = field->as_string().substr(0, field->as_string().find('.'));
  else
    d.kind = "other";
  const std::optional<model::Event>& e = ref.outcome.event ? ref.outcome.event : got.outcome.event;
  if (e) {
    d.event = e->name;
    if (e->pc < prog.insns.size()) {
      const isa::OpInfo& op = isa::info(prog.insns[e->pc].op);
      d.family = std::string(isa::feature_name(op.feature)) + "." +
                 std::string(isa::family_name(op.family));
    }
  }
  return d;
}

namespace {

// oracle.invariant.differential, oracle.invariant.image_exchange: runs `req` on
// the implementation and compares its outcome with the reference's `ref`. False
// when `c` is the check's answer (unsupported, an error, a difference).
bool implementation_matches(const Program& p, const exec::Program& prog,
                            const runners::RunRequest& req, const runners::RunResult& ref,
                            OracleContext& ctx, Check& c, runners::RunResult& got) {
  got = ctx.runner->run(req);
  if (got.kind == runners::RunResult::Kind::Unsupported) {
    c.unsupported = "the implementation: " + got.message;
    return false;
  }
  if (got.kind == runners::RunResult::Kind::Error) {
    c.difference = Difference{"error", "", ""};
    return c.ok = false, c.message = run_error(*ctx.runner, got), false;
  }
  harness::Verdict v = harness::compare_with_reference(ref, got, layout_of(p));
  if (!v.ok) {
    c.difference = difference_of(v, ref, got, prog);
    return c.ok = false, c.message = ctx.runner->name() + ": " + v.message, false;
  }
  return true;
}

// oracle.invariant.differential
Check differential(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  if (!ctx.runner) return failing("differential needs an implementation to compare (--runner)");
  auto loaded = load(text, c, p.host);
  if (!loaded) return c;
  c.host = p.host;
  runners::RunRequest req = runner_request(*loaded, text, p.host);
  runners::RunResult ref = runners::run_loaded(loaded->program, false);
  c.expected = ref.outcome;
  if (!status_as_intended(p, ref.outcome.status, "on the reference the program", c)) return c;
  if (!runnable(*loaded, req, ctx, c)) return c;
  runners::RunResult got;
  if (!implementation_matches(p, *loaded->program, req, ref, ctx, c, got)) return c;
  return c;
}

// SplitMix64: the choices an oracle makes from its seed.
uint64_t mix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string describe(const std::vector<syntax::HostStep>& script) {
  std::string out;
  for (const auto& h : script) {
    out += (out.empty() ? "" : ", ") + std::string(syntax::host_kind_name(h.kind)) + " at " +
           std::to_string(h.step) + " (core " +
           (h.core == syntax::kAllCores ? std::string("all") : std::to_string(h.core));
    if (h.kind == syntax::HostKind::Interrupt) out += ", code " + std::to_string(h.code);
    if (h.kind == syntax::HostKind::SingleStep) out += h.on ? ", on" : ", off";
    out += ")";
  }
  return out;
}

// ---- Preemption (spec/preempt.md) ------------------------------------------

// p's host script without its preemption points, and p with that script.
Program without_preemptions(const Program& p) {
  Program q = p;
  std::erase_if(q.host, [](const auto& h) { return h.kind == syntax::HostKind::Preempt; });
  return q;
}

// `script` with `points` added after its own actions at the same steps.
std::vector<syntax::HostStep> with_points(std::vector<syntax::HostStep> script,
                                          const std::vector<syntax::HostStep>& points) {
  script.insert(script.end(), points.begin(), points.end());
  std::stable_sort(script.begin(), script.end(),
                   [](const auto& x, const auto& y) { return x.step < y.step; });
  return script;
}

syntax::HostStep preempt_at(uint64_t step, int32_t core, syntax::PreemptFlow flow,
                            std::string intruder = {}) {
  syntax::HostStep h;
  h.kind = syntax::HostKind::Preempt;
  h.step = step;
  h.core = core;
  h.flow = flow;
  h.intruder = std::move(intruder);
  return h;
}

// A run of a loaded program on the reference with its trace, as the invariant
// compares it: the outcome and every trace line (exec.trace.format).
struct TracedRun {
  exec::Outcome outcome;
  std::vector<std::string> trace;
  uint32_t preemptions = 0;
  std::vector<uint8_t> image;
};
TracedRun traced_run(const std::shared_ptr<const exec::Program>& prog, bool baseline,
                     const exec::PreemptFaults& faults = {}) {
  TracedRun r;
  Machine m(prog);
  m.preempt().set_baseline(baseline);
  m.preempt().set_faults(faults);
  m.set_trace([&](const exec::TraceRecord& t) { r.trace.push_back(exec::format_trace(*prog, t)); });
  r.outcome = m.run();
  r.preemptions = m.preemptions();
  r.image = m.last_image();
  return r;
}

std::string trace_difference(const std::vector<std::string>& got,
                             const std::vector<std::string>& want) {
  if (got == want) return "";
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return "the trace differs at its line " + std::to_string(i + 1) + ": '" +
         (i < got.size() ? got[i] : "<end>") + "' vs '" + (i < want.size() ? want[i] : "<end>") +
         "'";
}

// oracle.invariant.preempt_transparency: the boundaries preempted. A launch of at
// most kEveryBoundary steps is preempted at every boundary from 0 to its last
// step; a longer one at one to three boundaries drawn from the seed.
constexpr uint64_t kEveryBoundary = 24;

std::vector<uint64_t> preemption_steps(uint64_t steps, uint64_t& state) {
  std::vector<uint64_t> out;
  if (steps <= kEveryBoundary) {
    for (uint64_t k = 0; k < steps; ++k) out.push_back(k);
  } else {
    const uint64_t n = 1 + mix(state) % 3;
    for (uint64_t i = 0; i < n; ++i) out.push_back(mix(state) % steps);
    std::sort(out.begin(), out.end());
  }
  return out;
}

}  // namespace

Check preempt_transparency_with(const Program& p, const exec::PreemptFaults& faults,
                                OracleContext& ctx) {
  Check c;
  const Program base = without_preemptions(p);
  const std::string base_text = print(base);
  auto a = load(base_text, c, base.host);
  if (!a) return c;
  const exec::Outcome plain = Machine(a->program).run();
  if (!status_as_intended(base, runners::to_model(plain).status, "the program", c)) return c;
  uint64_t state = ctx.seed;
  const std::vector<uint64_t> steps = preemption_steps(plain.steps, state);
  // Flow A at every chosen boundary, then flow B with an intruder that
  // overwrites the SLM of the affected cores; for every core, or one core in
  // turn when there are several (preempt.request, preempt.intruder).
  for (const syntax::PreemptFlow flow : {syntax::PreemptFlow::A, syntax::PreemptFlow::B}) {
    std::vector<syntax::HostStep> points;
    for (size_t i = 0; i < steps.size(); ++i) {
      const int32_t core = p.cores > 1 && mix(state) % 2
                               ? static_cast<int32_t>(mix(state) % p.cores)
                               : syntax::kAllCores;
      points.push_back(preempt_at(steps[i], core, flow,
                                  flow == syntax::PreemptFlow::B
                                      ? intruder_text(p, core, static_cast<uint32_t>(mix(state)))
                                      : std::string()));
    }
    // The program's own preemption points (oracle.model.preempt) stay.
    Program q = base;
    q.host = with_points(p.host, points);
    const std::string text = print(q);
    auto b = load(text, c, q.host);
    if (!b) return c;
    // The baseline: the same launch, its preemption actions boundaries only.
    const TracedRun want = traced_run(b->program, true);
    const TracedRun got = traced_run(b->program, false, faults);
    c.counts["oracle:preemptions"] += got.preemptions;
    c.expected = runners::to_model(want.outcome);
    c.regression_text = text;
    c.host = q.host;
    const std::string how = std::string("preempted by flow ") +
                            (flow == syntax::PreemptFlow::A ? "A" : "B") + " (" + describe(points) +
                            ")";
    // The baseline option must do nothing but keep the actions as boundaries:
    // no preemption, and, where the script has no other action (a host action
    // can be brought forward when no warp is ready, trap.host, and with a
    // `tpause` that matters) and short of livelock detection (which starts after
    // the last action), the outcome of the launch without them.
    if (want.preemptions != 0 || !want.image.empty())
      return failing("the baseline launch carried out a preemption");
    if (base.host.empty() && plain.status != exec::Status::Livelock &&
        want.outcome.status != exec::Status::Livelock &&
        (!want.outcome.same_result(plain) || want.outcome.steps != plain.steps))
      return failing("the baseline launch (preemptions as boundaries only) ends " +
                     show(*c.expected) + ", the launch without them " +
                     show(runners::to_model(plain)));
    const model::Outcome g = runners::to_model(got.outcome);
    std::string d = outcome_difference(*c.expected, g, p, "the launch not preempted");
    if (d.empty() && got.outcome.steps != want.outcome.steps)
      d = "steps are " + std::to_string(got.outcome.steps) + ", the launch not preempted says " +
          std::to_string(want.outcome.steps);
    if (d.empty()) d = trace_difference(got.trace, want.trace);
    if (!d.empty()) return c.ok = false, c.message = how + ": " + d, c;
  }
  return c;
}

namespace {

// Zeroes an image's host script position (preempt.image.fixed), which a second
// save at the same boundary has moved past the action that made it.
std::optional<uint32_t> strip_position(std::vector<uint8_t>& bytes) {
  auto img = exec::read_image(bytes);
  auto* content = std::get_if<exec::ImageContent>(&img);
  if (!content) return std::nullopt;
  const uint64_t off = content->layout.sched_offset() + 24;
  exec::put_u32(bytes, off, 0);
  return content->fixed.host_next;
}

// oracle.invariant.preempt_transparency
Check preempt_transparency(const Program& p, const std::string&, OracleContext& ctx) {
  return preempt_transparency_with(p, exec::PreemptFaults{}, ctx);
}

// oracle.invariant.image_stable: at a boundary k drawn from the seed, for every
// core or one: the image of one save (a flow-A preemption at k) and that of a
// second save right after it (two actions at k) are the same bytes but the host
// script position, one further; a launch started from the first image (flow C,
// for every core) with the second action due at its first boundary
// (preempt.restore.request) saves the same bytes again and ends as the launch
// that wrote it.
}  // namespace

Check image_stable_with(const Program& p, const exec::PreemptFaults& faults, OracleContext& ctx) {
  Check c;
  const Program base = without_preemptions(p);
  auto a = load(print(base), c, base.host);
  if (!a) return c;
  const exec::Outcome plain = Machine(a->program).run();
  if (!status_as_intended(base, runners::to_model(plain).status, "the program", c)) return c;
  if (plain.steps == 0) return c;  // no boundary before the end
  uint64_t state = ctx.seed;
  const uint64_t k = mix(state) % plain.steps;
  const int32_t core = p.cores > 1 && mix(state) % 2 ? static_cast<int32_t>(mix(state) % p.cores)
                                                     : syntax::kAllCores;
  Program once = base, twice = base;
  once.host = with_points(base.host, {preempt_at(k, core, syntax::PreemptFlow::A)});
  twice.host = with_points(base.host, {preempt_at(k, core, syntax::PreemptFlow::A),
                                       preempt_at(k, core, syntax::PreemptFlow::A)});
  const std::string text = print(twice);
  auto b1 = load(print(once), c, once.host);
  if (!b1) return c;
  auto b2 = load(text, c, twice.host);
  if (!b2) return c;
  c.regression_text = text;
  c.host = twice.host;
  const TracedRun r1 = traced_run(b1->program, false, faults),
                  r2 = traced_run(b2->program, false, faults);
  c.expected = runners::to_model(r2.outcome);
  const std::string where =
      "preempted at step " + std::to_string(k) + " (core " +
      (core == syntax::kAllCores ? std::string("all") : std::to_string(core)) + ")";
  if (r1.preemptions != 1 || r2.preemptions != 2)
    return failing(where + ": " + std::to_string(r1.preemptions) + " and " +
                   std::to_string(r2.preemptions) + " preemptions carried out, not 1 and 2");
  std::vector<uint8_t> i1 = r1.image, i2 = r2.image;
  const auto p1 = strip_position(i1), p2 = strip_position(i2);
  if (!p1 || !p2) return failing(where + ": the reference wrote an image it cannot read");
  auto first_difference = [&](const std::vector<uint8_t>& x, const std::vector<uint8_t>& y) {
    auto content = std::get<exec::ImageContent>(exec::read_image(x));
    size_t i = 0;
    while (i < x.size() && i < y.size() && x[i] == y[i]) ++i;
    return x.size() != y.size() ? "their sizes differ (" + std::to_string(x.size()) + " and " +
                                      std::to_string(y.size()) + " bytes)"
                                : "byte " + std::to_string(i) + " (" +
                                      exec::describe_image_offset(content, i) + ") differs";
  };
  if (i1 != i2)
    return c.ok = false,
           c.message = where + ": saved twice with no step between, the images differ: " +
                       first_difference(i1, i2),
           c;
  if (*p2 != *p1 + 1)
    return c.ok = false,
           c.message = where + ": the second image's host script position is " +
                       std::to_string(*p2) + ", the first's " + std::to_string(*p1),
           c;
  if (core != syntax::kAllCores) return c;
  // Save, restore, save: flow C from the first image, the second action due.
  Machine m(b2->program);
  m.preempt().set_faults(faults);
  if (auto err = m.start_from_image(r1.image))
    return failing(where + ": the reference rejects its own image: " + err->text());
  const exec::Outcome oc = m.run();
  std::vector<uint8_t> i3 = m.last_image();
  strip_position(i3);
  if (m.preemptions() != 1)
    return c.ok = false,
           c.message = where + ": the launch started from the image did not save again", c;
  if (i3 != i1)
    return c.ok = false,
           c.message = where + ": saved, restored (flow C) and saved again, the images differ: " +
                       first_difference(i1, i3),
           c;
  if (!oc.same_result(r2.outcome) || oc.steps != r2.outcome.steps)
    return c.ok = false,
           c.message = where + ": the launch started from the image ends " +
                       show(runners::to_model(oc)) + ", the launch that wrote it " +
                       show(*c.expected),
           c;
  return c;
}

namespace {

Check image_stable(const Program& p, const std::string&, OracleContext& ctx) {
  return image_stable_with(p, exec::PreemptFaults{}, ctx);
}

// oracle.invariant.image_exchange: runner.preempt for a generated program: one
// flow-A preemption of every core at a boundary drawn from the seed; the
// implementation's image restored on the reference and the reference's on the
// implementation (flow C, the same program, configuration and host script) end
// with the reference's outcome of the preempted launch.
Check image_exchange(const Program& p, const std::string&, OracleContext& ctx) {
  Check c;
  if (!ctx.runner) return failing("image-exchange needs an implementation to compare (--runner)");
  const Program base = without_preemptions(p);
  auto a = load(print(base), c, base.host);
  if (!a) return c;
  const exec::Outcome plain = Machine(a->program).run();
  if (!status_as_intended(base, runners::to_model(plain).status, "the program", c)) return c;
  if (plain.steps == 0) return c;
  uint64_t state = ctx.seed;
  const uint64_t k = mix(state) % plain.steps;
  Program q = base;
  q.host = with_points(base.host, {preempt_at(k, syntax::kAllCores, syntax::PreemptFlow::A)});
  const std::string text = print(q);
  auto b = load(text, c, q.host);
  if (!b) return c;
  c.regression_text = text;
  c.host = q.host;
  runners::RunRequest req = runner_request(*b, text, q.host);
  req.image = true;
  if (!ctx.runner->capabilities().extras.count("preempt.image")) {
    c.unsupported = "the runner lacks preempt.image";
    return c;
  }
  if (!runnable(*b, req, ctx, c)) return c;
  runners::RunResult ref = runners::run_reference(req);
  c.expected = ref.outcome;
  if (!ref.image) return failing("the reference returned no image of its preemption");
  runners::RunResult got;
  if (!implementation_matches(p, *b->program, req, ref, ctx, c, got)) return c;
  if (!got.image)
    return c.ok = false, c.message = ctx.runner->name() + " returned no image of its preemption", c;
  // runner.preempt: byte-exact images, the first difference named by its field.
  harness::Verdict bytes = harness::compare_images(ref, got);
  if (!bytes.ok) {
    c.difference = difference_of(bytes, ref, got, *b->program);
    return c.ok = false, c.message = ctx.runner->name() + ": " + bytes.message, c;
  }
  for (int side = 0; side < 2; ++side) {
    runners::RunRequest from = req;
    from.image = false;
    from.restore = side == 0 ? *got.image : *ref.image;
    runners::RunResult r = side == 0 ? runners::run_reference(from) : ctx.runner->run(from);
    const std::string who = side == 0 ? "the implementation's image restored on the reference"
                                      : "the reference's image restored on the implementation";
    if (r.kind == runners::RunResult::Kind::Error)
      return c.ok = false, c.message = who + ": " + r.message, c;
    if (r.kind == runners::RunResult::Kind::Rejected)
      return c.ok = false, c.message = who + ": rejected: " + r.message, c;
    harness::Verdict x = harness::compare_with_reference(ref, r, layout_of(p));
    if (!x.ok) return c.ok = false, c.message = who + ": " + x.message, c;
  }
  return c;
}

// oracle.invariant.trap_transparency: interrupts at steps of the run, taken by a
// handler that only returns, change nothing the program shows.
Check trap_transparency(const Program& p, const std::string&, OracleContext& ctx) {
  Program with;
  with.handler = Program::Handler::Return;
  return trap_transparency_with(p, with, ctx);
}

// oracle.invariant.trap_record: the recording handler's first record for the
// warp that trapped without a handler is that event (trap.entry, trap.cause,
// trap.esr, trap.frame, trap.resume.pc).
Check trap_record(const Program& p, const std::string&, OracleContext& ctx) {
  Check c;
  Program bare = p, rec = p;
  bare.handler = Program::Handler::None;
  bare.handler_code.clear();
  bare.stack = 0;  // room for the frame, so the handler takes every event
  rec.handler = Program::Handler::Record;
  rec.handler_code.clear();
  rec.stack = 0;
  const std::string bare_text = print(bare), rec_text = print(rec);
  auto a = load(bare_text, c, p.host);
  if (!a) return c;
  auto b = load(rec_text, c, p.host);
  if (!b) return c;
  std::optional<model::Outcome> without = run_implementation(*a, bare_text, ctx, c, p.host);
  if (!without) return c;
  if (!status_as_intended(bare, without->status, "without a handler the program", c)) {
    c.expected = ctx.runner ? runners::to_model(Machine(a->program).run()) : *without;
    c.regression_text = bare_text;
    c.host = p.host;
    return c;
  }
  const bool trapped = without->status == "trapped" && without->event;
  c.counts["oracle:trapped-without-handler"] = trapped ? 1 : 0;
  std::optional<model::Outcome> with = run_implementation(*b, rec_text, ctx, c, p.host);
  if (!with) return c;
  // A regression test holds the program with the handler and expects the
  // reference's outcome of it.
  c.regression_text = rec_text;
  c.host = p.host;
  c.expected = ctx.runner ? runners::to_model(Machine(b->program).run()) : *with;
  if (with->status == "trapped")
    return c.ok = false,
           c.message =
               "with the recording handler (and room for frames) the program still ends "
               "trapped: " +
               show(*with),
           c;
  if (!trapped) return c;
  const model::Event& e = *without->event;
  const std::vector<int64_t>* log = nullptr;
  for (const auto& buf : with->buffers)
    if (buf.name == "trec") log = &buf.values;
  const size_t base = size_t{e.warp} * kRecordWords;
  if (!log || log->size() < base + kRecordWords)
    return c.ok = false,
           c.message = "the outcome has no log (trec) for warp " + std::to_string(e.warp), c;
  auto word = [&](size_t i) { return static_cast<uint32_t>((*log)[base + i]); };
  if (word(0) == 0)
    return c.ok = false,
           c.message = "without a handler warp " + std::to_string(e.warp) + " raises " + e.name +
                       " at PC " + std::to_string(e.pc) +
                       ", but with the recording handler it logs no event",
           c;
  const auto code = isa::find_event(e.name);
  if (!code) return failing("an event without a code: " + e.name);
  const bool sys = e.name == "syscall";
  uint32_t space = 0xffffffffu;
  if (!e.space.empty()) {
    const auto names = buffer_names(rec);
    const auto it = std::find(names.begin(), names.end(), e.space);
    space = e.space == "slm" ? 0xffffu : static_cast<uint32_t>(it - names.begin());
  }
  const std::pair<const char*, uint32_t> want[] = {
      {"cause word", static_cast<uint32_t>(*code) | (e.code.value_or(0) & 0xffffffu) << 8},
      {"TGID", e.warp},
      {"resume PC", e.pc + (sys ? 1 : 0)},  // trap.resume.pc: after a system call
      {"lane", e.lane >= 0 ? static_cast<uint32_t>(e.lane) : 0xffffffffu},
      {"address", e.space.empty() ? 0 : e.addr},
      {"space", space}};
  for (uint32_t f = 0; f < std::size(want); ++f)
    if (word(1 + f) != want[f].second)
      return c.ok = false,
             c.message = "the first record of warp " + std::to_string(e.warp) + " has " +
                         want[f].first + " " + std::to_string(word(1 + f)) +
                         ", but without a handler the program traps with " + e.name + " at PC " +
                         std::to_string(e.pc) + ", which gives " + std::to_string(want[f].second),
             c;
  return c;
}

// oracle.invariant.all_or_none: trap.allornone (and trap.join) at every step
// boundary of the reference, stepped one step at a time.
Check all_or_none(const Program& p, const std::string& text, OracleContext&) {
  Check c;
  auto a = load(text, c, p.host);
  if (!a) return c;
  c.host = p.host;
  Machine m(a->program);
  std::string problem = allornone_problem(m);
  uint64_t in_handler = 0;
  while (problem.empty()) {
    const std::optional<exec::Status> end = m.advance(1);
    problem = allornone_problem(m);
    if (!problem.empty()) {
      problem = "after step " + std::to_string(m.steps()) + ": " + problem;
      break;
    }
    for (const auto& w : m.state().warps)
      if (w.in_handler) {
        ++in_handler;
        break;
      }
    if (end) break;
  }
  c.counts["oracle:boundaries-in-handler"] = in_handler;
  c.expected = runners::to_model(m.outcome());
  if (!problem.empty()) return c.ok = false, c.message = problem, c;
  status_as_intended(p, c.expected->status, "the program", c);
  return c;
}

// oracle.invariant.host_script: the implementation (the reference, or --runner)
// against the host model, a second semantics of the trap chapter that follows the
// schedule step by step (host_model.h).
Check host_script(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  auto loaded = load(text, c, p.host);
  if (!loaded) return c;
  c.host = p.host;
  HostModelResult want = run_host_model(*loaded->program);
  // The model does not detect livelock: a host program has no loop, and its
  // logging handlers count every entry, so its state never repeats. A shrinking
  // candidate whose handlers do not count may repeat it at max_steps.
  if (want.error.empty() && !p.log_count && want.outcome.status == "step_limit")
    want.error = "a logging handler that does not count, run to max_steps (a livelock?)";
  if (!want.error.empty()) {
    Check out = failing("the host model cannot run this program: " + want.error);
    out.outside = true;
    return out;
  }
  c.expected = want.outcome;
  std::optional<model::Outcome> got = run_implementation(*loaded, text, ctx, c, p.host);
  if (!got) return c;
  std::string d = outcome_difference(want.outcome, *got, p, "the host model");
  // The step count says where each host action landed (trap.host): the reference
  // reports it; the protocol's is informational.
  if (d.empty() && !ctx.runner && got->steps != want.outcome.steps)
    d = "it ends after " + std::to_string(got->steps) + " steps, the host model says " +
        std::to_string(want.outcome.steps);
  if (!d.empty()) c.ok = false, c.message = d;
  return c;
}

// ---- the wave chapter (oracle.model.regions) ------------------------------------------

// A program outside the invariant's model: a failure of the generator, never a
// shrinking candidate that still fails (oracle.shrink).
Check outside_model(const std::string& invariant, const std::string& why) {
  Check c = failing(invariant + " needs a mixed-wave-size program (oracle.model.regions): " + why);
  c.outside = true;
  return c;
}

// The reference's run of a loaded program, counting the steps of its regions:
// subv.begin (entries and skips) and subv.end (one per pass, wave.exit).
exec::Outcome run_counting_regions(const host::Loaded& l, Check& c) {
  const auto& prog = l.program;
  uint64_t begins = 0, passes = 0;
  Machine m(prog);
  m.set_trace([&](const exec::TraceRecord& r) {
    if (r.kind != exec::TraceKind::Step || r.pc >= prog->insns.size()) return;
    const isa::Op op = prog->insns[r.pc].op;
    begins += op == isa::Op::SubvBegin;
    passes += op == isa::Op::SubvEnd;
  });
  exec::Outcome o = m.run();
  c.counts["oracle:region-steps-begin"] = begins;
  c.counts["oracle:region-passes"] = passes;
  // A region some warp ran in more than one pass.
  c.counts["oracle:programs-with-several-passes"] = passes > begins ? 1 : 0;
  return o;
}

// The region program against its twin (normal mode, or a software sequence):
// the implementation runs both (the reference, or ctx.runner); a regression test
// holds the region program and expects the reference's outcome of the twin.
Check against_twin(const Program& p, const Program& twin, const std::string& invariant,
                   const std::string& who, OracleContext& ctx) {
  Check c;
  const std::string text = print(p), twin_text = print(twin);
  auto a = load(text, c);
  if (!a) return c;
  auto b = load(twin_text, c);
  if (!b) return c.message = invariant + ": the twin does not load: " + c.message, c;
  const exec::Outcome hw = run_counting_regions(*a, c);
  c.expected = runners::to_model(Machine(b->program).run());
  c.regression_text = text;
  if (!status_as_intended(p, c.expected->status, "in " + who + " the program", c)) return c;
  std::optional<model::Outcome> got =
      ctx.runner ? run_implementation(*a, text, ctx, c) : runners::to_model(hw);
  if (!got) return c;
  std::optional<model::Outcome> want =
      ctx.runner ? run_implementation(*b, twin_text, ctx, c) : c.expected;
  if (!want) return c;
  std::string d = outcome_difference(*want, *got, p, who);
  if (!d.empty()) c.ok = false, c.message = "with sub-vector regions " + d;
  return c;
}

// oracle.invariant.mode_equivalence: the regions as nops (normal mode at the
// same PCs) and no .vshared (wave.union, wave.scalar, wave.shared).
Check mode_equivalence(const Program& p, const std::string&, OracleContext& ctx) {
  if (std::string d = region_model_problem(p); !d.empty())
    return outside_model("mode-equivalence", d);
  Program twin = p;
  twin.region_form = Program::RegionForm::Nops;
  twin.vshared = false;
  return against_twin(p, twin, "mode-equivalence",
                      "normal mode (subv.begin and subv.end as nop, no .vshared)", ctx);
}

// oracle.invariant.software_loop: each region as the software loop around its
// body, registers private (wave.soft.loop, wave.soft.agree).
Check software_loop(const Program& p, const std::string&, OracleContext& ctx) {
  return software_loop_with(p, Program::RegionForm::Software, ctx);
}

// oracle.invariant.wave_equivalence: the program at the other (wave, simd) pairs
// with as many threads gives the same status and buffers.
Check wave_equivalence(const Program& p, const std::string& text, OracleContext& ctx) {
  if (std::string d = region_model_problem(p); !d.empty())
    return outside_model("wave-equivalence", d);
  if (std::string d = shape_problem(p); !d.empty())
    return outside_model("wave-equivalence", "a statement depends on the shape: " + d);
  Check c;
  auto a = load(text, c);
  if (!a) return c;
  c.expected = runners::to_model(run_counting_regions(*a, c));
  if (!status_as_intended(p, c.expected->status, "the program", c)) return c;
  std::optional<model::Outcome> base =
      ctx.runner ? run_implementation(*a, text, ctx, c) : c.expected;
  if (!base) return c;
  auto shape = [](const Program& q) {
    return "wave " + std::to_string(q.wave) + ", simd " + std::to_string(q.simd_width()) + ", " +
           std::to_string(q.warps) + " warp(s) x " + std::to_string(q.workgroups) + " workgroup(s)";
  };
  const uint32_t threads = p.threads();
  uint64_t runs = 1;
  for (const auto& [w, s] : region_shapes()) {
    if ((w == p.wave && s == p.simd_width()) || threads % w) continue;
    Program q = p;
    q.wave = w;
    q.simd = s == w ? 0 : s;
    const uint32_t n = threads / w;
    q.workgroups = n % p.workgroups == 0 ? p.workgroups : 1;
    q.warps = n / q.workgroups;
    const std::string qt = print(q);
    auto b = load(qt, c);
    if (!b) return c;
    std::optional<model::Outcome> got = run_implementation(*b, qt, ctx, c);
    if (!got) return c;
    ++runs;
    // Events name warps and PCs of the shape; generated programs have none.
    std::string d = outcome_difference(*base, *got, q, "the program at " + shape(p));
    if (!d.empty()) {
      c.ok = false;
      c.message = "at " + shape(q) + " " + d;
      // A regression test holds the program at this shape and expects the
      // reference's outcome at the program's own.
      c.regression_text = qt;
      return c;
    }
  }
  if (runs < 2)
    return outside_model("wave-equivalence",
                         "no other (wave, simd) pair of oracle.model.regions "
                         "has a wave dividing " +
                             std::to_string(threads) + " threads");
  c.counts["oracle:shapes-run"] = runs;
  return c;
}

// ---- oracle.invariant.modesel ---------------------------------------------------------

const char* strategy_name(passes::Strategy s) {
  switch (s) {
    case passes::Strategy::Switch:
      return "switch";
    case passes::Strategy::Duplicate:
      return "duplicate";
    case passes::Strategy::Software:
      return "software";
  }
  return "?";
}

// wave.modesel.threshold: a segment is in a group exactly when its need is above
// the threshold (regions already there are kept); consecutive hot segments share
// one group, a cold one between them starts another; groups count up from 1.
std::string grouping_problem(const passes::ModeselResult& r, uint32_t threshold) {
  int last = 0;
  bool previous_hot = false;
  for (const auto& seg : r.segments) {
    const std::string at = "segment " + std::to_string(seg.index) + " (" + seg.kind + ", lines " +
                           std::to_string(seg.first_line) + "-" + std::to_string(seg.last_line) +
                           ", need " + std::to_string(seg.need) + ")";
    if (seg.kind == "region") {
      if (seg.group != -1) return at + " is a region but is not kept";
      previous_hot = false;
      continue;
    }
    const bool hot = seg.need > threshold;
    if (hot != (seg.group > 0))
      return at + (hot ? " needs more than " : " needs at most ") + std::to_string(threshold) +
             (hot ? " but stays in normal mode" : " but is in group " + std::to_string(seg.group));
    if (hot) {
      const int want = previous_hot ? last : last + 1;
      if (seg.group != want)
        return at + " is in group " + std::to_string(seg.group) + ", expected " +
               std::to_string(want) +
               (previous_hot ? " (the hot segment before it)" : " (a new group)");
      last = seg.group;
    }
    previous_hot = hot;
  }
  return "";
}

std::string first_error(const syntax::Diagnostics& d) {
  if (d.empty()) return "(no diagnostic)";
  const syntax::Diagnostic& e = d.first();
  return "line " + std::to_string(e.span.line) + ": " + e.message +
         (e.clause.empty() ? "" : " (" + e.clause + ")");
}

// oracle.invariant.modesel: the pass on the program without its regions.
Check modesel_oracle(const Program& p, const std::string&, OracleContext& ctx) {
  return modesel_with(p, passes::modesel, ctx);
}

}  // namespace

Check modesel_with(const Program& p, const ModeselPass& pass, OracleContext& ctx) {
  if (std::string d = region_model_problem(p); !d.empty()) return outside_model("modesel", d);
  if (std::string d = modesel_problem(p); !d.empty()) return outside_model("modesel", d);
  Check c;
  const Program in = without_regions(p);
  const std::string text = print(in);
  auto a = load(text, c);
  if (!a) return c;
  const exec::Outcome want = Machine(a->program).run();
  c.expected = runners::to_model(want);
  c.regression_text = text;
  if (!status_as_intended(in, c.expected->status, "without its regions the program", c)) return c;
  auto fail = [&](const std::string& m) {
    c.ok = false;
    c.message = m;
    return c;
  };
  using passes::Strategy;
  // Each strategy its shape allows (wave.modesel.strategy); `switch` refuses a call.
  std::vector<Strategy> strategies;
  if (!uses(in.main, Kind::Call)) strategies.push_back(Strategy::Switch);
  strategies.push_back(Strategy::Duplicate);
  if (in.wave == 64 && in.simd_width() == 32) strategies.push_back(Strategy::Software);
  // A threshold at or above every need gives the input back; the needs it reports
  // choose the thresholds below.
  const uint32_t vregs = a->config.vregs;
  passes::ModeselResult top = pass(a->ast, a->config, vregs, strategies[0]);
  if (!top.program)
    return fail("modesel at threshold " + std::to_string(vregs) +
                " refuses: " + first_error(top.diags));
  uint32_t most = 0;
  std::set<uint32_t> needs;
  for (const auto& seg : top.segments) {
    most = std::max(most, seg.need);
    needs.insert(seg.need);
  }
  c.counts["oracle:modesel-segments"] = top.segments.size();
  for (uint32_t t : {vregs, most}) {
    passes::ModeselResult r = t == vregs ? top : pass(a->ast, a->config, t, strategies[0]);
    if (!r.program)
      return fail("modesel at threshold " + std::to_string(t) +
                  " refuses: " + first_error(r.diags));
    if (!(*r.program == a->ast))
      return fail("modesel at threshold " + std::to_string(t) + ", at or above every need (" +
                  std::to_string(most) + "), changes the program (wave.modesel.threshold)");
    if (std::string d = grouping_problem(r, t); !d.empty())
      return fail("at threshold " + std::to_string(t) + ": " + d);
  }
  // Threshold 0, and one of the needs below the largest, chosen from the seed.
  std::vector<uint32_t> thresholds = {0};
  std::vector<uint32_t> below;
  for (uint32_t n : needs)
    if (n > 0 && n < most) below.push_back(n);
  uint64_t state = ctx.seed;
  if (!below.empty()) thresholds.push_back(below[mix(state) % below.size()]);
  uint64_t groups = 0;
  for (Strategy strategy : strategies)
    for (uint32_t t : thresholds) {
      const std::string how = "modesel --strategy " + std::string(strategy_name(strategy)) +
                              " --threshold " + std::to_string(t);
      passes::ModeselResult r = pass(a->ast, a->config, t, strategy);
      if (!r.program) return fail(how + " refuses: " + first_error(r.diags));
      if (std::string d = grouping_problem(r, t); !d.empty()) return fail(how + ": " + d);
      for (const auto& seg : r.segments)
        groups = std::max<uint64_t>(groups, std::max(0, seg.group));
      // wave.modesel.output: the output validates and runs to the input's outcome.
      const std::string out = text::print(*r.program);
      Check lc;
      auto b = load(out, lc);
      if (!b) {
        c.regression_text = out;
        return fail(how + ": the output does not load: " + lc.message);
      }
      const exec::Outcome got = Machine(b->program).run();
      if (!got.same_result(want)) {
        c.regression_text = out;
        return fail(how + ": " +
                    outcome_difference(*c.expected, runners::to_model(got), in, "the input"));
      }
      // wave.modesel.output: idempotent.
      passes::ModeselResult again = pass(b->ast, b->config, t, strategy);
      if (!again.program)
        return fail(how + " on its own output refuses: " + first_error(again.diags));
      if (!(*again.program == b->ast))
        return fail(how + " on its own output changes it (wave.modesel.output: idempotent)");
    }
  c.counts["oracle:modesel-groups"] = groups;
  // wave.modesel.shared: with the shared temporaries shared, at each threshold the
  // pass refuses a group they are live across, or its regions run to the input's
  // outcome (sharing what the parts write in turn).
  if (uses_shared_temps(in) && strategies[0] == Strategy::Switch) {
    Program shared = in;
    shared.vshared = true;
    const std::string st = print(shared);
    auto b = load(st, c);
    if (!b) return c;
    for (uint32_t t : thresholds) {
      const std::string how = "with .vshared, modesel --threshold " + std::to_string(t);
      passes::ModeselResult r = pass(b->ast, b->config, t, Strategy::Switch);
      if (!r.program) {
        for (const auto& e : r.diags.list())
          if (e.clause != "wave.modesel.shared")
            return fail(how +
                        " refuses for another reason than a shared register live across "
                        "a group: " +
                        first_error(r.diags));
        c.counts["oracle:modesel-shared-refusals"] += 1;
        continue;
      }
      const std::string out = text::print(*r.program);
      Check lc;
      auto o = load(out, lc);
      if (!o) {
        c.regression_text = out;
        return fail(how + ": the output does not load: " + lc.message);
      }
      const exec::Outcome got = Machine(o->program).run();
      if (!got.same_result(want)) {
        c.regression_text = out;
        return fail(how + ": " +
                    outcome_difference(*c.expected, runners::to_model(got), in, "the input"));
      }
      c.counts["oracle:modesel-shared-runs"] += 1;
    }
  }
  return c;
}

Check structured_with(const Program& p, const EvalOptions& eval, OracleContext& ctx) {
  return structured_eval(p, print(p), eval, ctx);
}

Check software_loop_with(const Program& p, Program::RegionForm form, OracleContext& ctx) {
  if (std::string d = region_model_problem(p); !d.empty()) return outside_model("software-loop", d);
  if (p.wave != 64 || p.simd_width() != 32)
    return outside_model(
        "software-loop",
        "the software loop is defined for wave 64 and simd 32 only (wave.soft.loop)");
  Program twin = p;
  twin.region_form = form;
  twin.vshared = false;
  return against_twin(p, twin, "software-loop",
                      form == Program::RegionForm::SoftwareSource
                          ? "the one-scalar sequence (wave.soft.source)"
                          : "the software loop (wave.soft.loop)",
                      ctx);
}

std::string modesel_problem(const Program& p) {
  std::string why;
  std::function<void(const std::vector<Stmt>&)> walk = [&](const std::vector<Stmt>& b) {
    for (const Stmt& s : b) {
      if (!why.empty()) return;
      const bool scalar =
          s.kind == Kind::ScalarAlu || (s.kind == Kind::ScalarLoad && !p.input.empty());
      if (communicating(s.kind) && !scalar)
        why = "a " + std::string(kind_name(s.kind)) + " statement";
      else if (s.kind == Kind::Jump || (s.raw && s.kind != Kind::Exit) || !s.again.empty())
        why = "a " + std::string(kind_name(s.kind)) + " statement printed as primitives";
      for (const Operand* o : operands_read(s))
        if (o->k == Operand::K::Scalar ||
            (o->k == Operand::K::Special &&
             isa::special_info(static_cast<isa::Special>(o->v)).writable))
          why = "a read of s5 or %exec";
      for (const auto* child : {&s.body, &s.other, &s.again}) walk(*child);
    }
  };
  walk(p.main);
  for (const auto& f : p.functions) walk(f);
  return why;
}

std::string region_model_problem(const Program& p) {
  if (std::string d = region_problem(p); !d.empty()) return d;
  if ((p.mask_depth ? p.mask_depth : exec::kDefaultLaunch.mask_depth) < mask_need(p))
    return "the mask stack may overflow (in a pass, only some parts would have run)";
  return "";
}

std::string shape_problem(const Program& p) {
  std::string why;
  std::function<void(const std::vector<Stmt>&)> walk = [&](const std::vector<Stmt>& b) {
    for (const Stmt& s : b) {
      if (!why.empty()) return;
      for (const Operand* o : operands_read(s))
        if (o->k == Operand::K::Lane || o->k == Operand::K::Special)
          why = "a " + std::string(kind_name(s.kind)) +
                " statement reads %lane or a special register";
      const bool scalar =
          s.kind == Kind::ScalarAlu || (s.kind == Kind::ScalarLoad && !p.input.empty());
      if (why.empty() && communicating(s.kind) && !scalar)
        why = "a " + std::string(kind_name(s.kind)) + " statement";
      for (const auto* child : {&s.body, &s.other, &s.again}) walk(*child);
    }
  };
  walk(p.main);
  for (const auto& f : p.functions) walk(f);
  return why;
}

std::string allornone_problem(const exec::Machine& m) {
  const exec::MachineState& st = m.state();
  for (uint32_t core = 0; core < st.trap.cores.size(); ++core) {
    int mode = -1;
    int32_t first = -1, returned = -1;
    bool handler = false;
    for (uint32_t g = 0; g < st.warps.size(); ++g) {
      if (m.trap().core_of(g) != core) continue;
      const exec::WarpState& w = st.warps[g];
      if (w.status == exec::WarpStatus::Returned && returned < 0)
        returned = static_cast<int32_t>(g);
      if (w.status != exec::WarpStatus::Ready && w.status != exec::WarpStatus::Barrier) continue;
      handler = handler || w.in_handler;
      if (mode < 0) {
        mode = w.in_handler;
        first = static_cast<int32_t>(g);
      } else if (mode != static_cast<int>(w.in_handler)) {
        auto mode_name = [](bool h) { return h ? "handler mode" : "user mode"; };
        return "on core " + std::to_string(core) + " warp " + std::to_string(first) + " is in " +
               mode_name(mode) + " and warp " + std::to_string(g) + " in " +
               mode_name(w.in_handler) + ", both ready or at a barrier (trap.allornone)";
      }
    }
    if (returned >= 0 && !handler)
      return "on core " + std::to_string(core) + " warp " + std::to_string(returned) +
             " has returned and waits for a join, but no warp of the core runs its handler "
             "(trap.join)";
  }
  return "";
}

Check trap_transparency_with(const Program& p, const Program& with, OracleContext& ctx) {
  Check c;
  if (raises(p)) return failing("trap-transparency needs a program without trap or sys statements");
  Program plain = p;
  plain.handler = Program::Handler::None;
  plain.handler_code.clear();
  plain.host.clear();
  plain.stack = 0;
  const std::string plain_text = print(plain);
  auto a = load(plain_text, c);
  if (!a) return c;
  const exec::Outcome ref = Machine(a->program).run();
  // The outcome the interrupted program must have: the uninterrupted one.
  c.expected = runners::to_model(ref);
  if (!status_as_intended(plain, c.expected->status, "the uninterrupted program", c)) return c;
  // One to three actions at steps of the run, for all cores or one, chosen from
  // the seed; steps in order (trap.host): interrupts (trap.host.interrupt), half
  // the time; else single-step on or off (trap.host.single_step: every round ends
  // in an entry of the handler, which returns) or a resume request
  // (trap.host.resume: no warp pauses, so it resumes none). Single-step only
  // where the run completes: a warp waiting at a barrier that cannot complete is
  // unwound by each round's trap and arrives again, for ever (trap.entry).
  uint64_t state = ctx.seed;
  std::vector<syntax::HostStep> script(1 + mix(state) % 3);
  const bool stepping = ref.status == exec::Status::Completed;
  for (auto& h : script) {
    const uint64_t kind = mix(state) % 6;
    h.kind = kind < 3               ? syntax::HostKind::Interrupt
             : kind < 5 && stepping ? syntax::HostKind::SingleStep
                                    : syntax::HostKind::Resume;
    h.on = kind == 3;
    h.step = ref.steps ? mix(state) % ref.steps : 0;
    h.core = mix(state) % 2 ? syntax::kAllCores : static_cast<int32_t>(mix(state) % p.cores);
    if (h.kind == syntax::HostKind::Interrupt)
      h.code = static_cast<uint32_t>(mix(state) % 4 ? mix(state) % 16 : mix(state) % (1u << 24));
  }
  std::stable_sort(script.begin(), script.end(),
                   [](const auto& x, const auto& y) { return x.step < y.step; });
  Program q = plain;
  q.handler = with.handler == Program::Handler::None ? Program::Handler::Return : with.handler;
  q.handler_code = with.handler_code;
  q.host = script;
  const std::string text = print(q);
  auto b = load(text, c, script);
  if (!b) return c;
  c.regression_text = text;
  c.host = script;
  c.counts["oracle:host-actions"] = script.size();
  std::optional<model::Outcome> want =
      ctx.runner ? run_implementation(*a, plain_text, ctx, c) : c.expected;
  if (!want) return c;
  std::optional<model::Outcome> got = run_implementation(*b, text, ctx, c, script);
  if (!got) return c;
  // The handler's steps show that an entry was taken (the reference's counts).
  if (!ctx.runner) c.counts["oracle:runs-with-entries"] = got->steps > want->steps ? 1 : 0;
  std::string d = outcome_difference(*want, *got, p, "the run without a host script");
  if (!d.empty()) c.ok = false, c.message = "with the host actions " + describe(script) + ": " + d;
  return c;
}

Check failing(std::string message) {
  Check c;
  c.ok = false;
  c.message = std::move(message);
  return c;
}

Uses uses_of(const exec::Program& p) {
  Uses u;
  for (const auto& in : p.insns) {
    const isa::OpInfo& i = isa::info(in.op);
    if (!i.clause.empty()) u.clauses.insert(std::string(i.clause));
    u.features.insert(std::string(isa::feature_name(i.feature)));
    u.mnemonics.insert(std::string(i.mnemonic));
  }
  return u;
}

const std::vector<Invariant>& invariants() {
  static const std::vector<Invariant> all = {
      {.name = "sequential",
       .clauses = {"exec.form", "branch.struct.if", "branch.struct.loop"},
       .check = sequential,
       .communicating = false,
       .traps = false},
      {.name = "structured",
       .clauses = {"exec.outcome", "branch.struct.expand", "xlane.inactive", "bar.release"},
       .check = structured,
       .runner_optional = true,
       .handler_share = 1,
       .region_share = 1,
       .region_strict = false,
       .preempt_share = 1},
      {.name = "scheduler",
       .clauses = {"exec.sched.independence"},
       .check = scheduler,
       .handler_share = 1,
       .region_share = 1,
       .region_strict = false},
      {.name = "snapshot",
       .clauses = {"exec.snapshot", "exec.livelock"},
       .check = snapshot,
       .handler_share = 1,
       .interrupts = true,
       .region_share = 1,
       .region_strict = false,
       .host_share = 1,
       .spin_share = 1,
       .preempt_share = 1},
      {.name = "expansion",
       .clauses = {"branch.struct.expand"},
       .check = expansion,
       .handler_share = 1,
       .region_share = 1,
       .region_strict = false},
      {.name = "roundtrip",
       .clauses = {"syntax.print.roundtrip"},
       .check = roundtrip,
       .handler_share = 1,
       .region_share = 1,
       .region_strict = false},
      {.name = "atomic-broadcast",
       .clauses = {"atom.warp", "atom.lane", "xlane.readlane"},
       .check = atomic_broadcast,
       .traps = false,
       .runner_optional = true,
       .atomics = true},
      {.name = "atomic-count",
       .clauses = {"atom.lane", "atom.lane.order", "atom.warp", "atom.warp.empty"},
       .check = atomic_count,
       .traps = false,
       .runner_optional = true,
       .atomics = true},
      {.name = "policy",
       .clauses = {"exec.sched.round_robin", "exec.sched.lowest_pc_first",
                   "exec.sched.oldest_first", "exec.sched.random", "exec.step.order"},
       .check = policy_oracle},
      {.name = "livelock",
       .clauses = {"exec.livelock", "exec.status.livelock", "exec.status.step_limit"},
       .check = livelock_oracle,
       .traps = false,
       .spin = true},
      {.name = "validator", .clauses = {"valid.report"}, .check = validator_oracle},
      {.name = "trap-transparency",
       .clauses = {"trap.interrupt", "trap.host.interrupt", "trap.single_step",
                   "trap.host.single_step", "trap.host.resume", "trap.entry", "trap.context",
                   "trap.resume"},
       .check = trap_transparency,
       .traps = false,
       .runner_optional = true,
       .region_share = 1,
       .region_strict = false},
      {.name = "trap-record",
       .clauses = {"trap.entry", "trap.cause", "trap.esr", "trap.frame", "trap.resume.pc",
                   "trap.none"},
       .check = trap_record,
       .runner_optional = true,
       .handler_share = 4,
       .interrupts = true,
       .trap_always = true},
      {.name = "all-or-none",
       .clauses = {"trap.allornone", "trap.join"},
       .check = all_or_none,
       .handler_share = 4,
       .interrupts = true,
       .trap_always = true,
       .region_share = 1,
       .region_strict = false,
       .host_share = 1,
       .preempt_share = 1},
      {.name = "host-script",
       .clauses = {"trap.host", "trap.boundary", "trap.entry", "trap.frame", "trap.join",
                   "trap.pause", "trap.host.resume", "trap.single_step", "trap.vector",
                   "trap.paused"},
       .check = host_script,
       .runner_optional = true,
       .interrupts = true,
       .host_share = 4,
       .preempt_share = 1},
      {.name = "mode-equivalence",
       .clauses = {"wave.enter", "wave.exit", "wave.union", "wave.scalar", "wave.shared"},
       .check = mode_equivalence,
       .runner_optional = true,
       .region_share = 4,
       .shapes = region_shapes()},
      {.name = "wave-equivalence",
       .clauses = {"wave.parts", "wave.union", "wave.lane", "state.launch.limits"},
       .check = wave_equivalence,
       .communicating = false,
       .traps = false,
       .runner_optional = true,
       .region_share = 4,
       .shapes = region_shapes(),
       .shape_free = true},
      {.name = "software-loop",
       .clauses = {"wave.soft.loop", "wave.soft.agree"},
       .check = software_loop,
       .traps = false,
       .runner_optional = true,
       .region_share = 4,
       .shapes = {{64, 32}}},
      {.name = "modesel",
       .clauses = {"wave.modesel.segments", "wave.modesel.need", "wave.modesel.threshold",
                   "wave.modesel.safe", "wave.modesel.shared", "wave.modesel.strategy",
                   "wave.modesel.output"},
       .check = modesel_oracle,
       .communicating = false,
       .traps = false,
       .region_share = 4,
       .shapes = region_shapes(),
       .modesel_safe = true},
      {.name = "preempt-transparency",
       .clauses = {"preempt.transparency", "preempt.steps", "preempt.flow.a", "preempt.flow.b",
                   "preempt.intruder", "preempt.slm", "preempt.stop", "preempt.barrier",
                   "preempt.sched"},
       .check = preempt_transparency,
       .handler_share = 1,
       .interrupts = true,
       .region_share = 1,
       .region_strict = false,
       .host_share = 1,
       .spin_share = 1,
       .preempt_share = 4},
      {.name = "image-stable",
       .clauses = {"preempt.save", "preempt.restore", "preempt.restore.request", "preempt.flow.c",
                   "preempt.image"},
       .check = image_stable,
       .handler_share = 1,
       .interrupts = true,
       .region_share = 1,
       .region_strict = false,
       .host_share = 1},
      {.name = "image-exchange",
       .clauses = {"runner.preempt", "preempt.image", "preempt.flow.c", "preempt.transparency"},
       .check = image_exchange,
       .needs_runner = true,
       .handler_share = 1,
       .interrupts = true,
       .region_share = 1,
       .region_strict = false,
       .host_share = 1},
      {.name = "differential",
       .clauses = {"exec.outcome"},
       .check = differential,
       .needs_runner = true,
       .small_mask_depth = true,
       .handler_share = 1,
       .interrupts = true,
       .region_share = 1,
       .region_strict = false,
       .host_share = 1,
       .preempt_share = 2},
  };
  return all;
}

std::optional<std::string> intended_status(const Program& p) {
  StructuredResult r = evaluate_structured(p);
  if (!r.error.empty()) return std::nullopt;
  return r.outcome.status;
}

const Invariant* find_invariant(const std::string& name) {
  for (const auto& i : invariants())
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace simt::gen
