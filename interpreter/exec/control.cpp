// The branch unit and barrier (spec/branch.md, spec/barrier.md). Each function is
// one row of the PC-update table (branch.pc.table) plus its mask-stack effect.
#include "exec/machine.h"
#include "exec/semantics.h"

namespace simt::exec::sem {
namespace {

inline uint64_t pred(const WarpState& w, const Insn& in) {
  uint64_t v = w.preds[in.pa];
  return in.na ? ~v : v;
}

// Index of the innermost loop entry, or -1 (branch.loop.find).
inline int innermost_loop(const WarpState& w) {
  for (int i = static_cast<int>(w.mask_stack.size()) - 1; i >= 0; --i)
    if (w.mask_stack[static_cast<size_t>(i)].kind == MaskKind::Loop) return i;
  return -1;
}

// Removes lanes `m` from exec and from every entry above the loop entry `j`.
inline void leave(WarpState& w, int j, uint64_t m) {
  w.exec &= ~m;
  for (size_t i = static_cast<size_t>(j) + 1; i < w.mask_stack.size(); ++i) {
    w.mask_stack[i].saved &= ~m;
    w.mask_stack[i].other &= ~m;
  }
}

}  // namespace

// branch.cbr: taken only when at least one lane is active and every active lane
// satisfies P (branch.cbr.uniform); otherwise, including with no active lane
// (branch.cbr.empty), the warp falls through.
Flow Cbr::exec(Machine&, WarpState& w, const Insn& in) {
  uint64_t p = pred(w, in) & w.exec;
  if (w.exec != 0 && p == w.exec) {
    w.pc = in.target;
    return Flow::Jump;
  }
  return Flow::Next;
}

Flow Jmp::exec(Machine&, WarpState& w, const Insn& in) {  // branch.jmp
  w.pc = in.target;
  return Flow::Jump;
}

Flow Call::exec(Machine& m, WarpState& w, const Insn& in) {  // branch.call
  if (w.pc_stack.size() >= m.config().call_depth) return m.raise(w, isa::Event::CallOverflow);
  w.pc_stack.push_back(w.pc + 1);
  w.pc = in.target;
  return Flow::Jump;
}

Flow Ret::exec(Machine& m, WarpState& w, const Insn&) {  // branch.ret
  if (w.pc_stack.empty()) return m.raise(w, isa::Event::CallUnderflow);
  w.pc = w.pc_stack.back();
  w.pc_stack.pop_back();
  return Flow::Jump;
}

Flow Push::exec(Machine& m, WarpState& w, const Insn& in) {  // branch.push
  if (w.mask_stack.size() >= m.config().mask_depth) return m.raise(w, isa::Event::MaskOverflow);
  uint64_t p = pred(w, in);
  w.mask_stack.push_back({w.exec, w.exec & ~p, MaskKind::If});
  w.exec &= p;
  return Flow::Next;
}

Flow Invert::exec(Machine& m, WarpState& w, const Insn&) {  // branch.invert
  if (w.mask_stack.empty()) return m.raise(w, isa::Event::MaskUnderflow);
  MaskEntry& top = w.mask_stack.back();
  if (top.kind != MaskKind::If) return m.raise(w, isa::Event::MaskMismatch);
  std::swap(w.exec, top.other);
  w.exec &= m.window().mask();  // wave.exec
  return Flow::Next;
}

Flow Pop::exec(Machine& m, WarpState& w, const Insn&) {  // branch.pop
  if (w.mask_stack.empty()) return m.raise(w, isa::Event::MaskUnderflow);
  w.exec = w.mask_stack.back().saved & m.window().mask();  // wave.exec
  w.mask_stack.pop_back();
  return Flow::Next;
}

Flow LPush::exec(Machine& m, WarpState& w, const Insn&) {  // branch.lpush
  if (w.mask_stack.size() >= m.config().mask_depth) return m.raise(w, isa::Event::MaskOverflow);
  w.mask_stack.push_back({w.exec, 0, MaskKind::Loop});
  return Flow::Next;
}

Flow Brk::exec(Machine& m, WarpState& w, const Insn& in) {  // branch.brk
  int j = innermost_loop(w);
  if (j < 0) return m.raise(w, isa::Event::MaskMismatch);
  leave(w, j, pred(w, in) & w.exec);
  return Flow::Next;
}

Flow Cont::exec(Machine& m, WarpState& w, const Insn& in) {  // branch.cont
  int j = innermost_loop(w);
  if (j < 0) return m.raise(w, isa::Event::MaskMismatch);
  uint64_t lanes = pred(w, in) & w.exec;
  leave(w, j, lanes);
  w.mask_stack[static_cast<size_t>(j)].other |= lanes;
  return Flow::Next;
}

Flow LNext::exec(Machine& m, WarpState& w, const Insn&) {  // branch.lnext
  if (w.mask_stack.empty()) return m.raise(w, isa::Event::MaskUnderflow);
  MaskEntry& top = w.mask_stack.back();
  if (top.kind != MaskKind::Loop) return m.raise(w, isa::Event::MaskMismatch);
  w.exec |= top.other & m.window().mask();  // wave.exec
  top.other = 0;
  return Flow::Next;
}

// branch.exit: the active lanes retire for good: they leave exec, the live mask
// and every mask-stack entry. The warp ends when no live lane remains.
Flow Exit::exec(Machine& m, WarpState& w, const Insn&) {
  if (w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);  // trap.join
  uint64_t lanes = w.exec;
  w.live &= ~lanes;
  for (auto& e : w.mask_stack) {
    e.saved &= ~lanes;
    e.other &= ~lanes;
  }
  w.exec = 0;
  if (w.live == 0) m.warp_done(w);
  return Flow::Next;
}

Flow Nop::exec(Machine&, WarpState&, const Insn&) {
  return Flow::Next;
}  // branch.nop

Flow Bar::exec(Machine& m, WarpState& w, const Insn&) {
  return m.barrier_arrive(w);
}  // bar.arrive

}  // namespace simt::exec::sem
