// `simtspec test`, `simtspec lint`, `simtspec report`, `simtspec serve`: the
// conformance harness on the command line (spec/runner.md, spec/results.md).
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <variant>

#include "baseline.h"
#include "common.h"
#include "harness.h"
#include "html.h"
#include "lint.h"
#include "outputs.h"
#include "protocol.h"
#include "recording.h"
#include "reference.h"
#include "results.h"

namespace simt::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct TestArgs {
  std::vector<std::string> paths;
  std::string runner = "reference";
  std::string filter;
  std::string features;
  uint32_t jobs = 0;
  std::string shard;
  std::string out;
  std::string spec;
  std::string db;      // results.store: --db FILE
  bool no_db = false;  // --no-db
  bool no_differential = false;
  bool quiet = false;
  uint64_t max_steps = 1'000'000;
  double timeout = 0;    // 0: the runner's own (runner.timeout)
  std::string baseline;  // results.baseline: a run id of the store or a results file
  std::string known;     // results.known: the known-failures file (default: beside the runner)
  uint32_t rerun_failures = 0;     // results.rerun
  std::string pages = "failures";  // results.report.pages
};

// results.report.pages: `--pages failures|all`.
void add_pages_option(CLI::App* cmd, std::string& pages) {
  cmd->add_option("--pages", pages,
                  "which configurations get a page of their own: failures (everything but pass, "
                  "unsupported and xfail; the default) or all")
      ->check(CLI::IsMember({"failures", "all"}));
}

// results.baseline: the rows of the baseline, from a results file or, for an
// argument that is all digits, a run of the results store (--db, else the default
// store; an absent store is not created for this).
std::variant<std::vector<reports::ResultRow>, std::string> baseline_rows(const std::string& arg,
                                                                         const std::string& db,
                                                                         bool no_db) {
  if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
    const std::string path = db.empty() ? reports::kDefaultStore : db;
    if (no_db) return "--baseline " + arg + ": a run id needs the results store, not --no-db";
    auto opened = open_existing_store(db);
    if (auto* e = std::get_if<std::string>(&opened)) return "--baseline " + arg + ": " + *e;
    const auto& store = std::get<reports::Store>(opened);
    const int64_t id = arg.size() > 18 ? 0 : std::stoll(arg);
    const auto run = store.run(id);
    if (!run) return "--baseline " + arg + ": the results store '" + path + "' has no run " + arg;
    if (run->kind != "test")
      return "--baseline " + arg + ": run " + arg + " is a " + run->kind + " run, not a test run";
    return store.results(id);
  }
  auto r = reports::read_results(arg);
  if (auto* e = std::get_if<std::string>(&r)) return "--baseline: " + *e;
  const auto& rf = std::get<reports::ResultsFile>(r);
  if (!rf.complete())
    std::cout << "note: the baseline run '" << arg
              << "' did not finish: " << reports::thousands(rf.records.size()) << " results\n";
  return harness::rows_of(rf.records);
}

// results.baseline, results.known: what the run is compared with; nullopt and a
// message on stderr for bad input.
std::optional<harness::Baseline> load_baseline(const TestArgs& a, const harness::Suite& suite,
                                               const std::set<harness::ConfigId>& selected) {
  auto rows = baseline_rows(a.baseline, a.db, a.no_db);
  if (auto* e = std::get_if<std::string>(&rows)) {
    std::cerr << "simtspec: " << *e << "\n";
    return std::nullopt;
  }
  std::string known_file = a.known;
  std::error_code ec;
  if (known_file.empty() && a.runner.ends_with(".toml") &&
      fs::is_regular_file(harness::known_path(a.runner), ec))
    known_file = harness::known_path(a.runner);
  harness::KnownList known;
  if (!known_file.empty()) {
    auto k = harness::load_known(known_file);
    if (auto* e = std::get_if<std::string>(&k)) {
      std::cerr << "simtspec: " << *e << "\n";
      return std::nullopt;
    }
    known = std::get<harness::KnownList>(std::move(k));
  }
  std::set<harness::ConfigId> unselected;
  for (const auto& t : suite.tests)
    for (const auto& c : t.configs)
      if (!selected.count({t.id, c.key()})) unselected.insert({t.id, c.key()});
  for (const auto& [path, errs] : suite.bad)
    if (!selected.count({path, ""})) unselected.insert({path, ""});
  return harness::Baseline(std::get<0>(rows), std::move(known), std::move(unselected));
}

