// The example programs in examples/: each ends with the status its `; expect:`
// line names, at several wave sizes; some outputs are checked value by value; and
// every truncation and many random mutations of every example either load and run
// to a final status or are rejected with located diagnostics.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support.h"

namespace simt {
namespace {

using test::read_all;

namespace fs = std::filesystem;
using exec::Status;

constexpr uint32_t kWaves[] = {8, 16, 32, 64};
constexpr uint64_t kRobustMaxSteps = 200000;

struct Example {
  std::string name;  // file name, e.g. "vector_add.simt"
  std::string text;
  std::optional<Status> expect;  // from the `; expect: STATUS` line
  bool has_title = false;        // first line is a `; title` comment
  // From the `; run: FLAGS` line: the flags .ci/main runs it with. Only the
  // preemption flags of `simtspec run` are used by examples (preempt.tool.run).
  std::vector<std::string> run_flags;
};

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      out.emplace_back(text.substr(start));
      break;
    }
    out.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

Example parse_example(const fs::path& p) {
  Example e;
  e.name = p.filename().string();
  e.text = read_all(p);
  auto lines = split_lines(e.text);
  e.has_title = !lines.empty() && lines[0].size() > 2 && lines[0].rfind("; ", 0) == 0;
  constexpr std::string_view kExpect = "; expect: ";
  for (size_t i = 0; i < lines.size() && i < 4; ++i) {
    if (lines[i].rfind(kExpect, 0) == 0) {
      e.expect = exec::find_status(std::string_view(lines[i]).substr(kExpect.size()));
      break;
    }
  }
  constexpr std::string_view kRun = "; run: ";
  for (size_t i = 0; i < lines.size() && i < 5; ++i)
    if (lines[i].rfind(kRun, 0) == 0) {
      std::istringstream in(lines[i].substr(kRun.size()));
      for (std::string w; in >> w;) e.run_flags.push_back(w);
    }
  return e;
}

// The host script of an example's `; run:` flags: `--preempt-at N [--flow A|B]
// [--intruder FILE]` (FILE relative to the repository), as `simtspec run` makes it.
std::vector<syntax::HostStep> run_host(const Example& e) {
  std::vector<syntax::HostStep> host;
  const auto& f = e.run_flags;
  for (size_t i = 0; i + 1 < f.size(); i += 2) {
    if (f[i] == "--preempt-at") {
      syntax::HostStep h;
      h.kind = syntax::HostKind::Preempt;
      h.step = std::stoull(f[i + 1]);
      host.push_back(h);
    } else if (f[i] == "--flow" && !host.empty()) {
      host.back().flow = f[i + 1] == "B" ? syntax::PreemptFlow::B : syntax::PreemptFlow::A;
    } else if (f[i] == "--intruder" && !host.empty()) {
      host.back().intruder = read_all(test::source_path(f[i + 1]));
    } else {
      ADD_FAILURE() << e.name << ": '; run:' flag " << f[i] << " is not one examples use";
    }
  }
  return host;
}

// Every examples/*.simt, sorted by name.
const std::vector<Example>& examples() {
  static const std::vector<Example> all = [] {
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(test::source_path("examples")))
      if (entry.is_regular_file() && entry.path().extension() == ".simt")
        paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    std::vector<Example> out;
    for (const auto& p : paths) out.push_back(parse_example(p));
    return out;
  }();
  return all;
}

const Example& example(std::string_view name) {
  for (const auto& e : examples())
    if (e.name == name) return e;
  static const Example none;
  ADD_FAILURE() << "no example named " << name;
  return none;
}

host::LoadOptions at_wave(uint32_t wave) {
  host::LoadOptions opt;
  opt.cli.wave = wave;
  return opt;
}

// Runs an example and requires that it loads.
test::Run run_example(std::string_view name, host::LoadOptions opt = {}) {
  auto r = test::run(example(name).text, opt);
  EXPECT_TRUE(r.ok()) << name << ":\n" << r.diags;
  return r;
}

std::vector<uint32_t> out_words(const test::Run& r, std::string_view buffer) {
  if (!r.ok()) return {};
  return test::words(*r.outcome, buffer);
}

// ---- headers and statuses ------------------------------------------------------

