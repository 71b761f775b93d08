// Executor throughput benchmarks (spec/execution.md, exec.step).
//
// Each benchmark times whole launches of a small generated program: Machine
// construction plus Machine::run(). The programs are long enough (milliseconds)
// that construction is noise; BM_Construct measures it alone to show that. Every
// program is generated together with a C++ model of what it computes: the model
// gives the expected `out` buffer (checked before timing) and the payload counts.
//
// Counters, all per second of measured time over whole runs unless noted:
//   lane_ops_per_second         Outcome::lane_ops: every committed instruction
//                               (ALU, compare, branch, mask stack, store, exit)
//                               times its active lanes, as the executor counts them.
//   steps_per_second            Outcome::steps: committed warp instructions.
//   vector_lane_ops_per_second  only the vector ALU instructions of the loop body
//                               (the payload), times the lanes that ran them, from
//                               the model: no loop control, compares or masks.
//   avg_active_lanes            lane_ops / steps (not a rate): mask occupancy.
//   steps_per_run               committed instructions per launch (not a rate).
//
// BM_PartialMask/<op>/wave:W/active:P times one kind of vector instruction with
// P% of the lanes active against the same program with every lane active; see
// the comment above it for its counters.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/machine.h"
#include "host/host.h"
#include "sysroutine.h"

