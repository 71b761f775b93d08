// The static HTML report (spec/results.md, results.report).
//
// The site is plain files that open from the file system: index.html (totals,
// feature x status matrix, every configuration with one status column per
// results file), coverage.html (spec clauses and the tests citing them), one
// page per configuration and results file under tests/, style.css and
// report.js (the index filter, the copy buttons). Records are read defensively: a field that is
// missing or has an unexpected type is treated as absent.
#include "html.h"
#include "model.h"
#include "record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <concepts>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace simt::reports {
namespace {

namespace fs = std::filesystem;
using json::Value;

// Chapters whose clauses describe tooling and are checked by unit tests.
constexpr std::array<std::string_view, 4> kToolingChapters{"testformat.md", "runner.md",
                                                           "results.md", "oracles.md"};
constexpr size_t kMaxBufferRows = 1024;  // larger buffers show a window around the difference
constexpr size_t kBufferWindow = 256;

// ---------------------------------------------------------------------------
// Reading records: the record, its header and summary, its first difference and
// what the report shows of its outcomes and configuration are typed (record.h,
// read leniently there); the outcomes and the configuration are also shown whole,
// walked as JSON.

// A scalar as text: strings as they are, everything else as compact JSON.
std::string scalar_text(const Value& v) {
  return v.is_string() ? v.as_string() : json::dump(v);
}

// At most 200 bytes of a message, cut at a character boundary.
std::string clip(const std::string& s) {
  constexpr size_t kMax = 200;
  if (s.size() <= kMax) return s;
  size_t n = kMax;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  return s.substr(0, n) + "\xe2\x80\xa6";  // an ellipsis
}

std::string fmt_double(double d, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, d);
  return buf;
}

// ---------------------------------------------------------------------------
// HTML text. All text goes through append_escaped(): < > & " ' become
// entities; bytes that are not valid UTF-8 and control characters other than
// tab, line feed and carriage return become U+FFFD.

size_t utf8_sequence(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  auto c1 = static_cast<unsigned char>(s[i + 1]);
  if (c == 0xe0 && c1 < 0xa0) return 0;   // overlong
  if (c == 0xed && c1 >= 0xa0) return 0;  // surrogates
  if (c == 0xf0 && c1 < 0x90) return 0;   // overlong
  if (c == 0xf4 && c1 >= 0x90) return 0;  // above U+10FFFF
  return n;
}

void append_escaped(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        default:
          if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f)
            out += "\xef\xbf\xbd";
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
}

struct Esc {
  std::string_view s;
};
Esc E(std::string_view s) {
  return Esc{s};
}

// An HTML document under construction: `<<` appends markup as is, E(text)
// escapes text.
class Html {
 public:
  Html& operator<<(std::string_view raw) {
    s_.append(raw);
    return *this;
  }
  Html& operator<<(Esc e) {
    append_escaped(s_, e.s);
    return *this;
  }
  template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>) Html& operator<<(T v) {
    s_ += std::to_string(v);
    return *this;
  }
  const std::string& str() const { return s_; }
  void reserve(size_t n) { s_.reserve(n); }

 private:
  std::string s_;
};

// ---------------------------------------------------------------------------
// Names: page file names and anchors.

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Lower-case letters, digits, '.', '_' and '-' stay; everything else becomes '_'.
std::string sanitize(std::string_view s, size_t max_len) {
  std::string o;
  for (char ch : s.substr(0, max_len)) {
    char c = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    o += ok ? c : c == '=' ? '-' : '_';
  }
  if (!o.empty() && o[0] == '.') o[0] = '_';
  return o;
}

std::string clause_anchor(std::string_view clause) {
  return "c-" + sanitize(clause, 200);
}

std::string status_class(std::string_view status) {
  for (auto s : kStatuses)
    if (s == status) return "st-" + std::string(s);
  return "st-other";
}

// A status as one word of a data-status attribute and of an address fragment
// (a record may hold any string).
std::string status_token(std::string_view status) {
  std::string t;
  for (char c : status) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    t += ok ? c : '_';
  }
  return t;
}

bool is_tooling(const Clause& c) {
  if (c.text.rfind("*(tooling)*", 0) == 0) return true;
  return std::find(kToolingChapters.begin(), kToolingChapters.end(), c.file) !=
         kToolingChapters.end();
}

// ---------------------------------------------------------------------------
// The report model: records placed in rows (one row per id + config key).

struct Entry {
  const Record* rec = nullptr;
  size_t file = 0;
  std::string id, key, status, page;  // page: "tests/NAME.html", "" if it has none
  std::string name() const { return key.empty() ? id : id + "[" + key + "]"; }
};

// From the status table (record.h); a status not in it is neither.
bool is_failing(std::string_view status) {
  auto s = parse_status(status);
  return s && info(*s).failing;
}

// results.report.pages: the table's `page` column; a status not in it gets one.
bool has_page(std::string_view status, const HtmlOptions& o) {
  auto s = parse_status(status);
  return o.all_pages || !s || info(*s).page;
}

struct Row {
  std::string id, key;
  std::vector<const Entry*> cells;  // one per results file; nullptr: no record
  std::string anchor;               // the row's id attribute, "" if nothing links to it
  // results.report.passes: a test none of whose results has a page is one row;
  // these are its configurations' keys and, per results file, their entries.
  std::vector<std::string> summary_keys;
  std::vector<std::vector<const Entry*>> summary;
  bool failing() const {
    for (const Entry* e : cells)
      if (e && is_failing(e->status)) return true;
    return false;
  }
};

struct Source {
  const ResultsFile* file = nullptr;
  RunHeader header;    // file->header, typed
  RunSummary summary;  // file->summary, typed (empty when the run did not finish)
  std::string label;   // column heading, unique among the files
  std::map<std::string, size_t> counts;
  std::vector<Entry> entries;
};

struct Model {
  std::vector<Source> sources;
  std::vector<Row> rows;                                   // sorted by id, then key
  std::vector<std::string> statuses;                       // known ones in order, then any others
  std::vector<std::string> features;                       // sorted, "(none)" for records without
  std::map<std::string, const Entry*> first_page_of_test;  // id -> first entry with a page
  std::map<std::string, std::string> test_anchor;          // id -> its first row's anchor
  // results.report.history: per implementation, its runs (oldest first) and each
  // configuration's statuses in them; empty without a history.
  struct ImplHistory {
    std::vector<const RunInfo*> runs;
    // (test id, config key) -> (index into runs, status)
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<size_t, std::string>>>
        results;
  };
  std::map<std::string, ImplHistory> history;  // impl name -> its history
};

constexpr size_t kStripRuns = 20;       // a strip shows at most the last 20 runs
constexpr size_t kSummaryMessages = 3;  // a summarised row shows 3 distinct messages

// "history-NAME.html" of an implementation.
std::string history_page(const std::string& impl) {
  char hash[12];
  std::snprintf(hash, sizeof hash, "-%08x", static_cast<unsigned>(fnv1a(impl) & 0xffffffffu));
  return "history-" + sanitize(impl, 60) + hash + ".html";
}

void build_history(Model& m, const History& h) {
  std::map<int64_t, std::pair<std::string, size_t>> where;  // run id -> (impl, index)
  for (const RunInfo& r : h.runs) {
    auto& ih = m.history[r.impl_name];
    where[r.id] = {r.impl_name, ih.runs.size()};
    ih.runs.push_back(&r);
  }
  for (const ResultRow& row : h.results) {
    auto it = where.find(row.run);
    if (it == where.end()) continue;  // a result of a run not given
    m.history[it->second.first].results[{row.test_id, row.config_key}].emplace_back(
        it->second.second, row.status);
  }
  for (auto& [impl, ih] : m.history)
    for (auto& [k, v] : ih.results) std::sort(v.begin(), v.end());
}

// Orders configuration keys with numbers by value ("wave=8" before "wave=32").
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && digit(a[i1])) ++i1;
      while (j1 < b.size() && digit(b[j1])) ++j1;
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
      int c = a.compare(i0, i1 - i0, b, j0, j1 - j0);
      if (c != 0) return c < 0;
      i = i1;
      j = j1;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;  // equal up to leading zeros
}

struct RowKeyLess {
  bool operator()(const std::pair<std::string, std::string>& x,
                  const std::pair<std::string, std::string>& y) const {
    if (x.first != y.first) return x.first < y.first;
    return natural_less(x.second, y.second);
  }
};

std::string page_name(const std::string& id, const std::string& key, size_t file, size_t nfiles,
                      std::set<std::string>& used) {
  std::string readable = sanitize(id, 80);
  if (!key.empty()) readable += "." + sanitize(key, 60);
  if (readable.empty()) readable = "test";
  char hash[20];
  std::snprintf(hash, sizeof hash, "-%08x",
                static_cast<unsigned>(fnv1a(id + '\x1f' + key) & 0xffffffffu));
  std::string base = readable + hash;
  if (nfiles > 1) base += "-r" + std::to_string(file + 1);
  std::string name = base;
  for (int n = 2; !used.insert(name).second; ++n) name = base + "-" + std::to_string(n);
  return "tests/" + name + ".html";
}

std::string label_of(const ResultsFile& f) {
  std::string name = f.runner_name();
  std::string version = f.run_header().runner.version;
  return version.empty() ? name : name + " " + version;
}

