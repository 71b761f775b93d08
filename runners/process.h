// The process runner: any executable speaking the runner protocol
// (spec/runner.md, runner.protocol.*), described by a TOML file (runner.toml).
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runner.h"

namespace simt::runners {

inline constexpr size_t kDefaultMaxResponse = size_t{64} << 20;  // 64 MiB
inline constexpr size_t kMinMaxResponse = size_t{1} << 10;       // 1 KiB
inline constexpr size_t kMaxMaxResponse = size_t{1} << 32;       // 4 GiB

struct ProcessSpec {
  std::string name;
  std::string version;
  std::string command;  // resolved path or a name looked up in PATH
  std::vector<std::string> args;
  bool persistent = true;
  double timeout = kDefaultTimeout;  // seconds per run (runner.timeout)
  // runner.toml `max_response`: the longest response line read, in bytes; a longer
  // one is an error and ends the process (runner.protocol.errors).
  size_t max_response = kDefaultMaxResponse;
  std::vector<std::string> xfail;
  Capabilities caps;
  std::string file;  // the description file, for reports
};

// `s` as one word of a POSIX shell command: as it is when it has only characters
// the shell leaves alone, else in single quotes (a quote inside as '\'').
std::string shell_quote(const std::string& s);

std::variant<ProcessSpec, std::string> parse_process_spec(const std::string& toml_text,
                                                          const std::string& file);
std::variant<ProcessSpec, std::string> load_process_spec(const std::string& file);
std::unique_ptr<Runner> make_process_runner(ProcessSpec spec);

}  // namespace simt::runners
