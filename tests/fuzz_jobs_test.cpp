// `simtspec fuzz --jobs N` (spec/oracles.md, oracle.fuzz.jobs): worker processes, the
// records they send, and results that do not depend on the number of jobs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "fuzz.h"
#include "fuzz_wire.h"
#include "generate.h"
#include "process.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using gen::wire::ItemResult;

// ---------------------------------------------------------------------------
// The record and the frames

ItemResult sample() {
  ItemResult r;
  r.invariant = "differential";
  r.k = 0x123456789abcull;
  r.verdict = ItemResult::Verdict::Fails;
  r.message = std::string("line 1\nline 2 with a NUL \0 and \xff", 32);
  r.seconds = 0.000123;
  r.counters = {{"stmt.if", 3}, {"instr.add", 17}, {"big", UINT64_MAX}};
  r.text = ".wave 8\nexit\n";
  r.signature = "differential/buffer/-/-";  // oracle.fuzz.signature
  r.hash = 0xfedcba9876543210ull;           // oracle.fuzz.results
  return r;
}

TEST(FuzzWire, RecordsRoundTrip) {
  for (auto v :
       {ItemResult::Verdict::Holds, ItemResult::Verdict::Fails, ItemResult::Verdict::Unsupported,
        ItemResult::Verdict::Skipped, ItemResult::Verdict::Error}) {
    ItemResult r = sample();
    r.verdict = v;
    auto back = gen::wire::decode(gen::wire::encode(r));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, r);
  }
  ItemResult empty;
  auto back = gen::wire::decode(gen::wire::encode(empty));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, empty);
}

