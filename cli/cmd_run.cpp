// `simtspec run FILE`: run one program on the reference and print its outcome.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "common.h"
#include "exec/machine.h"
#include "json.h"
#include "reference.h"

namespace simt::cli {
namespace {

struct RunArgs {
  std::string file;
  LaunchFlags launch;
  bool trace = false;
  bool json = false;
  // preempt.tool.run
  CLI::Option* o_preempt_at = nullptr;
  uint64_t preempt_at = 0;
  std::string flow = "A";
  std::string core = "all";
  std::string intruder;
  std::string image;    // --image OUT
  std::string restore;  // --restore IMAGE (flow C)
};

// preempt.tool.run: --preempt-at N [--flow A|B] [--core C] [--intruder FILE] as
// one `preempt` action after the script's own actions at step N.
bool add_preempt_action(const RunArgs& a, host::LoadOptions& opt) {
  syntax::HostStep h;
  h.kind = syntax::HostKind::Preempt;
  h.step = a.preempt_at;
  h.origin = "--preempt-at";
  if (a.flow != "A" && a.flow != "B") {
    std::cerr << "simtspec: --flow must be A or B, not '" << a.flow << "'\n";
    return false;
  }
  h.flow = a.flow == "A" ? syntax::PreemptFlow::A : syntax::PreemptFlow::B;
  if (a.core != "all") {
    char* end = nullptr;
    const unsigned long c = std::strtoul(a.core.c_str(), &end, 10);
    if (a.core.empty() || *end || c >= exec::kMaxCores) {
      std::cerr << "simtspec: --core must be a core index or all, not '" << a.core << "'\n";
      return false;
    }
    h.core = static_cast<int32_t>(c);
  }
  if (!a.intruder.empty()) {
    if (h.flow != syntax::PreemptFlow::B) {
      std::cerr << "simtspec: --intruder is for --flow B only (preempt.request)\n";
      return false;
    }
    std::string err;
    if (!host::read_file(a.intruder, h.intruder, err)) {
      std::cerr << "simtspec: " << err << "\n";
      return false;
    }
  }
  auto at = std::upper_bound(opt.host.begin(), opt.host.end(), h.step,
                             [](uint64_t s, const syntax::HostStep& x) { return s < x.step; });
  opt.host.insert(at, std::move(h));
  return true;
}

bool write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

std::string event_text(const model::Event& e, const exec::Program& p) {
  std::string s = e.name + " in warp " + std::to_string(e.warp) + " at pc " + std::to_string(e.pc);
  if (e.pc < p.text.size())
    s += " (line " + std::to_string(p.spans[e.pc].line) + ": " + p.text[e.pc] + ")";
  if (e.lane >= 0) s += ", lane " + std::to_string(e.lane);
  if (!e.space.empty()) s += ", address " + std::to_string(e.addr) + " in " + e.space;
  if (e.code) s += ", code " + std::to_string(*e.code);           // trap.cause
  if (!e.inner.empty()) s += ", inside the handler: " + e.inner;  // trap.double
  return s;
}

int run(const RunArgs& a) {
  auto opt = a.launch.options();
  if (!opt) return kExitUsage;
  if (a.o_preempt_at->count() && !add_preempt_action(a, *opt)) return kExitUsage;
  auto loaded = load_file(a.file, *opt);
  if (!loaded) return kExitUsage;
  exec::Machine m(loaded->program);
  if (!a.restore.empty()) {  // preempt.flow.c
    std::vector<uint8_t> bytes;
    std::string err;
    if (!host::read_binary(a.restore, bytes, err)) {
      std::cerr << "simtspec: " << err << "\n";
      return kExitUsage;
    }
    if (auto e = m.start_from_image(bytes)) {
      std::cerr << a.restore << ":" << e->offset << ": " << e->message << "\n";
      return kExitUsage;
    }
  }
  std::vector<std::string> trace;
  if (a.trace) {
    const exec::Program& p = *loaded->program;
    if (a.json)
      m.set_trace([&](const exec::TraceRecord& r) { trace.push_back(exec::format_trace(p, r)); });
    else
      m.set_trace(
          [&](const exec::TraceRecord& r) { std::cout << exec::format_trace(p, r) << "\n"; });
  }
  exec::Outcome out = m.run();
  model::Outcome mo = runners::to_model(out);
  if (!a.image.empty()) {  // preempt.tool.run
    if (m.last_image().empty()) {
      std::cerr << "simtspec: --image: the launch was never preempted\n";
      return kExitUsage;
    }
    if (!write_bytes(a.image, m.last_image())) {
      std::cerr << "simtspec: cannot write " << a.image << "\n";
      return kExitUsage;
    }
  }
  if (a.json) {
    json::Value v = model::to_json(mo);
    v["config"] = runners::run_config(loaded->config).to_json();
    if (a.trace) {
      json::Array t;
      for (auto& line : trace) t.emplace_back(std::move(line));
      v["trace"] = std::move(t);
    }
    std::cout << json::dump(v, 2) << "\n";
  } else {
    std::cout << "status: " << mo.status << "\n";
    if (mo.event) std::cout << "event: " << event_text(*mo.event, *loaded->program) << "\n";
    std::cout << "steps: " << mo.steps << "\n";
    if (m.preemptions()) std::cout << "preemptions: " << m.preemptions() << "\n";
    for (const auto& b : mo.buffers) {
      std::cout << "buffer " << b.name << " " << b.type << "[" << b.values.size() << "]:";
      for (size_t i = 0; i < b.values.size(); ++i) {
        if (i % 8 == 0) {
          char idx[40];
          std::snprintf(idx, sizeof idx, "\n  [%4zu]", i);
          std::cout << idx;
        }
        std::cout << " " << b.values[i];
      }
      std::cout << "\n";
    }
  }
  return out.status == exec::Status::Completed ? kExitOk : kExitFail;
}

}  // namespace

void register_run(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "run a program on the reference interpreter");
  cmd->add_option("file", args->file, "program file")->required();
  args->launch.add(*cmd);
  cmd->add_flag("--trace", args->trace,
                "print one line per step: warp, PC, exec mask, instruction");
  cmd->add_flag("--json", args->json, "print the outcome as JSON");
  args->o_preempt_at = cmd->add_option(
      "--preempt-at", args->preempt_at,
      "preempt the launch when N steps have run (preempt.request; after the host script's "
      "actions at that step)");
  cmd->add_option("--flow", args->flow,
                  "the preemption's flow: A (checkpoint) or B (save, "
                  "intruder, restore); default A");
  cmd->add_option("--core", args->core, "the core to preempt, or all (default)");
  cmd->add_option("--intruder", args->intruder,
                  "flow B: a program to run between the save and "
                  "the restore (preempt.intruder)");
  cmd->add_option("--image", args->image, "write the last preemption's context image to OUT");
  cmd->add_option("--restore", args->restore,
                  "start the launch from a context image (flow C, preempt.flow.c)");
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace simt::cli
