// The walk over a slot's context fields (preempt.image.slot), written once: the
// save (a writer visitor), the restore and the image check (a reader visitor),
// `image show` and `image diff` (a collecting visitor) all go through it, so the
// byte layout exists in one place. See walk_field in exec/image.h.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "exec/image.h"

namespace simt::exec {

namespace walk_detail {

template <class V>
void mask_stack(V& v, isa::CtxField f, const char* depth_name, const char* saved_name,
                const char* other_name, const char* kind_name, const char* pad_name,
                const char* unused_name, std::vector<MaskEntry>& s, uint32_t cap) {
  auto depth = static_cast<uint32_t>(s.size());
  v.u32(CtxPart{f, depth_name}, depth, cap);
  if constexpr (V::kReads) s.resize(depth);
  for (uint32_t i = 0; i < cap; ++i) {
    const auto idx = static_cast<int32_t>(i);
    if (i < depth) {
      MaskEntry& e = s[i];
      v.mask(CtxPart{f, saved_name, idx}, e.saved);
      v.mask(CtxPart{f, other_name, idx}, e.other);
      auto kind = static_cast<uint32_t>(e.kind);
      v.u32(CtxPart{f, kind_name, idx}, kind, 1);
      e.kind = static_cast<MaskKind>(kind);
      v.zero(CtxPart{f, pad_name, idx}, 4);
    } else {
      v.zero(CtxPart{f, unused_name, idx}, 24);
    }
  }
}

template <class V>
void pc_stack(V& v, isa::CtxField f, const char* depth_name, const char* entry_name,
              const char* unused_name, std::vector<uint32_t>& s, uint32_t cap) {
  auto depth = static_cast<uint32_t>(s.size());
  v.u32(CtxPart{f, depth_name}, depth, cap);
  if constexpr (V::kReads) s.resize(depth);
  for (uint32_t i = 0; i < cap; ++i) {
    const auto idx = static_cast<int32_t>(i);
    if (i < depth)
      v.u32(CtxPart{f, entry_name, idx}, s[i], std::numeric_limits<uint32_t>::max());
    else
      v.zero(CtxPart{f, unused_name, idx}, 4);
  }
}

}  // namespace walk_detail

template <class V>
void walk_field(V& v, isa::CtxField f, WarpState& w, const LaunchConfig& c) {
  using isa::CtxField;
  constexpr uint32_t kAny = std::numeric_limits<uint32_t>::max();
  const uint32_t wave = c.wave;
  const uint32_t parts = c.wave / c.simd_width();
  switch (f) {
    case CtxField::Vregs: {
      const size_t need = (size_t{c.vregs} + 1) * wave;
      if constexpr (V::kReads)
        if (w.vregs.size() < need) w.vregs.resize(need);
      for (uint32_t r = 0; r < c.vregs; ++r)
        for (uint32_t l = 0; l < wave; ++l)
          v.u32(CtxPart{f, nullptr, static_cast<int32_t>(r), static_cast<int32_t>(l)},
                w.vregs[(size_t{r} + 1) * wave + l], kAny);
      return;
    }
    case CtxField::Sregs:
      if constexpr (V::kReads)
        if (w.sregs.size() < c.sregs) w.sregs.resize(c.sregs);
      for (uint32_t r = 0; r < c.sregs; ++r)
        v.u32(CtxPart{f, nullptr, static_cast<int32_t>(r)}, w.sregs[r], kAny);
      return;
    case CtxField::Preds:
      for (uint32_t p = 0; p < isa::kNumPreds; ++p)
        v.mask(CtxPart{f, nullptr, static_cast<int32_t>(p)}, w.preds[p]);
      if constexpr (V::kReads) w.preds[isa::kPredTrue] = ~0ull;
      return;
    case CtxField::Pc:
      v.u32(CtxPart{f}, w.pc, kAny);
      return;
    case CtxField::Exec:
      v.mask(CtxPart{f}, w.exec);
      return;
    case CtxField::Live:
      v.mask(CtxPart{f}, w.live);
      v.require((w.exec & ~w.live) == 0, "exec has a lane that is not live");
      return;
    case CtxField::Status: {
      auto s = static_cast<uint32_t>(w.status);
      v.u32(CtxPart{f}, s, static_cast<uint32_t>(WarpStatus::Returned));
      w.status = static_cast<WarpStatus>(s);
      return;
    }
    case CtxField::Sp:
      v.u32(CtxPart{f}, w.sp, c.stack);
      return;
    case CtxField::Mode: {
      auto mode = static_cast<uint32_t>(w.mode);
      v.u32(CtxPart{f, "mode"}, mode, 1);
      w.mode = static_cast<WaveMode>(mode);
      uint32_t part = w.part;
      v.u32(CtxPart{f, "part"}, part, parts - 1);
      w.part = static_cast<uint8_t>(part);
      v.require(mode == 1 || part == 0, "a part other than 0 in normal mode");
      v.u32(CtxPart{f, "region_pc"}, w.region_pc, kAny);
      v.mask(CtxPart{f, "region_lanes"}, w.region_other);
      return;
    }
    case CtxField::Mstack:
      walk_detail::mask_stack(v, f, "depth", "saved", "other", "kind", "pad", "unused",
                              w.mask_stack, c.mask_depth);
      return;
    case CtxField::Pcstack:
      walk_detail::pc_stack(v, f, "depth", "entry", "unused", w.pc_stack, c.call_depth);
      return;
    case CtxField::Handler: {
      uint32_t in = w.in_handler;
      v.u32(CtxPart{f, "in_handler"}, in, 1);
      w.in_handler = in != 0;
      auto mode = static_cast<uint32_t>(w.user_mode);
      v.u32(CtxPart{f, "user_mode"}, mode, in);  // 0 outside the handler
      w.user_mode = static_cast<WaveMode>(mode);
      uint32_t part = w.user_part;
      v.u32(CtxPart{f, "user_part"}, part, in ? parts - 1 : 0);
      w.user_part = static_cast<uint8_t>(part);
      v.require(mode == 1 || part == 0, "a set-aside part other than 0 in normal mode");
      walk_detail::mask_stack(v, f, "user_mstack.depth", "user_mstack.saved", "user_mstack.other",
                              "user_mstack.kind", "user_mstack.pad", "user_mstack.unused",
                              w.user_mask_stack, in ? c.mask_depth : 0);
      if (!in) v.zero(CtxPart{f, "user_mstack.unused"}, 24 * c.mask_depth);
      walk_detail::pc_stack(v, f, "user_pcstack.depth", "user_pcstack.entry", "user_pcstack.unused",
                            w.user_pc_stack, in ? c.call_depth : 0);
      if (!in) v.zero(CtxPart{f, "user_pcstack.unused"}, 4 * c.call_depth);
      return;
    }
    case CtxField::Owed: {
      uint32_t owed = w.ss_owed;
      v.u32(CtxPart{f}, owed, 1);
      w.ss_owed = owed != 0;
      return;
    }
  }
}

}  // namespace simt::exec
