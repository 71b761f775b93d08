// Helpers shared by the unit tests: load and run program text in process.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/machine.h"
#include "harness.h"
#include "host/host.h"
#include "json.h"
#include "oracles.h"
#include "syntax/ast.h"
#include "syntax/diag.h"

namespace simt::exec {
// Readable failure messages for statuses (found by GoogleTest through ADL).
void PrintTo(Status s, std::ostream* os);
}  // namespace simt::exec

namespace simt::test {

struct Run {
  std::optional<exec::Outcome> outcome;  // absent if the program did not load
  std::string diags;                     // formatted diagnostics (file name "test")
  std::shared_ptr<const exec::Program> program;
  bool ok() const { return outcome.has_value(); }
  exec::Status status() const { return outcome ? outcome->status : exec::Status::StepLimit; }
};

host::LoadResult load(std::string_view text, host::LoadOptions opt = {});
// Loads and runs; `no_validate` skips the flow checks so run-time events can be seen.
Run run(std::string_view text, host::LoadOptions opt = {});
Run run_unvalidated(std::string_view text);
// A program that must load: otherwise a test failure (with its diagnostics) and nullptr.
std::shared_ptr<const exec::Program> build(std::string_view text, host::LoadOptions opt = {});
// The outcome of a program that must load (a default outcome if it does not).
exec::Outcome outcome(std::string_view text, host::LoadOptions opt = {});
exec::Outcome outcome_unvalidated(std::string_view text);  // flow checks off

// Values of an output buffer as 32-bit words (u32/i32 buffers).
std::vector<uint32_t> words(const exec::Outcome& o, std::string_view buffer);

// Path of a file in the source tree.
std::string source_path(std::string_view relative);

// A whole file as bytes ("" if it cannot be read); a file written from text.
std::string read_all(const std::filesystem::path& p);

// format.lint: every test of `suite` lints against spec/ (each issue is a test
// failure).
void expect_lints(const harness::Suite& suite);
// Runs every configuration of `suite` on `runner` with default options; `each`
// sees every result record.
harness::Summary run_suite(runners::Runner& runner, const harness::Suite& suite,
                           const std::function<void(const json::Value&)>& each = {});

// A test suite with a folder of its own, `Derived::kDirPrefix` and the process
// id under the system's temporary folder: made before the suite's first test,
// removed after its last.
template <class Derived>
class TempDirSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() /
           (std::string(Derived::kDirPrefix) + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  static std::filesystem::path dir() { return dir_; }

 private:
  static inline std::filesystem::path dir_;
};

// A shell word: `s` in single quotes.
std::string shell_quote(std::string_view s);

struct CommandResult {
  bool exited = false;  // ended normally (not by a signal)
  int code = -1;        // exit code if it did
  std::string out, err;
};
// The bound of each command run_command runs: a guard against a hang, not a speed
// target (bench/ has those). Sized for the ASan+UBSan build on a loaded 2-core
// machine, where `simtspec fuzz --count 40` over every invariant took over 20 s.
inline constexpr int kCommandBoundSeconds = 60;
// Runs `program ARGS` (ARGS already quoted as needed) with kCommandBoundSeconds as
// its bound and no input, its output captured through files in `dir`.
CommandResult run_command(const std::string& program, const std::string& args,
                          const std::filesystem::path& dir);
void write_all(const std::filesystem::path& p, std::string_view text);

// The diagnostics of parsing `src`, in source order, and as text for messages.
std::vector<syntax::Diagnostic> parse_errors(std::string_view src);
std::string show(const std::vector<syntax::Diagnostic>& ds);
// Exactly one syntax error, at line:col, whose message contains `substr`.
void expect_syntax_error(std::string_view src, uint32_t line, uint32_t col,
                         std::string_view substr);

// Size expression builders (syntax.buffer.size).
syntax::SizeExpr num(int64_t n);
syntax::SizeExpr sym(std::string s);
syntax::SizeExpr bin(syntax::SizeExpr::Kind k, syntax::SizeExpr l, syntax::SizeExpr r);
syntax::SizeExpr neg(syntax::SizeExpr x);  // unary minus

// A conformance test (format.header) of a signed compare, at waves 8 and 64: the
// cmp-unsigned fault of the faulty implementation fails it.
extern const char* const kSignedCompareTest;

// A conformance test whose counter loop has no step cap to speak of (.max_steps
// 2^64 - 1): only a wall-clock limit ends it (runner.timeout).
extern const char* const kRunawayTest;

// A runner description (TOML, runner.process.toml) of the test-only faulty
// implementation with one named fault ("none": the reference behind the
// protocol), claiming every capability of the machine so far.
std::string faulty_runner_toml(std::string_view fault, double timeout = 20);

// One invariant's check of a generated program (oracle.invariant.*), with the
// seed and runner (none: the reference) it is given.
gen::Check check(const std::string& invariant, const gen::Program& p, uint64_t seed = 0,
                 runners::Runner* runner = nullptr);

// The faulty implementation with one named fault, as a process runner.
std::unique_ptr<runners::Runner> faulty_runner(const std::string& fault, double timeout = 20);

// What fuzz_finds_fault found: the failure, its regression test's text, and how
// many programs were checked.
struct FoundFault {
  uint64_t programs = 0;
  uint64_t original_instructions = 0, shrunk_instructions = 0;
  std::string text;
};

// oracle.fuzz with --runner, oracle.regress: `simtspec fuzz --invariant
// INVARIANT` (seed 20261122, 3000 programs, two jobs) against the faulty
// implementation with `fault` finds it once, shrinks the failure and writes a
// regression test that lints, passes on the reference and fails on the fault.
// Fills `out` (callers check HasFatalFailure() before using it).
void fuzz_finds_fault(const std::string& invariant, const std::string& fault, FoundFault* out);

// A parameterised test's name from an invariant and a fault ('-' becomes '_').
std::string fault_case_name(std::string_view invariant, std::string_view fault);

}  // namespace simt::test
