// Lexical analysis (spec/syntax.md, syntax.lex.*). The lexer accepts any byte
// sequence: bytes outside the grammar become Error tokens with a location.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/diag.h"

namespace simt::text {

enum class Tok : uint8_t {
  Ident,    // [A-Za-z_.][A-Za-z0-9_.]*
  Number,   // a digit followed by [A-Za-z0-9_]*, checked by the parser
  Special,  // %name
  Comma,
  Colon,
  LBrack,
  RBrack,
  LParen,
  RParen,
  Plus,
  Minus,
  Star,
  Bang,
  Equals,
  Newline,
  Eof,
  Error,
};

struct Token {
  Tok kind;
  std::string_view text;  // view into the source (for Error: the offending bytes)
  syntax::Span span;
};

// Splits `src` into tokens. Comments (`;` to end of line) are dropped. The result
// always ends with an Eof token and every line ends with a Newline token.
std::vector<Token> lex(std::string_view src);

std::string describe(const Token& t);  // for messages: `'add'`, `end of line`, ...

}  // namespace simt::text
