// The program -> GLSL translator of the Vulkan runner: a loaded, validated
// program becomes one GLSL compute shader plus a description of its storage
// buffers, or `unsupported` with a reason naming what could not be translated. It
// never translates silently wrongly: what it cannot reproduce it either refuses up
// front or reports at run time through the control buffer (decode_control).
//
// Mapping (spec/state.md): one warp = one subgroup of `wave` invocations (the
// device's subgroup size must equal `wave`; the pipeline must require full
// subgroups), `warps` subgroups per workgroup (local_size_x = wave x warps),
// `workgroups` workgroups. Vector registers are invocation-local uints, scalar
// registers invocation-local uints that every invocation of the subgroup computes
// identically, predicates bools. The exec mask is emulated: every invocation runs
// every instruction in subgroup-uniform control flow, with a per-invocation
// `act` (its exec bit) and `live` bit, so scalar instructions run whatever exec
// is (exec.form) and structured regions are never skipped (branch.struct.empty).
//
// Translated:
// - ALU: every instruction of spec/alu.md; div/rem raise div_zero for the lowest
//   active lane with a zero divisor (scalar form: without lane), -2^31 / -1 as the
//   spec says (alu.div, alu.rem, alu.div.zero).
// - cmp.*, sel, pand por pxor pmov, nop, exit.
// - Memory: ld/st of 8, 16 and 32 bits in buffers and in `slm` (a `shared uint[]`
//   zeroed at launch), with mem.check emulated; sub-word stores are atomicAnd and
//   atomicOr on the containing word so other bytes of it are kept.
// - Cross-lane: ballot, ballot.hi, vote.any, vote.all, readlane, shfl, shfl.xor
//   (subgroup ballot and shuffle; inactive and out-of-range lanes read 0).
// - Atomics: atom.* one lane at a time in ascending lane order (one GLSL atomic per
//   lane), watom.* once for the lowest active lane, lock/unlock, with their checks.
//   A warp's per-lane atomics interleaved with another warp's on one word (the spec
//   makes an atomic one step) is detected and reported (kFlagAtomicInterleaved).
// - bar: a protocol on shared counters around barrier() calls; warps that end keep
//   attending the workgroup's barriers (drain) until all have ended, so a warp that
//   ends before the others arrive leaves them blocked and the launch ends deadlock
//   (bar.exited). Every round checks that each warp either arrived or ended; when
//   lavapipe's barrier() lets a subgroup through early (seen when a subgroup ends
//   while the others wait) the run is reported not reproduced (kFlagBarrierEarly).
// - Structured if/else/endif, loop/endloop, break, continue; call/ret by inlining
//   the callee at each call (call_overflow at the static depth call_depth, so
//   recursion is reproduced too, up to a size limit); mask_overflow at the static
//   depth mask_depth.
// - %exec, %exec_lo, %exec_hi: read once before the instruction (a ballot of act);
//   written by `mov` per invocation (state.special.exec), the mask stack untouched.
// - max_steps: a launch of one warp translated with exact_step_limit ends
//   step_limit before the instruction that would be step max_steps + 1.
// Not translated (unsupported): the raw branch primitives (cbr, jmp, push, invert,
// pop, lpush, brk, cont, lnext written in the program): the emulation keeps every
// warp in subgroup-uniform structured flow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exec/outcome.h"
#include "host/host.h"

