// CI against a baseline (spec/results.md, results.baseline, results.known,
// results.rerun): the verdicts over rows, the known-failures file, the summaries,
// the classification of reruns, and `simtspec test --baseline` / `--rerun-failures`
// end to end through the faulty implementation (a planted fault, random-fail).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "baseline.h"
#include "results.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using harness::BaselineVerdict;
using test::read_all;
using test::write_all;

reports::ResultRow row(std::string id, std::string key, std::string status,
                       std::string message = "") {
  return {0, std::move(id), std::move(key), std::move(status), std::move(message)};
}

harness::KnownList known_list(const std::string& text) {
  auto k = harness::parse_known(text, "k.known.toml");
  if (auto* e = std::get_if<std::string>(&k)) {
    ADD_FAILURE() << *e;
    return {};
  }
  return std::get<harness::KnownList>(k);
}

// results.baseline.verdict: every pair of (baseline status, status) that decides a
// verdict, with and without a known entry.
TEST(BaselineVerdicts, FollowTheTable) {
  const harness::KnownList known = known_list(R"([[known]]
test = "k.fail"
status = "fail"
reason = "r1"
[[known]]
test = "k.flaky"
config = "wave=8"
status = "flaky"
reason = "r2"
)");
  struct Case {
    const char *id, *key, *before, *now;  // "" = absent
    BaselineVerdict want;
  };
  const Case cases[] = {
      {"t", "", "pass", "fail", BaselineVerdict::Regression},
      {"t", "", "pass", "error", BaselineVerdict::Regression},
      {"t", "", "xfail", "xpass", BaselineVerdict::Regression},
      {"t", "", "unsupported", "fail", BaselineVerdict::Regression},
      {"t", "", "", "fail", BaselineVerdict::Regression},
      {"t", "", "pass", "flaky", BaselineVerdict::Regression},
      {"t", "", "fail", "error", BaselineVerdict::Regression},  // another bad status
      {"t", "", "fail", "fail", BaselineVerdict::Unchanged},
      {"t", "", "flaky", "flaky", BaselineVerdict::Unchanged},
      {"t", "", "fail", "pass", BaselineVerdict::Progression},
      {"t", "", "flaky", "pass", BaselineVerdict::Progression},
      {"t", "", "error", "unsupported", BaselineVerdict::Unchanged},
      {"t", "", "fail", "xfail", BaselineVerdict::Unchanged},
      {"t", "", "pass", "pass", BaselineVerdict::Unchanged},
      {"t", "", "pass", "unsupported", BaselineVerdict::Unchanged},
      {"t", "", "", "pass", BaselineVerdict::New},
      {"t", "", "", "unsupported", BaselineVerdict::New},
      {"t", "", "pass", "", BaselineVerdict::Vanished},
      {"t", "", "fail", "", BaselineVerdict::Vanished},
      // results.known: its own status only; flaky excuses every bad status.
      {"k.fail", "wave=8", "pass", "fail", BaselineVerdict::Known},
      {"k.fail", "wave=8", "fail", "fail", BaselineVerdict::Known},
      {"k.fail", "wave=8", "pass", "error", BaselineVerdict::Regression},
      {"k.fail", "wave=8", "fail", "pass", BaselineVerdict::Progression},
      {"k.flaky", "wave=8", "pass", "fail", BaselineVerdict::Known},
      {"k.flaky", "wave=8", "pass", "error", BaselineVerdict::Known},
      {"k.flaky", "wave=8", "pass", "flaky", BaselineVerdict::Known},
      {"k.flaky", "wave=64", "pass", "flaky", BaselineVerdict::Regression},
  };
  for (const auto& c : cases) {
    std::vector<reports::ResultRow> before;
    if (*c.before) before.push_back(row(c.id, c.key, c.before));
    harness::Baseline b(before, known);
    const harness::KnownEntry* k = nullptr;
    EXPECT_EQ(harness::verdict_name(b.verdict(c.id, c.key, c.now, &k)),
              harness::verdict_name(c.want))
        << c.id << "[" << c.key << "]: " << c.before << " -> " << c.now;
    EXPECT_EQ(k != nullptr, c.want == BaselineVerdict::Known) << c.id << " " << c.now;
  }
}

