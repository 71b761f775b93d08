#include "isa/doc.h"

#include <iterator>

#include "isa/isa.h"

namespace simt::doc {

namespace {
std::string escape_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string instruction_table() {
  std::string out =
      "| mnemonic | operands | family | feature | control | mode | clause | summary |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : isa::table()) {
    // Operands are named by kind; sources are lettered A, B, C and predicates
    // P, Q in the order they appear, as the spec chapters name them.
    std::string ops;
    char src = 'A', prd = 'P';
    for (auto k : row.sig.view()) {
      if (!ops.empty()) ops += ", ";
      std::string name(isa::operand_kind_name(k));
      if (k == isa::OperandKind::Src)
        name = std::string(1, src++);
      else if (k == isa::OperandKind::VSrc)
        name = std::string("v") + src++;
      else if (k == isa::OperandKind::Pred)
        name = std::string(1, prd++);
      ops += name;
    }
    out += "| `" + std::string(row.mnemonic) + "` | " + (ops.empty() ? "" : "`" + ops + "`") +
           " | " + std::string(isa::family_name(row.family)) + " | " +
           std::string(isa::feature_name(row.feature)) + " | " +
           std::string(isa::control_name(row.control)) + " | " +
           std::string(isa::mode_name(row.mode)) + " | `" + std::string(row.clause) + "` | " +
           escape_cell(row.summary) + " |\n";
  }
  return out;
}

std::string special_table() {
  std::string out =
      "| register | per-lane | writable | clause | meaning |\n|---|---|---|---|---|\n";
  for (const auto& s : isa::specials())
    out += "| `%" + std::string(s.name) + "` | " + (s.per_lane ? "yes" : "no") + " | " +
           (s.writable ? "yes" : "no") + " | `" + std::string(s.clause) + "` | " +
           escape_cell(s.summary) + " |\n";
  return out;
}

std::string event_table() {
  std::string out = "| code | name |\n|---|---|\n";
  for (auto e : isa::all_events())
    out += "| " + std::to_string(static_cast<int>(e)) + " | `" + std::string(isa::event_name(e)) +
           "` |\n";
  return out;
}

}  // namespace simt::doc
