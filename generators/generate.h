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
  bool communicate = true;        // cross-lane, shared-memory and exchange statements
  bool multi_warp = true;         // more than one warp (and workgroup)
  bool calls = true;              // functions and calls
  bool exits = true;              // exit inside divergent code
  bool small_mask_depth = false;  // sometimes a .mask_depth of 1 to 4
  bool random_policy = true;      // sometimes the random policy with a seed
  // The wave sizes to choose from; the first ones are preferred when shrinking.
  std::vector<uint32_t> waves = {8, 4, 16, 32, 1, 2, 64};
  uint32_t max_warps = 8;  // warps x workgroups
};

// The generator version, recorded in the origin of regression files.
inline constexpr int kGeneratorVersion = 1;

rc::Gen<Program> program(const Options& o);

// Options per invariant (oracle.invariants). With the capabilities of the
// implementation under test (differential), programs stay within what it
// supports where the generator can choose (oracle.gen.capabilities).
Options options_for(const Invariant& invariant, const runners::Capabilities* caps = nullptr);
// The same by name (default options for an unknown name).
Options options_for(const std::string& invariant, const runners::Capabilities* caps = nullptr);

}  // namespace simt::gen
