#include "reference.h"

#include "exec/machine.h"

#include <chrono>
#include <cstdio>
#include <type_traits>

namespace simt::runners {

std::vector<int64_t> decode(syntax::ElemType t, const std::vector<uint8_t>& bytes) {
  const uint32_t es = syntax::elem_size(t);
  std::vector<int64_t> out;
  out.reserve(bytes.size() / es);
  for (size_t i = 0; i + es <= bytes.size(); i += es) {
    uint32_t v = 0;
    for (uint32_t k = 0; k < es; ++k) v |= uint32_t{bytes[i + k]} << (8 * k);
    out.push_back(t == syntax::ElemType::I32 ? int64_t{static_cast<int32_t>(v)} : int64_t{v});
  }
  return out;
}

model::Outcome to_model(const exec::Outcome& o) {
  model::Outcome m;
  m.status = std::string(exec::status_name(o.status));
  if (o.event) {
    model::Event e;
    e.name = std::string(isa::event_name(o.event->code));
    e.warp = o.event->warp;
    e.pc = o.event->pc;
    e.lane = o.event->lane;
    e.addr = o.event->addr;
    e.space = o.event->space;
    if (o.event->code == isa::Event::Syscall || o.event->code == isa::Event::Interrupt)
      e.code = o.event->payload & 0xffffffu;
    if (o.event->inner != isa::Event::None) e.inner = std::string(isa::event_name(o.event->inner));
    m.event = e;
  }
  m.steps = o.steps;
  for (const auto& b : o.buffers)
    m.buffers.push_back(
        {b.name, std::string(syntax::elem_type_name(b.type)), decode(b.type, b.bytes)});
  return m;
}

host::LoadOptions load_options(const RunConfig& c) {
  host::LoadOptions opt;
  opt.cli_origin = "config.";  // state.launch.check: errors name the request's key
  // Every setting as written; a policy by its name (an unknown one is left out:
  // run() rejects it before loading).
  auto resolve = [](const auto& written) {
    if constexpr (std::is_same_v<std::decay_t<decltype(written)>, std::optional<std::string>>)
      return written ? exec::find_policy(*written) : std::nullopt;
    else
      return written;
  };
#define SIMT_SETTING(name, ...) opt.cli.name = resolve(c.name);
#include "exec/settings.def"
  return opt;
}

RunConfig run_config(const exec::LaunchConfig& c) {
  RunConfig r;
  auto written = [](const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, exec::Policy>)
      return std::string(exec::policy_name(value));
    else
      return value;
  };
#define SIMT_SETTING(name, ...) r.name = written(c.name);
#include "exec/settings.def"
  r.simd = c.simd_width();
  return r;
}

RunResult run_loaded(std::shared_ptr<const exec::Program> program, bool trace, double timeout,
                     ImageRequest images) {
  RunResult r;
  exec::Machine m(program);
  m.preempt().set_faults(images.faults);
  if (images.restore) {  // preempt.flow.c; preempt.reject: a bad image is a rejection
    if (auto e = m.start_from_image(*images.restore)) {
      r.kind = RunResult::Kind::Rejected;
      r.message = e->text();
      r.image_offset = e->offset;
      return r;
    }
  }
  // Keep the first and the last kMaxTraceLines / 2 steps; only kept steps are
  // formatted, so a long run costs little more with tracing than without.
  const size_t half = kMaxTraceLines / 2;
  size_t total = 0;
  std::vector<exec::TraceRecord> tail(half);
  if (trace) {
    m.set_trace([&](const exec::TraceRecord& rec) {
      if (total < half)
        r.trace.push_back(exec::format_trace(*program, rec));
      else
        tail[(total - half) % half] = rec;
      ++total;
    });
  }
  // runner.timeout: the machine runs in slices of steps, the clock (and the
  // interrupt flag, results.interrupted) read between them, so a run that cannot
  // end within the limit is cut off near it.
  using Clock = std::chrono::steady_clock;
  const auto deadline = timeout > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(timeout))
                                    : Clock::time_point::max();
  while (!m.advance(kTimeoutSlice)) {
    const bool interrupted = interrupt_flag().load(std::memory_order_relaxed);
    if (interrupted || Clock::now() >= deadline) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", timeout);
      r.kind = RunResult::Kind::Error;
      r.message = interrupted ? std::string(kInterrupted) + " (after " + std::to_string(m.steps()) +
                                    " steps)"
                              : std::string("timeout: the reference did not end within ") + secs +
                                    " s (stopped after " + std::to_string(m.steps()) + " steps)";
      r.trace.clear();
      return r;
    }
  }
  r.outcome = to_model(m.outcome());
  r.kind = RunResult::Kind::Outcome;
  if (images.want && !m.last_image().empty()) r.image = m.last_image();
  if (total > half) {
    size_t kept = std::min(total - half, half);
    if (total - half > kept)
      r.trace.push_back("... " + std::to_string(total - half - kept) + " steps omitted ...");
    for (size_t k = total - half - kept; k < total - half; ++k)
      r.trace.push_back(exec::format_trace(*program, tail[k % half]));
  }
  return r;
}

