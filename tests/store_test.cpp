// The results store and the history commands (spec/results.md, results.store.*,
// results.history.*): SHA-256 against the NIST vectors, the schema, refusals,
// migration, records, interrupted and dead runs, two writer processes, the
// history commands' exact output on a hand-built store, and `simtspec test --db`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "digest.h"
#include "store.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using reports::RunInfo;
using reports::Store;

const std::string kBinary = SIMT_BINARY_DIR "/simtspec";

class StoreTest : public test::TempDirSuite<StoreTest> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_store_test_";

 protected:
  static std::string path(const std::string& name) {
    std::string p = (dir() / name).string();
    std::error_code ec;
    fs::remove(p, ec);
    fs::remove(p + "-wal", ec);
    fs::remove(p + "-shm", ec);
    return p;
  }
  static Store open(const std::string& p) {
    auto s = Store::open(p);
    if (auto* e = std::get_if<std::string>(&s)) {
      ADD_FAILURE() << *e;
      std::abort();
    }
    return std::get<Store>(std::move(s));
  }
  static std::string error_of(const std::string& p) {
    auto s = Store::open(p);
    auto* e = std::get_if<std::string>(&s);
    return e ? *e : std::string();
  }
  // Runs SQL on the file directly; the first column of the first row.
  static std::string sql(const std::string& p, const std::string& q) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
    std::string out;
    sqlite3_exec(
        db, q.c_str(),
        [](void* o, int n, char** v, char**) {
          auto* s = static_cast<std::string*>(o);
          if (s->empty() && n > 0 && v[0]) *s = v[0];
          return 0;
        },
        &out, nullptr);
    sqlite3_close(db);
    return out;
  }
  static RunInfo info(const std::string& impl, const std::string& version,
                      const std::string& started) {
    RunInfo r;
    r.kind = "test";
    r.impl_name = impl;
    r.impl_version = version;
    r.suite_version = "0.1.0";
    r.suite_digest = "abcdef0123456789";
    r.simtspec_version = "0.1.0";
    r.host = "testhost";
    r.options = "{}";
    r.started = started;
    return r;
  }
  static json::Value record(const std::string& id, const std::string& key,
                            const std::string& status, const std::string& message = "") {
    json::Value r;
    r["id"] = id;
    r["config_key"] = key;
    r["status"] = status;
    if (!message.empty()) r["message"] = message;
    r["checks"] = 3;
    r["duration_ms"] = 1.5;
    return r;
  }
  static json::Value summary(uint64_t selected, uint64_t run,
                             std::vector<std::pair<std::string, uint64_t>> counts) {
    json::Value s;
    s["selected"] = selected;
    s["run"] = run;
    for (const auto& [k, n] : counts) s[k] = n;
    s["seconds"] = 2.5;
    return s;
  }
  static void two_writers(const std::string& p);
  static test::CommandResult simtspec(const std::string& args) {
    return test::run_command(kBinary, args, dir());
  }
};

