// The complete machine state (spec/state.md). Everything that can influence a
// future step lives here, so that a snapshot is a copy, equality is ==, and a
// recurrence of this value proves a livelock (exec.livelock).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "isa/isa.h"

namespace simt::exec {

enum class WarpStatus : uint8_t {
  Ready,     // may be scheduled
  Barrier,   // waiting at a workgroup barrier (bar.arrive)
  Done,      // every lane has exited
  Paused,    // waiting for the host after `tpause` (trap.pause)
  Returned,  // after `tret`, waiting for the core's join (trap.return, trap.join)
};

enum class MaskKind : uint8_t { If = 0, Loop = 1 };

// One mask-stack entry (branch.mask.entry).
struct MaskEntry {
  uint64_t saved = 0;  // exec when the entry was pushed
  uint64_t other = 0;  // If: the lanes of the other side; Loop: lanes that continued
  MaskKind kind = MaskKind::If;
  bool operator==(const MaskEntry&) const = default;
};

// Execution mode of a warp (wave chapter): normal, or sub-vector looping.
enum class WaveMode : uint8_t { Normal = 0, SubVector = 1 };

struct WarpState {
  uint32_t pc = 0;
  uint64_t exec = 0;  // active lanes
  uint64_t live = 0;  // lanes that have not exited
  WarpStatus status = WarpStatus::Ready;
  WaveMode mode = WaveMode::Normal;
  uint8_t part = 0;  // current sub-vector part (0 in normal mode)
  // wave.state: the region's hidden state while in sub-vector mode: the PC each
  // part's pass starts at, and the lanes of the other parts (the exec left by the
  // parts that have run, the entry exec of the parts still to run). Zero in
  // normal mode.
  uint32_t region_pc = 0;
  uint64_t region_other = 0;
  // trap.context, wave.trap: the mode and part set aside while in handler mode.
  WaveMode user_mode = WaveMode::Normal;
  uint8_t user_part = 0;
  bool in_handler = false;  // in the trap handler (trap chapter)
  bool ss_owed = false;     // trap.single_step: eligible in the core's round, not yet stepped
  uint32_t sp = 0;          // program-stack pointer: byte offset into this warp's stack
  std::vector<MaskEntry> mask_stack;
  std::vector<uint32_t> pc_stack;
  // trap.context: the user's mask and PC stacks, set aside while in handler mode.
  std::vector<MaskEntry> user_mask_stack;
  std::vector<uint32_t> user_pc_stack;
  std::vector<uint32_t> sregs;
  // Register-major, after `wave` words of padding that are never used:
  // vregs[(r + 1) * wave + lane]. The padding lets a shared register's storage be
  // addressed relative to a part's first lane (wave.shared) without a pointer
  // before the array.
  std::vector<uint32_t> vregs;
  std::array<uint64_t, isa::kNumPreds + 1> preds{};  // preds[kPredTrue] is all ones
  bool operator==(const WarpState&) const = default;
};
// Window::fits reads mode and part as one 16-bit word (exec/window.h).
static_assert(offsetof(WarpState, part) == offsetof(WarpState, mode) + 1);

// Per-core trap-controller registers (state.core): ESR, TGID, TBA.
struct CoreState {
  uint32_t esr = 0;
  uint32_t tgid = 0;
  uint32_t tba = 0;
  bool tba_valid = false;
  std::vector<uint32_t> pending;  // trap.interrupt: pending interrupts' cause words, oldest first
  bool single_step = false;       // trap.single_step: the host's flag
  bool round_open = false;        // trap.single_step: a round is under way
  bool resume = false;            // trap.host.resume: requested, not yet carried out
  bool operator==(const CoreState&) const = default;
};

// bar.arrive: the number of warps of the workgroup waiting at the barrier. Nothing
// else: which barrier phase it is cannot influence a future step, so it is not
// state (exec.livelock: `l: bar; jmp l` repeats its state).
struct BarrierState {
  uint32_t arrived = 0;
  bool operator==(const BarrierState&) const = default;
};

struct MemoryState {
  std::vector<std::vector<uint8_t>> buffers;  // declared buffers, in declaration order
  std::vector<std::vector<uint8_t>> slm;      // one per workgroup
  std::vector<uint8_t> stack;                 // program stacks: warp g at g * stack bytes
  // Order-independent hash of every non-zero 32-bit word, kept up to date by
  // stores; equal memories have equal hashes (used to reject livelock candidates fast).
  uint64_t hash = 0;
  bool operator==(const MemoryState&) const = default;
};

// exec.sched.*: the scheduler's state (exec/scheduler.h).
struct SchedState {
  uint32_t cursor = 0;  // round_robin: next warp to consider
  uint64_t rng = 0;     // random: SplitMix64 state
  bool operator==(const SchedState&) const = default;
};

// trap.state: the trap unit's state beside the warps' own (exec/trap_unit.h): the
// cores' controllers, the global ESR, the host script's position, the bound
// vector table.
struct TrapState {
  std::vector<CoreState> cores;
  uint32_t global_esr = 0;
  uint64_t gesr_cores = 0;  // trap.gesr: cores that have not cleared the global ESR
  uint32_t host_next = 0;   // trap.host: the host script's next action
  int32_t vtable = -1;      // trap.vector: the bound vector table, or -1
  bool operator==(const TrapState&) const = default;
};

// The whole state, one comparable value: the warps (with their mask and PC
// stacks, registers, sub-vector and handler state), memory, barriers, and the
// scheduler's and the trap unit's state.
struct MachineState {
  std::vector<WarpState> warps;  // by global warp id
  MemoryState mem;
  std::vector<BarrierState> barriers;  // one per workgroup
  TrapState trap;
  SchedState sched;
  bool operator==(const MachineState&) const = default;
};

}  // namespace simt::exec
