// The sequential evaluator: an oracle for generated programs whose lanes do not
// communicate (spec/oracles.md). It runs every thread alone, as ordinary
// sequential code over the structured program (program.h), following exactly
// the instructions the printer (program.cpp) writes for each statement, with the
// ALU, memory and branch semantics of spec/alu.md, spec/memory.md and
// spec/branch.md. It knows nothing of warps, masks or scheduling, and is written
// independently of the reference interpreter, so that the two can be compared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program.h"

namespace simt::gen {

// The expected final contents of the output buffers of print(p), computed lane
// by lane.
struct Expected {
  // `out`: threads * nregs words; word j * threads + t is data register j of
  // thread t (0 for a thread that exited).
  std::vector<uint32_t> out;
  // `scratch`: threads * kScratchSlots words, word slot * threads + t; empty if
  // the program has no scratch statement (and so no scratch buffer).
  std::vector<uint32_t> scratch;
  // Non-empty if the program is outside what the evaluator handles (lanes
  // communicate, the printed program would be rejected or would trap, a loop
  // does not terminate, ...); `out` and `scratch` are then meaningless.
  std::string error;
};

// Requires !communicates(p); otherwise sets `error`.
Expected evaluate_sequential(const Program& p);

}  // namespace simt::gen
