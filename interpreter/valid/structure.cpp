#include <set>
#include <string>
#include <vector>

#include "valid/valid.h"

namespace simt::valid {

using syntax::DiagKind;
using syntax::Operand;
using syntax::OperandType;
using syntax::Program;
using syntax::RegFile;
using syntax::Stmt;
using syntax::StmtKind;

// valid.struct.nesting, valid.struct.else, valid.struct.loopctl
void check_structure(const Program& p, syntax::Diagnostics& d) {
  struct Open {
    const Stmt* stmt;
    bool seen_else;
  };
  std::vector<Open> open;
  size_t loops_open = 0;  // `loop` blocks in `open`
  for (const auto& s : p.stmts) {
    switch (s.kind) {
      case StmtKind::If:
      case StmtKind::Loop:
        open.push_back({&s, false});
        loops_open += s.kind == StmtKind::Loop;
        break;
      case StmtKind::Else:
        if (open.empty() || open.back().stmt->kind != StmtKind::If)
          d.add(DiagKind::Invalid, s.span, "'else' without a matching 'if'", "valid.struct.else");
        else if (open.back().seen_else)
          d.add(DiagKind::Invalid, s.span,
                "second 'else' for the 'if' on line " + std::to_string(open.back().stmt->span.line),
                "valid.struct.else");
        else
          open.back().seen_else = true;
        break;
      case StmtKind::EndIf:
        if (open.empty() || open.back().stmt->kind != StmtKind::If)
          d.add(DiagKind::Invalid, s.span,
                open.empty() ? "'endif' without a matching 'if'"
                             : "'endif' closes the 'loop' on line " +
                                   std::to_string(open.back().stmt->span.line),
                "valid.struct.nesting");
        else
          open.pop_back();
        break;
      case StmtKind::EndLoop:
        if (open.empty() || open.back().stmt->kind != StmtKind::Loop)
          d.add(DiagKind::Invalid, s.span,
                open.empty() ? "'endloop' without a matching 'loop'"
                             : "'endloop' closes the 'if' on line " +
                                   std::to_string(open.back().stmt->span.line),
                "valid.struct.nesting");
        else
          open.pop_back(), --loops_open;
        break;
      case StmtKind::Break:
      case StmtKind::Continue:
        if (loops_open == 0)
          d.add(DiagKind::Invalid, s.span,
                std::string(s.kind == StmtKind::Break ? "'break'" : "'continue'") +
                    " outside of a loop",
                "valid.struct.loopctl");
        break;
      default:
        break;
    }
  }
  for (const auto& o : open)
    d.add(DiagKind::Invalid, o.stmt->span,
          std::string(o.stmt->kind == StmtKind::If ? "'if' is never closed by 'endif'"
                                                   : "'loop' is never closed by 'endloop'"),
          "valid.struct.nesting");
}

namespace {

Stmt instr(isa::Op op, syntax::Span span, std::vector<Operand> ops = {}) {
  Stmt s;
  s.kind = StmtKind::Instr;
  s.op = op;
  s.span = span;
  s.operands = std::move(ops);
  for (auto& o : s.operands) o.span = span;
  return s;
}

Operand pred_or_true(const Stmt& s) {
  if (!s.operands.empty()) return s.operands[0];
  Operand o;
  o.type = OperandType::Pred;
  o.value.file = RegFile::PTrue;
  return o;
}

}  // namespace

// branch.struct.if, branch.struct.loop
Program expand(const Program& p) {
  // Every directive as written (a new one comes along without a line here); the
  // statements are rebuilt below.
  Program out = p;
  out.stmts.clear();
  std::set<std::string> used;
  for (const auto& s : p.stmts)
    if (s.kind == StmtKind::Label) used.insert(s.label);
  int counter = 0;
  auto fresh = [&] {
    std::string name;
    do name = "__loop" + std::to_string(counter++);
    while (used.count(name));
    used.insert(name);
    return name;
  };
  // The expansion's size: a loop becomes lpush and a label, an endloop lnext, cbr
  // and pop; every other statement one statement.
  size_t count = p.stmts.size();
  for (const auto& s : p.stmts)
    count += s.kind == StmtKind::Loop ? 1 : s.kind == StmtKind::EndLoop ? 2 : 0;
  out.stmts.reserve(count);
  std::vector<std::string> loop_labels;
  for (const auto& s : p.stmts) {
    switch (s.kind) {
      case StmtKind::Label:
      case StmtKind::Instr:
        out.stmts.push_back(s);
        break;
      case StmtKind::If:
        out.stmts.push_back(instr(isa::Op::Push, s.span, {s.operands.at(0)}));
        break;
      case StmtKind::Else:
        out.stmts.push_back(instr(isa::Op::Invert, s.span));
        break;
      case StmtKind::EndIf:
        out.stmts.push_back(instr(isa::Op::Pop, s.span));
        break;
      case StmtKind::Loop: {
        out.stmts.push_back(instr(isa::Op::LPush, s.span));
        Stmt l;
        l.kind = StmtKind::Label;
        l.label = fresh();
        l.span = s.span;
        loop_labels.push_back(l.label);
        out.stmts.push_back(std::move(l));
        break;
      }
      case StmtKind::Break:
        out.stmts.push_back(instr(isa::Op::Brk, s.span, {pred_or_true(s)}));
        break;
      case StmtKind::Continue:
        out.stmts.push_back(instr(isa::Op::Cont, s.span, {pred_or_true(s)}));
        break;
      case StmtKind::EndLoop: {
        std::string top = loop_labels.empty() ? fresh() : loop_labels.back();
        if (!loop_labels.empty()) loop_labels.pop_back();
        Operand pt = pred_or_true(Stmt{});
        Operand target;
        target.type = OperandType::Label;
        target.name = top;
        out.stmts.push_back(instr(isa::Op::LNext, s.span));
        out.stmts.push_back(instr(isa::Op::Cbr, s.span, {pt, target}));
        out.stmts.push_back(instr(isa::Op::Pop, s.span));
        break;
      }
    }
  }
  return out;
}

}  // namespace simt::valid
