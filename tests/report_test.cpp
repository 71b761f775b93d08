// The static HTML report (spec/results.md, results.report): rendered from the
// fixture results files in tests/data and checked as text: rows and status
// classes, totals, side-by-side columns, the first difference on detail pages,
// clause coverage, escaping, safe file names, and robustness against truncated
// files and records with missing or oddly typed fields.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "html.h"
#include "json.h"
#include "record.h"
#include "results.h"
#include "support.h"

namespace simt {
namespace {

using test::read_all;
using test::write_all;

namespace fs = std::filesystem;
using reports::Clause;
using reports::ResultsFile;

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

ResultsFile load(const std::string& relative) {
  auto r = reports::read_results(test::source_path(relative));
  if (auto* e = std::get_if<std::string>(&r)) {
    ADD_FAILURE() << *e;
    return {};
  }
  return std::get<ResultsFile>(std::move(r));
}

// A small clause table: machine clauses, a tooling clause by its text, and a
// clause of a tooling chapter.
std::map<std::string, Clause> clauses() {
  return {
      {"xlane.readlane", {"crosslane.md", "`readlane sD, vA, L`: sD <- lane L's value"}},
      {"xlane.inactive", {"crosslane.md", "Cross-lane reads never observe inactive lanes"}},
      {"xlane.shfl", {"crosslane.md", "`shfl vD, vA, B`: for every active lane"}},
      {"alu.div.zero", {"alu.md", "`div` raises `div_zero` if B is 0"}},
      {"alu.add", {"alu.md", "`add D, A, B`: D <- (A + B) mod 2^32."}},
      {"bar.arrive", {"barrier.md", "`bar` is executed by the warp as a whole"}},
      {"syntax.lex.comment", {"syntax.md", "A comment starts with `;`"}},
      {"syntax.print.roundtrip", {"syntax.md", "*(tooling)* The printer writes a program"}},
      {"exec.trace.format", {"execution.md", "*(tooling)* With tracing on, each step prints"}},
      {"runner.harness", {"runner.md", "For each configuration the harness decides"}},
      {"results.report", {"results.md", "`simtspec report RESULTS... --out DIR`"}},
  };
}

// Every test renders into its own fresh folder.
class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("simt-report-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // Renders with a page for every configuration (`--pages all`), so that the
  // detail pages of passes can be checked too; render_default() as `simtspec
  // report` does by default.
  void render(const std::vector<ResultsFile>& files,
              const std::map<std::string, Clause>& cl = clauses()) {
    reports::HtmlOptions o;
    o.all_pages = true;
    std::string err = reports::write_html(files, cl, dir_.string(), o);
    ASSERT_EQ(err, "");
  }
  void render_default(const std::vector<ResultsFile>& files, const reports::HtmlOptions& o = {}) {
    std::string err = reports::write_html(files, clauses(), dir_.string(), o);
    ASSERT_EQ(err, "");
  }
  size_t pages() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_ / "tests"))
      n += e.path().extension() == ".html";
    return n;
  }
  std::string page(const std::string& rel) const { return read_all(dir_ / rel); }
  // The index row of `name` ("id" or "id[key]").
  std::string row(const std::string& name) const {
    std::string index = page("index.html");
    size_t at = index.find("<tr data-name=\"" + name + "\"");
    if (at == std::string::npos) return "";
    return index.substr(at, index.find("</tr>", at) - at);
  }
  // The detail page the index links to from the `column`-th status cell of a row.
  std::string detail_of(const std::string& name, size_t column = 0) const {
    std::string r = row(name);
    size_t at = 0;
    for (size_t i = 0; i <= column; ++i) {
      at = r.find("<a href=\"", at);
      if (at == std::string::npos) return "";
      at += 9;
    }
    return page(r.substr(at, r.find('"', at) - at));
  }
  fs::path dir_;
};

TEST_F(Report, WritesTheSiteFiles) {
  render({load("tests/data/results_pass.jsonl")});
  for (const char* f : {"index.html", "coverage.html", "style.css", "report.js"})
    EXPECT_TRUE(fs::is_regular_file(dir_ / f)) << f;
  size_t pages = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "tests"))
    pages += e.path().extension() == ".html";
  EXPECT_EQ(pages, 4u);
  std::string index = page("index.html");
  EXPECT_NE(index.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(index.find("<script src=\"report.js\" defer></script>"), std::string::npos);
  // Nothing is loaded from the network.
  for (const char* f : {"index.html", "coverage.html", "style.css", "report.js"}) {
    std::string text = page(f);
    EXPECT_EQ(text.find("http://"), std::string::npos) << f;
    EXPECT_EQ(text.find("https://"), std::string::npos) << f;
    EXPECT_EQ(text.find("@import"), std::string::npos) << f;
  }
}

// results.report: a rewrite drops the pages of configurations no longer in the
// results, and leaves files the report did not write alone.
TEST_F(Report, RewriteRemovesItsOwnStalePagesOnly) {
  render({load("tests/data/results_fail.jsonl")});
  std::set<std::string> before;
  for (const auto& e : fs::directory_iterator(dir_ / "tests")) before.insert(e.path().filename());
  ASSERT_EQ(before.size(), 7u);
  write_all(dir_ / "tests" / "mine.html", "<html><body>kept</body></html>");
  write_all(dir_ / "tests" / "notes.txt", "kept");
  render({load("tests/data/results_pass.jsonl")});
  std::set<std::string> after;
  for (const auto& e : fs::directory_iterator(dir_ / "tests"))
    if (e.path().extension() == ".html" && e.path().filename() != "mine.html")
      after.insert(e.path().filename());
  EXPECT_EQ(after.size(), 4u);
  // Every page left is linked from the new index.
  std::string index = page("index.html");
  for (const auto& name : after)
    EXPECT_NE(index.find("href=\"tests/" + name + "\""), std::string::npos) << name;
  EXPECT_EQ(page("tests/mine.html"), "<html><body>kept</body></html>");
  EXPECT_EQ(page("tests/notes.txt"), "kept");
}

// results.report.pages: by default only configurations that did not pass (and
// are not unsupported or xfail) get a page; their rows link to it, the others
// show their status as text. A rewrite with --pages all adds the rest, and a
// rewrite by default removes them again.
TEST_F(Report, PagesOnlyForConfigurationsThatDidNotPass) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  render_default({f});
  EXPECT_EQ(pages(), 4u);  // three fail, one error; not the pass, unsupported, xfail
  EXPECT_NE(row("xlane.readlane.values").find("<a href=\"tests/"), std::string::npos);
  EXPECT_NE(row("alu.add.wraps").find("<a href=\"tests/"), std::string::npos);
  for (const char* name :
       {"xlane.readlane.broadcast[wave=8,warps=1]", "bar.arrive.all", "alu.div.zero_lane_known"}) {
    std::string r = row(name);
    ASSERT_NE(r, "") << name;
    EXPECT_EQ(r.find("<a href"), std::string::npos) << r;
  }
  // Every link of the index and the coverage page resolves.
  for (const char* from : {"index.html", "coverage.html"}) {
    std::string text = page(from);
    std::regex link("href=\"(tests/[^\"#]+)");
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it)
      EXPECT_TRUE(fs::exists(dir_ / (*it)[1].str())) << from << ": " << (*it)[1];
  }
  reports::HtmlOptions all;
  all.all_pages = true;
  render_default({f}, all);
  EXPECT_EQ(pages(), 7u);
  EXPECT_NE(row("alu.div.zero_lane_known").find("<a href=\"tests/"), std::string::npos);
  render_default({f});
  EXPECT_EQ(pages(), 4u);
}

// results.test: results.jsonl holds a test's own fields once, in a test line
// before its first result, and a reader joins them back: the records read are
// the records written. A second test with the same id but other fields gets a
// test line of its own.
TEST_F(Report, TestFieldsAreWrittenOncePerTestAndReadBack) {
  ResultsFile base = load("tests/data/results_fail.jsonl");
  fs::create_directories(dir_);
  const fs::path path = dir_ / "results.jsonl";
  std::vector<reports::Record> written;
  {
    reports::JsonlWriter w;
    std::string err;
    ASSERT_TRUE(w.open(path.string(), err)) << err;
    w.write(base.header);
    for (int i = 0; i < 3; ++i) {
      reports::Record r = base.records[0];
      r.config_key = "wave=" + std::to_string(8 << i);
      r.source = std::string(5000, 'x');
      written.push_back(r);
      w.write(r);
    }
    reports::Record other = base.records[0];
    other.file = "elsewhere.simt";  // the same id in another file
    written.push_back(other);
    w.write(other);
    json::Value sum;
    sum["summary"] = json::Object{};
    w.write(sum);
  }
  std::string text = read_all(path);
  EXPECT_EQ(count(text, "{\"test\":"), 2u) << text;
  EXPECT_EQ(count(text, std::string(5000, 'x')), 1u);
  auto r = reports::read_results(path.string());
  ASSERT_TRUE(std::holds_alternative<ResultsFile>(r)) << std::get<std::string>(r);
  const ResultsFile& back = std::get<ResultsFile>(r);
  ASSERT_EQ(back.records.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i)
    EXPECT_EQ(back.records[i], written[i]) << i << "\n"
                                           << json::dump(reports::to_json(back.records[i]));
}

