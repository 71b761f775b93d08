// The results store's write cost (spec/results.md, results.store.concurrency):
// 1,000 records per iteration, recorded as `simtspec test` records them (a run
// begun, the records added in batches, the run finished), passing records (a row
// each) and failing ones (a row and the whole record). The store file's size per
// 1,000 records is reported as a counter. Run e.g.
//   build/release/bench/store_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "store.h"

namespace {

namespace fs = std::filesystem;
using simt::json::Value;

// A record shaped like the harness's (results.record): a failing one carries its
// outcomes and a trace, as the suite's failures do.
Value make_record(int i, bool fail) {
  Value r;
  r["id"] = "bench.test_" + std::to_string(i / 8);
  r["title"] = "a benchmark record standing for one test configuration";
  r["file"] = "suites/bench/test_" + std::to_string(i / 8) + ".simt";
  r["config"]["wave"] = 1 << (i % 8);
  r["config_key"] = "wave=" + std::to_string(1 << (i % 8));
  r["clauses"] = simt::json::Array{"alu.add", "state.reg.width"};
  r["status"] = fail ? "fail" : "pass";
  if (fail) r["message"] = "buffer 'out' element 4 (lane 4 of warp 0) is 35, expected 44";
  r["checks"] = 64;
  r["duration_ms"] = 0.25;
  if (fail) {
    simt::json::Array words, trace;
    for (int k = 0; k < 64; ++k) words.emplace_back(k * 7);
    r["expected"]["buffers"]["out"] = words;
    r["actual"]["buffers"]["out"] = words;
    for (int k = 0; k < 40; ++k)
      trace.emplace_back("step " + std::to_string(k) + ": warp 0 pc 12 add r1, r2, r3 exec ffff");
    r["trace"] = trace;
  }
  return r;
}

void write_runs(benchmark::State& state, bool fail) {
  const fs::path p = fs::temp_directory_path() / ("store_bench_" + std::to_string(::getpid()) +
                                                  (fail ? "_fail.db" : "_pass.db"));
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(p.string() + ext);
  auto opened = simt::reports::Store::open(p.string());
  if (!std::holds_alternative<simt::reports::Store>(opened)) {
    state.SkipWithError(std::get<std::string>(opened).c_str());
    return;
  }
  auto& store = std::get<simt::reports::Store>(opened);
  std::vector<Value> records;
  for (int i = 0; i < 1000; ++i) records.push_back(make_record(i, fail));
  simt::reports::RunInfo info;
  info.kind = "test";
  info.impl_name = "bench";
  info.started = "2026-11-28T00:00:00Z";
  Value summary;
  summary["selected"] = 1000;
  summary["run"] = 1000;
  summary[fail ? "fail" : "pass"] = 1000;
  int64_t runs = 0;
  for (auto _ : state) {
    int64_t id = store.begin_run(info);
    for (const auto& r : records) store.add(id, r);
    store.finish(id, summary, "complete");
    ++runs;
  }
  state.SetItemsProcessed(state.iterations() * 1000);
  auto size = [](const std::string& f) {
    std::error_code ec;
    auto n = fs::file_size(f, ec);
    return ec ? 0 : n;
  };
  const auto bytes = size(p.string()) + size(p.string() + "-wal");
  state.counters["bytes_per_1000"] = static_cast<double>(bytes) / static_cast<double>(runs);
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(p.string() + ext);
}

void BM_StoreWritePass1000(benchmark::State& state) {
  write_runs(state, false);
}
void BM_StoreWriteFail1000(benchmark::State& state) {
  write_runs(state, true);
}
BENCHMARK(BM_StoreWritePass1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StoreWriteFail1000)->Unit(benchmark::kMillisecond);

}  // namespace