// results.store.provenance: FIPS 180-4 SHA-256, the NIST examples (FIPS 180-2
// appendix B and the CAVP short messages).
TEST(Sha256, NistVectors) {
  EXPECT_EQ(reports::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(reports::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(reports::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(reports::sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                                "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  reports::Sha256 million;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.update(chunk);
  EXPECT_EQ(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Every length around the padding boundaries, fed in pieces or at once.
  for (size_t n = 50; n < 140; ++n) {
    std::string m(n, 'x');
    reports::Sha256 parts;
    for (char c : m) parts.update(std::string(1, c));
    EXPECT_EQ(parts.hex(), reports::sha256_hex(m)) << n;
  }
}

// results.store.provenance: the suite digest is sha256sum's lines, sorted by path.
TEST_F(StoreTest, SuiteDigestIsSha256sumOfSortedFiles) {
  const fs::path d = dir() / "digest";
  fs::create_directories(d);
  test::write_all(d / "b.simt", "second\n");
  test::write_all(d / "a.simt", "first\n");
  std::string err;
  std::string got = reports::suite_digest(
      {(d / "b.simt").string(), (d / "a.simt").string(), (d / "b.simt").string()}, err);
  EXPECT_EQ(err, "");
  const std::string lines = reports::sha256_hex("first\n") + "  " + (d / "a.simt").string() + "\n" +
                            reports::sha256_hex("second\n") + "  " + (d / "b.simt").string() + "\n";
  EXPECT_EQ(got, reports::sha256_hex(lines));
  // The same as the shell's sha256sum, when it is there.
  auto r = test::run_command(
      "/bin/sh",
      "-c " + test::shell_quote("cd " + d.string() + " && sha256sum a.simt b.simt | sha256sum"),
      dir());
  if (r.code == 0) {
    std::string rel = reports::suite_digest({"b.simt", "a.simt"}, err);  // not found here
    EXPECT_NE(err, "");
    const fs::path here = fs::current_path();
    fs::current_path(d);
    err.clear();
    rel = reports::suite_digest({"b.simt", "a.simt"}, err);
    fs::current_path(here);
    EXPECT_EQ(rel + "  -\n", r.out);
  }
}

// results.store.schema: a new store has the tables, the format mark and version 2,
// in WAL mode.
TEST_F(StoreTest, NewStoreIsVersionedWithItsFolder) {
  const std::string p = (dir() / "new" / "sub" / "results.db").string();
  { Store s = open(p); }
  EXPECT_EQ(sql(p, "SELECT value FROM meta WHERE key = 'format'"), "simtspec-results-store");
  EXPECT_EQ(sql(p, "SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(reports::kStoreVersion));
  EXPECT_EQ(reports::kStoreVersion, 2);
  EXPECT_EQ(sql(p, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(sql(p,
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                "('results_run', 'results_config')"),
            "2");
  // Opening again keeps it.
  { Store s = open(p); }
  EXPECT_EQ(sql(p, "SELECT count(*) FROM meta"), "2");
}

// results.store: a file that is not a store is refused and left as it was.
TEST_F(StoreTest, ForeignFilesAreRefusedUntouched) {
  const std::string text = path("notes.txt");
  test::write_all(text, "these are my notes, not a database\n");
  EXPECT_NE(error_of(text).find("not a simtspec results store"), std::string::npos);
  EXPECT_EQ(test::read_all(text), "these are my notes, not a database\n");
  const std::string other = path("other.db");
  sql(other, "CREATE TABLE mine (x INTEGER); INSERT INTO mine VALUES (42);");
  const std::string before = test::read_all(other);
  EXPECT_NE(error_of(other).find("not a simtspec results store"), std::string::npos);
  EXPECT_EQ(test::read_all(other), before);
  EXPECT_EQ(sql(other, "SELECT count(*) FROM sqlite_master"), "1");
  // An empty file becomes a store.
  const std::string empty = path("empty.db");
  test::write_all(empty, "");
  EXPECT_EQ(error_of(empty), "");
  // On the command line: exit 2, the file unchanged.
  auto r = simtspec("test " + test::shell_quote(test::source_path("suites/alu")) +
                    " --filter alu.add_sub.wrap --quiet --db " + test::shell_quote(text));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not a simtspec results store"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_all(text), "these are my notes, not a database\n");
}

// results.store.migrate: a newer schema is refused, unchanged.
TEST_F(StoreTest, NewerSchemaIsRefused) {
  const std::string p = path("newer.db");
  { Store s = open(p); }
  sql(p, "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  std::string e = error_of(p);
  EXPECT_NE(e.find("schema version 3 is newer"), std::string::npos) << e;
  EXPECT_EQ(sql(p, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
  sql(p, "UPDATE meta SET value = 'x1' WHERE key = 'schema_version'");
  EXPECT_NE(error_of(p).find("not a simtspec results store"), std::string::npos);
}

// results.store.migrate: a version 1 store (no runs.pid) is migrated, its runs kept.
TEST_F(StoreTest, VersionOneIsMigrated) {
  const std::string p = path("v1.db");
  sql(p, R"(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('format', 'simtspec-results-store'), ('schema_version', '1');
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('test', 'fuzz')),
  state TEXT NOT NULL CHECK (state IN ('running', 'complete', 'interrupted')),
  impl_name TEXT NOT NULL, impl_version TEXT NOT NULL, runner_digest TEXT NOT NULL,
  suite_version TEXT NOT NULL, suite_digest TEXT NOT NULL, simtspec_version TEXT NOT NULL,
  host TEXT NOT NULL, options TEXT NOT NULL, started TEXT NOT NULL,
  duration_s REAL NOT NULL DEFAULT 0,
  selected INTEGER NOT NULL DEFAULT 0, run INTEGER NOT NULL DEFAULT 0,
  counts TEXT NOT NULL DEFAULT '{}');
CREATE TABLE results (
  run INTEGER NOT NULL REFERENCES runs (id),
  test_id TEXT NOT NULL, config_key TEXT NOT NULL, status TEXT NOT NULL,
  message TEXT NOT NULL, checks INTEGER NOT NULL DEFAULT 0, duration_ms REAL NOT NULL DEFAULT 0,
  record TEXT);
INSERT INTO runs (kind, state, impl_name, impl_version, runner_digest, suite_version,
  suite_digest, simtspec_version, host, options, started, selected, run, counts)
  VALUES ('test', 'complete', 'old', '1', '', '0.1.0', 'aa', '0.1.0', 'h', '{}',
  '2026-01-01T00:00:00Z', 1, 1, '{"pass":1}');
INSERT INTO results VALUES (1, 't.one', 'wave=8', 'pass', '', 1, 0, NULL);
)");
  Store s = open(p);
  EXPECT_EQ(sql(p, "SELECT value FROM meta WHERE key = 'schema_version'"), "2");
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].impl_name, "old");
  EXPECT_EQ(runs[0].pid, 0);
  EXPECT_EQ(runs[0].counts.at("pass"), 1u);
  EXPECT_EQ(s.results(1).size(), 1u);
  // And it takes new runs.
  EXPECT_EQ(s.begin_run(info("new", "2", "2026-01-02T00:00:00Z")), 2);
}

// results.store.schema: rows and records round trip; full records only for
// results that are not pass, unsupported or xfail.
TEST_F(StoreTest, RecordsRoundTrip) {
  const std::string p = path("round.db");
  Store s = open(p);
  RunInfo in = info("impl", "1.2", "2026-11-28T08:00:00Z");
  in.runner_digest = reports::sha256_hex("runner");
  in.options = R"({"filter":"x"})";
  in.pid = 1234;
  const int64_t id = s.begin_run(in);
  ASSERT_GT(id, 0);
  EXPECT_EQ(s.run(id)->state, "running");
  json::Value fail = record("t.a", "wave=8", "fail", "r0 differs");
  fail["actual"]["registers"] = json::Array{1, 2, 3};
  s.add(id, record("t.a", "wave=4", "pass"));
  s.add(id, fail);
  s.add(id, record("t.b", "", "unsupported", "needs atomics"));
  s.add(id, record("t.c", "", "xfail", "known"));
  s.add(id, record("t.d", "", "error", "crashed"));
  EXPECT_TRUE(s.finish(
      id, summary(5, 4, {{"pass", 1}, {"fail", 1}, {"unsupported", 1}, {"error", 1}, {"xfail", 1}}),
      "complete"));
  EXPECT_FALSE(s.take_error());
  auto r = s.run(id);
  ASSERT_TRUE(r);
  RunInfo want = in;
  want.id = id;
  want.state = "complete";
  want.duration_s = 2.5;
  want.selected = 5;
  want.run = 4;
  want.counts = {{"pass", 1}, {"fail", 1}, {"unsupported", 1}, {"error", 1}, {"xfail", 1}};
  EXPECT_EQ(*r, want);
  auto rows = s.results(id);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1], (reports::ResultRow{id, "t.a", "wave=8", "fail", "r0 differs"}));
  EXPECT_EQ(rows[2].message, "needs atomics");
  auto recs = s.records(id);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0], fail);
  EXPECT_EQ(recs[1], record("t.d", "", "error", "crashed"));
  EXPECT_EQ(s.history("t.a").size(), 2u);
  EXPECT_EQ(s.history_of("impl").runs.size(), 1u);
  EXPECT_EQ(s.history_of("impl").results.size(), 5u);
  EXPECT_EQ(s.history_of("other").runs.size(), 0u);
  EXPECT_EQ(s.history_of("impl", 0).runs.size(), 1u);  // every run, results of none
  EXPECT_EQ(s.history_of("impl", 0).results.size(), 0u);
  EXPECT_FALSE(s.run(id + 1));
}

// results.store.interrupted: an interrupted run is recorded so; a run whose process
// died is told apart from one still running.
TEST_F(StoreTest, InterruptedAndDeadRuns) {
  const std::string p = path("interrupted.db");
  Store s = open(p);
  const int64_t a = s.begin_run(info("impl", "1", "2026-11-28T08:00:00Z"));
  s.add(a, record("t.a", "", "pass"));
  s.finish(a, summary(3, 1, {{"pass", 1}}), "interrupted");
  EXPECT_EQ(s.run(a)->state, "interrupted");
  EXPECT_EQ(s.results(a).size(), 1u);
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  RunInfo dead = info("impl", "1", "2026-11-28T08:01:00Z");
  dead.host = name;
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  dead.pid = child;
  const int64_t b = s.begin_run(dead);
  EXPECT_EQ(Store::alive(*s.run(b)), std::optional<bool>(false));
  RunInfo live = dead;
  live.pid = ::getpid();
  EXPECT_EQ(Store::alive(*s.run(s.begin_run(live))), std::optional<bool>(true));
  RunInfo elsewhere = dead;
  elsewhere.host = std::string(name) + "-elsewhere";
  EXPECT_EQ(Store::alive(*s.run(s.begin_run(elsewhere))), std::nullopt);
}

// results.store.concurrency: two processes writing one store at once both land,
// whether the store existed or both create it.
TEST_F(StoreTest, TwoWriterProcesses) {
  for (bool exists : {true, false}) {
    SCOPED_TRACE(exists ? "existing store" : "new store");
    const std::string p = path("two.db");
    if (exists) Store s = open(p);
    two_writers(p);
  }
}

void StoreTest::two_writers(const std::string& p) {
  constexpr int kRows = 3000;
  std::vector<pid_t> kids;
  for (int k = 0; k < 2; ++k) {
    pid_t c = ::fork();
    if (c == 0) {
      auto opened = Store::open(p);
      if (auto* e = std::get_if<std::string>(&opened)) {
        std::fprintf(stderr, "writer %d: %s\n", k, e->c_str());
        ::_exit(3);
      }
      Store& s = std::get<Store>(opened);
      int64_t id = s.begin_run(info("writer" + std::to_string(k), "1", "2026-11-28T08:00:00Z"));
      for (int i = 0; i < kRows; ++i)
        s.add(id, record("t." + std::to_string(i), "", i % 7 ? "pass" : "fail", "m"));
      bool ok = s.finish(id, summary(kRows, kRows, {{"pass", kRows}}), "complete");
      ::_exit(ok && !s.take_error() ? 0 : 4);
    }
    kids.push_back(c);
  }
  for (pid_t c : kids) {
    int st = 0;
    ::waitpid(c, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }
  Store s = open(p);
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    EXPECT_EQ(r.state, "complete");
    EXPECT_EQ(s.results(r.id).size(), static_cast<size_t>(kRows)) << r.impl_name;
  }
}

// results.history, results.history.diff, results.history.test, results.history.flaky:
// the exact output on a hand-built store.
TEST_F(StoreTest, HistoryCommandsOnAHandBuiltStore) {
  const std::string p = path("hist.db");
  {
    Store s = open(p);
    auto add_run =
        [&](const std::string& impl, const std::string& version, const std::string& started,
            std::vector<std::tuple<std::string, std::string, std::string, std::string>> rows) {
          int64_t id = s.begin_run(info(impl, version, started));
          std::map<std::string, uint64_t> counts;
          uint64_t ran = 0;
          for (const auto& [tid, key, st, msg] : rows) {
            s.add(id, record(tid, key, st, msg));
            ++counts[st];
            ran += st != "unsupported";
          }
          json::Value sum = summary(rows.size(), ran, {});
          for (const auto& [k, n] : counts) sum[k] = n;
          s.finish(id, sum, "complete");
        };
    add_run("ref", "1", "2026-11-28T08:00:00Z",
            {{"t.a", "wave=8", "pass", ""},
             {"t.a", "wave=4", "pass", ""},
             {"t.b", "", "fail", "r1 differs"},
             {"t.c", "", "unsupported", "needs atomics"},
             {"t.d", "", "pass", ""},
             {"t.e", "", "pass", ""}});
    add_run("ref", "1", "2026-11-28T09:00:00Z",
            {{"t.a", "wave=8", "fail", "r0 differs"},
             {"t.a", "wave=4", "pass", ""},
             {"t.b", "", "pass", ""},
             {"t.c", "", "pass", ""},
             {"t.e", "", "unsupported", "no wave 64"},
             {"t.f", "", "pass", ""}});
    add_run("ref", "1", "2026-11-28T10:00:00Z",
            {{"t.a", "wave=8", "pass", ""}, {"t.a", "wave=4", "pass", ""}});
    add_run("gpu", "2", "2026-11-28T11:00:00Z", {{"t.a", "wave=8", "error", "crashed"}});
  }
  const std::string db = " --db " + test::shell_quote(p);
  auto r = simtspec("history" + db);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "1 test complete 2026-11-28T08:00:00Z ref 1: 5 of 6 configurations run (83%): 4 pass, "
            "1 fail, 1 unsupported\n"
            "2 test complete 2026-11-28T09:00:00Z ref 1: 5 of 6 configurations run (83%): 4 pass, "
            "1 fail, 1 unsupported\n"
            "3 test complete 2026-11-28T10:00:00Z ref 1: 2 of 2 configurations run (100%): 2 "
            "pass\n"
            "4 test complete 2026-11-28T11:00:00Z gpu 2: 1 of 1 configuration run (100%): 1 "
            "error\n");
  r = simtspec("history diff 1 2" + db);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "regression: t.a[wave=8]: pass -> fail: r0 differs\n"
            "fix: t.b: fail -> pass: r1 differs\n"
            "newly unsupported: t.e: pass -> unsupported: no wave 64\n"
            "newly run: t.c: unsupported -> pass: needs atomics\n"
            "newly run: t.f: absent -> pass\n"
            "vanished: t.d: pass -> absent\n"
            "run 1 -> run 2: regression 1, fix 1, newly unsupported 1, newly run 2, vanished 1, "
            "changed 0\n");
  // latest~N among one implementation's runs, and the JSON form.
  r = simtspec("history diff latest~1 latest --impl ref --json" + db);
  EXPECT_EQ(r.code, 0) << r.err;
  auto parsed = json::parse(r.out);
  ASSERT_TRUE(std::holds_alternative<json::Value>(parsed)) << r.out;
  const json::Value& v = std::get<json::Value>(parsed);
  EXPECT_EQ(v.find("a")->as_int(), 2);
  EXPECT_EQ(v.find("b")->as_int(), 3);
  EXPECT_EQ(v.find("counts")->find("fix")->as_int(), 1);
  EXPECT_EQ(v.find("counts")->find("vanished")->as_int(), 4);
  for (const char* bad : {"9 1", "latest~4 1", "x 1", "1 latest~-1"}) {
    r = simtspec("history diff " + std::string(bad) + db);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_NE(r.err.find("no run"), std::string::npos) << r.err;
  }
  r = simtspec("history diff 4 1 --impl ref" + db);
  EXPECT_EQ(r.code, 2);
  r = simtspec("history test t.a" + db);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "gpu: t.a[wave=8]: run 4 (2026-11-28T11:00:00Z, 2): error: crashed\n"
            "ref: t.a[wave=4]: run 1 (2026-11-28T08:00:00Z, 1): pass\n"
            "ref: t.a[wave=8]: run 1 (2026-11-28T08:00:00Z, 1): pass\n"
            "ref: t.a[wave=8]: run 2 (2026-11-28T09:00:00Z, 1): fail: r0 differs\n"
            "ref: t.a[wave=8]: run 3 (2026-11-28T10:00:00Z, 1): pass\n");
  r = simtspec("history test t.a --config wave=4" + db);
  EXPECT_EQ(r.out, "ref: t.a[wave=4]: run 1 (2026-11-28T08:00:00Z, 1): pass\n");
  r = simtspec("history test t.none" + db);
  EXPECT_EQ(r.code, 2);
  r = simtspec("history flaky" + db);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "ref 1, suite abcdef01: t.a[wave=8]: run 1 pass, run 2 fail, run 3 pass\n"
            "ref 1, suite abcdef01: t.b: run 1 fail, run 2 pass\n"
            "ref 1, suite abcdef01: t.c: run 1 unsupported, run 2 pass\n"
            "ref 1, suite abcdef01: t.e: run 1 pass, run 2 unsupported\n"
            "4 flaky configurations\n");
  // history never creates a store.
  r = simtspec("history --db " + test::shell_quote((dir() / "absent.db").string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(dir() / "absent.db"));
}

// results.store: `simtspec test` records its run; --no-db records nothing.
TEST_F(StoreTest, TestCommandRecordsItsRun) {
  const std::string p = path("e2e.db");
  const std::string suite = test::shell_quote(test::source_path("suites/alu"));
  auto r =
      simtspec("test " + suite + " --filter 'alu.add_sub.*' --quiet --db " + test::shell_quote(p));
  ASSERT_EQ(r.code, 0) << r.err;
  Store s = open(p);
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  const RunInfo& run = runs[0];
  EXPECT_EQ(run.kind, "test");
  EXPECT_EQ(run.state, "complete");
  EXPECT_EQ(run.impl_name, "reference");
  EXPECT_EQ(run.runner_digest, "");
  EXPECT_EQ(run.suite_digest.size(), 64u);
  EXPECT_GT(run.selected, 0u);
  EXPECT_EQ(run.counts.at("pass"), run.selected);
  EXPECT_EQ(s.results(run.id).size(), run.selected);
  EXPECT_TRUE(s.records(run.id).empty());  // all passed
  EXPECT_NE(run.options.find("\"filter\":\"alu.add_sub.*\""), std::string::npos) << run.options;
  // The suite digest is that of every test file under the path, selected or not
  // (results.store.provenance), as the results header says too.
  std::vector<std::string> all;
  for (const auto& e : fs::recursive_directory_iterator(test::source_path("suites/alu")))
    if (e.path().extension() == ".simt") all.push_back(e.path().string());
  ASSERT_GT(all.size(), 1u);
  std::string err;
  EXPECT_EQ(run.suite_digest, reports::suite_digest(all, err));
  EXPECT_NE(run.suite_digest,
            reports::suite_digest({test::source_path("suites/alu/add_sub_wrap.simt")}, err));
  // --no-db: nothing written, not even the default store.
  const fs::path none = dir() / "nodb";
  fs::create_directories(none);
  auto r2 = test::run_command(
      "/bin/sh",
      "-c " + test::shell_quote("cd " + none.string() + " && " + kBinary + " test " + suite +
                                " --filter 'alu.add_sub.*' --quiet --no-db"),
      dir());
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_FALSE(fs::exists(none / ".simtspec"));
  // --db and --no-db contradict each other: bad usage.
  auto both = simtspec("test " + suite + " --quiet --no-db --db " + test::shell_quote(p));
  EXPECT_EQ(both.code, 2) << both.err;
  EXPECT_EQ(open(p).runs().size(), 1u);
  // A named store that cannot be created is bad input; the default one a warning.
  test::write_all(none / "file", "x");
  auto bad = simtspec("test " + suite + " --quiet --filter 'alu.add_sub.*' --db " +
                      test::shell_quote((none / "file" / "results.db").string()));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("cannot create its folder"), std::string::npos) << bad.err;
  const fs::path ro = dir() / "readonly";
  fs::create_directories(ro);
  test::write_all(ro / ".simtspec", "a file where the folder would be");
  auto warned = test::run_command(
      "/bin/sh",
      "-c " + test::shell_quote("cd " + ro.string() + " && " + kBinary + " test " + suite +
                                " --filter 'alu.add_sub.*' --quiet"),
      dir());
  EXPECT_EQ(warned.code, 0) << warned.err;
  EXPECT_NE(warned.err.find("warning: results store .simtspec/results.db"), std::string::npos)
      << warned.err;
  // Without --db: the default store under the working directory.
  auto r3 = test::run_command(
      "/bin/sh",
      "-c " + test::shell_quote("cd " + none.string() + " && " + kBinary + " test " + suite +
                                " --filter 'alu.add_sub.*' --quiet && " + kBinary + " history"),
      dir());
  EXPECT_EQ(r3.code, 0) << r3.err;
  EXPECT_TRUE(fs::exists(none / ".simtspec" / "results.db"));
  EXPECT_NE(r3.out.find("1 test complete"), std::string::npos) << r3.out;
}

