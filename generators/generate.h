// RapidCheck generators of structured programs (spec/oracles.md,
// oracle.gen.*). The size parameter scales the number of statements and the
// nesting depth; every generated program prints to a valid, terminating program.
#pragma once

#include <rapidcheck.h>

#include "oracles.h"
#include "program.h"
#include "runner.h"

namespace simt::gen {

struct Options {
  // Statements whose lanes communicate or that act once per warp (cross-lane,
  // shared memory, exchanges and barriers, scalar statements, uniform branches,
  // exec writes, recursion, %exec operands), oracle.gen.options.
  bool communicate = true;
  bool multi_warp = true;         // more than one warp (and workgroup)
  bool calls = true;              // functions and calls
  bool exits = true;              // exit inside divergent code
  bool small_mask_depth = false;  // sometimes a .mask_depth of 1 to 4
  bool random_policy = true;      // sometimes the random policy with a seed
  // Trap statements, and mask/call depths at or one below what the program needs,
  // in single-warp programs (oracle.model.traps).
  bool traps = true;
  uint32_t trap_weight = 4;  // of trap statements among the communicating ones
  bool trap_always = false;  // every program that may trap has trap statements
  // `sys` statements where traps are, and in programs of several warps with the
  // recording handler (the trap feature, oracle.model.handler).
  bool sys = true;
  // Of 4 programs, how many get the recording handler (oracle.model.handler).
  uint32_t handler_share = 0;
  // Sometimes a host script of interrupts (oracle.model.host; the host extra).
  bool interrupts = false;
  bool raw = true;             // primitive forms of if and loops, jumps over dead code
  bool spin = false;           // main ends with a loop that never ends (livelock oracle)
  uint32_t atomic_weight = 2;  // of atomic statements among the communicating ones
  // The wave sizes to choose from; the first ones are preferred when shrinking.
  std::vector<uint32_t> waves = {8, 4, 16, 32, 1, 2, 64};
  // SIMD widths a runner supports (empty: any); the program's simd is wave/1, /2 or /4.
  std::set<uint32_t> simds;
  uint32_t max_warps = 8;  // warps x workgroups
  // Mixed-wave-size programs (oracle.model.regions): of 4 programs, how many get
  // one to three sub-vector regions among the top-level statements of main
  // (drawn after everything else, so a program without them is the one version 4
  // generated from its seed).
  uint32_t region_share = 0;
  // Region bodies within oracle.model.regions (lane-local). Without it (the
  // structured and differential invariants, which compare two semantics of
  // whatever a region does) bodies may also read s5 and %exec, hold cross-lane,
  // shared-buffer, per-lane atomic, skip, counted-loop, exec-narrowing and trap
  // statements, and normal code after a region may read its shared temporaries
  // (wave.shared.observe); such programs also get a SIMD width below the wave.
  bool region_strict = true;
  // The (wave, simd) pairs to launch at (empty: `waves` and `simds` decide).
  std::vector<std::pair<uint32_t, uint32_t>> shapes;
  // oracle.invariant.wave_equivalence: nothing depends on the launch shape (no
  // %lane or special register operand, no exit of a whole warp), and the
  // program has 64 or 128 threads whatever its shape.
  bool shape_free = false;
  // oracle.invariant.modesel: no primitive forms (a top-level label would start a
  // segment) and scalar loads of `in` only (the last segment stores to `out`).
  bool modesel_safe = false;
  // oracle.model.hostprog: of 4 programs, how many are host programs (with a host
  // script of every action kind where `interrupts` allows scripts). Drawn after
  // everything else, so a program that is not one is the version 5 program of its
  // seed; 4 generates host programs only.
  uint32_t host_share = 0;
  // oracle.model.spin: of 4 programs (not under `random`, where a spin never ends
  // livelock), how many end main with a spin (raw, without barriers; exits stay
  // allowed). Drawn after everything but host programs.
  uint32_t spin_share = 0;
  // oracle.model.preempt: of 4 programs, how many carry preemption points in
  // their host script (and so the standard system routine). Drawn last.
  uint32_t preempt_share = 0;
};

// The generator version, recorded in the origin of regression files.
inline constexpr int kGeneratorVersion = 7;

// oracle.model.regions: the (wave, simd) pairs of mixed-wave-size programs.
const std::vector<std::pair<uint32_t, uint32_t>>& region_shapes();

rc::Gen<Program> program(const Options& o);

// Options per invariant (oracle.invariants). With the capabilities of the
// implementation under test (differential), programs stay within what it
// supports where the generator can choose (oracle.gen.capabilities).
Options options_for(const Invariant& invariant, const runners::Capabilities* caps = nullptr);
// The same by name (default options for an unknown name).
Options options_for(const std::string& invariant, const runners::Capabilities* caps = nullptr);

// oracle.model.preempt: the intruder program of a flow-B preemption of p on
// `core` (an index, or syntax::kAllCores): it overwrites every byte of the SLM
// windows the launch has on those cores with a pattern drawn from `seed`.
std::string intruder_text(const Program& p, int32_t core, uint32_t seed);

// The most mask-stack entries and PC-stack entries a program can hold at once,
// over every path (an upper bound: recursion is counted to its budget).
uint32_t mask_need(const Program& p);
uint32_t call_need(const Program& p);

}  // namespace simt::gen
