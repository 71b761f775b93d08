// Instruction families: operand fetch, the active-lane loop (written once, with an
// all-lanes-active fast path), event checks before commit, and the choice of a
// specialised handler per decoded instruction. The lane semantics come from
// semantics.h; which functor and family belong to which mnemonic comes from the
// table (isa/instructions.def) and nowhere else.
#include <cstring>

#include "exec/machine.h"
#include "exec/semantics.h"

namespace simt::exec {
namespace {

inline uint64_t pred(const WarpState& w, uint8_t idx, bool neg) {
  uint64_t v = w.preds[idx];
  return neg ? ~v : v;
}

// The active-lane loop. `f(lane)` computes the lane's result; the loop stores it
// into d[lane] for active lanes. Pure, lane-wise functions only: inactive lanes may
// be evaluated (their results are discarded), which keeps both paths vectorisable.
// (A gather, which reads other lanes, blends by itself: see ShuffleFam.)
// wave.window: in a sub-vector pass only the part's lanes are visited (the others
// are inactive), with a fast path of its own when the whole part is active.
template <typename F>
inline void lanes_pure(Machine& m, WarpState& w, uint32_t* d, F&& f) {
  const uint32_t wave = m.wave();
  if (w.exec == m.full()) {
    for (uint32_t l = 0; l < wave; ++l) d[l] = f(l);
  } else if (w.exec == m.window().mask()) {
    const uint32_t hi = m.window().hi();
    for (uint32_t l = m.window().lo(); l < hi; ++l) d[l] = f(l);
  } else {
    // exec.form, alu.form: an inactive lane keeps its destination bit for bit.
    // Every lane's result is blended into d under exec expanded to one word per
    // lane (all ones for an active lane) with and / andnot / or: no branches, and
    // the blend vectorises.
    // The loop over the whole wave is kept apart from the window's: with a
    // start of 0 it vectorises better, and normal mode is the common case.
    const uint32_t* on = m.exec_words(w);
    const uint32_t lo = m.window().lo(), hi = m.window().hi();
    if (hi - lo == wave) {
      for (uint32_t l = 0; l < wave; ++l) d[l] = (f(l) & on[l]) | (d[l] & ~on[l]);
    } else {
      for (uint32_t l = lo; l < hi; ++l) d[l] = (f(l) & on[l]) | (d[l] & ~on[l]);
    }
  }
}

// For operations with side effects or events: visits exactly the active lanes in
// ascending lane order.
template <typename F>
inline void lanes_each(uint64_t exec, F&& f) {
  while (exec) {
    uint32_t l = static_cast<uint32_t>(std::countr_zero(exec));
    f(l);
    exec &= exec - 1;
  }
}

// Reads operand `s` for lane l: per-lane operands through a pointer, uniform ones once.
template <bool PerLane>
struct Reader {
  const uint32_t* p;
  uint32_t u;
  Reader(Machine& m, WarpState& w, const Src& s)
      : p(PerLane ? m.lanes(w, s) : nullptr), u(PerLane ? 0 : m.uniform(w, s)) {}
  uint32_t operator()(uint32_t l) const {
    if constexpr (PerLane) return p[l];
    return u;
  }
};

// ---- Unary, Binary -----------------------------------------------------------------
template <class S>
struct UnaryFam {
  template <bool AV>
  static Flow vec(Machine& m, WarpState& w, const Insn& in) {
    Reader<AV> a(m, w, in.a);
    lanes_pure(m, w, m.vreg(w, in.dst), [&](uint32_t l) { return S::apply(a(l)); });
    return Flow::Next;
  }
  static Flow scalar(Machine& m, WarpState& w, const Insn& in) {  // alu.form.scalar
    w.sregs[in.dst] = S::apply(m.uniform(w, in.a));
    return Flow::Next;
  }
  static Flow special(Machine& m, WarpState& w, const Insn& in) {  // state.special.exec
    m.write_special(w, static_cast<isa::Special>(in.dst), S::apply(m.uniform(w, in.a)));
    return Flow::Next;
  }
  static Handler select(const Insn& in) {
    if (in.dst_kind == DstKind::S) return &scalar;
    if (in.dst_kind == DstKind::Special) return &special;
    return in.a.per_lane() ? &vec<true> : &vec<false>;
  }
};

template <class S>
struct BinaryFam {
  template <bool AV, bool BV>
  static Flow vec(Machine& m, WarpState& w, const Insn& in) {
    Reader<AV> a(m, w, in.a);
    Reader<BV> b(m, w, in.b);
    uint32_t* d = m.vreg(w, in.dst);
    if constexpr (S::faults) {
      // Check every active lane before any lane commits (exec.commit).
      int32_t bad = -1;
      lanes_each(w.exec, [&](uint32_t l) {
        if (bad < 0 && S::fault(a(l), b(l))) bad = static_cast<int32_t>(l);
      });
      if (bad >= 0) return m.raise(w, isa::Event::DivZero, bad);
      lanes_each(w.exec, [&](uint32_t l) { d[l] = S::apply(a(l), b(l)); });
    } else {
      lanes_pure(m, w, d, [&](uint32_t l) { return S::apply(a(l), b(l)); });
    }
    return Flow::Next;
  }
  static Flow scalar(Machine& m, WarpState& w, const Insn& in) {
    uint32_t a = m.uniform(w, in.a), b = m.uniform(w, in.b);
    if (S::fault(a, b)) return m.raise(w, isa::Event::DivZero);
    w.sregs[in.dst] = S::apply(a, b);
    return Flow::Next;
  }
  static Handler select(const Insn& in) {
    if (in.dst_kind == DstKind::S) return &scalar;
    bool av = in.a.per_lane(), bv = in.b.per_lane();
    if (av && bv) return &vec<true, true>;
    if (av) return &vec<true, false>;
    if (bv) return &vec<false, true>;
    return &vec<false, false>;
  }
};

// ---- Compare, Select, PredOp -----------------------------------------------------
template <class S>
struct CompareFam {
  template <bool AV, bool BV>
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    Reader<AV> a(m, w, in.a);
    Reader<BV> b(m, w, in.b);
    uint64_t bits = 0;
    if constexpr (!AV && !BV) {
      bits = S::apply(a(0), b(0)) ? ~0ull : 0;  // uniform operands: one comparison
    } else {
      // Each half's bits OR-reduced from kLaneBit: this vectorises, where setting
      // bit l of a 64-bit word (`<< l`) runs one lane at a time.
      // wave.window: the window's lanes only (every lane in normal mode).
      const uint32_t first = m.window().lo(), end = m.window().hi(), n = end < 32 ? end : 32;
      uint32_t lo = 0, hi = 0;
      auto all = [](bool x) { return 0u - static_cast<uint32_t>(x); };  // 0 or ~0
      for (uint32_t l = first; l < n; ++l) lo |= kLaneBit[l] & all(S::apply(a(l), b(l)));
      for (uint32_t l = first > 32 ? first : 32; l < end; ++l)
        hi |= kLaneBit[l - 32] & all(S::apply(a(l), b(l)));
      bits = uint64_t{hi} << 32 | lo;
    }
    uint64_t& p = w.preds[in.dst];
    p = (p & ~w.exec) | (bits & w.exec);
    return Flow::Next;
  }
  static Handler select(const Insn& in) {
    bool av = in.a.per_lane(), bv = in.b.per_lane();
    if (av && bv) return &run<true, true>;
    if (av) return &run<true, false>;
    if (bv) return &run<false, true>;
    return &run<false, false>;
  }
};

template <class S>
struct SelectFam {
  template <bool AV, bool BV>
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    Reader<AV> a(m, w, in.a);
    Reader<BV> b(m, w, in.b);
    // P as one word per lane, so that the choice is an and / andnot / or that
    // vectorises (testing `(p >> l) & 1` per lane does not).
    alignas(16) uint32_t pick[isa::kMaxWave];
    expand_mask(pred(w, in.pa, in.na), m.wave(), pick);
    lanes_pure(m, w, m.vreg(w, in.dst),
               [&](uint32_t l) { return (a(l) & pick[l]) | (b(l) & ~pick[l]); });
    return Flow::Next;
  }
  static Handler select(const Insn& in) {
    bool av = in.a.per_lane(), bv = in.b.per_lane();
    if (av && bv) return &run<true, true>;
    if (av) return &run<true, false>;
    if (bv) return &run<false, true>;
    return &run<false, false>;
  }
};

