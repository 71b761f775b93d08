#include "rule_oracles.h"

#include <unordered_map>

#include "exec/machine.h"
#include "host/host.h"
#include "isa/isa.h"
#include "reference.h"
#include "text/printer.h"

namespace simt::gen {

namespace {

using exec::Machine;
using exec::Policy;
using exec::Status;
using exec::WarpStatus;

std::shared_ptr<exec::Program> with(const exec::Program& base, Policy policy, uint64_t seed,
                                    uint64_t max_steps, bool livelock_check) {
  auto p = std::make_shared<exec::Program>(base);
  p->config.policy = policy;
  p->config.seed = seed;
  p->config.max_steps = max_steps;
  p->config.livelock_check = livelock_check;
  return p;
}

std::string policy_text(Policy p, uint64_t seed) {
  return std::string(exec::policy_name(p)) +
         (p == Policy::Random ? " seed " + std::to_string(seed) : "");
}

// ---- oracle.invariant.policy ------------------------------------------------------------

// The warp each policy's clause picks among the ready warps of a state, written
// straight from spec/execution.md (exec.sched.*), with the transcription's own
// round-robin cursor and random state; -1 when no warp is ready.
struct Transcription {
  Policy policy;
  uint32_t cursor = 0;  // exec.sched.round_robin: starts at 0
  uint64_t rng;         // exec.sched.random: starts at the seed

