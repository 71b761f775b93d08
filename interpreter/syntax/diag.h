// Located diagnostics: every problem with the input is reported as
// `file:line:col: message` (spec/syntax.md, syntax.errors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simt::syntax {

// A position in the source text. Lines and columns count from 1; col counts bytes.
struct Span {
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t len = 0;
  bool operator==(const Span&) const = default;
};

enum class DiagKind : uint8_t { Syntax, Invalid, Config };

struct Diagnostic {
  DiagKind kind = DiagKind::Syntax;
  Span span;
  std::string message;
  // The spec clause the input breaks, where one names it (every validation error
  // does, valid.report); printed after the message in parentheses.
  std::string clause;
  // Where the input came from when it is not the program text (a host script's
  // file, trap.host.toml): printed instead of the program's file name.
  std::string origin;
};

class Diagnostics {
 public:
  void add(DiagKind kind, Span span, std::string message, std::string clause = {},
           std::string origin = {});
  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  const std::vector<Diagnostic>& list() const { return list_; }
  // All diagnostics, one per line, as `file:line:col: message`, sorted by position.
  std::string format(const std::string& file) const;
  // The first diagnostic by position (syntax.errors); the list must not be empty.
  const Diagnostic& first() const;
  static constexpr size_t kMaxReported = 100;

 private:
  std::vector<Diagnostic> list_;
};

std::string format_diag(const std::string& file, const Diagnostic& d);

}  // namespace simt::syntax