Model build_model(const std::vector<ResultsFile>& results, const HtmlOptions& opt) {
  Model m;
  m.sources.resize(results.size());
  std::map<std::string, size_t> label_uses;
  for (const auto& f : results) ++label_uses[label_of(f)];
  std::map<std::string, size_t> label_seen;
  std::set<std::string> used_pages;
  std::set<std::string> extra_statuses, features;
  // (id, key) -> rows for the 1st, 2nd, ... record with that name in a file.
  std::map<std::pair<std::string, std::string>, std::vector<Row>, RowKeyLess> rows;
  for (size_t fi = 0; fi < results.size(); ++fi) {
    Source& src = m.sources[fi];
    src.file = &results[fi];
    src.header = results[fi].run_header();
    src.summary = results[fi].run_summary();
    src.label = label_of(results[fi]);
    if (label_uses[src.label] > 1) src.label += " #" + std::to_string(++label_seen[src.label]);
    src.entries.reserve(results[fi].records.size());
    for (const Record& rec : results[fi].records) {
      Entry e;
      e.rec = &rec;
      e.file = fi;
      e.id = rec.id.empty() ? "(no id)" : rec.id;
      e.key = rec.config_key;
      e.status = rec.status_name;
      if (has_page(e.status, opt)) e.page = page_name(e.id, e.key, fi, results.size(), used_pages);
      ++src.counts[e.status];
      if (status_class(e.status) == "st-other") extra_statuses.insert(e.status);
      if (rec.features.empty()) features.insert("(none)");
      features.insert(rec.features.begin(), rec.features.end());
      src.entries.push_back(std::move(e));
    }
    std::map<std::pair<std::string, std::string>, size_t> occurrence;
    for (const Entry& e : src.entries) {
      auto k = std::make_pair(e.id, e.key);
      size_t occ = occurrence[k]++;
      auto& slot = rows[k];
      while (slot.size() <= occ)
        slot.push_back(Row{e.id, e.key, std::vector<const Entry*>(results.size()), "", {}, {}});
      slot[occ].cells[fi] = &e;
      if (!e.page.empty()) m.first_page_of_test.emplace(e.id, &e);
    }
  }
  for (auto& [k, rs] : rows)
    for (auto& r : rs) m.rows.push_back(std::move(r));
  if (opt.history) build_history(m, *opt.history);
  // results.report.passes: the rows of a test without a page (pass, unsupported,
  // xfail in every results file) become one.
  if (!opt.all_pages) {
    auto all_pass = [](const Row& r) {
      return std::all_of(r.cells.begin(), r.cells.end(),
                         [](const Entry* e) { return e && e->page.empty(); });
    };
    std::vector<Row> merged;
    for (size_t i = 0; i < m.rows.size();) {
      size_t j = i;
      bool pass = true;
      for (; j < m.rows.size() && m.rows[j].id == m.rows[i].id; ++j)
        pass = pass && all_pass(m.rows[j]);
      if (pass && !m.rows[i].cells.empty()) {
        Row r{m.rows[i].id, "", m.rows[i].cells, "", {}, {}};
        r.summary.resize(r.cells.size());
        for (size_t k = i; k < j; ++k) {
          r.summary_keys.push_back(m.rows[k].key);
          for (size_t fi = 0; fi < r.cells.size(); ++fi)
            r.summary[fi].push_back(m.rows[k].cells[fi]);
        }
        merged.push_back(std::move(r));
      } else {
        for (size_t k = i; k < j; ++k) merged.push_back(std::move(m.rows[k]));
      }
      i = j;
    }
    m.rows = std::move(merged);
  }
  // results.report: rows with a failing result (fail, error, xpass) in any column
  // come first, each group in id and key order.
  std::stable_partition(m.rows.begin(), m.rows.end(), [](const Row& r) { return r.failing(); });
  // Anchors: every failing row (the fail totals and clause counts link to them)
  // and each test's first row (the interop grid and the coverage page link to it).
  for (size_t i = 0; i < m.rows.size(); ++i) {
    Row& r = m.rows[i];
    if (!m.test_anchor.count(r.id)) {
      char hash[12];
      std::snprintf(hash, sizeof hash, "-%08x", static_cast<unsigned>(fnv1a(r.id) & 0xffffffffu));
      r.anchor = "t-" + sanitize(r.id, 80) + hash;
      m.test_anchor[r.id] = r.anchor;
    } else if (r.failing()) {
      r.anchor = "f" + std::to_string(i);
    }
  }
  for (auto s : kStatuses) m.statuses.emplace_back(s);
  m.statuses.insert(m.statuses.end(), extra_statuses.begin(), extra_statuses.end());
  m.features.assign(features.begin(), features.end());
  return m;
}

// ---------------------------------------------------------------------------
// Shared page parts.

// Marks every page this writer produces, so a rewrite removes only its own stale pages.
constexpr std::string_view kGeneratorMark = "<meta name=\"generator\" content=\"simtspec report\">";

void page_start(Html& h, std::string_view title, std::string_view root, bool script) {
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << kGeneratorMark << "\n<title>" << E(title) << "</title>\n<link rel=\"stylesheet\" href=\""
    << root << "style.css\">\n";
  if (script) h << "<script src=\"" << root << "report.js\" defer></script>\n";
  h << "</head>\n<body>\n<nav><a href=\"" << root << "index.html\">Results</a> <a href=\"" << root
    << "coverage.html\">Clause coverage</a></nav>\n";
}

void page_end(Html& h) {
  h << "</body>\n</html>\n";
}

void status_badge(Html& h, std::string_view status) {
  h << "<span class=\"st " << status_class(status) << "\">" << E(status) << "</span>";
}

// ---------------------------------------------------------------------------
// Clauses and the records citing them (index.html and coverage.html).

struct ClauseUse {
  std::set<std::string> tests;                          // ids citing the clause
  std::set<std::string> run_tests;                      // those whose program runs
  std::vector<std::map<std::string, size_t>> per_file;  // status counts
};

// A test covers its clauses by a run unless it expects the program to be rejected
// (results.report): a rejection shows that validation refuses something, not that
// the behaviour happens at run time.
bool expects_rejection(const Record& rec) {
  return outcome_view(rec.expected).status == "rejected";
}

std::map<std::string, ClauseUse> clause_uses(const Model& m) {
  std::map<std::string, ClauseUse> uses;
  for (size_t fi = 0; fi < m.sources.size(); ++fi)
    for (const Entry& e : m.sources[fi].entries)
      for (const auto& c : e.rec->clauses) {
        ClauseUse& u = uses[c];
        u.per_file.resize(m.sources.size());
        u.tests.insert(e.id);
        if (!expects_rejection(*e.rec)) u.run_tests.insert(e.id);
        ++u.per_file[fi][e.status];
      }
  return uses;
}

// ---------------------------------------------------------------------------
// index.html

void dl_item(Html& h, std::string_view term, std::string_view value) {
  if (value.empty()) return;
  h << "<dt>" << E(term) << "</dt><dd>" << E(value) << "</dd>\n";
}

std::string host_text(const RunHeader::Host& host) {
  std::string s = host.hostname;
  if (!host.os.empty()) s += (s.empty() ? "" : ", ") + host.os;
  if (host.cpus) s += (s.empty() ? "" : ", ") + std::to_string(*host.cpus) + " CPUs";
  return s;
}

std::string options_text(const Value& opts) {
  std::string s;
  if (!opts.is_object()) return s;
  for (const auto& [k, v] : opts.as_object()) {
    if (v.is_string() && v.as_string().empty()) continue;
    if (v.is_object() || v.is_array()) continue;
    s += (s.empty() ? "" : ", ") + k + " " + scalar_text(v);
  }
  return s;
}

void index_summary(Html& h, const Model& m, const Source& src) {
  const ResultsFile& f = *src.file;
  const RunHeader& hd = src.header;
  h << "<section class=\"summary\">\n<h2>" << E(src.label) << "</h2>\n<dl>\n";
  dl_item(h, "runner", f.runner_name());
  dl_item(h, "version", hd.runner.version);
  dl_item(h, "command", hd.runner.command);
  dl_item(h, "host", host_text(hd.host));
  dl_item(h, "started", hd.started);
  dl_item(h, "simtspec", hd.suite.version);
  dl_item(h, "options", options_text(hd.options));
  dl_item(h, "results file", f.path);
  if (!f.complete()) {
    h << "<dt>run</dt><dd class=\"warn\">interrupted: the file has no summary line</dd>\n";
  } else {
    if (src.summary.seconds) dl_item(h, "duration", fmt_double(*src.summary.seconds, "%.1f s"));
    // results.interrupted
    if (src.summary.interrupted)
      h << "<dt>run</dt><dd class=\"warn\">interrupted by " << E(src.summary.signal)
        << ": only the results below were run</dd>\n";
  }
  h << "</dl>\n";
  // results.share: how much of the selection ran, beside the pass rate.
  {
    const size_t all = src.entries.size();
    size_t selected = all;
    if (src.summary.selected)
      selected = std::max<size_t>(all, static_cast<size_t>(*src.summary.selected));
    h << "<p class=\"share\" data-total=\"share\">"
      << E(share_run(all - count_of(src.counts, "unsupported"), selected)) << "</p>\n";
  }
  h << "<table class=\"totals\">\n<tr>";
  for (const auto& s : m.statuses) h << "<th>" << E(s) << "</th>";
  h << "<th>total</th><th>pass rate</th></tr>\n<tr>";
  for (const auto& s : m.statuses) {
    size_t n = count_of(src.counts, s);
    h << "<td class=\"n" << (n ? " " + status_class(s) : std::string()) << "\" data-total=\""
      << E(s) << "\">";
    // results.report.failures: a failing total takes you to the first row with that
    // status in this column (failing rows come first); the others set the filter.
    std::string first;
    if (n && is_failing(s))
      for (const Row& r : m.rows)
        if (const Entry* e = r.cells[&src - m.sources.data()]; e && e->status == s) {
          first = r.anchor;
          break;
        }
    if (!first.empty())
      h << "<a href=\"#" << E(first) << "\" title=\"go to the first " << E(s) << "\">" << n
        << "</a>";
    else if (n)
      h << "<a href=\"#status=" << E(status_token(s)) << "\" title=\"show only " << E(s) << "\">"
        << n << "</a>";
    else
      h << n;
    h << "</td>";
  }
  size_t total = src.entries.size();
  size_t ran = total - count_of(src.counts, "unsupported");
  std::string rate =
      ran ? fmt_double(100.0 * static_cast<double>(count_of(src.counts, "pass")) / ran, "%.1f%%")
          : "n/a";
  h << "<td class=\"n\" data-total=\"total\">" << total
    << "</td><td class=\"n\" data-total=\"rate\">" << rate << "</td></tr>\n</table>\n";
  h << "<p class=\"note\">Pass rate: pass &divide; (all &minus; unsupported).</p>\n</section>\n";
}

// The head of a table with one column per status for each results file (grouped
// by file when there are several); `first` names the row-heading column.
void status_table_head(Html& h, const Model& m, std::string_view first) {
  if (m.sources.size() > 1) {
    h << "<tr><th></th>";
    for (const auto& src : m.sources)
      h << "<th class=\"group\" colspan=\"" << m.statuses.size() << "\">" << E(src.label)
        << "</th>";
    h << "</tr>\n";
  }
  h << "<tr><th>" << E(first) << "</th>";
  for (size_t fi = 0; fi < m.sources.size(); ++fi)
    for (size_t si = 0; si < m.statuses.size(); ++si)
      h << "<th" << (si == 0 && fi > 0 ? " class=\"group\"" : "") << ">" << E(m.statuses[si])
        << "</th>";
  h << "</tr>\n</thead>\n<tbody>\n";
}

