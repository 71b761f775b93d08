// Printer: AST -> text that parses back to an equal AST (spec/syntax.md,
// syntax.print.roundtrip).
#pragma once

#include <optional>
#include <string>

#include "syntax/ast.h"

namespace simt::text {

// A value alone: registers by name, an immediate in decimal (print_operand prints
// an immediate operand as the program spells it).
std::string print_value(const syntax::Value& v);
std::string print_operand(const syntax::Operand& o);
std::string print_stmt(const syntax::Stmt& s);  // one statement, no indentation
std::string print_size(const syntax::SizeExpr& e);
std::string print_buffer(const syntax::BufferDecl& b);
std::string print_directives(const syntax::LaunchDirectives& l);
// The whole program: directives, buffers, then statements indented by nesting
// (syntax.print.indent: at most kMaxIndentDepth levels shown, so the text stays
// linear in the program's size however deep blocks nest).
inline constexpr int kMaxIndentDepth = 32;
std::string print(const syntax::Program& p);

// syntax.print.roundtrip checked on p: the printed text parses to an equal program
// that prints to the same text. Nothing if it holds, else what went wrong.
std::optional<std::string> roundtrip_problem(const syntax::Program& p);

}  // namespace simt::text
