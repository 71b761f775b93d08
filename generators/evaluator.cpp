// The sequential evaluator (evaluator.h). Each thread runs alone through a
// recursive interpreter over the statement tree. Every statement does what the
// instructions the printer writes for it do (program.cpp), on a private copy of
// the registers of the printed program: v0..v35 (`.vregs 36`) and p0..p15.
#include "evaluator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace simt::gen {

namespace {

constexpr int kVregs = 36;                  // the printer declares `.vregs 36`
constexpr int kPreds = 16;                  // state.warp: 16 predicates per lane
constexpr uint32_t kDefaultMaskDepth = 32;  // state.launch.defaults
constexpr uint32_t kMaxMaskDepth = 1024;    // state.launch.limits
constexpr uint64_t kMaxSteps = 10'000'000;  // state.launch.defaults (max_steps)
// Each loop iteration costs the warp at least 5 steps (cmp.ge, brk, add, lnext,
// cbr), so a lane running this many iterations means the reference ends
// `step_limit`: the evaluator gives up instead.
constexpr uint64_t kMaxIterations = kMaxSteps / 5;

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

int32_t s32(uint32_t x) {
  return static_cast<int32_t>(x);
}
uint32_t u32(int64_t x) {
  return static_cast<uint32_t>(static_cast<uint64_t>(x));
}

// spec/alu.md: the result of `op D, A, B` (B is ignored by the unary ops).
// Division by zero cannot happen: the printer makes every divisor odd.
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
  return 0;  // unreachable: checked before running
}

// spec/alu.md, alu.cmp.
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
  return false;  // unreachable: checked before running
}

// The vector register a data register index prints as (program.cpp, data()).
int data_reg(const Program& p, int i) {
  return 2 + i % std::max(1, p.nregs);
}

// Static checks: the printed program must load (syntax, validation, launch
// configuration) and must not trap for a reason the lanes cannot see (mask-stack
// overflow). Only what the printer prints is checked.
class Checker {
 public:
  explicit Checker(const Program& p) : p_(p) {}

  std::string run() {
    const Program& p = p_;
    if (p.wave < 1 || p.wave > 64 || !std::has_single_bit(p.wave))
      fail("wave " + std::to_string(p.wave) + " is not a power of two from 1 to 64");
    if (p.warps < 1 || p.workgroups < 1 || uint64_t{p.warps} * p.workgroups > 4096)
      fail("warps x workgroups must be from 1 to 4096");
    if (p.policy != "round_robin" && p.policy != "lowest_pc_first" && p.policy != "oldest_first" &&
        p.policy != "random")
      fail("unknown policy " + p.policy);
    if (p.mask_depth > kMaxMaskDepth) fail("mask_depth above " + std::to_string(kMaxMaskDepth));
    // Data registers are v2 .. v(1 + nregs) and there are 36 vector registers.
    if (p.nregs < 0 || p.nregs > kVregs - 2) fail("nregs out of range");
    if (!error_.empty()) return error_;
    if (p.input.size() > p.threads()) fail("more input values than threads");
    block(p.main, false, 0);
    for (const auto& f : p.functions) block(f, true, 0);
    const uint32_t limit = p.mask_depth ? p.mask_depth : kDefaultMaskDepth;
    if (error_.empty() && entries(p.main, false) > limit)
      fail("the mask stack may overflow (nesting deeper than mask_depth)");
    return error_;
  }

 private:
  void fail(const std::string& m) {
    if (error_.empty()) error_ = m;
  }
  void data(int i) {
    if (i < 0) fail("negative data register index " + std::to_string(i));
  }
  void operand(const Operand& o) {
    if (o.k == Operand::K::Reg) data(o.v);
  }
  void cond(const Cond& c) {
    if (c.pred < 0) fail("negative predicate index");
    if (c.reuse) return;
    if (!compare_ops().count(c.cmp)) fail("unknown comparison " + c.cmp);
    operand(c.a);
    operand(c.b);
  }

  void block(const std::vector<Stmt>& b, bool fn, int loops) {
    for (const auto& s : b) stmt(s, fn, loops);
  }

