// Conformance test files (spec/testformat.md): header parsing, matrix expansion,
// discovery.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "syntax/ast.h"

#include "expr.h"
#include "host/host.h"
#include "json.h"
#include "runner.h"

namespace simt::harness {

// Launch settings a matrix entry overrides (format.matrix): one field per row of
// exec/settings.def that a matrix may vary, as written.
struct Settings {
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, ...) \
  SIMT_SETTING_IF_##mx(std::optional<exec::SettingWritten<exec::SettingType::T>> name;)
#include "exec/settings.def"
  std::string key() const;  // "wave=32,policy=random"
  json::Value to_json() const;
  // As command-line overrides of the program's directives (state.launch.sources);
  // an unknown policy name is left out (the caller reports it).
  host::Overrides overrides() const;
  // The settings as a protocol request's config (the policy as written).
  runners::RunConfig request() const;
};

struct BufferExpect {
  std::string name;
  std::optional<std::vector<int64_t>> values;
  std::optional<Expr> each;
};

// An event field: an integer, an expression, or (for space) a string.
struct EventField {
  std::string key;
  std::optional<int64_t> value;
  std::optional<Expr> expr;
  std::string text;  // for `space`; for `lane`, "none" when the event must carry no lane
};

// format.expect.image, format.restore: a context image given sparsely: its size
// and 32-bit little-endian words at byte offsets; every other byte 0 (restore), or
// not checked unless `rest` is given (expect.image).
struct ImageWords {
  uint64_t size = 0;
  std::vector<std::pair<uint64_t, uint32_t>> words;  // by offset, ascending
  std::optional<uint8_t> rest;                       // expect.image: every other byte
  // The bytes (restore): zeros with the words written in.
  std::vector<uint8_t> bytes() const;
};

struct Expectation {
  std::string status;  // an outcome status or "rejected"
  std::optional<std::string> event_name;
  std::vector<EventField> event_fields;
  std::optional<uint32_t> line;  // rejected: expected line of the first error
  std::vector<BufferExpect> buffers;
  std::optional<ImageWords> image;  // format.expect.image
  std::optional<uint64_t>
      image_offset;  // rejected: a restore's first bad byte (preempt.image.check)
  json::Value raw;   // as written, for reports
};

struct TestFile {
  std::string path;
  std::string source;  // the whole file
  // The program sets `.max_steps` itself (else the harness cap applies, format.matrix).
  bool sets_max_steps = false;
  uint64_t max_steps = 0;       // its value, when it does
  uint32_t max_steps_line = 0;  // and the line of the directive (format.lint.steps)
  // format.validate: false runs the program without the flow checks.
  bool validate = true;
  uint32_t header_lines = 0;
  std::string id, title;
  std::vector<std::string> clauses, features, required;
  std::vector<uint32_t> clause_lines;  // the line of each entry of `clauses`
  std::vector<Settings> configs;       // the expanded matrix (at least one)
  Expectation expect;
  std::vector<syntax::HostStep> host;  // trap.host.toml: `[[host]]`
  std::optional<ImageWords> restore;   // format.restore: start from this image (preempt.flow.c)
  bool generated = false;
  json::Value origin;
  uint32_t id_line = 0;                          // line of the id key, for duplicate reports
  uint32_t expect_line = 1;                      // line of [expect] (format.lint)
  std::map<std::string, uint32_t> matrix_lines;  // [matrix] key -> its line
  // The line of [matrix] key `k` (format.lint), else the header's first line.
  uint32_t matrix_line(const std::string& k) const {
    auto it = matrix_lines.find(k);
    return it == matrix_lines.end() || it->second == 0 ? 1 : it->second;
  }
};

struct FormatError {
  uint32_t line = 0;  // 0: the file as a whole
  std::string message;
};

struct NotATest {};

inline constexpr const char* kMagic = "; simtspec-test";
const std::set<std::string>& known_features();
const std::set<std::string>& known_statuses();

// Parses a test file. Checks the header's shape and expressions; clause ids and
// cross-file uniqueness are checked by lint (they need the spec and the suite).
std::variant<TestFile, std::vector<FormatError>, NotATest> parse_test(const std::string& path,
                                                                      const std::string& text);

// Every *.simt file under the paths (files are taken as given), sorted.
std::vector<std::string> discover(const std::vector<std::string>& paths, std::string& error);

}  // namespace simt::harness
