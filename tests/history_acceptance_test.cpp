// ci: not sanitized: runs of a part of the real suite as simtspec processes, through the
// reference, lavapipe and the faulty implementation, into one results store (end to end)
// Issue 29's "Done when", in a small but real form, through the simtspec program only:
// runs of four feature folders of the suite on the reference, on lavapipe (when the
// Vulkan runner is built and a device answers) and once with a planted fault land in one
// store (results.store); `simtspec history diff` names exactly the planted regressions
// (results.history.diff); `--baseline` turns them into exit 1 and a clean run into exit 0
// (results.baseline); a runner that fails at random is classified `flaky` with
// `--rerun-failures 3` (results.rerun), which the store shows (results.history.test,
// results.history.flaky).
//
// Without a Vulkan device (or without simtspec-vulkan in this build) the lavapipe runs
// are left out and, after every other check, the test skips saying so; under
// SIMT_REQUIRE_VULKAN=1 (CI) that is a failure instead, as in vulkan_runner_test.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "json.h"
#include "support.h"
#include "vulkan_test_support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using test::read_all;
using test::write_all;

// A configuration as the history and baseline lines name it: `ID[CONFIG_KEY]`, or `ID`
// when the key is empty.
using Config = std::string;
Config config(const std::string& id, const std::string& key) {
  return key.empty() ? id : id + "[" + key + "]";
}
// Configuration -> status of one results.jsonl.
using Statuses = std::map<Config, std::string>;

class HistoryAcceptance : public test::TempDirSuite<HistoryAcceptance> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_history_acceptance_test_";

 protected:
  static std::string q(const fs::path& p) { return test::shell_quote(p.string()); }
  static fs::path db() { return dir() / "results.db"; }

  // The part of the suite every run selects: the same paths each time, so that the
  // runs share a suite digest (results.store.provenance) and group together.
  static std::string suite_paths() {
    std::string s;
    for (const char* f : {"suites/alu", "suites/branch", "suites/xlane", "suites/mem"})
      s += " " + q(test::source_path(f));
    return s;
  }

  // `simtspec ARGS` with `env` (NAME=VALUE words, may be empty) in its environment.
  static test::CommandResult simtspec(const std::string& args, const std::string& env = "") {
    return test::run_command("/usr/bin/env",
                             env + " " + q(SIMT_BINARY_DIR "/simtspec") + " " + args, dir());
  }
  // `simtspec test` of the suite's part into the store, results in `out`.
  static test::CommandResult run_suite(const std::string& name, const std::string& args,
                                       const std::string& env = "") {
    return simtspec("test" + suite_paths() + " --quiet --db " + q(db()) + " --out " +
                        q(dir() / name) + " " + args,
                    env);
  }
  static test::CommandResult history(const std::string& args) {
    return simtspec("history " + args + " --db " + q(db()));
  }

  // The records of a results.jsonl ([results.stream]): configuration -> status.
  static Statuses statuses(const std::string& name) {
    Statuses out;
    std::istringstream in(read_all(dir() / name / "results.jsonl"));
    for (std::string line; std::getline(in, line);) {
      auto v = json::parse(line);
      const json::Value* rec = std::get_if<json::Value>(&v);
      if (rec == nullptr || !rec->is_object()) {
        ADD_FAILURE() << name << ": not a JSON object: " << line;
        continue;
      }
      const json::Value *id = rec->find("id"), *key = rec->find("config_key"),
                        *status = rec->find("status");
      if (id == nullptr || key == nullptr || status == nullptr) continue;  // header, summary
      out[config(id->as_string(), key->as_string())] = status->as_string();
    }
    EXPECT_FALSE(out.empty()) << name << ": no records";
    return out;
  }
  static std::set<Config> with_status(const Statuses& s, const std::string& status) {
    std::set<Config> out;
    for (const auto& [c, st] : s)
      if (st == status) out.insert(c);
    return out;
  }

  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  // The configurations named by the lines starting with `prefix` (`PREFIX CONFIG: ...`,
  // results.history.diff, results.baseline.console; neither a test id nor a config key
  // holds ": ").
  static std::multiset<Config> named(const std::string& text, const std::string& prefix) {
    std::multiset<Config> out;
    for (const auto& l : lines(text))
      if (l.rfind(prefix, 0) == 0)
        out.insert(l.substr(prefix.size(), l.find(": ", prefix.size()) - prefix.size()));
    return out;
  }
  // What two sets of configurations do not share, for failure messages.
  template <class A, class B>
  static std::string difference(const A& a, const B& b) {
    std::string out;
    for (const auto& c : a)
      if (b.count(c) == 0) out += "only in the first: " + c + "\n";
    for (const auto& c : b)
      if (a.count(c) == 0) out += "only in the second: " + c + "\n";
    return out;
  }
  static std::multiset<Config> as_multiset(const std::set<Config>& s) {
    return {s.begin(), s.end()};
  }
};

