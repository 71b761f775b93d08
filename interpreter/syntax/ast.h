// The abstract syntax of a simtspec program (spec/syntax.md). Every node keeps the
// span it came from so that validation errors and traces can point at the source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/settings.h"
#include "isa/isa.h"
#include "syntax/diag.h"

namespace simt::syntax {

enum class RegFile : uint8_t { None, V, S, P, PTrue, Special, Imm };

// A register, immediate or special-register reference.
struct Value {
  RegFile file = RegFile::None;
  uint32_t index = 0;  // register number or isa::Special
  int64_t imm = 0;     // for Imm; kept as written (may be negative)
  bool operator==(const Value& o) const {
    return file == o.file && index == o.index && imm == o.imm;
  }
  bool is_reg() const { return file == RegFile::V || file == RegFile::S; }
};

enum class OperandType : uint8_t { Value, Pred, Mem, Label };

// Members ordered by size: a program holds a few of these per instruction, twice
// (as written and expanded), so padding counts.
struct Operand {
  Value value;         // Value: the operand; Pred: P or PTrue; Mem: the base (None if absent)
  int64_t offset = 0;  // Mem only: byte offset added to the base
  std::string name;    // Mem: address space (buffer name or `slm`); Label: label name
  // The number as the program text spells it, sign included, printed back as it is
  // (syntax.print.instr): for an immediate (Value with file Imm) its value ("0x2A",
  // "-1"); for a memory operand its offset ("+0x10", "-4" after a base; "16", "-4"
  // alone). Empty if there is none or a tool built the operand: then it prints in
  // decimal. Not part of equality.
  std::string spelling;
  Span span;
  OperandType type = OperandType::Value;
  bool negate = false;  // Pred only
  bool operator==(const Operand& o) const {
    return type == o.type && value == o.value && negate == o.negate && offset == o.offset &&
           name == o.name;
  }
};

enum class StmtKind : uint8_t {
  Label,     // `name:`
  Instr,     // a table instruction
  If,        // if P
  Else,      // else
  EndIf,     // endif
  Loop,      // loop
  Break,     // break [P]
  Continue,  // continue [P]
  EndLoop,   // endloop
};

struct Stmt {
  std::vector<Operand> operands;  // Instr: per signature; If/Break/Continue: one Pred
  std::string label;              // Label only
  Span span;                      // the statement's first token (and its length)
  StmtKind kind = StmtKind::Instr;
  isa::Op op = isa::Op::Nop;  // Instr only
  bool operator==(const Stmt& o) const {
    return kind == o.kind && (kind != StmtKind::Instr || op == o.op) && operands == o.operands &&
           label == o.label;
  }
};

// Size expressions in buffer declarations (syntax.buffer.size): integers, the launch
// symbols wave, simd, warps, workgroups, threads, + - * with parentheses, and unary -.
struct SizeExpr {
  enum class Kind : uint8_t { Num, Sym, Add, Sub, Mul, Neg } kind = Kind::Num;
  int64_t num = 0;
  std::string sym;
  std::shared_ptr<SizeExpr> lhs, rhs;  // Neg: lhs only
  bool operator==(const SizeExpr& o) const;
};

enum class ElemType : uint8_t { U8, U16, U32, I32 };
enum class BufferMode : uint8_t { In, Out, InOut };

struct BufferInit {
  enum class Kind : uint8_t { Zero, List, Iota, Fill } kind = Kind::Zero;
  std::vector<int64_t> values;  // List: the values; Iota: {start, step}; Fill: {value}
  bool operator==(const BufferInit&) const = default;
};

struct BufferDecl {
  std::string name;
  ElemType type = ElemType::U32;
  SizeExpr count;
  BufferMode mode = BufferMode::InOut;
  BufferInit init;
  Span span;
  bool operator==(const BufferDecl& o) const {
    return name == o.name && type == o.type && count == o.count && mode == o.mode && init == o.init;
  }
};

uint32_t elem_size(ElemType t);
std::string_view elem_type_name(ElemType t);
std::string_view buffer_mode_name(BufferMode m);

// Launch and implementation directives (syntax.directive.*). Absent means "default".
template <typename T>
struct Directive {
  std::optional<T> value;
  Span span;
  bool operator==(const Directive& o) const { return value == o.value; }
};

// One field per row of exec/settings.def that has a directive, as written.
struct LaunchDirectives {
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, ...) \
  SIMT_SETTING_IF_##dir(Directive<exec::SettingWritten<exec::SettingType::T>> name;)
#include "exec/settings.def"
  bool operator==(const LaunchDirectives&) const = default;
};

// trap.vector: `.vtable NAME L0, L1, ...`
struct VTableDecl {
  std::string name;
  std::vector<std::string> labels;
  Span span;
  bool operator==(const VTableDecl& o) const { return name == o.name && labels == o.labels; }
};

struct Program {
  LaunchDirectives launch;
  Directive<std::string> handler;                       // trap.install: `.handler LABEL`
  std::vector<Directive<std::string>> handler_entries;  // trap.install: `.handler_entry LABEL`
  std::vector<VTableDecl> vtables;                      // trap.vector
  Directive<uint32_t> vshared;                          // wave.shared: `.vshared BASE`
  Directive<std::string> sys_save;                      // preempt.routine: `.sys_save LABEL`
  Directive<std::string> sys_restore;                   // preempt.routine: `.sys_restore LABEL`
  std::vector<BufferDecl> buffers;
  std::vector<Stmt> stmts;
  // AST equality ignores spans and comments: it is what `roundtrip` checks.
  bool operator==(const Program& o) const {
    return launch == o.launch && handler == o.handler && handler_entries == o.handler_entries &&
           vtables == o.vtables && vshared == o.vshared && sys_save == o.sys_save &&
           sys_restore == o.sys_restore && buffers == o.buffers && stmts == o.stmts;
  }
};

// trap.host: the kinds of host action (host_actions.def).
enum class HostKind : uint8_t {
#define SIMT_HOST_ACTION(id, name, keys, clause) id,
#include "syntax/host_actions.def"
#undef SIMT_HOST_ACTION
};
inline constexpr HostKind kAllHostKinds[] = {
#define SIMT_HOST_ACTION(id, name, keys, clause) HostKind::id,
#include "syntax/host_actions.def"
#undef SIMT_HOST_ACTION
};
// preempt.request: what follows the save.
enum class PreemptFlow : uint8_t { A, B };
inline constexpr int32_t kAllCores = -1;

// trap.host: one action of a host script as written (in TOML or JSON), before its
// names are resolved against a program (exec::HostAction is the resolved form).
struct HostStep {
  uint64_t step = 0;
  HostKind kind = HostKind::Interrupt;
  int32_t core = kAllCores;           // a core index, or kAllCores ("all")
  uint32_t code = 0;                  // interrupt
  bool on = false;                    // single_step
  std::string name;                   // bind_tba: the label; bind_vtable: the table
  PreemptFlow flow = PreemptFlow::A;  // preempt
  std::string intruder;               // preempt, flow B: the intruder program's text, or empty
  std::string origin;                 // where it was written (a file name), for messages
  Span span;                          // its position there (line 0: not known)
  bool operator==(const HostStep& o) const {
    return step == o.step && kind == o.kind && core == o.core && code == o.code && on == o.on &&
           name == o.name && flow == o.flow && intruder == o.intruder;
  }
};
std::string_view host_kind_name(HostKind k);
// The keys an action takes besides `step` and `action` (host_actions.def).
std::string_view host_kind_keys(HostKind k);
// "interrupt, bind_tba, ...": every action's name, for messages.
std::string host_kind_list();

}  // namespace simt::syntax
