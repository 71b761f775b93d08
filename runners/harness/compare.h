// Comparison of outcomes with expectations and with the reference
// (spec/runner.md, runner.harness, runner.differential, runner.firstdiff).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "format.h"
#include "json.h"
#include "runner.h"

namespace simt::harness {

// What the comparison needs to know about a configuration.
struct Layout {
  int64_t wave = 32, simd = 32, warps = 1, workgroups = 1, cores = 1;
  std::map<std::string, size_t> buffer_len;  // declared output-buffer lengths
};

struct Verdict {
  bool ok = true;
  size_t checks = 0;       // values compared
  std::string vacuous;     // set when an expectation compared nothing (format.expect.nonempty)
  std::string message;     // the first difference, in words
  json::Value first_diff;  // the first difference, as data (null when ok)
  std::string against;     // "expectation" or "reference"
};

Verdict check_expectation(const Expectation& x, const runners::RunResult& actual, const Layout& l);
// runner.differential: the actual outcome must equal the reference's.
Verdict compare_with_reference(const runners::RunResult& ref, const runners::RunResult& actual,
                               const Layout& l);

// preempt.image: the implementation's context image must be the reference's,
// byte for byte (the first differing byte is named by its field).
Verdict compare_images(const runners::RunResult& ref, const runners::RunResult& actual);

// runner.own_scheduler: runs `req` on the reference under round_robin,
// lowest_pc_first, oldest_first and random with seeds 1, 2, 3 (each run limited to
// `timeout` seconds, runner.timeout). `depends` is empty when the six outcomes are
// equal (or the reference rejects the program); otherwise it says why not: the
// first policy whose outcome differs from round_robin's, and the difference.
// `error` is set instead when a reference run could not end (a timeout).
struct PolicyCheck {
  std::string depends;
  std::string error;
};
PolicyCheck policy_dependence(const runners::RunRequest& req, const Layout& l, double timeout);

}  // namespace simt::harness
