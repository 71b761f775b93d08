// The simtspec program itself: exit codes, output, located diagnostics, and that no
// input file -- truncated or mutated -- makes it crash. Every run is bounded by
// test::kCommandBoundSeconds; outputs go to files in a temporary folder of this process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <string>
#include <string_view>
#include <vector>
#include "oracles.h"

#include "support.h"

namespace simt {
namespace {

using test::read_all;
using test::write_all;

namespace fs = std::filesystem;

const std::string kBinary = SIMT_BINARY_DIR "/simtspec";

// Single-quotes a word for /bin/sh.
std::string quote(std::string_view s) {
  return test::shell_quote(s);
}

std::string first_line(std::string_view s) {
  return std::string(s.substr(0, s.find('\n')));
}

// True if `line` is `PATH:LINE:COL: ...`.
bool located(std::string_view line, std::string_view path) {
  if (line.substr(0, path.size()) != path) return false;
  size_t i = path.size();
  for (int field = 0; field < 2; ++field) {
    if (i >= line.size() || line[i] != ':') return false;
    size_t start = ++i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    if (i == start) return false;
  }
  return line.substr(i, 2) == ": ";
}

using Result = test::CommandResult;

class Cli : public test::TempDirSuite<Cli> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_cli_test_";

 protected:
  static std::string example(std::string_view name) {
    return test::source_path("examples/" + std::string(name));
  }

  // Runs `simtspec ARGS` (ARGS already quoted as needed) with a 20 s bound.
  static Result simtspec(const std::string& args) {
    return test::run_command(kBinary, args, dir());
  }

  // Checks the invariants of any run on any input: exit code 0, 1 or 2, no
  // sanitizer report, and a located first line of stderr for bad input (2).
  static void expect_clean(const Result& r, const fs::path& file, const std::string& what) {
    ASSERT_TRUE(r.exited) << what << ": killed by a signal\n" << r.err;
    EXPECT_TRUE(r.code == 0 || r.code == 1 || r.code == 2)
        << what << ": exit code " << r.code << " (124 = timeout, >128 = signal)\n"
        << r.err;
    EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << what << "\n" << r.err;
    EXPECT_EQ(r.err.find("runtime error:"), std::string::npos) << what << "\n" << r.err;
    if (r.code == 2) {
      EXPECT_TRUE(located(first_line(r.err), file.string()))
          << what << ": stderr does not start with '" << file.string() << ":LINE:COL: '\n"
          << r.err;
    } else {
      EXPECT_NE(r.out.find("status: "), std::string::npos) << what << "\n" << r.out;
    }
  }
};

TEST_F(Cli, HelpExitsZero) {
  auto r = simtspec("--help");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("run"), std::string::npos) << r.out;
  auto sub = simtspec("run --help");
  EXPECT_EQ(sub.code, 0) << sub.err;
}

TEST_F(Cli, RunCompletedExampleExitsZero) {
  auto r = simtspec("run " + quote(example("vector_add.simt")));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("status: completed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("buffer out u32[32]:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 100 111 122 133 144 155 166 177"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(Cli, RunLivelockExampleExitsOne) {
  auto r = simtspec("run " + quote(example("spin_livelock.simt")));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("status: livelock"), std::string::npos) << r.out;
}

TEST_F(Cli, RunTrapPrintsTheEvent) {
  auto r = simtspec("run " + quote(example("div_by_zero_trap.simt")));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("status: trapped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("event: div_zero in warp 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lane 5"), std::string::npos) << r.out;
}

// What .ci/main checks: each example's status is its `; expect:` line, and the
// exit code is 0 exactly for `completed`.
TEST_F(Cli, EveryExampleEndsWithItsExpectedStatus) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(test::source_path("examples")))
    if (e.path().extension() == ".simt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 10u);
  for (const auto& f : files) {
    std::string text = read_all(f);
    size_t at = text.find("\n; expect: ");
    ASSERT_NE(at, std::string::npos) << f;
    std::string expect = first_line(std::string_view(text).substr(at + 11));
    auto r = simtspec("run " + quote(f.string()));
    ASSERT_TRUE(r.exited) << f;
    EXPECT_NE(r.out.find("status: " + expect + "\n"), std::string::npos) << f << "\n" << r.out;
    EXPECT_EQ(r.code, expect == "completed" ? 0 : 1) << f << "\n" << r.err;
  }
}

