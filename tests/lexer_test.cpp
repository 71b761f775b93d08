// Lexical structure (spec/syntax.md, syntax.lex.*): the token kinds the lexer
// produces, and how lexical problems (numbers, registers, special registers, stray
// bytes, line endings) surface as located parse errors (syntax.errors).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "isa/isa.h"
#include "support.h"
#include "text/lexer.h"
#include "text/parser.h"

namespace simt {
namespace {

using syntax::RegFile;
using text::Tok;

std::vector<Tok> kinds(std::string_view src) {
  std::vector<Tok> out;
  for (const auto& t : text::lex(src)) out.push_back(t.kind);
  return out;
}

std::vector<std::string> texts(std::string_view src) {
  std::vector<std::string> out;
  for (const auto& t : text::lex(src))
    if (t.kind != Tok::Newline && t.kind != Tok::Eof) out.emplace_back(t.text);
  return out;
}

using test::expect_syntax_error;
using test::show;

// The second operand of a one-statement program `mov v1, X`.
syntax::Value mov_source(std::string_view operand) {
  std::string src = "mov v1, " + std::string(operand);
  auto r = text::parse(src);
  EXPECT_TRUE(r.ok()) << src << "\n" << r.diags.format("t");
  if (!r.ok() || r.program.stmts.size() != 1 || r.program.stmts[0].operands.size() != 2) return {};
  return r.program.stmts[0].operands[1].value;
}

// ---- token kinds ---------------------------------------------------------------

// syntax.lex.lines, syntax.lex.ident: every punctuation token and the line end.
TEST(Lexer, EveryPunctuationKind) {
  EXPECT_EQ(kinds(", : [ ] ( ) + - * ! ="),
            (std::vector<Tok>{Tok::Comma, Tok::Colon, Tok::LBrack, Tok::RBrack, Tok::LParen,
                              Tok::RParen, Tok::Plus, Tok::Minus, Tok::Star, Tok::Bang, Tok::Equals,
                              Tok::Newline, Tok::Eof}));
  // No spaces are needed between tokens.
  EXPECT_EQ(kinds("buf[v1+4]"),
            (std::vector<Tok>{Tok::Ident, Tok::LBrack, Tok::Ident, Tok::Plus, Tok::Number,
                              Tok::RBrack, Tok::Newline, Tok::Eof}));
}

// syntax.lex.ident: a letter, `_` or `.` followed by letters, digits, `_` and `.`.
TEST(Lexer, Identifiers) {
  EXPECT_EQ(
      kinds("cmp.lt.u .wave _x a1_b.c"),
      (std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Newline, Tok::Eof}));
  EXPECT_EQ(texts("cmp.lt.u .wave _x a1_b.c"),
            (std::vector<std::string>{"cmp.lt.u", ".wave", "_x", "a1_b.c"}));
}

// syntax.lex.number: a number token is a digit followed by letters and digits; its
// shape is checked by the parser.
TEST(Lexer, NumberTokens) {
  EXPECT_EQ(kinds("42 0x2a 0b101 12ab 0x"),
            (std::vector<Tok>{Tok::Number, Tok::Number, Tok::Number, Tok::Number, Tok::Number,
                              Tok::Newline, Tok::Eof}));
  EXPECT_EQ(texts("42 0x2a 0b101 12ab 0x"),
            (std::vector<std::string>{"42", "0x2a", "0b101", "12ab", "0x"}));
}

// syntax.operand.special: `%name` is one token.
TEST(Lexer, SpecialTokens) {
  EXPECT_EQ(kinds("%lane %exec_hi %foo %"),
            (std::vector<Tok>{Tok::Special, Tok::Special, Tok::Special, Tok::Special, Tok::Newline,
                              Tok::Eof}));
  EXPECT_EQ(texts("%lane %exec_hi %foo %"),
            (std::vector<std::string>{"%lane", "%exec_hi", "%foo", "%"}));
}

// syntax.lex.comment: `;` to the end of the line is dropped, whatever it holds.
TEST(Lexer, CommentsAreDropped) {
  EXPECT_EQ(kinds("add v1 ; , [ ] % @ \xc3\xa9"),
            (std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::Newline, Tok::Eof}));
  EXPECT_EQ(kinds(";only a comment\nnop"),
            (std::vector<Tok>{Tok::Newline, Tok::Ident, Tok::Newline, Tok::Eof}));
}

