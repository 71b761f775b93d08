// ci: not sanitized: the report in Chromium: the browser, not our code, runs here (report_test is
// sanitized) The HTML report in a real browser: headless Chromium opens index.html, coverage.html
// and a detail page from the file system (file://, no network) and must report no console message,
// and the DOM after the scripts ran must hold the expected rows. Skipped if /usr/bin/chromium is
// not installed.
//
// What Chromium prints: with --enable-logging=stderr --v=0, every console
// message of the page -- console.error, console.log and uncaught exceptions
// alike, with no severity of their own -- is one stderr line
//   [PID:TID:DATE/TIME:INFO:CONSOLE:LINE] "MESSAGE", source: URL (LINE)
// (older versions wrote CONSOLE(LINE)). The report's pages log nothing, so any
// such line is a failure; DeliberatelyBrokenPageIsDetected proves the check
// can fail. Resources that fail to load (a missing style.css) print nothing at
// all in this mode, so every local link and resource of the DOM is also
// checked to exist.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "html.h"
#include "results.h"
#include "support.h"

namespace simt {
namespace {

using test::read_all;

namespace fs = std::filesystem;

const char* const kChromium = "/usr/bin/chromium";

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string file_url(const fs::path& p, const std::string& fragment) {
  std::string url = "file://";
  for (unsigned char c : fs::absolute(p).string()) {
    if (std::isalnum(c) ||
        std::string_view("/._-~").find(static_cast<char>(c)) != std::string_view::npos) {
      url += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      url += buf;
    }
  }
  return fragment.empty() ? url : url + "#" + fragment;
}

struct Loaded {
  int exit_code = -1;
  std::string dom;                   // the DOM after scripts ran (--dump-dom)
  std::vector<std::string> console;  // console lines on stderr
  std::string log;                   // all of stderr
};

// The console lines in Chromium's stderr log.
std::vector<std::string> console_lines(const std::string& log) {
  static const std::regex console(R"(^\[[^\]]*:CONSOLE[:(]\d+\)?\])");
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, console)) out.push_back(line);
  return out;
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kChromium)) {
      // CI installs Chromium and sets SIMT_REQUIRE_CHROMIUM, so there this cannot skip.
      if (std::getenv("SIMT_REQUIRE_CHROMIUM"))
        FAIL() << kChromium << " is required but not installed";
      GTEST_SKIP() << kChromium << " is not installed";
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("simt-browser-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // Opens `page` in headless Chromium with a fresh profile, bounded by
  // `timeout 60`.
  Loaded open(const fs::path& page, const std::string& fragment = "",
              const std::string& flags = "--virtual-time-budget=3000") {
    fs::path profile = dir_ / ("profile-" + std::to_string(++runs_));
    fs::path out = dir_ / ("dom-" + std::to_string(runs_) + ".html");
    fs::path err = dir_ / ("log-" + std::to_string(runs_) + ".txt");
    std::string cmd = std::string("timeout 60 ") + kChromium +
                      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                      " --disable-background-networking --disable-component-update --disable-sync"
                      " --user-data-dir=" +
                      quote(profile.string()) + " --enable-logging=stderr --v=0 " + flags +
                      " --dump-dom " + quote(file_url(page, fragment)) + " >" +
                      quote(out.string()) + " 2>" + quote(err.string());
    Loaded l;
    int rc = std::system(cmd.c_str());
    l.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    l.dom = read_all(out);
    l.log = read_all(err);
    l.console = console_lines(l.log);
    fs::remove_all(profile);
    return l;
  }

  // Renders the fixture results into dir_/report.
  fs::path render() {
    std::vector<reports::ResultsFile> files;
    for (const char* f : {"tests/data/results_pass.jsonl", "tests/data/results_fail.jsonl"}) {
      auto r = reports::read_results(test::source_path(f));
      EXPECT_TRUE(std::holds_alternative<reports::ResultsFile>(r));
      if (auto* rf = std::get_if<reports::ResultsFile>(&r)) files.push_back(std::move(*rf));
    }
    std::map<std::string, reports::Clause> clauses = {
        {"xlane.readlane", {"crosslane.md", "`readlane sD, vA, L`"}},
        {"xlane.shfl", {"crosslane.md", "`shfl vD, vA, B`"}},
        {"runner.harness", {"runner.md", "For each configuration"}}};
    fs::path out = dir_ / "report";
    reports::HtmlOptions o;
    o.all_pages = true;  // the passing syntax.comment.markup's page too
    EXPECT_EQ(reports::write_html(files, clauses, out.string(), o), "");
    return out;
  }

  // Loads `target` (a path relative to `root`) in a 1200x700 frame of a probe page
  // written into `root`, and once everything has loaded runs `js`: a function body
  // with `w` and `d` the frame's window and document, that calls done(TEXT).
  // Returns TEXT, or "(no result)". File pages may read each other's documents with
  // --allow-file-access-from-files. `timed`: in real time (for timings), else in
  // virtual time (a script's timers run at once).
  std::string probe(const fs::path& root, const std::string& target, const std::string& js,
                    bool timed = false) {
    fs::path page = root / ("probe-" + std::to_string(runs_ + 1) + ".html");
    std::ofstream(page) << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>probe</title>"
                           "</head><body><p id=\"out\">(no result)</p><iframe id=\"f\" src=\""
                        << target
                        << "\" style=\"width:1200px;height:700px\"></iframe><script>\n"
                           "window.addEventListener('load', function () {\n"
                           "  var f = document.getElementById('f'), w = f.contentWindow, "
                           "d = f.contentDocument;\n"
                           "  function done(t) { document.getElementById('out').textContent = "
                           "'result[' + t + ']'; }\n"
                        << js << "\n});\n</script></body></html>\n";
    Loaded l = open(page, "",
                    std::string("--allow-file-access-from-files") +
                        (timed ? "" : " --virtual-time-budget=5000"));
    fs::remove(page);
    EXPECT_TRUE(l.console.empty()) << target << " logged:\n" << l.log;
    size_t at = l.dom.find("result[");
    if (at == std::string::npos) return "(no result)";
    at += 7;
    return l.dom.substr(at, l.dom.find("]</p>", at) - at);
  }

  // A generated run of `n` configurations, one in 1000 failing, rendered by default.
  fs::path render_large(size_t n) {
    auto r = reports::read_results(test::source_path("tests/data/results_fail.jsonl"));
    EXPECT_TRUE(std::holds_alternative<reports::ResultsFile>(r));
    reports::ResultsFile base = std::get<reports::ResultsFile>(r), f = base;
    f.records.clear();
    for (size_t i = 0; i < n; ++i) {
      reports::Record rec = base.records[i % 1000 == 7 ? 0 : 3];  // a fail, a pass
      rec.id = "gen.t" + std::to_string(i / 10);
      rec.config_key = "wave=" + std::to_string(4 << (i % 10));
      f.records.push_back(std::move(rec));
    }
    fs::path out = dir_ / "large";
    EXPECT_EQ(reports::write_html({f}, {}, out.string()), "");
    return out;
  }

  // A page loaded without console messages, and the DOM is complete.
  void expect_clean(const Loaded& l, const std::string& what) {
    EXPECT_EQ(l.exit_code, 0) << what << "\n" << l.log;
    EXPECT_TRUE(l.console.empty()) << what << " logged to the console:\n" << l.log;
    EXPECT_NE(l.dom.find("</html>"), std::string::npos) << what << ": no DOM\n" << l.log;
  }

  // Every relative href/src in the DOM of `page` names an existing file, and a
  // fragment names an element of the target page.
  void expect_links_resolve(const fs::path& page, const std::string& dom) {
    static const std::regex attr(R"re((?:href|src)="([^"]*)")re");
    size_t checked = 0;
    for (std::sregex_iterator it(dom.begin(), dom.end(), attr), end; it != end; ++it) {
      std::string url = (*it)[1].str();
      EXPECT_EQ(url.find("://"), std::string::npos) << page << ": " << url;
      size_t hash = url.find('#');
      std::string path = url.substr(0, hash);
      std::string fragment = hash == std::string::npos ? "" : url.substr(hash + 1);
      fs::path target = path.empty() ? page : page.parent_path() / path;
      ASSERT_TRUE(fs::is_regular_file(target)) << page << ": " << url;
      // Fragments that are filter settings (name=value) are not element ids.
      if (!fragment.empty() && fragment.find('=') == std::string::npos) {
        std::string text = path.empty() ? dom : read_all(target);
        EXPECT_NE(text.find("id=\"" + fragment + "\""), std::string::npos) << page << ": " << url;
      }
      ++checked;
    }
    EXPECT_GT(checked, 0u);
  }

  fs::path dir_;
  int runs_ = 0;
};

// The start tag of the index row named `name`.
std::string tag_of(const std::string& dom, const std::string& name) {
  size_t at = dom.find("<tr data-name=\"" + name + "\"");
  return at == std::string::npos ? "" : dom.substr(at, dom.find('>', at) - at);
}

TEST(BrowserLog, ConsoleLinePattern) {
  auto lines = console_lines(
      "[1:2:1123/001706.577098:INFO:CONSOLE:2] \"deliberate\", source: file:///x.html (2)\n"
      "[1:2:1123/001706.577209:INFO:CONSOLE(3)] \"Uncaught ReferenceError: f is not defined\", "
      "source: x (3)\n"
      "[1:2:1123/001705.675107:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("Uncaught"), std::string::npos);
}

// The check can fail: a page with a console.error and an uncaught exception is
// caught, and its DOM shows that the page itself still ran.
TEST_F(Browser, DeliberatelyBrokenPageIsDetected) {
  fs::path page = dir_ / "broken.html";
  std::ofstream(page)
      << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>broken</title></head>"
         "<body><p id=\"x\">before</p>\n"
         "<script>console.error('deliberate console error');</script>\n"
         "<script>undefinedFunctionCall();</script>\n"
         "<script>document.getElementById('x').textContent = 'after';</script>\n"
         "</body></html>\n";
  Loaded l = open(page);
  EXPECT_EQ(l.exit_code, 0) << l.log;
  EXPECT_NE(l.dom.find("<p id=\"x\">after</p>"), std::string::npos) << l.dom;
  ASSERT_EQ(l.console.size(), 2u) << l.log;
  EXPECT_NE(l.console[0].find("deliberate console error"), std::string::npos);
  EXPECT_NE(l.console[1].find("Uncaught ReferenceError: undefinedFunctionCall is not defined"),
            std::string::npos);
}

TEST_F(Browser, IndexLoadsAndItsFilterRuns) {
  fs::path root = render();
  Loaded l = open(root / "index.html");
  expect_clean(l, "index.html");
  // One row per configuration; the script filled in the count.
  size_t rows = 0;
  for (size_t at = l.dom.find("<tr data-name="); at != std::string::npos;
       at = l.dom.find("<tr data-name=", at + 1))
    ++rows;
  EXPECT_EQ(rows, 8u);
  EXPECT_NE(
      l.dom.find(
          "<tr data-name=\"xlane.readlane.broadcast[wave=8,warps=2]\" data-status=\"pass fail\" "
          "class=\"failing\" id=\""),
      std::string::npos);
  EXPECT_NE(l.dom.find("8 of 8 configurations shown"), std::string::npos) << l.dom;
  expect_links_resolve(root / "index.html", l.dom);
}

TEST_F(Browser, IndexFilterFromTheAddress) {
  fs::path root = render();
  Loaded l = open(root / "index.html", "q=readlane&status=fail");
  expect_clean(l, "index.html#q=readlane&status=fail");
  // xlane.readlane.broadcast[wave=8,warps=2] and xlane.readlane.values fail on one runner.
  EXPECT_NE(l.dom.find("2 of 8 configurations shown"), std::string::npos) << l.dom;
  EXPECT_EQ(tag_of(l.dom, "xlane.readlane.values").find("hidden"), std::string::npos);
  EXPECT_NE(l.dom.find("<tr data-name=\"xlane.readlane.broadcast[wave=8,warps=1]\" "
                       "data-status=\"pass\" hidden=\"\">"),
            std::string::npos)
      << l.dom;
  EXPECT_NE(tag_of(l.dom, "alu.add.wraps").find(" hidden=\"\""), std::string::npos);
}

TEST_F(Browser, CoverageLoads) {
  fs::path root = render();
  Loaded l = open(root / "coverage.html");
  expect_clean(l, "coverage.html");
  EXPECT_NE(l.dom.find("<tr id=\"c-xlane.shfl\" class=\"uncovered\">"), std::string::npos);
  EXPECT_NE(l.dom.find("<tr id=\"c-runner.harness\" class=\"unit-tested\">"), std::string::npos);
  expect_links_resolve(root / "coverage.html", l.dom);
}

TEST_F(Browser, FailingDetailPageLoads) {
  fs::path root = render();
  // The failing configuration's page of the second results file, found from the index.
  std::string index = read_all(root / "index.html");
  size_t row = index.find("<tr data-name=\"xlane.readlane.broadcast[wave=8,warps=2]\"");
  ASSERT_NE(row, std::string::npos);
  size_t fail = index.find("st st-fail", row);
  size_t href = index.find("href=\"", fail) + 6;
  fs::path page = root / index.substr(href, index.find('"', href) - href);
  Loaded l = open(page);
  expect_clean(l, page.string());
  EXPECT_NE(l.dom.find("<tr id=\"first-diff\" class=\"diff\"><td>13</td>"), std::string::npos);
  // The source's markup stays text in the DOM.
  EXPECT_EQ(l.dom.find("<to>"), std::string::npos);
  EXPECT_NE(l.dom.find("lane 2's value &lt;to&gt; lane 5"), std::string::npos);
  expect_links_resolve(page, l.dom);
}

TEST_F(Browser, EscapedSourcePageLoads) {
  fs::path root = render();
  std::string index = read_all(root / "index.html");
  size_t row = index.find("<tr data-name=\"syntax.comment.markup\"");
  ASSERT_NE(row, std::string::npos);
  size_t href = index.find("href=\"", row) + 6;
  fs::path page = root / index.substr(href, index.find('"', href) - href);
  Loaded l = open(page);
  expect_clean(l, page.string());
  // Had the source's <script>alert('x')</script> run, it would not be in the DOM as text.
  EXPECT_NE(l.dom.find("; &lt;script&gt;alert('x')&lt;/script&gt; &amp; \"quotes\""),
            std::string::npos)
      << l.dom;
  EXPECT_EQ(l.dom.find("<b>not bold</b>"), std::string::npos);
}

// results.report.passes: a run of 6,000 configurations (a few failing) loads in
// under a second: the frame's Navigation Timing, load event end less start, the
// best of three loads (the machine may be busy with other work).
TEST_F(Browser, LargeRunIndexLoadsUnderOneSecond) {
  fs::path root = render_large(6000);
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    std::string ms = probe(root, "index.html",
                           "var e = w.performance.getEntriesByType('navigation')[0];\n"
                           "done(Math.round(e.loadEventEnd - e.startTime));",
                           true);
    ASSERT_NE(ms, "(no result)");
    best = std::min(best, std::stod(ms));
  }
  std::printf("index.html of 6,000 configurations: loaded in %.0f ms\n", best);
  EXPECT_LT(best, 1000.0);
}

// results.report.failures: the fail total goes to the first failing row, scrolled
// into view below the sticky table header, not under it.
TEST_F(Browser, FailLinkScrollsToAVisibleRow) {
  fs::path root = render_large(6000);
  std::string got = probe(root, "index.html", R"js(
var a = d.querySelector('td[data-total="fail"] a');
if (!a) { done('no link'); return; }
a.click();
setTimeout(function () {
  var r = d.getElementById(decodeURIComponent(w.location.hash.slice(1)));
  if (!r) { done('no row ' + w.location.hash); return; }
  var top = r.getBoundingClientRect().top;
  var head = d.querySelector('#results thead th').getBoundingClientRect().bottom;
  done(r.getAttribute('data-name') + ' ' + r.className + ' scrolled=' + (w.scrollY > 0) +
       ' below-header=' + (top >= head - 1) + ' in-view=' + (top < w.innerHeight));
}, 200);)js");
  EXPECT_EQ(got, "gen.t0[wave=512] failing scrolled=true below-header=true in-view=true");
}

// results.report.failures: the copy button is shown by the script and copies the
// reproduce command (to the clipboard, or, where the page may not write it,
// selected for Ctrl+C).
TEST_F(Browser, CopyButtonCopiesTheReproduceCommand) {
  fs::path root = render();
  std::string index = read_all(root / "index.html");
  size_t row = index.find("<tr data-name=\"xlane.readlane.values\"");
  ASSERT_NE(row, std::string::npos);
  size_t href = index.find("href=\"", index.find("st st-fail", row)) + 6;
  std::string page = index.substr(href, index.find('"', href) - href);
  ASSERT_NE(read_all(root / page).find("id=\"reproduce-cmd\">simtspec test "), std::string::npos);
  std::string got = probe(root, page, R"js(
var b = d.querySelector('button.copy');
if (!b || b.hidden) { done('hidden'); return; }
b.click();
setTimeout(function () { done(b.textContent + '|' + w.getSelection().toString()); }, 300);)js");
  EXPECT_TRUE(got.rfind("copied|", 0) == 0 ||
              got.rfind("selected: press Ctrl+C|simtspec test ", 0) == 0)
      << got;
}

// results.report.history: the history page loads clean, its links resolve, and
// its chart is drawn (the SVG's points are in the DOM).
TEST_F(Browser, HistoryPageLoads) {
  std::vector<reports::ResultsFile> files;
  auto r = reports::read_results(test::source_path("tests/data/results_fail.jsonl"));
  ASSERT_TRUE(std::holds_alternative<reports::ResultsFile>(r));
  files.push_back(std::get<reports::ResultsFile>(std::move(r)));
  reports::History hist;
  for (int i = 0; i < 4; ++i) {
    reports::RunInfo run;
    run.id = i + 1;
    run.impl_name = "faulty-cmp";
    run.state = "complete";
    run.counts = {{"pass", 3u + i}, {"fail", 4u - i}};
    run.run = run.selected = 7;
    hist.runs.push_back(run);
    hist.results.push_back({run.id, "alu.div.zero_lane", "", i < 2 ? "pass" : "fail", ""});
  }
  reports::HtmlOptions o;
  o.history = &hist;
  fs::path root = dir_ / "report";
  ASSERT_EQ(reports::write_html(files, {}, root.string(), o), "");
  fs::path page;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().filename().string().rfind("history-", 0) == 0) page = e.path();
  ASSERT_FALSE(page.empty());
  Loaded l = open(page);
  expect_clean(l, page.string());
  size_t points = 0;
  for (size_t at = l.dom.find("<circle class=\"pt-rate\""); at != std::string::npos;
       at = l.dom.find("<circle class=\"pt-rate\"", at + 1))
    ++points;
  EXPECT_EQ(points, 4u);
  expect_links_resolve(page, l.dom);
  Loaded index = open(root / "index.html");
  expect_clean(index, "index.html");
  expect_links_resolve(root / "index.html", index.dom);
}

}  // namespace
}  // namespace simt