// results.interrupted: SIGINT and SIGTERM set the runners' interrupt flag; the run
// stops starting configurations, cuts short those in flight and writes what ran.
// A second signal ends the program at once (the handler is reset by the first).
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) {
  g_signal = sig;
  runners::interrupt_flag().store(true);
}

struct SignalScope {
  struct sigaction old_int {
  }, old_term{};
  SignalScope() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: waits return EINTR
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalScope() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
};

// The console's `fail:` lines in the run's order (malformed files, then the
// configurations in suite order), whatever order the jobs finish in: a line is
// printed once every result before it has arrived.
class OrderedLines {
 public:
  explicit OrderedLines(size_t n) : lines_(n), have_(n, false) {}
  void put(size_t i, std::string line) {
    lines_[i] = std::move(line);
    have_[i] = true;
    for (; next_ < have_.size() && have_[next_]; ++next_)
      if (!lines_[next_].empty()) std::cout << lines_[next_] << std::flush;
  }
  // What arrived but waits for an earlier result that never came (interrupted).
  void flush() {
    for (size_t i = next_; i < have_.size(); ++i)
      if (have_[i] && !lines_[i].empty()) std::cout << lines_[i];
    std::cout << std::flush;
  }

 private:
  std::vector<std::string> lines_;
  std::vector<bool> have_;
  size_t next_ = 0;
};

