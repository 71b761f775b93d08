#include "isa/doc.h"

#include "isa/isa.h"

namespace simt::doc {

namespace {
std::string escape_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}
}  // namespace

std::string instruction_table() {
  std::string out =
      "| mnemonic | operands | family | feature | clause | summary |\n"
      "|---|---|---|---|---|---|\n";
  static constexpr const char* kFamilies[] = {"unary",  "binary", "compare", "select",
                                              "pred",   "load",   "store",   "ballot",
                                              "vote",   "readlane", "shuffle", "control"};
  for (const auto& row : isa::table()) {
    std::string ops;
    for (auto k : row.sig.view()) {
      if (!ops.empty()) ops += ", ";
      ops += isa::operand_kind_name(k);
    }
    out += "| `" + std::string(row.mnemonic) + "` | " + (ops.empty() ? "" : "`" + ops + "`") + " | " +
           kFamilies[static_cast<size_t>(row.family)] + " | " +
           std::string(isa::feature_name(row.feature)) + " | `" + std::string(row.clause) + "` | " +
           escape_cell(row.summary) + " |\n";
  }
  return out;
}

std::string special_table() {
  std::string out = "| register | per-lane | writable | clause | meaning |\n|---|---|---|---|---|\n";
  for (const auto& s : isa::specials())
    out += "| `%" + std::string(s.name) + "` | " + (s.per_lane ? "yes" : "no") + " | " +
           (s.writable ? "yes" : "no") + " | `" + std::string(s.clause) + "` | " +
           escape_cell(s.summary) + " |\n";
  return out;
}

std::string event_table() {
  std::string out = "| code | name |\n|---|---|\n";
  for (auto e : isa::all_events())
    out += "| " + std::to_string(static_cast<int>(e)) + " | `" + std::string(isa::event_name(e)) + "` |\n";
  return out;
}

}  // namespace simt::doc
