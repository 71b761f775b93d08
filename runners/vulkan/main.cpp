// simtspec-vulkan: the Vulkan runner (runners/vulkan/README.md). It speaks the
// process protocol of spec/runner.md (runner.protocol) on stdin/stdout and runs
// each program as a Vulkan compute shader (translate.h) on a Vulkan device: the
// first one the loader offers, or the one --device names (--info lists them).
// runners/vulkan/lavapipe.toml selects lavapipe, swiftshader.toml SwiftShader,
// gpu.toml a GPU.
//
// Three kinds of process. The one the harness starts (the supervisor) first asks a
// probe process which device it gets and which waves it runs. It then loads each
// request with the reference's front end to learn its wave, and forwards it, over
// the same protocol, to a driver process for that wave, so that a driver that
// crashes or hangs never takes the supervisor down. The waves: on lavapipe, whose
// subgroup size is LP_NATIVE_VECTOR_WIDTH / 32, read once per process, 2, 4, 8 and
// 16 (one width per driver process); on any other device its subgroup size, and
// with subgroup size control every size the device allows in compute shaders (a
// pipeline requires the program's wave). A driver process that dies or does not
// answer becomes an `error` answer for that request (runner.protocol.errors) and is
// started again for the next one.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "device.h"
#include "execute.h"
#include "host/host.h"
#include "process.h"
#include "protocol.h"
#include "reference.h"
#include "translate.h"