namespace {

using simt::exec::Machine;
using simt::exec::Outcome;
using simt::exec::Program;
using simt::exec::Status;

// ---- a tiny model of the vector ALU instructions the generated programs use ----------
enum class Op : uint8_t { Add, Sub, Mul, MulHiU, Xor, And, Or, Shl, Shr, Sra, Min, MaxU };

constexpr int kLane = -1;  // operand a is %lane
constexpr int kImm = -2;   // operand b is the immediate
constexpr int kRegs = 32;

// d = op(a, b) on vector registers; b may be an immediate.
struct Alu {
  Op op;
  int d, a, b;
  uint32_t imm;
};

Alu vv(Op op, int d, int a, int b) {
  return Alu{op, d, a, b, 0};
}
Alu vi(Op op, int d, int a, uint32_t imm) {
  return Alu{op, d, a, kImm, imm};
}

const char* mnemonic(Op op) {
  switch (op) {
    case Op::Add:
      return "add";
    case Op::Sub:
      return "sub";
    case Op::Mul:
      return "mul";
    case Op::MulHiU:
      return "mulhi.u";
    case Op::Xor:
      return "xor";
    case Op::And:
      return "and";
    case Op::Or:
      return "or";
    case Op::Shl:
      return "shl";
    case Op::Shr:
      return "shr";
    case Op::Sra:
      return "sra";
    case Op::Min:
      return "min";
    case Op::MaxU:
      return "max.u";
  }
  return "nop";
}

uint32_t apply(Op op, uint32_t a, uint32_t b) {
  switch (op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
      return a - b;
    case Op::Mul:
      return a * b;
    case Op::MulHiU:
      return static_cast<uint32_t>((uint64_t{a} * uint64_t{b}) >> 32);
    case Op::Xor:
      return a ^ b;
    case Op::And:
      return a & b;
    case Op::Or:
      return a | b;
    case Op::Shl:
      return a << (b & 31);
    case Op::Shr:
      return a >> (b & 31);
    case Op::Sra:
      return static_cast<uint32_t>(static_cast<int32_t>(a) >> (b & 31));
    case Op::Min:
      return static_cast<int32_t>(a) < static_cast<int32_t>(b) ? a : b;
    case Op::MaxU:
      return a > b ? a : b;
  }
  return 0;
}

using Regs = std::array<uint32_t, kRegs>;  // one lane's vector registers

void model(const Alu& x, Regs& r, uint32_t lane) {
  uint32_t a = x.a == kLane ? lane : r[static_cast<size_t>(x.a)];
  uint32_t b = x.b == kImm ? x.imm : r[static_cast<size_t>(x.b)];
  r[static_cast<size_t>(x.d)] = apply(x.op, a, b);
}

void model(const std::vector<Alu>& code, Regs& r, uint32_t lane) {
  for (const Alu& x : code) model(x, r, lane);
}

std::string text(const std::vector<Alu>& code, const char* indent) {
  auto reg = [](int r) { return r == kLane ? std::string("%lane") : "v" + std::to_string(r); };
  std::string s;
  for (const Alu& x : code) {
    s += indent;
    s += mnemonic(x.op);
    s += " v" + std::to_string(x.d) + ", " + reg(x.a) + ", ";
    s += x.b == kImm ? std::to_string(x.imm) : reg(x.b);
    s += '\n';
  }
  return s;
}

// Lane-dependent initial values of the state registers v1..v8.
const std::vector<Alu> kPrologue = {
    vi(Op::Mul, 1, kLane, 2654435761u), vi(Op::Add, 2, kLane, 0x01234567u),
    vi(Op::Xor, 3, kLane, 0x89ABCDEFu), vi(Op::Shl, 4, kLane, 3),
    vi(Op::Sub, 5, kLane, 12345),       vi(Op::Or, 6, kLane, 0x00F0F000u),
    vi(Op::Mul, 7, kLane, 40503),       vi(Op::Add, 8, kLane, 0x7FFFFFF0u),
};

// The ALU loop body: 32 vector instructions, a hash-round-like mix of add, sub,
// mul, mulhi, bitwise, shifts (rotates, xorshift) and min/max; state v1..v8,
// temporaries v9..v12. No division (it has a per-lane fault check).
const std::vector<Alu> kAluBody = {
    vi(Op::Mul, 9, 1, 0x85EBCA6Bu), vv(Op::Add, 2, 2, 9),           vv(Op::Xor, 10, 2, 3),
    vi(Op::Shl, 11, 10, 13),        vi(Op::Shr, 12, 10, 19),        vv(Op::Or, 3, 11, 12),
    vv(Op::Add, 4, 4, 3),           vv(Op::MulHiU, 9, 4, 5),        vv(Op::Xor, 5, 5, 9),
    vi(Op::Sra, 10, 5, 7),          vv(Op::Sub, 6, 6, 10),          vv(Op::Min, 11, 6, 7),
    vv(Op::MaxU, 12, 7, 8),         vv(Op::Add, 7, 11, 12),         vv(Op::And, 9, 7, 1),
    vv(Op::Xor, 8, 8, 9),           vi(Op::Add, 8, 8, 0x9E3779B9u), vi(Op::Shl, 10, 8, 7),
    vv(Op::Xor, 1, 1, 10),          vi(Op::Shr, 11, 1, 9),          vv(Op::Xor, 1, 1, 11),
    vi(Op::Shl, 12, 1, 8),          vv(Op::Xor, 1, 1, 12),          vv(Op::Mul, 9, 2, 6),
    vv(Op::Sub, 10, 9, 4),          vi(Op::Or, 11, 10, 1),          vv(Op::Mul, 5, 5, 11),
    vv(Op::Xor, 12, 3, 7),          vv(Op::Add, 6, 6, 12),          vv(Op::Min, 9, 4, 8),
    vv(Op::Sub, 3, 3, 9),           vi(Op::Mul, 4, 4, 0x27D4EB2Du),
};

// The two sides of the divergent loop's if/else (unequal on purpose).
const std::vector<Alu> kThen = {
    vi(Op::Mul, 9, 1, 0x85EBCA6Bu), vv(Op::Add, 2, 2, 9),    vv(Op::Xor, 10, 2, 3),
    vi(Op::Shl, 11, 10, 5),         vi(Op::Shr, 12, 10, 27), vv(Op::Or, 3, 11, 12),
    vv(Op::Add, 4, 4, 3),           vv(Op::MulHiU, 9, 4, 5), vv(Op::Xor, 5, 5, 9),
    vv(Op::Sub, 1, 1, 5),
};
const std::vector<Alu> kElse = {
    vv(Op::Xor, 9, 6, 1),  vi(Op::Sra, 10, 9, 3),           vv(Op::Min, 11, 10, 2),
    vv(Op::Add, 6, 6, 11), vi(Op::Mul, 12, 6, 0x27D4EB2Du), vv(Op::Xor, 1, 1, 12),
};

// v13 = v1 ^ ... ^ v<n>: the value each lane stores.
std::vector<Alu> fold(int n) {
  std::vector<Alu> code = {vv(Op::Xor, 13, 1, 2)};
  for (int r = 3; r <= n; ++r) code.push_back(vv(Op::Xor, 13, 13, r));
  return code;
}

// ---- benchmark cases ----------------------------------------------------------------
struct Case {
  std::shared_ptr<const Program> program;
  std::vector<uint32_t> expect;  // the `out` buffer, from the model
  uint64_t payload = 0;          // vector ALU lane-ops of the loop bodies per run, from the model
  std::string error;             // load failure
};

Case load(const std::string& src, uint32_t wave, bool livelock = true) {
  simt::host::LoadOptions opt;
  opt.cli.wave = wave;
  opt.cli.max_steps = uint64_t{1} << 40;
  opt.cli.livelock_check = livelock;
  auto r = simt::host::load(src, opt);
  Case c;
  if (!r.loaded)
    c.error = "program did not load:\n" + r.diags.format("bench");
  else
    c.program = r.loaded->program;
  return c;
}

constexpr uint32_t kAluIters = 4000;

// One or more warps, all lanes active: a scalar counted loop (add, cmp, cbr back
// edge: 3 instructions) around the 32-instruction ALU body.
// Its source: `.warps`, the `out` buffer, the loop, the fold and the store.
std::string alu_loop_source(uint32_t warps, uint32_t iters) {
  std::string src = ".warps " + std::to_string(warps) + "\n";
  src += ".buffer out u32[threads] out\n";
  src += text(kPrologue, "    ");
  src += "    mov s0, 0\n";
  src += "top:\n";
  src += text(kAluBody, "    ");
  src += "    add s0, s0, 1\n";
  src += "    cmp.lt p0, s0, " + std::to_string(iters) + "\n";
  src += "    cbr p0, top\n";
  src += text(fold(8), "    ");
  src += "    mul s1, %gwarp, %wave\n";
  src += "    add v14, %lane, s1\n";
  src += "    shl v14, v14, 2\n";
  src += "    st out[v14], v13\n";
  src += "    exit\n";
  return src;
}

Case alu_loop(uint32_t wave, uint32_t warps, uint32_t iters, bool livelock = true) {
  Case c = load(alu_loop_source(warps, iters), wave, livelock);
  for (uint32_t l = 0; l < wave; ++l) {
    Regs r{};
    model(kPrologue, r, l);
    for (uint32_t i = 0; i < iters; ++i) model(kAluBody, r, l);
    model(fold(8), r, l);
    c.expect.push_back(r[13]);
  }
  for (uint32_t g = 1; g < warps; ++g)
    for (uint32_t l = 0; l < wave; ++l) c.expect.push_back(c.expect[l]);
  c.payload = uint64_t{iters} * kAluBody.size() * wave * warps;
  return c;
}

// Per-lane trip counts from a fixed pseudo-random sequence, in [256, 2304).
uint32_t trip_count(uint32_t lane) {
  uint32_t x = (lane + 1) * 0x9E3779B9u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return 256 + x % 2048;
}

// One warp; each lane loads its own trip count, and each iteration takes one side
// of an if/else depending on (i ^ lane) & 1: the mask is partial almost always.
Case divergent_loop(uint32_t wave) {
  std::string src = ".buffer trips u32[wave] in = ";
  for (uint32_t l = 0; l < wave; ++l) src += (l ? ", " : "") + std::to_string(trip_count(l));
  src += "\n.buffer out u32[wave] out\n";
  src += "    shl v30, %lane, 2\n";
  src += "    ld v20, trips[v30]\n";
  src += text(kPrologue, "    ");
  src += "    mov v21, 0\n";
  src += "    loop\n";
  src += "      cmp.ge p0, v21, v20\n";
  src += "      break p0\n";
  src += "      xor v22, v21, %lane\n";
  src += "      and v22, v22, 1\n";
  src += "      cmp.eq p1, v22, 0\n";
  src += "      if p1\n";
  src += text(kThen, "        ");
  src += "      else\n";
  src += text(kElse, "        ");
  src += "      endif\n";
  src += "      add v21, v21, 1\n";
  src += "    endloop\n";
  src += text(fold(6), "    ");
  src += "    st out[v30], v13\n";
  src += "    exit\n";
  Case c = load(src, wave);
  for (uint32_t l = 0; l < wave; ++l) {
    Regs r{};
    model(kPrologue, r, l);
    for (uint32_t i = 0; i < trip_count(l); ++i) {
      const auto& side = ((i ^ l) & 1) == 0 ? kThen : kElse;
      model(side, r, l);
      c.payload += side.size();
    }
    model(fold(6), r, l);
    c.expect.push_back(r[13]);
  }
  return c;
}

// Empty if the outcome is the expected one, else what is wrong.
std::string check(const Outcome& o, const std::vector<uint32_t>& expect) {
  if (o.status != Status::Completed)
    return "launch ended with status " + std::string(simt::exec::status_name(o.status));
  for (const auto& b : o.buffers) {
    if (b.name != "out") continue;
    if (b.bytes.size() != expect.size() * 4)
      return "out has " + std::to_string(b.bytes.size()) + " bytes, expected " +
             std::to_string(expect.size() * 4);
    for (size_t i = 0; i < expect.size(); ++i) {
      uint32_t got;
      std::memcpy(&got, b.bytes.data() + i * 4, 4);
      if (got != expect[i])
        return "out[" + std::to_string(i) + "] = " + std::to_string(got) + ", expected " +
               std::to_string(expect[i]);
    }
    return {};
  }
  return "no out buffer";
}

// Times whole launches (construction + run) of a checked case.
void run_case(benchmark::State& state, const Case& c) {
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  {
    Machine m(c.program);
    std::string err = check(m.run(), c.expect);
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      return;
    }
  }
  uint64_t steps = 0, lane_ops = 0, runs = 0;
  for (auto _ : state) {
    Machine m(c.program);
    Outcome o = m.run();
    if (o.status != Status::Completed) {
      state.SkipWithError("launch did not complete");
      break;
    }
    steps += o.steps;
    lane_ops += o.lane_ops;
    ++runs;
    benchmark::DoNotOptimize(o.buffers.data());
  }
  using benchmark::Counter;
  state.counters["lane_ops_per_second"] = Counter(static_cast<double>(lane_ops), Counter::kIsRate);
  state.counters["steps_per_second"] = Counter(static_cast<double>(steps), Counter::kIsRate);
  state.counters["vector_lane_ops_per_second"] =
      Counter(static_cast<double>(c.payload * runs), Counter::kIsRate);
  state.counters["avg_active_lanes"] =
      steps ? static_cast<double>(lane_ops) / static_cast<double>(steps) : 0.0;
  state.counters["steps_per_run"] = Counter(static_cast<double>(steps), Counter::kAvgIterations);
}

