// The printer (spec/syntax.md, syntax.print.roundtrip): a printed program parses to
// an equal program, and printing that again gives the same text. Checked for every
// instruction of the table with every operand form, for the example programs (as
// written and expanded), and as a RapidCheck property over random programs.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "isa/isa.h"
#include "support.h"
#include "text/parser.h"
#include "text/printer.h"

namespace simt {
namespace {

using test::read_all;

using syntax::Operand;
using syntax::OperandType;
using syntax::RegFile;
using syntax::SizeExpr;
using syntax::Stmt;
using syntax::StmtKind;
using syntax::Value;

// ---- AST builders ----------------------------------------------------------------

Value reg(RegFile f, uint32_t i) {
  return Value{f, i, 0};
}
Value imm(int64_t v) {
  return Value{RegFile::Imm, 0, v};
}
Value special(isa::Special s) {
  return Value{RegFile::Special, static_cast<uint32_t>(s), 0};
}

Operand val(Value v) {
  Operand o;
  o.type = OperandType::Value;
  o.value = v;
  return o;
}
Operand pred(RegFile f, uint32_t i, bool neg) {
  Operand o;
  o.type = OperandType::Pred;
  o.value = reg(f, i);
  o.negate = neg;
  return o;
}
Operand mem(std::string space, Value base, int64_t offset) {
  Operand o;
  o.type = OperandType::Mem;
  o.name = std::move(space);
  o.value = base;
  o.offset = offset;
  return o;
}
Operand label_ref(std::string name) {
  Operand o;
  o.type = OperandType::Label;
  o.name = std::move(name);
  return o;
}
Stmt instr(isa::Op op, std::vector<Operand> ops) {
  Stmt s;
  s.kind = StmtKind::Instr;
  s.op = op;
  s.operands = std::move(ops);
  return s;
}
Stmt label(std::string name) {
  Stmt s;
  s.kind = StmtKind::Label;
  s.label = std::move(name);
  return s;
}
Stmt structured(StmtKind k, std::vector<Operand> ops = {}) {
  Stmt s;
  s.kind = k;
  s.operands = std::move(ops);
  return s;
}
using test::bin;
using test::num;
using test::sym;
syntax::BufferDecl buffer(std::string name, syntax::ElemType t, SizeExpr count,
                          syntax::BufferMode m, syntax::BufferInit init = {}) {
  syntax::BufferDecl b;
  b.name = std::move(name);
  b.type = t;
  b.count = std::move(count);
  b.mode = m;
  b.init = std::move(init);
  return b;
}
syntax::BufferInit init(syntax::BufferInit::Kind k, std::vector<int64_t> values) {
  syntax::BufferInit i;
  i.kind = k;
  i.values = std::move(values);
  return i;
}

// syntax.print.roundtrip: print -> parse gives an equal program; print again gives
// the same text.
testing::AssertionResult roundtrips(const syntax::Program& p) {
  const std::string once = text::print(p);
  auto r = text::parse(once);
  if (!r.ok())
    return testing::AssertionFailure() << "printed text does not parse:\n"
                                       << r.diags.format("printed") << "---\n"
                                       << once;
  if (!(r.program == p))
    return testing::AssertionFailure() << "printed text parses to a different program:\n"
                                       << once << "---\nreprinted:\n"
                                       << text::print(r.program);
  const std::string twice = text::print(r.program);
  if (twice != once)
    return testing::AssertionFailure() << "second print differs:\n" << once << "---\n" << twice;
  return testing::AssertionSuccess();
}

// ---- every instruction with every operand form ----------------------------------

// Operand forms of each signature kind (syntax.operand.kinds).
std::vector<Operand> forms(isa::OperandKind k) {
  using K = isa::OperandKind;
  switch (k) {
    case K::Dst:
      return {val(reg(RegFile::V, 0)), val(reg(RegFile::S, 31)), val(special(isa::Special::Exec)),
              val(reg(RegFile::V, 255)), val(special(isa::Special::ExecHi))};
    case K::VDst:
      return {val(reg(RegFile::V, 3)), val(reg(RegFile::V, 0))};
    case K::SDst:
      return {val(reg(RegFile::S, 4)), val(reg(RegFile::S, 255))};
    case K::PDst:
      return {val(reg(RegFile::P, 15)), val(reg(RegFile::P, 0))};
    case K::Src:
      return {val(reg(RegFile::V, 1)),
              val(reg(RegFile::S, 2)),
              val(imm(-2147483648)),
              val(imm(4294967295)),
              val(imm(0)),
              val(imm(-1)),
              val(special(isa::Special::Lane)),
              val(special(isa::Special::NWg))};
    case K::VSrc:
      return {val(reg(RegFile::V, 9)), val(reg(RegFile::V, 254))};
    case K::Lane:
      return {val(imm(0)), val(imm(4294967295)), val(reg(RegFile::S, 5))};
    case K::Pred:
      return {pred(RegFile::P, 0, false), pred(RegFile::P, 15, true),
              pred(RegFile::PTrue, 0, false), pred(RegFile::PTrue, 0, true)};
    case K::Mem:
      return {mem("buf", reg(RegFile::V, 1), 0),
              mem("slm", reg(RegFile::S, 2), 4),
              mem("buf", special(isa::Special::Lane), -8),
              mem("out", Value{}, 0),
              mem("buf", Value{}, 4294967295),
              mem("out", Value{}, -2147483648),
              mem("buf", reg(RegFile::V, 1), -4294967295),
              mem("slm", special(isa::Special::Warp), 4294967295)};
    case K::Label:
      return {label_ref("target"), label_ref("_end9")};
  }
  return {};
}

std::vector<Stmt> every_instruction() {
  std::vector<Stmt> out;
  for (const auto& info : isa::table()) {
    auto kinds = info.sig.view();
    size_t variants = 1;
    for (auto k : kinds) variants = std::max(variants, forms(k).size());
    for (size_t j = 0; j < variants; ++j) {
      std::vector<Operand> ops;
      for (size_t i = 0; i < kinds.size(); ++i) {
        auto f = forms(kinds[i]);
        ops.push_back(f[(j + i) % f.size()]);
      }
      out.push_back(instr(info.op, std::move(ops)));
    }
  }
  return out;
}

TEST(RoundTrip, EveryInstructionOfTheTable) {
  syntax::Program p;
  p.stmts.push_back(label("target"));
  auto all = every_instruction();
  p.stmts.insert(p.stmts.end(), all.begin(), all.end());
  p.stmts.push_back(label("_end9"));
  EXPECT_TRUE(roundtrips(p));
  // Every mnemonic is there.
  std::set<isa::Op> seen;
  for (const auto& s : p.stmts)
    if (s.kind == StmtKind::Instr) seen.insert(s.op);
  EXPECT_EQ(seen.size(), isa::kOpCount);
  // One statement at a time, through print_stmt, too.
  for (const auto& s : all) {
    const std::string line = text::print_stmt(s);
    auto r = text::parse(line);
    ASSERT_TRUE(r.ok()) << line << "\n" << r.diags.format("t");
    ASSERT_EQ(r.program.stmts.size(), 1u) << line;
    EXPECT_TRUE(r.program.stmts[0] == s) << line;
  }
}

TEST(RoundTrip, StructuredStatementsLabelsDirectivesBuffers) {
  using K = syntax::BufferInit::Kind;
  syntax::Program p;
  auto& L = p.launch;
  L.wave.value = 64;
  L.simd.value = 16;
  L.warps.value = 4;
  L.workgroups.value = 4294967295u;
  L.cores.value = 0;
  L.slm.value = 65536;
  L.vregs.value = 256;
  L.sregs.value = 1;
  L.mask_depth.value = 1024;
  L.call_depth.value = 7;
  L.stack.value = 16;
  L.policy.value = "lowest_pc_first";
  L.seed.value = 18446744073709551615ull;
  L.max_steps.value = 1;
  p.buffers.push_back(buffer("a", syntax::ElemType::U8, num(4), syntax::BufferMode::In));
  p.buffers.push_back(
      buffer("b", syntax::ElemType::U16,
             bin(SizeExpr::Kind::Sub, num(10), bin(SizeExpr::Kind::Sub, num(3), sym("warps"))),
             syntax::BufferMode::Out, init(K::List, {-32768, 65535, 0})));
  p.buffers.push_back(
      buffer("c", syntax::ElemType::U32,
             bin(SizeExpr::Kind::Mul, bin(SizeExpr::Kind::Add, sym("threads"), num(1)),
                 bin(SizeExpr::Kind::Mul, sym("simd"), sym("workgroups"))),
             syntax::BufferMode::InOut, init(K::Iota, {-5, 4294967295})));
  p.buffers.push_back(buffer("d", syntax::ElemType::I32, sym("wave"), syntax::BufferMode::Out,
                             init(K::Fill, {-2147483648})));
  p.buffers.push_back(buffer("e", syntax::ElemType::U32, num(4294967295), syntax::BufferMode::InOut,
                             init(K::List, {4294967295})));
  p.stmts = {
      label("top"),
      label("if"),  // a label may be named like a keyword
      structured(StmtKind::If, {pred(RegFile::P, 1, true)}),
      structured(StmtKind::Loop),
      structured(StmtKind::Break),
      structured(StmtKind::Break, {pred(RegFile::PTrue, 0, false)}),
      structured(StmtKind::Continue),
      structured(StmtKind::Continue, {pred(RegFile::P, 2, false)}),
      structured(StmtKind::EndLoop),
      structured(StmtKind::Else),
      instr(isa::Op::Jmp, {label_ref("if")}),
      structured(StmtKind::EndIf),
      // Unbalanced blocks still print and parse (nesting is validation's business).
      structured(StmtKind::EndLoop),
      structured(StmtKind::Else),
      structured(StmtKind::If, {pred(RegFile::PTrue, 0, false)}),
      label("end"),
  };
  EXPECT_TRUE(roundtrips(p));
}

// syntax.print.roundtrip: numbers are printed in decimal; directives first, then
// buffers, then statements; comments and spacing are not kept.
TEST(Printer, CanonicalForm) {
  auto r = text::parse(
      "  nop ; a comment\n"
      "\tmov   v1,0x10\n"
      ".buffer b u32[0x4 * (wave)] out = 0b11, -0x1\n"
      ".wave 0x8\n"
      "exit\n");
  ASSERT_TRUE(r.ok()) << r.diags.format("t");
  const std::string out = text::print(r.program);
  EXPECT_EQ(out.find("comment"), std::string::npos);
  // syntax.print.roundtrip: directives and buffers in decimal; syntax.print.instr:
  // instruction numbers as written.
  EXPECT_EQ(out.find("0b"), std::string::npos) << out;
  const size_t wave = out.find(".wave 8");
  const size_t buf = out.find(".buffer b u32[4 * wave] out = 3, -1");
  const size_t mov = out.find("mov v1, 0x10");
  const size_t nop = out.find("nop");
  ASSERT_NE(wave, std::string::npos) << out;
  ASSERT_NE(buf, std::string::npos) << out;
  ASSERT_NE(mov, std::string::npos) << out;
  EXPECT_LT(wave, buf);
  EXPECT_LT(buf, nop);
  EXPECT_LT(nop, mov);
  EXPECT_TRUE(roundtrips(r.program));
}

// syntax.print.instr: numbers in instructions print as the text spells them (prefix,
// digits, a '-' exactly when written, no spaces around it); a memory offset keeps
// its sign and notation; programs built by tools print decimal.
TEST(Printer, InstructionNumbersAsWritten) {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"mov s1, 0x2A", "mov s1, 0x2A"},
      {"mov s1, 0b101", "mov s1, 0b101"},
      {"mov s1, -  1", "mov s1, -1"},
      {"mov s1, 4294967295", "mov s1, 4294967295"},
      {"mov s1, 0xffffffff", "mov s1, 0xffffffff"},
      {"add v1, -0x3 ,  -0b10", "add v1, -0x3, -0b10"},
      {"mov s1, 007", "mov s1, 007"},
      {"st out[v1 - 4], s1", "st out[v1-4], s1"},
      {"st out[v1+0], s1", "st out[v1+0], s1"},
      {"st out[v1 + 0x10], s1", "st out[v1+0x10], s1"},
      {"st out[v1], s1", "st out[v1], s1"},
      {"st out[ - 4], s1", "st out[-4], s1"},
      {"st out[0x8], s1", "st out[0x8], s1"},
      {"readlane s0, v2, 0x1", "readlane s0, v2, 0x1"},
      {"sel v3, !p1, %lane, 0x10", "sel v3, !p1, %lane, 0x10"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto r = text::parse(std::string(".buffer out u32[4] out\n") + c.in + "\n");
    ASSERT_TRUE(r.ok()) << r.diags.format("t");
    ASSERT_EQ(r.program.stmts.size(), 1u);
    EXPECT_EQ(text::print_stmt(r.program.stmts[0]), c.out);
    EXPECT_TRUE(roundtrips(r.program));
  }
  // Built by a tool: decimal, offsets with their sign.
  EXPECT_EQ(text::print_stmt(instr(isa::Op::Mov, {val(reg(RegFile::S, 1)), val(imm(-42))})),
            "mov s1, -42");
  EXPECT_EQ(text::print_stmt(
                instr(isa::Op::St, {mem("out", reg(RegFile::V, 1), -16), val(reg(RegFile::S, 1))})),
            "st out[v1-16], s1");
}

// print_size keeps the meaning of every tree, parenthesising where precedence or left
// associativity needs it.
// syntax.print.indent: 4 spaces plus 2 per open block, at most 32 blocks counted;
// else and the closing statements align with their opening statement; labels at
// the start of the line.
TEST(Printer, IndentationCountsAtMost32Blocks) {
  std::string src;
  for (int i = 0; i < 34; ++i) src += "if p0\n";
  src += "l:\nnop\nelse\nsubv.begin\nnop\nsubv.end\n";
  for (int i = 0; i < 34; ++i) src += "endif\n";
  auto r = text::parse(src + "endloop\nexit\n");  // an unmatched endloop closes nothing
  ASSERT_TRUE(r.ok()) << r.diags.format("t");
  std::vector<std::string> lines;
  std::istringstream in(text::print(r.program));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 34u + 6 + 34 + 2);
  auto spaces = [&](size_t i) { return lines.at(i).find_first_not_of(' '); };
  for (size_t i = 0; i < 34; ++i) EXPECT_EQ(spaces(i), 4 + 2 * std::min<size_t>(i, 32)) << i;
  EXPECT_EQ(lines[34], "l:");
  EXPECT_EQ(spaces(35), 68u);                           // nop: 34 blocks open
  EXPECT_EQ(lines[36], std::string(68, ' ') + "else");  // outside its if: 33 blocks
  EXPECT_EQ(spaces(37), 68u);                           // subv.begin
  EXPECT_EQ(spaces(38), 68u);                           // inside the region: 35 blocks
  EXPECT_EQ(spaces(39), 68u);                           // subv.end
  EXPECT_EQ(spaces(40), 68u);                           // the innermost endif: 33 blocks
  EXPECT_EQ(spaces(40 + 33), 4u);                       // the outermost endif
  EXPECT_EQ(lines[74], "    endloop");
  EXPECT_EQ(lines[75], "    exit");
}

