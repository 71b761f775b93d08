#include "compare.h"

#include <algorithm>
#include <cstdio>

#include "exec/image.h"

#include "exec/config.h"
#include "reference.h"

namespace simt::harness {

using runners::RunResult;

namespace {

json::Value element_diff(const std::string& buffer, size_t index, int64_t expected, int64_t actual,
                         size_t length, const Layout& l) {
  json::Value d;
  d["kind"] = "buffer";
  d["buffer"] = buffer;
  d["index"] = static_cast<uint64_t>(index);
  d["expected"] = expected;
  d["actual"] = actual;
  // With one element per thread, element i belongs to thread i (format.expr):
  // name its lane, its warp in the workgroup, its global warp and its workgroup.
  int64_t i = static_cast<int64_t>(index);
  if (l.wave > 0 && l.warps > 0 &&
      static_cast<int64_t>(length) == l.wave * l.warps * l.workgroups) {
    int64_t gwarp = i / l.wave;
    d["lane"] = i % l.wave;
    d["gwarp"] = gwarp;
    d["warp"] = gwarp % l.warps;
    d["wg"] = gwarp / l.warps;
  }
  return d;
}

json::Value field_diff(const std::string& field, const json::Value& expected,
                       const json::Value& actual) {
  json::Value d;
  d["kind"] = "field";
  d["field"] = field;
  d["expected"] = expected;
  d["actual"] = actual;
  return d;
}

const model::Buffer* find_buffer(const model::Outcome& o, const std::string& name) {
  for (const auto& b : o.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

std::string where(const json::Value& d) {
  std::string s = "element " + std::to_string(d.find("index")->as_int());
  if (const json::Value* lane = d.find("lane"))
    s += " (lane " + std::to_string(lane->as_int()) + " of warp " +
         std::to_string(d.find("gwarp")->as_int()) + ")";
  return s;
}

Verdict fail(Verdict v, std::string message, json::Value diff) {
  v.ok = false;
  if (diff.is_object()) diff["against"] = v.against;
  v.message = std::move(message);
  v.first_diff = std::move(diff);
  return v;
}

}  // namespace

namespace {

// The field of byte `off` of an image, by name where the image can be read.
std::string image_field(const std::vector<uint8_t>& image, uint64_t off) {
  auto img = exec::read_image(image);
  if (auto* c = std::get_if<exec::ImageContent>(&img)) return exec::describe_image_offset(*c, off);
  return "byte " + std::to_string(off);
}

std::string hex32(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// format.expect.image: the image of the last preemption against its sparse
// expectation.
Verdict check_image(Verdict v, const ImageWords& x, const RunResult& a) {
  ++v.checks;
  if (!a.image)
    return fail(v, "the launch returned no context image (it was not preempted)",
                field_diff("image", "an image", json::Value()));
  const std::vector<uint8_t>& b = *a.image;
  if (b.size() != x.size)
    return fail(v,
                "the context image is " + std::to_string(b.size()) + " bytes, expected " +
                    std::to_string(x.size),
                field_diff("image.size", x.size, static_cast<uint64_t>(b.size())));
  auto word = [&](uint64_t off) {
    uint32_t w = 0;
    for (int i = 0; i < 4; ++i) w |= uint32_t{b[off + i]} << (8 * i);
    return w;
  };
  size_t next = 0;  // the next expected word
  for (uint64_t off = 0; off < b.size();) {
    if (next < x.words.size() && x.words[next].first == off) {
      ++v.checks;
      const uint32_t want = x.words[next].second, got = word(off);
      if (want != got) {
        json::Value d = field_diff("image.word", want, got);
        d["offset"] = off;
        d["name"] = image_field(b, off);
        return fail(v,
                    "context image word at byte " + std::to_string(off) + " (" +
                        image_field(b, off) + ") is " + hex32(got) + ", expected " + hex32(want),
                    d);
      }
      ++next;
      off += 4;
      continue;
    }
    if (x.rest) {
      ++v.checks;
      if (b[off] != *x.rest) {
        json::Value d = field_diff("image.byte", *x.rest, b[off]);
        d["offset"] = off;
        d["name"] = image_field(b, off);
        return fail(v,
                    "context image byte " + std::to_string(off) + " (" + image_field(b, off) +
                        ") is " + hex32(b[off]) + ", expected " + hex32(*x.rest),
                    d);
      }
    }
    ++off;
  }
  return v;
}

}  // namespace

Verdict check_expectation(const Expectation& x, const RunResult& a, const Layout& l) {
  Verdict v;
  v.against = "expectation";
  // format.expect.rejected
  if (x.status == "rejected") {
    ++v.checks;
    if (a.kind != RunResult::Kind::Rejected)
      return fail(
          v,
          "expected the program to be rejected, but it ran to " +
              (a.kind == RunResult::Kind::Outcome ? a.outcome.status : std::string("an error")),
          field_diff("status", "rejected",
                     a.kind == RunResult::Kind::Outcome ? a.outcome.status : "error"));
    if (x.line) {
      ++v.checks;
      if (a.line != x.line)
        return fail(
            v,
            (a.line ? "rejected at line " + std::to_string(*a.line)
                    : std::string("rejected, but the response gives no line")) +
                ", expected line " + std::to_string(*x.line) + ": " + a.message,
            field_diff("line", static_cast<int64_t>(*x.line),
                       a.line ? json::Value(static_cast<int64_t>(*a.line)) : json::Value()));
    }
    if (x.image_offset) {  // preempt.image.check: the first bad byte of a restored image
      ++v.checks;
      if (a.image_offset != x.image_offset)
        return fail(
            v,
            (a.image_offset ? "the image was rejected at byte " + std::to_string(*a.image_offset)
                            : std::string("the rejection names no image byte")) +
                ", expected byte " + std::to_string(*x.image_offset) + ": " + a.message,
            field_diff("image_offset", *x.image_offset,
                       a.image_offset ? json::Value(*a.image_offset) : json::Value()));
    }
    return v;
  }
  if (a.kind == RunResult::Kind::Rejected)
    return fail(v, "the program was rejected: " + a.message,
                field_diff("status", x.status, "rejected"));
  const model::Outcome& o = a.outcome;
  ++v.checks;
  if (o.status != x.status)
    return fail(
        v,
        "status is " + o.status + ", expected " + x.status +
            (o.event ? " (event " + o.event->name + " in warp " + std::to_string(o.event->warp) +
                           " at pc " + std::to_string(o.event->pc) + ")"
                     : ""),
        field_diff("status", x.status, o.status));
  auto vars = element_vars(0, l.wave, l.simd, l.warps, l.workgroups, l.cores);
  if (x.event_name) {
    ++v.checks;
    if (!o.event || o.event->name != *x.event_name)
      return fail(v,
                  "event is " + (o.event ? o.event->name : std::string("missing")) + ", expected " +
                      *x.event_name,
                  field_diff("event.name", *x.event_name,
                             o.event ? json::Value(o.event->name) : json::Value()));
    for (const auto& f : x.event_fields) {
      ++v.checks;
      if (f.key == "space") {
        if (o.event->space != f.text)
          return fail(v, "event space is '" + o.event->space + "', expected '" + f.text + "'",
                      field_diff("event.space", f.text, o.event->space));
        continue;
      }
      if (f.key == "inner") {  // trap.double
        if (o.event->inner != f.text)
          return fail(v, "event inner is '" + o.event->inner + "', expected '" + f.text + "'",
                      field_diff("event.inner", f.text, o.event->inner));
        continue;
      }
      if (f.key == "code" && !o.event->code)
        return fail(v, "event has no code, expected one", field_diff("event.code", 0, "none"));
      if (f.key == "lane" && f.text == "none") {
        if (o.event->lane >= 0)
          return fail(v,
                      "event lane is " + std::to_string(o.event->lane) +
                          ", expected none (the event has no lane)",
                      field_diff("event.lane", "none", o.event->lane));
        continue;
      }
      int64_t want = 0;
      if (f.value) {
        want = *f.value;
      } else if (f.expr) {
        auto r = f.expr->eval(vars);
        if (auto* e = std::get_if<std::string>(&r))
          return fail(v, "expect.event." + f.key + ": " + *e, json::Value());
        want = std::get<int64_t>(r);
      }
      if (f.key == "lane" && o.event->lane < 0)
        return fail(v, "event has no lane, expected lane " + std::to_string(want),
                    field_diff("event.lane", want, "none"));
      int64_t got = f.key == "warp"   ? o.event->warp
                    : f.key == "pc"   ? o.event->pc
                    : f.key == "lane" ? o.event->lane
                    : f.key == "code" ? static_cast<int64_t>(*o.event->code)
                                      : static_cast<int64_t>(o.event->addr);
      if (got != want)
        return fail(
            v,
            "event " + f.key + " is " + std::to_string(got) + ", expected " + std::to_string(want),
            field_diff("event." + f.key, want, got));
    }
  }
  for (const auto& be : x.buffers) {
    const model::Buffer* b = find_buffer(o, be.name);
    if (!b)
      return fail(v, "output buffer '" + be.name + "' is missing",
                  field_diff("buffer", be.name, json::Value()));
    size_t want_len =
        be.values ? be.values->size()
                  : (l.buffer_len.count(be.name) ? l.buffer_len.at(be.name) : b->values.size());
    if (b->values.size() != want_len) {
      ++v.checks;
      return fail(v,
                  "buffer '" + be.name + "' has " + std::to_string(b->values.size()) +
                      " elements, expected " + std::to_string(want_len),
                  field_diff("buffer." + be.name + ".length", static_cast<uint64_t>(want_len),
                             static_cast<uint64_t>(b->values.size())));
    }
    if (want_len == 0 && v.vacuous.empty())
      v.vacuous = "expect.buffers." + be.name + " compared no element (the buffer is empty)";
    for (size_t i = 0; i < want_len; ++i) {
      int64_t want;
      if (be.values) {
        want = (*be.values)[i];
      } else {
        set_element(vars, static_cast<int64_t>(i));
        auto r = be.each->eval(vars);
        if (auto* e = std::get_if<std::string>(&r))
          return fail(v,
                      "expect.buffers." + be.name + ".each at i=" + std::to_string(i) + ": " + *e,
                      json::Value());
        want = std::get<int64_t>(r);
      }
      ++v.checks;
      int64_t w = model::reduce(b->type, want), g = model::reduce(b->type, b->values[i]);
      if (w != g) {
        json::Value d = element_diff(be.name, i, w, g, want_len, l);
        return fail(v,
                    "buffer '" + be.name + "' " + where(d) + " is " + std::to_string(g) +
                        ", expected " + std::to_string(w),
                    d);
      }
    }
  }
  if (x.image) return check_image(v, *x.image, a);
  return v;
}

Verdict compare_images(const RunResult& ref, const RunResult& a) {
  Verdict v;
  v.against = "reference";
  ++v.checks;
  if (!ref.image || !a.image) {
    if (ref.image.has_value() != a.image.has_value())
      return fail(
          v,
          std::string("the implementation ") + (a.image ? "returned" : "did not return") +
              " a context image, the reference " + (ref.image ? "did" : "did not"),
          field_diff("image", ref.image ? "an image" : "none", a.image ? "an image" : "none"));
    return v;
  }
  const std::vector<uint8_t>& r = *ref.image;
  const std::vector<uint8_t>& b = *a.image;
  const size_t n = std::min(r.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    ++v.checks;
    if (r[i] != b[i]) {
      json::Value d = field_diff("image.byte", r[i], b[i]);
      d["offset"] = static_cast<uint64_t>(i);
      d["name"] = image_field(r, i);
      return fail(v,
                  "context image byte " + std::to_string(i) + " (" + image_field(r, i) + ") is " +
                      hex32(b[i]) + ", the reference's is " + hex32(r[i]),
                  d);
    }
  }
  if (r.size() != b.size())
    return fail(
        v,
        "the context image is " + std::to_string(b.size()) + " bytes, the reference's " +
            std::to_string(r.size()),
        field_diff("image.size", static_cast<uint64_t>(r.size()), static_cast<uint64_t>(b.size())));
  return v;
}

Verdict compare_with_reference(const RunResult& ref, const RunResult& a, const Layout& l) {
  Verdict v;
  v.against = "reference";
  ++v.checks;
  if (ref.kind == RunResult::Kind::Rejected || a.kind == RunResult::Kind::Rejected) {
    if (ref.kind != a.kind)
      return fail(
          v,
          std::string("the reference ") +
              (ref.kind == RunResult::Kind::Rejected ? "rejects" : "runs") +
              " the program but the implementation " +
              (a.kind == RunResult::Kind::Rejected ? "rejects it" : "runs it"),
          field_diff("status",
                     ref.kind == RunResult::Kind::Rejected ? "rejected" : ref.outcome.status,
                     a.kind == RunResult::Kind::Rejected ? "rejected" : a.outcome.status));
    return v;
  }
  const model::Outcome& r = ref.outcome;
  const model::Outcome& o = a.outcome;
  if (r.status != o.status)
    return fail(v, "status is " + o.status + ", the reference's is " + r.status,
                field_diff("status", r.status, o.status));
  ++v.checks;
  if (r.event != o.event) {
    // runner.firstdiff: name the first event field that differs, with both values.
    if (!r.event || !o.event) {
      auto ev = [](const std::optional<model::Event>& e) {
        return e ? model::to_json(*e) : json::Value();
      };
      return fail(v,
                  std::string("the implementation's outcome ") +
                      (o.event ? "has an event" : "has no event") + ", the reference's " +
                      (r.event ? "has one" : "has none"),
                  field_diff("event", ev(r.event), ev(o.event)));
    }
    const json::Value want = model::to_json(*r.event), got = model::to_json(*o.event);
    for (const char* k : {"name", "warp", "pc", "lane", "space", "addr", "code", "inner"}) {
      const json::Value* a = want.find(k);
      const json::Value* b = got.find(k);
      const json::Value wa = a ? *a : json::Value(), gb = b ? *b : json::Value();
      if (json::dump(wa) == json::dump(gb)) continue;
      auto show = [](const json::Value& x) {
        return x.is_null() ? std::string("none") : json::dump(x);
      };
      return fail(
          v, std::string("event ") + k + " is " + show(gb) + ", the reference's is " + show(wa),
          field_diff(std::string("event.") + k, wa, gb));
    }
  }
  for (const auto& rb : r.buffers) {
    const model::Buffer* b = find_buffer(o, rb.name);
    ++v.checks;
    if (!b)
      return fail(v, "output buffer '" + rb.name + "' is missing",
                  field_diff("buffer", rb.name, json::Value()));
    if (b->values.size() != rb.values.size())
      return fail(
          v,
          "buffer '" + rb.name + "' has " + std::to_string(b->values.size()) +
              " elements, the reference's " + std::to_string(rb.values.size()),
          field_diff("buffer." + rb.name + ".length", static_cast<uint64_t>(rb.values.size()),
                     static_cast<uint64_t>(b->values.size())));
    for (size_t i = 0; i < rb.values.size(); ++i) {
      ++v.checks;
      int64_t w = model::reduce(rb.type, rb.values[i]), g = model::reduce(rb.type, b->values[i]);
      if (w != g) {
        json::Value d = element_diff(rb.name, i, w, g, rb.values.size(), l);
        return fail(v,
                    "buffer '" + rb.name + "' " + where(d) + " is " + std::to_string(g) +
                        ", the reference has " + std::to_string(w),
                    d);
      }
    }
  }
  if (o.buffers.size() != r.buffers.size())
    return fail(v,
                "the implementation reports " + std::to_string(o.buffers.size()) +
                    " output buffers, the reference " + std::to_string(r.buffers.size()),
                field_diff("buffers", static_cast<uint64_t>(r.buffers.size()),
                           static_cast<uint64_t>(o.buffers.size())));
  return v;
}

PolicyCheck policy_dependence(const runners::RunRequest& req, const Layout& l, double timeout) {
  runners::RunRequest base = req;
  base.trace = false;
  base.config.policy = "round_robin";
  base.config.seed.reset();
  const RunResult first = runners::run_reference_within(base, timeout);
  if (first.kind == RunResult::Kind::Error)
    return {"", "the reference under round_robin: " + first.message};
  if (first.kind != RunResult::Kind::Outcome) return {};
  struct Variant {
    exec::Policy policy;
    uint64_t seed;
  };
  static constexpr Variant kVariants[] = {{exec::Policy::LowestPcFirst, 0},
                                          {exec::Policy::OldestFirst, 0},
                                          {exec::Policy::Random, 1},
                                          {exec::Policy::Random, 2},
                                          {exec::Policy::Random, 3}};
  for (const Variant& var : kVariants) {
    runners::RunRequest other = base;
    other.config.policy = std::string(exec::policy_name(var.policy));
    std::string name = *other.config.policy;
    if (var.policy == exec::Policy::Random) {
      other.config.seed = var.seed;
      name += " (seed " + std::to_string(var.seed) + ")";
    }
    const RunResult second = runners::run_reference_within(other, timeout);
    if (second.kind == RunResult::Kind::Error)
      return {"", "the reference under " + name + ": " + second.message};
    Verdict v = compare_with_reference(first, second, l);
    if (!v.ok) {
      // The verdict speaks of "the reference" and "the implementation": here they are
      // round_robin and the other policy.
      return {"the outcome depends on the scheduling policy: under " + name +
                  " it differs from round_robin's (taking round_robin's as the reference's: " +
                  v.message + ")",
              ""};
    }
  }
  return {};
}

}  // namespace simt::harness
