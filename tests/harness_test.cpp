// The conformance harness: test-file parsing and lint (format.*), expressions,
// comparison (runner.harness, runner.differential, runner.firstdiff), the
// process protocol and its isolation of crashing, hanging and garbage-talking
// implementations (runner.protocol.*), shards, and results files (results.*).
#include <gtest/gtest.h>
#include <limits>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "compare.h"
#include "expr.h"
#include "format.h"
#include "harness.h"
#include "lint.h"
#include "process.h"
#include "protocol.h"
#include "reference.h"
#include "results.h"
#include "support.h"
#include "sysroutine.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using harness::TestFile;

const char* kGood = R"(; simtspec-test 1
; id = "demo.add"
; title = "add doubles each lane"
; clauses = ["alu.add"]
; features = ["alu"]
; [matrix]
; wave = [8, 32]
; policy = ["round_robin", "random"]
; [expect]
; status = "completed"
; [expect.buffers.out]
; each = "lane * 2"
.buffer out u32[threads] out
    shl v9, %lane, 2
    add v1, %lane, %lane
    st out[v9], v1
    exit
)";

TestFile parse_ok(const std::string& text) {
  auto r = harness::parse_test("t.simt", text);
  if (auto* errs = std::get_if<std::vector<harness::FormatError>>(&r)) {
    for (auto& e : *errs) ADD_FAILURE() << e.line << ": " << e.message;
    return {};
  }
  EXPECT_TRUE(std::holds_alternative<TestFile>(r));
  return std::get<TestFile>(r);
}

std::vector<harness::FormatError> parse_errors(const std::string& text) {
  auto r = harness::parse_test("t.simt", text);
  auto* errs = std::get_if<std::vector<harness::FormatError>>(&r);
  EXPECT_NE(errs, nullptr) << "expected format errors";
  return errs ? *errs : std::vector<harness::FormatError>{};
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

// format.header, format.fields, format.matrix
TEST(Format, ParsesHeaderAndExpandsMatrixInOrder) {
  TestFile t = parse_ok(kGood);
  EXPECT_EQ(t.id, "demo.add");
  EXPECT_EQ(t.clauses, std::vector<std::string>{"alu.add"});
  ASSERT_EQ(t.configs.size(), 4u);
  EXPECT_EQ(t.configs[0].key(), "wave=8,policy=round_robin");
  EXPECT_EQ(t.configs[1].key(), "wave=8,policy=random");
  EXPECT_EQ(t.configs[3].key(), "wave=32,policy=random");
  EXPECT_EQ(t.header_lines, 12u);
  EXPECT_EQ(t.expect.status, "completed");
  ASSERT_EQ(t.expect.buffers.size(), 1u);
  EXPECT_TRUE(t.expect.buffers[0].each.has_value());
}

// format.header: a file without the magic line is not a test; another version is an error.
TEST(Format, MagicLineAndVersion) {
  EXPECT_TRUE(
      std::holds_alternative<harness::NotATest>(harness::parse_test("x", ".wave 8\n exit\n")));
  auto errs = parse_errors(replace(kGood, "simtspec-test 1", "simtspec-test 2"));
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].line, 1u);
}

// format.fields: required keys, unknown keys, bad ids, unknown features, with lines.
TEST(Format, RejectsMalformedHeadersWithLines) {
  auto errs = parse_errors(replace(kGood, "; title = \"add doubles each lane\"\n", ""));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].message.find("title"), std::string::npos);
  errs = parse_errors(
      replace(kGood, "; features = [\"alu\"]", "; features = [\"alu\"]\n; colour = \"red\""));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].line, 6u);
  EXPECT_NE(errs[0].message.find("colour"), std::string::npos);
  errs = parse_errors(replace(kGood, "\"demo.add\"", "\"Demo Add\""));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].line, 2u);
  errs = parse_errors(replace(kGood, "[\"alu\"]", "[\"gpu\"]"));
  ASSERT_EQ(errs.size(), 1u);
  errs = parse_errors(replace(kGood, "; wave = [8, 32]", "; wave = [8, 32\n"));  // not TOML
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].message.find("TOML"), std::string::npos);
  // format.expr: an unknown variable is an error of the header, at its line (it
  // was accepted, and every run failed; found by fuzz_testfile).
  errs = parse_errors(replace(kGood, "; each = \"lane * 2\"", "; each = \"lane * workgrps\""));
  ASSERT_GE(errs.size(), 1u);  // then: the test checks no buffer (format.expect.nonempty)
  EXPECT_EQ(errs[0].line, 12u);
  EXPECT_EQ(errs[0].message.find("expect.buffers.out.each: unknown variable 'workgrps'"), 0u)
      << errs[0].message;
}

// format.expect, format.expect.nonempty
TEST(Format, ExpectationsMustCheckSomething) {
  auto errs = parse_errors(replace(kGood, "; [expect.buffers.out]\n; each = \"lane * 2\"\n", ""));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].message.find("at least one buffer"), std::string::npos);
  errs = parse_errors(
      replace(kGood, "status = \"completed\"\n; [expect.buffers.out]\n; each = \"lane * 2\"\n",
              "status = \"trapped\"\n"));
  ASSERT_EQ(errs.size(), 1u) << errs[0].message << " / " << errs.back().message;
  EXPECT_NE(errs[0].message.find("name the event"), std::string::npos);
  errs = parse_errors(replace(kGood, "status = \"completed\"", "status = \"finished\""));
  EXPECT_FALSE(errs.empty());
  errs = parse_errors(replace(kGood, "each = \"lane * 2\"", "each = \"lane * (2\""));
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].line, 12u);
  EXPECT_NE(errs[0].message.find("expected ')'"), std::string::npos) << errs[0].message;
  errs = parse_errors(replace(kGood, "; [expect]\n", "; [expectation]\n"));
  EXPECT_FALSE(errs.empty());
}

// format.expr
TEST(Expr, EvaluatesLikeC) {
  auto eval = [](const std::string& text, int64_t i = 5) -> int64_t {
    auto e = harness::Expr::parse(text);
    EXPECT_TRUE(std::holds_alternative<harness::Expr>(e)) << std::get<std::string>(e);
    auto r = std::get<harness::Expr>(e).eval(harness::element_vars(i, 4, 4, 2, 3, 1));
    EXPECT_TRUE(std::holds_alternative<int64_t>(r)) << std::get<std::string>(r);
    return std::get<int64_t>(r);
  };
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("lane"), 1);
  EXPECT_EQ(eval("gwarp"), 1);
  EXPECT_EQ(eval("warp + 10 * wg", 13), 1 + 10 * 1);
  EXPECT_EQ(eval("threads"), 24);
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_EQ(eval("1 << 4 | 1"), 17);
  EXPECT_EQ(eval("i < 3 ? 10 : 20"), 20);
  EXPECT_EQ(eval("lane == 1 && !(i > 9)"), 1);
  EXPECT_EQ(eval("min(3, -4) + max(2, 9) + abs(-6) + popc(0xff)"), -4 + 9 + 6 + 8);
  EXPECT_EQ(eval("~0"), -1);
  auto bad = harness::Expr::parse("1 / (lane - 1)");
  ASSERT_TRUE(std::holds_alternative<harness::Expr>(bad));
  EXPECT_TRUE(std::holds_alternative<std::string>(
      std::get<harness::Expr>(bad).eval(harness::element_vars(1, 4, 4, 1, 1, 1))));
  for (const char* s : {"", "1 +", "foo(1)", "(1", "1 2", "0x", "min(1)", "lane @ 2"})
    EXPECT_TRUE(std::holds_alternative<std::string>(harness::Expr::parse(s))) << s;
  // An unknown variable is an error when the expression is read, even where it
  // would never be evaluated (it was one at evaluation: every run of the test
  // failed, with no first difference; found by fuzz_testfile).
  for (const char* s : {"nope + 1", "0 && nope", "lane ? 1 : workgrps"}) {
    auto unknown = harness::Expr::parse(s);
    ASSERT_TRUE(std::holds_alternative<std::string>(unknown)) << s;
    EXPECT_EQ(std::get<std::string>(unknown).find("unknown variable '"), 0u)
        << std::get<std::string>(unknown);
  }
  EXPECT_NE(std::get<std::string>(harness::Expr::parse("x"))
                .find("(the variables are cores, gwarp, i, lane, simd, threads, warp, warps, wave, "
                      "wg, workgroups)"),
            std::string::npos);
}

runners::RunResult outcome(const std::string& status, std::vector<int64_t> values) {
  runners::RunResult r;
  r.kind = runners::RunResult::Kind::Outcome;
  r.outcome.status = status;
  r.outcome.buffers.push_back({"out", "u32", std::move(values)});
  return r;
}

// runner.harness, runner.firstdiff
TEST(Compare, FirstDifferenceNamesElementLaneAndWarp) {
  TestFile t = parse_ok(kGood);
  harness::Layout l;
  l.wave = 4;
  l.warps = 2;
  l.buffer_len["out"] = 8;
  auto v = harness::check_expectation(t.expect, outcome("completed", {0, 2, 4, 6, 0, 2, 4, 6}), l);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.checks, 9u);  // status + 8 elements
  v = harness::check_expectation(t.expect, outcome("completed", {0, 2, 4, 6, 0, 99, 4, 6}), l);
  ASSERT_FALSE(v.ok);
  EXPECT_EQ(v.first_diff.find("index")->as_int(), 5);
  EXPECT_EQ(v.first_diff.find("lane")->as_int(), 1);
  EXPECT_EQ(v.first_diff.find("warp")->as_int(), 1);
  EXPECT_EQ(v.first_diff.find("gwarp")->as_int(), 1);
  EXPECT_EQ(v.first_diff.find("wg")->as_int(), 0);
  EXPECT_EQ(v.first_diff.find("against")->as_string(), "expectation");
  EXPECT_EQ(v.first_diff.find("expected")->as_int(), 2);
  EXPECT_EQ(v.first_diff.find("actual")->as_int(), 99);
  v = harness::check_expectation(t.expect, outcome("completed", {0, 2, 4}), l);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("3 elements, expected 8"), std::string::npos);
  v = harness::check_expectation(t.expect, outcome("deadlock", {}), l);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_diff.find("field")->as_string(), "status");
  // Values compare modulo the element type.
  TestFile neg = parse_ok(replace(kGood, "each = \"lane * 2\"", "each = \"-1\""));
  l.buffer_len["out"] = 2;
  EXPECT_TRUE(
      harness::check_expectation(neg.expect, outcome("completed", {0xffffffff, 0xffffffff}), l).ok);
  // format.expect.nonempty: an empty buffer compares nothing.
  l.buffer_len["out"] = 0;
  v = harness::check_expectation(t.expect, outcome("completed", {}), l);
  EXPECT_FALSE(v.vacuous.empty());
}

