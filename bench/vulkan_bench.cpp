// What the Vulkan runner's steps cost (runners/vulkan): GLSL to SPIR-V in process,
// pipeline creation, the first dispatch of a new shader (where lavapipe compiles
// it with LLVM) and later dispatches of a tiny shader. Run on lavapipe with the
// environment VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json and
// MESA_SHADER_CACHE_DISABLE=true: build/<dir>/bench/vulkan_bench
// (LP_NUM_THREADS=0 runs shaders on the calling thread: try it for tiny dispatches).
// Without a Vulkan device every benchmark reports an error and nothing is timed.
//
// Counters (not rates; measured once per process, outside the timed loops):
//   first_compile_ms  BM_GlslCompile: the process's first compile, which builds
//                     glslang's tables.
//   device_ms         BM_CreatePipeline: the first Device::get() (instance,
//                     physical device, logical device, queue).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "device.h"
#include "glsl.h"

namespace {

using simt::vulkan::Buffer;
using simt::vulkan::Device;
using simt::vulkan::glsl_compile;
using simt::vulkan::Pipeline;
using namespace std::chrono_literals;

// A small shader of the kind the translator will emit: a subgroup operation, a
// branch, an atomic. `salt` makes each variant a different shader.
std::string small_shader(uint32_t salt) {
  return R"(#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer In { uint src[]; };
layout(set = 0, binding = 1) buffer Out { uint counter; uint dst[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint v = src[i] * 3u + )" +
         std::to_string(salt) + R"(u;
  if ((v & 1u) == 0u) {
    v += subgroupBallotBitCount(subgroupBallot(true));
  } else {
    v ^= gl_SubgroupInvocationID;
  }
  dst[i] = v + atomicAdd(counter, 1u);
}
)";
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The time of the process's first Device::get() (instance and device creation).
double device_ms() {
  static const double ms = [] {
    const auto start = std::chrono::steady_clock::now();
    auto d = Device::get();
    return ms_since(start);
  }();
  return ms;
}

Device* device_or_skip(benchmark::State& state) {
  device_ms();
  auto d = Device::get();
  if (!d.ok()) {
    state.SkipWithError(d.error().to_string().c_str());
    return nullptr;
  }
  return d.value();
}

void BM_GlslCompile(benchmark::State& state) {
  static const double first_ms = [] {
    const auto start = std::chrono::steady_clock::now();
    auto first = glsl_compile(small_shader(0));
    return first.ok() ? ms_since(start) : -1.0;
  }();
  if (first_ms < 0) {
    state.SkipWithError(glsl_compile(small_shader(0)).error().to_string().c_str());
    return;
  }
  const std::string src = small_shader(1);
  for (auto _ : state) {
    auto spirv = glsl_compile(src);
    benchmark::DoNotOptimize(spirv.ok());
  }
  state.counters["first_compile_ms"] = first_ms;
}
BENCHMARK(BM_GlslCompile)->Unit(benchmark::kMillisecond);

void BM_CreatePipeline(benchmark::State& state) {
  Device* dev = device_or_skip(state);
  if (dev == nullptr) return;
  auto spirv = glsl_compile(small_shader(2));
  if (!spirv.ok()) {
    state.SkipWithError(spirv.error().to_string().c_str());
    return;
  }
  simt::vulkan::PipelineOptions opt;
  opt.buffers = 2;
  for (auto _ : state) {
    auto p = dev->create_pipeline(*spirv, opt);
    if (!p.ok()) {
      state.SkipWithError(p.error().to_string().c_str());
      return;
    }
  }
  state.counters["device_ms"] = device_ms();
}
BENCHMARK(BM_CreatePipeline)->Unit(benchmark::kMillisecond);

struct Buffers {
  Buffer in, out;
  bool ok = false;
};

Buffers make_buffers(Device& dev, benchmark::State& state) {
  Buffers b;
  auto in = dev.create_buffer(64 * 4);
  auto out = dev.create_buffer(65 * 4);
  if (!in.ok() || !out.ok()) {
    state.SkipWithError("create_buffer failed");
    return b;
  }
  b.in = std::move(in).value();
  b.out = std::move(out).value();
  b.ok = true;
  return b;
}

// A shader never seen before: pipeline creation plus its first dispatch, where
// lavapipe compiles it (the GLSL compile is outside the timing).
void BM_FirstDispatch(benchmark::State& state) {
  Device* dev = device_or_skip(state);
  if (dev == nullptr) return;
  Buffers b = make_buffers(*dev, state);
  if (!b.ok) return;
  simt::vulkan::PipelineOptions opt;
  opt.buffers = 2;
  uint32_t salt = 1000;
  for (auto _ : state) {
    state.PauseTiming();
    auto spirv = glsl_compile(small_shader(++salt));
    state.ResumeTiming();
    if (!spirv.ok()) {
      state.SkipWithError(spirv.error().to_string().c_str());
      return;
    }
    auto p = dev->create_pipeline(*spirv, opt);
    if (!p.ok()) {
      state.SkipWithError(p.error().to_string().c_str());
      return;
    }
    auto s = dev->dispatch(*p, {&b.in, &b.out}, 1, 60s);
    if (!s.ok()) {
      state.SkipWithError(s.error().to_string().c_str());
      return;
    }
  }
}
BENCHMARK(BM_FirstDispatch)->Unit(benchmark::kMillisecond);

// The same pipeline dispatched again and again (1 workgroup of 64 invocations),
// with an upload before and a download after, as a runner does per test.
void BM_Dispatch(benchmark::State& state) {
  Device* dev = device_or_skip(state);
  if (dev == nullptr) return;
  Buffers b = make_buffers(*dev, state);
  if (!b.ok) return;
  auto spirv = glsl_compile(small_shader(3));
  simt::vulkan::PipelineOptions opt;
  opt.buffers = 2;
  auto p = spirv.ok() ? dev->create_pipeline(*spirv, opt)
                      : simt::vulkan::Result<Pipeline>(spirv.error());
  if (!p.ok()) {
    state.SkipWithError(p.error().to_string().c_str());
    return;
  }
  if (!dev->dispatch(*p, {&b.in, &b.out}, 1, 60s).ok()) {  // compiles the shader
    state.SkipWithError("first dispatch failed");
    return;
  }
  std::vector<uint32_t> in(64, 5), out(65);
  for (auto _ : state) {
    bool ok = b.in.upload_words(in).ok() && dev->dispatch(*p, {&b.in, &b.out}, 1, 60s).ok() &&
              b.out.download_words(out).ok();
    if (!ok) {
      state.SkipWithError("dispatch failed");
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Dispatch)->Unit(benchmark::kMicrosecond);

}  // namespace