template <class S>
struct PredOpFam {
  static Flow run(Machine&, WarpState& w, const Insn& in) {
    uint64_t r = S::apply(pred(w, in.pa, in.na), pred(w, in.pb, in.nb));
    uint64_t& p = w.preds[in.dst];
    p = (p & ~w.exec) | (r & w.exec);
    return Flow::Next;
  }
  static Handler select(const Insn&) { return &run; }
};

// ---- Load, Store (mem.*) -----------------------------------------------------------
inline uint32_t read_le(const uint8_t* p, uint32_t size) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < size; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}

// mem.check: the lowest active lane's address is misaligned or out of bounds.
inline isa::Event check_access(uint32_t addr, uint32_t size, size_t bytes) {
  if (addr % size != 0) return isa::Event::MemMisaligned;
  if (uint64_t{addr} + size > bytes) return isa::Event::MemOutOfBounds;
  return isa::Event::None;
}

// mem.check, atom.lane.check: the lowest active lane whose access of `size`
// bytes at base(l) + offset is misaligned or out of bounds (lane -1 if none).
struct LaneFault {
  isa::Event ev = isa::Event::None;
  int32_t lane = -1;
  uint32_t addr = 0;
};
template <class Base>
inline LaneFault first_bad_lane(uint64_t exec, const Base& base, uint32_t offset, uint32_t size,
                                size_t bytes) {
  LaneFault f;
  lanes_each(exec, [&](uint32_t l) {
    if (f.lane >= 0) return;
    uint32_t addr = base(l) + offset;
    isa::Event e = check_access(addr, size, bytes);
    if (e != isa::Event::None) f = {e, static_cast<int32_t>(l), addr};
  });
  return f;
}