// syntax.lex.lines: LF and CR LF each end one line; the last line needs no newline.
TEST(Lexer, LineEndings) {
  EXPECT_EQ(kinds(""), (std::vector<Tok>{Tok::Newline, Tok::Eof}));
  EXPECT_EQ(kinds("a\nb\r\nc"),
            (std::vector<Tok>{Tok::Ident, Tok::Newline, Tok::Ident, Tok::Newline, Tok::Ident,
                              Tok::Newline, Tok::Eof}));
  auto toks = text::lex("a\nb\r\n  c\r\n");
  ASSERT_GE(toks.size(), 5u);
  EXPECT_EQ(toks[2].span, (syntax::Span{2, 1, 1}));
  EXPECT_EQ(toks[4].text, "c");
  EXPECT_EQ(toks[4].span, (syntax::Span{3, 3, 1}));
  // CR LF is a single line end.
  const auto ks = kinds("a\r\n\r\nb");
  EXPECT_EQ(std::count(ks.begin(), ks.end(), Tok::Newline), 3);
}

// syntax.errors: columns count bytes from 1; a tab is one byte.
TEST(Lexer, SpansCountBytes) {
  auto toks = text::lex("  add\tv1,2 ; x\n%lane");
  ASSERT_EQ(toks.size(), 8u);
  EXPECT_EQ(toks[0].span, (syntax::Span{1, 3, 3}));   // add
  EXPECT_EQ(toks[1].span, (syntax::Span{1, 7, 2}));   // v1
  EXPECT_EQ(toks[2].span, (syntax::Span{1, 9, 1}));   // ,
  EXPECT_EQ(toks[3].span, (syntax::Span{1, 10, 1}));  // 2
  EXPECT_EQ(toks[4].kind, Tok::Newline);
  EXPECT_EQ(toks[5].span, (syntax::Span{2, 1, 5}));  // %lane
  EXPECT_EQ(toks[6].kind, Tok::Newline);
  EXPECT_EQ(toks[7].kind, Tok::Eof);
}

// syntax.lex.other: every other byte is an Error token at its position.
TEST(Lexer, OtherBytesAreErrorTokens) {
  for (std::string_view bad :
       {std::string_view("\0", 1), std::string_view("@"), std::string_view("#"),
        std::string_view("$"), std::string_view("\""), std::string_view("{"), std::string_view("/"),
        std::string_view("\x7f"), std::string_view("\x80"), std::string_view("\xff")}) {
    SCOPED_TRACE(testing::PrintToString(std::string(bad)));
    std::string src = "a " + std::string(bad) + " b";
    auto toks = text::lex(src);
    ASSERT_EQ(toks.size(), 5u);
    EXPECT_EQ(toks[1].kind, Tok::Error);
    EXPECT_EQ(toks[1].span, (syntax::Span{1, 3, 1}));
    EXPECT_EQ(toks[2].kind, Tok::Ident);
  }
  // A two-byte UTF-8 character is two error bytes.
  auto toks = text::lex("\xc3\xa9");
  ASSERT_EQ(toks.size(), 4u);
  EXPECT_EQ(toks[0].kind, Tok::Error);
  EXPECT_EQ(toks[1].kind, Tok::Error);
  EXPECT_EQ(toks[1].span.col, 2u);
}

// syntax.errors: how tokens are named in messages.
TEST(Lexer, DescribeTokens) {
  auto toks = text::lex("add @\n");
  EXPECT_EQ(text::describe(toks[0]), "'add'");
  EXPECT_EQ(text::describe(toks[1]), "character '@'");
  EXPECT_EQ(text::describe(toks[2]), "end of line");
  EXPECT_EQ(text::describe(toks.back()), "end of file");
  auto nul = text::lex(std::string_view("\0", 1));
  EXPECT_EQ(text::describe(nul[0]), "byte 0x00");
}

// ---- numbers (syntax.lex.number, syntax.operand.imm) ------------------------------

