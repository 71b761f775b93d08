#include "exec/window.h"

namespace simt::exec {

void Window::init(uint32_t wave, uint32_t simd, uint32_t vregs, uint32_t shared_base) {
  wave_ = wave;
  simd_ = simd;
  parts_ = wave / simd;
  full_ = wave == 64 ? ~0ull : ((1ull << wave) - 1);
  for (uint32_t p = 0; p < parts_; ++p)
    part_masks_[p] = (simd == 64 ? ~0ull : ((1ull << simd) - 1)) << (p * simd);
  for (uint32_t t = 0; t <= parts_; ++t) {
    const size_t shift = t == 0 ? 0 : size_t{t - 1} * simd;
    voffs_[t].resize(vregs);
    for (uint32_t r = 0; r < vregs; ++r)
      voffs_[t][r] = (size_t{r} + 1) * wave - (r >= shared_base ? shift : 0);
  }
  lo_ = 0, hi_ = n_ = wave, mask_ = full_;
  voff_ = voffs_[0].data();
  key_ = 0;  // normal mode, part 0
}

// wave.window: normal mode acts on every lane; a part's pass on the part's lanes,
// where a shared register's lane p*simd + i addresses lane i's storage.
void Window::set(const WarpState& w) {
  key_ = key(w);
  if (w.mode == WaveMode::Normal || w.part >= parts_) {
    lo_ = 0, hi_ = n_ = wave_, mask_ = full_;
    voff_ = voffs_[0].data();
    return;
  }
  lo_ = w.part * simd_;
  hi_ = lo_ + simd_;
  n_ = simd_;
  mask_ = part_masks_[w.part];
  voff_ = voffs_[1 + w.part].data();
}

}  // namespace simt::exec
