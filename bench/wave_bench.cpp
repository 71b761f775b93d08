// The cost of sub-vector looping (spec/wave.md). Run e.g.
//   build/<dir>/bench/wave_bench --benchmark_min_time=1
//
// BM_Body/<mode>/wave:W/simd:S times whole launches of one warp running a loop of
// 500 iterations of a body of eight vector ALU instructions on every lane, with
// its loop control (three scalar instructions), checked against its result:
//   normal   the loop in normal mode: the baseline;
//   region   the same loop inside one sub-vector region (wave.enter .. wave.exit),
//            every part active: the loop runs once per part, each pass on simd
//            lanes, so the lane work is the same and the steps are k times as many;
//   shared   as region, with the body's registers shared (`.vshared 0`,
//            wave.shared): the cost of addressing a part's storage.
// The target: region / normal at most 1.3 for the same instructions.
// Counters: lane_ops_per_second (active lanes summed over committed
// instructions: the same in every mode), steps_per_second.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "exec/machine.h"
#include "host/host.h"

namespace {

using simt::exec::Machine;
using simt::exec::Status;

constexpr int kIters = 500;

enum class Mode { Normal, Region, Shared };

std::string program(Mode m, uint32_t wave, uint32_t simd) {
  std::string t = ".wave " + std::to_string(wave) + "\n.simd " + std::to_string(simd) +
                  "\n.vregs 8\n.max_steps 100000000\n";
  if (m == Mode::Shared) t += ".vshared 0\n";
  t += ".buffer out u32[wave] out\n";
  if (m != Mode::Normal) t += "    subv.begin\n";
  // wave.valid.shared: every register is written before it is read in the region.
  t += "    mov v1, %lane\n    mov v2, 3\n    mov v3, 0\n    mov s1, 0\n";
  t += "L:\n";
  t += "    add v3, v3, v1\n    xor v3, v3, v2\n    mul v4, v3, 5\n    shr v5, v4, 3\n";
  t += "    add v3, v3, v5\n    and v6, v3, 0xff\n    sub v3, v3, v6\n    add v2, v2, 1\n";
  t += "    add s1, s1, 1\n    cmp.lt p0, s1, " + std::to_string(kIters) + "\n    cbr p0, L\n";
  t += "    shl v7, v1, 2\n    st out[v7], v3\n";
  if (m != Mode::Normal) t += "    subv.end\n";
  t += "    exit\n";
  return t;
}

uint32_t expected(uint32_t lane) {
  uint32_t v1 = lane, v2 = 3, v3 = 0;
  for (int i = 0; i < kIters; ++i) {
    v3 += v1;
    v3 ^= v2;
    uint32_t v4 = v3 * 5, v5 = v4 >> 3;
    v3 += v5;
    v3 -= v3 & 0xff;
    v2 += 1;
  }
  return v3;
}

void run(benchmark::State& state, Mode m) {
  const auto wave = static_cast<uint32_t>(state.range(0));
  const auto simd = static_cast<uint32_t>(state.range(1));
  auto r = simt::host::load(program(m, wave, simd), {});
  if (!r.loaded) {
    state.SkipWithError(r.diags.format("bench").c_str());
    return;
  }
  auto prog = r.loaded->program;
  uint64_t steps = 0, lane_ops = 0;
  for (auto _ : state) {
    Machine mach(prog);
    auto o = mach.run();
    steps += o.steps;
    lane_ops += o.lane_ops;
    if (o.status != Status::Completed) {
      state.SkipWithError("the launch did not complete");
      return;
    }
    benchmark::DoNotOptimize(o);
    if (steps == o.steps) {  // check the result once
      auto w = o.words("out");
      for (uint32_t l = 0; l < wave; ++l)
        if (!w || (*w)[l] != expected(l)) {
          state.SkipWithError("wrong result");
          return;
        }
    }
  }
  state.counters["lane_ops_per_second"] =
      benchmark::Counter(static_cast<double>(lane_ops), benchmark::Counter::kIsRate);
  state.counters["steps_per_second"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"wave", "simd"});
  for (auto [w, s] : {std::pair{64, 64}, {64, 32}, {64, 16}, {32, 16}, {32, 8}}) b->Args({w, s});
}
// Normal mode at wave = simd: a step on as many lanes as a pass's step above, for
// comparing the cost per step at equal width.
void narrow(benchmark::internal::Benchmark* b) {
  b->ArgNames({"wave", "simd"});
  for (int w : {32, 16, 8}) b->Args({w, w});
}

}  // namespace

BENCHMARK_CAPTURE(run, normal, Mode::Normal)->Apply(shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(run, normal, Mode::Normal)->Apply(narrow)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(run, region, Mode::Region)->Apply(shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(run, shared, Mode::Shared)->Apply(shapes)->Unit(benchmark::kMicrosecond);