// syntax.lex.number: decimal, hexadecimal and binary; `-` negates.
TEST(Numbers, DecimalHexBinary) {
  for (std::string_view n : {"42", "0x2a", "0x2A", "0b101010"}) {
    SCOPED_TRACE(n);
    auto v = mov_source(n);
    EXPECT_EQ(v.file, RegFile::Imm);
    EXPECT_EQ(v.imm, 42);
  }
  EXPECT_EQ(mov_source("0").imm, 0);
  EXPECT_EQ(mov_source("0x0").imm, 0);
  EXPECT_EQ(mov_source("0b0").imm, 0);
  EXPECT_EQ(mov_source("-5").imm, -5);
  EXPECT_EQ(mov_source("-0x10").imm, -16);
  EXPECT_EQ(mov_source("-0b11").imm, -3);
}

// syntax.operand.imm: from -2^31 to 2^32 - 1.
TEST(Numbers, ImmediateRangeLimits) {
  EXPECT_EQ(mov_source("4294967295").imm, 4294967295);
  EXPECT_EQ(mov_source("0xffffffff").imm, 4294967295);
  EXPECT_EQ(mov_source("0b11111111111111111111111111111111").imm, 4294967295);
  EXPECT_EQ(mov_source("-2147483648").imm, -2147483648);
  EXPECT_EQ(mov_source("-0x80000000").imm, -2147483648);
  // Past the bounds: the error is at the number, or at its '-'.
  expect_syntax_error("mov v1, 4294967296", 1, 9, "out of range");
  expect_syntax_error("mov v1, 0x100000000", 1, 9, "out of range");
  expect_syntax_error("mov v1, -2147483649", 1, 9, "out of range");
  expect_syntax_error("mov v1, 18446744073709551615", 1, 9, "out of range");
  expect_syntax_error("mov v1, 99999999999999999999999", 1, 9, "number");
}

// syntax.lex.number: malformed numbers are errors at the number.
TEST(Numbers, Malformed) {
  expect_syntax_error("mov v1, 0x", 1, 9, "'0x'");
  expect_syntax_error("mov v1, 0b", 1, 9, "'0b'");
  expect_syntax_error("mov v1, 0b2", 1, 9, "'0b2'");
  expect_syntax_error("mov v1, 12ab", 1, 9, "'12ab'");
  expect_syntax_error("mov v1, 0xfg", 1, 9, "'0xfg'");
  expect_syntax_error("mov v1, 1_000", 1, 9, "'1_000'");
  expect_syntax_error("mov v1, --5", 1, 10, "expected a number");
  expect_syntax_error("mov v1, -", 1, 10, "expected a number");
  expect_syntax_error("mov v1, -v2", 1, 10, "expected a number");
}

// syntax.operand.imm: the immediate is used as its 32-bit two's-complement pattern,
// so -1 and 4294967295 are the same value.
TEST(Numbers, TwosComplementPattern) {
  auto r = test::run(R"(
.wave 1
.buffer out u32[3] out
    mov v1, -1
    st out[0], v1
    mov v2, 4294967295
    st out[4], v2
    mov v3, -2147483648
    st out[8], v3
    exit
)");
  ASSERT_TRUE(r.ok()) << r.diags;
  EXPECT_EQ(test::words(*r.outcome, "out"),
            (std::vector<uint32_t>{0xffffffffu, 0xffffffffu, 0x80000000u}));
}

// ---- registers (syntax.lex.register) ----------------------------------------------

// syntax.lex.register, state.reg.pt: v/s/p registers, `pt` and `!p`.
TEST(Registers, WellFormed) {
  auto v = mov_source("v0");
  EXPECT_EQ(v.file, RegFile::V);
  EXPECT_EQ(v.index, 0u);
  v = mov_source("v255");
  EXPECT_EQ(v.file, RegFile::V);
  EXPECT_EQ(v.index, 255u);
  v = mov_source("s17");
  EXPECT_EQ(v.file, RegFile::S);
  EXPECT_EQ(v.index, 17u);
  auto r = text::parse("cbr !p3, l\ncbr pt, l\ncbr !pt, l\ncbr p15, l");
  ASSERT_TRUE(r.ok()) << r.diags.format("t");
  ASSERT_EQ(r.program.stmts.size(), 4u);
  const auto& p = r.program.stmts[0].operands[0];
  EXPECT_EQ(p.type, syntax::OperandType::Pred);
  EXPECT_TRUE(p.negate);
  EXPECT_EQ(p.value.file, RegFile::P);
  EXPECT_EQ(p.value.index, 3u);
  EXPECT_EQ(r.program.stmts[1].operands[0].value.file, RegFile::PTrue);
  EXPECT_FALSE(r.program.stmts[1].operands[0].negate);
  EXPECT_EQ(r.program.stmts[2].operands[0].value.file, RegFile::PTrue);
  EXPECT_TRUE(r.program.stmts[2].operands[0].negate);
  EXPECT_EQ(r.program.stmts[3].operands[0].value.index, 15u);
}