// results.baseline: every configuration of either side once, ordered by id then
// key; the unselected left out; the text of each verdict; stale entries
// (results.known.stale).
TEST(BaselineCompare, CoversBothSidesLeavesOutTheUnselected) {
  const harness::KnownList known = known_list(R"([[known]]
test = "c.known"
status = "fail"
reason = "planted, issue 7"
[[known]]
test = "c.gone*"
status = "fail"
reason = "excuses nothing"
[[known]]
test = "c.other"
status = "fail"
reason = "only in the unselected"
[[known]]
test = "c.pass"
status = "flaky"
reason = "a flake that did not happen"
[[known]]
test = "c.nowhere"
status = "flaky"
reason = "matches nothing"
)");
  std::vector<reports::ResultRow> before = {
      row("c.reg", "wave=8", "pass"),    row("c.prog", "", "fail", "was bad"),
      row("c.known", "", "pass"),        row("c.vanished", "", "pass", "old"),
      row("c.other", "wave=64", "pass"), row("c.pass", "", "pass"),
  };
  std::vector<reports::ResultRow> now = {
      row("c.reg", "wave=8", "fail", "is 1, expected 0"),
      row("c.prog", "", "pass"),
      row("c.known", "", "fail", "msg"),
      row("c.new", "", "pass"),
      row("c.pass", "", "pass"),
  };
  harness::Baseline b(before, known, {{"c.other", "wave=64"}});
  auto c = harness::compare(b, now);
  std::string got;
  for (const auto& e : c.entries)
    got += e.test + "[" + e.config + "] " + e.baseline_status + ">" + e.status + " " +
           std::string(harness::verdict_name(e.verdict)) + " " + e.text + "\n";
  EXPECT_EQ(got,
            "c.known[] pass>fail known planted, issue 7\n"
            "c.new[] >pass new \n"
            "c.pass[] pass>pass unchanged \n"
            "c.prog[] fail>pass progression \n"
            "c.reg[wave=8] pass>fail regression is 1, expected 0\n"
            "c.vanished[] pass> vanished old\n");
  EXPECT_EQ(c.count(BaselineVerdict::Regression), 1u);
  EXPECT_EQ(c.count(BaselineVerdict::Unchanged), 1u);
  ASSERT_EQ(c.stale.size(), 2u);
  EXPECT_EQ(c.stale[0]->test, "c.gone*");
  EXPECT_EQ(c.stale[1]->test, "c.nowhere");
  const std::string console = harness::baseline_console(c);
  EXPECT_EQ(console,
            "progression: c.prog: fail -> pass\n"
            "regression: c.reg[wave=8]: pass -> fail: is 1, expected 0\n"
            "baseline: 1 regression, 1 progression, 1 known, 1 unchanged, 1 new, 1 vanished\n"
            "note: k.known.toml:5: known fail entry for c.gone* excused nothing in this run "
            "(stale)\n"
            "note: k.known.toml:17: known flaky entry for c.nowhere excused nothing in this run "
            "(stale)\n");
}

// results.known: every problem is FILE:LINE: message, naming the key.
TEST(KnownFile, ProblemsAreLocated) {
  struct Case {
    const char* text;
    const char* want;
  };
  const Case cases[] = {
      {"[[known]]\ntest = \"a\"\nstatus = \"maybe\"\nreason = \"r\"\n",
       "k.known.toml:3: known.status: 'maybe' is not fail, error or flaky"},
      {"[[known]]\ntest = \"a\"\nstatus = \"fail\"\n", "k.known.toml:1: known: reason is required"},
      {"[[known]]\ntest = \"a\"\nstatus = \"fail\"\nreason = \"\"\n",
       "k.known.toml:4: known.reason must not be empty"},
      {"[[known]]\ntest = 3\nstatus = \"fail\"\nreason = \"r\"\n",
       "k.known.toml:2: known.test must be a string"},
      {"[[known]]\ntest = \"a\"\nstatus = \"fail\"\nreason = \"r\"\nwhy = \"x\"\n",
       "k.known.toml:5: known: unknown key 'why'"},
      {"\n\nknown = 1\n", "k.known.toml:3: known must be an array of tables"},
      {"\nxfail = []\n", "k.known.toml:2: unknown key 'xfail'"},
      {"[[known]\n", "k.known.toml:1: not a usable TOML document"},
      {"[[known]]\nstatus = \"fail\"\nreason = \"r\"\n", "k.known.toml:1: known: test is required"},
  };
  for (const auto& c : cases) {
    auto k = harness::parse_known(c.text, "k.known.toml");
    const auto* e = std::get_if<std::string>(&k);
    ASSERT_NE(e, nullptr) << c.text;
    EXPECT_EQ(e->substr(0, std::string(c.want).size()), c.want) << c.text;
  }
  auto ok = harness::parse_known("# nothing known\n", "k.known.toml");
  ASSERT_TRUE(std::holds_alternative<harness::KnownList>(ok));
  EXPECT_TRUE(std::get<harness::KnownList>(ok).entries.empty());
  EXPECT_EQ(harness::known_path("runners/vulkan/lavapipe.toml"),
            "runners/vulkan/lavapipe.known.toml");
}