template <class S>
struct LoadFam {
  template <bool BV>
  static Flow vec(Machine& m, WarpState& w, const Insn& in) {
    Reader<BV> base(m, w, in.a);
    const std::vector<uint8_t>& mem = m.space_bytes(w, in.space);
    const LaneFault f = first_bad_lane(w.exec, base, in.offset, S::size, mem.size());
    if (f.lane >= 0) return m.raise(w, f.ev, f.lane, f.addr, in.space);
    uint32_t* d = m.vreg(w, in.dst);
    lanes_each(w.exec, [&](uint32_t l) {
      uint32_t addr = base(l) + in.offset;
      d[l] = S::extend(read_le(mem.data() + addr, S::size));
    });
    return Flow::Next;
  }
  static Flow scalar(Machine& m, WarpState& w, const Insn& in) {  // mem.load.scalar
    const std::vector<uint8_t>& mem = m.space_bytes(w, in.space);
    uint32_t addr = m.uniform(w, in.a) + in.offset;
    isa::Event e = check_access(addr, S::size, mem.size());
    if (e != isa::Event::None) return m.raise(w, e, -1, addr, in.space);
    w.sregs[in.dst] = S::extend(read_le(mem.data() + addr, S::size));
    return Flow::Next;
  }
  static Handler select(const Insn& in) {
    if (in.dst_kind == DstKind::S) return &scalar;
    return in.a.per_lane() ? &vec<true> : &vec<false>;
  }
};