// A description of the faulty implementation with random-fail whose seed comes from
// the environment (SIMT_ACCEPT_FAIL_SEED): one runner description file, so runs with
// different seeds are runs of one implementation version (results.history.flaky
// groups by runner digest).
std::string random_fail_toml() {
  std::string toml = test::faulty_runner_toml("random-fail");
  const std::string cmd = "command = \"" SIMT_BINARY_DIR
                          "/simtspec-faulty\"\nargs = [\"--fault\", "
                          "\"random-fail\"]";
  const size_t at = toml.find(cmd);
  EXPECT_NE(at, std::string::npos) << toml;
  if (at == std::string::npos) return toml;
  toml.replace(at, cmd.size(),
               "command = \"/bin/sh\"\nargs = [\"-c\", \"exec \\\"$0\\\" --fault random-fail "
               "--fail-seed \\\"$SIMT_ACCEPT_FAIL_SEED\\\" --fail-rate 0.3\", \"" SIMT_BINARY_DIR
               "/simtspec-faulty\"]");
  return toml;
}

// runners/vulkan/lavapipe.toml as shipped, with this build's simtspec-vulkan.
std::string lavapipe_toml() {
  std::string toml = read_all(test::source_path("runners/vulkan/lavapipe.toml"));
  const size_t at = toml.find("\ncommand = ");
  if (at == std::string::npos) return "";
  toml.replace(at + 1, toml.find('\n', at + 1) - at - 1,
               "command = \"" SIMT_BINARY_DIR "/simtspec-vulkan\"");
  return toml;
}

