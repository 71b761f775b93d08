#include "model.h"

namespace simt::model {

int64_t reduce(const std::string& type, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  if (type == "u8") return static_cast<int64_t>(u & 0xff);
  if (type == "u16") return static_cast<int64_t>(u & 0xffff);
  if (type == "i32") return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(u)));
  return static_cast<int64_t>(u & 0xffffffffull);
}

json::Value to_json(const Event& e) {
  json::Value v;
  v["name"] = e.name;
  v["warp"] = e.warp;
  v["pc"] = e.pc;
  if (e.lane >= 0) v["lane"] = e.lane;
  if (!e.space.empty()) {
    v["space"] = e.space;
    v["addr"] = e.addr;
  }
  if (e.code) v["code"] = *e.code;
  if (!e.inner.empty()) v["inner"] = e.inner;
  return v;
}

json::Value to_json(const Outcome& o) {
  json::Value v;
  v["status"] = o.status;
  if (o.event) v["event"] = to_json(*o.event);
  v["steps"] = o.steps;
  json::Value bufs = json::Object{};
  for (const auto& b : o.buffers) {
    json::Value jb;
    jb["type"] = b.type;
    json::Array vals;
    for (int64_t x : b.values) vals.emplace_back(x);
    jb["values"] = std::move(vals);
    bufs[b.name] = std::move(jb);
  }
  v["buffers"] = std::move(bufs);
  return v;
}

namespace {
bool get_uint(const json::Value& v, const char* key, uint64_t max, uint64_t& out, std::string& err,
              bool required = true) {
  const json::Value* f = v.find(key);
  if (!f) {
    if (required) err = std::string("missing '") + key + "'";
    return !required;
  }
  if (!f->is_uint() || f->as_uint() > max) {
    err = std::string("'") + key + "' must be an integer from 0 to " + std::to_string(max);
    return false;
  }
  out = f->as_uint();
  return true;
}
}  // namespace

bool from_json(const json::Value& v, Event& out, std::string& err) {
  if (!v.is_object()) return err = "event must be an object", false;
  const json::Value* name = v.find("name");
  if (!name || !name->is_string()) return err = "event needs a string 'name'", false;
  out.name = name->as_string();
  uint64_t u = 0;
  if (!get_uint(v, "warp", 0xffffffffu, u, err)) return false;
  out.warp = static_cast<uint32_t>(u);
  if (!get_uint(v, "pc", 0xffffffffu, u, err)) return false;
  out.pc = static_cast<uint32_t>(u);
  u = 0;
  if (v.find("lane")) {
    if (!get_uint(v, "lane", 63, u, err)) return false;
    out.lane = static_cast<int32_t>(u);
  } else {
    out.lane = -1;
  }
  if (const json::Value* s = v.find("space")) {
    if (!s->is_string()) return err = "'space' must be a string", false;
    out.space = s->as_string();
    u = 0;
    if (!get_uint(v, "addr", 0xffffffffu, u, err)) return false;
    out.addr = static_cast<uint32_t>(u);
  }
  if (v.find("code")) {  // trap.cause: syscall and interrupt codes
    if (!get_uint(v, "code", 0xffffffu, u, err)) return false;
    out.code = static_cast<uint32_t>(u);
  }
  if (const json::Value* s = v.find("inner")) {  // trap.double
    if (!s->is_string()) return err = "'inner' must be a string", false;
    out.inner = s->as_string();
  }
  return true;
}

bool from_json(const json::Value& v, Outcome& out, std::string& err) {
  if (!v.is_object()) return err = "outcome must be an object", false;
  const json::Value* st = v.find("status");
  if (!st || !st->is_string()) return err = "outcome needs a string 'status'", false;
  out.status = st->as_string();
  if (const json::Value* e = v.find("event")) {
    if (!e->is_null()) {
      Event ev;
      if (!from_json(*e, ev, err)) return false;
      out.event = ev;
    }
  }
  uint64_t steps = 0;
  if (!get_uint(v, "steps", UINT64_MAX >> 1, steps, err, false)) return false;
  out.steps = steps;
  if (const json::Value* bufs = v.find("buffers")) {
    if (!bufs->is_object()) return err = "'buffers' must be an object", false;
    for (const auto& [name, b] : bufs->as_object()) {
      Buffer buf;
      buf.name = name;
      const json::Value* type = b.find("type");
      const json::Value* vals = b.find("values");
      if (!type || !type->is_string())
        return err = "buffer '" + name + "' needs a string 'type'", false;
      if (!vals || !vals->is_array())
        return err = "buffer '" + name + "' needs an array 'values'", false;
      buf.type = type->as_string();
      for (const auto& x : vals->as_array()) {
        if (!x.is_int())
          return err = "buffer '" + name + "' has a value that is not an integer", false;
        buf.values.push_back(x.as_int());
      }
      out.buffers.push_back(std::move(buf));
    }
  }
  return true;
}

}  // namespace simt::model
