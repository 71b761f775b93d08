// Running a translation (translate.h) on a Vulkan device: compile its GLSL (with a
// small cache of pipelines keyed by the shader text, so that the configurations of
// one test that translate alike compile once), upload the initial buffers,
// dispatch with a timeout, and read back the control buffer and the output
// buffers. The result is an outcome in the interpreter's terms, or the reason the
// run does not reproduce the reference's semantics (DeviceOutcome::NotReproduced),
// or an Error (compile, Vulkan, timeout).
#pragma once

#include <chrono>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "device.h"
#include "exec/outcome.h"
#include "translate.h"

namespace simt::vulkan {

struct Executed {
  DeviceOutcome device;   // how the run ended, from the control buffer
  exec::Outcome outcome;  // when device.kind != NotReproduced: status, event, steps, buffers
};

class Executor {
 public:
  explicit Executor(Device& device, size_t cache_entries = 32)
      : device_(device), capacity_(cache_entries) {}

  // `program` is the program `t` was translated from (its buffers' element types).
  Result<Executed> run(const exec::Program& program, const Translation& t,
                       std::chrono::nanoseconds timeout);

  size_t compiled() const { return compiled_; }  // shaders compiled so far (cache misses)

 private:
  Result<Pipeline*> pipeline_for(const Translation& t);

  Device& device_;
  size_t capacity_;
  size_t compiled_ = 0;
  // Most recently used first.
  std::list<std::pair<std::string, std::unique_ptr<Pipeline>>> cache_;
};

}  // namespace simt::vulkan
