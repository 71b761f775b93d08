// Building blocks of generated-program models (generators/program.h) for the
// unit tests of the two evaluators and the oracles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/isa.h"
#include "program.h"

namespace simt::test::genb {

using gen::Cond;
using gen::Kind;
using gen::Operand;
using gen::Program;
using gen::Stmt;

inline Operand R(int i) {
  return {Operand::K::Reg, i};
}
inline Operand I(int32_t v) {
  return {Operand::K::Imm, v};
}
inline Operand Lane() {
  return {Operand::K::Lane, 0};
}

inline Operand Sp(isa::Special sp) {
  return {Operand::K::Special, static_cast<int32_t>(sp)};
}
inline Operand S5() {  // the scalar result register s5
  return {Operand::K::Scalar, 0};
}

inline Cond cmp(const std::string& c, Operand a, Operand b, int pred = 0, bool negate = false) {
  Cond k;
  k.cmp = c;
  k.a = a;
  k.b = b;
  k.pred = pred;
  k.negate = negate;
  return k;
}
inline Cond reuse(int pred, bool negate = false) {
  Cond k;
  k.reuse = true;
  k.pred = pred;
  k.negate = negate;
  return k;
}

inline Stmt alu(const std::string& op, int dst, Operand a, Operand b = I(0)) {
  Stmt s;
  s.kind = Kind::Alu;
  s.op = op;
  s.dst = dst;
  s.a = a;
  s.b = b;
  return s;
}
inline Stmt sel(int dst, Cond c, Operand a, Operand b) {
  Stmt s;
  s.kind = Kind::Select;
  s.dst = dst;
  s.cond = c;
  s.a = a;
  s.b = b;
  return s;
}
inline Stmt if_(Cond c, std::vector<Stmt> then,
                std::optional<std::vector<Stmt>> other = std::nullopt) {
  Stmt s;
  s.kind = Kind::If;
  s.cond = c;
  s.body = std::move(then);
  s.has_else = other.has_value();
  if (other) s.other = std::move(*other);
  return s;
}
inline Stmt loop(int limit, std::vector<Stmt> body) {
  Stmt s;
  s.kind = Kind::Loop;
  s.limit = limit;
  s.body = std::move(body);
  return s;
}
inline Stmt loop_reg(Operand a, std::vector<Stmt> body) {
  Stmt s;
  s.kind = Kind::Loop;
  s.limit_reg = true;
  s.a = a;
  s.body = std::move(body);
  return s;
}
inline Stmt ctl(Kind k, Cond c) {
  Stmt s;
  s.kind = k;
  s.cond = c;
  return s;
}
inline Stmt brk(Cond c) {
  return ctl(Kind::Break, c);
}
inline Stmt cont(Cond c) {
  return ctl(Kind::Continue, c);
}
inline Stmt exit_(Cond c) {
  return ctl(Kind::Exit, c);
}
inline Stmt call(int f) {
  Stmt s;
  s.kind = Kind::Call;
  s.slot = f;
  return s;
}
inline Stmt load_input(int dst) {
  Stmt s;
  s.kind = Kind::LoadInput;
  s.dst = dst;
  return s;
}
inline Stmt store_scratch(int slot, Operand a) {
  Stmt s;
  s.kind = Kind::StoreScratch;
  s.slot = slot;
  s.a = a;
  return s;
}
inline Stmt load_scratch(int dst, int slot) {
  Stmt s;
  s.kind = Kind::LoadScratch;
  s.dst = dst;
  s.slot = slot;
  return s;
}

// A statement of any kind with a body (skip, jump, counted loop, exec narrowing, ...).
inline Stmt block(Kind k, std::vector<Stmt> body = {}) {
  Stmt s;
  s.kind = k;
  s.body = std::move(body);
  return s;
}
inline Stmt scalar(const std::string& op, Operand a, Operand b = I(0), int accumulate_into = -1) {
  Stmt s;
  s.kind = Kind::ScalarAlu;
  s.op = op;
  s.a = a;
  s.b = b;
  s.accumulate = accumulate_into >= 0;
  s.dst = accumulate_into < 0 ? 0 : accumulate_into;
  return s;
}
inline Stmt trap(gen::TrapKind k, int dst = 0) {
  Stmt s;
  s.kind = Kind::Trap;
  s.slot = static_cast<int>(k);
  s.dst = dst;
  return s;
}

inline Program prog(uint32_t wave, int nregs, std::vector<Stmt> main,
                    std::vector<std::vector<Stmt>> functions = {}) {
  Program p;
  p.wave = wave;
  p.nregs = nregs;
  p.main = std::move(main);
  p.functions = std::move(functions);
  return p;
}

}  // namespace simt::test::genb
