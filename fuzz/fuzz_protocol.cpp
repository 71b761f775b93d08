// libFuzzer target: the process protocol and runner descriptions (spec/runner.md) on
// arbitrary bytes. The first byte picks what the rest is (its value modulo 3, so
// the seed files start with the digit '0', '1' or '2'):
//
//   0  standard input of `simtspec serve` (runner.serve): request lines, answered
//      by the reference with steps capped at 10 000; every answer must be one JSON
//      object that the harness's own client accepts (no protocol violation), and
//      there is exactly one answer per non-empty line before a shutdown;
//   1  one response line as the harness reads it (runner.protocol.response): it
//      becomes an outcome, a rejection or an error, and an outcome or rejection
//      written back as a response reads back the same;
//   2  a runner description (runner.toml): it is read or refused with a message
//      that starts with the file name.
//
// Any crash, sanitizer report or __builtin_trap() is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "exec/config.h"
#include "json.h"
#include "process.h"
#include "protocol.h"
#include "reference.h"

namespace {

using simt::runners::RunRequest;
using simt::runners::RunResult;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// The reference behind the protocol, bounded: at most 10 000 steps, and launches
// needing more than 32 MiB are loaded but not run.
RunResult bounded_run(const RunRequest& in) {
  RunRequest req = in;
  req.config.max_steps = std::min<uint64_t>(req.config.max_steps.value_or(10000), 10000);
  auto loaded = simt::runners::load_request(req);
  if (auto* rejected = std::get_if<RunResult>(&loaded)) return *rejected;
  const auto& prog = std::get<0>(loaded);
  uint64_t bytes = simt::exec::state_bytes(prog->config);
  for (const auto& b : prog->buffers) bytes += b.bytes;
  if (bytes > (uint64_t{32} << 20)) {
    RunResult r;
    r.kind = RunResult::Kind::Error;
    r.message = "launch too large for the fuzzer";
    return r;
  }
  return simt::runners::run_loaded(prog, req.trace);
}

void fuzz_serve(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::ostringstream out;
  simt::runners::serve(in, out, bounded_run);
  // Expected answers: one per non-empty line (CR LF tolerated) up to a shutdown.
  size_t expected = 0;
  {
    std::istringstream again{std::string(text)};
    std::string line;
    while (std::getline(again, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      auto req = simt::runners::parse_request_line(line);
      if (auto* r = std::get_if<simt::runners::ServerRequest>(&req);
          r && r->op == simt::runners::ServerRequest::Op::Shutdown)
        break;
      ++expected;
    }
  }
  std::istringstream answers(out.str());
  std::string line;
  size_t n = 0;
  while (std::getline(answers, line)) {
    ++n;
    auto parsed = simt::json::parse(line);
    check(std::holds_alternative<simt::json::Value>(parsed));
    const auto& v = std::get<simt::json::Value>(parsed);
    check(v.is_object());
    const auto* id = v.find("id");
    check(id && id->is_int());
    RunResult r = simt::runners::parse_response_line(line, id->as_int());
    check(r.kind != RunResult::Kind::Error || r.message.rfind("protocol violation", 0) != 0);
  }
  check(n == expected);
}

void fuzz_response(std::string_view text) {
  const std::string line(text);
  RunResult r = simt::runners::parse_response_line(line, 7);
  // A line that is not JSON is a protocol violation, so an error. (The message of
  // a well-formed rejection is the implementation's own text and may say anything,
  // "protocol violation" included: a finding of this target.)
  if (!std::holds_alternative<simt::json::Value>(simt::json::parse(line)))
    check(r.kind == RunResult::Kind::Error);
  if (r.kind == RunResult::Kind::Error) {
    check(!r.message.empty());
    return;
  }
  const std::string back = simt::json::dump(simt::runners::response_json(r, 7));
  RunResult again = simt::runners::parse_response_line(back, 7);
  check(again.kind == r.kind);
  check(again.line == r.line);
  if (r.kind == RunResult::Kind::Outcome) {
    check(again.outcome.status == r.outcome.status);
    check(again.outcome.event == r.outcome.event);
    check(again.outcome.buffers.size() == r.outcome.buffers.size());
    for (size_t i = 0; i < r.outcome.buffers.size(); ++i)
      check(again.outcome.buffers[i].values == r.outcome.buffers[i].values);
  }
}

void fuzz_description(std::string_view text) {
  const std::string file = "/nonexistent-simtspec-fuzz/runner.toml";
  auto r = simt::runners::parse_process_spec(std::string(text), file);
  if (auto* err = std::get_if<std::string>(&r)) {
    check(err->rfind(file, 0) == 0);
    return;
  }
  const auto& spec = std::get<simt::runners::ProcessSpec>(r);
  check(!spec.command.empty());
  check(spec.timeout > 0 && spec.timeout <= 3600);
  (void)spec.caps.missing({"wave:32", "simd:32", "warps:4", "policy:round_robin", "feature:alu",
                           "instr:add", "validate"});
  (void)simt::json::dump(spec.caps.to_json());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      fuzz_serve(rest);
      break;
    case 1:
      fuzz_response(rest);
      break;
    default:
      fuzz_description(rest);
      break;
  }
  return 0;
}