TEST(Printer, SizeExpressionsKeepTheirShape) {
  using K = SizeExpr::Kind;
  const SizeExpr a = num(1), b = sym("wave"), c = num(3);
  std::vector<SizeExpr> trees;
  for (K outer : {K::Add, K::Sub, K::Mul})
    for (K inner : {K::Add, K::Sub, K::Mul}) {
      trees.push_back(bin(outer, bin(inner, a, b), c));
      trees.push_back(bin(outer, a, bin(inner, b, c)));
      trees.push_back(bin(outer, bin(inner, a, b), bin(inner, b, c)));
      trees.push_back(bin(outer, test::neg(bin(inner, a, b)), c));
      trees.push_back(bin(outer, a, test::neg(bin(inner, b, c))));
      trees.push_back(test::neg(bin(outer, a, b)));
    }
  trees.push_back(test::neg(test::neg(a)));
  trees.push_back(bin(K::Sub, b, test::neg(a)));
  for (const auto& t : trees) {
    syntax::Program p;
    p.buffers.push_back(buffer("x", syntax::ElemType::U32, t, syntax::BufferMode::Out));
    EXPECT_TRUE(roundtrips(p)) << text::print_size(t);
  }
  EXPECT_EQ(text::print_size(bin(K::Sub, num(10), bin(K::Sub, num(3), num(2)))), "10 - (3 - 2)");
  EXPECT_EQ(text::print_size(bin(K::Sub, bin(K::Sub, num(10), num(3)), num(2))), "10 - 3 - 2");
  EXPECT_EQ(text::print_size(bin(K::Mul, bin(K::Add, num(2), num(3)), num(4))), "(2 + 3) * 4");
  EXPECT_EQ(text::print_size(test::neg(bin(K::Sub, num(2), sym("wave")))), "-(2 - wave)");
  EXPECT_EQ(text::print_size(bin(K::Mul, test::neg(b), num(2))), "-wave * 2");
}

