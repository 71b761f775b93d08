// ci: not sanitized: every vector family under partial masks: a semantic sweep (release build)
// Partial exec masks in every family of vector instructions (spec/execution.md
// exec.form, spec/alu.md alu.form, spec/crosslane.md xlane.shfl, xlane.inactive):
// an active lane gets the instruction's result, an inactive lane's destination
// register or predicate bit keeps its value bit for bit. Each instruction runs at
// wave 32 and 64 under masks that switch lane 0, lane 31 and lane 63 on and off
// (alone, together, and with every other lane the other way), alternating lanes,
// half words, a pseudo-random mask, no lane and every lane; exec is set both by
// writing %exec / %exec_lo / %exec_hi (state.special.exec) and by push / pop
// (branch.push, branch.pop). Every source, the destination's old value and the
// old predicate bits differ from lane to lane, and the expected values come from
// a C++ reference of each instruction, lane by lane.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "support.h"

namespace simt {
namespace {

using exec::Machine;
using exec::Status;

// The values each lane starts with (loaded from an `in` buffer).
struct Ctx {
  uint32_t wave = 0;
  std::vector<uint32_t> v1, v2, v3, v5;  // v3: the destination's old value; v5: shfl index
  uint64_t p1 = 0, p2 = 0;               // p2: the destination predicate's old bits
  uint32_t s1 = 0;
  bool bit(uint64_t p, uint32_t l) const { return (p >> l) & 1; }
};

uint32_t hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

Ctx make_ctx(uint32_t wave) {
  Ctx c;
  c.wave = wave;
  for (uint32_t l = 0; l < wave; ++l) {
    c.v1.push_back(hash(l * 4 + 1 + wave));
    c.v2.push_back(hash(l * 4 + 2 + wave) | 1);  // non-zero: a divisor
    c.v3.push_back(0xA5000000u | (l << 8) | hash(l) % 251);
    c.v5.push_back(hash(l * 4 + 3 + wave) % (wave + 4));  // a few out of range
    if (hash(l * 7 + 5) & 1) c.p1 |= uint64_t{1} << l;
    if (hash(l * 7 + 6) & 1) c.p2 |= uint64_t{1} << l;
  }
  c.s1 = 0x00C0FFEEu;
  return c;
}

// One instruction with a vector (v3) or predicate (p2) destination and its
// reference: the value (0 or 1 for a predicate) of active lane l.
struct Insn {
  std::string text;
  bool pred = false;
  std::function<uint32_t(const Ctx&, uint64_t exec, uint32_t l)> ref;
};

Insn vec(std::string text, std::function<uint32_t(const Ctx&, uint32_t l)> f) {
  return {std::move(text), false, [f](const Ctx& c, uint64_t, uint32_t l) { return f(c, l); }};
}

Insn prd(std::string text, std::function<bool(const Ctx&, uint64_t exec, uint32_t l)> f) {
  return {std::move(text), true,
          [f](const Ctx& c, uint64_t exec, uint32_t l) { return f(c, exec, l) ? 1u : 0u; }};
}

// Masks for a wave: lanes 0, 31 and 63 on and off, alone, together and against
// the rest, alternate lanes, halves, a pseudo-random mask, none and all.
std::vector<uint64_t> masks(uint32_t wave) {
  const uint64_t full = wave == 64 ? ~0ull : (1ull << wave) - 1;
  const uint64_t top = 1ull << (wave - 1);
  std::vector<uint64_t> m = {1,
                             top,
                             top | 1,
                             full & ~(top | 1),
                             full & ~1ull,
                             full & ~top,
                             full & 0x5555555555555555ull,
                             full & 0xAAAAAAAAAAAAAAAAull,
                             full & 0x00000000FFFF0000ull,
                             0,
                             full};
  if (wave == 64) {
    const uint64_t edges = 0x8000000180000001ull;  // lanes 0, 31, 32, 63
    m.insert(m.end(), {1ull << 31, 1ull << 32, edges, full & ~edges, 0xFFFFFFFF00000000ull,
                       0x00000000FFFFFFFFull, 0x9E3779B97F4A7C15ull});
  } else {
    m.insert(m.end(), {0x7FFFFFFFull, 0x9E3779B9ull});
  }
  return m;
}

std::string hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(x));
  return buf;
}

