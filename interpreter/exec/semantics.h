// Lane semantics of every instruction, one small functor per row of the table
// (isa/instructions.def). Each reads like its spec clause; the active-lane loop,
// operand fetch and event checks live once in dispatch.cpp.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "exec/preempt.h"
#include "exec/program.h"

namespace simt::exec::sem {

// ---- alu.* ----------------------------------------------------------------------
struct Mov {  // alu.mov
  static uint32_t apply(uint32_t a) { return a; }
};
struct Not {  // alu.not
  static uint32_t apply(uint32_t a) { return ~a; }
};
struct Popc {  // alu.popc
  static uint32_t apply(uint32_t a) { return static_cast<uint32_t>(std::popcount(a)); }
};

// Binary functors: `faults` says whether `fault(a, b)` must be checked first
// (exception condition of the clause) before any lane commits.
struct Pure {
  static constexpr bool faults = false;
  static bool fault(uint32_t, uint32_t) { return false; }
};
struct Add : Pure {  // alu.add
  static uint32_t apply(uint32_t a, uint32_t b) { return a + b; }
};
struct Sub : Pure {  // alu.sub
  static uint32_t apply(uint32_t a, uint32_t b) { return a - b; }
};
struct Mul : Pure {  // alu.mul
  static uint32_t apply(uint32_t a, uint32_t b) { return a * b; }
};
struct MulHiS : Pure {  // alu.mulhi
  static uint32_t apply(uint32_t a, uint32_t b) {
    int64_t p = int64_t{static_cast<int32_t>(a)} * int64_t{static_cast<int32_t>(b)};
    return static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
  }
};
struct MulHiU : Pure {  // alu.mulhi
  static uint32_t apply(uint32_t a, uint32_t b) {
    return static_cast<uint32_t>((uint64_t{a} * uint64_t{b}) >> 32);
  }
};
struct DivBase {
  static constexpr bool faults = true;  // alu.div.zero
  static bool fault(uint32_t, uint32_t b) { return b == 0; }
};
struct DivS : DivBase {  // alu.div: truncates toward zero; INT_MIN / -1 = INT_MIN
  static uint32_t apply(uint32_t a, uint32_t b) {
    int32_t x = static_cast<int32_t>(a), y = static_cast<int32_t>(b);
    if (y == -1) return 0u - a;
    return static_cast<uint32_t>(x / y);
  }
};
struct DivU : DivBase {  // alu.div
  static uint32_t apply(uint32_t a, uint32_t b) { return a / b; }
};
struct RemS : DivBase {  // alu.rem: sign of the dividend; INT_MIN rem -1 = 0
  static uint32_t apply(uint32_t a, uint32_t b) {
    int32_t x = static_cast<int32_t>(a), y = static_cast<int32_t>(b);
    if (y == -1) return 0;
    return static_cast<uint32_t>(x % y);
  }
};
struct RemU : DivBase {  // alu.rem
  static uint32_t apply(uint32_t a, uint32_t b) { return a % b; }
};
struct And : Pure {  // alu.bitwise
  static uint32_t apply(uint32_t a, uint32_t b) { return a & b; }
};
struct Or : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) { return a | b; }
};
struct Xor : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) { return a ^ b; }
};
struct Shl : Pure {  // alu.shift: the amount is B mod 32
  static uint32_t apply(uint32_t a, uint32_t b) { return a << (b & 31); }
};
struct Shr : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) { return a >> (b & 31); }
};
struct Sra : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) {
    return static_cast<uint32_t>(static_cast<int32_t>(a) >> (b & 31));
  }
};
struct MinS : Pure {  // alu.minmax
  static uint32_t apply(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a) < static_cast<int32_t>(b) ? a : b;
  }
};
struct MaxS : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a) > static_cast<int32_t>(b) ? a : b;
  }
};
struct MinU : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) { return a < b ? a : b; }
};
struct MaxU : Pure {
  static uint32_t apply(uint32_t a, uint32_t b) { return a > b ? a : b; }
};

// alu.cmp
struct CmpEq {
  static bool apply(uint32_t a, uint32_t b) { return a == b; }
};
struct CmpNe {
  static bool apply(uint32_t a, uint32_t b) { return a != b; }
};
struct CmpLtS {
  static bool apply(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a) < static_cast<int32_t>(b);
  }
};
struct CmpLeS {
  static bool apply(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a) <= static_cast<int32_t>(b);
  }
};
struct CmpGtS {
  static bool apply(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a) > static_cast<int32_t>(b);
  }
};
struct CmpGeS {
  static bool apply(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a) >= static_cast<int32_t>(b);
  }
};
struct CmpLtU {
  static bool apply(uint32_t a, uint32_t b) { return a < b; }
};
struct CmpLeU {
  static bool apply(uint32_t a, uint32_t b) { return a <= b; }
};
struct CmpGtU {
  static bool apply(uint32_t a, uint32_t b) { return a > b; }
};
struct CmpGeU {
  static bool apply(uint32_t a, uint32_t b) { return a >= b; }
};

struct Sel {};  // alu.sel: D = P ? A : B

// alu.pred: whole-mask operations; the dispatcher merges the result into active lanes.
struct PAnd {
  static uint64_t apply(uint64_t a, uint64_t b) { return a & b; }
};
struct POr {
  static uint64_t apply(uint64_t a, uint64_t b) { return a | b; }
};
struct PXor {
  static uint64_t apply(uint64_t a, uint64_t b) { return a ^ b; }
};
struct PMov {
  static uint64_t apply(uint64_t a, uint64_t) { return a; }
};

