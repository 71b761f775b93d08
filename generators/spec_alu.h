// The ALU as spec/alu.md states it, for the two evaluators (evaluator.h,
// warp_eval.h): written from the clauses, not from the executor
// (interpreter/exec/semantics.h), so that the oracles and the reference can be
// compared. Mnemonics are looked up by name; an unknown one is a checked error
// of the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace simt::gen::spec {

// Whether `op` names a unary, a binary, a division (a binary that raises
// div_zero on a zero divisor, alu.div.zero) ALU operation or a comparison.
bool is_unary(const std::string& op);
bool is_binary(const std::string& op);
bool is_division(const std::string& op);
bool is_compare(const std::string& cmp);
// The mnemonics each of those accepts: written from spec/alu.md, not taken from
// the instruction table (tests/gen_pools_test.cpp checks that they cover exactly
// its rows of the Unary, Binary and Compare families).
const std::set<std::string>& unary_ops();
const std::set<std::string>& binary_ops();
const std::set<std::string>& division_ops();
const std::set<std::string>& compare_ops();

// The result of `op D, A, B` (B is ignored by the unary operations). The
// divisor of a division must not be 0. An unknown `op` throws std::logic_error.
uint32_t alu(const std::string& op, uint32_t a, uint32_t b);
// alu.cmp: `cmp.C` of A and B. An unknown `cmp` throws std::logic_error.
bool compare(const std::string& cmp, uint32_t a, uint32_t b);

// atom.ops, atom.lock, atom.unlock: for an atomic mnemonic (atom.OP or watom.OP),
// the word's new value from its old value and the operands A and B, and what the
// destination receives.
struct AtomicStep {
  uint32_t word, result;
};
AtomicStep atomic(const std::string& op, uint32_t old, uint32_t a, uint32_t b);

// state.special.*: the value of a uniform special register (an isa::Special
// index) for the warp with global id `gwarp` of a launch, with exec `exec`.
// Nothing for %lane, which is per-lane.
struct Launch {
  uint32_t wave, simd, warps, workgroups, cores;
};
std::optional<uint32_t> special(int32_t index, const Launch& l, uint32_t gwarp, uint64_t exec);

}  // namespace simt::gen::spec