enum class Via { ExecWrite, Push };

// The program: loads the context, sets exec to `mask`, runs the instruction,
// restores every lane, and stores v3 and p2 (as 0/1) of every lane.
std::string program(const Ctx& c, const Insn& in, uint64_t mask, Via via) {
  const uint32_t w = c.wave;
  std::vector<uint32_t> init;
  auto add = [&](const std::vector<uint32_t>& v) { init.insert(init.end(), v.begin(), v.end()); };
  add(c.v1);
  add(c.v2);
  add(c.v3);
  add(c.v5);
  std::vector<uint32_t> bits[3];
  for (uint32_t l = 0; l < w; ++l) {
    bits[0].push_back(c.bit(c.p1, l));
    bits[1].push_back(c.bit(c.p2, l));
    bits[2].push_back(c.bit(mask, l));
  }
  for (const auto& b : bits) add(b);
  std::string s = ".wave " + std::to_string(w) + "\n.buffer init u32[" +
                  std::to_string(init.size()) + "] in = ";
  for (size_t i = 0; i < init.size(); ++i) s += (i ? ", " : "") + std::to_string(init[i]);
  s += "\n.buffer out u32[" + std::to_string(2 * w) + "] out\n";
  auto at = [&](uint32_t block) { return "init[v0+" + std::to_string(block * 4 * w) + "]"; };
  s += "    shl v0, %lane, 2\n";
  s += "    ld v1, " + at(0) + "\n    ld v2, " + at(1) + "\n    ld v3, " + at(2) + "\n";
  s += "    ld v5, " + at(3) + "\n    ld v6, " + at(4) + "\n    ld v7, " + at(5) + "\n";
  s += "    ld v8, " + at(6) + "\n";
  s += "    cmp.ne p1, v6, 0\n    cmp.ne p2, v7, 0\n    cmp.ne p3, v8, 0\n";
  s += "    mov s1, " + std::to_string(c.s1) + "\n";
  if (via == Via::Push) {
    s += "    push p3\n";
  } else if (w == 64) {
    s += "    mov %exec_lo, " + hex(mask & 0xffffffffu) + "\n";
    s += "    mov %exec_hi, " + hex(mask >> 32) + "\n";
  } else {
    s += "    mov %exec, " + hex(mask) + "\n";
  }
  s += "    " + in.text + "\n";
  if (via == Via::Push) {
    s += "    pop\n";
  } else {
    s += "    mov %exec_lo, -1\n";
    if (w == 64) s += "    mov %exec_hi, -1\n";
  }
  s += "    st out[v0], v3\n";
  s += "    sel v9, p2, 1, 0\n";
  s += "    st out[v0+" + std::to_string(4 * w) + "], v9\n";
  s += "    exit\n";
  return s;
}

// Runs every instruction of a family at wave 32 and 64 under every mask, both ways
// of setting exec, and compares every lane with the reference.
void check_family(const std::vector<Insn>& family) {
  for (uint32_t wave : {32u, 64u}) {
    const Ctx c = make_ctx(wave);
    for (const Insn& in : family) {
      for (uint64_t mask : masks(wave)) {
        for (Via via : {Via::ExecWrite, Via::Push}) {
          SCOPED_TRACE("wave " + std::to_string(wave) + ", exec " + hex(mask) + " (" +
                       (via == Via::Push ? "push" : "mov %exec") + "): " + in.text);
          auto o = test::outcome(program(c, in, mask, via));
          ASSERT_EQ(o.status, Status::Completed);
          auto got = test::words(o, "out");
          ASSERT_EQ(got.size(), 2u * wave);
          std::string wrong;
          bool changes = false;  // the instruction changes some active lane
          for (uint32_t l = 0; l < wave; ++l) {
            const bool active = (mask >> l) & 1;
            uint32_t v = c.v3[l], p = c.bit(c.p2, l);
            if (active) {
              uint32_t r = in.ref(c, mask, l);
              changes |= in.pred ? r != p : r != v;
              (in.pred ? p : v) = r;
            }
            if (got[l] != v || got[wave + l] != p)
              wrong += "\n  lane " + std::to_string(l) + (active ? " (active)" : " (inactive)") +
                       ": v3 = " + hex(got[l]) + ", p2 = " + std::to_string(got[wave + l]) +
                       "; expected " + hex(v) + ", " + std::to_string(p);
          }
          EXPECT_TRUE(wrong.empty()) << wrong;
          // With every lane active, some lane's new value must differ from its old
          // one, or the instruction could not show an untouched destination.
          if (mask == (wave == 64 ? ~0ull : (1ull << wave) - 1)) {
            EXPECT_TRUE(changes) << "the test cannot see a missing write";
          }
        }
      }
    }
  }
}