// results.stream: results.json is no longer written, but a document an earlier
// version wrote (the header's fields, "results" and "summary") still reads.
TEST_F(Report, AnOldJsonDocumentStillReads) {
  fs::create_directories(dir_);
  write_all(dir_ / "results.json",
            R"({"schema": "simtspec-results/1", "runner": {"name": "old", "version": "1"},
                "results": [{"id": "a.b", "config_key": "wave=8", "status": "fail", "message": "m",
                             "source": "; src"}],
                "summary": {"total": 1}})");
  auto r = reports::read_results((dir_ / "results.json").string());
  ASSERT_TRUE(std::holds_alternative<ResultsFile>(r)) << std::get<std::string>(r);
  const ResultsFile& f = std::get<ResultsFile>(r);
  EXPECT_EQ(f.runner_name(), "old");
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_EQ(f.records[0].status, reports::Status::fail);
  EXPECT_EQ(f.records[0].source, "; src");
  EXPECT_TRUE(f.complete());
}

TEST_F(Report, IndexHasOneRowPerRecordWithItsStatusClass) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  ASSERT_EQ(f.records.size(), 7u);
  render({f});
  std::string index = page("index.html");
  EXPECT_EQ(count(index, "<tr data-name="), 7u);
  EXPECT_NE(row("xlane.readlane.broadcast[wave=8,warps=2]").find("class=\"st st-fail\""),
            std::string::npos);
  EXPECT_NE(row("xlane.readlane.broadcast[wave=8,warps=1]").find("class=\"st st-pass\""),
            std::string::npos);
  EXPECT_NE(row("alu.add.wraps").find("class=\"st st-error\""), std::string::npos);
  EXPECT_NE(row("bar.arrive.all[wave=16]").find("class=\"st st-unsupported\""), std::string::npos);
  EXPECT_NE(row("alu.div.zero_lane_known").find("class=\"st st-xfail\""), std::string::npos);
  // results.report: rows with fail, error or xpass first; each group sorted by id,
  // then configuration key (numbers by value).
  std::vector<std::string> order = {"alu.add.wraps",
                                    "alu.div.zero_lane",
                                    "xlane.readlane.broadcast[wave=8,warps=2]",
                                    "xlane.readlane.values",
                                    "alu.div.zero_lane_known",
                                    "bar.arrive.all[wave=16]",
                                    "xlane.readlane.broadcast[wave=8,warps=1]"};
  EXPECT_NE(row("xlane.readlane.values").find("class=\"failing\""), std::string::npos);
  EXPECT_EQ(row("alu.div.zero_lane_known").find("class=\"failing\""), std::string::npos);
  size_t last = 0;
  for (const auto& name : order) {
    size_t at = index.find("<tr data-name=\"" + name + "\"");
    ASSERT_NE(at, std::string::npos) << name;
    EXPECT_GT(at, last) << name;
    last = at;
  }
}

// results.report: the index's clause x status table lists every cited clause with
// its counts per results file, clauses with failing results first (most first).
TEST_F(Report, IndexClauseStatusView) {
  render({load("tests/data/results_fail.jsonl")});
  std::string index = page("index.html");
  size_t table = index.find("<h2 id=\"clauses\">Clauses &times; status</h2>");
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(table, index.find("<h2 id=\"matrix\">"));
  std::string t = index.substr(table, index.find("</details>", table) - table);
  EXPECT_NE(t.find("<details class=\"clauses\" open>"), std::string::npos);
  auto clause_row = [&](const std::string& id) {
    size_t at = t.find("<a href=\"coverage.html#c-" + id + "\">" + id + "</a>");
    if (at == std::string::npos) return std::string();
    size_t start = t.rfind("<tr", at);
    return t.substr(start, t.find("</tr>", at) - start);
  };
  // xlane.readlane: 2 fail and 1 pass among the records citing it.
  std::string rl = clause_row("xlane.readlane");
  ASSERT_FALSE(rl.empty()) << t;
  EXPECT_NE(rl.find("class=\"failing\""), std::string::npos);
  // results.report.failures: the fail count links to the first failing row citing it.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rl, m,
                                std::regex("<td class=\"n st-pass\">1</td><td class=\"n "
                                           "st-fail\"><a href=\"#([^\"]+)\">2</a></td>")))
      << rl;
  EXPECT_NE(row("xlane.readlane.broadcast[wave=8,warps=2]").find("id=\"" + m[1].str() + "\""),
            std::string::npos)
      << m[1];
  // Failing clauses come before clauses without failures.
  size_t worst = t.find("coverage.html#c-xlane.readlane\"");
  size_t fine = t.find("coverage.html#c-bar.arrive\"");
  ASSERT_NE(fine, std::string::npos);
  EXPECT_LT(worst, fine);
  EXPECT_EQ(clause_row("bar.arrive").find("failing"), std::string::npos);
}

TEST_F(Report, TotalsMatchTheRecords) {
  render({load("tests/data/results_fail.jsonl")});
  std::string index = page("index.html");
  auto total = [&](const std::string& status) {
    std::smatch m;
    std::regex re("data-total=\"" + status + "\">(?:<a href=\"#[^\"]*\"[^>]*>)?([^<]*)<");
    return std::regex_search(index, m, re) ? m[1].str() : std::string("?");
  };
  EXPECT_EQ(total("pass"), "1");
  EXPECT_EQ(total("fail"), "3");
  EXPECT_EQ(total("error"), "1");
  EXPECT_EQ(total("unsupported"), "1");
  EXPECT_EQ(total("xfail"), "1");
  EXPECT_EQ(total("xpass"), "0");
  EXPECT_EQ(total("total"), "7");
  // results.report.failures: the fail total goes to the first failing row with a
  // fail (alu.add.wraps, an error, sorts before it), the error total to that row.
  auto link = [&](const std::string& status) {
    std::smatch m;
    std::regex re("data-total=\"" + status + "\"><a href=\"#([^\"]*)\"");
    return std::regex_search(index, m, re) ? m[1].str() : std::string("?");
  };
  EXPECT_NE(row("alu.div.zero_lane").find("id=\"" + link("fail") + "\""), std::string::npos)
      << link("fail");
  EXPECT_NE(row("alu.add.wraps").find("id=\"" + link("error") + "\""), std::string::npos)
      << link("error");
  EXPECT_EQ(link("unsupported"), "status=unsupported");
  EXPECT_EQ(total("rate"), "16.7%");  // 1 pass of 6 run
  EXPECT_NE(index.find("faulty-cmp 0.3"), std::string::npos);
  EXPECT_NE(index.find("fixture-host"), std::string::npos);
  EXPECT_NE(index.find("2026-11-22T10:00:00Z"), std::string::npos);
}

TEST_F(Report, FeatureStatusMatrixCountsPerFeature) {
  render({load("tests/data/results_fail.jsonl")});
  std::string index = page("index.html");
  size_t at = index.find("<tr><th>xlane</th>");
  ASSERT_NE(at, std::string::npos);
  std::string xlane = index.substr(at, index.find("</tr>", at) - at);
  // pass, fail, unsupported, error, xfail, xpass
  EXPECT_NE(
      xlane.find(
          "<td class=\"n st-pass\">1</td><td class=\"n st-fail\">2</td><td class=\"n\">0</td>"),
      std::string::npos)
      << xlane;
}

