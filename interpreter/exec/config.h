// The typed launch and implementation configuration (spec/state.md, state.launch.*).
// Resolved from defaults, then program directives, then a TOML file, then the
// command line (host/config.h); validated before any machine is built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace simt::exec {

enum class Policy : uint8_t { RoundRobin, LowestPcFirst, OldestFirst, Random };
inline constexpr Policy kAllPolicies[] = {Policy::RoundRobin, Policy::LowestPcFirst,
                                          Policy::OldestFirst, Policy::Random};

std::string_view policy_name(Policy p);
std::optional<Policy> find_policy(std::string_view name);

struct LaunchConfig {
  uint32_t wave = 32;        // lanes per warp
  uint32_t simd = 0;         // SIMD width; 0 means "same as wave"
  uint32_t warps = 1;        // warps per workgroup
  uint32_t workgroups = 1;   // number of workgroups
  uint32_t cores = 1;        // compute cores; workgroup g runs on core g mod cores
  uint32_t slm = 0;          // shared local memory bytes per workgroup
  uint32_t vregs = 32;       // vector registers per lane
  uint32_t sregs = 32;       // scalar registers per warp
  uint32_t mask_depth = 32;  // mask-stack entries per warp
  uint32_t call_depth = 16;  // PC-stack entries per warp
  uint32_t stack = 1024;     // program-stack bytes per warp
  Policy policy = Policy::RoundRobin;
  uint64_t seed = 0;
  uint64_t max_steps = 10'000'000;
  bool livelock_check = true;

  uint32_t simd_width() const { return simd == 0 ? wave : simd; }
  uint32_t total_warps() const { return warps * workgroups; }
  uint64_t threads() const { return uint64_t{wave} * warps * workgroups; }
  bool operator==(const LaunchConfig&) const = default;
};

// Limits (state.launch.limits).
inline constexpr uint32_t kMaxTotalWarps = 4096;
inline constexpr uint32_t kMaxCores = 64;
inline constexpr uint32_t kMaxStackDepth = 1024;
inline constexpr uint32_t kMaxStackBytes = 1u << 20;
inline constexpr uint64_t kMaxBufferBytes = 256ull << 20;
// Registers, stacks and SLM of all warps together (state.launch.limits).
inline constexpr uint64_t kMaxStateBytes = 256ull << 20;

// Bytes of machine state (without buffers) a configuration needs.
uint64_t state_bytes(const LaunchConfig& c);

struct ConfigError {
  std::string field;  // the offending setting, e.g. "wave"
  std::string message;
};

// state.launch.limits: returns the first problem, or nothing if the configuration is valid.
std::optional<ConfigError> check(const LaunchConfig& c);

}  // namespace simt::exec
