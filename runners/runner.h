// The Runner interface (spec/runner.md). A runner executes one test
// configuration of a program on one implementation and returns what happened;
// it never judges the result (runner.harness does).
//
// Lifecycle (runner.lifecycle): create (open_runner), query capabilities() once,
// call run() any number of times -- from several threads at once, each call
// independent -- then shutdown(), which ends any process the runner started.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "syntax/ast.h"

#include "exec/config.h"
#include "host/host.h"
#include "json.h"
#include "model.h"

namespace simt::runners {

// runner.capabilities
struct Capabilities {
  std::set<uint32_t> waves, simds;
  uint32_t max_warps = 4096;
  std::set<std::string> policies;
  std::set<std::string> features;
  bool all_instructions = true;
  std::set<std::string> instructions;  // when !all_instructions
  std::set<std::string> extras;        // validate, livelock, trace
  // The first capability of `needed` that is missing, if any. Names follow
  // format.requires: "wave:32", "simd:16", "warps:8", "policy:random", "feature:alu",
  // "instr:add", or an extra ("validate").
  std::optional<std::string> missing(const std::vector<std::string>& needed) const;
  json::Value to_json() const;
};

// The launch settings of a protocol request (runner.protocol.request `config`):
// every setting of state.launch may travel; an absent one means "the program's
// directive, else the default". The policy is kept as written, so that an unknown
// name reaches the implementation (which rejects it).
struct RunConfig {
#define SIMT_SETTING(name, T, ...) std::optional<exec::SettingWritten<exec::SettingType::T>> name;
#include "exec/settings.def"

  // The present settings, in the order of runner.protocol.request (the table's).
  json::Value to_json() const;
  // Reads a request's `config`: known keys with values of their type and range;
  // anything else is an error naming the key.
  static bool from_json(const json::Value& v, RunConfig& out, std::string& err);
  // What running in this configuration requires of a runner (format.requires):
  // "wave:W", "simd:S", "warps:N" (all workgroups together) and "policy:P", for a
  // configuration whose wave, simd, warps, workgroups and policy are set.
  std::vector<std::string> needs() const;
  bool operator==(const RunConfig&) const = default;
};

struct RunRequest {
  std::string program;  // program text (a test file is fine: its header is comments)
  RunConfig config;
  bool trace = false;
  // runner.protocol.request `validate`: false runs without the flow checks
  // (valid.flow), for implementations with the `no_validate` capability.
  bool validate = true;
  // runner.protocol.request `host` (trap.host.toml): the launch's host script, for
  // implementations with the `host` capability.
  std::vector<syntax::HostStep> host;
  // runner.protocol.request `image`: return the context image of the launch's last
  // preemption (preempt.image.*), for implementations with `preempt.image`.
  bool image = false;
  // runner.protocol.request `restore`: the launch starts from this context image
  // (preempt.flow.c), for implementations with `preempt.image`.
  std::optional<std::vector<uint8_t>> restore;
};

struct RunResult {
  // Unsupported (runner.protocol.response): the implementation cannot run this
  // program or configuration and says why; the harness reports `unsupported`.
  enum class Kind { Outcome, Rejected, Error, Unsupported } kind = Kind::Error;
  model::Outcome outcome;          // Kind::Outcome
  std::string message;             // Rejected, Error, Unsupported
  std::optional<uint32_t> line;    // Rejected: line of the first error
  std::string stderr_text;         // what the implementation wrote to stderr
  std::vector<std::string> trace;  // when requested and supported
  // Outcome, when the request asked for it and the launch was preempted: the
  // image of its last preemption (runner.protocol.response `image`).
  std::optional<std::vector<uint8_t>> image;
  // Rejected, for an image a restore rejects: the byte offset of its first bad
  // field (preempt.image.check).
  std::optional<uint64_t> image_offset;
};

// A result that is only its message (runner.protocol.response): the implementation
// cannot run the request and says why, or the request ended in an error.
inline RunResult unsupported(std::string why) {
  RunResult r;
  r.kind = RunResult::Kind::Unsupported;
  r.message = std::move(why);
  return r;
}
inline RunResult error(std::string why) {
  RunResult r;
  r.kind = RunResult::Kind::Error;
  r.message = std::move(why);
  return r;
}

class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual std::string command() const { return ""; }
  virtual const Capabilities& capabilities() const = 0;
  virtual RunResult run(const RunRequest& req) = 0;
  virtual void shutdown() {}
  // Expected failures (runner.toml `xfail`): globs over "id" or "id@config_key".
  virtual std::vector<std::string> xfail() const { return {}; }
  virtual bool is_reference() const { return false; }
};

// results.interrupted: set (from a signal handler) when the user interrupts a run.
// Runs in flight then end at once as errors whose message starts with
// kInterrupted, and the harness starts no new run. Lock-free, so a signal handler
// may set it.
std::atomic<bool>& interrupt_flag();
inline constexpr std::string_view kInterrupted = "interrupted";

// runner.timeout: the wall-clock limit of one run, in seconds, when neither the
// runner description nor the command line sets one.
inline constexpr double kDefaultTimeout = 10.0;

// The in-process reference; a run that has not ended after `timeout` seconds is an
// error (runner.timeout).
std::unique_ptr<Runner> make_reference_runner(double timeout = kDefaultTimeout);

// `reference`, or a path to a runner description (runner.toml). `timeout`, when
// given, replaces the description's (and the reference's default).
std::variant<std::unique_ptr<Runner>, std::string> open_runner(
    const std::string& name_or_file, std::optional<double> timeout = std::nullopt);

// Maximum trace lines kept in a RunResult (results.record).
inline constexpr size_t kMaxTraceLines = 2000;

}  // namespace simt::runners
