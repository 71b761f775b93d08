// libFuzzer target: the Vortex runner's translator and console decoder
// (runners/vortex/README.md) on arbitrary input. The input is a program text, a NUL,
// then what simx printed. A program the front end loads is translated: the result is
// a translation (non-empty assembly, a launch within simx's 32-bit masks, output
// buffers of the program) or `unsupported` with a reason, never a crash or an
// exception. With a translation, the rest of the input is decoded as simx's console:
// an outcome whose buffers are the translation's outputs with the program's sizes,
// or "not reproduced" or garbage with a reason. Seeds in fuzz/seeds_vortex
// (programs of the runner's tests with consoles simx printed for them, and broken
// ones). Any crash, sanitizer report or __builtin_trap() is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "host/host.h"
#include "translate.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string program = input.substr(0, nul);
  const std::string console = nul == std::string::npos ? "" : input.substr(nul + 1);
  auto loaded = simt::host::load(program);
  if (!loaded.loaded) return 0;
  // The translator's own limits bound the work (it refuses beyond 400,000 assembly
  // lines).
  const auto tr = simt::vortex::translate(*loaded.loaded, {});
  if (!tr.ok()) {
    check(!tr.unsupported.empty());
    return 0;
  }
  const simt::vortex::Translation& t = *tr.translation;
  check(!t.assembly.empty());
  check(t.threads >= 1 && t.threads <= 32 && t.warps >= 1 && t.warps <= 32);
  check(t.step_cap >= 1 && t.step_cap <= t.max_steps);
  const auto& program_buffers = loaded.loaded->program->buffers;
  for (const auto& b : t.outputs) check(b.program_buffer < program_buffers.size());
  const auto d = simt::vortex::decode_console(*loaded.loaded->program, t, console);
  switch (d.kind) {
    case simt::vortex::ConsoleOutcome::Kind::Outcome:
      check(d.outcome.buffers.size() == t.outputs.size());
      for (size_t i = 0; i < t.outputs.size(); ++i)
        check(d.outcome.buffers[i].bytes.size() ==
              program_buffers[t.outputs[i].program_buffer].bytes);
      break;
    case simt::vortex::ConsoleOutcome::Kind::NotReproduced:
    case simt::vortex::ConsoleOutcome::Kind::Garbage:
      check(!d.reason.empty());
      break;
  }
  return 0;
}
