// Parser: text -> AST with spans (spec/syntax.md). Never throws on input; every
// problem becomes a located diagnostic.
#pragma once

#include <string_view>

#include "syntax/ast.h"
#include "syntax/diag.h"

namespace simt::text {

struct ParseResult {
  syntax::Program program;
  syntax::Diagnostics diags;
  bool ok() const { return diags.empty(); }
};

ParseResult parse(std::string_view source);

// Structured-control keywords (syntax.struct.*) are not table mnemonics.
bool is_structured_keyword(std::string_view word);

}  // namespace simt::text
