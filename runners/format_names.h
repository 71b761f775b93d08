// Status names shared by runners and the harness (spec/execution.md, exec.outcome).
#pragma once

#include <string>

namespace simt::runners {

inline bool is_outcome_status(const std::string& s) {
  return s == "completed" || s == "trapped" || s == "paused" || s == "deadlock" ||
         s == "livelock" || s == "step_limit";
}

}  // namespace simt::runners
