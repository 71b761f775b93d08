#include "text/parser.h"

#include <re2/re2.h>

#include <charconv>
#include <limits>
#include <string>
#include <unordered_map>

#include "text/lexer.h"

namespace simt::text {
namespace {

using syntax::DiagKind;
using syntax::Operand;
using syntax::OperandType;
using syntax::RegFile;
using syntax::Span;
using syntax::Stmt;
using syntax::StmtKind;
using syntax::Value;

// Regular expressions for token classification (syntax.lex.number, syntax.lex.register,
// syntax.lex.label). Compiled once.
const RE2& number_re() {
  static const RE2 re("0x([0-9a-fA-F]+)|0b([01]+)|([0-9]+)");
  return re;
}
const RE2& register_re() {
  static const RE2 re("([vsp])(0|[1-9][0-9]{0,8})");
  return re;
}
const RE2& label_re() {
  static const RE2 re("[A-Za-z_][A-Za-z0-9_]*");
  return re;
}

re2::StringPiece sp(std::string_view s) {
  return re2::StringPiece(s.data(), s.size());
}

struct Cursor {
  const std::vector<Token>& toks;
  size_t pos = 0;
  const Token& peek(size_t ahead = 0) const {
    size_t p = pos + ahead;
    return toks[p < toks.size() ? p : toks.size() - 1];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos < toks.size() - 1) ++pos;
    return t;
  }
  bool at(Tok k) const { return peek().kind == k; }
  bool at_eol() const { return at(Tok::Newline) || at(Tok::Eof); }
};

// Thrown inside one line's parse; caught per line so parsing goes on. Never escapes.
struct LineError {
  Span span;
  std::string message;
};

[[noreturn]] void fail(const Token& t, std::string msg) {
  throw LineError{t.span, std::move(msg)};
}

Span join(Span a, const Token& last) {
  if (last.span.line == a.line && last.span.col + last.span.len > a.col)
    a.len = last.span.col + last.span.len - a.col;
  return a;
}

// Parses an unsigned number token to uint64; false if malformed or too large.
bool number_value(std::string_view text, uint64_t& out) {
  re2::StringPiece hex, bin, dec;
  if (!RE2::FullMatch(re2::StringPiece(text.data(), text.size()), number_re(), &hex, &bin, &dec))
    return false;
  re2::StringPiece digits = !hex.empty() ? hex : !bin.empty() ? bin : dec;
  int base = !hex.empty() ? 16 : !bin.empty() ? 2 : 10;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out, base);
  return r.ec == std::errc() && r.ptr == digits.data() + digits.size();
}

class Parser {
 public:
  explicit Parser(std::string_view src) : toks_(lex(src)), cur_{toks_} {}

  ParseResult run() {
    ParseResult res;
    while (!cur_.at(Tok::Eof)) {
      size_t line_start = cur_.pos;
      try {
        line(res.program);
      } catch (const LineError& e) {
        res.diags.add(DiagKind::Syntax, e.span, e.message);
        // Skip the rest of the line.
        cur_.pos = line_start;
        while (!cur_.at_eol()) cur_.next();
      }
      if (cur_.at(Tok::Newline)) cur_.next();
    }
    res.diags = merge(std::move(res.diags));
    return res;
  }

 private:
  syntax::Diagnostics merge(syntax::Diagnostics d) {
    for (auto& e : extra_.list()) d.add(e.kind, e.span, e.message);
    return d;
  }

