// libFuzzer target: conformance test files (spec/testformat.md) on arbitrary bytes:
// the TOML header (format.header), its matrix (format.matrix), its expectations
// (format.expect.*, format.expr) and its `[[host]]` script (trap.host.toml). Every
// input is either not a test file, or refused with errors that each have a message
// and a line inside the file (0: the file as a whole), or read into a test whose
// fields keep their documented bounds. A test that is read is then run on the
// reference for its first configuration (steps capped at 1 000, launches over
// 4 MiB loaded but not run: this target is for the header, fuzz_parser for the
// program), and its expectation is checked against that outcome as the harness
// does: the verdict must be consistent (a failure says why). Any crash, sanitizer
// report or __builtin_trap() is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compare.h"
#include "exec/config.h"
#include "format.h"
#include "reference.h"

namespace {

using simt::harness::FormatError;
using simt::harness::TestFile;
using simt::runners::RunRequest;
using simt::runners::RunResult;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// The reference on one configuration, bounded; the layout the
// harness compares with (the output buffers' lengths and the launch shape).
RunResult bounded_run(const RunRequest& in, simt::harness::Layout& layout) {
  RunRequest req = in;
  req.config.max_steps = std::min<uint64_t>(req.config.max_steps.value_or(1000), 1000);
  auto loaded = simt::runners::load_request(req);
  if (auto* rejected = std::get_if<RunResult>(&loaded)) return *rejected;
  const auto& prog = std::get<0>(loaded);
  const auto& c = prog->config;
  layout.wave = c.wave;
  layout.simd = c.simd_width();
  layout.warps = c.warps;
  layout.workgroups = c.workgroups;
  layout.cores = c.cores;
  uint64_t bytes = simt::exec::state_bytes(c);
  for (const auto& b : prog->buffers) {
    bytes += b.bytes;
    if (b.mode != simt::syntax::BufferMode::In) layout.buffer_len[b.name] = b.count;
  }
  if (bytes > (uint64_t{4} << 20)) {
    RunResult r;
    r.kind = RunResult::Kind::Error;
    r.message = "launch too large for the fuzzer";
    return r;
  }
  return simt::runners::run_loaded(prog, false);
}

void check_test(const TestFile& t, uint32_t lines) {
  check(t.header_lines >= 1 && t.header_lines <= lines);
  check(!t.id.empty() && !t.title.empty());
  check(!t.configs.empty() && t.configs.size() <= 4096);  // format.matrix
  check(simt::harness::known_statuses().count(t.expect.status) == 1);
  for (const auto& h : t.host) {  // trap.host.toml: located in the header
    check(h.origin == t.path);
    check(h.span.line >= 2 && h.span.line <= t.header_lines);
  }
  // The harness's comparison on the reference's outcome, for the first
  // configuration of the matrix.
  RunRequest req;
  req.program = t.source;
  req.config = t.configs[0].request();
  req.validate = t.validate;
  req.host = t.host;
  simt::harness::Layout layout;
  const RunResult actual = bounded_run(req, layout);
  if (actual.kind == RunResult::Kind::Error) return;
  const auto v = simt::harness::check_expectation(t.expect, actual, layout);
  check(v.ok || !v.message.empty());
  // runner.firstdiff: a failure names the first difference, unless an expression
  // of the expectation could not be evaluated (division by zero, format.expr),
  // which the message names.
  check(v.ok == v.first_diff.is_null() || (!v.ok && v.message.rfind("expect.", 0) == 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz/case.simt";
  const uint32_t lines = static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = simt::harness::parse_test(path, text);
  if (auto* errs = std::get_if<std::vector<FormatError>>(&r)) {
    check(!errs->empty());
    for (const auto& e : *errs) {
      check(!e.message.empty());
      check(e.line <= lines);
    }
  } else if (auto* t = std::get_if<TestFile>(&r)) {
    check_test(*t, lines);
  }
  return 0;
}
