// `simtspec lint` (spec/testformat.md, format.lint).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness.h"

namespace simt::harness {

// format.lint.steps: the largest step cap a suite test may set with `.max_steps`.
inline constexpr uint64_t kMaxSuiteSteps = 10'000'000;

struct LintIssue {
  std::string file;
  uint32_t line = 0;
  std::string message;
};

std::vector<LintIssue> lint(const Suite& suite, const std::map<std::string, ClauseInfo>& clauses);

}  // namespace simt::harness
