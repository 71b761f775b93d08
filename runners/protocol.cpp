#include "protocol.h"

#include <set>
#include <string_view>

#include <istream>
#include <ostream>

#include "exec/outcome.h"
#include "host/host.h"

namespace simt::runners {

json::Value request_json(const RunRequest& req, int64_t id) {
  json::Value v;
  v["protocol"] = kProtocol;
  v["op"] = "run";
  v["id"] = id;
  v["program"] = req.program;
  v["config"] = req.config.to_json();
  v["trace"] = req.trace;
  if (!req.validate) v["validate"] = false;
  if (!req.host.empty()) {  // trap.host.toml
    v["protocol"] = kProtocol11;
    json::Array host;
    for (const auto& h : req.host) {
      json::Value a;
      a["step"] = h.step;  // up to 2^64 - 1, written in full (trap.host.toml)
      a["action"] = std::string(syntax::host_kind_name(h.kind));
      if (h.kind != syntax::HostKind::BindVtable) {
        if (h.core == syntax::kAllCores)
          a["core"] = "all";
        else
          a["core"] = static_cast<int64_t>(h.core);
      }
      if (h.kind == syntax::HostKind::Interrupt) a["code"] = static_cast<int64_t>(h.code);
      if (h.kind == syntax::HostKind::SingleStep) a["on"] = h.on;
      if (h.kind == syntax::HostKind::BindTba) a["label"] = h.name;
      if (h.kind == syntax::HostKind::BindVtable) a["table"] = h.name;
      if (h.kind == syntax::HostKind::Preempt) {  // preempt.request
        a["flow"] = std::string(h.flow == syntax::PreemptFlow::A ? "A" : "B");
        if (!h.intruder.empty()) a["intruder"] = h.intruder;
      }
      host.push_back(std::move(a));
    }
    v["host"] = std::move(host);
  }
  if (req.image || req.restore) {  // preempt.image.*
    v["protocol"] = kProtocol12;
    if (req.image) v["image"] = true;
    if (req.restore) v["restore"] = base64_encode(*req.restore);
  }
  return v;
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string base64_encode(const std::vector<uint8_t>& b) {
  std::string out;
  out.reserve((b.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= b.size(); i += 3) {
    const uint32_t x = uint32_t{b[i]} << 16 | uint32_t{b[i + 1]} << 8 | b[i + 2];
    for (int k = 3; k >= 0; --k) out += kB64[(x >> (6 * k)) & 63];
  }
  if (const size_t rest = b.size() - i; rest) {
    const uint32_t x = uint32_t{b[i]} << 16 | (rest == 2 ? uint32_t{b[i + 1]} << 8 : 0);
    out += kB64[(x >> 18) & 63];
    out += kB64[(x >> 12) & 63];
    out += rest == 2 ? kB64[(x >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::vector<uint8_t>> base64_decode(std::string_view t) {
  if (t.size() % 4) return std::nullopt;
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(t.size() / 4 * 3);
  for (size_t i = 0; i < t.size(); i += 4) {
    const bool last = i + 4 == t.size();
    const int pad = last ? (t[i + 3] == '=') + (t[i + 2] == '=') : 0;
    if (pad == 1 && t[i + 2] == '=') return std::nullopt;
    uint32_t x = 0;
    for (int k = 0; k < 4; ++k) {
      const int v = k >= 4 - pad ? 0 : val(t[i + static_cast<size_t>(k)]);
      if (v < 0) return std::nullopt;
      x = x << 6 | static_cast<uint32_t>(v);
    }
    out.push_back(static_cast<uint8_t>(x >> 16));
    if (pad < 2) out.push_back(static_cast<uint8_t>(x >> 8));
    if (pad < 1) out.push_back(static_cast<uint8_t>(x));
  }
  return out;
}

std::string request_line(const RunRequest& req, int64_t id) {
  return json::dump(request_json(req, id)) + "\n";
}

std::string shutdown_line() {
  json::Value v;
  v["protocol"] = kProtocol;
  v["op"] = "shutdown";
  return json::dump(v) + "\n";
}

namespace {
// runner.protocol.request: each key of an object at most once (JSON allows
// repeats; the protocol does not, since which one counts would be a guess).
std::optional<std::string> duplicate_key(const json::Value& v) {
  if (!v.is_object()) return std::nullopt;
  std::set<std::string_view> seen;
  for (const auto& [k, x] : v.as_object())
    if (!seen.insert(k).second) return k.substr(0, 60);
  return std::nullopt;
}
}  // namespace

std::variant<ServerRequest, std::string> parse_request_line(const std::string& line) {
  auto parsed = json::parse(line);
  if (auto* e = std::get_if<json::ParseError>(&parsed))
    return "request is not JSON: " + e->message + " at offset " + std::to_string(e->offset);
  const json::Value& v = std::get<json::Value>(parsed);
  if (!v.is_object()) return std::string("request must be a JSON object");
  const json::Value* proto = v.find("protocol");
  if (!proto || !proto->is_string() ||
      (proto->as_string() != kProtocol && proto->as_string() != kProtocol11 &&
       proto->as_string() != kProtocol12))
    return std::string("request needs \"protocol\": \"") + kProtocol + "\", \"" + kProtocol11 +
           "\" or \"" + kProtocol12 + "\"";
  const json::Value* op = v.find("op");
  if (!op || !op->is_string()) return std::string("request needs an \"op\"");
  if (auto dup = duplicate_key(v)) return "duplicate key '" + *dup + "' in the request";
  ServerRequest r;
  const json::Value* id = v.find("id");
  if (id && id->is_int()) r.id = id->as_int();
  if (op->as_string() == "shutdown") {
    r.op = ServerRequest::Op::Shutdown;
    return r;
  }
  if (op->as_string() != "run") return "unknown op '" + op->as_string() + "'";
  // runner.protocol.request: a run request's id is an integer that fits 64 bits
  // signed; 1.5 or 1e23 is not one (and is never answered as if it were 0).
  if (!id || !id->is_int())
    return std::string("run request needs \"id\": an integer from -2^63 to 2^63 - 1");
  const json::Value* prog = v.find("program");
  if (!prog || !prog->is_string()) return std::string("run request needs a string \"program\"");
  r.req.program = prog->as_string();
  if (const json::Value* cfg = v.find("config")) {
    if (auto dup = duplicate_key(*cfg)) return "duplicate key 'config." + *dup + "'";
    std::string err;
    if (!RunConfig::from_json(*cfg, r.req.config, err)) return err;
  }
  if (const json::Value* t = v.find("trace")) {
    if (!t->is_bool()) return std::string("\"trace\" must be true or false");
    r.req.trace = t->as_bool();
  }
  if (const json::Value* val = v.find("validate")) {
    if (!val->is_bool()) return std::string("\"validate\" must be true or false");
    r.req.validate = val->as_bool();
  }
  if (const json::Value* h = v.find("host")) {  // trap.host.toml
    if (proto->as_string() == kProtocol)
      return std::string("\"host\" needs \"protocol\": \"") + kProtocol11 + "\" (or " +
             kProtocol12 + ")";
    if (!h->is_array()) return std::string("\"host\" must be an array of objects");
    const auto& items = h->as_array();
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string where = "host[" + std::to_string(i) + "]";
      if (!items[i].is_object()) return "\"" + where + "\" must be an object";
      if (auto dup = duplicate_key(items[i])) return where + ": duplicate key '" + *dup + "'";
      std::vector<host::HostField> keys;
      for (const auto& [k, val] : items[i].as_object()) {
        // trap.host.toml: integers exactly, up to 2^64 - 1 in magnitude (json::Value
        // holds those above INT64_MAX as unsigned; larger ones come as doubles).
        if (val.is_uint())
          keys.push_back({k, host::HostValue{host::HostInt{false, val.as_uint()}}});
        else if (val.is_int())
          keys.push_back(
              {k, host::HostValue{host::HostInt{true, 0 - static_cast<uint64_t>(val.as_int())}}});
        else if (val.is_bool())
          keys.push_back({k, host::HostValue{val.as_bool()}});
        else if (val.is_string())
          keys.push_back({k, host::HostValue{val.as_string()}});
        else
          return where + ": '" + k.substr(0, 40) +
                 "' must be an integer (up to 18446744073709551615), a boolean or a string";
      }
      syntax::HostStep step;
      if (auto e = host::host_step_from(keys, step)) return where + ": " + *e;
      step.origin = where;
      r.req.host.push_back(std::move(step));
    }
  }
  // preempt.image.*: the image wanted back, the image to start from.
  if (const json::Value* im = v.find("image")) {
    if (proto->as_string() != kProtocol12)
      return std::string("\"image\" needs \"protocol\": \"") + kProtocol12 + "\"";
    if (!im->is_bool()) return std::string("\"image\" must be true or false");
    r.req.image = im->as_bool();
  }
  if (const json::Value* rs = v.find("restore")) {
    if (proto->as_string() != kProtocol12)
      return std::string("\"restore\" needs \"protocol\": \"") + kProtocol12 + "\"";
    auto bytes = rs->is_string() ? base64_decode(rs->as_string()) : std::nullopt;
    if (!bytes) return std::string("\"restore\" must be a context image in base64");
    r.req.restore = std::move(*bytes);
  }
  return r;
}

json::Value result_json(const RunResult& r) {
  if (r.kind == RunResult::Kind::Outcome) {
    json::Value v = model::to_json(r.outcome);
    if (r.image) v["image"] = base64_encode(*r.image);  // preempt.image.*
    return v;
  }
  json::Value v;
  v["status"] = r.kind == RunResult::Kind::Rejected      ? "rejected"
                : r.kind == RunResult::Kind::Unsupported ? "unsupported"
                                                         : "error";
  v["message"] = r.message;
  if (r.line) v["line"] = *r.line;
  if (r.image_offset) v["image_offset"] = *r.image_offset;  // preempt.image.check
  return v;
}

json::Value response_json(const RunResult& r, int64_t id) {
  json::Value v;
  v["id"] = id;
  json::Value fields = result_json(r);
  for (auto& [k, x] : fields.as_object()) v[k] = std::move(x);
  if (!r.trace.empty()) {
    json::Array t;
    for (const auto& l : r.trace) t.emplace_back(l);
    v["trace"] = std::move(t);
  }
  return v;
}

void serve(std::istream& in, std::ostream& out,
           const std::function<RunResult(const RunRequest&)>& run) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto req = parse_request_line(line);
    if (auto* err = std::get_if<std::string>(&req)) {
      RunResult bad;
      bad.kind = RunResult::Kind::Error;
      bad.message = *err;
      // runner.serve: the request's id when the line is an object that has one.
      int64_t id = 0;
      auto parsed = json::parse(line);
      if (const auto* v = std::get_if<json::Value>(&parsed))
        if (const json::Value* i = v->find("id"); i && i->is_int()) id = i->as_int();
      out << json::dump(response_json(bad, id)) << "\n" << std::flush;
      continue;
    }
    const ServerRequest& r = std::get<ServerRequest>(req);
    if (r.op == ServerRequest::Op::Shutdown) return;
    out << json::dump(response_json(run(r.req), r.id)) << "\n" << std::flush;
  }
}

RunResult parse_response_line(const std::string& line, int64_t expected_id) {
  RunResult r;
  r.kind = RunResult::Kind::Error;
  auto parsed = json::parse(line);
  if (auto* e = std::get_if<json::ParseError>(&parsed)) {
    r.message =
        "protocol violation: response is not JSON (" + e->message + "): " + line.substr(0, 200);
    return r;
  }
  const json::Value& v = std::get<json::Value>(parsed);
  const json::Value* id = v.find("id");
  if (!v.is_object() || !id || !id->is_int() || id->as_int() != expected_id) {
    r.message = "protocol violation: response lacks \"id\": " + std::to_string(expected_id) + ": " +
                line.substr(0, 200);
    return r;
  }
  const json::Value* st = v.find("status");
  if (!st || !st->is_string()) {
    r.message = "protocol violation: response lacks a string \"status\"";
    return r;
  }
  const std::string& s = st->as_string();
  auto message = [&] {
    const json::Value* m = v.find("message");
    return m && m->is_string() ? m->as_string() : std::string();
  };
  if (const json::Value* t = v.find("trace"); t && t->is_array())
    for (const auto& l : t->as_array())
      if (l.is_string() && r.trace.size() < kMaxTraceLines) r.trace.push_back(l.as_string());
  if (s == "error") {
    r.message = "the implementation reported an error: " + message();
    return r;
  }
  if (s == "unsupported") {  // runner.protocol.response: the reason is the message
    r.kind = RunResult::Kind::Unsupported;
    r.message = message();
    if (r.message.empty()) {
      r.kind = RunResult::Kind::Error;
      r.message = "protocol violation: status unsupported without a \"message\" giving the reason";
    }
    return r;
  }
  if (s == "rejected") {
    r.kind = RunResult::Kind::Rejected;
    r.message = message();
    if (const json::Value* l = v.find("line"); l && l->is_int() && l->as_int() > 0)
      r.line = static_cast<uint32_t>(l->as_int());
    if (const json::Value* o = v.find("image_offset"); o && o->is_int() && o->as_int() >= 0)
      r.image_offset = static_cast<uint64_t>(o->as_int());
    return r;
  }
  if (!exec::find_status(s)) {
    r.message = "protocol violation: unknown status '" + s + "'";
    return r;
  }
  std::string err;
  model::Outcome o;
  if (!model::from_json(v, o, err)) {
    r.message = "protocol violation: " + err;
    return r;
  }
  if ((s == "trapped") != o.event.has_value()) {
    r.message = "protocol violation: \"event\" must be present exactly when status is trapped";
    return r;
  }
  if (const json::Value* im = v.find("image")) {  // preempt.image.*
    auto bytes = im->is_string() ? base64_decode(im->as_string()) : std::nullopt;
    if (!bytes) {
      r.message = "protocol violation: \"image\" is not base64";
      return r;
    }
    r.image = std::move(*bytes);
  }
  r.kind = RunResult::Kind::Outcome;
  r.outcome = std::move(o);
  return r;
}

}  // namespace simt::runners
