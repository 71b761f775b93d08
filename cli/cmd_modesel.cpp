// `simtspec modesel FILE [--threshold N] [--strategy switch|duplicate|software]
// [--explain]`: the mode-selection pass (spec/wave.md, wave.modesel.*). Prints the
// transformed program, after the --explain comment lines; a refusal is reported
// as `file:line:col: message (clause)` with exit code 2.
#include <iostream>

#include "common.h"
#include "passes/modesel.h"
#include "text/printer.h"

namespace simt::cli {

void register_modesel(CLI::App& app, int& exit_code) {
  struct Args {
    std::string file;
    uint32_t threshold = 0;
    std::string strategy = "switch";
    bool explain = false;
    CLI::Option* o_threshold = nullptr;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "modesel",
      "put the parts of a program that need more than N vector registers into sub-vector "
      "regions (spec/wave.md, wave.modesel.*)");
  cmd->add_option("file", args->file, "program file")->required();
  args->o_threshold = cmd->add_option(
      "--threshold", args->threshold,
      "segments needing more vector registers than N are transformed (default: vregs / "
      "(wave / simd))");
  cmd->add_option("--strategy", args->strategy,
                  "switch (subv.begin/subv.end), duplicate (one guarded copy per part) or "
                  "software (the software loop, wave 64 and simd 32 only)")
      ->check(CLI::IsMember({"switch", "duplicate", "software"}));
  cmd->add_flag("--explain", args->explain,
                "print, before the program, one comment line per segment: its number, kind, "
                "lines, need and what was done");
  cmd->callback([args, &exit_code] {
    auto loaded = load_file(args->file, host::LoadOptions{});
    if (!loaded) return void(exit_code = kExitUsage);
    const passes::Strategy strategy = args->strategy == "duplicate"  ? passes::Strategy::Duplicate
                                      : args->strategy == "software" ? passes::Strategy::Software
                                                                     : passes::Strategy::Switch;
    std::optional<uint32_t> threshold;
    if (args->o_threshold->count()) threshold = args->threshold;
    auto r = passes::modesel(loaded->ast, loaded->config, threshold, strategy);
    if (!r.program) {  // wave.modesel.safe, wave.modesel.shared, wave.modesel.strategy
      std::cerr << r.diags.format(args->file);
      return void(exit_code = kExitUsage);
    }
    const std::string out = text::print(*r.program);
    // wave.modesel.output: the output validates; if not, the pass is wrong.
    auto check = host::load(out);
    if (!check.loaded) {
      std::cerr << "simtspec: internal error: the transformed program does not validate:\n"
                << check.diags.format(args->file + " (modesel output)");
      return void(exit_code = kExitFail);
    }
    if (args->explain) std::cout << passes::explain(r);
    std::cout << out;
    exit_code = kExitOk;
  });
}

}  // namespace simt::cli
