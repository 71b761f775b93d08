#include "isa/isa.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace simt::isa {
namespace {

using K = OperandKind;
constexpr K Dst = K::Dst, VDst = K::VDst, SDst = K::SDst, PDst = K::PDst, Src = K::Src,
            VSrc = K::VSrc, Lane = K::Lane, Pred = K::Pred, Mem = K::Mem, Label = K::Label;

template <typename... Ks>
constexpr Signature make_sig(Ks... ks) {
  Signature s;
  OperandKind arr[] = {ks..., K::Dst};
  s.count = sizeof...(Ks);
  for (size_t i = 0; i < sizeof...(Ks); ++i) s.kinds[i] = arr[i];
  return s;
}

constexpr OpInfo kTable[] = {
#define SIG(...) make_sig(__VA_ARGS__)
#define X(id, mn, fam, sig, sem, feat, ctl, mode, clause, summary) \
  {Op::id, mn, Family::fam, sig, Feature::feat, Control::ctl, Mode::mode, clause, summary},
#include "isa/instructions.def"
#undef X
#undef SIG
};
static_assert(std::size(kTable) == kOpCount);

constexpr SpecialInfo kSpecials[] = {
    {Special::Lane, "lane", true, false, "state.special.lane", "lane index, 0 to wave-1"},
    {Special::Warp, "warp", false, false, "state.special.warp", "warp index within the workgroup"},
    {Special::GWarp, "gwarp", false, false, "state.special.warp", "global warp index"},
    {Special::Wg, "wg", false, false, "state.special.wg", "workgroup index"},
    {Special::Core, "core", false, false, "state.special.core", "core running the workgroup"},
    {Special::Wave, "wave", false, false, "state.special.size", "wave size in lanes"},
    {Special::Simd, "simd", false, false, "state.special.size", "SIMD width in lanes"},
    {Special::NWarps, "nwarps", false, false, "state.special.size", "warps per workgroup"},
    {Special::NWg, "nwg", false, false, "state.special.size", "number of workgroups"},
    {Special::Exec, "exec", false, true, "state.special.exec",
     "exec mask (see state.special.exec)"},
    {Special::ExecLo, "exec_lo", false, true, "state.special.exec", "exec bits 0-31"},
    {Special::ExecHi, "exec_hi", false, true, "state.special.exec", "exec bits 32-63"},
    {Special::Esr, "esr", false, false, "trap.esr",
     "the core's ESR to the warp named by TGID, 0 to others"},
    {Special::Tgid, "tgid", false, false, "trap.esr", "the core's TGID"},
    {Special::Gesr, "gesr", false, false, "trap.esr",
     "the global ESR through the core's view, to TGID"},
};
static_assert(std::size(kSpecials) == static_cast<size_t>(Special::kCount));

struct EventName {
  Event e;
  std::string_view name;
};
constexpr EventName kEvents[] = {
#define X(id, code, name) {Event::id, name},
#include "isa/events.def"
#undef X
};
constexpr Event kEventList[] = {
#define X(id, code, name) Event::id,
#include "isa/events.def"
#undef X
};

}  // namespace

std::span<const OpInfo> table() {
  return kTable;
}
const OpInfo& info(Op op) {
  return kTable[static_cast<size_t>(op)];
}

std::optional<Op> find(std::string_view mnemonic) {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, Op>();
    for (const auto& row : kTable) m->emplace(row.mnemonic, row.op);
    return m;
  }();
  auto it = map->find(mnemonic);
  if (it == map->end()) return std::nullopt;
  return it->second;
}

std::string_view feature_name(Feature f) {
  switch (f) {
    case Feature::alu:
      return "alu";
    case Feature::mem:
      return "mem";
    case Feature::xlane:
      return "xlane";
    case Feature::bar:
      return "bar";
    case Feature::branch:
      return "branch";
    case Feature::trap:
      return "trap";
    case Feature::preempt:
      return "preempt";
    case Feature::wave:
      return "wave";
    case Feature::watomic:
      return "watomic";
  }
  return "?";
}

std::optional<Feature> find_feature(std::string_view name) {
  for (Feature f : kAllFeatures)
    if (feature_name(f) == name) return f;
  return std::nullopt;
}

std::string_view operand_kind_name(OperandKind k) {
  switch (k) {
    case K::Dst:
      return "D";
    case K::VDst:
      return "vD";
    case K::SDst:
      return "sD";
    case K::PDst:
      return "pD";
    case K::Src:
      return "A";
    case K::VSrc:
      return "vA";
    case K::Lane:
      return "L";
    case K::Pred:
      return "P";
    case K::Mem:
      return "M";
    case K::Label:
      return "label";
  }
  return "?";
}

std::string_view family_name(Family f) {
  static constexpr std::string_view kNames[] = {
      "unary",  "binary", "compare",  "select",  "pred",        "load",        "store",
      "ballot", "vote",   "readlane", "shuffle", "atomic.lane", "atomic.warp", "control"};
  static_assert(std::size(kNames) == static_cast<size_t>(Family::Control) + 1);
  return kNames[static_cast<size_t>(f)];
}

std::string_view control_name(Control c) {
  switch (c) {
    case Control::Next:
      return "next";
    case Control::Jump:
      return "jump";
    case Control::Branch:
      return "branch";
    case Control::Call:
      return "call";
    case Control::VectorCall:
      return "vector call";
    case Control::Return:
      return "return";
    case Control::Stop:
      return "stop";
    case Control::Exit:
      return "exit";
    case Control::Push:
      return "push";
    case Control::Invert:
      return "invert";
    case Control::Pop:
      return "pop";
    case Control::LoopPush:
      return "loop push";
    case Control::LoopControl:
      return "loop control";
    case Control::LoopNext:
      return "loop next";
    case Control::RegionBegin:
      return "region begin";
    case Control::RegionEnd:
      return "region end";
  }
  return "?";
}

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::Any:
      return "any";
    case Mode::User:
      return "user";
    case Mode::Handler:
      return "handler";
    case Mode::Switch:
      return "switch";
    case Mode::System:
      return "system";
  }
  return "?";
}

namespace {
struct CtxFieldInfo {
  std::string_view name, summary;
};
constexpr CtxFieldInfo kCtxFieldInfo[] = {
#define SIMT_CTX_FIELD(id, name, summary) {#name, summary},
#include "isa/context.def"
#undef SIMT_CTX_FIELD
};
}  // namespace

std::string_view ctx_field_name(CtxField f) {
  return kCtxFieldInfo[static_cast<size_t>(f)].name;
}
std::string_view ctx_field_summary(CtxField f) {
  return kCtxFieldInfo[static_cast<size_t>(f)].summary;
}

std::span<const SpecialInfo> specials() {
  return kSpecials;
}
const SpecialInfo& special_info(Special s) {
  return kSpecials[static_cast<size_t>(s)];
}
std::optional<Special> find_special(std::string_view name) {
  for (const auto& s : kSpecials)
    if (s.name == name) return s.id;
  return std::nullopt;
}

std::string_view event_name(Event e) {
  for (const auto& n : kEvents)
    if (n.e == e) return n.name;
  return "none";
}
std::optional<Event> find_event(std::string_view name) {
  for (const auto& n : kEvents)
    if (n.name == name) return n.e;
  return std::nullopt;
}
std::span<const Event> all_events() {
  return kEventList;
}

}  // namespace simt::isa
