#include "common.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <iostream>

#include "exec/config.h"
#include "format.h"
#include "harness.h"

namespace simt::cli {

namespace {

// A setting's flag help: the row's help, and the directive it overrides.
std::string flag_help(exec::Setting s) {
  const exec::SettingInfo& i = exec::setting_info(s);
  std::string help(i.help);
  if (i.directive) return help + " (overrides ." + std::string(i.name) + ")";
  return help + " (overrides the configuration file)";
}

// A flag's value as an override (state.launch.sources); false after printing the
// error for a value of the right type that names nothing (an unknown policy).
template <exec::SettingType T>
bool flag_value(const exec::SettingWritten<T>& written, std::optional<exec::SettingValue<T>>& out) {
  if constexpr (T == exec::SettingType::Policy) {
    if (written.empty()) return true;  // `--policy ''` leaves the policy alone
    auto p = exec::find_policy(written);
    if (!p) {
      std::cerr << "simtspec: unknown policy '" << written
                << "' (round_robin, lowest_pc_first, oldest_first, random)\n";
      return false;
    }
    out = *p;
  } else {
    out = written;
  }
  return true;
}

}  // namespace

void LaunchFlags::add(CLI::App& app) {
  // Every launch setting (exec/settings.def); its value is checked with the
  // program's (state.launch.check), like a directive's.
#define SIMT_SETTING(name, ...)                                                              \
  o_##name = app.add_option(std::string(exec::setting_info(exec::Setting::name).flag), name, \
                            flag_help(exec::Setting::name));
#include "exec/settings.def"
  app.add_option("--config", config, "TOML launch configuration ([launch] table)");
  app.add_option("--host", host,
                 "TOML host script: [[host]] tables of timed host actions (spec/trap.md, "
                 "trap.host.toml)");
  app.add_flag("--no-validate", no_validate,
               "skip the flow checks of the programming model (observe run-time events instead)");
}

std::optional<host::LoadOptions> LaunchFlags::options() const {
  host::LoadOptions opt;
  if (!config.empty()) {
    if (auto err = host::load_config_toml(config, opt.toml)) {
      std::cerr << "simtspec: " << *err << "\n";
      return std::nullopt;
    }
  }
  if (!host.empty()) {  // trap.host.toml: a TOML file, or a test file's [[host]]
    std::string text, err;
    if (!host::read_file(host, text, err)) {
      std::cerr << "simtspec: " << err << "\n";
      return std::nullopt;
    }
    auto test = harness::parse_test(host, text);
    if (auto* t = std::get_if<harness::TestFile>(&test)) {
      opt.host = t->host;
    } else if (auto* errs = std::get_if<std::vector<harness::FormatError>>(&test)) {
      for (const auto& e : *errs)
        std::cerr << host << ":" << (e.line ? e.line : 1) << ":1: " << e.message << "\n";
      return std::nullopt;
    } else if (auto e = host::parse_host_toml(text, host, opt.host)) {
      std::cerr << *e << "\n";  // located: file:line:col: message
      return std::nullopt;
    }
  }
  auto& c = opt.cli;
#define SIMT_SETTING(name, T, ...)                                                      \
  if (o_##name && o_##name->count() && !flag_value<exec::SettingType::T>(name, c.name)) \
    return std::nullopt;
#include "exec/settings.def"
  opt.validate_flow = !no_validate;
  return opt;
}

std::optional<host::Loaded> load_file(const std::string& path, const host::LoadOptions& opt,
                                      std::string* text_out) {
  std::string text, err;
  if (!host::read_file(path, text, err)) {
    std::cerr << "simtspec: " << err << "\n";
    return std::nullopt;
  }
  auto r = host::load(text, opt);
  if (!r.loaded) {
    std::cerr << r.diags.format(path);
    return std::nullopt;
  }
  if (text_out) *text_out = std::move(text);
  return std::move(r.loaded);
}

std::string self_path(const std::string& argv0) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && !exe.empty()) return exe.string();
  if (argv0.find('/') == std::string::npos) return argv0;  // found in PATH
  return std::filesystem::absolute(argv0, ec).lexically_normal().string();
}

uint32_t job_count(uint32_t asked, size_t work) {
  const uint32_t cpus = std::max(1u, std::thread::hardware_concurrency());
  const uint32_t want = asked ? asked : cpus;
  const uint32_t cap = 8 * cpus;
  uint32_t jobs = std::min<uint32_t>(want, cap);
  jobs = static_cast<uint32_t>(std::min<size_t>(jobs, std::max<size_t>(work, 1)));
  if (asked > cap)
    std::cerr << "simtspec: note: --jobs " << asked << " is more than 8 per CPU; using " << cap
              << " (" << cpus << " CPUs)\n";
  return jobs;
}

std::string default_regress_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The spec folder found from the working directory upwards, else the sources'.
  const fs::path root = fs::path(harness::find_spec_dir("", ".")).parent_path();
  if (fs::exists(root / "spec" / "README.md", ec) && fs::is_directory(root / "suites", ec))
    return (root / "suites" / "regress").string();
  return "";
}

CLI::Validator in_range(uint64_t lo, uint64_t hi, const std::string& words) {
  return CLI::Validator(
      [lo, hi, words](std::string& s) -> std::string {
        uint64_t v = 0;
        size_t used = 0;
        try {
          if (s.empty() || s[0] == '-' || s[0] == '+') throw std::invalid_argument(s);
          v = std::stoull(s, &used, 10);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != s.size() || used == 0 || v < lo || v > hi)
          return "'" + s + "' is not an integer from " + words;
        return "";
      },
      "", "in_range");
}

CLI::Validator seconds(bool zero_ok, double max) {
  return CLI::Validator(
      [zero_ok, max](std::string& s) -> std::string {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end || !std::isfinite(v) || v < 0 || (!zero_ok && v == 0) ||
            v > max) {
          char most[32] = "";
          if (max < 1e300) std::snprintf(most, sizeof most, ", at most %g", max);
          return "'" + s + "' is not a number of seconds " +
                 (zero_ok ? "(0 or more" : "(more than 0") + most + ")";
        }
        return "";
      },
      zero_ok ? "SECONDS >= 0" : "SECONDS > 0");
}

OutLock::~OutLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> OutLock::acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create the output folder '" + dir + "': " + ec.message();
  const std::string path = dir + "/.simtspec.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return "cannot create '" + path + "': " + std::strerror(errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    return "another simtspec run is writing to '" + dir + "' (it holds " + path +
           "); wait for it or choose another --out";
  }
  return std::nullopt;
}

std::string absolute_arg(const std::string& arg) {
  std::error_code ec;
  if (arg.find('/') == std::string::npos && !std::filesystem::exists(arg, ec)) return arg;
  auto p = std::filesystem::absolute(arg, ec);
  return ec ? arg : p.lexically_normal().string();
}

}  // namespace simt::cli
