#include "spec_alu.h"

#include <stdexcept>

#include <algorithm>
#include <bit>
#include <set>

#include "isa/isa.h"

namespace simt::gen::spec {

namespace {

int32_t s32(uint32_t x) {
  return static_cast<int32_t>(x);
}
uint32_t u32(int64_t x) {
  return static_cast<uint32_t>(static_cast<uint64_t>(x));
}

}  // namespace

const std::set<std::string>& unary_ops() {
  static const std::set<std::string> ops = {"mov", "not", "popc"};
  return ops;
}
const std::set<std::string>& division_ops() {
  static const std::set<std::string> ops = {"div", "div.u", "rem", "rem.u"};
  return ops;
}
const std::set<std::string>& binary_ops() {
  static const std::set<std::string> ops = {
      "add", "sub", "mul", "mulhi", "mulhi.u", "div", "div.u", "rem",   "rem.u", "and",
      "or",  "xor", "shl", "shr",   "sra",     "min", "max",   "min.u", "max.u"};
  return ops;
}
const std::set<std::string>& compare_ops() {
  static const std::set<std::string> ops = {"cmp.eq",   "cmp.ne",  "cmp.lt",   "cmp.le",
                                            "cmp.gt",   "cmp.ge",  "cmp.lt.u", "cmp.le.u",
                                            "cmp.gt.u", "cmp.ge.u"};
  return ops;
}

bool is_unary(const std::string& op) {
  return unary_ops().count(op) > 0;
}
bool is_division(const std::string& op) {
  return division_ops().count(op) > 0;
}
bool is_binary(const std::string& op) {
  return binary_ops().count(op) > 0;
}
bool is_compare(const std::string& cmp) {
  return compare_ops().count(cmp) > 0;
}

uint32_t alu(const std::string& op, uint32_t a, uint32_t b) {
  const int32_t sa = s32(a), sb = s32(b);
  if (op == "mov") return a;                                           // alu.mov
  if (op == "not") return ~a;                                          // alu.not
  if (op == "popc") return static_cast<uint32_t>(std::popcount(a));    // alu.popc
  if (op == "add") return a + b;                                       // alu.add
  if (op == "sub") return a - b;                                       // alu.sub
  if (op == "mul") return a * b;                                       // alu.mul
  if (op == "mulhi") return u32((int64_t{sa} * int64_t{sb}) >> 32);    // alu.mulhi
  if (op == "mulhi.u") return u32((uint64_t{a} * uint64_t{b}) >> 32);  // alu.mulhi
  if (op == "div") {                                                   // alu.div
    if (sa == INT32_MIN && sb == -1) return a;
    return static_cast<uint32_t>(sa / sb);  // C++ truncates toward zero
  }
  if (op == "div.u") return a / b;
  if (op == "rem") {  // alu.rem
    if (sa == INT32_MIN && sb == -1) return 0;
    return static_cast<uint32_t>(sa % sb);  // C++: the sign of the dividend
  }
  if (op == "rem.u") return a % b;
  if (op == "and") return a & b;  // alu.bitwise
  if (op == "or") return a | b;
  if (op == "xor") return a ^ b;
  if (op == "shl") return a << (b % 32);  // alu.shift
  if (op == "shr") return a >> (b % 32);
  if (op == "sra") return static_cast<uint32_t>(sa >> (b % 32));    // arithmetic in C++20
  if (op == "min") return static_cast<uint32_t>(std::min(sa, sb));  // alu.minmax
  if (op == "max") return static_cast<uint32_t>(std::max(sa, sb));
  if (op == "min.u") return std::min(a, b);
  if (op == "max.u") return std::max(a, b);
  throw std::logic_error("spec::alu: unknown operation " + op);  // callers check the mnemonic
}

bool compare(const std::string& cmp, uint32_t a, uint32_t b) {
  const int32_t sa = s32(a), sb = s32(b);
  if (cmp == "cmp.eq") return a == b;
  if (cmp == "cmp.ne") return a != b;
  if (cmp == "cmp.lt") return sa < sb;
  if (cmp == "cmp.le") return sa <= sb;
  if (cmp == "cmp.gt") return sa > sb;
  if (cmp == "cmp.ge") return sa >= sb;
  if (cmp == "cmp.lt.u") return a < b;
  if (cmp == "cmp.le.u") return a <= b;
  if (cmp == "cmp.gt.u") return a > b;
  if (cmp == "cmp.ge.u") return a >= b;
  throw std::logic_error("spec::compare: unknown comparison " + cmp);  // callers check it
}

std::optional<uint32_t> special(int32_t index, const Launch& l, uint32_t gwarp, uint64_t exec) {
  const uint32_t warps = l.warps ? l.warps : 1;
  switch (static_cast<isa::Special>(index)) {
    case isa::Special::Warp:  // state.special.warp
      return gwarp % warps;
    case isa::Special::GWarp:
      return gwarp;
    case isa::Special::Wg:  // state.special.wg
      return gwarp / warps;
    case isa::Special::Core:  // state.special.core, state.launch.placement
      return gwarp / warps % (l.cores ? l.cores : 1);
    case isa::Special::Wave:  // state.special.size
      return l.wave;
    case isa::Special::Simd:
      return l.simd;
    case isa::Special::NWarps:
      return l.warps;
    case isa::Special::NWg:
      return l.workgroups;
    case isa::Special::Exec:  // state.special.exec
    case isa::Special::ExecLo:
      return static_cast<uint32_t>(exec);
    case isa::Special::ExecHi:
      return static_cast<uint32_t>(exec >> 32);
    default:
      return std::nullopt;
  }
}

// atom.ops (table), atom.lock, atom.unlock.
AtomicStep atomic(const std::string& op, uint32_t old, uint32_t a, uint32_t b) {
  const std::string k = op.substr(op.find('.') + 1);  // the suffix after atom. / watom.
  if (k == "lock") return old == 0 ? AtomicStep{1, 1} : AtomicStep{old, 0};
  if (k == "unlock") return {0, old != 0 ? 1u : 0u};
  uint32_t now = 0;
  if (k == "add")
    now = old + a;
  else if (k == "sub")
    now = old - a;
  else if (k == "min")
    now = static_cast<int32_t>(a) < static_cast<int32_t>(old) ? a : old;
  else if (k == "max")
    now = static_cast<int32_t>(a) > static_cast<int32_t>(old) ? a : old;
  else if (k == "min.u")
    now = a < old ? a : old;
  else if (k == "max.u")
    now = a > old ? a : old;
  else if (k == "and")
    now = old & a;
  else if (k == "or")
    now = old | a;
  else if (k == "xor")
    now = old ^ a;
  else if (k == "xchg")
    now = a;
  else if (k == "cas")
    now = old == a ? b : old;
  else
    throw std::logic_error("spec::atomic: unknown operation " + op);
  return {now, old};
}

}  // namespace simt::gen::spec