uint32_t arg(const benchmark::State& state) {
  return static_cast<uint32_t>(state.range(0));
}

void BM_AluLoop(benchmark::State& state) {
  run_case(state, alu_loop(arg(state), 1, kAluIters));
}
BENCHMARK(BM_AluLoop)->ArgName("wave")->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

// The same with livelock detection off (it is on by default): its per-step cost.
void BM_AluLoopNoLivelock(benchmark::State& state) {
  run_case(state, alu_loop(arg(state), 1, kAluIters, false));
}
BENCHMARK(BM_AluLoopNoLivelock)->ArgName("wave")->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

void BM_DivergentLoop(benchmark::State& state) {
  run_case(state, divergent_loop(arg(state)));
}
BENCHMARK(BM_DivergentLoop)->ArgName("wave")->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

// N warps of one workgroup (round_robin), wave 32, splitting the single-warp
// ALU loop's iterations: the same payload, plus scheduler overhead and a larger state.
void BM_MultiWarp(benchmark::State& state) {
  uint32_t warps = arg(state);
  run_case(state, alu_loop(32, warps, kAluIters / warps));
}
BENCHMARK(BM_MultiWarp)->ArgName("warps")->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// Machine construction alone for the ALU loop program (one warp), to show it is
// negligible next to a run.
void BM_Construct(benchmark::State& state) {
  Case c = alu_loop(arg(state), 1, kAluIters);
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  for (auto _ : state) {
    Machine m(c.program);
    benchmark::DoNotOptimize(&m);
  }
}
BENCHMARK(BM_Construct)->ArgName("wave")->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