int run_tests(const TestArgs& a, const std::string& argv0) {
  std::vector<std::string> paths = a.paths;
  if (paths.empty()) paths.push_back("suites");
  std::string err;
  auto files = harness::discover(paths, err);
  if (!err.empty()) {
    std::cerr << "simtspec: " << err << "\n";
    return kExitUsage;
  }
  harness::Options o;
  o.filter = a.filter;
  for (const auto& f : split_list(a.features)) o.features.insert(f);
  o.differential = !a.no_differential;
  o.max_steps = a.max_steps;
  if (a.timeout > 0) o.timeout = a.timeout;
  o.runner_arg = absolute_arg(a.runner);
  o.simtspec = self_path(argv0);
  if (!a.shard.empty()) {
    auto shard = parse_shard(a.shard);
    if (!shard) {
      std::cerr << "simtspec: " << kShardUsage << "\n";
      return kExitUsage;
    }
    std::tie(o.shard_index, o.shard_count) = *shard;
  }
  auto opened = runners::open_runner(
      a.runner, a.timeout > 0 ? std::optional<double>(a.timeout) : std::nullopt);
  if (auto* e = std::get_if<std::string>(&opened)) {
    std::cerr << "simtspec: " << *e << "\n";
    return kExitUsage;
  }
  auto runner = std::get<std::unique_ptr<runners::Runner>>(std::move(opened));
  harness::Suite suite = harness::load_suite(files);
  auto cases = harness::select(suite, o);
  if (cases.empty() && suite.bad.empty()) {
    std::cerr << "simtspec: no test configurations selected (" << files.size() << " files, "
              << suite.tests.size() << " tests)\n";
    runner->shutdown();
    return kExitUsage;
  }
  o.jobs = job_count(a.jobs, cases.size());
  std::string spec_dir = harness::find_spec_dir(a.spec, paths.front());
  // The place of each result in the run's order, for the console's fail: lines.
  std::map<std::pair<std::string, std::string>, size_t> order;
  size_t bad_selected = 0;
  for (const auto& [path, errs] : suite.bad)
    if (o.shard_index == 0 && (o.filter.empty() || harness::glob_match(o.filter, path)))
      order[{path, ""}] = bad_selected++;
  for (const auto& c : cases)
    order.emplace(std::pair(c.test->path, c.settings.key()), order.size());
  // results.baseline: read before anything runs, so that bad input costs nothing.
  std::optional<harness::Baseline> baseline;
  if (!a.known.empty() && a.baseline.empty()) {
    std::cerr << "simtspec: --known needs --baseline\n";
    runner->shutdown();
    return kExitUsage;
  }
  if (!a.baseline.empty()) {
    std::set<harness::ConfigId> selected;
    for (const auto& [path, errs] : suite.bad)
      if (order.count({path, ""})) selected.insert({path, ""});
    for (const auto& c : cases) selected.insert({c.test->id, c.settings.key()});
    baseline = load_baseline(a, suite, selected);
    if (!baseline) {
      runner->shutdown();
      return kExitUsage;
    }
  }
  // results.rerun: with a baseline, only what would be a regression is rerun.
  o.reruns = a.rerun_failures;
  if (baseline)
    o.rerun_if = [&baseline](const reports::Record& rec) {
      return baseline->verdict(rec.id, rec.config_key, rec.status_name) ==
             harness::BaselineVerdict::Regression;
    };

  // results.lock: one run at a time writes an output folder.
  OutLock lock;
  if (!a.out.empty()) {
    if (auto e = lock.acquire(a.out)) {
      std::cerr << "simtspec: " << *e << "\n";
      runner->shutdown();
      return kExitUsage;
    }
  }
  std::set<const harness::TestFile*> selected_tests;
  for (const auto& c : cases) selected_tests.insert(c.test);
  // results.store: the run is recorded from its start (a refused store is bad input).
  Recording record;
  if (auto e = record.open(a.db, a.no_db)) {
    std::cerr << "simtspec: " << *e << "\n";
    runner->shutdown();
    return kExitUsage;
  }

  reports::ResultsFile rf;
  rf.header["schema"] = reports::kSchema;
  json::Value suite_info;
  suite_info["version"] = SIMT_VERSION;
  json::Array jp;
  for (const auto& p : paths) jp.emplace_back(p);
  suite_info["paths"] = jp;
  suite_info["tests"] = static_cast<uint64_t>(suite.tests.size());
  {
    // results.store.provenance: the digest of the test files found under the
    // paths, selected or not, so that shards of one run agree (empty when one
    // cannot be read).
    std::string unread;
    suite_info["digest"] = reports::suite_digest(files, unread);
  }
  rf.header["suite"] = suite_info;
  json::Value rinfo;
  rinfo["name"] = runner->name();
  rinfo["version"] = runner->version();
  if (!runner->command().empty()) rinfo["command"] = runner->command();
  rinfo["digest"] = runner_digest(a.runner);  // results.store.provenance
  rinfo["capabilities"] = runner->capabilities().to_json();
  rf.header["runner"] = rinfo;
  rf.header["host"] = host_json();
  rf.header["started"] = now_iso();
  json::Value opts;
  opts["filter"] = o.filter;
  opts["features"] = a.features;
  opts["shard"] = a.shard.empty() ? "0/1" : a.shard;
  opts["jobs"] = o.jobs;
  opts["differential"] = o.differential;
  opts["max_steps"] = o.max_steps;
  if (a.timeout > 0) opts["timeout"] = a.timeout;
  if (!a.baseline.empty()) opts["baseline"] = a.baseline;
  if (a.rerun_failures) opts["rerun_failures"] = a.rerun_failures;
  rf.header["options"] = opts;
  record.begin(test_run_info(rf.header));

  reports::JsonlWriter writer;
  if (!a.out.empty()) {
    if (!writer.open(a.out + "/results.jsonl", err)) {
      std::cerr << "simtspec: " << err << "\n";
      return kExitUsage;
    }
    writer.write(rf.header);
  }
  OrderedLines console(order.size());
  const bool tty = !a.quiet && ::isatty(2);
  size_t done = 0;
  std::map<std::string, size_t> counts;
  auto t0 = std::chrono::steady_clock::now();
  harness::Summary sum;
  std::vector<reports::ResultRow> current_rows;  // results.baseline: the run's results
  {
    SignalScope signals;
    sum = harness::run(*runner, suite, cases, o, [&](const reports::Record& rec) {
      ++done;
      const std::string& st = rec.status_name;
      ++counts[st];
      writer.write(rec);
      record.add(rec);
      if (!a.out.empty()) rf.records.push_back(rec);  // kept for the reports
      if (baseline)
        current_rows.push_back({0, rec.id, rec.config_key, rec.status_name, rec.message});
      std::string line;
      const std::string& key = rec.config_key;
      // runner.harness.console: a line for each result with a page of its own
      // (the status table's `page` column: not pass, unsupported or xfail).
      if (!rec.status || reports::info(*rec.status).page)
        line =
            st + ": " + rec.id + (key.empty() ? "" : "[" + key + "]") + ": " + rec.message + "\n";
      if (tty) std::cerr << "\r\033[K";
      auto at = order.find({rec.file, key});
      if (at != order.end())
        console.put(at->second, std::move(line));
      else if (!line.empty())
        std::cout << line << std::flush;
      if (tty) {
        std::cerr << "\r\033[K[" << done << "/" << cases.size() + bad_selected << "]";
        for (const auto& [k, n] : counts) std::cerr << " " << k << " " << n;
        std::cerr << std::flush;
      }
    });
  }
  console.flush();
  runner->shutdown();
  if (tty) std::cerr << "\r\033[K";
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rf.summary = sum.to_json();
  rf.summary["seconds"] = secs;
  if (sum.interrupted) rf.summary["signal"] = g_signal == SIGTERM ? "SIGTERM" : "SIGINT";
  json::Value last;
  last["summary"] = rf.summary;
  writer.write(last);
  writer.close();
  record.finish(rf.summary, sum.interrupted ? "interrupted" : "complete");
  // results.share: the headline says how much of the selection ran.
  const size_t ntests = selected_tests.size();
  std::cout << runner->name() << ": " << reports::share_run(sum.run(), sum.selected) << ", "
            << reports::thousands(ntests) << " test" << (ntests == 1 ? "" : "s")
            << (suite.bad.empty() ? ""
                                  : " and " + std::to_string(bad_selected) + " malformed file" +
                                        (bad_selected == 1 ? "" : "s"))
            << ", " << static_cast<int>(secs * 10) / 10.0 << " s:";
  for (std::string_view k : reports::kStatuses)
    std::cout << " " << reports::thousands(reports::count_of(sum.counts, k)) << " " << k;
  std::cout << "\n";
  if (!suite.not_tests.empty())
    std::cout << "note: " << suite.not_tests.size()
              << " .simt files without a test header were skipped\n";
  if (sum.interrupted)
    std::cout << "interrupted (" << (g_signal == SIGTERM ? "SIGTERM" : "SIGINT")
              << "): " << reports::thousands(sum.total) << " of "
              << reports::thousands(sum.selected) << " results written\n";
  std::optional<harness::Comparison> cmp;
  if (baseline) {
    // results.baseline.console, results.baseline.summaries
    cmp = harness::compare(*baseline, current_rows);
    std::cout << harness::baseline_console(*cmp);
    if (!a.out.empty()) {
      std::ofstream(a.out + "/baseline.csv", std::ios::binary) << harness::baseline_csv(*cmp);
      std::ofstream(a.out + "/baseline.junit.xml") << harness::baseline_junit(*cmp, runner->name());
    }
  }
  if (!a.out.empty()) {
    reports::HtmlOptions html;
    html.all_pages = a.pages == "all";
    // results.report.history: the implementation's runs in the store, this one included.
    const auto history = record.history(runner->name());
    if (history) html.history = &*history;
    if (int rc = write_outputs(std::move(rf), a.out, spec_dir, html)) return rc;
    std::cout << "report: " << a.out << "/index.html\n";
  }
  if (sum.interrupted) return g_signal == SIGTERM ? 128 + SIGTERM : 128 + SIGINT;
  // A malformed test file is bad input (exit 2), whatever the other results.
  if (bad_selected) return kExitUsage;
  // results.baseline: against a baseline, only regressions fail the run.
  if (cmp) return cmp->count(harness::BaselineVerdict::Regression) ? kExitFail : kExitOk;
  return sum.ok() ? kExitOk : kExitFail;
}

}  // namespace

