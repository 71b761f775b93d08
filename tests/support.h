// Helpers shared by the unit tests: load and run program text in process.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/machine.h"
#include "host/host.h"

namespace simt::test {

struct Run {
  std::optional<exec::Outcome> outcome;  // absent if the program did not load
  std::string diags;                     // formatted diagnostics (file name "test")
  std::shared_ptr<const exec::Program> program;
  bool ok() const { return outcome.has_value(); }
  exec::Status status() const { return outcome ? outcome->status : exec::Status::StepLimit; }
};

host::LoadResult load(std::string_view text, host::LoadOptions opt = {});
// Loads and runs; `no_validate` skips the flow checks so run-time events can be seen.
Run run(std::string_view text, host::LoadOptions opt = {});
Run run_unvalidated(std::string_view text);

// Values of an output buffer as 32-bit words (u32/i32 buffers).
std::vector<uint32_t> words(const exec::Outcome& o, std::string_view buffer);

// Path of a file in the source tree.
std::string source_path(std::string_view relative);

// A runner description (TOML, runner.process.toml) of the test-only faulty
// implementation with one named fault ("none": the reference behind the
// protocol), claiming every capability of the machine so far.
std::string faulty_runner_toml(std::string_view fault, double timeout = 20);

}  // namespace simt::test
