// `simtspec history`: the runs of a results store, the difference between two
// runs, one test over runs, and flaky configurations (spec/results.md,
// results.history).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "common.h"
#include "recording.h"
#include "results.h"
#include "store.h"

namespace simt::cli {
namespace {

struct HistoryArgs {
  std::string db;
  std::string impl;  // diff: `latest` among this implementation's runs
  std::string a, b;  // diff
  bool json = false;
  std::string test_id, config;  // test
  uint64_t keep = 0;            // prune
};

// Opens an existing store (history never creates one); nullopt after a message.
std::optional<reports::Store> open_existing(const std::string& db) {
  auto s = open_existing_store(db);
  if (auto* e = std::get_if<std::string>(&s)) {
    std::cerr << "simtspec: " << *e << "\n";
    return std::nullopt;
  }
  return std::get<reports::Store>(std::move(s));
}

std::string config_name(const std::string& id, const std::string& key) {
  return key.empty() ? id : id + "[" + key + "]";
}

// results.history: a run still `running` is told apart from one whose process died.
std::string state_word(const reports::RunInfo& r) {
  if (r.state != "running") return r.state;
  auto alive = reports::Store::alive(r);
  if (!alive) return "running?";
  return *alive ? "running" : "died";
}

std::string counts_text(const reports::RunInfo& r) {
  std::string out;
  for (std::string_view k : reports::kStatuses)
    if (auto it = r.counts.find(std::string(k)); it != r.counts.end() && it->second)
      out += (out.empty() ? "" : ", ") + reports::thousands(it->second) + " " + std::string(k);
  return out.empty() ? "no results" : out;
}

int list_runs(const reports::Store& s) {
  auto runs = s.runs();
  if (runs.empty()) std::cout << "no runs recorded\n";
  for (const auto& r : runs) {
    std::cout << r.id << " " << r.kind << " " << state_word(r) << " " << r.started << " "
              << r.impl_name << " " << r.impl_version << ": ";
    if (r.state == "running")
      std::cout << "no end recorded\n";
    else if (r.kind == "fuzz")
      std::cout << reports::thousands(r.selected) << " programs: " << counts_text(r) << "\n";
    else
      std::cout << reports::share_run(r.run, r.selected) << ": " << counts_text(r) << "\n";
  }
  return kExitOk;
}

// results.history.diff: `N`, `latest` or `latest~N` (among --impl's runs when given).
std::optional<int64_t> resolve(const reports::Store& s, const std::string& word,
                               const std::string& impl) {
  auto digits = [](std::string_view t) {
    return !t.empty() && t.size() <= 18 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (digits(word)) {
    int64_t id = std::stoll(word);
    auto r = s.run(id);
    if (!r || (!impl.empty() && r->impl_name != impl)) return std::nullopt;
    return id;
  }
  size_t back = 0;
  if (word.rfind("latest~", 0) == 0 && digits(std::string_view(word).substr(7)))
    back = std::stoull(word.substr(7));
  else if (word != "latest")
    return std::nullopt;
  std::vector<int64_t> ids;
  for (const auto& r : s.runs())
    if (impl.empty() || r.impl_name == impl) ids.push_back(r.id);
  if (back >= ids.size()) return std::nullopt;
  return ids[ids.size() - 1 - back];
}

// results.history.diff: the kinds of change, in output order.
enum class Change { Regression, Fix, NewlyUnsupported, NewlyRun, Vanished, Changed };
struct ChangeKind {
  Change change;
  const char* name;
};
constexpr ChangeKind kChanges[] = {
    {Change::Regression, "regression"},
    {Change::Fix, "fix"},
    {Change::NewlyUnsupported, "newly unsupported"},
    {Change::NewlyRun, "newly run"},
    {Change::Vanished, "vanished"},
    {Change::Changed, "changed"},
};

bool ran(const std::string& status) {
  return status != "unsupported";
}
// Ran and not bad (results.status.bad: the status table's `failing` column): pass
// and xfail.
bool good(const std::string& status) {
  return ran(status) && reports::parse_status(status) && !reports::is_bad_status(status);
}

std::optional<Change> classify(const reports::ResultRow* a, const reports::ResultRow* b) {
  if (!b) return Change::Vanished;
  if (!a) return ran(b->status) ? std::optional(Change::NewlyRun) : std::nullopt;
  if (a->status == b->status) return std::nullopt;
  if (!ran(a->status)) return Change::NewlyRun;
  if (!ran(b->status)) return Change::NewlyUnsupported;
  if (good(a->status) && !good(b->status)) return Change::Regression;
  if (!good(a->status) && good(b->status)) return Change::Fix;
  return Change::Changed;
}

int diff_runs(const reports::Store& s, const HistoryArgs& a) {
  auto ia = resolve(s, a.a, a.impl), ib = resolve(s, a.b, a.impl);
  for (auto [word, id] : {std::pair(a.a, ia), std::pair(a.b, ib)})
    if (!id) {
      std::cerr << "simtspec: history diff: no run '" << word << "'"
                << (a.impl.empty() ? "" : " of " + a.impl)
                << " (a run id, latest or latest~N; simtspec history lists them)\n";
      return kExitUsage;
    }
  using Key = std::pair<std::string, std::string>;
  std::map<Key, reports::ResultRow> ra, rb;
  for (auto& r : s.results(*ia)) ra[{r.test_id, r.config_key}] = std::move(r);
  for (auto& r : s.results(*ib)) rb[{r.test_id, r.config_key}] = std::move(r);
  std::set<Key> keys;
  for (const auto& [k, r] : ra) keys.insert(k);
  for (const auto& [k, r] : rb) keys.insert(k);
  struct Line {
    Key key;
    const reports::ResultRow *a, *b;
  };
  std::map<Change, std::vector<Line>> by;
  for (const auto& k : keys) {
    auto fa = ra.find(k), fb = rb.find(k);
    const reports::ResultRow* pa = fa == ra.end() ? nullptr : &fa->second;
    const reports::ResultRow* pb = fb == rb.end() ? nullptr : &fb->second;
    if (auto c = classify(pa, pb)) by[*c].push_back({k, pa, pb});
  }
  auto status = [](const reports::ResultRow* r) { return r ? r->status : std::string("absent"); };
  auto message = [](const Line& l) {
    return l.b && !l.b->message.empty() ? l.b->message : l.a ? l.a->message : std::string();
  };
  if (a.json) {
    json::Value out;
    out["a"] = *ia;
    out["b"] = *ib;
    json::Array changes;
    json::Value counts = json::Object{};
    for (const auto& ck : kChanges) {
      counts[ck.name] = static_cast<uint64_t>(by[ck.change].size());
      for (const auto& l : by[ck.change]) {
        json::Value c;
        c["kind"] = ck.name;
        c["id"] = l.key.first;
        c["config_key"] = l.key.second;
        c["a"] = status(l.a);
        c["b"] = status(l.b);
        c["message"] = message(l);
        changes.push_back(std::move(c));
      }
    }
    out["changes"] = changes;
    out["counts"] = counts;
    std::cout << json::dump(out, 1) << "\n";
    return kExitOk;
  }
  std::string total;
  for (const auto& ck : kChanges) {
    for (const auto& l : by[ck.change]) {
      std::string m = message(l);
      std::cout << ck.name << ": " << config_name(l.key.first, l.key.second) << ": " << status(l.a)
                << " -> " << status(l.b) << (m.empty() ? "" : ": " + m) << "\n";
    }
    total += (total.empty() ? "" : ", ") + std::string(ck.name) + " " +
             std::to_string(by[ck.change].size());
  }
  std::cout << "run " << *ia << " -> run " << *ib << ": " << total << "\n";
  return kExitOk;
}

// results.history.test: the first result of each implementation and configuration,
// then each run where its status changed.
int test_history(const reports::Store& s, const HistoryArgs& a) {
  std::map<int64_t, reports::RunInfo> runs;
  for (auto& r : s.runs()) runs.emplace(r.id, std::move(r));
  // (implementation, configuration) -> rows in run order
  std::map<std::pair<std::string, std::string>, std::vector<reports::ResultRow>> groups;
  for (auto& row : s.history(a.test_id)) {
    if (!a.config.empty() && row.config_key != a.config) continue;
    groups[{runs[row.run].impl_name, row.config_key}].push_back(std::move(row));
  }
  if (groups.empty()) {
    std::cerr << "simtspec: history test: no results recorded for " << a.test_id
              << (a.config.empty() ? "" : "[" + a.config + "]") << "\n";
    return kExitUsage;
  }
  for (const auto& [g, rows] : groups) {
    const std::string* last = nullptr;
    for (const auto& row : rows) {
      if (last && *last == row.status) continue;
      last = &row.status;
      const auto& r = runs[row.run];
      std::cout << g.first << ": " << config_name(a.test_id, g.second) << ": run " << row.run
                << " (" << r.started << ", " << r.impl_version << "): " << row.status
                << (row.message.empty() ? "" : ": " + row.message) << "\n";
    }
  }
  return kExitOk;
}

// results.history.flaky: configurations whose status differs between test runs of
// one implementation version, runner description and suite.
int flaky(const reports::Store& s) {
  struct Group {
    std::string impl, version, runner, suite;
    auto operator<=>(const Group&) const = default;
  };
  std::map<Group, std::vector<reports::RunInfo>> groups;
  for (auto& r : s.runs())
    if (r.kind == "test")
      groups[{r.impl_name, r.impl_version, r.runner_digest, r.suite_digest}].push_back(r);
  size_t n = 0;
  for (const auto& [g, runs] : groups) {
    if (runs.size() < 2) continue;
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<int64_t, std::string>>>
        seen;
    for (const auto& r : runs)
      for (auto& row : s.results(r.id))
        seen[{row.test_id, row.config_key}].emplace_back(r.id, row.status);
    for (const auto& [k, statuses] : seen) {
      const std::string& first = statuses[0].second;
      bool differs = std::any_of(statuses.begin(), statuses.end(),
                                 [&first](const auto& p) { return p.second != first; });
      if (!differs) continue;
      ++n;
      std::cout << g.impl << " " << g.version << ", suite " << g.suite.substr(0, 8) << ": "
                << config_name(k.first, k.second) << ":";
      for (size_t i = 0; i < statuses.size(); ++i)
        std::cout << (i ? ", " : " ") << "run " << statuses[i].first << " " << statuses[i].second;
      std::cout << "\n";
    }
  }
  std::cout << n << " flaky configuration" << (n == 1 ? "" : "s") << "\n";
  return kExitOk;
}

// results.history.prune
int prune(reports::Store& s, uint64_t keep) {
  auto removed = s.prune(keep);
  if (!removed) {
    std::cerr << "simtspec: " << s.take_error().value_or("prune failed") << "\n";
    return kExitUsage;
  }
  std::cout << "removed " << *removed << " run" << (*removed == 1 ? "" : "s")
            << ", kept the newest " << keep << " of each implementation and kind\n";
  return kExitOk;
}

}  // namespace

void register_history(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<HistoryArgs>();
  auto* cmd = app.add_subcommand("history", "the runs recorded in a results store");
  cmd->add_option("--db", a->db,
                  std::string("results store (default: ") + reports::kDefaultStore + ")");
  cmd->require_subcommand(0, 1);
  auto* diff = cmd->add_subcommand("diff",
                                   "regressions, fixes, newly unsupported and newly run "
                                   "configurations between two runs");
  diff->fallthrough();
  diff->add_option("a", a->a, "the earlier run: an id, latest or latest~N")->required();
  diff->add_option("b", a->b, "the later run")->required();
  diff->add_option("--impl", a->impl, "latest and latest~N among this implementation's runs");
  diff->add_flag("--json", a->json, "the changes as JSON");
  auto* test = cmd->add_subcommand("test", "one test's results over runs: the transitions only");
  test->fallthrough();
  test->add_option("id", a->test_id, "test id")->required();
  test->add_option("--config", a->config, "only this configuration key");
  auto* fl = cmd->add_subcommand(
      "flaky", "configurations whose status changed between runs of one implementation version");
  fl->fallthrough();
  auto* pr = cmd->add_subcommand("prune",
                                 "delete all but the newest runs of each implementation and kind");
  pr->fallthrough();
  pr->add_option("--keep", a->keep, "runs to keep of each implementation and kind, at least 1")
      ->required()
      ->check(in_range(1, uint64_t{1} << 62, "1 to 2^62"));
  cmd->callback([a, &exit_code, diff, test, fl, pr] {
    auto s = open_existing(a->db);
    if (!s) {
      exit_code = kExitUsage;
      return;
    }
    if (diff->parsed())
      exit_code = diff_runs(*s, *a);
    else if (test->parsed())
      exit_code = test_history(*s, *a);
    else if (fl->parsed())
      exit_code = flaky(*s);
    else if (pr->parsed())
      exit_code = prune(*s, a->keep);
    else
      exit_code = list_runs(*s);
  });
}

}  // namespace simt::cli
