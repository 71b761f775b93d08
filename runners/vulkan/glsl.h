// GLSL compute shaders to SPIR-V, in process, with glslang's static libraries.
//
// The target is Vulkan 1.2 / SPIR-V 1.5: the lowest that accepts subgroupBroadcast
// with a lane that is not a constant (it needs SPIR-V 1.5's dynamic OpGroupNonUniformBroadcast),
// and below SPIR-V 1.6, where every compute shader would behave as if created
// with a varying subgroup size. glslang's process-wide tables are built once, on
// the first call (about 170 ms); later compiles of small shaders take about a
// millisecond. Safe to call from several threads (compiles are serialised).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "result.h"

namespace simt::vulkan {

// Compiles `source`, one GLSL compute shader (with its #version line, 450 or
// later, and entry point `main`), to SPIR-V words. On failure the error is
// Kind::Compile; its message is glslang's log, one "ERROR: <name>:<line>: ..." line
// per error (`name` is the file name given here), and its `line` the first error's.
Result<std::vector<uint32_t>> glsl_compile(std::string_view source,
                                           std::string_view name = "shader.comp");

}  // namespace simt::vulkan
