// The predecoded program (spec/execution.md, exec.predecode): a flat array of
// instructions with labels resolved to PCs, registers to indices, operands to
// typed sources, and each instruction's handler chosen once from the table.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/config.h"
#include "isa/isa.h"
#include "syntax/ast.h"
#include "syntax/diag.h"

namespace simt::exec {

class Machine;
struct WarpState;
struct Insn;

// What a handler tells the step loop (exec.step).
enum class Flow : uint8_t {
  Next,   // PC <- PC + 1
  Jump,   // the handler set the PC (or the warp's status) itself
  Event,  // a machine event: nothing was committed; the machine records it
};

using Handler = Flow (*)(Machine&, WarpState&, const Insn&);

enum class SrcKind : uint8_t {
  None,     // absent (e.g. a memory operand with only an offset): reads 0
  VReg,     // per-lane vector register
  LaneId,   // %lane: per-lane
  Imm,      // immediate
  SReg,     // scalar register
  Special,  // uniform special register
};

struct Src {
  SrcKind kind = SrcKind::None;
  uint32_t index = 0;  // register number or isa::Special
  uint32_t imm = 0;
  bool per_lane() const { return kind == SrcKind::VReg || kind == SrcKind::LaneId; }
};

enum class DstKind : uint8_t { None, V, S, P, Special };

inline constexpr uint16_t kSpaceNone = 0xffff;
inline constexpr uint16_t kSpaceSlm = 0xfffe;

struct Insn {
  Handler fn = nullptr;
  isa::Op op = isa::Op::Nop;
  DstKind dst_kind = DstKind::None;
  uint8_t pa = 0, pb = 0;       // predicate operands (isa::kPredTrue for pt)
  bool na = false, nb = false;  // negated
  uint16_t space = kSpaceNone;  // buffer index, kSpaceSlm or kSpaceNone
  uint32_t dst = 0;
  Src a, b, c;          // sources in operand order (a memory operand's base is one)
  uint32_t offset = 0;  // memory byte offset (two's complement)
  uint32_t target = 0;  // branch target PC
};

struct BufferLayout {
  std::string name;
  syntax::ElemType type = syntax::ElemType::U32;
  syntax::BufferMode mode = syntax::BufferMode::InOut;
  uint32_t count = 0;  // elements
  uint32_t bytes = 0;
  std::vector<uint8_t> init;  // initial contents, `bytes` long
};

// trap.host: one action of a launch's host script, resolved against the program.
using syntax::HostKind;
using syntax::kAllCores;
struct HostAction {
  uint64_t step = 0;  // applied when exactly this many steps have been executed
  HostKind kind = HostKind::Interrupt;
  int32_t core = kAllCores;  // a core index, or kAllCores
  // interrupt: the code; bind_tba: the handler entry's PC; bind_vtable: the table's
  // index in Program::vtables; single_step: 1 on, 0 off; resume, preempt: unused.
  uint32_t value = 0;
  syntax::PreemptFlow flow = syntax::PreemptFlow::A;  // preempt
  int32_t intruder = -1;  // preempt, flow B: index in Program::intruders, or -1 for none
  bool operator==(const HostAction&) const = default;
};
using syntax::PreemptFlow;

struct Program {
  LaunchConfig config;  // the configuration it was assembled for
  std::vector<Insn> insns;
  std::vector<std::string> text;    // each instruction printed, for traces and listings
  std::vector<syntax::Span> spans;  // each instruction's source span
  std::vector<BufferLayout> buffers;
  std::optional<uint32_t> handler;             // trap.install: the `.handler` label's PC
  std::vector<std::vector<uint32_t>> vtables;  // trap.vector: each `.vtable`'s entry PCs
  std::vector<HostAction> host;                // trap.host: the launch's host script
  // preempt.routine: the system routine's save and restore entries.
  std::optional<uint32_t> sys_save, sys_restore;
  // preempt.intruder: the intruders of the host script's flow-B actions.
  std::vector<std::shared_ptr<const Program>> intruders;
  // Registers each warp has: .vregs/.sregs, plus one register that reads 0 when
  // handler code reads past them (trap.regs).
  uint32_t vregs_alloc = 0, sregs_alloc = 0;
  // wave.shared: the first shared vector register (`.vshared`); vregs_alloc when
  // the program declares none.
  uint32_t shared_base = 0;
  // Identifies the program text and configuration: snapshots restore only into a
  // machine with the same fingerprint (exec.snapshot).
  uint64_t fingerprint = 0;
  size_t size() const { return insns.size(); }
};

// Resolves buffer sizes and initial data for a configuration (state.memory.buffer).
// Reports config errors located at the buffer declaration.
std::vector<BufferLayout> layout_buffers(const syntax::Program& p, const LaunchConfig& cfg,
                                         syntax::Diagnostics& d);

// Predecodes a validated, expanded program whose buffers layout_buffers has laid out
// for `cfg` without errors. Returns nothing (and adds diagnostics) if anything the
// executor relies on does not hold.
// `host` is the launch's host script (trap.host): resolved here, its errors
// reported with the step's origin and span.
std::optional<Program> predecode(const syntax::Program& expanded, const LaunchConfig& cfg,
                                 std::vector<BufferLayout> buffers, syntax::Diagnostics& d,
                                 const std::vector<syntax::HostStep>& host = {});

// Chooses the handler of one decoded instruction (dispatch.cpp; from the table).
Handler select_handler(const Insn& in);

}  // namespace simt::exec