// runner.differential
TEST(Compare, DifferentialComparesEveryBufferAndEvent) {
  harness::Layout l;
  l.wave = 8;
  auto ref = outcome("completed", {1, 2, 3});
  ref.outcome.buffers.push_back({"extra", "i32", {-1}});
  auto same = ref;
  EXPECT_TRUE(harness::compare_with_reference(ref, same, l).ok);
  auto other = ref;
  other.outcome.buffers[1].values[0] = 7;
  auto v = harness::compare_with_reference(ref, other, l);
  ASSERT_FALSE(v.ok);
  EXPECT_EQ(v.first_diff.find("buffer")->as_string(), "extra");
  auto trapped = ref;
  trapped.outcome.status = "trapped";
  trapped.outcome.event = model::Event{"div_zero", 0, 3, 2, 0, "", std::nullopt, ""};
  auto trapped2 = trapped;
  trapped2.outcome.event->lane = 4;
  v = harness::compare_with_reference(trapped, trapped2, l);
  ASSERT_FALSE(v.ok);
  // runner.firstdiff: the differing event field and both values.
  EXPECT_EQ(v.first_diff.find("field")->as_string(), "event.lane");
  EXPECT_EQ(v.message, "event lane is 4, the reference's is 2");
  EXPECT_EQ(v.first_diff.find("expected")->as_int(), 2);
  EXPECT_EQ(v.first_diff.find("actual")->as_int(), 4);
  auto no_lane = trapped;
  no_lane.outcome.event->lane = -1;
  v = harness::compare_with_reference(trapped, no_lane, l);
  ASSERT_FALSE(v.ok);
  EXPECT_EQ(v.message, "event lane is none, the reference's is 2");
  auto other_pc = trapped;
  other_pc.outcome.event->pc = 9;
  v = harness::compare_with_reference(trapped, other_pc, l);
  EXPECT_EQ(v.message, "event pc is 9, the reference's is 3");
}

// format.expect.event: lane = "none" requires an event without a lane; a number
// requires that lane (an event without one fails).
TEST(Compare, ExpectedEventLaneNone) {
  auto t = parse_ok(R"(; simtspec-test 1
; id = "demo.none"
; title = "t"
; clauses = ["event.lane"]
; features = ["alu"]
; [expect]
; status = "trapped"
; [expect.event]
; name = "div_zero"
; lane = "none"
    div s0, 1, 0
    exit
)");
  harness::Layout l;
  l.wave = 4;
  auto scalar = outcome("trapped", {});
  scalar.outcome.event = model::Event{"div_zero", 0, 0, -1, 0, "", std::nullopt, ""};
  EXPECT_TRUE(harness::check_expectation(t.expect, scalar, l).ok);
  auto lane0 = scalar;
  lane0.outcome.event->lane = 0;
  auto v = harness::check_expectation(t.expect, lane0, l);
  ASSERT_FALSE(v.ok);
  EXPECT_EQ(v.first_diff.find("field")->as_string(), "event.lane");
  auto t2 =
      parse_ok(replace(replace(t.source, "lane = \"none\"", "lane = 0"), "demo.none", "demo.zero"));
  EXPECT_TRUE(harness::check_expectation(t2.expect, lane0, l).ok);
  v = harness::check_expectation(t2.expect, scalar, l);
  ASSERT_FALSE(v.ok);
  EXPECT_EQ(v.message, "event has no lane, expected lane 0");
}

