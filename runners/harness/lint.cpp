#include "lint.h"

#include "exec/machine.h"
#include "host/host.h"

namespace simt::harness {

std::vector<LintIssue> lint(const Suite& suite, const std::map<std::string, ClauseInfo>& clauses) {
  std::vector<LintIssue> out;
  for (const auto& [path, errs] : suite.bad)
    for (const auto& e : errs) out.push_back({path, e.line, e.message});
  for (const auto& path : suite.not_tests)
    out.push_back({path, 1, "not a test: the first line must be '; simtspec-test 1'"});
  std::map<std::string, const TestFile*> ids;
  for (const auto& t : suite.tests) {
    auto [it, fresh] = ids.emplace(t.id, &t);
    if (!fresh)
      out.push_back({t.path, t.id_line,
                     "duplicate test id '" + t.id + "' (also in " + it->second->path + ")"});
    for (size_t i = 0; i < t.clauses.size(); ++i)
      if (!clauses.count(t.clauses[i]))
        out.push_back({t.path, i < t.clause_lines.size() ? t.clause_lines[i] : 1,
                       "unknown spec clause '" + t.clauses[i] + "'"});
    // format.lint.steps: a step cap so high that the program could run for hours
    // before the harness's timeout says nothing useful (a test expecting `rejected`
    // runs no step).
    if (t.sets_max_steps && t.max_steps > kMaxSuiteSteps && t.expect.status != "rejected")
      out.push_back({t.path, t.max_steps_line,
                     ".max_steps " + std::to_string(t.max_steps) + " is above " +
                         std::to_string(kMaxSuiteSteps) +
                         ", the most a suite test may set (format.lint.steps)"});
    // The program must load in every configuration, unless it is meant to be rejected.
    for (const auto& s : t.configs) {
      host::LoadOptions opt;
      opt.validate_flow = t.validate;  // format.validate
      opt.host = t.host;               // trap.host: its errors are rejections too
      opt.cli = s.overrides();
      opt.cli_origin = "[matrix] ";  // state.launch.check: the matrix key, not line 1
      if (s.policy && !opt.cli.policy) {
        out.push_back(
            {t.path, t.matrix_line("policy"), "unknown policy '" + *s.policy + "' in [matrix]"});
        continue;
      }
      auto r = host::load(t.source, opt);
      if (!r.loaded && t.expect.status != "rejected") {
        const auto& d = r.diags.first();
        // A value from the matrix is reported at its [matrix] line.
        const bool from_matrix = d.origin.rfind("[matrix] ", 0) == 0;
        out.push_back({t.path, from_matrix ? t.matrix_line(d.origin.substr(9)) : d.span.line,
                       "the program does not load" + (s.key().empty() ? "" : " with " + s.key()) +
                           ": " + (from_matrix ? d.origin + ": " : "") + d.message});
        break;
      }
      // format.restore, preempt.reject: with [restore] the image may be what is
      // rejected; it is checked against the loaded program's launch.
      const bool image_rejected =
          r.loaded && t.restore &&
          exec::Machine(r.loaded->program).start_from_image(t.restore->bytes()).has_value();
      if (r.loaded && t.expect.status == "rejected" && !image_rejected) {
        out.push_back({t.path, t.expect_line,
                       "expects rejected, but the program loads" +
                           std::string(t.restore ? " and the image fits it" : "") +
                           (s.key().empty() ? "" : " with " + s.key())});
        break;
      }
    }
  }
  return out;
}

}  // namespace simt::harness