// syntax.lex.register: no leading zeros.
TEST(Registers, LeadingZerosAreMalformed) {
  expect_syntax_error("mov v007, 1", 1, 5, "malformed register 'v007'");
  expect_syntax_error("mov v1, s01", 1, 9, "malformed register 's01'");
  expect_syntax_error("cbr p00, l", 1, 5, "malformed register 'p00'");
  expect_syntax_error("add v1, v2, v00", 1, 13, "malformed register 'v00'");
}

// syntax.operand.kinds: `pt` is only a predicate; `!` only negates predicates.
TEST(Registers, PredicatesWhereValuesAreExpected) {
  expect_syntax_error("mov v1, pt", 1, 9, "must be");
  expect_syntax_error("mov pt, 1", 1, 5, "must be");
  expect_syntax_error("mov v1, !p1", 1, 9, "must be");
  expect_syntax_error("mov v1, p1", 1, 9, "must be");
  expect_syntax_error("cbr !v1, l", 1, 6, "expected a predicate");
  expect_syntax_error("cbr !!p1, l", 1, 6, "expected a predicate");
  expect_syntax_error("cbr s1, l", 1, 5, "expected a predicate");
}

// A register number too large for any register file never loads.
TEST(Registers, HugeIndexRejected) {
  for (std::string_view src :
       {"mov v4294967296, 1\nexit", "mov v99999999999, 1\nexit", "mov v999999999, 1\nexit"}) {
    SCOPED_TRACE(src);
    auto r = test::load(src);
    EXPECT_FALSE(r.loaded.has_value());
    ASSERT_FALSE(r.diags.empty());
    EXPECT_EQ(r.diags.list()[0].span.line, 1u);
    EXPECT_EQ(r.diags.list()[0].span.col, 5u);
  }
}

// ---- special registers (syntax.operand.special) -----------------------------------

// syntax.operand.special: exactly the listed names.
TEST(Specials, EveryListedSpecialParses) {
  const std::vector<std::string> listed = {"lane",    "warp",    "gwarp",  "wg",   "core",
                                           "wave",    "simd",    "nwarps", "nwg",  "exec",
                                           "exec_lo", "exec_hi", "esr",    "tgid", "gesr"};
  EXPECT_EQ(isa::specials().size(), listed.size());
  for (const auto& name : listed) {
    SCOPED_TRACE(name);
    auto v = mov_source("%" + name);
    EXPECT_EQ(v.file, RegFile::Special);
    auto id = isa::find_special(name);
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(v.index, static_cast<uint32_t>(*id));
  }
}

// syntax.operand.special: any other `%name` is an error at the name.
TEST(Specials, UnknownSpecialIsAnError) {
  expect_syntax_error("mov v1, %foo", 1, 9, "unknown special register '%foo'");
  expect_syntax_error("mov v1, %", 1, 9, "unknown special register");
  expect_syntax_error("mov v1, %LANE", 1, 9, "unknown special register");
  expect_syntax_error("mov v1, %lanes", 1, 9, "unknown special register");
  expect_syntax_error("add v1, v2, %bogus", 1, 13, "'%bogus'");
  expect_syntax_error("mov %foo, 1", 1, 5, "unknown special register");
  expect_syntax_error("ld v1, buf[%foo]", 1, 12, "unknown special register");
}

// ---- bytes outside the grammar (syntax.lex.other) ---------------------------------

// syntax.lex.other: NUL.
TEST(Bytes, NulIsAnErrorAtItsPosition) {
  expect_syntax_error(std::string_view("nop\0\n", 5), 1, 4, "0x00");
  expect_syntax_error(std::string_view("nop\n  \0\n", 8), 2, 3, "0x00");
  expect_syntax_error(std::string_view("mov v1,\0 2", 10), 1, 8, "0x00");
}

