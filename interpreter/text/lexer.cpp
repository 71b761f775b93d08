#include "text/lexer.h"

#include <cstdio>

namespace simt::text {
namespace {

bool ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}
bool ident_char(unsigned char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}
bool digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::vector<Token> lex(std::string_view src) {
  std::vector<Token> out;
  uint32_t line = 1, col = 1;
  size_t i = 0;
  auto push = [&](Tok k, size_t start, size_t len) {
    out.push_back({k, src.substr(start, len), syntax::Span{line, col, static_cast<uint32_t>(len)}});
  };
  while (i < src.size()) {
    unsigned char c = static_cast<unsigned char>(src[i]);
    if (c == '\n' || c == '\r') {
      push(Tok::Newline, i, 1);
      size_t adv = (c == '\r' && i + 1 < src.size() && src[i + 1] == '\n') ? 2 : 1;
      i += adv;
      ++line;
      col = 1;
      continue;
    }
    if (c == ' ' || c == '\t') {
      ++i;
      ++col;
      continue;
    }
    if (c == ';') {  // comment to end of line
      while (i < src.size() && src[i] != '\n' && src[i] != '\r') ++i, ++col;
      continue;
    }
    size_t start = i;
    Tok kind;
    if (ident_start(c)) {
      while (i < src.size() && ident_char(static_cast<unsigned char>(src[i]))) ++i;
      kind = Tok::Ident;
    } else if (digit(c)) {
      while (i < src.size() && (ident_char(static_cast<unsigned char>(src[i])) && src[i] != '.'))
        ++i;
      kind = Tok::Number;
    } else if (c == '%') {
      ++i;
      while (i < src.size() && ident_char(static_cast<unsigned char>(src[i]))) ++i;
      kind = Tok::Special;
    } else {
      ++i;
      switch (c) {
        case ',':
          kind = Tok::Comma;
          break;
        case ':':
          kind = Tok::Colon;
          break;
        case '[':
          kind = Tok::LBrack;
          break;
        case ']':
          kind = Tok::RBrack;
          break;
        case '(':
          kind = Tok::LParen;
          break;
        case ')':
          kind = Tok::RParen;
          break;
        case '+':
          kind = Tok::Plus;
          break;
        case '-':
          kind = Tok::Minus;
          break;
        case '*':
          kind = Tok::Star;
          break;
        case '!':
          kind = Tok::Bang;
          break;
        case '=':
          kind = Tok::Equals;
          break;
        default:
          kind = Tok::Error;
          break;
      }
    }
    push(kind, start, i - start);
    col += static_cast<uint32_t>(i - start);
  }
  if (out.empty() || out.back().kind != Tok::Newline) push(Tok::Newline, i, 0);
  push(Tok::Eof, i, 0);
  return out;
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::Newline:
      return "end of line";
    case Tok::Eof:
      return "end of file";
    case Tok::Error: {
      unsigned char c = t.text.empty() ? 0 : static_cast<unsigned char>(t.text[0]);
      if (c >= 0x20 && c < 0x7f) return std::string("character '") + static_cast<char>(c) + "'";
      char buf[16];
      std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
      return buf;
    }
    default: {
      std::string s(t.text.substr(0, 40));
      return "'" + s + (t.text.size() > 40 ? "...'" : "'");
    }
  }
}

}  // namespace simt::text