  int pick(const exec::MachineState& s) {
    const uint32_t n = static_cast<uint32_t>(s.warps.size());
    auto ready = [&](uint32_t g) { return s.warps[g].status == WarpStatus::Ready; };
    switch (policy) {
      case Policy::RoundRobin:  // the first ready warp at or after the cursor, wrapping
        for (uint32_t k = 0; k < n; ++k)
          if (ready((cursor + k) % n)) return static_cast<int>((cursor + k) % n);
        return -1;
      case Policy::LowestPcFirst: {  // the smallest pc; ties to the lowest id
        int best = -1;
        for (uint32_t g = 0; g < n; ++g)
          if (ready(g) && (best < 0 || s.warps[g].pc < s.warps[static_cast<size_t>(best)].pc))
            best = static_cast<int>(g);
        return best;
      }
      case Policy::OldestFirst:  // the lowest id
        for (uint32_t g = 0; g < n; ++g)
          if (ready(g)) return static_cast<int>(g);
        return -1;
      case Policy::Random: {  // SplitMix64, the (r mod n)-th ready warp
        std::vector<uint32_t> r;
        for (uint32_t g = 0; g < n; ++g)
          if (ready(g)) r.push_back(g);
        if (r.empty()) return -1;
        rng += 0x9E3779B97F4A7C15ull;
        uint64_t z = rng;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return static_cast<int>(r[z % r.size()]);
      }
    }
    return -1;
  }
  // exec.sched.round_robin: the cursor moves to the warp after the one that ran.
  void ran(uint32_t g, uint32_t n) { cursor = (g + 1) % n; }
};

}  // namespace

Check policy_oracle(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  auto r = host::load(text);
  if (!r.loaded)
    return failing("the generated program does not load:\n" + r.diags.format("generated"));
  const uint64_t seed = 1 + ctx.seed % 1000;
  for (Policy pol : exec::kAllPolicies) {
    auto prog = with(*r.loaded->program, pol, seed, r.loaded->config.max_steps, true);
    Machine m(prog);
    int traced = -1;
    m.set_trace([&](const exec::TraceRecord& t) { traced = static_cast<int>(t.warp); });
    Transcription tr{pol, 0, seed};
    const uint32_t n = static_cast<uint32_t>(m.state().warps.size());
    for (uint64_t step = 0;; ++step) {
      // exec.step.order: completed when every warp is done, deadlock when none is ready.
      bool all_done = true;
      for (const auto& w : m.state().warps) all_done = all_done && w.status == WarpStatus::Done;
      const int want = all_done ? -1 : tr.pick(m.state());
      traced = -1;
      std::optional<Status> end = m.step();
      const std::string where =
          "under " + policy_text(pol, seed) + " at step " + std::to_string(step) + ": ";
      if (all_done) {
        if (end != Status::Completed || traced >= 0)
          return failing(where + "every warp is done but the launch does not end completed");
        break;
      }
      if (want < 0) {
        if (end != Status::Deadlock || traced >= 0)
          return failing(where + "no warp is ready but the launch does not end in deadlock");
        break;
      }
      if (traced != want)
        return failing(where + "warp " + std::to_string(traced) +
                       " ran, the policy's clause picks " + std::to_string(want));
      tr.ran(static_cast<uint32_t>(want), n);
      if (end) break;
    }
    if (pol == Policy::RoundRobin) {
      c.expected = runners::to_model(m.outcome());
      if (auto intended = intended_status(p); intended && *intended != c.expected->status)
        return failing("under round_robin the program ends " + c.expected->status +
                       "; the generator meant it to end " + *intended);
    }
  }
  return c;
}

// ---- oracle.invariant.livelock ------------------------------------------------------------

namespace {

// An exact detector: it remembers every state (as hashes, confirming a match by
// comparing the full states) until one recurs. mu is the first index of the
// repeated state, lambda the distance to its repetition (exec.livelock).
struct Cycle {
  bool found = false;
  uint64_t mu = 0, lambda = 0;
};

// The full state of exec.livelock, field by field as state.md lists it: every
// warp, all memory, the per-core registers and global ESR, each barrier's count,
// the scheduler's cursor and random state. (Not MachineState's ==, which also
// compares the executor's own memory-hash cache.)
bool same_state(const exec::MachineState& a, const exec::MachineState& b) {
  return a.warps == b.warps && a.mem.buffers == b.mem.buffers && a.mem.slm == b.mem.slm &&
         a.mem.stack == b.mem.stack && a.trap.cores == b.trap.cores && a.barriers == b.barriers &&
         a.trap.global_esr == b.trap.global_esr && a.sched == b.sched;
}

Cycle find_cycle(const std::shared_ptr<const exec::Program>& prog, uint64_t limit) {
  Cycle cy;
  Machine m(prog);
  std::unordered_multimap<uint64_t, uint64_t> seen;  // hash -> step
  seen.emplace(m.hash(), 0);
  for (uint64_t t = 1; t <= limit; ++t) {
    if (m.step()) return cy;  // the launch ended: no repetition
    const uint64_t h = m.hash();
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      Machine again(prog);  // the earlier state, by running again
      again.advance(it->second);
      if (same_state(again.state(), m.state())) {
        cy.found = true;
        cy.mu = it->second;
        cy.lambda = t - it->second;
        return cy;
      }
    }
    seen.emplace(h, t);
  }
  return cy;
}

// exec.livelock: d = (2^k - 1) + lambda, k the smallest with 2^k - 1 >= mu and 2^k >= lambda.
uint64_t detection_step(uint64_t mu, uint64_t lambda) {
  uint64_t two_k = 1;
  while (two_k - 1 < mu || two_k < lambda) two_k *= 2;
  return two_k - 1 + lambda;
}

// The outcome buffers of the state after step t (detection off, so nothing ends it).
std::vector<exec::BufferOut> buffers_at(const std::shared_ptr<const exec::Program>& prog,
                                        uint64_t t) {
  Machine m(prog);
  m.advance(t);
  return m.outcome().buffers;
}

}  // namespace