TEST_F(Cli, MalformedFileExitsTwoWithLocatedDiagnostic) {
  const fs::path bad = dir() / "malformed.simt";
  write_all(bad, "; a broken program\n.wave 8\n    add v1, v2\n    frob v1\n    exit\n");
  auto r = simtspec("run " + quote(bad.string()));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(located(first_line(r.err), bad.string())) << r.err;
  EXPECT_EQ(first_line(r.err).rfind(bad.string() + ":3:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(bad.string() + ":4:"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  // Valid syntax, invalid program: falls off the end.
  const fs::path noexit = dir() / "noexit.simt";
  write_all(noexit, ".wave 8\n    mov v1, 1\n");
  auto n = simtspec("run " + quote(noexit.string()));
  EXPECT_EQ(n.code, 2);
  EXPECT_TRUE(located(first_line(n.err), noexit.string())) << n.err;
}

TEST_F(Cli, NonexistentFileExitsTwo) {
  auto r = simtspec("run " + quote((dir() / "no_such_file.simt").string()));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(Cli, UnknownOptionExitsTwo) {
  auto r = simtspec("run " + quote(example("vector_add.simt")) + " --no-such-option");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(r.err.empty());
  auto sub = simtspec("no-such-command");
  EXPECT_EQ(sub.code, 2);
  auto none = simtspec("");
  EXPECT_EQ(none.code, 2);
  auto wave = simtspec("run " + quote(example("vector_add.simt")) + " --wave 3");
  EXPECT_EQ(wave.code, 2) << wave.out;
}

TEST_F(Cli, JsonOutputHasStatus) {
  auto r = simtspec("run --json " + quote(example("vector_add.simt")));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"status\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("completed"), std::string::npos) << r.out;
  auto l = simtspec("run " + quote(example("spin_livelock.simt")) + " --json");
  EXPECT_EQ(l.code, 1);
  EXPECT_NE(l.out.find("\"status\""), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("livelock"), std::string::npos) << l.out;
}

TEST_F(Cli, WaveOverride) {
  // vector_add has 2 warps x 2 workgroups: 4 * 64 = 256 threads at wave 64.
  auto r = simtspec("run " + quote(example("vector_add.simt")) + " --wave 64");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("buffer out u32[256]:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" " + std::to_string(100 + 11 * 255) + "\n"), std::string::npos) << r.out;
  auto j = simtspec("run --json --wave 64 " + quote(example("vector_add.simt")));
  EXPECT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find("\"wave\": 64"), std::string::npos) << j.out;
}

TEST_F(Cli, TraceAndListing) {
  auto t = simtspec("run --trace " + quote(example("divergent_if_else.simt")));
  EXPECT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("#0 w0 pc=0 exec=0xff "), std::string::npos) << t.out;
  auto l = simtspec("listing " + quote(example("call_return.simt")));
  EXPECT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("collatz:"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("lpush"), std::string::npos) << l.out;
}

TEST_F(Cli, TruncatedCopiesNeverCrash) {
  for (std::string_view name : {"call_return.simt", "barrier_across_warps.simt"}) {
    const std::string text = read_all(example(name));
    const fs::path copy = dir() / "truncated.simt";
    for (size_t k = 1; k <= 10; ++k) {
      size_t cut = text.size() * k / 11;
      write_all(copy, std::string_view(text).substr(0, cut));
      expect_clean(simtspec("run --max-steps 200000 " + quote(copy.string())), copy,
                   std::string(name) + " cut at " + std::to_string(cut));
    }
  }
}

TEST_F(Cli, MutatedCopiesNeverCrash) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(test::source_path("examples")))
    if (e.path().extension() == ".simt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  std::mt19937 rng(77031);
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const fs::path copy = dir() / "mutated.simt";
  for (int i = 0; i < 30; ++i) {
    const fs::path& src = files[static_cast<size_t>(i) % files.size()];
    std::string s = read_all(src);
    for (size_t m = 0, n = 1 + pick(4); m < n && !s.empty(); ++m) {
      size_t at = pick(s.size());
      // Flip a bit, delete bytes, insert a random byte, insert 0x00 or 0xff, or
      // duplicate a run of bytes.
      const size_t op = pick(5);
      if (op == 0)
        s[at] ^= static_cast<char>(1u << pick(8));
      else if (op == 1)
        s.erase(at, 1 + pick(6));
      else if (op == 2)
        s.insert(at, 1, static_cast<char>(pick(256)));
      else if (op == 3)
        s.insert(at, 1, pick(2) ? '\0' : '\xff');
      else
        s.insert(at, s.substr(pick(s.size()), 1 + pick(40)));
    }
    write_all(copy, s);
    expect_clean(simtspec("run --max-steps 200000 " + quote(copy.string())), copy,
                 src.filename().string() + " mutation " + std::to_string(i));
  }
}

// ---------------------------------------------------------------------------
// simtspec fuzz (oracle.fuzz)

// Every invariant on the reference: nothing fails, nothing is written, and the
// summary gives programs per second for each.
TEST_F(Cli, FuzzOnTheReferencePassesAndReportsThroughput) {
  const fs::path out = dir() / "fuzz_ref";
  auto r = simtspec("fuzz --seed 11 --count 40 --jobs 2 --out " + quote(out.string()));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  size_t n = 0;
  for (const auto& inv : gen::invariants()) {
    if (inv.needs_runner) continue;
    ++n;
    auto at = r.out.find("  " + inv.name + " ");
    ASSERT_NE(at, std::string::npos) << inv.name << "\n" << r.out;
    std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find(" 40 programs    0 failed"), std::string::npos) << line;
    EXPECT_NE(line.find("programs/s per job"), std::string::npos) << line;
  }
  EXPECT_GE(n, 6u);
  EXPECT_NE(r.out.find("fuzz: " + std::to_string(40 * n) + " programs in "), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(out));
}

