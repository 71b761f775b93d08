// The conformance harness (spec/runner.md, runner.harness): selects test
// configurations, runs them on a runner, compares, and streams result records
// (spec/results.md, results.record) to a sink.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "format.h"
#include "html.h"
#include "json.h"
#include "record.h"
#include "runner.h"

namespace simt::harness {

// Clause ids defined in a spec folder (paragraphs starting with **[id]**), with
// their chapter file and first words: the report's clause type, so the table
// goes to the report as it is.
using ClauseInfo = reports::Clause;
std::map<std::string, ClauseInfo> load_clauses(const std::string& spec_dir);
// The spec folder: `hint` if given, else the first spec/ found above `start`, else
// the one simtspec was built from.
std::string find_spec_dir(const std::string& hint, const std::string& start);

struct Suite {
  std::vector<TestFile> tests;
  // Files that are not valid tests: path -> problems (format.lint).
  std::map<std::string, std::vector<FormatError>> bad;
  std::vector<std::string> not_tests;  // .simt files without a test header
};
Suite load_suite(const std::vector<std::string>& files);

struct Options {
  std::string filter;              // glob on the test id (empty: all)
  std::set<std::string> features;  // keep tests having any of these (empty: all)
  uint32_t jobs = 1;
  uint32_t shard_index = 0, shard_count = 1;
  bool differential = true;  // compare non-reference runners with the reference
  // Step limit for programs without a .max_steps directive (format.matrix), so that
  // an implementation that runs away costs little.
  uint64_t max_steps = 1'000'000;
  // runner.timeout: the wall-clock limit of each run the harness makes on the
  // reference itself (the differential comparison, traces, policy checks).
  double timeout = runners::kDefaultTimeout;
  std::string simtspec = "simtspec";     // how reproduce commands name the program
  std::string runner_arg = "reference";  // the --runner argument, for reproduce commands
  // results.rerun: a result for which `rerun_if` holds (none: its status is bad,
  // reports::is_bad_status) runs `reruns` more times and is classified by
  // apply_reruns (baseline.h) before it is emitted.
  uint32_t reruns = 0;
  std::function<bool(const reports::Record& record)> rerun_if;
};

struct Case {
  const TestFile* test = nullptr;
  Settings settings;
};

// The selected configurations, in suite order (file, then matrix order), after
// filter, features and shard (the i-th configuration goes to shard i mod count).
std::vector<Case> select(const Suite& s, const Options& o);

struct Summary {
  std::map<std::string, size_t> counts;  // status -> number
  size_t total = 0;                      // results emitted
  size_t selected = 0;       // results the run was to emit (malformed files and configurations)
  bool interrupted = false;  // results.interrupted: stopped by interrupt_flag()
  size_t run() const;        // results.share: every status but unsupported
  bool ok() const;  // no bad status (results.status.bad: the status table), not interrupted
  // results.stream: the summary line's object: `total`, `selected`, `run`, each
  // status, and `interrupted` when the run was interrupted.
  json::Value to_json() const;
};

// results.record: the harness builds typed records (reports/record.h);
// reports::to_json() gives the record as results.jsonl holds it.
using ResultSink = std::function<void(const reports::Record& record)>;

// Runs the cases (with `jobs` threads); calls `sink` once per result, from one
// thread at a time, in completion order. Records for malformed files are emitted
// first. Once runners::interrupt_flag() is set no further case starts, and a case
// whose run the interrupt cut short is not emitted (results.interrupted).
Summary run(runners::Runner& runner, const Suite& suite, const std::vector<Case>& cases,
            const Options& o, const ResultSink& sink);

// runner.toml xfail: glob over "id" or "id@config_key".
bool matches_xfail(const std::vector<std::string>& globs, const std::string& id,
                   const std::string& key);
bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace simt::harness
