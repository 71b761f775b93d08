// The structured warp evaluator: the second semantics of generated programs
// (spec/oracles.md, oracle.invariant.structured). It runs the structured
// program (program.h) directly, a warp at a time, with the warp's active lanes
// as a set: an `if` runs each side with its subset, a loop iterates while any
// lane remains in it, `break`, `continue` and `exit` change the set; cross-lane
// statements, ballots and votes see the set; memory events report the lowest
// failing active lane; barriers suspend the warp until its workgroup has
// arrived, and the warps run between barriers in a fixed order.
//
// It is deliberately simple and written from the spec text (spec/branch.md,
// alu.md, memory.md, crosslane.md, barrier.md, state.md), not from the
// executor: no predecoding, no fast paths, no mask stack (only how deep it
// would be, for mask_overflow). From the printer it takes only where each
// statement's instructions are (Layout), to name the PC of an event.
//
// A sub-vector region (spec/wave.md) runs its body once per part that holds an
// active lane, in ascending part order, with the set restricted to the part;
// the set after it is the union of what the passes left (wave.union). During a
// pass a shared register's lane p*simd + i is lane i's storage (wave.shared).
#pragma once

#include <string>

#include "model.h"
#include "program.h"

namespace simt::gen {

struct StructuredResult {
  // The outcome print(p) must have: status (completed, trapped or deadlock),
  // the event of a trap, and the `out`/`inout` buffers in declaration order.
  model::Outcome outcome;
  // The outcome depends on the scheduling policy, so only the status can be
  // compared: an event in a program of several warps (which warp traps first,
  // and what the others stored before, depend on the interleaving).
  bool status_only = false;
  // Non-empty if the program is outside the evaluator's domain (it never ends,
  // or uses a construct the evaluator does not model); `outcome` is then empty.
  std::string error;
};

struct EvalOptions {
  // Warps run from the lowest global id up (or, with `reverse`, from the highest
  // down) until they wait at a barrier or end; a race-free program has the same
  // outcome in both orders (exec.sched.independence).
  bool reverse = false;
  // Deliberately wrong semantics, for the tests that show the structured
  // invariant failing: a region runs a pass for every part, with no lane for the
  // parts that have none (wave.union skips them); shared registers stay private
  // in sub-vector mode (wave.shared maps them to the storage of part 0's lanes).
  bool run_empty_parts = false;
  bool private_shared = false;
};

StructuredResult evaluate_structured(const Program& p, const EvalOptions& o);
inline StructuredResult evaluate_structured(const Program& p, bool reverse = false) {
  EvalOptions o;
  o.reverse = reverse;
  return evaluate_structured(p, o);
}

}  // namespace simt::gen
