// The executor against the spec: integer ALU (spec/alu.md), memory (memory.md),
// cross-lane operations (crosslane.md), the barrier (barrier.md), scheduling,
// statuses, livelock detection and traces (execution.md), and the special
// registers (state.md). Every test cites the clauses it checks.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support.h"

namespace simt {
namespace {

using exec::Machine;
using exec::Policy;
using exec::Status;
using exec::WarpStatus;
using isa::Event;

using test::build;
using test::outcome;
using test::outcome_unvalidated;

host::LoadOptions with_policy(Policy p, uint64_t seed = 0) {
  host::LoadOptions opt;
  opt.cli.policy = p;
  opt.cli.seed = seed;
  return opt;
}

host::LoadOptions with_max_steps(uint64_t n) {
  host::LoadOptions opt;
  opt.cli.max_steps = n;
  return opt;
}

constexpr Policy kPolicies[] = {Policy::RoundRobin, Policy::LowestPcFirst, Policy::OldestFirst,
                                Policy::Random};

std::vector<uint32_t> completed_words(const exec::Outcome& o, std::string_view buffer) {
  EXPECT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
  return test::words(o, buffer);
}

void expect_event(const exec::Outcome& o, Event code, uint32_t pc, int32_t lane,
                  uint32_t warp = 0) {
  ASSERT_EQ(o.status, Status::Trapped) << exec::status_name(o.status);
  ASSERT_TRUE(o.event.has_value());
  EXPECT_EQ(o.event->code, code) << isa::event_name(o.event->code);
  EXPECT_EQ(o.event->pc, pc);
  EXPECT_EQ(o.event->lane, lane);
  EXPECT_EQ(o.event->warp, warp);
}

// exec.commit: the faulting step changes nothing and is not counted.
void expect_fault_commits_nothing(std::string_view text, Event code) {
  auto prog = build(text);
  ASSERT_TRUE(prog);
  Machine m(prog);
  for (int i = 0; i < 100000; ++i) {
    const exec::Snapshot before = m.snapshot();
    auto st = m.step();
    if (!st) continue;
    ASSERT_EQ(*st, Status::Trapped) << exec::status_name(*st);
    EXPECT_EQ(m.outcome().event->code, code);
    EXPECT_TRUE(m.state() == before.state) << "the faulting instruction changed the state";
    EXPECT_EQ(m.steps(), before.steps);
    return;
  }
  FAIL() << "no event raised";
}

std::string list(const std::vector<uint32_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// =================================================================================
// Integer ALU (spec/alu.md)
// =================================================================================

// The spec's definition of each binary operation, written independently of the
// interpreter.
uint32_t reference(std::string_view op, uint32_t a, uint32_t b) {
  const int32_t sa = static_cast<int32_t>(a), sb = static_cast<int32_t>(b);
  auto sdiv = [&] {
    if (sa == INT32_MIN && sb == -1) return a;  // alu.div: the overflowing case
    return static_cast<uint32_t>(sa / sb);      // C++ truncates toward zero
  };
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "mulhi") return static_cast<uint32_t>(static_cast<uint64_t>(int64_t{sa} * sb) >> 32);
  if (op == "mulhi.u") return static_cast<uint32_t>((uint64_t{a} * b) >> 32);
  if (op == "div") return sdiv();
  if (op == "div.u") return a / b;
  if (op == "rem") return a - b * sdiv();  // alu.rem: A - B * (A div B), wrapping
  if (op == "rem.u") return a % b;
  if (op == "and") return a & b;
  if (op == "or") return a | b;
  if (op == "xor") return a ^ b;
  if (op == "shl") return a << (b % 32);
  if (op == "shr") return a >> (b % 32);
  if (op == "sra") return static_cast<uint32_t>(sa >> (b % 32));
  if (op == "min") return sa < sb ? a : b;
  if (op == "max") return sa > sb ? a : b;
  if (op == "min.u") return a < b ? a : b;
  if (op == "max.u") return a > b ? a : b;
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

bool reference_cmp(std::string_view c, uint32_t a, uint32_t b) {
  const int32_t sa = static_cast<int32_t>(a), sb = static_cast<int32_t>(b);
  if (c == "eq") return a == b;
  if (c == "ne") return a != b;
  if (c == "lt") return sa < sb;
  if (c == "le") return sa <= sb;
  if (c == "gt") return sa > sb;
  if (c == "ge") return sa >= sb;
  if (c == "lt.u") return a < b;
  if (c == "le.u") return a <= b;
  if (c == "gt.u") return a > b;
  if (c == "ge.u") return a >= b;
  ADD_FAILURE() << "no reference for cmp." << c;
  return false;
}

const std::vector<std::string> kBinaryOps = {
    "add", "sub", "mul", "mulhi", "mulhi.u", "div", "div.u", "rem",   "rem.u", "and",
    "or",  "xor", "shl", "shr",   "sra",     "min", "max",   "min.u", "max.u"};
const std::vector<std::string> kConditions = {"eq", "ne",   "lt",   "le",   "gt",
                                              "ge", "lt.u", "le.u", "gt.u", "ge.u"};

bool divides(std::string_view op) {
  return op.starts_with("div") || op.starts_with("rem");
}

const std::vector<uint32_t> kValues = {
    0,          1,          2,          3,          5,          7,          31,         32,
    33,         63,         100,        0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe,
    0xfffffff9, 0xdeadbeef, 0x12345678, 0xffff,     0x10000,    0xfffffff0};

struct Pairs {
  std::vector<uint32_t> a, b;
};

Pairs grid(bool nonzero_b) {
  Pairs p;
  for (uint32_t x : kValues)
    for (uint32_t y : kValues) {
      if (nonzero_b && y == 0) continue;
      p.a.push_back(x);
      p.b.push_back(y);
    }
  return p;
}

// Runs `body` (which reads v1 = a[lane], v2 = b[lane] and leaves its result in v3)
// over the pairs, 64 lanes at a time; returns v3 of every pair.
std::vector<uint32_t> per_lane(const Pairs& p, const std::string& body) {
  std::vector<uint32_t> out;
  for (size_t base = 0; base < p.a.size(); base += 64) {
    std::vector<uint32_t> a(64, 0), b(64, 1);
    size_t n = std::min<size_t>(64, p.a.size() - base);
    for (size_t i = 0; i < n; ++i) a[i] = p.a[base + i], b[i] = p.b[base + i];
    std::string text = ".wave 64\n.buffer a u32[64] in = " + list(a) +
                       "\n.buffer b u32[64] in = " + list(b) +
                       "\n.buffer out u32[64] out\n"
                       "    shl v0, %lane, 2\n    ld v1, a[v0]\n    ld v2, b[v0]\n" +
                       body + "    st out[v0], v3\n    exit\n";
    auto o = outcome(text);
    auto w = completed_words(o, "out");
    if (w.size() != 64) return {};
    out.insert(out.end(), w.begin(), w.begin() + static_cast<long>(n));
  }
  return out;
}

// alu.add, alu.sub, alu.mul, alu.mulhi, alu.div, alu.rem, alu.bitwise, alu.shift,
// alu.minmax, alu.form: the vector form over a grid of interesting values.
TEST(AluBinary, VectorFormMatchesSpec) {
  for (const auto& op : kBinaryOps) {
    SCOPED_TRACE(op);
    Pairs p = grid(divides(op));
    auto got = per_lane(p, "    " + op + " v3, v1, v2\n");
    ASSERT_EQ(got.size(), p.a.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], reference(op, p.a[i], p.b[i])) << op << " " << p.a[i] << ", " << p.b[i];
  }
}

// alu.form.scalar: the scalar form, from s registers and from immediates.
TEST(AluBinary, ScalarFormMatchesSpec) {
  const std::vector<uint32_t> values = {
      0, 1, 7, 32, 33, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffff9, 0xdeadbeef, 0xffff};
  for (const auto& op : kBinaryOps) {
    SCOPED_TRACE(op);
    std::ostringstream s;
    std::vector<uint32_t> want;
    s << ".wave 1\n.buffer out u32[" << 2 * values.size() * values.size() << "] out\n";
    uint32_t addr = 0;
    for (uint32_t x : values)
      for (uint32_t y : values) {
        if (divides(op) && y == 0) continue;
        s << "    mov s1, " << x << "\n    mov s2, " << y << "\n    " << op << " s3, s1, s2\n    "
          << op << " s4, " << x << ", " << y << "\n    st out[" << addr << "], s3\n    st out["
          << addr + 4 << "], s4\n";
        addr += 8;
        want.push_back(reference(op, x, y));
        want.push_back(reference(op, x, y));
      }
    s << "    exit\n";
    auto got = completed_words(outcome(s.str()), "out");
    got.resize(want.size());
    EXPECT_EQ(got, want);
  }
}

// alu.div, alu.rem: truncation toward zero, the sign of the remainder, -2^31 / -1.
TEST(AluDiv, SignsAndOverflow) {
  struct Case {
    int32_t a, b, q, r;
  };
  const Case cases[] = {{7, 2, 3, 1},
                        {-7, 2, -3, -1},
                        {7, -2, -3, 1},
                        {-7, -2, 3, -1},
                        {6, 3, 2, 0},
                        {-6, 3, -2, 0},
                        {1, 5, 0, 1},
                        {-1, 5, 0, -1},
                        {INT32_MIN, -1, INT32_MIN, 0},
                        {INT32_MIN, 1, INT32_MIN, 0},
                        {INT32_MIN, 2, -1073741824, 0},
                        {INT32_MIN, 3, -715827882, -2},
                        {INT32_MAX, -1, -INT32_MAX, 0}};
  Pairs p;
  for (const auto& c : cases) {
    p.a.push_back(static_cast<uint32_t>(c.a));
    p.b.push_back(static_cast<uint32_t>(c.b));
  }
  auto q = per_lane(p, "    div v3, v1, v2\n");
  auto r = per_lane(p, "    rem v3, v1, v2\n");
  ASSERT_EQ(q.size(), std::size(cases));
  ASSERT_EQ(r.size(), std::size(cases));
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(static_cast<int32_t>(q[i]), cases[i].q) << cases[i].a << " div " << cases[i].b;
    EXPECT_EQ(static_cast<int32_t>(r[i]), cases[i].r) << cases[i].a << " rem " << cases[i].b;
  }
  // Unsigned: the same bits read as unsigned.
  Pairs u{{0xfffffff9, 0x80000000, 7}, {2, 0xffffffff, 0xfffffffe}};
  EXPECT_EQ(per_lane(u, "    div.u v3, v1, v2\n"), (std::vector<uint32_t>{0x7ffffffc, 0, 0}));
  EXPECT_EQ(per_lane(u, "    rem.u v3, v1, v2\n"), (std::vector<uint32_t>{1, 0x80000000, 7}));
}

// alu.mulhi, alu.mul: signed and unsigned high halves; the low half is sign-agnostic.
TEST(AluMul, HighHalfSignedAndUnsigned) {
  Pairs p{{0xffffffff, 0x80000000, 0xfffffffe, 0x7fffffff, 0x10000},
          {0xffffffff, 0x80000000, 3, 0x7fffffff, 0x10000}};
  EXPECT_EQ(per_lane(p, "    mulhi v3, v1, v2\n"),
            (std::vector<uint32_t>{0, 0x40000000, 0xffffffff, 0x3fffffff, 1}));
  EXPECT_EQ(per_lane(p, "    mulhi.u v3, v1, v2\n"),
            (std::vector<uint32_t>{0xfffffffe, 0x40000000, 2, 0x3fffffff, 1}));
  EXPECT_EQ(per_lane(p, "    mul v3, v1, v2\n"), (std::vector<uint32_t>{1, 0, 0xfffffffa, 1, 0}));
}

// alu.shift: amounts are taken mod 32; sra fills with the sign bit.
TEST(AluShift, AmountModuloThirtyTwo) {
  Pairs p{{1, 1, 0x80000000, 0x80000000, 0x80000000, 0xf, 0x12345678},
          {32, 33, 31, 0xffffffff, 63, 0xfffffffc, 0}};
  EXPECT_EQ(per_lane(p, "    shl v3, v1, v2\n"),
            (std::vector<uint32_t>{1, 2, 0, 0, 0, 0xf0000000, 0x12345678}));
  EXPECT_EQ(per_lane(p, "    shr v3, v1, v2\n"),
            (std::vector<uint32_t>{1, 0, 1, 1, 1, 0, 0x12345678}));
  EXPECT_EQ(per_lane(p, "    sra v3, v1, v2\n"),
            (std::vector<uint32_t>{1, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0x12345678}));
}

// alu.minmax: signed versus unsigned.
TEST(AluMinMax, SignedVersusUnsigned) {
  Pairs p{{0xffffffff, 0x80000000, 5}, {1, 0x7fffffff, 5}};
  EXPECT_EQ(per_lane(p, "    min v3, v1, v2\n"),
            (std::vector<uint32_t>{0xffffffff, 0x80000000, 5}));
  EXPECT_EQ(per_lane(p, "    max v3, v1, v2\n"), (std::vector<uint32_t>{1, 0x7fffffff, 5}));
  EXPECT_EQ(per_lane(p, "    min.u v3, v1, v2\n"), (std::vector<uint32_t>{1, 0x7fffffff, 5}));
  EXPECT_EQ(per_lane(p, "    max.u v3, v1, v2\n"),
            (std::vector<uint32_t>{0xffffffff, 0x80000000, 5}));
}

// alu.mov, alu.not, alu.popc: vector and scalar forms.
TEST(AluUnary, MovNotPopc) {
  Pairs p{{0, 1, 0xffffffff, 0x80000000, 0xdeadbeef}, {1, 1, 1, 1, 1}};
  EXPECT_EQ(per_lane(p, "    mov v3, v1\n"), p.a);
  EXPECT_EQ(per_lane(p, "    not v3, v1\n"),
            (std::vector<uint32_t>{0xffffffff, 0xfffffffe, 0, 0x7fffffff, 0x21524110}));
  EXPECT_EQ(per_lane(p, "    popc v3, v1\n"), (std::vector<uint32_t>{0, 1, 32, 1, 24}));
  auto o = outcome(R"(
.wave 4
.buffer out u32[4] out
    mov s1, 0xdeadbeef
    not s2, s1
    popc s3, s1
    popc s4, -1
    st out[0], s1
    st out[4], s2
    st out[8], s3
    st out[12], s4
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{0xdeadbeef, 0x21524110, 24, 32}));
}