template <class S>
struct StoreFam {
  // Operands: a = address base, b = value.
  template <bool BV, bool VV>
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    Reader<BV> base(m, w, in.a);
    Reader<VV> val(m, w, in.b);
    size_t bytes = m.space_bytes(w, in.space).size();
    const LaneFault f = first_bad_lane(w.exec, base, in.offset, S::size, bytes);
    if (f.lane >= 0) return m.raise(w, f.ev, f.lane, f.addr, in.space);
    // mem.store.order: lanes write in ascending order; the highest lane wins.
    lanes_each(w.exec,
               [&](uint32_t l) { m.store(w, in.space, base(l) + in.offset, val(l), S::size); });
    return Flow::Next;
  }
  static Handler select(const Insn& in) {
    bool bv = in.a.per_lane(), vv = in.b.per_lane();
    if (bv && vv) return &run<true, true>;
    if (bv) return &run<true, false>;
    if (vv) return &run<false, true>;
    return &run<false, false>;
  }
};

// ---- atomics (atom.*) ----------------------------------------------------------------
// A source read per lane or once, chosen at run time: atomics visit lanes one at a
// time anyway (atom.lane.order), so one handler per operation serves every form.
struct AnyReader {
  const uint32_t* p;
  uint32_t u;
  AnyReader(Machine& m, WarpState& w, const Src& s)
      : p(s.per_lane() ? m.lanes(w, s) : nullptr), u(s.per_lane() ? 0 : m.uniform(w, s)) {}
  uint32_t operator()(uint32_t l) const { return p ? p[l] : u; }
};

// Reads the word at addr, stores S::apply(old, a, b) if it differs, returns the
// destination's value (atom.ops, atom.lock, atom.unlock). addr is checked.
template <class S>
inline uint32_t rmw(Machine& m, WarpState& w, const Insn& in, uint32_t addr, uint32_t a,
                    uint32_t b) {
  const uint32_t old = read_le(m.space_bytes(w, in.space).data() + addr, 4);
  const uint32_t now = S::apply(old, a, b);
  if (now != old) m.store(w, in.space, addr, now, 4);
  return S::result(old, now);
}

template <class S>
struct AtomLaneFam {
  // Operands: a = address base, b = A, c = B.
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    AnyReader base(m, w, in.a), a(m, w, in.b), b(m, w, in.c);
    const size_t bytes = m.space_bytes(w, in.space).size();
    // atom.lane.check: every active lane is checked before any acts.
    const LaneFault f = first_bad_lane(w.exec, base, in.offset, 4, bytes);
    if (f.lane >= 0) return m.raise(w, f.ev, f.lane, f.addr, in.space);
    // atom.lane.order: ascending lanes, each seeing the ones before; every operand
    // is read before vD is written (vD may be a source register).
    alignas(16) uint32_t r[isa::kMaxWave];
    lanes_each(w.exec,
               [&](uint32_t l) { r[l] = rmw<S>(m, w, in, base(l) + in.offset, a(l), b(l)); });
    uint32_t* d = m.vreg(w, in.dst);
    lanes_each(w.exec, [&](uint32_t l) { d[l] = r[l]; });
    return Flow::Next;
  }
  static Handler select(const Insn&) { return &run; }
};

template <class S>
struct AtomWarpFam {
  // atom.warp: once, for the lowest active lane, its address and operands only.
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    if (w.exec == 0) return Flow::Next;  // atom.warp.empty
    const uint32_t l = static_cast<uint32_t>(std::countr_zero(w.exec));
    const uint32_t addr = AnyReader(m, w, in.a)(l) + in.offset;
    // atom.warp.check: lane l's address only.
    isa::Event e = check_access(addr, 4, m.space_bytes(w, in.space).size());
    if (e != isa::Event::None) return m.raise(w, e, static_cast<int32_t>(l), addr, in.space);
    const uint32_t r = rmw<S>(m, w, in, addr, AnyReader(m, w, in.b)(l), AnyReader(m, w, in.c)(l));
    lanes_pure(m, w, m.vreg(w, in.dst), [r](uint32_t) { return r; });
    return Flow::Next;
  }
  static Handler select(const Insn&) { return &run; }
};

