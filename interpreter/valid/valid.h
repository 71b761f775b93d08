// Validation (spec/validation.md): the programming-model checks that run before
// execution, and the expansion of structured control flow into branch-unit
// primitives (spec/branch.md, branch.struct.*).
#pragma once

#include "exec/config.h"
#include "syntax/ast.h"
#include "syntax/diag.h"

namespace simt::valid {

// valid.struct.*: if/else/endif and loop/endloop nest properly; break and continue
// sit inside a loop. Must hold before expand().
void check_structure(const syntax::Program& p, syntax::Diagnostics& d);

// branch.struct.expand: replaces every structured statement by its primitives.
// Generated labels are `__loopN`, numbered to avoid every label of the program.
// Each generated statement keeps the span of the statement it came from.
syntax::Program expand(const syntax::Program& p);

struct Options {
  // valid.flow.*: the mask-stack and PC-stack discipline along every path. Turning
  // it off (`--no-validate`) lets programs that break the model run, so that the
  // executor's run-time events can be observed; the other checks always run, since
  // the executor relies on them.
  bool flow = true;
};

// Checks an expanded program (no structured statements) against a launch
// configuration: labels, registers, operand forms, memory spaces, buffers, flow.
void validate(const syntax::Program& expanded, const exec::LaunchConfig& cfg,
              syntax::Diagnostics& d, Options opt = {});

}  // namespace simt::valid
