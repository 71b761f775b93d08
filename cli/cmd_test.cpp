// `simtspec test`, `simtspec lint`, `simtspec report`, `simtspec serve`: the
// conformance harness on the command line (spec/runner.md, spec/results.md).
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "common.h"
#include "harness.h"
#include "html.h"
#include "lint.h"
#include "protocol.h"
#include "reference.h"
#include "results.h"

namespace simt::cli {
namespace {

namespace fs = std::filesystem;

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json::Value host_json() {
  json::Value h;
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  h["hostname"] = std::string(name);
  utsname u{};
  if (::uname(&u) == 0) h["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  h["cpus"] = std::thread::hardware_concurrency();
  return h;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Writes junit.xml, results.json and the HTML site next to results.jsonl.
int write_outputs(reports::ResultsFile rf, const std::string& out, const std::string& spec_dir) {
  std::ofstream(out + "/junit.xml") << reports::junit_xml(rf);
  std::ofstream(out + "/results.json") << json::dump(reports::document(rf), 1) << "\n";
  std::vector<reports::ResultsFile> files;
  files.push_back(std::move(rf));
  std::string err = reports::write_html(files, harness::load_clauses(spec_dir), out);
  if (!err.empty()) {
    std::cerr << "simtspec: report: " << err << "\n";
    return kExitUsage;
  }
  return kExitOk;
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
  bool no_differential = false;
  bool quiet = false;
  uint64_t max_steps = 1'000'000;
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
  o.jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  o.differential = !a.no_differential;
  o.max_steps = a.max_steps;
  o.runner_arg = absolute_arg(a.runner);
  o.simtspec = self_path(argv0);
  if (!a.shard.empty()) {
    unsigned i = 0, n = 0;
    char slash = 0;
    std::istringstream ss(a.shard);
    if (!(ss >> i >> slash >> n) || slash != '/' || n == 0 || i >= n || !ss.eof()) {
      std::cerr << "simtspec: --shard must be I/N with 0 <= I < N, e.g. 0/4\n";
      return kExitUsage;
    }
    o.shard_index = i;
    o.shard_count = n;
  }
  auto opened = runners::open_runner(a.runner);
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
  std::string spec_dir = harness::find_spec_dir(a.spec, paths.front());

  reports::ResultsFile rf;
  rf.header["schema"] = reports::kSchema;
  json::Value suite_info;
  suite_info["version"] = SIMT_VERSION;
  json::Array jp;
  for (const auto& p : paths) jp.emplace_back(p);
  suite_info["paths"] = jp;
  suite_info["tests"] = static_cast<uint64_t>(suite.tests.size());
  rf.header["suite"] = suite_info;
  json::Value rinfo;
  rinfo["name"] = runner->name();
  rinfo["version"] = runner->version();
  if (!runner->command().empty()) rinfo["command"] = runner->command();
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
  rf.header["options"] = opts;

  reports::JsonlWriter writer;
  if (!a.out.empty()) {
    std::error_code ec;
    fs::create_directories(a.out, ec);
    if (!writer.open(a.out + "/results.jsonl", err)) {
      std::cerr << "simtspec: " << err << "\n";
      return kExitUsage;
    }
    writer.write(rf.header);
  }
  const bool tty = !a.quiet && ::isatty(2);
  size_t done = 0;
  std::map<std::string, size_t> counts;
  auto t0 = std::chrono::steady_clock::now();
  harness::Summary sum = harness::run(*runner, suite, cases, o, [&](const json::Value& rec) {
    ++done;
    const std::string& st = rec.find("status")->as_string();
    ++counts[st];
    writer.write(rec);
    if (!a.out.empty()) rf.records.push_back(rec);  // kept only for the reports
    if (st != "pass" && st != "unsupported" && st != "xfail") {
      std::string key = rec.find("config_key")->as_string();
      const json::Value* msg = rec.find("message");
      if (tty) std::cerr << "\r\033[K";
      std::cout << st << ": " << rec.find("id")->as_string() << (key.empty() ? "" : "[" + key + "]")
                << ": " << (msg && msg->is_string() ? msg->as_string() : "") << "\n"
                << std::flush;
    }
    if (tty) {
      std::cerr << "\r\033[K[" << done << "/" << cases.size() + suite.bad.size() << "]";
      for (const auto& [k, n] : counts) std::cerr << " " << k << " " << n;
      std::cerr << std::flush;
    }
  });
  runner->shutdown();
  if (tty) std::cerr << "\r\033[K";
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rf.summary = sum.to_json();
  rf.summary["seconds"] = secs;
  json::Value last;
  last["summary"] = rf.summary;
  writer.write(last);
  writer.close();
  std::cout << runner->name() << ": " << sum.total << " configurations of " << suite.tests.size()
            << " tests in " << static_cast<int>(secs * 10) / 10.0 << " s:";
  for (const char* k : {"pass", "fail", "error", "unsupported", "xfail", "xpass"})
    std::cout << " " << reports::count_of(sum.counts, k) << " " << k;
  std::cout << "\n";
  if (!suite.not_tests.empty())
    std::cout << "note: " << suite.not_tests.size()
              << " .simt files without a test header were skipped\n";
  if (!a.out.empty()) {
    if (int rc = write_outputs(std::move(rf), a.out, spec_dir)) return rc;
    std::cout << "report: " << a.out << "/index.html\n";
  }
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
  cmd->add_option("--jobs,-j", a->jobs, "parallel runs (default: number of CPUs)");
  cmd->add_option("--shard", a->shard,
                  "run shard I of N (I/N): configuration k goes to shard k mod N");
  cmd->add_option("--out", a->out,
                  "write results.jsonl, results.json, junit.xml and the HTML report here");
  cmd->add_option("--spec", a->spec, "spec folder (default: found from the test paths)");
  cmd->add_flag("--no-differential", a->no_differential, "do not also compare with the reference");
  cmd->add_flag("--quiet", a->quiet, "no progress line");
  cmd->add_option("--max-steps", a->max_steps,
                  "step limit for tests whose program sets none (default 1000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62));
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
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("report", "render results files as a static HTML site");
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
    std::string err = reports::write_html(
        files, harness::load_clauses(harness::find_spec_dir(a->spec, ".")), a->out);
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
    runners::serve(std::cin, std::cout, runners::run_reference);
    exit_code = kExitOk;
  });
}

}  // namespace simt::cli