std::variant<std::shared_ptr<const exec::Program>, RunResult> load_request(const RunRequest& req) {
  RunResult r;
  r.kind = RunResult::Kind::Rejected;
  if (req.config.policy && !exec::find_policy(*req.config.policy)) {
    r.message = "unknown policy '" + *req.config.policy + "'";
    return r;
  }
  host::LoadOptions opt = load_options(req.config);
  opt.validate_flow = req.validate;
  opt.host = req.host;  // trap.host
  auto loaded = host::load(req.program, opt);
  if (!loaded.loaded) {
    const auto& first = loaded.diags.first();
    r.message = syntax::format_diag("program", first);
    // runner.protocol.response: the line of the first error; none when the error
    // comes from a setting outside the program (the request's configuration).
    if (first.span.line > 0 && first.origin.empty()) r.line = first.span.line;
    return r;
  }
  return loaded.loaded->program;
}

ImageRequest image_request(const RunRequest& req) {
  ImageRequest images;
  images.want = req.image;
  if (req.restore) images.restore = &*req.restore;
  return images;
}

RunResult run_reference_within(const RunRequest& req, double timeout) {
  auto loaded = load_request(req);
  if (auto* rejected = std::get_if<RunResult>(&loaded)) return std::move(*rejected);
  return run_loaded(std::get<0>(std::move(loaded)), req.trace, timeout, image_request(req));
}

RunResult run_reference(const RunRequest& req) {
  return run_reference_within(req, 0);
}

namespace {

class ReferenceRunner final : public Runner {
 public:
  explicit ReferenceRunner(double timeout) : timeout_(timeout) {
    for (uint32_t w = 1; w <= 64; w *= 2) {
      caps_.waves.insert(w);
      caps_.simds.insert(w);
    }
    caps_.max_warps = exec::kMaxTotalWarps;
    for (exec::Policy p : exec::kAllPolicies) caps_.policies.emplace(exec::policy_name(p));
    for (isa::Feature f : isa::kAllFeatures) caps_.features.emplace(isa::feature_name(f));
    caps_.all_instructions = true;
    caps_.extras = {"validate", "livelock", "trace", "no_validate", "host", "preempt.image"};
  }
  std::string name() const override { return "reference"; }
  std::string version() const override { return SIMT_VERSION; }
  const Capabilities& capabilities() const override { return caps_; }
  RunResult run(const RunRequest& req) override { return run_reference_within(req, timeout_); }
  bool is_reference() const override { return true; }

 private:
  Capabilities caps_;
  double timeout_;
};

}  // namespace

std::unique_ptr<Runner> make_reference_runner(double timeout) {
  return std::make_unique<ReferenceRunner>(timeout);
}

}  // namespace simt::runners
