// The host model: a second semantics of the trap chapter at the level of steps
// (spec/oracles.md, oracle.invariant.host_script). The structured warp evaluator
// (warp_eval.h) counts no steps, so it cannot say where a host action lands; this
// model runs a loaded program one step at a time, as spec/execution.md and
// spec/trap.md state it: the scheduler's policies (exec.sched.*), the step
// boundary's work (trap.boundary: host actions, resume requests, pending
// interrupts, single-step rounds), entries with their frames (trap.entry,
// trap.frame), the handler's instructions, the join and the host's resume, vector
// tables, double faults and the end statuses (completed, trapped, paused,
// deadlock, step_limit).
//
// It is written from the spec text, not from the executor (interpreter/exec), and
// models only what generated host programs execute (oracle.model.hostprog): the
// ALU, compares, `sel`, predicate operations, loads and stores of buffers, SLM and
// the program stack's frames, `%exec` writes, `bar`, `exit`, `jmp`, `cbr`, `call`,
// `ret` and the trap chapter's instructions, all without a mask stack (no `if` or
// loop). An instruction outside that set ends the run with `error` set: the
// program is outside the model. It does not detect livelock (a host program has
// no backward branch; it runs to `max_steps`).
#pragma once

#include <string>

#include "exec/program.h"
#include "model.h"

namespace simt::gen {

struct HostModelResult {
  // Status, event, step count and every `out` and `inout` buffer.
  model::Outcome outcome;
  // Non-empty if the run executed something the model does not model.
  std::string error;
};

// Runs the program (its configuration and host script, exec::Program::host).
HostModelResult run_host_model(const exec::Program& p);

}  // namespace simt::gen