  void stmt(const Stmt& s, bool fn, int loops) {
    if (communicating(s.kind)) {
      fail("lanes communicate");
      return;
    }
    switch (s.kind) {
      case Kind::Alu:
        data(s.dst);
        operand(s.a);
        if (unary_ops().count(s.op)) break;
        if (!binary_ops().count(s.op)) fail("unknown ALU operation " + s.op);
        operand(s.b);
        break;
      case Kind::Select:
        cond(s.cond);
        data(s.dst);
        operand(s.a);
        operand(s.b);
        break;
      case Kind::LoadInput:
        data(s.dst);
        break;
      case Kind::StoreScratch:
        if (s.slot < 0) fail("negative scratch slot");
        operand(s.a);
        break;
      case Kind::LoadScratch:
        if (s.slot < 0) fail("negative scratch slot");
        data(s.dst);
        break;
      case Kind::If:
        cond(s.cond);
        block(s.body, fn, loops);
        if (s.has_else) block(s.other, fn, loops);
        break;
      case Kind::Loop:
        if (s.limit_reg) operand(s.a);
        block(s.body, fn, loops + 1);
        break;
      case Kind::Break:
      case Kind::Continue:
        // valid.struct.loopctl: only inside a loop of the same function.
        if (loops == 0) fail("break or continue outside a loop");
        cond(s.cond);
        break;
      case Kind::Exit:
        cond(s.cond);
        break;
      case Kind::Call:
        break;
      default:
        break;
    }
  }

  // The most mask-stack entries the printed code can hold (every if, loop and
  // exit's `if` pushes one; a call adds the callee's). The warp executes every
  // push of a region even with no active lane (branch.struct.empty).
  uint32_t entries(const std::vector<Stmt>& b, bool fn) {
    uint32_t most = 0;
    for (const auto& s : b) {
      uint32_t n = 0;
      switch (s.kind) {
        case Kind::If:
          n = 1 + std::max(entries(s.body, fn), s.has_else ? entries(s.other, fn) : 0u);
          break;
        case Kind::Loop:
          n = 1 + entries(s.body, fn);
          break;
        case Kind::Exit:
          n = 1;
          break;
        case Kind::Call:
          if (!fn && !p_.functions.empty())
            n = entries(p_.functions[static_cast<size_t>(s.slot) % p_.functions.size()], true);
          break;
        default:
          break;
      }
      most = std::max(most, n);
    }
    return most;
  }

  const Program& p_;
  std::string error_;
};

// How a statement or block ends for the lane.
enum class Flow { Next, Break, Continue, Exit };

// One thread, alone.
class Lane {
 public:
  Lane(const Program& p, uint32_t t, std::vector<uint32_t>& scratch)
      : p_(p), t_(t), lane_(t % p.wave), gwarp_(t / p.wave), scratch_(scratch) {}

  // Runs the prologue and main; false if the thread exited.
  bool run() {
    // The prologue: v1 is the thread's byte address in per-thread buffers.
    if (p_.warps * p_.workgroups == 1) {
      v_[1] = lane_ << 2;  // shl v1, %lane, 2
    } else {
      const uint32_t s0 = gwarp_ * p_.wave;  // mul s0, %gwarp, %wave
      v_[0] = lane_ + s0;                    // add v0, %lane, s0
      v_[1] = v_[0] << 2;                    // shl v1, v0, 2
    }
    return block(p_.main, false, 0) != Flow::Exit;
  }

  uint32_t reg(int r) const { return v_[static_cast<size_t>(r)]; }
  const std::string& error() const { return error_; }

 private:
  uint32_t& vr(int r) { return v_[static_cast<size_t>(r)]; }
  bool& pr(int i) { return p_reg_[static_cast<size_t>(i)]; }
  uint32_t& data(int i) { return vr(data_reg(p_, i)); }

  uint32_t value(const Operand& o) {
    switch (o.k) {
      case Operand::K::Reg:
        return data(o.v);
      case Operand::K::Lane:
        return lane_;  // state.special.lane
      case Operand::K::Imm:
        return static_cast<uint32_t>(o.v);  // syntax.operand.imm
    }
    return 0;
  }

  // `cmp.X p, a, b` unless reused; the value of `[!]p`.
  bool cond(const Cond& c) {
    const int p = c.pred % kMaxPred;
    if (!c.reuse) pr(p) = compare(c.cmp, value(c.a), value(c.b));
    return pr(p) != c.negate;
  }

  // Word index of scratch[v1 + (slot % 4) * threads * 4] (mem.address).
  size_t scratch_word(int slot) {
    const uint32_t addr = vr(1) + static_cast<uint32_t>(slot % kScratchSlots) * p_.threads() * 4;
    return addr / 4;
  }

  Flow block(const std::vector<Stmt>& b, bool fn, int depth) {
    for (const auto& s : b) {
      Flow f = stmt(s, fn, depth);
      if (f != Flow::Next) return f;
    }
    return Flow::Next;
  }

