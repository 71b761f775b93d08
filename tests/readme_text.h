// The text of the project's markdown files as the tests that check their figures read
// it (vulkan_runner_test, vortex_translate_test): header-only, for test programs that
// do not link the test support library.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace simt::test_text {

// The file at `path` relative to the source tree ("" when there is none).
inline std::string read_source(const std::string& path) {
  std::ifstream in(std::string(SIMT_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `text` with every run of white space one space (README lines wrap anywhere).
inline std::string words(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

// The `## HEADING...` section of a markdown file, up to the next `## ` heading,
// with white space as words() leaves it; empty (a failure) when there is none.
inline std::string section_of(const std::string& file, const std::string& heading) {
  const std::string text = words(read_source(file));
  const size_t at = text.find("## " + heading);
  if (at == std::string::npos) {
    ADD_FAILURE() << file << " has no section '## " << heading << "'";
    return "";
  }
  const size_t end = text.find(" ## ", at + 3);
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace simt::test_text
