// What certifying lavapipe costs, end to end (issue "the Vulkan runner", Speed):
//   BM_SuiteOnLavapipe/J   the whole suite (suites/) through runners/vulkan/lavapipe.toml,
//                          J harness threads, a fresh runner (so cold driver processes
//                          and no compiled shader) per iteration. Counters: configs (all
//                          configurations), supported (those the runner did not answer
//                          unsupported), supported_per_s, seconds. Target: the
//                          supported configurations in under 60 s on 2 cores.
//   BM_DifferentialFuzz/J  `simtspec fuzz --invariant differential` on the same runner,
//                          400 programs from seed 20261124, J worker processes.
//                          Counters: programs_per_s (target: at least 20), unsupported.
// Each iteration is one whole run (real time). The runner description's command is
// relative to it (../../build/release/simtspec-vulkan): build the release preset's
// simtspec-vulkan first, or point SIMT_VULKAN_RUNNER at another description. Run:
//   build/release/bench/vulkan_runner_bench
// Without a Vulkan device the suite's configurations end `error` and the benchmark
// reports that instead of a rate.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz.h"
#include "harness.h"
#include "runner.h"

namespace {

using namespace simt;

std::string runner_file() {
  const char* env = std::getenv("SIMT_VULKAN_RUNNER");
  return env ? env : std::string(SIMT_SOURCE_DIR) + "/runners/vulkan/lavapipe.toml";
}

std::unique_ptr<runners::Runner> open_or_skip(benchmark::State& state) {
  auto opened = runners::open_runner(runner_file());
  if (auto* e = std::get_if<std::string>(&opened)) {
    state.SkipWithError(e->c_str());
    return nullptr;
  }
  return std::get<std::unique_ptr<runners::Runner>>(std::move(opened));
}

std::vector<std::string> suite_files() {
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(std::string(SIMT_SOURCE_DIR) + "/suites")) {
    if (e.is_regular_file() && e.path().extension() == ".simt") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void BM_SuiteOnLavapipe(benchmark::State& state) {
  const harness::Suite suite = harness::load_suite(suite_files());
  harness::Options o;
  o.jobs = static_cast<uint32_t>(state.range(0));
  const auto cases = harness::select(suite, o);
  size_t supported = 0, errors = 0;
  double seconds = 0;
  for (auto _ : state) {
    auto runner = open_or_skip(state);
    if (!runner) return;
    const auto start = std::chrono::steady_clock::now();
    harness::Summary s = harness::run(*runner, suite, cases, o, [](const reports::Record&) {});
    runner->shutdown();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    supported = s.total - s.counts["unsupported"];
    errors = s.counts["error"];
  }
  if (errors > 0) {
    state.SkipWithError((std::to_string(errors) + " configurations ended error").c_str());
    return;
  }
  state.counters["configs"] = static_cast<double>(cases.size());
  state.counters["supported"] = static_cast<double>(supported);
  state.counters["seconds"] = seconds;
  state.counters["supported_per_s"] = static_cast<double>(supported) / seconds;
}
BENCHMARK(BM_SuiteOnLavapipe)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

void BM_DifferentialFuzz(benchmark::State& state) {
  gen::FuzzResult r;
  for (auto _ : state) {
    auto runner = open_or_skip(state);
    if (!runner) return;
    gen::FuzzOptions o;
    o.invariants = {"differential"};
    o.seed = 20261124;
    o.count = 400;
    o.jobs = static_cast<uint32_t>(state.range(0));
    o.runner = runner.get();
    o.runner_factory = [] {
      auto opened = runners::open_runner(runner_file());
      return std::get<std::unique_ptr<runners::Runner>>(std::move(opened));
    };
    r = gen::fuzz(o, [](const std::string&) {});
    runner->shutdown();
  }
  if (!r.failures.empty() || !r.errors.empty()) {
    state.SkipWithError("the differential fuzz found a failure or an error: run simtspec fuzz");
    return;
  }
  state.counters["programs"] = static_cast<double>(r.programs);
  state.counters["unsupported"] = static_cast<double>(r.stats["differential"].unsupported);
  state.counters["programs_per_s"] = static_cast<double>(r.programs) / r.seconds;
}
BENCHMARK(BM_DifferentialFuzz)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

}  // namespace
