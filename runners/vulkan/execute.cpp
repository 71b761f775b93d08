#include "execute.h"

#include <vector>

#include "glsl.h"

namespace simt::vulkan {

Result<Pipeline*> Executor::pipeline_for(const Translation& t) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first == t.glsl) {
      cache_.splice(cache_.begin(), cache_, it);
      return cache_.front().second.get();
    }
  }
  auto spirv = glsl_compile(t.glsl);
  if (!spirv.ok()) return spirv.error();
  PipelineOptions popt;
  popt.buffers = static_cast<uint32_t>(t.bindings.size());
  popt.require_full_subgroups = true;  // one warp = one whole subgroup
  popt.subgroup_size = t.subgroup_size;
  auto pipeline = device_.create_pipeline(*spirv, popt);
  if (!pipeline.ok()) return pipeline.error();
  ++compiled_;
  cache_.emplace_front(t.glsl, std::make_unique<Pipeline>(std::move(pipeline).value()));
  while (cache_.size() > capacity_) cache_.pop_back();
  return cache_.front().second.get();
}

Result<Executed> Executor::run(const exec::Program& program, const Translation& t,
                               std::chrono::nanoseconds timeout) {
  auto pipeline = pipeline_for(t);
  if (!pipeline.ok()) return pipeline.error();
  std::vector<Buffer> buffers;
  std::vector<Buffer*> bound;
  buffers.reserve(t.bindings.size());
  for (const auto& b : t.bindings) {
    auto buf = device_.create_buffer(b.init.size());
    if (!buf.ok()) return buf.error();
    if (Status s = buf->upload(std::as_bytes(std::span(b.init))); !s.ok()) return s.error();
    buffers.push_back(std::move(buf).value());
  }
  for (auto& b : buffers) bound.push_back(&b);
  if (Status s = device_.dispatch(**pipeline, bound, t.workgroups, timeout); !s.ok())
    return s.error();

  Executed e;
  std::vector<uint32_t> control(t.bindings[0].init.size() / 4);
  if (Status s = buffers[0].download_words(control); !s.ok()) return s.error();
  e.device = decode_control(t, control);
  if (e.device.kind == DeviceOutcome::Kind::NotReproduced) return e;
  e.outcome.status = *e.device.status();
  e.outcome.event = e.device.event;
  e.outcome.steps = e.device.steps;
  // exec.outcome: the `out` and `inout` buffers, in declaration order.
  for (size_t i = 1; i < t.bindings.size(); ++i) {
    const BufferBinding& b = t.bindings[i];
    if (!b.output) continue;
    exec::BufferOut out;
    out.name = b.name;
    out.type = program.buffers[static_cast<size_t>(b.program_buffer)].type;
    std::vector<uint8_t> bytes(b.init.size());
    if (Status s = buffers[i].download(std::as_writable_bytes(std::span(bytes))); !s.ok())
      return s.error();
    bytes.resize(b.bytes);
    out.bytes = std::move(bytes);
    e.outcome.buffers.push_back(std::move(out));
  }
  return e;
}

}  // namespace simt::vulkan
