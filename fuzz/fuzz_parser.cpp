// libFuzzer target: the whole pipeline on arbitrary bytes (spec/execution.md,
// exec.pipeline). Every input must be either rejected with located diagnostics
// (syntax.errors) or loaded and run to a final status; a program that parses must
// print and parse back to an equal program (syntax.print.roundtrip). Any crash,
// sanitizer report or __builtin_trap() is a finding.
//
// The first input byte picks the wave (1 to 64) and the SIMD width (wave, wave/2
// or wave/4) as command-line overrides; max_steps is capped at 10 000.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "exec/machine.h"
#include "host/host.h"
#include "text/parser.h"
#include "text/printer.h"

namespace {

using simt::syntax::DiagKind;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// syntax.print.roundtrip: print -> parse -> equal program; printing again gives the
// same text.
void check_roundtrip(const simt::syntax::Program& p) {
  check(!simt::text::roundtrip_problem(p));
}

// syntax.errors: every diagnostic has a position and a message, and there are at
// most 100.
void check_diags(const simt::syntax::Diagnostics& d) {
  check(d.size() <= simt::syntax::Diagnostics::kMaxReported);
  for (const auto& e : d.list()) {
    // Only values from the command line or a TOML file have no place in the text.
    check((e.span.line >= 1 && e.span.col >= 1) || e.kind == DiagKind::Config);
    check(!e.message.empty());
  }
  const std::string text = d.format("f");
  check(d.empty() == text.empty());
}

// Rough size of the machine state and memory of a launch; huge launches are loaded
// but not run, so the fuzzer spends its time on behaviour rather than on memset.
uint64_t footprint(const simt::exec::Program& p) {
  uint64_t bytes = simt::exec::state_bytes(p.config);
  for (const auto& b : p.buffers) bytes += b.bytes;
  return bytes;
}

void run(const simt::host::LoadResult& r) {
  if (!r.loaded) return;
  check(r.diags.empty());
  check_roundtrip(r.loaded->expanded);
  const auto& prog = r.loaded->program;
  check(prog != nullptr);
  check(prog->config.max_steps <= 10000);
  if (footprint(*prog) > (uint64_t{32} << 20)) return;
  simt::exec::Machine m(prog);
  const simt::exec::Outcome o = m.run();
  check(o.steps <= 10000);
  check((o.status == simt::exec::Status::Trapped) == o.event.has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto parsed = simt::text::parse(text);
  check_diags(parsed.diags);
  if (parsed.ok()) check_roundtrip(parsed.program);

  simt::host::LoadOptions opt;
  opt.cli.max_steps = 10000;
  if (size > 0) {
    const uint32_t wave = 1u << (data[0] % 7);
    opt.cli.wave = wave;
    const uint32_t simd = wave >> ((data[0] / 7) % 3);
    opt.cli.simd = simd > 0 ? simd : 1u;
  }
  auto loaded = simt::host::load(text, opt);
  check_diags(loaded.diags);
  check(loaded.loaded.has_value() == loaded.diags.empty());
  if (!parsed.ok()) check(!loaded.loaded.has_value());
  run(loaded);

  // A program rejected only by validation also runs with the flow checks off
  // (--no-validate), so that the executor's run-time events are exercised.
  bool only_invalid = !loaded.loaded && !loaded.diags.empty();
  for (const auto& d : loaded.diags.list())
    only_invalid = only_invalid && d.kind == DiagKind::Invalid;
  if (only_invalid) {
    opt.validate_flow = false;
    run(simt::host::load(text, opt));
  }
  return 0;
}