TEST(Examples, AtLeastTenWithTitleAndExpectLine) {
  const auto& all = examples();
  EXPECT_GE(all.size(), 10u) << "examples/ should hold at least 10 programs";
  for (const auto& e : all) {
    EXPECT_TRUE(e.has_title) << e.name << ": the first line should be a '; title' comment";
    EXPECT_TRUE(e.expect.has_value())
        << e.name << ": needs a line '; expect: STATUS' among the first lines";
  }
}

TEST(Examples, EndWithTheirExpectedStatus) {
  std::set<Status> seen;
  for (const auto& e : examples()) {
    if (!e.expect) continue;
    host::LoadOptions opt;
    opt.host = run_host(e);
    auto r = test::run(e.text, opt);
    ASSERT_TRUE(r.ok()) << e.name << " does not load:\n" << r.diags;
    EXPECT_EQ(exec::status_name(r.status()), exec::status_name(*e.expect)) << e.name;
    seen.insert(r.status());
  }
  // The examples show every way a launch can end, apart from the step limit.
  for (Status s : {Status::Completed, Status::Trapped, Status::Deadlock, Status::Livelock})
    EXPECT_TRUE(seen.count(s)) << "no example ends with status " << exec::status_name(s);
}

TEST(Examples, SameStatusAtWave8To64) {
  for (const auto& e : examples()) {
    if (!e.expect) continue;
    for (uint32_t wave : kWaves) {
      auto r = test::run(e.text, at_wave(wave));
      ASSERT_TRUE(r.ok()) << e.name << " at wave " << wave << ":\n" << r.diags;
      EXPECT_EQ(exec::status_name(r.status()), exec::status_name(*e.expect))
          << e.name << " at wave " << wave;
    }
  }
}

// Programs that complete do so with the same outputs whatever the warp schedule.
TEST(Examples, CompletedOutputsDoNotDependOnThePolicy) {
  for (const auto& e : examples()) {
    if (e.expect != Status::Completed) continue;
    auto base = test::run(e.text);
    ASSERT_TRUE(base.ok()) << e.name << ":\n" << base.diags;
    for (exec::Policy p :
         {exec::Policy::LowestPcFirst, exec::Policy::OldestFirst, exec::Policy::Random}) {
      for (uint64_t seed : {1u, 2u, 3u}) {
        host::LoadOptions opt;
        opt.cli.policy = p;
        opt.cli.seed = seed;
        auto r = test::run(e.text, opt);
        ASSERT_TRUE(r.ok()) << e.name << ":\n" << r.diags;
        EXPECT_TRUE(r.outcome->same_result(*base.outcome))
            << e.name << " under " << exec::policy_name(p) << " seed " << seed;
        if (p != exec::Policy::Random) break;
      }
    }
  }
}

// ---- exact outputs --------------------------------------------------------------

TEST(Examples, VectorAddOutput) {
  auto r = run_example("vector_add.simt");
  EXPECT_EQ(out_words(r, "out"),
            (std::vector<uint32_t>{100, 111, 122, 133, 144, 155, 166, 177, 188, 199, 210,
                                   221, 232, 243, 254, 265, 276, 287, 298, 309, 320, 331,
                                   342, 353, 364, 375, 386, 397, 408, 419, 430, 441}));
  for (uint32_t wave : kWaves) {
    auto rw = run_example("vector_add.simt", at_wave(wave));
    std::vector<uint32_t> want(wave * 2 * 2);
    for (uint32_t i = 0; i < want.size(); ++i) want[i] = 100 + 11 * i;
    EXPECT_EQ(out_words(rw, "out"), want) << "wave " << wave;
  }
}

TEST(Examples, DivergentIfElseOutput) {
  auto r = run_example("divergent_if_else.simt");
  EXPECT_EQ(out_words(r, "out"), (std::vector<uint32_t>{0, 1001, 20, 2003, 40, 1005, 60, 2007}));
  EXPECT_EQ(out_words(r, "side"), (std::vector<uint32_t>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(out_words(r, "steps"), std::vector<uint32_t>(8, 2));
  for (uint32_t wave : kWaves) {
    auto rw = run_example("divergent_if_else.simt", at_wave(wave));
    std::vector<uint32_t> out(wave), side(wave);
    for (uint32_t l = 0; l < wave; ++l) {
      out[l] = l % 2 == 0 ? 10 * l : l % 4 == 1 ? 1000 + l : 2000 + l;
      side[l] = l % 2 == 0 ? 1 : 2;
    }
    EXPECT_EQ(out_words(rw, "out"), out) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "side"), side) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "steps"), std::vector<uint32_t>(wave, 2)) << "wave " << wave;
  }
}