TEST_F(Report, SeveralResultsFilesRenderSideBySide) {
  render({load("tests/data/results_pass.jsonl"), load("tests/data/results_fail.jsonl")});
  std::string index = page("index.html");
  EXPECT_NE(index.find("<th>reference 0.1.0</th><th>faulty-cmp 0.3</th>"), std::string::npos);
  // 4 + 7 records, 3 of them in both files.
  EXPECT_EQ(count(index, "<tr data-name="), 8u);
  std::string both = row("xlane.readlane.broadcast[wave=8,warps=2]");
  size_t pass = both.find("st st-pass"), fail = both.find("st st-fail");
  ASSERT_NE(pass, std::string::npos);
  ASSERT_NE(fail, std::string::npos);
  EXPECT_LT(pass, fail);  // the columns keep the order of the files
  EXPECT_NE(both.find("data-status=\"pass fail\""), std::string::npos);
  // Only in the second file: the first column says so.
  std::string only = row("alu.add.wraps");
  EXPECT_LT(only.find("st st-missing"), only.find("st st-error"));
  std::string only_first = row("syntax.comment.markup");
  EXPECT_LT(only_first.find("st st-pass"), only_first.find("st st-missing"));
  // Each file gets its own detail page, linking to the other.
  std::string a = detail_of("xlane.readlane.broadcast[wave=8,warps=2]", 0);
  std::string b = detail_of("xlane.readlane.broadcast[wave=8,warps=2]", 1);
  EXPECT_NE(a.find("on <strong>reference 0.1.0</strong>"), std::string::npos);
  EXPECT_NE(b.find("on <strong>faulty-cmp 0.3</strong>"), std::string::npos);
  EXPECT_NE(a.find("Other results files"), std::string::npos);
}

TEST_F(Report, SameRunnerTwiceGetsDistinctColumns) {
  ResultsFile f = load("tests/data/results_pass.jsonl");
  render({f, f});
  std::string index = page("index.html");
  EXPECT_NE(index.find("<th>reference 0.1.0 #1</th><th>reference 0.1.0 #2</th>"),
            std::string::npos);
  EXPECT_EQ(count(index, "<tr data-name="), 4u);
  size_t pages = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "tests"))
    pages += e.path().extension() == ".html";
  EXPECT_EQ(pages, 8u);
}

TEST_F(Report, FailingBufferDetailHighlightsTheElementAndItsLane) {
  render({load("tests/data/results_fail.jsonl")});
  std::string d = detail_of("xlane.readlane.broadcast[wave=8,warps=2]");
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d.find("<tr><th>matrix entry</th><td><code>wave=8,warps=2</code></td></tr>"),
            std::string::npos);
  // Element 13 = lane 5 of warp 1 at wave 8: the only row marked, with an id to link to.
  EXPECT_EQ(count(d, "id=\"first-diff\""), 1u);
  EXPECT_NE(
      d.find("<tr id=\"first-diff\" class=\"diff\"><td>13</td><td class=\"hl\">5</td>"
             "<td class=\"hl\">1</td><td>20</td><td>30</td><td class=\"mark\">&ne;</td></tr>"),
      std::string::npos);
  EXPECT_NE(d.find("<a href=\"#first-diff\">element 13</a>"), std::string::npos);
  EXPECT_NE(d.find("lane <span class=\"hl\">5</span> of warp <span class=\"hl\">1</span>"),
            std::string::npos);
  // Other elements are plain rows.
  EXPECT_NE(
      d.find("<tr><td>12</td><td>4</td><td>1</td><td></td><td>4</td><td class=\"mark\"></td></tr>"),
      std::string::npos);
  // The outcome row of the buffer is highlighted, the status row is not.
  EXPECT_NE(d.find("<tr class=\"diff\"><th>buffers.out.values</th>"), std::string::npos);
  EXPECT_NE(d.find("<tr><th>status</th>"), std::string::npos);
  // Traces of the failing run, their first difference marked; the reproduce command.
  EXPECT_NE(d.find("<span class=\"diff\" id=\"trace-diff\">#5 w1 pc=1"), std::string::npos);
  // Trace lines are named as such (not source lines), with their step.
  EXPECT_NE(d.find(">trace line 6</a> (step #5); the source line of each step"), std::string::npos);
  EXPECT_NE(d.find("reference trace (6 lines)"), std::string::npos);
  EXPECT_NE(d.find("<code class=\"reproduce\" id=\"reproduce-cmd\">simtspec test "
                   "suites/xlane/readlane.simt --runner f.toml"),
            std::string::npos);
  // results.report.failures: the command with its copy button (shown by the script)
  // near the top, before the configuration and the source.
  EXPECT_NE(d.find("<button type=\"button\" class=\"copy\" data-copy=\"reproduce-cmd\" hidden>"),
            std::string::npos);
  EXPECT_LT(d.find("id=\"reproduce\""), d.find("<table class=\"facts\">"));
  EXPECT_LT(d.find("id=\"reproduce\""), d.find("id=\"source\""));
  // Clauses link to the coverage page.
  EXPECT_NE(d.find("<a href=\"../coverage.html#c-xlane.readlane\">xlane.readlane</a>"),
            std::string::npos);
  EXPECT_NE(d.find("<link rel=\"stylesheet\" href=\"../style.css\">"), std::string::npos);
}

// results.record `trace_error`: the detail page says why the runner's trace is missing.
TEST_F(Report, TraceErrorIsShown) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  for (auto& r : f.records)
    if (r.id == "xlane.readlane.values") {
      r.trace_error = "the re-run with trace = true failed: exited with signal 11";
      r.trace.clear();
    }
  render({f});
  std::string d = detail_of("xlane.readlane.values");
  EXPECT_NE(d.find("<p class=\"warn trace-error\">No runner trace: the re-run with trace = true "
                   "failed: exited with signal 11</p>"),
            std::string::npos)
      << d;
}

// results.report: a test's host script (trap.host.toml) and the trap handler's
// entries and exits in a trace are shown on the configuration's page.
TEST_F(Report, HostScriptAndHandlerEntriesAreShown) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  for (auto& r : f.records)
    if (r.id == "xlane.readlane.values") {
      r.host = "[[host]]\nstep = 4\naction = \"interrupt\"\ncore = \"all\"\ncode = 7\n";
      r.reference_trace = {"#3 w0 pc=3 exec=0xff add v1, v1, 1  ; line 9",
                           "#4 core 0 enters its handler at pc=8: interrupt code 7, raised by w0",
                           "#9 w0 leaves the handler of core 0: pc=4 exec=0xff"};
    }
  render({f});
  std::string d = detail_of("xlane.readlane.values");
  EXPECT_NE(d.find("<h2 id=\"host\">Host script</h2>"), std::string::npos) << d;
  EXPECT_NE(d.find("action = &quot;interrupt&quot;"), std::string::npos) << d;
  EXPECT_NE(d.find("<span class=\"trap\">#4 core 0 enters its handler at pc=8: interrupt code 7"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("<span class=\"trap\">#9 w0 leaves the handler of core 0"), std::string::npos)
      << d;
  EXPECT_EQ(count(d, "<span class=\"trap\">"), 2u) << d;
  // A page without a host script has no such section.
  ResultsFile g = load("tests/data/results_fail.jsonl");
  render({g});
  EXPECT_EQ(detail_of("xlane.readlane.values").find("id=\"host\""), std::string::npos);
}

TEST_F(Report, BufferWithExpectedValuesShowsEveryMismatch) {
  render({load("tests/data/results_fail.jsonl")});
  std::string d = detail_of("xlane.readlane.values");
  EXPECT_NE(
      d.find("<tr id=\"first-diff\" class=\"diff\"><td>3</td><td class=\"hl\">3</td>"
             "<td class=\"hl\">0</td><td>10</td><td>20</td><td class=\"mark\">&ne;</td></tr>"),
      std::string::npos);
  EXPECT_NE(
      d.find("<tr><td>2</td><td>2</td><td>0</td><td>2</td><td>2</td><td class=\"mark\"></td></tr>"),
      std::string::npos);
  // results.report.failures: the differing element is marked, the others are not.
  EXPECT_EQ(count(d, "<td class=\"mark\">&ne;</td>"), 1u) << d;
}

TEST_F(Report, FieldDifferenceIsHighlighted) {
  render({load("tests/data/results_fail.jsonl")});
  std::string d = detail_of("alu.div.zero_lane");
  EXPECT_NE(d.find("<tr class=\"diff\"><th>event.lane</th><td>4</td><td>3</td></tr>"),
            std::string::npos);
  EXPECT_EQ(count(d, "<tr class=\"diff\">"), 1u);
  EXPECT_NE(d.find("field <code class=\"hl\">event.lane</code>: expected <code>4</code>, actual "
                   "<code>3</code>"),
            std::string::npos);
}

