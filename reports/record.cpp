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
  if (!r.first_diff.is_object()) r.first_diff = json::Value();
  r.status = parse_status(r.status_name);
  if (r.status_name.empty()) r.status_name = "unknown";
  return r;
}

}  // namespace simt::reports