namespace {

using namespace simt;
using runners::error;
using runners::RunRequest;
using runners::RunResult;
using runners::unsupported;

constexpr const char* kUsage =
    "usage: simtspec-vulkan [--icd FILE] [--device N] [--dispatch-timeout SECONDS]\n"
    "                       [--allow-wave W]...\n"
    "       simtspec-vulkan --info [--icd FILE] [--device N]\n"
    "Speaks the simtspec runner protocol (spec/runner.md) on stdin/stdout and runs each\n"
    "program on a Vulkan device (runners/vulkan/README.md).\n"
    "  --icd FILE              the Vulkan driver (VK_ICD_FILENAMES) of the driver processes\n"
    "  --device N              the N-th physical device the loader lists (--info); default:\n"
    "                          the first with Vulkan 1.2 and a compute queue\n"
    "  --dispatch-timeout S    seconds a shader may run before the request is an error (8)\n"
    "  --allow-wave W          also run wave W although the device cannot run it correctly\n"
    "                          (tests the handling of a crashing driver)\n"
    "  --info                  list the devices with their subgroup sizes and operations,\n"
    "                          and the waves this runner runs on the chosen one\n";

// lavapipe's subgroup size is LP_NATIVE_VECTOR_WIDTH / 32 (../shared/design/VULKAN.md):
// 64, 128, 256 and 512 give subgroups of 2, 4, 8 and 16 that execute correctly.
const std::set<uint32_t> kLavapipeWaves = {2, 4, 8, 16};

const char* kLavapipeWhy =
    "lavapipe executes subgroups of 2, 4, 8 and 16 lanes (LP_NATIVE_VECTOR_WIDTH 64 to 512); at "
    "1024 and above it reports 32 or more lanes but executes only 16, and at 32 (one lane) it "
    "crashes";

struct Options {
  std::string icd;
  std::optional<uint32_t> device;  // --device
  double dispatch_timeout = 8.0;
  std::set<uint32_t> allowed;  // --allow-wave
  uint32_t worker_wave = 0;    // > 0: this is the driver process for that wave
  bool lavapipe = false;       // the driver process: the device is lavapipe
  bool info = false;
  bool probe = false;
};

// What the probe process found: the device and the waves the runner runs on it.
struct Probe {
  std::string problem;  // non-empty: no usable device, the message of every answer
  std::string device;   // "SwiftShader Device (Subzero), Vulkan 1.3.0"
  bool lavapipe = false;
  std::set<uint32_t> waves;
  std::string why_not;  // why other waves are unsupported
};

std::string join(const std::vector<uint32_t>& v, const char* sep) {
  std::string s;
  for (uint32_t x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

// The waves the runner runs on a device, and why not others (runners/vulkan/README.md).
Probe probe_of(const vulkan::DeviceInfo& i) {
  Probe p;
  p.device = i.name + ", Vulkan " + i.api_version_string();
  p.lavapipe = i.lavapipe();
  if (p.lavapipe) {
    p.waves = kLavapipeWaves;
    p.why_not = kLavapipeWhy;
    return p;
  }
  const std::vector<uint32_t> sizes = i.subgroup.sizes();
  p.waves.insert(sizes.begin(), sizes.end());
  p.why_not = i.name + " runs compute subgroups of " + join(sizes, ", ") + " lanes" +
              (i.subgroup.size_control
                   ? " (subgroup size control from " + std::to_string(i.subgroup.min_size) +
                         " to " + std::to_string(i.subgroup.max_size) + ")"
                   : " (no subgroup size control in compute shaders)");
  return p;
}

bool parse_u32(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = static_cast<uint32_t>(std::stoul(s));
  return true;
}

// Sets up the environment the driver reads when the device is created: the ICD,
// the device, and on lavapipe the vector width that gives subgroups of `wave`.
void driver_environment(const Options& o, uint32_t wave) {
  if (!o.icd.empty()) ::setenv("VK_ICD_FILENAMES", o.icd.c_str(), 1);
  if (o.device) vulkan::Device::select(*o.device);
  if (o.lavapipe && wave > 0) {
    ::setenv("LP_NATIVE_VECTOR_WIDTH", std::to_string(32 * wave).c_str(), 1);
    // Mesa's on-disk shader cache ignores LP_NATIVE_VECTOR_WIDTH in its key: a shader
    // cached at one width runs wrongly at another.
    ::setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
  }
}

// ---- the driver process ---------------------------------------------------------

// A device error as every answer's message: it starts "no Vulkan device" (which the
// tests and a reader look for) once.
std::string no_device(const vulkan::Error& e) {
  const std::string s = e.to_string();
  return s.rfind("no Vulkan device", 0) == 0 ? s : "no Vulkan device: " + s;
}

int worker(const Options& o) {
  // Ends with the supervisor, even when it is killed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 0;
  driver_environment(o, o.worker_wave);
  auto dev = vulkan::Device::get();
  std::string device_problem;
  if (!dev.ok()) {
    device_problem = no_device(dev.error());
  } else if ((*dev)->info().lavapipe() != o.lavapipe) {
    device_problem = "the device (" + (*dev)->info().name + ") is not the one the probe found";
  } else if (o.lavapipe && (*dev)->info().subgroup.size != o.worker_wave) {
    device_problem = "the device (" + (*dev)->info().name + ") has subgroups of " +
                     std::to_string((*dev)->info().subgroup.size) + " lanes with " +
                     "LP_NATIVE_VECTOR_WIDTH=" + std::to_string(32 * o.worker_wave) + ", not " +
                     std::to_string(o.worker_wave);
  }
  std::unique_ptr<vulkan::Executor> executor;
  if (device_problem.empty()) executor = std::make_unique<vulkan::Executor>(**dev);
  const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(o.dispatch_timeout));

  std::ios::sync_with_stdio(false);
  runners::serve(std::cin, std::cout, [&](const RunRequest& req) -> RunResult {
    auto first = runners::load_request(req);  // the rejection to answer, if any
    if (auto* rejected = std::get_if<RunResult>(&first)) return *rejected;
    if (!device_problem.empty()) return error(device_problem);
    host::LoadOptions opt = runners::load_options(req.config);
    opt.validate_flow = req.validate;
    auto loaded = host::load(req.program, opt);
    if (!loaded.loaded)
      return error(
          "internal error: the program loads for the reference but not for the translator");
    vulkan::Device& d = **dev;
    vulkan::TranslateOptions topt;
    topt.subgroup_size = o.worker_wave;
    topt.max_workgroup_invocations = d.info().max_workgroup_invocations;
    topt.max_storage_buffers = d.info().max_storage_buffers;
    topt.max_shared_memory = d.info().max_shared_memory;
    topt.subgroup_operations = d.info().subgroup.operations;
    vulkan::TranslateResult tr = vulkan::translate(*loaded.loaded, topt);
    if (!tr.ok()) return unsupported("not translated: " + tr.unsupported);
    auto ran = executor->run(*loaded.loaded->program, *tr.translation, timeout);
    if (ran.ok() && ran->device.retry_exact) {
      // A launch of one warp reached max_steps: again, stopping exactly at the limit
      // (exec.step.order). The first run costs nothing in the common case.
      topt.exact_step_limit = true;
      tr = vulkan::translate(*loaded.loaded, topt);
      if (!tr.ok()) return unsupported("not translated: " + tr.unsupported);
      ran = executor->run(*loaded.loaded->program, *tr.translation, timeout);
    }
    // Warps of different workgroups run in parallel threads on lavapipe: a per-lane
    // atomic another warp's atomic came between (atom.step) is a matter of timing,
    // and rare; a few more dispatches usually reproduce the reference's order.
    for (int again = 0; again < vulkan::kTransientRetries && ran.ok() && ran->device.transient;
         ++again)
      ran = executor->run(*loaded.loaded->program, *tr.translation, timeout);
    if (!ran.ok()) {
      const vulkan::Error& e = ran.error();
      if (e.kind == vulkan::Error::Kind::Timeout)
        return error("the shader did not finish within " + std::to_string(o.dispatch_timeout) +
                     " s (--dispatch-timeout)");
      return error(e.to_string());
    }
    if (ran->device.kind == vulkan::DeviceOutcome::Kind::NotReproduced)
      return unsupported("not reproduced on the device: " + ran->device.reason);
    RunResult r;
    r.kind = RunResult::Kind::Outcome;
    r.outcome = runners::to_model(ran->outcome);
    return r;
  });
  return 0;
}

// ---- the supervisor ---------------------------------------------------------------

std::string self_path(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

// Common arguments of the probe and driver processes.
std::vector<std::string> device_args(const Options& o) {
  std::vector<std::string> a;
  if (!o.icd.empty()) a.insert(a.end(), {"--icd", o.icd});
  if (o.device) a.insert(a.end(), {"--device", std::to_string(*o.device)});
  return a;
}

// The probe process: opens the device as a driver process would (without a wave)
// and prints one line: "ok LAVAPIPE WAVES... | DEVICE | WHY-NOT" or "problem MESSAGE".
int probe(const Options& o) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  driver_environment(o, 0);
  auto dev = vulkan::Device::get();
  if (!dev.ok()) {
    std::cout << "problem " << no_device(dev.error()) << "\n";
    return 1;
  }
  const Probe p = probe_of((*dev)->info());
  std::cout << "ok " << p.lavapipe;
  for (uint32_t w : p.waves) std::cout << ' ' << w;
  std::cout << " | " << p.device << " | " << p.why_not << "\n";
  return 0;
}

// Runs the probe process, at most 60 s (a driver that hangs while starting).
Probe run_probe(const Options& o, const std::string& self) {
  std::string cmd = "timeout -s KILL 60 " + runners::shell_quote(self) + " --probe";
  for (const std::string& a : device_args(o)) cmd += " " + runners::shell_quote(a);
  cmd += " 2>/dev/null";
  Probe p;
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while (out.size() < (1u << 16) && (n = std::fread(buf, 1, sizeof buf, f)) > 0)
      out.append(buf, n);
    const int status = ::pclose(f);
    if (out.rfind("ok ", 0) != 0 && out.rfind("problem ", 0) != 0)
      out = "problem no Vulkan device: the probe process ended with status " +
            std::to_string(status) + " and printed nothing usable";
  } else {
    out = "problem no Vulkan device: the probe process could not be started";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.rfind("problem ", 0) == 0) {
    p.problem = out.substr(8);
    return p;
  }
  // "ok L W... | DEVICE | WHY"
  const size_t bar1 = out.find(" | "), bar2 = out.find(" | ", bar1 + 3);
  std::istringstream head(out.substr(3, bar1 - 3));
  int lavapipe = 0;
  head >> lavapipe;
  p.lavapipe = lavapipe != 0;
  uint32_t w;
  while (head >> w) p.waves.insert(w);
  if (bar1 == std::string::npos || bar2 == std::string::npos || p.waves.empty()) {
    p.problem = "no Vulkan device: the probe process printed '" + out + "'";
    return p;
  }
  p.device = out.substr(bar1 + 3, bar2 - bar1 - 3);
  p.why_not = out.substr(bar2 + 3);
  return p;
}

int supervisor(const Options& o, const std::string& self) {
  std::optional<Probe> found;  // probed at the first request that needs a device
  std::map<uint32_t, std::unique_ptr<runners::Runner>> drivers;
  auto driver = [&](uint32_t wave) -> runners::Runner& {
    auto& slot = drivers[wave];
    if (!slot) {
      runners::ProcessSpec spec;
      spec.name = "driver process for wave " + std::to_string(wave);
      spec.command = self;
      spec.args = {"--worker", std::to_string(wave), "--dispatch-timeout",
                   std::to_string(o.dispatch_timeout)};
      if (found->lavapipe) spec.args.push_back("--lavapipe");
      for (const std::string& a : device_args(o)) spec.args.push_back(a);
      // Starting the device and compiling a shader take well under a second; the
      // margin above the dispatch timeout covers a loaded machine.
      spec.timeout = o.dispatch_timeout + 10.0;
      slot = runners::make_process_runner(std::move(spec));
    }
    return *slot;
  };
  std::ios::sync_with_stdio(false);
  runners::serve(std::cin, std::cout, [&](const RunRequest& req) -> RunResult {
    auto loaded = runners::load_request(req);
    if (auto* rejected = std::get_if<RunResult>(&loaded)) return *rejected;
    if (!found) found = run_probe(o, self);
    if (!found->problem.empty()) return error(found->problem);
    const uint32_t wave = std::get<0>(loaded)->config.wave;
    if (!found->waves.count(wave) && !o.allowed.count(wave))
      return unsupported("wave " + std::to_string(wave) + ": " + found->why_not);
    RunResult r = driver(wave).run(req);
    if (!r.stderr_text.empty()) std::cerr << r.stderr_text << std::flush;
    if (r.kind == RunResult::Kind::Error)
      r.message = "the driver process for wave " + std::to_string(wave) + ": " + r.message;
    return r;
  });
  for (auto& [w, d] : drivers) d->shutdown();
  return 0;
}

// --info: every device the loader lists, then the waves the runner runs on the
// chosen one (on lavapipe, each wave checked in its own process).
int info(const Options& o, const std::string& self) {
  if (!o.icd.empty()) ::setenv("VK_ICD_FILENAMES", o.icd.c_str(), 1);
  auto list = vulkan::list_devices();
  if (!list.ok()) {
    std::cout << list.error().to_string() << "\n";
    return 1;
  }
  for (const vulkan::DeviceSummary& d : *list) {
    const vulkan::DeviceInfo& i = d.info;
    std::cout << "device " << d.index << ": " << i.name << ", " << i.driver << ", Vulkan "
              << i.api_version_string() << ", " << i.type_name() << ", subgroup " << i.subgroup.size
              << " (sizes " << join(i.subgroup.sizes(), " ") << "; " << i.subgroup.operation_names()
              << ")";
    if (!d.unusable.empty()) std::cout << ", not usable: " << d.unusable;
    std::cout << "\n";
  }
  const Probe p = run_probe(o, self);
  if (!p.problem.empty()) {
    std::cout << p.problem << "\n";
    return 1;
  }
  std::cout << "runs on: " << p.device
            << "\nwaves: " << join(std::vector<uint32_t>(p.waves.begin(), p.waves.end()), " ")
            << "\n";
  if (!p.lavapipe) return 0;
  int status = 0;
  for (uint32_t wave : p.waves) {
    std::string cmd =
        runners::shell_quote(self) + " --worker-info " + std::to_string(wave) + " --lavapipe";
    for (const std::string& a : device_args(o)) cmd += " " + runners::shell_quote(a);
    std::cout << std::flush;
    if (std::system(cmd.c_str()) != 0) status = 1;
  }
  return status;
}

int worker_info(const Options& o) {
  driver_environment(o, o.worker_wave);
  auto dev = vulkan::Device::get();
  if (!dev.ok()) {
    std::cout << "wave " << o.worker_wave << ": " << dev.error().to_string() << "\n";
    return 1;
  }
  const auto& i = (*dev)->info();
  std::cout << "wave " << o.worker_wave << ": " << i.name << ", " << i.driver << ", Vulkan "
            << i.api_version_string() << ", subgroup " << i.subgroup.size << " ("
            << i.subgroup.operation_names() << ")\n";
  return i.subgroup.size == o.worker_wave ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool worker_info_mode = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    uint32_t n = 0;
    if (a == "--icd" && value(o.icd)) {
    } else if (a == "--dispatch-timeout" && value(v)) {
      char* end = nullptr;
      o.dispatch_timeout = std::strtod(v.c_str(), &end);
      if (*end || !(o.dispatch_timeout > 0) || o.dispatch_timeout > 3600) {
        std::cerr << "simtspec-vulkan: --dispatch-timeout takes seconds in (0, 3600]\n";
        return 2;
      }
    } else if (a == "--device" && value(v) && parse_u32(v, n)) {
      o.device = n;
    } else if (a == "--allow-wave" && value(v) && parse_u32(v, n) && n >= 1 && n <= 64) {
      o.allowed.insert(n);
    } else if (a == "--lavapipe") {
      o.lavapipe = true;
    } else if (a == "--probe") {
      o.probe = true;
    } else if ((a == "--worker" || a == "--worker-info") && value(v) && parse_u32(v, n) && n >= 1 &&
               n <= 64) {
      o.worker_wave = n;
      worker_info_mode = a == "--worker-info";
    } else if (a == "--info") {
      o.info = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "simtspec-vulkan: bad argument '" << a << "'\n" << kUsage;
      return 2;
    }
  }
  const std::string self = self_path(argv[0]);
  if (o.probe) return probe(o);
  if (worker_info_mode) return worker_info(o);
  if (o.worker_wave) return worker(o);
  if (o.info) return info(o, self);
  return supervisor(o, self);
}