// alu.add, state.reg.width: wrapping modulo 2^32, and uniform sources in the vector form.
TEST(AluForm, WrappingAndUniformSourcesInVectorForm) {
  auto o = outcome(R"(
.wave 4
.warps 2
.buffer out u32[8] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v0, v0, 2
    mov s1, 0xfffffffe
    add v1, %lane, s1         ; wraps for lanes 2 and 3
    add v1, v1, %gwarp
    sub v1, v1, -1            ; - (-1) = + 1
    st out[v0], v1
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{0xffffffff, 0, 1, 2, 0, 1, 2, 3}));
}

// exec.form, alu.form: a vector instruction leaves the registers and predicate bits
// of inactive lanes unchanged, in every family.
TEST(AluForm, VectorFormLeavesInactiveLanesUnchanged) {
  auto ok = outcome(R"(
.wave 8
.buffer data u32[wave] in = iota(100, 1)
.buffer out u32[64] out
    shl v0, %lane, 2
    mov v1, 7
    mov v2, 7
    mov v3, 7
    mov v4, 7
    mov v5, 7
    mov v6, 7
    pmov p1, pt
    pmov p2, pt
    pmov p3, pt
    pmov p4, pt
    cmp.lt p0, %lane, 3
    push p0
    mov v1, 1
    add v2, v2, %lane
    add v7, %lane, 1
    div v3, 100, v7
    ld v4, data[v0]
    sel v5, p0, 11, 12
    shfl v6, v0, 1
    cmp.eq p1, v0, 999
    pmov p2, !pt
    vote.all p3, !pt
    pand p4, pt, !pt
    pop
    st out[v0], v1
    st out[v0+32], v2
    st out[v0+64], v3
    st out[v0+96], v4
    st out[v0+128], v5
    st out[v0+160], v6
    ballot s1, p1
    ballot s2, p2
    ballot s3, p3
    ballot s4, p4
    st out[192], s1
    st out[196], s2
    st out[200], s3
    st out[204], s4
    exit
)");
  auto w = completed_words(ok, "out");
  ASSERT_EQ(w.size(), 64u);
  for (uint32_t l = 0; l < 8; ++l) {
    bool on = l < 3;
    EXPECT_EQ(w[l], on ? 1u : 7u) << "mov, lane " << l;
    EXPECT_EQ(w[8 + l], on ? 7 + l : 7u) << "add, lane " << l;
    EXPECT_EQ(w[16 + l], on ? 100 / (l + 1) : 7u) << "div, lane " << l;
    EXPECT_EQ(w[24 + l], on ? 100 + l : 7u) << "ld, lane " << l;
    EXPECT_EQ(w[32 + l], on ? 11u : 7u) << "sel, lane " << l;
    EXPECT_EQ(w[40 + l], on ? 4u : 7u) << "shfl, lane " << l;
  }
  EXPECT_EQ(w[48], 0xf8u);  // cmp
  EXPECT_EQ(w[49], 0xf8u);  // pmov
  EXPECT_EQ(w[50], 0xf8u);  // vote
  EXPECT_EQ(w[51], 0xf8u);  // pand
}

// alu.form.scalar, exec.form, mem.load.scalar, xlane.ballot, xlane.readlane: scalar
// forms execute once per warp with no active lane.
TEST(AluForm, ScalarFormRunsWithNoActiveLane) {
  auto o = outcome(R"(
.wave 8
.buffer data u32[2] in = 41, 42
.buffer out u32[8] out
    mov s5, 99
    mov s6, 99
    mov v1, 5
    push !pt
    mov s0, 10
    add s1, s0, 5
    div s2, s1, 3
    ld s3, data[4]
    ld.u8 s4, data[0]
    ballot s5, pt
    readlane s6, v1, 0
    mov s7, %exec
    pop
    st out[0], s0
    st out[4], s1
    st out[8], s2
    st out[12], s3
    st out[16], s4
    st out[20], s5
    st out[24], s6
    st out[28], s7
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{10, 15, 5, 42, 41, 0, 0, 0}));
}

// alu.div.zero: a zero divisor in an inactive lane raises nothing; the lowest active
// lane with a zero divisor is reported; with no active lane nothing is raised.
TEST(AluDivZero, OnlyActiveLanesRaise) {
  for (const char* op : {"div", "div.u", "rem", "rem.u"}) {
    SCOPED_TRACE(op);
    auto text = [&](const char* select) {
      return std::string(R"(
.wave 8
.buffer b u32[wave] in = 1, 1, 1, 0, 1, 0, 1, 0
.buffer out u32[wave] out
    shl v0, %lane, 2
    ld v2, b[v0]
    mov v1, 100
    )") + select +
             "\n    " + op + R"( v3, v1, v2
    pop
    st out[v0], v3
    exit
)";
    };
    // Lanes 3, 5 and 7 are inactive: completes.
    auto o = outcome(text("and v4, v2, 1\n    cmp.eq p0, v4, 1\n    push p0"));
    bool is_div = std::string_view(op).starts_with("div");
    EXPECT_EQ(completed_words(o, "out"),
              (std::vector<uint32_t>{is_div ? 100u : 0u, is_div ? 100u : 0u, is_div ? 100u : 0u, 0,
                                     is_div ? 100u : 0u, 0, is_div ? 100u : 0u, 0}));
    // Lane 3 inactive, lanes 5 and 7 active: lane 5 is reported.
    expect_event(outcome(text("cmp.ne p0, %lane, 3\n    push p0")), Event::DivZero, 5, 5);
    expect_fault_commits_nothing(text("cmp.ne p0, %lane, 3\n    push p0"), Event::DivZero);
    // No active lane: nothing is raised.
    EXPECT_EQ(outcome(text("push !pt")).status, Status::Completed);
    // The scalar form raises with a zero divisor, even with no active lane.
    std::string scalar =
        std::string("    mov s1, 0\n    push !pt\n    ") + op + " s2, 5, s1\n    pop\n    exit\n";
    expect_event(outcome(scalar), Event::DivZero, 2, -1);
    expect_fault_commits_nothing(scalar, Event::DivZero);
  }
}