// Extensible: a reader skips fields it does not know, of every wire type.
TEST(FuzzWire, UnknownFieldsAreSkipped) {
  const ItemResult r = sample();
  std::string bytes = gen::wire::encode(r);
  bytes += std::string("\x63\x00\x81\x01", 4);                   // tag 99, varint 129
  bytes += std::string("\x64\x01", 2) + std::string(8, '\x07');  // tag 100, fixed64
  bytes += std::string("\x65\x02\x03xyz", 6);                    // tag 101, bytes
  bytes += std::string("\x66\x03\x01\x01q\x05", 6);              // tag 102, counts
  auto back = gen::wire::decode(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(FuzzWire, MalformedRecordsAreRejected) {
  const std::string bytes = gen::wire::encode(sample());
  for (size_t n = 1; n < bytes.size(); ++n) {
    auto back = gen::wire::decode(bytes.substr(0, n));
    // A prefix may end between fields; then it decodes, but never to the whole record.
    if (back) {
      EXPECT_NE(*back, sample()) << n;
    }
  }
  EXPECT_FALSE(gen::wire::decode(std::string("\x01\x09", 2)).has_value());       // wire type 9
  EXPECT_FALSE(gen::wire::decode(std::string("\x02\x02\x01x", 4)).has_value());  // k as bytes
  EXPECT_FALSE(gen::wire::decode(std::string("\x03\x00\x09", 3)).has_value());   // verdict 9
}

// Frames arrive from a pipe in pieces of any size.
TEST(FuzzWire, FramesSurviveAnySplit) {
  std::string stream;
  std::vector<std::pair<char, std::string>> sent;
  for (int i = 0; i < 300; ++i) {
    ItemResult r = sample();
    r.k = static_cast<uint64_t>(i);
    r.text.assign(static_cast<size_t>(i * 37 % 5000), 'x');
    sent.push_back({gen::wire::kResult, gen::wire::encode(r)});
  }
  sent.push_back({gen::wire::kBatch, gen::wire::encode_batch({1, 2, 300, UINT64_MAX})});
  sent.push_back({gen::wire::kSkip, gen::wire::encode_skip(3, 77)});
  sent.push_back({gen::wire::kFatal, ""});
  for (const auto& [kind, payload] : sent) gen::wire::append_frame(stream, kind, payload);
  for (size_t piece : {1u, 3u, 4u, 5u, 4096u, 100000u}) {
    gen::wire::FrameReader in;
    std::vector<std::pair<char, std::string>> got;
    for (size_t at = 0; at < stream.size(); at += piece) {
      in.feed(stream.data() + at, std::min(piece, stream.size() - at));
      char kind;
      std::string payload;
      while (in.next(kind, payload)) got.push_back({kind, payload});
    }
    EXPECT_EQ(got, sent) << piece;
    EXPECT_TRUE(in.empty());
  }
  auto items = gen::wire::decode_batch(gen::wire::encode_batch({1, 2, 300, UINT64_MAX}));
  ASSERT_TRUE(items.has_value());
  EXPECT_EQ(*items, (std::vector<uint64_t>{1, 2, 300, UINT64_MAX}));
  uint64_t j = 0, k = 0;
  EXPECT_TRUE(gen::wire::decode_skip(gen::wire::encode_skip(3, 77), j, k));
  EXPECT_EQ(j, 3u);
  EXPECT_EQ(k, 77u);
  EXPECT_FALSE(gen::wire::decode_batch(std::string("\x05\x01", 2)).has_value());
}

// ---------------------------------------------------------------------------
// Runs

struct Logged {
  gen::FuzzResult result;
  std::string log;
};

Logged fuzz(gen::FuzzOptions o, uint32_t jobs) {
  o.jobs = jobs;
  Logged l;
  l.result = gen::fuzz(o, [&](const std::string& line) { l.log += line + "\n"; });
  return l;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

// What must not depend on the number of jobs (oracle.fuzz.jobs): everything but times.
void expect_same(const gen::FuzzResult& a, const gen::FuzzResult& b) {
  EXPECT_EQ(a.programs, b.programs);
  ASSERT_EQ(a.stats.size(), b.stats.size());
  for (const auto& [name, st] : a.stats) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(b.stats.count(name));
    const auto& sb = b.stats.at(name);
    EXPECT_EQ(st.programs, sb.programs);
    EXPECT_EQ(st.failures, sb.failures);
    EXPECT_EQ(st.unsupported, sb.unsupported);
    EXPECT_EQ(st.unsupported_reason, sb.unsupported_reason);
    EXPECT_EQ(st.errors, sb.errors);
    EXPECT_EQ(st.counters, sb.counters);
  }
  ASSERT_EQ(a.failures.size(), b.failures.size());
  for (size_t i = 0; i < a.failures.size(); ++i) {
    EXPECT_EQ(a.failures[i].invariant, b.failures[i].invariant);
    EXPECT_EQ(a.failures[i].seed, b.failures[i].seed);
    EXPECT_EQ(a.failures[i].message, b.failures[i].message);
    EXPECT_EQ(a.failures[i].original_message, b.failures[i].original_message);
    EXPECT_EQ(gen::print(a.failures[i].shrunk), gen::print(b.failures[i].shrunk));
    EXPECT_EQ(fs::path(a.failures[i].file).filename(), fs::path(b.failures[i].file).filename());
  }
}

// oracle.fuzz.jobs, oracle.regress, oracle.fuzz.seeds: a differential run against a
// faulty implementation reports the same failure, writes the same regression
// file and prints the same log (reproduce line included) with 1, 2 and 3 jobs;
// the failure is the failing program with the lowest number, and the programs
// counted are exactly those up to it.
TEST(FuzzJobs, DifferentialFailureIsTheSameForAnyNumberOfJobs) {
  const fs::path base = fs::temp_directory_path() / ("simtspec_jobs_" + std::to_string(::getpid()));
  fs::remove_all(base);
  auto open = [] {
    auto spec = runners::parse_process_spec(test::faulty_runner_toml("readlane-off-by-one"),
                                            "readlane.toml");
    return runners::make_process_runner(std::get<runners::ProcessSpec>(spec));
  };
  auto runner = open();
  gen::FuzzOptions o;
  o.invariants = {"differential"};
  o.seed = 20261122;
  o.count = 4000;
  o.runner = runner.get();
  o.runner_factory = open;
  o.runner_arg = "/somewhere/readlane.toml";
  std::map<uint32_t, Logged> runs;
  for (uint32_t jobs : {1u, 2u, 3u}) {
    o.out_dir = (base / std::to_string(jobs)).string();
    runs[jobs] = fuzz(o, jobs);
    SCOPED_TRACE(jobs);
    ASSERT_EQ(runs[jobs].result.failures.size(), 1u) << runs[jobs].log;
    EXPECT_TRUE(runs[jobs].result.errors.empty()) << runs[jobs].log;
  }
  for (uint32_t jobs : {2u, 3u}) {
    SCOPED_TRACE(jobs);
    expect_same(runs[1].result, runs[jobs].result);
    EXPECT_EQ(replace_all(runs[1].log, (base / "1").string(), "OUT"),
              replace_all(runs[jobs].log, (base / std::to_string(jobs)).string(), "OUT"));
    EXPECT_EQ(test::read_all(runs[1].result.failures[0].file),
              test::read_all(runs[jobs].result.failures[0].file));
  }
  const gen::FuzzFailure& f = runs[1].result.failures[0];
  EXPECT_NE(
      runs[2].log.find("  reproduce: " + o.simtspec + " fuzz --invariant differential --seed " +
                       std::to_string(f.seed) + " --count 1 --runner /somewhere/readlane.toml\n"),
      std::string::npos)
      << runs[2].log;
  EXPECT_EQ(fs::path(f.file).filename().string(),
            "differential_seed" + std::to_string(f.seed) + ".simt");
  // The lowest failing program, found one by one.
  uint64_t k = 0;
  const gen::Invariant& inv = *gen::find_invariant("differential");
  while (k < o.count && gen::check_one(inv, o.seed + k, o.max_size, runner.get()).ok) ++k;
  EXPECT_EQ(f.seed, o.seed + k);
  EXPECT_EQ(runs[2].result.programs, k + 1);
  runner->shutdown();
  fs::remove_all(base);
}

// oracle.fuzz.jobs: where failures are dense, the one reported is still the lowest
// numbered for each invariant, whichever worker finds which first. Failures are
// planted through after_check (so the re-check finds none: not shrunk, nothing
// written, said so in the log).
TEST(FuzzJobs, TheFirstFailureIsTheLowestNumberedOne) {
  gen::FuzzOptions o;
  o.invariants = {"sequential", "roundtrip", "expansion"};
  o.seed = 1000;
  o.count = 300;
  // sequential fails from program 40 on, roundtrip on every 7th from 11,
  // expansion never.
  o.after_check = [](const gen::Invariant& inv, uint64_t seed, const gen::Program&, gen::Check& c) {
    const uint64_t k = seed - 1000;
    if ((inv.name == "sequential" && k >= 40) || (inv.name == "roundtrip" && k >= 11 && k % 7 == 4))
      c.ok = false, c.message = "planted at " + std::to_string(k);
  };
  const Logged one = fuzz(o, 1);
  ASSERT_EQ(one.result.failures.size(), 2u) << one.log;
  EXPECT_EQ(one.result.failures[0].invariant, "roundtrip");
  EXPECT_EQ(one.result.failures[0].seed, 1011u);
  EXPECT_EQ(one.result.failures[1].invariant, "sequential");
  EXPECT_EQ(one.result.failures[1].seed, 1040u);
  EXPECT_EQ(one.result.stats.at("roundtrip").programs, 12u);
  EXPECT_EQ(one.result.stats.at("sequential").programs, 41u);
  EXPECT_EQ(one.result.stats.at("expansion").programs, 300u);
  EXPECT_TRUE(one.result.failures[0].file.empty());
  EXPECT_NE(one.log.find("sequential: it did not fail when checked again, so it is not shrunk"),
            std::string::npos)
      << one.log;
  for (uint32_t jobs : {2u, 4u}) {
    SCOPED_TRACE(jobs);
    const Logged many = fuzz(o, jobs);
    expect_same(one.result, many.result);
    EXPECT_EQ(one.log, many.log);
  }
}

// oracle.fuzz.jobs: counts a check reports (Check::counts, here added by after_check
// in whichever process checked the program) are summed per invariant over the
// programs counted, the same for any number of jobs.
TEST(FuzzJobs, CountersFromWorkersAreSummed) {
  gen::FuzzOptions o;
  o.invariants = {"sequential", "scheduler"};
  o.seed = 77;
  o.count = 250;
  o.after_check = [](const gen::Invariant&, uint64_t, const gen::Program& p, gen::Check& c) {
    c.counts["programs"] += 1;
    c.counts["statements"] += gen::statement_count(p);
    c.counts["wave." + std::to_string(p.wave)] += 1;
  };
  // The sums, computed here from the programs themselves.
  std::map<std::string, std::map<std::string, uint64_t>> want;
  for (const auto& name : o.invariants)
    for (uint64_t k = 0; k < o.count; ++k) {
      gen::Program p = gen::generate_one(*gen::find_invariant(name), o.seed + k, o.max_size);
      auto& w = want[name];
      w["programs"] += 1;
      w["statements"] += gen::statement_count(p);
      w["wave." + std::to_string(p.wave)] += 1;
    }
  for (uint32_t jobs : {1u, 2u, 3u}) {
    SCOPED_TRACE(jobs);
    const Logged l = fuzz(o, jobs);
    ASSERT_TRUE(l.result.failures.empty()) << l.log;
    for (const auto& name : o.invariants) EXPECT_EQ(l.result.stats.at(name).counters, want[name]);
  }
}

// oracle.fuzz, oracle.fuzz.jobs: a worker process that dies does not end the run: the program it
// was checking is an error (with the command that reproduces it), the others it
// held are checked by another worker, and every program is accounted for.
TEST(FuzzJobs, AWorkerThatDiesIsAnErrorForItsProgram) {
  const pid_t parent = ::getpid();
  gen::FuzzOptions o;
  o.invariants = {"sequential", "roundtrip"};
  o.seed = 500;
  o.count = 200;
  o.after_check = [parent](const gen::Invariant& inv, uint64_t seed, const gen::Program&,
                           gen::Check&) {
    if (::getpid() == parent) return;
    if (inv.name == "sequential" && seed == 530) ::raise(SIGKILL);
    if (inv.name == "roundtrip" && seed == 610) ::_exit(3);
  };
  for (uint32_t jobs : {2u, 3u}) {
    SCOPED_TRACE(jobs);
    const Logged l = fuzz(o, jobs);
    ASSERT_EQ(l.result.errors.size(), 2u) << l.log;
    EXPECT_EQ(l.result.errors[0].invariant, "sequential");
    EXPECT_EQ(l.result.errors[0].seed, std::optional<uint64_t>(530));
    EXPECT_NE(l.result.errors[0].message.find("was killed by signal 9"), std::string::npos)
        << l.result.errors[0].message;
    EXPECT_EQ(l.result.errors[1].invariant, "roundtrip");
    EXPECT_EQ(l.result.errors[1].seed, std::optional<uint64_t>(610));
    EXPECT_NE(l.result.errors[1].message.find("exited with status 3"), std::string::npos)
        << l.result.errors[1].message;
    EXPECT_NE(l.log.find("sequential: ERROR on program seed 530: worker process "),
              std::string::npos)
        << l.log;
    EXPECT_NE(l.log.find("reproduce: " + o.simtspec +
                         " fuzz --invariant sequential --seed 530 --count 1\n"),
              std::string::npos)
        << l.log;
    EXPECT_TRUE(l.result.failures.empty());
    EXPECT_EQ(l.result.programs, 400u);
    EXPECT_EQ(l.result.stats.at("sequential").programs, 200u);
    EXPECT_EQ(l.result.stats.at("sequential").errors, 1u);
    EXPECT_EQ(l.result.stats.at("roundtrip").errors, 1u);
  }
}

// Workers that die on every program: each program is an error, the run ends.
TEST(FuzzJobs, WorkersThatAlwaysDieEndTheRun) {
  const pid_t parent = ::getpid();
  gen::FuzzOptions o;
  o.invariants = {"roundtrip"};
  o.seed = 1;
  o.count = 12;
  o.after_check = [parent](const gen::Invariant&, uint64_t, const gen::Program&, gen::Check&) {
    if (::getpid() != parent) ::_exit(5);
  };
  const Logged l = fuzz(o, 2);
  EXPECT_EQ(l.result.errors.size(), 12u) << l.log;
  EXPECT_EQ(l.result.programs, 12u);
  EXPECT_EQ(l.result.stats.at("roundtrip").errors, 12u);
}

// oracle.fuzz.jobs: --time with worker processes ends on time and counts what the
// workers checked.
TEST(FuzzJobs, TimeEndsARunWithWorkers) {
  gen::FuzzOptions o;
  o.invariants = {"sequential", "roundtrip"};
  o.seed = 9;
  o.count = 0;
  o.seconds = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const Logged l = fuzz(o, 2);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 0.5);
  EXPECT_LT(took, 5);
  EXPECT_TRUE(l.result.errors.empty()) << l.log;
  EXPECT_TRUE(l.result.failures.empty()) << l.log;
  // Each invariant was checked by the workers; how many programs fit in the time is a
  // matter of speed (bench/), not of this clause, and varies with the machine's load.
  EXPECT_GT(l.result.stats.at("sequential").programs, 0u);
  EXPECT_GT(l.result.stats.at("roundtrip").programs, 0u);
  EXPECT_EQ(l.result.programs,
            l.result.stats.at("sequential").programs + l.result.stats.at("roundtrip").programs);
}

// A runner needs a factory for worker processes (never shared across fork).
TEST(FuzzJobs, ARunnerWithoutAFactoryIsRefused) {
  auto spec = runners::parse_process_spec(test::faulty_runner_toml("none"), "none.toml");
  auto runner = runners::make_process_runner(std::get<runners::ProcessSpec>(spec));
  gen::FuzzOptions o;
  o.invariants = {"differential"};
  o.count = 2;
  o.jobs = 2;
  o.runner = runner.get();
  EXPECT_THROW(gen::fuzz(o, [](const std::string&) {}), std::invalid_argument);
}

}  // namespace
}  // namespace simt
