#include "exec/livelock.h"

namespace simt::exec {

// exec.livelock: cheap control fields are compared before the registers and
// memory; the registers of the warp that just stepped (a loop's counter usually
// differs) before the whole state.
bool Livelock::same(const MachineState& now, uint32_t stepped) const {
  const MachineState& t = d_.tortoise;
  bool same = now.sched == t.sched && now.mem.hash == t.mem.hash && now.barriers == t.barriers;
  for (size_t i = 0; same && i < now.warps.size(); ++i) {
    const WarpState& a = now.warps[i];
    const WarpState& b = t.warps[i];
    same = a.pc == b.pc && a.exec == b.exec && a.live == b.live && a.status == b.status &&
           a.mask_stack.size() == b.mask_stack.size() && a.pc_stack.size() == b.pc_stack.size();
  }
  const WarpState& a = now.warps[stepped];
  const WarpState& b = t.warps[stepped];
  return same && a.sregs == b.sregs && a.vregs == b.vregs && a.preds == b.preds && now == t;
}

}  // namespace simt::exec
