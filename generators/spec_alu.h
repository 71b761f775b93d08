// The ALU as spec/alu.md states it, for the two evaluators (evaluator.h,
// warp_eval.h): written from the clauses, not from the executor
// (interpreter/exec/semantics.h), so that the oracles and the reference can be
// compared. Mnemonics are looked up by name; an unknown one is a checked error
// of the caller.
#pragma once

#include <cstdint>
#include <string>

namespace simt::gen::spec {

// Whether `op` names a unary, a binary, a division (a binary that raises
// div_zero on a zero divisor, alu.div.zero) ALU operation or a comparison.
bool is_unary(const std::string& op);
bool is_binary(const std::string& op);
bool is_division(const std::string& op);
bool is_compare(const std::string& cmp);

// The result of `op D, A, B` (B is ignored by the unary operations). The
// divisor of a division must not be 0.
uint32_t alu(const std::string& op, uint32_t a, uint32_t b);
// alu.cmp: `cmp.C` of A and B.
bool compare(const std::string& cmp, uint32_t a, uint32_t b);

}  // namespace simt::gen::spec