  Flow stmt(const Stmt& s, bool fn, int depth) {
    switch (s.kind) {
      case Kind::Alu:
        if (unary_ops().count(s.op)) {
          data(s.dst) = alu(s.op, value(s.a), 0);
        } else if (division_ops().count(s.op)) {
          uint32_t divisor;
          if (s.b.k == Operand::K::Imm) {
            divisor = static_cast<uint32_t>(s.b.v | 1);
          } else {
            vr(20) = value(s.b) | 1;  // or v20, b, 1
            divisor = vr(20);
          }
          data(s.dst) = alu(s.op, value(s.a), divisor);
        } else {
          data(s.dst) = alu(s.op, value(s.a), value(s.b));
        }
        return Flow::Next;
      case Kind::Select: {
        const bool c = cond(s.cond);
        data(s.dst) = c ? value(s.a) : value(s.b);
        return Flow::Next;
      }
      case Kind::LoadInput:
        if (p_.input.empty()) {
          data(s.dst) = 0;
        } else {
          // ld dst, in[v1]; values past the initialiser are zero (syntax.buffer.init).
          const size_t w = vr(1) / 4;
          data(s.dst) = w < p_.input.size() ? p_.input[w] : 0;
        }
        return Flow::Next;
      case Kind::StoreScratch:
        scratch_[scratch_word(s.slot)] = value(s.a);
        return Flow::Next;
      case Kind::LoadScratch:
        data(s.dst) = scratch_[scratch_word(s.slot)];
        return Flow::Next;
      case Kind::If:
        if (cond(s.cond)) return block(s.body, fn, depth);
        if (s.has_else) return block(s.other, fn, depth);
        return Flow::Next;
      case Kind::Loop: {
        const int k = std::min(depth, kMaxDepth - 1);
        const int counter = (fn ? 14 : 10) + k;
        const int limit = (fn ? 32 : 28) + k;
        vr(counter) = 0;                              // mov vC, 0
        if (s.limit_reg) vr(limit) = value(s.a) & 7;  // and vL, a, 7
        for (;;) {
          const uint32_t bound = s.limit_reg ? vr(limit) : static_cast<uint32_t>(s.limit);
          pr(15) = compare("cmp.ge", vr(counter), bound);  // cmp.ge p15, vC, limit
          if (pr(15)) break;                               // break p15
          vr(counter) += 1;                                // add vC, vC, 1
          if (++iterations_ > kMaxIterations) {
            error_ = "thread " + std::to_string(t_) + " runs more than " +
                     std::to_string(kMaxIterations) + " loop iterations";
            return Flow::Exit;
          }
          const Flow f = block(s.body, fn, depth + 1);
          if (f == Flow::Break) break;
          if (f == Flow::Exit) return Flow::Exit;
          // Next and Continue: the next iteration.
        }
        return Flow::Next;
      }
      case Kind::Break:
        return cond(s.cond) ? Flow::Break : Flow::Next;
      case Kind::Continue:
        return cond(s.cond) ? Flow::Continue : Flow::Next;
      case Kind::Exit:
        return cond(s.cond) ? Flow::Exit : Flow::Next;  // if p; exit; endif
      case Kind::Call:
        // Printed only in main and when there are functions.
        if (!fn && !p_.functions.empty()) {
          const auto& f = p_.functions[static_cast<size_t>(s.slot) % p_.functions.size()];
          // Break and continue cannot leave the function (checked), so only Exit matters.
          if (block(f, true, 0) == Flow::Exit) return Flow::Exit;
        }
        return Flow::Next;
      default:
        error_ = "lanes communicate";
        return Flow::Exit;
    }
  }

  const Program& p_;
  const uint32_t t_, lane_, gwarp_;
  std::vector<uint32_t>& scratch_;
  std::array<uint32_t, kVregs> v_{};
  std::array<bool, kPreds> p_reg_{};
  uint64_t iterations_ = 0;
  std::string error_;
};

}  // namespace

Expected evaluate_sequential(const Program& p) {
  Expected e;
  if (communicates(p)) {
    e.error = "lanes communicate";
    return e;
  }
  e.error = Checker(p).run();
  if (!e.error.empty()) return e;
  const uint32_t threads = p.threads();
  const size_t nregs = static_cast<size_t>(p.nregs);
  e.out.assign(nregs * threads, 0);
  e.scratch.assign(size_t{kScratchSlots} * threads, 0);
  for (uint32_t t = 0; t < threads; ++t) {
    Lane lane(p, t, e.scratch);
    const bool live = lane.run();
    if (!lane.error().empty()) {
      e.error = lane.error();
      return e;
    }
    // The epilogue: st out[v1 + j * threads * 4], v(2 + j).
    if (live)
      for (size_t j = 0; j < nregs; ++j)
        e.out[j * threads + t] = lane.reg(data_reg(p, static_cast<int>(j)));
  }
  if (!uses(p, Kind::StoreScratch) && !uses(p, Kind::LoadScratch)) e.scratch.clear();
  return e;
}

}  // namespace simt::gen
