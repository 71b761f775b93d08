#include "exec/image.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "exec/image_walk.h"

namespace simt::exec {

uint64_t setting_word(const LaunchConfig& c0, Setting s) {
  LaunchConfig c = c0;
  c.simd = c.simd_width();
  switch (s) {
#define SIMT_SETTING(name, ...) \
  case Setting::name:           \
    return setting_bits(c.name);
#include "exec/settings.def"
  }
  return 0;
}

uint32_t ctx_field_bytes(isa::CtxField f, const LaunchConfig& c) {
  using isa::CtxField;
  switch (f) {
    case CtxField::Vregs:
      return 4 * c.vregs * c.wave;
    case CtxField::Sregs:
      return 4 * c.sregs;
    case CtxField::Preds:
      return 8 * isa::kNumPreds;
    case CtxField::Pc:
      return 4;
    case CtxField::Exec:
    case CtxField::Live:
      return 8;
    case CtxField::Status:
    case CtxField::Sp:
      return 4;
    case CtxField::Mode:
      return 20;
    case CtxField::Mstack:
      return 4 + 24 * c.mask_depth;
    case CtxField::Pcstack:
      return 4 + 4 * c.call_depth;
    case CtxField::Handler:
      return 12 + (4 + 24 * c.mask_depth) + (4 + 4 * c.call_depth);
    case CtxField::Owed:
      return 4;
  }
  return 0;
}

ImageLayout ImageLayout::make(const LaunchConfig& cfg, std::vector<uint32_t> buffer_bytes,
                              uint32_t insns, uint64_t core_set) {
  ImageLayout l;
  l.cfg = cfg;
  l.cfg.simd = cfg.simd_width();
  l.buffer_bytes = std::move(buffer_bytes);
  l.insns = insns;
  l.core_set = core_set;
  for (uint32_t c = 0; c < cfg.cores && c < 64; ++c)
    if ((core_set >> c) & 1) l.cores.push_back(c);
  for (uint32_t c : l.cores)
    for (uint32_t w = c; w < cfg.workgroups; w += cfg.cores) l.workgroups.push_back(w);
  for (uint32_t w : l.workgroups)
    for (uint32_t i = 0; i < cfg.warps; ++i) l.warps.push_back(w * cfg.warps + i);
  l.header_bytes =
      kImageHeaderFixed + 8 * kImageSettings + 4 * static_cast<uint32_t>(l.buffer_bytes.size());
  uint32_t off = 0;
  for (isa::CtxField f : isa::kCtxFields) {
    const auto i = static_cast<size_t>(f);
    l.field_offset[i] = off;
    l.field_bytes[i] = ctx_field_bytes(f, l.cfg);
    off += l.field_bytes[i];
  }
  l.slot_raw = off;
  l.slot_bytes = (off + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
  l.slm_offset = l.header_bytes;
  l.slots_offset = l.slm_offset + l.slm_bytes();
  l.fixed_offset = l.slots_offset + uint64_t{l.slot_bytes} * l.warps.size();
  for (uint32_t b : l.buffer_bytes) l.buffers_total += b;
  return l;
}

uint64_t ImageLayout::fixed_bytes(uint64_t pending) const {
  return kFixedBase + 4 * uint64_t{workgroups.size()} + kCoreRecord * uint64_t{cores.size()} +
         4 * pending + buffers_total + uint64_t{cfg.stack} * warps.size();
}

std::string describe(const CtxPart& p) {
  std::string s(isa::ctx_field_name(p.field));
  const bool reg = p.field == isa::CtxField::Vregs || p.field == isa::CtxField::Sregs ||
                   p.field == isa::CtxField::Preds;
  // A register by the field's name and its own: "vregs v3", "preds p1".
  if (reg && p.index >= 0) {
    s += std::string(p.field == isa::CtxField::Vregs   ? " v"
                     : p.field == isa::CtxField::Sregs ? " s"
                                                       : " p") +
         std::to_string(p.index);
  }
  if (p.part) {
    std::string part(p.part);
    // "user_mstack.saved" with index 3 reads "user_mstack[3].saved".
    if (p.index >= 0 && !reg) {
      const size_t dot = part.rfind('.');
      if (dot != std::string::npos)
        part = part.substr(0, dot) + "[" + std::to_string(p.index) + "]" + part.substr(dot);
      else
        part = "[" + std::to_string(p.index) + "]." + part;
      s += part[0] == '[' ? part : "." + part;
    } else {
      s += "." + part;
    }
  }
  if (p.lane >= 0) s += " lane " + std::to_string(p.lane);
  return s;
}

namespace {

std::string hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

struct Bad {
  ImageError e;
};

// Reads little-endian words at explicit offsets; reading past the end is
// `truncated` at the image's length (preempt.image.check).
struct Bytes {
  std::span<const uint8_t> b;
  void need(uint64_t off, uint64_t n) const {
    if (off > b.size() || n > b.size() - off)
      throw Bad{{b.size(), "truncated: the image ends at byte " + std::to_string(b.size()) +
                               (off >= b.size() ? ", before the field at byte "
                                                : ", inside the field at byte ") +
                               std::to_string(off)}};
  }
  uint32_t u32(uint64_t off) const {
    need(off, 4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{b[off + i]} << (8 * i);
    return v;
  }
  uint64_t u64(uint64_t off) const {
    need(off, 8);
    return uint64_t{u32(off)} | uint64_t{u32(off + 4)} << 32;
  }
  std::vector<uint8_t> copy(uint64_t off, uint64_t n) const {
    need(off, n);
    return {b.begin() + static_cast<ptrdiff_t>(off), b.begin() + static_cast<ptrdiff_t>(off + n)};
  }
};

[[noreturn]] void fail(uint64_t off, std::string m) {
  throw Bad{{off, std::move(m)}};
}

// The reader of the walk: sets the warp from the bytes, checking each value.
struct SlotReader {
  static constexpr bool kReads = true;
  const Bytes& b;
  uint64_t off;  // the next primitive's offset
  uint64_t wave_mask;
  uint32_t warp;
  uint64_t last = 0;
  std::string where(const CtxPart& p) const {
    return "warp " + std::to_string(warp) + " " + describe(p);
  }
  void u32(const CtxPart& p, uint32_t& v, uint32_t max) {
    last = off;
    const uint32_t x = b.u32(off);
    if (x > max)
      fail(off, where(p) + ": " + std::to_string(x) + " is out of range (at most " +
                    std::to_string(max) + ")");
    v = x;
    off += 4;
  }
  void mask(const CtxPart& p, uint64_t& v) {
    last = off;
    const uint64_t x = b.u64(off);
    if (x & ~wave_mask) fail(off, where(p) + ": " + hex(x) + " has a lane at or above the wave");
    v = x;
    off += 8;
  }
  void zero(const CtxPart& p, uint32_t n) {
    b.need(off, n);
    for (uint32_t i = 0; i < n; ++i)
      if (b.b[off + i] != 0) fail(off + i, where(p) + ": byte must be 0");
    off += n;
  }
  void require(bool ok, const char* message) {
    if (!ok) fail(last, "warp " + std::to_string(warp) + ": " + message);
  }
};

// The collecting visitor: every primitive with its value, in byte order.
struct Collect {
  static constexpr bool kReads = false;
  struct Item {
    CtxPart part;
    uint64_t value;
    bool is_mask;
  };
  std::vector<Item> items;
  void u32(const CtxPart& p, uint32_t& v, uint32_t) { items.push_back({p, v, false}); }
  void mask(const CtxPart& p, uint64_t& v) { items.push_back({p, v, true}); }
  void zero(const CtxPart&, uint32_t) {}
  void require(bool, const char*) {}
};

std::vector<Collect::Item> collect(const WarpState& w0, const LaunchConfig& c) {
  WarpState w = w0;  // the walk takes references; the collector changes nothing
  Collect v;
  for (isa::CtxField f : isa::kCtxFields) walk_field(v, f, w, c);
  return std::move(v.items);
}

// preempt.image.check: the header's fields that a launch gives (the core set,
// the number of instructions, the number of buffers) come before the settings:
// against a launch they are checked first, in the order of their bytes. The
// sizes (header, slot, total) are the formulas of the image's own settings,
// checked once those are read (preempt.image.size).
void check_launch_header(const ImageExpect& e, uint64_t core_set, uint32_t insns, uint32_t nbuf) {
  if (core_set == 0) fail(24, "core set 0x0: the image holds no core");
  if (insns != e.insns)
    fail(32, "another program: " + std::to_string(insns) + " instructions in the image, " +
                 std::to_string(e.insns) + " in the program");
  if (nbuf != e.buffer_bytes.size())
    fail(36, "another configuration: " + std::to_string(nbuf) + " buffers in the image, " +
                 std::to_string(e.buffer_bytes.size()) + " in the program");
}

}  // namespace

std::variant<ImageContent, ImageError> read_image(std::span<const uint8_t> bytes,
                                                  const ImageExpect* expect) {
  try {
    const Bytes b{bytes};
    b.need(0, kImageHeaderFixed);
    if (std::memcmp(bytes.data(), kImageMagic, 8) != 0)
      fail(0, "not a context image: the magic is not SIMTCTX");
    if (uint32_t v = b.u32(8); v != kImageVersion)
      fail(8, "format version " + std::to_string(v) + " (this reader knows version " +
                  std::to_string(kImageVersion) + ")");
    const uint32_t header = b.u32(12);
    const uint64_t total = b.u64(16);
    const uint64_t core_set = b.u64(24);
    const uint32_t insns = b.u32(32);
    const uint32_t nbuf = b.u32(36);
    const uint32_t slot = b.u32(40);
    if (expect) check_launch_header(*expect, core_set, insns, nbuf);
    if (uint32_t t = b.u32(44); t != kImageSettings)
      fail(44, "another configuration: the image has " + std::to_string(t) +
                   " launch settings, this reader " + std::to_string(kImageSettings));
    // The header size against the launch's program where there is one, so that
    // another number of buffers is reported at B (36), the field that differs.
    const uint64_t want_header =
        kImageHeaderFixed + 8 * uint64_t{kImageSettings} +
        4 * uint64_t{expect ? static_cast<uint32_t>(expect->buffer_bytes.size()) : nbuf};
    if (header != want_header)
      fail(12, "header size " + std::to_string(header) + " disagrees with the formula (" +
                   std::to_string(want_header) + ")");
    // The settings, in the header's order: compared with the launch's, or checked
    // against the limits when there is no launch.
    LaunchConfig cfg;
    for (size_t i = 0; i < kSettingCount; ++i) {
      const uint64_t off = kImageHeaderFixed + 8 * i;
      const uint64_t v = b.u64(off);
      const SettingInfo& s = kSettings[i];
      if (expect) {
        const uint64_t want = setting_word(expect->cfg, s.id);
        if (v != want)
          fail(off, "another configuration: " + std::string(s.name) + " is " + std::to_string(v) +
                        " in the image, " + std::to_string(want) + " in the launch");
      }
      bool fits = true;
      switch (s.type) {
        case SettingType::U32:
          fits = v <= UINT32_MAX;
          break;
        case SettingType::U64:
          break;
        case SettingType::Policy:
          fits = v < std::size(kAllPolicies);
          break;
        case SettingType::Bool:
          fits = v <= 1;
          break;
      }
      // The image holds the SIMD width in effect: a launch's `simd` 0 ("equals
      // wave", state.launch.defaults) is written as the width, so 0 is no image's.
      if (s.id == Setting::simd && v == 0) fits = false;
      if (!fits) fail(off, std::string(s.name) + ": " + std::to_string(v) + " is out of range");
      switch (s.id) {
#define SIMT_SETTING(name, T, ...)                                            \
  case Setting::name:                                                         \
    cfg.name = static_cast<SettingValue<SettingType::T>>(v);                  \
    if (auto e = check_setting(cfg, Setting::name))                           \
      fail(off, "bad launch configuration: " + e->field + ": " + e->message); \
    break;
#include "exec/settings.def"
      }
    }
    if (auto e = check(cfg))
      fail(kImageHeaderFixed, "bad launch configuration: " + e->field + ": " + e->message);
    std::vector<uint32_t> buffers;
    if (expect && nbuf != expect->buffer_bytes.size())
      fail(36, "another configuration: " + std::to_string(nbuf) + " buffers in the image, " +
                   std::to_string(expect->buffer_bytes.size()) + " in the program");
    for (uint32_t i = 0; i < nbuf; ++i) {
      const uint64_t off = kImageHeaderFixed + 8 * uint64_t{kImageSettings} + 4 * uint64_t{i};
      buffers.push_back(b.u32(off));
      if (expect && buffers.back() != expect->buffer_bytes[i])
        fail(off, "another configuration: buffer " + std::to_string(i) + " is " +
                      std::to_string(buffers.back()) + " bytes in the image, " +
                      std::to_string(expect->buffer_bytes[i]) + " in the program");
    }
    if (expect && insns != expect->insns)
      fail(32, "another program: " + std::to_string(insns) + " instructions in the image, " +
                   std::to_string(expect->insns) + " in the program");
    const uint64_t all = cfg.cores == 64 ? ~0ull : (uint64_t{1} << cfg.cores) - 1;
    if (core_set == 0 || (core_set & ~all))
      fail(24, "core set " + hex(core_set) + ": empty or names a core at or past " +
                   std::to_string(cfg.cores));
    if (expect && expect->all_cores && core_set != all)
      fail(24, "core set " + hex(core_set) + ": a launch starts only from an image of every core");
    ImageContent img;
    img.layout = ImageLayout::make(cfg, buffers, insns, core_set);
    const ImageLayout& L = img.layout;
    if (slot != L.slot_bytes)
      fail(40, "slot size " + std::to_string(slot) + " disagrees with the formula (" +
                   std::to_string(L.slot_bytes) + ")");
    if (total != bytes.size()) {
      if (total > bytes.size())
        fail(bytes.size(), "truncated: the header says " + std::to_string(total) +
                               " bytes, the image has " + std::to_string(bytes.size()));
      fail(total, "the header says " + std::to_string(total) + " bytes, the image has " +
                      std::to_string(bytes.size()));
    }
    uint64_t pending = 0;
    for (size_t k = 0; k < L.cores.size(); ++k)
      pending += b.u32(L.cores_offset() + kCoreRecord * k + 28);
    if (L.total_bytes(pending) != total)
      fail(16, "total size " + std::to_string(total) + " disagrees with the formula (" +
                   std::to_string(L.total_bytes(pending)) + ")");
    // preempt.image.slm
    uint64_t off = L.slm_offset;
    for (uint32_t c : L.cores) {
      uint64_t n = 0;
      for (uint32_t w : L.workgroups) n += L.core_of(w) == c ? cfg.slm : 0;
      img.slm.push_back(b.copy(off, n));
      off += n;
    }
    // preempt.image.slot
    const uint64_t wave_mask = cfg.wave == 64 ? ~0ull : (uint64_t{1} << cfg.wave) - 1;
    for (size_t i = 0; i < L.warps.size(); ++i) {
      SlotReader r{b, L.slot_offset(i), wave_mask, L.warps[i]};
      WarpState w;
      for (isa::CtxField f : isa::kCtxFields) walk_field(r, f, w, cfg);
      r.zero(CtxPart{isa::CtxField::Owed, "reserved"}, L.slot_bytes - L.slot_raw);
      img.slots.push_back(std::move(w));
    }
    // preempt.image.fixed
    ImageFixed& fx = img.fixed;
    off = L.fixed_offset;
    fx.steps = b.u64(off);
    for (size_t k = 0; k < L.workgroups.size(); ++k) {
      const uint64_t o = L.barrier_offset() + 4 * k;
      fx.barriers.push_back(b.u32(o));
      if (fx.barriers.back() >= cfg.warps)
        fail(o, "workgroup " + std::to_string(L.workgroups[k]) + " barrier count " +
                    std::to_string(fx.barriers.back()) + " is out of range (below " +
                    std::to_string(cfg.warps) + ")");
    }
    off = L.sched_offset();
    fx.sched.cursor = b.u32(off);
    if (fx.sched.cursor >= cfg.total_warps())
      fail(off, "round-robin cursor " + std::to_string(fx.sched.cursor) + " is out of range");
    fx.sched.rng = b.u64(off + 4);
    fx.global_esr = b.u32(off + 12);
    fx.gesr_cores = b.u64(off + 16);
    if (fx.gesr_cores & ~all)
      fail(off + 16, "global ESR core set " + hex(fx.gesr_cores) + " names a core at or past " +
                         std::to_string(cfg.cores));
    fx.host_next = b.u32(off + 24);
    if (expect && fx.host_next > expect->host_actions)
      fail(off + 24, "host script position " + std::to_string(fx.host_next) +
                         " is past the script's end (" + std::to_string(expect->host_actions) +
                         " actions): restore with the host script that wrote the image");
    fx.vtable = b.u32(off + 28);
    if (expect && fx.vtable != 0xffffffffu && fx.vtable >= expect->vtables)
      fail(off + 28, "vector table " + std::to_string(fx.vtable) + " is not declared");
    uint64_t pend = L.pending_offset();
    for (size_t k = 0; k < L.cores.size(); ++k) {
      const uint64_t o = L.cores_offset() + kCoreRecord * k;
      CoreState cs;
      cs.esr = b.u32(o);
      cs.tgid = b.u32(o + 4);
      cs.tba = b.u32(o + 8);
      const char* names[] = {"TBA installed", "single-step flag", "round open",
                             "resume outstanding"};
      uint32_t flags[4];
      for (int j = 0; j < 4; ++j) {
        flags[j] = b.u32(o + 12 + 4 * uint64_t(j));
        if (flags[j] > 1)
          fail(o + 12 + 4 * uint64_t(j), "core " + std::to_string(L.cores[k]) + " " + names[j] +
                                             ": " + std::to_string(flags[j]) + " is not 0 or 1");
      }
      cs.tba_valid = flags[0], cs.single_step = flags[1], cs.round_open = flags[2],
      cs.resume = flags[3];
      const uint32_t n = b.u32(o + 28);
      for (uint32_t j = 0; j < n; ++j, pend += 4) {
        const uint32_t cause = b.u32(pend);
        if ((cause & 0xff) != static_cast<uint32_t>(isa::Event::Interrupt))
          fail(pend, "core " + std::to_string(L.cores[k]) + " pending interrupt " + hex(cause) +
                         ": its code is not interrupt (12)");
        cs.pending.push_back(cause);
      }
      fx.cores.push_back(std::move(cs));
    }
    off = pend;
    for (uint32_t n : L.buffer_bytes) {
      fx.buffers.push_back(b.copy(off, n));
      off += n;
    }
    for (size_t i = 0; i < L.warps.size(); ++i) {
      fx.stacks.push_back(b.copy(off, cfg.stack));
      off += cfg.stack;
    }
    return img;
  } catch (const Bad& bad) {
    return bad.e;
  }
}

namespace {

std::string value_text(const Collect::Item& it) {
  return it.is_mask ? hex(it.value) : std::to_string(it.value);
}

std::string bytes_summary(const std::vector<uint8_t>& b) {
  size_t nz = 0;
  for (uint8_t x : b) nz += x != 0;
  return std::to_string(b.size()) + " bytes, " + std::to_string(nz) + " not zero";
}

}  // namespace

namespace {
// A visitor that finds the primitive holding byte `target` of a slot.
struct Locate {
  static constexpr bool kReads = false;
  uint64_t off, target;
  std::optional<std::string> found;
  void at(const CtxPart& p, uint64_t n) {
    if (!found && target >= off && target < off + n) found = describe(p);
    off += n;
  }
  void u32(const CtxPart& p, uint32_t&, uint32_t) { at(p, 4); }
  void mask(const CtxPart& p, uint64_t&) { at(p, 8); }
  void zero(const CtxPart& p, uint32_t n) { at(p, n); }
  void require(bool, const char*) {}
};
}  // namespace

std::string describe_image_offset(const ImageContent& img, uint64_t off) {
  const ImageLayout& L = img.layout;
  const std::string at = " (byte " + std::to_string(off) + ")";
  static const std::pair<uint64_t, const char*> kHeader[] = {
      {0, "header magic"},       {8, "header version"},    {12, "header size"},
      {16, "header total size"}, {24, "header core set"},  {32, "header instructions"},
      {36, "header buffers"},    {40, "header slot size"}, {44, "header settings"}};
  if (off < kImageHeaderFixed) {
    const char* name = "header";
    for (const auto& [o, n] : kHeader)
      if (off >= o) name = n;
    return name + at;
  }
  if (off < kImageHeaderFixed + 8 * uint64_t{kImageSettings})
    return "header setting " + std::string(kSettings[(off - kImageHeaderFixed) / 8].name) + at;
  if (off < L.slm_offset)
    return "header buffer " + std::to_string((off - kImageHeaderFixed - 8 * kImageSettings) / 4) +
           " size" + at;
  if (off < L.slots_offset) {
    uint64_t rel = off - L.slm_offset;
    for (size_t k = 0; k < L.cores.size(); ++k) {
      const uint64_t n = k < img.slm.size() ? img.slm[k].size() : 0;
      if (rel < n)
        return "slm core " + std::to_string(L.cores[k]) + " byte " + std::to_string(rel) + at;
      rel -= n;
    }
    return "slm" + at;
  }
  if (off < L.fixed_offset) {
    const uint64_t i = (off - L.slots_offset) / L.slot_bytes;
    const std::string warp = "warp " + std::to_string(L.warps[i]) + " ";
    if (i < img.slots.size()) {
      WarpState w = img.slots[i];
      Locate v{L.slot_offset(i), off, std::nullopt};
      for (isa::CtxField f : isa::kCtxFields) walk_field(v, f, w, L.cfg);
      if (v.found) return warp + *v.found + at;
    }
    return warp + "reserved" + at;
  }
  const uint64_t f = off - L.fixed_offset;
  if (f < 8) return "steps" + at;
  if (off < L.sched_offset())
    return "workgroup " + std::to_string(L.workgroups[(off - L.barrier_offset()) / 4]) +
           " barrier arrived" + at;
  static const std::pair<uint64_t, const char*> kSched[] = {
      {0, "round-robin cursor"}, {4, "random state"},          {12, "global ESR"},
      {16, "global ESR cores"},  {24, "host script position"}, {28, "vector table"}};
  if (off < L.cores_offset()) {
    const char* name = "";
    for (const auto& [o, n] : kSched)
      if (off - L.sched_offset() >= o) name = n;
    return name + at;
  }
  if (off < L.pending_offset()) {
    static const char* kCore[] = {"ESR",
                                  "TGID",
                                  "TBA",
                                  "TBA installed",
                                  "single-step flag",
                                  "round open",
                                  "resume outstanding",
                                  "pending interrupts"};
    const uint64_t rel = off - L.cores_offset();
    return "core " + std::to_string(L.cores[rel / kCoreRecord]) + " " +
           kCore[(rel % kCoreRecord) / 4] + at;
  }
  uint64_t pending = 0;
  for (const CoreState& c : img.fixed.cores) pending += c.pending.size();
  if (off < L.pending_offset() + 4 * pending) return "pending interrupt" + at;
  uint64_t rel = off - L.pending_offset() - 4 * pending;
  for (size_t b = 0; b < L.buffer_bytes.size(); ++b) {
    if (rel < L.buffer_bytes[b])
      return "buffer " + std::to_string(b) + " byte " + std::to_string(rel) + at;
    rel -= L.buffer_bytes[b];
  }
  if (L.cfg.stack)
    return "warp " + std::to_string(L.warps[rel / L.cfg.stack]) + " program stack byte " +
           std::to_string(rel % L.cfg.stack) + at;
  return "past the end" + at;
}

std::string show_image(const ImageContent& img) {
  const ImageLayout& L = img.layout;
  std::ostringstream o;
  uint64_t pending = 0;
  for (const CoreState& c : img.fixed.cores) pending += c.pending.size();
  o << "context image, format version " << kImageVersion << ", " << L.total_bytes(pending)
    << " bytes\n";
  o << "header: " << L.header_bytes << " bytes; program: " << L.insns << " instructions, "
    << L.buffer_bytes.size() << " buffers\n";
  o << "configuration:";
  for (const SettingInfo& s : kSettings) {
    o << " " << s.name << "=";
    if (s.id == Setting::policy)
      o << policy_name(L.cfg.policy);
    else
      o << setting_word(L.cfg, s.id);
  }
  o << "\ncores:";
  for (uint32_t c : L.cores) o << " " << c;
  o << "\nslot: " << L.slot_bytes << " bytes (" << L.slot_raw << " of fields)\n";
  for (size_t k = 0; k < L.cores.size(); ++k)
    o << "slm core " << L.cores[k] << ": " << bytes_summary(img.slm[k]) << "\n";
  for (size_t i = 0; i < img.slots.size(); ++i) {
    o << "warp " << L.warps[i] << " (slot " << i << "):\n";
    const auto items = collect(img.slots[i], L.cfg);
    // Lanes of one vector register on one line; every other primitive on its own.
    for (size_t j = 0; j < items.size();) {
      const CtxPart& p = items[j].part;
      if (p.lane >= 0) {
        o << "  " << describe(CtxPart{p.field, p.part, p.index}) << ":";
        size_t k = j;
        for (; k < items.size() && items[k].part.field == p.field &&
               items[k].part.index == p.index && items[k].part.lane >= 0;
             ++k)
          o << " " << value_text(items[k]);
        o << "\n";
        j = k;
        continue;
      }
      o << "  " << describe(p) << " = " << value_text(items[j]) << "\n";
      ++j;
    }
  }
  const ImageFixed& fx = img.fixed;
  o << "fixed function:\n  steps = " << fx.steps << "\n";
  for (size_t k = 0; k < fx.barriers.size(); ++k)
    o << "  workgroup " << L.workgroups[k] << " barrier arrived = " << fx.barriers[k] << "\n";
  o << "  round-robin cursor = " << fx.sched.cursor << "\n  random state = " << hex(fx.sched.rng)
    << "\n  global ESR = " << hex(fx.global_esr) << ", cores " << hex(fx.gesr_cores)
    << "\n  host script position = " << fx.host_next << "\n  vector table = "
    << (fx.vtable == 0xffffffffu ? std::string("none") : std::to_string(fx.vtable)) << "\n";
  for (size_t k = 0; k < fx.cores.size(); ++k) {
    const CoreState& c = fx.cores[k];
    o << "  core " << L.cores[k] << ": ESR " << hex(c.esr) << ", TGID " << c.tgid << ", TBA "
      << c.tba << (c.tba_valid ? " (installed)" : " (not installed)") << ", single-step "
      << (c.single_step ? "on" : "off") << ", round " << (c.round_open ? "open" : "closed")
      << ", resume " << (c.resume ? "outstanding" : "none") << ", pending:";
    for (uint32_t p : c.pending) o << " " << hex(p);
    o << "\n";
  }
  for (size_t i = 0; i < fx.buffers.size(); ++i)
    o << "  buffer " << i << ": " << bytes_summary(fx.buffers[i]) << "\n";
  for (size_t i = 0; i < fx.stacks.size(); ++i)
    o << "  warp " << L.warps[i] << " program stack: " << bytes_summary(fx.stacks[i]) << "\n";
  return o.str();
}

std::optional<std::string> diff_images(const ImageContent& a, const ImageContent& b) {
  const ImageLayout& la = a.layout;
  const ImageLayout& lb = b.layout;
  auto differ = [](const std::string& what, const std::string& x, const std::string& y) {
    return what + ": " + x + " vs " + y;
  };
  for (const SettingInfo& s : kSettings) {
    const uint64_t x = setting_word(la.cfg, s.id), y = setting_word(lb.cfg, s.id);
    if (x != y)
      return differ("header setting " + std::string(s.name), std::to_string(x), std::to_string(y));
  }
  if (la.insns != lb.insns)
    return differ("header instructions", std::to_string(la.insns), std::to_string(lb.insns));
  if (la.buffer_bytes != lb.buffer_bytes) {
    if (la.buffer_bytes.size() != lb.buffer_bytes.size())
      return differ("header buffers", std::to_string(la.buffer_bytes.size()),
                    std::to_string(lb.buffer_bytes.size()));
    for (size_t i = 0; i < la.buffer_bytes.size(); ++i)
      if (la.buffer_bytes[i] != lb.buffer_bytes[i])
        return differ("header buffer " + std::to_string(i) + " size",
                      std::to_string(la.buffer_bytes[i]), std::to_string(lb.buffer_bytes[i]));
  }
  if (la.core_set != lb.core_set)
    return differ("header core set", hex(la.core_set), hex(lb.core_set));
  for (size_t k = 0; k < a.slm.size(); ++k)
    for (size_t i = 0; i < a.slm[k].size(); ++i)
      if (a.slm[k][i] != b.slm[k][i])
        return differ("slm core " + std::to_string(la.cores[k]) + " byte " + std::to_string(i),
                      hex(a.slm[k][i]), hex(b.slm[k][i]));
  for (size_t i = 0; i < a.slots.size(); ++i) {
    const auto x = collect(a.slots[i], la.cfg), y = collect(b.slots[i], lb.cfg);
    for (size_t j = 0; j < x.size() && j < y.size(); ++j) {
      // The walks differ in shape only where a stack depth differs, which is
      // itself a primitive compared before the entries it governs.
      if (x[j].value != y[j].value || describe(x[j].part) != describe(y[j].part))
        return differ("warp " + std::to_string(la.warps[i]) + " " + describe(x[j].part),
                      value_text(x[j]), value_text(y[j]));
    }
  }
  const ImageFixed& fa = a.fixed;
  const ImageFixed& fb = b.fixed;
  if (fa.steps != fb.steps)
    return differ("steps", std::to_string(fa.steps), std::to_string(fb.steps));
  for (size_t k = 0; k < fa.barriers.size(); ++k)
    if (fa.barriers[k] != fb.barriers[k])
      return differ("workgroup " + std::to_string(la.workgroups[k]) + " barrier arrived",
                    std::to_string(fa.barriers[k]), std::to_string(fb.barriers[k]));
  if (fa.sched.cursor != fb.sched.cursor)
    return differ("round-robin cursor", std::to_string(fa.sched.cursor),
                  std::to_string(fb.sched.cursor));
  if (fa.sched.rng != fb.sched.rng)
    return differ("random state", hex(fa.sched.rng), hex(fb.sched.rng));
  if (fa.global_esr != fb.global_esr)
    return differ("global ESR", hex(fa.global_esr), hex(fb.global_esr));
  if (fa.gesr_cores != fb.gesr_cores)
    return differ("global ESR cores", hex(fa.gesr_cores), hex(fb.gesr_cores));
  if (fa.host_next != fb.host_next)
    return differ("host script position", std::to_string(fa.host_next),
                  std::to_string(fb.host_next));
  if (fa.vtable != fb.vtable) return differ("vector table", hex(fa.vtable), hex(fb.vtable));
  for (size_t k = 0; k < fa.cores.size(); ++k) {
    const CoreState& x = fa.cores[k];
    const CoreState& y = fb.cores[k];
    const std::string c = "core " + std::to_string(la.cores[k]) + " ";
    if (x.esr != y.esr) return differ(c + "ESR", hex(x.esr), hex(y.esr));
    if (x.tgid != y.tgid) return differ(c + "TGID", std::to_string(x.tgid), std::to_string(y.tgid));
    if (x.tba != y.tba) return differ(c + "TBA", std::to_string(x.tba), std::to_string(y.tba));
    if (x.tba_valid != y.tba_valid)
      return differ(c + "TBA installed", std::to_string(x.tba_valid), std::to_string(y.tba_valid));
    if (x.single_step != y.single_step)
      return differ(c + "single-step flag", std::to_string(x.single_step),
                    std::to_string(y.single_step));
    if (x.round_open != y.round_open)
      return differ(c + "round open", std::to_string(x.round_open), std::to_string(y.round_open));
    if (x.resume != y.resume)
      return differ(c + "resume outstanding", std::to_string(x.resume), std::to_string(y.resume));
    if (x.pending != y.pending) {
      if (x.pending.size() != y.pending.size())
        return differ(c + "pending interrupts", std::to_string(x.pending.size()),
                      std::to_string(y.pending.size()));
      for (size_t j = 0; j < x.pending.size(); ++j)
        if (x.pending[j] != y.pending[j])
          return differ(c + "pending interrupt " + std::to_string(j), hex(x.pending[j]),
                        hex(y.pending[j]));
    }
  }
  for (size_t i = 0; i < fa.buffers.size(); ++i)
    for (size_t j = 0; j < fa.buffers[i].size(); ++j)
      if (fa.buffers[i][j] != fb.buffers[i][j])
        return differ("buffer " + std::to_string(i) + " byte " + std::to_string(j),
                      hex(fa.buffers[i][j]), hex(fb.buffers[i][j]));
  for (size_t i = 0; i < fa.stacks.size(); ++i)
    for (size_t j = 0; j < fa.stacks[i].size(); ++j)
      if (fa.stacks[i][j] != fb.stacks[i][j])
        return differ(
            "warp " + std::to_string(la.warps[i]) + " program stack byte " + std::to_string(j),
            hex(fa.stacks[i][j]), hex(fb.stacks[i][j]));
  return std::nullopt;
}

void put_u32(std::span<uint8_t> image, uint64_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) image[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(std::span<uint8_t> image, uint64_t off, uint64_t v) {
  put_u32(image, off, static_cast<uint32_t>(v));
  put_u32(image, off + 4, static_cast<uint32_t>(v >> 32));
}

namespace {
// The writer of the walk: the warp's values into the bytes (which start zero).
struct SlotWriter {
  static constexpr bool kReads = false;
  std::span<uint8_t> b;
  uint64_t off;
  void u32(const CtxPart&, uint32_t& v, uint32_t) {
    put_u32(b, off, v);
    off += 4;
  }
  void mask(const CtxPart&, uint64_t& v) {
    put_u64(b, off, v);
    off += 8;
  }
  void zero(const CtxPart&, uint32_t n) {
    std::fill_n(b.begin() + static_cast<ptrdiff_t>(off), n, uint8_t{0});
    off += n;
  }
  void require(bool, const char*) {}
};
}  // namespace

void save_field(std::span<uint8_t> image, uint64_t slot, const ImageLayout& layout, isa::CtxField f,
                WarpState& w) {
  SlotWriter v{image, slot + layout.field_offset[static_cast<size_t>(f)]};
  walk_field(v, f, w, layout.cfg);
}

void load_field(std::span<const uint8_t> image, uint64_t slot, const ImageLayout& layout,
                isa::CtxField f, WarpState& w) {
  const Bytes b{image};
  const uint64_t wave_mask = layout.cfg.wave == 64 ? ~0ull : (uint64_t{1} << layout.cfg.wave) - 1;
  SlotReader v{b, slot + layout.field_offset[static_cast<size_t>(f)], wave_mask, 0};
  try {
    walk_field(v, f, w, layout.cfg);
  } catch (const Bad&) {
    // read_image accepted the image: no value is out of range.
  }
}

}  // namespace simt::exec
