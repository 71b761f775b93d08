// The results store over SQLite's C API (spec/results.md, results.store.*).
#include "store.h"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "digest.h"
#include "results.h"

namespace simt::reports {

// Named, not anonymous: Store::Impl holds these types (and the unity build
// joins this file with the others of the library).
namespace sqlstore {

namespace fs = std::filesystem;

constexpr const char* kFormat = "simtspec-results-store";
constexpr int kBusyMs = 10'000;  // results.store.concurrency
constexpr size_t kBatchRows = 256;
constexpr double kBatchSeconds = 1.0;

// results.store.schema: the tables of the current version.
constexpr const char* kStoreSchema = R"(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('test', 'fuzz')),
  state TEXT NOT NULL CHECK (state IN ('running', 'complete', 'interrupted')),
  impl_name TEXT NOT NULL, impl_version TEXT NOT NULL, runner_digest TEXT NOT NULL,
  suite_version TEXT NOT NULL, suite_digest TEXT NOT NULL, simtspec_version TEXT NOT NULL,
  host TEXT NOT NULL, options TEXT NOT NULL, started TEXT NOT NULL,
  duration_s REAL NOT NULL DEFAULT 0,
  selected INTEGER NOT NULL DEFAULT 0, run INTEGER NOT NULL DEFAULT 0,
  counts TEXT NOT NULL DEFAULT '{}',
  pid INTEGER NOT NULL DEFAULT 0);
CREATE TABLE results (
  run INTEGER NOT NULL REFERENCES runs (id),
  test_id TEXT NOT NULL, config_key TEXT NOT NULL, status TEXT NOT NULL,
  message TEXT NOT NULL, checks INTEGER NOT NULL DEFAULT 0, duration_ms REAL NOT NULL DEFAULT 0,
  record TEXT);
CREATE INDEX results_run ON results (run);
CREATE INDEX results_config ON results (test_id, config_key);
)";

// results.store.migrate: the step from each older version to the next.
struct Migration {
  int from;
  const char* sql;
};
constexpr int kOldestVersion = 1;
constexpr Migration kMigrations[] = {
    {1, "ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;"},
};

struct Db {
  sqlite3* db = nullptr;
  ~Db() {
    if (db) sqlite3_close_v2(db);
  }
};

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& bind_null(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  int step() { return rc_ = sqlite3_step(s_); }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::string text(int c) const {
    const auto* p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(s_, c)))
             : std::string();
  }
  int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  bool null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_OK;
};

std::string errmsg(sqlite3* db) {
  return sqlite3_errmsg(db);
}

// Runs SQL without results; a message on failure.
std::optional<std::string> exec(sqlite3* db, const char* sql) {
  char* e = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &e) == SQLITE_OK) return std::nullopt;
  std::string m = e ? e : errmsg(db);
  sqlite3_free(e);
  return m;
}

// The one place where a record becomes a row (results.store.schema).
struct StoredRow {
  std::string test_id, config_key, status, message;
  int64_t checks = 0;
  double duration_ms = 0;
  std::optional<std::string> record;  // only for what is neither pass, unsupported nor xfail
};

// results.store.schema: the row of a typed record; the whole record is kept for
// the statuses that get a page of their own (the status table's `page` column:
// not pass, unsupported or xfail) and for a status the table does not know.
// `whole` is the record's JSON as written (a fuzz record's own fields included).
StoredRow to_row(const Record& rec, const json::Value& whole) {
  StoredRow r;
  r.test_id = rec.id;
  r.config_key = rec.config_key;
  r.status = rec.status_name;
  r.message = rec.message;
  r.checks = rec.checks && *rec.checks >= 0 ? *rec.checks : 0;
  r.duration_ms = rec.duration_ms.value_or(0);
  if (!rec.status || info(*rec.status).page) r.record = json::dump(whole);
  return r;
}

constexpr const char* kRunColumns =
    "id, kind, state, impl_name, impl_version, runner_digest, suite_version, suite_digest, "
    "simtspec_version, host, options, started, duration_s, selected, run, counts, pid";

RunInfo to_run(const Stmt& s) {
  RunInfo r;
  r.id = s.integer(0);
  r.kind = s.text(1);
  r.state = s.text(2);
  r.impl_name = s.text(3);
  r.impl_version = s.text(4);
  r.runner_digest = s.text(5);
  r.suite_version = s.text(6);
  r.suite_digest = s.text(7);
  r.simtspec_version = s.text(8);
  r.host = s.text(9);
  r.options = s.text(10);
  r.started = s.text(11);
  r.duration_s = s.real(12);
  r.selected = static_cast<uint64_t>(s.integer(13));
  r.run = static_cast<uint64_t>(s.integer(14));
  auto parsed = json::parse(s.text(15));
  if (auto* v = std::get_if<json::Value>(&parsed); v && v->is_object())
    for (const auto& [k, n] : v->as_object())
      if (n.is_uint()) r.counts[k] = n.as_uint();
  r.pid = s.integer(16);
  return r;
}