// results.store.provenance, results.history.diff: a run on a planted fault records
// its failures whole and the runner description's digest; diff names them.
TEST_F(StoreTest, PlantedFaultIsARegression) {
  const std::string p = path("fault.db");
  const std::string suite = test::shell_quote(test::source_path("suites/alu"));
  const std::string args =
      "test " + suite + " --filter 'alu.cmp*' --quiet --db " + test::shell_quote(p);
  auto r = simtspec(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path toml = dir() / "cmp-unsigned.toml";
  test::write_all(toml, test::faulty_runner_toml("cmp-unsigned"));
  r = simtspec(args + " --runner " + test::shell_quote(toml.string()));
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  Store s = open(p);
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].impl_name, "faulty-cmp-unsigned");
  EXPECT_EQ(runs[1].runner_digest, reports::sha256_hex(test::faulty_runner_toml("cmp-unsigned")));
  EXPECT_EQ(runs[1].suite_digest, runs[0].suite_digest);
  const uint64_t fails = runs[1].counts.count("fail") ? runs[1].counts.at("fail") : 0;
  ASSERT_GT(fails, 0u);
  EXPECT_EQ(s.records(runs[1].id).size(), fails);
  EXPECT_EQ(s.records(runs[1].id)[0].find("status")->as_string(), "fail");
  r = simtspec("history diff 1 2 --db " + test::shell_quote(p));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("regression: alu.cmp.signed[wave="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run 1 -> run 2: regression " + std::to_string(fails) + ", fix 0"),
            std::string::npos)
      << r.out;
}