void register_test(CLI::App& app, int& exit_code, const std::string& argv0) {
  auto a = std::make_shared<TestArgs>();
  auto* cmd =
      app.add_subcommand("test", "run conformance tests on a runner and report the results");
  cmd->add_option("paths", a->paths, "test files or folders (default: suites)");
  cmd->add_option("--runner", a->runner, "reference, or a runner description .toml");
  cmd->add_option(
      "--filter", a->filter,
      "only tests whose id matches this glob (ID-GLOB@CONFIG-GLOB selects configurations)");
  cmd->add_option("--features", a->features,
                  "only tests with one of these feature tags (comma-separated)");
  cmd->add_option("--jobs,-j", a->jobs,
                  "parallel runs, 1 to 1024 (default: one per CPU; at most 8 per CPU are used)")
      ->check(in_range(1, kMaxJobs, "1 to 1024"));
  cmd->add_option("--timeout", a->timeout,
                  "seconds each run may take, at most 3600 (default: the runner description's "
                  "timeout; 10 for the reference)")
      ->check(seconds(false, 3600));
  cmd->add_option("--shard", a->shard,
                  "run shard I of N (I/N): configuration k goes to shard k mod N");
  cmd->add_option("--out", a->out,
                  "write results.jsonl, junit.xml and the HTML report here (and baseline.csv, "
                  "baseline.junit.xml with --baseline)");
  add_pages_option(cmd, a->pages);
  cmd->add_option("--spec", a->spec, "spec folder (default: found from the test paths)");
  cmd->add_option("--baseline", a->baseline,
                  "compare with this run (a run id of the results store, or a results.jsonl or "
                  "older results.json file): exit 1 only for regressions");
  cmd->add_option("--known", a->known,
                  "known failures and flakes (default: NAME.known.toml beside the runner "
                  "description NAME.toml); needs --baseline");
  cmd->add_option("--rerun-failures", a->rerun_failures,
                  "run each unexpected failure this many more times, 0 to 10 (default 0); "
                  "disagreeing runs make it flaky")
      ->check(in_range(0, harness::kMaxReruns, "0 to 10"));
  add_db_options(cmd, a->db, a->no_db, "the run");
  cmd->add_flag("--no-differential", a->no_differential, "do not also compare with the reference");
  cmd->add_flag("--quiet", a->quiet, "no progress line");
  cmd->add_option("--max-steps", a->max_steps,
                  "step limit for tests whose program sets none, 1 to 2^62 (default 1000000)")
      ->check(in_range(1, uint64_t{1} << 62, "1 to 2^62"));
  cmd->callback([a, &exit_code, argv0] { exit_code = run_tests(*a, argv0); });
}

