// Oracles for what no second semantics covers (spec/oracles.md): the scheduling
// policies against direct transcriptions of their clauses, livelock detection
// against an exact detector, and the validator against single-instruction
// mutations that break a programming-model rule.
#pragma once

#include <string>

#include "oracles.h"

namespace simt::gen {

// oracle.invariant.policy
Check policy_oracle(const Program& p, const std::string& text, OracleContext& ctx);
// oracle.invariant.livelock
Check livelock_oracle(const Program& p, const std::string& text, OracleContext& ctx);
// oracle.invariant.validator
Check validator_oracle(const Program& p, const std::string& text, OracleContext& ctx);

// The mutations of oracle.invariant.validator: each one edit of the program
// text that breaks one rule, with the clause the rejection must name.
struct Mutation {
  std::string name;    // e.g. "pop-at-entry"
  std::string clause;  // e.g. "valid.flow.pop"
  std::string text;    // the mutated program
};
// Every mutation that applies to the loaded program (its source and expansion).
std::vector<Mutation> mutations(const std::string& text);

}  // namespace simt::gen
