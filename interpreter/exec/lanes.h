// Lane masks as one 32-bit word per lane, for loops that blend per lane
// (exec.form): testing a lane against kLaneBit is a 32-bit AND and compare, which
// vectorises on baseline x86-64 (SSE2 pand, pcmpeqd); `(mask >> l) & 1` is a
// 64-bit shift by a per-lane amount, which SSE2 does not have, so loops written
// with it run one lane at a time.
#pragma once

#include <array>
#include <cstdint>

namespace simt::exec {

constexpr std::array<uint32_t, 32> lane_bits() {
  std::array<uint32_t, 32> b{};
  for (uint32_t i = 0; i < 32; ++i) b[i] = 1u << i;
  return b;
}
// kLaneBit[i]: lane i's bit in a 32-lane half of a mask.
alignas(64) inline constexpr std::array<uint32_t, 32> kLaneBit = lane_bits();

// One half of a mask into words: lanes 0 to n-1 of `half` (n at most 32).
inline void expand_half(uint32_t half, uint32_t n, uint32_t* out) {
  for (uint32_t i = 0; i < n; ++i) out[i] = (half & kLaneBit[i]) == kLaneBit[i] ? ~0u : 0u;
}

// Expands a lane mask into one word per lane: all ones where the mask has the
// lane, zero elsewhere. Lanes 0-31 test the low half of the mask and lanes 32-63
// the high half, each in a loop of its own (one loop over both does not vectorise).
// Waves are powers of two (state.launch.limits), so from 32 lanes up the halves
// are whole: constant trip counts, which compile to straight vector code.
inline void expand_mask(uint64_t mask, uint32_t wave, uint32_t* out) {
  const uint32_t lo = static_cast<uint32_t>(mask), hi = static_cast<uint32_t>(mask >> 32);
  if (wave < 32) {
    expand_half(lo, wave, out);
    return;
  }
  expand_half(lo, 32, out);
  if (wave == 64) expand_half(hi, 32, out + 32);
}

}  // namespace simt::exec
