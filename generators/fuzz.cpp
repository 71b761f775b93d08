#include "fuzz.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "generate.h"
#include "host/host.h"
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

Program generate_one(const Invariant& inv, uint64_t seed, int max_size,
                     const runners::Capabilities* caps) {
  // RapidCheck keeps its generation context in process-wide state, so programs
  // are generated one at a time; checking them runs in parallel.
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

}  // namespace

std::string regression_file_name(const std::string& invariant, uint64_t seed) {
  return invariant + "_seed" + std::to_string(seed) + ".simt";
}

std::string regression_test(const FuzzFailure& f, const Check& expected,
                            const std::string& runner_name) {
  const Invariant* inv = find_invariant(f.invariant);
  std::string text = print(f.shrunk);
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
  }
  for (const auto& b : o.buffers) {
    h += "; [expect.buffers." + b.name + "]\n";
    std::string vals = "[";
    for (size_t i = 0; i < b.values.size(); ++i)
      vals += (i ? ", " : "") + std::to_string(b.values[i]);
    kv("values", vals + "]");
  }
  return h + "\n" + text;
}

FuzzResult fuzz(const FuzzOptions& o, const std::function<void(const std::string&)>& log) {
  FuzzResult res;
  std::vector<const Invariant*> invs;
  for (const auto& n : o.invariants) {
    const Invariant* i = find_invariant(n);
    if (i) invs.push_back(i);
  }
  const auto t0 = Clock::now();
  auto expired = [&] {
    return o.seconds > 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= o.seconds;
  };
  std::mutex mu;
  std::set<std::string> failed;  // invariants that already failed: stop checking them
  std::atomic<uint64_t> next{0};
  const uint64_t per = o.count;
  const uint64_t total = per ? per * invs.size() : UINT64_MAX;
  auto worker = [&] {
    for (;;) {
      uint64_t item = next.fetch_add(1);
      if (item >= total || expired()) return;
      const Invariant& inv = *invs[item % invs.size()];
      uint64_t k = item / invs.size();
      {
        std::lock_guard<std::mutex> g(mu);
        if (failed.count(inv.name)) {
          if (failed.size() == invs.size()) return;
          continue;
        }
      }
      uint64_t seed = program_seed(o.seed, k);
      auto c0 = Clock::now();
      Program p;
      Check c = check_one(inv, seed, o.max_size, o.runner, &p);
      double dt = std::chrono::duration<double>(Clock::now() - c0).count();
      if (o.print_programs)
        log("; " + inv.name + " program seed " + std::to_string(seed) + ": " +
            (!c.unsupported.empty() ? "unsupported (" + c.unsupported + ")"
             : c.ok                 ? std::string("holds")
                                    : "FAILS: " + first_line(c.message)) +
            "\n" + print(p));
      {
        std::lock_guard<std::mutex> g(mu);
        auto& st = res.stats[inv.name];
        ++st.programs;
        st.seconds += dt;
        ++res.programs;
        if (!c.unsupported.empty()) {
          if (!st.unsupported++) st.unsupported_reason = c.unsupported;
          continue;
        }
        if (c.ok || failed.count(inv.name)) continue;
        failed.insert(inv.name);
        ++st.failures;
      }
      // Shrink outside the lock; other invariants go on meanwhile.
      FuzzFailure f;
      f.invariant = inv.name;
      f.seed = seed;
      f.size = program_size(seed, o.max_size);
      f.original = p;
      f.original_message = c.message;
      f.original_instructions = instruction_count(p);
      log(inv.name + ": FAILED on program seed " + std::to_string(seed) + " (" +
          std::to_string(f.original_instructions) + " instructions): " + first_line(c.message) +
          "; shrinking");
      OracleContext ctx;
      ctx.runner = o.runner && (inv.needs_runner || inv.runner_optional) ? o.runner : nullptr;
      ctx.seed = seed;
      ShrinkStats ss;
      // The check of the latest accepted candidate is the shrunk program's
      // (oracles are deterministic), so it is kept rather than run again.
      Check final_check = c;
      f.shrunk = shrink(
          p,
          [&](const Program& q, const std::string& text) {
            Check k = inv.check(q, text, ctx);
            if (k.ok) return false;
            final_check = std::move(k);
            return true;
          },
          o.max_shrink_attempts, &ss, o.max_shrink_seconds);
      f.shrink_attempts = ss.attempts;
      f.shrink_out_of_time = ss.out_of_time;
      f.shrunk_instructions = instruction_count(f.shrunk);
      f.message = final_check.message;
      if (!o.out_dir.empty() && final_check.expected) {
        std::error_code ec;
        fs::create_directories(o.out_dir, ec);
        // oracle.regress: named by the invariant and the program's seed, as in [origin].
        fs::path file = fs::path(o.out_dir) / regression_file_name(inv.name, seed);
        std::ofstream(file) << regression_test(f, final_check, o.runner ? o.runner->name() : "");
        f.file = file.string();
      }
      log(inv.name + ": shrunk to " + std::to_string(f.shrunk_instructions) + " instructions in " +
          std::to_string(f.shrink_attempts) + " attempts" +
          (f.shrink_out_of_time ? " (time budget used up; not minimal)" : "") + ": " +
          first_line(f.message) + (f.file.empty() ? "" : "\n  wrote " + f.file) +
          "\n  reproduce: " + o.simtspec + " fuzz --invariant " + inv.name + " --seed " +
          std::to_string(seed) + " --count 1" +
          (o.max_size != FuzzOptions{}.max_size ? " --max-size " + std::to_string(o.max_size)
                                                : "") +
          (o.runner_arg.empty() ? "" : " --runner " + o.runner_arg));
      std::lock_guard<std::mutex> g(mu);
      res.failures.push_back(std::move(f));
    }
  };
  std::vector<std::thread> threads;
  for (uint32_t j = 1; j < std::max(1u, o.jobs); ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace simt::gen
