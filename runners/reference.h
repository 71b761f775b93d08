// The reference runner: the interpreter in process (spec/runner.md).
#pragma once

#include <memory>
#include <variant>

#include "exec/outcome.h"
#include "exec/preempt.h"
#include "host/host.h"
#include "model.h"
#include "runner.h"

namespace simt::runners {

model::Outcome to_model(const exec::Outcome& o);
// Decodes buffer bytes into element values (i32 signed, the others unsigned).
std::vector<int64_t> decode(syntax::ElemType t, const std::vector<uint8_t>& bytes);

// Launch overrides for a protocol configuration.
host::LoadOptions load_options(const RunConfig& c);
RunConfig run_config(const exec::LaunchConfig& c);

// Runs a request on an already loaded program (used by the reference runner,
// `simtspec serve` and the faulty test implementation). With `timeout` > 0 (seconds
// of wall-clock time), a run that has not ended by then is an Error (runner.timeout).
// preempt.image.*: the request's image parts (runner.protocol.request `restore`,
// `image`).
struct ImageRequest {
  const std::vector<uint8_t>* restore = nullptr;  // start from this image (flow C)
  bool want = false;                              // return the last preemption's image
  // The test-only faulty implementation's preemption faults (never set otherwise).
  exec::PreemptFaults faults;
};
// The request's image parts.
ImageRequest image_request(const RunRequest& req);
RunResult run_loaded(std::shared_ptr<const exec::Program> program, bool trace, double timeout = 0,
                     ImageRequest images = {});
// Steps run between two readings of the clock under a timeout.
inline constexpr uint64_t kTimeoutSlice = 1 << 16;
// Loads a request's program as the reference does (its configuration overriding the
// directives, validation as it asks): the program, or the rejection to answer.
std::variant<std::shared_ptr<const exec::Program>, RunResult> load_request(const RunRequest& req);
// The reference's answer to a request: load_request, then run_loaded.
RunResult run_reference(const RunRequest& req);
// The same with a wall-clock limit in seconds (runner.timeout; 0: none).
RunResult run_reference_within(const RunRequest& req, double timeout);

}  // namespace simt::runners