TEST_F(Report, ErrorDetailShowsStandardError) {
  render({load("tests/data/results_fail.jsonl")});
  std::string d = detail_of("alu.add.wraps");
  EXPECT_NE(d.find("<pre class=\"stderr\">faulty: assertion failed: &lt;stack&gt; &amp; "
                   "&quot;heap&quot;\nAborted\n</pre>"),
            std::string::npos);
  EXPECT_NE(d.find("the process died (signal 6) before answering"), std::string::npos);
  // results.report.failures: standard error comes before the source.
  ASSERT_NE(d.find("id=\"source\""), std::string::npos);
  EXPECT_LT(d.find("id=\"stderr\""), d.find("id=\"source\""));
}

// results.report.failures: a result's message is text in its cell, cut at 200
// bytes on a character boundary; a pass shows none.
TEST_F(Report, RowsShowTheirMessageAsText) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  reports::Record& r = f.records[0];
  r.message = std::string(199, 'm') + "\xc3\xa9 and more";  // é across byte 200
  render_default({f});
  std::string cell = row("xlane.readlane.values");
  EXPECT_NE(cell.find("<div class=\"msg\">"), std::string::npos) << cell;
  std::string first = row(r.id + (r.config_key.empty() ? "" : "[" + r.config_key + "]"));
  EXPECT_NE(first.find("<div class=\"msg\">" + std::string(199, 'm') + "\xe2\x80\xa6</div>"),
            std::string::npos)
      << first;
  EXPECT_EQ(row("xlane.readlane.broadcast[wave=8,warps=1]").find("class=\"msg\""),
            std::string::npos);
  EXPECT_NE(row("bar.arrive.all").find("class=\"msg\""), std::string::npos);
}

// results.report.passes: a test none of whose results has a page is one row with
// its configurations, each status counted and its distinct messages; a test with
// a page somewhere keeps a row per configuration.
TEST_F(Report, TestsWithoutPagesAreOneRow) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  reports::Record u = f.records[0];
  u.id = "many.unsupported";
  for (int i = 0; i < 6; ++i) {
    u.config_key = "wave=" + std::to_string(4 << i);
    bool pass = i < 2;
    u.status = pass ? reports::Status::pass : reports::Status::unsupported;
    u.status_name = pass ? "pass" : "unsupported";
    u.message = pass ? "" : "the runner lacks wave:" + std::to_string(4 << i % 4);
    f.records.push_back(u);
  }
  render_default({f});
  std::string r = row("many.unsupported");
  EXPECT_NE(r.find("class=\"summary\" data-n=\"6\""), std::string::npos) << r;
  EXPECT_NE(r.find("<summary>6 configurations</summary>wave=4, wave=8, wave=16, wave=32, "
                   "wave=64, wave=128</details>"),
            std::string::npos)
      << r;
  // wave=16 and wave=64 share a message: three distinct ones.
  EXPECT_NE(r.find("<td class=\"st st-mixed\">pass &times;2 unsupported &times;4<div "
                   "class=\"msg\">the runner lacks wave:16</div><div class=\"msg\">the runner "
                   "lacks wave:32</div><div class=\"msg\">the runner lacks wave:4</div></td>"),
            std::string::npos)
      << r;
  EXPECT_EQ(count(page("index.html"), "data-name=\"many.unsupported"), 1u);
  EXPECT_NE(r.find("data-status=\"pass unsupported\""), std::string::npos);
  // xlane.readlane.broadcast has a failing configuration: a row each.
  EXPECT_NE(row("xlane.readlane.broadcast[wave=8,warps=1]"), "");
  // With every page, every configuration has its row.
  reports::HtmlOptions all;
  all.all_pages = true;
  render_default({f}, all);
  EXPECT_EQ(count(page("index.html"), "data-name=\"many.unsupported["), 6u);
}

TEST_F(Report, CoverageMarksUncoveredMachineClausesOnly) {
  render({load("tests/data/results_pass.jsonl"), load("tests/data/results_fail.jsonl")});
  std::string c = page("coverage.html");
  auto clause_row = [&](const std::string& id) {
    size_t at = c.find("<tr id=\"c-" + id + "\"");
    return at == std::string::npos ? std::string() : c.substr(at, c.find("</tr>", at) - at);
  };
  // Cited by no test: xlane.shfl (machine), the tooling ones are not marked.
  EXPECT_NE(clause_row("xlane.shfl").find("UNCOVERED"), std::string::npos);
  for (const char* t : {"exec.trace.format", "runner.harness", "results.report"}) {
    std::string r = clause_row(t);
    ASSERT_FALSE(r.empty()) << t;
    EXPECT_EQ(r.find("UNCOVERED"), std::string::npos) << t;
    EXPECT_NE(r.find("checked by unit tests"), std::string::npos) << t;
  }
  EXPECT_NE(
      c.find("Uncovered machine clauses: <strong id=\"uncovered-count\" class=\"bad\">1</strong>"),
      std::string::npos);
  // Cited clauses list their tests and the status counts per results file.
  std::string rl = clause_row("xlane.readlane");
  EXPECT_NE(rl.find(">xlane.readlane.broadcast</a>"), std::string::npos);
  EXPECT_NE(rl.find(">xlane.readlane.values</a>"), std::string::npos);
  EXPECT_NE(rl.find("<span class=\"st st-pass\">3 pass</span>"), std::string::npos);  // reference
  EXPECT_NE(rl.find("<span class=\"st st-fail\">2 fail</span>"), std::string::npos);  // faulty
  // A tooling clause a test cites counts as covered.
  EXPECT_NE(clause_row("syntax.print.roundtrip").find(">covered by a run<"), std::string::npos);
  // Grouped by chapter.
  EXPECT_NE(c.find("<h2 id=\"ch-crosslane.md\">crosslane.md</h2>"), std::string::npos);
  // Clauses cited by a test but absent from the spec are listed separately.
  EXPECT_EQ(c.find("Cited clauses not in the spec"), std::string::npos);
  auto cl = clauses();
  cl.erase("bar.arrive");
  render({load("tests/data/results_fail.jsonl")}, cl);
  c = page("coverage.html");
  EXPECT_NE(c.find("Cited clauses not in the spec"), std::string::npos);
  EXPECT_NE(c.find("<tr id=\"c-bar.arrive\" class=\"unknown\">"), std::string::npos);
}

// results.report: a clause cited only by tests that expect a rejection is "covered
// by a rejection only", listed as such, and its tests are marked; one test whose
// program runs makes it "covered by a run".
TEST_F(Report, CoverageTellsRunsFromRejections) {
  ResultsFile f = load("tests/data/results_pass.jsonl");
  auto add = [&](const std::string& id, const std::string& status, const std::string& clause) {
    reports::Record rec = f.records.at(0);
    rec.id = id;
    rec.config_key = "";
    rec.clauses = {clause};
    json::Value x;
    x["status"] = status;
    rec.expected = x;
    f.records.push_back(rec);
  };
  add("valid.pop.rejected", "rejected", "alu.div.zero");
  add("bar.rejected", "rejected", "bar.arrive");
  add("bar.runs", "completed", "bar.arrive");
  render({f});
  std::string c = page("coverage.html");
  auto clause_row = [&](const std::string& id) {
    size_t at = c.find("<tr id=\"c-" + id + "\"");
    return at == std::string::npos ? std::string() : c.substr(at, c.find("</tr>", at) - at);
  };
  std::string div = clause_row("alu.div.zero");
  EXPECT_NE(div.find("class=\"rejection\""), std::string::npos) << div;
  EXPECT_NE(div.find("covered by a rejection only"), std::string::npos) << div;
  EXPECT_NE(div.find(">valid.pop.rejected (rejected)</a>"), std::string::npos) << div;
  std::string bar = clause_row("bar.arrive");
  EXPECT_NE(bar.find("covered by a run"), std::string::npos) << bar;
  EXPECT_NE(bar.find(">bar.rejected (rejected)</a>"), std::string::npos) << bar;
  EXPECT_NE(bar.find(">bar.runs</a>"), std::string::npos) << bar;
  EXPECT_NE(c.find("<span id=\"rejection-count\">1</span> only by rejections"), std::string::npos);
  EXPECT_NE(c.find("<a class=\"rejection\" href=\"#c-alu.div.zero\">alu.div.zero</a>"),
            std::string::npos);
}

TEST_F(Report, AllCoveredReportsZero) {
  std::map<std::string, Clause> cl = {{"xlane.readlane", {"crosslane.md", "readlane"}},
                                      {"runner.firstdiff", {"runner.md", "first difference"}}};
  render({load("tests/data/results_fail.jsonl")}, cl);
  EXPECT_NE(page("coverage.html").find("<strong id=\"uncovered-count\" class=\"ok\">0</strong>"),
            std::string::npos);
}

