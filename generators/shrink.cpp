#include "shrink.h"

#include <algorithm>
#include <chrono>

#include "exec/machine.h"
#include "host/host.h"

namespace simt::gen {

namespace {

// A path to a statement: indices into nested bodies. Body 0 is `body`, 1 is `other`.
struct Where {
  int function = -1;                          // -1: main
  std::vector<std::pair<size_t, int>> steps;  // (index in the enclosing list, which body of it)
  size_t index = 0;                           // index in the innermost list
};

std::vector<Stmt>& list_at(Program& p, const Where& w) {
  std::vector<Stmt>* l = w.function < 0 ? &p.main : &p.functions[static_cast<size_t>(w.function)];
  for (const auto& [i, which] : w.steps)
    l = which == 0 ? &(*l)[i].body : which == 1 ? &(*l)[i].other : &(*l)[i].again;
  return *l;
}

void collect(const std::vector<Stmt>& l, Where base, std::vector<Where>& out) {
  for (size_t i = 0; i < l.size(); ++i) {
    Where w = base;
    w.index = i;
    out.push_back(w);
    for (int which : {0, 1, 2}) {
      const auto& child = which == 0 ? l[i].body : which == 1 ? l[i].other : l[i].again;
      if (child.empty()) continue;
      Where inner = base;
      inner.steps.push_back({i, which});
      collect(child, inner, out);
    }
  }
}

std::vector<Where> all_statements(const Program& p) {
  std::vector<Where> out;
  collect(p.main, Where{}, out);
  for (size_t f = 0; f < p.functions.size(); ++f) {
    Where w;
    w.function = static_cast<int>(f);
    collect(p.functions[f], w, out);
  }
  return out;
}

// Operands shrink towards 0, then 1, then %lane: each step lowers this rank, so
// shrinking cannot cycle.
int rank(const Operand& o) {
  if (o.k == Operand::K::Imm && o.v == 0) return 0;
  if (o.k == Operand::K::Imm && o.v == 1) return 1;
  if (o.k == Operand::K::Lane) return 2;
  return 3;
}

int op_rank(const std::string& op) {
  return op == "mov" ? 0 : op == "add" ? 1 : 2;
}

// Whether a body has a break or continue that acts on its enclosing loop (not
// one inside a nested loop).
bool has_loop_control(const std::vector<Stmt>& b) {
  for (const auto& s : b) {
    if (s.kind == Kind::Break || s.kind == Kind::Continue) return true;
    if (s.kind != Kind::Loop &&
        (has_loop_control(s.body) || has_loop_control(s.other) || has_loop_control(s.again)))
      return true;
  }
  return false;
}

// A statement with its shared temporaries replaced by data registers of the same
// numbers (nested statements too).
void privatise(Stmt& s) {
  if (s.kind == Kind::SharedAlu) s.kind = Kind::Alu, s.dst = s.slot;
  for (Operand* o : {&s.a, &s.b, &s.cond.a, &s.cond.b})
    if (o->k == Operand::K::Shared) o->k = Operand::K::Reg;
  for (auto* b : {&s.body, &s.other, &s.again})
    for (Stmt& t : *b) privatise(t);
}

void resize_input(Program& p) {
  if (!p.input.empty()) p.input.resize(p.threads(), 0);
}

// The steps of p's launch on the reference, without its preemption points (they
// change no step, preempt.steps); nothing if it does not load.
std::optional<uint64_t> run_steps(const Program& p) {
  host::LoadOptions opt;
  for (const auto& h : p.host)
    if (h.kind != syntax::HostKind::Preempt) opt.host.push_back(h);
  Program q = p;
  q.host = opt.host;
  auto r = host::load(print(q), opt);
  if (!r.loaded) return std::nullopt;
  return exec::Machine(r.loaded->program).run().steps;
}

}  // namespace

std::vector<Program> simplifications(const Program& p) {
  std::vector<Program> out;
  auto with = [&](auto&& edit) {
    Program q = p;
    edit(q);
    if (!(q == p)) out.push_back(std::move(q));
  };
  // Launch configuration: fewer warps and lanes, default policy and depth.
  if (p.workgroups > 1)
    with([](Program& q) {
      q.workgroups = 1;
      resize_input(q);
    });
  if (p.warps > 1)
    with([](Program& q) {
      q.warps = 1;
      resize_input(q);
    });
  if (p.warps > 2)
    with([](Program& q) {
      q.warps = 2;
      resize_input(q);
    });
  for (uint32_t w : {1u, 2u, 4u, 8u, 16u, 32u})
    if (w < p.wave)
      with([w](Program& q) {
        q.wave = w;
        resize_input(q);
      });
  // A smaller wave with as many parts (wave.parts): the SIMD width shrinks with it.
  if (p.simd)
    for (uint32_t w : {2u, 4u, 8u, 16u, 32u})
      if (w < p.wave && w >= p.wave / p.simd)
        with([w](Program& q) {
          q.simd = w / (q.wave / q.simd);
          q.wave = w;
          resize_input(q);
        });
  if (p.policy != "round_robin")
    with([](Program& q) {
      q.policy = "round_robin";
      q.seed = 0;
    });
  if (p.mask_depth) with([](Program& q) { q.mask_depth = 0; });
  if (p.call_depth) with([](Program& q) { q.call_depth = 0; });
  if (p.simd) with([](Program& q) { q.simd = 0; });
  if (p.vshared) with([](Program& q) { q.vshared = false; });
  if (p.cores > 1) with([](Program& q) { q.cores = 1; });
  // The trap chapter's parts: no handler, the default stack, fewer and plainer
  // host actions (oracle.shrink).
  // Without the handler a system call ends the launch: in a program of several
  // warps the schedule would decide which warp's does, so it keeps its handler.
  if (p.handler != Program::Handler::None && p.handler != Program::Handler::Custom &&
      (p.warps * p.workgroups == 1 || !uses(p, Kind::Sys)))
    with([](Program& q) { q.handler = Program::Handler::None; });
  // A smaller handler (oracle.shrink): the recorder becomes the marking handler,
  // and either becomes one that only returns.
  if (p.handler == Program::Handler::Record || p.handler == Program::Handler::MarkPc)
    with([](Program& q) { q.handler = Program::Handler::Mark; });
  if (p.handler == Program::Handler::Record)
    with([](Program& q) { q.handler = Program::Handler::MarkPc; });
  if (p.handler == Program::Handler::Record || p.handler == Program::Handler::Mark ||
      p.handler == Program::Handler::MarkPc)
    with([](Program& q) { q.handler = Program::Handler::Return; });
  // oracle.model.hostprog: a logging handler that returns, one that only counts,
  // one with fewer fields, one that skips nothing, fewer vector tables and
  // entries, bind_tba of log_ret.
  if (p.handler == Program::Handler::LogPause || p.handler == Program::Handler::LogFault)
    with([](Program& q) { q.handler = Program::Handler::LogReturn; });
  if (!log_labels(p).empty()) {
    if (p.log_fields) with([](Program& q) { q.log_fields = 0; });
    for (uint32_t f = 0; f < kLogFields; ++f)
      if ((p.log_fields >> f) & 1) with([f](Program& q) { q.log_fields &= ~(1u << f); });
    if (p.log_skip) with([](Program& q) { q.log_skip = false; });
    if (p.log_count) with([](Program& q) { q.log_count = false; });
  }
  if (p.log_barrier) with([](Program& q) { q.log_barrier = false; });
  for (size_t t = p.vtables.size(); t-- > 0;) {
    with([t](Program& q) { q.vtables.erase(q.vtables.begin() + static_cast<std::ptrdiff_t>(t)); });
    for (size_t e = p.vtables[t].size(); e-- > 1;)
      with([t, e](Program& q) {
        q.vtables[t].erase(q.vtables[t].begin() + static_cast<std::ptrdiff_t>(e));
      });
  }
  if (p.stack) with([](Program& q) { q.stack = 0; });
  for (size_t i = p.host.size(); i-- > 0;)
    with([i](Program& q) { q.host.erase(q.host.begin() + static_cast<std::ptrdiff_t>(i)); });
  for (size_t i = 0; i < p.host.size(); ++i) {
    with([i](Program& q) { q.host[i].core = syntax::kAllCores; });
    with([i](Program& q) { q.host[i].code = 0; });
    // Earlier, keeping the steps in order.
    with([i](Program& q) { q.host[i].step = i ? q.host[i - 1].step : 0; });
    with([i](Program& q) {
      if (q.host[i].kind == syntax::HostKind::BindTba) q.host[i].name = "log_ret";
    });
    // oracle.shrink: a preemption by flow A instead of B, without its intruder.
    if (p.host[i].kind == syntax::HostKind::Preempt && !p.host[i].intruder.empty())
      with([i](Program& q) { q.host[i].intruder.clear(); });
    if (p.host[i].kind == syntax::HostKind::Preempt && p.host[i].flow == syntax::PreemptFlow::B)
      with([i](Program& q) {
        q.host[i].flow = syntax::PreemptFlow::A;
        q.host[i].intruder.clear();
      });
    // Halfway to the action before it (moving earlier in smaller steps).
    const uint64_t before = i ? p.host[i - 1].step : 0;
    if (p.host[i].step > before + 1)
      with([i, before](Program& q) { q.host[i].step = before + (q.host[i].step - before) / 2; });
  }
  // oracle.shrink: removing code that runs before a preemption point moves the
  // boundary it needs earlier. So for a program with preemption points each
  // removal is also tried with every host action moved earlier by the steps the
  // removal saves (on the reference), keeping them in order.
  const std::optional<uint64_t> had = preempts(p) ? run_steps(p) : std::nullopt;
  const uint64_t steps = had.value_or(0);
  auto removing = [&](auto&& edit) {
    const size_t before = out.size();
    with(edit);
    if (!had || out.size() == before) return;
    Program q = out.back();
    const uint64_t now = run_steps(q).value_or(steps);
    if (now >= steps) return;
    const uint64_t saved = steps - now;
    for (auto& h : q.host) h.step = h.step > saved ? h.step - saved : 0;
    if (!(q == out.back())) out.push_back(std::move(q));
  };
  // Whole functions, then statements (outermost first), then hoisting bodies.
  for (size_t f = p.functions.size(); f-- > 0;)
    removing([f](Program& q) {
      q.functions.erase(q.functions.begin() + static_cast<std::ptrdiff_t>(f));
    });
  auto stmts = all_statements(p);
  for (const auto& w : stmts)
    removing([&](Program& q) {
      auto& l = list_at(q, w);
      l.erase(l.begin() + static_cast<std::ptrdiff_t>(w.index));
    });
  // which: 0 the body, 1 the else side, 2 the raw if's again side, 3 both sides of
  // an if with an else one after the other (what matters may be on each side).
  for (const auto& w : stmts)
    for (int which : {0, 1, 2, 3})
      with([&](Program& q) {
        auto& l = list_at(q, w);
        Stmt s = l[w.index];
        if (s.body.empty() && s.other.empty() && s.again.empty()) return;
        if ((which == 1 || which == 3) && !s.has_else) return;
        std::vector<Stmt> inner = which == 0 ? s.body : which == 1 ? s.other : s.again;
        if (which == 3) {
          inner = s.body;
          inner.insert(inner.end(), s.other.begin(), s.other.end());
        }
        l.erase(l.begin() + static_cast<std::ptrdiff_t>(w.index));
        l.insert(l.begin() + static_cast<std::ptrdiff_t>(w.index), inner.begin(), inner.end());
      });
  // oracle.shrink: a region unwrapped into normal code, its shared temporaries
  // becoming the data registers of their numbers (a shared temporary outside a
  // region is outside oracle.model.regions).
  for (const auto& w : stmts)
    with([&](Program& q) {
      auto& l = list_at(q, w);
      if (l[w.index].kind != Kind::Region) return;
      std::vector<Stmt> inner = l[w.index].body;
      for (Stmt& s : inner) privatise(s);
      l.erase(l.begin() + static_cast<std::ptrdiff_t>(w.index));
      l.insert(l.begin() + static_cast<std::ptrdiff_t>(w.index), inner.begin(), inner.end());
    });
  // A loop becomes an if that is never taken: its body still runs once with no
  // active lane (branch.struct.empty), in fewer instructions. Memory and
  // cross-lane statements become plainer kinds.
  for (const auto& w : stmts)
    with([&](Program& q) {
      Stmt& s = list_at(q, w)[w.index];
      if (s.kind != Kind::Loop) return;
      s.kind = Kind::If;
      s.cond = Cond{};
      s.cond.cmp = "cmp.lt";
      s.cond.a = s.cond.b = Operand{Operand::K::Imm, 0};
      s.has_else = false;
      // break/continue have no loop left: drop them from this level.
      std::erase_if(
          s.body, [](const Stmt& b) { return b.kind == Kind::Break || b.kind == Kind::Continue; });
    });
  // A loop without a break or continue of its own becomes a counted loop (no mask
  // entry, no guard: fewer instructions); a break or continue becomes an exit of
  // the same lanes, which takes them out of the rest of the loop too.
  for (const auto& w : stmts)
    with([&](Program& q) {
      Stmt& s = list_at(q, w)[w.index];
      if (s.kind != Kind::Loop || s.limit_reg || has_loop_control(s.body)) return;
      s.kind = Kind::CountedLoop;
      s.limit = std::clamp(s.limit, 1, 4);
    });
  for (const auto& w : stmts)
    with([&](Program& q) {
      Stmt& s = list_at(q, w)[w.index];
      if (s.kind != Kind::Break && s.kind != Kind::Continue) return;
      s.kind = Kind::Exit;
      s.raw = false;
    });
  // A statement that becomes `mov dst, a` keeps its operand a, or takes 1: a
  // load or cross-lane result often matters only for being non-zero.
  for (const auto& w : stmts)
    for (bool set_one : {false, true})
      with([&](Program& q) {
        Stmt& s = list_at(q, w)[w.index];
        const Kind before = s.kind;
        switch (s.kind) {
          case Kind::SharedStore:
            s.kind = Kind::StoreScratch, s.slot = 0;
            break;
          case Kind::SharedLoad:
          case Kind::Exchange:
          case Kind::Atomic:
            s.kind = Kind::LoadScratch, s.slot = 0;
            break;
          case Kind::Shfl:
          case Kind::ShflXor:
          case Kind::ReadLane:
          case Kind::Ballot:
          case Kind::Vote:
          case Kind::LoadInput:
          case Kind::LoadScratch:
          case Kind::Select:
          case Kind::ScalarLoad:
          case Kind::Trap:
            s.kind = Kind::Alu, s.op = "mov";
            break;
          case Kind::ScalarAlu:  // the same operation in vector form
            s.kind = Kind::Alu;
            break;
          case Kind::Sys:
          case Kind::VCall:
            s.kind = Kind::Nop;
            break;
          case Kind::SharedAlu:  // a data register in place of the shared temporary
            s.kind = Kind::Alu, s.dst = s.slot;
            break;
          default:
            break;
        }
        if (set_one && s.kind == Kind::Alu && s.op == "mov" && before != Kind::Alu)
          s.a = Operand{Operand::K::Imm, 1};
      });
  // Smaller pieces of statements.
  const Operand zero{Operand::K::Imm, 0}, one{Operand::K::Imm, 1};
  for (const auto& w : stmts) {
    auto edit = [&](auto&& f) { with([&](Program& q) { f(list_at(q, w)[w.index]); }); };
    edit([](Stmt& s) { s.has_else = false, s.other.clear(), s.again.clear(); });
    edit([](Stmt& s) { s.again.clear(); });
    edit([](Stmt& s) { s.limit_reg = false; });
    edit([](Stmt& s) { s.limit = std::min(s.limit, 1); });
    edit([](Stmt& s) { s.cond.negate = false; });
    // Towards fewer instructions: a reused predicate needs no compare, a raw exit no if.
    edit([](Stmt& s) { s.cond.reuse = true; });
    edit([](Stmt& s) { s.cond.pred = 0; });
    for (const Operand& o : {zero, one, Operand{Operand::K::Lane, 0}}) {
      edit([&](Stmt& s) {
        if (rank(o) < rank(s.a)) s.a = o;
      });
      edit([&](Stmt& s) {
        if (rank(o) < rank(s.b)) s.b = o;
      });
      edit([&](Stmt& s) {
        if (rank(o) < rank(s.cond.a)) s.cond.a = o;
      });
      edit([&](Stmt& s) {
        if (rank(o) < rank(s.cond.b)) s.cond.b = o;
      });
    }
    edit([](Stmt& s) { s.raw = s.kind == Kind::Exit; });
    edit([](Stmt& s) { s.width = Width::W32, s.offset = 0; });
    edit([](Stmt& s) { s.neg = 0; });
    edit([](Stmt& s) { s.accumulate = false; });
    edit([](Stmt& s) {
      if (s.kind == Kind::ExecNarrow) s.mask = ~0ull;
    });
    edit([](Stmt& s) {
      for (Operand* o : {&s.a, &s.b, &s.cond.a, &s.cond.b}) o->notation = Notation::Dec;
    });
    edit([](Stmt& s) { s.dst = 0; });
    edit([](Stmt& s) { s.slot = 0; });
    edit([](Stmt& s) {
      if (s.kind == Kind::Alu && op_rank(s.op) > 1) s.op = "add";
    });
    edit([](Stmt& s) {
      if (s.kind == Kind::Alu && op_rank(s.op) > 0) s.op = "mov";
    });
  }
  // Fewer data registers, plainer input.
  for (int n = 1; n < p.nregs; ++n) with([n](Program& q) { q.nregs = n; });
  if (p.budget) with([](Program& q) { q.budget = 0; });
  if (p.line_end != Program::LineEnd::LF)
    with([](Program& q) { q.line_end = Program::LineEnd::LF; });
  if (p.input_form != Program::InputForm::List)
    with([](Program& q) { q.input_form = Program::InputForm::List; });
  with([](Program& q) { q.input.clear(); });
  with([](Program& q) { std::fill(q.input.begin(), q.input.end(), 0u); });
  // Last, when nothing above helps: one warp in all, with one statement's constant
  // operand made %lane. What told the warps apart (their ids in addresses, say)
  // can often be had from the lanes of one warp instead; the operand's rank goes
  // up, but the launch gets smaller, which comes first, so shrinking cannot cycle.
  if (p.warps > 1 || p.workgroups > 1)
    for (const auto& w : stmts)
      for (Operand Stmt::*o : {&Stmt::a, &Stmt::b})
        with([&](Program& q) {
          Stmt& s = list_at(q, w)[w.index];
          if (rank(s.*o) >= 2) return;
          s.*o = Operand{Operand::K::Lane, 0};
          q.warps = 1;
          q.workgroups = 1;
          resize_input(q);
        });
  return out;
}

size_t instruction_count(const Program& p) {
  // oracle.shrink: the application's instructions; the system routine of a
  // program with preemption points is library code, not counted.
  auto r = host::load(print(p));
  if (!r.loaded) return 0;
  const size_t n = r.loaded->program->size(),
               routine = preempts(p) ? sys_routine_instructions() : 0;
  return n > routine ? n - routine : 0;
}

Program shrink(const Program& p, const FailsFn& fails, size_t max_attempts, ShrinkStats* stats,
               double max_seconds) {
  using clock = std::chrono::steady_clock;
  const auto deadline =
      clock::now() + std::chrono::duration_cast<clock::duration>(
                         std::chrono::duration<double>(max_seconds > 0 ? max_seconds : 0));
  Program cur = p;
  ShrinkStats st;
  bool progress = true;
  while (progress && st.attempts < max_attempts && !st.out_of_time) {
    progress = false;
    for (auto& cand : simplifications(cur)) {
      if (st.attempts >= max_attempts) break;
      if (max_seconds > 0 && clock::now() >= deadline) {  // oracle.shrink: time budget
        st.out_of_time = true;
        break;
      }
      // Only candidates that are still valid programs count (e.g. hoisting a
      // loop body can leave a break outside any loop).
      const std::string text = print(cand);
      host::LoadOptions opt;
      opt.host = cand.host;  // trap.host.errors: e.g. a core index past the cores
      if (!host::load(text, opt).loaded) continue;
      ++st.attempts;
      if (fails(cand, text)) {
        cur = std::move(cand);
        ++st.accepted;
        progress = true;
        break;
      }
    }
  }
  if (stats) *stats = st;
  return cur;
}

}  // namespace simt::gen