// ---- the example programs ---------------------------------------------------------

TEST(RoundTrip, ExamplesAsWrittenAndExpanded) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("examples")))
    if (e.path().extension() == ".simt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const std::string src = read_all(f);
    auto parsed = text::parse(src);
    ASSERT_TRUE(parsed.ok()) << parsed.diags.format(f.string());
    EXPECT_TRUE(roundtrips(parsed.program));
    auto loaded = test::load(src);
    ASSERT_TRUE(loaded.loaded.has_value()) << loaded.diags.format(f.string());
    EXPECT_TRUE(roundtrips(loaded.loaded->expanded));
    // The printed program loads to the same expanded program.
    auto again = test::load(text::print(parsed.program));
    ASSERT_TRUE(again.loaded.has_value());
    EXPECT_TRUE(again.loaded->expanded == loaded.loaded->expanded);
  }
}

// ---- random programs (RapidCheck) -------------------------------------------------

bool register_shaped(const std::string& s) {
  if (s == "pt") return true;
  if (s.size() < 2 || (s[0] != 'v' && s[0] != 's' && s[0] != 'p')) return false;
  return std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A name: letter or `_`, then letters, digits and `_` (syntax.lex.label); never a
// register name.
std::string gen_name() {
  static const std::string first = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
  static const std::string rest = first + "0123456789";
  // Sometimes a word that is also a mnemonic, keyword, symbol or mode.
  if (*rc::gen::inRange(0, 8) == 0)
    return *rc::gen::element<std::string>("if", "loop", "add", "wave", "threads", "in", "out", "u8",
                                          "fill", "iota", "exit", "slm_", "target");
  std::string s(1, first[*rc::gen::inRange<size_t>(0, first.size())]);
  const int n = *rc::gen::inRange(0, 7);
  for (int i = 0; i < n; ++i) s += rest[*rc::gen::inRange<size_t>(0, rest.size())];
  if (register_shaped(s)) s = "_" + s;
  return s;
}

int64_t gen_in(int64_t lo, int64_t hi) {  // inclusive
  const int64_t mid = 0 >= lo && 0 <= hi ? 0 : lo;
  return *rc::gen::oneOf(rc::gen::element(lo, hi, mid), rc::gen::inRange<int64_t>(lo, hi + 1));
}
uint32_t gen_u32() {
  return *rc::gen::oneOf(rc::gen::element<uint32_t>(0u, 1u, 0x80000000u, 0xffffffffu),
                         rc::gen::arbitrary<uint32_t>());
}
uint64_t gen_u64() {
  return *rc::gen::oneOf(rc::gen::element<uint64_t>(0ull, ~0ull, 1ull << 63),
                         rc::gen::arbitrary<uint64_t>());
}

constexpr int64_t kImmLo = -2147483648LL, kImmHi = 4294967295LL;

Value gen_reg(RegFile f) {
  return reg(f, static_cast<uint32_t>(*rc::gen::oneOf(rc::gen::inRange<int64_t>(0, 300),
                                                      rc::gen::inRange<int64_t>(0, 1000000000))));
}
Value gen_special() {
  return special(
      static_cast<isa::Special>(*rc::gen::inRange<int>(0, static_cast<int>(isa::Special::kCount))));
}
Operand gen_pred() {
  bool pt = *rc::gen::inRange(0, 4) == 0;
  return pred(pt ? RegFile::PTrue : RegFile::P, pt ? 0 : gen_reg(RegFile::P).index,
              *rc::gen::arbitrary<bool>());
}

Operand gen_operand(isa::OperandKind k) {
  using K = isa::OperandKind;
  switch (k) {
    case K::Dst:
      switch (*rc::gen::inRange(0, 3)) {
        case 0:
          return val(gen_reg(RegFile::V));
        case 1:
          return val(gen_reg(RegFile::S));
        default:
          return val(gen_special());
      }
    case K::VDst:
      return val(gen_reg(RegFile::V));
    case K::SDst:
      return val(gen_reg(RegFile::S));
    case K::PDst:
      return *rc::gen::inRange(0, 5) == 0 ? val(reg(RegFile::PTrue, 0)) : val(gen_reg(RegFile::P));
    case K::Src:
      switch (*rc::gen::inRange(0, 4)) {
        case 0:
          return val(gen_reg(RegFile::V));
        case 1:
          return val(gen_reg(RegFile::S));
        case 2:
          return val(imm(gen_in(kImmLo, kImmHi)));
        default:
          return val(gen_special());
      }
    case K::VSrc:
      return val(gen_reg(RegFile::V));
    case K::Lane:
      return *rc::gen::arbitrary<bool>() ? val(imm(gen_in(0, kImmHi))) : val(gen_reg(RegFile::S));
    case K::Pred:
      return gen_pred();
    case K::Mem: {
      std::string space = *rc::gen::inRange(0, 3) == 0 ? "slm" : gen_name();
      switch (*rc::gen::inRange(0, 4)) {
        case 0:
          return mem(space, Value{}, gen_in(kImmLo, kImmHi));
        case 1:
          return mem(space, gen_reg(RegFile::V), gen_in(-kImmHi, kImmHi));
        case 2:
          return mem(space, gen_reg(RegFile::S), gen_in(-kImmHi, kImmHi));
        default:
          return mem(space, gen_special(), gen_in(-kImmHi, kImmHi));
      }
    }
    case K::Label:
      return label_ref(gen_name());
  }
  return {};
}

Stmt gen_stmt() {
  switch (*rc::gen::inRange(0, 12)) {
    case 0:
    case 1:
      return label(gen_name());
    case 2:
      return structured(StmtKind::If, {gen_pred()});
    case 3:
      return structured(StmtKind::Else);
    case 4:
      return structured(StmtKind::EndIf);
    case 5:
      return structured(StmtKind::Loop);
    case 6:
      return structured(StmtKind::EndLoop);
    case 7:
    case 8: {
      StmtKind k = *rc::gen::arbitrary<bool>() ? StmtKind::Break : StmtKind::Continue;
      if (*rc::gen::arbitrary<bool>()) return structured(k);
      return structured(k, {gen_pred()});
    }
    default: {
      const auto& info = isa::table()[*rc::gen::inRange<size_t>(0, isa::kOpCount)];
      std::vector<Operand> ops;
      for (auto k : info.sig.view()) ops.push_back(gen_operand(k));
      return instr(info.op, std::move(ops));
    }
  }
}

SizeExpr gen_size(int depth) {
  const int pick = *rc::gen::inRange(0, depth <= 0 ? 2 : 5);
  if (pick == 0) return num(gen_u32());
  if (pick == 1)
    return sym(*rc::gen::element<std::string>("wave", "simd", "warps", "workgroups", "threads"));
  const SizeExpr::Kind k = pick == 2   ? SizeExpr::Kind::Add
                           : pick == 3 ? SizeExpr::Kind::Sub
                                       : SizeExpr::Kind::Mul;
  SizeExpr l = gen_size(depth - 1);
  SizeExpr r = gen_size(depth - 1);
  return bin(k, std::move(l), std::move(r));
}

syntax::BufferDecl gen_buffer() {
  using K = syntax::BufferInit::Kind;
  syntax::BufferDecl b;
  b.name = gen_name();
  b.type = static_cast<syntax::ElemType>(*rc::gen::inRange(0, 4));
  b.mode = static_cast<syntax::BufferMode>(*rc::gen::inRange(0, 3));
  b.count = gen_size(*rc::gen::inRange(0, 5));
  switch (*rc::gen::inRange(0, 4)) {
    case 0:
      break;
    case 1: {
      const int n = *rc::gen::inRange(1, 7);
      std::vector<int64_t> v;
      for (int i = 0; i < n; ++i) v.push_back(gen_in(kImmLo, kImmHi));
      b.init = init(K::List, std::move(v));
      break;
    }
    case 2:
      b.init = init(K::Fill, {gen_in(kImmLo, kImmHi)});
      break;
    default:
      b.init = init(K::Iota, {gen_in(kImmLo, kImmHi), gen_in(kImmLo, kImmHi)});
      break;
  }
  return b;
}

syntax::Program gen_program() {
  syntax::Program p;
  auto& L = p.launch;
  for (auto* d : {&L.wave, &L.simd, &L.warps, &L.workgroups, &L.cores, &L.slm, &L.vregs, &L.sregs,
                  &L.mask_depth, &L.call_depth, &L.stack})
    if (*rc::gen::arbitrary<bool>()) d->value = gen_u32();
  if (*rc::gen::arbitrary<bool>()) L.seed.value = gen_u64();
  if (*rc::gen::arbitrary<bool>()) L.max_steps.value = gen_u64();
  if (*rc::gen::arbitrary<bool>())
    L.policy.value = *rc::gen::oneOf(
        rc::gen::element<std::string>("round_robin", "lowest_pc_first", "oldest_first", "random"),
        rc::gen::map(rc::gen::arbitrary<bool>(),
                     [](bool dot) { return dot ? std::string(".x.y_1") : std::string("Bogus"); }));
  const int nb = *rc::gen::inRange(0, 4);
  for (int i = 0; i < nb; ++i) p.buffers.push_back(gen_buffer());
  const int ns = *rc::gen::inRange(0, 40);
  for (int i = 0; i < ns; ++i) p.stmts.push_back(gen_stmt());
  return p;
}

// syntax.print.roundtrip over random programs.
RC_GTEST_PROP(RoundTripProperty, RandomProgramsPrintAndParseBack, ()) {
  const syntax::Program p = gen_program();
  const std::string once = text::print(p);
  RC_LOG() << once;
  auto r = text::parse(once);
  RC_ASSERT(r.diags.format("printed") == std::string());
  RC_ASSERT(r.program == p);
  RC_ASSERT(text::print(r.program) == once);
}

// The AST ignores comments, spacing and line endings (syntax.lex.lines,
// syntax.lex.comment, syntax.print.roundtrip).
RC_GTEST_PROP(RoundTripProperty, CommentsSpacingAndLineEndingsDoNotMatter, ()) {
  const syntax::Program p = gen_program();
  const std::string once = text::print(p);
  std::string noisy;
  size_t start = 0;
  while (start < once.size()) {
    size_t nl = once.find('\n', start);
    std::string line = once.substr(start, nl - start);
    start = nl + 1;
    // Extra blanks around commas and at the start of the line.
    std::string spaced;
    for (char c : line) {
      if (c == ',' && *rc::gen::arbitrary<bool>())
        spaced += " \t,  ";
      else
        spaced += c;
    }
    if (*rc::gen::arbitrary<bool>()) spaced = "\t " + spaced;
    if (*rc::gen::arbitrary<bool>()) spaced += "   ; comment, with [tokens] %x 0x";
    if (*rc::gen::inRange(0, 4) == 0) spaced += "\n; a comment line";
    noisy += spaced + (*rc::gen::arbitrary<bool>() ? "\r\n" : "\n");
  }
  RC_LOG() << noisy;
  auto r = text::parse(noisy);
  RC_ASSERT(r.diags.format("noisy") == std::string());
  RC_ASSERT(r.program == p);
}

}  // namespace
}  // namespace simt