TEST(Examples, NestedLoopsOutput) {
  auto r = run_example("nested_loops_divergent_exit.simt");
  EXPECT_EQ(out_words(r, "acc"), (std::vector<uint32_t>{0, 2, 3, 16, 4, 18, 27, 0}));
  EXPECT_EQ(out_words(r, "iters"), (std::vector<uint32_t>{0, 2, 6, 12, 4, 10, 18, 0}));
  for (uint32_t wave : kWaves) {
    auto rw = run_example("nested_loops_divergent_exit.simt", at_wave(wave));
    std::vector<uint32_t> acc(wave), iters(wave);
    for (uint32_t l = 0; l < wave; ++l) {
      uint32_t outer = l % 4 + 1, n = l % 7, odd = (n + 1) / 2;
      acc[l] = outer * odd * odd;
      iters[l] = outer * n;
    }
    EXPECT_EQ(out_words(rw, "acc"), acc) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "iters"), iters) << "wave " << wave;
  }
}

uint32_t collatz_steps(uint32_t n) {
  uint32_t steps = 0;
  for (; n > 1; ++steps) n = n % 2 == 0 ? n / 2 : 3 * n + 1;
  return steps;
}

TEST(Examples, CallReturnOutput) {
  auto r = run_example("call_return.simt");
  EXPECT_EQ(out_words(r, "out"), (std::vector<uint32_t>{0, 2, 7, 3, 5, 9, 16, 4}));
  EXPECT_EQ(out_words(r, "calls"), std::vector<uint32_t>(8, 1));
  for (uint32_t wave : kWaves) {
    auto rw = run_example("call_return.simt", at_wave(wave));
    std::vector<uint32_t> out(wave);
    for (uint32_t l = 0; l < wave; ++l) out[l] = collatz_steps(l % 2 == 0 ? l + 1 : 2 * l + 2);
    EXPECT_EQ(out_words(rw, "out"), out) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "calls"), std::vector<uint32_t>(wave, 1)) << "wave " << wave;
  }
}

TEST(Examples, BallotShuffleOutput) {
  auto r = run_example("ballot_shuffle.simt");
  EXPECT_EQ(out_words(r, "summary"), (std::vector<uint32_t>{0x55, 0, 4, 1, 0, 1, 22, 92}));
  EXPECT_EQ(out_words(r, "rotated"), (std::vector<uint32_t>{4, 7, 10, 13, 16, 19, 22, 1}));
  EXPECT_EQ(out_words(r, "total"), std::vector<uint32_t>(8, 92));
  EXPECT_EQ(out_words(r, "in_if"), (std::vector<uint32_t>{0, 7777, 0, 7777, 0, 7777, 0, 7777}));
  for (uint32_t wave : kWaves) {
    auto rw = run_example("ballot_shuffle.simt", at_wave(wave));
    auto value = [](uint32_t l) { return 1 + 3 * l; };
    uint64_t odd = 0;
    uint32_t sum = 0;
    for (uint32_t l = 0; l < wave; ++l) {
      if (value(l) % 2 == 1) odd |= uint64_t{1} << l;
      sum += value(l);
    }
    std::vector<uint32_t> summary = {static_cast<uint32_t>(odd),
                                     static_cast<uint32_t>(odd >> 32),
                                     static_cast<uint32_t>(std::popcount(odd)),
                                     1,
                                     0,
                                     1,
                                     value(wave - 1),
                                     sum};
    std::vector<uint32_t> rotated(wave), in_if(wave);
    for (uint32_t l = 0; l < wave; ++l) {
      rotated[l] = value((l + 1) % wave);
      in_if[l] = l % 2 == 0 ? 0 : 7777;
    }
    EXPECT_EQ(out_words(rw, "summary"), summary) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "rotated"), rotated) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "total"), std::vector<uint32_t>(wave, sum)) << "wave " << wave;
    EXPECT_EQ(out_words(rw, "in_if"), in_if) << "wave " << wave;
  }
}