// alu.cmp: every condition, signed and unsigned, over the value grid.
TEST(AluCmp, EveryConditionMatchesSpec) {
  Pairs p = grid(false);
  for (const auto& c : kConditions) {
    SCOPED_TRACE(c);
    auto got = per_lane(p, "    cmp." + c + " p1, v1, v2\n    sel v3, p1, 1, 0\n");
    ASSERT_EQ(got.size(), p.a.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], reference_cmp(c, p.a[i], p.b[i]) ? 1u : 0u)
          << "cmp." << c << " " << p.a[i] << ", " << p.b[i];
  }
}

// alu.cmp: bits of inactive lanes are unchanged; compares with uniform sources.
TEST(AluCmp, InactiveBitsUnchanged) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[3] out
    cmp.lt p0, %lane, 4
    pmov p1, pt
    pmov p2, !pt
    push p0
    cmp.gt p1, %lane, 100     ; false in lanes 0-3; lanes 4-7 keep 1
    cmp.ge.u p2, -1, 5        ; true in lanes 0-3; lanes 4-7 keep 0
    cmp.lt p3, -1, 5          ; signed: true
    pop
    ballot s1, p1
    ballot s2, p2
    ballot s3, p3
    st out[0], s1
    st out[4], s2
    st out[8], s3
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{0xf0, 0x0f, 0x0f}));
}

// alu.sel: per lane, with a negated predicate; inactive lanes unchanged.
TEST(AluSel, SelectsPerLane) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[16] out
    shl v0, %lane, 2
    and v1, %lane, 1
    cmp.eq p0, v1, 1
    mul v2, %lane, 10
    sel v3, p0, v2, 5
    sel v4, !p0, v2, 5
    mov v5, 9
    cmp.lt p1, %lane, 4
    push p1
    sel v5, p0, 1, 2
    pop
    st out[v0], v3
    st out[v0+32], v4
    exit
)");
  auto w = completed_words(o, "out");
  for (uint32_t l = 0; l < 8; ++l) {
    EXPECT_EQ(w[l], l % 2 ? 10 * l : 5u);
    EXPECT_EQ(w[8 + l], l % 2 ? 5u : 10 * l);
  }
  auto o2 = outcome(R"(
.wave 8
.buffer out u32[8] out
    shl v0, %lane, 2
    and v1, %lane, 1
    cmp.eq p0, v1, 1
    mov v5, 9
    cmp.lt p1, %lane, 4
    push p1
    sel v5, p0, 1, 2
    pop
    st out[v0], v5
    exit
)");
  EXPECT_EQ(completed_words(o2, "out"), (std::vector<uint32_t>{2, 1, 2, 1, 9, 9, 9, 9}));
}

// alu.pred: pand, por, pxor and pmov with every combination of negations; inactive
// lanes keep their bit.
TEST(AluPred, OperationsWithNegation) {
  // p1 = bit 0 of the lane, p2 = bit 1: lanes 0-7 give the patterns 0xaa and 0xcc.
  const uint32_t P = 0xaa, Q = 0xcc;
  struct Op {
    const char* mn;
    uint32_t (*f)(uint32_t, uint32_t);
  };
  const Op ops[] = {{"pand", [](uint32_t a, uint32_t b) { return a & b; }},
                    {"por", [](uint32_t a, uint32_t b) { return a | b; }},
                    {"pxor", [](uint32_t a, uint32_t b) { return a ^ b; }}};
  for (const auto& op : ops) {
    for (int na = 0; na < 2; ++na) {
      for (int nb = 0; nb < 2; ++nb) {
        std::string insn =
            std::string(op.mn) + " p3, " + (na ? "!" : "") + "p1, " + (nb ? "!" : "") + "p2";
        SCOPED_TRACE(insn);
        auto o = outcome(R"(
.wave 8
.buffer out u32[2] out
    and v1, %lane, 1
    cmp.ne p1, v1, 0
    and v1, %lane, 2
    cmp.ne p2, v1, 0
    pmov p3, !pt
    )" + insn + R"(
    ballot s1, p3
    pmov p3, pt
    cmp.lt p0, %lane, 4
    push p0
    )" + insn + R"(
    pop
    ballot s2, p3
    st out[0], s1
    st out[4], s2
    exit
)");
        uint32_t a = na ? ~P & 0xff : P, b = nb ? ~Q & 0xff : Q;
        uint32_t r = op.f(a, b) & 0xff;
        EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{r, (r & 0x0f) | 0xf0}));
      }
    }
  }
  auto o = outcome(R"(
.wave 8
.buffer out u32[3] out
    and v1, %lane, 1
    cmp.ne p1, v1, 0
    pmov p2, p1
    pmov p3, !p1
    pmov p4, pt
    cmp.lt p0, %lane, 4
    push p0
    pmov p4, !pt
    pop
    ballot s1, p2
    ballot s2, p3
    ballot s3, p4
    st out[0], s1
    st out[4], s2
    st out[8], s3
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{0xaa, 0x55, 0xf0}));
}

// alu.* (property): random operands in every lane agree with the spec's definition.
RC_GTEST_PROP(AluProperty, RandomOperandsMatchSpec, ()) {
  const auto op = *rc::gen::elementOf(kBinaryOps);
  auto operand = rc::gen::oneOf(rc::gen::arbitrary<uint32_t>(), rc::gen::elementOf(kValues),
                                rc::gen::inRange<uint32_t>(0, 40));
  Pairs p;
  for (int i = 0; i < 64; ++i) {
    uint32_t a = *operand, b = *operand;
    if (divides(op) && b == 0) b = 1;
    p.a.push_back(a);
    p.b.push_back(b);
  }
  auto got = per_lane(p, "    " + op + " v3, v1, v2\n");
  RC_ASSERT(got.size() == 64u);
  for (size_t i = 0; i < 64; ++i) RC_ASSERT(got[i] == reference(op, p.a[i], p.b[i]));
}

// =================================================================================
// Memory (spec/memory.md)
// =================================================================================

// mem.load, mem.load.scalar, state.memory.buffer: every width and sign, little-endian.
TEST(MemLoad, WidthsSignsAndByteOrder) {
  auto o = outcome(R"(
.wave 8
.buffer bytes u8[8] in = 0x80, 0x7f, 0xff, 0x01, 0x34, 0x12, 0xfe, 0xff
.buffer halves u16[2] in = 0x1234, 0xabcd
.buffer out u32[32] out
    ld s0, bytes[0]
    ld s1, bytes[4]
    ld.u8 s2, bytes[0]
    ld.s8 s3, bytes[0]
    ld.s8 s4, bytes[1]
    ld.u16 s5, bytes[0]
    ld.s16 s6, bytes[0]
    ld.u16 s7, bytes[6]
    ld.s16 s8, bytes[6]
    ld.s16 s9, bytes[2]
    ld.u8 s10, bytes[2]
    ld.s8 s11, bytes[2]
    ld s12, halves[0]
    st out[0], s0
    st out[4], s1
    st out[8], s2
    st out[12], s3
    st out[16], s4
    st out[20], s5
    st out[24], s6
    st out[28], s7
    st out[32], s8
    st out[36], s9
    st out[40], s10
    st out[44], s11
    st out[48], s12
    shl v0, %lane, 2
    ld.u8 v1, bytes[%lane]
    ld.s8 v2, bytes[%lane]
    st out[v0+64], v1
    st out[v0+96], v2
    exit
)");
  auto w = completed_words(o, "out");
  ASSERT_EQ(w.size(), 32u);
  const std::vector<uint32_t> scalar = {0x01ff7f80, 0xfffe1234, 0x80,      0xffffff80, 0x7f,
                                        0x7f80,     0x7f80,     0xfffe,    0xfffffffe, 0x01ff,
                                        0xff,       0xffffffff, 0xabcd1234};
  EXPECT_EQ(std::vector<uint32_t>(w.begin(), w.begin() + 13), scalar);
  EXPECT_EQ(std::vector<uint32_t>(w.begin() + 16, w.begin() + 24),
            (std::vector<uint32_t>{0x80, 0x7f, 0xff, 0x01, 0x34, 0x12, 0xfe, 0xff}));
  EXPECT_EQ(std::vector<uint32_t>(w.begin() + 24, w.begin() + 32),
            (std::vector<uint32_t>{0xffffff80, 0x7f, 0xffffffff, 0x01, 0x34, 0x12, 0xfffffffe,
                                   0xffffffff}));
}

// mem.store: st.8 and st.16 write the low bytes only, little-endian.
TEST(MemStore, NarrowStoresKeepOtherBytes) {
  auto o = outcome(R"(
.wave 4
.buffer w u32[2] inout = 0xaabbccdd, 0x11223344
.buffer out u32[2] out
    st.8 w[1], 0x1ff
    st.16 w[6], 0x12345
    ld.u8 s0, w[4]
    ld.u8 s1, w[7]
    st out[0], s0
    st out[4], s1
    exit
)");
  EXPECT_EQ(completed_words(o, "w"), (std::vector<uint32_t>{0xaabbffdd, 0x23453344}));
  EXPECT_EQ(test::words(o, "out"), (std::vector<uint32_t>{0x44, 0x23}));
}

// mem.store.order: lanes write in ascending order, so the highest active lane wins,
// byte by byte.
TEST(MemStore, HighestActiveLaneWins) {
  auto o = outcome(R"(
.wave 64
.buffer out u32[4] out
    st out[0], %lane
    cmp.lt p0, %lane, 10
    push p0
    st out[4], %lane
    pop
    and v1, %lane, 3
    st.8 out[v1+8], %lane
    and v2, %lane, 1
    shl v2, v2, 1
    add v3, %lane, 0x100
    st.16 out[v2+12], v3
    st.8 out[13], %lane
    exit
)");
  // Word 3: st.16 by lanes 62 (bytes 12-13) and 63 (bytes 14-15), then st.8 byte 13.
  EXPECT_EQ(
      completed_words(o, "out"),
      (std::vector<uint32_t>{63, 9, 60u | (61u << 8) | (62u << 16) | (63u << 24), 0x013f3f3e}));
}

// mem.store: with no active lane nothing is stored.
TEST(MemStore, NoActiveLaneStoresNothing) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[2] inout = 5, 6
    push !pt
    st out[0], 1
    st out[v0+4], %lane
    pop
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{5, 6}));
}

