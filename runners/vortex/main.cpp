// simtspec-vortex: the Vortex runner (runners/vortex/README.md). Speaks the runner
// protocol (spec/runner.md) on stdin/stdout; each request is loaded with simtspec's
// front end, translated to RV32 assembly with Vortex's SIMT instructions
// (translate.h), assembled and linked with the RISC-V toolchain in a temporary
// directory, run on simx, and its console output decoded into the outcome.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "host/host.h"
#include "protocol.h"
#include "reference.h"  // load_request, load_options, to_model
#include "translate.h"

namespace {

using namespace simt;
using runners::error;
using runners::RunRequest;
using runners::RunResult;
using runners::unsupported;
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: simtspec-vortex [--simx PATH] [--toolchain-prefix PREFIX] [--timeout SECONDS]\n"
    "                       [--keep DIR]\n"
    "       simtspec-vortex --translate FILE\n"
    "Speaks the simtspec runner protocol (spec/runner.md) on stdin/stdout and runs each\n"
    "program on Vortex's simx (runners/vortex/README.md).\n"
    "  --simx PATH              the simx executable (default: $SIMT_SIMX)\n"
    "  --toolchain-prefix P     the RISC-V toolchain's prefix (riscv64-unknown-elf-)\n"
    "  --timeout S              seconds simx may run before the request is an error (20)\n"
    "  --step-budget N          thread-steps (steps x max(wave, 4)) all warps together may\n"
    "                           run before the request is unsupported (150000; max_steps\n"
    "                           below a warp's share is reproduced exactly)\n"
    "  --barriers N             simx's barrier ids (its compile-time NUM_BARRIERS; 2)\n"
    "  --keep DIR               keep each request's files in DIR/N instead of deleting them\n"
    "  --translate FILE         print the assembly of a program (its directives' launch)\n";

struct Options {
  std::string simx;
  std::string prefix = "riscv64-unknown-elf-";
  double timeout = 20.0;
  vortex::TranslateOptions translate;
  std::string keep;
};

struct Ran {
  bool started = false;
  bool timed_out = false;
  int status = 0;      // waitpid status
  std::string output;  // stdout and stderr together
};

// Runs argv in `dir` with stdout and stderr to a file there, killing its process
// group after `timeout` seconds.
Ran run_command(const std::vector<std::string>& argv, const fs::path& dir, double timeout) {
  Ran r;
  const fs::path out = dir / "output.txt";
  const pid_t pid = ::fork();
  if (pid < 0) return r;
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    FILE* f = std::fopen(out.c_str(), "w");
    if (!f) ::_exit(126);
    ::dup2(::fileno(f), 1);
    ::dup2(::fileno(f), 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    ::_exit(127);
  }
  r.started = true;
  ::setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  for (;;) {
    const pid_t w = ::waitpid(pid, &r.status, WNOHANG);
    if (w == pid) break;
    if (w < 0) {
      r.started = false;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &r.status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(-pid, SIGKILL);  // anything it left behind
  std::ifstream in(out);
  std::ostringstream s;
  s << in.rdbuf();
  r.output = s.str();
  if (r.output.size() > (1u << 20)) r.output.resize(1u << 20);
  return r;
}

std::string last_lines(const std::string& s, size_t max = 400) {
  return s.size() <= max ? s : "..." + s.substr(s.size() - max);
}

// Everything at 0x80000000 (where simx loads the raw image) in one contiguous block.
constexpr const char* kLinkScript =
    "ENTRY(_start)\n"
    "SECTIONS {\n"
    "  . = 0x80000000;\n"
    "  .text : { *(.text.start) *(.text*) }\n"
    "  .rodata : { *(.rodata*) }\n"
    "  .data : { *(.data*) *(.sdata*) *(.bss*) *(.sbss*) *(COMMON) }\n"
    "}\n";

class Runner {
 public:
  explicit Runner(Options o) : o_(std::move(o)) {}

  RunResult run(const RunRequest& req) {
    auto first = runners::load_request(req);
    if (auto* rejected = std::get_if<RunResult>(&first)) return *rejected;
    host::LoadOptions opt = runners::load_options(req.config);
    opt.validate_flow = req.validate;
    auto loaded = host::load(req.program, opt);
    if (!loaded.loaded)
      return error(
          "internal error: the program loads for the reference but not for the translator");
    vortex::TranslateResult tr = vortex::translate(*loaded.loaded, o_.translate);
    if (!tr.ok()) return unsupported("not translated: " + tr.unsupported);
    if (o_.simx.empty())
      return error("no simx: pass --simx PATH in the runner description or set SIMT_SIMX");
    return execute(*loaded.loaded->program, *tr.translation);
  }

 private:
  RunResult execute(const exec::Program& program, const vortex::Translation& t) {
    fs::path dir;
    if (!o_.keep.empty()) {
      dir = fs::path(o_.keep) / std::to_string(++count_);
      fs::create_directories(dir);
    } else {
      std::string tmpl = (fs::temp_directory_path() / "simtspec-vortex.XXXXXX").string();
      if (!::mkdtemp(tmpl.data())) return error("cannot create a temporary directory");
      dir = tmpl;
    }
    struct Cleanup {
      fs::path dir;
      bool keep;
      ~Cleanup() {
        std::error_code ec;
        if (!keep) fs::remove_all(dir, ec);
      }
    } cleanup{dir, !o_.keep.empty()};
    {
      std::ofstream(dir / "program.S") << t.assembly;
      std::ofstream(dir / "link.ld") << kLinkScript;
    }
    Ran as = run_command({o_.prefix + "gcc", "-march=rv32ima_zicsr", "-mabi=ilp32", "-nostdlib",
                          "-nostartfiles", "-static", "-Wl,--no-warn-rwx-segments", "-T", "link.ld",
                          "-o", "program.elf", "program.S"},
                         dir, 60);
    if (!as.started || as.timed_out || !WIFEXITED(as.status) || WEXITSTATUS(as.status) != 0)
      return error("the RISC-V toolchain failed on the translation: " + last_lines(as.output));
    Ran oc =
        run_command({o_.prefix + "objcopy", "-O", "binary", "program.elf", "program.bin"}, dir, 60);
    if (!oc.started || oc.timed_out || !WIFEXITED(oc.status) || WEXITSTATUS(oc.status) != 0)
      return error("objcopy failed: " + last_lines(oc.output));
    Ran sx = run_command({o_.simx, "-c", "1", "-w", std::to_string(t.warps), "-t",
                          std::to_string(t.threads), "program.bin"},
                         dir, o_.timeout);
    if (!sx.started) return error("cannot run simx (" + o_.simx + ")");
    if (sx.timed_out)
      return error("simx did not finish within " + std::to_string(o_.timeout) +
                   " s (--timeout); killed. Its output ends: " + last_lines(sx.output));
    if (!WIFEXITED(sx.status) || WEXITSTATUS(sx.status) != 0)
      return error("simx ended with " +
                   (WIFEXITED(sx.status) ? "exit status " + std::to_string(WEXITSTATUS(sx.status))
                                         : "signal " + std::to_string(WTERMSIG(sx.status))) +
                   ": " + last_lines(sx.output));
    vortex::ConsoleOutcome co = vortex::decode_console(program, t, sx.output);
    switch (co.kind) {
      case vortex::ConsoleOutcome::Kind::Outcome: {
        RunResult r;
        r.kind = RunResult::Kind::Outcome;
        r.outcome = runners::to_model(co.outcome);
        return r;
      }
      case vortex::ConsoleOutcome::Kind::NotReproduced:
        return unsupported("not reproduced on Vortex: " + co.reason);
      case vortex::ConsoleOutcome::Kind::Garbage:
        break;
    }
    return error("simx's output is not an outcome: " + co.reason +
                 ". It ends: " + last_lines(sx.output));
  }

  Options o_;
  uint64_t count_ = 0;
};

int translate_file(const std::string& file, const vortex::TranslateOptions& options) {
  std::string text, err;
  if (!host::read_file(file, text, err)) {
    std::cerr << "simtspec-vortex: " << err << "\n";
    return 2;
  }
  auto loaded = host::load(text);
  if (!loaded.loaded) {
    std::cerr << "simtspec-vortex: the program does not load\n";
    return 2;
  }
  vortex::TranslateResult tr = vortex::translate(*loaded.loaded, options);
  if (!tr.ok()) {
    std::cerr << "simtspec-vortex: not translated: " << tr.unsupported << "\n";
    return 1;
  }
  std::cout << tr.translation->assembly;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const char* e = std::getenv("SIMT_SIMX")) o.simx = e;
  std::string translate;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--simx" && value(o.simx)) {
    } else if (a == "--toolchain-prefix" && value(o.prefix)) {
    } else if (a == "--keep" && value(o.keep)) {
    } else if (a == "--translate" && value(translate)) {
    } else if (a == "--timeout" && value(v)) {
      char* end = nullptr;
      o.timeout = std::strtod(v.c_str(), &end);
      if (*end || !(o.timeout > 0) || o.timeout > 3600) {
        std::cerr << "simtspec-vortex: --timeout takes seconds in (0, 3600]\n";
        return 2;
      }
    } else if (a == "--step-budget" && value(v)) {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end || v[0] == '-' || n == 0 || n > (1ull << 40)) {
        std::cerr << "simtspec-vortex: --step-budget takes a count in [1, 2^40]\n";
        return 2;
      }
      o.translate.step_budget = n;
    } else if (a == "--barriers" && value(v)) {
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end || v[0] == '-' || n == 0 || n > 1024) {
        std::cerr << "simtspec-vortex: --barriers takes a count in [1, 1024]\n";
        return 2;
      }
      o.translate.barriers = static_cast<uint32_t>(n);
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "simtspec-vortex: bad argument '" << a << "'\n" << kUsage;
      return 2;
    }
  }
  if (!translate.empty()) return translate_file(translate, o.translate);
  std::ios::sync_with_stdio(false);
  Runner runner(o);
  runners::serve(std::cin, std::cout, [&](const RunRequest& req) { return runner.run(req); });
  return 0;
}
