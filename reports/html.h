// The static HTML report (spec/results.md, results.report).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results.h"

namespace simt::reports {

struct Clause {
  std::string file;  // spec chapter, e.g. "branch.md"
  std::string text;  // the clause's first words
};

// Writes index.html, coverage.html, one page per test configuration, style.css
// and report.js into `out_dir` (created if needed). Returns an error message on
// failure. Several results files render side by side.
std::string write_html(const std::vector<ResultsFile>& results,
                       const std::map<std::string, Clause>& clauses, const std::string& out_dir);

}  // namespace simt::reports