Check livelock_oracle(const Program& p, const std::string& text, OracleContext& ctx) {
  Check c;
  auto r = host::load(text);
  if (!r.loaded)
    return failing("the generated program does not load:\n" + r.diags.format("generated"));
  const exec::Program& base = *r.loaded->program;
  const uint64_t max_steps = r.loaded->config.max_steps;
  const bool spins = uses(p, Kind::Spin);
  const uint64_t seed = 1 + ctx.seed % 1000;
  uint64_t rr_steps = 0;
  for (Policy pol : exec::kAllPolicies) {
    const std::string under = "under " + policy_text(pol, seed) + ": ";
    // A random launch of a spin runs to its limit: a few times the round-robin
    // detection step is enough to see it does not end livelock.
    const uint64_t limit =
        pol == Policy::Random && spins ? std::min(max_steps, 1000 + 4 * rr_steps) : max_steps;
    auto prog = with(base, pol, seed, limit, true);
    exec::Outcome o = Machine(prog).run();
    if (pol == Policy::RoundRobin) {
      c.expected = runners::to_model(o);
      rr_steps = o.steps;
    }
    if (pol == Policy::Random) {
      // exec.livelock: the generator's state never repeats; a spin runs to the limit.
      if (o.status == Status::Livelock) return failing(under + "a random launch ends livelock");
      if (spins && o.status != Status::StepLimit)
        return failing(under + "a program that spins forever ends " +
                       std::string(exec::status_name(o.status)) + ", not step_limit");
      continue;
    }
    if (!spins) {
      // It provably terminates (oracle.model.print): never livelock, at any limit.
      if (o.status == Status::Livelock)
        return failing(under + "a terminating program ends livelock");
      const uint64_t limit = 1 + (ctx.seed + static_cast<uint64_t>(pol)) % (o.steps + 2);
      exec::Outcome cut = Machine(with(base, pol, seed, limit, true)).run();
      const Status want = limit < o.steps || (limit == o.steps && o.status == Status::StepLimit)
                              ? Status::StepLimit
                              : o.status;
      if (cut.status != want || (want == Status::StepLimit && cut.steps != limit))
        return failing(under + "with max_steps " + std::to_string(limit) + " the launch ends " +
                       std::string(exec::status_name(cut.status)) + " after " +
                       std::to_string(cut.steps) + " steps; it runs " + std::to_string(o.steps) +
                       " steps to " + std::string(exec::status_name(o.status)));
      continue;
    }
    // It provably repeats (oracle.model.spin): livelock under every deterministic
    // policy, at the detection step an exact detector predicts.
    if (o.status != Status::Livelock)
      return failing(under + "a program whose state repeats ends " +
                     std::string(exec::status_name(o.status)));
    auto plain = with(base, pol, seed, max_steps, false);
    const Cycle cy = find_cycle(plain, o.steps);
    if (!cy.found)
      return failing(under + "the launch ends livelock at step " + std::to_string(o.steps) +
                     " but no state repeats up to it");
    const uint64_t d = detection_step(cy.mu, cy.lambda);
    if (o.steps != d || o.buffers != buffers_at(plain, d))
      return failing(under + "livelock detected at step " + std::to_string(o.steps) +
                     "; the states first repeat at step " + std::to_string(cy.mu + cy.lambda) +
                     " (mu " + std::to_string(cy.mu) + ", lambda " + std::to_string(cy.lambda) +
                     "), so detection is due at step " + std::to_string(d) +
                     (o.steps == d ? " with the buffers of that state" : ""));
    // The status at a given max_steps (exec.livelock): livelock if d <= max_steps,
    // else step_limit after max_steps steps, with that state's buffers.
    for (uint64_t m :
         {cy.mu + cy.lambda - 1, cy.mu + cy.lambda, d - 1, d, d + 1, 1 + ctx.seed % (d + 2)}) {
      if (m == 0) continue;
      exec::Outcome cut = Machine(with(base, pol, seed, m, true)).run();
      const bool live = d <= m;
      const uint64_t steps = live ? d : m;
      const Status want = live ? Status::Livelock : Status::StepLimit;
      if (cut.status != want || cut.steps != steps || cut.buffers != buffers_at(plain, steps))
        return failing(under + "with max_steps " + std::to_string(m) + " the launch ends " +
                       std::string(exec::status_name(cut.status)) + " after " +
                       std::to_string(cut.steps) + " steps; an exact detector says " +
                       std::string(exec::status_name(want)) + " after " + std::to_string(steps) +
                       " (mu " + std::to_string(cy.mu) + ", lambda " + std::to_string(cy.lambda) +
                       ")");
    }
  }
  return c;
}

