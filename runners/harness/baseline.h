// CI against a baseline (spec/results.md, results.baseline, results.known,
// results.rerun): the comparison of a run's results with an earlier run's, the
// per-implementation lists of known failures and flakes, the summaries written
// from the comparison, and the classification of reruns. Works on plain rows
// (reports/history.h), whether they come from a results file or from the store.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "history.h"
#include "json.h"
#include "record.h"

namespace simt::harness {

// results.known: one entry of a known-failures file.
struct KnownEntry {
  std::string test;    // glob over the test id
  std::string config;  // glob over the config key; "*" when the entry has none
  std::string status;  // "fail", "error" or "flaky"
  std::string reason;
  uint32_t line = 0;  // of the entry's [[known]] table
};

struct KnownList {
  std::string file;  // "" when there is none
  std::vector<KnownEntry> entries;
};

// results.known: the file beside a runner description: `DIR/NAME.known.toml` for
// `DIR/NAME.toml`.
std::string known_path(const std::string& runner_description);
// results.known: parses a known-failures file; a problem is `FILE:LINE: message`.
std::variant<KnownList, std::string> parse_known(const std::string& text, const std::string& file);
// Reads and parses `file`; a file that cannot be read is a problem too.
std::variant<KnownList, std::string> load_known(const std::string& file);

// results.baseline.verdict: what a configuration's result is against the baseline.
enum class BaselineVerdict { Regression, Progression, Known, Unchanged, New, Vanished };
struct BaselineVerdictRow {
  BaselineVerdict verdict;
  std::string_view name;
};
inline constexpr std::array<BaselineVerdictRow, 6> kVerdicts{
    {{BaselineVerdict::Regression, "regression"},
     {BaselineVerdict::Progression, "progression"},
     {BaselineVerdict::Known, "known"},
     {BaselineVerdict::Unchanged, "unchanged"},
     {BaselineVerdict::New, "new"},
     {BaselineVerdict::Vanished, "vanished"}}};
std::string_view verdict_name(BaselineVerdict v);

using ConfigId = std::pair<std::string, std::string>;  // test id, config key

// What a run is compared with: the baseline's results, the known list, and the
// configurations the suite has that the run did not select (left out of the
// comparison, so that a filtered or sharded run has no `vanished` rows for them).
struct Baseline {
  std::map<ConfigId, reports::ResultRow> rows;
  KnownList known;
  std::set<ConfigId> unselected;

  explicit Baseline(const std::vector<reports::ResultRow>& baseline_rows = {},
                    KnownList known_list = {}, std::set<ConfigId> unselected_configs = {});
  // results.known: the first entry that excuses `status` for the configuration,
  // or nullptr.
  const KnownEntry* known_for(const std::string& test, const std::string& config,
                              const std::string& status) const;
  // results.baseline.verdict: the verdict of a result (`status` "" when the run
  // has none for a configuration of the baseline), and the known entry that
  // excused it, if any.
  BaselineVerdict verdict(const std::string& test, const std::string& config,
                          const std::string& status, const KnownEntry** excused = nullptr) const;
};

struct Comparison {
  struct Entry {
    std::string test, config;
    std::string baseline_status, status;  // "" where absent
    BaselineVerdict verdict = BaselineVerdict::Unchanged;
    std::string text;  // the known entry's reason, else the message (the baseline's if vanished)
  };
  std::vector<Entry> entries;            // by test id, then config key
  std::vector<const KnownEntry*> stale;  // results.known.stale, in file order
  std::string known_file;
  std::map<BaselineVerdict, size_t> counts;
  size_t count(BaselineVerdict v) const;
};

// results.baseline: every configuration of the run and of the baseline (less the
// unselected) with its verdict.
Comparison compare(const Baseline& b, const std::vector<reports::ResultRow>& current);

// The rows of result records (results.record): id, config_key, status, message.
std::vector<reports::ResultRow> rows_of(const std::vector<reports::Record>& records);

// results.baseline.summaries: baseline.csv and baseline.junit.xml.
std::string baseline_csv(const Comparison& c);
std::string baseline_junit(const Comparison& c, const std::string& runner_name);
// results.baseline.console: a line per regression and progression, then the count line.
std::string baseline_console(const Comparison& c);
// RFC 4180: a field in double quotes (its quotes doubled) when it holds a comma,
// a quote or a line break; as it is otherwise.
std::string csv_field(const std::string& s);

// results.rerun: classifies `first` (a result with a bad status) by `reruns`, the
// results of running its configuration again: `flaky` if any rerun's status, or
// for `fail` its message, differs from the first's; otherwise the status stays
// and the message says how many runs gave it. Records the reruns' statuses in
// `reruns`. No reruns (all cut short): `first` is left as it is.
void apply_reruns(reports::Record& first, const std::vector<reports::Record>& reruns);

// `simtspec test --rerun-failures` takes 0 to this.
inline constexpr uint32_t kMaxReruns = 10;

}  // namespace simt::harness
