// The standard trap-handler library (suites/lib/*.simtlib): programs that use a
// library handler copy it verbatim between the lines
//   ; --- begin lib/NAME.simtlib ---
//   ; --- end lib/NAME.simtlib ---
// This test finds every such region in suites/**/*.simt and examples/*.simt and
// checks that it is, byte for byte, the library file it names, and that every
// library file is copied at least once (so none is left untested).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBegin = "; --- begin lib/";
constexpr std::string_view kEnd = "; --- end lib/";
constexpr std::string_view kClose = " ---";

// One marked region of a program file.
struct Copy {
  std::string file;     // the program, relative to the source tree
  size_t line = 0;      // line of its begin marker, from 1
  std::string library;  // NAME.simtlib
  std::string text;     // the bytes between the two marker lines
};

// The library name of a marker line (`; --- begin lib/NAME ---`), or "".
std::string marker_name(std::string_view line, std::string_view prefix) {
  if (!line.starts_with(prefix) || !line.ends_with(kClose)) return "";
  line.remove_prefix(prefix.size());
  line.remove_suffix(kClose.size());
  return std::string(line);
}

// The regions of one file; malformed markers (an end without a begin, a begin
// without its end, a begin inside a region, an end naming another library) are
// test failures.
std::vector<Copy> copies_in(const fs::path& path, const std::string& shown) {
  std::vector<Copy> out;
  const std::string text = test::read_all(path);
  std::optional<Copy> open;
  size_t region_start = 0;  // offset in `text` of the open region's first byte
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    const size_t eol = nl == std::string::npos ? text.size() : nl;
    const size_t next = nl == std::string::npos ? text.size() : nl + 1;
    const std::string_view line(text.data() + at, eol - at);
    ++line_no;
    if (std::string begin = marker_name(line, kBegin); !begin.empty()) {
      EXPECT_FALSE(open) << shown << ":" << line_no << ": begin marker inside the region of lib/"
                         << (open ? open->library : "");
      open = Copy{shown, line_no, begin, ""};
      region_start = next;
    } else if (std::string end = marker_name(line, kEnd); !end.empty()) {
      if (!open) {
        ADD_FAILURE() << shown << ":" << line_no << ": end marker without a begin marker";
      } else {
        EXPECT_EQ(end, open->library)
            << shown << ":" << line_no << ": the end marker names another library than line "
            << open->line;
        open->text = text.substr(region_start, at - region_start);
        out.push_back(*open);
        open.reset();
      }
    }
    at = next;
  }
  if (open)
    ADD_FAILURE() << shown << ":" << open->line << ": lib/" << open->library << " is never closed";
  return out;
}

// Every program of the suites and the examples, relative path -> full path.
std::map<std::string, fs::path> programs() {
  std::map<std::string, fs::path> out;
  const fs::path root = test::source_path("");
  for (const auto& e : fs::recursive_directory_iterator(test::source_path("suites")))
    if (e.is_regular_file() && e.path().extension() == ".simt")
      out[fs::relative(e.path(), root).generic_string()] = e.path();
  for (const auto& e : fs::directory_iterator(test::source_path("examples")))
    if (e.is_regular_file() && e.path().extension() == ".simt")
      out[fs::relative(e.path(), root).generic_string()] = e.path();
  return out;
}

// Line and column (from 1) of the first byte where two texts differ.
std::string first_difference(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t line = 1 + static_cast<size_t>(std::count(a.begin(), a.begin() + i, '\n'));
  size_t bol = a.rfind('\n', i == 0 ? 0 : i - 1);
  size_t col = i - (bol == std::string_view::npos || i == 0 ? 0 : bol + 1) + 1;
  return "line " + std::to_string(line) + " of the library, column " + std::to_string(col);
}

TEST(TrapLibrary, CopiesMatchTheLibrary) {
  // The library files.
  std::map<std::string, std::string> library;  // NAME.simtlib -> contents
  for (const auto& e : fs::directory_iterator(test::source_path("suites/lib")))
    if (e.is_regular_file() && e.path().extension() == ".simtlib")
      library[e.path().filename().string()] = test::read_all(e.path());
  ASSERT_GE(library.size(), 3u) << "suites/lib should hold the handler library";
  for (const char* name : {"record.simtlib", "sysalloc.simtlib", "dump_pause.simtlib"})
    EXPECT_TRUE(library.count(name)) << "suites/lib/" << name << " is missing";

  std::map<std::string, size_t> uses;
  for (const auto& [shown, path] : programs()) {
    for (const Copy& c : copies_in(path, shown)) {
      auto lib = library.find(c.library);
      if (lib == library.end()) {
        ADD_FAILURE() << c.file << ":" << c.line << ": copies lib/" << c.library
                      << ", which is not in suites/lib";
        continue;
      }
      ++uses[c.library];
      EXPECT_TRUE(c.text == lib->second)
          << c.file << ":" << c.line << ": the copy of lib/" << c.library
          << " differs from suites/lib/" << c.library << " at "
          << first_difference(lib->second, c.text) << " (" << c.text.size() << " bytes copied, "
          << lib->second.size() << " in the library)";
    }
  }
  for (const auto& [name, text] : library)
    EXPECT_GT(uses[name], 0u) << "suites/lib/" << name << " is not copied by any test or example";
}

// The scanner itself: a region is the bytes between the marker lines; a missing
// or stray end marker is a failure; a changed byte is located.
fs::path scratch_dir() {
  return fs::temp_directory_path() / ("simtspec_trap_lib_test_" + std::to_string(::getpid()));
}

fs::path scratch_file(std::string_view text) {
  const fs::path dir = scratch_dir();
  fs::create_directories(dir);
  const fs::path f = dir / "t.simt";
  test::write_all(f, text);
  return f;
}

void scan_unclosed() {
  copies_in(scratch_file("; --- begin lib/x.simtlib ---\nA:\n    tret\n"), "t.simt");
}

void scan_stray_end() {
  copies_in(scratch_file("    exit\n; --- end lib/x.simtlib ---\n"), "t.simt");
}

TEST(TrapLibrary, ScannerFindsRegionsAndDifferences) {
  auto found = copies_in(scratch_file("    nop\n; --- begin lib/x.simtlib ---\nA:\n    tret\n"
                                      "; --- end lib/x.simtlib ---\n    exit\n"),
                         "t.simt");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].library, "x.simtlib");
  EXPECT_EQ(found[0].line, 2u);
  EXPECT_EQ(found[0].text, "A:\n    tret\n");
  EXPECT_EQ(first_difference("A:\n    tret\n", "A:\n    tpause\n"),
            "line 2 of the library, column 6");
  EXPECT_NONFATAL_FAILURE(scan_unclosed(), "is never closed");
  EXPECT_NONFATAL_FAILURE(scan_stray_end(), "end marker without a begin marker");
  fs::remove_all(scratch_dir());
}

}  // namespace
}  // namespace simt