// oracle.fuzz, oracle.fuzz.seeds: --print shows the program of a seed as text
// that `simtspec run` accepts, and the same seed gives the same text.
TEST_F(Cli, FuzzPrintsProgramsThatRun) {
  auto r = simtspec("fuzz --invariant roundtrip --seed 5 --count 1 --print");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string head = "; roundtrip program seed 5: holds\n";
  auto at = r.out.find(head);
  ASSERT_NE(at, std::string::npos) << r.out;
  at += head.size();
  const std::string program = r.out.substr(at, r.out.find("\n\n", at) - at + 1);
  EXPECT_NE(program.find(".buffer out"), std::string::npos) << program;
  const fs::path file = dir() / "printed.simt";
  write_all(file, program);
  auto run = simtspec("run " + quote(file.string()));
  EXPECT_EQ(run.code, 0) << program << run.out << run.err;
  EXPECT_NE(run.out.find("status: completed"), std::string::npos) << run.out;
  EXPECT_EQ(simtspec("fuzz --invariant roundtrip --seed 5 --count 1 --print").out.find(program),
            at);
}

// oracle.fuzz.stats: --stats names the host action kinds, statuses and events
// never reached, and lists apart the events no generated program can raise.
// The host-script programs of the CI seed reach every action kind, but not
// livelock (they have no loop) nor mask_overflow (they push nothing).
TEST_F(Cli, FuzzStatsNameWhatWasNeverReached) {
  auto r = simtspec("fuzz --invariant host-script --seed 20261122 --count 200 --jobs 2 --stats");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  host actions:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  never reached: host actions: none\n"), std::string::npos) << r.out;
  const auto statuses = r.out.find("  never reached: outcome statuses: ");
  ASSERT_NE(statuses, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(statuses, r.out.find('\n', statuses) - statuses).find("livelock"),
            std::string::npos)
      << r.out;
  const auto events = r.out.find("  never reached: events: ");
  ASSERT_NE(events, std::string::npos) << r.out;
  const std::string line = r.out.substr(events, r.out.find('\n', events) - events);
  EXPECT_NE(line.find("mask_overflow"), std::string::npos) << line;
  EXPECT_EQ(line.find("mask_underflow"), std::string::npos) << line;  // listed apart
  EXPECT_NE(r.out.find("  excluded: mask_underflow: only programs the validator rejects"),
            std::string::npos)
      << r.out;
}

