// The process runner: any executable speaking the runner protocol
// (spec/runner.md, runner.protocol.*), described by a TOML file (runner.toml).
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runner.h"

namespace simt::runners {

struct ProcessSpec {
  std::string name;
  std::string version;
  std::string command;  // resolved path or a name looked up in PATH
  std::vector<std::string> args;
  bool persistent = true;
  double timeout = 10.0;  // seconds per run
  std::vector<std::string> xfail;
  Capabilities caps;
  std::string file;  // the description file, for reports
};

std::variant<ProcessSpec, std::string> parse_process_spec(const std::string& toml_text,
                                                          const std::string& file);
std::variant<ProcessSpec, std::string> load_process_spec(const std::string& file);
std::unique_ptr<Runner> make_process_runner(ProcessSpec spec);

}  // namespace simt::runners
