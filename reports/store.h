// The results store (spec/results.md, results.store): one SQLite file that keeps
// every `simtspec test` and `simtspec fuzz` run with its provenance and results,
// for the history commands, the baseline check and the report (history.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "history.h"
#include "json.h"
#include "record.h"

namespace simt::reports {

// results.store.schema: the schema version this program writes and migrates to.
inline constexpr int kStoreVersion = 2;
// results.store: the default store, under the working directory.
inline constexpr const char* kDefaultStore = ".simtspec/results.db";

class Store {
 public:
  // Opens `path`, creating it (and its folder) as an empty store when absent, and
  // migrating an older schema (results.store.migrate). A message when the file is
  // not a simtspec store, has a newer schema, or cannot be opened.
  static std::variant<Store, std::string> open(const std::string& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();  // writes what add() still holds

  // results.store.interrupted: a new run row in state `running` (its id, counts and
  // duration are ignored); its id, or 0 with error() set.
  int64_t begin_run(const RunInfo& info);
  // One result record (results.record) of `run`; written in batches
  // (results.store.concurrency). A failed write sets error() and drops the batch.
  void add(int64_t run, const Record& record);
  // A record as JSON (a fuzz run's failure, results.store.fuzz, with fields of its
  // own): its row is that of the Record read from it, the whole JSON kept as is.
  void add(int64_t run, const json::Value& record);
  // Writes what add() holds, then the summary (results.stream's summary object:
  // `selected`, `run`, `seconds` and the status counts) and the final state
  // (`complete` or `interrupted`). False with error() set on failure.
  bool finish(int64_t run, const json::Value& summary, const std::string& state);
  // The first write error since the last call, cleared by the call.
  std::optional<std::string> take_error();

  std::vector<RunInfo> runs() const;  // oldest first
  std::optional<RunInfo> run(int64_t id) const;
  std::vector<ResultRow> results(int64_t run) const;                 // in the order added
  std::vector<ResultRow> history(const std::string& test_id) const;  // all runs, by run
  // results.report.history: the test runs of `impl_name` (of every implementation
  // when empty), oldest first, with the results of the newest `result_runs` of them.
  History history_of(const std::string& impl_name, size_t result_runs = 20) const;
  // The full records stored for `run` (results.store.schema: not for pass,
  // unsupported and xfail), in the order added.
  std::vector<json::Value> records(int64_t run) const;

  // results.history.prune: deletes every run but the newest `keep` of each
  // implementation and kind, with its results, and compacts the file; the number of
  // runs deleted, or nullopt with error() set.
  std::optional<size_t> prune(size_t keep);

  // The process that began a run in state `running`, when it still runs on this
  // host: true, false when it ended, nullopt when it cannot be told (another host).
  static std::optional<bool> alive(const RunInfo& r);

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  bool flush();
  void add_row(int64_t run, const Record& record, const json::Value& whole);
  std::unique_ptr<Impl> impl_;
};

// results.store.provenance: the suite digest of test files (paths as given, read
// from the working directory); "" with `err` set when one cannot be read.
std::string suite_digest(std::vector<std::string> paths, std::string& err);

}  // namespace simt::reports