TEST(Examples, DivByZeroTrapEvent) {
  for (uint32_t wave : kWaves) {
    auto r = run_example("div_by_zero_trap.simt", at_wave(wave));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.status(), Status::Trapped);
    ASSERT_TRUE(r.outcome->event.has_value());
    EXPECT_EQ(r.outcome->event->code, isa::Event::DivZero);
    EXPECT_EQ(r.outcome->event->warp, 0u);
    EXPECT_EQ(r.outcome->event->lane, 5);
    std::vector<uint32_t> before(wave);
    for (uint32_t l = 0; l < wave; ++l) before[l] = l - 5;
    EXPECT_EQ(out_words(r, "before"), before) << "wave " << wave;
    EXPECT_EQ(out_words(r, "quot"), std::vector<uint32_t>(wave, 0)) << "wave " << wave;
  }
}

TEST(Examples, BarrierAcrossWarpsOutput) {
  for (uint32_t wave : kWaves) {
    for (exec::Policy p : {exec::Policy::RoundRobin, exec::Policy::LowestPcFirst,
                           exec::Policy::OldestFirst, exec::Policy::Random}) {
      host::LoadOptions opt = at_wave(wave);
      opt.cli.policy = p;
      opt.cli.seed = 7;
      auto r = run_example("barrier_across_warps.simt", opt);
      EXPECT_EQ(r.status(), Status::Completed);
      constexpr uint32_t kWarps = 4, kGroups = 2;
      std::vector<uint32_t> got(wave * kWarps * kGroups), again(got.size());
      for (uint32_t g = 0; g < kGroups; ++g)
        for (uint32_t w = 0; w < kWarps; ++w)
          for (uint32_t l = 0; l < wave; ++l) {
            uint32_t gid = (g * kWarps + w) * wave + l;
            got[gid] = 1000 * g + 100 * ((w + 1) % kWarps) + (wave - 1 - l);
            again[gid] = 1000 * g + 100 * ((w + 2) % kWarps) + l + 1;
          }
      EXPECT_EQ(out_words(r, "got"), got) << "wave " << wave << " " << exec::policy_name(p);
      EXPECT_EQ(out_words(r, "again"), again) << "wave " << wave << " " << exec::policy_name(p);
    }
  }
}

