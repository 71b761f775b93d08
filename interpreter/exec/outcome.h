// What a launch ends with (spec/execution.md, exec.outcome, exec.status.*) and what
// a trace reports (exec.trace.format). Runners, the harness and the reports include this,
// never the machine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/program.h"

namespace simt::exec {

// Outcome statuses (exec.status.*).
enum class Status : uint8_t { Completed, Trapped, Paused, Deadlock, Livelock, StepLimit };
inline constexpr Status kAllStatuses[] = {Status::Completed, Status::Trapped,  Status::Paused,
                                          Status::Deadlock,  Status::Livelock, Status::StepLimit};
std::string_view status_name(Status s);
std::optional<Status> find_status(std::string_view name);

// A machine event with its location (spec/events.md).
struct EventInfo {
  isa::Event code = isa::Event::None;
  uint32_t warp = 0;  // global warp id
  uint32_t pc = 0;
  int32_t lane = -1;                    // lowest faulting lane, or -1 if the event is not per-lane
  uint32_t addr = 0;                    // memory events: the byte address
  std::string space;                    // memory events: buffer name or "slm"
  uint32_t payload = 0;                 // syscall, interrupt: the code (trap.cause)
  isa::Event inner = isa::Event::None;  // double_fault: the event raised in the handler
  bool operator==(const EventInfo&) const = default;
};

struct BufferOut {
  std::string name;
  syntax::ElemType type = syntax::ElemType::U32;
  std::vector<uint8_t> bytes;
  bool operator==(const BufferOut&) const = default;
};

struct Outcome {
  Status status = Status::Completed;
  std::optional<EventInfo> event;  // Trapped only
  uint64_t steps = 0;              // instructions committed
  uint64_t lane_ops = 0;           // sum over committed instructions of active lanes
  std::vector<BufferOut> buffers;  // `out` and `inout` buffers, in declaration order
  // Equality of the architectural outcome: status, event and buffers (exec.outcome).
  bool same_result(const Outcome& o) const {
    return status == o.status && event == o.event && buffers == o.buffers;
  }
  // The contents of an output buffer as little-endian 32-bit words
  // (state.memory.buffer); nothing if there is no output buffer of that name.
  std::optional<std::vector<uint32_t>> words(std::string_view buffer) const;
};

// What a trace record reports: a step, or (trap chapter) a core entering its
// handler or a warp leaving it at the join or by the host's resume.
enum class TraceKind : uint8_t { Step, Enter, Resume };

struct TraceRecord {
  uint64_t step;
  uint32_t warp;  // Step: the warp; Enter: TGID; Resume: the resuming warp
  uint32_t pc;    // Step: its PC; Enter: the handler entry (TBA); Resume: the resume PC
  uint64_t exec;  // the warp's exec (Resume: as restored)
  TraceKind kind = TraceKind::Step;
  uint32_t core = 0;   // Enter, Resume: the core
  uint32_t cause = 0;  // Enter: the cause word (trap.cause)
};
using TraceSink = std::function<void(const TraceRecord&)>;

// The trace line for a record (exec.trace.format).
std::string format_trace(const Program& p, const TraceRecord& r);

}  // namespace simt::exec
