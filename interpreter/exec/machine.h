// The reference executor (spec/execution.md). A Machine runs one launch of one
// predecoded program: each step the scheduler picks a ready warp and the warp
// executes one instruction for its active lanes. It is the composition of its
// units and the step loop:
//   scheduler.h   which ready warp steps (exec.sched.*)
//   window.h      the sub-vector window: the lanes and registers an instruction
//                 acts on (wave.window)
//   trap_unit.h   trap controllers, interrupts, single-step, the host script,
//                 handler entry, join and resume (spec/trap.md)
//   preempt.h     preemption: the save and restore, the system routine, the
//                 flows, the cores' physical SLM (spec/preempt.md)
//   livelock.h    Brent's cycle detection over the whole state (exec.livelock)
//   state.h       the whole state, one comparable value
//   outcome.h     what a launch ends with, and trace records
// It does no I/O: traces go to a caller-supplied sink, outcomes are values.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "exec/lanes.h"
#include "exec/livelock.h"
#include "exec/outcome.h"
#include "exec/preempt.h"
#include "exec/program.h"
#include "exec/scheduler.h"
#include "exec/state.h"
#include "exec/trap_unit.h"
#include "exec/window.h"

namespace simt::exec {

struct Snapshot {
  uint64_t program = 0;  // Program::fingerprint of the machine it was taken from
  MachineState state;
  uint64_t steps = 0;
  uint64_t lane_ops = 0;
  LivelockDetector detector;
  // exec.snapshot: a snapshot of a launch that has ended keeps its final status
  // (and event), so the restored machine has ended too.
  std::optional<Status> final;
  std::optional<EventInfo> event;
};

class Machine {
 public:
  explicit Machine(std::shared_ptr<const Program> program);
  // The units point into the machine: not copyable.
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // Runs until the launch ends; returns its outcome.
  Outcome run();
  // Runs at most `n` steps. Returns the final status once the launch has ended.
  std::optional<Status> advance(uint64_t n);
  std::optional<Status> step() { return advance(1); }

  Outcome outcome() const;
  uint64_t steps() const { return steps_; }
  const MachineState& state() const { return st_; }
  const Program& program() const { return *prog_; }
  const LaunchConfig& config() const { return prog_->config; }

  // exec.snapshot: full-state snapshot, restore, equality and hash at any
  // instruction boundary. Restore requires a machine built from the same program.
  Snapshot snapshot() const;
  bool restore(const Snapshot& s);
  uint64_t hash() const;  // hash of the MachineState (not of the step counter)

  // preempt.flow.c: the launch starts from a context image instead of at
  // state.init; call before the first step. A bad image changes nothing and is
  // returned (preempt.image.check).
  std::optional<ImageError> start_from_image(std::span<const uint8_t> image) {
    return preempt_.start_from(image);
  }
  // The image of the launch's last preemption (empty if none), and how many.
  const std::vector<uint8_t>& last_image() const { return preempt_.last_image(); }
  uint32_t preemptions() const { return preempt_.preemptions(); }
  // preempt.slm: the cores' physical SLM this launch runs on (shared with the
  // launches that run on the same machine, such as an intruder).
  const std::shared_ptr<Device>& device() const { return device_; }
  void set_device(std::shared_ptr<Device> d) { device_ = std::move(d); }

  void set_trace(TraceSink sink) {
    trace_ = std::move(sink);
    refresh();
  }

  // Direct access to the state, for tools that edit it between steps (debuggers,
  // the test-only faulty implementation). Instruction semantics never use it.
  MachineState& mutable_state() { return st_; }

