// simtspec-faulty: the reference with one named semantic fault (README.md).
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "exec/machine.h"
#include "exec/semantics.h"
#include "protocol.h"
#include "reference.h"

namespace {

using namespace simt;
using exec::Flow;
using exec::Insn;
using exec::Machine;
using exec::WarpState;

uint64_t pred(const WarpState& w, uint8_t idx, bool neg) {
  return neg ? ~w.preds[idx] : w.preds[idx];
}

Flow invert_all(Machine& m, WarpState& w, const Insn& in) {
  if (w.mask_stack.empty()) return m.raise(w, isa::Event::MaskUnderflow);
  (void)in;
  w.exec = ~w.exec & w.live & m.full();
  return Flow::Next;
}

Flow cbr_empty_taken(Machine&, WarpState& w, const Insn& in) {
  uint64_t p = pred(w, in.pa, in.na) & w.exec;
  if (p == w.exec) {  // wrong: taken with no active lane
    w.pc = in.target;
    return Flow::Jump;
  }
  return Flow::Next;
}

Flow readlane_off_by_one(Machine& m, WarpState& w, const Insn& in) {
  uint32_t lane = m.uniform(w, in.b) + 1;
  bool ok = lane < m.wave() && ((w.exec >> lane) & 1);
  w.sregs[in.dst] = ok ? m.vreg(w, in.a.index)[lane] : 0;
  return Flow::Next;
}

Flow barrier_early(Machine& m, WarpState& w, const Insn&) {
  const uint32_t per_wg = m.config().warps;
  if (per_wg < 2) return m.barrier_arrive(w);
  auto& st = m.mutable_state();
  const uint32_t wg = m.warp_id(w) / per_wg;
  auto& b = st.barriers[wg];
  w.status = exec::WarpStatus::Barrier;
  if (++b.arrived >= per_wg - 1) {
    for (uint32_t i = wg * per_wg; i < (wg + 1) * per_wg; ++i) {
      auto& o = st.warps[i];
      if (o.status == exec::WarpStatus::Barrier) {
        o.status = exec::WarpStatus::Ready;
        o.pc += 1;
      }
    }
    b.arrived = 0;
  }
  return Flow::Jump;
}

Flow push_late(Machine& m, WarpState& w, const Insn& in) {
  if (w.mask_stack.size() >= m.config().mask_depth + 1) return m.raise(w, isa::Event::MaskOverflow);
  uint64_t p = pred(w, in.pa, in.na);
  w.mask_stack.push_back({w.exec, w.exec & ~p, exec::MaskKind::If});
  w.exec &= p;
  return Flow::Next;
}

Flow lpush_late(Machine& m, WarpState& w, const Insn&) {
  if (w.mask_stack.size() >= m.config().mask_depth + 1) return m.raise(w, isa::Event::MaskOverflow);
  w.mask_stack.push_back({w.exec, 0, exec::MaskKind::Loop});
  return Flow::Next;
}

Flow shfl_stale(Machine& m, WarpState& w, const Insn& in) {
  const uint32_t wave = m.wave();
  uint32_t src[isa::kMaxWave];
  std::memcpy(src, m.vreg(w, in.a.index), wave * sizeof(uint32_t));
  const uint32_t* b = in.b.per_lane() ? m.lanes(w, in.b) : nullptr;
  uint32_t ub = b ? 0 : m.uniform(w, in.b);
  uint32_t* d = m.vreg(w, in.dst);
  for (uint32_t l = 0; l < wave; ++l) {
    if (!((w.exec >> l) & 1)) continue;
    uint32_t s = in.op == isa::Op::ShflXor ? (l ^ (b ? b[l] : ub)) : (b ? b[l] : ub);
    d[l] = s < wave ? src[s] : 0;  // wrong: ignores whether lane s is active
  }
  return Flow::Next;
}

template <uint32_t Size>
Flow store_lowest_wins(Machine& m, WarpState& w, const Insn& in) {
  const uint32_t* pb = in.a.per_lane() ? m.lanes(w, in.a) : nullptr;
  const uint32_t* pv = in.b.per_lane() ? m.lanes(w, in.b) : nullptr;
  uint32_t ub = pb ? 0 : m.uniform(w, in.a), uv = pv ? 0 : m.uniform(w, in.b);
  size_t bytes = m.space_bytes(w, in.space).size();
  for (uint32_t l = 0; l < m.wave(); ++l) {
    if (!((w.exec >> l) & 1)) continue;
    uint32_t addr = (pb ? pb[l] : ub) + in.offset;
    if (addr % Size)
      return m.raise(w, isa::Event::MemMisaligned, static_cast<int32_t>(l), addr, in.space);
    if (uint64_t{addr} + Size > bytes)
      return m.raise(w, isa::Event::MemOutOfBounds, static_cast<int32_t>(l), addr, in.space);
  }
  for (int l = static_cast<int>(m.wave()) - 1; l >= 0; --l) {  // wrong: descending
    if (!((w.exec >> l) & 1)) continue;
    m.store(w, in.space, (pb ? pb[l] : ub) + in.offset, pv ? pv[l] : uv, Size);
  }
  return Flow::Next;
}

// ---- atomics (atom.*): one generic faulty handler per family ----------------------
struct AtomOps {
  uint32_t (*apply)(uint32_t, uint32_t, uint32_t) = nullptr;
  uint32_t (*result)(uint32_t, uint32_t) = nullptr;
};
template <class S>
constexpr AtomOps atom_ops() {
  if constexpr (requires { S::result(0u, 0u); })
    return {&S::apply, &S::result};
  else
    return {};
}
namespace sem = simt::exec::sem;
constexpr AtomOps kAtomOps[] = {
#define X(id, mn, fam, sig, semantics, feat, ctl, mode, clause, summary) atom_ops<semantics>(),
#include "isa/instructions.def"
#undef X
};

uint32_t operand(Machine& m, WarpState& w, const exec::Src& s, uint32_t l) {
  return s.per_lane() ? m.lanes(w, s)[l] : m.uniform(w, s);
}

isa::Event word_check(uint32_t addr, size_t bytes) {
  if (addr % 4) return isa::Event::MemMisaligned;
  if (uint64_t{addr} + 4 > bytes) return isa::Event::MemOutOfBounds;
  return isa::Event::None;
}

uint32_t rmw(Machine& m, WarpState& w, const Insn& in, uint32_t addr, uint32_t a, uint32_t b) {
  const AtomOps& ops = kAtomOps[static_cast<size_t>(in.op)];
  const auto& mem = m.space_bytes(w, in.space);
  uint32_t old = 0;
  for (uint32_t i = 0; i < 4; ++i) old |= uint32_t{mem[addr + i]} << (8 * i);
  const uint32_t now = ops.apply(old, a, b);
  if (now != old) m.store(w, in.space, addr, now, 4);
  return ops.result(old, now);
}

// A warp-wide atomic: lane0 = true acts for lane 0 whether or not it is active;
// all_lanes = true writes the result to inactive lanes too.
template <bool Lane0, bool AllLanes>
Flow watom_faulty(Machine& m, WarpState& w, const Insn& in) {
  if (w.exec == 0) return Flow::Next;
  const uint32_t l = Lane0 ? 0 : static_cast<uint32_t>(std::countr_zero(w.exec));  // wrong if Lane0
  const uint32_t addr = operand(m, w, in.a, l) + in.offset;
  isa::Event e = word_check(addr, m.space_bytes(w, in.space).size());
  if (e != isa::Event::None) return m.raise(w, e, static_cast<int32_t>(l), addr, in.space);
  const uint32_t r = rmw(m, w, in, addr, operand(m, w, in.b, l), operand(m, w, in.c, l));
  uint32_t* d = m.vreg(w, in.dst);
  for (uint32_t k = 0; k < m.wave(); ++k)
    if (AllLanes || ((w.exec >> k) & 1)) d[k] = r;  // wrong if AllLanes
  return Flow::Next;
}

// A per-lane atomic whose lanes act in descending order (wrong).
Flow atom_descending(Machine& m, WarpState& w, const Insn& in) {
  const size_t bytes = m.space_bytes(w, in.space).size();
  for (uint32_t l = 0; l < m.wave(); ++l) {
    if (!((w.exec >> l) & 1)) continue;
    const uint32_t addr = operand(m, w, in.a, l) + in.offset;
    isa::Event e = word_check(addr, bytes);
    if (e != isa::Event::None) return m.raise(w, e, static_cast<int32_t>(l), addr, in.space);
  }
  uint32_t r[isa::kMaxWave];
  for (int l = static_cast<int>(m.wave()) - 1; l >= 0; --l) {
    if (!((w.exec >> l) & 1)) continue;
    const auto u = static_cast<uint32_t>(l);
    r[u] = rmw(m, w, in, operand(m, w, in.a, u) + in.offset, operand(m, w, in.b, u),
               operand(m, w, in.c, u));
  }
  uint32_t* d = m.vreg(w, in.dst);
  for (uint32_t l = 0; l < m.wave(); ++l)
    if ((w.exec >> l) & 1) d[l] = r[l];
  return Flow::Next;
}

// ---- trap handlers (spec/trap.md) ------------------------------------------------
// These faults wrap the reference's own handler for the instruction (the one the
// predecoder chose, exec::select_handler) and change what it did, so they need no
// fault switch in the interpreter. Each is a plausible bug of a real trap unit.

Flow reference(Machine& m, WarpState& w, const Insn& in) {
  return exec::select_handler(in)(m, w, in);
}

bool reads_special(const Insn& in, isa::Special s) {
  for (const exec::Src* src : {&in.a, &in.b, &in.c})
    if (src->kind == exec::SrcKind::Special && src->index == static_cast<uint32_t>(s)) return true;
  return false;
}

// esr-bystander: %esr reads the core's ESR to every warp in handler mode, not only
// to TGID (the per-warp virtualisation of trap.esr is missing). The instruction
// runs with the core's TGID set to the executing warp, restored afterwards (so an
// instruction that also reads %tgid or %gesr, rare, sees those as TGID's too).
Flow esr_bystander(Machine& m, WarpState& w, const Insn& in) {
  if (!w.in_handler) return reference(m, w, in);
  const uint32_t g = m.warp_id(w);
  const uint32_t core = m.trap().core_of(g);
  const uint32_t tgid = m.state().trap.cores[core].tgid;
  m.mutable_state().trap.cores[core].tgid = g;
  const Flow f = reference(m, w, in);
  m.mutable_state().trap.cores[core].tgid = tgid;
  return f;
}

// barrier-count-kept: entry unwinds the warps waiting at a barrier (they become
// ready on their `bar`) but does not reset the workgroups' arrival counts, so the
// unwound warps are counted twice when they execute `bar` again (trap.entry step 3).
// Between two steps only an entry changes an arrival count (a `bar` changes it
// inside its own step), so every instruction is wrapped: it puts back the counts
// seen after the previous step of the same launch before running.
struct ArrivalMemo {
  const Machine* machine = nullptr;
  uint64_t steps = 0;  // Machine::steps() during the step that recorded `counts`
  std::vector<exec::BarrierState> counts;
};
thread_local ArrivalMemo arrival_memo;

Flow barrier_count_kept(Machine& m, WarpState& w, const Insn& in) {
  auto& bars = m.mutable_state().barriers;
  ArrivalMemo& memo = arrival_memo;
  if (memo.machine == &m && memo.steps + 1 == m.steps() && memo.counts.size() == bars.size())
    bars = memo.counts;  // undo the reset of any entry since the previous step
  const Flow f = reference(m, w, in);
  memo.machine = &m;
  memo.steps = m.steps();
  memo.counts.assign(bars.begin(), bars.end());
  return f;
}

// syscall-skip (Delta = 1), syscall-pc-same (Delta = -1): the frame's resume PC of
// a system call is off by one: the sys's PC + 2 (the next instruction is skipped)
// or the sys's own PC (the call is made again, for ever). The entry computes the
// resume PC from the warp's pc after the handler returns; the event itself (its
// PC, when no handler is installed) was recorded by raise() before the change,
// and the change is made only when the core enters (a handler is installed and
// the warp has room for its frame), so nothing else sees it.
template <int Delta>
Flow sys_resume_off(Machine& m, WarpState& w, const Insn& in) {
  const Flow f = reference(m, w, in);
  if (f == Flow::Event && !w.in_handler && w.sp >= exec::TrapUnit::kFrameBytes &&
      m.state().trap.cores[m.trap().core_of(m.warp_id(w))].tba_valid)
    w.pc += static_cast<uint32_t>(Delta);
  return f;
}

// frame-exec-live: at the join a resuming warp's exec becomes its live lanes
// instead of the frame's exec words AND live (trap.resume): the lanes that were
// inactive when the event came (or that the handler removed from the frame) run.
Flow join_exec_live(Machine& m, WarpState& w, const Insn& in) {
  const uint32_t core = m.trap().core_of(m.warp_id(w));
  auto& warps = m.mutable_state().warps;
  std::vector<uint8_t> in_handler(warps.size());
  for (size_t g = 0; g < warps.size(); ++g) in_handler[g] = warps[g].in_handler;
  const Flow f = reference(m, w, in);
  for (size_t g = 0; g < warps.size(); ++g)
    if (in_handler[g] && !warps[g].in_handler && m.trap().core_of(static_cast<uint32_t>(g)) == core)
      warps[g].exec = warps[g].live;
  return f;
}

// tclear-core-only: tclear clears the core's ESR but not the core's view of the
// global ESR (trap.clear, trap.gesr): %gesr keeps reading the host's cause word.
Flow tclear_core_only(Machine& m, WarpState& w, const Insn& in) {
  auto& st = m.mutable_state();
  const uint32_t global_esr = st.trap.global_esr;
  const uint64_t gesr_cores = st.trap.gesr_cores;
  const Flow f = reference(m, w, in);
  st.trap.global_esr = global_esr;
  st.trap.gesr_cores = gesr_cores;
  return f;
}

// vcall-depth-unchecked: vcall calls through the bound table even when the PC
// stack already holds call_depth entries, instead of raising call_overflow
// (trap.vector: as call would, branch.call). Every other case is the reference's.
Flow vcall_depth_unchecked(Machine& m, WarpState& w, const Insn& in) {
  const int32_t t = m.state().trap.vtable;
  if (w.in_handler || t < 0 || w.pc_stack.size() < m.config().call_depth)
    return reference(m, w, in);
  const std::vector<uint32_t>& table = m.program().vtables[static_cast<size_t>(t)];
  const uint32_t a = m.uniform(w, in.a);
  if (a >= table.size()) return reference(m, w, in);
  w.pc_stack.push_back(w.pc + 1);  // wrong: past the PC stack's depth
  w.pc = table[a];
  return Flow::Jump;
}

// frame-sp-after-push: the frame's word 24 reads as sp after the push instead of
// before it (trap.frame): frame.ld of offset 24 gives 64 less.
Flow frame_sp_after_push(Machine& m, WarpState& w, const Insn& in) {
  const Flow f = reference(m, w, in);
  if (f == Flow::Next && m.uniform(w, in.a) == 24) w.sregs[in.dst] -= exec::TrapUnit::kFrameBytes;
  return f;
}

// ---- sub-vector regions (spec/wave.md) ------------------------------------------
// These faults replace subv.begin and subv.end (empty-part-not-skipped), wrap them
// to follow which pass a warp is in (scalar-once-per-region), or change the copy
// of the program (shared-private); the window itself is the reference's.

// empty-part-not-skipped: a region entered with exec not 0 runs one pass for
// every part, from part 0 up, whether or not the part holds a lane of the entry
// exec (wave.enter, wave.exit, wave.union): a part with no lane runs its pass
// with exec 0. A region entered with exec 0 is still skipped (wave.skip).
Flow subv_begin_all_parts(Machine& m, WarpState& w, const Insn& in) {
  if (w.mode != exec::WaveMode::Normal || w.in_handler || w.exec == 0) return reference(m, w, in);
  w.region_pc = w.pc + 1;
  w.region_other = w.exec & ~m.window().part_mask(0);
  w.exec &= m.window().part_mask(0);  // wrong: may be 0
  w.mode = exec::WaveMode::SubVector;
  w.part = 0;
  return Flow::Next;
}

Flow subv_end_all_parts(Machine& m, WarpState& w, const Insn& in) {
  if (w.mode != exec::WaveMode::SubVector || w.part + 1u >= m.window().parts())
    return reference(m, w, in);
  const uint8_t q = static_cast<uint8_t>(w.part + 1);  // wrong: the next part, empty or not
  const uint64_t all = w.region_other | w.exec;
  w.exec = w.region_other & m.window().part_mask(q);
  w.region_other = all & ~m.window().part_mask(q);
  w.part = q;
  w.pc = w.region_pc;
  return Flow::Jump;
}

// scalar-once-per-region: scalar-form ALU instructions and scalar-form loads (an
// `s` destination: alu.form.scalar, mem.load.scalar) run only in the first pass
// of a region; in every later pass they do nothing (wave.scalar says once per
// pass). Which pass a warp is in is not machine state, so subv.begin and
// subv.end are wrapped to record, per warp, whether a later pass has started.
// A warp in sub-vector mode has executed its subv.begin in the current machine,
// which clears its flag, so a flag left by an earlier launch is never read.
struct PassMemo {
  const Machine* machine = nullptr;
  std::vector<uint8_t> later;  // per warp: a pass after the region's first has started
};
thread_local PassMemo pass_memo;

std::vector<uint8_t>& later_passes(const Machine& m) {
  PassMemo& memo = pass_memo;
  if (memo.machine != &m) {
    memo.machine = &m;
    memo.later.clear();
  }
  memo.later.resize(m.state().warps.size());
  return memo.later;
}

Flow subv_begin_memo(Machine& m, WarpState& w, const Insn& in) {
  const Flow f = reference(m, w, in);
  later_passes(m)[m.warp_id(w)] = 0;
  return f;
}

Flow subv_end_memo(Machine& m, WarpState& w, const Insn& in) {
  const Flow f = reference(m, w, in);
  if (f == Flow::Jump && w.mode == exec::WaveMode::SubVector) later_passes(m)[m.warp_id(w)] = 1;
  return f;
}

Flow scalar_first_pass_only(Machine& m, WarpState& w, const Insn& in) {
  if (w.mode == exec::WaveMode::SubVector && later_passes(m)[m.warp_id(w)])
    return Flow::Next;  // wrong: skipped in this pass
  return reference(m, w, in);
}

bool scalar_form(const Insn& in) {
  const isa::Family f = isa::info(in.op).family;
  return in.dst_kind == exec::DstKind::S &&
         (f == isa::Family::Unary || f == isa::Family::Binary || f == isa::Family::Load);
}

// Replaces the handlers the fault affects; false if the fault is unknown.
bool patch(const std::string& fault, exec::Program& p) {
  using isa::Op;
  for (auto& in : p.insns) {
    if (fault == "invert-all" && in.op == Op::Invert)
      in.fn = &invert_all;
    else if (fault == "cbr-empty-taken" && in.op == Op::Cbr)
      in.fn = &cbr_empty_taken;
    else if (fault == "readlane-off-by-one" && in.op == Op::ReadLane)
      in.fn = &readlane_off_by_one;
    else if (fault == "barrier-early" && in.op == Op::Bar)
      in.fn = &barrier_early;
    else if (fault == "mask-overflow-late" && in.op == Op::Push)
      in.fn = &push_late;
    else if (fault == "mask-overflow-late" && in.op == Op::LPush)
      in.fn = &lpush_late;
    else if (fault == "shfl-stale" && (in.op == Op::Shfl || in.op == Op::ShflXor))
      in.fn = &shfl_stale;
    else if (fault == "store-lowest-wins" && in.op == Op::St)
      in.fn = &store_lowest_wins<4>;
    else if (fault == "store-lowest-wins" && in.op == Op::St16)
      in.fn = &store_lowest_wins<2>;
    else if (fault == "store-lowest-wins" && in.op == Op::St8)
      in.fn = &store_lowest_wins<1>;
    else if (fault == "atom-broadcast-inactive" && isa::info(in.op).family == isa::Family::AtomWarp)
      in.fn = &watom_faulty<false, true>;
    else if (fault == "atom-warp-lane0" && isa::info(in.op).family == isa::Family::AtomWarp)
      in.fn = &watom_faulty<true, false>;
    else if (fault == "atom-lane-descending" && isa::info(in.op).family == isa::Family::AtomLane)
      in.fn = &atom_descending;
    else if (fault == "esr-bystander" && reads_special(in, isa::Special::Esr))
      in.fn = &esr_bystander;
    else if (fault == "barrier-count-kept")
      in.fn = &barrier_count_kept;
    else if (fault == "syscall-skip" && in.op == Op::Sys)
      in.fn = &sys_resume_off<1>;
    else if (fault == "syscall-pc-same" && in.op == Op::Sys)
      in.fn = &sys_resume_off<-1>;
    else if (fault == "frame-exec-live" && (in.op == Op::TRet || in.op == Op::TPause))
      in.fn = &join_exec_live;
    else if (fault == "tclear-core-only" && in.op == Op::TClear)
      in.fn = &tclear_core_only;
    else if (fault == "vcall-depth-unchecked" && in.op == Op::VCall)
      in.fn = &vcall_depth_unchecked;
    else if (fault == "frame-sp-after-push" && in.op == Op::FrameLd)
      in.fn = &frame_sp_after_push;
    else if (fault == "pause-as-return" && in.op == Op::TPause) {
      // trap.pause, trap.join: tpause does what tret does (the warp waits for the
      // join and resumes with the others, not for the host).
      Insn tmp = in;
      tmp.op = Op::TRet;
      in.fn = exec::select_handler(tmp);
    } else if (fault == "empty-part-not-skipped" && in.op == Op::SubvBegin)
      in.fn = &subv_begin_all_parts;
    else if (fault == "empty-part-not-skipped" && in.op == Op::SubvEnd)
      in.fn = &subv_end_all_parts;
    else if (fault == "scalar-once-per-region" && in.op == Op::SubvBegin)
      in.fn = &subv_begin_memo;
    else if (fault == "scalar-once-per-region" && in.op == Op::SubvEnd)
      in.fn = &subv_end_memo;
    else if (fault == "scalar-once-per-region" && scalar_form(in))
      in.fn = &scalar_first_pass_only;
    else if (fault == "cmp-unsigned") {
      static const std::map<Op, Op> swap = {{Op::CmpLt, Op::CmpLtU},
                                            {Op::CmpLe, Op::CmpLeU},
                                            {Op::CmpGt, Op::CmpGtU},
                                            {Op::CmpGe, Op::CmpGeU}};
      auto it = swap.find(in.op);
      if (it != swap.end()) {
        Insn tmp = in;
        tmp.op = it->second;
        in.fn = exec::select_handler(tmp);
      }
    }
  }
  // shared-private: the copy of the program declares no shared register
  // (.vshared ignored), so in sub-vector mode lane p*simd + i of a register the
  // program shares uses its own storage, as in normal mode (wave.shared).
  if (fault == "shared-private") p.shared_base = p.vregs_alloc;
  static const char* known[] = {"none",
                                "invert-all",
                                "cbr-empty-taken",
                                "readlane-off-by-one",
                                "cmp-unsigned",
                                "barrier-early",
                                "mask-overflow-late",
                                "shfl-stale",
                                "store-lowest-wins",
                                "atom-broadcast-inactive",
                                "atom-warp-lane0",
                                "atom-lane-descending",
                                "esr-bystander",
                                "barrier-count-kept",
                                "syscall-skip",
                                "syscall-pc-same",
                                "frame-exec-live",
                                "tclear-core-only",
                                "pause-as-return",
                                "vcall-depth-unchecked",
                                "frame-sp-after-push",
                                "empty-part-not-skipped",
                                "shared-private",
                                "scalar-once-per-region",
                                "preempt-mstack-lost",
                                "preempt-cursor-lost",
                                "preempt-slm-not-restored",
                                "preempt-part-restart",
                                "preempt-barrier-unwound",
                                "crash",
                                "crash-every-5",
                                "exit-after-answer",
                                "hang",
                                "flood",
                                "garbage",
                                "random-fail"};
  for (const char* k : known)
    if (fault == k) return true;
  return false;
}

// random-fail: splitmix64, so that a seed gives the same sequence on every build.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// random-fail: the outcome made wrong in one place: the first element of the
// first output buffer that has one is one more (as its type wraps), else the
// event's pc is one more, else the status changes (completed becomes step_limit,
// anything else completed).
void make_wrong(model::Outcome& o) {
  for (auto& b : o.buffers)
    if (!b.values.empty()) {
      b.values[0] = model::reduce(b.type, b.values[0] + 1);
      return;
    }
  if (o.event) {
    ++o.event->pc;
    return;
  }
  o.status = o.status == "completed" ? "step_limit" : "completed";
}

}  // namespace