// oracle.fuzz.jobs: with worker processes, --print still prints the programs in item
// order, and the whole output but the job count and the rates is the same.
TEST_F(Cli, FuzzOutputDoesNotDependOnJobs) {
  auto strip = [](const std::string& out) {
    std::string kept, line;
    std::istringstream in(out);
    while (std::getline(in, line))
      if (line.find("job(s)") == std::string::npos && line.find("programs/s") == std::string::npos)
        kept += line + "\n";
    return kept;
  };
  auto one = simtspec("fuzz --seed 5 --count 30 --print --jobs 1");
  ASSERT_EQ(one.code, 0) << one.out << one.err;
  EXPECT_NE(one.out.find("; roundtrip program seed 34: holds\n"), std::string::npos);
  auto three = simtspec("fuzz --seed 5 --count 30 --print --jobs 3");
  ASSERT_EQ(three.code, 0) << three.out << three.err;
  EXPECT_NE(three.out.find(", 3 job(s)\n"), std::string::npos) << three.out;
  EXPECT_EQ(strip(one.out), strip(three.out));
}

// oracle.fuzz, oracle.fuzz.jobs: a worker process killed from outside does not end the run: the
// run goes on to its end, says what happened and exits 1.
TEST_F(Cli, FuzzWorkerKilledIsAnError) {
  const fs::path out = dir() / "killed.txt", code = dir() / "killed_code.txt";
  const std::string script =
      quote(kBinary) + " fuzz --invariant sequential --seed 1 --time 3 --jobs 2 >" +
      quote(out.string()) +
      " 2>&1 & p=$!; sleep 1; kill -9 $(cut -d' ' -f1 /proc/$p/task/$p/children); wait $p; "
      "echo $? >" +
      quote(code.string());
  ASSERT_EQ(std::system(("timeout 20 sh -c " + quote(script) + " </dev/null").c_str()), 0);
  const std::string o = read_all(out);
  EXPECT_EQ(read_all(code), "1\n") << o;
  // Killed while checking a program (an error for it) or between two.
  EXPECT_NE(o.find("ERROR"), std::string::npos) << o;
  EXPECT_NE(o.find("was killed by signal 9 (Killed)"), std::string::npos) << o;
  EXPECT_NE(o.find(" 1 error(s)\n"), std::string::npos) << o;
  EXPECT_NE(o.find("fuzz: "), std::string::npos) << o;
}

TEST_F(Cli, FuzzBadUsageExitsTwo) {
  const fs::path runner = dir() / "missing.toml";
  for (const std::string& args : std::vector<std::string>{
           "fuzz --invariant nonsense --count 1", "fuzz --invariant differential --count 1",
           "fuzz --count 5 --time 1",
           "fuzz --invariant differential --count 1 --runner " + quote(runner.string()),
           "fuzz --count 1 --max-size 0", "fuzz --jobs"}) {
    auto r = simtspec(args);
    ASSERT_TRUE(r.exited) << args;
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
}

// oracle.fuzz: a count of 0 would run forever; --jobs must be 1 to 1024. The help
// describes ranges in words, not with CLI11's validator text.
TEST_F(Cli, CountsAndJobsAreValidated) {
  for (const std::string& args : std::vector<std::string>{
           "fuzz --count 0", "fuzz --count -1", "fuzz --count 1 --jobs 0",
           "fuzz --count 1 --jobs 1025", "test suites --jobs 0", "test suites --jobs 100000",
           "test suites --timeout 0", "test suites --timeout 7200", "test suites --max-steps 0"}) {
    auto r = simtspec(args);
    ASSERT_TRUE(r.exited) << args;
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("is not "), std::string::npos) << args << "\n" << r.err;
  }
  auto help = simtspec("test --help");
  EXPECT_EQ(help.out.find("UINT:UINT in ["), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("1 to 1024"), std::string::npos) << help.out;
  EXPECT_EQ(simtspec("fuzz --help").out.find("in ["), std::string::npos);
}

// runner.lifecycle: --jobs beyond 8 per CPU is capped (with a note), so a huge value
// cannot start a process per configuration.
TEST_F(Cli, JobsBeyondEightPerCpuAreCapped) {
  write_all(dir() / "jobs" / "t.simt", test::kSignedCompareTest);
  auto r = simtspec("test " + quote((dir() / "jobs").string()) + " --jobs 1024 --quiet");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("note: --jobs 1024 is more than 8 per CPU"), std::string::npos) << r.err;
}