TEST_F(HistoryAcceptance, DoneWhen) {
  write_all(dir() / "cmp.toml", test::faulty_runner_toml("cmp-unsigned"));
  write_all(dir() / "random.toml", random_fail_toml());
  // Expected run ids, in the order the runs are made (a new store numbers from 1).
  std::vector<std::pair<std::string, std::string>> runs;  // (implementation, results folder)
  auto expect_run = [&](const test::CommandResult& r, int code, const std::string& impl,
                        const std::string& name) {
    EXPECT_TRUE(r.exited && r.code == code) << name << ": exit " << r.code << "\n"
                                            << r.out << r.err;
    runs.emplace_back(impl, name);
    return std::to_string(runs.size());
  };

  // 1. Clean runs on the reference, on lavapipe, one with a planted fault.
  const std::string ref1 = expect_run(run_suite("ref1", ""), 0, "reference", "ref1");
  const std::string ref2 = expect_run(run_suite("ref2", ""), 0, "reference", "ref2");
  std::string no_lavapipe;
  if (!fs::exists(SIMT_BINARY_DIR "/simtspec-vulkan")) {
    no_lavapipe = "simtspec-vulkan is not built (SIMT_VULKAN)";
  } else {
    write_all(dir() / "lavapipe.toml", lavapipe_toml());
    // Mesa's on-disk shader cache is off, as for the Vulkan runner's tests.
    const std::string env = "MESA_SHADER_CACHE_DISABLE=true";
    for (const char* name : {"lavapipe1", "lavapipe2"}) {
      auto r = run_suite(name, "--runner " + q(dir() / "lavapipe.toml"), env);
      if (r.out.find("no Vulkan device") != std::string::npos ||
          r.err.find("no Vulkan device") != std::string::npos) {
        no_lavapipe = "the lavapipe run says: no Vulkan device";
        runs.emplace_back("lavapipe", name);  // recorded all the same
        break;
      }
      expect_run(r, 0, "lavapipe", name);
    }
  }
  const std::string ref3 = expect_run(run_suite("ref3", ""), 0, "reference", "ref3");
  const std::string faulty = expect_run(run_suite("faulty", "--runner " + q(dir() / "cmp.toml")), 1,
                                        "faulty-cmp-unsigned", "faulty");
  const std::set<Config> planted = with_status(statuses("faulty"), "fail");
  EXPECT_FALSE(planted.empty()) << "cmp-unsigned fails nothing in the selection";
  // Every other configuration passes on the fault (it plants nothing else).
  EXPECT_EQ(with_status(statuses("faulty"), "pass").size() + planted.size(),
            statuses("faulty").size());

  // 2. history diff: the last clean reference run against the faulty one names exactly
  // the planted regressions, and nothing else as a regression.
  auto r = history("diff " + ref3 + " " + faulty);
  ASSERT_TRUE(r.exited && r.code == 0) << r.out << r.err;
  EXPECT_EQ(named(r.out, "regression: "), as_multiset(planted)) << r.out;
  EXPECT_NE(r.out.find("run " + ref3 + " -> run " + faulty + ": regression " +
                       std::to_string(planted.size()) +
                       ", fix 0, newly unsupported 0, newly run 0, vanished 0, changed 0\n"),
            std::string::npos)
      << r.out;
  // Two clean reference runs: no change at all.
  r = history("diff " + ref1 + " " + ref3);
  ASSERT_TRUE(r.exited && r.code == 0) << r.out << r.err;
  EXPECT_EQ(r.out, "run " + ref1 + " -> run " + ref3 +
                       ": regression 0, fix 0, newly unsupported 0, newly run 0, vanished 0, "
                       "changed 0\n");
  if (no_lavapipe.empty()) {
    r = history("diff latest~1 latest --impl lavapipe");
    ASSERT_TRUE(r.exited && r.code == 0) << r.out << r.err;
    EXPECT_NE(r.out.find(": regression 0, fix 0, newly unsupported 0, newly run 0, vanished 0, "
                         "changed 0\n"),
              std::string::npos)
        << r.out;
  }

  // 3. CI against a baseline: a clean reference run's id in the store, then its results
  // file. These runs are recorded too.
  for (const std::string& base : {ref2, q(dir() / "ref2" / "results.jsonl")}) {
    SCOPED_TRACE("--baseline " + base);
    const std::string n = std::to_string(runs.size());
    r = run_suite("base-faulty" + n, "--runner " + q(dir() / "cmp.toml") + " --baseline " + base);
    expect_run(r, 1, "faulty-cmp-unsigned", "base-faulty" + n);
    EXPECT_EQ(named(r.out, "regression: "), as_multiset(planted)) << r.out;
    EXPECT_TRUE(named(r.out, "progression: ").empty()) << r.out;
    EXPECT_NE(
        r.out.find("baseline: " + std::to_string(planted.size()) + " regression, 0 progression"),
        std::string::npos)
        << r.out;
    r = run_suite("base-ref" + n, "--baseline " + base);
    expect_run(r, 0, "reference", "base-ref" + n);
    EXPECT_TRUE(named(r.out, "regression: ").empty()) << r.out;
    EXPECT_NE(r.out.find("baseline: 0 regression, 0 progression"), std::string::npos) << r.out;
  }

  // 4. A runner that fails at random (fixed seed, one job: a fixed sequence), three
  // reruns of each failure: some configurations are flaky, the same ones each time.
  const std::string random = "--runner " + q(dir() / "random.toml") + " --jobs 1";
  const std::string rand_a =
      expect_run(run_suite("random7", random + " --rerun-failures 3", "SIMT_ACCEPT_FAIL_SEED=7"), 1,
                 "faulty-random-fail", "random7");
  const Statuses seven = statuses("random7");
  const std::set<Config> flaky = with_status(seven, "flaky");
  EXPECT_FALSE(flaky.empty()) << read_all(dir() / "random7" / "results.jsonl");
  r = run_suite("random7again", random + " --rerun-failures 3", "SIMT_ACCEPT_FAIL_SEED=7");
  expect_run(r, 1, "faulty-random-fail", "random7again");
  EXPECT_EQ(named(r.out, "flaky: "), as_multiset(flaky))
      << difference(named(r.out, "flaky: "), flaky);
  EXPECT_EQ(statuses("random7again"), seven);
  // Another seed, no reruns: failures are plain failures, at other configurations.
  expect_run(run_suite("random8", random, "SIMT_ACCEPT_FAIL_SEED=8"), 1, "faulty-random-fail",
             "random8");
  const Statuses eight = statuses("random8");
  EXPECT_TRUE(with_status(eight, "flaky").empty());

  // The store has the flaky status: one flaky configuration's history.
  if (!flaky.empty()) {
    const Config& c = *flaky.begin();
    const size_t open = c.find('[');
    r = history("test " + q(c.substr(0, open)) +
                (open == std::string::npos
                     ? ""
                     : " --config " + q(c.substr(open + 1, c.size() - open - 2))));
    ASSERT_TRUE(r.exited && r.code == 0) << r.out << r.err;
    bool shown = false;
    for (const auto& l : lines(r.out))
      shown |= l.rfind("faulty-random-fail: " + c + ": run " + rand_a + " (", 0) == 0 &&
               l.find("): flaky") != std::string::npos;
    EXPECT_TRUE(shown) << r.out;
  }

  // history flaky: exactly the configurations whose status differs across the three
  // random-fail runs (one runner description, one suite), and nothing of the reference,
  // lavapipe or the planted fault, whose runs agree.
  std::set<Config> changed;
  for (const auto& [c, st] : seven) {
    auto e = eight.find(c);
    if (e != eight.end() && e->second != st) changed.insert(c);
  }
  EXPECT_FALSE(changed.empty());
  r = history("flaky");
  ASSERT_TRUE(r.exited && r.code == 0) << r.out << r.err;
  std::set<Config> listed;
  for (const auto& l : lines(r.out)) {
    if (l.find(" flaky configuration") != std::string::npos && l.find(": ") == std::string::npos)
      continue;
    EXPECT_EQ(l.rfind("faulty-random-fail , suite ", 0), 0u) << l;
    const size_t from = l.find(": ") + 2;
    listed.insert(l.substr(from, l.find(": ", from) - from));
  }
  EXPECT_EQ(listed, changed) << difference(listed, changed);
  EXPECT_NE(r.out.find("\n" + std::to_string(changed.size()) + " flaky configuration"),
            std::string::npos)
      << r.out;

  // The store lists every run, in order, with its implementation and share.
  r = history("");
  ASSERT_TRUE(r.exited && r.code == 0) << r.out << r.err;
  const auto got = lines(r.out);
  ASSERT_EQ(got.size(), runs.size()) << r.out;
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(got[i].rfind(std::to_string(i + 1) + " test complete ", 0), 0u) << got[i];
    EXPECT_NE(got[i].find("Z " + runs[i].first + " "), std::string::npos) << got[i];
    EXPECT_NE(got[i].find(" of " + std::to_string(statuses(runs[i].second).size()) +
                          " configurations run"),
              std::string::npos)
        << got[i];
  }

  if (!no_lavapipe.empty()) SIMT_NO_VULKAN_DEVICE(no_lavapipe << "; every other check ran");
}

}  // namespace
}  // namespace simt
