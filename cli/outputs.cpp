#include "outputs.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
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

int write_outputs(reports::ResultsFile rf, const std::string& out, const std::string& spec_dir) {
  std::ofstream(out + "/junit.xml") << reports::junit_xml(rf);
  std::ofstream(out + "/results.json") << json::dump(reports::document(rf), 1) << "\n";
  std::vector<reports::ResultsFile> files;
  files.push_back(std::move(rf));
  std::string err = reports::write_html(files, harness::load_clauses(spec_dir), out);
  if (!err.empty()) {
    std::cerr << "simtspec: report: " << err << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

std::optional<std::pair<uint32_t, uint32_t>> parse_shard(const std::string& text) {
  uint32_t i = 0, n = 0;
  char slash = 0;
  std::istringstream ss(text);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || !(ss >> i >> slash) ||
      slash != '/' || !std::isdigit(ss.peek()) || !(ss >> n) || n == 0 || i >= n || !ss.eof())
    return std::nullopt;
  return std::pair(i, n);
}

}  // namespace simt::cli