// mem.check, event.lane: the lowest failing active lane is reported with its address,
// whichever of misaligned and out-of-bounds it raises.
TEST(MemCheck, LowestFailingLaneAndAddress) {
  auto text = [](const std::string& addrs, const std::string& insn, const char* select = "") {
    return ".wave 8\n.buffer addr u32[8] in = " + addrs +
           "\n.buffer buf u32[4] inout = 1, 2, 3, 4\n"
           "    shl v0, %lane, 2\n    ld v5, addr[v0]\n    mov v9, 77\n    " +
           select + "\n    " + insn + "\n    exit\n";
  };
  const char* aligned = "0, 4, 8, 12, 16, 20, 24, 28";
  auto o = outcome_unvalidated(text(aligned, "ld v1, buf[v5]"));
  expect_event(o, Event::MemOutOfBounds, 3, 4);
  EXPECT_EQ(o.event->addr, 16u);
  EXPECT_EQ(o.event->space, "buf");

  o = outcome_unvalidated(text("0, 4, 8, 13, 16, 4, 4, 4", "ld v1, buf[v5]"));
  expect_event(o, Event::MemMisaligned, 3, 3);
  EXPECT_EQ(o.event->addr, 13u);

  o = outcome_unvalidated(text("0, 4, 20, 1, 4, 4, 4, 4", "ld v1, buf[v5]"));
  expect_event(o, Event::MemOutOfBounds, 3, 2);
  EXPECT_EQ(o.event->addr, 20u);

  // Stores are checked the same way, and the faulting store writes nothing.
  o = outcome_unvalidated(text(aligned, "st buf[v5], v9"));
  expect_event(o, Event::MemOutOfBounds, 3, 4);
  EXPECT_EQ(test::words(o, "buf"), (std::vector<uint32_t>{1, 2, 3, 4}));
  expect_fault_commits_nothing(text(aligned, "st buf[v5], v9"), Event::MemOutOfBounds);
  expect_fault_commits_nothing(text(aligned, "ld v1, buf[v5]"), Event::MemOutOfBounds);

  // Inactive lanes are not checked.
  o = outcome_unvalidated(
      text(aligned, "st buf[v5], v9\n    pop", "cmp.lt p0, %lane, 4\n    push p0"));
  EXPECT_EQ(completed_words(o, "buf"), (std::vector<uint32_t>{77, 77, 77, 77}));
  o = outcome_unvalidated(
      text("0, 99, 4, 3, 16, 20, 24, 28", "ld v1, buf[v5]\n    pop", "push !pt"));
  EXPECT_EQ(o.status, Status::Completed);
}

// mem.check, mem.address: boundaries of the space, wrap-around of base + offset,
// misalignment checked before bounds, scalar loads (no lane) and slm.
TEST(MemCheck, BoundariesWrapScalarAndSlm) {
  struct Case {
    const char* insn;
    Event code;  // None: completes
    uint32_t addr;
    int32_t lane;
  };
  const Case cases[] = {
      {"ld v1, buf[12]", Event::None, 0, 0},
      {"ld.u16 v1, buf[14]", Event::None, 0, 0},
      {"ld.u8 v1, buf[15]", Event::None, 0, 0},
      {"ld.u8 v1, buf[16]", Event::MemOutOfBounds, 16, 0},
      {"ld v1, buf[16]", Event::MemOutOfBounds, 16, 0},
      {"ld.u16 v1, buf[15]", Event::MemMisaligned, 15, 0},
      {"ld.s16 v1, buf[3]", Event::MemMisaligned, 3, 0},
      {"ld v1, buf[14]", Event::MemMisaligned, 14, 0},
      {"st.16 buf[1], 5", Event::MemMisaligned, 1, 0},
      {"st buf[18], 5", Event::MemMisaligned, 18, 0},
      {"st.8 buf[16], 5", Event::MemOutOfBounds, 16, 0},
      {"ld v1, buf[s4-4]", Event::None, 0, 0},
      {"ld v1, buf[s5-4]", Event::MemOutOfBounds, 0xfffffffc, 0},
      {"ld v1, buf[s6+8]", Event::None, 0, 0},
      {"ld s1, buf[16]", Event::MemOutOfBounds, 16, -1},
      {"ld.u16 s1, buf[1]", Event::MemMisaligned, 1, -1},
      {"ld v1, slm[8]", Event::MemOutOfBounds, 8, 0},
      {"st.8 slm[7], 1", Event::None, 0, 0},
      {"ld.u16 v1, slm[s5-2]", Event::MemOutOfBounds, 0xfffffffe, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.insn);
    std::string text = std::string(".wave 4\n.slm 8\n.buffer buf u32[4] inout = 1, 2, 3, 4\n") +
                       "    mov s4, 4\n    mov s5, 0\n    mov s6, 0xfffffffc\n    " + c.insn +
                       "\n    exit\n";
    auto o = outcome(text);
    if (c.code == Event::None) {
      EXPECT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
      continue;
    }
    expect_event(o, c.code, 3, c.lane);
    EXPECT_EQ(o.event->addr, c.addr);
    EXPECT_EQ(o.event->space,
              std::string_view(c.insn).find("slm") != std::string_view::npos ? "slm" : "buf");
  }
  // A scalar load executes, and faults, with no active lane.
  auto o = outcome(
      ".wave 4\n.buffer buf u32[4] in\n    push !pt\n    ld s1, buf[16]\n    pop\n"
      "    exit\n");
  expect_event(o, Event::MemOutOfBounds, 1, -1);
}

// state.memory.slm, mem.consistency, bar.release: each workgroup has its own SLM,
// seen by every warp of that workgroup after the barrier, and by no other.
TEST(MemSlm, PerWorkgroupIsolation) {
  const char* text = R"(
.wave 4
.warps 2
.workgroups 3
.slm 16
.buffer out u32[3 * warps * workgroups] out
    mul s0, %warp, 4
    add s1, %wg, 1
    mul s1, s1, 10
    add s1, s1, %warp
    st slm[s0], s1
    bar
    ld s2, slm[0]
    ld s3, slm[4]
    ld s4, slm[8]
    mul s5, %gwarp, 12
    st out[s5], s2
    st out[s5+4], s3
    st out[s5+8], s4
    exit
)";
  std::vector<uint32_t> want;
  for (uint32_t g = 0; g < 6; ++g) {
    uint32_t wg = g / 2;
    want.insert(want.end(), {10 * (wg + 1), 10 * (wg + 1) + 1, 0});
  }
  for (auto p : kPolicies) {
    SCOPED_TRACE(exec::policy_name(p));
    EXPECT_EQ(completed_words(outcome(text, with_policy(p, 3)), "out"), want);
  }
}

// mem.consistency: a load observes every store of every earlier step, in every warp.
TEST(MemConsistency, LaterStepsSeeEarlierStores) {
  auto o = outcome(R"(
.wave 4
.warps 2
.policy oldest_first
.buffer cell u32[1] inout
.buffer out u32[1] out
    cmp.eq p0, %warp, 1
    cbr p0, reader
    st cell[0], 1234
    exit
reader:
    ld s0, cell[0]
    st out[0], s0
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{1234}));
}

// =================================================================================
// Cross-lane operations (spec/crosslane.md)
// =================================================================================

// xlane.ballot, xlane.inactive: ballot and ballot.hi at wave 64, with partial and empty exec.
TEST(XlaneBallot, Wave64LowAndHighHalves) {
  auto o = outcome(R"(
.wave 64
.buffer out u32[12] out
    rem.u v1, %lane, 3
    cmp.eq p0, v1, 0
    ballot s0, p0
    ballot.hi s1, p0
    cmp.ge p1, %lane, 16
    cmp.lt p2, %lane, 48
    pand p1, p1, p2
    push p1
    ballot s2, p0
    ballot.hi s3, p0
    ballot s4, pt
    ballot.hi s5, pt
    ballot s6, !p0
    pop
    mov s7, 99
    mov s8, 99
    push !pt
    ballot s7, pt
    ballot.hi s8, pt
    pop
    st out[0], s0
    st out[4], s1
    st out[8], s2
    st out[12], s3
    st out[16], s4
    st out[20], s5
    st out[24], s6
    st out[28], s7
    st out[32], s8
    exit
)");
  uint64_t p0 = 0, act = 0;
  for (int l = 0; l < 64; ++l) {
    if (l % 3 == 0) p0 |= uint64_t{1} << l;
    if (l >= 16 && l < 48) act |= uint64_t{1} << l;
  }
  auto lo = [](uint64_t x) { return static_cast<uint32_t>(x); };
  auto hi = [](uint64_t x) { return static_cast<uint32_t>(x >> 32); };
  EXPECT_EQ(completed_words(o, "out"),
            (std::vector<uint32_t>{lo(p0), hi(p0), lo(p0 & act), hi(p0 & act), lo(act), hi(act),
                                   lo(~p0 & act), 0, 0, 0, 0, 0}));
}

// xlane.vote: with partial exec only active lanes vote and only they are written;
// with no active lane nothing changes.
TEST(XlaneVote, AnyAndAllOverActiveLanes) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[8] out
    cmp.lt p0, %lane, 4
    cmp.lt p1, %lane, 2
    cmp.ge p8, %lane, 4
    pmov p3, !pt
    pmov p4, pt
    pmov p5, !pt
    pmov p6, pt
    pmov p7, pt
    pmov p9, !pt
    pmov p10, pt
    pmov p11, !pt
    push p0
    vote.any p3, p1
    vote.all p4, p1
    vote.all p5, p0
    vote.any p6, !p0
    vote.any p7, p8
    vote.all p9, !p8
    pop
    push !pt
    vote.any p10, !pt
    vote.all p11, pt
    pop
    ballot s3, p3
    ballot s4, p4
    ballot s5, p5
    ballot s6, p6
    ballot s7, p7
    ballot s9, p9
    ballot s10, p10
    ballot s11, p11
    st out[0], s3
    st out[4], s4
    st out[8], s5
    st out[12], s6
    st out[16], s7
    st out[20], s9
    st out[24], s10
    st out[28], s11
    exit
)");
  EXPECT_EQ(completed_words(o, "out"),
            (std::vector<uint32_t>{0x0f, 0xf0, 0x0f, 0xf0, 0xf0, 0x0f, 0xff, 0x00}));
}

