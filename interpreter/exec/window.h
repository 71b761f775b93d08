// The sub-vector window (spec/wave.md, wave.parts, wave.window, wave.shared): the
// lanes the stepping warp's instruction can act on, and where its vector
// registers are. In normal mode the window is every lane; in a sub-vector pass it
// is the current part's lanes, and a shared register's lane p*simd + i is lane
// i's storage. The step loop sets the window from the warp's mode and part before
// the instruction runs (its state is the warp's: mode and part in WarpState).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/state.h"

namespace simt::exec {

class Window {
 public:
  Window() = default;
  Window(const Window&) = delete;  // voff_ points into voffs_
  Window& operator=(const Window&) = delete;
  // wave.parts: part p is lanes p*simd to (p+1)*simd - 1; vector registers from
  // `shared_base` up are shared (wave.shared); `vregs` registers in all.
  void init(uint32_t wave, uint32_t simd, uint32_t vregs, uint32_t shared_base);

  uint32_t lo() const { return lo_; }        // first lane of the window
  uint32_t hi() const { return hi_; }        // one past its last lane
  uint32_t lanes() const { return n_; }      // hi - lo
  uint64_t mask() const { return mask_; }    // its lanes as a mask
  uint32_t parts() const { return parts_; }  // wave / simd
  uint64_t part_mask(uint32_t part) const { return part_masks_[part]; }
  // Where vector register r's lane 0 is in WarpState::vregs, for this window.
  const size_t* offsets() const { return voff_; }

  // Whether the window is the one for warp w's mode and part (one 16-bit load).
  bool fits(const WarpState& w) const { return key(w) == key_; }
  void set(const WarpState& w);

 private:
  static uint16_t key(const WarpState& w) {
    uint16_t k;
    std::memcpy(&k, &w.mode, sizeof k);  // mode and part, adjacent (state.h)
    return k;
  }
  uint32_t lo_ = 0, hi_ = 0, n_ = 0;
  uint64_t mask_ = 0;
  // voff_ points into voffs_[0] (normal mode) or voffs_[1 + p] (part p's pass),
  // where shared registers start p*simd words earlier (wave.shared).
  const size_t* voff_ = nullptr;
  std::array<std::vector<size_t>, 5> voffs_;
  uint16_t key_ = 0;  // the mode and part the window was set for
  uint32_t wave_ = 0, parts_ = 1, simd_ = 0;
  uint64_t full_ = 0;
  std::array<uint64_t, 4> part_masks_{};
};

}  // namespace simt::exec
