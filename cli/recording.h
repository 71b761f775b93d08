// Recording a run in the results store (spec/results.md, results.store): what
// `simtspec test` and `simtspec fuzz` share. A write failure is a warning on
// stderr, once; the run goes on without the store.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <variant>

#include "fuzz.h"
#include "history.h"
#include "record.h"
#include "store.h"

namespace simt::cli {

class Recording {
 public:
  // Opens `db` (kDefaultStore when empty) unless `off` (--no-db). A message when
  // the store is refused (not a store, a newer schema, cannot be created).
  std::optional<std::string> open(const std::string& db, bool off);
  // Records the run as `running`; fills in host, pid and simtspec_version.
  void begin(reports::RunInfo info);
  void add(const json::Value& record);
  void add(const reports::Record& record);
  void finish(const json::Value& summary, const std::string& state);
  bool on() const { return store_.has_value() && run_ != 0; }
  // results.report.history: the runs of `impl` in the store, for the report;
  // nullopt when nothing is recorded.
  std::optional<reports::History> history(const std::string& impl) const {
    if (!on()) return std::nullopt;
    return store_->history_of(impl);
  }

 private:
  void check();
  std::optional<reports::Store> store_;
  int64_t run_ = 0;
};

// results.store: `--db FILE` and `--no-db` (which exclude each other) on a command
// that records `what` ("the run", "the merged run").
void add_db_options(CLI::App* cmd, std::string& db, bool& no_db, const std::string& what);
// results.store, results.history: an existing store, for reading (`db`, else the
// default store); a message when there is none or it is refused. Never creates one.
std::variant<reports::Store, std::string> open_existing_store(const std::string& db);

// results.store.provenance: the SHA-256 of a runner description's bytes ("" for
// `reference`, or a file that cannot be read).
std::string runner_digest(const std::string& runner_arg);
std::string host_name();

// results.store.provenance: a test run's row from its results header
// (results.header: runner name, version and digest, suite version and digest,
// options, start), for `simtspec test` and for the run `simtspec merge` makes.
reports::RunInfo test_run_info(const json::Value& header);

// results.store.fuzz: a fuzz run's row (before it starts) and its results.
reports::RunInfo fuzz_run_info(const gen::FuzzOptions& o, const std::string& runner_arg,
                               runners::Runner* runner);
void record_fuzz(Recording& record, const gen::FuzzResult& r);
// results.merge, results.store.fuzz: the run row of merged fuzz shards, from the
// shards' header (oracle.fuzz.results: runner, runner_version, runner_digest, seed,
// count, invariants, max_size, keep_going, started) and the merged shard list.
reports::RunInfo fuzz_run_info(const json::Value& header, const json::Value& merged_from);

}  // namespace simt::cli
