#include "exec/config.h"

#include <bit>

namespace simt::exec {

std::string_view policy_name(Policy p) {
  switch (p) {
    case Policy::RoundRobin:
      return "round_robin";
    case Policy::LowestPcFirst:
      return "lowest_pc_first";
    case Policy::OldestFirst:
      return "oldest_first";
    case Policy::Random:
      return "random";
  }
  return "round_robin";
}

std::optional<Policy> find_policy(std::string_view name) {
  for (Policy p : kAllPolicies)
    if (policy_name(p) == name) return p;
  return std::nullopt;
}

uint64_t state_bytes(const LaunchConfig& c) {
  uint64_t warps = uint64_t{c.warps} * c.workgroups;
  uint64_t per_warp = (uint64_t{c.vregs} * c.wave + c.sregs) * 4 + c.stack +
                      uint64_t{c.mask_depth} * 24 + uint64_t{c.call_depth} * 4 + 256;
  return warps * per_warp + uint64_t{c.slm} * c.workgroups;
}

namespace {

// A row's limit (state.launch.limits) on the value v.
std::optional<ConfigError> check_limit(Setting s, uint64_t v) {
  const SettingInfo& i = setting_info(s);
  const std::string name(i.name);
  switch (i.limit) {
    case Limit::None:
      return std::nullopt;
    case Limit::Range:
      if (v < i.lo || v > i.hi)
        return ConfigError{name, name + " " + std::to_string(v) + " is outside [" +
                                     std::to_string(i.lo) + ", " + std::to_string(i.hi) + "]"};
      return std::nullopt;
    case Limit::Pow2:
      if (v < i.lo || v > i.hi || !std::has_single_bit(v))
        return ConfigError{name, name + " " + std::to_string(v) + " must be a power of two from " +
                                     std::to_string(i.lo) + " to " + std::to_string(i.hi)};
      return std::nullopt;
    case Limit::AtLeast:
      if (v < i.lo) return ConfigError{name, name + " must be at least " + std::to_string(i.lo)};
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ConfigError> check_setting(const LaunchConfig& c, Setting s) {
  switch (s) {
    case Setting::wave:
      return check_limit(s, c.wave);
    case Setting::simd: {
      const uint32_t simd = c.simd_width();
      if (auto e = check_limit(s, simd)) return e;
      if (c.wave % simd != 0 || (c.wave / simd != 1 && c.wave / simd != 2 && c.wave / simd != 4))
        return ConfigError{"simd", "wave " + std::to_string(c.wave) +
                                       " must be 1, 2 or 4 times simd " + std::to_string(simd)};
      return std::nullopt;
    }
    case Setting::warps:
      return check_limit(s, c.warps);
    case Setting::workgroups:
      if (auto e = check_limit(s, c.workgroups)) return e;
      if (uint64_t{c.warps} * c.workgroups > kMaxTotalWarps)
        return ConfigError{"workgroups", "warps x workgroups = " +
                                             std::to_string(uint64_t{c.warps} * c.workgroups) +
                                             " exceeds " + std::to_string(kMaxTotalWarps)};
      return std::nullopt;
    case Setting::cores:
      return check_limit(s, c.cores);
    case Setting::slm:
      return check_limit(s, c.slm);
    case Setting::vregs:
      return check_limit(s, c.vregs);
    case Setting::sregs:
      return check_limit(s, c.sregs);
    case Setting::mask_depth:
      return check_limit(s, c.mask_depth);
    case Setting::call_depth:
      return check_limit(s, c.call_depth);
    case Setting::stack:
      if (auto e = check_limit(s, c.stack)) return e;
      if (c.stack % 16 != 0)
        return ConfigError{"stack",
                           "stack " + std::to_string(c.stack) + " must be a multiple of 16"};
      return std::nullopt;
    case Setting::max_steps:
      return check_limit(s, c.max_steps);
    case Setting::policy:  // any Policy value is valid; a name is checked where it is read
    case Setting::seed:
    case Setting::livelock_check:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ConfigError> check(const LaunchConfig& c) {
  for (const SettingInfo& i : kSettings)  // state.launch.check: the table's order
    if (auto e = check_setting(c, i.id)) return e;
  if (state_bytes(c) > kMaxStateBytes)
    return ConfigError{"warps", "the launch needs " + std::to_string(state_bytes(c) >> 20) +
                                    " MiB of registers, stacks and shared memory; the limit is " +
                                    std::to_string(kMaxStateBytes >> 20) + " MiB"};
  return std::nullopt;
}

}  // namespace simt::exec