// ---- mem.* ----------------------------------------------------------------------
template <uint32_t Size, bool Signed>
struct LoadOf {
  static constexpr uint32_t size = Size;
  static uint32_t extend(uint32_t raw) {
    if constexpr (Size == 1 && Signed)
      return static_cast<uint32_t>(int32_t{static_cast<int8_t>(raw)});
    if constexpr (Size == 2 && Signed)
      return static_cast<uint32_t>(int32_t{static_cast<int16_t>(raw)});
    return raw;
  }
};
using Ld32 = LoadOf<4, false>;
using LdU8 = LoadOf<1, false>;
using LdS8 = LoadOf<1, true>;
using LdU16 = LoadOf<2, false>;
using LdS16 = LoadOf<2, true>;

template <uint32_t Size>
struct StoreOf {
  static constexpr uint32_t size = Size;
};
using St32 = StoreOf<4>;
using St8 = StoreOf<1>;
using St16 = StoreOf<2>;

// ---- atom.* : read-modify-write of a 32-bit word --------------------------------
// apply(old, a, b) is the word's new value (atom.ops); result(old, new) is what the
// destination receives: the old value, except for the lock operations.
struct AtomRmw {
  static uint32_t result(uint32_t old, uint32_t) { return old; }
};
struct AtomAdd : AtomRmw {  // atom.ops
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old + a; }
};
struct AtomSub : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old - a; }
};
struct AtomMinS : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return MinS::apply(old, a); }
};
struct AtomMaxS : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return MaxS::apply(old, a); }
};
struct AtomMinU : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old < a ? old : a; }
};
struct AtomMaxU : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old > a ? old : a; }
};
struct AtomAnd : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old & a; }
};
struct AtomOr : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old | a; }
};
struct AtomXor : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t) { return old ^ a; }
};
struct AtomXchg : AtomRmw {
  static uint32_t apply(uint32_t, uint32_t a, uint32_t) { return a; }
};
struct AtomCas : AtomRmw {
  static uint32_t apply(uint32_t old, uint32_t a, uint32_t b) { return old == a ? b : old; }
};
struct AtomLock {  // atom.lock: 0 -> 1; 1 if acquired
  static uint32_t apply(uint32_t old, uint32_t, uint32_t) { return old == 0 ? 1 : old; }
  static uint32_t result(uint32_t old, uint32_t) { return old == 0 ? 1 : 0; }
};
struct AtomUnlock {  // atom.unlock: -> 0; 1 if a lock was held
  static uint32_t apply(uint32_t, uint32_t, uint32_t) { return 0; }
  static uint32_t result(uint32_t old, uint32_t) { return old != 0 ? 1 : 0; }
};

// ---- xlane.* --------------------------------------------------------------------
struct BallotLo {
  static constexpr int shift = 0;
};
struct BallotHi {
  static constexpr int shift = 32;
};
struct VoteAny {  // xlane.vote
  static bool apply(uint64_t p_active, uint64_t exec) { return exec != 0 && p_active != 0; }
};
struct VoteAll {
  static bool apply(uint64_t p_active, uint64_t exec) { return p_active == exec; }
};
struct ReadLane {};
struct ShflIdx {  // xlane.shfl
  static uint32_t source(uint32_t lane, uint32_t b) {
    (void)lane;
    return b;
  }
};
struct ShflXor {
  static uint32_t source(uint32_t lane, uint32_t b) { return lane ^ b; }
};

// ---- branch.*, bar.* : control instructions, defined in control.cpp ----------------
#define SIMT_CONTROL(name)                                      \
  struct name {                                                 \
    static Flow exec(Machine& m, WarpState& w, const Insn& in); \
  };
SIMT_CONTROL(Bar)
SIMT_CONTROL(Exit)
SIMT_CONTROL(Nop)
SIMT_CONTROL(Cbr)
SIMT_CONTROL(Jmp)
SIMT_CONTROL(Call)
SIMT_CONTROL(Ret)
SIMT_CONTROL(Push)
SIMT_CONTROL(Invert)
SIMT_CONTROL(Pop)
SIMT_CONTROL(LPush)
SIMT_CONTROL(Brk)
SIMT_CONTROL(Cont)
SIMT_CONTROL(LNext)
SIMT_CONTROL(Sys)
SIMT_CONTROL(TRet)
SIMT_CONTROL(TPause)
SIMT_CONTROL(TClear)
SIMT_CONTROL(FrameLd)
SIMT_CONTROL(FrameSt)
SIMT_CONTROL(VCall)
SIMT_CONTROL(SubvBegin)
SIMT_CONTROL(SubvEnd)
#undef SIMT_CONTROL

// ---- preempt.ctx, preempt.sysret: the system routine's instructions. The system
// routine runs them in system mode (preempt.cpp, from kSysOp and kField); as
// application instructions (only without the flow checks) they raise
// illegal_instruction.
Flow system_only(Machine& m, WarpState& w);
template <isa::CtxField F>
struct CtxSave {
  static constexpr SysOp kSysOp = SysOp::Save;
  static constexpr isa::CtxField kField = F;
  static Flow exec(Machine& m, WarpState& w, const Insn&) { return system_only(m, w); }
};
template <isa::CtxField F>
struct CtxLoad {
  static constexpr SysOp kSysOp = SysOp::Load;
  static constexpr isa::CtxField kField = F;
  static Flow exec(Machine& m, WarpState& w, const Insn&) { return system_only(m, w); }
};
struct SysRet {
  static constexpr SysOp kSysOp = SysOp::Return;
  static constexpr isa::CtxField kField = isa::CtxField::Vregs;  // none
  static Flow exec(Machine& m, WarpState& w, const Insn&) { return system_only(m, w); }
};

}  // namespace simt::exec::sem
