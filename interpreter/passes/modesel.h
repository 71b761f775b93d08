// Mode selection (spec/wave.md, wave.modesel.*): puts the top-level segments of a
// program that need more vector registers than a threshold into sub-vector
// regions (`subv.begin` ... `subv.end`), per-part copies or the software loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/config.h"
#include "syntax/ast.h"
#include "syntax/diag.h"

namespace simt::passes {

// wave.modesel.strategy
enum class Strategy : uint8_t { Switch, Duplicate, Software };

struct SegmentInfo {
  uint32_t index;    // 1-based (wave.modesel.segments)
  std::string kind;  // "loop", "call", "chunk", "region"
  uint32_t first_line, last_line;
  uint32_t need;  // wave.modesel.need
  int group;      // 1-based region/group number it went into, 0 = stays normal, -1 = kept
                  // (existing region)
};

struct ModeselResult {
  std::optional<syntax::Program> program;  // the transformed program (nothing when refused)
  std::vector<SegmentInfo> segments;
  uint32_t threshold;
  syntax::Diagnostics diags;  // refusals, located (file:line:col via the spans)
};

// p: the parsed (structured, not expanded) program; cfg: its launch configuration.
// threshold: nothing means vregs / k, rounded down (k = wave / simd).
ModeselResult modesel(const syntax::Program& p, const exec::LaunchConfig& cfg,
                      std::optional<uint32_t> threshold, Strategy s);

// The --explain comment lines (wave.modesel.output), each ending in a newline.
std::string explain(const ModeselResult& r);

}  // namespace simt::passes
