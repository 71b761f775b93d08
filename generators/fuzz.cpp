#include "fuzz.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>

#include "fuzz_wire.h"
#include "generate.h"
#include "harness.h"
#include "host/host.h"
#include "host/toml_text.h"
#include "json.h"
#include "shrink.h"

namespace simt::gen {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

uint64_t program_seed(uint64_t base, uint64_t k) {
  return base + k;
}

int program_size(uint64_t seed, int max_size) {
  // Sizes cycle through 1..max_size, mixed so consecutive seeds differ.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull;
  z ^= z >> 31;
  return 1 + static_cast<int>(z % static_cast<uint64_t>(std::max(1, max_size)));
}

uint64_t shard_programs(uint64_t count, uint64_t shard, uint64_t shards) {
  if (shards <= 1) return count;
  return count > shard ? (count - shard - 1) / shards + 1 : 0;
}

uint64_t shard_program(uint64_t i, uint64_t shard, uint64_t shards) {
  return shards <= 1 ? i : shard + i * shards;
}

uint64_t text_hash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string failure_signature(const std::string& invariant, const Check& c) {
  auto part = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  if (!c.difference) return invariant + "/other/-/-";
  return invariant + "/" + part(c.difference->kind) + "/" + part(c.difference->event) + "/" +
         part(c.difference->family);
}

std::variant<std::vector<IgnoreEntry>, std::string> parse_ignore_list(std::string_view text) {
  auto parsed = host::parse_toml(text);
  if (auto* e = std::get_if<host::TomlError>(&parsed))
    return std::to_string(e->line) + ": " + e->message;
  const host::TomlDoc& doc = std::get<host::TomlDoc>(parsed);
  auto where = [&](const toml::value& v) { return std::to_string(doc.line(v)) + ": "; };
  std::vector<IgnoreEntry> out;
  if (!doc.root.is_table()) return std::string("1: not a TOML table");
  for (const auto& [key, v] : doc.root.as_table()) {
    if (key != "ignore")
      return where(v) + "unknown key '" + key + "' (an ignore list holds [[ignore]] tables)";
    if (!v.is_array()) return where(v) + "'ignore' must be an array of tables ([[ignore]])";
    for (const auto& entry : v.as_array()) {
      if (!entry.is_table()) return where(entry) + "each [[ignore]] must be a table";
      IgnoreEntry e;
      e.line = doc.line(entry);
      for (const auto& [k, x] : entry.as_table()) {
        std::string* field = k == "signature" ? &e.signature : k == "reason" ? &e.reason : nullptr;
        if (!field) return where(x) + "unknown key '" + k + "' in [[ignore]] (signature, reason)";
        if (!x.is_string() || x.as_string().str.empty())
          return where(x) + "'" + k + "' must be a non-empty string";
        *field = x.as_string().str;
      }
      if (e.signature.empty()) return where(entry) + "[[ignore]] without a signature";
      if (e.reason.empty()) return where(entry) + "[[ignore]] without a reason";
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::optional<std::string> ignored_by(const std::vector<IgnoreEntry>& list,
                                      const std::string& signature) {
  for (const auto& e : list)
    if (harness::glob_match(e.signature, signature)) return e.reason;
  return std::nullopt;
}

std::map<std::string, std::string> known_signatures(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::string err;
  const std::vector<std::string> files = harness::discover({dir}, err);
  if (!err.empty()) return out;
  const harness::Suite suite = harness::load_suite(files);
  for (const auto& t : suite.tests) {
    const json::Value* sig = t.origin.is_object() ? t.origin.find("signature") : nullptr;
    if (sig && sig->is_string()) out.emplace(sig->as_string(), t.path);
  }
  return out;
}

Program generate_one(const Invariant& inv, uint64_t seed, int max_size,
                     const runners::Capabilities* caps) {
  // RapidCheck keeps its generation context in process-wide state, so programs
  // are generated one at a time in a process (`fuzz --jobs N` runs N processes,
  // oracle.fuzz.jobs).
  static std::mutex mu;
  std::lock_guard<std::mutex> g(mu);
  return program(options_for(inv, caps))(rc::Random(seed), program_size(seed, max_size)).value();
}

Check check_one(const Invariant& inv, uint64_t seed, int max_size, runners::Runner* runner,
                Program* out) {
  const bool against_runner = runner && (inv.needs_runner || inv.runner_optional);
  Program p = generate_one(inv, seed, max_size, against_runner ? &runner->capabilities() : nullptr);
  OracleContext ctx;
  ctx.runner = against_runner ? runner : nullptr;
  ctx.seed = seed;
  Check c = inv.check(p, print(p), ctx);
  if (out) *out = std::move(p);
  return c;
}

namespace {

std::string toml_string(const std::string& s) {
  // TOML basic strings share JSON's escapes for the characters we produce.
  return json::escape(s);
}

std::string toml_list(const std::set<std::string>& items) {
  std::string out = "[";
  for (const auto& x : items) out += (out.size() > 1 ? ", " : "") + toml_string(x);
  return out + "]";
}

// The clauses and feature tags of the instructions the printed program expands
// to, from the instruction table (isa.table), so that a regression test counts in
// clause coverage and runs only on runners with the features it needs.
void clauses_and_features(const std::string& text, std::set<std::string>& clauses,
                          std::set<std::string>& features) {
  host::LoadResult r = host::load(text);
  if (!r.loaded) return;
  Uses u = uses_of(*r.loaded->program);
  clauses.insert(u.clauses.begin(), u.clauses.end());
  features = std::move(u.features);
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// trap.host.toml: a host script as the lines of its [[host]] tables.
std::vector<std::string> host_lines(const std::vector<syntax::HostStep>& script) {
  std::vector<std::string> out;
  const std::string toml = host::host_to_toml(script);
  size_t at = 0;
  while (at < toml.size()) {
    const size_t end = toml.find('\n', at);
    out.push_back(toml.substr(at, end - at));
    at = end == std::string::npos ? toml.size() : end + 1;
  }
  return out;
}

}  // namespace

std::string regression_file_name(const std::string& invariant, uint64_t seed) {
  return invariant + "_seed" + std::to_string(seed) + ".simt";
}

std::string regression_test(const FuzzFailure& f, const Check& expected,
                            const std::string& runner_name) {
  const Invariant* inv = find_invariant(f.invariant);
  std::string text = expected.regression_text.empty() ? print(f.shrunk) : expected.regression_text;
  std::string h;
  auto kv = [&](const std::string& k, const std::string& v) { h += "; " + k + " = " + v + "\n"; };
  h += "; simtspec-test 1\n";
  kv("id", toml_string("regress." + f.invariant + ".seed" + std::to_string(f.seed)));
  kv("title", toml_string(f.invariant + " invariant, shrunk from generated program " +
                          std::to_string(f.seed) + ": " + first_line(f.message).substr(0, 120)));
  std::set<std::string> clauses(inv->clauses.begin(), inv->clauses.end()), features;
  clauses_and_features(text, clauses, features);
  kv("clauses", toml_list(clauses));
  kv("features", toml_list(features));
  kv("generated", "true");
  h += "; [origin]\n";
  kv("generator", toml_string("simtspec-gen"));
  kv("generator_version", std::to_string(kGeneratorVersion));
  kv("seed", std::to_string(f.seed));
  kv("size", std::to_string(f.size));
  kv("invariant", toml_string(f.invariant));
  if (!runner_name.empty()) kv("runner", toml_string(runner_name));
  if (f.shrink_out_of_time) kv("minimal", "false");  // oracle.shrink: time budget used up
  if (!f.signature.empty()) kv("signature", toml_string(f.signature));  // oracle.regress.promote
  kv("message", toml_string(first_line(f.message).substr(0, 300)));
  if (!expected.policies.empty()) {
    h += "; [matrix]\n";
    std::string pol = "[";
    for (const auto& p : expected.policies) pol += (pol.size() > 1 ? ", " : "") + toml_string(p);
    kv("policy", pol + "]");
  }
  h += "; [expect]\n";
  const model::Outcome& o = *expected.expected;
  kv("status", toml_string(o.status));
  if (o.event) {
    h += "; [expect.event]\n";
    kv("name", toml_string(o.event->name));
    kv("warp", std::to_string(o.event->warp));
    kv("pc", std::to_string(o.event->pc));
    if (o.event->lane >= 0) kv("lane", std::to_string(o.event->lane));
    if (o.event->code) kv("code", std::to_string(*o.event->code));  // trap.cause
  }
  for (const auto& b : o.buffers) {
    h += "; [expect.buffers." + b.name + "]\n";
    std::string vals = "[";
    for (size_t i = 0; i < b.values.size(); ++i)
      vals += (i ? ", " : "") + std::to_string(b.values[i]);
    kv("values", vals + "]");
  }
  // trap.host.toml: the host script the program runs with, as the header's [[host]].
  const auto& script =
      !expected.host.empty() || !expected.regression_text.empty() ? expected.host : f.shrunk.host;
  for (const std::string& line : host_lines(script)) h += "; " + line + "\n";
  return h + "\n" + text;
}

namespace {

using wire::ItemResult;
using Verdict = ItemResult::Verdict;
using LogFn = std::function<void(const std::string&)>;

// oracle.fuzz.results: a verdict as the results file names it.
std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Holds:
      return "holds";
    case Verdict::Fails:
      return "fails";
    case Verdict::Unsupported:
      return "unsupported";
    case Verdict::Skipped:
      return "skipped";
    case Verdict::Error:
      return "error";
  }
  return "error";
}

// oracle.fuzz.seeds: the command that regenerates program `seed` of an invariant.
std::string reproduce_command(const FuzzOptions& o, const std::string& invariant, uint64_t seed) {
  return o.simtspec + " fuzz --invariant " + invariant + " --seed " + std::to_string(seed) +
         " --count 1" +
         (o.max_size != FuzzOptions{}.max_size ? " --max-size " + std::to_string(o.max_size) : "") +
         (o.runner_arg.empty() ? "" : " --runner " + o.runner_arg);
}

// Program k of an invariant, generated and checked: the same work in this
// process (jobs = 1) and in a worker process.
ItemResult check_item(const FuzzOptions& o, const Invariant& inv, uint64_t k,
                      runners::Runner* runner) {
  ItemResult r;
  r.invariant = inv.name;
  r.k = k;
  const uint64_t seed = program_seed(o.seed, shard_program(k, o.shard, o.shards));
  const auto t0 = Clock::now();
  try {
    Program p;
    Check c = check_one(inv, seed, o.max_size, runner, &p);
    // oracle.fuzz.stats: programs run with preemption points, and the points, in
    // the script the check ran with (the program's, or the one its oracle made).
    if (const size_t n = [&] {
          size_t points = 0;
          for (const auto& h : c.host.empty() ? p.host : c.host)
            points += h.kind == syntax::HostKind::Preempt;
          return points;
        }()) {
      c.counts["preempt:programs"] += 1;
      c.counts["preempt:points"] += n;
    }
    if (o.after_check) o.after_check(inv, seed, p, c);
    r.verdict = !c.unsupported.empty() ? Verdict::Unsupported
                : c.ok                 ? Verdict::Holds
                                       : Verdict::Fails;
    if (r.verdict == Verdict::Unsupported)
      r.message = std::move(c.unsupported);
    else if (r.verdict == Verdict::Fails)
      r.message = std::move(c.message);
    if (r.verdict == Verdict::Fails) r.signature = failure_signature(inv.name, c);
    r.counters = std::move(c.counts);
    if (o.print_programs || o.on_program) {
      // The host script as comments: `simtspec run --host` takes it from a file.
      std::string text;
      for (const std::string& line : host_lines(p.host)) text += "; " + line + "\n";
      text += print(p);
      if (o.on_program) r.hash = text_hash(text);
      if (o.print_programs) r.text = std::move(text);
    }
  } catch (const std::exception& e) {
    r.verdict = Verdict::Error;
    r.message = std::string("checking it threw an exception: ") + e.what();
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

// The parent's side of a run (oracle.fuzz.jobs): takes per-program results in any
// order and commits them in program order. Item i * n + j is program i of
// invariant j (of n): invariants are checked interleaved. An invariant's first
// failure is thus the failing program with the lowest number, declared only when
// the results of every program before it are known; programs of that invariant
// after it are not wanted (and not counted) any more.
class Run {
 public:
  Run(const FuzzOptions& o, std::vector<const Invariant*> invs, const LogFn& log, FuzzResult& res)
      : o_(o),
        invs_(std::move(invs)),
        log_(log),
        res_(res),
        fail_k_(invs_.size(), kNone),
        per_invariant_(shard_programs(o.count, o.shard, o.shards)),
        total_(o.count ? per_invariant_ * invs_.size() : kNone) {
    if (!o.out_dir.empty()) known_ = known_signatures(o.out_dir);
  }

  uint64_t total() const { return total_; }  // kNone: until the time is up
  uint64_t next() const { return next_; }    // the first item not committed
  const Invariant& invariant(uint64_t item) const { return *invs_[item % invs_.size()]; }
  uint64_t k(uint64_t item) const { return item / invs_.size(); }
  bool all_failed() const { return failed_ == invs_.size(); }
  // Whether the run needs this item's result: not past its invariant's failure.
  bool wanted(uint64_t item) const {
    return item < total_ && k(item) <= fail_k_[item % invs_.size()];
  }
  // Everything a --count run checks is committed (or no longer wanted).
  bool complete() const { return all_failed() || next_ >= total_; }

  // The item of a result, or nullopt if it names no invariant of the run.
  std::optional<uint64_t> item_of(const ItemResult& r) const {
    for (size_t j = 0; j < invs_.size(); ++j)
      if (invs_[j]->name == r.invariant) return r.k * invs_.size() + j;
    return std::nullopt;
  }

  // A result, from whichever process checked it; kept until its turn.
  void take(uint64_t item, ItemResult r) {
    if (item >= next_ && wanted(item)) pending_.insert_or_assign(item, std::move(r));
  }

  // Commits the results that are next in item order; with `all`, every result
  // taken, over the gaps (the run is over: the gaps were never checked).
  // `on_failure(j, k)` is told of each failure before it is shrunk.
  void commit(bool all, const std::function<void(size_t, uint64_t)>& on_failure) {
    for (;;) {
      while (!all_failed() && next_ < total_ && !wanted(next_)) pending_.erase(next_++);
      if (all_failed()) {
        pending_.clear();
        return;
      }
      if (pending_.empty()) return;
      auto it = pending_.begin();
      if (it->first != next_) {
        if (!all) return;
        next_ = it->first;
        continue;
      }
      ItemResult r = std::move(it->second);
      pending_.erase(it);
      const uint64_t item = next_++;
      commit_one(item, r, on_failure);
    }
  }

  // oracle.fuzz: a --count run checks every program of every invariant up to its
  // first failure; the number it did not (0 unless something stopped the run).
  uint64_t unchecked() const {
    if (!total_ || total_ == kNone) return 0;
    uint64_t want = 0, got = 0;
    for (size_t j = 0; j < invs_.size(); ++j) {
      want += fail_k_[j] == kNone ? per_invariant_ : fail_k_[j] + 1;
      auto st = res_.stats.find(invs_[j]->name);
      if (st != res_.stats.end()) got += st->second.programs;
    }
    return want - got;
  }

  void error(FuzzError e) {
    log_((e.invariant.empty() ? std::string("fuzz") : e.invariant) + ": ERROR" +
         (e.seed ? " on program seed " + std::to_string(*e.seed) : std::string()) + ": " +
         e.message +
         (e.seed ? "\n  reproduce: " + reproduce_command(o_, e.invariant, *e.seed) : ""));
    res_.errors.push_back(std::move(e));
  }

  static constexpr uint64_t kNone = UINT64_MAX;

 private:
  void commit_one(uint64_t item, ItemResult& r,
                  const std::function<void(size_t, uint64_t)>& on_failure) {
    const Invariant& inv = invariant(item);
    const uint64_t kk = k(item), global_k = shard_program(kk, o_.shard, o_.shards),
                   seed = program_seed(o_.seed, global_k);
    if (r.verdict == Verdict::Skipped) {
      // Only programs past a failure are skipped, and those are not wanted.
      r.verdict = Verdict::Error;
      r.message = "a worker process skipped it";
    }
    auto& st = res_.stats[inv.name];
    ++st.programs;
    ++res_.programs;
    st.seconds += r.seconds;
    for (const auto& [name, v] : r.counters) st.counters[name] += v;
    if (o_.print_programs)
      log_("; " + inv.name + " program seed " + std::to_string(seed) + ": " +
           (r.verdict == Verdict::Unsupported ? "unsupported (" + r.message + ")"
            : r.verdict == Verdict::Holds     ? std::string("holds")
            : r.verdict == Verdict::Fails     ? "FAILS: " + first_line(r.message)
                                              : "ERROR: " + first_line(r.message)) +
           "\n" + r.text);
    std::string verdict = verdict_name(r.verdict);
    switch (r.verdict) {
      case Verdict::Unsupported:
        if (!st.unsupported++) st.unsupported_reason = r.message;
        ++st.unsupported_reasons[r.message.substr(0, std::min<size_t>(r.message.find(" ("), 160))];
        break;
      case Verdict::Error:
        ++st.errors;
        error({inv.name, seed, r.message});
        break;
      case Verdict::Fails: {
        if (r.signature.empty()) r.signature = inv.name + "/other/-/-";
        // oracle.fuzz.ignore: counted apart, and the invariant goes on.
        if (auto why = o_.ignore ? o_.ignore(r.signature) : std::nullopt) {
          verdict = "ignored";
          ++st.ignored;
          auto [at, first] = res_.ignored.try_emplace(r.signature);
          if (first) {
            at->second.reason = *why;
            at->second.first_seed = seed;
            log_(inv.name + ": ignored failure on program seed " + std::to_string(seed) + ": " +
                 r.signature + " (" + *why + ")");
          }
          ++at->second.count;
          break;
        }
        ++st.failures;
        // oracle.fuzz.dedupe: a signature seen before is counted under its first failure.
        if (auto seen = by_signature_.find(r.signature); seen != by_signature_.end()) {
          ++res_.failures[seen->second].count;
          break;
        }
        if (!o_.keep_going) {
          fail_k_[item % invs_.size()] = kk;
          ++failed_;
          on_failure(item % invs_.size(), kk);
        }
        by_signature_[r.signature] = res_.failures.size();
        shrink_failure(inv, seed, global_k, r.message, r.signature);
        break;
      }
      case Verdict::Holds:
      case Verdict::Skipped:
        break;
    }
    if (o_.on_program) o_.on_program({inv.name, global_k, seed, verdict, r.hash, r.signature});
  }

  // oracle.shrink, oracle.regress: the failing program is generated again from its
  // seed here (the process that checked it may be another) and checked again, for
  // the expectation a regression test needs; then shrunk and written.
  void shrink_failure(const Invariant& inv, uint64_t seed, uint64_t global_k,
                      const std::string& message, const std::string& signature) {
    FuzzFailure f;
    f.invariant = inv.name;
    f.seed = seed;
    f.k = global_k;
    f.signature = signature;
    f.size = program_size(seed, o_.max_size);
    f.original_message = message;
    Check c = check_one(inv, seed, o_.max_size, o_.runner, &f.original);
    f.original_instructions = instruction_count(f.original);
    // oracle.regress.promote: a signature a regression test already carries is known.
    if (auto at = known_.find(signature); at != known_.end()) {
      f.known = at->second;
      f.shrunk = f.original;
      f.shrunk_instructions = f.original_instructions;
      f.message = message;
      log_(inv.name + ": FAILED on program seed " + std::to_string(seed) + ": " +
           first_line(message) + "\n  signature " + signature + ": known signature, see " +
           f.known + "\n  reproduce: " + reproduce_command(o_, inv.name, seed));
      res_.failures.push_back(std::move(f));
      return;
    }
    log_(inv.name + ": FAILED on program seed " + std::to_string(seed) + " (" +
         std::to_string(f.original_instructions) + " instructions): " + first_line(message) +
         "; signature " + signature + "; shrinking");
    if (c.ok) {
      // A flaky implementation: nothing to shrink against, no expectation.
      f.shrunk = f.original;
      f.shrunk_instructions = f.original_instructions;
      f.message = message;
      log_(inv.name + ": it did not fail when checked again" +
           (c.unsupported.empty() ? "" : " (unsupported: " + c.unsupported + ")") +
           ", so it is not shrunk and no regression test is written\n  reproduce: " +
           reproduce_command(o_, inv.name, seed));
      res_.failures.push_back(std::move(f));
      return;
    }
    OracleContext ctx;
    ctx.runner = o_.runner && (inv.needs_runner || inv.runner_optional) ? o_.runner : nullptr;
    ctx.seed = seed;
    ShrinkStats ss;
    // The check of the latest accepted candidate is the shrunk program's
    // (oracles are deterministic), so it is kept rather than run again.
    Check final_check = std::move(c);
    f.shrunk = shrink(
        f.original,
        [&](const Program& q, const std::string& text) {
          Check k = inv.check(q, text, ctx);
          if (k.ok || k.outside) return false;
          final_check = std::move(k);
          return true;
        },
        o_.max_shrink_attempts, &ss, o_.max_shrink_seconds);
    f.shrink_attempts = ss.attempts;
    f.shrink_out_of_time = ss.out_of_time;
    f.shrunk_instructions = instruction_count(f.shrunk);
    f.message = final_check.message;
    if (!o_.out_dir.empty() && final_check.expected) {
      std::error_code ec;
      fs::create_directories(o_.out_dir, ec);
      // oracle.regress: named by the invariant and the program's seed, as in [origin].
      fs::path file = fs::path(o_.out_dir) / regression_file_name(inv.name, seed);
      std::ofstream(file) << regression_test(f, final_check, o_.runner ? o_.runner->name() : "");
      f.file = file.string();
      known_.emplace(signature, f.file);
    }
    log_(inv.name + ": shrunk to " + std::to_string(f.shrunk_instructions) + " instructions in " +
         std::to_string(f.shrink_attempts) + " attempts" +
         (f.shrink_out_of_time ? " (time budget used up; not minimal)" : "") + ": " +
         first_line(f.message) + (f.file.empty() ? "" : "\n  wrote " + f.file) +
         "\n  reproduce: " + reproduce_command(o_, inv.name, seed));
    res_.failures.push_back(std::move(f));
  }

  const FuzzOptions& o_;
  std::vector<const Invariant*> invs_;
  const LogFn& log_;
  FuzzResult& res_;
  std::vector<uint64_t> fail_k_;  // per invariant: its failing program, or kNone
  size_t failed_ = 0;
  uint64_t per_invariant_;  // programs of each invariant in a --count run (this shard's)
  uint64_t total_;
  std::map<std::string, size_t> by_signature_;  // oracle.fuzz.dedupe: index in res_.failures
  std::map<std::string, std::string> known_;    // oracle.regress.promote: signature -> test
  uint64_t next_ = 0;
  std::map<uint64_t, ItemResult> pending_;  // taken, not yet committed
};

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Closes every descriptor a worker inherited but 0-2 and its own pipes: other
// workers' pipes (or their ends would not see end of file) and the pipes of the
// parent's runner processes.
void close_inherited(int a, int b) {
  std::vector<unsigned> keep;
  for (int fd : {a, b})
    if (fd >= 3) keep.push_back(static_cast<unsigned>(fd));
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  auto close_to = [&](unsigned last) {  // [from, last]
    if (from <= last && ::close_range(from, last, 0) != 0)
      for (unsigned fd = from; fd <= std::min(last, 65535u); ++fd) ::close(static_cast<int>(fd));
  };
  for (unsigned k : keep) {
    if (k > from) close_to(k - 1);
    from = k + 1;
  }
  close_to(~0u);
}

// A worker process (oracle.fuzz.jobs): checks the items the parent sends, in
// order, and answers a record for each; skips the programs of an invariant past
// a failure the parent announces; ends when the parent closes its pipe.
// `current` (shared with the parent) holds the item it is checking, so that the
// parent knows which program killed it.
[[noreturn]] void worker_main(const FuzzOptions& o, const std::vector<const Invariant*>& invs,
                              int from_parent, int to_parent, std::atomic<uint64_t>* current) {
  close_inherited(from_parent, to_parent);
  std::string out;
  auto flush = [&] {
    if (!write_all(to_parent, out)) ::_exit(1);  // the parent is gone
    out.clear();
  };
  auto fatal = [&](const std::string& message) {
    wire::append_frame(out, wire::kFatal, message);
    flush();
    ::_exit(1);
  };
  // Its own runner instance (a runner is never shared across fork).
  std::unique_ptr<runners::Runner> own;
  runners::Runner* runner = nullptr;
  if (o.runner && std::any_of(invs.begin(), invs.end(),
                              [](auto* i) { return i->needs_runner || i->runner_optional; })) {
    try {
      own = o.runner_factory           ? o.runner_factory()
            : o.runner->is_reference() ? runners::make_reference_runner()
                                       : nullptr;
    } catch (const std::exception& e) {
      fatal(std::string("cannot open the runner: ") + e.what());
    }
    if (!own) fatal("cannot open the runner");
    runner = own.get();
  }
  const size_t n = invs.size();
  wire::FrameReader in;
  std::deque<uint64_t> todo;
  std::vector<uint64_t> skip_above(n, Run::kNone);
  bool stop = false;
  auto last_flush = Clock::now();
  size_t unflushed = 0;
  while (!stop) {
    // What the parent sent: waited for when there is nothing to do.
    for (;;) {
      pollfd pf{from_parent, POLLIN, 0};
      int ready = ::poll(&pf, 1, todo.empty() ? -1 : 0);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      char buf[4096];
      ssize_t got = ::read(from_parent, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        stop = true;  // the parent wants no more
        break;
      }
      in.feed(buf, static_cast<size_t>(got));
      char kind;
      std::string payload;
      while (in.next(kind, payload)) {
        uint64_t j, k;
        if (kind == wire::kBatch) {
          auto items = wire::decode_batch(payload);
          if (!items) fatal("a malformed batch from the parent");
          todo.insert(todo.end(), items->begin(), items->end());
        } else if (kind == wire::kSkip && wire::decode_skip(payload, j, k) && j < n) {
          skip_above[j] = std::min(skip_above[j], k);
        } else {
          fatal("a malformed message from the parent");
        }
      }
    }
    if (stop || todo.empty()) continue;
    const uint64_t item = todo.front();
    todo.pop_front();
    const size_t j = item % n;
    const uint64_t k = item / n;
    ItemResult r;
    if (k > skip_above[j]) {
      r.invariant = invs[j]->name;
      r.k = k;
      r.verdict = Verdict::Skipped;
    } else {
      current->store(item);
      r = check_item(o, *invs[j], k, runner);
      current->store(Run::kNone);
    }
    wire::append_frame(out, wire::kResult, wire::encode(r));
    // Results go in small groups: each wakes the parent.
    const auto now = Clock::now();
    if (todo.empty() || ++unflushed >= 16 || now - last_flush >= std::chrono::milliseconds(2)) {
      flush();
      last_flush = now;
      unflushed = 0;
    }
  }
  flush();
  if (own) own->shutdown();
  ::_exit(0);
}

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

// The worker processes of a run with jobs > 1, and the parent's poll() loop over
// their pipes. The parent hands out items in order, in batches, no further than
// a window past the first uncommitted one, and keeps each worker's items in
// order: a worker answers them in that order (a few at a time), and tells
// through shared memory which one it is checking, so that a worker that dies
// is an error for that program only.
class Pool {
 public:
  Pool(const FuzzOptions& o, Run& run, const std::vector<const Invariant*>& invs,
       const std::function<bool()>& expired)
      : o_(o), run_(run), invs_(invs), expired_(expired) {
    const uint64_t jobs = o.jobs;
    workers_.resize(static_cast<size_t>(std::max<uint64_t>(1, std::min(jobs, run.total()))));
    // Batches: 8 or more per worker in a --count run, at most 32 items; the
    // window bounds the results kept for committing in order.
    batch_ = run.total() == Run::kNone
                 ? 16
                 : std::clamp<uint64_t>(run.total() / (workers_.size() * 8), 1, 32);
    window_ = std::max<uint64_t>(4096, workers_.size() * batch_ * 16);
    // One word per worker, shared with its process: the item it is checking.
    shared_bytes_ = workers_.size() * sizeof(std::atomic<uint64_t>);
    void* m =
        ::mmap(nullptr, shared_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error(std::string("fuzz: mmap: ") + strerror(errno));
    shared_ = static_cast<std::atomic<uint64_t>*>(m);
    for (size_t i = 0; i < workers_.size(); ++i)
      workers_[i].current = new (&shared_[i]) std::atomic<uint64_t>(Run::kNone);
  }
  ~Pool() { ::munmap(shared_, shared_bytes_); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void go() {
    for (auto& w : workers_)
      if (!spawn(w)) {
        stop_run("cannot start a worker process: " + errno_text_);
        break;
      }
    while (!stopping_) {
      run_.commit(false, announce_);
      if (run_.complete()) break;
      if (expired_()) {
        timed_out_ = true;
        break;
      }
      dispatch();
      std::vector<pollfd> fds;
      std::vector<Worker*> of;
      readable(fds, of);
      if (fds.empty()) {
        stop_run("no worker process is left");
        break;
      }
      // With --time, wake up now and then to notice the end of the time.
      int ready = ::poll(fds.data(), fds.size(), o_.seconds > 0 ? 250 : -1);
      if (ready < 0 && errno != EINTR) {
        stop_run(std::string("poll: ") + strerror(errno));
        break;
      }
      for (size_t i = 0; ready > 0 && i < fds.size(); ++i)
        if (fds[i].revents && !receive(*of[i])) died(*of[i]);
    }
    finish();
  }

  bool timed_out() const { return timed_out_; }

 private:
  struct Worker {
    pid_t pid = -1;
    int to = -1, from = -1;  // pipes: items to it, results from it
    std::deque<uint64_t> held;
    wire::FrameReader in;
    std::atomic<uint64_t>* current = nullptr;  // shared: the item it is checking
  };

  bool spawn(Worker& w) {
    int down[2], up[2];
    if (::pipe2(down, O_CLOEXEC)) return errno_text_ = strerror(errno), false;
    if (::pipe2(up, O_CLOEXEC)) {
      errno_text_ = strerror(errno);
      ::close(down[0]), ::close(down[1]);
      return false;
    }
    w.current->store(Run::kNone);
    const pid_t pid = ::fork();
    if (pid < 0) {
      errno_text_ = strerror(errno);
      for (int fd : {down[0], down[1], up[0], up[1]}) ::close(fd);
      return false;
    }
    if (pid == 0) worker_main(o_, invs_, down[0], up[1], w.current);
    ::close(down[0]);
    ::close(up[1]);
    w.held.clear();
    w.in = wire::FrameReader{};
    w.pid = pid;
    w.to = down[1];
    w.from = up[0];
    return true;
  }

  void send(Worker& w, char kind, const std::string& payload) {
    std::string frame;
    wire::append_frame(frame, kind, payload);
    // A worker that died shows as end of file on its results: not handled here.
    write_all(w.to, frame);
  }

  void dispatch() {
    for (auto& w : workers_) {
      if (w.to < 0) continue;
      while (w.held.size() < 3 * batch_) {
        std::vector<uint64_t> items;
        while (items.size() < batch_) {
          uint64_t item;
          if (!redo_.empty()) {
            item = *redo_.begin();
            redo_.erase(redo_.begin());
          } else if (next_ < run_.total() && next_ < run_.next() + window_) {
            item = next_++;
          } else {
            break;
          }
          if (run_.wanted(item)) items.push_back(item);
        }
        if (items.empty()) break;
        send(w, wire::kBatch, wire::encode_batch(items));
        w.held.insert(w.held.end(), items.begin(), items.end());
      }
    }
  }

  // Reads what a worker sent; false at end of file.
  bool receive(Worker& w) {
    char buf[65536];
    ssize_t got = ::read(w.from, buf, sizeof buf);
    if (got < 0 && errno == EINTR) return true;
    if (got <= 0) return false;
    w.in.feed(buf, static_cast<size_t>(got));
    char kind;
    std::string payload;
    while (w.in.next(kind, payload)) {
      if (kind == wire::kFatal) {
        stop_run("a worker process cannot check programs: " + payload);
        continue;
      }
      std::optional<ItemResult> r;
      std::optional<uint64_t> item;
      if (kind == wire::kResult) r = wire::decode(payload);
      if (r) item = run_.item_of(*r);
      if (!item || w.held.empty() || w.held.front() != *item) {
        stop_run("a worker process sent a malformed or unexpected message");
        continue;
      }
      w.held.pop_front();
      run_.take(*item, std::move(*r));
    }
    return true;
  }

  struct Ended {
    bool normally;    // exit status 0
    std::string how;  // for people
  };
  // Waits for a worker whose pipe ended and closes its pipes.
  Ended reap(Worker& w) {
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    Ended e{WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "worker process " + std::to_string(w.pid) + " " + how_it_ended(status)};
    w.pid = -1;
    for (int* fd : {&w.to, &w.from})
      if (*fd >= 0) ::close(*fd), *fd = -1;
    return e;
  }

  // A worker ended without being asked to: the program it was checking is an
  // error; without one (it died between programs) the death is an error of the
  // run. Returns whether it was checking one.
  bool blame(Worker& w, const Ended& e) {
    const uint64_t item = w.current->load();
    auto at = std::find(w.held.begin(), w.held.end(), item);
    if (item != Run::kNone && at != w.held.end()) {
      error_item(item, e.how + " while checking it");
      w.held.erase(at);
      return true;
    }
    run_.error({"", std::nullopt, e.how + " between programs"});
    return false;
  }

  // A worker died while the run goes on (oracle.fuzz.jobs). Results it had not sent
  // yet are lost: the programs it held but the one it was checking go to another
  // worker.
  void died(Worker& w) {
    const Ended e = reap(w);
    if (!blame(w, e) && ++barren_ > workers_.size() + 2)
      stop_run("worker processes keep dying between programs");
    redo_.insert(w.held.begin(), w.held.end());
    w.held.clear();
    run_.commit(false, announce_);
    if (run_.complete() || stopping_) return;
    if (!spawn(w)) stop_run("cannot start a worker process: " + errno_text_);
  }

  void error_item(uint64_t item, const std::string& message) {
    ItemResult r;
    r.invariant = run_.invariant(item).name;
    r.k = run_.k(item);
    r.verdict = Verdict::Error;
    r.message = message;
    run_.take(item, std::move(r));
  }

  // The run cannot go on: an error for the run; workers are told to stop.
  void stop_run(const std::string& message) {
    if (stopping_) return;
    stopping_ = true;
    run_.error({"", std::nullopt, message});
  }

  // Ends every worker: closing its pipe tells it to stop after the program it is
  // checking; what it sends until then still counts.
  // The pipes of the workers still answering, to poll(), and their workers.
  void readable(std::vector<pollfd>& fds, std::vector<Worker*>& of) {
    for (auto& w : workers_)
      if (w.from >= 0) {
        fds.push_back({w.from, POLLIN, 0});
        of.push_back(&w);
      }
  }
  void finish() {
    for (auto& w : workers_)
      if (w.to >= 0) ::close(w.to), w.to = -1;
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<Worker*> of;
      readable(fds, of);
      if (fds.empty()) break;
      int ready = ::poll(fds.data(), fds.size(), -1);
      if (ready < 0 && errno != EINTR) break;
      for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
        Worker& w = *of[i];
        if (!fds[i].revents || receive(w)) continue;
        const Ended e = reap(w);
        // Asked to stop, it ends normally; the programs it did not check are
        // past the end of the run.
        if (!e.normally) blame(w, e);
        w.held.clear();
      }
    }
  }

  const FuzzOptions& o_;
  Run& run_;
  const std::vector<const Invariant*>& invs_;
  const std::function<bool()>& expired_;
  std::vector<Worker> workers_;
  std::atomic<uint64_t>* shared_ = nullptr;
  size_t shared_bytes_ = 0;
  uint64_t batch_ = 1, window_ = 4096;
  uint64_t next_ = 0;        // the next item never handed out
  std::set<uint64_t> redo_;  // items to hand out again (their worker died)
  size_t barren_ = 0;        // workers that died between programs
  bool stopping_ = false, timed_out_ = false;
  std::string errno_text_;
  // Tells every worker of a failure: it skips that invariant's later programs.
  std::function<void(size_t, uint64_t)> announce_ = [this](size_t j, uint64_t k) {
    for (auto& w : workers_)
      if (w.to >= 0) send(w, wire::kSkip, wire::encode_skip(j, k));
  };
};

}  // namespace

FuzzResult fuzz(const FuzzOptions& o, const std::function<void(const std::string&)>& log) {
  FuzzResult res;
  std::vector<const Invariant*> invs;
  for (const auto& n : o.invariants) {
    const Invariant* i = find_invariant(n);
    if (i) invs.push_back(i);
  }
  if (invs.empty()) return res;
  const bool runner_invariant = o.runner && std::any_of(invs.begin(), invs.end(), [](auto* i) {
                                  return i->needs_runner || i->runner_optional;
                                });
  if (o.jobs > 1 && runner_invariant && !o.runner_factory && !o.runner->is_reference())
    throw std::invalid_argument("fuzz: jobs > 1 with a runner needs FuzzOptions::runner_factory");
  const auto t0 = Clock::now();
  auto expired = std::function<bool()>([&] {
    return o.seconds > 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= o.seconds;
  });
  Run run(o, invs, log, res);
  auto no_workers = [](size_t, uint64_t) {};
  bool timed_out = false;
  if (o.jobs <= 1) {
    // In this process, in item order: the same commits as with workers.
    for (uint64_t item = 0; !run.complete(); ++item) {
      if (expired()) {
        timed_out = true;
        break;
      }
      if (!run.wanted(item)) continue;
      run.take(item, check_item(o, run.invariant(item), run.k(item), o.runner));
      run.commit(false, no_workers);
    }
  } else {
    // A worker that dies while the parent writes to it must not end the parent.
    struct sigaction ignore {
    }, old{};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &old);
    Pool pool(o, run, invs, expired);
    pool.go();
    timed_out = pool.timed_out();
    run.commit(true, no_workers);
    ::sigaction(SIGPIPE, &old, nullptr);
  }
  // oracle.fuzz: never a program silently left out.
  if (!timed_out)
    if (uint64_t n = run.unchecked())
      run.error({"", std::nullopt, std::to_string(n) + " program(s) were not checked"});
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace simt::gen