// results.baseline.summaries: RFC 4180 fields, and the JUnit file's verdicts.
TEST(BaselineSummaries, CsvQuotesAndJunitVerdicts) {
  EXPECT_EQ(harness::csv_field("plain"), "plain");
  EXPECT_EQ(harness::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(harness::csv_field("say \"x\""), "\"say \"\"x\"\"\"");
  EXPECT_EQ(harness::csv_field("two\nlines"), "\"two\nlines\"");
  harness::Baseline b({row("t.a", "wave=8", "pass"), row("t.k", "", "pass")},
                      known_list("[[known]]\ntest = \"t.k\"\nstatus = \"error\"\n"
                                 "reason = \"crashes <sometimes>\"\n"));
  auto c = harness::compare(b, {row("t.a", "wave=8", "fail", "is 1, expected 0"),
                                row("t.k", "", "error", "boom"), row("t.n", "", "pass")});
  EXPECT_EQ(harness::baseline_csv(c),
            "test,config,baseline,status,verdict,reason\r\n"
            "t.a,wave=8,pass,fail,regression,\"is 1, expected 0\"\r\n"
            "t.k,,pass,error,known,crashes <sometimes>\r\n"
            "t.n,,,pass,new,\r\n");
  const std::string x = harness::baseline_junit(c, "impl");
  EXPECT_NE(x.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos)
      << x;
  EXPECT_NE(x.find("<testcase classname=\"baseline\" name=\"t.a[wave=8]\">\n      <failure "
                   "type=\"regression\" message=\"pass -&gt; fail: is 1, expected 0\"/>"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"t.k\">\n      <skipped message=\"known error: crashes "
                   "&lt;sometimes&gt;\"/>"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"t.n\"/>"), std::string::npos) << x;
}

reports::Record result(const std::string& status, const std::string& message) {
  reports::Record r;
  r.id = "t";
  r.status = reports::parse_status(status);
  r.status_name = status;
  r.message = message;
  return r;
}

// results.rerun: disagreement by status, or by message for fail only.
TEST(Reruns, DisagreementMakesFlaky) {
  struct Case {
    const char* status;
    const char* message;
    std::vector<std::pair<const char*, const char*>> reruns;
    const char *want_status, *want_message;
  };
  const Case cases[] = {
      {"fail",
       "m",
       {{"pass", ""}, {"fail", "m"}, {"fail", "m"}},
       "flaky",
       "flaky: fail, pass, fail, fail; the first run: m"},
      {"fail",
       "m",
       {{"fail", "m"}, {"fail", "m"}, {"fail", "m"}},
       "fail",
       "fail in 4 of 4 runs: m"},
      {"fail", "m", {{"fail", "other"}}, "flaky", "flaky: fail, fail; the first run: m"},
      {"error", "pid 1", {{"error", "pid 2"}}, "error", "error in 2 of 2 runs: pid 1"},
      {"xpass", "p", {{"xfail", "f"}}, "flaky", "flaky: xpass, xfail; the first run: p"},
      {"fail", "m", {}, "fail", "m"},  // every rerun cut short
  };
  for (const auto& c : cases) {
    reports::Record first = result(c.status, c.message);
    std::vector<reports::Record> again;
    for (const auto& [s, m] : c.reruns) again.push_back(result(s, m));
    harness::apply_reruns(first, again);
    EXPECT_EQ(first.status_name, c.want_status) << c.want_message;
    EXPECT_EQ(first.status, reports::parse_status(c.want_status)) << c.want_message;
    EXPECT_EQ(first.message, c.want_message);
    EXPECT_EQ(first.reruns.size(), c.reruns.size()) << c.want_message;
  }
}

// results.status.bad: flaky fails a run (runner.harness) and counts in JUnit.
TEST(Reruns, FlakyIsABadStatus) {
  EXPECT_TRUE(reports::is_bad_status("flaky"));
  EXPECT_FALSE(reports::is_bad_status("xfail"));
  harness::Summary s;
  s.counts["pass"] = 3;
  EXPECT_TRUE(s.ok());
  s.counts["flaky"] = 1;
  EXPECT_FALSE(s.ok());
  reports::ResultsFile rf;
  rf.header["schema"] = reports::kSchema;
  rf.records.push_back(result("flaky", "flaky: fail, pass"));
  const std::string x = reports::junit_xml(rf);
  EXPECT_NE(x.find("failures=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<failure type=\"flaky\" message=\"flaky: fail, pass\">"), std::string::npos)
      << x;
}

// ---------------------------------------------------------------------------
// End to end: `simtspec test` through the faulty implementation.

// A compare that the cmp-unsigned fault does not touch.
std::string equal_compare_test() {
  std::string t = test::kSignedCompareTest;
  t.replace(t.find("demo.cmp_signed"), 15, "demo.cmp_equal_");
  t.replace(t.find("cmp.lt p0"), 9, "cmp.eq p0");
  t.replace(t.find("lane < 4 ? 1 : 0"), 16, "lane == 4 ? 1 : 0");
  return t;
}

class BaselineCli : public test::TempDirSuite<BaselineCli> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_baseline_test_";

 protected:
  static void SetUpTestSuite() {
    test::TempDirSuite<BaselineCli>::SetUpTestSuite();
    write_all(suite() / "signed.simt", test::kSignedCompareTest);
    write_all(suite() / "equal.simt", equal_compare_test());
    write_all(dir() / "cmp.toml", test::faulty_runner_toml("cmp-unsigned"));
    write_all(dir() / "none.toml", test::faulty_runner_toml("none"));
  }
  static fs::path suite() { return dir() / "suite"; }
  static std::string q(const fs::path& p) { return test::shell_quote(p.string()); }
  static test::CommandResult simtspec(const std::string& args) {
    return test::run_command(SIMT_BINARY_DIR "/simtspec", "test " + q(suite()) + " --quiet " + args,
                             dir());
  }
  // A run on the reference whose results are the baseline (every configuration passes).
  static fs::path reference_baseline() {
    const fs::path out = dir() / "ref";
    if (!fs::exists(out / "results.jsonl")) {
      auto r = simtspec("--out " + q(out));
      EXPECT_EQ(r.code, 0) << r.out << r.err;
    }
    return out / "results.jsonl";
  }
  static std::vector<std::string> lines_starting(const std::string& text,
                                                 const std::string& prefix) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      if (l.rfind(prefix, 0) == 0) out.push_back(l);
    return out;
  }
};