namespace simt::vulkan {

// What the target device offers (from DeviceInfo).
struct TranslateOptions {
  uint32_t subgroup_size = 8;  // must equal the program's wave
  uint32_t max_workgroup_invocations = 1024;
  uint32_t max_storage_buffers = 64;   // per pipeline
  uint32_t max_shared_memory = 32768;  // bytes of shared memory per workgroup
  // VkSubgroupFeatureFlags the device offers in compute shaders: basic, vote, ballot
  // and shuffle are needed (DeviceInfo::subgroup.operations).
  uint32_t subgroup_operations = 0x1 | 0x2 | 0x8 | 0x10;
  // A launch of one warp: check max_steps before every instruction, so that the
  // launch ends step_limit exactly where the reference does (exec.step.order). The
  // runner translates again with it when a first run reached max_steps.
  bool exact_step_limit = false;
};

// One storage buffer of the shader, at set 0.
struct BufferBinding {
  uint32_t binding = 0;
  std::string name;             // the program's buffer name; "control" for binding 0
  int32_t program_buffer = -1;  // index into exec::Program::buffers; -1 for the control buffer
  uint32_t bytes = 0;           // the buffer's size in the program (mem.check bounds)
  std::vector<uint8_t> init;    // initial contents, a multiple of 4 bytes, at least 4
  bool output = false;          // an `out` or `inout` buffer: part of the outcome
};

// Words of the control buffer (binding 0), written by the shader. Zero at launch.
enum ControlWord : uint32_t {
  kCtlFlags = 0,        // kFlag* bits
  kCtlEvents = 1,       // number of warps that raised an event
  kCtlClaim = 2,        // 1 once the first event is recorded in the next words
  kCtlCode = 3,         // isa::Event
  kCtlWarp = 4,         // global warp id
  kCtlPc = 5,           // PC of the instruction (in the expanded program)
  kCtlLane = 6,         // lowest faulting lane, 0xffffffff if the event has none
  kCtlAddr = 7,         // memory events: the address
  kCtlSpace = 8,        // memory events: index into exec::Program::buffers
  kCtlEventSteps = 9,   // steps the raising warp committed before the event
  kCtlWarpsEnded = 10,  // warps that reached done, an event, a budget or a blocked barrier
  kCtlBlocked = 11,     // warps blocked at a barrier that cannot complete (bar.exited)
  kCtlWarpSteps = 12,   // then one word per global warp: the steps it committed
};

enum ControlFlag : uint32_t {
  // A warp stopped because the iterations of its loops reached the budget kept
  // below lavapipe's shared loop cap.
  kFlagLoopBudget = 1u << 0,
  // A warp alone committed max_steps steps and was about to run more: the
  // reference ends step_limit (or livelock before it).
  kFlagStepBudget = 1u << 1,
  // The per-lane atomics of one warp on one word were interleaved with another
  // warp's (atom.step makes an atomic instruction one step).
  kFlagAtomicInterleaved = 1u << 2,
  // A signed atom.min/max on slm lost its compare-and-swap to another warp.
  kFlagSlmContention = 1u << 3,
  // barrier() returned in a subgroup before every other subgroup of the workgroup
  // had arrived or ended (seen once on lavapipe, see translate.cpp's drain()).
  kFlagBarrierEarly = 1u << 4,
  // The single warp of the launch had committed max_steps steps and was not done
  // (TranslateOptions::exact_step_limit): the launch ends step_limit.
  kFlagStepLimit = 1u << 5,
};

// Iterations (plus one per loop entry) a subgroup may spend in all the translated
// loops together before it stops with kFlagLoopBudget: below lavapipe's cap of
// 65,535 shared by every loop of a shader (runners/vulkan/device.cpp, "Long
// shaders"), with a margin for how the driver counts loop entries.
inline constexpr uint32_t kLoopBudget = 65000;

struct Translation {
  std::string glsl;                     // one compute shader, entry point main
  std::vector<BufferBinding> bindings;  // bindings[i].binding == i; [0] is the control buffer
  uint32_t subgroup_size = 0;           // the program's wave: the pipeline's subgroup size
  uint32_t local_size_x = 0;            // wave x warps
  uint32_t workgroups = 0;              // dispatched along x
  uint32_t total_warps = 0;
  uint64_t max_steps = 0;
  bool exact_step_limit = false;  // TranslateOptions::exact_step_limit
  // Some instruction stores to memory or is an atomic: without any, the warps see
  // nothing of each other but barriers (decode_control's events of several warps).
  bool writes_memory = false;
  std::vector<std::string> buffer_names;  // exec::Program::buffers' names, by index
};

struct TranslateResult {
  std::optional<Translation> translation;
  std::string unsupported;  // why there is no translation (empty when there is one)
  bool ok() const { return translation.has_value(); }
};

TranslateResult translate(const host::Loaded& loaded, const TranslateOptions& options = {});

// How the device run ended, read from the control buffer.
struct DeviceOutcome {
  // Deadlock: a warp was blocked at a barrier that cannot complete (bar.exited,
  // exec.status.deadlock); the buffers are the final state as for the others.
  // StepLimit: only with exact_step_limit (exec.status.step_limit).
  enum class Kind { Completed, Trapped, Deadlock, StepLimit, NotReproduced } kind = Kind::Completed;
  std::optional<exec::EventInfo> event;  // Trapped
  uint64_t steps = 0;                    // committed by all warps
  std::string reason;                    // NotReproduced: why the outcome is not the reference's
  // NotReproduced because the launch, of one warp, reached max_steps: a run with
  // exact_step_limit reproduces it.
  bool retry_exact = false;
  // NotReproduced because of how the device happened to interleave warps this time
  // (kFlagAtomicInterleaved, kFlagSlmContention): another dispatch may reproduce it.
  bool transient = false;
  // The reference status this outcome stands for (NotReproduced: none).
  std::optional<exec::Status> status() const;
};

// How many times a transient outcome is dispatched again (atom.step): warps of
// different workgroups run in parallel threads on lavapipe, so a per-lane atomic
// that another warp's atomic came between is a matter of timing, and rare.
inline constexpr int kTransientRetries = 4;

// Interprets the control buffer after the dispatch (whole buffer, as words).
DeviceOutcome decode_control(const Translation& t, std::span<const uint32_t> control);

}  // namespace simt::vulkan
