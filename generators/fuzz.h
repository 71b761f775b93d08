// The fuzz driver behind `simtspec fuzz` (spec/oracles.md, oracle.fuzz): generate
// programs from seeds, check invariants, shrink failures and write them as
// regression tests.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "oracles.h"
#include "program.h"

namespace simt::gen {

// oracle.fuzz.results: one program checked, as a run's results file records it.
struct ProgramRecord {
  std::string invariant;
  uint64_t k = 0, seed = 0;  // its number in the unsharded run, and its seed
  std::string verdict;       // holds, fails, ignored, unsupported, error
  uint64_t hash = 0;         // text_hash of the program's text (host script included)
  std::string signature;     // of a failure (oracle.fuzz.signature)
};

struct FuzzOptions {
  std::vector<std::string> invariants;  // names; must exist
  uint64_t seed = 0;                    // program k of an invariant uses seed + k
  uint64_t count = 100;                 // programs per invariant (0: until the time is up)
  double seconds = 0;                   // stop after this long (0: no limit)
  // oracle.fuzz.jobs: 1 checks in this process; N > 1 checks in N worker processes
  // (fork()ed), with the same results for a --count run.
  uint32_t jobs = 1;
  int max_size = 100;  // RapidCheck size: 1 + (program seed mod max_size)
  size_t max_shrink_attempts = 5000;
  double max_shrink_seconds = 300;    // per failure (0: no limit), oracle.shrink
  std::string out_dir;                // where shrunk failures are written ("" = nowhere)
  runners::Runner* runner = nullptr;  // for differential (and for shrinking its failures)
  // With jobs > 1 and a runner: opens another instance of the same runner, for
  // each worker process (a runner is never shared across fork). Required then (else fuzz
  // throws std::invalid_argument), unless the runner is the reference.
  std::function<std::unique_ptr<runners::Runner>()> runner_factory;
  std::string runner_arg;             // how the user named the runner, for the reproduce line
  std::string simtspec = "simtspec";  // how the reproduce line names the program
  bool print_programs = false;        // log each program's text and verdict (oracle.fuzz)
  // Called in the process that checked program `seed` (a worker with jobs > 1),
  // after the check; may add per-program counts to `check.counts` (e.g. of the
  // constructs generated), which are summed per invariant (InvariantStats::counters).
  std::function<void(const Invariant&, uint64_t seed, const Program&, Check& check)> after_check;
  // oracle.fuzz.shard: this run checks only the programs k with k mod shards == shard.
  uint64_t shard = 0, shards = 1;
  // oracle.fuzz.dedupe: go on past an invariant's failures; a failure whose
  // signature the run has seen is counted under the first, not shrunk.
  bool keep_going = false;
  // oracle.fuzz.ignore: why a failure with this signature is ignored (nullopt: it is not).
  std::function<std::optional<std::string>(const std::string& signature)> ignore;
  // oracle.fuzz.results: told of each program checked, in program order, in this process.
  std::function<void(const ProgramRecord&)> on_program;
};

struct FuzzFailure {
  std::string invariant;
  uint64_t seed =
      0;  // the program seed: `simtspec fuzz --invariant X --seed S --count 1` repeats it
  int size = 0;
  std::string message;           // of the shrunk program
  std::string original_message;  // of the program as generated
  Program original, shrunk;
  size_t original_instructions = 0, shrunk_instructions = 0;
  size_t shrink_attempts = 0;
  bool shrink_out_of_time = false;  // the time budget ended shrinking early
  std::string file;                 // the regression test written, if any
  uint64_t k = 0;                   // the program's number (seed - the run's seed)
  std::string signature;            // oracle.fuzz.signature
  uint64_t count = 1;  // oracle.fuzz.dedupe: failing programs with this signature in the run
  // oracle.regress.promote: the regression test already in the folder with this
  // signature (then nothing is written and the failure is not shrunk).
  std::string known;
};

struct InvariantStats {
  uint64_t programs = 0;           // generated, including unsupported ones
  uint64_t unsupported = 0;        // not run: the runner lacks a capability they need
  std::string unsupported_reason;  // the first such
  // Unsupported programs by reason: the message up to its first " (" (details such
  // as a seed or a first difference dropped), at most 160 characters.
  std::map<std::string, uint64_t> unsupported_reasons;
  uint64_t failures = 0;  // failing programs, duplicates included, ignored ones not
  uint64_t ignored = 0;   // oracle.fuzz.ignore: failing programs an ignore entry matched
  uint64_t errors = 0;    // programs whose check went wrong (FuzzResult::errors)
  double seconds = 0;     // summed over jobs
  // Check::counts summed over the programs counted in `programs`.
  std::map<std::string, uint64_t> counters;
};

// A check that went wrong without a verdict: the worker process checking the
// program died, or the check threw; or the run had to stop (no seed then).
struct FuzzError {
  std::string invariant;  // "" for the run as a whole
  std::optional<uint64_t> seed;
  std::string message;
};

// oracle.fuzz.ignore: the failures a run ignored with one signature.
struct IgnoredFailures {
  uint64_t count = 0;
  std::string reason;  // the ignore entry's
  uint64_t first_seed = 0;
};

struct FuzzResult {
  std::map<std::string, InvariantStats> stats;
  // One per signature (oracle.fuzz.dedupe), in the order found (lowest program number first).
  std::vector<FuzzFailure> failures;
  std::map<std::string, IgnoredFailures> ignored;  // by signature
  std::vector<FuzzError> errors;
  uint64_t programs = 0;
  double seconds = 0;  // wall time
};

// The seed and size of program k (oracle.fuzz.seeds).
uint64_t program_seed(uint64_t base, uint64_t k);
int program_size(uint64_t seed, int max_size);

// oracle.fuzz.shard: how many programs of each invariant a --count run of shard
// `shard` of `shards` checks (those k < count with k mod shards == shard), and the
// number k of its i-th program.
uint64_t shard_programs(uint64_t count, uint64_t shard, uint64_t shards);
uint64_t shard_program(uint64_t i, uint64_t shard, uint64_t shards);

// oracle.fuzz.results: 64-bit FNV-1a of a program's text.
uint64_t text_hash(std::string_view text);

// oracle.fuzz.signature: "INVARIANT/KIND/EVENT/FAMILY" of a failing check, "-" for
// a part it lacks; KIND is "other" when the check names no first difference.
std::string failure_signature(const std::string& invariant, const Check& c);

// oracle.fuzz.ignore: an implementation's ignore list (`NAME.fuzz-ignore.toml`
// beside its runner description): [[ignore]] tables with `signature` (a glob over
// failure signatures) and `reason`, both non-empty strings.
struct IgnoreEntry {
  std::string signature, reason;
  uint32_t line = 0;
};
// The entries of an ignore list's text, or "LINE: message" for the first problem.
std::variant<std::vector<IgnoreEntry>, std::string> parse_ignore_list(std::string_view text);
// The reason of the first entry whose glob matches `signature`.
std::optional<std::string> ignored_by(const std::vector<IgnoreEntry>& list,
                                      const std::string& signature);

// oracle.regress.promote: the regression tests in `dir` (recursively) by the
// signature in their [origin]; the first in path order for a signature.
std::map<std::string, std::string> known_signatures(const std::string& dir);

// Generates program `seed` for an invariant (thread-safe).
// With `caps`, within the capabilities of the implementation under test.
Program generate_one(const Invariant& inv, uint64_t seed, int max_size,
                     const runners::Capabilities* caps = nullptr);
// Generates program `seed` for an invariant and checks it (differential: within
// the runner's capabilities).
Check check_one(const Invariant& inv, uint64_t seed, int max_size, runners::Runner* runner,
                Program* out = nullptr);

// oracle.fuzz, oracle.fuzz.jobs: checks programs 0, 1, ... of each invariant (interleaved) and
// stops checking an invariant at its first failure, the failing program with the
// lowest number: with --count the result (failures, counts, printed programs and
// log lines but times) is the same for every number of jobs. `log` is called in
// this process only, one line (or printed program) at a time.
FuzzResult fuzz(const FuzzOptions& o, const std::function<void(const std::string&)>& log);

// The regression test for a failure, in the suite's format (oracle.regress).
// oracle.regress: "<invariant>_seed<seed>.simt", the seed in decimal as in the
// file's [origin] (and its id, "regress.<invariant>.seed<seed>").
std::string regression_file_name(const std::string& invariant, uint64_t seed);
std::string regression_test(const FuzzFailure& f, const Check& expected,
                            const std::string& runner_name);

}  // namespace simt::gen
