// Reading hostile input (valid.scope, syntax.print.indent, format.toml): each
// benchmark grows one dimension of the input and reports Google Benchmark's fitted
// complexity, which should be O(N). Run e.g.
//   build/<dir>/bench/load_bench --benchmark_min_time=0.2
//
// BM_LoadNested/N    host::load (parse, structure, expansion, validation,
//                    predecoding) of N nested `if`/`loop` blocks;
// BM_PrintNested/N   text::print of N nested `if` blocks;
// BM_LoadStraight/N  host::load of N straight-line instructions;
// BM_TomlArray/N     host::parse_toml of a one-line array of N integers;
// BM_TomlHost/N      host::parse_host_toml of N [[host]] tables.
// Counters: items_per_second (blocks, instructions, array elements or tables).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "host/host.h"
#include "host/toml_text.h"
#include "text/parser.h"
#include "text/printer.h"

namespace {

std::string repeat(const std::string& s, int64_t n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out += s;
  return out;
}

void BM_LoadNested(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string text = ".buffer o u32[wave] out\n" + repeat("if p0\nloop\nbreak p1\n", n) +
                           repeat("endloop\nendif\n", n) + "exit\n";
  for (auto _ : state) {
    auto r = simt::host::load(text);
    if (!r.loaded) state.SkipWithError("rejected");
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetComplexityN(n);
}
BENCHMARK(BM_LoadNested)->RangeMultiplier(4)->Range(1 << 10, 1 << 16)->Complexity();

void BM_PrintNested(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto parsed = simt::text::parse(repeat("if p0\nnop\n", n) + repeat("endif\n", n) + "exit\n");
  for (auto _ : state) benchmark::DoNotOptimize(simt::text::print(parsed.program));
  state.SetItemsProcessed(state.iterations() * n);
  state.SetComplexityN(n);
}
BENCHMARK(BM_PrintNested)->RangeMultiplier(4)->Range(1 << 10, 1 << 16)->Complexity();

void BM_LoadStraight(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string text = ".buffer o u32[wave] out\n" + repeat("add v0, v0, 1\n", n) + "exit\n";
  for (auto _ : state) benchmark::DoNotOptimize(simt::host::load(text));
  state.SetItemsProcessed(state.iterations() * n);
  state.SetComplexityN(n);
}
BENCHMARK(BM_LoadStraight)->RangeMultiplier(4)->Range(1 << 12, 1 << 18)->Complexity();

void BM_TomlArray(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string text = "v = [" + repeat("7, ", n - 1) + "7]\n";
  for (auto _ : state) benchmark::DoNotOptimize(simt::host::parse_toml(text));
  state.SetItemsProcessed(state.iterations() * n);
  state.SetComplexityN(n);
}
BENCHMARK(BM_TomlArray)->RangeMultiplier(4)->Range(1 << 12, 1 << 18)->Complexity();

void BM_TomlHost(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::string text;
  for (int64_t i = 0; i < n; ++i)
    text += "[[host]]\nstep = " + std::to_string(i) + "\naction = \"resume\"\n";
  for (auto _ : state) {
    std::vector<simt::syntax::HostStep> steps;
    if (simt::host::parse_host_toml(text, "h.toml", steps)) state.SkipWithError("refused");
    benchmark::DoNotOptimize(steps);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetComplexityN(n);
}
BENCHMARK(BM_TomlHost)->RangeMultiplier(4)->Range(1 << 10, 1 << 16)->Complexity();

}  // namespace
