// The result model: what a run of one program produced, independent of which
// implementation produced it (spec/results.md). Runners fill it; the harness
// compares it; reports render it. It knows nothing of the interpreter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json.h"

namespace simt::model {

struct Event {
  std::string name;  // stable event name, e.g. "div_zero"
  uint32_t warp = 0;
  uint32_t pc = 0;
  int32_t lane = -1;             // -1: not a per-lane event
  uint32_t addr = 0;             // memory events
  std::string space;             // memory events: buffer name or "slm"
  std::optional<uint32_t> code;  // syscall, interrupt: the code (trap.cause)
  std::string inner;             // double_fault: the event raised in the handler (trap.double)
  bool operator==(const Event&) const = default;
};

struct Buffer {
  std::string name;
  std::string type;             // u8, u16, u32, i32
  std::vector<int64_t> values;  // one per element, signed for i32
  bool operator==(const Buffer&) const = default;
};

struct Outcome {
  std::string status;           // completed, trapped, paused, deadlock, livelock, step_limit
  std::optional<Event> event;   // for trapped
  uint64_t steps = 0;           // informational: not compared
  std::vector<Buffer> buffers;  // output buffers in declaration order
};

// A value reduced to a buffer element type (u8, u16, u32, i32), as compared
// (format.expect.buffers).
int64_t reduce(const std::string& type, int64_t v);

json::Value to_json(const Event& e);
json::Value to_json(const Outcome& o);
// Returns false with a message if the JSON does not have the schema's shape.
bool from_json(const json::Value& v, Event& out, std::string& err);
bool from_json(const json::Value& v, Outcome& out, std::string& err);

}  // namespace simt::model
