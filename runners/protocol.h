// The process protocol (spec/runner.md, runner.protocol.*): JSON lines between
// the harness and an implementation. Used by the process runner (client side),
// by `simtspec serve` and by the test-only faulty implementation (server side).
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.h"
#include "runner.h"

namespace simt::runners {

inline constexpr const char* kProtocol = "simtspec-runner/1";
// runner.protocol.version: a request carrying a host script (trap.host.toml) names
// 1.1; an implementation of 1.1 accepts requests of both versions.
inline constexpr const char* kProtocol11 = "simtspec-runner/1.1";
// A request carrying `image` or `restore` (preempt.image.*) names 1.2; an
// implementation of 1.2 accepts requests of all three versions.
inline constexpr const char* kProtocol12 = "simtspec-runner/1.2";

// runner.protocol.request `restore`, response `image`: bytes as base64 (RFC 4648,
// with padding). decode gives nothing for text that is not that.
std::string base64_encode(const std::vector<uint8_t>& bytes);
std::optional<std::vector<uint8_t>> base64_decode(std::string_view text);

json::Value request_json(const RunRequest& req, int64_t id);
std::string request_line(const RunRequest& req, int64_t id);
std::string shutdown_line();

// Server side: one parsed request.
struct ServerRequest {
  enum class Op { Run, Shutdown } op = Op::Run;
  int64_t id = 0;
  RunRequest req;
};
std::variant<ServerRequest, std::string> parse_request_line(const std::string& line);
// A result as JSON: the outcome's fields, or status "rejected"/"error" with the
// message (and the line of a rejection). Shared by responses and results records.
json::Value result_json(const RunResult& r);
// The protocol response: "id", then result_json's fields, then any trace.
json::Value response_json(const RunResult& r, int64_t id);

// Reads requests from `in` until end of input or shutdown, answering each on `out`
// (flushed per line). Malformed requests get {"status":"error"} answers.
void serve(std::istream& in, std::ostream& out,
           const std::function<RunResult(const RunRequest&)>& run);

// Client side: turns one response line into a RunResult (Error on any violation).
RunResult parse_response_line(const std::string& line, int64_t expected_id);

}  // namespace simt::runners
