// What the results store keeps over runs (spec/results.md, results.store): plain
// data that the history commands, the baseline check and the report read. The
// store (store.h) fills it; nothing here knows SQLite.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace simt::reports {

// One recorded run (a `simtspec test` or `simtspec fuzz`): the store's `runs` row.
struct RunInfo {
  int64_t id = 0;
  std::string kind;   // "test" or "fuzz"
  std::string state;  // "running", "complete" or "interrupted" (results.store.interrupted)
  std::string impl_name, impl_version;
  std::string runner_digest;  // SHA-256 of the runner description's bytes; "" for the reference
  std::string suite_version, suite_digest;  // the suite's digest (results.store.provenance)
  std::string simtspec_version;
  std::string host;
  int64_t pid = 0;      // the process that recorded it (results.store.interrupted)
  std::string options;  // the run's options as compact JSON
  std::string started;  // ISO 8601 UTC
  double duration_s = 0;
  std::map<std::string, uint64_t> counts;  // status -> results
  uint64_t selected = 0;                   // results.share: selected and run
  uint64_t run = 0;
  bool operator==(const RunInfo&) const = default;
};

// One configuration's result in one run: the store's `results` row, less the record.
struct ResultRow {
  int64_t run = 0;
  std::string test_id, config_key, status, message;
  bool operator==(const ResultRow&) const = default;
};

// The runs of some implementations, oldest first, with their results: what the
// report's history pages draw.
struct History {
  std::vector<RunInfo> runs;
  std::vector<ResultRow> results;  // of the runs above, any order
};

}  // namespace simt::reports