void register_lint(CLI::App& app, int& exit_code) {
  struct Args {
    std::vector<std::string> paths;
    std::string spec;
  };
  auto a = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("lint", "check test files: headers, clause ids, ids, expectations");
  cmd->add_option("paths", a->paths, "test files or folders")->required();
  cmd->add_option("--spec", a->spec, "spec folder (default: found from the paths)");
  cmd->callback([a, &exit_code] {
    std::string err;
    auto files = harness::discover(a->paths, err);
    if (!err.empty()) {
      std::cerr << "simtspec: " << err << "\n";
      exit_code = kExitUsage;
      return;
    }
    auto clauses = harness::load_clauses(harness::find_spec_dir(a->spec, a->paths.front()));
    if (clauses.empty()) {
      std::cerr << "simtspec: no spec clauses found (use --spec DIR)\n";
      exit_code = kExitUsage;
      return;
    }
    auto suite = harness::load_suite(files);
    auto issues = harness::lint(suite, clauses);
    for (const auto& i : issues) std::cout << i.file << ":" << i.line << ": " << i.message << "\n";
    size_t configs = 0;
    for (const auto& t : suite.tests) configs += t.configs.size();
    std::cout << files.size() << " files, " << suite.tests.size() << " tests, " << configs
              << " configurations: "
              << (issues.empty() ? "no problems" : std::to_string(issues.size()) + " problem(s)")
              << "\n";
    exit_code = issues.empty() ? kExitOk : kExitFail;
  });
}

