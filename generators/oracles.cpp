#include "oracles.h"

#include "compare.h"
#include "evaluator.h"
#include "exec/machine.h"
#include "host/host.h"
#include "isa/isa.h"
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
  return "";
}

// The request that runs a generated program on ctx.runner: its text, with the
// resolved launch configuration.
runners::RunRequest runner_request(const host::Loaded& loaded, const std::string& text) {
  runners::RunRequest req;
  req.program = text;
  req.config = runners::run_config(loaded.config);
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
    if (std::string why = harness::policy_dependence(req, l); !why.empty()) {
      c.unsupported = why;
      return false;
    }
  }
  return true;
}

// The outcome of the program on the implementation under test: the reference in
// process, or ctx.runner. Unset (with c.unsupported or a failure in c) if it
// could not be run.
std::optional<model::Outcome> run_implementation(const host::Loaded& loaded,
                                                 const std::string& text, OracleContext& ctx,
                                                 Check& c) {
  if (!ctx.runner) return runners::to_model(Machine(loaded.program).run());
  runners::RunRequest req = runner_request(loaded, text);
  if (!runnable(loaded, req, ctx, c)) return std::nullopt;
  runners::RunResult got = ctx.runner->run(req);
  if (got.kind == runners::RunResult::Kind::Unsupported) {
    c.unsupported = "the implementation: " + got.message;
    return std::nullopt;
  }
  if (got.kind == runners::RunResult::Kind::Error) {
    c = failing(ctx.runner->name() + " failed to run the program: " + got.message);
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

// oracle.invariant.structured
Check structured(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  auto loaded = load(text, c);
  if (!loaded) return c;
  StructuredResult want = evaluate_structured(p);
  if (!want.error.empty())
    return failing("the structured evaluator cannot run this program: " + want.error);
  std::optional<model::Outcome> got = run_implementation(*loaded, text, ctx, c);
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
  auto loaded = load(text, c);
  if (!loaded) return c;
  auto prog = loaded->program;
  std::vector<std::string> trace;
  Machine full(prog);
  full.set_trace(
      [&](const exec::TraceRecord& r) { trace.push_back(exec::format_trace(*prog, r)); });
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
  std::vector<std::string> suffix(
      trace.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(k, trace.size())),
      trace.end());
  if (after != suffix) {
    size_t i = 0;
    while (i < after.size() && i < suffix.size() && after[i] == suffix[i]) ++i;
    return c.ok = false,
           c.message = "after restore at step " + std::to_string(k) +
                       " the trace differs at line " + std::to_string(k + i) + ": '" +
                       (i < after.size() ? after[i] : "<end>") + "' vs '" +
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

// oracle.invariant.differential
Check differential(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  if (!ctx.runner) return failing("differential needs an implementation to compare (--runner)");
  auto loaded = load(text, c);
  if (!loaded) return c;
  runners::RunRequest req = runner_request(*loaded, text);
  runners::RunResult ref = runners::run_loaded(loaded->program, false);
  c.expected = ref.outcome;
  if (!status_as_intended(p, ref.outcome.status, "on the reference the program", c)) return c;
  if (!runnable(*loaded, req, ctx, c)) return c;
  runners::RunResult got = ctx.runner->run(req);
  if (got.kind == runners::RunResult::Kind::Unsupported) {
    c.unsupported = "the implementation: " + got.message;
    return c;
  }
  if (got.kind == runners::RunResult::Kind::Error)
    return c.ok = false,
           c.message = ctx.runner->name() + " failed to run the program: " + got.message, c;
  harness::Layout l;
  l.wave = p.wave;
  l.simd = p.wave;
  l.warps = p.warps;
  l.workgroups = p.workgroups;
  harness::Verdict v = harness::compare_with_reference(ref, got, l);
  if (!v.ok) return c.ok = false, c.message = ctx.runner->name() + ": " + v.message, c;
  return c;
}

}  // namespace

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
       .runner_optional = true},
      {.name = "scheduler", .clauses = {"exec.sched.independence"}, .check = scheduler},
      {.name = "snapshot", .clauses = {"exec.snapshot"}, .check = snapshot},
      {.name = "expansion", .clauses = {"branch.struct.expand"}, .check = expansion},
      {.name = "roundtrip", .clauses = {"syntax.print.roundtrip"}, .check = roundtrip},
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
      {.name = "differential",
       .clauses = {"exec.outcome"},
       .check = differential,
       .needs_runner = true,
       .small_mask_depth = true},
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