// ---- preemption (spec/preempt.md) ---------------------------------------------------
//
// BM_PreemptSaveRestore/wave:W/warps:N: the ALU loop of N warps (one workgroup, 4 KiB
// of SLM) with the standard system routine appended, run with a host script of
// kPreemptions flow-A preemptions at step 1000 and, interleaved run by run, as a
// launch of the same program without a host script.
// Counters (means over the runs):
//   us_per_preemption         (preempted launch - plain launch) / kPreemptions
//   ns_per_warp_save_restore  the same per warp: one save and one restore of a slot
//   image_bytes               the size of one image
// The reported Time is the preempted launch (manual timing).
constexpr uint32_t kPreemptions = 20;

void preempt_case(benchmark::State& state) {
  const auto wave = static_cast<uint32_t>(state.range(0));
  const auto warps = static_cast<uint32_t>(state.range(1));
  // The ALU loop (100 iterations) with 4 KiB of SLM and the system routine after it.
  std::string src =
      ".slm 4096\n.sys_save sys_save\n.sys_restore sys_restore\n" + alu_loop_source(warps, 100);
  src += simt::gen::kSysRoutine;  // suites/lib/sysroutine.simtlib
  simt::host::LoadOptions opt;
  opt.cli.wave = wave;
  auto plain = simt::host::load(src, opt);
  for (uint32_t i = 0; i < kPreemptions; ++i) {
    simt::syntax::HostStep h;
    h.kind = simt::syntax::HostKind::Preempt;
    h.step = 1000;
    opt.host.push_back(h);
  }
  auto pre = simt::host::load(src, opt);
  if (!plain.loaded || !pre.loaded) {
    state.SkipWithError("program did not load");
    return;
  }
  double t_pre = 0, t_plain = 0;
  uint64_t runs = 0, image = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    Machine a(pre.loaded->program);
    Outcome oa = a.run();
    auto t1 = std::chrono::steady_clock::now();
    Machine b(plain.loaded->program);
    Outcome ob = b.run();
    auto t2 = std::chrono::steady_clock::now();
    if (!oa.same_result(ob) || a.preemptions() != kPreemptions) {
      state.SkipWithError("the preempted launch differs from the plain one");
      return;
    }
    image = a.last_image().size();
    const double d_pre = std::chrono::duration<double>(t1 - t0).count();
    t_pre += d_pre;
    t_plain += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(d_pre);
    ++runs;
  }
  const double per = (t_pre - t_plain) / static_cast<double>(runs * kPreemptions);
  state.counters["us_per_preemption"] = per * 1e6;
  state.counters["ns_per_warp_save_restore"] = per * 1e9 / warps;
  state.counters["image_bytes"] = static_cast<double>(image);
}
BENCHMARK(preempt_case)
    ->Name("BM_PreemptSaveRestore")
    ->ArgNames({"wave", "warps"})
    ->ArgsProduct({{32, 64}, {1, 8, 64}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// ---- partial masks (exec.form, alu.form) ---------------------------------------------
//
// BM_PartialMask/<op>/wave:W/active:P runs a counted loop around a block of kBlock
// vector instructions of one kind with exec set (mov %exec_lo / %exec_hi) to a fixed
// pseudo-random mask of round(P% of W) lanes, and, interleaved run by run with it,
// the same program with every lane active. Both programs end by storing every
// register of every lane (exec restored), so the checked `out` buffer also proves
// that the inactive lanes kept their values. Counters (means over the runs):
//   ns_per_insn             time per vector instruction at P% active lanes
//   ns_per_insn_all_active  the same for the all-active program
//   ratio_to_all_active     ns_per_insn / ns_per_insn_all_active
// Each time covers a whole launch, so it includes the loop's 3 scalar control
// instructions per kBlock vector ones and the short prologue and epilogue; they
// cost the same with any mask and dilute the ratio by a few percent at most.
// The reported Time is the partial-mask launch alone (manual timing).

// A warp of the model: every lane's vector registers and the predicates p1..p3.
struct WarpModel {
  uint32_t wave = 0;
  std::vector<Regs> v;          // v[lane][register]
  std::array<uint64_t, 4> p{};  // p[k]: bit l is lane l's pK (p0 is loop control)
  bool pbit(int k, uint32_t l) const { return (p[static_cast<size_t>(k)] >> l) & 1; }
};

// One vector instruction: its text and what it does to the active lanes of the model.
struct VecInsn {
  std::string text;
  std::function<void(WarpModel&, uint64_t exec)> run;
};

bool on(uint64_t exec, uint32_t l) {
  return (exec >> l) & 1;
}

std::string vr(int r) {
  return "v" + std::to_string(r);
}

VecInsn alu(const Alu& x) {
  return {text({x}, ""), [x](WarpModel& m, uint64_t exec) {
            for (uint32_t l = 0; l < m.wave; ++l)
              if (on(exec, l)) model(x, m.v[l], l);
          }};
}

VecInsn not_insn(int d, int a) {  // alu.not
  return {"not " + vr(d) + ", " + vr(a) + "\n", [d, a](WarpModel& m, uint64_t exec) {
            for (uint32_t l = 0; l < m.wave; ++l)
              if (on(exec, l)) m.v[l][static_cast<size_t>(d)] = ~m.v[l][static_cast<size_t>(a)];
          }};
}

VecInsn sel_insn(int d, int p, int a, int b) {  // alu.sel
  return {"sel " + vr(d) + ", p" + std::to_string(p) + ", " + vr(a) + ", " + vr(b) + "\n",
          [d, p, a, b](WarpModel& m, uint64_t exec) {
            for (uint32_t l = 0; l < m.wave; ++l)
              if (on(exec, l))
                m.v[l][static_cast<size_t>(d)] = m.v[l][static_cast<size_t>(m.pbit(p, l) ? a : b)];
          }};
}

VecInsn shfl_xor_insn(int d, int a, uint32_t k) {  // xlane.shfl, xlane.inactive
  return {"shfl.xor " + vr(d) + ", " + vr(a) + ", " + std::to_string(k) + "\n",
          [d, a, k](WarpModel& m, uint64_t exec) {
            std::vector<uint32_t> src(m.wave);
            for (uint32_t l = 0; l < m.wave; ++l) src[l] = m.v[l][static_cast<size_t>(a)];
            for (uint32_t l = 0; l < m.wave; ++l) {
              uint32_t i = l ^ k;
              if (on(exec, l))
                m.v[l][static_cast<size_t>(d)] = i < m.wave && on(exec, i) ? src[i] : 0;
            }
          }};
}

VecInsn cmp_lt_insn(int p, int a, int b) {  // alu.cmp, signed
  return {"cmp.lt p" + std::to_string(p) + ", " + vr(a) + ", " + vr(b) + "\n",
          [p, a, b](WarpModel& m, uint64_t exec) {
            uint64_t& bits = m.p[static_cast<size_t>(p)];
            for (uint32_t l = 0; l < m.wave; ++l) {
              if (!on(exec, l)) continue;
              bool lt = static_cast<int32_t>(m.v[l][static_cast<size_t>(a)]) <
                        static_cast<int32_t>(m.v[l][static_cast<size_t>(b)]);
              bits = (bits & ~(uint64_t{1} << l)) | (uint64_t{lt} << l);
            }
          }};
}

enum class Kind : uint8_t { Add, MulImm, Not, Sel, ShflXor, CmpLt, Mix };
constexpr Kind kKinds[] = {Kind::Add,     Kind::MulImm, Kind::Not, Kind::Sel,
                           Kind::ShflXor, Kind::CmpLt,  Kind::Mix};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Add:
      return "add";
    case Kind::MulImm:
      return "mul_imm";
    case Kind::Not:
      return "not";
    case Kind::Sel:
      return "sel";
    case Kind::ShflXor:
      return "shfl_xor";
    case Kind::CmpLt:
      return "cmp_lt";
    case Kind::Mix:
      return "mix";
  }
  return "?";
}

