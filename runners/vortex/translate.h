// The program -> RV32 assembly translator of the Vortex runner (runners/vortex/README.md):
// a loaded, validated program becomes one assembly text for Debian's
// riscv64-unknown-elf toolchain (-march=rv32ima_zicsr) with Vortex's SIMT instructions,
// or `unsupported` with a reason naming what could not be translated.
//
// Mapping (spec/state.md): the warps of every workgroup are Vortex warps of one core,
// workgroup by workgroup (warp 0 starts the others with wspawn; slm is a slice of the
// core's local memory per workgroup), lanes are Vortex threads (simx -t wave). Our exec mask
// is Vortex's thread mask whenever it is not empty: structured if/else/endif diverge with
// split/join (Vortex's IPDOM stack) when both sides have lanes, the larger side (which
// Vortex runs first) being the `then` side and the stack not full; otherwise each side
// runs under a thread mask set with tmc. break/continue narrow the mask with pred; lnext,
// endloop and endif restore it with tmc. A Vortex warp cannot run with no thread, so an
// empty exec (branch.struct.empty, exec.form) is a per-warp flag `empty`: the threads
// that were last active keep running the code, vector-form instructions are skipped and
// scalar-form and control instructions execute (their values are uniform).
//
// Registers live in memory: vector registers and predicates per thread, scalar
// registers per warp (every active thread writes the same value). Checks the hardware
// does not make are inline: mem.check (misaligned, then out of bounds, lowest active
// lane first) and alu.div.zero before each access or division; an event is recorded
// by one thread and ends its warp. When every warp has ended, the last one prints the
// event record and the output buffers as hex words on the console (decode_console).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/outcome.h"
#include "host/host.h"

namespace simt::vortex {

// Words printed first and last on the console (decode_console).
inline constexpr uint32_t kMagicBegin = 0x5151a0a0;
inline constexpr uint32_t kMagicEnd = 0xe0d0e0d0;
// Words of the record, printed after kMagicBegin: events raised, then the first
// event's code, global warp, pc, lane (0xffffffff: none), address, buffer index; then
// the step flag (a warp reached max_steps: one of kStep*), the steps of all warps and
// the deadlock flag.
inline constexpr uint32_t kStepFlag = 7;
inline constexpr uint32_t kStepTotal = 8;
// 1: a warp was released from a barrier that some departed warp could never have
// reached (bar.exited): on the reference it would wait for ever.
inline constexpr uint32_t kDeadlock = 9;
inline constexpr uint32_t kRecordWords = 10;
// Values of the step flag.
inline constexpr uint32_t kStepLimitOneWarp = 1;       // exec.status.step_limit, exactly
inline constexpr uint32_t kStepLimitSeveralWarps = 2;  // not reproduced (scheduling)
inline constexpr uint32_t kStepCounterFull = 3;        // max_steps beyond 32-bit counters
inline constexpr uint32_t kStepBudget = 4;             // the runner's step budget ran out

// The runner's step budget (--step-budget): the thread-steps (steps times the wave,
// at least 4: simx's warps run at least 4 threads' worth) all warps together may run
// before the launch is answered unsupported. simx runs about 6,000 to 16,000 such
// steps a second (runners/vortex/README.md, "Steps"), so a launch that runs into a
// large max_steps ends in seconds instead of running into the timeout.
inline constexpr uint64_t kDefaultStepBudget = 150000;

// One output buffer as printed: its index in exec::Program::buffers and its words.
struct OutputBuffer {
  uint32_t program_buffer = 0;
  uint32_t words = 0;
};

struct Translation {
  std::string assembly;  // one .S file (preprocessed by gcc: none of its macros needed)
  uint32_t threads = 0;  // simx -t: the wave
  uint32_t warps = 0;    // simx -w
  uint64_t max_steps = 0;
  uint32_t step_cap = 0;  // steps a warp may commit: max_steps, or less (the budget)
  std::vector<OutputBuffer> outputs;
  bool writes_memory = false;  // some instruction stores
};

struct TranslateResult {
  std::optional<Translation> translation;
  std::string unsupported;  // why there is no translation (empty when there is one)
  bool ok() const { return translation.has_value(); }
};

// simx's barrier ids (NUM_BARRIERS, compile-time; 2 in its default configuration).
inline constexpr uint32_t kDefaultBarriers = 2;

struct TranslateOptions {
  uint64_t step_budget = kDefaultStepBudget;  // --step-budget
  uint32_t barriers = kDefaultBarriers;       // --barriers
};

TranslateResult translate(const host::Loaded& loaded, const TranslateOptions& options = {});

// How the simx run ended, read from its console output.
struct ConsoleOutcome {
  enum class Kind { Outcome, NotReproduced, Garbage } kind = Kind::Garbage;
  exec::Outcome outcome;  // Kind::Outcome
  std::string reason;     // NotReproduced, Garbage: why
};

// Parses simx's standard output ("#0: xxxxxxxx" lines of the program's console)
// for the program's outcome.
ConsoleOutcome decode_console(const exec::Program& program, const Translation& t,
                              const std::string& console);

}  // namespace simt::vortex
