#include "text/printer.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "text/parser.h"

namespace simt::text {

using syntax::OperandType;
using syntax::RegFile;
using syntax::StmtKind;

std::string print_value(const syntax::Value& v) {
  switch (v.file) {
    case RegFile::V:
      return "v" + std::to_string(v.index);
    case RegFile::S:
      return "s" + std::to_string(v.index);
    case RegFile::P:
      return "p" + std::to_string(v.index);
    case RegFile::PTrue:
      return "pt";
    case RegFile::Special:
      return "%" + std::string(isa::special_info(static_cast<isa::Special>(v.index)).name);
    case RegFile::Imm:
      return std::to_string(v.imm);
    case RegFile::None:
      return "";
  }
  return "";
}

std::string print_operand(const syntax::Operand& o) {
  switch (o.type) {
    case OperandType::Value:
      return o.value.file == RegFile::Imm && !o.spelling.empty() ? o.spelling
                                                                 : print_value(o.value);
    case OperandType::Pred:
      return (o.negate ? "!" : "") + print_value(o.value);
    case OperandType::Label:
      return o.name;
    case OperandType::Mem: {
      std::string s = o.name + "[";
      if (!o.spelling.empty()) {
        s += print_value(o.value) + o.spelling;
      } else if (o.value.file == RegFile::None) {
        s += std::to_string(o.offset);
      } else {
        s += print_value(o.value);
        if (o.offset > 0) s += "+" + std::to_string(o.offset);
        if (o.offset < 0) s += "-" + std::to_string(-o.offset);
      }
      return s + "]";
    }
  }
  return "";
}

std::string print_stmt(const syntax::Stmt& s) {
  auto with_pred = [&](const char* kw) {
    std::string out = kw;
    if (!s.operands.empty()) out += " " + print_operand(s.operands[0]);
    return out;
  };
  switch (s.kind) {
    case StmtKind::Label:
      return s.label + ":";
    case StmtKind::If:
      return with_pred("if");
    case StmtKind::Else:
      return "else";
    case StmtKind::EndIf:
      return "endif";
    case StmtKind::Loop:
      return "loop";
    case StmtKind::Break:
      return with_pred("break");
    case StmtKind::Continue:
      return with_pred("continue");
    case StmtKind::EndLoop:
      return "endloop";
    case StmtKind::Instr: {
      std::string out(isa::info(s.op).mnemonic);
      for (size_t i = 0; i < s.operands.size(); ++i)
        out += (i == 0 ? " " : ", ") + print_operand(s.operands[i]);
      return out;
    }
  }
  return "";
}

namespace {
int prec(const syntax::SizeExpr& e) {
  switch (e.kind) {
    case syntax::SizeExpr::Kind::Add:
    case syntax::SizeExpr::Kind::Sub:
      return 1;
    case syntax::SizeExpr::Kind::Mul:
      return 2;
    case syntax::SizeExpr::Kind::Neg:
      return 3;
    default:
      return 4;
  }
}
}  // namespace

std::string print_size(const syntax::SizeExpr& e) {
  using K = syntax::SizeExpr::Kind;
  switch (e.kind) {
    case K::Num:
      return std::to_string(e.num);
    case K::Sym:
      return e.sym;
    case K::Neg: {
      if (!e.lhs) return "0";
      std::string x = print_size(*e.lhs);
      return prec(*e.lhs) < prec(e) ? "-(" + x + ")" : "-" + x;
    }
    default:
      break;
  }
  if (!e.lhs || !e.rhs) return "0";
  int p = prec(e);
  std::string l = print_size(*e.lhs), r = print_size(*e.rhs);
  if (prec(*e.lhs) < p) l = "(" + l + ")";
  if (prec(*e.rhs) <= p) r = "(" + r + ")";  // operators are left-associative
  const char* op = e.kind == K::Add ? " + " : e.kind == K::Sub ? " - " : " * ";
  return l + op + r;
}

std::string print_buffer(const syntax::BufferDecl& b) {
  std::string s = ".buffer " + b.name + " " + std::string(syntax::elem_type_name(b.type)) + "[" +
                  print_size(b.count) + "] " + std::string(syntax::buffer_mode_name(b.mode));
  using K = syntax::BufferInit::Kind;
  switch (b.init.kind) {
    case K::Zero:
      break;
    case K::Iota:
      s += " = iota(" + std::to_string(b.init.values.at(0)) + ", " +
           std::to_string(b.init.values.at(1)) + ")";
      break;
    case K::Fill:
      s += " = fill(" + std::to_string(b.init.values.at(0)) + ")";
      break;
    case K::List:
      s += " =";
      for (size_t i = 0; i < b.init.values.size(); ++i)
        s += (i == 0 ? " " : ", ") + std::to_string(b.init.values[i]);
      break;
  }
  return s;
}

std::string print_directives(const syntax::LaunchDirectives& l) {
  std::string s;
  auto text = [](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
      return v;
    else
      return std::to_string(v);
  };
  // The table's order (exec/settings.def).
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, ...) \
  SIMT_SETTING_IF_##dir(if (l.name.value) s += "." #name " " + text(*l.name.value) + "\n";)
#include "exec/settings.def"
  return s;
}

std::string print(const syntax::Program& p) {
  std::string out = print_directives(p.launch);
  if (p.handler.value) out += ".handler " + *p.handler.value + "\n";
  for (const auto& e : p.handler_entries) out += ".handler_entry " + *e.value + "\n";
  for (const auto& t : p.vtables) {
    out += ".vtable " + t.name;
    for (size_t i = 0; i < t.labels.size(); ++i) out += (i ? ", " : " ") + t.labels[i];
    out += "\n";
  }
  if (p.vshared.value) out += ".vshared " + std::to_string(*p.vshared.value) + "\n";
  if (p.sys_save.value) out += ".sys_save " + *p.sys_save.value + "\n";
  if (p.sys_restore.value) out += ".sys_restore " + *p.sys_restore.value + "\n";
  for (const auto& b : p.buffers) out += print_buffer(b) + "\n";
  if (!out.empty()) out += "\n";
  // syntax.print.indent: the blocks open around each statement (an `else` is
  // outside its own `if` block, a closing statement outside the block it closes).
  size_t depth = 0;
  for (const auto& s : p.stmts) {
    // A sub-vector region's body is indented like a block (wave.enter).
    const bool begin = s.kind == StmtKind::Instr && s.op == isa::Op::SubvBegin;
    const bool end = s.kind == StmtKind::Instr && s.op == isa::Op::SubvEnd;
    if ((s.kind == StmtKind::EndIf || s.kind == StmtKind::EndLoop || end) && depth > 0) --depth;
    const size_t around = s.kind == StmtKind::Else && depth > 0 ? depth - 1 : depth;
    const size_t indent =
        s.kind == StmtKind::Label ? 0 : 4 + 2 * std::min(around, size_t{kMaxIndentDepth});
    out.append(indent, ' ');
    out += print_stmt(s);
    out += '\n';
    if (s.kind == StmtKind::If || s.kind == StmtKind::Loop || begin) ++depth;
  }
  return out;
}

std::optional<std::string> roundtrip_problem(const syntax::Program& p) {
  const std::string printed = print(p);
  auto again = parse(printed);
  if (!again.ok()) return "the printed program does not parse:\n" + again.diags.format("printed");
  if (!(again.program == p)) return "print then parse gives a different program";
  if (print(again.program) != printed) return "printing the re-read program gives different text";
  return std::nullopt;
}

}  // namespace simt::text
