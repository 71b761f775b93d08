// The abstract syntax of a simtspec program (spec/syntax.md). Every node keeps the
// span it came from so that validation errors and traces can point at the source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/isa.h"
#include "syntax/diag.h"

namespace simt::syntax {

enum class RegFile : uint8_t { None, V, S, P, PTrue, Special, Imm };

// A register, immediate or special-register reference.
struct Value {
  RegFile file = RegFile::None;
  uint32_t index = 0;  // register number or isa::Special
  int64_t imm = 0;     // for Imm; kept as written (may be negative)
  // For Imm: the number as the program text spells it, sign included ("0x2A",
  // "-1"), printed back as it is (exec.trace.format); empty when a tool built the
  // value, which then prints in decimal. Not part of equality.
  std::string text;
  bool operator==(const Value& o) const {
    return file == o.file && index == o.index && imm == o.imm;
  }
  bool is_reg() const { return file == RegFile::V || file == RegFile::S; }
};

enum class OperandType : uint8_t { Value, Pred, Mem, Label };

struct Operand {
  OperandType type = OperandType::Value;
  Value value;          // Value: the operand; Pred: P or PTrue; Mem: the base (None if absent)
  bool negate = false;  // Pred only
  int64_t offset = 0;   // Mem only: byte offset added to the base
  // Mem only: the offset as the program text spells it ("+0x10", "-4" after a base;
  // "16", "-4" alone); empty if absent or built by a tool. Not part of equality.
  std::string offset_text;
  std::string name;  // Mem: address space (buffer name or `slm`); Label: label name
  Span span;
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
  StmtKind kind = StmtKind::Instr;
  isa::Op op = isa::Op::Nop;      // Instr only
  std::vector<Operand> operands;  // Instr: per signature; If/Break/Continue: one Pred
  std::string label;              // Label only
  Span span;                      // the statement's first token (and its length)
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

struct LaunchDirectives {
  Directive<uint32_t> wave, simd, warps, workgroups, cores, slm, vregs, sregs, mask_depth,
      call_depth, stack;
  Directive<std::string> policy;
  Directive<uint64_t> seed, max_steps;
  bool operator==(const LaunchDirectives&) const = default;
};

struct Program {
  LaunchDirectives launch;
  Directive<std::string> handler;  // trap.install: `.handler LABEL`
  std::vector<BufferDecl> buffers;
  std::vector<Stmt> stmts;
  // AST equality ignores spans and comments: it is what `roundtrip` checks.
  bool operator==(const Program& o) const {
    return launch == o.launch && handler == o.handler && buffers == o.buffers && stmts == o.stmts;
  }
};

}  // namespace simt::syntax