// Reads the schema version: -1 when the database has no tables at all (a new or
// empty file), -2 when it is not a simtspec store (with `why`).
int schema_version(sqlite3* db, std::string& why) {
  Stmt any(db, "SELECT count(*) FROM sqlite_master");
  if (!any.ok() || any.step() != SQLITE_ROW) {
    why = errmsg(db);
    return -2;
  }
  if (any.integer(0) == 0) return -1;
  Stmt fmt(db, "SELECT value FROM meta WHERE key = 'format'");
  if (!fmt.ok() || fmt.step() != SQLITE_ROW || fmt.text(0) != kFormat) {
    why = "it has no simtspec store format mark";
    return -2;
  }
  Stmt ver(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!ver.ok() || ver.step() != SQLITE_ROW) {
    why = "it has no schema version";
    return -2;
  }
  const std::string v = ver.text(0);
  if (v.empty() || v.size() > 6 || !std::all_of(v.begin(), v.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    why = "its schema version '" + v + "' is not a number";
    return -2;
  }
  return std::stoi(v);
}

bool is_busy(sqlite3* db) {
  const int c = sqlite3_errcode(db);
  return c == SQLITE_BUSY || c == SQLITE_LOCKED;
}

// Checks the file, then creates or migrates the schema (results.store,
// results.store.migrate): a message on failure, with `busy` set when another
// connection's lock caused it. Nothing is written before the file is known to be a
// store or empty.
std::optional<std::string> prepare(sqlite3* db, bool& busy) {
  auto failed = [&](std::string m, bool in_transaction) {
    busy = is_busy(db);
    if (in_transaction) exec(db, "ROLLBACK");
    return std::optional<std::string>(std::move(m));
  };
  std::string why;
  int version = schema_version(db, why);
  if (version == -2)
    return failed("not a simtspec results store (" + why + "); not touched", false);
  if (version >= 0 && version < kOldestVersion)
    return "schema version " + std::to_string(version) + " is not one simtspec knows";
  if (version > kStoreVersion)
    return "schema version " + std::to_string(version) + " is newer than this simtspec's (" +
           std::to_string(kStoreVersion) + "); use a newer simtspec";
  if (auto e = exec(db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;"))
    return failed(*e, false);
  if (version == kStoreVersion) return std::nullopt;
  // Create or migrate in one transaction, looking again inside it: another process
  // may have done it in between (results.store.concurrency).
  if (auto e = exec(db, "BEGIN IMMEDIATE")) return failed(*e, false);
  version = schema_version(db, why);
  if (version == -2) return failed("not a simtspec results store (" + why + "); not touched", true);
  if (version > kStoreVersion) return failed("schema version changed while opening", true);
  if (version == -1) {
    if (auto e = exec(db, kStoreSchema)) return failed(*e, true);
    Stmt m(db, "INSERT INTO meta (key, value) VALUES ('format', ?1), ('schema_version', ?2)");
    m.bind(1, std::string(kFormat)).bind(2, std::to_string(kStoreVersion));
    if (m.step() != SQLITE_DONE) return failed(errmsg(db), true);
  } else if (version < kStoreVersion) {
    for (const Migration& step : kMigrations) {
      if (step.from < version) continue;
      if (auto e = exec(db, step.sql))
        return failed("migrating from version " + std::to_string(step.from) + ": " + *e, true);
    }
    Stmt m(db, "UPDATE meta SET value = ?1 WHERE key = 'schema_version'");
    m.bind(1, std::to_string(kStoreVersion));
    if (m.step() != SQLITE_DONE) return failed(errmsg(db), true);
  }
  if (auto e = exec(db, "COMMIT")) return failed(*e, true);
  return std::nullopt;
}

}  // namespace sqlstore

using namespace sqlstore;

struct Store::Impl {
  Db db;
  std::string path;
  std::vector<std::pair<int64_t, StoredRow>> pending;
  std::chrono::steady_clock::time_point last_flush = std::chrono::steady_clock::now();
  std::optional<std::string> error;
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&& o) noexcept {
  if (this != &o) {
    if (impl_) flush();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
Store::~Store() {
  if (impl_) flush();
}

std::variant<Store, std::string> Store::open(const std::string& path) {
  const std::string where = "results store " + path + ": ";
  std::error_code ec;
  const fs::path p(path);
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) return where + "not a regular file";
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) return where + "cannot create its folder: " + ec.message();
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  sqlite3*& db = impl->db.db;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    return where + (db ? errmsg(db) : std::string("cannot open"));
  sqlite3_busy_timeout(db, kBusyMs);
  sqlite3_extended_result_codes(db, 0);
  // Another process creating or migrating the store at the same moment can make a
  // step answer "locked" at once (SQLite's deadlock avoidance does not wait); the
  // whole sequence is then tried again, for up to the busy timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyMs);
  for (;;) {
    bool busy = false;
    std::optional<std::string> e = prepare(db, busy);
    if (!e) return Store(std::move(impl));
    if (!busy || std::chrono::steady_clock::now() > deadline) return where + *e;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int64_t Store::begin_run(const RunInfo& r) {
  sqlite3* db = impl_->db.db;
  Stmt s(db,
         "INSERT INTO runs (kind, state, impl_name, impl_version, runner_digest, suite_version, "
         "suite_digest, simtspec_version, host, options, started, pid) "
         "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  s.bind(1, r.kind)
      .bind(2, r.impl_name)
      .bind(3, r.impl_version)
      .bind(4, r.runner_digest)
      .bind(5, r.suite_version)
      .bind(6, r.suite_digest)
      .bind(7, r.simtspec_version)
      .bind(8, r.host)
      .bind(9, r.options)
      .bind(10, r.started)
      .bind(11, r.pid);
  if (s.step() != SQLITE_DONE) {
    impl_->error = "results store " + impl_->path + ": " + errmsg(db);
    return 0;
  }
  return sqlite3_last_insert_rowid(db);
}

void Store::add(int64_t run, const Record& record) {
  add_row(run, record, to_json(record));
}

void Store::add(int64_t run, const json::Value& record) {
  add_row(run, from_json(record), record);
}

void Store::add_row(int64_t run, const Record& record, const json::Value& whole) {
  impl_->pending.emplace_back(run, to_row(record, whole));
  if (impl_->pending.size() >= kBatchRows ||
      std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->last_flush).count() >=
          kBatchSeconds)
    flush();
}

bool Store::flush() {
  impl_->last_flush = std::chrono::steady_clock::now();
  if (impl_->pending.empty()) return true;
  sqlite3* db = impl_->db.db;
  auto pending = std::move(impl_->pending);
  impl_->pending.clear();
  auto fail = [&](const std::string& e) {
    exec(db, "ROLLBACK");
    if (!impl_->error) impl_->error = "results store " + impl_->path + ": " + e;
    return false;
  };
  if (auto e = exec(db, "BEGIN IMMEDIATE")) return fail(*e);
  {
    Stmt s(db,
           "INSERT INTO results (run, test_id, config_key, status, message, checks, duration_ms, "
           "record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!s.ok()) return fail(errmsg(db));
    for (const auto& [run, row] : pending) {
      s.bind(1, run)
          .bind(2, row.test_id)
          .bind(3, row.config_key)
          .bind(4, row.status)
          .bind(5, row.message)
          .bind(6, row.checks)
          .bind(7, row.duration_ms);
      if (row.record)
        s.bind(8, *row.record);
      else
        s.bind_null(8);
      if (s.step() != SQLITE_DONE) return fail(errmsg(db));
      s.reset();
    }
  }
  if (auto e = exec(db, "COMMIT")) return fail(*e);
  return true;
}

bool Store::finish(int64_t run, const json::Value& summary, const std::string& state) {
  if (!flush()) return false;
  const RunSummary sum = summary_from_json(summary);
  json::Value counts = json::Object{};
  for (std::string_view k : kStatuses)
    if (auto n = sum.counts.find(k); n != sum.counts.end()) counts[k] = n->second;
  auto number = [](const std::optional<uint64_t>& n) {
    return static_cast<int64_t>(n.value_or(0));
  };
  sqlite3* db = impl_->db.db;
  Stmt s(db,
         "UPDATE runs SET state = ?1, duration_s = ?2, selected = ?3, run = ?4, counts = ?5 "
         "WHERE id = ?6");
  s.bind(1, state)
      .bind(2, sum.seconds.value_or(0.0))
      .bind(3, number(sum.selected))
      .bind(4, number(sum.run))
      .bind(5, json::dump(counts))
      .bind(6, run);
  if (s.step() != SQLITE_DONE) {
    if (!impl_->error) impl_->error = "results store " + impl_->path + ": " + errmsg(db);
    return false;
  }
  return true;
}

std::optional<std::string> Store::take_error() {
  auto e = std::move(impl_->error);
  impl_->error.reset();
  return e;
}

std::vector<RunInfo> Store::runs() const {
  std::vector<RunInfo> out;
  Stmt s(impl_->db.db, (std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id").c_str());
  while (s.step() == SQLITE_ROW) out.push_back(to_run(s));
  return out;
}

std::optional<RunInfo> Store::run(int64_t id) const {
  Stmt s(impl_->db.db, (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1").c_str());
  s.bind(1, id);
  if (s.step() != SQLITE_ROW) return std::nullopt;
  return to_run(s);
}

namespace sqlstore {
std::vector<ResultRow> result_rows(sqlite3* db, const char* where, auto bind) {
  std::vector<ResultRow> out;
  Stmt s(db, (std::string("SELECT run, test_id, config_key, status, message FROM results ") + where)
                 .c_str());
  bind(s);
  while (s.step() == SQLITE_ROW)
    out.push_back(ResultRow{s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4)});
  return out;
}
}  // namespace sqlstore

std::vector<ResultRow> Store::results(int64_t run) const {
  return result_rows(impl_->db.db, "WHERE run = ?1 ORDER BY rowid",
                     [&](Stmt& s) { s.bind(1, run); });
}

std::vector<ResultRow> Store::history(const std::string& test_id) const {
  return result_rows(impl_->db.db, "WHERE test_id = ?1 ORDER BY run, rowid",
                     [&](Stmt& s) { s.bind(1, test_id); });
}

History Store::history_of(const std::string& impl_name, size_t result_runs) const {
  History h;
  for (RunInfo& r : runs())
    if (r.kind == "test" && (impl_name.empty() || r.impl_name == impl_name))
      h.runs.push_back(std::move(r));
  // Results only for the newest `result_runs` (what the report's strips show):
  // a long history stays cheap to load.
  for (size_t i = h.runs.size() > result_runs ? h.runs.size() - result_runs : 0; i < h.runs.size();
       ++i) {
    auto rows = results(h.runs[i].id);
    h.results.insert(h.results.end(), std::make_move_iterator(rows.begin()),
                     std::make_move_iterator(rows.end()));
  }
  return h;
}

std::vector<json::Value> Store::records(int64_t run) const {
  std::vector<json::Value> out;
  Stmt s(impl_->db.db,
         "SELECT record FROM results WHERE run = ?1 AND record IS NOT NULL ORDER BY rowid");
  s.bind(1, run);
  while (s.step() == SQLITE_ROW) {
    auto v = json::parse(s.text(0));
    if (auto* rec = std::get_if<json::Value>(&v)) out.push_back(std::move(*rec));
  }
  return out;
}

std::optional<size_t> Store::prune(size_t keep) {
  sqlite3* db = impl_->db.db;
  auto fail = [&](const std::string& e) -> std::optional<size_t> {
    exec(db, "ROLLBACK");
    if (!impl_->error) impl_->error = "results store " + impl_->path + ": " + e;
    return std::nullopt;
  };
  if (!flush()) return std::nullopt;
  if (auto e = exec(db, "BEGIN IMMEDIATE")) return fail(*e);
  // The runs ranked newest first within their implementation and kind.
  constexpr const char* kDoomed =
      "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY impl_name, kind ORDER BY id "
      "DESC) AS n FROM runs) WHERE n > ?1";
  Stmt results(db, (std::string("DELETE FROM results WHERE run IN (") + kDoomed + ")").c_str());
  results.bind(1, static_cast<int64_t>(keep));
  if (results.step() != SQLITE_DONE) return fail(errmsg(db));
  Stmt runs(db, (std::string("DELETE FROM runs WHERE id IN (") + kDoomed + ")").c_str());
  runs.bind(1, static_cast<int64_t>(keep));
  if (runs.step() != SQLITE_DONE) return fail(errmsg(db));
  const auto removed = static_cast<size_t>(sqlite3_changes(db));
  if (auto e = exec(db, "COMMIT")) return fail(*e);
  if (removed)
    if (auto e = exec(db, "VACUUM")) return fail(*e);
  return removed;
}

std::optional<bool> Store::alive(const RunInfo& r) {
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  if (r.host != name || r.pid <= 0) return std::nullopt;
  return ::kill(static_cast<pid_t>(r.pid), 0) == 0 || errno == EPERM;
}

std::string suite_digest(std::vector<std::string> paths, std::string& err) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  Sha256 all;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream bytes;
    if (in.is_open()) bytes << in.rdbuf();
    if (!in.is_open() || in.bad()) {
      err = "cannot read " + p;
      return "";
    }
    // The line `sha256sum PATH` prints (results.store.provenance).
    all.update(sha256_hex(bytes.str()) + "  " + p + "\n");
  }
  return all.hex();
}

}  // namespace simt::reports
