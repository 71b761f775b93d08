// `simtspec run FILE`: run one program on the reference and print its outcome.
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
};

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
  auto loaded = load_file(a.file, *opt);
  if (!loaded) return kExitUsage;
  exec::Machine m(loaded->program);
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
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace simt::cli
