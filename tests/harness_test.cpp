// The conformance harness: test-file parsing and lint (format.*), expressions,
// comparison (runner.harness, runner.differential, runner.firstdiff), the
// process protocol and its isolation of crashing, hanging and garbage-talking
// implementations (runner.protocol.*), shards, and results files (results.*).
#include <gtest/gtest.h>
#include <limits>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <set>

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
  auto unknown = std::get<harness::Expr>(harness::Expr::parse("nope + 1"));
  EXPECT_TRUE(
      std::holds_alternative<std::string>(unknown.eval(harness::element_vars(0, 4, 4, 1, 1, 1))));
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
                          [&](const json::Value& r) { recs.push_back(r); });
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
  runners::Capabilities caps_;
  runners::RunResult run(const runners::RunRequest& req) override {
    std::lock_guard<std::mutex> g(mu_);
    return fn_(req);
  }

 private:
  Fn fn_;
  std::unique_ptr<runners::Runner> ref_ = runners::make_reference_runner();
  std::mutex mu_;
};

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
  auto sum = harness::run(own, suite, harness::select(suite, o), o, [&](const json::Value& r) {
    by_id[r.find("id")->as_string()].push_back(r);
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
  sum = harness::run(own, suite, harness::select(suite, o), o, [](const json::Value&) {});
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
                          [&](const json::Value& r) { recs.push_back(r); });
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
               [&](const json::Value& r) { recs.push_back(r); });
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

// runner.protocol.request: every launch setting travels, with its type; a key the
// request leaves out means the program's directive, else the default.
TEST(Protocol, EveryLaunchSettingTravelsAndAbsentMeansDirective) {
  runners::RunRequest req;
  req.program =
      ".warps 2\n.buffer out u32[2] out\n  mul s0, %warp, 4\n  st out[s0], %nwarps\n"
      "  exit\n";
  runners::RunConfig all;
  uint32_t n = 1;
  for (const auto& f : runners::kU32Settings) all.*f.field = n++;
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
            "r.toml:4: capabilities.waves must be an array of integers from 1 to 4096");
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
                 [&](const json::Value& r) { recs.push_back(r); });
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
                          [&](const json::Value& r) { recs.push_back(r); });
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

}  // namespace
}  // namespace simt
