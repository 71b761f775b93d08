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

namespace simt::reports {

inline constexpr const char* kSchema = "simtspec-results/1";

// Streams results.jsonl: each line is flushed as soon as it is written
// (results.stream), so an interrupted run leaves a readable file.
class JsonlWriter {
 public:
  ~JsonlWriter();
  bool open(const std::string& path, std::string& err);
  void write(const json::Value& line);
  void close();

 private:
  std::FILE* f_ = nullptr;
};

struct ResultsFile {
  std::string path;
  json::Value header;
  std::vector<json::Value> records;
  json::Value summary;  // null if the run did not finish
  bool complete() const { return !summary.is_null(); }
  std::string runner_name() const;
};

// Reads a .jsonl results file (ignoring an incomplete last line) or a .json
// document written by write_document.
std::variant<ResultsFile, std::string> read_results(const std::string& path);
// The complete document: the header's fields plus "results" and "summary".
json::Value document(const ResultsFile& r);
// results.junit
std::string junit_xml(const ResultsFile& r);
std::string xml_escape(const std::string& s);

// The result statuses of results.status, in report order.
inline constexpr std::array<std::string_view, 7> kStatuses{"pass",  "fail",  "unsupported", "error",
                                                           "xfail", "xpass", "flaky"};
// results.status.bad: the statuses that fail a run (runner.harness) unless a
// baseline excuses them (results.baseline).
inline constexpr std::array<std::string_view, 4> kBadStatuses{"fail", "error", "xpass", "flaky"};
bool is_bad_status(std::string_view status);

// Counts of each status over records.
std::map<std::string, size_t> count_statuses(const std::vector<json::Value>& records);
// counts[status], or 0.
size_t count_of(const std::map<std::string, size_t>& counts, std::string_view status);

// results.share: how much of the selection ran (every status but `unsupported`):
// "314 of 5,173 configurations run (6%)". The percentage is rounded down, so that
// it says 100% only when everything ran, and is "<1%" when some but under 1% did.
std::string share_run(size_t run, size_t total);
// 5173 -> "5,173".
std::string thousands(uint64_t n);

}  // namespace simt::reports