TEST(Examples, SpinLivelockOutput) {
  auto r = run_example("spin_livelock.simt");
  EXPECT_EQ(r.status(), Status::Livelock);
  EXPECT_EQ(out_words(r, "flag"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(out_words(r, "data"), (std::vector<uint32_t>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(out_words(r, "result"), std::vector<uint32_t>(8, 0));
  // Detected quickly, long before the default step limit.
  ASSERT_TRUE(r.ok());
  EXPECT_LT(r.outcome->steps, 1000u);
  // The fix the comment describes makes it complete.
  std::string fixed = example("spin_livelock.simt").text;
  auto at = fixed.find("mov s1, 2 ");
  ASSERT_NE(at, std::string::npos);
  fixed[at + 8] = '1';
  auto f = test::run(fixed);
  ASSERT_TRUE(f.ok()) << f.diags;
  EXPECT_EQ(f.status(), Status::Completed);
  EXPECT_EQ(out_words(f, "result"), (std::vector<uint32_t>{0, 2, 4, 6, 8, 10, 12, 14}));
}

TEST(Examples, BarrierDeadlockOutput) {
  auto r = run_example("barrier_deadlock.simt");
  EXPECT_EQ(r.status(), Status::Deadlock);
  std::vector<uint32_t> before;
  for (uint32_t w = 0; w < 3; ++w)
    for (uint32_t l = 0; l < 8; ++l) before.push_back(100 * (w + 1));
  EXPECT_EQ(out_words(r, "before"), before);
  EXPECT_EQ(out_words(r, "after"), std::vector<uint32_t>(24, 0));
}

TEST(Examples, SlmHistogramOutput) {
  auto r = run_example("slm_histogram.simt");
  EXPECT_EQ(out_words(r, "hist"), (std::vector<uint32_t>{1, 5, 10, 10, 5, 1, 0, 0,  //
                                                         0, 1, 5, 10, 10, 5, 1, 0}));
  for (uint32_t wave : kWaves) {
    auto rw = run_example("slm_histogram.simt", at_wave(wave));
    constexpr uint32_t kWarps = 4, kGroups = 2;
    std::vector<uint32_t> hist(8 * kGroups, 0);
    for (uint32_t gid = 0; gid < wave * kWarps * kGroups; ++gid)
      ++hist[gid / (wave * kWarps) * 8 + std::popcount(gid) % 8];
    EXPECT_EQ(out_words(rw, "hist"), hist) << "wave " << wave;
  }
}

TEST(Examples, PrefixSumOutput) {
  auto r = run_example("prefix_sum.simt");
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < 32; ++i) want.push_back((i + 1) * (i + 2) / 2);
  EXPECT_EQ(out_words(r, "out"), want);
  EXPECT_EQ(want.back(), 528u);
  for (uint32_t wave : kWaves) {
    auto rw = run_example("prefix_sum.simt", at_wave(wave));
    std::vector<uint32_t> w(wave * 4);
    for (uint32_t i = 0; i < w.size(); ++i) w[i] = (i + 1) * (i + 2) / 2;
    EXPECT_EQ(out_words(rw, "out"), w) << "wave " << wave;
  }
}

// atom.lane, atom.lane.order: per-lane atomics lose no update; exactly one thread
// per non-empty bin saw the old value 0.
TEST(Examples, AtomicHistogramOutput) {
  for (uint32_t wave : kWaves) {
    auto r = run_example("atomic_histogram.simt", at_wave(wave));
    ASSERT_EQ(r.status(), Status::Completed) << "wave " << wave;
    std::vector<uint32_t> hist(8, 0);
    for (uint32_t gid = 0; gid < wave * 4 * 2; ++gid) ++hist[std::popcount(gid) % 8];
    EXPECT_EQ(out_words(r, "hist"), hist) << "wave " << wave;
    const auto nonempty = static_cast<uint32_t>(
        std::count_if(hist.begin(), hist.end(), [](uint32_t n) { return n != 0; }));
    EXPECT_EQ(out_words(r, "firsts"), std::vector<uint32_t>{nonempty}) << "wave " << wave;
  }
  auto r = run_example("atomic_histogram.simt");
  EXPECT_EQ(out_words(r, "hist"), (std::vector<uint32_t>{1, 6, 15, 20, 15, 6, 1, 0}));
  EXPECT_EQ(out_words(r, "firsts"), std::vector<uint32_t>{7});
}

// atom.lock, atom.unlock, atom.warp: every warp updates the total exactly once,
// under every policy (CompletedOutputsDoNotDependOnThePolicy runs the others).
TEST(Examples, WarpLockOutput) {
  for (uint32_t wave : kWaves) {
    auto r = run_example("warp_lock.simt", at_wave(wave));
    EXPECT_EQ(out_words(r, "total"), std::vector<uint32_t>{10}) << "wave " << wave;
    EXPECT_EQ(out_words(r, "count"), std::vector<uint32_t>{4}) << "wave " << wave;
    EXPECT_EQ(out_words(r, "lock"), std::vector<uint32_t>{0}) << "wave " << wave;
  }
}

// ---- robustness: truncated and mutated examples -------------------------------------

// Lines as the lexer counts them: "\n", "\r" and "\r\n" each end one line.
size_t count_lines(std::string_view text) {
  size_t lines = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++lines;
    } else if (text[i] == '\r') {
      ++lines;
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    }
  }
  return lines;
}

// Checks one diagnostic line: `test:LINE:COL: ...` with LINE <= max_line.
// Returns an explanation of the problem, or nothing.
std::optional<std::string> bad_diag_line(std::string_view line, size_t max_line) {
  constexpr std::string_view kPrefix = "test:";
  if (line.rfind(kPrefix, 0) != 0) return "does not start with 'test:'";
  size_t i = kPrefix.size();
  auto number = [&](uint64_t& v) {
    size_t start = i;
    v = 0;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9' && i - start < 12)
      v = v * 10 + static_cast<uint64_t>(line[i++] - '0');
    return i > start;
  };
  uint64_t ln = 0, col = 0;
  if (!number(ln) || i >= line.size() || line[i] != ':') return "no line number";
  ++i;
  if (!number(col) || line.substr(i, 2) != ": ") return "no column number";
  if (ln > max_line)
    return "line " + std::to_string(ln) + " is past the end (" + std::to_string(max_line) + ")";
  return std::nullopt;
}

std::string escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n\n";
    } else if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

