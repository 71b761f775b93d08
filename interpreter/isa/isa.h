// Instruction-set definitions shared by the assembler and the executor.
// The rows come from instructions.def; nothing here is hand-kept per mnemonic.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace simt::isa {

enum class Op : uint16_t {
#define X(id, mn, fam, sig, sem, feat, ctl, mode, clause, summary) id,
#include "isa/instructions.def"
#undef X
  kCount
};

inline constexpr size_t kOpCount = static_cast<size_t>(Op::kCount);

// Operand kinds of an instruction signature (spec/syntax.md, syntax.operand.*).
enum class OperandKind : uint8_t { Dst, VDst, SDst, PDst, Src, VSrc, Lane, Pred, Mem, Label };

// How the executor evaluates an instruction (spec/alu.md ... spec/branch.md).
enum class Family : uint8_t {
  Unary,
  Binary,
  Compare,
  Select,
  PredOp,
  Load,
  Store,
  Ballot,
  Vote,
  ReadLane,
  Shuffle,
  AtomLane,
  AtomWarp,
  Control
};

// Feature tags (MACHINE.md): which mechanism or chapter an instruction belongs to.
enum class Feature : uint8_t { alu, mem, xlane, bar, branch, trap, preempt, wave, watomic };
inline constexpr Feature kAllFeatures[] = {Feature::alu,     Feature::mem,    Feature::xlane,
                                           Feature::bar,     Feature::branch, Feature::trap,
                                           Feature::preempt, Feature::wave,   Feature::watomic};
static_assert(std::size(kAllFeatures) == size_t(Feature::watomic) + 1, "a feature is missing");

// What an instruction does to control flow and to the mask stack, as the static
// analyses see it (flow/flow.h; instructions.def explains each kind). Every switch
// over it lists every kind, so that a new kind does not compile until each analysis
// handles it.
enum class Control : uint8_t {
  Next,         // goes on at PC + 1
  Jump,         // jmp: to its label
  Branch,       // cbr: to PC + 1 or to its label
  Call,         // call: enters its label's code; goes on at PC + 1
  VectorCall,   // vcall: enters a vector-table entry's code; goes on at PC + 1
  Return,       // ret: to the address on the PC stack
  Stop,         // tret, tpause: the path ends
  Exit,         // exit: the active lanes retire (branch.exit)
  Push,         // push: opens an if entry
  Invert,       // invert: acts on the if entry on top
  Pop,          // pop: closes the top entry
  LoopPush,     // lpush: opens a loop entry
  LoopControl,  // brk, cont: act on the innermost loop entry
  LoopNext,     // lnext: acts on the loop entry on top
  RegionBegin,  // subv.begin: opens a sub-vector region
  RegionEnd,    // subv.end: closes it
};
inline constexpr size_t kControlCount = static_cast<size_t>(Control::RegionEnd) + 1;

// The code an instruction may stand in (trap.terms).
enum class Mode : uint8_t {
  Any,
  User,     // not handler code (trap.valid.mode)
  Handler,  // handler code only (trap.valid.mode)
  Switch,   // switches between normal and sub-vector mode: not handler code, which
            // runs in normal mode (wave.valid.handler)
  System,   // system code only: the system routine's privileged instructions
            // (preempt.valid.mode)
};
inline constexpr size_t kModeCount = static_cast<size_t>(Mode::System) + 1;

// The context fields of a warp, in slot order (context.def, preempt.image.slot).
enum class CtxField : uint8_t {
#define SIMT_CTX_FIELD(id, name, summary) id,
#include "isa/context.def"
#undef SIMT_CTX_FIELD
};
inline constexpr CtxField kCtxFields[] = {
#define SIMT_CTX_FIELD(id, name, summary) CtxField::id,
#include "isa/context.def"
#undef SIMT_CTX_FIELD
};
inline constexpr size_t kCtxFieldCount = std::size(kCtxFields);
std::string_view ctx_field_name(CtxField f);
std::string_view ctx_field_summary(CtxField f);

struct Signature {
  std::array<OperandKind, 4> kinds{};
  uint8_t count = 0;
  std::span<const OperandKind> view() const { return {kinds.data(), count}; }
};

struct OpInfo {
  Op op;
  std::string_view mnemonic;
  Family family;
  Signature sig;
  Feature feature;
  Control control;
  Mode mode;
  std::string_view clause;
  std::string_view summary;
};

// The table, indexed by Op.
std::span<const OpInfo> table();
const OpInfo& info(Op op);
std::optional<Op> find(std::string_view mnemonic);

std::string_view feature_name(Feature f);
std::optional<Feature> find_feature(std::string_view name);
std::string_view operand_kind_name(OperandKind k);
// The names `simtspec doc instructions` gives the Control and Mode columns.
std::string_view control_name(Control c);
// The instruction table's `family` column (also oracle.fuzz.signature's family).
std::string_view family_name(Family f);
std::string_view mode_name(Mode m);

// ---- special registers (spec/state.md, state.special.*) -------------------------
enum class Special : uint8_t {
  Lane,    // per-lane: lane index 0..wave-1
  Warp,    // warp index within its workgroup
  GWarp,   // global warp index
  Wg,      // workgroup index
  Core,    // core index of the warp's workgroup
  Wave,    // wave size
  Simd,    // SIMD width
  NWarps,  // warps per workgroup
  NWg,     // number of workgroups
  Exec,    // exec mask (low word when read; a write sets bits 0-31 and clears 32-63)
  ExecLo,  // exec bits 0-31
  ExecHi,  // exec bits 32-63
  Esr,     // trap.esr: the core's ESR to the TGID warp, 0 to others
  Tgid,    // trap.esr: the core's TGID
  Gesr,    // trap.esr, trap.gesr: the global ESR through the core's view
  kCount
};

struct SpecialInfo {
  Special id;
  std::string_view name;  // without the leading '%'
  bool per_lane;
  bool writable;
  std::string_view clause;
  std::string_view summary;
};

std::span<const SpecialInfo> specials();
std::optional<Special> find_special(std::string_view name);
const SpecialInfo& special_info(Special s);

// ---- machine events (spec/events.md) ---------------------------------------------
// Codes are stable: they are the ESR event field and appear in results files.
enum class Event : uint8_t {
  None = 0,
#define X(id, code, name) id = code,
#include "isa/events.def"
#undef X
};

std::string_view event_name(Event e);
std::optional<Event> find_event(std::string_view name);
std::span<const Event> all_events();

// Limits of the architecture (spec/state.md, state.launch.limits).
inline constexpr uint32_t kMaxWave = 64;
inline constexpr uint32_t kMaxVRegs = 256;
inline constexpr uint32_t kMaxSRegs = 256;
inline constexpr uint32_t kNumPreds = 16;  // p0..p15; `pt` is index kNumPreds
inline constexpr uint32_t kPredTrue = kNumPreds;
inline constexpr uint32_t kMaxSlmBytes = 65536;

}  // namespace simt::isa