// ---- cross-lane (xlane.*) -----------------------------------------------------------
template <class S>
struct BallotFam {
  static Flow run(Machine&, WarpState& w, const Insn& in) {
    uint64_t bits = pred(w, in.pa, in.na) & w.exec;
    w.sregs[in.dst] = static_cast<uint32_t>(bits >> S::shift);
    return Flow::Next;
  }
  static Handler select(const Insn&) { return &run; }
};

template <class S>
struct VoteFam {
  static Flow run(Machine&, WarpState& w, const Insn& in) {
    bool r = S::apply(pred(w, in.pa, in.na) & w.exec, w.exec);
    uint64_t& p = w.preds[in.dst];
    p = (p & ~w.exec) | (r ? w.exec : 0);
    return Flow::Next;
  }
  static Handler select(const Insn&) { return &run; }
};

template <class S>
struct ReadLaneFam {
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    uint32_t lane = m.uniform(w, in.b);
    bool ok = lane < m.wave() && ((w.exec >> lane) & 1);
    w.sregs[in.dst] = ok ? m.vreg(w, in.a.index)[lane] : 0;
    return Flow::Next;
  }
  static Handler select(const Insn&) { return &run; }
};

template <class S>
struct ShuffleFam {
  template <bool BV>
  static Flow run(Machine& m, WarpState& w, const Insn& in) {
    Reader<BV> b(m, w, in.b);
    const uint32_t wave = m.wave();
    // All lanes read vA before any writes vD (vD may be vA); xlane.inactive: an
    // inactive source lane reads 0, so the copy keeps active lanes only.
    alignas(16) uint32_t src[isa::kMaxWave];
    const uint32_t* a = m.vreg(w, in.a.index);
    auto gather = [&](uint32_t l) {
      uint32_t s = S::source(l, b(l));
      return s < wave ? src[s] : 0u;
    };
    uint32_t* d = m.vreg(w, in.dst);
    const uint32_t lo = m.window().lo(), hi = m.window().hi();
    if (w.exec == m.full()) {
      std::memcpy(src, a, wave * sizeof(uint32_t));
      for (uint32_t l = 0; l < wave; ++l) d[l] = gather(l);
    } else if (w.exec == m.window().mask()) {
      // wave.xlane: a sub-vector pass with its whole part active; the lanes of
      // the other parts are inactive and read 0.
      std::memset(src, 0, wave * sizeof(uint32_t));
      std::memcpy(src + lo, a + lo, (hi - lo) * sizeof(uint32_t));
      for (uint32_t l = lo; l < hi; ++l) d[l] = gather(l);
    } else {
      // The gather runs into a temporary, then is blended under exec like
      // lanes_pure does (exec.form).
      const uint32_t* on = m.exec_words(w);
      for (uint32_t l = 0; l < wave; ++l) src[l] = a[l] & on[l];
      alignas(16) uint32_t r[isa::kMaxWave];
      for (uint32_t l = lo; l < hi; ++l) r[l] = gather(l);
      for (uint32_t l = lo; l < hi; ++l) d[l] = (r[l] & on[l]) | (d[l] & ~on[l]);
    }
    return Flow::Next;
  }
  static Handler select(const Insn& in) { return in.b.per_lane() ? &run<true> : &run<false>; }
};

template <class S>
struct ControlFam {
  static Handler select(const Insn&) { return &S::exec; }
};

using Selector = Handler (*)(const Insn&);

constexpr Selector kSelectors[] = {
#define X(id, mn, fam, sig, semantics, feat, ctl, mode, clause, summary) \
  &fam##Fam<semantics>::select,
#include "isa/instructions.def"
#undef X
};
static_assert(std::size(kSelectors) == isa::kOpCount);

}  // namespace

Handler select_handler(const Insn& in) {
  return kSelectors[static_cast<size_t>(in.op)](in);
}

}  // namespace simt::exec