int main(int argc, char** argv) {
  std::string fault = "none";
  // random-fail: the seed of the sequence and the chance that a request is answered wrongly.
  uint64_t seed = 0;
  double rate = 0.5;
  bool random_options = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    char* end = nullptr;
    if (a == "--fault" && i + 1 < argc) {
      fault = argv[++i];
    } else if (a.rfind("--fault=", 0) == 0) {
      fault = a.substr(8);
    } else if (a == "--fail-seed" && i + 1 < argc) {
      const std::string v = argv[++i];
      errno = 0;
      seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v[0] == '-' || *end || errno) {
        std::cerr << "simtspec-faulty: --fail-seed takes a number from 0 to 2^64 - 1\n";
        return 2;
      }
      random_options = true;
    } else if (a == "--fail-rate" && i + 1 < argc) {
      const std::string v = argv[++i];
      rate = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(rate >= 0 && rate <= 1)) {
        std::cerr << "simtspec-faulty: --fail-rate takes a number from 0 to 1\n";
        return 2;
      }
      random_options = true;
    } else {
      std::cerr << "usage: simtspec-faulty --fault NAME [--fail-seed S] [--fail-rate P] (see "
                   "runners/faulty/README.md)\n";
      return 2;
    }
  }
  if (random_options && fault != "random-fail") {
    std::cerr << "simtspec-faulty: --fail-seed and --fail-rate go with --fault random-fail\n";
    return 2;
  }
  uint64_t random_state = seed;
  exec::Program probe;
  if (!patch(fault, probe)) {
    std::cerr << "simtspec-faulty: unknown fault '" << fault << "'\n";
    return 2;
  }
  std::ios::sync_with_stdio(false);
  uint64_t requests = 0;
  if (fault == "exit-after-answer") {
    // Answers one request like the reference, then exits before reading another
    // (runner.lifecycle.restart: the harness finds it ended and starts a fresh one).
    std::string line;
    if (!std::getline(std::cin, line)) return 0;
    auto parsed = simt::runners::parse_request_line(line);
    if (auto* r = std::get_if<simt::runners::ServerRequest>(&parsed))
      if (r->op == simt::runners::ServerRequest::Op::Run)
        std::cout << simt::json::dump(
                         simt::runners::response_json(simt::runners::run_reference(r->req), r->id))
                  << std::endl;
    std::cerr << "simtspec-faulty: exiting after one answer\n";
    return 0;
  }
  simt::runners::serve(std::cin, std::cout, [&](const simt::runners::RunRequest& req) {
    ++requests;
    if (fault == "crash" || (fault == "crash-every-5" && requests % 5 == 0)) {
      std::cerr << (fault == "crash" ? "simtspec-faulty: crashing on purpose\n"
                                     : "simtspec-faulty: heap corrupted\n");
      std::abort();
    }
    if (fault == "flood") {  // one response line that never ends (runner.toml max_response)
      std::cerr << "simtspec-faulty: flooding on purpose\n";
      const std::string zeros(1 << 16, '0');
      for (;;) std::cout.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    }
    if (fault == "hang") {
      std::cerr << "simtspec-faulty: hanging on purpose\n";
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    if (fault == "garbage") {
      std::cout << "this is not JSON {" << std::endl;
      return simt::runners::RunResult{};
    }
    if (fault == "random-fail") {
      // One draw per request, whatever its answer, so that the sequence of answers
      // depends only on the seed and the sequence of requests.
      const bool wrong = static_cast<double>(next_random(random_state) >> 11) * 0x1.0p-53 < rate;
      auto r = simt::runners::run_reference(req);
      if (wrong && r.kind == simt::runners::RunResult::Kind::Outcome) make_wrong(r.outcome);
      return r;
    }
    auto loaded = simt::runners::load_request(req);
    if (auto* rejected = std::get_if<simt::runners::RunResult>(&loaded)) return *rejected;
    exec::Program p = *std::get<0>(loaded);
    patch(fault, p);
    // The preemption faults (spec/preempt.md): the save or the restore goes wrong.
    simt::runners::ImageRequest images = simt::runners::image_request(req);
    images.faults.mask_stack_not_saved = fault == "preempt-mstack-lost";
    images.faults.cursor_not_saved = fault == "preempt-cursor-lost";
    images.faults.slm_not_restored = fault == "preempt-slm-not-restored";
    images.faults.part_restarts = fault == "preempt-part-restart";
    images.faults.barrier_unwound = fault == "preempt-barrier-unwound";
    return simt::runners::run_loaded(std::make_shared<const exec::Program>(std::move(p)), req.trace,
                                     0, images);
  });
  return 0;
}