// results.store.fuzz: a fuzz run is recorded with the programs it checked.
TEST_F(StoreTest, FuzzRunIsRecorded) {
  const std::string p = path("fuzz.db");
  auto r = simtspec("fuzz --invariant sequential --seed 7 --count 4 --db " + test::shell_quote(p) +
                    " --out " + test::shell_quote((dir() / "fuzz_regress").string()));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  Store s = open(p);
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kind, "fuzz");
  EXPECT_EQ(runs[0].state, "complete");
  EXPECT_EQ(runs[0].selected, 4u);
  EXPECT_EQ(runs[0].counts.at("pass"), 4u);
  EXPECT_NE(runs[0].options.find("\"seed\":7"), std::string::npos) << runs[0].options;
  EXPECT_TRUE(s.results(runs[0].id).empty());
}

// results.store.interrupted: `simtspec test` stopped by SIGTERM records its run
// as interrupted, with the results its results file holds.
TEST_F(StoreTest, AnInterruptedTestRunIsRecordedSo) {
  const fs::path suite = dir() / "interrupt";
  test::write_all(suite / "a.simt", test::kSignedCompareTest);
  test::write_all(suite / "b.simt", test::kRunawayTest);
  const std::string p = path("interrupt.db");
  const fs::path out = dir() / "interrupted";
  const std::string log = (dir() / "interrupt.log").string();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl(kBinary.c_str(), "simtspec", "test", suite.c_str(), "--jobs", "1", "--quiet",
            "--timeout", "60", "--out", out.c_str(), "--db", p.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Once a.simt's two configurations are written, b.simt runs away until the signal.
  for (int i = 0; i < 400; ++i) {
    std::string jl = test::read_all(out / "results.jsonl");
    if (std::count(jl.begin(), jl.end(), '\n') >= 3) break;
    ::usleep(50 * 1000);
  }
  {
    // Meanwhile the run is recorded as running, by a live process.
    Store s = open(p);
    auto runs = s.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].state, "running");
    EXPECT_EQ(runs[0].pid, pid);
    EXPECT_EQ(Store::alive(runs[0]), std::optional<bool>(true));
  }
  ::usleep(300 * 1000);
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << test::read_all(log);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << test::read_all(log);
  Store s = open(p);
  auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, "interrupted");
  EXPECT_EQ(runs[0].selected, 3u);
  EXPECT_EQ(s.results(runs[0].id).size(), 2u);
  auto r = simtspec("history --db " + test::shell_quote(p));
  EXPECT_NE(r.out.find("1 test interrupted "), std::string::npos) << r.out;
}

