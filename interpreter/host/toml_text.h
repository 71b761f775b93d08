// Reading TOML text (launch configurations, test headers, runner descriptions) with
// Debian's toml11 v3, guarded against the inputs on which that library misbehaves
// (found by fuzz/fuzz_protocol): bytes that are not UTF-8 inside a literal string
// (out-of-bounds read), a key path through an empty array such as `a = []` then
// `[a.b]` (null dereference), and deep nesting of arrays (stack overflow). Every
// problem, toml11's own syntax errors included, comes back as a line and a message.
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

// Arrays and inline tables may nest this deep.
inline constexpr uint32_t kMaxTomlNesting = 32;

// Parses `text` (named `name` in toml11's messages).
std::variant<toml::value, TomlError> parse_toml(std::string_view text, const std::string& name);

// trap.host.toml: the array `host` of a parsed document (a test header's or a host
// file's): every element a table. `name` and `line_offset` locate errors and the
// steps (a test header starts below line 1 of its file).
std::optional<TomlError> host_from_toml(const toml::value& array, const std::string& name,
                                        uint32_t line_offset, std::vector<syntax::HostStep>& out);

}  // namespace simt::host
