// Shared pieces of the `simtspec` subcommands: exit codes, loading a program
// file with located diagnostics, launch-option flags.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "host/host.h"

namespace simt::cli {

// Exit codes (README, spec/cli.md): 0 success, 1 a check failed, 2 bad usage or input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;

// Launch options shared by the commands that run or assemble programs: a flag per
// row of exec/settings.def (its value as written, and its option), then the rest.
struct LaunchFlags {
#define SIMT_SETTING(name, T, ...)                   \
  exec::SettingWritten<exec::SettingType::T> name{}; \
  CLI::Option* o_##name = nullptr;
#include "exec/settings.def"
  std::string config;
  std::string host;  // --host FILE.toml (trap.host.toml)
  bool no_validate = false;

  void add(CLI::App& app);
  // Builds load options; on error prints a message and returns nothing.
  std::optional<host::LoadOptions> options() const;
};

// Reads and loads a program; prints `file:line:col: message` diagnostics to stderr.
std::optional<host::Loaded> load_file(const std::string& path, const host::LoadOptions& opt,
                                      std::string* text_out = nullptr);

void register_run(CLI::App& app, int& exit_code);
void register_listing(CLI::App& app, int& exit_code);
void register_print(CLI::App& app, int& exit_code);
void register_doc(CLI::App& app, int& exit_code);
void register_test(CLI::App& app, int& exit_code, const std::string& argv0);
void register_lint(CLI::App& app, int& exit_code);
void register_report(CLI::App& app, int& exit_code);
void register_serve(CLI::App& app, int& exit_code);
void register_fuzz(CLI::App& app, int& exit_code, const std::string& argv0);
void register_image(CLI::App& app, int& exit_code);
void register_merge(CLI::App& app, int& exit_code);    // cmd_merge.cpp
void register_history(CLI::App& app, int& exit_code);  // cmd_history.cpp

// results.record `reproduce`: commands that work from any directory. The running
// program's absolute path (from /proc/self/exe, else argv[0] made absolute), and
// an absolute form of a path argument (a name without '/' that is not a file, such
// as `reference`, is kept).
std::string self_path(const std::string& argv0);
std::string absolute_arg(const std::string& arg);

// --jobs: at most kMaxJobs may be asked for; the run uses at most 8 per CPU and
// never more than there is work (`work` items), printing a note when it uses
// fewer than asked. 0 (not given) means one per CPU.
inline constexpr uint32_t kMaxJobs = 1024;
uint32_t job_count(uint32_t asked, size_t work);

// oracle.regress: `suites/regress` of the project (a folder holding spec/README.md
// and suites/) at or above the working directory, else of the sources simtspec was
// built from if they are there; empty when neither exists.
std::string default_regress_dir();

// An integer option's range, described in words in the help ("1 to 1024") rather
// than by CLI11's validator text, and checked with a message naming the value.
CLI::Validator in_range(uint64_t lo, uint64_t hi, const std::string& words);
// A number of seconds: finite, above 0 (or at least 0 with `zero_ok`), at most
// `max`. CLI11's own range checks would print the whole range of a double.
CLI::Validator seconds(bool zero_ok, double max = 1e300);

// results.lock: holds an exclusive lock on DIR/.simtspec.lock (creating DIR) for as
// long as it lives, so that two runs never write one output folder.
class OutLock {
 public:
  OutLock() = default;
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;
  ~OutLock();
  // A message when the folder cannot be made or another run holds it.
  std::optional<std::string> acquire(const std::string& dir);

 private:
  int fd_ = -1;
};

}  // namespace simt::cli
