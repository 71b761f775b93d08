// Statements, operands, labels, directives and buffers (spec/syntax.md,
// syntax.label ... syntax.buffer.init) and located syntax errors (syntax.errors).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "isa/isa.h"
#include "support.h"
#include "text/parser.h"

namespace simt {
namespace {

using syntax::BufferInit;
using syntax::BufferMode;
using syntax::ElemType;
using syntax::OperandType;
using syntax::RegFile;
using syntax::SizeExpr;
using syntax::StmtKind;

using test::expect_syntax_error;
using test::show;

syntax::Program parse_ok(std::string_view src) {
  auto r = text::parse(src);
  EXPECT_TRUE(r.ok()) << src << "\n" << r.diags.format("t");
  return r.program;
}

// ---- size expression builders ------------------------------------------------------
using test::bin;
using test::neg;
using test::num;
using test::sym;
SizeExpr add(SizeExpr l, SizeExpr r) {
  return bin(SizeExpr::Kind::Add, std::move(l), std::move(r));
}
SizeExpr sub(SizeExpr l, SizeExpr r) {
  return bin(SizeExpr::Kind::Sub, std::move(l), std::move(r));
}
SizeExpr mul(SizeExpr l, SizeExpr r) {
  return bin(SizeExpr::Kind::Mul, std::move(l), std::move(r));
}

// One well-formed operand of each signature kind.
std::string sample_operand(isa::OperandKind k) {
  using K = isa::OperandKind;
  switch (k) {
    case K::Dst:
      return "v1";
    case K::VDst:
      return "v2";
    case K::SDst:
      return "s3";
    case K::PDst:
      return "p4";
    case K::Src:
      return "-7";
    case K::VSrc:
      return "v5";
    case K::Lane:
      return "s6";
    case K::Pred:
      return "!p7";
    case K::Mem:
      return "buf[v8+4]";
    case K::Label:
      return "target";
  }
  return "";
}

std::string sample_instruction(const isa::OpInfo& info, size_t count) {
  std::string s(info.mnemonic);
  auto kinds = info.sig.view();
  for (size_t i = 0; i < count; ++i) {
    std::string o = kinds.empty() ? "v1" : sample_operand(kinds[std::min(i, kinds.size() - 1)]);
    s += (i == 0 ? " " : ", ") + o;
  }
  return s;
}

// ---- statements --------------------------------------------------------------------

// syntax.instr: a mnemonic and its operands; the statement's span is its mnemonic.
TEST(Statements, InstructionOperands) {
  auto p = parse_ok("    add v1, s2, -5\n  sel v3, !p1, %lane, 0x10\n");
  ASSERT_EQ(p.stmts.size(), 2u);
  const auto& a = p.stmts[0];
  EXPECT_EQ(a.kind, StmtKind::Instr);
  EXPECT_EQ(a.op, isa::Op::Add);
  EXPECT_EQ(a.span, (syntax::Span{1, 5, 3}));
  ASSERT_EQ(a.operands.size(), 3u);
  EXPECT_EQ(a.operands[0].value, (syntax::Value{RegFile::V, 1, 0}));
  EXPECT_EQ(a.operands[1].value, (syntax::Value{RegFile::S, 2, 0}));
  EXPECT_EQ(a.operands[2].value, (syntax::Value{RegFile::Imm, 0, -5}));
  EXPECT_EQ(a.operands[1].span, (syntax::Span{1, 13, 2}));
  const auto& s = p.stmts[1];
  EXPECT_EQ(s.op, isa::Op::Sel);
  EXPECT_EQ(s.span.line, 2u);
  EXPECT_EQ(s.span.col, 3u);
  ASSERT_EQ(s.operands.size(), 4u);
  EXPECT_EQ(s.operands[1].type, OperandType::Pred);
  EXPECT_TRUE(s.operands[1].negate);
  EXPECT_EQ(s.operands[2].value.file, RegFile::Special);
  EXPECT_EQ(s.operands[2].value.index, static_cast<uint32_t>(isa::Special::Lane));
  EXPECT_EQ(s.operands[3].value.imm, 16);
}

// syntax.instr: every mnemonic of the table parses with operands of its signature's
// kinds, and is rejected with one operand too few or too many.
TEST(Statements, EveryMnemonicWithItsSignature) {
  for (const auto& info : isa::table()) {
    SCOPED_TRACE(std::string(info.mnemonic));
    const size_t n = info.sig.count;
    auto r = text::parse(sample_instruction(info, n));
    ASSERT_TRUE(r.ok()) << r.diags.format("t");
    ASSERT_EQ(r.program.stmts.size(), 1u);
    EXPECT_EQ(r.program.stmts[0].op, info.op);
    EXPECT_EQ(r.program.stmts[0].operands.size(), n);
    if (n > 0) {
      auto few = text::parse(sample_instruction(info, n - 1));
      EXPECT_FALSE(few.ok());
      ASSERT_EQ(few.diags.size(), 1u);
      EXPECT_NE(few.diags.list()[0].message.find("operand"), std::string::npos)
          << few.diags.list()[0].message;
    }
    auto many = text::parse(sample_instruction(info, n + 1));
    EXPECT_FALSE(many.ok());
    EXPECT_EQ(many.diags.size(), 1u);
  }
}

// syntax.instr / syntax.operand.kinds: wrong counts and kinds, a sample from each
// instruction family; each error at the offending token.
TEST(Statements, WrongOperandCountsAndKinds) {
  // Unary
  expect_syntax_error("mov v1", 1, 7, "expected ',' before operand 2 of 'mov', found end of line");
  expect_syntax_error("mov v1,", 1, 8, "'mov' takes 2 operand(s), found 1");
  expect_syntax_error("mov", 1, 4, "'mov' takes 2 operand(s), found 0");
  expect_syntax_error("mov v1, 2, 3", 1, 10, "too many operands for 'mov'");
  // Binary
  expect_syntax_error("add v1, v2", 1, 11, "expected ',' before operand 3");
  expect_syntax_error("add 5, v1, v2", 1, 5, "must be a v or s register");
  expect_syntax_error("add v1 v2, v3", 1, 8, "expected ',' before operand 2");
  expect_syntax_error("div.u v1, v2, buf[v1]", 1, 15, "must be a register");  // not a source
  // Compare
  expect_syntax_error("cmp.lt v1, v2, v3", 1, 8, "must be a p register");
  expect_syntax_error("cmp.eq.u p0, v1, v2", 1, 1, "unknown instruction 'cmp.eq.u'");
  // Select
  expect_syntax_error("sel v1, v2, v3, v4", 1, 9, "expected a predicate");
  expect_syntax_error("sel s1, p0, 1, 2", 1, 5, "must be a v register");
  // PredOp
  expect_syntax_error("pand p1, p2", 1, 12, "expected ',' before operand 3");
  expect_syntax_error("pmov p1, v2", 1, 10, "expected a predicate");
  // Load
  expect_syntax_error("ld v1, 5", 1, 8, "expected a memory operand");
  expect_syntax_error("ld.u8 p1, buf[0]", 1, 7, "must be a v or s register");
  // Store
  expect_syntax_error("st buf[v0]", 1, 11, "expected ',' before operand 2");
  expect_syntax_error("st.16 buf[v0], buf[v1]", 1, 16, "must be a register");
  // Ballot
  expect_syntax_error("ballot v1, p0", 1, 8, "must be an s register");
  // Vote
  expect_syntax_error("vote.any p0, v1", 1, 14, "expected a predicate");
  // ReadLane
  expect_syntax_error("readlane s1, s2, 3", 1, 14, "must be a v register");
  expect_syntax_error("readlane s1, v2, -1", 1, 18, "takes no '-'");
  expect_syntax_error("readlane s1, v2, v3", 1, 18, "a number or s register");
  expect_syntax_error("readlane s1, v2, %lane", 1, 18, "a number or s register");
  // Shuffle
  expect_syntax_error("shfl v1, 3, v2", 1, 10, "must be a v register");
  expect_syntax_error("shfl.xor v1, v2,", 1, 17, "takes 3 operand(s), found 2");
  // Control
  expect_syntax_error("exit 1", 1, 6, "unexpected '1' after the statement");
  expect_syntax_error("cbr p0", 1, 7, "expected ',' before operand 2");
  expect_syntax_error("cbr p0, 5", 1, 9, "must be a label");
  expect_syntax_error("jmp", 1, 4, "takes 1 operand(s), found 0");
  expect_syntax_error("push v1", 1, 6, "expected a predicate");
  expect_syntax_error("ret 0", 1, 5, "unexpected '0'");
  // Unknown mnemonics; mnemonics are lowercase (syntax.lex.ident).
  expect_syntax_error("frob v1", 1, 1, "unknown instruction 'frob'");
  expect_syntax_error("  ADD v1, v2, v3", 1, 3, "unknown instruction 'ADD'");
  expect_syntax_error("5 v1", 1, 1, "expected an instruction, directive or label");
}

// ---- labels (syntax.label, syntax.lex.label) ---------------------------------------

// syntax.label: several labels per statement, on one or several lines, and at the end.
TEST(Labels, SeveralOnOneLineAndAcrossLines) {
  auto p = parse_ok("a: b:\n  c: nop\nend:");
  ASSERT_EQ(p.stmts.size(), 5u);
  EXPECT_EQ(p.stmts[0].kind, StmtKind::Label);
  EXPECT_EQ(p.stmts[0].label, "a");
  EXPECT_EQ(p.stmts[1].label, "b");
  EXPECT_EQ(p.stmts[1].span, (syntax::Span{1, 4, 1}));
  EXPECT_EQ(p.stmts[2].label, "c");
  EXPECT_EQ(p.stmts[2].span, (syntax::Span{2, 3, 1}));
  EXPECT_EQ(p.stmts[3].kind, StmtKind::Instr);
  EXPECT_EQ(p.stmts[3].op, isa::Op::Nop);
  // A label for the end of the program.
  EXPECT_EQ(p.stmts[4].kind, StmtKind::Label);
  EXPECT_EQ(p.stmts[4].label, "end");
  // Labels may look like mnemonics or keywords.
  auto q = parse_ok("loop: add: _x9: nop\njmp loop\njmp add");
  ASSERT_EQ(q.stmts.size(), 6u);
  EXPECT_EQ(q.stmts[0].label, "loop");
  EXPECT_EQ(q.stmts[4].operands[0].name, "loop");
  EXPECT_EQ(q.stmts[4].operands[0].type, OperandType::Label);
}

// syntax.label: a label before a directive or a buffer declaration labels the next
// instruction, as if it stood on its own line.
TEST(Labels, BeforeDirectivesLabelTheNextInstruction) {
  auto p = parse_ok("l: .seed 3\nb: .buffer x u32[1] out\n  nop\n  jmp l\n");
  EXPECT_EQ(p.launch.seed.value, 3u);
  ASSERT_EQ(p.buffers.size(), 1u);
  ASSERT_EQ(p.stmts.size(), 4u);
  EXPECT_EQ(p.stmts[0].label, "l");
  EXPECT_EQ(p.stmts[1].label, "b");
  EXPECT_EQ(p.stmts[2].op, isa::Op::Nop);
  auto q = parse_ok("l:\n.seed 3\nb:\n.buffer x u32[1] out\n  nop\n  jmp l\n");
  EXPECT_TRUE(p == q) << "a label before a directive differs from one on its own line";
  auto run = test::run(
      "l: .buffer out u32[1] out\n  add s0, s0, 1\n  st out[0], s0\n"
      "  cmp.lt p0, s0, 3\n  cbr p0, l\n  exit\n");
  ASSERT_TRUE(run.ok()) << run.diags;
  EXPECT_EQ(test::words(*run.outcome, "out"), (std::vector<uint32_t>{3}));
}

// syntax.lex.label: a label is not a register name.
TEST(Labels, RegisterNamesAreNotLabels) {
  expect_syntax_error("v1: nop", 1, 1, "register name");
  expect_syntax_error("nop\n  s0:", 2, 3, "register name");
  expect_syntax_error("p15: nop", 1, 1, "register name");
  expect_syntax_error("pt: nop", 1, 1, "register name");
  expect_syntax_error("ok: v255: nop", 1, 5, "register name");
  expect_syntax_error("jmp v1", 1, 5, "register name");
  expect_syntax_error("cbr p0, pt", 1, 9, "register name");
  expect_syntax_error("call s3", 1, 6, "register name");
}

// syntax.lex.label: letters, digits and `_` only; syntax.operand.kinds: `label`.
TEST(Labels, MalformedLabels) {
  expect_syntax_error(".x: nop", 1, 1, "invalid label name");
  expect_syntax_error("a.b: nop", 1, 1, "invalid label name");
  expect_syntax_error("jmp .x", 1, 5, "invalid label name");
  expect_syntax_error("jmp 5", 1, 5, "must be a label");
  expect_syntax_error("jmp %lane", 1, 5, "must be a label");
  expect_syntax_error("a:: nop", 1, 3, "expected an instruction, directive or label, found ':'");
  expect_syntax_error("1a: nop", 1, 1, "expected an instruction");
  expect_syntax_error("a: b", 1, 4, "unknown instruction 'b'");
}

// ---- memory operands (syntax.operand.kinds, M) -------------------------------------

// syntax.operand.kinds (M): space[base], space[base+imm], space[base-imm], space[imm],
// space[-imm].
TEST(MemoryOperands, Forms) {
  auto p = parse_ok(
      "ld v1, buf[v2]\n"
      "ld v1, buf[v2+4]\n"
      "ld v1, buf[s2-8]\n"
      "ld v1, buf[16]\n"
      "ld v1, slm[%lane]\n"
      "st buf[ %warp + 0x10 ], v1\n"
      "ld v1, buf[v2-4294967295]\n"
      "ld v1, buf[4294967295]\n"
      "ld v1, buf[-4]\n"
      "ld v1, buf[-2147483648]\n");
  ASSERT_EQ(p.stmts.size(), 10u);
  auto mem = [&](size_t i) { return p.stmts[i].operands[p.stmts[i].op == isa::Op::St ? 0 : 1]; };
  EXPECT_EQ(mem(0).type, OperandType::Mem);
  EXPECT_EQ(mem(0).name, "buf");
  EXPECT_EQ(mem(0).value, (syntax::Value{RegFile::V, 2, 0}));
  EXPECT_EQ(mem(0).offset, 0);
  EXPECT_EQ(mem(0).span, (syntax::Span{1, 8, 7}));
  EXPECT_EQ(mem(1).offset, 4);
  EXPECT_EQ(mem(2).value, (syntax::Value{RegFile::S, 2, 0}));
  EXPECT_EQ(mem(2).offset, -8);
  EXPECT_EQ(mem(3).value.file, RegFile::None);
  EXPECT_EQ(mem(3).offset, 16);
  EXPECT_EQ(mem(4).name, "slm");
  EXPECT_EQ(mem(4).value.file, RegFile::Special);
  EXPECT_EQ(mem(4).value.index, static_cast<uint32_t>(isa::Special::Lane));
  EXPECT_EQ(mem(5).value.index, static_cast<uint32_t>(isa::Special::Warp));
  EXPECT_EQ(mem(5).offset, 16);
  EXPECT_EQ(mem(6).offset, -4294967295);
  EXPECT_EQ(mem(7).offset, 4294967295);
  EXPECT_EQ(mem(8).value.file, RegFile::None);
  EXPECT_EQ(mem(8).offset, -4);
  EXPECT_EQ(mem(9).offset, -2147483648);
}

// syntax.operand.kinds (M), syntax.errors: malformed memory operands.
TEST(MemoryOperands, Errors) {
  expect_syntax_error("ld v1, buf[", 1, 12, "expected an address");
  expect_syntax_error("ld v1, buf[v2+]", 1, 15, "expected a number offset");
  expect_syntax_error("ld v1, buf[-2147483649]", 1, 12, "out of range");
  expect_syntax_error("ld v1, buf[-v2]", 1, 13, "expected a number");
  expect_syntax_error("ld v1, buf[-4+v2]", 1, 14, "expected ']'");
  expect_syntax_error("ld v1, buf[v2", 1, 14, "expected ']'");
  expect_syntax_error("ld v1, buf v2]", 1, 12, "expected '[' after 'buf'");
  expect_syntax_error("ld v1, buf[v2 4]", 1, 15, "expected ']'");
  expect_syntax_error("ld v1, buf[16+4]", 1, 14, "expected ']'");
  expect_syntax_error("ld v1, buf[pt]", 1, 12, "expected an address");
  expect_syntax_error("ld v1, buf[p1]", 1, 12, "expected an address");
  expect_syntax_error("ld v1, [v2]", 1, 8, "expected a memory operand");
  expect_syntax_error("ld v1, buf[v2+4294967296]", 1, 15, "out of range");
  expect_syntax_error("ld v1, buf[4294967296]", 1, 12, "out of range");
  expect_syntax_error("ld v1, buf[v2+v3]", 1, 15, "expected a number offset");
  expect_syntax_error("ld v1, buf[v2+-4]", 1, 15, "expected a number offset");
  expect_syntax_error("ld v1, buf[v007]", 1, 12, "malformed register");
  expect_syntax_error("st buf[v1]], v2", 1, 11, "expected ','");
}

// ---- structured control flow (syntax.struct) ---------------------------------------

// syntax.struct: if P, else, endif, loop, break [P], continue [P], endloop.
TEST(Structured, Keywords) {
  auto p = parse_ok(
      "if p0\nelse\nendif\nloop\nbreak\nbreak p1\ncontinue\ncontinue !p2\nendloop\nif !pt\n");
  std::vector<StmtKind> want = {
      StmtKind::If,    StmtKind::Else,     StmtKind::EndIf,    StmtKind::Loop,    StmtKind::Break,
      StmtKind::Break, StmtKind::Continue, StmtKind::Continue, StmtKind::EndLoop, StmtKind::If};
  ASSERT_EQ(p.stmts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(p.stmts[i].kind, want[i]) << i;
    EXPECT_EQ(p.stmts[i].span.line, i + 1);
  }
  ASSERT_EQ(p.stmts[0].operands.size(), 1u);
  EXPECT_EQ(p.stmts[0].operands[0].value, (syntax::Value{RegFile::P, 0, 0}));
  EXPECT_TRUE(p.stmts[1].operands.empty());
  EXPECT_TRUE(p.stmts[4].operands.empty());  // `break` means `break pt`
  ASSERT_EQ(p.stmts[5].operands.size(), 1u);
  EXPECT_EQ(p.stmts[5].operands[0].value.index, 1u);
  EXPECT_TRUE(p.stmts[6].operands.empty());
  EXPECT_TRUE(p.stmts[7].operands[0].negate);
  EXPECT_EQ(p.stmts[9].operands[0].value.file, RegFile::PTrue);
  EXPECT_TRUE(p.stmts[9].operands[0].negate);
}

// syntax.struct, syntax.errors: wrong operands of structured statements.
TEST(Structured, Errors) {
  expect_syntax_error("if", 1, 3, "expected a predicate");
  expect_syntax_error("if v1", 1, 4, "expected a predicate");
  expect_syntax_error("if p0, p1", 1, 6, "unexpected ','");
  expect_syntax_error("else p0", 1, 6, "unexpected 'p0'");
  expect_syntax_error("endif 1", 1, 7, "unexpected '1'");
  expect_syntax_error("loop 3", 1, 6, "unexpected '3'");
  expect_syntax_error("break 5", 1, 7, "expected a predicate");
  expect_syntax_error("continue s1", 1, 10, "expected a predicate");
  expect_syntax_error("endloop x", 1, 9, "unexpected 'x'");
  // Keywords are lowercase.
  expect_syntax_error("IF p0", 1, 1, "unknown instruction 'IF'");
}

// ---- directives (syntax.directive) -------------------------------------------------

struct U32Directive {
  const char* name;
  syntax::Directive<uint32_t> syntax::LaunchDirectives::*field;
};
const U32Directive kU32Directives[] = {
    {".wave", &syntax::LaunchDirectives::wave},
    {".simd", &syntax::LaunchDirectives::simd},
    {".warps", &syntax::LaunchDirectives::warps},
    {".workgroups", &syntax::LaunchDirectives::workgroups},
    {".cores", &syntax::LaunchDirectives::cores},
    {".slm", &syntax::LaunchDirectives::slm},
    {".vregs", &syntax::LaunchDirectives::vregs},
    {".sregs", &syntax::LaunchDirectives::sregs},
    {".mask_depth", &syntax::LaunchDirectives::mask_depth},
    {".call_depth", &syntax::LaunchDirectives::call_depth},
    {".stack", &syntax::LaunchDirectives::stack},
};

// syntax.directive: one unsigned number, up to 2^32 - 1.
TEST(Directives, EveryU32DirectiveUpTo2Pow32Minus1) {
  for (const auto& d : kU32Directives) {
    SCOPED_TRACE(d.name);
    std::string name = d.name;
    auto p = parse_ok("nop\n  " + name + " 0x10 ; comment\n");
    const auto& dir = p.launch.*(d.field);
    ASSERT_TRUE(dir.value.has_value());
    EXPECT_EQ(*dir.value, 16u);
    EXPECT_EQ(dir.span, (syntax::Span{2, 3, static_cast<uint32_t>(name.size())}));
    EXPECT_EQ(*(parse_ok(name + " 4294967295").launch.*(d.field)).value, 4294967295u);
    EXPECT_EQ(*(parse_ok(name + " 0").launch.*(d.field)).value, 0u);
    expect_syntax_error(name + " 4294967296", 1, static_cast<uint32_t>(name.size() + 2),
                        "out of range");
    expect_syntax_error(name, 1, static_cast<uint32_t>(name.size() + 1), "expected a number");
    expect_syntax_error(name + " -1", 1, static_cast<uint32_t>(name.size() + 2),
                        "expected a number");
    expect_syntax_error(name + " 8 9", 1, static_cast<uint32_t>(name.size() + 4), "unexpected '9'");
    expect_syntax_error(name + " wave", 1, static_cast<uint32_t>(name.size() + 2),
                        "expected a number");
  }
}

// syntax.directive: .seed and .max_steps up to 2^64 - 1.
TEST(Directives, SeedAndMaxStepsUpTo2Pow64Minus1) {
  auto p = parse_ok(".seed 18446744073709551615\n.max_steps 0xffffffffffffffff");
  EXPECT_EQ(*p.launch.seed.value, 18446744073709551615ull);
  EXPECT_EQ(*p.launch.max_steps.value, 18446744073709551615ull);
  EXPECT_EQ(p.launch.max_steps.span, (syntax::Span{2, 1, 10}));
  expect_syntax_error(".seed 18446744073709551616", 1, 7, "out of range");
  expect_syntax_error(".max_steps 0x10000000000000000", 1, 12, "out of range");
  expect_syntax_error(".seed -1", 1, 7, "expected a number");
}

// syntax.directive: .policy takes a policy name (checked with the configuration).
TEST(Directives, Policy) {
  for (const char* name : {"round_robin", "lowest_pc_first", "oldest_first", "random"}) {
    auto p = parse_ok(std::string(".policy ") + name);
    ASSERT_TRUE(p.launch.policy.value.has_value());
    EXPECT_EQ(*p.launch.policy.value, name);
  }
  expect_syntax_error(".policy", 1, 8, "expected a scheduling policy name");
  expect_syntax_error(".policy 3", 1, 9, "expected a scheduling policy name");
  expect_syntax_error(".policy random x", 1, 16, "unexpected 'x'");
}

// syntax.directive: each directive at most once; the error names the first line.
TEST(Directives, DuplicatesAreErrors) {
  std::vector<std::string> lines;
  for (const auto& d : kU32Directives) lines.push_back(std::string(d.name) + " 1");
  lines.push_back(".policy random");
  lines.push_back(".seed 1");
  lines.push_back(".max_steps 1");
  const size_t n = lines.size();
  std::string src;
  for (const auto& l : lines) src += l + "\n";
  src += "nop\n";
  for (const auto& l : lines) src += "  " + l + "\n";
  auto ds = test::parse_errors(src);
  ASSERT_EQ(ds.size(), n) << show(ds);
  for (size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(ds[i].span.line, n + 2 + i);
    EXPECT_EQ(ds[i].span.col, 3u);
    std::string name = lines[i].substr(0, lines[i].find(' '));
    EXPECT_NE(ds[i].message.find("duplicate directive " + name), std::string::npos)
        << ds[i].message;
    EXPECT_NE(ds[i].message.find("first on line " + std::to_string(i + 1)), std::string::npos)
        << ds[i].message;
  }
  // The first value stays.
  auto r = text::parse(".wave 8\n.wave 16\n");
  EXPECT_EQ(*r.program.launch.wave.value, 8u);
}

// syntax.directive: only the listed directives exist (case-sensitive).
TEST(Directives, UnknownDirectives) {
  expect_syntax_error(".frob 1", 1, 1, "unknown directive '.frob'");
  expect_syntax_error("  .WAVE 8", 1, 3, "unknown directive '.WAVE'");
  expect_syntax_error(".", 1, 1, "unknown directive");
  expect_syntax_error(".wave.x 8", 1, 1, "unknown directive");
}

// syntax.directive: directives may appear anywhere in the file.
TEST(Directives, AnywhereInTheFile) {
  auto p = parse_ok("nop\n.wave 8\nexit\n.buffer b u32[4] out\n.warps 2\n");
  EXPECT_EQ(*p.launch.wave.value, 8u);
  EXPECT_EQ(*p.launch.warps.value, 2u);
  EXPECT_EQ(p.buffers.size(), 1u);
  EXPECT_EQ(p.stmts.size(), 2u);
}

// ---- buffers (syntax.buffer, syntax.buffer.size, syntax.buffer.init) ---------------

// syntax.buffer: TYPE u8/u16/u32/i32 and MODE in/out/inout.
TEST(Buffers, TypesAndModes) {
  auto p = parse_ok(
      ".buffer a u8[4] in\n"
      ".buffer b u16[4] out\n"
      ".buffer c u32[4] inout\n"
      ".buffer d i32[4] out\n");
  ASSERT_EQ(p.buffers.size(), 4u);
  EXPECT_EQ(p.buffers[0].name, "a");
  EXPECT_EQ(p.buffers[0].type, ElemType::U8);
  EXPECT_EQ(p.buffers[0].mode, BufferMode::In);
  EXPECT_EQ(p.buffers[0].count, num(4));
  EXPECT_EQ(p.buffers[0].init.kind, BufferInit::Kind::Zero);
  EXPECT_EQ(p.buffers[1].type, ElemType::U16);
  EXPECT_EQ(p.buffers[1].mode, BufferMode::Out);
  EXPECT_EQ(p.buffers[2].type, ElemType::U32);
  EXPECT_EQ(p.buffers[2].mode, BufferMode::InOut);
  EXPECT_EQ(p.buffers[3].type, ElemType::I32);
  EXPECT_EQ(p.buffers[3].span, (syntax::Span{4, 9, 1}));  // at the name
  EXPECT_EQ(syntax::elem_size(ElemType::U8), 1u);
  EXPECT_EQ(syntax::elem_size(ElemType::U16), 2u);
  EXPECT_EQ(syntax::elem_size(ElemType::U32), 4u);
  EXPECT_EQ(syntax::elem_size(ElemType::I32), 4u);
}

// syntax.buffer.init: value lists, fill(v), iota and iota(a, b).
TEST(Buffers, Initialisers) {
  auto p = parse_ok(
      ".buffer a u32[4] in = 1, -2, 0x30\n"
      ".buffer b u32[4] in = 7\n"
      ".buffer c u8[4] in = fill(255)\n"
      ".buffer d i32[4] in = fill(-1)\n"
      ".buffer e u32[4] in = iota\n"
      ".buffer f u16[4] in = iota(5, -2)\n"
      ".buffer g u32[4] in = 4294967295, -2147483648\n");
  ASSERT_EQ(p.buffers.size(), 7u);
  EXPECT_EQ(p.buffers[0].init.kind, BufferInit::Kind::List);
  EXPECT_EQ(p.buffers[0].init.values, (std::vector<int64_t>{1, -2, 48}));
  EXPECT_EQ(p.buffers[1].init.values, (std::vector<int64_t>{7}));
  EXPECT_EQ(p.buffers[2].init.kind, BufferInit::Kind::Fill);
  EXPECT_EQ(p.buffers[2].init.values, (std::vector<int64_t>{255}));
  EXPECT_EQ(p.buffers[3].init.values, (std::vector<int64_t>{-1}));
  EXPECT_EQ(p.buffers[4].init.kind, BufferInit::Kind::Iota);
  EXPECT_EQ(p.buffers[4].init.values, (std::vector<int64_t>{0, 1}));  // iota = iota(0, 1)
  EXPECT_EQ(p.buffers[5].init.kind, BufferInit::Kind::Iota);
  EXPECT_EQ(p.buffers[5].init.values, (std::vector<int64_t>{5, -2}));
  EXPECT_EQ(p.buffers[6].init.values, (std::vector<int64_t>{4294967295, -2147483648}));
}

// syntax.buffer.size: + - * and parentheses, usual precedence, left associative.
TEST(Buffers, SizeExpressionPrecedence) {
  struct Case {
    const char* text;
    SizeExpr want;
  };
  const Case cases[] = {
      {"4", num(4)},
      {"0x10", num(16)},
      {"wave", sym("wave")},
      {"simd", sym("simd")},
      {"warps", sym("warps")},
      {"workgroups", sym("workgroups")},
      {"threads", sym("threads")},
      {"((8))", num(8)},
      {"wave*2+1", add(mul(sym("wave"), num(2)), num(1))},
      {"2 + wave * 3", add(num(2), mul(sym("wave"), num(3)))},
      {"(2 + wave) * 3", mul(add(num(2), sym("wave")), num(3))},
      {"10 - 3 - 2", sub(sub(num(10), num(3)), num(2))},
      {"10 - (3 - 2)", sub(num(10), sub(num(3), num(2)))},
      {"2 * 3 * 4", mul(mul(num(2), num(3)), num(4))},
      {"2 * (3 * 4)", mul(num(2), mul(num(3), num(4)))},
      {"1 + 2 - 3 + 4", add(sub(add(num(1), num(2)), num(3)), num(4))},
      {"threads * 4 - simd * (warps + 1)",
       sub(mul(sym("threads"), num(4)), mul(sym("simd"), add(sym("warps"), num(1))))},
      {"4294967295", num(4294967295)},
      // Unary minus binds tightest (syntax.buffer.size).
      {"-1 + wave", add(neg(num(1)), sym("wave"))},
      {"-(2 - wave)", neg(sub(num(2), sym("wave")))},
      {"2 * -3", mul(num(2), neg(num(3)))},
      {"- -1", neg(neg(num(1)))},
      {"-wave * 2", mul(neg(sym("wave")), num(2))},
      {"wave - -1", sub(sym("wave"), neg(num(1)))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto p = parse_ok(std::string(".buffer b u32[") + c.text + "] out");
    ASSERT_EQ(p.buffers.size(), 1u);
    EXPECT_EQ(p.buffers[0].count, c.want);
  }
}

// syntax.buffer: names have the form of labels, and may be register names or
// mnemonics; in memory operands they stand before `[`.
TEST(Buffers, NamesMayBeRegisterNamesAndMnemonics) {
  auto p = parse_ok(
      ".buffer v0 u32[1] in\n.buffer s8 u32[1] out\n.buffer pt u32[1] out\n"
      ".buffer add u32[1] out\n.buffer _x9 u32[1] out\n"
      "  ld s1, v0[0]\n  st s8[0], s1\n  st pt[v1+4], s1\n  st add[s2], s1\n");
  ASSERT_EQ(p.buffers.size(), 5u);
  EXPECT_EQ(p.buffers[0].name, "v0");
  EXPECT_EQ(p.buffers[2].name, "pt");
  EXPECT_EQ(p.stmts[0].operands[1].name, "v0");
  EXPECT_EQ(p.stmts[2].operands[0].name, "pt");
  EXPECT_EQ(p.stmts[2].operands[0].value.file, RegFile::V);
  expect_syntax_error(".buffer 1x u32[1] in", 1, 9, "expected a buffer name");
  expect_syntax_error(".buffer %lane u32[1] in", 1, 9, "expected a buffer name");
}

// syntax.lex.number: lowercase prefixes only; syntax.operand.kinds (L): lane
// operands take no `-`; syntax.buffer.init: iota's arguments are immediates.
TEST(Numbers, PrefixCaseLaneSignAndIotaRange) {
  expect_syntax_error("mov v1, 0X10", 1, 9, "malformed");
  expect_syntax_error("mov v1, 0B10", 1, 9, "malformed");
  expect_syntax_error(".buffer a u32[0X4] in", 1, 15, "malformed");
  parse_ok("mov v1, 0xAbC\nmov v2, 007\n");
  expect_syntax_error("readlane s0, v2, -1", 1, 18, "takes no '-'");
  expect_syntax_error("readlane s0, v2, -0", 1, 18, "takes no '-'");
  parse_ok("readlane s0, v2, 4294967295\nreadlane s0, v2, 0b11\n");
  expect_syntax_error(".buffer a u32[2] in = iota(4294967296, 1)", 1, 28, "out of range");
  expect_syntax_error(".buffer a u32[2] in = iota(0, -2147483649)", 1, 31, "out of range");
  parse_ok(".buffer a u8[2] in = iota(-2147483648, 4294967295)\n");
}

// syntax.buffer, syntax.buffer.size, syntax.buffer.init: malformed declarations.
TEST(Buffers, Errors) {
  expect_syntax_error(".buffer a u64[4] in", 1, 11, "expected an element type");
  expect_syntax_error(".buffer a U32[4] in", 1, 11, "expected an element type");
  expect_syntax_error(".buffer a u32 in", 1, 15, "expected '['");
  expect_syntax_error(".buffer a u32[4] io", 1, 18, "expected a buffer mode");
  expect_syntax_error(".buffer a u32[4]", 1, 17, "expected a buffer mode");
  expect_syntax_error(".buffer a u32[foo] in", 1, 15, "expected a count");
  expect_syntax_error(".buffer a u32[] in", 1, 15, "expected a count");
  expect_syntax_error(".buffer a u32[4 in", 1, 17, "expected ']'");
  expect_syntax_error(".buffer a u32[-] in", 1, 16, "expected a count");
  expect_syntax_error(".buffer a u32[4 * -] in", 1, 20, "expected a count");
  expect_syntax_error(".buffer a u32[(4] in", 1, 17, "expected ')'");
  expect_syntax_error(".buffer a u32[4+] in", 1, 17, "expected a count");
  expect_syntax_error(".buffer a u32[4 / 2] in", 1, 17, "expected ']'");
  expect_syntax_error(".buffer a u32[4294967296] in", 1, 15, "out of range");
  expect_syntax_error(".buffer a u32[v1] in", 1, 15, "expected a count");
  expect_syntax_error(".buffer 5 u32[4] in", 1, 9, "expected a buffer name");
  expect_syntax_error(".buffer", 1, 8, "expected a buffer name");
  expect_syntax_error(".buffer a.b u32[4] in", 1, 9, "expected a buffer name");
  expect_syntax_error(".buffer a u32[4] in =", 1, 22, "expected a number");
  expect_syntax_error(".buffer a u32[4] in = fill 3", 1, 28, "expected '(' after 'fill'");
  expect_syntax_error(".buffer a u32[4] in = fill()", 1, 28, "expected a number");
  expect_syntax_error(".buffer a u32[4] in = fill(1, 2)", 1, 29, "expected ')'");
  expect_syntax_error(".buffer a u32[4] in = iota(1)", 1, 29, "expected ','");
  expect_syntax_error(".buffer a u32[4] in = iota(1, 2", 1, 32, "expected ')'");
  expect_syntax_error(".buffer a u32[4] in = 1, 2,", 1, 28, "expected a number");
  expect_syntax_error(".buffer a u32[4] in = 4294967296", 1, 23, "out of range");
  expect_syntax_error(".buffer a u32[4] in = -2147483649", 1, 23, "out of range");
  expect_syntax_error(".buffer a u32[4] in = 1 2", 1, 25, "unexpected '2'");
  expect_syntax_error(".buffer a u32[4] in = zero", 1, 23, "expected a number");
}

// syntax.buffer.size, syntax.errors: nesting depth is bounded.
TEST(Buffers, DeeplyNestedSizeIsAnErrorNotACrash) {
  std::string deep = ".buffer a u32[" + std::string(10, '(') + "1" + std::string(10, ')') + "] in";
  EXPECT_EQ(parse_ok(deep).buffers.at(0).count, num(1));
  std::string too_deep =
      ".buffer a u32[" + std::string(100000, '(') + "1" + std::string(100000, ')') + "] in";
  auto r = text::parse(too_deep);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags.list()[0].span.line, 1u);
  EXPECT_NE(r.diags.list()[0].message.find("nested too deeply"), std::string::npos);
}

// ---- several errors (syntax.errors) ------------------------------------------------

// Parsing continues on the next line: every bad line is reported, in order.
TEST(Errors, EveryBadLineIsReported) {
  auto ds = test::parse_errors(
      "frob\n"             // 1
      "nop\n"              // 2
      "  mov v1\n"         // 3
      "@\n"                // 4
      ".wave 8\n"          // 5
      ".wave 9\n"          // 6
      "ld v1, buf[v2+]\n"  // 7
      "exit\n");
  ASSERT_EQ(ds.size(), 5u) << show(ds);
  const std::pair<uint32_t, uint32_t> where[] = {{1, 1}, {3, 9}, {4, 1}, {6, 1}, {7, 15}};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(ds[i].span.line, where[i].first) << show(ds);
    EXPECT_EQ(ds[i].span.col, where[i].second) << show(ds);
  }
  // Only the first error of a line is reported.
  EXPECT_EQ(test::parse_errors("frob @ %x 0x").size(), 1u);
  // The good lines are still parsed.
  auto r = text::parse("frob\nnop\n@\nexit\n");
  ASSERT_EQ(r.program.stmts.size(), 2u);
  EXPECT_EQ(r.program.stmts[1].op, isa::Op::Exit);
}

// syntax.errors: at most 100 are reported.
TEST(Errors, AtMost100Reported) {
  std::string src;
  for (int i = 0; i < 250; ++i) src += "frob\n";
  auto r = text::parse(src);
  EXPECT_EQ(r.diags.size(), syntax::Diagnostics::kMaxReported);
  EXPECT_EQ(syntax::Diagnostics::kMaxReported, 100u);
  EXPECT_FALSE(r.ok());
}

// syntax.errors: `file:line:col: error: message`, sorted by position.
TEST(Errors, Format) {
  auto r = test::load("nop\n  frob\nmov v1\n");
  ASSERT_FALSE(r.loaded.has_value());
  const std::string text = r.diags.format("prog.simt");
  const size_t first = text.find("prog.simt:2:3: error: unknown instruction 'frob'\n");
  const size_t second = text.find("prog.simt:3:7: error: ");
  EXPECT_EQ(first, 0u) << text;
  EXPECT_NE(second, std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

// Errors carry the right kind at each stage of the pipeline (exec.pipeline).
TEST(Errors, KindsByStage) {
  auto syntax_err = test::load("frob\n");
  ASSERT_EQ(syntax_err.diags.size(), 1u);
  EXPECT_EQ(syntax_err.diags.list()[0].kind, syntax::DiagKind::Syntax);
  auto config_err = test::load(".wave 3\nexit\n");
  ASSERT_EQ(config_err.diags.size(), 1u);
  EXPECT_EQ(config_err.diags.list()[0].kind, syntax::DiagKind::Config);
  EXPECT_NE(config_err.diags.format("f").find("f:1:1: bad launch configuration: "),
            std::string::npos);
  auto invalid = test::load("jmp nowhere\n");
  ASSERT_EQ(invalid.diags.size(), 1u);
  EXPECT_EQ(invalid.diags.list()[0].kind, syntax::DiagKind::Invalid);
  EXPECT_NE(invalid.diags.format("f").find("f:1:5: invalid program: "), std::string::npos);
}

}  // namespace
}  // namespace simt