// The count cells of one row of such a table: status counts per results file. A
// failing count links to `fail_href` when given.
void status_count_cells(Html& h, const Model& m,
                        const std::vector<std::map<std::string, size_t>>& per_file,
                        std::string_view fail_href = "") {
  for (size_t fi = 0; fi < per_file.size(); ++fi)
    for (size_t si = 0; si < m.statuses.size(); ++si) {
      size_t n = count_of(per_file[fi], m.statuses[si]);
      h << "<td class=\"n" << (n ? " " + status_class(m.statuses[si]) : std::string())
        << (si == 0 && fi > 0 ? " group" : "") << "\">";
      if (n && is_failing(m.statuses[si]) && !fail_href.empty())
        h << "<a href=\"" << E(fail_href) << "\">" << n << "</a>";
      else
        h << n;
      h << "</td>";
    }
}

void index_matrix(Html& h, const Model& m) {
  // feature -> file -> status -> count
  std::map<std::string, std::vector<std::map<std::string, size_t>>> cells;
  for (const auto& f : m.features) cells[f].resize(m.sources.size());
  for (size_t fi = 0; fi < m.sources.size(); ++fi)
    for (const Entry& e : m.sources[fi].entries) {
      auto fs_ = e.rec->features;
      if (fs_.empty()) fs_.push_back("(none)");
      std::sort(fs_.begin(), fs_.end());
      fs_.erase(std::unique(fs_.begin(), fs_.end()), fs_.end());
      for (const auto& f : fs_) ++cells[f][fi][e.status];
    }
  h << "<h2 id=\"matrix\">Features &times; status</h2>\n"
    << "<p class=\"note\">Configurations per feature tag (a test with several tags counts "
       "under each).</p>\n<table class=\"matrix\">\n<thead>\n";
  status_table_head(h, m, "feature");
  for (const auto& [feature, per_file] : cells) {
    h << "<tr><th>" << E(feature) << "</th>";
    status_count_cells(h, m, per_file);
    h << "</tr>\n";
  }
  h << "</tbody>\n</table>\n";
}