// results.baseline: a planted fault is exactly one regression (the filter keeps
// one configuration of each test), exit 1; the summaries say so.
TEST_F(BaselineCli, PlantedFaultIsExactlyTheRegression) {
  const fs::path base = reference_baseline();
  const fs::path out = dir() / "planted";
  auto r = simtspec("--runner " + q(dir() / "cmp.toml") + " --filter 'demo.*@wave=8' --baseline " +
                    q(base) + " --out " + q(out));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto regressions = lines_starting(r.out, "regression: ");
  ASSERT_EQ(regressions.size(), 1u) << r.out;
  EXPECT_EQ(regressions[0].substr(0, 51), "regression: demo.cmp_signed[wave=8]: pass -> fail: ")
      << regressions[0];
  EXPECT_NE(r.out.find("baseline: 1 regression, 0 progression, 0 known, 1 unchanged, 0 new, 0 "
                       "vanished\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_all(out / "baseline.csv"),
            "test,config,baseline,status,verdict,reason\r\n"
            "demo.cmp_equal_,wave=8,pass,pass,unchanged,\r\n"
            "demo.cmp_signed,wave=8,pass,fail,regression,\"buffer 'out' element 0 (lane 0 of warp "
            "0) is 0, expected 1\"\r\n");
  const std::string junit = read_all(out / "baseline.junit.xml");
  EXPECT_NE(junit.find("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\""), std::string::npos)
      << junit;
  EXPECT_NE(junit.find("name=\"demo.cmp_signed[wave=8]\">\n      <failure type=\"regression\""),
            std::string::npos)
      << junit;
  EXPECT_NE(junit.find("name=\"demo.cmp_equal_[wave=8]\"/>"), std::string::npos) << junit;
  // Without --out nothing is written: only the console.
  r = simtspec("--runner " + q(dir() / "cmp.toml") + " --baseline " + q(base));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(lines_starting(r.out, "regression: ").size(), 2u) << r.out;
}

// results.baseline: a run id names a run of the results store (--db); the same
// planted fault is the same regression as against the run's results file, a clean
// run exits 0, and an id the store lacks is bad input.
TEST_F(BaselineCli, ARunIdOfTheStoreIsABaseline) {
  const fs::path db = dir() / "ids" / "results.db";
  auto r = simtspec("--filter 'demo.*@wave=8' --db " + q(db));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  r = simtspec("--runner " + q(dir() / "cmp.toml") + " --filter 'demo.*@wave=8' --db " + q(db) +
               " --baseline 1");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto regressions = lines_starting(r.out, "regression: ");
  ASSERT_EQ(regressions.size(), 1u) << r.out;
  EXPECT_EQ(regressions[0].substr(0, 51), "regression: demo.cmp_signed[wave=8]: pass -> fail: ")
      << regressions[0];
  r = simtspec("--filter 'demo.*@wave=8' --db " + q(db) + " --baseline 2");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(lines_starting(r.out, "progression: ").size(), 1u) << r.out;
  r = simtspec("--filter 'demo.*@wave=8' --db " + q(db) + " --baseline 99");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("has no run 99"), std::string::npos) << r.err;
}

