// Structural shrinking (spec/oracles.md, oracle.shrink): simplifies a failing
// structured program step by step, keeping each simplification that still
// prints to a valid program and still fails, until none does.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "program.h"

namespace simt::gen {

struct ShrinkStats {
  size_t attempts = 0;       // candidates tried
  size_t accepted = 0;       // simplifications kept
  bool out_of_time = false;  // stopped at the deadline, not at a minimum
};

// Whether a candidate still fails; `text` is print(candidate), already made.
using FailsFn = std::function<bool(const Program& candidate, const std::string& text)>;

// `fails` must be deterministic. Stops after `max_attempts` candidates, or once
// `max_seconds` (> 0) have passed, keeping the simplest failing program so far.
Program shrink(const Program& p, const FailsFn& fails, size_t max_attempts,
               ShrinkStats* stats = nullptr, double max_seconds = 0);

// Every one-step simplification of p, most aggressive first.
std::vector<Program> simplifications(const Program& p);

// Instructions of the predecoded program the text gives (0 if it does not load).
size_t instruction_count(const Program& p);

}  // namespace simt::gen
