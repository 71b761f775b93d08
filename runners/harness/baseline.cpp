#include "baseline.h"

#include <algorithm>
#include <filesystem>

#include "harness.h"
#include "host/host.h"
#include "host/toml_text.h"
#include "results.h"

namespace simt::harness {

namespace fs = std::filesystem;

std::string known_path(const std::string& runner_description) {
  fs::path p(runner_description);
  return (p.parent_path() / (p.stem().string() + ".known.toml")).string();
}

namespace {

// results.known: the statuses an entry may name.
constexpr std::array<std::string_view, 3> kKnownStatuses{"fail", "error", "flaky"};

}  // namespace

std::variant<KnownList, std::string> parse_known(const std::string& text, const std::string& file) {
  auto parsed = host::parse_toml(text);
  if (auto* e = std::get_if<host::TomlError>(&parsed))
    return file + ":" + (e->line ? std::to_string(e->line) + ":" : std::string()) +
           " not a usable TOML document: " + e->message;
  const host::TomlDoc& doc = std::get<host::TomlDoc>(parsed);
  auto at = [&](const toml::value& v) {
    const uint32_t line = doc.line(v);
    return file + ":" + (line ? std::to_string(line) + ":" : std::string()) + " ";
  };
  KnownList list;
  list.file = file;
  if (!doc.root.is_table()) return file + ": not a TOML table";
  for (const auto& [key, v] : doc.root.as_table())
    if (key != "known") return at(v) + "unknown key '" + key + "' (a known file holds [[known]])";
  if (!doc.root.contains("known")) return list;
  const toml::value& arr = doc.root.at("known");
  if (!arr.is_array()) return at(arr) + "known must be an array of tables ([[known]])";
  for (const auto& t : arr.as_array()) {
    if (!t.is_table()) return at(t) + "known must be an array of tables ([[known]])";
    KnownEntry e;
    e.line = doc.line(t);
    e.config = "*";
    bool has_test = false, has_status = false, has_reason = false;
    for (const auto& [key, v] : t.as_table()) {
      std::string* out = key == "test"     ? &e.test
                         : key == "config" ? &e.config
                         : key == "status" ? &e.status
                         : key == "reason" ? &e.reason
                                           : nullptr;
      if (!out)
        return at(v) + "known: unknown key '" + key + "' (known: test, config, status, reason)";
      if (!v.is_string()) return at(v) + "known." + key + " must be a string";
      *out = v.as_string().str;
      has_test = has_test || key == "test";
      has_status = has_status || key == "status";
      has_reason = has_reason || key == "reason";
      if (out->empty()) return at(v) + "known." + key + " must not be empty";
    }
    if (!has_test) return at(t) + "known: test is required";
    if (!has_status) return at(t) + "known: status is required";
    if (!has_reason) return at(t) + "known: reason is required";
    if (std::find(kKnownStatuses.begin(), kKnownStatuses.end(), e.status) == kKnownStatuses.end())
      return at(t.as_table().at("status")) + "known.status: '" + e.status +
             "' is not fail, error or flaky";
    list.entries.push_back(std::move(e));
  }
  return list;
}

std::variant<KnownList, std::string> load_known(const std::string& file) {
  std::string text, err;
  if (!host::read_file(file, text, err)) return "cannot open known-failures file '" + file + "'";
  return parse_known(text, file);
}

std::string_view verdict_name(BaselineVerdict v) {
  for (const auto& row : kVerdicts)
    if (row.verdict == v) return row.name;
  return "?";
}

Baseline::Baseline(const std::vector<reports::ResultRow>& baseline_rows, KnownList known_list,
                   std::set<ConfigId> unselected_configs)
    : known(std::move(known_list)), unselected(std::move(unselected_configs)) {
  for (const auto& r : baseline_rows) rows[{r.test_id, r.config_key}] = r;
}

namespace {

bool entry_matches(const KnownEntry& e, const std::string& test, const std::string& config) {
  return glob_match(e.test, test) && glob_match(e.config, config);
}

// results.known: an entry excuses its own status; a `flaky` entry excuses every
// bad status, since a flake shows as whichever failure it happened to be.
bool entry_excuses(const KnownEntry& e, const std::string& status) {
  return reports::is_bad_status(status) && (e.status == "flaky" || e.status == status);
}

}  // namespace

const KnownEntry* Baseline::known_for(const std::string& test, const std::string& config,
                                      const std::string& status) const {
  for (const auto& e : known.entries)
    if (entry_excuses(e, status) && entry_matches(e, test, config)) return &e;
  return nullptr;
}

BaselineVerdict Baseline::verdict(const std::string& test, const std::string& config,
                                  const std::string& status, const KnownEntry** excused) const {
  if (excused) *excused = nullptr;
  auto it = rows.find({test, config});
  const std::string before = it == rows.end() ? "" : it->second.status;
  if (status.empty()) return BaselineVerdict::Vanished;
  if (reports::is_bad_status(status)) {
    if (const KnownEntry* k = known_for(test, config, status)) {
      if (excused) *excused = k;
      return BaselineVerdict::Known;
    }
    return before == status ? BaselineVerdict::Unchanged : BaselineVerdict::Regression;
  }
  if (before.empty()) return BaselineVerdict::New;
  if (status == "pass" && reports::is_bad_status(before)) return BaselineVerdict::Progression;
  return BaselineVerdict::Unchanged;
}

size_t Comparison::count(BaselineVerdict v) const {
  auto it = counts.find(v);
  return it == counts.end() ? 0 : it->second;
}

Comparison compare(const Baseline& b, const std::vector<reports::ResultRow>& current) {
  Comparison c;
  c.known_file = b.known.file;
  std::map<ConfigId, const reports::ResultRow*> now;
  for (const auto& r : current) now[{r.test_id, r.config_key}] = &r;
  std::set<const KnownEntry*> used;
  auto add = [&](const ConfigId& id, const reports::ResultRow* cur,
                 const reports::ResultRow* base) {
    Comparison::Entry e;
    e.test = id.first;
    e.config = id.second;
    e.baseline_status = base ? base->status : "";
    e.status = cur ? cur->status : "";
    const KnownEntry* k = nullptr;
    e.verdict = b.verdict(e.test, e.config, e.status, &k);
    if (k) used.insert(k);
    e.text = k                                                   ? k->reason
             : cur && !cur->message.empty()                      ? cur->message
             : base && e.verdict != BaselineVerdict::Progression ? base->message
                                                                 : "";
    ++c.counts[e.verdict];
    c.entries.push_back(std::move(e));
  };
  // Both maps are ordered by (test id, config key): walk them together.
  auto n = now.begin();
  auto o = b.rows.begin();
  while (n != now.end() || o != b.rows.end()) {
    if (o == b.rows.end() || (n != now.end() && n->first < o->first)) {
      add(n->first, n->second, nullptr);
      ++n;
    } else if (n == now.end() || o->first < n->first) {
      if (!b.unselected.count(o->first)) add(o->first, nullptr, &o->second);
      ++o;
    } else {
      add(n->first, n->second, &o->second);
      ++n;
      ++o;
    }
  }
  // results.known.stale
  for (const auto& e : b.known.entries) {
    if (used.count(&e)) continue;
    bool unselected = false, run = false;
    for (const auto& id : b.unselected)
      unselected = unselected || entry_matches(e, id.first, id.second);
    for (const auto& [id, row] : now) run = run || entry_matches(e, id.first, id.second);
    if (e.status == "flaky" ? !run && !unselected : !unselected) c.stale.push_back(&e);
  }
  return c;
}

std::vector<reports::ResultRow> rows_of(const std::vector<reports::Record>& records) {
  std::vector<reports::ResultRow> rows;
  rows.reserve(records.size());
  for (const auto& r : records) rows.push_back({0, r.id, r.config_key, r.status_name, r.message});
  return rows;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char ch : s) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return o + "\"";
}

