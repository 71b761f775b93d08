// The cost of the trap mechanism (spec/trap.md). Run e.g.
//   build/<dir>/bench/trap_bench --benchmark_min_time=1
//
// BM_Loop/<variant>/warps:N times whole launches of one loop of 2000 iterations
// (six instructions each) per warp, checked against its result, in four forms:
//   plain       no handler, no host script: the baseline;
//   handler     `.handler` installed, no event: what installing a handler costs
//               (nothing on the step path: entry is only reached through an event);
//   host        a host script whose only action lies past the end of the run:
//               every step does the boundary's work (trap.boundary), the price of
//               carrying a script;
//   syscall     the loop makes a system call per iteration whose handler clears
//               and returns at once: each iteration is a whole entry, handler
//               (2 steps per warp), join and resume (trap.entry .. trap.resume).
// BM_SingleStep/warps:N: the plain loop with single-step on (trap.single_step)
// and a handler that returns at once: one trap per round of N user steps.
// Counters: steps_per_second (committed instructions, handler ones included),
// entries_per_second (handler entries) where there are entries.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "exec/machine.h"
#include "host/host.h"

namespace {

using simt::exec::Machine;
using simt::exec::Status;

constexpr int kIters = 2000;

enum class Variant { Plain, Handler, Host, Syscall, SingleStep };

std::shared_ptr<const simt::exec::Program> build(Variant v, uint32_t warps, std::string& err) {
  std::string text = ".warps " + std::to_string(warps) + "\n.max_steps 100000000\n";
  if (v != Variant::Plain) text += ".handler H\n";
  text += ".buffer out u32[" + std::to_string(warps) + "] out\n";
  text += "    mov s1, 0\n    mov s2, 0\nL:\n    add s2, s2, s1\n    xor s2, s2, 5\n";
  text += v == Variant::Syscall ? "    sys 3\n" : "    nop\n";
  text += "    add s1, s1, 1\n    cmp.lt p0, s1, " + std::to_string(kIters) +
          "\n    cbr p0, L\n    mul s3, %gwarp, 4\n    st out[s3], s2\n    exit\n";
  if (v != Variant::Plain) text += "H:\n    tclear\n    tret\n";
  simt::host::LoadOptions opt;
  if (v == Variant::Host || v == Variant::SingleStep) {
    simt::syntax::HostStep h;
    if (v == Variant::Host) {
      h.step = 99999999;  // never reached: the script stays pending all run long
      h.kind = simt::syntax::HostKind::Interrupt;
    } else {
      h.step = 0;
      h.kind = simt::syntax::HostKind::SingleStep;
      h.on = true;
    }
    opt.host.push_back(h);
  }
  auto r = simt::host::load(text, opt);
  if (!r.loaded) {
    err = r.diags.format("bench");
    return nullptr;
  }
  return r.loaded->program;
}

// The value each warp stores: the loop's result.
uint32_t expected() {
  uint32_t s2 = 0;
  for (uint32_t s1 = 0; s1 < kIters; ++s1) s2 = (s2 + s1) ^ 5;
  return s2;
}

void run(benchmark::State& state, Variant v) {
  const auto warps = static_cast<uint32_t>(state.range(0));
  std::string err;
  auto prog = build(v, warps, err);
  if (!prog) {
    state.SkipWithError(err.c_str());
    return;
  }
  uint64_t steps = 0, entries = 0;
  for (auto _ : state) {
    Machine m(prog);
    uint64_t n = 0;
    m.set_trace(
        [&](const simt::exec::TraceRecord& r) { n += r.kind == simt::exec::TraceKind::Enter; });
    auto o = m.run();
    auto words = o.words("out");
    if (o.status != Status::Completed || !words || (*words)[0] != expected()) {
      state.SkipWithError("the launch did not compute the loop's result");
      return;
    }
    steps += o.steps;
    entries += n;
  }
  using benchmark::Counter;
  state.counters["steps_per_second"] = Counter(static_cast<double>(steps), Counter::kIsRate);
  if (entries)
    state.counters["entries_per_second"] = Counter(static_cast<double>(entries), Counter::kIsRate);
}

void BM_Loop(benchmark::State& state, Variant v) {
  run(state, v);
}
BENCHMARK_CAPTURE(BM_Loop, plain, Variant::Plain)->ArgName("warps")->Arg(1)->Arg(8);
BENCHMARK_CAPTURE(BM_Loop, handler, Variant::Handler)->ArgName("warps")->Arg(1)->Arg(8);
BENCHMARK_CAPTURE(BM_Loop, host, Variant::Host)->ArgName("warps")->Arg(1)->Arg(8);
BENCHMARK_CAPTURE(BM_Loop, syscall, Variant::Syscall)->ArgName("warps")->Arg(1)->Arg(8);

void BM_SingleStep(benchmark::State& state) {
  run(state, Variant::SingleStep);
}
BENCHMARK(BM_SingleStep)->ArgName("warps")->Arg(1)->Arg(8);

}  // namespace