fs::path temp_dir(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("simtspec_harness_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

// format.lint
TEST(Lint, ReportsUnknownClausesDuplicateIdsAndBrokenPrograms) {
  fs::path dir = temp_dir("lint");
  write(dir / "a.simt", kGood);
  write(dir / "b.simt", kGood);  // duplicate id
  write(dir / "c.simt",
        replace(replace(kGood, "demo.add", "demo.c"), "alu.add", "alu.nonexistent"));
  write(dir / "d.simt",
        replace(replace(kGood, "demo.add", "demo.d"), "add v1, %lane, %lane", "add v1, %lane"));
  write(dir / "e.simt", ".wave 8\n    exit\n");  // no header
  std::string err;
  auto files = harness::discover({dir.string()}, err);
  ASSERT_EQ(files.size(), 5u);
  auto suite = harness::load_suite(files);
  auto clauses = harness::load_clauses(test::source_path("spec"));
  ASSERT_TRUE(clauses.count("alu.add"));
  auto issues = harness::lint(suite, clauses);
  std::set<std::string> msgs;
  for (const auto& i : issues) msgs.insert(fs::path(i.file).filename().string() + ": " + i.message);
  auto has = [&](const std::string& file, const std::string& text) {
    for (const auto& m : msgs)
      if (m.rfind(file, 0) == 0 && m.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("b.simt", "duplicate test id")) << ::testing::PrintToString(msgs);
  EXPECT_TRUE(has("c.simt", "unknown spec clause 'alu.nonexistent'"));
  EXPECT_TRUE(has("d.simt", "does not load"));
  EXPECT_TRUE(has("e.simt", "not a test"));
  EXPECT_EQ(issues.size(), 4u) << ::testing::PrintToString(msgs);
  fs::remove_all(dir);
}

// format.lint, format.lint.steps, state.launch.check: every problem has a line: an
// unknown clause at its entry, a missing [expect] at the header's first line, a
// matrix value outside the limits at its [matrix] line (named as such), a step
// cap above the bound at its directive.
TEST(Lint, ProblemsAreReportedAtTheirLines) {
  fs::path dir = temp_dir("lint_lines");
  // kGood: line 4 is clauses, line 7 is the matrix's wave.
  write(dir / "a.simt", replace(kGood, "[\"alu.add\"]", "[\"alu.add\",\n; \"alu.nonexistent\"]"));
  write(dir / "b.simt",
        replace(
            replace(kGood, "demo.add", "demo.b"),
            "; [expect]\n; status = \"completed\"\n; [expect.buffers.out]\n; each = \"lane * 2\"\n",
            ""));
  write(dir / "c.simt",
        replace(replace(kGood, "demo.add", "demo.c"), "wave = [8, 32]", "wave = [8, 3]"));
  write(dir / "d.simt", replace(replace(kGood, "demo.add", "demo.d"), ".buffer out",
                                ".max_steps 10000001\n.buffer out"));
  write(dir / "e.simt", replace(replace(kGood, "demo.add", "demo.e"), ".buffer out",
                                ".max_steps 10000000\n.buffer out"));  // at the bound: fine
  // Above the bound, but the test expects a rejection: its program never runs.
  write(dir / "f.simt",
        replace(replace(replace(replace(kGood, "demo.add", "demo.f"), ".buffer out",
                                ".max_steps 10000001\n.buffer out"),
                        "; status = \"completed\"\n; [expect.buffers.out]\n; each = \"lane * 2\"\n",
                        "; status = \"rejected\"\n"),
                "    exit\n", "    exit\n    bogus\n"));
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  auto issues = harness::lint(suite, harness::load_clauses(test::source_path("spec")));
  std::set<std::string> got;
  for (const auto& i : issues)
    got.insert(fs::path(i.file).filename().string() + ":" + std::to_string(i.line) + ": " +
               i.message);
  EXPECT_EQ(
      got, (std::set<std::string>{
               "a.simt:5: unknown spec clause 'alu.nonexistent'",
               "b.simt:1: missing [expect]: a test must state its expected outcome",
               "c.simt:7: the program does not load with wave=3,policy=round_robin: [matrix] wave: "
               "wave 3 "
               "must be a power of two from 1 to 64",
               "d.simt:13: .max_steps 10000001 is above 10000000, the most a suite test may "
               "set (format.lint.steps)"}))
      << ::testing::PrintToString(got);
  fs::remove_all(dir);
}

// Shards partition the configurations: their union is the whole run, with no overlap.
TEST(Harness, ShardsPartitionTheRun) {
  fs::path dir = temp_dir("shards");
  for (int k = 0; k < 5; ++k)
    write(dir / ("t" + std::to_string(k) + ".simt"),
          replace(kGood, "demo.add", "demo.t" + std::to_string(k)));
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  harness::Options all;
  auto whole = harness::select(suite, all);
  ASSERT_EQ(whole.size(), 20u);
  for (uint32_t n : {1u, 3u, 7u, 25u}) {
    std::multiset<std::string> seen;
    for (uint32_t i = 0; i < n; ++i) {
      harness::Options o;
      o.shard_index = i;
      o.shard_count = n;
      for (const auto& c : harness::select(suite, o))
        seen.insert(c.test->id + "[" + c.settings.key() + "]");
    }
    std::multiset<std::string> expected;
    for (const auto& c : whole) expected.insert(c.test->id + "[" + c.settings.key() + "]");
    EXPECT_EQ(seen, expected) << "shards of " << n;
  }
  harness::Options f;
  f.filter = "demo.t[12]";
  EXPECT_EQ(harness::select(suite, f).size(), 8u);
  fs::remove_all(dir);
}

// runner.harness: statuses from a whole run on the reference, xfail and xpass.
TEST(Harness, RunsOnTheReferenceAndMapsExpectedFailures) {
  fs::path dir = temp_dir("run");
  write(dir / "good.simt", kGood);
  write(dir / "wrong.simt",
        replace(replace(kGood, "demo.add", "demo.wrong"), "lane * 2", "lane * 3"));
  write(dir / "broken.simt", replace(kGood, "; title", "; titel"));
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  auto runner = runners::make_reference_runner();
  harness::Options o;
  o.jobs = 2;
  std::vector<json::Value> recs;
  auto sum = harness::run(*runner, suite, harness::select(suite, o), o,
                          [&](const reports::Record& r) { recs.push_back(reports::to_json(r)); });
  EXPECT_EQ(sum.total, 9u);
  EXPECT_EQ(sum.counts["pass"], 4u);
  EXPECT_EQ(sum.counts["fail"], 4u);
  EXPECT_EQ(sum.counts["error"], 1u);  // the malformed file
  EXPECT_FALSE(sum.ok());
  for (const auto& r : recs) {
    if (r.find("status")->as_string() != "fail") continue;
    EXPECT_EQ(r.find("first_diff")->find("index")->as_int(), 1);
    EXPECT_FALSE(r.find("trace")->as_array().empty());
    EXPECT_NE(r.find("reproduce")->as_string().find(" run "), std::string::npos);
  }
  EXPECT_TRUE(harness::matches_xfail({"demo.w*"}, "demo.wrong", "wave=8"));
  EXPECT_TRUE(
      harness::matches_xfail({"demo.wrong@wave=8,*"}, "demo.wrong", "wave=8,policy=random"));
  EXPECT_FALSE(
      harness::matches_xfail({"demo.wrong@wave=32*"}, "demo.wrong", "wave=8,policy=random"));
  fs::remove_all(dir);
}

// An in-process runner with the reference's capabilities whose answers come from a
// function (which sees every request, from one thread at a time).
class FunctionRunner final : public runners::Runner {
 public:
  using Fn = std::function<runners::RunResult(const runners::RunRequest&)>;
  explicit FunctionRunner(Fn fn) : fn_(std::move(fn)) { caps_ = ref_->capabilities(); }
  std::string name() const override { return "function"; }
  std::string version() const override { return "1"; }
  const runners::Capabilities& capabilities() const override { return caps_; }
  std::vector<std::string> xfail() const override { return xfail_; }
  runners::Capabilities caps_;
  std::vector<std::string> xfail_;
  runners::RunResult run(const runners::RunRequest& req) override {
    std::lock_guard<std::mutex> g(mu_);
    return fn_(req);
  }

 private:
  Fn fn_;
  std::unique_ptr<runners::Runner> ref_ = runners::make_reference_runner();
  std::mutex mu_;
};

// The records of one test file run on `runner` (one configuration per record).
std::vector<json::Value> run_one(runners::Runner& runner, const std::string& name,
                                 const std::string& text, harness::Options o,
                                 harness::Summary* summary = nullptr) {
  fs::path dir = temp_dir("one_" + name);
  write(dir / (name + ".simt"), text);
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  EXPECT_TRUE(suite.bad.empty());
  std::vector<json::Value> recs;
  auto sum = harness::run(runner, suite, harness::select(suite, o), o,
                          [&](const reports::Record& r) { recs.push_back(reports::to_json(r)); });
  if (summary) *summary = sum;
  fs::remove_all(dir);
  return recs;
}

std::string status_of(const json::Value& rec) {
  return rec.find("status")->as_string();
}

const char* kLivelockTest = R"(; simtspec-test 1
; id = "demo.livelock"
; title = "a counter modulo 4 repeats the state: livelock at step 31"
; clauses = ["exec.livelock"]
; features = ["alu", "mem", "branch"]
; [expect]
; status = "livelock"
; [expect.buffers.out]
; values = [3]
.wave 1
.max_steps 31
.buffer out u32[1] out
    mov s0, 0
    mov s1, 0
l:  add s0, s0, 1
    and s0, s0, 3
    st out[0], s0
    jmp l
)";

// runner.harness: the verdicts a certificate rests on. Each answer below differs
// from the expectation in one way only, and each must make the configuration fail.
TEST(Harness, VerdictsThatDecideACertificate) {
  harness::Options o;
  o.differential = false;  // the expectation alone decides
  // An expected livelock met by step_limit (same buffers, same step) fails.
  FunctionRunner step_limit([](const runners::RunRequest& req) {
    auto r = runners::run_reference(req);
    EXPECT_EQ(r.outcome.status, "livelock");
    r.outcome.status = "step_limit";
    return r;
  });
  auto recs = run_one(step_limit, "livelock", kLivelockTest, o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_EQ(recs[0].find("message")->as_string(), "status is step_limit, expected livelock");
  // The unchanged answer passes (so the failure above is the status's doing).
  FunctionRunner same([](const runners::RunRequest& req) { return runners::run_reference(req); });
  recs = run_one(same, "livelock", kLivelockTest, o);
  EXPECT_EQ(status_of(recs[0]), "pass");

  // An output buffer one element longer than expected fails, for `values` and for
  // `each` (which checks the length the program declares).
  FunctionRunner longer([](const runners::RunRequest& req) {
    auto r = runners::run_reference(req);
    for (auto& b : r.outcome.buffers) b.values.push_back(b.values.empty() ? 0 : b.values.back());
    return r;
  });
  recs = run_one(longer, "livelock", kLivelockTest, o);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_EQ(recs[0].find("message")->as_string(), "buffer 'out' has 2 elements, expected 1");
  recs = run_one(longer, "good", kGood, o);
  ASSERT_EQ(recs.size(), 4u);
  for (const auto& r : recs) {
    EXPECT_EQ(status_of(r), "fail");
    EXPECT_NE(r.find("message")->as_string().find("elements, expected"), std::string::npos);
  }

  // An event field the expectation names (here the code of a system call, and the
  // warp) must match: a code one off fails.
  const std::string syscall_test = R"(; simtspec-test 1
; id = "demo.syscall"
; title = "without a handler, a system call ends the launch trapped with its code"
; clauses = ["trap.none"]
; features = ["alu", "trap"]
; [expect]
; status = "trapped"
; [expect.event]
; name = "syscall"
; warp = 0
; code = 42
    mov s0, 1
    sys 42
    exit
)";
  FunctionRunner code_off([](const runners::RunRequest& req) {
    auto r = runners::run_reference(req);
    if (r.outcome.event && r.outcome.event->code) *r.outcome.event->code += 1;
    return r;
  });
  recs = run_one(code_off, "syscall", syscall_test, o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_EQ(recs[0].find("message")->as_string(), "event code is 43, expected 42");
  recs = run_one(same, "syscall", syscall_test, o);
  EXPECT_EQ(status_of(recs[0]), "pass");

  // A test on the expected-failure list that passes is `xpass`, and the run is not ok.
  FunctionRunner listed([](const runners::RunRequest& req) { return runners::run_reference(req); });
  listed.xfail_ = {"demo.livelock"};
  harness::Summary sum;
  recs = run_one(listed, "livelock", kLivelockTest, o, &sum);
  EXPECT_EQ(status_of(recs[0]), "xpass");
  EXPECT_EQ(sum.counts["xpass"], 1u);
  EXPECT_FALSE(sum.ok());
  // ... and one that fails is `xfail`, which leaves the run ok.
  step_limit.xfail_ = {"demo.*"};
  recs = run_one(step_limit, "livelock", kLivelockTest, o, &sum);
  EXPECT_EQ(status_of(recs[0]), "xfail");
  EXPECT_TRUE(sum.ok());
}

// format.requires, runner.capabilities: a configuration that needs an extra the runner
// lacks (validate, livelock, no_validate, host) is unsupported, names the extra, and
// never reaches the runner.
// format.expect.nonempty: an `each` over a buffer that is empty in a configuration
// compares no value, which is an `error`, never a `pass`.
TEST(Harness, AnEachOverAnEmptyBufferIsAnError) {
  const std::string test = R"(; simtspec-test 1
; id = "demo.empty_each"
; title = "an each over a buffer whose size is 0 at wave 8"
; clauses = ["format.expect.nonempty"]
; features = ["alu", "mem"]
; [matrix]
; wave = [8, 16]
; [expect]
; status = "completed"
; [expect.buffers.out]
; each = "0"
.buffer out u32[wave - 8] out
    exit
)";
  FunctionRunner same([](const runners::RunRequest& req) { return runners::run_reference(req); });
  auto recs = run_one(same, "empty_each", test, harness::Options{});
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(status_of(recs[0]), "error");
  EXPECT_EQ(recs[0].find("message")->as_string(),
            "expect.buffers.out compared no element (the buffer is empty) "
            "(format.expect.nonempty)");
  EXPECT_EQ(status_of(recs[1]), "pass");  // wave 16: eight elements compared
}

// runner.differential: an output buffer the reference has and the implementation
// leaves out fails, even when the expectation does not name it.
TEST(Harness, ABufferTheImplementationLeavesOutFails) {
  const std::string test = R"(; simtspec-test 1
; id = "demo.two_buffers"
; title = "two output buffers, one of them in the expectation"
; clauses = ["runner.differential"]
; features = ["alu", "mem"]
; [expect]
; status = "completed"
; [expect.buffers.out]
; values = [7]
.buffer out u32[1] out
.buffer side u32[1] out
    mov s0, 7
    st out[0], s0
    st side[0], s0
    exit
)";
  FunctionRunner drops_side([](const runners::RunRequest& req) {
    auto r = runners::run_reference(req);
    std::erase_if(r.outcome.buffers, [](const auto& b) { return b.name == "side"; });
    return r;
  });
  auto recs = run_one(drops_side, "two_buffers", test, harness::Options{});
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_EQ(recs[0].find("message")->as_string(), "output buffer 'side' is missing");
  FunctionRunner same([](const runners::RunRequest& req) { return runners::run_reference(req); });
  recs = run_one(same, "two_buffers", test, harness::Options{});
  EXPECT_EQ(status_of(recs[0]), "pass");
}

TEST(Harness, ConfigurationsNeedingAMissingExtraAreUnsupported) {
  size_t calls = 0;
  FunctionRunner bare([&](const runners::RunRequest& req) {
    ++calls;
    return runners::run_reference(req);
  });
  harness::Options o;
  o.differential = false;
  struct Case {
    std::string extra, text;
  };
  const std::string rejected =
      replace(replace(kGood,
                      "; status = \"completed\"\n; [expect.buffers.out]\n; each = \"lane * "
                      "2\"\n",
                      "; status = \"rejected\"\n"),
              "    exit\n", "    exit\n    bogus\n");
  const std::string unvalidated = replace(kGood, "; [matrix]", "; validate = false\n; [matrix]");
  const std::string hosted = replace(kGood, "; [expect]",
                                     "; [[host]]\n; step = 1\n; action = \"single_step\"\n"
                                     "; core = 0\n; on = false\n; [expect]");
  for (const Case& c : std::vector<Case>{{"validate", rejected},
                                         {"livelock", kLivelockTest},
                                         {"no_validate", unvalidated},
                                         {"host", hosted}}) {
    bare.caps_ = runners::make_reference_runner()->capabilities();
    bare.caps_.extras.erase(c.extra);
    calls = 0;
    auto recs = run_one(bare, "needs_" + c.extra, c.text, o);
    ASSERT_FALSE(recs.empty()) << c.extra;
    for (const auto& r : recs) {
      EXPECT_EQ(status_of(r), "unsupported") << c.extra << ": " << json::dump(r);
      EXPECT_EQ(r.find("message")->as_string(), "the runner lacks " + c.extra);
    }
    EXPECT_EQ(calls, 0u) << c.extra;
    // With the extra, the same test runs.
    bare.caps_.extras.insert(c.extra);
    recs = run_one(bare, "needs_" + c.extra, c.text, o);
    EXPECT_NE(status_of(recs[0]), "unsupported") << c.extra;
  }
}

// results.record `reference`: a differential record carries the reference's outcome
// also when the configuration fails against its expectation (before the
// comparison with the reference would have run).
TEST(Harness, FailingRecordsCarryTheReferenceOutcome) {
  FunctionRunner step_limit([](const runners::RunRequest& req) {
    auto r = runners::run_reference(req);
    r.outcome.status = "step_limit";
    return r;
  });
  auto recs = run_one(step_limit, "livelock", kLivelockTest, harness::Options{});
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_EQ(recs[0].find("first_diff")->find("against")->as_string(), "expectation");
  const json::Value* ref = recs[0].find("reference");
  ASSERT_NE(ref, nullptr) << json::dump(recs[0]);
  EXPECT_EQ(ref->find("status")->as_string(), "livelock");
  // A passing differential record has it too.
  FunctionRunner same([](const runners::RunRequest& req) { return runners::run_reference(req); });
  recs = run_one(same, "livelock", kLivelockTest, harness::Options{});
  EXPECT_EQ(status_of(recs[0]), "pass");
  ASSERT_NE(recs[0].find("reference"), nullptr);
}

// runner.timeout: the in-process reference has a wall-clock limit like every runner:
// a test whose program runs (practically) forever is an `error`, timeout, and the
// run goes on; the reference runs the harness makes for another runner have it too.
// Sets the interrupt flag (results.interrupted) if still alive after `secs`, so that
// a run whose time limit is broken ends (and its test fails) instead of hanging.
class Watchdog {
 public:
  explicit Watchdog(double secs)
      : thread_([this, secs] {
          const auto end = std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(secs));
          while (!done_ && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          if (!done_) runners::interrupt_flag().store(true);
        }) {}
  ~Watchdog() {
    done_ = true;
    thread_.join();
    runners::interrupt_flag().store(false);
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(Harness, TheReferenceHasAWallClockLimit) {
  Watchdog dog(20);
  auto reference = runners::make_reference_runner(0.3);
  harness::Options o;
  auto t0 = std::chrono::steady_clock::now();
  auto recs = run_one(*reference, "runaway", test::kRunawayTest, o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "error");
  const std::string msg = recs[0].find("message")->as_string();
  EXPECT_EQ(msg.rfind("timeout: the reference did not end within 0.3 s (stopped after ", 0), 0u)
      << msg;
  EXPECT_LT(secs, 5.0);
  // Another runner answers at once; the harness's own reference run is limited.
  FunctionRunner quick([](const runners::RunRequest&) {
    runners::RunResult r;
    r.kind = runners::RunResult::Kind::Outcome;
    r.outcome.status = "step_limit";
    return r;
  });
  o.timeout = 0.3;
  recs = run_one(quick, "runaway", test::kRunawayTest, o);
  EXPECT_EQ(status_of(recs[0]), "error");
  EXPECT_EQ(
      recs[0].find("message")->as_string().rfind(
          "the reference could not run it: timeout: the reference did not end within 0.3 s", 0),
      0u)
      << recs[0].find("message")->as_string();
}

// results.share: the share of the selection that ran, rounded down.
TEST(Results, ShareOfTheSelectionThatRan) {
  EXPECT_EQ(reports::share_run(314, 5173), "314 of 5,173 configurations run (6%)");
  EXPECT_EQ(reports::share_run(5172, 5173), "5,172 of 5,173 configurations run (99%)");
  EXPECT_EQ(reports::share_run(5173, 5173), "5,173 of 5,173 configurations run (100%)");
  EXPECT_EQ(reports::share_run(1, 5173), "1 of 5,173 configurations run (<1%)");
  EXPECT_EQ(reports::share_run(0, 1), "0 of 1 configuration run (0%)");
  EXPECT_EQ(reports::share_run(0, 0), "0 of 0 configurations run (n/a)");
  EXPECT_EQ(reports::thousands(1234567), "1,234,567");
  EXPECT_EQ(reports::thousands(999), "999");
  harness::Summary sum;
  sum.total = 10;
  sum.selected = 12;
  sum.counts = {{"pass", 3}, {"unsupported", 7}};
  json::Value j = sum.to_json();
  EXPECT_EQ(j.find("run")->as_int(), 3);
  EXPECT_EQ(j.find("selected")->as_int(), 12);
  EXPECT_EQ(j.find("interrupted"), nullptr);
  sum.interrupted = true;
  EXPECT_TRUE(sum.to_json().find("interrupted")->as_bool());
  EXPECT_FALSE(sum.ok());
}

// runner.own_scheduler: a runner that schedules warps itself gets only the
// configurations whose outcome is the same under every policy (whatever policies
// it lists), each reported with the policy `own`; the others are unsupported with
// the difference, and never reach the runner. runner.harness: an `unsupported`
// answer is an unsupported result with the implementation's reason.
TEST(Harness, OwnSchedulerRunsOnlyPolicyIndependentConfigurations) {
  fs::path dir = temp_dir("own_scheduler");
  write(dir / "good.simt", kGood);
  // Two warps store to one word: warp 0 after three nops, warp 1 at once. The last
  // store wins, and which is last depends on the policy.
  write(dir / "race.simt", R"(; simtspec-test 1
; id = "demo.race"
; title = "the last of two warps' stores to one word wins"
; clauses = ["exec.sched"]
; features = ["alu", "mem"]
; [matrix]
; policy = ["round_robin", "oldest_first"]
; [expect]
; status = "completed"
; [expect.buffers.out]
; values = [1]
.wave 8
.warps 2
.buffer out u32[1] out
    mov s0, %warp
    cmp.eq p0, s0, 0
    if p0
      nop
      nop
      nop
    endif
    st out[0], s0
    exit
)");
  write(dir / "refused.simt",
        replace(replace(kGood, "demo.add", "demo.refused"), "shl v9", "shl v8"));
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  size_t requests = 0;
  FunctionRunner own([&](const runners::RunRequest& req) {
    ++requests;
    if (req.program.find("demo.refused") != std::string::npos) {
      runners::RunResult r;
      r.kind = runners::RunResult::Kind::Unsupported;
      r.message = "no shl v8 here";
      return r;
    }
    return runners::run_reference(req);
  });
  own.caps_.extras.insert("own_scheduler");
  own.caps_.policies.clear();  // not consulted
  harness::Options o;
  std::map<std::string, std::vector<json::Value>> by_id;
  auto sum = harness::run(own, suite, harness::select(suite, o), o, [&](const reports::Record& r) {
    by_id[r.id].push_back(reports::to_json(r));
  });
  EXPECT_EQ(sum.counts["pass"], 4u);         // demo.add: wave 8 and 32, both policies
  EXPECT_EQ(sum.counts["unsupported"], 6u);  // demo.race twice, demo.refused four times
  EXPECT_EQ(requests, 8u);                   // demo.race never reached the runner
  for (const auto& r : by_id["demo.add"])
    EXPECT_EQ(r.find("config")->find("policy")->as_string(), "own");
  for (const auto& r : by_id["demo.race"]) {
    EXPECT_EQ(r.find("status")->as_string(), "unsupported");
    const std::string msg = r.find("message")->as_string();
    EXPECT_NE(msg.find("depends on the scheduling policy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("own_scheduler"), std::string::npos) << msg;
  }
  for (const auto& r : by_id["demo.refused"])
    EXPECT_EQ(r.find("message")->as_string(), "the implementation: no shl v8 here");
  // The same runner without own_scheduler but with the policies: demo.race runs.
  own.caps_.extras.erase("own_scheduler");
  own.caps_.policies = {"round_robin", "oldest_first", "random"};
  requests = 0;
  sum = harness::run(own, suite, harness::select(suite, o), o, [](const reports::Record&) {});
  EXPECT_EQ(requests, 10u);
  fs::remove_all(dir);
}

// runner.protocol.response: `unsupported` carries its reason; without one it is a
// protocol violation.
TEST(Protocol, UnsupportedAnswerCarriesItsReason) {
  using K = runners::RunResult::Kind;
  auto r = runners::parse_response_line(
      R"({"id": 3, "status": "unsupported", "message": "no shuffles"})", 3);
  EXPECT_EQ(r.kind, K::Unsupported);
  EXPECT_EQ(r.message, "no shuffles");
  EXPECT_EQ(runners::parse_response_line(json::dump(runners::response_json(r, 4)), 4).kind,
            K::Unsupported);
  r = runners::parse_response_line(R"({"id": 3, "status": "unsupported"})", 3);
  EXPECT_EQ(r.kind, K::Error);
  EXPECT_NE(r.message.find("protocol violation"), std::string::npos) << r.message;
}

// runner.protocol.request: the harness sends the settings the test configuration
// sets (its matrix entry), max_steps when it caps the steps, and validate = false
// for format.validate tests; the rest comes from the program's directives. The
// results record's config is complete.
TEST(Harness, RequestsCarryTheMatrixEntryOnly) {
  fs::path dir = temp_dir("requests");
  write(dir / "t.simt", R"(; simtspec-test 1
; id = "demo.requests"
; title = "t"
; clauses = ["alu.add"]
; features = ["alu", "mem"]
; [matrix]
; wave = [4]
; policy = ["oldest_first"]
; [expect]
; status = "completed"
; [expect.buffers.out]
; values = [2, 2]
.warps 2
.slm 64
.buffer out u32[2] out
    mul s0, %warp, 4
    st out[s0], %nwarps
    exit
)");
  write(dir / "u.simt", R"(; simtspec-test 1
; id = "demo.unvalidated"
; title = "t"
; clauses = ["branch.mask.underflow"]
; features = ["branch"]
; validate = false
; [expect]
; status = "trapped"
; [expect.event]
; name = "mask_underflow"
.max_steps 99
    pop
    exit
)");
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  std::vector<runners::RunRequest> requests;
  FunctionRunner runner([&](const runners::RunRequest& req) {
    requests.push_back(req);
    return runners::run_reference(req);
  });
  harness::Options o;
  o.differential = false;
  std::vector<json::Value> recs;
  auto sum = harness::run(runner, suite, harness::select(suite, o), o,
                          [&](const reports::Record& r) { recs.push_back(reports::to_json(r)); });
  EXPECT_EQ(sum.counts["pass"], 2u);
  ASSERT_EQ(requests.size(), 2u);
  const auto& a =
      requests[0].program.find("demo.requests") != std::string::npos ? requests[0] : requests[1];
  const auto& b = &a == &requests[0] ? requests[1] : requests[0];
  runners::RunConfig want;
  want.wave = 4;
  want.policy = "oldest_first";
  want.max_steps = o.max_steps;  // no .max_steps directive: the harness caps it
  EXPECT_EQ(json::dump(a.config.to_json()), json::dump(want.to_json()));
  EXPECT_TRUE(a.validate);
  EXPECT_EQ(json::dump(b.config.to_json()), "{}");  // .max_steps 99 is the program's
  EXPECT_FALSE(b.validate);
  // results.record `reproduce` (reference runs): the same launch from the command line.
  auto reference = runners::make_reference_runner();
  recs.clear();
  harness::run(*reference, suite, harness::select(suite, o), o,
               [&](const reports::Record& r) { recs.push_back(reports::to_json(r)); });
  ASSERT_EQ(recs.size(), 2u);
  for (const auto& r : recs) {
    const std::string cmd = r.find("reproduce")->as_string();
    if (r.find("id")->as_string() == "demo.requests") {
      EXPECT_NE(cmd.find(" --wave 4 --policy oldest_first --max-steps 1000000 --trace"),
                std::string::npos)
          << cmd;
    } else {
      EXPECT_NE(cmd.find(" --no-validate --trace"), std::string::npos) << cmd;
      EXPECT_EQ(cmd.find("--max-steps"), std::string::npos) << cmd;
    }
  }
  for (const auto& r : recs) {
    const json::Value* cfg = r.find("config");
    ASSERT_NE(cfg, nullptr);
    for (const char* k : {"wave", "warps", "slm", "vregs", "stack", "max_steps", "livelock_check"})
      EXPECT_NE(cfg->find(k), nullptr) << k;
    if (r.find("id")->as_string() == "demo.requests") {
      EXPECT_EQ(cfg->find("warps")->as_int(), 2);
      EXPECT_EQ(cfg->find("slm")->as_int(), 64);
    }
  }
  fs::remove_all(dir);
}

// runner.protocol.request, runner.protocol.response
TEST(Protocol, RequestAndResponseRoundTrip) {
  runners::RunRequest req;
  req.program = "exit\n\"quoted\"\n";
  req.config.wave = 16;
  req.config.policy = "random";
  req.config.seed = 9;
  auto parsed = runners::parse_request_line(runners::request_line(req, 42));
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed));
  const auto& sr = std::get<runners::ServerRequest>(parsed);
  EXPECT_EQ(sr.id, 42);
  EXPECT_EQ(sr.req.program, req.program);
  EXPECT_EQ(sr.req.config.wave, 16u);
  EXPECT_EQ(sr.req.config.seed, 9u);
  auto ref = runners::run_reference(sr.req);  // "exit\n\"quoted\"" does not parse
  EXPECT_EQ(ref.kind, runners::RunResult::Kind::Rejected);
  auto back = runners::parse_response_line(json::dump(runners::response_json(ref, 42)), 42);
  EXPECT_EQ(back.kind, runners::RunResult::Kind::Rejected);
  EXPECT_EQ(back.line, ref.line);
  auto ok = outcome("completed", {1, 2});
  auto okback = runners::parse_response_line(json::dump(runners::response_json(ok, 3)), 3);
  ASSERT_EQ(okback.kind, runners::RunResult::Kind::Outcome);
  EXPECT_EQ(okback.outcome.buffers[0].values, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(std::holds_alternative<std::string>(runners::parse_request_line("{\"op\":\"run\"}")));
  EXPECT_TRUE(std::holds_alternative<std::string>(runners::parse_request_line("not json")));
}

// runner.protocol.request, runner.serve: a run request's id is an integer of 64
// bits (1.5 and 1e23 are not), and no object holds a key twice; such a request is
// answered `error` and not run.
TEST(Protocol, IdsAreIntegersAndKeysAreUnique) {
  auto bad = [](const std::string& line) {
    auto r = runners::parse_request_line(line);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  const std::string head = R"({"protocol":"simtspec-runner/1","op":"run","program":"exit\n")";
  EXPECT_EQ(bad(head + R"(,"id":7})"), "");
  EXPECT_EQ(bad(head + R"(,"id":-7})"), "");
  EXPECT_EQ(bad(head + R"(,"id":1.5})"),
            "run request needs \"id\": an integer from -2^63 to 2^63 - 1");
  EXPECT_EQ(bad(head + R"(,"id":1e23})"),
            "run request needs \"id\": an integer from -2^63 to 2^63 - 1");
  EXPECT_EQ(bad(head + R"(,"id":9223372036854775808})"),
            "run request needs \"id\": an integer from -2^63 to 2^63 - 1");
  EXPECT_EQ(bad(head + "}"), "run request needs \"id\": an integer from -2^63 to 2^63 - 1");
  EXPECT_EQ(bad(head + R"(,"id":1,"config":{"wave":8,"wave":16}})"), "duplicate key 'config.wave'");
  EXPECT_EQ(bad(head + R"(,"id":1,"trace":true,"trace":false})"),
            "duplicate key 'trace' in the request");
  EXPECT_EQ(bad(R"({"protocol":"simtspec-runner/1.1","op":"run","program":"exit\n","id":1,)"
                R"("host":[{"step":1,"action":"interrupt","core":0,"code":1,"code":2}]})"),
            "host[0]: duplicate key 'code'");
  // serve answers such a request with status error, the id 0 (not a rounded id).
  std::istringstream in(head + R"(,"id":1.5})" + "\n");
  std::ostringstream out;
  bool ran = false;
  runners::serve(in, out, [&](const runners::RunRequest&) {
    ran = true;
    return runners::RunResult{};
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(out.str().rfind(R"({"id":0,"status":"error")", 0), 0u) << out.str();
}

// runner.protocol.request: every launch setting travels, with its type; a key the
// request leaves out means the program's directive, else the default.
TEST(Protocol, EveryLaunchSettingTravelsAndAbsentMeansDirective) {
  runners::RunRequest req;
  req.program =
      ".warps 2\n.buffer out u32[2] out\n  mul s0, %warp, 4\n  st out[s0], %nwarps\n"
      "  exit\n";
  runners::RunConfig all;
  uint32_t n = 1;
  using U32Field = std::optional<uint32_t> runners::RunConfig::*;
  for (U32Field f :
       {&runners::RunConfig::wave, &runners::RunConfig::simd, &runners::RunConfig::warps,
        &runners::RunConfig::workgroups, &runners::RunConfig::cores, &runners::RunConfig::slm,
        &runners::RunConfig::vregs, &runners::RunConfig::sregs, &runners::RunConfig::mask_depth,
        &runners::RunConfig::call_depth, &runners::RunConfig::stack})
    all.*f = n++;
  all.policy = "oldest_first";
  all.seed = 5;
  all.max_steps = 77;
  all.livelock_check = false;
  req.config = all;
  req.validate = false;
  const std::string line = runners::request_line(req, 3);
  for (const char* key :
       {"\"wave\":1", "\"simd\":2", "\"slm\":6", "\"vregs\":7", "\"sregs\":8", "\"mask_depth\":9",
        "\"call_depth\":10", "\"stack\":11", "\"livelock_check\":false", "\"validate\":false"})
    EXPECT_NE(line.find(key), std::string::npos) << key << " missing from " << line;
  auto parsed = runners::parse_request_line(line);
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed));
  const auto& sr = std::get<runners::ServerRequest>(parsed);
  EXPECT_TRUE(sr.req.config == all);
  EXPECT_FALSE(sr.req.validate);

  // No warps in the request: the program's `.warps 2` holds (both warps store 2).
  runners::RunRequest bare;
  bare.program = req.program;
  bare.config.wave = 4;
  auto r = runners::run_reference(bare);
  ASSERT_EQ(r.kind, runners::RunResult::Kind::Outcome) << r.message;
  EXPECT_EQ(r.outcome.buffers[0].values, (std::vector<int64_t>{2, 2}));
  // warps in the request overrides the directive.
  bare.config.warps = 1;
  r = runners::run_reference(bare);
  ASSERT_EQ(r.kind, runners::RunResult::Kind::Outcome) << r.message;
  EXPECT_EQ(r.outcome.buffers[0].values, (std::vector<int64_t>{1, 0}));
  // Settings that only directives could give before travel too: vregs 4 makes v5
  // out of range (a rejection at its line); livelock_check false turns a livelock
  // into step_limit.
  runners::RunRequest regs;
  regs.program = "  mov v5, 1\n  exit\n";
  regs.config.vregs = 4;
  auto rr = runners::run_reference(regs);
  EXPECT_EQ(rr.kind, runners::RunResult::Kind::Rejected);
  EXPECT_EQ(rr.line, 1u);
  runners::RunRequest spin;
  spin.program = "l: jmp l\n";
  spin.config.max_steps = 50;
  EXPECT_EQ(runners::run_reference(spin).outcome.status, "livelock");
  spin.config.livelock_check = false;
  EXPECT_EQ(runners::run_reference(spin).outcome.status, "step_limit");
  // A configuration error that comes from the request has no line.
  runners::RunRequest bad;
  bad.program = "  exit\n";
  bad.config.wave = 3;
  auto br = runners::run_reference(bad);
  EXPECT_EQ(br.kind, runners::RunResult::Kind::Rejected);
  EXPECT_FALSE(br.line.has_value());
  EXPECT_FALSE(runners::response_json(br, 1).find("line"));
  // state.launch.check: it names the request's key instead of the program's line 1.
  EXPECT_EQ(br.message.rfind("config.wave: bad launch configuration: wave 3 ", 0), 0u)
      << br.message;
}

// runner.protocol.response, format.expect.rejected: a rejection without a line fails a
// test that names the line, saying so; a test that names no line passes either way.
TEST(Compare, RejectionWithoutALine) {
  auto t = parse_ok(R"(; simtspec-test 1
; id = "demo.rejected"
; title = "t"
; clauses = ["valid.label.defined"]
; features = ["branch"]
; [expect]
; status = "rejected"
; line = 2
    nop
    jmp nowhere
)");
  harness::Layout l;
  runners::RunResult r;
  r.kind = runners::RunResult::Kind::Rejected;
  r.message = "undefined label";
  auto v = harness::check_expectation(t.expect, r, l);
  ASSERT_FALSE(v.ok);
  EXPECT_NE(v.message.find("rejected, but the response gives no line, expected line 2"),
            std::string::npos)
      << v.message;
  r.line = 2;
  EXPECT_TRUE(harness::check_expectation(t.expect, r, l).ok);
  r.line.reset();
  t.expect.line.reset();
  EXPECT_TRUE(harness::check_expectation(t.expect, r, l).ok);
}

// runner.protocol.request: wrong types and unknown keys are errors naming the key.
TEST(Protocol, ConfigKeysAreTyped) {
  auto err = [](const std::string& config) {
    auto r = runners::parse_request_line(
        R"({"protocol":"simtspec-runner/1","op":"run","id":1,"program":"exit\n","config":)" +
        config + "}");
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  EXPECT_EQ(err(R"({"livelock_check":true,"slm":16})"), "");
  EXPECT_NE(err(R"({"livelock_check":1})").find("livelock_check must be true or false"),
            std::string::npos);
  EXPECT_NE(err(R"({"slm":-1})").find("config.slm must be an integer"), std::string::npos);
  EXPECT_NE(err(R"({"stack":4294967296})").find("config.stack"), std::string::npos);
  EXPECT_NE(err(R"({"policy":3})").find("config.policy must be a string"), std::string::npos);
  EXPECT_NE(err(R"({"frequency":3})").find("unknown config key 'frequency'"), std::string::npos);
  auto bad_validate = runners::parse_request_line(
      R"({"protocol":"simtspec-runner/1","op":"run","id":1,"program":"exit\n","validate":0})");
  ASSERT_TRUE(std::holds_alternative<std::string>(bad_validate));
}

// runner.protocol.request `validate`: false skips the flow checks, so run-time
// events of the branch unit are reached; true (the default) rejects the program.
TEST(Protocol, ValidateFalseRunsWithoutTheFlowChecks) {
  runners::RunRequest req;
  req.program = "  pop\n  exit\n";
  auto checked = runners::run_reference(req);
  EXPECT_EQ(checked.kind, runners::RunResult::Kind::Rejected);
  req.validate = false;
  auto ran = runners::run_reference(req);
  ASSERT_EQ(ran.kind, runners::RunResult::Kind::Outcome) << ran.message;
  EXPECT_EQ(ran.outcome.status, "trapped");
  EXPECT_EQ(ran.outcome.event->name, "mask_underflow");
}

// runner.protocol.request: seeds and step limits span 0 .. 2^64 - 1 ([state.launch]).
TEST(Protocol, SeedsAbove2To63CrossTheProtocolIntact) {
  runners::RunRequest req;
  req.program = "exit\n";
  req.config.policy = "random";
  req.config.seed = std::numeric_limits<uint64_t>::max();
  req.config.max_steps = (uint64_t{1} << 63) + 5;
  std::string line = runners::request_line(req, 1);
  EXPECT_NE(line.find("\"seed\":18446744073709551615"), std::string::npos) << line;
  auto parsed = runners::parse_request_line(line);
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed));
  const auto& sr = std::get<runners::ServerRequest>(parsed);
  EXPECT_EQ(sr.req.config.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(sr.req.config.max_steps, (uint64_t{1} << 63) + 5);
  EXPECT_TRUE(std::holds_alternative<std::string>(runners::parse_request_line(
      R"({"protocol":"simtspec-runner/1","op":"run","id":1,"program":"exit\n","config":{"seed":-1}})")));
}

// runner.protocol.errors: every violation becomes an error with a reason.
TEST(Protocol, ViolationsAreErrors) {
  using K = runners::RunResult::Kind;
  for (const char* line :
       {"", "garbage", "[]", "{\"id\": 1, \"status\": \"completed\"}",  // wrong id
        "{\"id\": 7, \"status\": \"exploded\"}", "{\"id\": 7}",
        "{\"id\": 7, \"status\": \"trapped\", \"buffers\": {}}",  // no event
        "{\"id\": 7, \"status\": \"completed\", \"buffers\": {\"o\": {\"type\": \"u32\", "
        "\"values\": [\"x\"]}}}"}) {
    auto r = runners::parse_response_line(line, 7);
    EXPECT_EQ(r.kind, K::Error) << line;
    EXPECT_FALSE(r.message.empty()) << line;
  }
}

runners::ProcessSpec faulty(const std::string& fault, double timeout = 5, bool persistent = true) {
  std::string toml =
      "name = \"faulty-" + fault + "\"\ncommand = \"" + std::string(SIMT_BINARY_DIR) +
      "/simtspec-faulty\"\nargs = [\"--fault\", \"" + fault +
      "\"]\ntimeout = " + std::to_string(timeout) +
      "\npersistent = " + (persistent ? "true" : "false") +
      "\n[capabilities]\nwaves = [8, 32]\nfeatures = [\"alu\", \"mem\", \"branch\"]\n";
  auto s = runners::parse_process_spec(toml, "faulty.toml");
  EXPECT_TRUE(std::holds_alternative<runners::ProcessSpec>(s)) << std::get<std::string>(s);
  return std::get<runners::ProcessSpec>(s);
}

runners::RunRequest add_request(uint32_t wave) {
  runners::RunRequest req;
  req.program = kGood;
  req.config.wave = wave;
  req.config.simd = wave;
  return req;
}

// runner.serve, runner.lifecycle: the protocol end to end, persistent and one-shot.
TEST(ProcessRunner, AnswersLikeTheReference) {
  for (bool persistent : {true, false}) {
    auto r = runners::make_process_runner(faulty("none", 10, persistent));
    for (uint32_t wave : {8u, 32u, 8u}) {
      auto got = r->run(add_request(wave));
      ASSERT_EQ(got.kind, runners::RunResult::Kind::Outcome) << got.message << got.stderr_text;
      auto want = runners::run_reference(add_request(wave));
      EXPECT_EQ(got.outcome.status, want.outcome.status);
      EXPECT_EQ(got.outcome.buffers, want.outcome.buffers);
    }
    r->shutdown();
  }
}

// runner.protocol.errors: a crash, a hang and garbage are errors with details,
// and the runner keeps working for the next run.
TEST(ProcessRunner, IsolatesCrashesHangsAndGarbage) {
  auto crash = runners::make_process_runner(faulty("crash"));
  auto r = crash->run(add_request(8));
  EXPECT_EQ(r.kind, runners::RunResult::Kind::Error);
  EXPECT_NE(r.message.find("signal 6"), std::string::npos) << r.message;
  EXPECT_NE(r.stderr_text.find("crashing on purpose"), std::string::npos) << r.stderr_text;
  r = crash->run(add_request(8));  // and again: a fresh process each time
  EXPECT_EQ(r.kind, runners::RunResult::Kind::Error);

  auto hang = runners::make_process_runner(faulty("hang", 0.5));
  auto t0 = std::chrono::steady_clock::now();
  r = hang->run(add_request(8));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.kind, runners::RunResult::Kind::Error);
  EXPECT_NE(r.message.find("timeout"), std::string::npos) << r.message;
  EXPECT_LT(secs, 5.0);

  auto garbage = runners::make_process_runner(faulty("garbage"));
  r = garbage->run(add_request(8));
  EXPECT_EQ(r.kind, runners::RunResult::Kind::Error);
  EXPECT_NE(r.message.find("protocol violation"), std::string::npos) << r.message;

  runners::ProcessSpec missing = faulty("none");
  missing.command = "/nonexistent/simulator";
  r = runners::make_process_runner(missing)->run(add_request(8));
  EXPECT_EQ(r.kind, runners::RunResult::Kind::Error);
  EXPECT_NE(r.message.find("cannot start"), std::string::npos) << r.message;
}

// runner.lifecycle.restart: a process that dies once it has the request makes that
// run an `error` (the signal and its stderr kept), never a silent retry; the runs
// before and after it are answered by the process and a fresh one.
TEST(ProcessRunner, ACrashAfterTheRequestIsThatRunsError) {
  auto r = runners::make_process_runner(faulty("crash-every-5"));
  for (int i = 1; i <= 10; ++i) {
    auto got = r->run(add_request(8));
    if (i % 5 == 0) {
      ASSERT_EQ(got.kind, runners::RunResult::Kind::Error) << "run " << i;
      EXPECT_NE(got.message.find("ended without answering: killed by signal 6"), std::string::npos)
          << got.message;
      EXPECT_NE(got.stderr_text.find("heap corrupted"), std::string::npos) << got.stderr_text;
    } else {
      EXPECT_EQ(got.kind, runners::RunResult::Kind::Outcome) << "run " << i << got.message;
    }
  }
  r->shutdown();
}

// runner.lifecycle.restart: a kept-alive process that ended after its last answer is
// replaced without blame; the record's stderr says how it ended and what it wrote.
TEST(ProcessRunner, AProcessThatEndedBetweenRequestsIsReplaced) {
  auto r = runners::make_process_runner(faulty("exit-after-answer"));
  std::string stderr_before;  // what the process wrote after its answer lands in
                              // its own record or, if later, in the next one's note
  for (int i = 0; i < 3; ++i) {
    auto got = r->run(add_request(8));
    ASSERT_EQ(got.kind, runners::RunResult::Kind::Outcome) << i << got.message;
    if (i > 0) {
      EXPECT_EQ(got.stderr_text.rfind("[simtspec: the runner's previous process ended after its "
                                      "last answer (exited with status 0); a fresh process ran "
                                      "this request]\n",
                                      0),
                0u)
          << got.stderr_text;
      EXPECT_NE((stderr_before + got.stderr_text).find("exiting after one answer"),
                std::string::npos);
    }
    stderr_before = got.stderr_text;
    // Let the process end (it exits right after answering) before the next run
    // takes it, so that the run finds it ended rather than racing its exit.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  r->shutdown();
}

// runner.protocol.errors, runner.toml `max_response`: a process that writes without
// ever ending its line costs bounded memory and time, and is that run's error.
TEST(ProcessRunner, AFloodingProcessIsCutOffAtMaxResponse) {
  runners::ProcessSpec spec = faulty("flood", 20);
  spec.max_response = 1 << 20;
  auto r = runners::make_process_runner(spec);
  auto t0 = std::chrono::steady_clock::now();
  auto got = r->run(add_request(8));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(got.kind, runners::RunResult::Kind::Error);
  EXPECT_EQ(got.message,
            "the response line is longer than 1048576 bytes (runner.toml max_response; process "
            "killed)");
  EXPECT_NE(got.stderr_text.find("flooding on purpose"), std::string::npos);
  EXPECT_LT(secs, 10.0);  // not the 20 s timeout: the cap ended it
  // The default and the description key.
  EXPECT_EQ(faulty("none").max_response, size_t{64} << 20);
  auto described = runners::parse_process_spec(
      "name = \"x\"\ncommand = \"y\"\nmax_response = 4096\n[capabilities]\nwaves = "
      "[8]\nfeatures = [\"alu\"]\n",
      "m.toml");
  ASSERT_TRUE(std::holds_alternative<runners::ProcessSpec>(described));
  EXPECT_EQ(std::get<runners::ProcessSpec>(described).max_response, 4096u);
}

// runner.lifecycle: a timeout kills the runner's whole process group, so a wrapper's
// child does not outlive it.
TEST(ProcessRunner, ATimeoutEndsTheWholeProcessGroup) {
  fs::path dir = temp_dir("group");
  const fs::path pidfile = dir / "child.pid";
  write(dir / "wrapper.sh",
        "#!/bin/sh\nsleep 1000 &\necho $! > '" + pidfile.string() + "'\nwait\n");
  fs::permissions(dir / "wrapper.sh", fs::perms::owner_all);
  runners::ProcessSpec spec = faulty("none", 0.5);
  spec.command = (dir / "wrapper.sh").string();
  spec.args.clear();
  auto r = runners::make_process_runner(spec);
  auto got = r->run(add_request(8));
  ASSERT_EQ(got.kind, runners::RunResult::Kind::Error);
  EXPECT_NE(got.message.find("timeout"), std::string::npos) << got.message;
  const pid_t child = std::stoi(test::read_all(pidfile.string()));
  ASSERT_GT(child, 0);
  // The child is gone (or a zombie about to be reaped by init): not running.
  bool running = false;
  for (int i = 0; i < 50; ++i) {
    std::string stat = test::read_all("/proc/" + std::to_string(child) + "/stat");
    running = !stat.empty() && stat.find(") Z") == std::string::npos;
    if (!running) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(running) << "the wrapper's child " << child << " outlived the timeout";
  r->shutdown();
}

// runner.toml
TEST(ProcessRunner, DescriptionErrors) {
  EXPECT_TRUE(
      std::holds_alternative<std::string>(runners::parse_process_spec("name = \"x\"\n", "a.toml")));
  EXPECT_TRUE(std::holds_alternative<std::string>(runners::parse_process_spec(
      "name = \"x\"\ncommand = \"y\"\ncolour = 1\n[capabilities]\nwaves=[8]\nfeatures=[]\n",
      "a.toml")));
  auto ok = runners::parse_process_spec(
      "name = \"x\"\ncommand = \"bin/sim\"\nxfail = "
      "[\"a.*\"]\n[capabilities]\nwaves=[8]\nfeatures=[\"alu\"]\ninstructions=[\"add\"]\n",
      "/etc/runners/a.toml");
  ASSERT_TRUE(std::holds_alternative<runners::ProcessSpec>(ok));
  const auto& s = std::get<runners::ProcessSpec>(ok);
  EXPECT_EQ(s.command, "/etc/runners/bin/sim");
  EXPECT_EQ(s.caps.missing({"wave:8", "feature:alu", "instr:add"}), std::nullopt);
  EXPECT_EQ(s.caps.missing({"wave:8", "instr:mul"}), std::optional<std::string>("instr:mul"));
  EXPECT_EQ(s.caps.missing({"policy:random"}), std::optional<std::string>("policy:random"));
  // runner.toml: a mnemonic or an extra that does not exist is a located error.
  auto bad = [](const std::string& caps) {
    auto r = runners::parse_process_spec(
        "name = \"x\"\ncommand = \"y\"\n[capabilities]\nwaves=[8]\nfeatures=[]\n" + caps, "b.toml");
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  EXPECT_EQ(bad("instructions = [\"add\", \"fma\"]\n"),
            "b.toml:6: capabilities.instructions: unknown mnemonic 'fma'");
  EXPECT_EQ(bad("extras = [\"own_schedular\"]\n")
                .rfind("b.toml:6: capabilities.extras: unknown extra 'own_schedular'", 0),
            0u);
  EXPECT_EQ(bad("extras = [\"own_scheduler\", \"trace\"]\n"), "");
  // A typo in a feature tag or a policy, or a width that is not a power of two from 1
  // to 64, is a located error, not a capability that makes every test unsupported.
  auto head = [](const std::string& rest) {
    auto r = runners::parse_process_spec("name = \"x\"\ncommand = \"y\"\n[capabilities]\n" + rest,
                                         "c.toml");
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  EXPECT_EQ(head("waves = [8]\nfeatures = [\"alu\", \"xlnae\"]\n"),
            "c.toml:5: capabilities.features: unknown feature tag 'xlnae' (known: alu, mem, "
            "xlane, bar, branch, trap, preempt, wave, watomic)");
  EXPECT_EQ(head("waves = [8]\nfeatures = [\"alu\"]\npolicies = [\"fifo\"]\n"),
            "c.toml:6: capabilities.policies: unknown policy 'fifo' (known: round_robin, "
            "lowest_pc_first, oldest_first, random)");
  EXPECT_EQ(head("waves = [8, 48]\nfeatures = [\"alu\"]\n"),
            "c.toml:4: capabilities.waves must be an array of powers of two from 1 to 64 (48 "
            "is not one)");
  EXPECT_EQ(head("waves = [128]\nfeatures = [\"alu\"]\n"),
            "c.toml:4: capabilities.waves must be an array of powers of two from 1 to 64 (128 "
            "is not one)");
  EXPECT_EQ(head("waves = [8]\nsimds = [0]\nfeatures = [\"alu\"]\n"),
            "c.toml:5: capabilities.simds must be an array of powers of two from 1 to 64 (0 is "
            "not one)");
  EXPECT_EQ(head("waves = [1, 2, 4, 8, 16, 32, 64]\nfeatures = [\"alu\", \"preempt\"]\n"
                 "policies = [\"random\", \"oldest_first\"]\n"),
            "");
}

// runner.toml: problems name the file, the line and the key.
TEST(ProcessRunner, DescriptionErrorsNameFileLineAndKey) {
  auto err = [](const std::string& text) {
    auto r = runners::parse_process_spec(text, "r.toml");
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  const std::string head = "name = \"x\"\ncommand = \"y\"\n";
  EXPECT_EQ(err(head + "\n[capabilities]\nwaves = [8]\n"),
            "r.toml:4: [capabilities] has no 'features' (the feature tags it supports, e.g. "
            "[\"alu\", \"mem\", \"branch\"])");
  EXPECT_EQ(err(head + "[capabilities]\nfeatures = [\"alu\"]\n")
                .rfind("r.toml:3: [capabilities] "
                       "has no 'waves'",
                       0),
            0u);
  EXPECT_EQ(err(head),
            "r.toml: the description has no [capabilities] table (waves and features "
            "are required in it)");
  EXPECT_EQ(err("command = \"y\"\n"),
            "r.toml: the description has no 'name' (the implementation's name, a string)");
  EXPECT_EQ(err(head + "[capabilities]\nwaves = [8]\nfeatures = [\"alu\"]\nmax_warps = \"8\"\n"),
            "r.toml:6: capabilities.max_warps must be an integer from 1 to 4096");
  EXPECT_EQ(err(head + "[capabilities]\nwaves = [8, \"16\"]\nfeatures = [\"alu\"]\n"),
            "r.toml:4: capabilities.waves must be an array of powers of two from 1 to 64");
  EXPECT_EQ(err(head + "timeout = \"10\"\n[capabilities]\nwaves = [8]\nfeatures = []\n"),
            "r.toml:3: 'timeout' must be a number of seconds");
  EXPECT_EQ(err(head + "colour = 1\n[capabilities]\nwaves = [8]\nfeatures = []\n"),
            "r.toml:3: unknown key 'colour'");
  EXPECT_EQ(err(head + "[capabilities]\nwaves = [8]\nfeatures = []\nspeed = 1\n"),
            "r.toml:6: unknown key 'capabilities.speed'");
  EXPECT_EQ(err("name = \n").rfind("r.toml:1: not a usable TOML document: ", 0), 0u);
}

// runner.toml, format.header: text that is not UTF-8 (here inside a TOML literal
// string, where Debian's toml11 reads out of bounds: a fuzz_protocol finding) is a
// located error.
TEST(ProcessRunner, NotUtf8IsALocatedError) {
  const std::string finding =
      test::read_all(test::source_path("fuzz/seeds_protocol/finding_toml_literal_not_utf8.toml"))
          .substr(1);
  ASSERT_FALSE(finding.empty());
  auto r = runners::parse_process_spec(finding, "r.toml");
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r),
            "r.toml:6: not a usable TOML document: not UTF-8 (byte 0x8b); TOML text must be "
            "UTF-8");
  auto t = harness::parse_test(
      "t.simt", replace(kGood, "; title = \"add doubles each lane\"", "; title = 'add \xff'"));
  auto* errs = std::get_if<std::vector<harness::FormatError>>(&t);
  ASSERT_NE(errs, nullptr);
  ASSERT_EQ(errs->size(), 1u);
  EXPECT_EQ((*errs)[0].line, 3u);
  EXPECT_NE((*errs)[0].message.find("not UTF-8 (byte 0xff)"), std::string::npos);
}

// runner.toml `command`: a bare name is the file next to the description if there is
// one, else a program found in PATH; a path with '/' is relative to the description.
TEST(ProcessRunner, CommandResolution) {
  fs::path dir = temp_dir("command");
  write(dir / "impl.py", "#!/bin/sh\n");
  const std::string caps = "[capabilities]\nwaves = [8]\nfeatures = [\"alu\"]\n";
  auto cmd = [&](const std::string& c) {
    auto r = runners::parse_process_spec("name = \"x\"\ncommand = \"" + c + "\"\n" + caps,
                                         (dir / "r.toml").string());
    EXPECT_TRUE(std::holds_alternative<runners::ProcessSpec>(r)) << std::get<std::string>(r);
    return std::holds_alternative<runners::ProcessSpec>(r)
               ? std::get<runners::ProcessSpec>(r).command
               : std::string();
  };
  EXPECT_EQ(cmd("impl.py"), (dir / "impl.py").string());  // beside the description
  EXPECT_EQ(cmd("python3"), "python3");                   // not beside it: PATH
  EXPECT_EQ(cmd("./impl.py"), (dir / "impl.py").string());
  EXPECT_EQ(cmd("sub/../impl.py"), (dir / "impl.py").string());
  EXPECT_EQ(cmd("/usr/bin/env"), "/usr/bin/env");
  fs::remove_all(dir);
}

// A runner whose answers are wrong (so every configuration fails) and whose traced
// re-run crashes (`crash`), or answers without a trace.
runners::RunResult broken_trace(const runners::RunRequest& req, bool crash) {
  runners::RunResult r = runners::run_reference(req);
  r.trace.clear();
  if (req.trace && crash) {
    runners::RunResult e;
    e.kind = runners::RunResult::Kind::Error;
    e.message = "the implementation exited with signal 11 before answering";
    e.stderr_text = "tracer: segmentation fault";
    return e;
  }
  if (r.kind == runners::RunResult::Kind::Outcome && !r.outcome.buffers.empty())
    r.outcome.buffers[0].values[0] += 1;
  return r;
}

// results.record `trace_error`: a failing configuration whose traced re-run fails
// (or brings no trace) says so, with the error and standard error.
TEST(Harness, FailedTraceRerunIsReported) {
  fs::path dir = temp_dir("trace_error");
  write(dir / "good.simt", kGood);
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  for (bool crash : {true, false}) {
    FunctionRunner runner(
        [crash](const runners::RunRequest& req) { return broken_trace(req, crash); });
    harness::Options o;
    std::vector<json::Value> recs;
    harness::run(runner, suite, harness::select(suite, o), o,
                 [&](const reports::Record& r) { recs.push_back(reports::to_json(r)); });
    ASSERT_FALSE(recs.empty());
    for (const auto& r : recs) {
      EXPECT_EQ(r.find("status")->as_string(), "fail");
      const json::Value* te = r.find("trace_error");
      ASSERT_NE(te, nullptr) << json::dump(r);
      if (crash) {
        EXPECT_NE(te->as_string().find("signal 11"), std::string::npos);
        EXPECT_NE(te->as_string().find("tracer: segmentation fault"), std::string::npos);
      } else {
        EXPECT_NE(te->as_string().find("answered without a trace"), std::string::npos);
      }
      EXPECT_FALSE(r.find("reference_trace")->as_array().empty());
    }
  }
  fs::remove_all(dir);
}

// A whole run through a faulty process: failures carry the fault's first difference,
// and configurations the runner cannot run are unsupported.
TEST(Harness, FaultyRunnerFailsWithFirstDifference) {
  fs::path dir = temp_dir("faulty");
  write(dir / "cmp.simt", test::kSignedCompareTest);
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  harness::Options o;
  std::vector<json::Value> recs;
  auto runner = runners::make_process_runner(faulty("cmp-unsigned"));
  auto sum = harness::run(*runner, suite, harness::select(suite, o), o,
                          [&](const reports::Record& r) { recs.push_back(reports::to_json(r)); });
  runner->shutdown();
  EXPECT_EQ(sum.counts["fail"], 1u);
  EXPECT_EQ(sum.counts["unsupported"], 1u);  // wave 64 is not in its capabilities
  for (const auto& r : recs) {
    if (r.find("status")->as_string() != "fail") continue;
    EXPECT_EQ(r.find("first_diff")->find("index")->as_int(), 0);
    EXPECT_EQ(r.find("first_diff")->find("expected")->as_int(), 1);
    EXPECT_EQ(r.find("first_diff")->find("actual")->as_int(), 0);
  }
  fs::remove_all(dir);
}

// The README's figures of the suite are this suite's (the lavapipe part of the same
// sentence is checked by vulkan_runner_test, which can run lavapipe).
TEST(Readme, SuiteFiguresAreCurrent) {
  std::string err;
  auto suite = harness::load_suite(harness::discover({test::source_path("suites")}, err));
  ASSERT_TRUE(err.empty()) << err;
  size_t configs = 0;
  for (const auto& t : suite.tests) configs += t.configs.size();
  const std::string readme = test::read_all(test::source_path("README.md"));
  const std::string want = " of the suite's " + reports::thousands(configs) +
                           " configurations, in " + reports::thousands(suite.tests.size()) +
                           " tests;";
  EXPECT_NE(readme.find(want), std::string::npos) << "README.md should say: ..." << want;
  const std::string vreadme = test::read_all(test::source_path("runners/vulkan/README.md"));
  const std::string vwant = reports::thousands(configs) + " configurations of " +
                            reports::thousands(suite.tests.size()) + " tests: **";
  EXPECT_NE(vreadme.find(vwant), std::string::npos)
      << "runners/vulkan/README.md should say: " << vwant;
}

// results.stream: the JSON-lines file reads back, even with its last line cut.
TEST(Results, StreamReadsBackAndSurvivesTruncation) {
  fs::path dir = temp_dir("results");
  std::string path = (dir / "results.jsonl").string();
  {
    reports::JsonlWriter w;
    std::string err;
    ASSERT_TRUE(w.open(path, err)) << err;
    json::Value h;
    h["schema"] = reports::kSchema;
    h["runner"]["name"] = "reference";
    w.write(h);
    for (int i = 0; i < 3; ++i) {
      json::Value r;
      r["id"] = "t" + std::to_string(i);
      r["status"] = i == 1 ? "fail" : "pass";
      w.write(r);
    }
  }
  auto rf = reports::read_results(path);
  ASSERT_TRUE(std::holds_alternative<reports::ResultsFile>(rf)) << std::get<std::string>(rf);
  EXPECT_EQ(std::get<reports::ResultsFile>(rf).records.size(), 3u);
  EXPECT_FALSE(std::get<reports::ResultsFile>(rf).complete());
  // Cut the last line in half: the reader keeps the complete lines.
  auto size = fs::file_size(path);
  fs::resize_file(path, size - 8);
  rf = reports::read_results(path);
  ASSERT_TRUE(std::holds_alternative<reports::ResultsFile>(rf)) << std::get<std::string>(rf);
  EXPECT_EQ(std::get<reports::ResultsFile>(rf).records.size(), 2u);
  std::string xml = reports::junit_xml(std::get<reports::ResultsFile>(rf));
  EXPECT_NE(xml.find("<failure"), std::string::npos);
  EXPECT_NE(xml.find("tests=\"2\""), std::string::npos);
  write(dir / "bad.jsonl", "{\"schema\": \"other\"}\n");
  EXPECT_TRUE(
      std::holds_alternative<std::string>(reports::read_results((dir / "bad.jsonl").string())));
  fs::remove_all(dir);
}

// ---- preemption: protocol 1.2, the image expectation, images compared and exchanged ----

// A test whose launch is preempted (flow B, an intruder that overwrites SLM) at a
// step at which the round-robin cursor is 1, with its image compared.
std::string preempt_test(const std::string& expect_image) {
  const std::string sys(gen::kSysRoutine);  // suites/lib/sysroutine.simtlib
  return R"(; simtspec-test 1
; id = "demo.preempted"
; title = "two warps keep values in SLM across a preemption whose intruder overwrites SLM"
; clauses = ["preempt.flow.b"]
; features = ["alu", "mem", "preempt"]
; [matrix]
; wave = [8]
; [expect]
; status = "completed"
; [expect.buffers.out]
; each = "lane + 10"
)" + expect_image +
         R"(; [[host]]
; step = 15
; action = "preempt"
; flow = "B"
; intruder = """
; .slm 64
; .wave 8
; .buffer d u32[1] out
;     shl v1, %lane, 2
;     st slm[v1], 5
;     st slm[v1 + 32], 5
;     exit
; """
.warps 2
.slm 64
.max_steps 1000000
.sys_save sys_save
.sys_restore sys_restore
.buffer out u32[16] out
    mov v1, %lane
    add v1, v1, 10
    shl s1, %warp, 5
    shl v4, %lane, 2
    add v4, v4, s1
    st slm[v4], v1
    nop
    nop
    nop
    nop
    ld v2, slm[v4]
    mul v3, %warp, 8
    add v3, v3, %lane
    shl v3, v3, 2
    st out[v3], v2
    exit
)" + sys;
}

TEST(Preempt, Base64RoundTripsAndRejectsWhatIsNotBase64) {
  EXPECT_EQ(runners::base64_encode({}), "");
  EXPECT_EQ(runners::base64_encode({'f'}), "Zg==");
  EXPECT_EQ(runners::base64_encode({'f', 'o'}), "Zm8=");
  EXPECT_EQ(runners::base64_encode({'f', 'o', 'o'}), "Zm9v");
  EXPECT_EQ(runners::base64_encode({'f', 'o', 'o', 'b', 'a', 'r'}), "Zm9vYmFy");
  std::vector<uint8_t> all;
  for (int n = 0; n < 300; ++n) {
    EXPECT_EQ(runners::base64_decode(runners::base64_encode(all)), all) << n;
    all.push_back(static_cast<uint8_t>(n * 37 + 11));
  }
  for (const char* bad : {"Zg=", "Z===", "Zg=a", "Zm9v!A==", "=Zm9"})
    EXPECT_FALSE(runners::base64_decode(bad)) << bad;
}

TEST(Preempt, RequestsWithImagesNameProtocol12) {
  runners::RunRequest req;
  req.program = "exit\n";
  json::Value plain = runners::request_json(req, 1);
  EXPECT_EQ(plain.find("protocol")->as_string(), runners::kProtocol);
  req.image = true;
  req.restore = std::vector<uint8_t>{1, 2, 3, 4};
  const std::string line = runners::request_line(req, 2);
  EXPECT_NE(line.find(runners::kProtocol12), std::string::npos) << line;
  auto parsed = runners::parse_request_line(line);
  ASSERT_TRUE(std::holds_alternative<runners::ServerRequest>(parsed));
  const auto& r = std::get<runners::ServerRequest>(parsed).req;
  EXPECT_TRUE(r.image);
  ASSERT_TRUE(r.restore);
  EXPECT_EQ(*r.restore, (std::vector<uint8_t>{1, 2, 3, 4}));
  // The fields need 1.2; a restore that is not base64 is a protocol error.
  std::string old = line;
  old.replace(old.find(runners::kProtocol12), std::string(runners::kProtocol12).size(),
              runners::kProtocol11);
  auto e = runners::parse_request_line(old);
  ASSERT_TRUE(std::holds_alternative<std::string>(e));
  EXPECT_NE(std::get<std::string>(e).find("needs \"protocol\": \"simtspec-runner/1.2\""),
            std::string::npos);
  std::string bad = line;
  bad.replace(bad.find("AQIDBA=="), 8, "AQID!A==");
  e = runners::parse_request_line(bad);
  ASSERT_TRUE(std::holds_alternative<std::string>(e));
  EXPECT_EQ(std::get<std::string>(e), "\"restore\" must be a context image in base64");
}

TEST(Preempt, ResponsesCarryTheImageAndTheRejectedOffset) {
  runners::RunResult r;
  r.kind = runners::RunResult::Kind::Outcome;
  r.outcome.status = "completed";
  r.image = std::vector<uint8_t>{9, 8, 7};
  auto back = runners::parse_response_line(json::dump(runners::response_json(r, 5)), 5);
  ASSERT_EQ(back.kind, runners::RunResult::Kind::Outcome) << back.message;
  EXPECT_EQ(back.image, r.image);
  runners::RunResult rej;
  rej.kind = runners::RunResult::Kind::Rejected;
  rej.message = "image:48: another configuration";
  rej.image_offset = 48;
  back = runners::parse_response_line(json::dump(runners::response_json(rej, 6)), 6);
  EXPECT_EQ(back.kind, runners::RunResult::Kind::Rejected);
  EXPECT_EQ(back.image_offset, std::optional<uint64_t>(48));
}

TEST(Preempt, ImageExpectationsAreCheckedWordByWordAndNamed) {
  // The reference's image of this launch, to write expectations against.
  runners::RunRequest req;
  req.program = preempt_test("");
  std::string err;
  auto t = harness::parse_test("x.simt", req.program);
  ASSERT_TRUE(std::holds_alternative<harness::TestFile>(t));
  req.host = std::get<harness::TestFile>(t).host;
  req.config.wave = 8;
  req.config.max_steps = 1000000;  // the harness's cap (format.matrix): the image holds it
  req.image = true;
  auto ref = runners::run_reference(req);
  ASSERT_TRUE(ref.image) << ref.message;
  const auto& img = *ref.image;
  auto word = [&](size_t off) {
    return uint32_t{img[off]} | uint32_t{img[off + 1]} << 8 | uint32_t{img[off + 2]} << 16 |
           uint32_t{img[off + 3]} << 24;
  };
  // Every non-zero word, and rest = 0: the exact bytes.
  std::string words;
  for (size_t off = 0; off < img.size(); off += 4)
    if (word(off))
      words += (words.empty() ? "" : ", ") + ("\"" + std::to_string(off) + "\" = ") +
               std::to_string(word(off));
  const std::string exact = "; [expect.image]\n; size = " + std::to_string(img.size()) +
                            "\n; words = { " + words + " }\n; rest = 0\n";
  FunctionRunner same([](const runners::RunRequest& r) { return runners::run_reference(r); });
  harness::Options o;
  o.differential = false;
  auto recs = run_one(same, "image_exact", preempt_test(exact), o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "pass") << json::dump(recs[0]);
  // One byte off: the failure names the byte and the field.
  FunctionRunner flips([](const runners::RunRequest& r) {
    auto res = runners::run_reference(r);
    if (res.image) (*res.image)[8] ^= 1;  // the format version
    return res;
  });
  recs = run_one(flips, "image_flipped", preempt_test(exact), o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_NE(recs[0].find("message")->as_string().find("context image word at byte 8"),
            std::string::npos)
      << json::dump(recs[0]);
  // A runner without preempt.image does not get the test.
  FunctionRunner bare([](const runners::RunRequest& r) { return runners::run_reference(r); });
  bare.caps_.extras.erase("preempt.image");
  recs = run_one(bare, "image_bare", preempt_test(exact), o);
  EXPECT_EQ(status_of(recs[0]), "unsupported");
}

TEST(Preempt, DifferentialComparesImagesAndRestoresEachOnTheOther) {
  harness::Options o;  // differential
  FunctionRunner same([](const runners::RunRequest& r) { return runners::run_reference(r); });
  auto recs = run_one(same, "exchange_same", preempt_test(""), o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "pass") << json::dump(recs[0]);
  // An implementation that saves round-robin cursor 0: the outcome is the same
  // here, the image is not; the first difference names the field.
  FunctionRunner cursor([](const runners::RunRequest& r) {
    auto images = runners::image_request(r);
    images.faults.cursor_not_saved = true;
    auto loaded = runners::load_request(r);
    if (auto* rej = std::get_if<runners::RunResult>(&loaded)) return *rej;
    return runners::run_loaded(std::get<0>(loaded), r.trace, 0, images);
  });
  recs = run_one(cursor, "exchange_cursor", preempt_test(""), o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_NE(recs[0].find("message")->as_string().find("round-robin cursor"), std::string::npos)
      << json::dump(recs[0]);
  // An implementation whose images are right but which cannot start from the
  // reference's: the exchange finds it.
  FunctionRunner no_restore([](const runners::RunRequest& r) {
    if (r.restore) {
      runners::RunRequest plain = r;
      plain.restore.reset();
      plain.host.clear();
      return runners::run_reference(plain);  // ignores the image: runs from the start
    }
    return runners::run_reference(r);
  });
  recs = run_one(no_restore, "exchange_norestore", preempt_test(""), o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "pass") << "restarting from scratch ends the same here";
  FunctionRunner garbles([](const runners::RunRequest& r) {
    runners::RunRequest x = r;
    if (x.restore) (*x.restore)[x.restore->size() - 1] ^= 0xff;  // a program-stack byte
    auto res = runners::run_reference(x);
    if (x.restore && res.kind == runners::RunResult::Kind::Outcome && !res.outcome.buffers.empty())
      res.outcome.buffers[0].values[0] += 1;
    return res;
  });
  recs = run_one(garbles, "exchange_garbles", preempt_test(""), o);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(status_of(recs[0]), "fail");
  EXPECT_NE(recs[0].find("message")->as_string().find(
                "the reference's image restored on the implementation"),
            std::string::npos)
      << json::dump(recs[0]);
}

TEST(Preempt, RecordsNameThePreemptionsAndKeepImagesBySize) {
  FunctionRunner same([](const runners::RunRequest& r) { return runners::run_reference(r); });
  auto recs = run_one(same, "records", preempt_test(""), harness::Options{});
  ASSERT_EQ(recs.size(), 1u);
  const json::Value* pre = recs[0].find("preemptions");
  ASSERT_TRUE(pre && pre->is_array() && pre->as_array().size() == 1) << json::dump(recs[0]);
  const json::Value& p = pre->as_array()[0];
  EXPECT_EQ(p.find("step")->as_int(), 15);
  EXPECT_EQ(p.find("flow")->as_string(), "B");
  EXPECT_NE(p.find("intruder")->as_string().find("st slm[v1], 5"), std::string::npos);
  const json::Value* actual = recs[0].find("actual");
  ASSERT_TRUE(actual);
  EXPECT_FALSE(actual->find("image")) << "a record keeps an image's size, not its bytes";
  ASSERT_TRUE(actual->find("image_bytes"));
  EXPECT_GT(actual->find("image_bytes")->as_int(), 0);
}
}  // namespace
}  // namespace simt
