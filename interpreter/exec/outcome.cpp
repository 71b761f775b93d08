#include "exec/outcome.h"

#include <cstdio>

namespace simt::exec {

std::optional<std::vector<uint32_t>> Outcome::words(std::string_view buffer) const {
  for (const auto& b : buffers) {
    if (b.name != buffer) continue;
    std::vector<uint32_t> w(b.bytes.size() / 4);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = uint32_t{b.bytes[4 * i]} | uint32_t{b.bytes[4 * i + 1]} << 8 |
             uint32_t{b.bytes[4 * i + 2]} << 16 | uint32_t{b.bytes[4 * i + 3]} << 24;
    return w;
  }
  return std::nullopt;
}

std::string_view status_name(Status s) {
  switch (s) {
    case Status::Completed:
      return "completed";
    case Status::Trapped:
      return "trapped";
    case Status::Paused:
      return "paused";
    case Status::Deadlock:
      return "deadlock";
    case Status::Livelock:
      return "livelock";
    case Status::StepLimit:
      return "step_limit";
  }
  return "completed";
}

std::optional<Status> find_status(std::string_view name) {
  for (Status s : kAllStatuses)
    if (status_name(s) == name) return s;
  return std::nullopt;
}

// exec.trace.format
std::string format_trace(const Program& p, const TraceRecord& r) {
  char head[160];
  int digits = static_cast<int>((p.config.wave + 3) / 4);
  if (r.kind == TraceKind::Enter) {  // trap.entry
    const auto code = static_cast<isa::Event>(r.cause & 0xff);
    std::snprintf(head, sizeof head, "#%llu core %u enters its handler at pc=%u: %s",
                  static_cast<unsigned long long>(r.step), r.core, r.pc,
                  std::string(isa::event_name(code)).c_str());
    std::string out = head;
    if (r.cause >> 8) out += " code " + std::to_string(r.cause >> 8);
    return out + ", raised by w" + std::to_string(r.warp);
  }
  if (r.kind == TraceKind::Resume) {  // trap.join, trap.resume
    std::snprintf(head, sizeof head, "#%llu w%u leaves the handler of core %u: pc=%u exec=0x%0*llx",
                  static_cast<unsigned long long>(r.step), r.warp, r.core, r.pc, digits,
                  static_cast<unsigned long long>(r.exec));
    return head;
  }
  std::snprintf(head, sizeof head, "#%llu w%u pc=%u exec=0x%0*llx ",
                static_cast<unsigned long long>(r.step), r.warp, r.pc, digits,
                static_cast<unsigned long long>(r.exec));
  std::string out = head;
  if (r.pc < p.text.size()) {
    out += p.text[r.pc];
    out += "  ; line " + std::to_string(p.spans[r.pc].line);
  } else {
    out += "<past the end of the program>";
  }
  return out;
}

}  // namespace simt::exec
