// The sequential evaluator (evaluator.h). Each thread runs alone through a
// recursive interpreter over the statement tree. Every statement does what the
// instructions the printer writes for it do (program.cpp), on a private copy of
// the registers of the printed program: v0..v63 (`.vregs 64`) and p0..p15.
#include "evaluator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "exec/config.h"
#include "generate.h"
#include "isa/isa.h"
#include "spec_alu.h"

namespace simt::gen {

namespace {

constexpr int kPreds = 16;  // state.warp: 16 predicates per lane
constexpr uint32_t kDefaultMaskDepth = exec::kDefaultLaunch.mask_depth;  // state.launch.defaults
constexpr uint32_t kDefaultCallDepth = exec::kDefaultLaunch.call_depth;
constexpr uint64_t kMaxSteps = exec::kDefaultLaunch.max_steps;
// Each loop iteration costs the warp at least 5 steps (cmp.ge, brk, add, lnext,
// cbr), so a lane running this many iterations means the reference ends
// `step_limit`: the evaluator gives up instead.
constexpr uint64_t kMaxIterations = kMaxSteps / 5;

using spec::alu;
using spec::compare;

// The vector register a data register index prints as (program.cpp, data()).
int data_reg(const Program& p, int i) {
  return 2 + std::max(0, i) % std::max(1, p.nregs);
}

// Static checks: the printed program must load (syntax, validation, launch
// configuration) and must not trap for a reason the lanes cannot see (mask-stack
// or PC-stack overflow). Only what the printer prints is checked.
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
    // Data registers are v2 .. v(1 + nregs).
    if (p.nregs < 0 || p.nregs > static_cast<int>(kVregs) - 2) fail("nregs out of range");
    if (!error_.empty()) return error_;
    if (p.input.size() > p.threads()) fail("more input values than threads");
    block(p.main, 0);
    for (const auto& f : p.functions) block(f, 0);
    if (std::string d = region_problem(p); !d.empty()) fail(d);
    const uint32_t mlimit = p.mask_depth ? p.mask_depth : kDefaultMaskDepth;
    const uint32_t climit = p.call_depth ? p.call_depth : kDefaultCallDepth;
    if (error_.empty() && mask_need(p) > mlimit)
      fail("the mask stack may overflow (nesting deeper than mask_depth)");
    if (error_.empty() && call_need(p) > climit)
      fail("the PC stack may overflow (calls deeper than call_depth)");
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
    if (o.k == Operand::K::Scalar) fail("lanes communicate (a scalar register)");
    if (o.k == Operand::K::Special) {
      if (o.v < 0 || o.v >= static_cast<int32_t>(isa::Special::kCount) ||
          isa::specials()[static_cast<size_t>(o.v)].per_lane)
        fail("not a uniform special register");
      else if (o.v == static_cast<int32_t>(isa::Special::Exec) ||
               o.v == static_cast<int32_t>(isa::Special::ExecLo) ||
               o.v == static_cast<int32_t>(isa::Special::ExecHi))
        fail("lanes communicate (%exec)");
    }
  }
  void cond(const Cond& c) {
    if (c.pred < 0) fail("negative predicate index");
    if (c.reuse) return;
    if (!spec::is_compare(c.cmp)) fail("unknown comparison " + c.cmp);
    operand(c.a);
    operand(c.b);
  }

  void block(const std::vector<Stmt>& b, int loops) {
    for (const auto& s : b) stmt(s, loops);
  }

  void stmt(const Stmt& s, int loops) {
    if (communicating(s.kind)) {
      fail("lanes communicate");
      return;
    }
    switch (s.kind) {
      case Kind::Alu:
        data(s.dst);
        operand(s.a);
        if (spec::is_unary(s.op)) break;
        if (!spec::is_binary(s.op)) fail("unknown ALU operation " + s.op);
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
      case Kind::LoadScratch:
        if (s.slot < 0 || s.neg < 0) fail("negative scratch slot or offset");
        if (s.offset < 0 || s.offset > 3 || s.offset % width_bytes(s.width))
          fail("scratch offset not aligned inside the word");
        operand(s.a);
        data(s.dst);
        break;
      case Kind::PredOp:
        if (s.op != "pand" && s.op != "por" && s.op != "pxor" && s.op != "pmov")
          fail("unknown predicate operation " + s.op);
        if (s.dst < 0 || s.cond.pred < 0 || s.p2 < 0) fail("negative predicate index");
        break;
      case Kind::If:
        cond(s.cond);
        block(s.body, loops);
        block(s.other, loops);
        block(s.again, loops);
        break;
      case Kind::Loop:
        if (s.limit_reg) operand(s.a);
        block(s.body, loops + 1);
        break;
      case Kind::Break:
      case Kind::Continue:
        // valid.struct.loopctl: only inside a loop of the same function.
        if (loops == 0) fail("break or continue outside a loop");
        cond(s.cond);
        break;
      case Kind::Exit:
        if (!s.raw) cond(s.cond);
        break;
      case Kind::Region:  // lane-local bodies only (oracle.model.regions)
        block(s.body, 0);
        break;
      case Kind::SharedAlu:
        operand(s.a);
        if (!spec::is_unary(s.op)) operand(s.b);
        break;
      default:  // Call, Jump (its body never runs), Nop
        break;
    }
  }

