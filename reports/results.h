// Results files (spec/results.md): the streamed JSON-lines file, the complete
// JSON document, and JUnit XML. Depends only on the result model.
#pragma once

#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "json.h"
#include "record.h"

namespace simt::reports {

inline constexpr const char* kSchema = "simtspec-results/1";

// Streams results.jsonl: each line is flushed as soon as it is written
// (results.stream), so an interrupted run leaves a readable file. A result (an
// object with `id` and `status`) is written as results.test says: its test
// fields go to a `{"test": {...}}` line before it when they differ from the last
// test line written for its id, and the result line keeps the rest.
class JsonlWriter {
 public:
  ~JsonlWriter();
  bool open(const std::string& path, std::string& err);
  void write(const json::Value& line);
  void write(const Record& r) { write(to_json(r)); }
  void close();

 private:
  void put(const json::Value& line);
  std::FILE* f_ = nullptr;
  std::map<std::string, std::string> test_lines_;  // id -> the last test line's text
};

struct ResultsFile {
  std::string path;
  json::Value header;
  std::vector<Record> records;  // results.record, typed (read leniently, record.h)
  json::Value summary;          // null if the run did not finish
  bool complete() const { return !summary.is_null(); }
  // The header and summary typed (record.h), for readers: built from the JSON
  // each time, so build them once.
  RunHeader run_header() const { return header_from_json(header); }
  RunSummary run_summary() const { return summary_from_json(summary); }
  // The header's runner.name, or "unknown".
  std::string runner_name() const;
};

// Reads a .jsonl results file (ignoring an incomplete last line; test lines,
// results.test, are joined back into the results that follow them, so every
// record read holds its test fields) or a .json document as earlier versions
// wrote it.
std::variant<ResultsFile, std::string> read_results(const std::string& path);
// results.junit
std::string junit_xml(const ResultsFile& r);
std::string xml_escape(const std::string& s);

// The result statuses of results.record, in report order: the names of the
// status table (record.h).
inline constexpr std::array<std::string_view, kStatusTable.size()> kStatuses = [] {
  std::array<std::string_view, kStatusTable.size()> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kStatusTable[i].name;
  return names;
}();
// results.status.bad: a status that fails a run (runner.harness) unless a
// baseline excuses it (results.baseline): the table's `failing` column.
bool is_bad_status(std::string_view status);

// counts[status], or 0.
size_t count_of(const std::map<std::string, size_t>& counts, std::string_view status);

// results.share: how much of the selection ran (every status but `unsupported`):
// "314 of 5,173 configurations run (6%)". The percentage is rounded down, so that
// it says 100% only when everything ran, and is "<1%" when some but under 1% did.
std::string share_run(size_t run, size_t total);
// 5173 -> "5,173".
std::string thousands(uint64_t n);

}  // namespace simt::reports