  void line(syntax::Program& prog) {
    // syntax.lex.other: a byte that is no token, written inside a word (`ad\xffd`),
    // is named at its position, before the part of the word in front of it could be
    // taken for a mnemonic, label or register of its own.
    for (size_t p = cur_.pos + 1;
         p < toks_.size() && toks_[p].kind != Tok::Newline && toks_[p].kind != Tok::Eof; ++p) {
      const Token& bad = toks_[p];
      const Token& word = toks_[p - 1];
      if (bad.kind == Tok::Error &&
          (word.kind == Tok::Ident || word.kind == Tok::Number || word.kind == Tok::Special) &&
          word.span.line == bad.span.line && word.span.col + word.span.len == bad.span.col)
        fail(bad, "unexpected " + describe(bad) + " inside the word '" +
                      std::string(word.text.substr(0, 40)) + "'");
    }
    // Labels: `ident :`, any number of them.
    while (cur_.at(Tok::Ident) && cur_.peek(1).kind == Tok::Colon) {
      const Token& t = cur_.next();
      cur_.next();
      check_label_name(t);
      Stmt s;
      s.kind = StmtKind::Label;
      s.label = std::string(t.text);
      s.span = t.span;
      prog.stmts.push_back(std::move(s));
    }
    if (cur_.at_eol()) return;
    const Token& head = cur_.peek();
    if (head.kind != Tok::Ident)
      fail(head, "expected an instruction, directive or label, found " + describe(head));
    if (head.text[0] == '.') {
      directive(prog);
    } else if (is_structured_keyword(head.text)) {
      prog.stmts.push_back(structured());
    } else {
      prog.stmts.push_back(instruction());
    }
    if (!cur_.at_eol())
      fail(cur_.peek(), "unexpected " + describe(cur_.peek()) + " after the statement");
  }

  void check_label_name(const Token& t) {
    if (!RE2::FullMatch(sp(t.text), label_re()))
      fail(t,
           "invalid label name '" + std::string(t.text) + "' (labels are letters, digits and _)");
    if (RE2::FullMatch(sp(t.text), register_re()) || t.text == "pt")
      fail(t, "label name '" + std::string(t.text) + "' is a register name");
  }

  // ---- statements -------------------------------------------------------------
  Stmt structured() {
    const Token& kw = cur_.next();
    Stmt s;
    s.span = kw.span;
    std::string_view w = kw.text;
    if (w == "if") {
      s.kind = StmtKind::If;
      s.operands.push_back(pred_operand());
    } else if (w == "else") {
      s.kind = StmtKind::Else;
    } else if (w == "endif") {
      s.kind = StmtKind::EndIf;
    } else if (w == "loop") {
      s.kind = StmtKind::Loop;
    } else if (w == "endloop") {
      s.kind = StmtKind::EndLoop;
    } else {
      s.kind = w == "break" ? StmtKind::Break : StmtKind::Continue;
      if (!cur_.at_eol()) s.operands.push_back(pred_operand());
    }
    return s;
  }

