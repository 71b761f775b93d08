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

// The seeds (at the benchmark's size cap) whose programs have from `min_insns`
// to 64 instructions and at most 4 warps; found once, outside the timed region.
const std::vector<uint64_t>& small_seeds(const std::string& invariant, int max_size,
                                         size_t min_insns) {
  static std::map<std::string, std::vector<uint64_t>> cache;
  auto& seeds = cache[invariant + "/" + std::to_string(max_size) + "/" + std::to_string(min_insns)];
  if (seeds.empty()) {
    gen::Options o = gen::options_for(invariant);
    for (uint64_t s = 1; seeds.size() < 2000 && s < 20000; ++s) {
      gen::Program p = gen::program(o)(rc::Random(s), gen::program_size(s, max_size)).value();
      if (p.warps * p.workgroups > 4) continue;
      auto r = host::load(gen::print(p));
      if (r.loaded && r.loaded->program->size() <= 64 && r.loaded->program->size() >= min_insns)
        seeds.push_back(s);
    }
  }
  return seeds;
}

void BM_CheckPrograms(benchmark::State& state, const char* invariant) {
  const int max_size = static_cast<int>(state.range(0));
  const auto& seeds = small_seeds(invariant, max_size, static_cast<size_t>(state.range(1)));
  const gen::Invariant* inv = gen::find_invariant(invariant);
  size_t i = 0, programs = 0, instructions = 0;
  for (auto _ : state) {
    uint64_t seed = seeds[i++ % seeds.size()];
    gen::Program p;
    gen::Check c = gen::check_one(*inv, seed, max_size, nullptr, &p);
    if (!c.ok) {
      state.SkipWithError(
          ("invariant failed for seed " + std::to_string(seed) + ": " + c.message).c_str());
      break;
    }
    ++programs;
  }
  for (size_t k = 0; k < std::min<size_t>(seeds.size(), 200); ++k) {
    gen::Program p = gen::program(gen::options_for(invariant))(
                         rc::Random(seeds[k]), gen::program_size(seeds[k], max_size))
                         .value();
    instructions += host::load(gen::print(p)).loaded->program->size();
  }
  state.counters["programs_per_second"] =
      benchmark::Counter(static_cast<double>(programs), benchmark::Counter::kIsRate);
  state.counters["avg_instructions"] =
      static_cast<double>(instructions) / std::min<size_t>(seeds.size(), 200);
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

// The generation step alone (RapidCheck, serialised across threads): its share
// of BM_CheckPrograms bounds what `simtspec fuzz --jobs N` can gain.
void BM_Generate(benchmark::State& state, const char* invariant) {
  const int max_size = static_cast<int>(state.range(0));
  const auto& seeds = small_seeds(invariant, max_size, static_cast<size_t>(state.range(1)));
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