std::string baseline_csv(const Comparison& c) {
  std::string o = "test,config,baseline,status,verdict,reason\r\n";
  for (const auto& e : c.entries)
    o += csv_field(e.test) + "," + csv_field(e.config) + "," + csv_field(e.baseline_status) + "," +
         csv_field(e.status) + "," + std::string(verdict_name(e.verdict)) + "," +
         csv_field(e.text) + "\r\n";
  return o;
}

std::string baseline_junit(const Comparison& c, const std::string& runner_name) {
  using reports::xml_escape;
  const size_t failures = c.count(BaselineVerdict::Regression);
  const size_t skipped = c.count(BaselineVerdict::Known) + c.count(BaselineVerdict::Vanished);
  const std::string counts = "tests=\"" + std::to_string(c.entries.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
                             std::to_string(skipped) + "\"";
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<testsuites name=\"simtspec baseline " + xml_escape(runner_name) + "\" " + counts + ">\n";
  o += "  <testsuite name=\"baseline\" " + counts + ">\n";
  for (const auto& e : c.entries) {
    const std::string name = e.config.empty() ? e.test : e.test + "[" + e.config + "]";
    o += "    <testcase classname=\"baseline\" name=\"" + xml_escape(name) + "\"";
    const std::string was = e.baseline_status.empty() ? "absent" : e.baseline_status;
    switch (e.verdict) {
      case BaselineVerdict::Regression:
        o += ">\n      <failure type=\"regression\" message=\"" +
             xml_escape(was + " -> " + e.status + ": " + e.text) + "\"/>\n    </testcase>\n";
        break;
      case BaselineVerdict::Known:
        o += ">\n      <skipped message=\"" + xml_escape("known " + e.status + ": " + e.text) +
             "\"/>\n    </testcase>\n";
        break;
      case BaselineVerdict::Vanished:
        o += ">\n      <skipped message=\"" +
             xml_escape("vanished: " + was + " in the baseline, not in this run") +
             "\"/>\n    </testcase>\n";
        break;
      case BaselineVerdict::Progression:
      case BaselineVerdict::Unchanged:
      case BaselineVerdict::New:
        o += "/>\n";
        break;
    }
  }
  o += "  </testsuite>\n</testsuites>\n";
  return o;
}

std::string baseline_console(const Comparison& c) {
  std::string o;
  for (const auto& e : c.entries) {
    if (e.verdict != BaselineVerdict::Regression && e.verdict != BaselineVerdict::Progression)
      continue;
    o += std::string(verdict_name(e.verdict)) + ": " + e.test +
         (e.config.empty() ? "" : "[" + e.config + "]") + ": " +
         (e.baseline_status.empty() ? "absent" : e.baseline_status) + " -> " + e.status +
         (e.text.empty() ? "" : ": " + e.text.substr(0, e.text.find('\n'))) + "\n";
  }
  o += "baseline:";
  for (size_t i = 0; i < kVerdicts.size(); ++i)
    o += std::string(i ? ", " : " ") + reports::thousands(c.count(kVerdicts[i].verdict)) + " " +
         std::string(kVerdicts[i].name);
  o += "\n";
  for (const KnownEntry* k : c.stale)
    o += "note: " + c.known_file + ":" + std::to_string(k->line) + ": known " + k->status +
         " entry for " + k->test + (k->config == "*" ? "" : "@" + k->config) +
         " excused nothing in this run (stale)\n";
  return o;
}

void apply_reruns(reports::Record& first, const std::vector<reports::Record>& reruns) {
  if (reruns.empty()) return;
  const std::string status = first.status_name;
  const std::string message = first.message;
  bool agree = true;
  std::string list = status;
  first.reruns.clear();
  for (const auto& r : reruns) {
    agree = agree && r.status_name == status && (status != "fail" || r.message == message);
    first.reruns.push_back(r.status_name);
    list += ", " + r.status_name;
  }
  const std::string runs = std::to_string(reruns.size() + 1);
  if (agree) {
    first.message = status + " in " + runs + " of " + runs + " runs: " + message;
    return;
  }
  first.set_status(reports::Status::flaky);
  first.message = "flaky: " + list + "; the first run: " + message;
}

}  // namespace simt::harness