// Clauses x status: every clause the records cite, with its status counts per
// results file; clauses with failing results first, most failures first. A fault
// shows up here on the few clauses it breaks, where the feature matrix spreads it
// over every tag of the failing tests.
void index_clauses(Html& h, const Model& m) {
  auto uses = clause_uses(m);
  std::vector<std::pair<size_t, const std::string*>> order;
  for (const auto& [id, u] : uses) {
    size_t bad = 0;
    for (const auto& per : u.per_file)
      for (const auto& [st, n] : per)
        if (is_failing(st)) bad += n;
    order.push_back({bad, &id});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  size_t failing = 0;
  for (const auto& o : order) failing += o.first > 0;
  // results.report.failures: a clause's failing counts link to the first failing
  // row of a test citing it.
  std::map<std::string, std::string> first_failure;
  for (const Row& r : m.rows) {
    if (!r.failing()) break;  // failing rows come first
    for (const Entry* e : r.cells)
      if (e)
        for (const auto& c : e->rec->clauses) first_failure.emplace(c, r.anchor);
  }
  h << "<h2 id=\"clauses\">Clauses &times; status</h2>\n<details class=\"clauses\""
    << (failing ? " open" : "") << "><summary>" << uses.size() << " clauses cited, " << failing
    << " with failing results</summary>\n<table class=\"matrix clauses\">\n<thead>\n";
  status_table_head(h, m, "clause");
  for (const auto& [bad, id] : order) {
    h << "<tr" << (bad ? " class=\"failing\"" : "") << "><th><a href=\"coverage.html#"
      << E(clause_anchor(*id)) << "\">" << E(*id) << "</a></th>";
    auto ff = first_failure.find(*id);
    status_count_cells(h, m, uses.at(*id).per_file,
                       ff == first_failure.end() ? "" : "#" + ff->second);
    h << "</tr>\n";
  }
  h << "</tbody>\n</table>\n</details>\n";
}

void index_filter(Html& h, const Model& m) {
  h << "<form class=\"filter\" id=\"filter\" autocomplete=\"off\">\n"
    << "<label>Test id <input type=\"search\" id=\"filter-text\" placeholder=\"part of an id or "
       "configuration\"></label>\n";
  for (const auto& s : m.statuses)
    h << "<label class=\"st " << status_class(s) << "\"><input type=\"checkbox\" data-status=\""
      << E(status_token(s)) << "\" checked> " << E(s) << "</label>\n";
  h << "<span id=\"shown\" class=\"note\"></span>\n</form>\n";
}

// results.report.history: the configuration's statuses in the last kStripRuns
// runs of its implementation, oldest first, one small square each (a run without
// a result for it is an empty square).
void history_strip(Html& h, const Model& m, const Entry& e, bool titles) {
  auto ih = m.history.find(m.sources[e.file].file->runner_name());
  if (ih == m.history.end() || ih->second.runs.empty()) return;
  const auto& runs = ih->second.runs;
  auto res = ih->second.results.find({e.id, e.key});
  const size_t first = runs.size() > kStripRuns ? runs.size() - kStripRuns : 0;
  h << "<span class=\"strip\" title=\"the last " << runs.size() - first << " runs, oldest first\">";
  size_t k = 0;
  const auto* list = res == ih->second.results.end() ? nullptr : &res->second;
  for (size_t i = first; i < runs.size(); ++i) {
    while (list && k < list->size() && (*list)[k].first < i) ++k;
    std::string st = list && k < list->size() && (*list)[k].first == i ? (*list)[k].second : "";
    h << "<i class=\"" << (st.empty() ? "st-missing" : status_class(st)) << "\"";
    if (titles)
      h << " title=\"run " << runs[i]->id << " (" << E(runs[i]->started)
        << "): " << E(st.empty() ? "no result" : st) << "\"";
    h << "></i>";
  }
  h << "</span>";
}

void index_row(Html& h, const Model& m, const Row& r) {
  std::vector<std::string> tokens;  // the row's distinct statuses, for the filter
  std::string title;
  auto note = [&](const Entry* e) {
    std::string t = status_token(e->status);
    if (std::find(tokens.begin(), tokens.end(), t) == tokens.end()) tokens.push_back(t);
    if (title.empty()) title = e->rec->title;
  };
  for (const Entry* e : r.cells)
    if (e) note(e);
  for (const auto& col : r.summary)
    for (const Entry* e : col) note(e);
  std::string statuses;
  for (const auto& t : tokens) statuses += (statuses.empty() ? "" : " ") + t;
  std::string name = r.key.empty() ? r.id : r.id + "[" + r.key + "]";
  h << "<tr data-name=\"" << E(name) << "\" data-status=\"" << E(statuses) << "\""
    << (r.failing() ? " class=\"failing\"" : "");
  if (!r.anchor.empty()) h << " id=\"" << E(r.anchor) << "\"";
  if (!r.summary_keys.empty()) {
    // results.report.passes: one row for a test without pages: its configurations,
    // and per results file the count of each status and the distinct messages.
    const size_t n = r.summary_keys.size();
    h << " class=\"summary\" data-n=\"" << n << "\"><td class=\"id\"";
    if (!title.empty()) h << " title=\"" << E(title) << "\"";
    h << ">" << E(r.id) << "</td><td class=\"key\">";
    if (n == 1 && r.summary_keys[0].empty()) {
      h << "</td>";
    } else {
      h << "<details><summary>" << n << " configuration" << (n == 1 ? "" : "s") << "</summary>";
      for (size_t i = 0; i < n; ++i) h << (i ? ", " : "") << E(r.summary_keys[i]);
      h << "</details></td>";
    }
    for (const auto& col : r.summary) {
      std::vector<std::pair<std::string, size_t>> counts;  // in order of first appearance
      std::vector<std::string> messages;
      for (const Entry* e : col) {
        auto it = std::find_if(counts.begin(), counts.end(),
                               [&](const auto& c) { return c.first == e->status; });
        if (it == counts.end())
          counts.emplace_back(e->status, 1);
        else
          ++it->second;
        const std::string& msg = e->rec->message;
        if (!msg.empty() && messages.size() < kSummaryMessages &&
            std::find(messages.begin(), messages.end(), msg) == messages.end())
          messages.push_back(msg);
      }
      h << "<td class=\"st " << (counts.size() == 1 ? status_class(counts[0].first) : "st-mixed")
        << "\">";
      for (size_t i = 0; i < counts.size(); ++i)
        h << (i ? " " : "") << E(counts[i].first)
          << (counts[i].second > 1 || n > 1 ? " &times;" + std::to_string(counts[i].second) : "");
      for (const auto& msg : messages) h << "<div class=\"msg\">" << E(clip(msg)) << "</div>";
      h << "</td>";
    }
    h << "</tr>\n";
    return;
  }
  h << "><td class=\"id\"";
  if (!title.empty()) h << " title=\"" << E(title) << "\"";
  h << ">" << E(r.id) << "</td><td class=\"key\">" << E(r.key) << "</td>";
  for (const Entry* e : r.cells) {
    if (!e) {
      h << "<td class=\"st st-missing\">&mdash;</td>";
      continue;
    }
    const std::string& msg = e->rec->message;
    const bool shown = !msg.empty() && e->status != "pass";
    h << "<td class=\"st " << status_class(e->status) << "\"";
    if (!msg.empty() && !shown) h << " title=\"" << E(msg) << "\"";
    h << ">";
    if (e->page.empty())
      h << E(e->status);
    else
      h << "<a href=\"" << e->page << "\">" << E(e->status) << "</a>";
    // results.report.failures: the message as text, not only in the tooltip.
    if (shown) h << "<div class=\"msg\">" << E(clip(msg)) << "</div>";
    history_strip(h, m, *e, false);
    h << "</td>";
  }
  h << "</tr>\n";
}

// results.report.interop: with several results files, tests x results files, each
// cell the test's passed and run configurations in that file, coloured by their
// share, linking to the test's first row.
void index_interop(Html& h, const Model& m) {
  if (m.sources.size() < 2) return;
  struct Cell {
    size_t passed = 0, ran = 0, total = 0;
  };
  std::map<std::string, std::vector<Cell>> grid;
  for (size_t fi = 0; fi < m.sources.size(); ++fi)
    for (const Entry& e : m.sources[fi].entries) {
      auto& row = grid[e.id];
      row.resize(m.sources.size());
      ++row[fi].total;
      row[fi].ran += e.status != "unsupported";
      row[fi].passed += e.status == "pass";
    }
  std::vector<size_t> complete(m.sources.size());
  for (const auto& [id, cells] : grid)
    for (size_t fi = 0; fi < cells.size(); ++fi)
      complete[fi] += cells[fi].ran > 0 && cells[fi].passed == cells[fi].ran;
  h << "<h2 id=\"interop\">Interop</h2>\n<p class=\"note\">Per test: configurations passed / "
       "run in each results file (unsupported ones do not run). Green: all passed; red: none; "
       "in between: some.</p>\n<table class=\"interop\">\n<thead><tr><th>test</th>";
  for (const auto& src : m.sources) h << "<th>" << E(src.label) << "</th>";
  h << "</tr></thead>\n<tbody>\n<tr class=\"all\"><th>tests all passed</th>";
  for (size_t fi = 0; fi < m.sources.size(); ++fi)
    h << "<td class=\"n\">" << complete[fi] << " / " << grid.size() << "</td>";
  h << "</tr>\n";
  for (const auto& [id, cells] : grid) {
    h << "<tr><th><a href=\"#" << E(m.test_anchor.at(id)) << "\">" << E(id) << "</a></th>";
    for (const Cell& c : cells) {
      const char* cls = c.total == 0        ? "g-none"
                        : c.ran == 0        ? "g-unrun"
                        : c.passed == c.ran ? "g-all"
                        : c.passed == 0     ? "g-zero"
                                            : "g-some";
      h << "<td class=\"n " << cls << "\">";
      if (c.total == 0)
        h << "&mdash;";
      else
        h << c.passed << " / " << c.ran;
      h << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</tbody>\n</table>\n";
}

std::string render_index(const Model& m) {
  Html h;
  h.reserve(4096 + m.rows.size() * 320);
  page_start(h, "simtspec conformance report", "", true);
  h << "<h1>simtspec conformance report</h1>\n<div class=\"summaries\">\n";
  for (const auto& src : m.sources) index_summary(h, m, src);
  if (m.sources.empty()) h << "<p>No results files.</p>\n";
  h << "</div>\n";
  if (!m.history.empty()) {
    h << "<p class=\"history-links\">History: ";
    for (const auto& [impl, ih] : m.history)
      h << "<a href=\"" << E(history_page(impl)) << "\">" << E(impl) << "</a> (" << ih.runs.size()
        << " run" << (ih.runs.size() == 1 ? "" : "s") << ") ";
    h << "</p>\n";
  }
  index_interop(h, m);
  index_clauses(h, m);
  index_matrix(h, m);
  h << "<h2 id=\"configurations\">Test configurations</h2>\n"
    << "<p class=\"note\">Rows with a failing result (fail, error, xpass, flaky) come first.</p>\n";
  index_filter(h, m);
  h << "<table class=\"results\" id=\"results\">\n<thead><tr><th>test</th><th>configuration</th>";
  for (const auto& src : m.sources) h << "<th>" << E(src.label) << "</th>";
  h << "</tr></thead>\n<tbody>\n";
  for (const Row& r : m.rows) index_row(h, m, r);
  h << "</tbody>\n</table>\n";
  if (m.rows.empty()) h << "<p>No results.</p>\n";
  page_end(h);
  return h.str();
}

// ---------------------------------------------------------------------------
// history-<impl>.html (results.report.history)

// A run's pass rate (pass / run) and share of the suite run (run / selected), as
// fractions; negative when undefined.
std::pair<double, double> run_rates(const RunInfo& r) {
  auto it = r.counts.find("pass");
  const double pass = it == r.counts.end() ? 0 : static_cast<double>(it->second);
  return {r.run ? pass / static_cast<double>(r.run) : -1.0,
          r.selected ? static_cast<double>(r.run) / static_cast<double>(r.selected) : -1.0};
}

// The two series over the runs as an SVG line chart: x the run (oldest left), y
// 0 to 100%; one circle per run with a defined value, titled.
void history_chart(Html& h, const std::vector<const RunInfo*>& runs) {
  constexpr double kW = 720, kH = 240, kLeft = 48, kRight = 16, kTop = 12, kBottom = 28;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto x = [&](size_t i) {
    return runs.size() < 2
               ? kLeft + pw / 2
               : kLeft + pw * static_cast<double>(i) / static_cast<double>(runs.size() - 1);
  };
  auto y = [&](double v) { return kTop + ph * (1 - v); };
  h << "<svg class=\"chart\" width=\"" << fmt_double(kW, "%.0f") << "\" height=\""
    << fmt_double(kH, "%.0f") << "\" viewBox=\"0 0 " << fmt_double(kW, "%.0f") << " "
    << fmt_double(kH, "%.0f")
    << "\" role=\"img\" aria-label=\"pass rate and share of the suite run, per run\">\n";
  for (int pct : {0, 25, 50, 75, 100}) {
    std::string yy = fmt_double(y(pct / 100.0), "%.1f");
    h << "<line class=\"grid\" x1=\"" << fmt_double(kLeft, "%.0f") << "\" x2=\""
      << fmt_double(kLeft + pw, "%.0f") << "\" y1=\"" << yy << "\" y2=\"" << yy
      << "\"/><text class=\"axis\" x=\"" << fmt_double(kLeft - 6, "%.0f") << "\" y=\"" << yy
      << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << pct << "%</text>\n";
  }
  for (int series = 0; series < 2; ++series) {
    const char* cls = series == 0 ? "rate" : "share";
    std::string points;
    for (size_t i = 0; i < runs.size(); ++i) {
      auto [rate, share] = run_rates(*runs[i]);
      double v = series == 0 ? rate : share;
      if (v < 0) continue;
      points +=
          (points.empty() ? "" : " ") + fmt_double(x(i), "%.1f") + "," + fmt_double(y(v), "%.1f");
    }
    h << "<polyline class=\"" << cls << "\" fill=\"none\" points=\"" << points << "\"/>\n";
    for (size_t i = 0; i < runs.size(); ++i) {
      auto [rate, share] = run_rates(*runs[i]);
      double v = series == 0 ? rate : share;
      if (v < 0) continue;
      h << "<circle class=\"pt-" << cls << "\" cx=\"" << fmt_double(x(i), "%.1f") << "\" cy=\""
        << fmt_double(y(v), "%.1f") << "\" r=\"3.5\"><title>run " << runs[i]->id << " ("
        << E(runs[i]->started) << "): " << (series == 0 ? "pass rate " : "share run ")
        << fmt_double(100 * v, "%.1f") << "%</title></circle>\n";
    }
  }
  h << "<text class=\"axis\" x=\"" << fmt_double(kLeft, "%.0f") << "\" y=\""
    << fmt_double(kH - 6, "%.0f") << "\">oldest</text><text class=\"axis\" x=\""
    << fmt_double(kLeft + pw, "%.0f") << "\" y=\"" << fmt_double(kH - 6, "%.0f")
    << "\" text-anchor=\"end\">newest</text>\n</svg>\n";
}

std::string render_history(const std::string& impl, const std::vector<const RunInfo*>& runs) {
  Html h;
  page_start(h, impl + " history - simtspec", "", false);
  h << "<h1>History of " << E(impl)
    << "</h1>\n<p class=\"legend\"><span class=\"key-rate\">"
       "&#9644; pass rate</span> (pass &divide; run) <span class=\"key-share\">&#9644; share of "
       "the suite run</span> (run &divide; selected), over "
    << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << ", oldest first.</p>\n";
  history_chart(h, runs);
  h << "<h2 id=\"runs\">Runs</h2>\n<table class=\"runs\">\n<thead><tr><th>run</th><th>started</th>"
       "<th>version</th><th>state</th><th>host</th><th>duration</th>";
  for (auto st : kStatuses) h << "<th>" << E(st) << "</th>";
  h << "<th>pass rate</th><th>share run</th></tr></thead>\n<tbody>\n";
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {  // newest first
    const RunInfo& r = **it;
    auto [rate, share] = run_rates(r);
    h << "<tr id=\"run-" << r.id << "\"><td class=\"n\">" << r.id << "</td><td>" << E(r.started)
      << "</td><td>" << E(r.impl_version) << "</td><td"
      << (r.state == "complete" ? "" : " class=\"warn\"") << ">" << E(r.state) << "</td><td>"
      << E(r.host) << "</td><td class=\"n\">" << fmt_double(r.duration_s, "%.1f s") << "</td>";
    for (auto st : kStatuses) {
      auto c = r.counts.find(std::string(st));
      h << "<td class=\"n\">" << (c == r.counts.end() ? 0 : c->second) << "</td>";
    }
    h << "<td class=\"n\">" << (rate < 0 ? "n/a" : fmt_double(100 * rate, "%.1f%%"))
      << "</td><td class=\"n\">" << E(share < 0 ? "n/a" : share_run(r.run, r.selected))
      << "</td></tr>\n";
  }
  h << "</tbody>\n</table>\n";
  page_end(h);
  return h.str();
}

// ---------------------------------------------------------------------------
// coverage.html

void coverage_tests_cell(Html& h, const Model& m, const ClauseUse* use) {
  h << "<td class=\"tests\">";
  if (use) {
    bool first = true;
    for (const auto& id : use->tests) {
      if (!first) h << " ";
      first = false;
      auto it = m.first_page_of_test.find(id);
      const bool run = use->run_tests.count(id) > 0;
      h << "<a href=\""
        << (it != m.first_page_of_test.end() ? it->second->page
                                             : "index.html#" + m.test_anchor.at(id))
        << "\"" << (run ? "" : " class=\"rejection\"")
        << (run ? "" : " title=\"expects the program to be rejected\"") << ">" << E(id)
        << (run ? "" : " (rejected)") << "</a>";
    }
  }
  h << "</td>";
}

void coverage_counts_cells(Html& h, const Model& m, const ClauseUse* use) {
  for (size_t fi = 0; fi < m.sources.size(); ++fi) {
    h << "<td class=\"counts\">";
    if (use)
      for (const auto& s : m.statuses)
        if (size_t n = count_of(use->per_file[fi], s))
          h << "<span class=\"st " << status_class(s) << "\">" << n << " " << E(s) << "</span> ";
    h << "</td>";
  }
}

// A clause of the spec: cited by a test whose program runs, cited only by tests that
// expect a rejection, a tooling clause, or uncovered.
std::string clause_state(const ClauseUse* use, const Clause& c) {
  if (use) return use->run_tests.empty() ? "rejection" : "covered";
  return is_tooling(c) ? "unit-tested" : "uncovered";
}

void coverage_summary(Html& h, const std::map<std::string, Clause>& clauses,
                      const std::map<std::string, ClauseUse>& uses) {
  std::vector<std::string> uncovered, rejection;
  size_t tooling = 0, covered = 0;
  for (const auto& [id, c] : clauses) {
    auto it = uses.find(id);
    std::string state = clause_state(it == uses.end() ? nullptr : &it->second, c);
    if (state == "covered")
      ++covered;
    else if (state == "rejection")
      rejection.push_back(id);
    else if (state == "unit-tested")
      ++tooling;
    else
      uncovered.push_back(id);
  }
  h << "<h1>Clause coverage</h1>\n<p class=\"uncovered-total\">Uncovered machine clauses: "
    << "<strong id=\"uncovered-count\" class=\"" << (uncovered.empty() ? "ok" : "bad") << "\">"
    << uncovered.size() << "</strong> of " << clauses.size() << " clauses (" << covered
    << " covered by a run, <span id=\"rejection-count\">" << rejection.size()
    << "</span> only by rejections, " << tooling
    << " tooling clauses checked by unit tests).</p>\n";
  if (!rejection.empty()) {
    h << "<p class=\"rejection-list\">Covered only by tests that expect a rejection (the "
         "program never runs, so a run-time behaviour they name is not certified): ";
    for (const auto& id : rejection)
      h << "<a class=\"rejection\" href=\"#" << E(clause_anchor(id)) << "\">" << E(id) << "</a> ";
    h << "</p>\n";
  }
  if (!uncovered.empty()) {
    h << "<p class=\"uncovered-list\">";
    for (const auto& id : uncovered)
      h << "<a class=\"uncovered\" href=\"#" << E(clause_anchor(id)) << "\">" << E(id) << "</a> ";
    h << "</p>\n";
  }
  if (clauses.empty()) h << "<p class=\"warn\">No spec clauses were loaded.</p>\n";
  h << "<p class=\"note\">Tooling clauses (text starting with <em>(tooling)</em>, and the "
       "chapters testformat.md, runner.md, results.md and oracles.md) are checked by the unit "
       "tests.</p>\n";
}

void coverage_table_head(Html& h, const Model& m, bool with_text) {
  h << "<table class=\"coverage\">\n<thead><tr><th>clause</th>"
    << (with_text ? "<th>text</th><th>state</th>" : "") << "<th>tests</th>";
  for (const auto& src : m.sources) h << "<th>" << E(src.label) << "</th>";
  h << "</tr></thead>\n<tbody>\n";
}

void coverage_chapter(Html& h, const Model& m, const std::string& file,
                      const std::vector<std::pair<const std::string*, const Clause*>>& list,
                      const std::map<std::string, ClauseUse>& uses) {
  h << "<h2 id=\"" << E("ch-" + sanitize(file, 100)) << "\">" << E(file) << "</h2>\n";
  coverage_table_head(h, m, true);
  for (const auto& [id, c] : list) {
    auto it = uses.find(*id);
    const ClauseUse* use = it == uses.end() ? nullptr : &it->second;
    std::string state = clause_state(use, *c);
    h << "<tr id=\"" << E(clause_anchor(*id)) << "\" class=\"" << state << "\"><td class=\"cid\">"
      << E(*id) << "</td><td class=\"text\">" << E(c->text) << "</td><td class=\"state\">"
      << (state == "covered"     ? "covered by a run"
          : state == "rejection" ? "covered by a rejection only"
          : state == "uncovered" ? "<strong>UNCOVERED</strong>"
                                 : "checked by unit tests")
      << "</td>";
    coverage_tests_cell(h, m, use);
    coverage_counts_cells(h, m, use);
    h << "</tr>\n";
  }
  h << "</tbody>\n</table>\n";
}

// Clauses cited by tests that the spec does not define.
void coverage_unknown(Html& h, const Model& m, const std::map<std::string, Clause>& clauses,
                      const std::map<std::string, ClauseUse>& uses) {
  bool any = false;
  for (const auto& [id, use] : uses) {
    if (clauses.count(id)) continue;
    if (!any) {
      h << "<h2 id=\"unknown\">Cited clauses not in the spec</h2>\n";
      coverage_table_head(h, m, false);
      any = true;
    }
    h << "<tr id=\"" << E(clause_anchor(id)) << "\" class=\"unknown\"><td class=\"cid\">" << E(id)
      << "</td>";
    coverage_tests_cell(h, m, &use);
    coverage_counts_cells(h, m, &use);
    h << "</tr>\n";
  }
  if (any) h << "</tbody>\n</table>\n";
}

std::string render_coverage(const Model& m, const std::map<std::string, Clause>& clauses) {
  auto uses = clause_uses(m);
  std::map<std::string, std::vector<std::pair<const std::string*, const Clause*>>> chapters;
  for (const auto& [id, c] : clauses) chapters[c.file].push_back({&id, &c});
  Html h;
  h.reserve(65536);
  page_start(h, "Clause coverage - simtspec", "", false);
  coverage_summary(h, clauses, uses);
  for (const auto& [file, list] : chapters) coverage_chapter(h, m, file, list, uses);
  coverage_unknown(h, m, clauses, uses);
  page_end(h);
  return h.str();
}

// ---------------------------------------------------------------------------
// Detail pages.

// Flattens a JSON object into (dotted path, text) rows. Long arrays are cut.
void flatten(const Value& v, const std::string& path,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object() && !v.as_object().empty()) {
    for (const auto& [k, x] : v.as_object()) flatten(x, path.empty() ? k : path + "." + k, out);
    return;
  }
  std::string text;
  if (v.is_array()) {
    const json::Array& a = v.as_array();
    text = "[";
    for (size_t i = 0; i < a.size() && i < 16; ++i) text += (i ? ", " : "") + json::dump(a[i]);
    text += a.size() > 16 ? ", ...] (" + std::to_string(a.size()) + " values)" : "]";
  } else {
    text = scalar_text(v);
  }
  if (text.size() > 300) text = text.substr(0, 297) + "...";
  out.emplace_back(path, std::move(text));
}

bool path_in(const std::string& path, const std::vector<std::string>& targets) {
  for (const auto& t : targets)
    if (path == t ||
        (path.size() > t.size() && path.compare(0, t.size(), t) == 0 && path[t.size()] == '.'))
      return true;
  return false;
}

// The outcome paths a first difference is about (none if there is none).
std::vector<std::string> diff_targets(const FirstDiff* diff) {
  if (!diff) return {};
  const std::string& kind = diff->kind;
  auto buffer = [](const std::string& b) -> std::vector<std::string> {
    return {"buffers." + b + ".values", "buffers." + b + ".each"};
  };
  if (kind == "buffer") {
    const std::string& b = diff->buffer;
    return b.empty() ? std::vector<std::string>{} : buffer(b);
  }
  if (kind != "field") return {};
  const std::string& f = diff->field;
  if (f == "buffer") {  // a missing buffer: "expected" names it
    std::string b =
        diff->expected && diff->expected->is_string() ? diff->expected->as_string() : "";
    return {b.empty() ? "buffers" : "buffers." + b};
  }
  if (f.rfind("buffer.", 0) == 0 && f.size() > 14 && f.compare(f.size() - 7, 7, ".length") == 0)
    return buffer(f.substr(7, f.size() - 14));
  return {f};
}

// Outcome rows in a fixed order: status first, buffers late, steps last.
int path_rank(const std::string& path) {
  std::string_view top = std::string_view(path).substr(0, path.find('.'));
  if (top == "status") return 0;
  if (top == "message") return 1;
  if (top == "line") return 2;
  if (top == "event") return 3;
  if (top == "buffers") return 5;
  if (top == "steps") return 6;
  return 4;
}

struct Detail {
  const Model& m;
  const Entry& e;
  const Record& rec;
  const Value* config;
  const Value* expected;
  const Value* actual;
  const Value* reference;
  const FirstDiff* diff;
  // What the page reads of the expectation and the two outcomes, typed.
  OutcomeView x, a, r;
};

void detail_header(Html& h, const Detail& d) {
  const Source& src = d.m.sources[d.e.file];
  h << "<h1>" << E(d.e.id);
  if (!d.e.key.empty()) h << " <span class=\"key\">[" << E(d.e.key) << "]</span>";
  h << "</h1>\n";
  if (const std::string& t = d.rec.title; !t.empty())
    h << "<p class=\"title\">" << E(t) << "</p>\n";
  h << "<p class=\"verdict\">";
  status_badge(h, d.e.status);
  h << " on <strong>" << E(src.label) << "</strong>";
  if (const std::string& msg = d.rec.message; !msg.empty())
    h << "</p>\n<pre class=\"message\">" << E(msg) << "</pre>\n";
  else
    h << "</p>\n";
}

void detail_other_runs(Html& h, const Detail& d, const Row* row) {
  if (!row || d.m.sources.size() < 2) return;
  h << "<p class=\"others\">Other results files: ";
  for (size_t fi = 0; fi < row->cells.size(); ++fi) {
    if (fi == d.e.file) continue;
    h << E(d.m.sources[fi].label) << " ";
    if (const Entry* o = row->cells[fi]; o && !o->page.empty()) {
      h << "<a href=\"../" << o->page << "\">";
      status_badge(h, o->status);
      h << "</a> ";
    } else if (o) {
      h << "<a href=\"../index.html#" << E(d.m.test_anchor.at(o->id)) << "\">";
      status_badge(h, o->status);
      h << "</a> ";
    } else {
      h << "<span class=\"st st-missing\">no result</span> ";
    }
  }
  h << "</p>\n";
}

void detail_facts(Html& h, const Detail& d) {
  h << "<table class=\"facts\">\n";
  if (const std::string& f = d.rec.file; !f.empty())
    h << "<tr><th>file</th><td><code>" << E(f) << "</code></td></tr>\n";
  h << "<tr><th>clauses</th><td>";
  for (const auto& c : d.rec.clauses)
    h << "<a href=\"../coverage.html#" << E(clause_anchor(c)) << "\">" << E(c) << "</a> ";
  h << "</td></tr>\n<tr><th>features</th><td>";
  for (const auto& f : d.rec.features) h << "<span class=\"tag\">" << E(f) << "</span> ";
  h << "</td></tr>\n";
  if (!d.e.key.empty())
    h << "<tr><th>matrix entry</th><td><code>" << E(d.e.key) << "</code></td></tr>\n";
  h << "<tr><th>configuration</th><td>";
  if (d.config && d.config->is_object()) {
    h << "<span class=\"config\">";
    for (const auto& [k, v] : d.config->as_object())
      h << "<span class=\"kv\">" << E(k) << "=" << E(scalar_text(v)) << "</span> ";
    h << "</span>";
  }
  h << "</td></tr>\n";
  if (auto checks = d.rec.checks)
    h << "<tr><th>values compared</th><td>" << *checks << "</td></tr>\n";
  if (d.rec.duration_ms)
    h << "<tr><th>duration</th><td>" << fmt_double(*d.rec.duration_ms, "%.1f ms") << "</td></tr>\n";
  h << "</table>\n";
}

// Values of buffer `name` in an outcome, if it has them as an array.
const json::Array* buffer_values(const OutcomeView& outcome, const std::string& name) {
  const OutcomeView::Buffer* b = outcome.buffer(name);
  return b && b->values ? &*b->values : nullptr;
}

// Whether the buffer table has a row for the first difference's element.
bool diff_row_shown(const Detail& d) {
  if (!d.diff) return false;
  const std::string& name = d.diff->buffer;
  const std::optional<int64_t>& index = d.diff->index;
  if (d.diff->kind != "buffer" || name.empty() || !index || *index < 0) return false;
  for (const json::Array* a :
       {buffer_values(d.x, name), buffer_values(d.a, name), buffer_values(d.r, name)})
    if (a && static_cast<uint64_t>(*index) < a->size()) return true;
  return false;
}

void detail_first_diff(Html& h, const Detail& d) {
  if (!d.diff) return;
  const std::string& kind = d.diff->kind;
  const std::optional<Value>& exp = d.diff->expected;
  const std::optional<Value>& act = d.diff->actual;
  h << "<div class=\"first-diff\" id=\"diff-summary\"><strong>First difference:</strong> ";
  if (kind == "buffer") {
    h << "buffer <code>" << E(d.diff->buffer) << "</code>";
    if (auto i = d.diff->index) {
      if (diff_row_shown(d))
        h << ", <a href=\"#first-diff\">element " << *i << "</a>";
      else
        h << ", element " << *i;
    }
    const std::optional<int64_t>& lane = d.diff->lane;
    const std::optional<int64_t>& warp = d.diff->warp;
    if (lane) h << ", lane <span class=\"hl\">" << *lane << "</span>";
    if (warp) h << " of warp <span class=\"hl\">" << *warp << "</span>";
  } else {
    h << "field <code class=\"hl\">" << E(d.diff->field) << "</code>";
    // preempt.image: the image's field at the first differing byte.
    if (const std::string& name = d.diff->name; !name.empty())
      h << " (<code class=\"hl\">" << E(name) << "</code>)";
  }
  h << ": expected <code>" << E(exp ? scalar_text(*exp) : "?") << "</code>, actual <code>"
    << E(act ? scalar_text(*act) : "?") << "</code></div>\n";
}

// Expected, actual and reference outcomes, one row per field, the first
// difference highlighted.
void detail_outcomes(Html& h, const Detail& d) {
  const Value* cols[3] = {d.expected, d.actual, d.reference};
  const char* names[3] = {"expected", "actual", "reference"};
  std::vector<std::string> order;
  std::map<std::string, std::array<std::string, 3>> rows;
  for (int c = 0; c < 3; ++c) {
    if (!cols[c]) continue;
    std::vector<std::pair<std::string, std::string>> flat;
    if (cols[c]->is_object())
      flatten(*cols[c], "", flat);
    else
      flat.emplace_back("value", scalar_text(*cols[c]));
    for (auto& [path, text] : flat) {
      auto [it, fresh] = rows.try_emplace(path);
      if (fresh) order.push_back(path);
      it->second[c] = std::move(text);
    }
  }
  h << "<h2 id=\"outcomes\">Outcomes</h2>\n";
  if (order.empty()) {
    h << "<p class=\"note\">No expectation or outcome recorded.</p>\n";
    return;
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return path_rank(a) < path_rank(b); });
  std::vector<std::string> targets = diff_targets(d.diff);
  h << "<table class=\"outcomes\">\n<thead><tr><th>field</th>";
  for (int c = 0; c < 3; ++c)
    if (cols[c]) h << "<th>" << names[c] << "</th>";
  h << "</tr></thead>\n<tbody>\n";
  for (const auto& path : order) {
    bool hl = path_in(path, targets);
    h << "<tr" << (hl ? " class=\"diff\"" : "") << "><th>" << E(path) << "</th>";
    for (int c = 0; c < 3; ++c)
      if (cols[c]) h << "<td>" << E(rows[path][c]) << "</td>";
    h << "</tr>\n";
  }
  h << "</tbody>\n</table>\n";
  if (d.expected)
    h << "<details class=\"raw\"><summary>the expectation as JSON</summary>\n<pre class=\"json\">"
      << E(json::dump(*d.expected)) << "</pre>\n</details>\n";
}

struct BufferView {
  std::string name, type;
  const json::Array* expect = nullptr;  // the expectation's `values`, if given
  std::string each;                     // or its `each` expression
  const json::Array* reference = nullptr;
  const json::Array* actual = nullptr;
  std::optional<int64_t> diff_index;
};

std::string cell_text(const json::Array* a, size_t i) {
  return a && i < a->size() ? scalar_text((*a)[i]) : std::string();
}

bool same_value(const json::Array* a, const json::Array* b, size_t i, const std::string& type) {
  if (!a || !b || i >= a->size() || i >= b->size()) return !a || !b;
  const Value &x = (*a)[i], &y = (*b)[i];
  if (x.is_int() && y.is_int())
    return model::reduce(type, x.as_int()) == model::reduce(type, y.as_int());
  return x == y;
}

// Where element i lives under the common layout of [format.expr]: lane
// i mod wave, warp (gwarp mod warps) and, with several workgroups, wg.
struct ElementLayout {
  int64_t wave = 0, warps = 0;
  bool with_wg = false;
  bool known() const { return wave > 0; }
};

ElementLayout element_layout(const Value* config) {
  ElementLayout l;
  if (!config) return l;
  const auto [wave, warps, wgs] = layout_view(*config);
  if (wave && *wave > 0) l.wave = *wave;
  if (l.known() && warps && *warps > 0) l.warps = *warps;
  l.with_wg = l.warps > 0 && wgs && *wgs > 1;
  return l;
}

void buffer_head(Html& h, const BufferView& b, const ElementLayout& l) {
  h << "<table class=\"buffer\">\n<thead><tr><th>index</th>";
  if (l.known()) h << "<th>lane</th><th>warp</th>" << (l.with_wg ? "<th>wg</th>" : "");
  if (b.expect || !b.each.empty()) h << "<th>expected</th>";
  if (b.reference) h << "<th>reference</th>";
  h << "<th>actual</th><th title=\"differs\">&ne;</th></tr></thead>\n<tbody>\n";
}

void buffer_row(Html& h, const Detail& d, const BufferView& b, const ElementLayout& l, size_t i) {
  bool first = b.diff_index && *b.diff_index == static_cast<int64_t>(i);
  bool differs =
      !same_value(b.expect, b.actual, i, b.type) || !same_value(b.reference, b.actual, i, b.type);
  h << "<tr";
  if (first)
    h << " id=\"first-diff\" class=\"diff\"";
  else if (differs)
    h << " class=\"mismatch\"";
  h << "><td>" << i << "</td>";
  if (l.known()) {
    auto index = static_cast<int64_t>(i);
    int64_t gwarp = index / l.wave;
    const char* td = first ? "<td class=\"hl\">" : "<td>";
    h << td << index % l.wave << "</td>" << td << (l.with_wg ? gwarp % l.warps : gwarp) << "</td>";
    if (l.with_wg) h << td << gwarp / l.warps << "</td>";
  }
  if (b.expect) {
    h << "<td>" << E(cell_text(b.expect, i)) << "</td>";
  } else if (!b.each.empty()) {
    // The harness evaluates `each`; the record only has the first difference's value.
    const Value* x = first && d.diff && d.diff->expected ? &*d.diff->expected : nullptr;
    h << "<td>" << E(x ? scalar_text(*x) : std::string()) << "</td>";
  }
  if (b.reference) h << "<td>" << E(cell_text(b.reference, i)) << "</td>";
  h << "<td>" << E(cell_text(b.actual, i)) << "</td><td class=\"mark\">"
    << (first || differs ? "&ne;" : "") << "</td></tr>\n";
}

// The buffer's elements, one row each; a long buffer shows a window around
// the first difference.
void buffer_table(Html& h, const Detail& d, const BufferView& b) {
  size_t n = 0;
  for (const json::Array* a : {b.expect, b.reference, b.actual})
    if (a) n = std::max(n, a->size());
  ElementLayout l = element_layout(d.config);
  size_t lo = 0, hi = n;
  if (n > kMaxBufferRows) {
    size_t centre = b.diff_index && *b.diff_index >= 0 ? static_cast<size_t>(*b.diff_index) : 0;
    centre = std::min(centre, n - 1);
    lo = centre > kBufferWindow ? centre - kBufferWindow : 0;
    hi = std::min(n, lo + 2 * kBufferWindow + 1);
  }
  int cols = 3 + (l.known() ? 2 + l.with_wg : 0) + (b.expect || !b.each.empty()) +
             (b.reference != nullptr);
  buffer_head(h, b, l);
  if (lo > 0)
    h << "<tr class=\"gap\"><td colspan=\"" << cols << "\">elements 0 to " << lo - 1
      << " not shown</td></tr>\n";
  for (size_t i = lo; i < hi; ++i) buffer_row(h, d, b, l, i);
  if (hi < n)
    h << "<tr class=\"gap\"><td colspan=\"" << cols << "\">elements " << hi << " to " << n - 1
      << " not shown</td></tr>\n";
  h << "</tbody>\n</table>\n";
}

void detail_buffers(Html& h, const Detail& d) {
  std::vector<std::string> names;
  for (const OutcomeView* o : {&d.x, &d.a, &d.r})
    for (const auto& ob : o->buffers)
      if (std::find(names.begin(), names.end(), ob.name) == names.end()) names.push_back(ob.name);
  if (names.empty()) return;
  bool buffer_diff = d.diff && d.diff->kind == "buffer";
  std::string diff_buffer = buffer_diff ? d.diff->buffer : "";
  h << "<h2 id=\"buffers\">Output buffers</h2>\n";
  for (const auto& name : names) {
    BufferView b;
    b.name = name;
    b.expect = buffer_values(d.x, name);
    if (const OutcomeView::Buffer* xb = d.x.buffer(name)) b.each = xb->each;
    b.actual = buffer_values(d.a, name);
    b.reference = buffer_values(d.r, name);
    if (const OutcomeView::Buffer* ab = d.a.buffer(name)) b.type = ab->type;
    if (const OutcomeView::Buffer* rb = d.r.buffer(name); rb && b.type.empty()) b.type = rb->type;
    if (buffer_diff && name == diff_buffer) b.diff_index = d.diff->index;
    bool open = b.diff_index.has_value();
    h << "<details class=\"buffer\"" << (open ? " open" : "") << " id=\""
      << E("buffer-" + sanitize(name, 100)) << "\"><summary>buffer <code>" << E(name) << "</code>";
    if (!b.type.empty()) h << " " << E(b.type);
    if (b.actual) h << ", " << b.actual->size() << " elements";
    if (!b.each.empty()) h << ", expected: each element = <code>" << E(b.each) << "</code>";
    h << "</summary>\n";
    buffer_table(h, d, b);
    h << "</details>\n";
  }
}

// The test source with line numbers. For rejected programs the line the
// runner reported and the line the test expects are marked.
void detail_source(Html& h, const Detail& d) {
  const std::string& src = d.rec.source;
  if (src.empty()) return;
  std::map<int64_t, std::string> marks;  // line -> why
  if (auto l = d.x.line) marks[*l] = "the test expects the rejection here";
  if (d.a.status == "rejected")
    if (auto l = d.a.line) marks[*l] = "the runner rejected the program here";
  h << "<h2 id=\"source\">Test source</h2>\n<pre class=\"source\">";
  std::string_view s = src;
  int64_t n = 1;
  for (size_t start = 0; start < s.size(); ++n) {
    size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view line = s.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    h << "<span id=\"L" << n << "\"";
    if (auto it = marks.find(n); it != marks.end())
      h << " class=\"hl-line\" title=\"" << E(it->second) << "\"";
    h << "><span class=\"ln\">" << n << "</span>" << E(line) << "</span>\n";
    start = end + 1;
  }
  h << "</pre>\n";
}

void trace_block(Html& h, std::string_view heading, std::string_view id,
                 const std::vector<std::string>& lines, size_t diff_at) {
  h << "<details class=\"trace\" open><summary>" << E(heading) << " (" << lines.size()
    << " lines)</summary>\n<pre class=\"trace\">";
  for (size_t i = 0; i < lines.size(); ++i) {
    // trap.entry, trap.resume: a core entering its handler, a warp leaving it.
    const bool trap = lines[i].find(" enters its handler ") != std::string::npos ||
                      lines[i].find(" leaves the handler ") != std::string::npos;
    if (i == diff_at)
      h << "<span class=\"diff\" id=\"" << id << "\">" << E(lines[i]) << "</span>\n";
    else if (trap)
      h << "<span class=\"trap\">" << E(lines[i]) << "</span>\n";
    else
      h << E(lines[i]) << "\n";
  }
  h << "</pre>\n</details>\n";
}

// "#13" of a trace line "#13 w0 pc=2 ...": its step; empty if it has none.
std::string trace_step(const std::string& line) {
  if (line.empty() || line[0] != '#') return "";
  size_t end = line.find(' ');
  return line.substr(0, end == std::string::npos ? line.size() : end);
}

void detail_traces(Html& h, const Detail& d) {
  const auto& ref = d.rec.reference_trace;
  const auto& mine = d.rec.trace;
  const std::string& trace_error = d.rec.trace_error;
  if (ref.empty() && mine.empty() && trace_error.empty()) return;
  h << "<h2 id=\"trace\">Trace</h2>\n";
  if (!trace_error.empty())
    h << "<p class=\"warn trace-error\">No runner trace: " << E(trace_error) << "</p>\n";
  if (!ref.empty() && ref == mine) {
    trace_block(h, "trace (the reference's and the runner's are the same)", "trace-diff", ref,
                std::string::npos);
    return;
  }
  size_t at = std::string::npos;
  if (!ref.empty() && !mine.empty()) {
    at = 0;
    while (at < ref.size() && at < mine.size() && ref[at] == mine[at]) ++at;
    if (at == ref.size() && at == mine.size())
      at = std::string::npos;  // same lines
    else {
      // Trace lines, not source lines: line N of each trace is its N-th step shown.
      std::string step = trace_step(at < ref.size() ? ref[at] : mine[at]);
      h << "<p class=\"note\">The traces first differ at <a href=\"#"
        << (at < mine.size() ? "trace-diff" : "ref-trace-diff") << "\">trace line " << at + 1
        << "</a>";
      if (!step.empty()) h << " (step " << E(step) << ")";
      h << "; the source line of each step is at the end of its trace line.</p>\n";
    }
  }
  if (!ref.empty()) trace_block(h, "reference trace", "ref-trace-diff", ref, at);
  if (!mine.empty()) trace_block(h, "runner trace", "trace-diff", mine, at);
}

// trap.host.toml: the launch's host script, as the test gives it.
void detail_host(Html& h, const Detail& d) {
  // preempt.request: the preemption points, with their flow and intruder.
  if (!d.rec.preemptions.empty()) {
    h << "<h2 id=\"preemptions\">Preemptions</h2>\n<p class=\"note\">Where the host preempts "
         "the launch (preempt.request): the step, the cores, the flow (A: checkpoint; B: save, "
         "intruder, restore) and the intruder.</p>\n<table class=\"preemptions\"><tr><th>step</th>"
         "<th>core</th><th>flow</th><th>intruder</th></tr>\n";
    for (const Preemption& p : d.rec.preemptions) {
      const std::string& intruder = p.intruder;
      h << "<tr><td>" << (p.step ? std::to_string(*p.step) : "?") << "</td><td>"
        << E(p.core.is_null() ? "all" : scalar_text(p.core)) << "</td><td>" << E(p.flow)
        << "</td><td>";
      if (intruder.empty())
        h << "none";
      else
        h << "<details><summary>" << std::count(intruder.begin(), intruder.end(), '\n')
          << " lines</summary><pre>" << E(intruder) << "</pre></details>";
      h << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  if (auto n = d.rec.restore_bytes)  // format.restore
    h << "<p class=\"note\">The launch starts from a context image of " << *n
      << " bytes (flow C, preempt.flow.c).</p>\n";
  const std::string& host = d.rec.host;
  if (host.empty()) return;
  h << "<h2 id=\"host\">Host script</h2>\n<p class=\"note\">The host's actions during the "
       "launch (trap.host), the same for every configuration of the test.</p>\n<pre "
       "class=\"host\">"
    << E(host) << "</pre>\n";
}

// results.report.failures: the command near the top, with a copy button that
// report.js shows (without JavaScript the command is still selectable text).
void detail_reproduce(Html& h, const Detail& d) {
  if (const std::string& cmd = d.rec.reproduce; !cmd.empty())
    h << "<div class=\"reproduce\" id=\"reproduce\"><strong>Reproduce:</strong> <button "
         "type=\"button\" class=\"copy\" data-copy=\"reproduce-cmd\" hidden>copy</button>\n"
         "<code class=\"reproduce\" id=\"reproduce-cmd\">"
      << E(cmd) << "</code></div>\n";
}

void detail_stderr(Html& h, const Detail& d) {
  if (const std::string& err = d.rec.stderr_text; !err.empty())
    h << "<h2 id=\"stderr\">Standard error</h2>\n<pre class=\"stderr\">" << E(err) << "</pre>\n";
}

std::string render_detail(const Model& m, const Entry& e, const Row* row) {
  const Record& rec = *e.rec;
  auto present = [](const Value& v) { return v.is_null() ? nullptr : &v; };
  Detail d{m,
           e,
           rec,
           present(rec.config),
           present(rec.expected),
           present(rec.actual),
           present(rec.reference),
           rec.first_diff ? &*rec.first_diff : nullptr,
           outcome_view(rec.expected),
           outcome_view(rec.actual),
           outcome_view(rec.reference)};
  Html h;
  h.reserve(8192 + rec.source.size() * 2);
  page_start(h, e.name() + " - " + m.sources[e.file].label + " - simtspec", "../", true);
  // results.report.failures: what failed and how to rerun it first; standard
  // error before the source.
  detail_header(h, d);
  if (m.history.count(m.sources[e.file].file->runner_name())) {
    h << "<p class=\"history\">History: ";
    history_strip(h, m, e, true);
    h << " <a href=\"../" << E(history_page(m.sources[e.file].file->runner_name()))
      << "\">all runs</a></p>\n";
  }
  detail_reproduce(h, d);
  detail_other_runs(h, d, row);
  detail_first_diff(h, d);
  detail_stderr(h, d);
  detail_facts(h, d);
  detail_host(h, d);
  detail_outcomes(h, d);
  detail_buffers(h, d);
  detail_source(h, d);
  detail_traces(h, d);
  page_end(h);
  return h.str();
}

// ---------------------------------------------------------------------------
// Static files.

constexpr std::string_view kStyle = R"css(:root {
  --fg: #1d1f21; --bg: #ffffff; --muted: #666; --line: #d8dade; --head: #f3f4f6;
  --pass: #1a7f37; --pass-bg: #dafbe1; --fail: #b42318; --fail-bg: #ffe4e0;
  --error: #8a4b00; --error-bg: #ffe8c2; --unsupported: #57606a; --unsupported-bg: #eaeef2;
  --xfail: #6a5a00; --xfail-bg: #fff6bf; --xpass: #8250df; --xpass-bg: #f1e6ff;
  --flaky: #9a3412; --flaky-bg: #ffedd5;
  --hl: #fff1a8; --diff: #ffd0cc; --trap: #e3ecff;
}
pre.trace span.trap { background: var(--trap); display: inline-block; width: 100%; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: var(--fg); background: var(--bg); margin: 0 auto; padding: 0 1.5em 3em; max-width: 1400px; }
nav { padding: .6em 0; border-bottom: 1px solid var(--line); margin-bottom: 1em; }
nav a { margin-right: 1.5em; }
a { color: #0b57d0; text-decoration: none; }
a:hover { text-decoration: underline; }
h1 { font-size: 1.6em; margin: .4em 0; word-break: break-word; }
h2 { font-size: 1.2em; margin: 1.4em 0 .5em; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 13px; }
pre { background: var(--head); border: 1px solid var(--line); padding: .6em; overflow: auto; }
table { border-collapse: collapse; margin: .3em 0 1em; }
th, td { border: 1px solid var(--line); padding: .2em .55em; text-align: left; vertical-align: top; }
thead th { background: var(--head); position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: var(--muted); }
.warn, .bad { color: var(--fail); font-weight: bold; }
.ok { color: var(--pass); }
.summaries { display: flex; flex-wrap: wrap; gap: 1em; }
.summary { border: 1px solid var(--line); border-radius: 6px; padding: .2em 1em; flex: 1 1 420px; }
.share { font-size: 1.15em; font-weight: 600; margin: .4em 0; }
.summary dl { display: grid; grid-template-columns: max-content 1fr; gap: .1em 1em; }
.summary dt { color: var(--muted); }
.summary dd { margin: 0; word-break: break-all; }
.st { font-weight: 600; }
.st-pass { color: var(--pass); background: var(--pass-bg); }
.st-fail { color: var(--fail); background: var(--fail-bg); }
.st-error { color: var(--error); background: var(--error-bg); }
.st-unsupported { color: var(--unsupported); background: var(--unsupported-bg); }
.st-xfail { color: var(--xfail); background: var(--xfail-bg); }
.st-xpass { color: var(--xpass); background: var(--xpass-bg); }
.st-flaky { color: var(--flaky); background: var(--flaky-bg); }
.st-other { color: var(--fg); background: var(--hl); }
.st-missing { color: var(--muted); }
span.st { padding: 0 .4em; border-radius: 3px; }
td.st a { color: inherit; display: block; }
.matrix .group { border-left: 3px solid var(--fg); }
tr.failing td.id { font-weight: 600; }
.matrix.clauses th a { font-weight: normal; }
.matrix.clauses tr.failing th { background: var(--fail-bg); }
.filter { display: flex; flex-wrap: wrap; gap: .4em 1em; align-items: center; margin: .5em 0; }
.filter label.st { padding: .1em .5em; border-radius: 3px; }
.filter input[type=search] { width: 22em; padding: .2em; }
table.results td.id { font-family: ui-monospace, Menlo, Consolas, monospace; }
table.results td.key { color: var(--muted); }
tr[hidden] { display: none; }
.coverage td.text { max-width: 42em; }
.coverage tr.uncovered td.state { color: var(--fail); }
.coverage tr.unit-tested td.state { color: var(--muted); }
.coverage tr.rejection td.state { color: var(--xfail); }
.coverage td.tests a.rejection { font-style: italic; }
.coverage tr.uncovered { background: var(--fail-bg); }
.coverage td.counts span { display: inline-block; margin: 0 .2em .1em 0; }
.coverage td.tests a { margin-right: .4em; }
.uncovered-total { font-size: 1.1em; }
.title { font-size: 1.1em; }
.verdict { font-size: 1.05em; }
.message, pre.json { white-space: pre-wrap; word-break: break-all; }
.facts th { background: var(--head); width: 10em; }
.kv { margin-right: .6em; }
.tag { background: var(--head); border: 1px solid var(--line); border-radius: 3px; padding: 0 .35em; }
.first-diff { border-left: 4px solid var(--fail); background: var(--diff); padding: .5em .8em; margin: 1em 0; }
.hl { background: var(--hl); font-weight: bold; }
tr.diff, tr.diff th, tr.diff td { background: var(--diff); font-weight: bold; }
tr.diff td.hl { background: var(--hl); }
tr.mismatch td { background: #fff0ee; }
tr.gap td { color: var(--muted); font-style: italic; }
:target { outline: 2px solid #0b57d0; }
details.buffer, details.trace { margin: .4em 0; }
summary { cursor: pointer; }
table.buffer td { font-family: ui-monospace, Menlo, Consolas, monospace; text-align: right; }
pre.source .ln { display: inline-block; width: 3.5em; padding-right: 1em; text-align: right;
  color: var(--muted); user-select: none; }
pre.source .hl-line { background: var(--hl); display: inline-block; min-width: 100%; }
pre.trace span.diff { background: var(--diff); display: inline-block; min-width: 100%; font-weight: bold; }
tr[id], h2[id], div[id], :target { scroll-margin-top: 4em; }
td.st .msg { font-weight: normal; font-size: 12px; white-space: pre-wrap; word-break: break-word;
  max-width: 40em; }
div.reproduce { margin: .6em 0; }
button.copy { font-size: 12px; margin-left: .5em; }
td.mark { color: var(--fail); text-align: center; }
.strip { display: inline-flex; gap: 1px; margin-left: .4em; vertical-align: middle; }
.strip i { display: inline-block; width: 8px; height: 8px; border: 1px solid var(--line); }
.strip i.st-pass { background: var(--pass); } .strip i.st-fail { background: var(--fail); }
.strip i.st-error { background: var(--error); } .strip i.st-xpass { background: var(--xpass); }
.strip i.st-unsupported { background: var(--unsupported-bg); }
.strip i.st-xfail { background: var(--xfail-bg); } .strip i.st-other { background: var(--hl); }
table.interop td.g-all { background: var(--pass-bg); color: var(--pass); }
table.interop td.g-some { background: var(--xfail-bg); }
table.interop td.g-zero { background: var(--fail-bg); color: var(--fail); }
table.interop td.g-unrun, table.interop td.g-none { color: var(--muted); }
svg.chart line.grid { stroke: var(--line); }
svg.chart text.axis { font-size: 11px; fill: var(--muted); }
svg.chart polyline.rate { stroke: var(--pass); stroke-width: 2; }
svg.chart polyline.share { stroke: #0b57d0; stroke-width: 2; stroke-dasharray: 5 3; }
svg.chart circle.pt-rate { fill: var(--pass); } svg.chart circle.pt-share { fill: #0b57d0; }
.key-rate { color: var(--pass); } .key-share { color: #0b57d0; }
code.reproduce { display: block; background: var(--head); border: 1px solid var(--line); padding: .6em;
  user-select: all; white-space: pre-wrap; word-break: break-all; }
)css";

constexpr std::string_view kScript =
    R"js(// The configuration filter of index.html: a text box on the test id and one
// checkbox per status. A row shows if its name contains the text and one of
// its statuses is checked. The filter can be set from the address:
// index.html#q=TEXT&status=fail,error
// The copy buttons of the detail pages: a button.copy[data-copy=ID] is shown and
// copies the text of element ID (the page works without them).
(function () {
  'use strict';
  function copyButtons() {
    Array.prototype.forEach.call(document.querySelectorAll('button.copy[data-copy]'), function (b) {
      var src = document.getElementById(b.getAttribute('data-copy'));
      if (!src) return;
      b.hidden = false;
      b.addEventListener('click', function () {
        function select() {
          var range = document.createRange();
          range.selectNodeContents(src);
          var sel = window.getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
          var ok = false;
          try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
          b.textContent = ok ? 'copied' : 'selected: press Ctrl+C';
        }
        if (navigator.clipboard && navigator.clipboard.writeText)
          navigator.clipboard.writeText(src.textContent).then(function () {
            b.textContent = 'copied';
          }, select);
        else select();
      });
    });
  }
  function setup() {
    copyButtons();
    var table = document.getElementById('results');
    var text = document.getElementById('filter-text');
    var shown = document.getElementById('shown');
    if (!table || !text || !shown || !table.tBodies.length) return;
    var boxes = Array.prototype.slice.call(document.querySelectorAll('#filter input[data-status]'));
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var names = rows.map(function (r) { return (r.getAttribute('data-name') || '').toLowerCase(); });
    var statuses = rows.map(function (r) {
      return (r.getAttribute('data-status') || '').split(' ').filter(Boolean);
    });
    function apply() {
      var q = text.value.trim().toLowerCase();
      var on = {};
      boxes.forEach(function (b) { on[b.getAttribute('data-status')] = b.checked; });
      var n = 0, all = 0;
      for (var i = 0; i < rows.length; ++i) {
        var show = (!q || names[i].indexOf(q) >= 0) &&
            statuses[i].some(function (s) { return on[s] === true; });
        rows[i].hidden = !show;
        var count = Number(rows[i].getAttribute('data-n') || 1);
        all += count;
        if (show) n += count;
      }
      shown.textContent = n + ' of ' + all + ' configurations shown';
    }
    function fromHash() {
      var params = {};
      location.hash.replace(/^#/, '').split('&').forEach(function (part) {
        var eq = part.indexOf('=');
        if (eq > 0) {
          try {
            params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1));
          } catch (e) {
            // a malformed escape: ignore that parameter
          }
        }
      });
      if (params.q !== undefined) text.value = params.q;
      if (params.status !== undefined) {
        var wanted = params.status.split(',');
        boxes.forEach(function (b) { b.checked = wanted.indexOf(b.getAttribute('data-status')) >= 0; });
      }
    }
    fromHash();
    window.addEventListener('hashchange', function () { fromHash(); apply(); });
    text.addEventListener('input', apply);
    boxes.forEach(function (b) { b.addEventListener('change', apply); });
    document.getElementById('filter').addEventListener('submit', function (ev) { ev.preventDefault(); });
    apply();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setup);
  else setup();
})();
)js";

// Writes a file. An existing file is overwritten in place and then cut to the
// new size, never truncated to zero first nor unlinked: on ext4, files
// truncated to zero and rewritten are forced to disk on close (auto_da_alloc),
// and freeing their blocks can be slow too, which made re-rendering a big
// report into the same folder 20 times slower than into a fresh one.
bool write_file(const fs::path& path, std::string_view content, std::string& err) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    err = "cannot write '" + path.string() + "': " + std::strerror(errno);
    return false;
  }
  bool ok = true;
  for (size_t done = 0; ok && done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::ftruncate(fd, static_cast<off_t>(content.size())) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok) err = "error writing '" + path.string() + "': " + std::strerror(errno);
  return ok;
}

// results.report: pages an earlier report left in tests/ that this one did not
// write. Only .html files that carry the generator mark are removed.
void remove_stale_pages(const fs::path& dir, const std::set<fs::path>& written) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path().lexically_normal();
    if (p.extension() != ".html" || written.count(p) || !it->is_regular_file(ec)) continue;
    std::ifstream in(p, std::ios::binary);
    std::string head(1024, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.find(kGeneratorMark) != std::string::npos) stale.push_back(p);
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

}  // namespace