  // ---- for the instruction semantics (dispatch.cpp, control.cpp, wave.cpp, trap.cpp)
  uint32_t wave() const { return wave_; }
  uint64_t full() const { return full_; }
  const Window& window() const { return win_; }
  TrapUnit& trap() { return trap_; }
  const TrapUnit& trap() const { return trap_; }
  PreemptUnit& preempt() { return preempt_; }
  // Vector register r as an array indexed by lane, through the window (wave.shared).
  uint32_t* vreg(WarpState& w, uint32_t r) { return w.vregs.data() + win_.offsets()[r]; }
  const uint32_t* lanes(WarpState& w, const Src& s) {
    return s.kind == SrcKind::VReg ? vreg(w, s.index) : lane_ids_.data();
  }
  uint32_t uniform(const WarpState& w, const Src& s) const {
    switch (s.kind) {
      case SrcKind::Imm:
        return s.imm;
      case SrcKind::SReg:
        return w.sregs[s.index];
      case SrcKind::Special:
        return special(w, static_cast<isa::Special>(s.index));
      case SrcKind::None:
      case SrcKind::VReg:
      case SrcKind::LaneId:
        return 0;
    }
    return 0;
  }
  uint32_t special(const WarpState& w, isa::Special s) const;
  void write_special(WarpState& w, isa::Special s, uint32_t v);
  uint32_t warp_id(const WarpState& w) const {
    return static_cast<uint32_t>(&w - st_.warps.data());
  }
  // exec.form: w.exec as one word per lane (expand_mask: all ones for an active
  // lane), for blending results into registers, while the stepping warp's exec
  // is not its whole window. The step loop brings the words up to date from
  // exec's value before such a step, however exec last changed (instructions,
  // mutable_state(), restore()); an instruction that changes exec does not use
  // them afterwards.
  const uint32_t* exec_words([[maybe_unused]] const WarpState& w) const {
    assert(step_words_ == exec_words_.data() + size_t{warp_id(w)} * wave_);
    assert(exec_memo_[warp_id(w)].mask == w.exec);
    return step_words_;
  }
  // Records an event for the current instruction; the handler then returns Event.
  Flow raise(const WarpState& w, isa::Event e, int32_t lane = -1, uint32_t addr = 0,
             uint16_t space = kSpaceNone);
  Flow raise_with_payload(const WarpState& w, isa::Event e, uint32_t payload) {
    Flow f = raise(w, e);
    event_->payload = payload;
    return f;
  }
  // Memory: the bytes of a space as seen by warp w (kSpaceSlm: its workgroup's SLM).
  std::vector<uint8_t>& space_bytes(const WarpState& w, uint16_t space);
  void store(const WarpState& w, uint16_t space, uint32_t addr, uint32_t value, uint32_t size);
  // bar.arrive; returns Jump (the PC is managed by the barrier).
  Flow barrier_arrive(WarpState& w);
  // branch.exit bookkeeping once a warp has no live lane left.
  void warp_done(WarpState& w) {
    w.status = WarpStatus::Done;
    ++done_count_;
    attend_at_ = 0;  // the step loop checks for the launch's end
  }

 private:
  friend class TrapUnit;
  friend class PreemptUnit;
  // After a unit replaced parts of the state (preempt.restore): what the machine
  // derives from it (done count, memory hash, the units' flags) follows.
  void state_changed();
  // exec.livelock: detection starts afresh from the state now, once no host
  // action remains (preempt.flow.c).
  void restart_livelock();
  void rehash_memory();
  void init_state();
  template <bool One>
  std::optional<Status> steps_loop(uint64_t n, uint64_t& k);
  int pick();
  int pick_stepping();
  // exec.step: the work before a step that is not the instruction's; returns the
  // status that ends the launch.
  std::optional<Status> attend();
  // Recomputes the step loop's derived flags and attend_at_ from the units.
  void refresh();
  uint64_t attend_threshold() const {
    return done_count_ == nwarps_ ? 0 : std::min(prog_->config.max_steps, trap_.due());
  }
  std::optional<Status> finish(Status s) {
    final_ = s;
    return s;
  }
  Status no_ready_status() const;  // exec.status.deadlock, trap.paused
  uint64_t mem_word_hash(uint32_t space_id, uint32_t word, uint32_t value) const;
  uint32_t space_id(const WarpState& w, uint16_t space) const;
  void refill_exec_words(uint32_t warp, uint64_t exec);

  std::shared_ptr<const Program> prog_;
  const Insn* insns_ = nullptr;
  uint32_t size_ = 0;
  uint32_t wave_ = 0;
  uint64_t full_ = 0;
  uint32_t nwarps_ = 0;
  std::vector<uint32_t> lane_ids_;
  MachineState st_;
  uint64_t steps_ = 0;
  uint64_t lane_ops_ = 0;
  uint32_t done_count_ = 0;
  // exec.step: the first step count at which attend() has work: the step limit,
  // the trap unit's next boundary with work, 0 once every warp is done. One
  // comparison per step stands for all of them.
  uint64_t attend_at_ = 0;
  bool single_ = false;    // one warp, a policy that does not draw, no single-step, no trace
  bool one_warp_ = false;  // one warp, and a policy that does not draw
  Scheduler sched_;
  Window win_;
  TrapUnit trap_{*this};
  PreemptUnit preempt_{*this};
  std::shared_ptr<Device> device_ = std::make_shared<Device>();
  Livelock live_;
  // exec.form: per warp, the partial exec last expanded and its number of lanes,
  // and (wave words per warp) its expansion: a cache of w.exec, not machine state.
  struct ExecMemo {
    uint64_t mask = 0;
    uint32_t lanes = 0;
  };
  std::vector<ExecMemo> exec_memo_;
  std::vector<uint32_t> exec_words_;
  const uint32_t* step_words_ = nullptr;  // the stepping warp's exec words
  std::optional<Status> final_;
  std::optional<EventInfo> event_;
  uint16_t event_space_ = kSpaceNone;  // the raised memory event's space id (trap.frame)
  TraceSink trace_;
};

}  // namespace simt::exec