TEST_F(Report, TextIsEscapedEverywhere) {
  render({load("tests/data/results_pass.jsonl")});
  std::string d = detail_of("syntax.comment.markup");
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.find("<script>alert"), std::string::npos);
  EXPECT_EQ(d.find("<b>not bold"), std::string::npos);
  EXPECT_NE(d.find("; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"),
            std::string::npos);
  EXPECT_NE(d.find("&lt;/pre&gt;&lt;b&gt;not bold&lt;/b&gt;"), std::string::npos);
  // Line numbers.
  EXPECT_NE(d.find("<span id=\"L3\"><span class=\"ln\">3</span>; &lt;script&gt;"),
            std::string::npos);
  EXPECT_NE(d.find("Comments may hold &lt;script&gt; &amp; other markup"), std::string::npos);
  // The expectation's `each` expression (with < and &&) in the outcome table.
  EXPECT_NE(d.find("i &lt; 1 &amp;&amp; 1 &gt; 0 ? 1 : 0"), std::string::npos);
  // ...and in the raw expectation JSON.
  EXPECT_NE(
      d.find("<pre class=\"json\">{&quot;status&quot;:&quot;completed&quot;,&quot;buffers&quot;:"
             "{&quot;out&quot;:{&quot;each&quot;:&quot;i &lt; 1 &amp;&amp; 1 &gt; 0 ? 1 : "
             "0&quot;}}}</pre>"),
      std::string::npos);
  std::string index = page("index.html");
  EXPECT_EQ(index.find("<script>"), std::string::npos);
  EXPECT_NE(index.find("title=\"Comments may hold &lt;script&gt; &amp; other markup\""),
            std::string::npos);
}

TEST_F(Report, InvalidUtf8AndControlCharactersAreReplaced) {
  ResultsFile f = load("tests/data/results_pass.jsonl");
  json::Value rec;
  rec["id"] = "odd.bytes";
  rec["status"] = "error";
  rec["stderr"] = std::string("bad \xff\xfe byte, nul \x01 here, ok \xc3\xa9\n");
  f.records = {reports::from_json(rec)};
  render({f});
  std::string d = detail_of("odd.bytes");
  EXPECT_NE(d.find("bad \xef\xbf\xbd\xef\xbf\xbd byte, nul \xef\xbf\xbd here, ok \xc3\xa9\n"),
            std::string::npos);
}

TEST_F(Report, FileNamesAreSafeAndDistinct) {
  ResultsFile f = load("tests/data/results_pass.jsonl");
  f.records.clear();
  const std::vector<std::pair<std::string, std::string>> names = {
      {"../../escape", ""},
      {"a/b", "wave=8"},
      {"a_b", "wave=8"},
      {"A_B", "wave=8"},
      {"a b<c>", "policy=x y"},
      {".hidden", ""},
      {"", ""},
      {"dup", "k"},
      {"dup", "k"},
      {std::string(400, 'x'), std::string(300, 'y')},
      {"con", "nul"}};
  for (const auto& [id, key] : names) {
    json::Value r;
    r["id"] = id;
    r["config_key"] = key;
    r["status"] = "pass";
    f.records.push_back(reports::from_json(r));
  }
  render({f});
  std::set<std::string> files;
  std::regex safe("[a-z0-9_][a-z0-9._-]{0,200}\\.html");
  for (const auto& e : fs::directory_iterator(dir_ / "tests")) {
    std::string n = e.path().filename().string();
    EXPECT_TRUE(std::regex_match(n, safe)) << n;
    files.insert(n);
  }
  EXPECT_EQ(files.size(), names.size());  // one page per record, none overwritten
  // Nothing was written outside the output folder.
  EXPECT_FALSE(fs::exists(dir_.parent_path() / "escape.html"));
  EXPECT_FALSE(fs::exists(dir_ / ".." / ".." / "escape.html"));
  // Every link from the index resolves to a written page.
  std::string index = page("index.html");
  std::regex link("href=\"(tests/[^\"]+)\"");
  size_t links = 0;
  for (std::sregex_iterator it(index.begin(), index.end(), link), end; it != end; ++it, ++links)
    EXPECT_TRUE(fs::is_regular_file(dir_ / (*it)[1].str())) << (*it)[1].str();
  EXPECT_EQ(links, names.size());
}

TEST_F(Report, TruncatedResultsFileStillRenders) {
  std::string text = read_all(test::source_path("tests/data/results_fail.jsonl"));
  // Cut the last record in the middle: no summary, an incomplete last line.
  size_t summary = text.rfind("{\"summary\"");
  size_t last = text.rfind('\n', summary - 2) + 1;
  std::string cut = text.substr(0, last + (summary - last) / 2);
  fs::create_directories(dir_);
  write_all(dir_ / "cut.jsonl", cut);
  auto r = reports::read_results((dir_ / "cut.jsonl").string());
  ASSERT_TRUE(std::holds_alternative<ResultsFile>(r)) << std::get<std::string>(r);
  ResultsFile f = std::get<ResultsFile>(std::move(r));
  EXPECT_FALSE(f.complete());
  EXPECT_EQ(f.records.size(), 6u);
  render({f});
  std::string index = page("index.html");
  EXPECT_EQ(count(index, "<tr data-name="), 6u);
  EXPECT_NE(index.find("interrupted"), std::string::npos);
}

TEST_F(Report, MissingOrOddlyTypedFieldsDoNotCrash) {
  ResultsFile f;
  f.path = "odd.jsonl";
  f.header = json::Value(json::Array{1, 2});  // not even an object
  auto parse = [](const char* text) { return std::get<json::Value>(json::parse(text)); };
  const std::vector<json::Value> raw = {
      json::Value(),
      parse("{}"),
      parse("[1,2,3]"),
      parse("{\"id\": 5, \"status\": 7}"),
      parse("{\"id\": \"only.id\"}"),
      parse(
          R"({"id": "odd.types", "status": "fail", "config_key": ["x"], "title": {}, "clauses": "alu.add",
                "features": [1, "alu", null], "config": [8], "expected": "completed", "actual": 42,
                "reference": [], "first_diff": "buffer", "source": 12, "trace": "line",
                "reference_trace": [1, {"a": 2}], "stderr": false, "checks": "many", "duration_ms": "slow",
                "reproduce": null, "message": ["no"]})"),
      parse(
          R"({"id": "odd.diff", "status": "fail", "config": {"wave": 0, "warps": -3, "workgroups": 2},
                "first_diff": {"kind": "buffer", "buffer": "out", "index": "13", "lane": "x", "warp": null},
                "expected": {"buffers": {"out": {"values": "not an array"}, "v": 3}},
                "actual": {"status": "completed", "buffers": {"out": {"type": 3, "values": [1, "two", null, {}]},
                           "w": {"values": 1}, "x": []}}})"),
      parse(
          R"({"id": "odd.index", "status": "fail", "config": {"wave": 4, "warps": 1, "workgroups": 3},
                "first_diff": {"kind": "buffer", "buffer": "out", "index": 99999999999, "lane": 1, "warp": 2},
                "actual": {"buffers": {"out": {"type": "u32", "values": [1, 2, 3]}}}})"),
      parse(
          R"({"id": "odd.field", "status": "fail", "first_diff": {"kind": "field", "field": "buffer.out.length"},
                "expected": {"status": "completed", "buffers": {"out": {"values": [1]}}},
                "actual": {"status": "completed", "buffers": {}}})"),
      parse(
          R"({"id": "odd.field2", "status": "fail", "first_diff": {"kind": "field", "field": "buffer",
                "expected": {"x": 1}, "actual": null}})"),
  };
  for (const json::Value& v : raw) f.records.push_back(reports::from_json(v));
  f.summary = json::Value("done");
  render({f});
  std::string index = page("index.html");
  EXPECT_EQ(count(index, "<tr data-name="), f.records.size());
  EXPECT_NE(index.find("(no id)"), std::string::npos);
  EXPECT_NE(row("odd.diff").find("st st-fail"), std::string::npos);
  EXPECT_NE(row("only.id").find("st st-other"), std::string::npos);  // no status
  std::string d = detail_of("odd.types");
  EXPECT_NE(d.find("</html>"), std::string::npos);
  EXPECT_NE(detail_of("odd.index").find("</html>"), std::string::npos);
  EXPECT_NE(detail_of("odd.field").find("</html>"), std::string::npos);
  EXPECT_NE(detail_of("odd.field2").find("</html>"), std::string::npos);
  // Also with no results files at all, and with no clauses.
  render({}, {});
  EXPECT_NE(page("index.html").find("No results files"), std::string::npos);
}