constexpr int kBlock = 64;  // vector instructions per loop iteration
constexpr uint32_t kPartialIters = 1000;

// State register i of 8 (v1..v8).
int st(int i) {
  return 1 + i % 8;
}

// The loop body: kBlock instructions of one kind over the state registers v1..v8
// (the mix also uses the temporaries v9..v12).
std::vector<VecInsn> block(Kind k) {
  std::vector<VecInsn> b;
  for (int i = 0; i < kBlock; ++i) {
    switch (k) {
      case Kind::Add:  // d = a: the destination aliases a source
        b.push_back(alu(vv(Op::Add, st(i), st(i), st(i + 3))));
        break;
      case Kind::MulImm:
        b.push_back(
            alu(vi(Op::Mul, st(i), st(i + 5), 0x9E3779B1u + 2u * static_cast<uint32_t>(i))));
        break;
      case Kind::Not:
        b.push_back(not_insn(st(i), st(i + 1)));
        break;
      case Kind::Sel:
        b.push_back(sel_insn(st(i), 1 + i % 3, st(i + 1), st(i + 2)));
        break;
      case Kind::ShflXor:
        b.push_back(shfl_xor_insn(st(i), st(i + 1), 1u << (i % 5)));
        break;
      case Kind::CmpLt:
        b.push_back(cmp_lt_insn(1 + i % 3, st(i), st(i + 3)));
        break;
      case Kind::Mix:
        b.push_back(alu(kAluBody[static_cast<size_t>(i) % kAluBody.size()]));
        break;
    }
  }
  return b;
}