// results.store: a write that fails is reported once through take_error(), and the
// store goes on working (simtspec warns and stops recording that run).
TEST_F(StoreTest, AFailedWriteIsReported) {
  const std::string p = path("failing.db");
  Store s = open(p);
  s.add(999, record("t.a", "", "pass"));  // no run 999: the batch breaks a foreign key
  EXPECT_FALSE(s.finish(999, summary(1, 1, {{"pass", 1}}), "complete"));
  auto e = s.take_error();
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("FOREIGN KEY"), std::string::npos) << *e;
  EXPECT_FALSE(s.take_error());  // reported once
  const int64_t id = s.begin_run(info("impl", "1", "2026-11-28T08:00:00Z"));
  s.add(id, record("t.a", "", "pass"));
  EXPECT_TRUE(s.finish(id, summary(1, 1, {{"pass", 1}}), "complete"));
  EXPECT_FALSE(s.take_error());
  EXPECT_EQ(s.results(id).size(), 1u);
  EXPECT_TRUE(s.results(999).empty());
}

// results.history.prune: all but the newest N runs of each implementation and kind
// go, with their results.
TEST_F(StoreTest, PruneKeepsTheNewestRunsOfEachImplementation) {
  const std::string p = path("prune.db");
  {
    Store s = open(p);
    for (const char* impl : {"a", "a", "b", "a", "b"}) {
      int64_t id = s.begin_run(info(impl, "1", "2026-11-28T08:00:00Z"));
      for (int i = 0; i < 300; ++i) s.add(id, record("t." + std::to_string(i), "", "pass"));
      s.finish(id, summary(300, 300, {{"pass", 300}}), "complete");
    }
    RunInfo fuzz = info("a", "1", "2026-11-28T09:00:00Z");
    fuzz.kind = "fuzz";
    s.finish(s.begin_run(fuzz), summary(1, 1, {{"pass", 1}}), "complete");
  }
  auto r = simtspec("history prune --keep 1 --db " + test::shell_quote(p));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "removed 3 runs, kept the newest 1 of each implementation and kind\n");
  Store s = open(p);
  std::vector<int64_t> ids;
  for (const auto& run : s.runs()) ids.push_back(run.id);
  EXPECT_EQ(ids, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(s.results(4).size(), 300u);
  EXPECT_TRUE(s.results(1).empty());
  EXPECT_EQ(sql(p, "SELECT count(*) FROM results"), "600");
  r = simtspec("history prune --keep 1 --db " + test::shell_quote(p));
  EXPECT_EQ(r.out, "removed 0 runs, kept the newest 1 of each implementation and kind\n");
  r = simtspec("history prune --keep 0 --db " + test::shell_quote(p));
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace simt
