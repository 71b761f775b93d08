// The results record (spec/results.md, results.record) as a type: what the
// report, the JUnit writer and the other readers of results use instead of
// looking fields up by name in JSON. to_json() and from_json() are the one place
// that knows the field names. Outcomes (`expected`, `actual`, `reference`) and the
// configuration stay JSON, as the runner protocol and the test format define them;
// outcome_view() reads what the report needs of an outcome.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.h"

namespace simt::reports {

// results.record `status`: every status, in report order, with what the report
// and JUnit do with it. One table: the names, the order and these columns come
// from here only.
enum class Status : uint8_t { pass, fail, unsupported, error, xfail, xpass, flaky };

enum class JunitKind : uint8_t { passed, failure, error, skipped };

struct StatusInfo {
  Status status;
  std::string_view name;
  bool failing;  // results.status.bad: rows with it come first; the run is not ok
  bool page;     // results.report.pages: gets a page by default
  JunitKind junit;
};

inline constexpr std::array<StatusInfo, 7> kStatusTable{{
    {Status::pass, "pass", false, false, JunitKind::passed},
    {Status::fail, "fail", true, true, JunitKind::failure},
    {Status::unsupported, "unsupported", false, false, JunitKind::skipped},
    {Status::error, "error", true, true, JunitKind::error},
    {Status::xfail, "xfail", false, false, JunitKind::skipped},
    {Status::xpass, "xpass", true, true, JunitKind::failure},
    // results.rerun: its reruns disagreed (`--rerun-failures`); a bad status
    // (results.status.bad) unless a baseline's known flake excuses it, a JUnit
    // failure of type `flaky`.
    {Status::flaky, "flaky", true, true, JunitKind::failure},
}};

const StatusInfo& info(Status s);
std::optional<Status> parse_status(std::string_view name);

// results.record `preemptions`: one preemption point of the host script.
struct Preemption {
  std::optional<int64_t> step;
  json::Value core;  // a core number or "all"
  std::string flow;  // "A" or "B"
  std::string intruder;
  bool operator==(const Preemption&) const = default;
};

// runner.firstdiff: the first difference of a failing result, as the harness
// (runners/harness/compare.cpp) reports it. Fields of the object that are not
// named here are kept, in their order, in `other`.
struct FirstDiff {
  std::string kind;    // "buffer" (an element) or "field" (anything else)
  std::string buffer;  // kind buffer: the buffer's name
  std::string field;   // kind field: status, event.name ..., buffer.NAME.length, image.word ...
  std::optional<int64_t> index;  // kind buffer: the element
  // The two values; for a missing buffer `actual` is null (a value, not absent).
  std::optional<json::Value> expected, actual;
  // kind buffer, one element per thread (format.expr): the element's lane, global
  // warp, warp in its workgroup and workgroup.
  std::optional<int64_t> lane, gwarp, warp, wg;
  std::optional<int64_t> offset;  // preempt.tool.image: the first differing byte
  std::string name;               // and the image field holding it
  std::string against;            // "expectation" or "reference"
  json::Object other;
  bool operator==(const FirstDiff&) const = default;
};

// What the report reads of an expectation (format.expect: `status`, `line`,
// `buffers` with `values` or `each`) or an outcome (runner.protocol.response:
// `status`, `line`, `buffers` with `type` and `values`), typed. A view: the record
// keeps the object itself (results.record holds it as the runner or the test gave
// it), the report builds this from it.
struct OutcomeView {
  struct Buffer {
    std::string name, type;
    std::optional<json::Array> values;
    std::string each;  // an expectation's `each` expression
  };
  std::string status;
  std::optional<int64_t> line;
  std::vector<Buffer> buffers;  // in the object's order
  const Buffer* buffer(std::string_view name) const;
};

// What the report reads of a configuration (results.record `config`, the
// settings of format.matrix): the layout of format.expr, typed. A view, like
// OutcomeView: the record keeps the configuration as it is.
struct LayoutView {
  std::optional<int64_t> wave, warps, workgroups;
};

struct Record {
  std::string id, title, file, config_key;
  json::Value config;  // the configuration's full settings (an object)
  std::vector<std::string> clauses, features;
  // The status; std::nullopt for a name not in kStatusTable (or none), which
  // status_name then holds ("unknown" when the record has none).
  std::optional<Status> status;
  std::string status_name;
  std::string message;
  std::optional<int64_t> checks;
  json::Value expected, actual, reference;  // null: absent
  std::optional<FirstDiff> first_diff;
  std::string stderr_text;  // `stderr`
  std::vector<std::string> trace, reference_trace;
  std::string trace_error;
  std::string host;  // trap.host.toml
  std::vector<Preemption> preemptions;
  std::optional<int64_t> restore_bytes;
  std::optional<double> duration_ms;
  std::string reproduce;
  std::string source;
  std::vector<std::string> reruns;  // results.rerun: the reruns' statuses, in order