// Lane-dependent predicates p1..p3 (computed with every lane active).
std::vector<VecInsn> pred_prologue() {
  return {cmp_lt_insn(1, 1, 2), cmp_lt_insn(2, 3, 4), cmp_lt_insn(3, 5, 6)};
}

// round(pct% of wave) lanes, chosen by a fixed pseudo-random shuffle.
uint64_t partial_mask(uint32_t wave, uint32_t pct) {
  uint32_t k = (wave * pct + 50) / 100;
  std::vector<uint32_t> lanes(wave);
  for (uint32_t l = 0; l < wave; ++l) lanes[l] = l;
  uint64_t x = 0x5DEECE66Dull * (wave * 101 + pct);
  for (uint32_t i = wave - 1; i > 0; --i) {  // Fisher-Yates with a 64-bit LCG
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(lanes[i], lanes[(x >> 33) % (i + 1)]);
  }
  uint64_t m = 0;
  for (uint32_t i = 0; i < k; ++i) m |= uint64_t{1} << lanes[i];
  return m;
}

uint64_t all_lanes(uint32_t wave) {
  return wave == 64 ? ~0ull : (uint64_t{1} << wave) - 1;
}

std::string hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(x));
  return buf;
}

// Writes exec; with wave 64 both halves.
std::string set_exec(uint32_t wave, uint64_t exec) {
  if (wave <= 32) return "    mov %exec, " + hex(exec) + "\n";
  return "    mov %exec_lo, " + hex(exec & 0xffffffffu) + "\n    mov %exec_hi, " + hex(exec >> 32) +
         "\n";
}

