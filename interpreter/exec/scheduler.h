// The scheduler (spec/execution.md, exec.sched.*): which ready warp steps next.
// Its state (the round-robin cursor, the random generator) is SchedState, part of
// MachineState; the Scheduler holds only what the launch fixes.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/config.h"
#include "exec/state.h"

namespace simt::exec {

class Scheduler {
 public:
  void init(Policy policy, uint32_t nwarps) {
    policy_ = policy;
    nwarps_ = nwarps;
  }
  Policy policy() const { return policy_; }

  // The policy's choice among the warps `ok(i)` accepts, or -1 when it accepts
  // none. `warps` gives lowest_pc_first its PCs; random draws from s.rng only when
  // some warp is accepted (exec.sched.random).
  template <class Ok>
  int pick(SchedState& s, const WarpState* warps, Ok ok) const;

  // After warp `wi` stepped: round_robin considers the next warp first.
  void stepped(SchedState& s, uint32_t wi) const {
    if (policy_ == Policy::RoundRobin) {
      const uint32_t next = wi + 1;
      s.cursor = next & (0u - static_cast<uint32_t>(next != nwarps_));  // 0 after the last
    }
  }

 private:
  static uint64_t splitmix64(uint64_t& state) {  // exec.sched.random
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  Policy policy_ = Policy::RoundRobin;
  uint32_t nwarps_ = 0;
};

template <class Ok>
int Scheduler::pick(SchedState& s, const WarpState* warps, Ok ok) const {
  switch (policy_) {
    case Policy::RoundRobin:  // exec.sched.round_robin
      for (uint32_t i = 0, c = s.cursor; i < nwarps_; ++i, c = (c + 1 == nwarps_ ? 0 : c + 1))
        if (ok(c)) return static_cast<int>(c);
      return -1;
    case Policy::LowestPcFirst: {  // exec.sched.lowest_pc_first
      int best = -1;
      for (uint32_t i = 0; i < nwarps_; ++i)
        if (ok(i) && (best < 0 || warps[i].pc < warps[static_cast<size_t>(best)].pc))
          best = static_cast<int>(i);
      return best;
    }
    case Policy::OldestFirst:  // exec.sched.oldest_first
      for (uint32_t i = 0; i < nwarps_; ++i)
        if (ok(i)) return static_cast<int>(i);
      return -1;
    case Policy::Random: {  // exec.sched.random
      uint32_t ready = 0;
      for (uint32_t i = 0; i < nwarps_; ++i) ready += ok(i);
      // A step draws; with no warp ready there is no step (the launch ends, or
      // the host acts at once, trap.host), and no draw.
      if (ready == 0) return -1;
      uint64_t r = splitmix64(s.rng);
      uint32_t k = static_cast<uint32_t>(r % ready);
      for (uint32_t i = 0; i < nwarps_; ++i)
        if (ok(i) && k-- == 0) return static_cast<int>(i);
      return -1;
    }
  }
  return -1;
}

}  // namespace simt::exec
