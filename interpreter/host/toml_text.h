// Reading TOML text (launch configurations, test headers, runner descriptions, host
// scripts; spec/testformat.md, format.toml) with Debian's toml11 v3, guarded against
// the inputs on which that library misbehaves: bytes that are not UTF-8 inside a
// literal string (out-of-bounds read), a key path through an empty array such as
// `a = []` then `[a.b]` (null dereference), deep nesting of arrays, inline tables or
// dotted keys (stack overflow), and long lines (toml11 scans a value's whole line for
// comments, so a line holding n values costs n times its length: the text toml11
// reads has a line break after each comma of an array, and inline tables, which
// cannot span lines, hold at most kMaxInlineKeys keys). Every problem, toml11's own
// syntax errors included, comes back as a line and a message; a key defined twice is
// reported at the second definition, naming the first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <toml.hpp>
#include <variant>
#include <vector>

#include "syntax/ast.h"

namespace simt::host {

struct Utf8Problem {
  uint32_t line = 0;
  uint8_t byte = 0;
  std::string message() const;  // "not UTF-8 (byte 0xff)"
};
// The 1-based line and the first byte of the first sequence that is not well-formed
// UTF-8 (Unicode table 3-7: no overlong forms, surrogates or values above U+10FFFF).
std::optional<Utf8Problem> first_invalid_utf8(std::string_view text);

struct TomlError {
  uint32_t line = 0;  // 0 if unknown
  std::string message;
};

// format.toml: arrays and inline tables may nest this deep; a key (dotted, or a
// table header's) has at most this many parts; an inline table holds at most
// kMaxInlineKeys keys, counting those of the inline tables inside it.
inline constexpr uint32_t kMaxTomlNesting = 32;
inline constexpr uint32_t kMaxKeyParts = 32;
inline constexpr uint32_t kMaxInlineKeys = 256;

class TomlDoc;
// Parses `text`, whose first line is line `first_line` of its file (a test header
// starts on line 2): every line reported, in TomlError, in its message and by
// TomlDoc::line, counts from there.
std::variant<TomlDoc, TomlError> parse_toml(std::string_view text, uint32_t first_line = 1);

// A parsed document, and the lines of the text its values came from.
class TomlDoc {
 public:
  toml::value root;
  // The line of the text (counting from the first_line given to parse_toml) on which
  // `v` starts; 0 if toml11 did not record where (a value a tool built). Takes
  // logarithmic time: toml11's own v.location() counts the lines of the text before
  // `v` at every call.
  uint32_t line(const toml::value& v) const;

 private:
  friend std::variant<TomlDoc, TomlError> parse_toml(std::string_view, uint32_t);
  // Where the text's own line breaks are in the text toml11 read (which has more).
  std::vector<size_t> breaks_;
  uint32_t first_line_ = 1;
};

// trap.host.toml: the array `host` of a parsed document (a test header's or a host
// file's): every element a table. `name` locates the steps.
std::optional<TomlError> host_from_toml(const TomlDoc& doc, const toml::value& array,
                                        const std::string& name,
                                        std::vector<syntax::HostStep>& out);

}  // namespace simt::host
