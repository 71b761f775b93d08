// Sub-vector looping (spec/wave.md): the mode-enter and mode-exit instructions.
// Everything else a region does is an ordinary instruction acting on the window
// the step loop sets from the warp's mode and part (wave.window).
#include "exec/machine.h"
#include "exec/semantics.h"

namespace simt::exec::sem {
namespace {

// The lowest part holding a lane of `lanes` (lanes is not 0).
inline uint8_t first_part(const Machine& m, uint64_t lanes) {
  uint8_t p = 0;
  while ((lanes & m.window().part_mask(p)) == 0) ++p;
  return p;
}

}  // namespace

// wave.enter: exec 0 skips the region (wave.skip); otherwise the lowest non-empty
// part starts its pass at the next instruction and the other parts' lanes are
// kept in the region state.
Flow SubvBegin::exec(Machine& m, WarpState& w, const Insn& in) {
  // wave.illegal: not inside a pass, not in handler mode (a handler that moved its
  // resume PC, or handler code run without the flow checks).
  if (w.mode != WaveMode::Normal || w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);
  if (w.exec == 0) {
    w.pc = in.target;
    return Flow::Jump;
  }
  const uint8_t p = first_part(m, w.exec);
  w.region_pc = w.pc + 1;
  w.region_other = w.exec & ~m.window().part_mask(p);
  w.exec &= m.window().part_mask(p);
  w.mode = WaveMode::SubVector;
  w.part = p;
  return Flow::Next;
}

// wave.exit: the part's pass is over; its exec joins the region state. The next
// part above it with a lane to run starts its pass at the region's start; when
// none is left, normal mode resumes after this instruction with exec = the union
// of what every part left.
Flow SubvEnd::exec(Machine& m, WarpState& w, const Insn&) {
  // wave.illegal: in normal mode there is no pass to end.
  if (w.mode != WaveMode::SubVector) return m.raise(w, isa::Event::IllegalInstruction);
  uint64_t done_parts = 0;  // lanes of the parts up to the current one
  for (uint32_t p = 0; p <= w.part; ++p) done_parts |= m.window().part_mask(p);
  const uint64_t all = w.region_other | w.exec;
  const uint64_t pending = w.region_other & ~done_parts;
  if (pending != 0) {
    const uint8_t q = first_part(m, pending);
    w.exec = pending & m.window().part_mask(q);
    w.region_other = all & ~m.window().part_mask(q);
    w.part = q;
    w.pc = w.region_pc;
    return Flow::Jump;
  }
  w.exec = all;
  w.mode = WaveMode::Normal;
  w.part = 0;
  w.region_pc = 0;
  w.region_other = 0;
  return Flow::Next;
}

}  // namespace simt::exec::sem
