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
  for (const auto& b : o.buffers) {
    if (b.name != buffer) continue;
    std::vector<uint32_t> out;
    for (size_t i = 0; i + 4 <= b.bytes.size(); i += 4)
      out.push_back(uint32_t{b.bytes[i]} | uint32_t{b.bytes[i + 1]} << 8 |
                    uint32_t{b.bytes[i + 2]} << 16 | uint32_t{b.bytes[i + 3]} << 24);
    return out;
  }
  ADD_FAILURE() << "no output buffer named " << buffer;
  return {};
}

std::string source_path(std::string_view relative) {
  return std::string(SIMT_SOURCE_DIR) + "/" + std::string(relative);
}

}  // namespace simt::test
