// Integer expressions of the test format (spec/testformat.md, format.expr).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace simt::harness {

class Expr {
 public:
  struct Node;
  // Parses; returns an error message on failure.
  static std::variant<Expr, std::string> parse(std::string_view text);
  // Evaluates with the given variables; an error message on division by zero or
  // an unknown variable.
  std::variant<int64_t, std::string> eval(const std::map<std::string, int64_t>& vars) const;
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

// The variables of format.expr for element i of a configuration.
std::map<std::string, int64_t> element_vars(int64_t i, int64_t wave, int64_t simd, int64_t warps,
                                            int64_t workgroups, int64_t cores);
// Moves variables made by element_vars to element i (i, lane, gwarp, warp, wg).
void set_element(std::map<std::string, int64_t>& vars, int64_t i);

}  // namespace simt::harness
