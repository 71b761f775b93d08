// The launch settings as a table (spec/state.md, state.launch): the enum of the
// rows of exec/settings.def, what each row says, and the types and macros that
// the users of the table expand it with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace simt::exec {

enum class Policy : uint8_t { RoundRobin, LowestPcFirst, OldestFirst, Random };

// Limits (state.launch.limits).
inline constexpr uint32_t kMaxTotalWarps = 4096;
inline constexpr uint32_t kMaxCores = 64;
inline constexpr uint32_t kMaxStackDepth = 1024;
inline constexpr uint32_t kMaxStackBytes = 1u << 20;
inline constexpr uint64_t kMaxBufferBytes = 256ull << 20;
// Registers, stacks and SLM of all warps together (state.launch.limits).
inline constexpr uint64_t kMaxStateBytes = 256ull << 20;
// No upper limit (an AtLeast row).
inline constexpr uint64_t kNoMax = UINT64_MAX;

enum class SettingType : uint8_t { U32, U64, Policy, Bool };
// How a setting's [lo, hi] is checked (state.launch.limits).
enum class Limit : uint8_t { None, Range, Pow2, AtLeast };

// A setting's C++ type once resolved (Value) and as written in a directive, a
// protocol request or a test's matrix (Written: a policy by its name, so that an
// unknown name reaches the code that reports it).
template <SettingType>
struct SettingTraits;
template <>
struct SettingTraits<SettingType::U32> {
  using Value = uint32_t;
  using Written = uint32_t;
};
template <>
struct SettingTraits<SettingType::U64> {
  using Value = uint64_t;
  using Written = uint64_t;
};
template <>
struct SettingTraits<SettingType::Policy> {
  using Value = Policy;
  using Written = std::string;
};
template <>
struct SettingTraits<SettingType::Bool> {
  using Value = bool;
  using Written = bool;
};
template <SettingType T>
using SettingValue = typename SettingTraits<T>::Value;
template <SettingType T>
using SettingWritten = typename SettingTraits<T>::Written;

// One enumerator per row, in row order.
enum class Setting : uint8_t {
#define SIMT_SETTING(name, ...) name,
#include "exec/settings.def"
};

struct SettingInfo {
  Setting id;
  std::string_view name;  // also its TOML key and protocol key
  SettingType type;
  Limit limit;
  uint64_t lo, hi;
  bool directive;         // `.name` in a program
  std::string_view flag;  // the command-line override
  bool matrix;            // a test's [matrix] may vary it
  std::string_view clause;
  std::string_view help;
};

// Expansion helpers for the Y/N columns: SIMT_SETTING_IF_Y(x) is x,
// SIMT_SETTING_IF_N(x) is nothing; SIMT_SETTING_PICK_Y(a, b) is a, _N is b.
#define SIMT_SETTING_IF_Y(...) __VA_ARGS__
#define SIMT_SETTING_IF_N(...)
#define SIMT_SETTING_PICK_Y(a, b) a
#define SIMT_SETTING_PICK_N(a, b) b

inline constexpr SettingInfo kSettings[] = {
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, clause, help) \
  {Setting::name,                                                            \
   #name,                                                                    \
   SettingType::T,                                                           \
   Limit::lim,                                                               \
   lo,                                                                       \
   hi,                                                                       \
   SIMT_SETTING_PICK_##dir(true, false),                                     \
   flag,                                                                     \
   SIMT_SETTING_PICK_##mx(true, false),                                      \
   clause,                                                                   \
   help},
#include "exec/settings.def"
};
inline constexpr size_t kSettingCount = std::size(kSettings);

constexpr const SettingInfo& setting_info(Setting s) {
  return kSettings[static_cast<size_t>(s)];
}

// A resolved value as 64 bits (the fingerprint of a launch, exec.snapshot).
constexpr uint64_t setting_bits(uint32_t v) {
  return v;
}
constexpr uint64_t setting_bits(uint64_t v) {
  return v;
}
constexpr uint64_t setting_bits(Policy v) {
  return static_cast<uint64_t>(v);
}
constexpr uint64_t setting_bits(bool v) {
  return v;
}

}  // namespace simt::exec