// Every value at every path (up to a depth) of `v`, replaced in turn by each of
// `odd`: one mutated copy per replacement.
void mutations(const json::Value& v, const std::vector<json::Value>& odd, int depth,
               const std::function<void(json::Value)>& emit,
               const std::function<json::Value(json::Value)>& wrap) {
  for (const auto& o : odd) emit(wrap(o));
  if (depth == 0) return;
  if (v.is_object()) {
    const auto& obj = v.as_object();
    for (size_t i = 0; i < obj.size(); ++i)
      mutations(obj[i].second, odd, depth - 1, emit, [&, i](json::Value x) {
        json::Value copy = v;
        copy.as_object()[i].second = std::move(x);
        return wrap(std::move(copy));
      });
  } else if (v.is_array()) {
    const auto& arr = v.as_array();
    for (size_t i = 0; i < arr.size() && i < 2; ++i)
      mutations(arr[i], odd, depth - 1, emit, [&, i](json::Value x) {
        json::Value copy = v;
        copy.as_array()[i] = std::move(x);
        return wrap(std::move(copy));
      });
  }
}

TEST_F(Report, EveryFieldOddlyTypedStillRenders) {
  ResultsFile f = load("tests/data/results_fail.jsonl");
  std::vector<json::Value> odd = {json::Value(),
                                  json::Value(-1),
                                  json::Value(99999999999),
                                  json::Value(2.5),
                                  json::Value("<x>"),
                                  json::Value(json::Array{}),
                                  json::Value(json::Object{}),
                                  json::Value(true)};
  std::vector<reports::Record> records;
  for (const auto& rec : f.records)
    mutations(
        reports::to_json(rec), odd, 4,
        [&](json::Value m) { records.push_back(reports::from_json(m)); },
        [](json::Value x) { return x; });
  ASSERT_GT(records.size(), 1000u);
  f.records = std::move(records);
  render({f});
  EXPECT_EQ(count(page("index.html"), "<tr data-name="), f.records.size());
}

TEST_F(Report, LargeBufferShowsAWindowAroundTheDifference) {
  ResultsFile f = load("tests/data/results_pass.jsonl");
  json::Value rec;
  rec["id"] = "big.buffer";
  rec["status"] = "fail";
  rec["config"]["wave"] = 64;
  json::Array vals;
  for (int i = 0; i < 100000; ++i) vals.emplace_back(i);
  rec["actual"]["buffers"]["out"]["type"] = "u32";
  rec["actual"]["buffers"]["out"]["values"] = vals;
  rec["first_diff"] = std::get<json::Value>(json::parse(
      R"({"kind": "buffer", "buffer": "out", "index": 70000, "expected": 1, "actual": 70000, "lane": 48, "warp": 1093})"));
  f.records = {reports::from_json(rec)};
  render({f});
  std::string d = detail_of("big.buffer");
  EXPECT_NE(d.find("<tr id=\"first-diff\" class=\"diff\"><td>70000</td><td class=\"hl\">48</td>"
                   "<td class=\"hl\">1093</td>"),
            std::string::npos);
  EXPECT_NE(d.find("elements 0 to 69743 not shown"), std::string::npos);
  EXPECT_LT(d.size(), 200000u);
}

TEST_F(Report, UnwritableFolderIsAnError) {
  fs::create_directories(dir_);
  write_all(dir_ / "file", "x");
  std::string err = reports::write_html({}, {}, (dir_ / "file").string());
  EXPECT_NE(err, "");
  EXPECT_NE(reports::write_html({}, {}, ""), "");
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// Thousands of configurations render quickly. The bound is on user CPU time
// (generous, for sanitizer builds; a release build takes ~0.1 s): the kernel's
// time to create 3000 files varies a lot with the file system's state.
TEST_F(Report, ThreeThousandConfigurationsRenderQuickly) {
  ResultsFile base = load("tests/data/results_fail.jsonl");
  ResultsFile f = base;
  f.records.clear();
  for (int i = 0; i < 3000; ++i) {
    reports::Record r = base.records[static_cast<size_t>(i) % base.records.size()];
    r.id = "gen.t" + std::to_string(i / 6);
    r.config_key = "wave=" + std::to_string(8 << (i % 6));
    f.records.push_back(std::move(r));
  }
  rusage u0{}, u1{};
  ::getrusage(RUSAGE_SELF, &u0);
  auto t0 = std::chrono::steady_clock::now();
  render({f, base});
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ::getrusage(RUSAGE_SELF, &u1);
  double user_ms = 1000 * (seconds(u1.ru_utime) - seconds(u0.ru_utime));
  double sys_ms = 1000 * (seconds(u1.ru_stime) - seconds(u0.ru_stime));
  std::printf("rendering 3000 + 7 records: %.0f ms (user %.0f ms, system %.0f ms)\n", ms, user_ms,
              sys_ms);
  EXPECT_LT(user_ms, 5000.0);
  EXPECT_EQ(count(page("index.html"), "<tr data-name="), 3007u);
}

// results.report.interop: with several results files, a grid of tests x files,
// each cell passed / run configurations, coloured, linking to the test's row.
TEST_F(Report, InteropGridCountsPassedAndRunPerTest) {
  render_default({load("tests/data/results_pass.jsonl"), load("tests/data/results_fail.jsonl")});
  std::string index = page("index.html");
  ASSERT_NE(index.find("<h2 id=\"interop\">"), std::string::npos);
  auto cell_row = [&](const std::string& id) {
    size_t at = index.find(">" + id + "</a></th>", index.find("<table class=\"interop\">"));
    if (at == std::string::npos) return std::string();
    size_t start = index.rfind("<tr>", at);
    return index.substr(start, index.find("</tr>", at) - start);
  };
  // broadcast: both configurations pass on the reference, 1 of 2 on faulty-cmp.
  std::string b = cell_row("xlane.readlane.broadcast");
  EXPECT_NE(b.find("<td class=\"n g-all\">2 / 2</td><td class=\"n g-some\">1 / 2</td>"),
            std::string::npos)
      << b;
  // The test's link goes to its first row.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(b, m, std::regex("<a href=\"#([^\"]+)\">")));
  EXPECT_NE(index.find("<tr data-name=\"xlane.readlane.broadcast["), std::string::npos);
  EXPECT_NE(index.find("id=\"" + m[1].str() + "\""), std::string::npos);
  // Not in the first file, and only unsupported in the second: none / nothing run.
  EXPECT_NE(cell_row("bar.arrive.all")
                .find("<td class=\"n g-none\">&mdash;</td><td class=\"n "
                      "g-unrun\">0 / 0</td>"),
            std::string::npos)
      << cell_row("bar.arrive.all");
  EXPECT_NE(cell_row("alu.add.wraps").find("g-zero\">0 / 1</td>"), std::string::npos);
  // One results file: no grid.
  render_default({load("tests/data/results_fail.jsonl")});
  EXPECT_EQ(page("index.html").find("id=\"interop\""), std::string::npos);
}

// results.report.history: a history page per implementation with its pass rate
// and share run drawn as SVG (a point per run), a table of runs, and a strip of
// statuses per configuration in the index rows and on failing pages.
TEST_F(Report, HistoryPagesAndStrips) {
  reports::History hist;
  const char* statuses[] = {"pass", "pass", "fail", "pass", "fail"};
  for (int i = 0; i < 5; ++i) {
    reports::RunInfo r;
    r.id = 10 + i;
    r.kind = "test";
    r.state = i == 3 ? "interrupted" : "complete";
    r.impl_name = "faulty-cmp";
    r.impl_version = "0.3";
    r.started = "2026-11-2" + std::to_string(i) + "T10:00:00Z";
    r.counts = {{"pass", 6u - (i % 2)}, {"fail", 1u + (i % 2)}, {"unsupported", 1}};
    r.run = 7;
    r.selected = 8;
    hist.runs.push_back(r);
    hist.results.push_back({r.id, "xlane.readlane.broadcast", "wave=8,warps=2", statuses[i], ""});
  }
  // A run of another implementation: a page of its own, no strip squares here.
  reports::RunInfo other;
  other.id = 99;
  other.impl_name = "reference";
  other.run = other.selected = 4;
  other.counts = {{"pass", 4}};
  hist.runs.push_back(other);
  hist.results.push_back({99, "xlane.readlane.broadcast", "wave=8,warps=2", "pass", ""});
  reports::HtmlOptions o;
  o.history = &hist;
  render_default({load("tests/data/results_fail.jsonl")}, o);
  std::vector<std::string> pages;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.path().filename().string().rfind("history-", 0) == 0)
      pages.push_back(e.path().filename());
  ASSERT_EQ(pages.size(), 2u);
  std::string index = page("index.html");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(index, m, std::regex("<a href=\"(history-faulty-cmp[^\"]*)\">")));
  std::string hp = page(m[1].str());
  EXPECT_NE(hp.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_EQ(count(hp, "<circle class=\"pt-rate\""), 5u);
  EXPECT_EQ(count(hp, "<circle class=\"pt-share\""), 5u);
  EXPECT_EQ(count(hp, "<tr id=\"run-"), 5u);
  // Run 11: 5 of 7 run passed; 7 of 8 selected ran.
  EXPECT_NE(hp.find("run 11 (2026-11-21T10:00:00Z): pass rate 71.4%"), std::string::npos);
  EXPECT_NE(hp.find("run 11 (2026-11-21T10:00:00Z): share run 87.5%"), std::string::npos);
  EXPECT_NE(hp.find("<td class=\"warn\">interrupted</td>"), std::string::npos);
  EXPECT_EQ(hp.find("<script"), std::string::npos);  // no JavaScript
  // The strip: five squares, oldest first, in the row and on the failing page.
  std::string r = row("xlane.readlane.broadcast[wave=8,warps=2]");
  EXPECT_NE(r.find("<span class=\"strip\" title=\"the last 5 runs, oldest first\"><i "
                   "class=\"st-pass\"></i><i class=\"st-pass\"></i><i class=\"st-fail\"></i><i "
                   "class=\"st-pass\"></i><i class=\"st-fail\"></i></span>"),
            std::string::npos)
      << r;
  // A configuration with no results in the history: empty squares.
  EXPECT_EQ(count(row("xlane.readlane.values"), "<i class=\"st-missing\"></i>"), 5u);
  std::string d = detail_of("xlane.readlane.broadcast[wave=8,warps=2]");
  EXPECT_NE(d.find("<i class=\"st-fail\" title=\"run 14 (2026-11-24T10:00:00Z): fail\"></i>"),
            std::string::npos);
  EXPECT_NE(d.find("<a href=\"../" + m[1].str() + "\">all runs</a>"), std::string::npos);
  // At most the last 20 runs.
  for (int i = 0; i < 30; ++i) {
    reports::RunInfo r2 = hist.runs[0];
    r2.id = 100 + i;
    hist.runs.insert(hist.runs.begin(), r2);  // older
  }
  render_default({load("tests/data/results_fail.jsonl")}, o);
  std::string r3 = row("xlane.readlane.broadcast[wave=8,warps=2]");
  EXPECT_NE(r3.find("title=\"the last 20 runs"), std::string::npos);
  size_t strip = r3.find("<span class=\"strip\"");
  EXPECT_EQ(count(r3.substr(strip, r3.find("</span>", strip) - strip), "<i "), 20u);
}

