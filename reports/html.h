// The static HTML report (spec/results.md, results.report).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "history.h"
#include "results.h"

namespace simt::reports {

struct Clause {
  std::string file;  // spec chapter, e.g. "branch.md"
  std::string text;  // the clause's first words
};

struct HtmlOptions {
  // results.report.pages: a page for every configuration, passes included
  // (`--pages all`); by default only configurations that did not pass, are not
  // unsupported and not xfail get one.
  bool all_pages = false;
  // results.report.history: runs of the implementations, oldest first (the
  // results store fills it); null: no history pages and no strips.
  const History* history = nullptr;
};

// Writes index.html, coverage.html, a page per configuration (HtmlOptions),
// style.css and report.js into `out_dir` (created if needed), and with a history
// history-<impl>.html per implementation. Returns an error message on failure.
// Several results files render side by side.
std::string write_html(const std::vector<ResultsFile>& results,
                       const std::map<std::string, Clause>& clauses, const std::string& out_dir,
                       const HtmlOptions& options = {});

}  // namespace simt::reports
