// The spec is the source of truth: these tests fail when the spec's generated
// tables drift from the instruction table, when a clause id is cited (by the
// table, the code or the spec itself) but not defined, or defined twice.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "isa/doc.h"
#include "isa/isa.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;

std::string between(const std::string& text, const std::string& table) {
  std::string begin = "<!-- BEGIN " + table + " -->\n", end = "<!-- END " + table + " -->";
  size_t a = text.find(begin), b = text.find(end);
  if (a == std::string::npos || b == std::string::npos || b < a) return "<markers missing>";
  return text.substr(a + begin.size(), b - a - begin.size());
}

// Clause ids defined in the spec: a paragraph starting with **[id]**.
std::map<std::string, std::string> defined_clauses() {
  std::map<std::string, std::string> out;
  std::regex def(R"(^\*\*\[([a-z0-9_]+(\.[a-z0-9_]+)+)\]\*\*)");
  for (const auto& e : fs::directory_iterator(test::source_path("spec"))) {
    if (e.path().extension() != ".md") continue;
    std::istringstream in(test::read_all(e.path()));
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, def)) {
        auto [it, fresh] = out.emplace(m[1].str(), e.path().filename().string());
        EXPECT_TRUE(fresh) << "clause " << m[1] << " defined twice (" << it->second << ", "
                           << e.path().filename() << ")";
      }
    }
  }
  return out;
}

const std::regex& citation_re() {
  static const std::regex re(
      R"(\b((state|syntax|exec|event|alu|mem|xlane|bar|branch|valid|format|runner|results|oracle|atom|trap|wave|preempt)(\.[a-z0-9_]+)+)(\.\*)?)");
  return re;
}

TEST(SpecTable, InstructionListMatchesTable) {
  std::string spec = test::read_all(test::source_path("spec/instructions.md"));
  EXPECT_EQ(between(spec, "instructions"), doc::instruction_table())
      << "spec/instructions.md is out of date: run tests/update_spec_tables.sh";
  EXPECT_EQ(between(spec, "specials"), doc::special_table());
  EXPECT_EQ(between(spec, "events"), doc::event_table());
}

TEST(SpecClauses, TableCitesDefinedClauses) {
  auto defined = defined_clauses();
  ASSERT_GT(defined.size(), 50u);
  for (const auto& row : isa::table())
    EXPECT_TRUE(defined.count(std::string(row.clause)))
        << row.mnemonic << " cites undefined clause " << row.clause;
  for (const auto& s : isa::specials())
    EXPECT_TRUE(defined.count(std::string(s.clause))) << "%" << s.name << " cites " << s.clause;
}

TEST(SpecClauses, EveryEventIsSpecified) {
  std::string events = test::read_all(test::source_path("spec/events.md"));
  for (auto e : isa::all_events()) {
    std::string row = "| " + std::to_string(static_cast<int>(e)) + " | `" +
                      std::string(isa::event_name(e)) + "` |";
    EXPECT_NE(events.find(row), std::string::npos) << "spec/events.md lacks " << row;
  }
}

// Every clause id mentioned in the spec's own text and in the code exists.
TEST(SpecClauses, CitationsInSpecAndCodeAreDefined) {
  auto defined = defined_clauses();
  std::set<std::string> prefixes;  // for wildcard citations like exec.sched.*
  for (const auto& [id, file] : defined) {
    for (size_t p = id.find('.'); p != std::string::npos; p = id.find('.', p + 1))
      prefixes.insert(id.substr(0, p));
  }
  auto check_file = [&](const fs::path& p) {
    // Only comments cite clauses; code like `st_.mem.hash` does not.
    std::string text;
    std::istringstream in(test::read_all(p));
    for (std::string line; std::getline(in, line);) {
      size_t c = line.find("//");
      if (c != std::string::npos) text += line.substr(c) + "\n";
    }
    for (std::sregex_iterator it(text.begin(), text.end(), citation_re()), end; it != end; ++it) {
      std::string id = (*it)[1].str();
      bool wildcard = (*it)[4].matched;
      // Skip things that are not citations: file names (alu.md) and code like exec.sched.
      if (id.ends_with(".md") || id.ends_with(".h") || id.ends_with(".cpp")) continue;
      if (wildcard) {
        EXPECT_TRUE(prefixes.count(id) || defined.count(id))
            << p.filename() << " cites " << id << ".* but no clause starts with it";
      } else {
        EXPECT_TRUE(defined.count(id)) << p.filename() << " cites undefined clause " << id;
      }
    }
  };
  for (const auto& e : fs::directory_iterator(test::source_path("spec")))
    if (e.path().extension() == ".md") {
      // In the spec only bracketed references count: [alu.add].
      std::string text = test::read_all(e.path());
      std::regex ref(
          R"(\[((state|syntax|exec|event|alu|mem|xlane|bar|branch|valid|format|runner|results|oracle|atom|trap|wave|preempt)(\.[a-z0-9_]+)+)\])");
      for (std::sregex_iterator it(text.begin(), text.end(), ref), end; it != end; ++it)
        EXPECT_TRUE((*it)[1].str().ends_with(".md") || defined.count((*it)[1].str()))
            << e.path().filename() << " refers to undefined clause " << (*it)[1];
    }
  for (const auto& e : fs::recursive_directory_iterator(test::source_path("interpreter"))) {
    auto ext = e.path().extension();
    if (ext == ".h" || ext == ".cpp" || ext == ".def") check_file(e.path());
  }
}

}  // namespace
}  // namespace simt