// xlane.readlane, xlane.inactive: an inactive or out-of-range lane reads 0.
TEST(XlaneReadlane, InactiveAndOutOfRangeReadZero) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[8] out
    mul v1, %lane, 10
    add v1, v1, 5
    readlane s0, v1, 3
    mov s9, 7
    readlane s1, v1, s9
    readlane s2, v1, 8
    readlane s3, v1, 0xffffffff
    cmp.lt p0, %lane, 4
    push p0
    readlane s4, v1, 5
    readlane s5, v1, 2
    pop
    mov s6, 1
    push !pt
    readlane s6, v1, 0
    pop
    mov s7, 64
    readlane s7, v1, s7
    st out[0], s0
    st out[4], s1
    st out[8], s2
    st out[12], s3
    st out[16], s4
    st out[20], s5
    st out[24], s6
    st out[28], s7
    exit
)");
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{35, 75, 0, 0, 0, 25, 0, 0}));
}

// xlane.shfl, xlane.inactive: shfl and shfl.xor, out-of-range and inactive sources,
// vD aliasing vA, inactive destinations unchanged.
TEST(XlaneShfl, SourcesAliasingAndInactiveLanes) {
  auto o = outcome(R"(
.wave 8
.buffer out u32[96] out
    shl v0, %lane, 2
    mul v1, %lane, 10
    add v1, v1, 1
    add v2, %lane, 1
    and v2, v2, 7
    shfl v3, v1, v2
    shfl v4, v1, 8
    mul v6, %lane, 0x20000000
    shfl v5, v1, v6
    shfl.xor v7, v1, 1
    shfl.xor v8, v1, 8
    mov v9, v1
    shfl v9, v9, v2
    mov v10, v1
    shfl.xor v10, v10, 3
    shfl.xor v14, v1, %lane
    mov v11, 777
    mov v12, 777
    mov v13, v1
    cmp.lt p0, %lane, 4
    push p0
    shfl v11, v1, v2
    shfl.xor v12, v1, 4
    shfl v13, v13, v2
    pop
    st out[v0], v3
    st out[v0+32], v4
    st out[v0+64], v5
    st out[v0+96], v7
    st out[v0+128], v8
    st out[v0+160], v9
    st out[v0+192], v10
    st out[v0+224], v14
    st out[v0+256], v11
    st out[v0+288], v12
    st out[v0+320], v13
    exit
)");
  auto w = completed_words(o, "out");
  ASSERT_EQ(w.size(), 96u);
  auto val = [](uint32_t l) { return 10 * l + 1; };
  for (uint32_t l = 0; l < 8; ++l) {
    SCOPED_TRACE("lane " + std::to_string(l));
    EXPECT_EQ(w[l], val((l + 1) % 8));                              // rotate
    EXPECT_EQ(w[8 + l], 0u);                                        // index 8 = wave: out of range
    EXPECT_EQ(w[16 + l], l == 0 ? val(0) : 0u);                     // huge unsigned indices
    EXPECT_EQ(w[24 + l], val(l ^ 1));                               // xor 1
    EXPECT_EQ(w[32 + l], 0u);                                       // l xor 8 >= wave
    EXPECT_EQ(w[40 + l], val((l + 1) % 8));                         // vD = vA
    EXPECT_EQ(w[48 + l], val(l ^ 3));                               // vD = vA, xor
    EXPECT_EQ(w[56 + l], val(0));                                   // l xor l = 0
    EXPECT_EQ(w[64 + l], l < 3 ? val(l + 1) : l == 3 ? 0u : 777u);  // lane 4 inactive
    EXPECT_EQ(w[72 + l], l < 4 ? 0u : 777u);                        // sources 4-7 inactive
    EXPECT_EQ(w[80 + l], l < 3 ? val(l + 1) : l == 3 ? 0u : val(l));
  }
}

// =================================================================================
// Barrier (spec/barrier.md)
// =================================================================================

// bar.arrive, bar.release: each warp waits with its pc on bar; the last arrival
// releases every warp of the workgroup and resets the count.
TEST(Bar, ArriveAndReleaseStepByStep) {
  auto prog = build(R"(
.wave 4
.warps 3
.workgroups 2
    bar
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  for (uint32_t g = 0; g < 6; ++g) {
    ASSERT_FALSE(m.step().has_value());
    const auto& s = m.state();
    uint32_t wg = g / 3;
    bool released = g % 3 == 2;
    for (uint32_t k = wg * 3; k <= g; ++k) {
      EXPECT_EQ(s.warps[k].status, released ? WarpStatus::Ready : WarpStatus::Barrier);
      EXPECT_EQ(s.warps[k].pc, released ? 1u : 0u);
    }
    EXPECT_EQ(s.barriers[wg].arrived, released ? 0u : g % 3 + 1);
  }
  EXPECT_EQ(m.run().status, Status::Completed);
}

// bar.release, exec.sched.independence: data written before the barrier is read by
// other warps after it, under every policy.
TEST(Bar, ReleaseOrdersMemoryUnderEveryPolicy) {
  const char* text = R"(
.wave 4
.warps 4
.buffer data u32[warps] inout
.buffer out u32[warps] out
    mul s0, %warp, 4
    add s1, %warp, 1
    mul s1, s1, 11
    st data[s0], s1
    bar
    add s2, %warp, 1
    rem.u s2, s2, %nwarps
    mul s2, s2, 4
    ld s3, data[s2]
    st out[s0], s3
    exit
)";
  for (auto p : kPolicies) {
    for (uint64_t seed : {0u, 1u, 2u, 3u}) {
      if (p != Policy::Random && seed) continue;
      SCOPED_TRACE(std::string(exec::policy_name(p)) + " seed " + std::to_string(seed));
      EXPECT_EQ(completed_words(outcome(text, with_policy(p, seed)), "out"),
                (std::vector<uint32_t>{22, 33, 44, 11}));
    }
  }
}

// bar.exited, exec.status.deadlock: a warp that finished never arrives, whether it
// finished before or after the others arrived.
TEST(Bar, ExitedWarpDeadlocksTheOthers) {
  const char* after = R"(
.warps 2
    cmp.eq p0, %warp, 1
    cbr p0, leave
    bar
    exit
leave:
    exit
)";
  const char* before = R"(
.warps 2
    cmp.eq p0, %warp, 1
    cbr p0, leave
    nop
    nop
    nop
    nop
    bar
    exit
leave:
    exit
)";
  for (const char* text : {after, before}) {
    for (auto p : kPolicies) {
      SCOPED_TRACE(exec::policy_name(p));
      auto prog = build(text, with_policy(p));
      ASSERT_TRUE(prog);
      Machine m(prog);
      auto o = m.run();
      EXPECT_EQ(o.status, Status::Deadlock);
      EXPECT_FALSE(o.event.has_value());
      EXPECT_EQ(m.state().warps[0].status, WarpStatus::Barrier);
      EXPECT_EQ(m.state().warps[1].status, WarpStatus::Done);
      EXPECT_EQ(m.state().barriers[0].arrived, 1u);
    }
  }
}

// bar.divergent, bar.release, bar.arrive: bar ignores exec, and arrivals at different
// bar instructions count alike.
TEST(Bar, DivergentAndDifferentBarInstructions) {
  auto prog = build(R"(
.wave 4
.warps 2
.buffer out u32[2] out
    cmp.eq p0, %warp, 0
    if p0
        bar
    else
        bar
    endif
    cbr p0, first
    bar
    jmp done
first:
    bar
done:
    mul s0, %warp, 4
    st out[s0], 1
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  uint32_t arrivals = 0;  // steps that execute a bar: three barriers, two warps each
  m.set_trace(
      [&](const exec::TraceRecord& r) { arrivals += prog->insns[r.pc].op == isa::Op::Bar; });
  auto o = m.run();
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(arrivals, 6u);
  EXPECT_EQ(m.state().barriers[0].arrived, 0u);
  // Warp 1 has no lane in either if, yet passes (and arrives at) both bars, so
  // warp 0's two barriers complete.
  auto lone = outcome(R"(
.wave 4
.warps 2
    cmp.eq p0, %warp, 0
    if p0
        bar
    endif
    if p0
        bar
    endif
    exit
)");
  EXPECT_EQ(lone.status, Status::Completed);
}

// =================================================================================
// Scheduling (exec.sched.*)
// =================================================================================

std::vector<uint32_t> trace_warps(std::string_view text, host::LoadOptions opt = {}) {
  auto prog = build(text, opt);
  if (!prog) return {};
  Machine m(prog);
  std::vector<uint32_t> warps;
  m.set_trace([&](const exec::TraceRecord& r) { warps.push_back(r.warp); });
  m.run();
  return warps;
}

constexpr const char* kThreeWarps = R"(
.wave 4
.warps 3
    nop
    nop
    exit
)";

