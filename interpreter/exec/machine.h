// The reference executor (spec/execution.md). A Machine runs one launch of one
// predecoded program: each step the scheduler picks a ready warp and the warp
// executes one instruction for its active lanes. It does no I/O: traces go to a
// caller-supplied sink, outcomes are values.
#pragma once

#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/lanes.h"
#include "exec/program.h"
#include "exec/state.h"

namespace simt::exec {

// Outcome statuses (exec.status.*).
enum class Status : uint8_t { Completed, Trapped, Paused, Deadlock, Livelock, StepLimit };
inline constexpr Status kAllStatuses[] = {Status::Completed, Status::Trapped,  Status::Paused,
                                          Status::Deadlock,  Status::Livelock, Status::StepLimit};
std::string_view status_name(Status s);
std::optional<Status> find_status(std::string_view name);

// A machine event with its location (spec/events.md).
struct EventInfo {
  isa::Event code = isa::Event::None;
  uint32_t warp = 0;  // global warp id
  uint32_t pc = 0;
  int32_t lane = -1;                    // lowest faulting lane, or -1 if the event is not per-lane
  uint32_t addr = 0;                    // memory events: the byte address
  std::string space;                    // memory events: buffer name or "slm"
  uint32_t payload = 0;                 // syscall, interrupt: the code (trap.cause)
  isa::Event inner = isa::Event::None;  // double_fault: the event raised in the handler
  bool operator==(const EventInfo&) const = default;
};

struct BufferOut {
  std::string name;
  syntax::ElemType type = syntax::ElemType::U32;
  std::vector<uint8_t> bytes;
  bool operator==(const BufferOut&) const = default;
};

struct Outcome {
  Status status = Status::Completed;
  std::optional<EventInfo> event;  // Trapped only
  uint64_t steps = 0;              // instructions committed
  uint64_t lane_ops = 0;           // sum over committed instructions of active lanes
  std::vector<BufferOut> buffers;  // `out` and `inout` buffers, in declaration order
  // Equality of the architectural outcome: status, event and buffers (exec.outcome).
  bool same_result(const Outcome& o) const {
    return status == o.status && event == o.event && buffers == o.buffers;
  }
  // The contents of an output buffer as little-endian 32-bit words
  // (state.memory.buffer); nothing if there is no output buffer of that name.
  std::optional<std::vector<uint32_t>> words(std::string_view buffer) const;
};

// What a trace record reports: a step, or (trap chapter) a core entering its
// handler or a warp leaving it at the join or by the host's resume.
enum class TraceKind : uint8_t { Step, Enter, Resume };

struct TraceRecord {
  uint64_t step;
  uint32_t warp;  // Step: the warp; Enter: TGID; Resume: the resuming warp
  uint32_t pc;    // Step: its PC; Enter: the handler entry (TBA); Resume: the resume PC
  uint64_t exec;  // the warp's exec (Resume: as restored)
  TraceKind kind = TraceKind::Step;
  uint32_t core = 0;   // Enter, Resume: the core
  uint32_t cause = 0;  // Enter: the cause word (trap.cause)
};
using TraceSink = std::function<void(const TraceRecord&)>;

// The trace line for a record (exec.trace.format).
std::string format_trace(const Program& p, const TraceRecord& r);

// Brent cycle-detection state (exec.livelock): part of a snapshot so that a
// restored machine detects a livelock at the same step as the original.
struct LivelockDetector {
  MachineState tortoise;
  uint64_t power = 1;
  uint64_t lam = 0;
  bool operator==(const LivelockDetector&) const = default;
};

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
  // voff_ points into the machine's own tables: not copyable.
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

  void set_trace(TraceSink sink) { trace_ = std::move(sink); }

  // Direct access to the state, for tools that edit it between steps (debuggers,
  // the test-only faulty implementation). Instruction semantics never use it.
  MachineState& mutable_state() { return st_; }

