#include "outputs.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string_view>
#include <thread>

#include "common.h"
#include "harness.h"
#include "html.h"

namespace simt::cli {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json::Value host_json() {
  json::Value h;
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  h["hostname"] = std::string(name);
  utsname u{};
  if (::uname(&u) == 0) h["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  h["cpus"] = std::thread::hardware_concurrency();
  return h;
}

int write_outputs(reports::ResultsFile rf, const std::string& out, const std::string& spec_dir,
                  const reports::HtmlOptions& html) {
  std::ofstream(out + "/junit.xml") << reports::junit_xml(rf);
  std::vector<reports::ResultsFile> files;
  files.push_back(std::move(rf));
  std::string err = reports::write_html(files, harness::load_clauses(spec_dir), out, html);
  if (!err.empty()) {
    std::cerr << "simtspec: report: " << err << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

std::optional<std::pair<uint32_t, uint32_t>> parse_shard(const std::string& text) {
  // Two decimal numbers around one '/', nothing else (no signs, no spaces).
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  auto number = [](std::string_view s) -> std::optional<uint32_t> {
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  };
  const auto i = number(std::string_view(text).substr(0, slash));
  const auto n = number(std::string_view(text).substr(slash + 1));
  if (!i || !n || *n == 0 || *i >= *n) return std::nullopt;
  return std::pair(*i, *n);
}

}  // namespace simt::cli
