#include "reference.h"

namespace simt::runners {

std::vector<int64_t> decode(syntax::ElemType t, const std::vector<uint8_t>& bytes) {
  const uint32_t es = syntax::elem_size(t);
  std::vector<int64_t> out;
  out.reserve(bytes.size() / es);
  for (size_t i = 0; i + es <= bytes.size(); i += es) {
    uint32_t v = 0;
    for (uint32_t k = 0; k < es; ++k) v |= uint32_t{bytes[i + k]} << (8 * k);
    out.push_back(t == syntax::ElemType::I32 ? int64_t{static_cast<int32_t>(v)} : int64_t{v});
  }
  return out;
}

model::Outcome to_model(const exec::Outcome& o) {
  model::Outcome m;
  m.status = std::string(exec::status_name(o.status));
  if (o.event) {
    model::Event e;
    e.name = std::string(isa::event_name(o.event->code));
    e.warp = o.event->warp;
    e.pc = o.event->pc;
    e.lane = o.event->lane;
    e.addr = o.event->addr;
    e.space = o.event->space;
    m.event = e;
  }
  m.steps = o.steps;
  for (const auto& b : o.buffers)
    m.buffers.push_back(
        {b.name, std::string(syntax::elem_type_name(b.type)), decode(b.type, b.bytes)});
  return m;
}

}  // namespace simt::runners
