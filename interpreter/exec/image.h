// The context image (spec/preempt.md, preempt.image.*): its layout as formulas of
// the configuration, the one walk over a slot's context fields (context.def) that
// saving, loading, checking, showing and diffing share, and the reading of a whole
// image with the byte offset of the first bad field (preempt.image.check).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "exec/config.h"
#include "exec/state.h"
#include "isa/isa.h"

namespace simt::exec {

inline constexpr uint8_t kImageMagic[8] = {'S', 'I', 'M', 'T', 'C', 'T', 'X', 0};
inline constexpr uint32_t kImageVersion = 1;
inline constexpr uint32_t kImageHeaderFixed = 48;  // before the settings (preempt.image.header)
inline constexpr uint32_t kImageSettings = static_cast<uint32_t>(kSettingCount);
inline constexpr uint32_t kSlotAlign = 256;
inline constexpr uint32_t kFixedBase = 40;  // the fixed section's words before its lists
inline constexpr uint32_t kCoreRecord = 32;

// preempt.image.header: a launch setting as its 64-bit header word.
uint64_t setting_word(const LaunchConfig& c, Setting s);

// Everything the image's sizes and offsets depend on, and what follows from it.
struct ImageLayout {
  LaunchConfig cfg;                    // simd as the width it means
  std::vector<uint32_t> buffer_bytes;  // each buffer's size, in declaration order
  uint32_t insns = 0;                  // instructions of the expanded program
  uint64_t core_set = 0;               // bit c: core c is in the image

  std::vector<uint32_t> cores;       // the image's cores, ascending
  std::vector<uint32_t> workgroups;  // on those cores: core by core, ascending on each
  std::vector<uint32_t> warps;       // global ids in slot order (preempt.image.slots)
  uint32_t header_bytes = 0;
  uint32_t slot_raw = 0;  // R: the context fields' bytes
  uint32_t slot_bytes = 0;
  std::array<uint32_t, isa::kCtxFieldCount> field_offset{};  // within a slot
  std::array<uint32_t, isa::kCtxFieldCount> field_bytes{};
  uint64_t slm_offset = 0, slots_offset = 0, fixed_offset = 0;
  uint64_t buffers_total = 0;

  static ImageLayout make(const LaunchConfig& cfg, std::vector<uint32_t> buffer_bytes,
                          uint32_t insns, uint64_t core_set);
  uint32_t core_of(uint32_t wg) const { return wg % cfg.cores; }
  uint64_t slm_bytes() const { return uint64_t{cfg.slm} * workgroups.size(); }
  uint64_t slot_offset(size_t i) const { return slots_offset + uint64_t{slot_bytes} * i; }
  // preempt.image.fixed: the section's size with `pending` pending cause words.
  uint64_t fixed_bytes(uint64_t pending) const;
  uint64_t total_bytes(uint64_t pending) const { return fixed_offset + fixed_bytes(pending); }
  // Offsets within the fixed section.
  uint64_t barrier_offset() const { return fixed_offset + 8; }
  uint64_t sched_offset() const { return barrier_offset() + 4 * uint64_t{workgroups.size()}; }
  uint64_t cores_offset() const { return sched_offset() + 32; }
  uint64_t pending_offset() const { return cores_offset() + kCoreRecord * uint64_t{cores.size()}; }
};

// preempt.image.slot: a field's size for a configuration. A switch over the table
// with no default: a new row does not compile until it has a size.
uint32_t ctx_field_bytes(isa::CtxField f, const LaunchConfig& c);

// A primitive of the walk: which field, which part of it, which register, entry or
// lane (-1: none), for messages and for `image show` / `image diff`.
struct CtxPart {
  isa::CtxField field;
  const char* part = nullptr;  // "depth", "saved", ...; nullptr for the field itself
  int32_t index = -1;          // register, predicate or stack entry
  int32_t lane = -1;
};
std::string describe(const CtxPart& p);

// The walk (preempt.image.slot): visits every primitive of field `f` of warp `w`,
// in byte order. A visitor has
//   static constexpr bool kReads;            true: it sets w from the bytes
//   void u32(const CtxPart&, uint32_t& v, uint32_t max);  v <= max
//   void mask(const CtxPart&, uint64_t& v);               bits below wave only
//   void zero(const CtxPart&, uint32_t bytes);            bytes that are 0
// Writers see w's values; readers get them (checked) through the references.
template <class V>
void walk_field(V& v, isa::CtxField f, WarpState& w, const LaunchConfig& c);

// What a warp's slot decodes to, checked.
struct ImageError {
  uint64_t offset = 0;
  std::string message;
  std::string text() const { return "image:" + std::to_string(offset) + ": " + message; }
};

// The fixed function's section, decoded (preempt.image.fixed).
struct ImageFixed {
  uint64_t steps = 0;
  std::vector<uint32_t> barriers;  // in ImageLayout::workgroups order
  SchedState sched;
  uint32_t global_esr = 0;
  uint64_t gesr_cores = 0;
  uint32_t host_next = 0;
  uint32_t vtable = 0xffffffffu;
  std::vector<CoreState> cores;  // in ImageLayout::cores order (pending included)
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<std::vector<uint8_t>> stacks;  // in slot order
  bool operator==(const ImageFixed&) const = default;
};

// A whole image, decoded: what `image show` prints and `image diff` compares.
struct ImageContent {
  ImageLayout layout;
  std::vector<std::vector<uint8_t>> slm;  // per image core
  std::vector<WarpState> slots;           // in slot order
  ImageFixed fixed;
};

// What a restore needs to hold the image against (preempt.image.check): the
// launch's configuration and program. Without it (image show, image diff) only
// the image's own consistency is checked.
struct ImageExpect {
  LaunchConfig cfg;
  std::vector<uint32_t> buffer_bytes;
  uint32_t insns = 0;
  uint32_t host_actions = 0;
  uint32_t vtables = 0;
  bool all_cores = false;  // flow C
};

// Decodes and checks an image (preempt.image.check): the first bad field, by
// byte offset, or the content. Linear in the image's size.
std::variant<ImageContent, ImageError> read_image(std::span<const uint8_t> bytes,
                                                  const ImageExpect* expect = nullptr);

// The field that byte `off` of an image belongs to, by name (with warp, register,
// entry and lane where it has them), for the first difference of two images.
std::string describe_image_offset(const ImageContent& img, uint64_t off);

// `simtspec image show` (preempt.tool.image).
std::string show_image(const ImageContent& img);
// `simtspec image diff`: the first differing field, or nothing when equal.
std::optional<std::string> diff_images(const ImageContent& a, const ImageContent& b);

}  // namespace simt::exec

namespace simt::exec {

// The privileged instructions' moves (preempt.ctx): field `f` of warp `w` to or from
// the slot at byte `slot` of an image laid out as `layout`. load_field expects an
// image that read_image accepted.
void save_field(std::span<uint8_t> image, uint64_t slot, const ImageLayout& layout, isa::CtxField f,
                WarpState& w);
void load_field(std::span<const uint8_t> image, uint64_t slot, const ImageLayout& layout,
                isa::CtxField f, WarpState& w);

// Little-endian words of an image being written.
void put_u32(std::span<uint8_t> image, uint64_t off, uint32_t v);
void put_u64(std::span<uint8_t> image, uint64_t off, uint64_t v);

}  // namespace simt::exec