  Stmt instruction() {
    const Token& mn = cur_.next();
    auto op = isa::find(mn.text);
    if (!op) fail(mn, "unknown instruction '" + std::string(mn.text.substr(0, 40)) + "'");
    const auto& info = isa::info(*op);
    Stmt s;
    s.kind = StmtKind::Instr;
    s.op = *op;
    s.span = mn.span;
    auto kinds = info.sig.view();
    s.operands.reserve(kinds.size());
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (i > 0) {
        if (!cur_.at(Tok::Comma))
          fail(cur_.peek(), "expected ',' before operand " + std::to_string(i + 1) + " of '" +
                                std::string(info.mnemonic) + "', found " + describe(cur_.peek()));
        cur_.next();
      }
      if (cur_.at_eol())
        fail(cur_.peek(), "'" + std::string(info.mnemonic) + "' takes " +
                              std::to_string(kinds.size()) + " operand(s), found " +
                              std::to_string(i));
      s.operands.push_back(operand(kinds[i], info.mnemonic));
    }
    if (!cur_.at_eol()) {
      if (cur_.at(Tok::Comma))
        fail(cur_.peek(), "too many operands for '" + std::string(info.mnemonic) + "' (takes " +
                              std::to_string(kinds.size()) + ")");
    }
    return s;
  }

  // ---- operands ---------------------------------------------------------------
  // A register token: v/s/p + number, or pt. Returns false if not register-shaped.
  bool reg_token(const Token& t, Value& v) {
    if (t.kind != Tok::Ident) return false;
    if (t.text == "pt") {
      v.file = RegFile::PTrue;
      return true;
    }
    re2::StringPiece file, num;
    if (!RE2::FullMatch(sp(t.text), register_re(), &file, &num)) {
      // v007 or v99999999999: register-shaped but malformed
      if (t.text.size() >= 2 && (t.text[0] == 'v' || t.text[0] == 's' || t.text[0] == 'p')) {
        bool digits = true;
        for (char c : t.text.substr(1)) digits = digits && c >= '0' && c <= '9';
        if (digits) fail(t, "malformed register '" + std::string(t.text.substr(0, 20)) + "'");
      }
      return false;
    }
    uint32_t n = 0;
    std::from_chars(num.data(), num.data() + num.size(), n);
    v.file = file[0] == 'v' ? RegFile::V : file[0] == 's' ? RegFile::S : RegFile::P;
    v.index = n;
    return true;
  }

  Value special_token(const Token& t) {
    auto sp = isa::find_special(t.text.substr(1));
    if (!sp) fail(t, "unknown special register '" + std::string(t.text.substr(0, 40)) + "'");
    Value v;
    v.file = RegFile::Special;
    v.index = static_cast<uint32_t>(*sp);
    return v;
  }

  // An immediate: optional '-' then a number; must fit in 32 bits signed or unsigned.
  int64_t immediate(int64_t lo, int64_t hi) {
    bool neg = false;
    const Token& first = cur_.peek();
    if (cur_.at(Tok::Minus)) {
      cur_.next();
      neg = true;
    }
    const Token& t = cur_.next();
    if (t.kind != Tok::Number) fail(t, "expected a number, found " + describe(t));
    uint64_t u = 0;
    if (!number_value(t.text, u))
      fail(t, "malformed or too large number '" + std::string(t.text.substr(0, 40)) + "'");
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(t, "number out of range");
    int64_t v = neg ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
    if (v < lo || v > hi)
      fail(first, "number " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
    spelling_ = (neg ? "-" : "") + std::string(t.text);
    return v;
  }
  // The spelling of the number the last immediate() read, sign included.
  std::string spelling_;

  static constexpr int64_t kImmLo = std::numeric_limits<int32_t>::min();
  static constexpr int64_t kImmHi = std::numeric_limits<uint32_t>::max();

  Operand operand(isa::OperandKind kind, std::string_view mnemonic) {
    using K = isa::OperandKind;
    const Token& t = cur_.peek();
    Operand o;
    o.span = t.span;
    auto need = [&](const char* what) -> void {
      fail(t, std::string("operand of '") + std::string(mnemonic) + "' must be " + what +
                  ", found " + describe(t));
    };
    switch (kind) {
      case K::Dst:
      case K::VDst:
      case K::SDst:
      case K::PDst: {
        Value v;
        if (t.kind == Tok::Special && kind == K::Dst) {
          v = special_token(cur_.next());
        } else if (reg_token(t, v)) {
          cur_.next();
        } else {
          need(kind == K::Dst    ? "a v or s register"
               : kind == K::VDst ? "a v register"
               : kind == K::SDst ? "an s register"
                                 : "a p register");
        }
        bool ok = (kind == K::Dst && (v.is_reg() || v.file == RegFile::Special)) ||
                  (kind == K::VDst && v.file == RegFile::V) ||
                  (kind == K::SDst && v.file == RegFile::S) ||
                  (kind == K::PDst && (v.file == RegFile::P || v.file == RegFile::PTrue));
        if (!ok)
          need(kind == K::Dst    ? "a v or s register"
               : kind == K::VDst ? "a v register"
               : kind == K::SDst ? "an s register"
                                 : "a p register");
        o.value = v;
        break;
      }
      case K::Src:
      case K::VSrc:
      case K::Lane: {
        Value v;
        if (t.kind == Tok::Number || t.kind == Tok::Minus) {
          if (kind == K::VSrc) need("a v register");
          if (kind == K::Lane && t.kind == Tok::Minus)  // syntax.operand.kinds (L)
            fail(t,
                 "a lane index is a number from 0 to 4294967295 or an s register; it takes "
                 "no '-'");
          v.file = RegFile::Imm;
          v.imm = immediate(kind == K::Lane ? 0 : kImmLo, kImmHi);
          o.spelling = spelling_;
        } else if (t.kind == Tok::Special) {
          if (kind != K::Src) need(kind == K::VSrc ? "a v register" : "a number or s register");
          v = special_token(cur_.next());
        } else if (reg_token(t, v)) {
          cur_.next();
          bool ok = (kind == K::Src && v.is_reg()) || (kind == K::VSrc && v.file == RegFile::V) ||
                    (kind == K::Lane && v.file == RegFile::S);
          if (!ok)
            need(kind == K::Src    ? "a register, number or special register"
                 : kind == K::VSrc ? "a v register"
                                   : "a number or s register");
        } else {
          need(kind == K::Src    ? "a register, number or special register"
               : kind == K::VSrc ? "a v register"
                                 : "a number or s register");
        }
        o.value = v;
        break;
      }
      case K::Pred:
        o = pred_operand();
        break;
      case K::Mem:
        o = mem_operand();
        break;
      case K::Label: {
        if (t.kind != Tok::Ident) need("a label");
        cur_.next();
        check_label_name(t);
        o.type = OperandType::Label;
        o.name = std::string(t.text);
        break;
      }
    }
    return o;
  }

  Operand pred_operand() {
    Operand o;
    o.type = OperandType::Pred;
    o.span = cur_.peek().span;
    if (cur_.at(Tok::Bang)) {
      cur_.next();
      o.negate = true;
    }
    const Token& t = cur_.peek();
    Value v;
    if (!reg_token(t, v) || (v.file != RegFile::P && v.file != RegFile::PTrue))
      fail(t,
           "expected a predicate (p0-p15, pt, optionally negated with '!'), found " + describe(t));
    cur_.next();
    o.value = v;
    o.span = join(o.span, t);
    return o;
  }

  Operand mem_operand() {
    Operand o;
    o.type = OperandType::Mem;
    const Token& name = cur_.peek();
    o.span = name.span;
    if (name.kind != Tok::Ident || !RE2::FullMatch(sp(name.text), label_re()))
      fail(name, "expected a memory operand 'buffer[address]', found " + describe(name));
    cur_.next();
    o.name = std::string(name.text);
    if (!cur_.at(Tok::LBrack)) fail(cur_.peek(), "expected '[' after '" + o.name + "'");
    cur_.next();
    const Token& t = cur_.peek();
    Value base;
    if (t.kind == Tok::Number || t.kind == Tok::Minus) {
      o.offset = immediate(kImmLo, kImmHi);
      o.spelling = spelling_;
    } else if (t.kind == Tok::Special) {
      base = special_token(cur_.next());
    } else if (reg_token(t, base) && base.is_reg()) {
      cur_.next();
    } else {
      fail(t, "expected an address (register, special register or number), found " + describe(t));
    }
    o.value = base;
    if (base.file != RegFile::None && (cur_.at(Tok::Plus) || cur_.at(Tok::Minus))) {
      bool minus = cur_.next().kind == Tok::Minus;
      const Token& nt = cur_.peek();
      if (nt.kind != Tok::Number) fail(nt, "expected a number offset, found " + describe(nt));
      int64_t off = immediate(0, kImmHi);
      o.offset = minus ? -off : off;
      o.spelling = (minus ? "-" : "+") + spelling_;
    }
    if (!cur_.at(Tok::RBrack)) fail(cur_.peek(), "expected ']', found " + describe(cur_.peek()));
    o.span = join(o.span, cur_.next());
    return o;
  }

  // ---- directives -------------------------------------------------------------
  template <typename T>
  void set_once(syntax::Directive<T>& d, const Token& at, T value) {
    if (d.value)
      fail(at, "duplicate directive " + std::string(at.text) + " (first on line " +
                   std::to_string(d.span.line) + ")");
    d.value = std::move(value);
    d.span = at.span;
  }

  std::string label_arg() {
    const Token& t = cur_.next();
    if (t.kind != Tok::Ident || !RE2::FullMatch(sp(t.text), label_re()))
      fail(t, "expected a label, found " + describe(t));
    return std::string(t.text);
  }

  uint64_t unsigned_arg(uint64_t max) {
    const Token& t = cur_.next();
    if (t.kind != Tok::Number) fail(t, "expected a number, found " + describe(t));
    uint64_t u = 0;
    if (!number_value(t.text, u) || u > max)
      fail(t, "number '" + std::string(t.text.substr(0, 40)) + "' is malformed or out of range");
    return u;
  }

  // The argument of a launch setting's directive, as its row's type is written.
  template <exec::SettingType T>
  exec::SettingWritten<T> setting_arg() {
    if constexpr (T == exec::SettingType::U32) {
      return static_cast<uint32_t>(unsigned_arg(std::numeric_limits<uint32_t>::max()));
    } else if constexpr (T == exec::SettingType::U64) {
      return unsigned_arg(std::numeric_limits<uint64_t>::max());
    } else if constexpr (T == exec::SettingType::Policy) {
      const Token& t = cur_.next();
      if (t.kind != Tok::Ident) fail(t, "expected a scheduling policy name, found " + describe(t));
      return std::string(t.text);
    } else {
      static_assert(T != exec::SettingType::Bool, "no directive syntax for a boolean setting");
    }
  }

  void directive(syntax::Program& prog) {
    const Token& d = cur_.next();
    std::string_view n = d.text;
    auto& L = prog.launch;
    // syntax.directive: a launch setting's directive (exec/settings.def).
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, ...)     \
  SIMT_SETTING_IF_##dir(if (n == "." #name) {                 \
    set_once(L.name, d, setting_arg<exec::SettingType::T>()); \
    return;                                                   \
  })
