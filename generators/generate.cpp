#include "generate.h"

#include <algorithm>

#include "exec/config.h"
#include "isa/isa.h"
#include "pools.h"

namespace simt::gen {

namespace {

using rc::Gen;
namespace g = rc::gen;

// What a statement may be, where it is generated.
struct Ctx {
  Options o;
  int nregs = 1;
  bool in_loop = false;  // a structured loop of this context encloses: break/continue allowed
  bool bar_ok = true;    // every warp passes here exactly once: barriers and exchanges allowed
  int fn = kMain;        // the context: main or a function index
  int nfunctions = 0;
  bool input = false;
  bool traps = false;       // trap statements allowed (single-warp programs)
  bool recurse_ok = false;  // a function body outside loops and exec-narrowing regions
  int depth = 0;            // nesting of if/loop
  int counted = 0;          // nesting of counted loops
  int narrow = 0;           // nesting of exec-narrowing regions
  uint32_t wave = 8;
  // oracle.model.regions: inside a region's body; within the model (strict);
  // how many shared temporaries (v64, v65, ...) the region's top level has written.
  bool region = false;
  bool strict = true;
  int shared_ready = 0;
  // oracle.model.hostprog: a host program's statement (the host model's kinds).
  bool host = false;
};

// Whether operands may be %exec (and s5): lanes communicate, and a strict
// region's body reads neither (wave.modesel.safe).
bool exec_operands(const Ctx& c) {
  return c.o.communicate && !(c.region && c.strict);
}

// Uniform special registers (state.special.*); %exec and its halves only where
// lanes may communicate (they read the other lanes' activity).
std::vector<int32_t> uniform_specials(bool with_exec) {
  std::vector<int32_t> out;
  for (const auto& s : isa::specials()) {
    if (s.per_lane) continue;
    const bool exec =
        s.id == isa::Special::Exec || s.id == isa::Special::ExecLo || s.id == isa::Special::ExecHi;
    if (exec && !with_exec) continue;
    // The trap chapter's registers read 0 outside a handler; generated programs
    // have no handler yet.
    if (s.clause.starts_with("trap.")) continue;
    out.push_back(static_cast<int32_t>(s.id));
  }
  return out;
}

Gen<Notation> notation() {
  return g::weightedElement<Notation>({{6, Notation::Dec},
                                       {2, Notation::Hex},
                                       {1, Notation::HexUpper},
                                       {1, Notation::Bin},
                                       {1, Notation::NegHex},
                                       {1, Notation::Padded}});
}

Gen<Operand> immediate() {
  return g::exec([] {
    Operand o;
    o.k = Operand::K::Imm;
    o.v =
        *g::weightedOneOf<int32_t>({{4, g::inRange<int32_t>(-8, 9)}, {1, g::arbitrary<int32_t>()}});
    o.notation = *notation();
    return o;
  });
}

Gen<Operand> special(const Ctx& c) {
  return g::map(g::elementOf(uniform_specials(exec_operands(c))), [](int32_t v) {
    return Operand{Operand::K::Special, v, Notation::Dec};
  });
}

Gen<Operand> operand(const Ctx& c) {
  return g::weightedOneOf<Operand>({
      {5, g::map(g::inRange(0, c.nregs),
                 [](int r) {
                   return Operand{Operand::K::Reg, r, Notation::Dec};
                 })},
      {3, immediate()},
      {c.o.shape_free ? 0u : 2u, g::just(Operand{Operand::K::Lane, 0, Notation::Dec})},
      {c.o.shape_free ? 0u : 1u, special(c)},
      {exec_operands(c) ? 1u : 0u, g::just(Operand{Operand::K::Scalar, 0, Notation::Dec})},
      // oracle.model.regions: a shared temporary the region has written.
      {c.shared_ready > 0 ? 2u : 0u, g::map(g::inRange(0, std::max(1, c.shared_ready)),
                                            [](int t) {
                                              return Operand{Operand::K::Shared, t, Notation::Dec};
                                            })},
  });
}

// Operands of scalar-form instructions: uniform only (valid.form.uniform).
Gen<Operand> uniform_operand(const Ctx& c) {
  return g::weightedOneOf<Operand>({
      {4, immediate()},
      {c.o.shape_free ? 0u : 2u, special(c)},
      {c.region && c.strict ? 0u : 2u, g::just(Operand{Operand::K::Scalar, 0, Notation::Dec})},
  });
}

Gen<Cond> condition(const Ctx& c) {
  return g::exec([c] {
    Cond k;
    k.reuse = *g::weightedElement<bool>({{1, true}, {5, false}});
    k.cmp = *g::elementOf(pools::mnemonics(pools::Id::Compare));
    k.a = *operand(c);
    k.b = *operand(c);
    k.pred = *g::inRange(0, 4);
    k.negate = *g::weightedElement<bool>({{1, true}, {3, false}});
    return k;
  });
}

Gen<Width> width() {
  return g::weightedElement<Width>(
      {{4, Width::W32}, {1, Width::U8}, {1, Width::S8}, {1, Width::U16}, {1, Width::S16}});
}

// A byte offset inside a word, aligned to the access size (mem.check).
Gen<int> aligned_offset(Width w) {
  const int size = static_cast<int>(width_bytes(w));
  return g::map(g::inRange(0, 4 / size), [size](int i) { return i * size; });
}

Gen<std::vector<Stmt>> body(Ctx c, int size);

// One kind drawn by weight (a weight of 0 rules a kind out; all 0 gives Alu).
Kind pick_weighted(const std::vector<std::pair<uint32_t, Kind>>& kinds) {
  uint32_t total = 0;
  for (const auto& k : kinds) total += k.first;
  uint32_t r = *g::inRange<uint32_t>(0, total);
  for (const auto& k : kinds) {
    if (r < k.first) return k.second;
    r -= k.first;
  }
  return Kind::Alu;
}

// A statement's kind, by weight among those allowed in context c. The choice
// shrinks towards the first kinds (plain ALU operations).
Kind choose_kind(const Ctx& c, int size) {
  const Options& o = c.o;
  const bool nest = c.depth < std::min(kMaxDepth - 1, 1 + size / 25);
  const bool callable = o.calls && (c.fn == kMain ? c.nfunctions > 0 : c.fn + 1 < c.nfunctions);
  std::vector<std::pair<uint32_t, Kind>> kinds = {
      {10, Kind::Alu},
      {3, Kind::Select},
      {c.input ? 2u : 0u, Kind::LoadInput},
      {3, Kind::StoreScratch},
      {3, Kind::LoadScratch},
      {nest ? 5u : 0u, Kind::If},
      {nest ? 3u : 0u, Kind::Loop},
      {c.in_loop ? 2u : 0u, Kind::Break},
      {c.in_loop ? 2u : 0u, Kind::Continue},
      {o.exits && (c.depth > 0 || c.bar_ok) ? 1u : 0u, Kind::Exit},
      {callable ? 2u : 0u, Kind::Call},
      {2, Kind::PredOp},
      {1, Kind::Nop},
      {o.raw && nest ? 1u : 0u, Kind::Jump},
  };
  if (o.communicate) {
    kinds.insert(kinds.end(), {{2, Kind::Shfl},
                               {2, Kind::ShflXor},
                               {2, Kind::ReadLane},
                               {1, Kind::Ballot},
                               {1, Kind::Vote},
                               {1, Kind::SharedStore},
                               {1, Kind::SharedLoad},
                               {o.atomic_weight, Kind::Atomic},
                               {c.bar_ok ? 2u : 0u, Kind::Exchange},
                               {c.bar_ok ? 1u : 0u, Kind::Barrier},
                               {3, Kind::ScalarAlu},
                               {1, Kind::ScalarLoad},
                               {o.raw && nest ? 2u : 0u, Kind::Skip},
                               {o.raw && nest && c.counted < 2 ? 1u : 0u, Kind::CountedLoop},
                               // Recursion is guarded with cbr and jmp (program.cpp).
                               {c.recurse_ok && o.raw ? 2u : 0u, Kind::Recurse},
                               {nest && c.narrow < 2 ? 1u : 0u, Kind::ExecNarrow},
                               {c.traps ? o.trap_weight : 0u, Kind::Trap}});
  }
  return pick_weighted(kinds);
}

// A statement's kind in a host program (oracle.model.hostprog): code without a
// mask stack or a backward branch (so the host model runs it), system calls,
// vector calls, trap statements (in programs of several warps too: the model
// follows the schedule), barriers and exchanges where every warp passes, calls,
// exec narrowing and skips with exits of their active lanes inside, and main's
// exec cleared.
Kind choose_host_kind(const Ctx& c) {
  const bool callable = c.fn == kMain ? c.nfunctions > 0 : c.fn + 1 < c.nfunctions;
  const bool nest = c.depth < 2;
  return pick_weighted({
      {8, Kind::Alu},
      {2, Kind::Select},
      {c.input ? 1u : 0u, Kind::LoadInput},
      {1, Kind::StoreScratch},
      {1, Kind::LoadScratch},
      {1, Kind::PredOp},
      {1, Kind::Nop},
      {2, Kind::ScalarAlu},
      {1, Kind::ScalarLoad},
      {c.bar_ok ? 3u : 0u, Kind::Barrier},
      {c.bar_ok ? 1u : 0u, Kind::Exchange},
      {4, Kind::Sys},
      {4, Kind::VCall},
      {callable ? 2u : 0u, Kind::Call},
      {2, Kind::Trap},
      {nest && c.narrow < 2 ? 1u : 0u, Kind::ExecNarrow},
      {nest ? 2u : 0u, Kind::Skip},
      {nest ? 1u : 0u, Kind::Jump},
      {c.depth > 0 ? 4u : 0u, Kind::Exit},
      {c.fn == kMain && c.depth == 0 ? 1u : 0u, Kind::ExecClear},
  });
}

// A statement's kind inside a region's body (oracle.model.regions): lane-local
// statements, scalar ALU statements and writes of the shared temporaries; beyond
// the model (not strict) also statements whose effect depends on the mode.
// Never barriers, calls, recursion, warp-wide atomics or system calls
// (wave.valid.bar, wave.valid.branch, wave.valid.watom).
Kind choose_region_kind(const Ctx& c, int size) {
  const Options& o = c.o;
  const bool nest = c.depth < std::min(kMaxDepth - 1, 1 + size / 25);
  std::vector<std::pair<uint32_t, Kind>> kinds = {
      {10, Kind::Alu},
      {3, Kind::Select},
      {c.input ? 2u : 0u, Kind::LoadInput},
      {3, Kind::StoreScratch},
      {3, Kind::LoadScratch},
      {nest ? 5u : 0u, Kind::If},
      {nest ? 3u : 0u, Kind::Loop},
      {c.in_loop ? 2u : 0u, Kind::Break},
      {c.in_loop ? 2u : 0u, Kind::Continue},
      {o.exits ? 1u : 0u, Kind::Exit},
      {2, Kind::PredOp},
      {1, Kind::Nop},
      {o.raw && nest ? 1u : 0u, Kind::Jump},
      // Scalar statements where lanes may communicate, or in the model (which has
      // them: wave.scalar). A scalar load reads a word of `in`, or (without input)
      // of `out`, which no region stores to.
      {o.communicate || c.strict ? 2u : 0u, Kind::ScalarAlu},
      {(o.communicate || c.strict) && (c.input || !(o.shape_free || o.modesel_safe)) ? 1u : 0u,
       Kind::ScalarLoad},
      {c.shared_ready > 0 ? 3u : 0u, Kind::SharedAlu},
  };
  if (!c.strict && o.communicate) {
    kinds.insert(kinds.end(), {{2, Kind::Shfl},
                               {2, Kind::ShflXor},
                               {2, Kind::ReadLane},
                               {1, Kind::Ballot},
                               {1, Kind::Vote},
                               {1, Kind::SharedStore},
                               {1, Kind::SharedLoad},
                               {o.atomic_weight, Kind::Atomic},
                               {o.raw && nest ? 2u : 0u, Kind::Skip},
                               {o.raw && nest && c.counted < 2 ? 1u : 0u, Kind::CountedLoop},
                               {nest && c.narrow < 2 ? 1u : 0u, Kind::ExecNarrow},
                               {c.traps ? o.trap_weight : 0u, Kind::Trap}});
  }
  return pick_weighted(kinds);
}

Gen<Stmt> statement(Ctx c, int size) {
  return g::exec([c, size] {
    Stmt s;
    s.kind = c.host     ? choose_host_kind(c)
             : c.region ? choose_region_kind(c, size)
                        : choose_kind(c, size);
    // oracle.model.regions: a strict region's scalar results go to s13.
    s.region_scalar =
        c.region && c.strict && (s.kind == Kind::ScalarAlu || s.kind == Kind::ScalarLoad);
    s.dst = *g::inRange(0, c.nregs);
    s.a = *operand(c);
    s.b = *operand(c);
    s.raw = c.o.raw && *g::weightedElement<bool>({{3, false}, {1, true}});
    // Bodies of nested statements.
    Ctx inner = c;
    inner.depth += 1;
    switch (s.kind) {
      case Kind::Alu:
        s.op = *g::elementOf(pools::mnemonics(pools::Id::Alu));
        break;
      case Kind::SharedAlu:  // a shared temporary the region has written
        s.op = *g::elementOf(pools::mnemonics(pools::Id::Alu));
        s.slot = *g::inRange(0, std::max(1, c.shared_ready));
        break;
      case Kind::Select:
      case Kind::Break:
      case Kind::Continue:
        s.cond = *condition(c);
        break;
      case Kind::Exit:
        s.cond = *condition(c);
        if (c.host) {  // the active lanes: no branch (oracle.model.hostprog)
          s.raw = true;
          break;
        }
        // Where every warp passes (bar_ok), sometimes a whole warp retires: a
        // barrier after it cannot complete (bar.exited, exec.status.deadlock).
        if (c.bar_ok && !c.o.shape_free &&
            (c.depth == 0 || *g::weightedElement<bool>({{3, false}, {1, true}}))) {
          s.cond.reuse = false;
          s.cond.cmp = "cmp.eq";
          s.cond.a =
              Operand{Operand::K::Special, static_cast<int32_t>(isa::Special::Warp), Notation::Dec};
          s.cond.b = Operand{Operand::K::Imm, *g::inRange(0, 4), Notation::Dec};
          s.cond.negate = false;
          s.raw = false;
        }
        break;
      case Kind::Ballot:
        s.cond = *condition(c);
        s.op = *g::elementOf(pools::mnemonics(pools::Id::Ballot));
        break;
      case Kind::Vote:
        s.cond = *condition(c);
        s.op = *g::elementOf(pools::mnemonics(pools::Id::Vote));
        break;
      case Kind::StoreScratch:
      case Kind::LoadScratch:
        s.slot = *g::inRange(0, kScratchSlots);
        s.width = *width();
        s.offset = *aligned_offset(s.width);
        s.neg = *g::weightedElement<int>({{3, 0}, {1, *g::inRange(1, 65)}});
        break;
      case Kind::Call:
        s.slot = *g::inRange(0, kMaxFunctions);
        break;
      case Kind::ReadLane:
        s.slot = *g::inRange<int>(0, static_cast<int>(c.wave) + 2);
        s.limit = *g::weightedElement<int>({{3, 0}, {1, 1}});  // lane from s6
        break;
      case Kind::ShflXor:
        s.slot = *g::inRange(0, 64);
        break;
      case Kind::SharedStore:
      case Kind::SharedLoad:
        s.slot = *g::inRange(0, 2);
        break;
      case Kind::Atomic:
        s.slot = *g::inRange(0, 3);
        if (s.slot == kCounterSlot)
          s.op = std::string(*g::element("atom.", "watom.")) + *g::elementOf(commutative_atomics());
        else
          s.op = *g::elementOf(atomic_ops());
        if (c.region && s.op.starts_with("watom."))  // wave.valid.watom
          s.op = s.op.substr(1);
        break;
      case Kind::ScalarAlu:
        s.op = *g::elementOf(pools::mnemonics(pools::Id::Alu));
        s.a = *uniform_operand(c);
        s.b = *uniform_operand(c);
        s.accumulate = *g::weightedElement<bool>({{1, false}, {2, true}});
        break;
      case Kind::ScalarLoad:
        s.width = *width();
        s.offset = *aligned_offset(s.width);
        s.slot = *g::inRange(0, 64);
        s.accumulate = *g::weightedElement<bool>({{1, false}, {3, true}});
        break;
      case Kind::PredOp:
        // On the predicates conditions test (p0-p3), so the result is seen.
        s.op = *g::elementOf(pools::mnemonics(pools::Id::PredOp));
        s.dst = *g::inRange(0, 4);
        s.cond.pred = *g::inRange(0, 4);
        s.cond.negate = *g::arbitrary<bool>();
        s.p2 = *g::inRange(0, 4);
        s.n2 = *g::arbitrary<bool>();
        s.accumulate = *g::weightedElement<bool>({{1, false}, {2, true}});
        break;
      case Kind::If: {
        s.cond = *condition(c);
        s.body = *body(inner, size / 2);
        s.has_else = *g::arbitrary<bool>();
        if (s.has_else) s.other = *body(inner, size / 2);
        // Sometimes the first side again after a second invert (raw only).
        if (s.has_else && c.o.raw && *g::weightedElement<bool>({{4, false}, {1, true}}))
          s.again = *body(inner, size / 3);
        break;
      }
      case Kind::Loop: {
        inner.in_loop = true;
        inner.bar_ok = false;
        inner.recurse_ok = false;
        s.limit_reg = *g::arbitrary<bool>();
        s.limit = *g::inRange(0, 5);
        s.body = *body(inner, size / 2);
        break;
      }
      case Kind::Skip:
        s.cond = *condition(c);
        // oracle.model.hostprog: often on the warp's id, so that warps go different
        // ways (one may exit before a barrier the others wait at).
        if (c.host && *g::arbitrary<bool>()) {
          s.cond.reuse = false;
          s.cond.cmp = *g::element<std::string>("cmp.eq", "cmp.ne");
          s.cond.a =
              Operand{Operand::K::Special,
                      static_cast<int32_t>(*g::element(isa::Special::Warp, isa::Special::GWarp)),
                      Notation::Dec};
          s.cond.b = Operand{Operand::K::Imm, *g::inRange(0, 3), Notation::Dec};
          s.cond.negate = false;
        }
        inner.bar_ok = false;
        s.body = *body(inner, size / 2);
        break;
      case Kind::Jump:
        // Dead code: never runs, so it need not be safe; it is still checked by
        // every validation rule but the flow checks, which only follow reachable paths.
        inner.bar_ok = false;
        s.body = *body(inner, std::min(size / 2, 12));
        break;
      case Kind::CountedLoop:
        inner.bar_ok = false;
        inner.recurse_ok = false;
        inner.counted += 1;
        s.limit = *g::inRange(1, 5);
        s.body = *body(inner, size / 2);
        break;
      case Kind::ExecNarrow: {
        inner.in_loop = false;  // break/continue inside would be re-activated by the restore
        inner.recurse_ok = false;
        inner.narrow += 1;
        const uint64_t full = c.wave == 64 ? ~0ull : (1ull << c.wave) - 1;
        s.mask = *g::arbitrary<uint64_t>() & full;
        s.slot = *g::inRange(0, 2);
        s.body = *body(inner, size / 2);
        break;
      }
      case Kind::Sys:  // trap.sys: the code an immediate or a uniform operand
        s.a = *g::weightedOneOf<Operand>({{3, immediate()}, {1, uniform_operand(c)}});
        break;
      case Kind::VCall:  // trap.vector: mostly an entry of a table, sometimes past it
        s.a = *g::weightedOneOf<Operand>(
            {{4, g::map(g::inRange(0, 5),
                        [](int v) {
                          return Operand{Operand::K::Imm, v, Notation::Dec};
                        })},
             {1, uniform_operand(c)}});
        break;
      case Kind::Trap:
        s.slot = *g::inRange(0, static_cast<int>(TrapKind::kCount));
        // oracle.model.hostprog: the host model has no atomics.
        if (c.host && s.slot >= static_cast<int>(TrapKind::AtomicLaneOut))
          s.slot = *g::inRange(0, static_cast<int>(TrapKind::AtomicLaneOut));
        if (c.region && s.slot == static_cast<int>(TrapKind::AtomicWarpOut))  // wave.valid.watom
          s.slot = static_cast<int>(TrapKind::AtomicLaneOut);
        if (s.slot == static_cast<int>(TrapKind::AtomicLaneOut) ||
            s.slot == static_cast<int>(TrapKind::AtomicWarpOut)) {
          // The operation of the family the kind names (atom.lane.check, atom.warp.check).
          const std::string op = *g::elementOf(atomic_ops());
          s.op = (s.slot == static_cast<int>(TrapKind::AtomicLaneOut) ? "atom." : "watom.") +
                 op.substr(op.find('.') + 1);
        } else {
          s.op = *g::elementOf(pools::mnemonics(pools::Id::Division));
        }
        s.limit = *g::inRange(0, 3);
        s.width = *g::element<Width>(Width::W32, Width::U16, Width::S16);
        break;
      default:
        break;
    }
    return s;
  });
}

// A system call (trap.sys): the code an immediate (taken modulo 2^24) or a
// uniform operand.
Gen<Stmt> sys_statement(const Ctx& c) {
  return g::map(g::weightedOneOf<Operand>({{3, immediate()}, {1, uniform_operand(c)}}),
                [](Operand a) {
                  Stmt s;
                  s.kind = Kind::Sys;
                  s.a = a;
                  return s;
                });
}

// Every statement list of a program: main, the functions, nested bodies.
void statement_lists(std::vector<Stmt>& l, std::vector<std::vector<Stmt>*>& out) {
  out.push_back(&l);
  for (auto& s : l) {
    switch (s.kind) {
      case Kind::If:
      case Kind::Loop:
      case Kind::Skip:
      case Kind::Jump:
      case Kind::CountedLoop:
      case Kind::ExecNarrow:
      case Kind::Spin:
        statement_lists(s.body, out);
        break;
      default:
        break;
    }
    if (s.kind == Kind::If && s.has_else) statement_lists(s.other, out);
    if (!s.again.empty()) statement_lists(s.again, out);
  }
}

// oracle.model.traps: n system calls, each at a place drawn among every place of
// every statement list.
void insert_sys(Program& p, const Ctx& c, int n) {
  for (int i = 0; i < n; ++i) {
    std::vector<std::vector<Stmt>*> lists;
    statement_lists(p.main, lists);
    for (auto& f : p.functions) statement_lists(f, lists);
    auto* l = lists[*g::inRange<size_t>(0, lists.size())];
    const size_t at = *g::inRange<size_t>(0, l->size() + 1);
    l->insert(l->begin() + static_cast<std::ptrdiff_t>(at), *sys_statement(c));
  }
}

// Choices inside a statement are made at the nominal size, so they are uniform
// whatever the program's size; the size only scales lengths and nesting.
Gen<std::vector<Stmt>> body(Ctx c, int size) {
  int max_len = std::clamp(size / 6, 1, 10);
  return g::resize(
      max_len, g::container<std::vector<Stmt>>(g::resize(rc::kNominalSize, statement(c, size))));
}

// oracle.model.regions: a region whose body first writes some shared
// temporaries at its top level (wave.valid.shared: written before read on every
// path), then may read and write them. Context c is the region's.
Stmt region_statement(Ctx c, int size) {
  Stmt r;
  r.kind = Kind::Region;
  const int temps = *g::weightedElement<int>({{2, 0}, {2, 1}, {2, 2}, {1, 3}, {1, kSharedRegs}});
  Ctx init = c;
  init.shared_ready = 0;
  for (int t = 0; t < temps; ++t) {
    Stmt w;
    w.kind = Kind::SharedAlu;
    w.op = *g::elementOf(pools::mnemonics(pools::Id::Alu));
    w.slot = t;
    w.a = *operand(init);
    w.b = *operand(init);
    r.body.push_back(std::move(w));
  }
  c.shared_ready = temps;
  // Beyond the model: sometimes a count of the passes in s5 (wave.scalar,
  // wave.union), added into a data register.
  if (!c.strict && c.o.communicate && *g::weightedElement<bool>({{2, false}, {1, true}})) {
    Stmt n;
    n.kind = Kind::ScalarAlu;
    n.op = "add";
    n.a = Operand{Operand::K::Scalar, 0, Notation::Dec};
    n.b = Operand{Operand::K::Imm, 1, Notation::Dec};
    n.accumulate = true;
    n.dst = *g::inRange(0, c.nregs);
    r.body.push_back(std::move(n));
  }
  for (Stmt& s : *body(c, size)) r.body.push_back(std::move(s));
  return r;
}

// oracle.model.regions: one to three regions, each at a place among the
// top-level statements of main, and `.vshared` (in 7 programs of 8). Beyond the
// model, normal code right after a region sometimes reads one of its shared
// temporaries (wave.shared.observe).
void add_regions(Program& p, const Ctx& c, int size) {
  Ctx rc = c;
  rc.region = true;
  rc.strict = c.o.region_strict;
  rc.fn = kMain;
  rc.bar_ok = false;
  rc.in_loop = false;
  rc.recurse_ok = false;
  rc.depth = 0;
  // Beyond the model: a SIMD width below the wave, so that regions have parts.
  if (!rc.strict && !p.simd) {
    std::vector<uint32_t> simds;
    for (uint32_t k : {2u, 4u})
      if (p.wave % k == 0 && (c.o.simds.empty() || c.o.simds.count(p.wave / k)))
        simds.push_back(p.wave / k);
    if (!simds.empty()) p.simd = *g::elementOf(simds);
  }
  const uint32_t simd = p.simd_width(), parts = p.wave / simd;
  const int n = *g::inRange(1, 4);
  for (int i = 0; i < n; ++i) {
    Stmt r = region_statement(rc, size);
    size_t at = *g::inRange<size_t>(0, p.main.size() + 1);
    const bool observe = !rc.strict && *g::weightedElement<bool>({{3, false}, {1, true}});
    // Beyond the model: sometimes the lanes of the lowest or highest parts exit
    // just before the region, which then skips those parts (wave.union).
    if (!rc.strict && c.o.exits && parts > 1 &&
        *g::weightedElement<bool>({{2, false}, {1, true}})) {
      Stmt e;
      e.kind = Kind::Exit;
      const bool low = *g::arbitrary<bool>();
      e.cond.cmp = low ? "cmp.lt" : "cmp.ge";
      e.cond.a = Operand{Operand::K::Lane, 0, Notation::Dec};
      const int32_t m = *g::inRange<int32_t>(1, static_cast<int32_t>(parts));
      e.cond.b = Operand{Operand::K::Imm, m * static_cast<int32_t>(simd), Notation::Dec};
      e.cond.pred = *g::inRange(0, 4);
      p.main.insert(p.main.begin() + static_cast<std::ptrdiff_t>(at++), std::move(e));
    }
    p.main.insert(p.main.begin() + static_cast<std::ptrdiff_t>(at), std::move(r));
    if (observe) {
      Stmt s;
      s.kind = Kind::Alu;
      s.op = *g::element<std::string>("mov", "add", "xor");
      s.dst = *g::inRange(0, c.nregs);
      s.a = Operand{Operand::K::Shared, *g::inRange(0, kSharedRegs), Notation::Dec};
      s.b = Operand{Operand::K::Reg, s.dst, Notation::Dec};
      p.main.insert(p.main.begin() + static_cast<std::ptrdiff_t>(at + 1), std::move(s));
    }
  }
  p.vshared = *g::weightedElement<bool>({{7, true}, {1, false}});
}

// Bodies of the livelock oracle's spin loop (oracle.model.spin): every statement
// maps a register to a function of itself (bitwise with constants, or a constant),
// or stores or exchanges such values, so each bit of the state repeats with
// period at most 2 and the whole state repeats within a few iterations.
Gen<std::vector<Stmt>> spin_body(const Ctx& c, bool barriers) {
  auto one = g::exec([c, barriers] {
    Stmt s;
    const int kind = *g::inRange(0, barriers ? 6 : 5);
    s.dst = *g::inRange(0, c.nregs);
    s.a = Operand{Operand::K::Reg, s.dst, Notation::Dec};
    s.b = *immediate();
    switch (kind) {
      case 0:
        s.kind = Kind::Alu;
        s.op = *g::element<std::string>("xor", "and", "or");
        break;
      case 1:
        s.kind = Kind::Alu;
        s.op = "not";
        break;
      case 2:
        s.kind = Kind::Alu;
        s.op = "mov";
        s.a = *g::oneOf(immediate(), g::just(Operand{Operand::K::Lane, 0, Notation::Dec}));
        break;
      case 3:
        s.kind = Kind::StoreScratch;
        s.slot = *g::inRange(0, kScratchSlots);
        break;
      case 4:
        s.kind = Kind::ShflXor;
        s.a = Operand{Operand::K::Reg, *g::inRange(0, c.nregs), Notation::Dec};
        s.slot = *g::inRange(0, 64);
        break;
      default:
        s.kind = Kind::Barrier;
        break;
    }
    return s;
  });
  return g::resize(6, g::nonEmpty(g::container<std::vector<Stmt>>(one)));
}

uint32_t mask_need_body(const Program& p, const std::vector<Stmt>& b, int fn, uint32_t budget);
uint32_t call_need_body(const Program& p, const std::vector<Stmt>& b, int fn, uint32_t budget);

uint32_t mask_need_fn(const Program& p, int f, uint32_t budget) {
  return mask_need_body(p, p.functions[static_cast<size_t>(f)], f, budget);
}
uint32_t call_need_fn(const Program& p, int f, uint32_t budget) {
  return call_need_body(p, p.functions[static_cast<size_t>(f)], f, budget);
}

// The most entries pushed at once below a body (branch.push, branch.lpush): an
// if, a loop and an exit's if push one; a call adds the callee's; recursion
// repeats the function while the budget lasts.
uint32_t mask_need_body(const Program& p, const std::vector<Stmt>& b, int fn, uint32_t budget) {
  uint32_t most = 0;
  for (const auto& s : b) {
    uint32_t n = 0;
    switch (s.kind) {
      case Kind::If:
        n = 1 +
            std::max({mask_need_body(p, s.body, fn, budget), mask_need_body(p, s.other, fn, budget),
                      mask_need_body(p, s.again, fn, budget)});
        break;
      case Kind::Loop:
      case Kind::Spin:
        n = (s.kind == Kind::Spin && s.raw ? 0 : 1) + mask_need_body(p, s.body, fn, budget);
        break;
      case Kind::Exit:
        n = s.raw ? 0 : 1;
        break;
      case Kind::Call: {
        int t = call_target(p, fn, s);
        if (t >= 0) n = mask_need_fn(p, t, budget);
        break;
      }
      case Kind::Recurse:
        if (fn != kMain && budget > 0) n = mask_need_fn(p, fn, budget - 1);
        break;
      default:
        n = std::max({mask_need_body(p, s.body, fn, budget), mask_need_body(p, s.other, fn, budget),
                      mask_need_body(p, s.again, fn, budget)});
        break;
    }
    most = std::max(most, n);
  }
  return most;
}

uint32_t call_need_body(const Program& p, const std::vector<Stmt>& b, int fn, uint32_t budget) {
  uint32_t most = 0;
  for (const auto& s : b) {
    uint32_t n =
        std::max({call_need_body(p, s.body, fn, budget), call_need_body(p, s.other, fn, budget),
                  call_need_body(p, s.again, fn, budget)});
    if (s.kind == Kind::Call) {
      int t = call_target(p, fn, s);
      if (t >= 0) n = 1 + call_need_fn(p, t, budget);
    } else if (s.kind == Kind::Recurse && fn != kMain && budget > 0) {
      n = 1 + call_need_fn(p, fn, budget - 1);
    }
    most = std::max(most, n);
  }
  return most;
}

// oracle.model.host: a host interrupt's step, core and code.
syntax::HostStep interrupt_action(uint32_t cores) {
  syntax::HostStep h;
  h.kind = syntax::HostKind::Interrupt;
  h.step = *g::weightedOneOf<uint64_t>(
      {{2, g::inRange<uint64_t>(0, 64)}, {1, g::inRange<uint64_t>(0, 1024)}});
  h.core = *g::weightedElement<bool>({{1, false}, {1, true}})
               ? syntax::kAllCores
               : *g::inRange<int32_t>(0, static_cast<int32_t>(cores));
  h.code = *g::weightedOneOf<uint32_t>(
      {{3, g::inRange<uint32_t>(0, 16)}, {1, g::inRange<uint32_t>(0, 1u << 24)}});
  return h;
}

// oracle.model.hostprog: one to six actions of every kind, in step order: steps
// below a horizon drawn per script (8 to 512), for all cores or one; interrupts
// as oracle.model.host; bind_tba of a logging handler; bind_vtable of a declared
// table; single_step on (two in three) or off; resume.
std::vector<syntax::HostStep> host_script(const Program& p) {
  std::vector<syntax::HostStep> out;
  const int n = *g::weightedElement<int>({{1, 1}, {3, 2}, {3, 3}, {2, 4}, {1, 5}, {1, 6}});
  const uint64_t horizon = *g::element<uint64_t>(8, 32, 128, 512);
  const bool tables = !p.functions.empty() && !p.vtables.empty();
  for (int i = 0; i < n; ++i) {
    syntax::HostStep h = interrupt_action(p.cores);
    h.kind =
        *g::weightedElement<syntax::HostKind>({{4, syntax::HostKind::Interrupt},
                                               {3, syntax::HostKind::SingleStep},
                                               {3, syntax::HostKind::Resume},
                                               {2, syntax::HostKind::BindTba},
                                               {tables ? 3u : 0u, syntax::HostKind::BindVtable}});
    h.step = *g::inRange<uint64_t>(0, horizon);
    if (h.kind != syntax::HostKind::Interrupt) h.code = 0;
    switch (h.kind) {
      case syntax::HostKind::Interrupt:
        break;
      case syntax::HostKind::SingleStep:
        h.on = *g::weightedElement<bool>({{2, true}, {1, false}});
        break;
      case syntax::HostKind::Resume:
        break;
      case syntax::HostKind::BindTba:
        h.name =
            log_label(*g::weightedElement<Program::Handler>({{4, Program::Handler::LogReturn},
                                                             {2, Program::Handler::LogPause},
                                                             {1, Program::Handler::LogFault}}));
        break;
      case syntax::HostKind::BindVtable:
        h.core = syntax::kAllCores;  // trap.host.bind_vtable: every core
        h.name = vtable_name(*g::inRange<size_t>(0, p.vtables.size()));
        break;
      case syntax::HostKind::Preempt:  // not among the weights above
        break;
    }
    out.push_back(h);
  }
  // Single-step turned off again: half the time an `on` is followed by an `off`
  // for the same cores a few steps later, while a round may be open.
  const size_t drawn = out.size();
  for (size_t i = 0; i < drawn; ++i)
    if (out[i].kind == syntax::HostKind::SingleStep && out[i].on && *g::arbitrary<bool>()) {
      syntax::HostStep off = out[i];
      off.on = false;
      off.step += *g::inRange<uint64_t>(1, 24);
      out.push_back(off);
    }
  // Half the scripts of a program with tables bind one before the first step, so
  // that its vector calls mostly reach a table (trap.vector).
  if (tables && *g::arbitrary<bool>()) {
    syntax::HostStep h;
    h.kind = syntax::HostKind::BindVtable;
    h.name = vtable_name(*g::inRange<size_t>(0, p.vtables.size()));
    out.insert(out.begin(), h);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

// oracle.model.hostprog: a host program. Small waves are preferred; several
// workgroups and cores often (workgroup w runs on core w mod cores); main, the
// functions and nested bodies hold only the host model's kinds; vector tables of
// the functions; the logging handler installed at launch (or none), sometimes a
// `.stack` with room for no frame or one, a small `.call_depth`, and a host
// script where `interrupts` allows it.
}  // namespace

// oracle.model.preempt: the intruder of a flow-B preemption of p on `core` (a
// core index, or all): a program of its own on the affected cores (its `cores` 1
// for one core, the launch's for all; one workgroup per core) whose `.slm` covers
// every window the launch's workgroups have on a core (at least 256 bytes), and
// that writes every word of it with a pattern from `seed`, so that a restore
// without its DMA step (preempt.restore, preempt.slm) reads the pattern.
std::string intruder_text(const Program& p, int32_t core, uint32_t seed) {
  const uint32_t cores = core == syntax::kAllCores ? p.cores : 1;
  const uint32_t launch_slm = uses(p, Kind::Exchange) ? p.warps * p.wave * 4 : 0;
  const uint32_t windows = (p.workgroups + p.cores - 1) / p.cores;
  const uint32_t slm = std::max<uint32_t>(256, launch_slm * windows);
  const uint32_t stride = p.wave * 4;  // slm is a multiple of it (wave <= 64)
  std::string t = "; intruder (oracle.model.preempt): overwrites its whole SLM\n";
  t += ".wave " + std::to_string(p.wave) + "\n";
  if (cores > 1)
    t += ".workgroups " + std::to_string(cores) + "\n.cores " + std::to_string(cores) + "\n";
  t += ".slm " + std::to_string(slm) + "\n";
  t += "    shl v0, %lane, 2\n";
  t += "    mov v1, " + std::to_string(seed | 1) + "\n";
  t += "    add v1, v1, v0\n";
  t += "    mov s0, 0\n";
  t += "fill:\n";
  t += "    st slm[v0], v1\n";
  t += "    add v0, v0, " + std::to_string(stride) + "\n";
  t += "    mul v1, v1, 2654435761\n";
  t += "    add s0, s0, 1\n";
  t += "    cmp.lt p0, s0, " + std::to_string(slm / stride) + "\n";
  t += "    cbr p0, fill\n";
  t += "    exit\n";
  return t;
}

namespace {

// oracle.model.preempt: one to three preemption points in p's host script, each
// at a step below a horizon drawn per program (8, 32, 128 or 512), for every core
// or (with several cores) one chosen at random, flow A or B, a flow B with an
// intruder three times in four. After the script's own actions at the same step.
// Never in a program with an exec clear (oracle.model.hostprog), whose warps run
// past the end of the code into the routine.
void add_preemptions(Program& p) {
  const int n = *g::weightedElement<int>({{3, 1}, {2, 2}, {1, 3}});
  const uint64_t horizon = *g::element<uint64_t>(8, 32, 128, 512);
  for (int i = 0; i < n; ++i) {
    syntax::HostStep h;
    h.kind = syntax::HostKind::Preempt;
    h.step = *g::inRange<uint64_t>(0, horizon);
    if (p.cores > 1 && *g::arbitrary<bool>())
      h.core = static_cast<int32_t>(*g::inRange<uint32_t>(0, p.cores));
    h.flow = *g::arbitrary<bool>() ? syntax::PreemptFlow::B : syntax::PreemptFlow::A;
    if (h.flow == syntax::PreemptFlow::B && *g::weightedElement<bool>({{1, false}, {3, true}}))
      h.intruder = intruder_text(p, h.core, *g::arbitrary<uint32_t>());
    p.host.push_back(std::move(h));
  }
  std::stable_sort(p.host.begin(), p.host.end(),
                   [](const auto& a, const auto& b) { return a.step < b.step; });
}

Program host_program(const Options& o, int size) {
  Program p;
  p.host_program = true;
  std::vector<uint32_t> waves;  // each wave as often as its weight
  for (uint32_t w : o.waves)
    for (uint32_t k = 0; k < (w <= 8 ? 4u : w == 16 ? 2u : 1u); ++k) waves.push_back(w);
  p.wave = waves.empty() ? 8 : *g::elementOf(waves);
  auto fits = [&](size_t weight, uint32_t total) { return total <= o.max_warps ? weight : 0; };
  if (o.multi_warp) {
    p.workgroups = *g::weightedElement<uint32_t>({{2, 1}, {fits(3, 2), 2}, {fits(2, 3), 3}});
    p.warps = *g::weightedElement<uint32_t>({{3, 1},
                                             {fits(2, 2 * p.workgroups), 2},
                                             {fits(1, 3 * p.workgroups), 3},
                                             {fits(1, 4 * p.workgroups), 4}});
    p.cores = *g::weightedElement<uint32_t>({{1, 1}, {2, 2}, {1, 3}});
  }
  if (o.random_policy && *g::weightedElement<bool>({{3, false}, {1, true}})) {
    p.policy = "random";
    p.seed = *g::inRange<uint64_t>(0, 1000);
  } else {
    p.policy = *g::element<std::string>("round_robin", "lowest_pc_first", "oldest_first");
  }
  p.nregs = *g::inRange(1, 5);
  if (*g::arbitrary<bool>())
    p.input = *g::container<std::vector<uint32_t>>(p.threads(), g::inRange<uint32_t>(0, 16));
  p.line_end = *g::weightedElement<Program::LineEnd>(
      {{4, Program::LineEnd::LF}, {1, Program::LineEnd::CRLF}, {1, Program::LineEnd::CR}});
  const int nfunctions = o.calls ? *g::inRange(0, kMaxFunctions + 1) : 0;
  Ctx c;
  c.o = o;
  c.host = true;
  c.nregs = p.nregs;
  c.input = !p.input.empty();
  c.nfunctions = nfunctions;
  c.traps = true;
  c.wave = p.wave;
  for (int f = 0; f < nfunctions; ++f) {
    Ctx fc = c;
    fc.fn = f;
    fc.bar_ok = false;
    p.functions.push_back(*body(fc, size / 3));
  }
  p.main = *body(c, size / 2);
  // bar.exited: sometimes warp k of each workgroup retires early (a skip on
  // `%warp` around a bare exit) before a barrier the others then wait at for ever.
  if (p.warps > 1 && *g::weightedElement<bool>({{4, false}, {1, true}})) {
    Stmt skip;
    skip.kind = Kind::Skip;
    skip.cond.cmp = "cmp.ne";
    skip.cond.a =
        Operand{Operand::K::Special, static_cast<int32_t>(isa::Special::Warp), Notation::Dec};
    skip.cond.b = Operand{Operand::K::Imm, *g::inRange<int32_t>(0, static_cast<int32_t>(p.warps)),
                          Notation::Dec};
    skip.cond.pred = *g::inRange(0, 4);
    Stmt exit;
    exit.kind = Kind::Exit;
    exit.raw = true;
    skip.body.push_back(exit);
    const size_t at = *g::inRange<size_t>(0, p.main.size() + 1);
    p.main.insert(p.main.begin() + static_cast<std::ptrdiff_t>(at), skip);
    Stmt bar;
    bar.kind = Kind::Barrier;
    p.main.insert(
        p.main.begin() + static_cast<std::ptrdiff_t>(*g::inRange(at + 1, p.main.size() + 1)), bar);
  }
  if (nfunctions > 0) {
    const int tables = *g::inRange(1, 3);
    for (int t = 0; t < tables; ++t)
      p.vtables.push_back(
          *g::container<std::vector<int>>(*g::inRange<size_t>(1, 4), g::inRange(0, nfunctions)));
  }
  p.handler = *g::weightedElement<Program::Handler>({{3, Program::Handler::None},
                                                     {5, Program::Handler::LogReturn},
                                                     {2, Program::Handler::LogPause},
                                                     {1, Program::Handler::LogFault}});
  p.log_fields = *g::weightedElement<bool>({{5, true}, {1, false}}) ? kLogAllFields : 0;
  p.log_barrier = *g::weightedElement<bool>({{3, false}, {1, true}});
  // trap.frame.room: no room for a frame, or for exactly one.
  if (*g::weightedElement<bool>({{7, false}, {1, true}}))
    p.stack = *g::element<uint32_t>(16, 32, 48, 64);
  if (*g::weightedElement<bool>({{3, false}, {1, true}}))
    p.call_depth = *g::inRange<uint32_t>(1, 4);
  p.max_steps = kHostMaxSteps;
  if (o.interrupts) p.host = host_script(p);
  return p;
}

}  // namespace

uint32_t mask_need(const Program& p) {
  return mask_need_body(p, p.main, kMain, p.budget);
}
uint32_t call_need(const Program& p) {
  return call_need_body(p, p.main, kMain, p.budget);
}

const std::vector<std::pair<uint32_t, uint32_t>>& region_shapes() {
  static const std::vector<std::pair<uint32_t, uint32_t>> shapes = {{64, 32}, {64, 16}, {32, 16},
                                                                    {32, 8},  {32, 32}, {16, 8}};
  return shapes;
}

Options options_for(const std::string& invariant, const runners::Capabilities* caps) {
  const Invariant* inv = find_invariant(invariant);
  return inv ? options_for(*inv, caps) : Options{};
}

Options options_for(const Invariant& invariant, const runners::Capabilities* caps) {
  Options o;
  o.communicate = invariant.communicating;
  o.traps = invariant.traps;
  o.spin = invariant.spin;
  if (o.spin) o.exits = false;  // every warp reaches the spin (oracle.model.spin)
  o.small_mask_depth = invariant.small_mask_depth;
  o.handler_share = invariant.handler_share;
  o.interrupts = invariant.interrupts;
  o.trap_always = invariant.trap_always;
  if (invariant.trap_always) o.trap_weight = 12;
  if (invariant.atomics) o.atomic_weight = 6;
  o.region_share = invariant.region_share;
  o.region_strict = invariant.region_strict;
  o.shapes = invariant.shapes;
  o.shape_free = invariant.shape_free;
  if (o.shape_free) o.communicate = false;
  o.modesel_safe = invariant.modesel_safe;
  o.host_share = invariant.host_share;
  o.spin_share = invariant.spin_share;
  o.preempt_share = invariant.preempt_share;
  if (o.modesel_safe) {
    o.communicate = false;
    o.raw = false;
  }
  if (caps) {
    std::vector<uint32_t> waves;
    for (uint32_t w : o.waves)
      if (caps->waves.count(w) && caps->simds.count(w)) waves.push_back(w);
    if (!waves.empty()) o.waves = waves;  // else every program is unsupported, and says so
    o.simds = caps->simds;
    o.max_warps = std::clamp<uint32_t>(caps->max_warps, 1, o.max_warps);
    o.multi_warp = o.max_warps > 1;
    o.random_policy = caps->policies.count("random") > 0;
    o.communicate = o.communicate && caps->features.count("xlane") && caps->features.count("mem") &&
                    caps->features.count("bar");
    // The trap chapter's instructions and directives only for a runner with the
    // trap feature, host scripts only with the host extra (trap.host.toml).
    if (!caps->features.count("trap")) {
      o.sys = false, o.handler_share = 0;
      // An invariant whose every program is a host program keeps them: a runner
      // without the feature finds every program unsupported, and says so.
      if (o.host_share < 4) o.host_share = 0;
    }
    if (!caps->extras.count("host")) o.interrupts = false;
    // oracle.gen.capabilities: preemption points only for a runner with the
    // preempt feature and the host extra (they travel in the host script).
    if (!caps->features.count("preempt") || !caps->extras.count("host")) o.preempt_share = 0;
    // Raw primitive forms only for a runner that takes every branch primitive.
    if (!caps->all_instructions)
      for (const char* m : {"cbr", "jmp", "push", "invert", "pop", "lpush", "brk", "cont", "lnext"})
        if (!caps->instructions.count(m)) o.raw = false;
    // oracle.gen.capabilities: regions (where they are a share of the programs) only
    // for a runner with the wave feature and both region instructions; the
    // (wave, simd) pairs it supports. An invariant whose every program has regions
    // keeps them: a runner without them finds every program unsupported, and says so.
    std::vector<std::pair<uint32_t, uint32_t>> shapes;
    for (const auto& ws : o.shapes)
      if (caps->waves.count(ws.first) && caps->simds.count(ws.second)) shapes.push_back(ws);
    if (!shapes.empty()) o.shapes = shapes;
    const bool regions = caps->features.count("wave") &&
                         (caps->all_instructions || (caps->instructions.count("subv.begin") &&
                                                     caps->instructions.count("subv.end")));
    if (!regions && o.region_share < 4) o.region_share = 0;
    // oracle.gen.capabilities: host programs run scalar statements, barriers and
    // SLM exchanges, as communicating statements do (where they are a share).
    if (!o.communicate && o.host_share < 4) o.host_share = 0;
  }
  return o;
}

rc::Gen<Program> program(const Options& o) {
  return g::withSize([o](int size) {
    return g::resize(
        rc::kNominalSize, g::exec([o, size] {
          // Version 7 (oracle.model.preempt): preemption points, drawn after
          // everything else, so a program without them is the version 6 one.
          // A program with an exec clear runs past its end (event.pc_range), so
          // it would run into the routine: it gets none.
          auto preempted = [&](Program q) {
            if (o.preempt_share && *g::inRange<uint32_t>(0, 4) < o.preempt_share &&
                !uses(q, Kind::ExecClear))
              add_preemptions(q);
            return q;
          };
          if (o.host_share >= 4) return preempted(host_program(o, size));
          Program p;
          if (!o.shapes.empty()) {
            // oracle.model.regions: one of the mixed-wave-size launch shapes.
            const auto [wave, simd] = *g::elementOf(o.shapes);
            p.wave = wave;
            p.simd = simd == wave ? 0 : simd;
          } else {
            p.wave = o.waves.empty() ? 32 : *g::elementOf(o.waves);
            // simd = wave / k, k in {1, 2, 4} (state.launch.limits), within the runner's.
            std::vector<uint32_t> simds;
            for (uint32_t k : {1u, 2u, 4u})
              if (p.wave % k == 0 && (o.simds.empty() || o.simds.count(p.wave / k)))
                simds.push_back(p.wave / k);
            const uint32_t simd =
                simds.size() > 1 && *g::weightedElement<bool>({{3, false}, {1, true}})
                    ? *g::elementOf(simds)
                    : p.wave;
            p.simd = simd == p.wave ? 0 : simd;
          }
          if (o.shape_free) {
            // oracle.invariant.wave_equivalence: 64 or 128 threads, whatever the wave.
            const uint32_t threads = *g::element<uint32_t>(64, 128);
            const uint32_t n = std::max(1u, threads / p.wave);
            p.warps = n;
            if (n % 2 == 0 && *g::arbitrary<bool>()) p.warps = n / 2, p.workgroups = 2;
            p.cores = *g::weightedElement<uint32_t>({{4, 1}, {1, 2}});
          } else if (o.multi_warp) {
            // Counts above max_warps get weight 0 (never chosen).
            auto w = [&](size_t weight, uint32_t total) {
              return total <= o.max_warps ? weight : 0;
            };
            p.warps = *g::weightedElement<uint32_t>(
                {{w(4, 1), 1}, {w(2, 2), 2}, {w(1, 3), 3}, {w(2, 4), 4}});
            p.workgroups =
                *g::weightedElement<uint32_t>({{w(4, p.warps), 1}, {w(1, 2 * p.warps), 2}});
            p.cores = *g::weightedElement<uint32_t>({{4, 1}, {1, 2}, {1, 3}});
          }
          if (o.random_policy && *g::weightedElement<bool>({{3, false}, {1, true}})) {
            p.policy = "random";
            p.seed = *g::inRange<uint64_t>(0, 1000);
          }
          p.nregs = *g::inRange(1, kMaxData + 1);
          if (o.shape_free || *g::arbitrary<bool>()) {
            // syntax.buffer.init: a list, an arithmetic sequence (iota) or one value (fill).
            p.input_form = *g::weightedElement<Program::InputForm>({{2, Program::InputForm::List},
                                                                    {1, Program::InputForm::Iota},
                                                                    {1, Program::InputForm::Fill}});
            auto value = g::weightedOneOf<uint32_t>(
                {{3, g::inRange<uint32_t>(0, 16)}, {1, g::arbitrary<uint32_t>()}});
            if (p.input_form == Program::InputForm::List) {
              p.input = *g::container<std::vector<uint32_t>>(p.threads(), value);
            } else {
              const uint32_t a = *value, b = p.input_form == Program::InputForm::Iota ? *value : 0;
              for (uint32_t i = 0; i < p.threads(); ++i) p.input.push_back(a + b * i);
            }
          }
          p.line_end = *g::weightedElement<Program::LineEnd>(
              {{4, Program::LineEnd::LF}, {1, Program::LineEnd::CRLF}, {1, Program::LineEnd::CR}});
          p.budget = *g::inRange<uint32_t>(0, 4);
          const bool one_warp = p.warps * p.workgroups == 1;
          const bool traps = o.traps && one_warp && (o.trap_always || *g::arbitrary<bool>());
          int nfunctions = o.calls ? *g::inRange(0, kMaxFunctions + 1) : 0;
          Ctx c;
          c.o = o;
          c.nregs = p.nregs;
          c.input = !p.input.empty();
          c.nfunctions = nfunctions;
          c.traps = traps;
          c.wave = p.wave;
          for (int f = 0; f < nfunctions; ++f) {
            Ctx fc = c;
            fc.fn = f;
            fc.bar_ok = false;
            fc.recurse_ok = true;
            p.functions.push_back(*body(fc, size / 2));
          }
          p.main = *body(c, size);
          if (o.spin && *g::arbitrary<bool>()) {
            Stmt s;
            s.kind = Kind::Spin;
            s.raw = *g::arbitrary<bool>();
            // Barriers only where every warp spins: no statement may retire a warp.
            s.body = *spin_body(c, !o.exits);
            p.main.push_back(std::move(s));
          }
          // Stack depths (oracle.model.traps): at most what the program needs, so
          // that its deepest path just fits, or one less in trap programs, where
          // the deepest push or call may overflow. The defaults otherwise, unless
          // the program needs more (it never overflows without traps).
          const uint32_t mneed = std::max(1u, mask_need(p)), cneed = std::max(1u, call_need(p));
          constexpr uint32_t kDefMask = exec::kDefaultLaunch.mask_depth;
          constexpr uint32_t kDefCall = exec::kDefaultLaunch.call_depth;
          if (o.small_mask_depth && *g::weightedElement<bool>({{3, false}, {1, true}})) {
            p.mask_depth = *g::inRange<uint32_t>(1, 5);
          } else if (traps && *g::arbitrary<bool>()) {
            p.mask_depth = std::max(1u, mneed - *g::inRange<uint32_t>(0, 2));
          } else if (mneed > kDefMask || *g::weightedElement<bool>({{5, false}, {1, true}})) {
            p.mask_depth = mneed;
          }
          if (traps && *g::arbitrary<bool>()) {
            p.call_depth = std::max(1u, cneed - *g::inRange<uint32_t>(0, 2));
          } else if (cneed > kDefCall || *g::weightedElement<bool>({{5, false}, {1, true}})) {
            p.call_depth = cneed;
          }
          if (p.mask_depth == kDefMask) p.mask_depth = 0;  // the default (state.launch.defaults)
          if (p.call_depth == kDefCall) p.call_depth = 0;
          // Version 4 (the trap chapter): drawn after everything above, so that a
          // program that gets none of it is the version 3 program of its seed.
          // oracle.model.handler: the recording handler, in a share of programs.
          if (o.handler_share && *g::inRange<uint32_t>(0, 4) < o.handler_share)
            p.handler = Program::Handler::Record;
          const bool handled = p.handler == Program::Handler::Record;
          // With the handler no push may overflow: the model cannot skip one
          // (oracle.model.handler); a call can.
          if (handled && p.mask_depth && p.mask_depth < mneed)
            p.mask_depth = mneed == kDefMask ? 0 : mneed;
          // System calls where traps are; with the handler also in programs of
          // several warps (each warp logs its own events, whatever the schedule).
          // Like trap statements they act once per warp: communicating.
          if (o.traps && o.sys && o.communicate && (traps || (handled && !one_warp)) &&
              (o.trap_always || *g::arbitrary<bool>()))
            insert_sys(p, c, *g::inRange(1, o.trap_always ? 7 : 4));
          if (handled) {
            // trap.frame.room: sometimes no room for a frame (with one warp: with
            // several, which warps enter, and so which one overflows, depends on
            // the schedule).
            if (one_warp && *g::weightedElement<bool>({{11, false}, {1, true}}))
              p.stack = *g::element<uint32_t>(16, 32, 48);
            // oracle.model.host: one to three interrupts at steps from the start.
            if (o.interrupts && *g::arbitrary<bool>()) {
              const int n = *g::inRange(1, 4);
              for (int i = 0; i < n; ++i) p.host.push_back(interrupt_action(p.cores));
              std::stable_sort(p.host.begin(), p.host.end(),
                               [](const auto& a, const auto& b) { return a.step < b.step; });
            }
          }
          // Version 5 (oracle.model.regions): drawn after everything above, so
          // that a program without regions is the version 4 program of its seed.
          if (o.region_share && *g::inRange<uint32_t>(0, 4) < o.region_share) {
            add_regions(p, c, size);
            // The regions' pushes count too. A push that overflows inside a region
            // would end the launch in a pass (only where a mask depth is meant to
            // be exceeded: trap programs without the handler, or tiny depths).
            const uint32_t need = mask_need(p);
            const bool overflow_meant =
                !handled && (traps || o.small_mask_depth) && !o.region_strict;
            if ((p.mask_depth ? p.mask_depth : kDefMask) < need && !overflow_meant)
              p.mask_depth = need == kDefMask ? 0 : need;
          }
          // Version 6: drawn after everything above, so that a program with neither
          // is the version 5 program of its seed. oracle.model.spin: a spin at the
          // end of main (raw: no mask-stack entry the depths above did not count;
          // no barrier: a warp may have retired), not under `random`.
          if (o.spin_share && *g::inRange<uint32_t>(0, 4) < o.spin_share && p.policy != "random") {
            Stmt s;
            s.kind = Kind::Spin;
            s.raw = true;
            s.body = *spin_body(c, false);
            p.main.push_back(std::move(s));
          }
          // oracle.model.hostprog
          if (o.host_share && *g::inRange<uint32_t>(0, 4) < o.host_share)
            return preempted(host_program(o, size));
          return preempted(std::move(p));
        }));
  });
}

}  // namespace simt::gen
