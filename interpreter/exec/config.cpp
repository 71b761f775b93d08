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

std::optional<ConfigError> check(const LaunchConfig& c) {
  auto range = [](const char* what, uint64_t v, uint64_t lo,
                  uint64_t hi) -> std::optional<ConfigError> {
    if (v < lo || v > hi)
      return ConfigError{what, std::string(what) + " " + std::to_string(v) + " is outside [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "]"};
    return std::nullopt;
  };
  if (c.wave == 0 || c.wave > 64 || !std::has_single_bit(c.wave))
    return ConfigError{"wave",
                       "wave " + std::to_string(c.wave) + " must be a power of two from 1 to 64"};
  uint32_t simd = c.simd_width();
  if (simd == 0 || simd > 64 || !std::has_single_bit(simd))
    return ConfigError{"simd",
                       "simd " + std::to_string(simd) + " must be a power of two from 1 to 64"};
  if (c.wave % simd != 0 || (c.wave / simd != 1 && c.wave / simd != 2 && c.wave / simd != 4))
    return ConfigError{"simd", "wave " + std::to_string(c.wave) + " must be 1, 2 or 4 times simd " +
                                   std::to_string(simd)};
  if (auto e = range("warps", c.warps, 1, kMaxTotalWarps)) return e;
  if (auto e = range("workgroups", c.workgroups, 1, kMaxTotalWarps)) return e;
  if (uint64_t{c.warps} * c.workgroups > kMaxTotalWarps)
    return ConfigError{"workgroups",
                       "warps x workgroups = " + std::to_string(uint64_t{c.warps} * c.workgroups) +
                           " exceeds " + std::to_string(kMaxTotalWarps)};
  if (auto e = range("cores", c.cores, 1, kMaxCores)) return e;
  if (auto e = range("slm", c.slm, 0, 65536)) return e;
  if (auto e = range("vregs", c.vregs, 1, 256)) return e;
  if (auto e = range("sregs", c.sregs, 1, 256)) return e;
  if (auto e = range("mask_depth", c.mask_depth, 1, kMaxStackDepth)) return e;
  if (auto e = range("call_depth", c.call_depth, 1, kMaxStackDepth)) return e;
  if (auto e = range("stack", c.stack, 0, kMaxStackBytes)) return e;
  if (c.stack % 16 != 0)
    return ConfigError{"stack", "stack " + std::to_string(c.stack) + " must be a multiple of 16"};
  if (c.max_steps == 0) return ConfigError{"max_steps", "max_steps must be at least 1"};
  if (state_bytes(c) > kMaxStateBytes)
    return ConfigError{"warps", "the launch needs " + std::to_string(state_bytes(c) >> 20) +
                                    " MiB of registers, stacks and shared memory; the limit is " +
                                    std::to_string(kMaxStateBytes >> 20) + " MiB"};
  return std::nullopt;
}

}  // namespace simt::exec
