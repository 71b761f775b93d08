// simtspec-vulkan: the Vulkan runner (runners/vulkan/README.md). It speaks the
// process protocol of spec/runner.md (runner.protocol) on stdin/stdout and runs
// each program as a Vulkan compute shader (translate.h) on the device the Vulkan
// loader offers: lavapipe, selected by runners/vulkan/lavapipe.toml.
//
// Two kinds of process. The one the harness starts (the supervisor) loads each
// request with the reference's front end to learn its wave, and forwards it, over
// the same protocol, to a driver process for that wave: lavapipe reads its
// subgroup size (LP_NATIVE_VECTOR_WIDTH / 32) once per process, and a driver that
// crashes or hangs must not take the supervisor down. A driver process that dies
// or does not answer becomes an `error` answer for that request
// (runner.protocol.errors) and is started again for the next one.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "device.h"
#include "execute.h"
#include "host/host.h"
#include "process.h"
#include "protocol.h"
#include "reference.h"
#include "translate.h"

namespace {

using namespace simt;
using runners::RunRequest;
using runners::RunResult;

constexpr const char* kUsage =
    "usage: simtspec-vulkan [--icd FILE] [--dispatch-timeout SECONDS] [--allow-wave W]...\n"
    "       simtspec-vulkan --info [--icd FILE]\n"
    "Speaks the simtspec runner protocol (spec/runner.md) on stdin/stdout and runs each\n"
    "program on a Vulkan device (runners/vulkan/README.md).\n"
    "  --icd FILE              the Vulkan driver (VK_ICD_FILENAMES) of the driver processes\n"
    "  --dispatch-timeout S    seconds a shader may run before the request is an error (8)\n"
    "  --allow-wave W          also run wave W although lavapipe cannot run it correctly\n"
    "                          (tests the handling of a crashing driver)\n"
    "  --info                  print the device of each supported wave and exit\n";

// lavapipe's subgroup size is LP_NATIVE_VECTOR_WIDTH / 32 (../shared/design/VULKAN.md):
// 64, 128, 256 and 512 give subgroups of 2, 4, 8 and 16 that execute correctly.
const std::set<uint32_t> kWaves = {2, 4, 8, 16};

std::string why_not_wave(uint32_t wave) {
  return "wave " + std::to_string(wave) +
         ": lavapipe executes subgroups of 2, 4, 8 and 16 lanes (LP_NATIVE_VECTOR_WIDTH 64 to "
         "512); at 1024 and above it reports 32 or more lanes but executes only 16, and at 32 "
         "(one lane) it crashes";
}

struct Options {
  std::string icd;
  double dispatch_timeout = 8.0;
  std::set<uint32_t> waves = kWaves;
  uint32_t worker_wave = 0;  // > 0: this is the driver process for that wave
  bool info = false;
};

bool parse_u32(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = static_cast<uint32_t>(std::stoul(s));
  return true;
}

// Sets up the environment lavapipe reads when the device is created.
void driver_environment(const Options& o, uint32_t wave) {
  if (!o.icd.empty()) ::setenv("VK_ICD_FILENAMES", o.icd.c_str(), 1);
  ::setenv("LP_NATIVE_VECTOR_WIDTH", std::to_string(32 * wave).c_str(), 1);
  // Mesa's on-disk shader cache ignores LP_NATIVE_VECTOR_WIDTH in its key: a shader
  // cached at one width runs wrongly at another.
  ::setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
}

// ---- the driver process ---------------------------------------------------------

RunResult unsupported(std::string why) {
  RunResult r;
  r.kind = RunResult::Kind::Unsupported;
  r.message = std::move(why);
  return r;
}

RunResult error(std::string why) {
  RunResult r;
  r.kind = RunResult::Kind::Error;
  r.message = std::move(why);
  return r;
}

int worker(const Options& o) {
  // Ends with the supervisor, even when it is killed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 0;
  driver_environment(o, o.worker_wave);
  auto dev = vulkan::Device::get();
  std::string device_problem;
  if (!dev.ok()) {
    device_problem = "no Vulkan device: " + dev.error().to_string();
  } else if ((*dev)->info().subgroup.size != o.worker_wave) {
    device_problem = "the device (" + (*dev)->info().name + ") has subgroups of " +
                     std::to_string((*dev)->info().subgroup.size) + " lanes with " +
                     "LP_NATIVE_VECTOR_WIDTH=" + std::to_string(32 * o.worker_wave) + ", not " +
                     std::to_string(o.worker_wave) + " (is the driver lavapipe?)";
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
    topt.subgroup_size = d.info().subgroup.size;
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

int supervisor(const Options& o, const std::string& self) {
  std::map<uint32_t, std::unique_ptr<runners::Runner>> drivers;
  auto driver = [&](uint32_t wave) -> runners::Runner& {
    auto& slot = drivers[wave];
    if (!slot) {
      runners::ProcessSpec spec;
      spec.name = "lavapipe driver process for wave " + std::to_string(wave);
      spec.command = self;
      spec.args = {"--worker", std::to_string(wave), "--dispatch-timeout",
                   std::to_string(o.dispatch_timeout)};
      if (!o.icd.empty()) spec.args.insert(spec.args.end(), {"--icd", o.icd});
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
    const uint32_t wave = std::get<0>(loaded)->config.wave;
    if (!o.waves.count(wave)) return unsupported(why_not_wave(wave));
    RunResult r = driver(wave).run(req);
    if (!r.stderr_text.empty()) std::cerr << r.stderr_text << std::flush;
    if (r.kind == RunResult::Kind::Error)
      r.message = "the driver process for wave " + std::to_string(wave) + ": " + r.message;
    return r;
  });
  for (auto& [w, d] : drivers) d->shutdown();
  return 0;
}

int info(const Options& o, const std::string& self) {
  int status = 0;
  for (uint32_t wave : o.waves) {
    std::string cmd = "'" + self + "' --worker-info " + std::to_string(wave);
    if (!o.icd.empty()) cmd += " --icd '" + o.icd + "'";
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
    } else if (a == "--allow-wave" && value(v) && parse_u32(v, n) && n >= 1 && n <= 64) {
      o.waves.insert(n);
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
  if (worker_info_mode) return worker_info(o);
  if (o.worker_wave) return worker(o);
  if (o.info) return info(o, self);
  return supervisor(o, self);
}
