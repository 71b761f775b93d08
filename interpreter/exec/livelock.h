// The livelock detector (spec/execution.md, exec.livelock): Brent's cycle
// detection over the whole MachineState. The state after each step is compared
// with the state saved after step 2^k - 1 of the current run; an equal state
// means the deterministic machine repeats forever.
#pragma once

#include <cstdint>

#include "exec/state.h"

namespace simt::exec {

// The detector's state: part of a snapshot, so that a restored machine detects a
// livelock at the same step as the original.
struct LivelockDetector {
  MachineState tortoise;
  uint64_t power = 1;
  uint64_t lam = 0;
  bool operator==(const LivelockDetector&) const = default;
};

class Livelock {
 public:
  // Whether the launch can be checked at all: the random policy's generator state
  // is machine state that never recurs in practice, so detection is off there.
  void init(bool enabled, const MachineState& start) {
    enabled_ = enabled;
    restart(start);
  }
  // trap.state: while a host action remains, a repeated state does not prove a
  // livelock (the action may change what follows): detection waits for the
  // script's end, then starts afresh from the state at that boundary.
  void set_waiting(bool host_actions_remain) { active_ = enabled_ && !host_actions_remain; }
  void restart(const MachineState& now) {
    d_.tortoise = now;
    d_.power = 1;
    d_.lam = 0;
  }

  // After warp `wi` stepped (to `pc`): true when the state now equals the saved
  // one. The full comparison can only succeed when that warp is back at the PC it
  // had in the saved state: one comparison on most steps.
  bool repeats(const MachineState& now, uint32_t wi, uint32_t pc) const {
    return pc == d_.tortoise.warps[wi].pc && same(now, wi);
  }
  // Counts the step: the state after step 2^k - 1 becomes the saved one.
  void tick(const MachineState& now) {
    if (++d_.lam == d_.power) {
      d_.tortoise = now;
      d_.power *= 2;
      d_.lam = 0;
    }
  }
  bool active() const { return active_; }

  const LivelockDetector& detector() const { return d_; }
  void set_detector(const LivelockDetector& d) { d_ = d; }

 private:
  bool same(const MachineState& now, uint32_t stepped) const;
  LivelockDetector d_;
  bool enabled_ = true;
  bool active_ = true;
};

}  // namespace simt::exec