// ---- oracle.invariant.validator -----------------------------------------------------------

namespace {

using syntax::OperandType;
using syntax::RegFile;
using syntax::StmtKind;

syntax::Stmt instr(isa::Op op, std::vector<syntax::Operand> ops = {}) {
  syntax::Stmt s;
  s.kind = StmtKind::Instr;
  s.op = op;
  s.operands = std::move(ops);
  return s;
}
syntax::Operand pt() {
  syntax::Operand o;
  o.type = OperandType::Pred;
  o.value.file = RegFile::PTrue;
  return o;
}
syntax::Stmt label(const std::string& name) {
  syntax::Stmt s;
  s.kind = StmtKind::Label;
  s.label = name;
  return s;
}
syntax::Stmt keyword(StmtKind k) {
  syntax::Stmt s;
  s.kind = k;
  return s;
}
bool is_instr(const syntax::Stmt& s, isa::Op op) {
  return s.kind == StmtKind::Instr && s.op == op;
}

// Index of the first statement that is an instruction, at or after `from`.
size_t first_instr(const syntax::Program& p, size_t from = 0) {
  while (from < p.stmts.size() && p.stmts[from].kind != StmtKind::Instr) ++from;
  return from;
}

}  // namespace

std::vector<Mutation> mutations(const std::string& text) {
  std::vector<Mutation> out;
  auto r = host::load(text);
  if (!r.loaded) return out;
  const syntax::Program& ast = r.loaded->ast;
  const syntax::Program& ex = r.loaded->expanded;
  auto add = [&](const std::string& name, const std::string& clause, const syntax::Program& q) {
    out.push_back({name, clause, text::print(q)});
  };
  auto insert = [&](const syntax::Program& base, size_t at, std::vector<syntax::Stmt> stmts) {
    syntax::Program q = base;
    q.stmts.insert(q.stmts.begin() + static_cast<std::ptrdiff_t>(at), stmts.begin(), stmts.end());
    return q;
  };
  // The first instruction with an operand of a kind, and the operand's index.
  auto find_operand = [&](const syntax::Program& base, auto&& pred) -> std::pair<size_t, size_t> {
    for (size_t i = 0; i < base.stmts.size(); ++i) {
      const syntax::Stmt& s = base.stmts[i];
      if (s.kind != StmtKind::Instr) continue;
      const auto kinds = isa::info(s.op).sig.view();
      for (size_t k = 0; k < s.operands.size() && k < kinds.size(); ++k)
        if (pred(s, kinds[k], s.operands[k])) return {i, k};
    }
    return {SIZE_MAX, 0};
  };
  const uint32_t vregs = r.loaded->config.vregs, sregs = r.loaded->config.sregs;
  // The flow checks follow only reachable paths; an instruction the program
  // executes is reachable, so flow mutations go next to executed instructions.
  std::vector<bool> executed(r.loaded->program->size(), false);
  {
    Machine m(r.loaded->program);
    m.set_trace([&](const exec::TraceRecord& t) {
      if (t.pc < executed.size()) executed[t.pc] = true;
    });
    m.run();
  }
  // A program that writes exec is outside the flow checks' reasoning
  // (valid.flow.end): an exit may end a path statically that goes on at run
  // time, so executed does not imply reachable there.
  bool writes_exec = false;
  for (const auto& s : ex.stmts)
    if (s.kind == StmtKind::Instr && !s.operands.empty() &&
        s.operands[0].value.file == RegFile::Special)
      writes_exec = true;
  std::vector<bool> ran(ex.stmts.size(), false);  // by statement index
  for (size_t i = 0, pc = 0; i < ex.stmts.size(); ++i)
    if (ex.stmts[i].kind == StmtKind::Instr) ran[i] = executed[pc++] && !writes_exec;

  // valid.reg.range: a v, an s and a p register one past the last.
  for (auto [file, limit, name] :
       {std::tuple{RegFile::V, vregs, "v-register-out-of-range"},
        std::tuple{RegFile::S, sregs, "s-register-out-of-range"},
        std::tuple{RegFile::P, isa::kNumPreds, "predicate-out-of-range"}}) {
    const RegFile f = file;  // a structured binding is not captured (clang 14)
    auto [i, k] =
        find_operand(ex, [&](const syntax::Stmt&, isa::OperandKind, const syntax::Operand& o) {
          return (o.type == OperandType::Value || o.type == OperandType::Pred) && o.value.file == f;
        });
    if (i == SIZE_MAX) continue;
    syntax::Program q = ex;
    q.stmts[i].operands[k].value.index = limit;
    add(name, "valid.reg.range", q);
  }
  // valid.form.dest: pt as a destination; a read-only special as one.
  if (auto [i, k] =
          find_operand(ex, [](const syntax::Stmt&, isa::OperandKind kind,
                              const syntax::Operand&) { return kind == isa::OperandKind::PDst; });
      i != SIZE_MAX) {
    syntax::Program q = ex;
    q.stmts[i].operands[k].value.file = RegFile::PTrue;
    q.stmts[i].operands[k].value.index = 0;
    add("pt-destination", "valid.form.dest", q);
  }
  if (auto [i, k] =
          find_operand(ex,
                       [](const syntax::Stmt& s, isa::OperandKind kind, const syntax::Operand& o) {
                         return s.op == isa::Op::Mov && kind == isa::OperandKind::Dst &&
                                o.value.file == RegFile::V;
                       });
      i != SIZE_MAX) {
    syntax::Program q = ex;
    q.stmts[i].operands[k].value.file = RegFile::Special;
    q.stmts[i].operands[k].value.index = static_cast<uint32_t>(isa::Special::Lane);
    add("read-only-special-destination", "valid.form.dest", q);
  }
  // valid.form.uniform: an instruction with a vector destination made scalar-form
  // (an `s` destination) where its statement reads per-lane values: a per-lane
  // source of a vector-form instruction, or a per-lane base of a vector load.
  auto make_scalar = [&](const char* name, auto&& reads_per_lane) {
    auto [i, k] = find_operand(
        ex, [&](const syntax::Stmt& s, isa::OperandKind kind, const syntax::Operand& o) {
          return kind == isa::OperandKind::Dst && o.value.file == RegFile::V && reads_per_lane(s);
        });
    if (i == SIZE_MAX) return;
    syntax::Program q = ex;
    q.stmts[i].operands[k].value.file = RegFile::S;
    q.stmts[i].operands[k].value.index = 0;
    add(name, "valid.form.uniform", q);
  };
  make_scalar("scalar-form-with-per-lane-source", [](const syntax::Stmt& s) {
    for (size_t j = 1; j < s.operands.size(); ++j) {
      const auto& v = s.operands[j].value;
      if (s.operands[j].type == OperandType::Value &&
          (v.file == RegFile::V ||
           (v.file == RegFile::Special && v.index == static_cast<uint32_t>(isa::Special::Lane))))
        return true;
    }
    return false;
  });
  make_scalar("scalar-load-with-per-lane-base", [](const syntax::Stmt& s) {
    for (const auto& m : s.operands)
      if (m.type == OperandType::Mem && m.value.file == RegFile::V) return true;
    return false;
  });
  // valid.mem.space: an undeclared buffer; slm without .slm.
  if (auto [i, k] =
          find_operand(ex, [](const syntax::Stmt&, isa::OperandKind,
                              const syntax::Operand& o) { return o.type == OperandType::Mem; });
      i != SIZE_MAX) {
    syntax::Program q = ex;
    q.stmts[i].operands[k].name = "undeclared";
    add("undeclared-buffer", "valid.mem.space", q);
  }
  if (ex.launch.slm.value && *ex.launch.slm.value > 0 &&
      find_operand(ex, [](const syntax::Stmt&, isa::OperandKind, const syntax::Operand& o) {
        return o.type == OperandType::Mem && o.name == "slm";
      }).first != SIZE_MAX) {
    syntax::Program q = ex;
    q.launch.slm.value.reset();
    add("slm-without-its-size", "valid.mem.space", q);
  }
  // valid.label.defined, valid.label.unique
  if (auto [i, k] =
          find_operand(ex, [](const syntax::Stmt&, isa::OperandKind,
                              const syntax::Operand& o) { return o.type == OperandType::Label; });
      i != SIZE_MAX) {
    syntax::Program q = ex;
    q.stmts[i].operands[k].name = "undefined_label";
    add("undefined-label", "valid.label.defined", q);
  }
  add("label-defined-twice", "valid.label.unique",
      insert(ex, first_instr(ex), {label("twice"), label("twice")}));
  // valid.flow.pop: pop, brk and lnext where the entry's stack is empty;
  // invert on a loop entry.
  const size_t entry = first_instr(ex);
  add("pop-with-nothing-open", "valid.flow.pop", insert(ex, entry, {instr(isa::Op::Pop)}));
  add("brk-outside-loops", "valid.flow.pop", insert(ex, entry, {instr(isa::Op::Brk, {pt()})}));
  add("lnext-outside-loops", "valid.flow.pop", insert(ex, entry, {instr(isa::Op::LNext)}));
  for (size_t i = 0; i < ex.stmts.size(); ++i)
    if (is_instr(ex.stmts[i], isa::Op::LPush) && ran[i]) {
      add("invert-on-a-loop-entry", "valid.flow.pop",
          insert(ex, first_instr(ex, i + 1), {instr(isa::Op::Invert)}));
      break;
    }
  for (size_t i = 0; i < ex.stmts.size(); ++i)
    if (is_instr(ex.stmts[i], isa::Op::Push) && ran[i]) {
      add("lnext-on-an-if-entry", "valid.flow.pop", insert(ex, i + 1, {instr(isa::Op::LNext)}));
      break;
    }
  // valid.flow.ret: ret in the entry context; ret with an entry left open.
  add("ret-in-main", "valid.flow.ret", insert(ex, entry, {instr(isa::Op::Ret)}));
  for (size_t i = 0; i < ex.stmts.size(); ++i)
    if (is_instr(ex.stmts[i], isa::Op::Ret) && ran[i]) {
      add("ret-with-an-open-push", "valid.flow.ret", insert(ex, i, {instr(isa::Op::Push, {pt()})}));
      break;
    }
  // valid.flow.end: main's final exit removed in a program without functions:
  // control runs past the end. (With functions it would run into f0, whose paths
  // may all end at an exit of their own: no rule need be broken.)
  {
    size_t last_exit = SIZE_MAX;
    for (size_t i = 0; i < ex.stmts.size(); ++i) {
      if (is_instr(ex.stmts[i], isa::Op::Exit)) last_exit = i;
      if (ex.stmts[i].kind == StmtKind::Label && ex.stmts[i].label == "f0") break;
    }
    bool functions = false;
    for (const auto& s : ex.stmts)
      functions = functions || (s.kind == StmtKind::Label && s.label == "f0");
    if (last_exit != SIZE_MAX && ran[last_exit] && !functions) {
      syntax::Program q = ex;
      q.stmts.erase(q.stmts.begin() + static_cast<std::ptrdiff_t>(last_exit));
      add("final-exit-removed", "valid.flow.end", q);
    }
  }
  // valid.flow.join: an unbalanced push before a loop's back edge.
  for (size_t i = 0; i < ex.stmts.size(); ++i) {
    const syntax::Stmt& s = ex.stmts[i];
    if (!is_instr(s, isa::Op::Cbr) || !ran[i]) continue;
    size_t target = SIZE_MAX;
    for (size_t j = 0; j < i; ++j)
      if (ex.stmts[j].kind == StmtKind::Label && ex.stmts[j].label == s.operands[1].name)
        target = j;
    if (target == SIZE_MAX) continue;  // a forward branch
    add("push-before-a-back-edge", "valid.flow.join",
        insert(ex, i, {instr(isa::Op::Push, {pt()})}));
    break;
  }
  // valid.struct.*: on the structured source.
  for (size_t i = 0; i < ast.stmts.size(); ++i)
    if (ast.stmts[i].kind == StmtKind::EndIf || ast.stmts[i].kind == StmtKind::EndLoop) {
      syntax::Program q = ast;
      q.stmts.erase(q.stmts.begin() + static_cast<std::ptrdiff_t>(i));
      add("closing-statement-removed", "valid.struct.nesting", q);
      break;
    }
  for (size_t i = 0; i < ast.stmts.size(); ++i)
    if (ast.stmts[i].kind == StmtKind::Else) {
      add("second-else", "valid.struct.else", insert(ast, i + 1, {keyword(StmtKind::Else)}));
      break;
    }
  for (size_t i = 0; i < ast.stmts.size(); ++i)
    if (ast.stmts[i].kind == StmtKind::Loop) {
      add("else-in-a-loop", "valid.struct.else", insert(ast, i + 1, {keyword(StmtKind::Else)}));
      break;
    }
  {
    syntax::Stmt brk = keyword(StmtKind::Break);
    add("break-outside-loops", "valid.struct.loopctl", insert(ast, first_instr(ast), {brk}));
  }
  // trap.valid.mode: a handler-only instruction at the entry (user code), and a
  // user-only one in a handler appended after all user code (`.handler` at a
  // label of its own, then the instruction, then `tret`).
  if (!ex.handler.value && ex.handler_entries.empty()) {
    syntax::Operand zero;
    zero.value.file = RegFile::Imm;
    for (auto [op, name] : {std::pair{isa::Op::TRet, "tret-in-user-code"},
                            std::pair{isa::Op::TClear, "tclear-in-user-code"}})
      add(name, "trap.valid.mode", insert(ex, entry, {instr(op)}));
    for (auto [op, name] : {std::pair{isa::Op::VCall, "vcall-in-handler-code"},
                            std::pair{isa::Op::Sys, "sys-in-handler-code"},
                            std::pair{isa::Op::Exit, "exit-in-handler-code"}}) {
      syntax::Program q = ex;
      q.handler.value = "mutant_handler";
      q.stmts.push_back(label("mutant_handler"));
      q.stmts.push_back(op == isa::Op::Exit ? instr(op) : instr(op, {zero}));
      q.stmts.push_back(instr(isa::Op::TRet));
      add(name, "trap.valid.mode", q);
    }
  }
  return out;
}