std::string write_html(const std::vector<ResultsFile>& results,
                       const std::map<std::string, Clause>& clauses, const std::string& out_dir,
                       const HtmlOptions& options) {
  if (out_dir.empty()) return "no output folder given";
  std::error_code ec;
  fs::path root(out_dir);
  fs::create_directories(root / "tests", ec);
  if (ec) return "cannot create '" + (root / "tests").string() + "': " + ec.message();
  Model m = build_model(results, options);
  std::string err;
  if (!write_file(root / "style.css", kStyle, err) ||
      !write_file(root / "report.js", kScript, err) ||
      !write_file(root / "index.html", render_index(m), err) ||
      !write_file(root / "coverage.html", render_coverage(m, clauses), err))
    return err;
  for (const auto& [impl, ih] : m.history)
    if (!write_file(root / history_page(impl), render_history(impl, ih.runs), err)) return err;
  // Which row each entry is in, for links between results files.
  std::map<const Entry*, const Row*> row_of;
  if (m.sources.size() > 1)
    for (const Row& r : m.rows)
      for (const Entry* e : r.cells)
        if (e) row_of[e] = &r;
  std::set<fs::path> written;
  for (const Source& src : m.sources)
    for (const Entry& e : src.entries) {
      if (e.page.empty()) continue;  // results.report.pages
      auto it = row_of.find(&e);
      if (!write_file(root / e.page, render_detail(m, e, it == row_of.end() ? nullptr : it->second),
                      err))
        return err;
      written.insert((root / e.page).lexically_normal());
    }
  remove_stale_pages(root / "tests", written);
  return "";
}

}  // namespace simt::reports
