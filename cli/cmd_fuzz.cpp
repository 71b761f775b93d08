// `simtspec fuzz`: generated programs against the invariant oracles
// (spec/oracles.md, oracle.fuzz).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "common.h"
#include "fuzz.h"
#include "oracles.h"
#include "outputs.h"
#include "recording.h"
#include "results.h"
#include "stats.h"

namespace simt::cli {

namespace {

struct FuzzArgs {
  std::string invariant = "all";
  uint64_t seed = 0;
  uint64_t count = 200;
  double seconds = 0;
  std::string runner = "reference";
  uint32_t jobs = 1;
  std::string out;  // default: default_regress_dir()
  int max_size = 100;
  double shrink_time = gen::FuzzOptions{}.max_shrink_seconds;
  bool print = false;
  bool stats = false;
  std::string shard;    // oracle.fuzz.shard
  std::string results;  // oracle.fuzz.results
  bool keep_going = false;
  std::string db;  // results.store.fuzz
  bool no_db = false;
  CLI::Option* o_seed = nullptr;
  CLI::Option* o_count = nullptr;
  CLI::Option* o_time = nullptr;
};

// oracle.fuzz.stats: the constructs of every program checked, summed over the
// invariants, by category, four to a line; then what was never generated.
void print_stats(const gen::FuzzResult& r) {
  std::map<std::string, uint64_t> all;
  for (const auto& [name, st] : r.stats)
    for (const auto& [k, n] : st.counters) all[k] += n;
  const std::pair<const char*, const char*> groups[] = {
      {"kind:", "statement kinds"},  {"instr:", "instructions"},
      {"operand:", "operand forms"}, {"launch:", "launch settings"},
      {"host:", "host actions"},     {"status:", "outcome statuses"},
      {"event:", "events"},          {"mutation:", "validator mutations"},
      {"oracle:", "oracle counts"}};
  std::cout << "stats: constructs in the programs checked, over all invariants\n";
  for (const auto& [prefix, title] : groups) {
    std::cout << "  " << title << ":\n";
    int col = 0;
    for (const auto& [k, n] : all) {
      if (k.rfind(prefix, 0) != 0) continue;
      char cell[64];
      std::snprintf(cell, sizeof cell, "    %-22s %8llu",
                    k.substr(std::string(prefix).size()).c_str(),
                    static_cast<unsigned long long>(n));
      std::cout << cell << (++col % 4 == 0 ? "\n" : "");
    }
    if (col % 4) std::cout << "\n";
  }
  auto never = [&](const std::vector<std::string>& keys, const std::map<std::string, uint64_t>& m) {
    std::string out;
    for (const auto& k : keys)
      if (!m.count(k)) out += (out.empty() ? "" : ", ") + k.substr(k.find(':') + 1);
    return out.empty() ? std::string("none") : out;
  };
  // Outcomes no generated program can have are named apart, with the reason.
  auto reached = [&](const std::vector<std::string>& keys) {
    std::vector<std::string> out;
    for (const auto& k : keys)
      if (!gen::unreachable_keys().count(k)) out.push_back(k);
    return out;
  };
  std::cout << "  never generated: instructions: " << never(gen::instruction_keys(), all)
            << "\n  never generated: statement kinds: " << never(gen::kind_keys(), all)
            << "\n  never generated: operand forms: " << never(gen::operand_keys(), all)
            << "\n  never reached: host actions: " << never(gen::host_action_keys(), all)
            << "\n  never reached: outcome statuses: " << never(reached(gen::status_keys()), all)
            << "\n  never reached: events: " << never(reached(gen::event_keys()), all) << "\n";
  for (const auto& [k, why] : gen::unreachable_keys())
    std::cout << "  excluded: " << k.substr(k.find(':') + 1) << ": " << why << "\n";
  for (const auto& [name, st] : r.stats)
    std::cout << "  " << name
              << ": instructions never generated: " << never(gen::instruction_keys(), st.counters)
              << "\n";
}

std::string hex64(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// oracle.fuzz.ignore: the ignore list beside a runner description FILE.toml,
// FILE.fuzz-ignore.toml, if there is one. False (after a message) when it is malformed.
bool load_ignore_list(const std::string& runner, std::vector<gen::IgnoreEntry>& out,
                      std::string& path) {
  if (!runner.ends_with(".toml")) return true;
  path = runner.substr(0, runner.size() - 5) + ".fuzz-ignore.toml";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    path.clear();
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    std::cerr << "simtspec: " << path << ": cannot be read\n";
    return false;
  }
  auto parsed = gen::parse_ignore_list(text.str());
  if (auto* e = std::get_if<std::string>(&parsed)) {
    std::cerr << "simtspec: " << path << ":" << *e << "\n";
    return false;
  }
  out = std::get<std::vector<gen::IgnoreEntry>>(std::move(parsed));
  return true;
}

// oracle.fuzz.results: a failure (one signature) as the results file's line.
json::Value failure_json(const gen::FuzzFailure& f) {
  json::Value v;
  v["invariant"] = f.invariant;
  v["k"] = f.k;
  v["seed"] = f.seed;
  v["signature"] = f.signature;
  v["count"] = f.count;
  v["message"] = f.message.substr(0, f.message.find('\n'));
  if (!f.file.empty()) v["file"] = f.file;
  if (!f.known.empty()) v["known"] = f.known;
  json::Value line;
  line["failure"] = v;
  return line;
}

int run_fuzz(const FuzzArgs& a, const std::string& argv0) {
  gen::FuzzOptions o;
  o.simtspec = self_path(argv0);
  std::unique_ptr<runners::Runner> runner;
  if (a.runner != "reference") {
    auto opened = runners::open_runner(a.runner);
    if (auto* e = std::get_if<std::string>(&opened)) {
      std::cerr << "simtspec: " << *e << "\n";
      return kExitUsage;
    }
    runner = std::get<std::unique_ptr<runners::Runner>>(std::move(opened));
    o.runner = runner.get();
    o.runner_arg = absolute_arg(a.runner);
    // oracle.fuzz.jobs: each worker process opens its own instance.
    o.runner_factory = [file = a.runner]() -> std::unique_ptr<runners::Runner> {
      auto r = runners::open_runner(file);
      if (auto* e = std::get_if<std::string>(&r)) throw std::runtime_error(*e);
      return std::get<std::unique_ptr<runners::Runner>>(std::move(r));
    };
  }
  if (a.invariant == "all") {
    for (const auto& i : gen::invariants())
      if (!i.needs_runner || o.runner) o.invariants.push_back(i.name);
  } else if (const gen::Invariant* inv = gen::find_invariant(a.invariant)) {
    if (inv->needs_runner && !o.runner) {
      std::cerr << "simtspec: --invariant " << a.invariant
                << " needs --runner (an implementation to compare with the reference)\n";
      return kExitUsage;
    }
    o.invariants.push_back(a.invariant);
  } else {
    std::cerr << "simtspec: unknown invariant '" << a.invariant << "' (";
    for (const auto& i : gen::invariants()) std::cerr << i.name << ", ";
    std::cerr << "all)\n";
    return kExitUsage;
  }
  if (a.o_count->count() && a.o_time->count()) {
    std::cerr << "simtspec: give --count or --time, not both\n";
    return kExitUsage;
  }
  o.seed =
      a.o_seed->count()
          ? a.seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
                1000000007ull;
  o.seconds = a.seconds;
  o.count = a.o_time->count() ? 0 : a.count;
  o.jobs = job_count(a.jobs ? a.jobs : 1, o.count ? o.count : ~size_t{0});
  o.max_size = a.max_size;
  o.max_shrink_seconds = a.shrink_time;
  // oracle.regress: shrunk failures go to the project's suites/regress/, found from
  // the working directory upwards, else beside the sources simtspec was built from;
  // never to a suites/ folder made in whatever directory the command ran in.
  o.out_dir = a.out.empty() ? default_regress_dir() : a.out;
  if (o.out_dir.empty()) {
    std::cerr << "simtspec: no simtspec project (a folder with spec/ and suites/) above the "
                 "working directory: give --out DIR for shrunk failures\n";
    return kExitUsage;
  }
  o.print_programs = a.print;
  if (!a.shard.empty()) {
    auto shard = parse_shard(a.shard);
    if (!shard) {
      std::cerr << "simtspec: " << kShardUsage << "\n";
      return kExitUsage;
    }
    std::tie(o.shard, o.shards) = *shard;
  }
  o.keep_going = a.keep_going;
  std::vector<gen::IgnoreEntry> ignore_list;
  std::string ignore_path;
  if (!load_ignore_list(a.runner, ignore_list, ignore_path)) return kExitUsage;
  if (!ignore_list.empty())
    o.ignore = [&ignore_list](const std::string& sig) { return gen::ignored_by(ignore_list, sig); };
  // oracle.fuzz.results: the header now, a line per program as it is committed.
  reports::JsonlWriter results;
  if (!a.results.empty()) {
    std::string err;
    if (!results.open(a.results, err)) {
      std::cerr << "simtspec: " << err << "\n";
      return kExitUsage;
    }
    json::Value h;
    h["schema"] = "simtspec-fuzz/1";
    h["simtspec"] = SIMT_VERSION;
    h["seed"] = o.seed;
    h["count"] = o.count;
    if (!o.count) h["time"] = o.seconds;
    json::Array names;
    for (const auto& i : o.invariants) names.emplace_back(i);
    h["invariants"] = names;
    h["shard"] = std::to_string(o.shard) + "/" + std::to_string(o.shards);
    h["runner"] = runner ? runner->name() : std::string("reference");
    // results.store.provenance: what the merged run is recorded with (results.merge).
    h["runner_version"] = runner ? runner->version() : std::string(SIMT_VERSION);
    h["runner_digest"] = runner_digest(a.runner);
    h["max_size"] = static_cast<int64_t>(o.max_size);
    h["keep_going"] = o.keep_going;
    if (!ignore_path.empty()) h["ignore"] = ignore_path;
    h["host"] = host_json();
    h["started"] = now_iso();
    results.write(h);
    o.on_program = [&results](const gen::ProgramRecord& p) {
      json::Value v;
      v["invariant"] = p.invariant;
      v["k"] = p.k;
      v["seed"] = p.seed;
      v["verdict"] = p.verdict;
      v["hash"] = hex64(p.hash);
      if (!p.signature.empty()) v["signature"] = p.signature;
      results.write(v);
    };
  }
  if (a.stats)
    o.after_check = [](const gen::Invariant&, uint64_t, const gen::Program& p, gen::Check& c) {
      gen::count_constructs(p, c, c.counts);
    };
  Recording record;  // results.store.fuzz
  if (auto e = record.open(a.db, a.no_db)) {
    std::cerr << "simtspec: " << *e << "\n";
    return kExitUsage;
  }
  record.begin(fuzz_run_info(o, a.runner, runner.get()));
  std::cout << "fuzz: seed " << o.seed << ", invariants";
  for (const auto& i : o.invariants) std::cout << " " << i;
  if (o.count)
    std::cout << ", " << o.count << " programs each";
  else
    std::cout << ", for " << o.seconds << " s";
  if (o.shards > 1)
    std::cout << ", shard " << o.shard << "/" << o.shards << " (programs k with k mod " << o.shards
              << " = " << o.shard << ")";
  std::cout << ", " << o.jobs << " job(s)\n" << std::flush;
  gen::FuzzResult r =
      gen::fuzz(o, [](const std::string& line) { std::cout << line << "\n"
                                                           << std::flush; });
  if (runner) runner->shutdown();
  record_fuzz(record, r);
  bool checked_nothing = false;
  for (const auto& [name, st] : r.stats) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "  %-17s %8llu programs  %3llu failed  %9.0f programs/s per job",
                  name.c_str(), static_cast<unsigned long long>(st.programs),
                  static_cast<unsigned long long>(st.failures),
                  st.seconds > 0 ? static_cast<double>(st.programs) / st.seconds : 0.0);
    std::cout << buf;
    if (st.ignored) std::cout << "  " << st.ignored << " ignored";
    if (st.unsupported)
      std::cout << "  " << st.unsupported << " unsupported (e.g. " << st.unsupported_reason << ")";
    if (st.errors) std::cout << "  " << st.errors << " error(s)";
    // oracle.fuzz.stats: how many programs ran preempted, at how many points.
    if (auto it = st.counters.find("preempt:programs"); it != st.counters.end()) {
      auto pts = st.counters.find("preempt:points");
      std::cout << "  " << it->second << " preempted ("
                << (pts == st.counters.end() ? 0 : pts->second) << " points)";
    }
    std::cout << "\n";
    // A run that checked nothing is not a pass (oracle.fuzz).
    if (st.programs && st.unsupported == st.programs) {
      std::cout << "  " << name
                << ": checked nothing: every program needs a capability the runner lacks\n";
      checked_nothing = true;
    }
  }
  if (a.stats) {
    print_stats(r);
    for (const auto& [name, st] : r.stats) {
      if (st.unsupported_reasons.empty()) continue;
      std::cout << "unsupported " << name << ":\n";
      std::vector<std::pair<uint64_t, std::string>> by_count;
      for (const auto& [why, n] : st.unsupported_reasons) by_count.emplace_back(n, why);
      std::sort(by_count.rbegin(), by_count.rend());
      for (const auto& [n, why] : by_count) std::cout << "  " << n << "  " << why << "\n";
    }
  }
  // oracle.fuzz.dedupe: each signature once, with its count and its case.
  uint64_t failing = 0, ignored = 0;
  for (const auto& f : r.failures) {
    failing += f.count;
    std::cout << "failure " << f.signature << "  x" << f.count << "  "
              << (!f.file.empty()    ? f.file
                  : !f.known.empty() ? "known signature, see " + f.known
                                     : std::string("(no test written)"))
              << "\n";
  }
  for (const auto& [sig, ig] : r.ignored) {
    ignored += ig.count;
    std::cout << "ignored " << sig << "  x" << ig.count << "  (" << ig.reason << ")\n";
  }
  if (!a.results.empty()) {
    for (const auto& f : r.failures) results.write(failure_json(f));
    for (const auto& [sig, ig] : r.ignored) {
      json::Value v;
      v["signature"] = sig;
      v["count"] = ig.count;
      v["reason"] = ig.reason;
      v["first_seed"] = ig.first_seed;
      json::Value line;
      line["ignored"] = v;
      results.write(line);
    }
    json::Value sum;
    sum["programs"] = r.programs;
    sum["failing"] = failing;
    sum["signatures"] = static_cast<uint64_t>(r.failures.size());
    sum["ignored"] = ignored;
    sum["errors"] = static_cast<uint64_t>(r.errors.size());
    sum["seconds"] = r.seconds;
    json::Value last;
    last["summary"] = sum;
    results.write(last);
    results.close();
  }
  char total[128];
  std::snprintf(
      total, sizeof total, "fuzz: %llu programs in %.1f s (%.0f programs/s), %zu failure(s)",
      static_cast<unsigned long long>(r.programs), r.seconds,
      r.seconds > 0 ? static_cast<double>(r.programs) / r.seconds : 0.0, r.failures.size());
  std::cout << total;
  // oracle.fuzz, oracle.fuzz.jobs: a check that went wrong (a worker process died) is an error.
  if (!r.errors.empty()) std::cout << ", " << r.errors.size() << " error(s)";
  if (ignored) std::cout << ", " << ignored << " ignored";
  std::cout << "\n";
  return r.failures.empty() && r.errors.empty() && !checked_nothing ? kExitOk : kExitFail;
}

}  // namespace