struct RobustStats {
  size_t loaded = 0, rejected = 0, failures = 0;
  std::map<std::string, size_t> statuses;  // of the variants that loaded
  std::string summary() const {
    std::string s = std::to_string(loaded) + " loaded (";
    for (const auto& [name, n] : statuses) s += " " + name + " " + std::to_string(n);
    return s + " ), " + std::to_string(rejected) + " rejected";
  }
};

// A variant must either load and run to a final status within the step limit, or
// be rejected with diagnostics that are all located inside the text (or one past).
void check_variant(const std::string& text, const std::string& what, RobustStats& stats) {
  host::LoadOptions opt;
  opt.cli.max_steps = kRobustMaxSteps;
  auto loaded = test::load(text, opt);
  std::string problem;
  if (loaded.loaded) {
    ++stats.loaded;
    exec::Machine m(loaded.loaded->program);
    auto o = m.run();
    ++stats.statuses[std::string(exec::status_name(o.status))];
    if (o.status == Status::Paused)
      problem = "ended paused";
    else if (o.steps > kRobustMaxSteps)
      problem = "ran " + std::to_string(o.steps) + " steps";
  } else {
    ++stats.rejected;
    std::string diags = loaded.diags.format("test");
    const size_t max_line = count_lines(text) + 1;
    if (diags.empty()) problem = "rejected without diagnostics";
    for (const auto& line : split_lines(diags)) {
      if (line.empty()) continue;
      if (auto bad = bad_diag_line(line, max_line)) {
        problem = "diagnostic '" + line + "': " + *bad;
        break;
      }
    }
  }
  if (problem.empty()) return;
  // Report the first few failures in full, then only count them.
  if (++stats.failures <= 5)
    ADD_FAILURE() << what << ": " << problem << "\n--- text ---\n" << escaped(text);
}

uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

TEST(ExamplesRobustness, EveryTruncationLoadsOrIsLocated) {
  RobustStats stats;
  for (const auto& e : examples()) {
    std::set<size_t> cuts;
    for (size_t i = 0; i <= e.text.size(); i += 7) cuts.insert(i);
    cuts.insert(e.text.size());
    for (size_t i = 0; i < e.text.size(); ++i)
      if (e.text[i] == '\n') cuts.insert(i), cuts.insert(i + 1);
    for (size_t cut : cuts)
      check_variant(e.text.substr(0, cut), e.name + " cut at byte " + std::to_string(cut), stats);
  }
  std::printf("[ stats    ] %s\n", stats.summary().c_str());
  EXPECT_EQ(stats.failures, 0u);
  EXPECT_GT(stats.loaded, 0u);
  EXPECT_GT(stats.rejected, 0u);
}

