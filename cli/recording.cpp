#include "recording.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "digest.h"

namespace simt::cli {

std::optional<std::string> Recording::open(const std::string& db, bool off) {
  if (off) return std::nullopt;
  const std::string path = db.empty() ? reports::kDefaultStore : db;
  // results.store: the default store that cannot be made (a read-only working
  // directory) is a warning; a named one, or an existing file refused, is an error.
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  auto s = reports::Store::open(path);
  if (auto* e = std::get_if<std::string>(&s)) {
    if (!db.empty() || existed) return *e;
    std::cerr << "simtspec: warning: " << *e << "; the run is not recorded\n";
    return std::nullopt;
  }
  store_.emplace(std::get<reports::Store>(std::move(s)));
  return std::nullopt;
}

void Recording::begin(reports::RunInfo info) {
  if (!store_) return;
  info.host = host_name();
  info.pid = ::getpid();
  info.simtspec_version = SIMT_VERSION;
  run_ = store_->begin_run(info);
  check();
}

void Recording::add(const json::Value& record) {
  if (!on()) return;
  store_->add(run_, record);
  check();
}

void Recording::add(const reports::Record& record) {
  if (!on()) return;
  store_->add(run_, record);
  check();
}

void Recording::finish(const json::Value& summary, const std::string& state) {
  if (!on()) return;
  store_->finish(run_, summary, state);
  check();
}

// results.store: a failed write is a warning, once, and recording stops.
void Recording::check() {
  if (auto e = store_->take_error()) {
    std::cerr << "simtspec: warning: " << *e << "; the run goes on without recording\n";
    run_ = 0;
    store_.reset();
  }
}

void add_db_options(CLI::App* cmd, std::string& db, bool& no_db, const std::string& what) {
  auto* o_db = cmd->add_option(
      "--db", db,
      "results store to record " + what + " in (default: " + reports::kDefaultStore + ")");
  cmd->add_flag("--no-db", no_db, "do not record " + what + " in a results store")->excludes(o_db);
}

std::variant<reports::Store, std::string> open_existing_store(const std::string& db) {
  const std::string path = db.empty() ? reports::kDefaultStore : db;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return "no results store at " + path +
           " (simtspec test records its runs there; --db FILE names another)";
  return reports::Store::open(path);
}

std::string runner_digest(const std::string& runner_arg) {
  if (runner_arg == "reference") return "";
  std::ifstream in(runner_arg, std::ios::binary);
  if (!in) return "";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return reports::sha256_hex(bytes.str());
}

std::string host_name() {
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// results.store.fuzz: the run's row: the implementation, and the options that
// decide which programs are checked.
reports::RunInfo fuzz_run_info(const gen::FuzzOptions& o, const std::string& runner_arg,
                               runners::Runner* runner) {
  reports::RunInfo info;
  info.kind = "fuzz";
  info.impl_name = runner ? runner->name() : "reference";
  info.impl_version = runner ? runner->version() : SIMT_VERSION;
  info.runner_digest = runner_digest(runner_arg);
  json::Value opts;
  json::Array inv;
  for (const auto& i : o.invariants) inv.emplace_back(i);
  opts["invariants"] = inv;
  opts["seed"] = o.seed;
  opts["count"] = o.count;
  opts["seconds"] = o.seconds;
  opts["jobs"] = o.jobs;
  opts["max_size"] = o.max_size;
  if (o.shards > 1) opts["shard"] = std::to_string(o.shard) + "/" + std::to_string(o.shards);
  if (o.keep_going) opts["keep_going"] = true;
  info.options = json::dump(opts);
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  info.started = buf;
  return info;
}

reports::RunInfo test_run_info(const json::Value& header) {
  auto str = [](const json::Value* v, const char* key) {
    const json::Value* x = v ? v->find(key) : nullptr;
    return x && x->is_string() ? x->as_string() : std::string();
  };
  const json::Value* runner = header.find("runner");
  const json::Value* suite = header.find("suite");
  reports::RunInfo info;
  info.kind = "test";
  info.impl_name = str(runner, "name");
  info.impl_version = str(runner, "version");
  info.runner_digest = str(runner, "digest");
  info.suite_version = str(suite, "version");
  info.suite_digest = str(suite, "digest");
  if (const json::Value* o = header.find("options")) info.options = json::dump(*o);
  info.started = str(&header, "started");
  return info;
}

reports::RunInfo fuzz_run_info(const json::Value& header, const json::Value& merged_from) {
  auto str = [&](const char* key) {
    const json::Value* v = header.find(key);
    return v && v->is_string() ? v->as_string() : std::string();
  };
  reports::RunInfo info;
  info.kind = "fuzz";
  info.impl_name = str("runner");
  info.impl_version = str("runner_version");
  info.runner_digest = str("runner_digest");
  json::Value opts;
  for (const char* key : {"invariants", "seed", "count", "time", "max_size", "keep_going"})
    if (const json::Value* v = header.find(key)) opts[key] = *v;
  opts["shard"] = "0/1";
  opts["merged_from"] = merged_from;
  info.options = json::dump(opts);
  info.started = str("started");
  return info;
}

// results.store.fuzz: one row per failure (the invariant, the program seed) and
// per error, then the counts.
void record_fuzz(Recording& record, const gen::FuzzResult& r) {
  uint64_t unsupported = 0;
  for (const auto& [name, st] : r.stats) unsupported += st.unsupported;
  for (const auto& f : r.failures) {
    json::Value rec;
    rec["id"] = f.invariant;
    rec["config_key"] = std::to_string(f.seed);
    rec["status"] = "fail";
    rec["message"] = f.message;
    rec["size"] = f.size;
    if (!f.signature.empty()) rec["signature"] = f.signature;  // oracle.fuzz.signature
    if (f.count > 1) rec["count"] = f.count;                   // oracle.fuzz.dedupe
    if (!f.file.empty()) rec["file"] = f.file;
    record.add(rec);
  }
  for (const auto& e : r.errors) {
    json::Value rec;
    rec["id"] = e.invariant;
    rec["config_key"] = e.seed ? std::to_string(*e.seed) : "";
    rec["status"] = "error";
    rec["message"] = e.message;
    record.add(rec);
  }
  const uint64_t ran = r.programs - std::min(unsupported, r.programs);
  const uint64_t bad = r.failures.size() + r.errors.size();
  json::Value sum;
  sum["selected"] = r.programs;
  sum["run"] = ran;
  sum["pass"] = ran - std::min<uint64_t>(bad, ran);
  sum["fail"] = static_cast<uint64_t>(r.failures.size());
  sum["unsupported"] = unsupported;
  sum["error"] = static_cast<uint64_t>(r.errors.size());
  sum["seconds"] = r.seconds;
  record.finish(sum, "complete");
}

}  // namespace simt::cli
