// The Runner interface (spec/runner.md). A runner executes one test
// configuration of a program on one implementation and returns what happened;
// it never judges the result (runner.harness does).
//
// Lifecycle (runner.lifecycle): create (open_runner), query capabilities() once,
// call run() any number of times -- from several threads at once, each call
// independent -- then shutdown(), which ends any process the runner started.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

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

// A complete launch configuration (runner.protocol.request `config`).
struct RunConfig {
  uint32_t wave = 32, simd = 32, warps = 1, workgroups = 1, cores = 1;
  std::string policy = "round_robin";
  uint64_t seed = 0;
  uint64_t max_steps = 10'000'000;
  json::Value to_json() const;
  static bool from_json(const json::Value& v, RunConfig& out, std::string& err);
  // What running in this configuration requires of a runner (format.requires):
  // "wave:W", "simd:S", "warps:N" (all workgroups together) and "policy:P".
  std::vector<std::string> needs() const;
};

struct RunRequest {
  std::string program;  // program text (a test file is fine: its header is comments)
  RunConfig config;
  bool trace = false;
};

struct RunResult {
  enum class Kind { Outcome, Rejected, Error } kind = Kind::Error;
  model::Outcome outcome;          // Kind::Outcome
  std::string message;             // Rejected, Error
  std::optional<uint32_t> line;    // Rejected: line of the first error
  std::string stderr_text;         // what the implementation wrote to stderr
  std::vector<std::string> trace;  // when requested and supported
};

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

std::unique_ptr<Runner> make_reference_runner();

// `reference`, or a path to a runner description (runner.toml).
std::variant<std::unique_ptr<Runner>, std::string> open_runner(const std::string& name_or_file);

// Maximum trace lines kept in a RunResult (results.record).
inline constexpr size_t kMaxTraceLines = 2000;

}  // namespace simt::runners