int32_t i32(uint32_t x) {
  return static_cast<int32_t>(x);
}

// alu.mov, alu.not, alu.popc: per-lane and uniform sources.
TEST(PartialMask, Unary) {
  check_family({
      vec("mov v3, v1", [](const Ctx& c, uint32_t l) { return c.v1[l]; }),
      vec("not v3, v1", [](const Ctx& c, uint32_t l) { return ~c.v1[l]; }),
      vec("popc v3, v1",
          [](const Ctx& c, uint32_t l) { return static_cast<uint32_t>(std::popcount(c.v1[l])); }),
      vec("not v3, v3", [](const Ctx& c, uint32_t l) { return ~c.v3[l]; }),
      vec("mov v3, s1", [](const Ctx& c, uint32_t) { return c.s1; }),
      vec("not v3, %lane", [](const Ctx&, uint32_t l) { return ~l; }),
  });
}

// alu.add ... alu.minmax, alu.div, alu.rem: every operand shape (per-lane and
// uniform), the destination aliasing a source, and the faulting family.
TEST(PartialMask, Binary) {
  check_family({
      vec("add v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] + c.v2[l]; }),
      vec("add v3, v3, v1", [](const Ctx& c, uint32_t l) { return c.v3[l] + c.v1[l]; }),
      vec("sub v3, v1, s1", [](const Ctx& c, uint32_t l) { return c.v1[l] - c.s1; }),
      vec("sub v3, 1000, %lane", [](const Ctx&, uint32_t l) { return 1000 - l; }),
      vec("add v3, s1, 3", [](const Ctx& c, uint32_t) { return c.s1 + 3; }),
      vec("mul v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] * c.v2[l]; }),
      vec("mulhi v3, v1, v2",
          [](const Ctx& c, uint32_t l) {
            return static_cast<uint32_t>(
                static_cast<uint64_t>(int64_t{i32(c.v1[l])} * int64_t{i32(c.v2[l])}) >> 32);
          }),
      vec("mulhi.u v3, v1, 0x9E3779B9",
          [](const Ctx& c, uint32_t l) {
            return static_cast<uint32_t>((uint64_t{c.v1[l]} * 0x9E3779B9ull) >> 32);
          }),
      vec("and v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] & c.v2[l]; }),
      vec("or v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] | c.v2[l]; }),
      vec("xor v3, v2, v3", [](const Ctx& c, uint32_t l) { return c.v2[l] ^ c.v3[l]; }),
      vec("shl v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] << (c.v2[l] & 31); }),
      vec("shr v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] >> (c.v2[l] & 31); }),
      vec("sra v3, v1, 7",
          [](const Ctx& c, uint32_t l) { return static_cast<uint32_t>(i32(c.v1[l]) >> 7); }),
      vec("min v3, v1, v2",
          [](const Ctx& c, uint32_t l) { return i32(c.v1[l]) < i32(c.v2[l]) ? c.v1[l] : c.v2[l]; }),
      vec("max v3, v1, v2",
          [](const Ctx& c, uint32_t l) { return i32(c.v1[l]) > i32(c.v2[l]) ? c.v1[l] : c.v2[l]; }),
      vec("min.u v3, v1, v2",
          [](const Ctx& c, uint32_t l) { return c.v1[l] < c.v2[l] ? c.v1[l] : c.v2[l]; }),
      vec("max.u v3, v1, v2",
          [](const Ctx& c, uint32_t l) { return c.v1[l] > c.v2[l] ? c.v1[l] : c.v2[l]; }),
      vec("div.u v3, v1, v2", [](const Ctx& c, uint32_t l) { return c.v1[l] / c.v2[l]; }),
      vec("rem v3, v1, v2",
          [](const Ctx& c, uint32_t l) {
            return static_cast<uint32_t>(i32(c.v1[l]) % i32(c.v2[l]));
          }),
  });
}

// alu.sel: per-lane and uniform values, a negated predicate.
TEST(PartialMask, Select) {
  check_family({
      vec("sel v3, p1, v1, v2",
          [](const Ctx& c, uint32_t l) { return c.bit(c.p1, l) ? c.v1[l] : c.v2[l]; }),
      vec("sel v3, !p1, v1, s1",
          [](const Ctx& c, uint32_t l) { return c.bit(c.p1, l) ? c.s1 : c.v1[l]; }),
      vec("sel v3, p1, 5, v3",
          [](const Ctx& c, uint32_t l) { return c.bit(c.p1, l) ? 5u : c.v3[l]; }),
      vec("sel v3, p1, 5, 6", [](const Ctx& c, uint32_t l) { return c.bit(c.p1, l) ? 5u : 6u; }),
  });
}

// xlane.shfl, xlane.inactive: inactive and out-of-range sources read 0; the
// destination may be the source.
TEST(PartialMask, Shuffle) {
  auto shfl = [](const Ctx& c, uint64_t exec, const std::vector<uint32_t>& a, uint32_t i) {
    return i < c.wave && ((exec >> i) & 1) ? a[i] : 0u;
  };
  check_family({
      {"shfl v3, v1, v5", false,
       [=](const Ctx& c, uint64_t e, uint32_t l) { return shfl(c, e, c.v1, c.v5[l]); }},
      {"shfl v3, v3, v5", false,
       [=](const Ctx& c, uint64_t e, uint32_t l) { return shfl(c, e, c.v3, c.v5[l]); }},
      {"shfl v3, v1, 0", false,
       [=](const Ctx& c, uint64_t e, uint32_t) { return shfl(c, e, c.v1, 0); }},
      {"shfl.xor v3, v1, 1", false,
       [=](const Ctx& c, uint64_t e, uint32_t l) { return shfl(c, e, c.v1, l ^ 1); }},
      {"shfl.xor v3, v1, 31", false,
       [=](const Ctx& c, uint64_t e, uint32_t l) { return shfl(c, e, c.v1, l ^ 31); }},
      {"shfl.xor v3, v1, 32", false,
       [=](const Ctx& c, uint64_t e, uint32_t l) { return shfl(c, e, c.v1, l ^ 32); }},
      {"shfl.xor v3, v3, %lane", false,
       [=](const Ctx& c, uint64_t e, uint32_t) { return shfl(c, e, c.v3, 0); }},
  });
}

// mem.load: a vector load writes active lanes only.
TEST(PartialMask, Load) {
  check_family({
      vec("ld v3, init[v0]", [](const Ctx& c, uint32_t l) { return c.v1[l]; }),
      vec("ld.u8 v3, init[v0+1]", [](const Ctx& c, uint32_t l) { return (c.v1[l] >> 8) & 0xff; }),
  });
}

// alu.cmp (every condition), alu.pred, xlane.vote: predicate destinations keep
// inactive bits, and active lanes above 31 get their own results.
TEST(PartialMask, Compare) {
  check_family({
      prd("cmp.lt p2, v1, v2",
          [](const Ctx& c, uint64_t, uint32_t l) { return i32(c.v1[l]) < i32(c.v2[l]); }),
      prd("cmp.ge.u p2, v1, v2",
          [](const Ctx& c, uint64_t, uint32_t l) { return c.v1[l] >= c.v2[l]; }),
      prd("cmp.le p2, v2, v1",
          [](const Ctx& c, uint64_t, uint32_t l) { return i32(c.v2[l]) <= i32(c.v1[l]); }),
      prd("cmp.gt p2, v1, v2",
          [](const Ctx& c, uint64_t, uint32_t l) { return i32(c.v1[l]) > i32(c.v2[l]); }),
      prd("cmp.ge p2, v1, v2",
          [](const Ctx& c, uint64_t, uint32_t l) { return i32(c.v1[l]) >= i32(c.v2[l]); }),
      prd("cmp.lt.u p2, v1, v2",
          [](const Ctx& c, uint64_t, uint32_t l) { return c.v1[l] < c.v2[l]; }),
      prd("cmp.le.u p2, v2, v1",
          [](const Ctx& c, uint64_t, uint32_t l) { return c.v2[l] <= c.v1[l]; }),
      prd("cmp.gt.u p2, v1, s1", [](const Ctx& c, uint64_t, uint32_t l) { return c.v1[l] > c.s1; }),
      prd("cmp.eq p2, v5, 3", [](const Ctx& c, uint64_t, uint32_t l) { return c.v5[l] == 3; }),
      prd("cmp.eq p2, v1, v1", [](const Ctx&, uint64_t, uint32_t) { return true; }),
      prd("cmp.ne p2, v1, v1", [](const Ctx&, uint64_t, uint32_t) { return false; }),
      prd("cmp.ne p2, %lane, 31", [](const Ctx&, uint64_t, uint32_t l) { return l != 31; }),
      prd("cmp.gt p2, s1, 3", [](const Ctx&, uint64_t, uint32_t) { return true; }),
      prd("pxor p2, p1, pt", [](const Ctx& c, uint64_t, uint32_t l) { return !c.bit(c.p1, l); }),
      prd("pand p2, !p1, p2",
          [](const Ctx& c, uint64_t, uint32_t l) { return !c.bit(c.p1, l) && c.bit(c.p2, l); }),
      prd("vote.any p2, p1",
          [](const Ctx& c, uint64_t exec, uint32_t) { return (c.p1 & exec) != 0; }),
      prd("vote.all p2, p1",
          [](const Ctx& c, uint64_t exec, uint32_t) { return (c.p1 & exec) == exec; }),
  });
}

// exec.form with exec changed from outside the instruction stream: a debugger's
// edit between steps (Machine::mutable_state) and a restored snapshot taken under
// another mask (exec.snapshot) both govern the next vector instruction.
TEST(PartialMask, ExecEditedBetweenStepsOrRestored) {
  for (uint32_t wave : {32u, 64u}) {
    SCOPED_TRACE("wave " + std::to_string(wave));
    auto prog = test::build(".wave " + std::to_string(wave) + R"(
    mov v3, 7
    add v3, %lane, 100
    add v3, v3, 1000
    exit
)");
    ASSERT_TRUE(prog);
    const uint64_t full = wave == 64 ? ~0ull : (1ull << wave) - 1;
    const uint64_t edit = (1ull << (wave - 1)) | 1;  // lanes 0 and wave - 1
    const uint64_t other = full & 0x5555555555555555ull;
    auto v3 = [&](const Machine& m, uint32_t l) {
      return m.state().warps[0].vregs[size_t{4} * wave + l];  // register 3, after the padding
    };
    Machine m(prog);
    m.step();
    m.mutable_state().warps[0].exec = edit;
    m.step();  // add v3, %lane, 100 in lanes 0 and wave - 1
    for (uint32_t l = 0; l < wave; ++l)
      EXPECT_EQ(v3(m, l), (edit >> l) & 1 ? l + 100 : 7u) << "lane " << l;
    const exec::Snapshot snap = m.snapshot();
    // Another machine runs its second step under another mask, then takes the
    // snapshot: its next step runs under the snapshot's exec.
    Machine r(prog);
    r.step();
    r.mutable_state().warps[0].exec = other;
    r.step();
    ASSERT_TRUE(r.restore(snap));
    r.step();  // add v3, v3, 1000 in lanes 0 and wave - 1
    for (uint32_t l = 0; l < wave; ++l)
      EXPECT_EQ(v3(r, l), (edit >> l) & 1 ? l + 1100 : 7u) << "lane " << l;
  }
}

}  // namespace
}  // namespace simt