void register_fuzz(CLI::App& app, int& exit_code, const std::string& argv0) {
  auto a = std::make_shared<FuzzArgs>();
  auto* cmd = app.add_subcommand("fuzz", "check generated programs against the invariant oracles");
  std::string names;
  for (const auto& inv : gen::invariants()) names += inv.name + ", ";
  cmd->add_option("--invariant", a->invariant, names + "or all (default)");
  a->o_seed = cmd->add_option("--seed", a->seed,
                              "base seed: program k uses seed + k (default: from the clock)");
  a->o_count =
      cmd->add_option("--count", a->count, "programs per invariant, at least 1 (default 200)")
          ->check(in_range(1, uint64_t{1} << 62, "1 to 2^62"));
  a->o_time = cmd->add_option("--time", a->seconds, "run for this many seconds instead of a count")
                  ->check(seconds(false));
  cmd->add_option("--runner", a->runner,
                  "implementation under test (runner .toml): differential compares it with the "
                  "reference, structured with the structured evaluator");
  cmd->add_option("--jobs,-j", a->jobs,
                  "worker processes, 1 to 1024 (default 1: in this process; at most 8 per CPU "
                  "are used); results do not depend on it")
      ->check(in_range(1, kMaxJobs, "1 to 1024"));
  cmd->add_option("--out", a->out,
                  "where shrunk failures are written as tests (default: suites/regress of the "
                  "project around the working directory, else of the sources simtspec was built "
                  "from)");
  cmd->add_option("--max-size", a->max_size, "largest generator size, 1 to 1000 (default 100)")
      ->check(in_range(1, 1000, "1 to 1000"));
  cmd->add_option("--shrink-time", a->shrink_time,
                  "seconds to spend shrinking each failure (default 300; 0: no limit)")
      ->check(seconds(true));
  cmd->add_flag("--stats", a->stats,
                "count the constructs of the programs checked (statement kinds, instructions, "
                "operand forms, launch settings, outcomes) and name those never generated");
  cmd->add_option("--shard", a->shard,
                  "check shard I of N (I/N): program k of each invariant goes to shard k mod N");
  cmd->add_option("--results", a->results,
                  "write each program checked, the failures and a summary to this JSON-lines "
                  "file (for simtspec merge)");
  cmd->add_flag("--keep-going", a->keep_going,
                "go on past an invariant's failures: each new signature is shrunk, duplicates "
                "counted");
  add_db_options(cmd, a->db, a->no_db, "the run");
  cmd->add_flag("--print", a->print,
                "print each generated program, as text simtspec run accepts, with its verdict");
  cmd->callback([a, &exit_code, argv0] { exit_code = run_fuzz(*a, argv0); });
}

}  // namespace simt::cli