// A command that does not exist is named; a folder given as a program is not read
// as an empty program; a byte that is not a token inside a word is named.
TEST_F(Cli, UnknownCommandsFoldersAndBadBytesAreNamed) {
  auto r = simtspec("frobnicate");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate' (commands: run, "), std::string::npos)
      << r.err;
  r = simtspec("run " + quote(dir().string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("it is a directory"), std::string::npos) << r.err;
  const fs::path bad = dir() / "bad_byte.simt";
  write_all(bad,
            "    mov v1, 1\n    ad\xff"
            "d v1, v1, v1\n    exit\n");
  r = simtspec("run " + quote(bad.string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            bad.string() + ":2:7: error: unexpected byte 0xff inside the word 'ad'")
      << r.err;
}

// oracle.regress: shrunk failures go to the project's suites/regress/ (the project
// found from the working directory upwards), never to a suites/ folder made under
// whatever directory the command runs in.
TEST_F(Cli, FuzzDefaultOutIsTheProjectsRegressFolder) {
  const fs::path project = dir() / "project";
  const fs::path deep = project / "deep" / "er";
  fs::create_directories(deep);
  fs::create_directories(project / "suites");
  write_all(project / "spec" / "README.md", "# spec\n");
  write_all(dir() / "crash.toml", test::faulty_runner_toml("crash"));
  const std::string cmd = "cd " + quote(deep.string()) + " && " + quote(kBinary) +
                          " fuzz --invariant differential --count 1 --seed 1 --shrink-time 1 "
                          "--runner " +
                          quote((dir() / "crash.toml").string()) + " >/dev/null 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);  // the crashing runner fails the program
  EXPECT_FALSE(fs::exists(deep / "suites")) << "fuzz made suites/ in the working directory";
  ASSERT_TRUE(fs::is_directory(project / "suites" / "regress"));
  EXPECT_FALSE(fs::is_empty(project / "suites" / "regress"));
}

// results.interrupted: SIGINT or SIGTERM during `simtspec test` cuts the run in
// flight short, writes junit.xml and the report for what ran (marked
// interrupted), says where, and exits 130 or 143.
TEST_F(Cli, AnInterruptedRunWritesWhatRan) {
  const fs::path suite = dir() / "interrupt";
  write_all(suite / "a.simt", test::kSignedCompareTest);
  write_all(suite / "b.simt", test::kRunawayTest);
  std::string c = test::kSignedCompareTest;
  c.replace(c.find("demo.cmp_signed"), 15, "demo.cmp_later_");
  write_all(suite / "c.simt", c);
  for (int sig : {SIGINT, SIGTERM}) {
    const fs::path out = dir() / ("interrupted_" + std::to_string(sig));
    const std::string log = (dir() / ("interrupt_" + std::to_string(sig) + ".log")).string();
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execl(kBinary.c_str(), "simtspec", "test", suite.c_str(), "--jobs", "1", "--quiet",
              "--timeout", "60", "--out", out.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait until the two configurations of a.simt are written (after the header and
    // a.simt's test line, results.test): b.simt runs then.
    for (int i = 0; i < 400; ++i) {
      std::string jl = read_all(out / "results.jsonl");
      if (std::count(jl.begin(), jl.end(), '\n') >= 4) break;
      ::usleep(50 * 1000);
    }
    ::usleep(300 * 1000);
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << read_all(log);
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << read_all(log);
    const std::string said = read_all(log);
    const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    EXPECT_NE(said.find("interrupted (" + name + "): 2 of 5 results written"), std::string::npos)
        << said;
    EXPECT_NE(said.find("report: " + out.string() + "/index.html"), std::string::npos) << said;
    EXPECT_FALSE(fs::exists(out / "results.json"));  // results.stream: one results file
    EXPECT_TRUE(fs::exists(out / "junit.xml"));
    EXPECT_NE(read_all(out / "junit.xml")
                  .find("<error message=\"interrupted by " + name + ": 2 of 5 results written\"/>"),
              std::string::npos)
        << read_all(out / "junit.xml");
    EXPECT_NE(read_all(out / "index.html").find("interrupted by " + name), std::string::npos);
    const std::string jl = read_all(out / "results.jsonl");
    EXPECT_NE(jl.find("\"interrupted\":true"), std::string::npos) << jl;
    EXPECT_EQ(jl.find("demo.runaway"), std::string::npos) << "the cut-short run is left out";
    EXPECT_EQ(jl.find("demo.cmp_later_"), std::string::npos) << "nothing starts after the signal";
  }
}

// runner.lifecycle.restart: a runner that dies on every fifth request fails the
// differential fuzz (the program it died on), with its standard error; it is not
// retried into a pass.
TEST_F(Cli, FuzzDifferentialSeesARunnerThatDiesNowAndThen) {
  write_all(dir() / "crash5.toml", test::faulty_runner_toml("crash-every-5"));
  auto r = simtspec("fuzz --invariant differential --count 20 --seed 1 --shrink-time 1 --out " +
                    quote((dir() / "crash5_out").string()) + " --runner " +
                    quote((dir() / "crash5.toml").string()));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("differential: FAILED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("heap corrupted"), std::string::npos) << r.out;
}

// results.lock: a second run on an output folder in use stops at once.
TEST_F(Cli, AnOutputFolderInUseIsRefused) {
  const fs::path out = dir() / "locked";
  fs::create_directories(out);
  int fd = ::open((out / ".simtspec.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  write_all(dir() / "lock_suite" / "t.simt", test::kSignedCompareTest);
  auto r = simtspec("test " + quote((dir() / "lock_suite").string()) + " --quiet --out " +
                    quote(out.string()));
  ::close(fd);
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("another simtspec run is writing to"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
  // Once the lock is free, the same command runs.
  r = simtspec("test " + quote((dir() / "lock_suite").string()) + " --quiet --out " +
               quote(out.string()));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(out / "results.jsonl"));
}

// results.share, format.matrix: the console's last line says how much of the
// selection ran, counts the tests the filter selected, and agrees in number; a
// malformed test file is bad input (exit 2).
TEST_F(Cli, TheHeadlineSaysHowMuchRan) {
  const fs::path suite = dir() / "headline";
  write_all(suite / "cmp.simt", test::kSignedCompareTest);
  std::string other = test::kSignedCompareTest;
  other.replace(other.find("demo.cmp_signed"), 15, "demo.cmp_other_");
  write_all(suite / "other.simt", other);
  auto r = simtspec("test " + quote(suite.string()) + " --quiet --filter 'demo.cmp_signed@wave=8'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("reference: 1 of 1 configuration run (100%), 1 test, "), std::string::npos)
      << r.out;
  std::string toml = test::faulty_runner_toml("none");
  const std::string waves = "waves = [1, 2, 4, 8, 16, 32, 64]";
  toml.replace(toml.find(waves), waves.size(), "waves = [8]");
  write_all(dir() / "wave8.toml", toml);
  r = simtspec("test " + quote(suite.string()) + " --quiet --runner " +
               quote((dir() / "wave8.toml").string()));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("faulty-none: 2 of 4 configurations run (50%), 2 tests, "),
            std::string::npos)
      << r.out;
  write_all(suite / "broken.simt", "; simtspec-test 1\n; id = \"x\"\n");
  r = simtspec("test " + quote(suite.string()) + " --quiet");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("error: " + (suite / "broken.simt").string()), std::string::npos) << r.out;
}

// The fail: lines come in the run's order (suite order), whatever order the jobs
// finish in.
TEST_F(Cli, FailLinesComeInSuiteOrder) {
  const fs::path suite = dir() / "order";
  for (int i = 0; i < 12; ++i) {
    std::string t = test::kSignedCompareTest;
    t.replace(t.find("demo.cmp_signed"), 15, "demo.cmp_" + std::to_string(100 + i));
    t.replace(t.find("lane < 4 ? 1 : 0"), 16, "lane < 5 ? 1 : 0");  // fails
    write_all(suite / ("t" + std::to_string(100 + i) + ".simt"), t);
  }
  std::string first;
  for (int round = 0; round < 3; ++round) {
    auto r = simtspec("test " + quote(suite.string()) + " --quiet --jobs 4");
    EXPECT_EQ(r.code, 1);
    std::string lines;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);)
      if (l.rfind("fail: ", 0) == 0) lines += l.substr(0, l.find(": status")) + "\n";
    EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 24) << r.out;
    if (round == 0) first = lines;
    EXPECT_EQ(lines, first);
    EXPECT_LT(lines.find("demo.cmp_100[wave=8]"), lines.find("demo.cmp_100[wave=64]"));
    EXPECT_LT(lines.find("demo.cmp_100[wave=64]"), lines.find("demo.cmp_101[wave=8]"));
  }
}

// oracle.fuzz, oracle.shrink: a duration that is not a number of seconds is bad
// usage, with a short message naming the option.
TEST_F(Cli, FuzzBadDurationsExitTwoWithAShortMessage) {
  for (const std::string args :
       {"fuzz --time -1", "fuzz --time 0", "fuzz --time abc", "fuzz --count 1 --shrink-time -1",
        "fuzz --count 1 --shrink-time inf", "fuzz --count 1 --shrink-time 5x"}) {
    auto r = simtspec(args);
    ASSERT_TRUE(r.exited) << args;
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("is not a number of seconds"), std::string::npos) << args << r.err;
    EXPECT_LT(r.err.size(), 200u) << args << r.err;
  }
}

// A run whose every program needs what the runner lacks checked nothing: exit 1.
TEST_F(Cli, FuzzThatChecksNothingFails) {
  std::string toml = test::faulty_runner_toml("none");
  const std::string waves = "waves = [1, 2, 4, 8, 16, 32, 64]";
  toml.replace(toml.find(waves), waves.size(), "waves = [32]\nsimds = [16]");
  const fs::path runner = dir() / "simd16.toml";
  write_all(runner, toml);
  auto r = simtspec("fuzz --invariant differential --seed 3 --count 10 --runner " +
                    quote(runner.string()));
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("10 unsupported (e.g. the runner lacks "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("differential: checked nothing"), std::string::npos) << r.out;
}

// results.record `reproduce`: commands that work from any directory. A run started
// with relative paths (test file, runner description) records absolute ones; the
// command, run from /, reproduces the failure.
TEST_F(Cli, ReproduceCommandsWorkFromAnyDirectory) {
  const fs::path work = dir() / "repro";
  fs::create_directories(work / "tests");
  write_all(work / "tests" / "cmp.simt", test::kSignedCompareTest);
  write_all(work / "cmp.toml", test::faulty_runner_toml("cmp-unsigned"));
  auto sh = [&](const std::string& cmd) {
    const fs::path out = dir() / "sh_out.txt";
    int st = std::system(
        ("timeout 60 sh -c " + quote(cmd) + " >" + quote(out.string()) + " 2>&1 </dev/null")
            .c_str());
    return std::make_pair(WIFEXITED(st) ? WEXITSTATUS(st) : -1, read_all(out));
  };
  for (const char* runner : {"cmp.toml", "reference"}) {
    SCOPED_TRACE(runner);
    auto [code, out] = sh("cd " + quote(work.string()) + " && " + quote(kBinary) +
                          " test tests --runner " + runner + " --out rep --quiet");
    const bool faulty = std::string(runner) != "reference";
    EXPECT_EQ(code, faulty ? 1 : 0) << out;
    std::string results = read_all(work / "rep" / "results.jsonl");
    const std::string key = "\"reproduce\":\"";
    size_t at = results.find(key);
    ASSERT_NE(at, std::string::npos) << results;
    std::string cmd =
        results.substr(at + key.size(), results.find('"', at + key.size()) - at - key.size());
    EXPECT_EQ(cmd.rfind("/", 0), 0u) << cmd;  // the program by its absolute path
    EXPECT_NE(cmd.find((work / "tests" / "cmp.simt").string()), std::string::npos) << cmd;
    if (faulty) {
      EXPECT_NE(cmd.find("--runner " + (work / "cmp.toml").string()), std::string::npos);
    }
    auto [code2, out2] =
        sh("cd / && " + cmd + (faulty ? " --out " + quote((dir() / "rep2").string()) : ""));
    if (faulty) {
      EXPECT_EQ(code2, 1) << cmd << "\n" << out2;
      EXPECT_NE(out2.find(" fail"), std::string::npos) << out2;
    } else {
      EXPECT_EQ(code2, 0) << cmd << "\n" << out2;
      EXPECT_NE(out2.find("status: completed"), std::string::npos) << out2;
    }
  }
}

}  // namespace
}  // namespace simt