// results.record as a type (record.h): every status of the enum is in the table
// once, in report order; a record written with to_json() reads back equal, and
// from_json() of the fixture records gives their fields, typed.
TEST(Record, StatusTableAndRoundTrip) {
  using reports::Status;
  for (size_t i = 0; i < reports::kStatusTable.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(reports::kStatusTable[i].status), i);
    EXPECT_EQ(reports::parse_status(reports::kStatusTable[i].name),
              reports::kStatusTable[i].status);
    EXPECT_EQ(reports::kStatuses[i], reports::kStatusTable[i].name);
  }
  EXPECT_EQ(reports::parse_status("flaky"), Status::flaky);
  EXPECT_FALSE(reports::parse_status("passed"));
  auto rf = reports::read_results(test::source_path("tests/data/results_fail.jsonl"));
  ASSERT_TRUE(std::holds_alternative<ResultsFile>(rf));
  for (const reports::Record& r : std::get<ResultsFile>(rf).records) {
    EXPECT_FALSE(r.id.empty());
    ASSERT_TRUE(r.status.has_value());
    EXPECT_EQ(r.status_name, reports::info(*r.status).name);
    EXPECT_EQ(reports::from_json(reports::to_json(r)), r) << json::dump(reports::to_json(r));
  }
  reports::Record r = std::get<ResultsFile>(rf).records[0];
  EXPECT_EQ(r.status, Status::fail);
  EXPECT_TRUE(r.failing());
  EXPECT_FALSE(r.reference_trace.empty());
  // Lenient reading: wrong types are absent, an unknown status keeps its name.
  reports::Record odd = reports::from_json(std::get<json::Value>(json::parse(
      R"({"id": 5, "status": "weird", "checks": "many", "clauses": ["a", 1], "config": [1]})")));
  EXPECT_EQ(odd.id, "");
  EXPECT_FALSE(odd.status.has_value());
  EXPECT_EQ(odd.status_name, "weird");
  EXPECT_FALSE(odd.checks.has_value());
  EXPECT_EQ(odd.clauses, std::vector<std::string>{"a"});
  EXPECT_TRUE(odd.config.is_null());
  // Every test field (results.test) is a field of the record as written.
  reports::Record full = r;
  full.host = "[[host]]";
  full.preemptions.push_back({int64_t{3}, json::Value("all"), "A", ""});
  full.restore_bytes = 64;
  full.source = "; source";
  json::Value written = reports::to_json(full);
  for (std::string_view name : reports::kTestFields) EXPECT_NE(written.find(name), nullptr) << name;
  EXPECT_EQ(reports::from_json(written), full);
  // A typed status wins over a stale name when written.
  r.status = Status::flaky;
  EXPECT_EQ(json::dump(*reports::to_json(r).find("status")), "\"flaky\"");
}

