// The trap unit (spec/trap.md): the cores' trap controllers (ESR, TGID, TBA),
// pending interrupts, single-step rounds, the host script's position and actions,
// handler entry, the join and the resume. Its architectural state is
// MachineState::trap (and each warp's handler fields); what it keeps here is
// derived from that state (when the next step boundary has work) or scratch.
// Rare by design: the step loop consults it only when due() says so.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "exec/outcome.h"
#include "exec/state.h"

namespace simt::exec {

class Machine;

class TrapUnit {
 public:
  static constexpr uint32_t kFrameBytes = 64;  // trap.frame

  explicit TrapUnit(Machine& m) : m_(m) {}
  TrapUnit(const TrapUnit&) = delete;
  TrapUnit& operator=(const TrapUnit&) = delete;

  // trap.boundary: the first step count at which the boundary has work (0 while a
  // core has an interrupt pending, a resume outstanding or single-step on; the
  // next host action's step otherwise; ~0 when nothing remains).
  uint64_t due() const { return boundary_at_; }
  // The work at a step boundary that does not come from an instruction. Returns
  // the status that ends the launch.
  std::optional<Status> boundary();
  // trap.host: no warp is ready; applies the next step's actions. False if none
  // remain; `end` gets the status that ends the launch, if an action ends it (a
  // preemption whose system routine raised an event, preempt.sysmode.events).
  bool apply_idle_actions(std::optional<Status>& end);
  // An event raised by the instruction warp `w` just ran (exec.status.trapped,
  // trap.double, trap.none, trap.entry). Returns the status that ends the launch,
  // or nothing when the core entered its handler.
  std::optional<Status> take_event(WarpState& w);
  // Recomputes what is derived from the state (after a restore or a host action).
  void refresh();
  bool stepping() const { return stepping_; }  // single-step is on for some core
  bool host_actions_remain() const;
  // trap.single_step: whether warp g may step in its core's round.
  bool round_eligible(uint32_t g) const;
  // trap.allornone: the ready and barrier warps of a core are all in user mode or
  // all in handler mode.
  bool all_or_none(uint32_t core) const;

  // ---- for the trap instructions (trap.cpp) ------------------------------------
  uint32_t core_of(uint32_t g) const;
  uint32_t frame_word(uint32_t g, uint32_t off);
  void set_frame_word(uint32_t g, uint32_t off, uint32_t v);
  void try_join(uint32_t core);   // trap.join
  void clear_esr(uint32_t core);  // trap.clear, trap.gesr

 private:
  static uint32_t cause_word(isa::Event e, uint32_t payload);
  uint8_t* frame_bytes(uint32_t g);
  bool enter_handler(uint32_t core, uint32_t raiser, uint32_t cause, uint32_t resume_pc,
                     const EventInfo* ev);
  void resume_warp(uint32_t g);  // trap.resume
  bool core_in_handler(uint32_t core) const;
  std::optional<Status> apply_action(const HostAction& a);
  // Applies the actions due at `step` or before; the status that ends the launch, if any.
  std::optional<Status> apply_due(uint64_t step);
  void host_script_done();

  Machine& m_;
  bool core_work_ =
      false;  // a core has an interrupt pending, a resume outstanding or single-step on
  bool stepping_ = false;
  uint64_t boundary_at_ = ~uint64_t{0};
  std::vector<uint32_t> entering_;  // trap.entry's warps (kept to reuse its storage)
  std::vector<uint8_t> unwound_;    // trap.entry: which of them waited at a barrier
};

}  // namespace simt::exec