Check validator_oracle(const Program& p, const std::string& text, OracleContext&) {
  Check c;
  auto r = host::load(text);
  if (!r.loaded)
    return failing("the generated program does not validate:\n" + r.diags.format("generated"));
  c.expected = runners::to_model(Machine(r.loaded->program).run());
  if (auto intended = intended_status(p); intended && *intended != c.expected->status)
    return failing("the program ends " + c.expected->status + "; the generator meant it to end " +
                   *intended);
  for (const Mutation& m : mutations(text)) {
    ++c.counts["mutation:" + m.name];
    auto got = host::load(m.text);
    std::string wrong;
    if (got.loaded) {
      wrong = "the mutation " + m.name + " breaks " + m.clause + " but the program is accepted";
    } else if (const syntax::Diagnostic& first = got.diags.first(); first.clause != m.clause) {
      wrong = "the mutation " + m.name + " breaks " + m.clause + " but the first error names " +
              (first.clause.empty() ? std::string("no clause") : first.clause) + ": " +
              syntax::format_diag("mutated", first);
    }
    if (wrong.empty()) continue;
    // oracle.regress: the regression test is the mutated program, to be rejected.
    Check f = failing(wrong);
    f.expected = model::Outcome{};
    f.expected->status = "rejected";
    f.regression_text = m.text;
    return f;
  }
  return c;
}

}  // namespace simt::gen