// results.header and the summary line (results.stream) as types (record.h): the
// header and summary `simtspec test` writes read back typed and write back
// byte for byte; a field that is not named there is kept; wrong types are absent.
TEST(Record, HeaderAndSummaryRoundTrip) {
  auto parse = [](std::string_view text) { return std::get<json::Value>(json::parse(text)); };
  // As cli/cmd_test.cpp writes them, field order included.
  const json::Value header = parse(
      R"({"schema":"simtspec-results/1","suite":{"version":"0.1.0","paths":["suites","x"],)"
      R"("tests":12,"digest":"ab12"},"runner":{"name":"lavapipe","version":"24.2",)"
      R"("command":"/bin/vk","digest":"cd34","capabilities":{"waves":[8],"trace":false}},)"
      R"("host":{"hostname":"h","os":"Linux 6.1","cpus":16},"started":"2026-11-28T08:00:00Z",)"
      R"("options":{"filter":"alu.*","features":"","shard":"1/4","jobs":2,"differential":true,)"
      R"("max_steps":100000,"baseline":"3","rerun_failures":3}})");
  reports::RunHeader h = reports::header_from_json(header);
  EXPECT_EQ(h.schema, "simtspec-results/1");
  EXPECT_EQ(h.suite.version, "0.1.0");
  EXPECT_EQ(h.suite.paths, (std::vector<std::string>{"suites", "x"}));
  EXPECT_EQ(h.suite.tests, 12u);
  EXPECT_EQ(h.suite.digest, "ab12");
  EXPECT_EQ(h.runner.name, "lavapipe");
  EXPECT_EQ(h.runner.version, "24.2");
  EXPECT_EQ(h.runner.command, "/bin/vk");
  EXPECT_EQ(h.runner.digest, "cd34");
  EXPECT_EQ(json::dump(h.runner.capabilities), R"({"waves":[8],"trace":false})");
  EXPECT_EQ(h.host.hostname, "h");
  EXPECT_EQ(h.host.os, "Linux 6.1");
  EXPECT_EQ(h.host.cpus, 16u);
  EXPECT_EQ(h.started, "2026-11-28T08:00:00Z");
  ASSERT_NE(h.options.find("shard"), nullptr);
  EXPECT_EQ(json::dump(*h.options.find("shard")), "\"1/4\"");
  EXPECT_TRUE(h.other.empty());
  EXPECT_EQ(json::dump(reports::to_json(h)), json::dump(header));
  EXPECT_EQ(reports::header_from_json(reports::to_json(h)), h);

  const json::Value summary = parse(
      R"({"total":9,"selected":10,"run":8,"pass":5,"fail":1,"unsupported":1,"error":1,)"
      R"("xfail":0,"xpass":0,"flaky":1,"interrupted":true,"seconds":1.5,"signal":"SIGTERM"})");
  reports::RunSummary sum = reports::summary_from_json(summary);
  EXPECT_EQ(sum.total, 9u);
  EXPECT_EQ(sum.selected, 10u);
  EXPECT_EQ(sum.run, 8u);
  EXPECT_EQ(sum.counts.size(), reports::kStatusTable.size());
  EXPECT_EQ(sum.counts.at("flaky"), 1u);
  EXPECT_TRUE(sum.interrupted);
  EXPECT_EQ(sum.seconds, 1.5);
  EXPECT_EQ(sum.signal, "SIGTERM");
  EXPECT_EQ(json::dump(reports::to_json(sum)), json::dump(summary));
  EXPECT_EQ(reports::summary_from_json(reports::to_json(sum)), sum);

  // The fixture's header and summary (an earlier version's: no digests) too.
  auto rf = reports::read_results(test::source_path("tests/data/results_fail.jsonl"));
  ASSERT_TRUE(std::holds_alternative<ResultsFile>(rf));
  const ResultsFile& f = std::get<ResultsFile>(rf);
  EXPECT_EQ(f.run_header().runner.name, "faulty-cmp");
  EXPECT_EQ(f.runner_name(), "faulty-cmp");
  EXPECT_EQ(json::dump(reports::to_json(f.run_header())), json::dump(f.header));
  EXPECT_EQ(json::dump(reports::to_json(f.run_summary())), json::dump(f.summary));

  // Fields not named by the type are kept (a fuzz header's, a later version's).
  const json::Value extra =
      parse(R"({"schema":"s","suite":{"version":"1","more":[1]},"runner":{"name":"n","x":1},)"
            R"("host":{"cpus":2,"arch":"rv64"},"shard":"0/1","merged_from":["a"]})");
  h = reports::header_from_json(extra);
  EXPECT_EQ(h.other.size(), 2u);
  EXPECT_EQ(json::dump(reports::to_json(h)), json::dump(extra));
  sum = reports::summary_from_json(parse(R"({"total":1,"pass":1,"errors":0})"));
  EXPECT_EQ(json::dump(reports::to_json(sum)), R"({"total":1,"pass":1,"errors":0})");

  // Lenient: wrong types are absent; a header that is not an object is empty.
  h = reports::header_from_json(
      parse(R"({"schema":1,"suite":[],"runner":{"name":7,"version":"v"},"host":{"cpus":-1},)"
            R"("options":"all"})"));
  EXPECT_EQ(h.schema, "");
  EXPECT_EQ(h.runner.name, "");
  EXPECT_EQ(h.runner.version, "v");
  EXPECT_FALSE(h.host.cpus);
  EXPECT_TRUE(h.options.is_null());
  EXPECT_EQ(reports::header_from_json(parse("[1,2]")), reports::RunHeader{});
  sum = reports::summary_from_json(parse(R"({"total":-1,"interrupted":"yes","seconds":"1"})"));
  EXPECT_FALSE(sum.total);
  EXPECT_FALSE(sum.interrupted);
  EXPECT_FALSE(sum.seconds);
}

// runner.firstdiff as a type (record.h): each shape the harness writes (an
// element, a field, a missing buffer with a null `actual`, an image byte) reads
// back typed and writes back byte for byte; so does a record holding one. What the
// report reads of an expectation or an outcome (outcome_view) is typed.
TEST(Record, FirstDiffAndOutcomesRoundTrip) {
  auto parse = [](std::string_view text) { return std::get<json::Value>(json::parse(text)); };
  for (std::string_view text :
       {R"({"kind":"buffer","buffer":"out","index":5,"expected":7,"actual":8,"lane":5,)"
        R"("gwarp":0,"warp":0,"wg":0,"against":"expectation"})",
        R"({"kind":"field","field":"event.lane","expected":"none","actual":3,)"
        R"("against":"reference"})",
        R"({"kind":"field","field":"buffer","expected":"out","actual":null,"against":"reference"})",
        R"({"kind":"field","field":"image.word","expected":1,"actual":2,"offset":40,)"
        R"("name":"warp[0].pc","against":"reference"})",
        R"({"kind":"field","field":"status","expected":"completed","actual":"trapped","x":[1]})",
        "{}"}) {
    const json::Value v = parse(text);
    reports::FirstDiff d = reports::first_diff_from_json(v);
    EXPECT_EQ(json::dump(reports::to_json(d)), json::dump(v));
    EXPECT_EQ(reports::first_diff_from_json(reports::to_json(d)), d);
    reports::Record r;
    r.id = "t";
    r.set_status(reports::Status::fail);
    r.first_diff = d;
    EXPECT_EQ(json::dump(*reports::to_json(r).find("first_diff")), json::dump(v));
    EXPECT_EQ(reports::from_json(reports::to_json(r)), r);
  }
  reports::FirstDiff d = reports::first_diff_from_json(parse(
      R"({"kind":"buffer","buffer":"out","index":5,"expected":7,"actual":8,"lane":5,"warp":1})"));
  EXPECT_EQ(d.kind, "buffer");
  EXPECT_EQ(d.buffer, "out");
  EXPECT_EQ(d.index, 5);
  EXPECT_EQ(d.lane, 5);
  EXPECT_EQ(d.warp, 1);
  EXPECT_FALSE(d.gwarp);
  ASSERT_TRUE(d.expected && d.actual);
  EXPECT_EQ(json::dump(*d.actual), "8");
  d = reports::first_diff_from_json(parse(R"({"kind":"field","field":"buffer","actual":null})"));
  ASSERT_TRUE(d.actual);
  EXPECT_TRUE(d.actual->is_null());  // null is a value, not absent
  EXPECT_FALSE(d.expected);
  // Lenient: wrong types are absent; a first_diff that is not an object is none.
  d = reports::first_diff_from_json(parse(R"({"kind":3,"index":"5","lane":1.5})"));
  EXPECT_EQ(d.kind, "");
  EXPECT_FALSE(d.index);
  EXPECT_FALSE(d.lane);
  EXPECT_FALSE(reports::from_json(parse(R"({"id":"t","first_diff":[1]})")).first_diff);

  // Every record of the fixture that has a first difference has it typed.
  auto rf = reports::read_results(test::source_path("tests/data/results_fail.jsonl"));
  ASSERT_TRUE(std::holds_alternative<ResultsFile>(rf));
  size_t with_diff = 0;
  for (const reports::Record& r : std::get<ResultsFile>(rf).records)
    if (r.first_diff) {
      ++with_diff;
      EXPECT_FALSE(r.first_diff->kind.empty());
    }
  EXPECT_GT(with_diff, 0u);

  reports::OutcomeView o = reports::outcome_view(
      parse(R"({"status":"rejected","line":4,"buffers":{"out":{"type":"u32","values":[1,2]},)"
            R"("odd":3,"e":{"each":"tid * 2","values":"x"}}})"));
  EXPECT_EQ(o.status, "rejected");
  EXPECT_EQ(o.line, 4);
  ASSERT_EQ(o.buffers.size(), 3u);
  ASSERT_NE(o.buffer("out"), nullptr);
  EXPECT_EQ(o.buffer("out")->type, "u32");
  ASSERT_TRUE(o.buffer("out")->values);
  EXPECT_EQ(o.buffer("out")->values->size(), 2u);
  ASSERT_NE(o.buffer("odd"), nullptr);  // not an object: only its name
  EXPECT_FALSE(o.buffer("odd")->values);
  EXPECT_EQ(o.buffer("e")->each, "tid * 2");
  EXPECT_FALSE(o.buffer("e")->values);
  EXPECT_EQ(o.buffer("none"), nullptr);
  o = reports::outcome_view(parse(R"({"status":1,"line":"4","buffers":[]})"));
  EXPECT_EQ(o.status, "");
  EXPECT_FALSE(o.line);
  EXPECT_TRUE(o.buffers.empty());
  // The layout the buffer tables use (format.expr), from the configuration.
  reports::LayoutView l =
      reports::layout_view(parse(R"({"wave":8,"warps":"2","workgroups":3,"policy":"random"})"));
  EXPECT_EQ(l.wave, 8);
  EXPECT_FALSE(l.warps);
  EXPECT_EQ(l.workgroups, 3);
  EXPECT_FALSE(reports::layout_view(parse("[8]")).wave);
}

}  // namespace
}  // namespace simt