// exec.sched.round_robin
TEST(Sched, RoundRobinOrder) {
  EXPECT_EQ(trace_warps(kThreeWarps), (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  // A warp waiting at a barrier is skipped; the cursor moves past the warp that ran.
  EXPECT_EQ(trace_warps(R"(
.wave 4
.warps 3
    cmp.eq p0, %warp, 0
    cbr p0, w0
    nop
    nop
    nop
w0:
    bar
    exit
)"),
            (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 1, 2, 1, 2, 0, 1, 2}));
}

// exec.sched.oldest_first
TEST(Sched, OldestFirstOrder) {
  EXPECT_EQ(trace_warps(kThreeWarps, with_policy(Policy::OldestFirst)),
            (std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  // A warp runs until it waits at the barrier.
  EXPECT_EQ(trace_warps(".wave 4\n.warps 3\n    nop\n    bar\n    nop\n    exit\n",
                        with_policy(Policy::OldestFirst)),
            (std::vector<uint32_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
}

// exec.sched.lowest_pc_first
TEST(Sched, LowestPcFirstOrder) {
  EXPECT_EQ(trace_warps(kThreeWarps, with_policy(Policy::LowestPcFirst)),
            (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  // Warp 1 jumps ahead; then warps 0 and 2 (lower pcs) run first.
  EXPECT_EQ(trace_warps(R"(
.wave 4
.warps 3
    cmp.eq p0, %warp, 1
    cbr p0, ahead
    nop
    nop
ahead:
    nop
    exit
)",
                        with_policy(Policy::LowestPcFirst)),
            (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 2, 0, 2, 0, 1, 2, 0, 1, 2}));
}

// The policies of exec.sched.*, re-implemented from the spec text: before every
// step, the expected warp is computed from the state and compared with the trace.
struct ReferenceScheduler {
  Policy policy;
  uint32_t cursor = 0;
  uint64_t rng = 0;

  static uint64_t splitmix(uint64_t& s) {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int pick(const exec::MachineState& s) {
    std::vector<uint32_t> ready;
    for (uint32_t g = 0; g < s.warps.size(); ++g)
      if (s.warps[g].status == WarpStatus::Ready) ready.push_back(g);
    const uint32_t n = static_cast<uint32_t>(s.warps.size());
    switch (policy) {
      case Policy::RoundRobin:
        for (uint32_t i = 0; i < n; ++i)
          if (s.warps[(cursor + i) % n].status == WarpStatus::Ready)
            return static_cast<int>((cursor + i) % n);
        return -1;
      case Policy::LowestPcFirst: {
        int best = -1;
        for (uint32_t g : ready)
          if (best < 0 || s.warps[g].pc < s.warps[static_cast<size_t>(best)].pc)
            best = static_cast<int>(g);
        return best;
      }
      case Policy::OldestFirst:
        return ready.empty() ? -1 : static_cast<int>(ready[0]);
      case Policy::Random: {
        uint64_t r = splitmix(rng);
        return ready.empty() ? -1 : static_cast<int>(ready[r % ready.size()]);
      }
    }
    return -1;
  }
  void committed(uint32_t g, uint32_t n) { cursor = (g + 1) % n; }
};

constexpr const char* kSchedProgram = R"(
.wave 4
.warps 3
.workgroups 2
.buffer out u32[threads] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v0, v0, 2
    add v2, %lane, %gwarp
    mov v1, 0
    loop
        cmp.ge p0, v1, v2
        break p0
        add v1, v1, 1
    endloop
    bar
    cmp.eq p1, %lane, 3
    if p1
        exit
    endif
    and s1, %gwarp, 1
    cmp.eq p2, s1, 1
    cbr p2, odd
    add v1, v1, 100
    bar
    jmp store
odd:
    add v1, v1, 200
    bar
store:
    st out[v0], v1
    exit
)";

// exec.sched.round_robin, exec.sched.lowest_pc_first, exec.sched.oldest_first,
// exec.sched.random, exec.sched.independence
TEST(Sched, EveryPickFollowsThePolicy) {
  std::vector<uint32_t> want;
  for (uint32_t g = 0; g < 6; ++g)
    for (uint32_t l = 0; l < 4; ++l) want.push_back(l == 3 ? 0 : l + g + (g % 2 ? 200 : 100));
  for (auto p : kPolicies) {
    for (uint64_t seed : {0u, 1u, 12345u}) {
      if (p != Policy::Random && seed) continue;
      SCOPED_TRACE(std::string(exec::policy_name(p)) + " seed " + std::to_string(seed));
      auto prog = build(kSchedProgram, with_policy(p, seed));
      ASSERT_TRUE(prog);
      Machine m(prog);
      ReferenceScheduler ref{p, 0, seed};
      int traced = -1;
      m.set_trace([&](const exec::TraceRecord& r) { traced = static_cast<int>(r.warp); });
      for (int i = 0; i < 10000; ++i) {
        int expected = ref.pick(m.state());
        traced = -1;
        auto st = m.step();
        if (st && *st != Status::Trapped && traced < 0) break;  // ended before a pick
        ASSERT_EQ(traced, expected) << "step " << i;
        ref.committed(static_cast<uint32_t>(traced), 6);
        if (st) break;
      }
      EXPECT_EQ(completed_words(m.outcome(), "out"), want);
    }
  }
}

// exec.sched.random, state.init: the generator starts at the seed and draws once per
// step, even when only one warp exists.
TEST(Sched, RandomDrawsEveryStepEvenWithOneWarp) {
  auto prog = build(".policy random\n.seed 5\n    nop\n    nop\n    nop\n    exit\n");
  ASSERT_TRUE(prog);
  Machine m(prog);
  EXPECT_EQ(m.state().sched.rng, 5u);
  for (uint64_t k = 1; k <= 3; ++k) {
    ASSERT_FALSE(m.step().has_value());
    EXPECT_EQ(m.state().sched.rng, 5u + k * 0x9E3779B97F4A7C15ull) << "after step " << k;
  }
}

// exec.sched.random: the same seed gives the same run; other seeds give other
// interleavings and, for a racy program, other results.
TEST(Sched, RandomIsReproducibleAndSeedDependent) {
  const char* racy = R"(
.wave 4
.warps 8
.buffer out u32[1] out
    nop
    st out[0], %gwarp
    exit
)";
  std::set<uint32_t> results;
  std::set<std::vector<uint32_t>> orders;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    auto a = trace_warps(racy, with_policy(Policy::Random, seed));
    auto b = trace_warps(racy, with_policy(Policy::Random, seed));
    EXPECT_EQ(a, b) << "seed " << seed;
    orders.insert(a);
    auto o1 = outcome(racy, with_policy(Policy::Random, seed));
    auto o2 = outcome(racy, with_policy(Policy::Random, seed));
    EXPECT_TRUE(o1.same_result(o2));
    results.insert(completed_words(o1, "out").at(0));
  }
  EXPECT_GE(orders.size(), 15u);
  EXPECT_GE(results.size(), 3u);
}

// =================================================================================
// Statuses, step order and livelock (exec.status.*, exec.step.order, exec.livelock)
// =================================================================================

// exec.status.completed, exec.status.trapped, exec.status.deadlock,
// exec.status.livelock, exec.status.step_limit, event.pc_range
TEST(Status, EveryStatus) {
  auto done = outcome("    nop\n    exit\n");
  EXPECT_EQ(done.status, Status::Completed);
  EXPECT_EQ(done.steps, 2u);
  EXPECT_FALSE(done.event.has_value());

  auto trap = outcome(
      ".warps 3\n    cmp.eq p0, %warp, 2\n    cbr p0, bad\n    exit\nbad:\n"
      "    mov s1, 0\n    div s2, 1, s1\n    exit\n");
  expect_event(trap, Event::DivZero, 4, -1, 2);

  auto dead = outcome(
      ".warps 2\n    cmp.eq p0, %warp, 0\n    cbr p0, w\n    exit\nw:\n    bar\n"
      "    exit\n");
  EXPECT_EQ(dead.status, Status::Deadlock);

  auto live = outcome("spin:\n    jmp spin\n");
  EXPECT_EQ(live.status, Status::Livelock);

  auto limit = outcome("    mov s0, 0\nl:\n    add s0, s0, 1\n    jmp l\n", with_max_steps(50));
  EXPECT_EQ(limit.status, Status::StepLimit);
  EXPECT_EQ(limit.steps, 50u);

  auto range = outcome_unvalidated("    nop\n");
  expect_event(range, Event::PcRange, 1, -1);
  EXPECT_EQ(range.steps, 1u);
}

// exec.step.order, exec.commit: completed is checked before step_limit, step_limit
// before deadlock, and livelock after each committed step; a faulting instruction is
// not counted.
TEST(Status, CheckOrder) {
  const char* three = "    nop\n    nop\n    exit\n";
  EXPECT_EQ(outcome(three, with_max_steps(3)).status, Status::Completed);
  auto cut = outcome(three, with_max_steps(2));
  EXPECT_EQ(cut.status, Status::StepLimit);
  EXPECT_EQ(cut.steps, 2u);

  // Deadlocks after exactly 6 steps.
  const char* dead =
      ".warps 2\n    cmp.eq p0, %warp, 0\n    cbr p0, w\n    exit\nw:\n    bar\n"
      "    exit\n";
  auto d = outcome(dead);
  EXPECT_EQ(d.status, Status::Deadlock);
  EXPECT_EQ(d.steps, 6u);
  EXPECT_EQ(outcome(dead, with_max_steps(6)).status, Status::StepLimit);
  EXPECT_EQ(outcome(dead, with_max_steps(7)).status, Status::Deadlock);

  // `jmp` to itself repeats the state after step 1: detected before the limit check.
  auto l = outcome("spin:\n    jmp spin\n", with_max_steps(1));
  EXPECT_EQ(l.status, Status::Livelock);
  EXPECT_EQ(l.steps, 1u);

  auto t = outcome("    nop\n    nop\n    div s0, 1, 0\n    exit\n");
  expect_event(t, Event::DivZero, 2, -1);
  EXPECT_EQ(t.steps, 2u);
}

// exec.livelock, exec.status.livelock: a spin loop is a livelock; a long loop that
// terminates is not.
TEST(Livelock, SpinIsLivelockLongLoopIsNot) {
  auto spin = outcome(R"(
.wave 8
.warps 2
.buffer flag u32[1] inout
    cmp.eq p0, %warp, 1
    cbr p0, producer
spin:
    ld s0, flag[0]
    cmp.ne p1, s0, 1
    cbr p1, spin
    exit
producer:
    st flag[0], 2
    exit
)");
  EXPECT_EQ(spin.status, Status::Livelock);
  EXPECT_LT(spin.steps, 100u);

  auto loop = outcome(R"(
.wave 4
.buffer out u32[1] out
    mov s0, 0
again:
    add s0, s0, 1
    cmp.lt p0, s0, 100000
    cbr p0, again
    st out[0], s0
    exit
)");
  EXPECT_EQ(completed_words(loop, "out"), (std::vector<uint32_t>{100000}));
  EXPECT_EQ(loop.steps, 300003u);

  // A counter that wraps around is not a repetition of the full state either,
  // until the whole 2^32 cycle would repeat; a memory counter the same.
  auto mem = outcome(R"(
.wave 4
.buffer c u32[1] inout
    mov s1, 0
again:
    ld s0, c[0]
    add s0, s0, 1
    st c[0], s0
    add s1, s1, 1
    cmp.lt p0, s1, 50000
    cbr p0, again
    exit
)");
  EXPECT_EQ(completed_words(mem, "c"), (std::vector<uint32_t>{50000}));
}

// A program whose states after steps 0, 1, ... are K distinct ones (the prefix)
// followed by a cycle of C distinct states.
std::string prefix_cycle(uint32_t K, uint32_t C) {
  std::string text;
  for (uint32_t i = 0; i < K; ++i) text += "    nop\n";
  text += "cycle:\n";
  for (uint32_t i = 0; i + 1 < C; ++i) text += "    nop\n";
  return text + "    jmp cycle\n";
}

constexpr uint32_t kPrefixes[] = {0, 1, 2, 3, 5, 17, 100};
constexpr uint32_t kCycles[] = {1, 2, 3, 7, 8, 9, 64};

// exec.livelock: Brent's method as specified (the state after each step compared
// with the state saved after steps 2^k - 1) ends the launch at step 2^k - 1 + C for
// the least k with 2^k - 1 >= K and 2^k >= C, never before the first repetition.
TEST(Livelock, DetectedAtTheSpecifiedStep) {
  for (uint32_t K : kPrefixes) {
    for (uint32_t C : kCycles) {
      SCOPED_TRACE("K " + std::to_string(K) + " C " + std::to_string(C));
      auto o = outcome(prefix_cycle(K, C));
      ASSERT_EQ(o.status, Status::Livelock);
      uint64_t p = 1;
      while (p - 1 < K || p < C) p *= 2;
      EXPECT_EQ(o.steps, p - 1 + C);
      EXPECT_GE(o.steps, K + C);
    }
  }
}

// exec.livelock: states repeating from step mu with period lambda end the launch by
// step 2 max(mu, lambda) + lambda (here mu = K, lambda = C).
TEST(Livelock, WithinTheStatedBound) {
  for (uint32_t K : kPrefixes) {
    for (uint32_t C : kCycles) {
      auto o = outcome(prefix_cycle(K, C));
      ASSERT_EQ(o.status, Status::Livelock);
      EXPECT_LE(o.steps, 2 * std::max(K, C) + C) << "K " << K << ", C " << C;
    }
  }
}

// exec.livelock: detection can be turned off, and is off under random.
TEST(Livelock, OffByConfigurationAndUnderRandom) {
  host::LoadOptions off = with_max_steps(1000);
  off.cli.livelock_check = false;
  auto o = outcome("spin:\n    jmp spin\n", off);
  EXPECT_EQ(o.status, Status::StepLimit);
  EXPECT_EQ(o.steps, 1000u);
  host::LoadOptions rnd = with_policy(Policy::Random, 9);
  rnd.cli.max_steps = 1000;
  o = outcome("spin:\n    jmp spin\n", rnd);
  EXPECT_EQ(o.status, Status::StepLimit);
}

// exec.livelock: a two-warp livelock in which the warps alternate (the round-robin
// cursor is part of the state) is detected.
TEST(Livelock, MultiWarpCycle) {
  auto o = outcome(R"(
.wave 4
.warps 3
    cmp.eq p0, %warp, 2
    cbr p0, leave
spin:
    nop
    jmp spin
leave:
    exit
)");
  EXPECT_EQ(o.status, Status::Livelock);
}

// An exact detector written from exec.livelock, independent of Brent's schedule:
// it runs the program with detection off, remembers every state, and at the first
// repetition knows mu and lambda; d is then computed by the clause's formula.
struct Repetition {
  uint64_t mu = 0, lambda = 0, d = 0;
};
std::optional<Repetition> exact_repetition(std::string_view text, host::LoadOptions opt,
                                           uint64_t limit) {
  opt.cli.livelock_check = false;
  opt.cli.max_steps = limit;
  auto prog = build(text, opt);
  if (!prog) return std::nullopt;
  Machine m(prog);
  std::vector<exec::MachineState> states{m.state()};
  std::multimap<uint64_t, uint64_t> by_hash{{m.hash(), 0}};
  while (!m.step()) {
    const uint64_t t = m.steps();
    auto [lo, hi] = by_hash.equal_range(m.hash());
    for (auto it = lo; it != hi; ++it) {
      if (states[it->second] == m.state()) {
        Repetition r;
        r.mu = it->second;
        r.lambda = t - it->second;
        uint64_t p = 1;  // 2^k
        while (p - 1 < r.mu || p < r.lambda) p *= 2;
        r.d = p - 1 + r.lambda;
        return r;
      }
    }
    by_hash.emplace(m.hash(), t);
    states.push_back(m.state());
  }
  return std::nullopt;
}

// The outcome of running `n` steps exactly, with detection off.
exec::Outcome after_steps(std::string_view text, host::LoadOptions opt, uint64_t n) {
  opt.cli.livelock_check = false;
  opt.cli.max_steps = n;
  return outcome(text, opt);
}

struct LivelockCase {
  const char* name;
  std::string text;
  Policy policy = Policy::RoundRobin;
};

std::vector<LivelockCase> livelock_cases() {
  std::vector<LivelockCase> v;
  v.push_back({"prefix 5, cycle 3", prefix_cycle(5, 3)});
  v.push_back({"prefix 40, cycle 6", prefix_cycle(40, 6)});
  v.push_back({"spin from launch", "l:\n    jmp l\n"});
  // Memory changes inside the cycle: the buffers at step d differ from those at
  // the first repetition (mu = 2, lambda = 16, d = 31).
  v.push_back({"memory counter mod 4", R"(
.wave 1
.buffer out u32[1] out
    mov s0, 0
    mov s1, 0
l:  add s0, s0, 1
    and s0, s0, 3
    st out[0], s0
    jmp l
)"});
  // bar.release: the barrier has no generation, so a barrier loop repeats.
  for (Policy p : {Policy::RoundRobin, Policy::LowestPcFirst, Policy::OldestFirst}) {
    v.push_back({"barrier loop, one warp", "l:  bar\n    jmp l\n", p});
    v.push_back({"barrier loop, two warps", ".warps 2\nl:  bar\n    jmp l\n", p});
    v.push_back({"barrier loop, two workgroups of three warps",
                 ".warps 3\n.workgroups 2\n.wave 4\nl:  bar\n    add v1, v1, 1\n"
                 "    and v1, v1, 1\n    jmp l\n",
                 p});
  }
  // Divergent lanes: lane 3 leaves the loop at once, the others toggle a value
  // and store it forever (the mask stack holds the loop entry throughout).
  v.push_back({"divergent toggling loop", R"(
.wave 4
.buffer out u32[4] out
    cmp.eq p1, %lane, 3
    mul v2, %lane, 4
    loop
        break p1
        xor v1, v1, 5
        st out[v2], v1
    endloop
    exit
)"});
  return v;
}

// exec.livelock, exec.status.livelock, exec.outcome: the reference ends a repeating
// launch at the detection step d the clause defines from mu and lambda, with the
// buffers of S_d; an exact detector (every state remembered) computes the same d.
TEST(Livelock, DetectionStepMatchesAnExactDetector) {
  for (const auto& c : livelock_cases()) {
    SCOPED_TRACE(c.name);
    auto rep = exact_repetition(c.text, with_policy(c.policy), 20000);
    ASSERT_TRUE(rep.has_value()) << "the states never repeat";
    auto o = outcome(c.text, with_policy(c.policy));
    ASSERT_EQ(o.status, Status::Livelock);
    EXPECT_EQ(o.steps, rep->d) << "mu " << rep->mu << " lambda " << rep->lambda;
    EXPECT_GE(o.steps, rep->mu + rep->lambda);
    auto at_d = after_steps(c.text, with_policy(c.policy), rep->d);
    EXPECT_EQ(o.buffers, at_d.buffers) << "the outputs are not those of S_d";
  }
}

// exec.livelock, exec.step.order: livelock exactly when d <= max_steps. At
// max_steps = d the launch ends livelock; at d - 1, and anywhere from the first
// repetition mu + lambda up to d - 1, it ends step_limit.
TEST(Livelock, MaxStepsBoundaryIsTheDetectionStep) {
  for (const auto& c : livelock_cases()) {
    SCOPED_TRACE(c.name);
    auto rep = exact_repetition(c.text, with_policy(c.policy), 20000);
    ASSERT_TRUE(rep.has_value());
    auto at = [&](uint64_t max) {
      host::LoadOptions opt = with_policy(c.policy);
      opt.cli.max_steps = max;
      return outcome(c.text, opt);
    };
    auto live = at(rep->d);
    EXPECT_EQ(live.status, Status::Livelock);
    EXPECT_EQ(live.steps, rep->d);
    if (rep->d > 1) {  // max_steps is at least 1
      auto before = at(rep->d - 1);
      EXPECT_EQ(before.status, Status::StepLimit);
      EXPECT_EQ(before.steps, rep->d - 1);
    }
    if (rep->mu + rep->lambda < rep->d) {
      auto first = at(rep->mu + rep->lambda);
      EXPECT_EQ(first.status, Status::StepLimit) << "ended at the first repetition, not at d";
    }
  }
}

// =================================================================================
// Trace (exec.trace.format)
// =================================================================================

std::vector<std::string> trace_lines(std::string_view text, host::LoadOptions opt = {}) {
  auto prog = build(text, opt);
  if (!prog) return {};
  Machine m(prog);
  std::vector<std::string> lines;
  m.set_trace([&](const exec::TraceRecord& r) { lines.push_back(exec::format_trace(*prog, r)); });
  m.run();
  return lines;
}

// exec.trace.format: one line per step, with the global warp id, the pc, exec with
// wave/4 hexadecimal digits, the expanded instruction and its source line.
TEST(Trace, LineFormat) {
  auto lines = trace_lines(R"(
.wave 8
.warps 2
.buffer out u32[wave] out
    shl v0, %lane, 2
    cmp.lt p0, %lane, 3
    if p0
        st out[v0], %lane
    endif
    exit
)");
  const std::vector<std::string> want = {
      "#0 w0 pc=0 exec=0xff shl v0, %lane, 2  ; line 5",
      "#1 w1 pc=0 exec=0xff shl v0, %lane, 2  ; line 5",
      "#2 w0 pc=1 exec=0xff cmp.lt p0, %lane, 3  ; line 6",
      "#3 w1 pc=1 exec=0xff cmp.lt p0, %lane, 3  ; line 6",
      "#4 w0 pc=2 exec=0xff push p0  ; line 7",
      "#5 w1 pc=2 exec=0xff push p0  ; line 7",
      "#6 w0 pc=3 exec=0x07 st out[v0], %lane  ; line 8",
      "#7 w1 pc=3 exec=0x07 st out[v0], %lane  ; line 8",
      "#8 w0 pc=4 exec=0x07 pop  ; line 9",
      "#9 w1 pc=4 exec=0x07 pop  ; line 9",
      "#10 w0 pc=5 exec=0xff exit  ; line 10",
      "#11 w1 pc=5 exec=0xff exit  ; line 10",
  };
  EXPECT_EQ(lines, want);
}

// exec.trace.format, syntax.print.instr: the trace prints numbers as the program text
// spells them (hexadecimal stays hexadecimal, a written '-' stays), memory offsets
// included, so that an implementation printing its source's operands agrees.
TEST(Trace, NumbersAsWritten) {
  auto lines = trace_lines(R"(
.wave 4
.buffer out u32[4] out
    mov s0, 0x2A
    add v1, %lane, -1
    mov s1, 0b100
    st out[s1 - 0x4], s0
    st out[ 0x8 ], 0xFFFFFFFF
    readlane s2, v1, 0x3
    exit
)");
  const std::vector<std::string> want = {
      "#0 w0 pc=0 exec=0xf mov s0, 0x2A  ; line 4",
      "#1 w0 pc=1 exec=0xf add v1, %lane, -1  ; line 5",
      "#2 w0 pc=2 exec=0xf mov s1, 0b100  ; line 6",
      "#3 w0 pc=3 exec=0xf st out[s1-0x4], s0  ; line 7",
      "#4 w0 pc=4 exec=0xf st out[0x8], 0xFFFFFFFF  ; line 8",
      "#5 w0 pc=5 exec=0xf readlane s2, v1, 0x3  ; line 9",
      "#6 w0 pc=6 exec=0xf exit  ; line 10",
  };
  EXPECT_EQ(lines, want);
}

// exec.trace.format: digits of the exec mask for every wave size; loop expansion.
TEST(Trace, ExecDigitsPerWave) {
  struct Case {
    uint32_t wave;
    const char* exec;
  };
  const Case cases[] = {{1, "0x1"},  {2, "0x3"},     {4, "0xf"},
                        {8, "0xff"}, {16, "0xffff"}, {64, "0xffffffffffffffff"}};
  for (const auto& c : cases) {
    auto lines = trace_lines(".wave " + std::to_string(c.wave) + "\n    exit\n");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], std::string("#0 w0 pc=0 exec=") + c.exec + " exit  ; line 2");
  }
  auto lines = trace_lines(".wave 16\n    cmp.lt p0, %lane, 1\n    if p0\n    endif\n    exit\n");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "#2 w0 pc=2 exec=0x0001 pop  ; line 4");
  lines = trace_lines(".wave 4\n    loop\n        break\n    endloop\n    exit\n");
  const std::vector<std::string> want = {
      "#0 w0 pc=0 exec=0xf lpush  ; line 2", "#1 w0 pc=1 exec=0xf brk pt  ; line 3",
      "#2 w0 pc=2 exec=0x0 lnext  ; line 4", "#3 w0 pc=3 exec=0x0 cbr pt, __loop0  ; line 4",
      "#4 w0 pc=4 exec=0x0 pop  ; line 4",   "#5 w0 pc=5 exec=0xf exit  ; line 5"};
  EXPECT_EQ(lines, want);
}

// exec.trace.format: the instruction that raises an event is traced; the trace ends.
TEST(Trace, FaultingInstructionIsTheLastLine) {
  auto lines = trace_lines(".wave 4\n    mov v1, 1\n    div v2, v1, 0\n    exit\n");
  const std::vector<std::string> want = {"#0 w0 pc=0 exec=0xf mov v1, 1  ; line 2",
                                         "#1 w0 pc=1 exec=0xf div v2, v1, 0  ; line 3"};
  EXPECT_EQ(lines, want);
}

// =================================================================================
// Special registers (state.special.*, state.launch.placement)
// =================================================================================

// state.init: the state of every warp, the memories and the scheduler at launch.
TEST(State, InitialState) {
  auto prog = build(R"(
.wave 16
.warps 2
.workgroups 3
.cores 2
.slm 32
.stack 256
.sregs 8
.vregs 4
.seed 77
.buffer a u32[2] in = 5, 6
.buffer b u8[3] out
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  const auto& s = m.state();
  ASSERT_EQ(s.warps.size(), 6u);
  for (const auto& w : s.warps) {
    EXPECT_EQ(w.pc, 0u);
    EXPECT_EQ(w.exec, 0xffffu);
    EXPECT_EQ(w.live, 0xffffu);
    EXPECT_EQ(w.status, WarpStatus::Ready);
    EXPECT_TRUE(w.mask_stack.empty());
    EXPECT_TRUE(w.pc_stack.empty());
    EXPECT_EQ(w.sregs, std::vector<uint32_t>(8, 0));
    EXPECT_EQ(w.vregs, std::vector<uint32_t>((4 + 1) * 16, 0));  // after one register of padding
    for (uint32_t p = 0; p < isa::kNumPreds; ++p) EXPECT_EQ(w.preds[p], 0u);
    EXPECT_EQ(w.preds[isa::kPredTrue] & 0xffff, 0xffffu);
    EXPECT_EQ(w.sp, 256u);
    EXPECT_EQ(w.mode, exec::WaveMode::Normal);
    EXPECT_EQ(w.part, 0u);
    EXPECT_EQ(w.region_pc, 0u);  // wave.state
    EXPECT_EQ(w.region_other, 0u);
    EXPECT_FALSE(w.in_handler);
  }
  EXPECT_EQ(s.mem.buffers.size(), 2u);
  EXPECT_EQ(s.mem.buffers[0], (std::vector<uint8_t>{5, 0, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(s.mem.buffers[1], std::vector<uint8_t>(3, 0));
  ASSERT_EQ(s.mem.slm.size(), 3u);
  for (const auto& slm : s.mem.slm) EXPECT_EQ(slm, std::vector<uint8_t>(32, 0));
  EXPECT_EQ(s.mem.stack, std::vector<uint8_t>(6 * 256, 0));
  EXPECT_EQ(s.trap.cores.size(), 2u);
  for (const auto& c : s.trap.cores) EXPECT_TRUE(c == exec::CoreState{});
  ASSERT_EQ(s.barriers.size(), 3u);
  for (const auto& b : s.barriers) EXPECT_TRUE(b == exec::BarrierState{});
  EXPECT_EQ(s.trap.global_esr, 0u);
  EXPECT_EQ(s.sched.cursor, 0u);
  EXPECT_EQ(s.sched.rng, 77u);
}

// state.special.lane, state.special.warp, state.special.wg, state.special.core,
// state.special.size, state.launch.placement
TEST(Special, IdentityAndSizeRegisters) {
  auto o = outcome(R"(
.wave 4
.simd 2
.warps 2
.workgroups 5
.cores 3
.buffer out u32[8 * warps * workgroups] out
.buffer lanes u32[threads] out
    mul s0, %gwarp, 32
    st out[s0], %warp
    st out[s0+4], %gwarp
    st out[s0+8], %wg
    st out[s0+12], %core
    st out[s0+16], %wave
    st out[s0+20], %simd
    st out[s0+24], %nwarps
    st out[s0+28], %nwg
    mul s1, %gwarp, 16
    shl v0, %lane, 2
    add v0, v0, s1
    st lanes[v0], %lane
    exit
)");
  auto w = completed_words(o, "out");
  ASSERT_EQ(w.size(), 80u);
  for (uint32_t g = 0; g < 10; ++g) {
    SCOPED_TRACE("warp " + std::to_string(g));
    std::vector<uint32_t> got(w.begin() + 8 * g, w.begin() + 8 * g + 8);
    EXPECT_EQ(got, (std::vector<uint32_t>{g % 2, g, g / 2, (g / 2) % 3, 4, 2, 2, 5}));
  }
  auto lanes = test::words(o, "lanes");
  for (uint32_t i = 0; i < lanes.size(); ++i) EXPECT_EQ(lanes[i], i % 4);
}

// state.special.exec, alu.mov: %exec_lo and %exec_hi write their half, %exec writes
// the low half and clears the high one; only live lanes below the wave stay; %exec
// reads like %exec_lo.
TEST(Special, ExecWriteRulesAtWave64) {
  auto o = outcome(R"(
.wave 64
.buffer out u32[32] out
    mov %exec_hi, 0
    mov s0, %exec_lo
    mov s1, %exec_hi
    mov s2, %exec
    st out[0], s0
    st out[4], s1
    st out[8], s2
    mov %exec_hi, 0xf0
    mov s0, %exec_lo
    mov s1, %exec_hi
    st out[12], s0
    st out[16], s1
    mov %exec, 0xff00
    mov s0, %exec_lo
    mov s1, %exec_hi
    st out[20], s0
    st out[24], s1
    mov %exec_hi, 1
    mov %exec_lo, 0
    mov s0, %exec_lo
    mov s1, %exec_hi
    st out[28], s0
    st out[32], s1
    mov %exec, -1
    mov s0, %exec_lo
    mov s1, %exec_hi
    st out[36], s0
    st out[40], s1
    mov %exec_lo, 0xff
    exit
    mov %exec_lo, -1
    mov %exec_hi, -1
    mov s0, %exec_lo
    mov s1, %exec_hi
    mov s2, %exec
    st out[44], s0
    st out[48], s1
    st out[52], s2
    exit
)");
  auto w = completed_words(o, "out");
  ASSERT_EQ(w.size(), 32u);
  EXPECT_EQ(std::vector<uint32_t>(w.begin(), w.begin() + 14),
            (std::vector<uint32_t>{0xffffffff, 0, 0xffffffff, 0xffffffff, 0xf0, 0xff00, 0, 0, 1,
                                   0xffffffff, 0, 0xffffff00, 0xffffffff, 0xffffff00}));
}

// state.special.exec, state.lanes: bits at or above the wave are cleared; writing
// exec does not touch the mask stack.
TEST(Special, ExecWriteAtSmallWaveKeepsMaskStack) {
  auto prog = build(R"(
.wave 8
.buffer out u32[2] out
    cmp.lt p0, %lane, 2
    push p0
    mov %exec, 0xffff
    mov %exec_hi, 1
    st out[0], %exec
    st out[4], %exec_hi
    pop
    exit
)");
  ASSERT_TRUE(prog);
  Machine m(prog);
  m.advance(2);
  const auto stack = m.state().warps[0].mask_stack;
  m.step();
  EXPECT_EQ(m.state().warps[0].exec, 0xffu);
  EXPECT_TRUE(m.state().warps[0].mask_stack == stack);
  m.step();
  EXPECT_EQ(m.state().warps[0].exec, 0xffu);
  auto o = m.run();
  EXPECT_EQ(completed_words(o, "out"), (std::vector<uint32_t>{0xff, 0}));
}

}  // namespace
}  // namespace simt
