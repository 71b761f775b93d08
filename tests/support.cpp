#include "support.h"

#include <gtest/gtest.h>

namespace simt::test {

host::LoadResult load(std::string_view text, host::LoadOptions opt) {
  return host::load(text, opt);
}

Run run(std::string_view text, host::LoadOptions opt) {
  Run r;
  auto loaded = host::load(text, opt);
  if (!loaded.loaded) {
    r.diags = loaded.diags.format("test");
    return r;
  }
  r.program = loaded.loaded->program;
  exec::Machine m(r.program);
  r.outcome = m.run();
  return r;
}

Run run_unvalidated(std::string_view text) {
  host::LoadOptions opt;
  opt.validate_flow = false;
  return run(text, opt);
}

std::vector<uint32_t> words(const exec::Outcome& o, std::string_view buffer) {
  if (auto w = o.words(buffer)) return *w;
  ADD_FAILURE() << "no output buffer named " << buffer;
  return {};
}

std::string source_path(std::string_view relative) {
  return std::string(SIMT_SOURCE_DIR) + "/" + std::string(relative);
}

std::string faulty_runner_toml(std::string_view fault, double timeout) {
  const std::string f(fault);
  return "name = \"faulty-" + f + "\"\ncommand = \"" + std::string(SIMT_BINARY_DIR) +
         "/simtspec-faulty\"\nargs = [\"--fault\", \"" + f +
         "\"]\ntimeout = " + std::to_string(timeout) +
         "\n[capabilities]\nwaves = [1, 2, 4, 8, 16, 32, 64]\n"
         "policies = [\"round_robin\", \"lowest_pc_first\", \"oldest_first\", \"random\"]\n"
         "features = [\"alu\", \"mem\", \"xlane\", \"bar\", \"branch\"]\n"
         "extras = [\"validate\", \"livelock\", \"trace\"]\n";
}

}  // namespace simt::test