  const Program& p_;
  std::string error_;
};

// How a statement or block ends for the lane.
enum class Flow { Next, Break, Continue, Exit };

// One thread, alone.
class Lane {
 public:
  Lane(const Program& p, uint32_t t, std::vector<uint8_t>& scratch)
      : p_(p), t_(t), lane_(t % p.wave), gwarp_(t / p.wave), scratch_(scratch), v_(p.vregs(), 0) {}

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
    return block(p_.main, kMain, 0) != Flow::Exit;
  }

  uint32_t reg(int r) const { return v_[static_cast<size_t>(r)]; }
  const std::string& error() const { return error_; }

 private:
  uint32_t& vr(int r) { return v_[static_cast<size_t>(r)]; }
  bool& pr(int i) { return p_reg_[static_cast<size_t>(i)]; }
  uint32_t& data(int i) { return vr(data_reg(p_, i)); }

  // state.special.*: the lane-independent ones (the checker refuses %exec).
  uint32_t special(int32_t idx) const {
    const spec::Launch l{p_.wave, p_.simd_width(), p_.warps, p_.workgroups, p_.cores};
    return spec::special(idx, l, gwarp_, 0).value_or(0);
  }

  uint32_t value(const Operand& o) {
    switch (o.k) {
      case Operand::K::Reg:
        return data(o.v);
      case Operand::K::Lane:
        return lane_;  // state.special.lane
      case Operand::K::Imm:
        return static_cast<uint32_t>(o.v);  // syntax.operand.imm
      case Operand::K::Special:
        return special(o.v);
      case Operand::K::Scalar:
        return 0;               // refused by the checker
      case Operand::K::Shared:  // written before read in its region (oracle.model.regions)
        return vr(kSharedBase + std::max(0, o.v) % kSharedRegs);
    }
    return 0;
  }

  // `cmp.X p, a, b` unless reused; the value of `[!]p`.
  bool cond(const Cond& c) {
    const int p = c.pred % kMaxPred;
    if (!c.reuse) pr(p) = compare(c.cmp, value(c.a), value(c.b));
    return pr(p) != c.negate;
  }

  // Byte address of the scratch access: v1 + slot area + offset (through v18 - neg
  // when printed so, which is the same address; mem.address).
  uint32_t scratch_addr(const Stmt& s) {
    const uint32_t off = static_cast<uint32_t>(s.slot % kScratchSlots) * p_.threads() * 4 +
                         static_cast<uint32_t>(s.offset);
    if (s.neg > 0) {
      vr(kAddrTemp) = vr(1) + off + static_cast<uint32_t>(s.neg);  // add v18, v1, off + neg
      return vr(kAddrTemp) - static_cast<uint32_t>(s.neg);
    }
    return vr(1) + off;
  }

  // The value of `op dst, a, b` (division through an odd divisor, oracle.model.div).
  uint32_t alu_value(const Stmt& s) {
    if (spec::is_unary(s.op)) return alu(s.op, value(s.a), 0);
    if (spec::is_division(s.op)) {
      uint32_t divisor;
      if (s.b.k == Operand::K::Imm) {
        divisor = static_cast<uint32_t>(s.b.v | 1);
      } else {
        vr(kDivTemp) = value(s.b) | 1;  // or v20, b, 1
        divisor = vr(kDivTemp);
      }
      return alu(s.op, value(s.a), divisor);
    }
    return alu(s.op, value(s.a), value(s.b));
  }

  Flow block(const std::vector<Stmt>& b, int fn, int depth) {
    for (const auto& s : b) {
      Flow f = stmt(s, fn, depth);
      if (f != Flow::Next) return f;
    }
    return Flow::Next;
  }

  Flow stmt(const Stmt& s, int fn, int depth) {
    switch (s.kind) {
      case Kind::Alu:
        data(s.dst) = alu_value(s);
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
      case Kind::StoreScratch: {
        // mem.store: the low width bytes, little-endian.
        const uint32_t a = scratch_addr(s), x = value(s.a);
        for (uint32_t i = 0; i < width_bytes(s.width); ++i)
          scratch_[a + i] = static_cast<uint8_t>(x >> (8 * i));
        return Flow::Next;
      }
      case Kind::LoadScratch: {
        // mem.load: zero- or sign-extended.
        const uint32_t a = scratch_addr(s), n = width_bytes(s.width);
        uint32_t x = 0;
        for (uint32_t i = 0; i < n; ++i) x |= uint32_t{scratch_[a + i]} << (8 * i);
        if (s.width == Width::S8) x = static_cast<uint32_t>(int32_t{static_cast<int8_t>(x)});
        if (s.width == Width::S16) x = static_cast<uint32_t>(int32_t{static_cast<int16_t>(x)});
        data(s.dst) = x;
        return Flow::Next;
      }
      case Kind::PredOp: {
        const bool a = pr(s.cond.pred % kMaxPred) != s.cond.negate;
        const bool b = pr(s.p2 % kMaxPred) != s.n2;
        bool r = a;  // pmov
        if (s.op == "pand") r = a && b;
        if (s.op == "por") r = a || b;
        if (s.op == "pxor") r = a != b;
        pr(s.dst % kMaxPred) = r;
        if (s.accumulate) data(s.dst) = r ? 1 : 0;  // sel dst, pD, 1, 0
        return Flow::Next;
      }
      case Kind::If:
        if (cond(s.cond)) {
          const Flow f = block(s.body, fn, depth);
          // A lane that took the first side comes back to it after a second invert.
          return f == Flow::Next ? block(s.again, fn, depth) : f;
        }
        if (s.has_else || !s.again.empty()) return block(s.other, fn, depth);
        return Flow::Next;
      case Kind::Loop: {
        const int k = std::min(depth, kMaxDepth - 1);
        const int counter = loop_counter(fn, k);
        const int limit = loop_limit(fn, k);
        vr(counter) = 0;                              // mov vC, 0
        if (s.limit_reg) vr(limit) = value(s.a) & 7;  // and vL, a, 7
        for (;;) {
          const uint32_t bound = s.limit_reg ? vr(limit) : static_cast<uint32_t>(s.limit);
          pr(kGuardPred) = compare("cmp.ge", vr(counter), bound);  // cmp.ge p15, vC, limit
          if (pr(kGuardPred)) break;                               // break p15
          vr(counter) += 1;                                        // add vC, vC, 1
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
        if (s.raw) return Flow::Exit;                   // exit
        return cond(s.cond) ? Flow::Exit : Flow::Next;  // if p; exit; endif
      case Kind::Call: {
        const int t = call_target(p_, fn, s);
        if (t < 0) return Flow::Next;
        // Break and continue cannot leave the function (checked), so only Exit matters.
        if (block(p_.functions[static_cast<size_t>(t)], t, 0) == Flow::Exit) return Flow::Exit;
        return Flow::Next;
      }
      case Kind::Jump:  // jmp over the body: it never runs
      case Kind::Nop:
        return Flow::Next;
      // wave.union: a lane-local region runs once for the thread, in its part's
      // pass; its shared temporaries are written before they are read there.
      case Kind::Region:
        return block(s.body, fn, depth);
      case Kind::SharedAlu:
        vr(kSharedBase + std::max(0, s.slot) % kSharedRegs) = alu_value(s);
        return Flow::Next;
      default:
        error_ = "lanes communicate";
        return Flow::Exit;
    }
  }

  const Program& p_;
  const uint32_t t_, lane_, gwarp_;
  std::vector<uint8_t>& scratch_;
  std::vector<uint32_t> v_;
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
  std::vector<uint8_t> scratch(size_t{kScratchSlots} * threads * 4, 0);
  for (uint32_t t = 0; t < threads; ++t) {
    Lane lane(p, t, scratch);
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
  if (uses(p, Kind::StoreScratch) || uses(p, Kind::LoadScratch)) {
    e.scratch.assign(scratch.size() / 4, 0);
    for (size_t i = 0; i < e.scratch.size(); ++i)
      for (size_t b = 0; b < 4; ++b) e.scratch[i] |= uint32_t{scratch[4 * i + b]} << (8 * b);
  }
  return e;
}

}  // namespace simt::gen