  bool failing() const { return status && info(*status).failing; }
  void set_status(Status s) {
    status = s;
    status_name = std::string(info(s).name);
  }
  bool operator==(const Record&) const = default;
};

// The fields of a result that are the same for every configuration of a test
// (results.test): results.jsonl holds them once per test, in a test line;
// the names are those of to_json().
inline constexpr std::array<std::string_view, 9> kTestFields{
    "title",  "file", "clauses",     "features",     "expected",
    "source", "host", "preemptions", "restore_bytes"};

// The record as results.record writes it: absent fields (empty strings and lists,
// nulls, nullopt) are left out; `id`, `status`, `config_key`, `clauses` and
// `features` are always there.
json::Value to_json(const Record& r);
// A record read from a results file. Reading is lenient, as a report must be: a
// field that is missing or of an unexpected type is absent; so is a list's item
// of the wrong type.
Record from_json(const json::Value& v);

json::Value to_json(const FirstDiff& d);
// Lenient like from_json(Record): a field of an unexpected type is absent.
FirstDiff first_diff_from_json(const json::Value& v);
// Lenient: anything missing or of an unexpected type is absent (a buffer that is
// not an object has only its name).
OutcomeView outcome_view(const json::Value& v);
// Lenient: a setting that is missing or not an integer is absent.
LayoutView layout_view(const json::Value& config);

// results.header as a type: what the report and the other readers of a results
// file use instead of looking its fields up by name. `capabilities`
// (runner.capabilities) and `options` stay JSON: the runner description and the
// command line define them. Fields of the header that are not named here are
// kept, in their order, in `other`, so that a header read and written again
// holds what it held.
struct RunHeader {
  std::string schema;
  struct Suite {
    std::string version;  // of simtspec
    std::vector<std::string> paths;
    std::optional<uint64_t> tests;
    std::string digest;  // results.store.provenance
    json::Object other;
    bool operator==(const Suite&) const = default;
  } suite;
  struct Runner {
    std::string name, version, command, digest;
    json::Value capabilities;  // null: absent
    json::Object other;
    bool operator==(const Runner&) const = default;
  } runner;
  struct Host {
    std::string hostname, os;
    std::optional<uint64_t> cpus;
    json::Object other;
    bool operator==(const Host&) const = default;
  } host;
  std::string started;  // ISO 8601 UTC
  json::Value options;  // an object, or null: absent
  json::Object other;
  bool operator==(const RunHeader&) const = default;
};

// The summary line's object (results.stream) as a type. `counts` holds each
// status of kStatusTable the summary names (a status it does not name is not
// there); other fields are kept in `other`.
struct RunSummary {
  std::optional<uint64_t> total, selected, run;
  std::map<std::string, uint64_t, std::less<>> counts;  // status name -> number
  bool interrupted = false;
  std::optional<double> seconds;
  std::string signal;  // results.interrupted: "SIGINT" or "SIGTERM"
  json::Object other;
  bool operator==(const RunSummary&) const = default;
};

// The header and summary as results.jsonl writes them: strings that are empty,
// nullopts and nulls are left out (`schema` and the `suite`, `runner` and `host`
// objects are always there; `interrupted` only when true); the fields in the
// order results.header and results.stream name them, then `other`.
json::Value to_json(const RunHeader& h);
json::Value to_json(const RunSummary& s);
// Read leniently, as a report must: a field that is missing or of an unexpected
// type is absent (a header that is not an object reads as an empty header).
RunHeader header_from_json(const json::Value& v);
RunSummary summary_from_json(const json::Value& v);

}  // namespace simt::reports