// results.baseline: a clean run exits 0; failures the baseline has exit 0 too;
// progressions are printed.
TEST_F(BaselineCli, CleanRunsAndProgressionsExitZero) {
  const fs::path base = reference_baseline();
  auto r = simtspec("--runner " + q(dir() / "none.toml") + " --baseline " + q(base));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("baseline: 0 regression, 0 progression, 0 known, 4 unchanged, 0 new, 0 "
                       "vanished\n"),
            std::string::npos)
      << r.out;
  const fs::path bad = dir() / "bad";
  r = simtspec("--runner " + q(dir() / "cmp.toml") + " --out " + q(bad));
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  r = simtspec("--runner " + q(dir() / "cmp.toml") + " --baseline " + q(bad / "results.jsonl"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(lines_starting(r.out, "fail: ").size(), 2u) << r.out;
  EXPECT_NE(r.out.find("baseline: 0 regression, 0 progression, 0 known, 4 unchanged"),
            std::string::npos)
      << r.out;
  r = simtspec("--baseline " + q(bad / "results.jsonl"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto progressions = lines_starting(r.out, "progression: ");
  ASSERT_EQ(progressions.size(), 2u) << r.out;
  EXPECT_EQ(progressions[0], "progression: demo.cmp_signed[wave=64]: fail -> pass");
  EXPECT_EQ(progressions[1], "progression: demo.cmp_signed[wave=8]: fail -> pass");
}

// results.rerun: every bad result is rerun, but against a baseline only those
// that would be regressions; a failure that agrees keeps its status.
TEST_F(BaselineCli, OnlyWouldBeRegressionsAreRerun) {
  const fs::path failing = dir() / "rerun-base";
  auto r =
      simtspec("--runner " + q(dir() / "cmp.toml") + " --rerun-failures 2 --out " + q(failing));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto fails = lines_starting(r.out, "fail: ");
  ASSERT_EQ(fails.size(), 2u) << r.out;
  EXPECT_NE(fails[0].find(": fail in 3 of 3 runs: buffer 'out' element "), std::string::npos)
      << fails[0];
  EXPECT_NE(read_all(failing / "results.jsonl").find("\"reruns\":[\"fail\",\"fail\"]"),
            std::string::npos);
  const fs::path again = dir() / "rerun-again";
  r = simtspec("--runner " + q(dir() / "cmp.toml") + " --rerun-failures 2 --baseline " +
               q(failing / "results.jsonl") + " --out " + q(again));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::string jsonl = read_all(again / "results.jsonl");
  EXPECT_EQ(jsonl.find("\"reruns\""), std::string::npos) << jsonl;
  EXPECT_EQ(jsonl.find(" of 3 runs"), std::string::npos) << jsonl;
}

// results.known, results.known.stale: an entry beside the runner description
// excuses the regression; one that excused nothing is reported as stale, and is
// not fatal.
TEST_F(BaselineCli, KnownEntriesExcuseRegressions) {
  const fs::path base = reference_baseline();
  const fs::path runner = dir() / "known" / "cmp.toml";
  write_all(runner, test::faulty_runner_toml("cmp-unsigned"));
  write_all(dir() / "known" / "cmp.known.toml", R"([[known]]
test = "demo.cmp_signed"
config = "wave=8"
status = "fail"
reason = "planted: cmp-unsigned"

[[known]]
test = "demo.removed"
status = "fail"
reason = "a test the suite no longer has"
)");
  const fs::path out = dir() / "known-out";
  auto r = simtspec("--runner " + q(runner) + " --filter 'demo.*@wave=8' --baseline " + q(base) +
                    " --out " + q(out));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(lines_starting(r.out, "regression: ").empty()) << r.out;
  EXPECT_NE(r.out.find("baseline: 0 regression, 0 progression, 1 known, 1 unchanged"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: " + (dir() / "known" / "cmp.known.toml").string() +
                       ":7: known fail entry for demo.removed excused nothing in this run"),
            std::string::npos)
      << r.out;
  EXPECT_NE(read_all(out / "baseline.csv")
                .find("\r\ndemo.cmp_signed,wave=8,pass,fail,known,planted: cmp-unsigned\r\n"),
            std::string::npos);
  EXPECT_NE(read_all(out / "baseline.junit.xml")
                .find("<skipped message=\"known fail: planted: cmp-unsigned\"/>"),
            std::string::npos);
  // Without the filter, wave=64 is not excused.
  r = simtspec("--runner " + q(runner) + " --baseline " + q(base));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(lines_starting(r.out, "regression: demo.cmp_signed[wave=64]").size(), 1u) << r.out;
}

// Bad input is exit 2 with a message, before anything runs.
TEST_F(BaselineCli, BadInputExitsTwo) {
  const fs::path base = reference_baseline();
  const fs::path runner = dir() / "malformed" / "cmp.toml";
  write_all(runner, test::faulty_runner_toml("cmp-unsigned"));
  const fs::path known = dir() / "malformed" / "cmp.known.toml";
  write_all(known, "[[known]]\ntest = \"demo.*\"\nstatus = \"sometimes\"\nreason = \"r\"\n");
  struct Case {
    std::string args, err;
  };
  const Case cases[] = {
      {"--runner " + q(runner) + " --baseline " + q(base),
       known.string() + ":3: known.status: 'sometimes' is not fail, error or flaky"},
      {"--baseline 12 --db " + q(dir() / "absent.db"), "simtspec: --baseline 12: no results store"},
      {"--baseline 12 --no-db", "a run id needs the results store, not --no-db"},
      {"--baseline " + q(dir() / "missing.jsonl"), "simtspec: --baseline: cannot open"},
      {"--baseline " + q(known), "simtspec: --baseline: "},
      {"--known " + q(known), "simtspec: --known needs --baseline"},
      {"--rerun-failures 11", "--rerun-failures"},
  };
  for (const auto& c : cases) {
    auto r = simtspec(c.args);
    ASSERT_TRUE(r.exited) << c.args;
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out.find("fail: "), std::string::npos) << c.args << "\n" << r.out;
  }
}

// results.rerun: random-fail with a fixed seed and one job answers the same
// sequence every time; three reruns classify exactly these configurations.
TEST_F(BaselineCli, RerunsClassifyARandomFailureAsFlaky) {
  std::string toml = test::faulty_runner_toml("random-fail");
  toml.replace(toml.find("\"random-fail\"]"), 14,
               "\"random-fail\", \"--fail-seed\", \"7\", \"--fail-rate\", \"0.3\"]");
  write_all(dir() / "random.toml", toml);
  const fs::path out = dir() / "random";
  auto r = simtspec("--runner " + q(dir() / "random.toml") + " --jobs 1 --rerun-failures 3 --out " +
                    q(out));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::string flaky;
  for (const auto& l : lines_starting(r.out, "flaky: ")) flaky += l.substr(0, l.find(";")) + "\n";
  EXPECT_EQ(flaky,
            "flaky: demo.cmp_equal_[wave=64]: flaky: fail, pass, pass, fail\n"
            "flaky: demo.cmp_signed[wave=64]: flaky: fail, fail, pass, pass\n")
      << r.out;
  EXPECT_NE(r.out.find(": 2 pass 0 fail 0 unsupported 0 error 0 xfail 0 xpass 2 flaky\n"),
            std::string::npos)
      << r.out;
  const std::string jsonl = read_all(out / "results.jsonl");
  EXPECT_NE(jsonl.find("\"reruns\":["), std::string::npos) << jsonl;
  EXPECT_NE(read_all(out / "junit.xml").find("<failure type=\"flaky\""), std::string::npos);
  // Without reruns the same sequence is a plain failure.
  r = simtspec("--runner " + q(dir() / "random.toml") + " --jobs 1");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(lines_starting(r.out, "flaky: ").empty()) << r.out;
  EXPECT_FALSE(lines_starting(r.out, "fail: ").empty()) << r.out;
}

}  // namespace
}  // namespace simt
