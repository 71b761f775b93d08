// Invariant oracles (spec/oracles.md, oracle.invariant.*): properties every
// generated program must satisfy. Each check runs the program as printed text
// through the whole pipeline, so a failure is reproducible from the text alone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/machine.h"
#include "exec/program.h"
#include "model.h"
#include "passes/modesel.h"
#include "program.h"
#include "runner.h"

namespace simt::harness {
struct Verdict;
}

namespace simt::gen {

// oracle.fuzz.signature: what a failing check found to differ first, as data: the
// kind ("status", "event", "buffer", "image", "error", ...), the event involved
// ("" if none) and the instruction family (isa::family_name, with its feature:
// "alu.binary") at the event's pc ("" if none).
struct Difference {
  std::string kind, event, family;
};

struct Check {
  bool ok = true;
  std::string message;  // what went wrong, for people
  // The outcome the program must have, for a regression test (oracle.regress):
  // the oracle's own expectation where it has one, else the reference's outcome.
  std::optional<model::Outcome> expected;
  std::vector<std::string> policies;  // scheduler: the policies the test must run under
  // differential: non-empty (and ok) when the implementation lacks a capability
  // the program needs, e.g. "the runner lacks wave:64" (oracle.invariant.differential).
  std::string unsupported;
  // The oracle's model cannot run the program (outside its domain): a failure of
  // the generator, never a shrinking candidate that "still fails" (oracle.shrink).
  bool outside = false;
  // Per-program counts an oracle (or FuzzOptions::after_check) reports, e.g. of
  // the constructs generated; `simtspec fuzz` sums them per invariant
  // (InvariantStats::counters, oracle.fuzz).
  std::map<std::string, uint64_t> counts;
  // The program text a regression test holds, when it is not the generated
  // program itself (validator: the mutated program, which must be rejected).
  std::string regression_text;
  // The host script a regression test carries as [[host]] (trap.host.toml), when
  // the program it holds runs with one.
  std::vector<syntax::HostStep> host;
  // A failing check that names its first difference (differential does).
  std::optional<Difference> difference;
};

// oracle.fuzz.signature: the first difference of a failed comparison of an
// implementation's result `got` with the reference's `ref` (harness::Verdict of
// runner.firstdiff), as data: the kind (a buffer, or the field's first part:
// status, event, image, ...; "other" without a first difference), the event
// involved (the reference's, else the implementation's) and the family of the
// instruction of `prog` at that event's pc.
Difference difference_of(const harness::Verdict& v, const runners::RunResult& ref,
                         const runners::RunResult& got, const exec::Program& prog);

// A check that failed with a message.
Check failing(std::string message);

// What a loaded program uses, from the instruction table (isa.table).
struct Uses {
  std::set<std::string> clauses, features, mnemonics;
};
Uses uses_of(const exec::Program& p);

struct OracleContext {
  runners::Runner* runner = nullptr;  // differential: the implementation under test
  uint64_t seed = 0;                  // choices inside a check (e.g. the snapshot step)
};

using Oracle = std::function<Check(const Program&, const std::string& text, OracleContext&)>;

struct Invariant {
  std::string name;
  std::vector<std::string> clauses;  // what a regression test from it cites
  Oracle check;
  // What its programs are generated for (oracle.invariants):
  bool communicating = true;      // lanes may communicate (sequential: they never do)
  bool needs_runner = false;      // checks an implementation through a runner
  bool small_mask_depth = false;  // sometimes a tiny mask stack, to reach overflow
  bool traps = true;              // single-warp programs may trap (oracle.model.traps)
  bool spin = false;              // programs end in a loop that never ends (livelock)
  // With --runner, checks that implementation instead of the reference (against
  // its own oracle); without, the reference.
  bool runner_optional = false;
  bool atomics = false;  // atomic statements are generated three times as often
  // oracle.model.handler, oracle.model.host: of 4 programs, how many get the
  // recording handler; whether those sometimes get a host script of interrupts;
  // whether every program that may trap does (with trap statements more often).
  uint32_t handler_share = 0;
  bool interrupts = false;
  bool trap_always = false;
  // oracle.model.regions: of 4 programs, how many are mixed-wave-size programs;
  // whether their region bodies stay within the model; the (wave, simd) pairs they
  // launch at (empty: the usual shapes); whether nothing depends on the shape.
  uint32_t region_share = 0;
  bool region_strict = true;
  std::vector<std::pair<uint32_t, uint32_t>> shapes{};
  bool shape_free = false;
  // oracle.invariant.modesel: programs whose every top-level segment the pass may
  // transform (wave.modesel.safe): lane-local, no primitive forms or jumps, scalar
  // loads of `in` only.
  bool modesel_safe = false;
  // oracle.model.hostprog: of 4 programs, how many are host programs.
  uint32_t host_share = 0;
  // oracle.model.spin: of 4 programs, how many end in a spin (exits allowed).
  uint32_t spin_share = 0;
  // oracle.model.preempt: of 4 programs, how many carry preemption points.
  uint32_t preempt_share = 0;
};

// The status a generated program is meant to end with (oracle.invariant.status):
// the structured evaluator's, or nothing when the program is outside its domain.
std::optional<std::string> intended_status(const Program& p);

// trap.allornone, trap.join: what is wrong with the machine's state at a step
// boundary ("" if nothing): a core whose ready and barrier warps are not all in
// the same mode, or a warp waiting at the join of a core that has left its handler.
std::string allornone_problem(const exec::Machine& m);

// oracle.invariant.trap_transparency with the handler of `with` (its `handler`
// and `handler_code`) in place of the one that only returns: for tests that
// show the invariant failing on a handler that is not transparent.
Check trap_transparency_with(const Program& p, const Program& with, OracleContext& ctx);

// oracle.invariant.preempt_transparency with the preempted launches run under
// `faults` (the baseline never is): for tests that show the invariant finding
// each planted preemption fault, so that the baseline cannot hide one.
Check preempt_transparency_with(const Program& p, const exec::PreemptFaults& faults,
                                OracleContext& ctx);

// oracle.invariant.image_stable with every launch under `faults`.
Check image_stable_with(const Program& p, const exec::PreemptFaults& faults, OracleContext& ctx);

// oracle.invariant.structured with a deliberately wrong evaluator (warp_eval.h,
// EvalOptions): for tests that show the invariant failing.
struct EvalOptions;
Check structured_with(const Program& p, const EvalOptions& eval, OracleContext& ctx);

// oracle.invariant.software_loop with the regions of the twin printed in `form`
// (RegionForm::SoftwareSource: the one-scalar sequence of wave.soft.source, which
// agrees only under wave.soft.source.agree): for tests that show it failing.
Check software_loop_with(const Program& p, Program::RegionForm form, OracleContext& ctx);

// oracle.model.regions for the wave invariants: region_problem(p), and a mask
// depth at least what the program needs (an overflow in a pass would end the
// launch with only some parts run). "" when p is within the model.
std::string region_model_problem(const Program& p);
// oracle.invariant.wave_equivalence: what in p depends on the launch shape ("" if
// nothing): %lane or a special register as an operand, a statement whose lanes
// communicate (but scalar statements from immediates and `in`).
std::string shape_problem(const Program& p);

// oracle.invariant.modesel: what in p (without its regions) the mode-selection
// pass would refuse to transform, or that its model does not cover ("" if nothing).
std::string modesel_problem(const Program& p);
// The invariant with `pass` in place of passes::modesel (tests use wrong ones).
using ModeselPass = std::function<passes::ModeselResult(
    const syntax::Program&, const exec::LaunchConfig&, std::optional<uint32_t>, passes::Strategy)>;
Check modesel_with(const Program& p, const ModeselPass& pass, OracleContext& ctx);

// sequential, structured, scheduler, snapshot, expansion, roundtrip, atomic-broadcast,
// atomic-count, policy, livelock, validator, trap-transparency, trap-record,
// all-or-none, host-script, mode-equivalence, wave-equivalence, software-loop, modesel,
// differential.
const std::vector<Invariant>& invariants();
const Invariant* find_invariant(const std::string& name);

}  // namespace simt::gen
