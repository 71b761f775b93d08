// The typed launch and implementation configuration (spec/state.md, state.launch.*).
// Resolved from defaults, then program directives, then a TOML file, then the
// command line (host/config.h); validated before any machine is built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "exec/settings.h"

namespace simt::exec {

inline constexpr Policy kAllPolicies[] = {Policy::RoundRobin, Policy::LowestPcFirst,
                                          Policy::OldestFirst, Policy::Random};

std::string_view policy_name(Policy p);
std::optional<Policy> find_policy(std::string_view name);

// One field per row of exec/settings.def, with its default (state.launch.defaults).
struct LaunchConfig {
#define SIMT_SETTING(name, T, def, ...) SettingValue<SettingType::T> name = def;
#include "exec/settings.def"

  uint32_t simd_width() const {
    return simd == 0 ? wave : simd;
  }
  uint32_t total_warps() const {
    return warps * workgroups;
  }
  uint64_t threads() const {
    return uint64_t{wave} * warps * workgroups;
  }
  bool operator==(const LaunchConfig&) const = default;
};

// The defaults (state.launch.defaults), for code that needs one without a launch.
inline constexpr LaunchConfig kDefaultLaunch{};

// Bytes of machine state (without buffers) a configuration needs.
uint64_t state_bytes(const LaunchConfig& c);

struct ConfigError {
  std::string field;  // the offending setting, e.g. "wave"
  std::string message;
};

// state.launch.limits: returns the first problem, or nothing if the configuration is valid.
// The settings are checked in the table's order (state.launch.check), then the total state.
std::optional<ConfigError> check(const LaunchConfig& c);
// One setting's part of check(): its row's limit and what else the setting must meet.
std::optional<ConfigError> check_setting(const LaunchConfig& c, Setting s);

}  // namespace simt::exec