void register_report(CLI::App& app, int& exit_code) {
  struct Args {
    std::vector<std::string> results;
    std::string out;
    std::string spec;
    std::string pages = "failures";
    std::string db;
    bool no_db = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("report", "render results files as a static HTML site");
  add_pages_option(cmd, a->pages);
  auto* o_db = cmd->add_option("--db", a->db,
                               std::string("results store for the history pages (default: ") +
                                   reports::kDefaultStore + " when it exists)");
  cmd->add_flag("--no-db", a->no_db, "no history pages")->excludes(o_db);
  cmd->add_option("results", a->results, "results.jsonl or results.json files (one column each)")
      ->required();
  cmd->add_option("--out", a->out, "output folder")->required();
  cmd->add_option("--spec", a->spec, "spec folder, for the clause coverage table");
  cmd->callback([a, &exit_code] {
    std::vector<reports::ResultsFile> files;
    for (const auto& p : a->results) {
      auto r = reports::read_results(p);
      if (auto* e = std::get_if<std::string>(&r)) {
        std::cerr << "simtspec: " << *e << "\n";
        exit_code = kExitUsage;
        return;
      }
      files.push_back(std::get<reports::ResultsFile>(std::move(r)));
    }
    OutLock lock;  // results.lock
    if (auto e = lock.acquire(a->out)) {
      std::cerr << "simtspec: " << *e << "\n";
      exit_code = kExitUsage;
      return;
    }
    reports::HtmlOptions html;
    html.all_pages = a->pages == "all";
    // results.report.history: the runs in the store of each file's implementation.
    // The default store is read only when it exists; a named one must.
    std::optional<reports::History> history;
    const std::string db = a->db.empty() ? reports::kDefaultStore : a->db;
    std::error_code ec;
    if (!a->no_db && (!a->db.empty() || fs::exists(db, ec))) {
      auto opened = open_existing_store(a->db);
      if (auto* e = std::get_if<std::string>(&opened)) {
        std::cerr << "simtspec: " << *e << "\n";
        exit_code = kExitUsage;
        return;
      }
      const auto& store = std::get<reports::Store>(opened);
      history.emplace();
      std::set<std::string> names;
      for (const auto& f : files)
        if (names.insert(f.runner_name()).second) {
          reports::History h = store.history_of(f.runner_name());
          history->runs.insert(history->runs.end(), h.runs.begin(), h.runs.end());
          history->results.insert(history->results.end(), h.results.begin(), h.results.end());
        }
      html.history = &*history;
    }
    std::string err = reports::write_html(
        files, harness::load_clauses(harness::find_spec_dir(a->spec, ".")), a->out, html);
    if (!err.empty()) {
      std::cerr << "simtspec: " << err << "\n";
      exit_code = kExitUsage;
      return;
    }
    std::cout << "report: " << a->out << "/index.html\n";
    exit_code = kExitOk;
  });
}

void register_serve(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "serve", "answer runner-protocol requests on stdin/stdout with the reference");
  cmd->callback([&exit_code] {
    std::ios::sync_with_stdio(false);
    runners::serve(std::cin, std::cout,
                   [](const runners::RunRequest& r) { return runners::run_reference(r); });
    exit_code = kExitOk;
  });
}

}  // namespace simt::cli
