// Programs checked per second by the fuzzing pipeline (spec/oracles.md): generate a
// structured program, print it, parse and validate it, run it on the reference
// and check an invariant. Programs have at most 64 instructions and 4 warps; the
// benchmark counts only those and reports how many it had to skip.
#include <benchmark/benchmark.h>

#include <map>

#include "fuzz.h"
#include "generate.h"
#include "host/host.h"
#include "oracles.h"
#include "shrink.h"

namespace {

using namespace simt;

// The programs (at the benchmark's size cap) that have from `min_insns` to 64
// instructions and at most 4 warps: their seeds and average instruction count,
// found once, outside the timed region.
struct Seeds {
  std::vector<uint64_t> seeds;
  double avg_instructions = 0;
};

const Seeds& small_seeds(const std::string& invariant, int max_size, size_t min_insns) {
  static std::map<std::string, Seeds> cache;
  Seeds& c = cache[invariant + "/" + std::to_string(max_size) + "/" + std::to_string(min_insns)];
  if (c.seeds.empty()) {
    const gen::Invariant& inv = *gen::find_invariant(invariant);
    size_t total = 0;
    for (uint64_t s = 1; c.seeds.size() < 2000 && s < 20000; ++s) {
      gen::Program p = gen::generate_one(inv, s, max_size);
      if (p.warps * p.workgroups > 4) continue;
      size_t n = gen::instruction_count(p);  // 0 if it does not load
      if (n == 0 || n > 64 || n < min_insns) continue;
      c.seeds.push_back(s);
      total += n;
    }
    c.avg_instructions = c.seeds.empty() ? 0 : static_cast<double>(total) / c.seeds.size();
  }
  return c;
}

void BM_CheckPrograms(benchmark::State& state, const char* invariant) {
  const int max_size = static_cast<int>(state.range(0));
  const Seeds& small = small_seeds(invariant, max_size, static_cast<size_t>(state.range(1)));
  const auto& seeds = small.seeds;
  const gen::Invariant* inv = gen::find_invariant(invariant);
  size_t i = 0, programs = 0;
  for (auto _ : state) {
    uint64_t seed = seeds[i++ % seeds.size()];
    gen::Check c = gen::check_one(*inv, seed, max_size, nullptr);
    if (!c.ok) {
      state.SkipWithError(
          ("invariant failed for seed " + std::to_string(seed) + ": " + c.message).c_str());
      break;
    }
    ++programs;
  }
  state.counters["programs_per_second"] =
      benchmark::Counter(static_cast<double>(programs), benchmark::Counter::kIsRate);
  state.counters["avg_instructions"] = small.avg_instructions;
}

// Args: the generator's size cap; the fewest instructions a program may have
// (0: every program up to 64 instructions; 40: only the largest ones).
BENCHMARK_CAPTURE(BM_CheckPrograms, sequential, "sequential")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CheckPrograms, expansion, "expansion")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CheckPrograms, roundtrip, "roundtrip")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CheckPrograms, snapshot, "snapshot")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CheckPrograms, scheduler, "scheduler")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CheckPrograms, atomic_count, "atomic-count")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CheckPrograms, atomic_broadcast, "atomic-broadcast")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);

// The generation step alone (RapidCheck, serialised across threads): its share
// of BM_CheckPrograms bounds what `simtspec fuzz --jobs N` can gain.
void BM_Generate(benchmark::State& state, const char* invariant) {
  const int max_size = static_cast<int>(state.range(0));
  const auto& seeds = small_seeds(invariant, max_size, static_cast<size_t>(state.range(1))).seeds;
  const gen::Invariant* inv = gen::find_invariant(invariant);
  size_t i = 0, programs = 0;
  for (auto _ : state) {
    uint64_t seed = seeds[i++ % seeds.size()];
    gen::Program p = gen::generate_one(*inv, seed, max_size);
    benchmark::DoNotOptimize(p);
    ++programs;
  }
  state.counters["programs_per_second"] =
      benchmark::Counter(static_cast<double>(programs), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Generate, sequential, "sequential")
    ->Args({100, 0})
    ->Args({100, 40})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