// syntax.lex.other: bytes outside ASCII; syntax.lex.comment: anything in a comment.
TEST(Bytes, NonAsciiIsAnErrorAtItsPosition) {
  expect_syntax_error("nop \xc3\xa9", 1, 5, "0xc3");
  expect_syntax_error("\xff", 1, 1, "0xff");
  expect_syntax_error("nop\n\n  \x80nop", 3, 3, "0x80");
  expect_syntax_error("add v1, v2, 3\xe2\x82\xac", 1, 14, "0xe2");
  // Inside a comment any byte may appear.
  EXPECT_TRUE(text::parse("nop ; caf\xc3\xa9 \xff\n").ok());
}

// syntax.lex.other: ASCII punctuation outside the grammar.
TEST(Bytes, OtherAsciiIsAnError) {
  expect_syntax_error("add v1, v2, #3", 1, 13, "'#'");
  expect_syntax_error("@", 1, 1, "'@'");
  expect_syntax_error("mov v1, 2 / 3", 1, 11, "'/'");
}

// syntax.errors: whatever the bytes, the parser reports located errors and never
// crashes. All 256 byte values at every position of a short statement.
TEST(Bytes, EveryByteAnywhere) {
  const std::string base = "add v1, v2, 3\n";
  for (size_t pos = 0; pos <= base.size(); ++pos) {
    for (int b = 0; b < 256; ++b) {
      std::string s = base;
      s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<char>(b));
      auto r = text::parse(s);
      for (const auto& d : r.diags.list()) {
        ASSERT_GE(d.span.line, 1u);
        ASSERT_GE(d.span.col, 1u);
        ASSERT_FALSE(d.message.empty());
      }
    }
  }
}

// ---- line endings (syntax.lex.lines) ----------------------------------------------

// syntax.lex.lines: CR LF separates lines like LF.
TEST(LineEndings, CrLfIsOneLineEnd) {
  auto lf = text::parse(".wave 8\nmov v1, 2\nlab:\nexit\n");
  auto crlf = text::parse(".wave 8\r\nmov v1, 2\r\nlab:\r\nexit\r\n");
  ASSERT_TRUE(lf.ok());
  ASSERT_TRUE(crlf.ok()) << crlf.diags.format("t");
  EXPECT_EQ(lf.program, crlf.program);
  ASSERT_EQ(crlf.program.stmts.size(), 3u);
  EXPECT_EQ(crlf.program.stmts[2].span.line, 4u);
  // Errors keep their line numbers and byte columns.
  expect_syntax_error("nop\r\nfrob\r\n", 2, 1, "unknown instruction 'frob'");
  expect_syntax_error("nop\r\nmov v1\r\n", 2, 7, "before operand 2");
  expect_syntax_error("nop\r\n\r\n  mov v1, 0x\r\n", 3, 11, "'0x'");
}

// syntax.lex.lines: a lone CR also separates lines.
TEST(LineEndings, LoneCrIsALineEnd) {
  auto r = text::parse("nop\rexit\r");
  ASSERT_TRUE(r.ok()) << r.diags.format("t");
  ASSERT_EQ(r.program.stmts.size(), 2u);
  EXPECT_EQ(r.program.stmts[1].span, (syntax::Span{2, 1, 4}));
  expect_syntax_error("nop\r  frob\n", 2, 3, "unknown instruction 'frob'");
  // CR, then CR LF: three lines.
  expect_syntax_error("nop\r\r\nfrob", 3, 1, "unknown instruction");
  // A comment ends at a lone CR.
  expect_syntax_error("nop ; comment\rfrob", 2, 1, "unknown instruction");
  EXPECT_EQ(kinds("a\rb"),
            (std::vector<Tok>{Tok::Ident, Tok::Newline, Tok::Ident, Tok::Newline, Tok::Eof}));
}

// syntax.lex.lines: the last line needs no line end.
TEST(LineEndings, MixedEndingsAndNoFinalNewline) {
  auto r = text::parse("nop\r\nnop\nexit");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.program.stmts.size(), 3u);
  EXPECT_EQ(r.program.stmts[2].span, (syntax::Span{3, 1, 4}));
}

}  // namespace
}  // namespace simt