  // ---- helpers for the instruction semantics (dispatch.cpp) -----------------------
  uint32_t wave() const { return wave_; }
  uint64_t full() const { return full_; }
  const uint32_t* lane_ids() const { return lane_ids_.data(); }
  // wave.window: the lanes the stepping warp's instruction can act on: every lane
  // in normal mode, the current part's in sub-vector mode. The step loop sets it
  // from the warp's mode and part before the instruction runs.
  uint32_t win_lo() const { return win_lo_; }
  uint32_t win_hi() const { return win_hi_; }
  uint64_t win_mask() const { return win_mask_; }
  uint64_t part_mask(uint32_t part) const { return part_masks_[part]; }
  uint32_t parts() const { return parts_; }
  // Vector register r as an array indexed by lane. wave.shared: in sub-vector mode
  // a shared register's lane p*simd + i is lane i's storage.
  uint32_t* vreg(WarpState& w, uint32_t r) { return w.vregs.data() + voff_[r]; }
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
      default:
        return 0;
    }
  }
  uint32_t special(const WarpState& w, isa::Special s) const;
  void write_special(WarpState& w, isa::Special s, uint32_t v);
  uint32_t warp_id(const WarpState& w) const {
    return static_cast<uint32_t>(&w - st_.warps.data());
  }
  // exec.form: w.exec as one word per lane (expand_mask: all ones for an active
  // lane), for blending results into registers. Only while a handler runs with a
  // partial exec (not all lanes active), and until it changes exec: the step loop
  // brings the warp's words up to date from exec's value before such a step, so
  // they are right however exec last changed (instructions, mutable_state(),
  // restore()).
  const uint32_t* exec_words([[maybe_unused]] const WarpState& w) const {
    assert(step_words_ == exec_words_.data() + size_t{warp_id(w)} * wave_);
    assert(exec_memo_[warp_id(w)].mask == w.exec);
    return step_words_;
  }
  // Records an event for the current instruction; the handler then returns Event.
  Flow raise(const WarpState& w, isa::Event e, int32_t lane = -1, uint32_t addr = 0,
             uint16_t space = kSpaceNone);
  // Memory: the bytes of a space as seen by warp w (kSpaceSlm: its workgroup's SLM).
  std::vector<uint8_t>& space_bytes(const WarpState& w, uint16_t space);
  void store(const WarpState& w, uint16_t space, uint32_t addr, uint32_t value, uint32_t size);
  // bar.arrive; returns Jump (the PC is managed by the barrier).
  Flow barrier_arrive(WarpState& w);
  // branch.exit bookkeeping once a warp has no live lane left.
  void warp_done(WarpState& w);

  // ---- trap handlers (trap.cpp, spec/trap.md) --------------------------------------
  static constexpr uint32_t kFrameBytes = 64;  // trap.frame
  uint32_t core_of(uint32_t g) const;
  Flow raise_with_payload(const WarpState& w, isa::Event e, uint32_t payload) {
    Flow f = raise(w, e);
    event_->payload = payload;
    return f;
  }
  uint32_t frame_word(uint32_t g, uint32_t off);
  void set_frame_word(uint32_t g, uint32_t off, uint32_t v);
  void try_join(uint32_t core);
  void resume_warp(uint32_t g);  // trap.resume
  bool core_in_handler(uint32_t core) const;
  void clear_esr(uint32_t core) {  // trap.clear, trap.gesr
    st_.cores[core].esr = 0;
    st_.gesr_cores &= ~(uint64_t{1} << core);
    if (st_.gesr_cores == 0) st_.global_esr = 0;
  }

 private:
  void init_state();
  void set_window(const WarpState& w);
  int pick();
  int pick_stepping();
  template <class Ok>
  int pick_among(Ok ok);  // exec.sched.*: the policy's choice among the warps `ok` accepts
  bool check_livelock(size_t stepped);
  std::optional<Status> finish(Status s);
  // No warp is ready: `paused` if some warp waits for the host, else `deadlock`.
  Status no_ready_status() const {
    for (const auto& w : st_.warps)
      if (w.status == WarpStatus::Paused) return Status::Paused;
    return Status::Deadlock;
  }
  uint64_t mem_word_hash(uint32_t space_id, uint32_t word, uint32_t value) const;
  uint32_t space_id(const WarpState& w, uint16_t space) const;
  void refill_exec_words(uint32_t warp, uint64_t exec);
  static uint32_t cause_word(isa::Event e, uint32_t payload);
  uint8_t* frame_bytes(uint32_t g);
  bool enter_handler(uint32_t core, uint32_t raiser, uint32_t cause, uint32_t resume_pc,
                     const EventInfo* ev);
  std::optional<Status> take_event(WarpState& w);
  bool all_or_none(uint32_t core) const;
  // trap.host, trap.interrupt, trap.single_step: the work at a step boundary that
  // does not come from an instruction. Returns the status that ends the launch.
  std::optional<Status> boundary();
  void apply_action(const HostAction& a);
  bool apply_idle_actions();  // trap.host: no warp is ready; applies the next step's actions
  void update_async();
  void host_script_done();
  bool round_eligible(uint32_t g) const {  // trap.single_step
    const WarpState& w = st_.warps[g];
    return w.in_handler || w.ss_owed || !st_.cores[core_of(g)].round_open;
  }

  std::shared_ptr<const Program> prog_;
  const Insn* insns_ = nullptr;
  uint32_t size_ = 0;
  uint32_t wave_ = 0;
  uint64_t full_ = 0;
  uint32_t nwarps_ = 0;
  std::vector<uint32_t> lane_ids_;
  // Per warp, the partial exec last seen by the step loop and its number of lanes,
  // and (wave words per warp) its expansion: a cache of w.exec, not machine state.
  struct ExecMemo {
    uint64_t mask = 0;
    uint32_t lanes = 0;
  };
  std::vector<ExecMemo> exec_memo_;
  std::vector<uint32_t> exec_words_;
  // The stepping warp's exec words, set by the step loop before a step with a
  // partial exec (saves the handler the warp index arithmetic).
  const uint32_t* step_words_ = nullptr;
  // wave.window: the current window (see win_lo()), the mode and part it was set
  // for, each part's lanes, and the first shared vector register (wave.shared).
  uint32_t win_lo_ = 0, win_hi_ = 0, win_n_ = 0;
  uint64_t win_mask_ = 0;
  // Where register r's lane 0 is in WarpState::vregs, for the current window:
  // voff_ points into voffs_[0] (normal mode) or voffs_[1 + p] (part p's pass),
  // where shared registers start p*simd words earlier (wave.shared).
  const size_t* voff_ = nullptr;
  std::array<std::vector<size_t>, 5> voffs_;
  // The mode and part the window was set for, as window_key() reads them.
  uint16_t win_key_ = 0;
  static uint16_t window_key(const WarpState& w) {
    uint16_t k;
    std::memcpy(&k, &w.mode, sizeof k);  // mode and part, adjacent: one load
    return k;
  }
  uint32_t parts_ = 1, simd_ = 0, shared_base_ = 0;
  std::array<uint64_t, 4> part_masks_{};
  MachineState st_;
  uint64_t steps_ = 0;
  uint64_t lane_ops_ = 0;
  uint32_t done_count_ = 0;
  bool livelock_enabled_ = true;
  // trap.state: while a host action remains, a repeated state does not prove a
  // livelock (the action may change what follows), so detection waits for the
  // script's end. Kept by update_async().
  bool livelock_active_ = true;
  bool single_ = false;    // one_warp_ and no single-step: the scheduler is not consulted
  bool one_warp_ = false;  // one warp, and a policy that does not draw
  // trap.boundary: a step boundary has work when a core has (an interrupt
  // pending, a resume outstanding, single-step on: `core_work_`) or when the host
  // script's next action is due (`next_host_step_`, ~0 when none remains).
  // `stepping_`: single-step is on for some core. Kept by update_async().
  // `boundary_at_` folds both into one comparison: 0 with core work, else the
  // next action's step.
  bool boundary_due() const { return steps_ >= boundary_at_; }
  bool core_work_ = false;
  bool stepping_ = false;
  uint64_t boundary_at_ = ~uint64_t{0};
  LivelockDetector det_;
  std::optional<Status> final_;
  std::optional<EventInfo> event_;
  uint16_t event_space_ = kSpaceNone;  // the raised memory event's space id (trap.frame)
  std::vector<uint32_t> entering_;     // trap.entry's warps (kept to reuse its storage)
  std::vector<uint8_t> unwound_;       // trap.entry: which of them waited at a barrier
  TraceSink trace_;
};

}  // namespace simt::exec