// Random mutations of a program text, deterministic for a given generator.
class Mutator {
 public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}

  std::string mutate(std::string s) {
    const uint32_t n = 1 + pick(4);
    for (uint32_t k = 0; k < n; ++k) once(s);
    return s;
  }

 private:
  uint32_t pick(size_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng_() % n); }
  size_t pos(const std::string& s) { return pick(s.size() + 1); }

  void once(std::string& s) {
    // Whole statements, inserted as a line of their own.
    static constexpr std::string_view kLines =
        "loop|endloop|if p0|else|endif|break|break p1|continue|bar|exit|ret|call done|done:|"
        "jmp spin|spin:|x:|cbr pt, x|nop|.wave 64|.wave 1|.warps 3|.slm 4|.mask_depth 1|"
        ".call_depth 1|.vregs 1|.sregs 1|.max_steps 5|.policy random|.workgroups 64|.cores 3";
    // Fragments, inserted anywhere.
    static constexpr std::string_view kTokens[] = {
        "v31",        "s31",    "p15",       "pt",          "!p0",        "%lane",
        "%exec",      "%gwarp", "%exec_hi",  "-2147483648", "4294967295", "0x7fffffff",
        "0b101",      "slm[",   "out[v0]",   "[",           "]",          ",",
        ":",          ";",      "(",         ")",           "*",          "-",
        "+",          " ",      "\t",        "\r",          "\r\n",       "threads",
        "wave*warps", "= iota", "= fill(9)", "u8",          "i32",        "inout"};
    static constexpr char kBytes[] = {'\0', '\xff', '\n', '\r', ';', ':', ',', '[', ']',
                                      '-',  '!',    '%',  '.',  '0', '9', 'v', 's', 'p'};
    switch (pick(12)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1: {  // delete a run of bytes
        if (s.empty()) break;
        size_t at = pick(s.size());
        s.erase(at, 1 + pick(8));
        break;
      }
      case 2: {  // insert random bytes
        size_t at = pos(s);
        std::string ins;
        for (uint32_t i = 0, n = 1 + pick(4); i < n; ++i) ins += static_cast<char>(pick(256));
        s.insert(at, ins);
        break;
      }
      case 3:  // insert an interesting byte (including 0x00 and 0xff)
        s.insert(pos(s), 1, kBytes[pick(std::size(kBytes))]);
        break;
      case 4: {  // duplicate a run of bytes somewhere else
        if (s.empty()) break;
        size_t from = pick(s.size());
        std::string run = s.substr(from, 1 + pick(24));
        s.insert(pos(s), run);
        break;
      }
      case 5:  // insert a fragment of the language
        s.insert(pos(s), kTokens[pick(std::size(kTokens))]);
        break;
      case 7: {  // insert a statement at the start of a line
        size_t at = s.rfind('\n', pick(s.size()));
        at = at == std::string::npos ? 0 : at + 1;
        s.insert(at,
                 nth_field(kLines, pick(std::count(kLines.begin(), kLines.end(), '|') + 1)) + "\n");
        break;
      }
      case 6: {  // replace a number by an edge value
        static constexpr std::string_view kNumbers[] = {"0",
                                                        "1",
                                                        "2",
                                                        "7",
                                                        "31",
                                                        "32",
                                                        "63",
                                                        "64",
                                                        "65",
                                                        "4096",
                                                        "65536",
                                                        "4294967295",
                                                        "99999999999999999999"};
        size_t at = pick(s.size());
        size_t d = s.find_first_of("0123456789", at);
        if (d == std::string::npos) break;
        size_t end = s.find_first_not_of("0123456789", d);
        s.replace(d, (end == std::string::npos ? s.size() : end) - d,
                  kNumbers[pick(std::size(kNumbers))]);
        break;
      }
      default:
        line_op(s);
        break;
    }
  }

  // Field n of a '|'-separated list.
  static std::string nth_field(std::string_view list, size_t n) {
    for (; n > 0; --n) list.remove_prefix(list.find('|') + 1);
    return std::string(list.substr(0, list.find('|')));
  }

  void line_op(std::string& s) {
    auto lines = split_lines(s);
    if (lines.empty()) return;
    size_t a = pick(lines.size()), b = pick(lines.size());
    switch (pick(4)) {
      case 0:
        std::swap(lines[a], lines[b]);
        break;  // swap two lines
      case 1:
        lines.erase(lines.begin() + static_cast<long>(a));
        break;  // delete a line
      case 2:
        lines.insert(lines.begin() + static_cast<long>(b), lines[a]);
        break;    // duplicate
      default: {  // move a line
        std::string l = lines[a];
        lines.erase(lines.begin() + static_cast<long>(a));
        lines.insert(lines.begin() + static_cast<long>(std::min(b, lines.size())), l);
        break;
      }
    }
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
    s = std::move(out);
  }

  std::mt19937 rng_;
};

TEST(ExamplesRobustness, RandomMutationsLoadOrAreLocated) {
  constexpr int kMutations = 300;
  RobustStats stats;
  for (const auto& e : examples()) {
    Mutator mut(20261122u ^ fnv1a(e.name));
    for (int i = 0; i < kMutations; ++i)
      check_variant(mut.mutate(e.text), e.name + " mutation " + std::to_string(i), stats);
  }
  std::printf("[ stats    ] %s\n", stats.summary().c_str());
  EXPECT_EQ(stats.failures, 0u);
  EXPECT_GT(stats.loaded, 0u);
  EXPECT_GT(stats.rejected, 0u);
}

}  // namespace
}  // namespace simt
