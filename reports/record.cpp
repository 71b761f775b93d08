#include "record.h"

namespace simt::reports {

const StatusInfo& info(Status s) {
  for (const auto& i : kStatusTable)
    if (i.status == s) return i;
  return kStatusTable[0];  // unreachable: every Status is in the table
}

std::optional<Status> parse_status(std::string_view name) {
  for (const auto& i : kStatusTable)
    if (i.name == name) return i.status;
  return std::nullopt;
}

// Named, not anonymous: the library is built as one unity file, where html.cpp
// has functions of these names too.
namespace record_io {

// The one list of field names: each field's name, how it is written and how it
// is read.
template <class F>
void fields(F&& f) {
  f("id", &Record::id);
  f("title", &Record::title);
  f("file", &Record::file);
  f("config", &Record::config);
  f("config_key", &Record::config_key);
  f("clauses", &Record::clauses);
  f("features", &Record::features);
  f("status", &Record::status_name);
  f("message", &Record::message);
  f("checks", &Record::checks);
  f("expected", &Record::expected);
  f("actual", &Record::actual);
  f("reference", &Record::reference);
  f("first_diff", &Record::first_diff);
  f("stderr", &Record::stderr_text);
  f("trace", &Record::trace);
  f("reference_trace", &Record::reference_trace);
  f("trace_error", &Record::trace_error);
  f("host", &Record::host);
  f("preemptions", &Record::preemptions);
  f("restore_bytes", &Record::restore_bytes);
  f("duration_ms", &Record::duration_ms);
  f("reproduce", &Record::reproduce);
  f("source", &Record::source);
  f("reruns", &Record::reruns);
}

// Fields written even when empty.
bool always(std::string_view name) {
  return name == "id" || name == "status" || name == "config_key" || name == "clauses" ||
         name == "features";
}

json::Value put(const std::string& s) {
  return s;
}
json::Value put(const json::Value& v) {
  return v;
}
json::Value put(const std::vector<std::string>& v) {
  json::Array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}
json::Value put(const std::optional<int64_t>& v) {
  return v ? json::Value(*v) : json::Value();
}
json::Value put(const std::optional<double>& v) {
  return v ? json::Value(*v) : json::Value();
}
json::Value put(const std::vector<Preemption>& v) {
  json::Array a;
  for (const auto& p : v) {
    json::Value e = json::Object{};
    if (p.step) e["step"] = *p.step;
    e["core"] = p.core;
    e["flow"] = p.flow;
    if (!p.intruder.empty()) e["intruder"] = p.intruder;
    a.push_back(std::move(e));
  }
  return a;
}

json::Value put(const std::optional<FirstDiff>& v) {
  return v ? to_json(*v) : json::Value();
}

bool empty(const json::Value& v) {
  return v.is_null() || (v.is_string() && v.as_string().empty()) ||
         (v.is_array() && v.as_array().empty());
}

void get(const json::Value& v, std::string& out) {
  if (v.is_string()) out = v.as_string();
}
void get(const json::Value& v, json::Value& out) {
  out = v;
}
void get(const json::Value& v, std::vector<std::string>& out) {
  if (v.is_array())
    for (const auto& x : v.as_array())
      if (x.is_string()) out.push_back(x.as_string());
}
void get(const json::Value& v, std::optional<int64_t>& out) {
  if (v.is_int()) out = v.as_int();
}
void get(const json::Value& v, std::optional<double>& out) {
  if (v.is_number()) out = v.as_double();
}
void get(const json::Value& v, std::optional<FirstDiff>& out) {
  if (v.is_object()) out = first_diff_from_json(v);  // results.record: only an object is one
}
void get(const json::Value& v, std::vector<Preemption>& out) {
  if (!v.is_array()) return;
  for (const auto& x : v.as_array()) {
    if (!x.is_object()) continue;
    Preemption p;
    if (const json::Value* s = x.find("step")) get(*s, p.step);
    if (const json::Value* c = x.find("core")) p.core = *c;
    if (const json::Value* f = x.find("flow")) get(*f, p.flow);
    if (const json::Value* i = x.find("intruder")) get(*i, p.intruder);
    out.push_back(std::move(p));
  }
}

}  // namespace record_io

json::Value to_json(const Record& r) {
  json::Value v = json::Object{};
  Record copy;
  const Record* src = &r;
  if (r.status && r.status_name != info(*r.status).name) {
    copy = r;  // a typed status wins over a stale name
    copy.status_name = std::string(info(*r.status).name);
    src = &copy;
  }
  record_io::fields([&](std::string_view name, auto member) {
    json::Value x = record_io::put(src->*member);
    if (record_io::always(name) || !record_io::empty(x)) v[std::string(name)] = std::move(x);
  });
  return v;
}

Record from_json(const json::Value& v) {
  Record r;
  if (v.is_object())
    record_io::fields([&](std::string_view name, auto member) {
      if (const json::Value* x = v.find(name)) record_io::get(*x, r.*member);
    });
  // results.record: only objects are configurations and first differences.
  if (!r.config.is_object()) r.config = json::Value();
  // results.record: only an object is a configuration.
  r.status = parse_status(r.status_name);
  if (r.status_name.empty()) r.status_name = "unknown";
  return r;
}

// ---------------------------------------------------------------------------
// results.header and the summary line (results.stream).

namespace run_io {

// Reads an object's members: `take(name, value)` returns whether it knew the
// name; the others go to `other`, in their order.
template <class Take>
void members(const json::Value& v, json::Object& other, Take&& take) {
  if (!v.is_object()) return;
  for (const auto& [k, x] : v.as_object())
    if (!take(k, x)) other.emplace_back(k, x);
}

void str(const json::Value& x, std::string& out) {
  if (x.is_string()) out = x.as_string();
}
void uint(const json::Value& x, std::optional<uint64_t>& out) {
  if (x.is_uint()) out = x.as_uint();
}
void put(json::Value& o, std::string_view k, const std::string& s) {
  if (!s.empty()) o[k] = s;
}
void put(json::Value& o, std::string_view k, const std::optional<uint64_t>& n) {
  if (n) o[k] = *n;
}
void put(json::Value& o, std::string_view k, const std::optional<int64_t>& n) {
  if (n) o[k] = *n;
}
void put(json::Value& o, std::string_view k, const json::Value& v) {
  if (!v.is_null()) o[k] = v;
}
void put_other(json::Value& o, const json::Object& other) {
  for (const auto& [k, x] : other) o[k] = x;
}

}  // namespace run_io

json::Value to_json(const FirstDiff& d) {
  using run_io::put;
  json::Value v = json::Object{};
  put(v, "kind", d.kind);
  put(v, "buffer", d.buffer);
  put(v, "field", d.field);
  put(v, "index", d.index);
  if (d.expected) v["expected"] = *d.expected;
  if (d.actual) v["actual"] = *d.actual;
  put(v, "lane", d.lane);
  put(v, "gwarp", d.gwarp);
  put(v, "warp", d.warp);
  put(v, "wg", d.wg);
  put(v, "offset", d.offset);
  put(v, "name", d.name);
  put(v, "against", d.against);
  run_io::put_other(v, d.other);
  return v;
}

FirstDiff first_diff_from_json(const json::Value& v) {
  using run_io::str;
  FirstDiff d;
  auto integer = [](const json::Value& x, std::optional<int64_t>& out) {
    if (x.is_int()) out = x.as_int();
  };
  run_io::members(v, d.other, [&](const std::string& k, const json::Value& x) {
    if (k == "kind") return str(x, d.kind), true;
    if (k == "buffer") return str(x, d.buffer), true;
    if (k == "field") return str(x, d.field), true;
    if (k == "index") return integer(x, d.index), true;
    if (k == "expected") return d.expected = x, true;
    if (k == "actual") return d.actual = x, true;
    if (k == "lane") return integer(x, d.lane), true;
    if (k == "gwarp") return integer(x, d.gwarp), true;
    if (k == "warp") return integer(x, d.warp), true;
    if (k == "wg") return integer(x, d.wg), true;
    if (k == "offset") return integer(x, d.offset), true;
    if (k == "name") return str(x, d.name), true;
    if (k == "against") return str(x, d.against), true;
    return false;
  });
  return d;
}

const OutcomeView::Buffer* OutcomeView::buffer(std::string_view name) const {
  for (const auto& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

OutcomeView outcome_view(const json::Value& v) {
  OutcomeView o;
  if (!v.is_object()) return o;
  if (const json::Value* s = v.find("status")) run_io::str(*s, o.status);
  if (const json::Value* l = v.find("line"); l && l->is_int()) o.line = l->as_int();
  const json::Value* bufs = v.find("buffers");
  if (!bufs || !bufs->is_object()) return o;
  for (const auto& [name, b] : bufs->as_object()) {
    OutcomeView::Buffer ob;
    ob.name = name;
    if (b.is_object()) {
      if (const json::Value* t = b.find("type")) run_io::str(*t, ob.type);
      if (const json::Value* x = b.find("values"); x && x->is_array()) ob.values = x->as_array();
      if (const json::Value* e = b.find("each")) run_io::str(*e, ob.each);
    }
    o.buffers.push_back(std::move(ob));
  }
  return o;
}

LayoutView layout_view(const json::Value& config) {
  LayoutView l;
  auto integer = [&](std::string_view key, std::optional<int64_t>& out) {
    if (const json::Value* x = config.find(key); x && x->is_int()) out = x->as_int();
  };
  integer("wave", l.wave);
  integer("warps", l.warps);
  integer("workgroups", l.workgroups);
  return l;
}

json::Value to_json(const RunHeader& h) {
  using run_io::put;
  json::Value v = json::Object{};
  v["schema"] = h.schema;
  json::Value suite = json::Object{};
  put(suite, "version", h.suite.version);
  if (!h.suite.paths.empty()) suite["paths"] = record_io::put(h.suite.paths);
  put(suite, "tests", h.suite.tests);
  put(suite, "digest", h.suite.digest);
  run_io::put_other(suite, h.suite.other);
  v["suite"] = std::move(suite);
  json::Value runner = json::Object{};
  put(runner, "name", h.runner.name);
  put(runner, "version", h.runner.version);
  put(runner, "command", h.runner.command);
  put(runner, "digest", h.runner.digest);
  put(runner, "capabilities", h.runner.capabilities);
  run_io::put_other(runner, h.runner.other);
  v["runner"] = std::move(runner);
  json::Value host = json::Object{};
  put(host, "hostname", h.host.hostname);
  put(host, "os", h.host.os);
  put(host, "cpus", h.host.cpus);
  run_io::put_other(host, h.host.other);
  v["host"] = std::move(host);
  put(v, "started", h.started);
  put(v, "options", h.options);
  run_io::put_other(v, h.other);
  return v;
}

RunHeader header_from_json(const json::Value& v) {
  using run_io::str;
  RunHeader h;
  run_io::members(v, h.other, [&](const std::string& k, const json::Value& x) {
    if (k == "schema") {
      str(x, h.schema);
    } else if (k == "suite") {
      run_io::members(x, h.suite.other, [&](const std::string& k2, const json::Value& y) {
        if (k2 == "version") return str(y, h.suite.version), true;
        if (k2 == "paths") return record_io::get(y, h.suite.paths), true;
        if (k2 == "tests") return run_io::uint(y, h.suite.tests), true;
        if (k2 == "digest") return str(y, h.suite.digest), true;
        return false;
      });
    } else if (k == "runner") {
      run_io::members(x, h.runner.other, [&](const std::string& k2, const json::Value& y) {
        if (k2 == "name") return str(y, h.runner.name), true;
        if (k2 == "version") return str(y, h.runner.version), true;
        if (k2 == "command") return str(y, h.runner.command), true;
        if (k2 == "digest") return str(y, h.runner.digest), true;
        if (k2 == "capabilities") return h.runner.capabilities = y, true;
        return false;
      });
    } else if (k == "host") {
      run_io::members(x, h.host.other, [&](const std::string& k2, const json::Value& y) {
        if (k2 == "hostname") return str(y, h.host.hostname), true;
        if (k2 == "os") return str(y, h.host.os), true;
        if (k2 == "cpus") return run_io::uint(y, h.host.cpus), true;
        return false;
      });
    } else if (k == "started") {
      str(x, h.started);
    } else if (k == "options") {
      if (x.is_object()) h.options = x;
    } else {
      return false;
    }
    return true;
  });
  return h;
}

json::Value to_json(const RunSummary& s) {
  using run_io::put;
  json::Value v = json::Object{};
  put(v, "total", s.total);
  put(v, "selected", s.selected);
  put(v, "run", s.run);
  for (const auto& i : kStatusTable)
    if (auto c = s.counts.find(i.name); c != s.counts.end()) v[i.name] = c->second;
  if (s.interrupted) v["interrupted"] = true;
  if (s.seconds) v["seconds"] = *s.seconds;
  put(v, "signal", s.signal);
  run_io::put_other(v, s.other);
  return v;
}

RunSummary summary_from_json(const json::Value& v) {
  RunSummary s;
  run_io::members(v, s.other, [&](const std::string& k, const json::Value& x) {
    if (k == "total") return run_io::uint(x, s.total), true;
    if (k == "selected") return run_io::uint(x, s.selected), true;
    if (k == "run") return run_io::uint(x, s.run), true;
    if (k == "interrupted") return s.interrupted = x.is_bool() && x.as_bool(), true;
    if (k == "seconds") {
      if (x.is_number()) s.seconds = x.as_double();
      return true;
    }
    if (k == "signal") return run_io::str(x, s.signal), true;
    if (parse_status(k)) {
      if (x.is_uint()) s.counts[k] = x.as_uint();
      return true;
    }
    return false;
  });
  return s;
}

}  // namespace simt::reports