constexpr int kSlots = 15;  // stored per lane: v1..v12, then p1..p3 as 0/1

Case partial_case(Kind kind, uint32_t wave, uint64_t exec) {
  const std::vector<VecInsn> body = block(kind);
  const std::vector<VecInsn> preds = pred_prologue();
  std::string src = ".buffer out u32[" + std::to_string(kSlots * wave) + "] out\n";
  src += "    shl v14, %lane, 2\n";
  src += text(kPrologue, "    ");
  for (const auto& x : preds) src += "    " + x.text;
  src += set_exec(wave, exec);
  src += "    mov s0, 0\n";
  src += "top:\n";
  for (const auto& x : body) src += "    " + x.text;
  src += "    add s0, s0, 1\n";
  src += "    cmp.lt p0, s0, " + std::to_string(kPartialIters) + "\n";
  src += "    cbr p0, top\n";
  src += set_exec(wave, all_lanes(wave));
  for (int r = 1; r <= 12; ++r)
    src += "    st out[v14+" + std::to_string((r - 1) * wave * 4) + "], " + vr(r) + "\n";
  for (int p = 1; p <= 3; ++p) {
    src += "    sel v15, p" + std::to_string(p) + ", 1, 0\n";
    src += "    st out[v14+" + std::to_string((11 + p) * wave * 4) + "], v15\n";
  }
  src += "    exit\n";
  Case c = load(src, wave);

  WarpModel m;
  m.wave = wave;
  m.v.assign(wave, Regs{});
  for (uint32_t l = 0; l < wave; ++l) model(kPrologue, m.v[l], l);
  for (const auto& x : preds) x.run(m, all_lanes(wave));
  for (uint32_t i = 0; i < kPartialIters; ++i)
    for (const auto& x : body) x.run(m, exec);
  c.expect.assign(size_t{kSlots} * wave, 0);
  for (uint32_t l = 0; l < wave; ++l) {
    for (int r = 1; r <= 12; ++r)
      c.expect[static_cast<size_t>(r - 1) * wave + l] = m.v[l][static_cast<size_t>(r)];
    for (int p = 1; p <= 3; ++p)
      c.expect[static_cast<size_t>(11 + p) * wave + l] = m.pbit(p, l) ? 1 : 0;
  }
  c.payload = uint64_t{kPartialIters} * kBlock;  // vector instructions per run
  return c;
}