#include "exec/settings.def"
    if (n == ".handler") {  // trap.install
      set_once(prog.handler, d, label_arg());
    } else if (n == ".handler_entry") {  // trap.install
      syntax::Directive<std::string> e;
      e.value = label_arg();
      e.span = d.span;
      prog.handler_entries.push_back(std::move(e));
    } else if (n == ".vtable") {  // trap.vector
      syntax::VTableDecl t;
      t.span = d.span;
      const Token& name = cur_.next();
      if (name.kind != Tok::Ident || !RE2::FullMatch(sp(name.text), label_re()))
        fail(name, "expected a vector table name, found " + describe(name));
      t.name = std::string(name.text);
      t.labels.push_back(label_arg());
      while (cur_.at(Tok::Comma)) {
        cur_.next();
        t.labels.push_back(label_arg());
      }
      prog.vtables.push_back(std::move(t));
    } else if (n == ".sys_save") {  // preempt.routine
      set_once(prog.sys_save, d, label_arg());
    } else if (n == ".sys_restore") {  // preempt.routine
      set_once(prog.sys_restore, d, label_arg());
    } else if (n == ".vshared") {  // wave.shared
      set_once(prog.vshared, d,
               static_cast<uint32_t>(unsigned_arg(std::numeric_limits<uint32_t>::max())));
    } else if (n == ".buffer") {
      prog.buffers.push_back(buffer(d));
    } else {
      fail(d, "unknown directive '" + std::string(n.substr(0, 40)) + "'");
    }
  }

  syntax::BufferDecl buffer(const Token& d) {
    syntax::BufferDecl b;
    b.span = d.span;
    const Token& name = cur_.next();
    if (name.kind != Tok::Ident || !RE2::FullMatch(sp(name.text), label_re()))
      fail(name, "expected a buffer name, found " + describe(name));
    b.name = std::string(name.text);
    b.span = name.span;
    const Token& ty = cur_.next();
    if (ty.text == "u8")
      b.type = syntax::ElemType::U8;
    else if (ty.text == "u16")
      b.type = syntax::ElemType::U16;
    else if (ty.text == "u32")
      b.type = syntax::ElemType::U32;
    else if (ty.text == "i32")
      b.type = syntax::ElemType::I32;
    else
      fail(ty, "expected an element type (u8, u16, u32, i32), found " + describe(ty));
    if (!cur_.at(Tok::LBrack)) fail(cur_.peek(), "expected '[' and an element count");
    cur_.next();
    depth_ = 0;
    b.count = size_expr();
    if (!cur_.at(Tok::RBrack)) fail(cur_.peek(), "expected ']', found " + describe(cur_.peek()));
    cur_.next();
    const Token& mode = cur_.next();
    if (mode.text == "in")
      b.mode = syntax::BufferMode::In;
    else if (mode.text == "out")
      b.mode = syntax::BufferMode::Out;
    else if (mode.text == "inout")
      b.mode = syntax::BufferMode::InOut;
    else
      fail(mode, "expected a buffer mode (in, out, inout), found " + describe(mode));
    if (cur_.at(Tok::Equals)) {
      cur_.next();
      b.init = buffer_init();
    }
    return b;
  }

  syntax::BufferInit buffer_init() {
    syntax::BufferInit init;
    const Token& t = cur_.peek();
    constexpr int64_t lo = std::numeric_limits<int32_t>::min(), hi = kImmHi;
    if (t.kind == Tok::Ident && (t.text == "iota" || t.text == "fill")) {
      cur_.next();
      bool iota = t.text == "iota";
      init.kind = iota ? syntax::BufferInit::Kind::Iota : syntax::BufferInit::Kind::Fill;
      if (iota && !cur_.at(Tok::LParen)) {
        init.values = {0, 1};
        return init;
      }
      if (!cur_.at(Tok::LParen)) fail(cur_.peek(), "expected '(' after 'fill'");
      cur_.next();
      init.values.push_back(immediate(lo, hi));
      if (iota) {
        if (!cur_.at(Tok::Comma)) fail(cur_.peek(), "expected ',' in iota(start, step)");
        cur_.next();
        init.values.push_back(immediate(lo, hi));
      }
      if (!cur_.at(Tok::RParen)) fail(cur_.peek(), "expected ')', found " + describe(cur_.peek()));
      cur_.next();
      return init;
    }
    init.kind = syntax::BufferInit::Kind::List;
    init.values.push_back(immediate(lo, hi));
    while (cur_.at(Tok::Comma)) {
      cur_.next();
      init.values.push_back(immediate(lo, hi));
    }
    return init;
  }

  // size := term (('+'|'-') term)* ; term := factor ('*' factor)* ;
  // factor := '-' factor | number | symbol | '(' size ')'
  syntax::SizeExpr size_expr() {
    if (++depth_ > 64) fail(cur_.peek(), "size expression nested too deeply");
    syntax::SizeExpr lhs = size_term();
    while (cur_.at(Tok::Plus) || cur_.at(Tok::Minus)) {
      bool plus = cur_.next().kind == Tok::Plus;
      syntax::SizeExpr e;
      e.kind = plus ? syntax::SizeExpr::Kind::Add : syntax::SizeExpr::Kind::Sub;
      e.lhs = std::make_shared<syntax::SizeExpr>(std::move(lhs));
      e.rhs = std::make_shared<syntax::SizeExpr>(size_term());
      lhs = std::move(e);
    }
    --depth_;
    return lhs;
  }
  syntax::SizeExpr size_term() {
    syntax::SizeExpr lhs = size_factor();
    while (cur_.at(Tok::Star)) {
      cur_.next();
      syntax::SizeExpr e;
      e.kind = syntax::SizeExpr::Kind::Mul;
      e.lhs = std::make_shared<syntax::SizeExpr>(std::move(lhs));
      e.rhs = std::make_shared<syntax::SizeExpr>(size_factor());
      lhs = std::move(e);
    }
    return lhs;
  }
  syntax::SizeExpr size_factor() {
    const Token& t = cur_.peek();
    syntax::SizeExpr e;
    if (t.kind == Tok::Minus) {  // syntax.buffer.size: unary minus
      cur_.next();
      if (++depth_ > 64) fail(t, "size expression nested too deeply");
      e.kind = syntax::SizeExpr::Kind::Neg;
      e.lhs = std::make_shared<syntax::SizeExpr>(size_factor());
      --depth_;
    } else if (t.kind == Tok::Number) {
      e.kind = syntax::SizeExpr::Kind::Num;
      e.num = static_cast<int64_t>(unsigned_arg(std::numeric_limits<uint32_t>::max()));
    } else if (t.kind == Tok::Ident && (t.text == "wave" || t.text == "simd" || t.text == "warps" ||
                                        t.text == "workgroups" || t.text == "threads")) {
      cur_.next();
      e.kind = syntax::SizeExpr::Kind::Sym;
      e.sym = std::string(t.text);
    } else if (t.kind == Tok::LParen) {
      cur_.next();
      e = size_expr();
      if (!cur_.at(Tok::RParen)) fail(cur_.peek(), "expected ')', found " + describe(cur_.peek()));
      cur_.next();
    } else {
      fail(t,
           "expected a count: a number, wave, simd, warps, workgroups, threads, '-' or '(', "
           "found " +
               describe(t));
    }
    return e;
  }

  std::vector<Token> toks_;
  Cursor cur_;
  int depth_ = 0;
  syntax::Diagnostics extra_;
};

}  // namespace

bool is_structured_keyword(std::string_view w) {
  return w == "if" || w == "else" || w == "endif" || w == "loop" || w == "break" ||
         w == "continue" || w == "endloop";
}

ParseResult parse(std::string_view source) {
  Parser p(source);
  return p.run();
}

}  // namespace simt::text
