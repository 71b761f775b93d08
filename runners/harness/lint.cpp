#include "lint.h"

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
    for (const auto& c : t.clauses)
      if (!clauses.count(c)) out.push_back({t.path, 0, "unknown spec clause '" + c + "'"});
    // The program must load in every configuration, unless it is meant to be rejected.
    for (const auto& s : t.configs) {
      host::LoadOptions opt;
      opt.validate_flow = t.validate;  // format.validate
      opt.host = t.host;               // trap.host: its errors are rejections too
      opt.cli = s.overrides();
      if (s.policy && !opt.cli.policy) {
        out.push_back({t.path, 0, "unknown policy '" + *s.policy + "' in [matrix]"});
        continue;
      }
      auto r = host::load(t.source, opt);
      if (!r.loaded && t.expect.status != "rejected") {
        const auto& d = r.diags.first();
        out.push_back({t.path, d.span.line,
                       "the program does not load" + (s.key().empty() ? "" : " with " + s.key()) +
                           ": " + d.message});
        break;
      }
      if (r.loaded && t.expect.status == "rejected") {
        out.push_back({t.path, 0,
                       "expects rejected, but the program loads" +
                           (s.key().empty() ? "" : " with " + s.key())});
        break;
      }
    }
  }
  return out;
}

}  // namespace simt::harness