// Seconds for one launch (construction + run); negative if it did not complete.
double timed_run(const Case& c) {
  auto t0 = std::chrono::steady_clock::now();
  Machine m(c.program);
  Outcome o = m.run();
  auto t1 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(o.buffers.data());
  if (o.status != Status::Completed) return -1;
  return std::chrono::duration<double>(t1 - t0).count();
}

void partial_mask_case(benchmark::State& state, Kind kind) {
  const uint32_t wave = static_cast<uint32_t>(state.range(0));
  const uint32_t pct = static_cast<uint32_t>(state.range(1));
  const uint64_t exec = partial_mask(wave, pct);
  const Case part = partial_case(kind, wave, exec);
  const Case full = partial_case(kind, wave, all_lanes(wave));
  for (const Case* c : {&part, &full}) {
    std::string err = c->error;
    if (err.empty()) err = check(Machine(c->program).run(), c->expect);
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      return;
    }
  }
  state.SetLabel("exec=" + hex(exec));
  double t_part = 0, t_full = 0;
  uint64_t runs = 0;
  for (auto _ : state) {
    // Alternate which launch goes first, so neither always runs on a warm cache.
    double tp, tf;
    if (runs % 2 == 0) {
      tp = timed_run(part);
      tf = timed_run(full);
    } else {
      tf = timed_run(full);
      tp = timed_run(part);
    }
    if (tp < 0 || tf < 0) {
      state.SkipWithError("launch did not complete");
      break;
    }
    state.SetIterationTime(tp);
    t_part += tp;
    t_full += tf;
    ++runs;
  }
  if (runs == 0) return;
  const double insns = static_cast<double>(part.payload * runs);
  state.counters["ns_per_insn"] = t_part * 1e9 / insns;
  state.counters["ns_per_insn_all_active"] = t_full * 1e9 / insns;
  state.counters["ratio_to_all_active"] = t_part / t_full;
}

[[maybe_unused]] const bool kPartialMaskRegistered = [] {
  for (Kind k : kKinds) {
    std::string name = std::string("BM_PartialMask/") + kind_name(k);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [k](benchmark::State& s) { partial_mask_case(s, k); })
        ->ArgNames({"wave", "active"})
        ->ArgsProduct({{32, 64}, {25, 50, 90}})
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
