// simtspec: the command-line program. Thin: parses options and calls the libraries.
#include <CLI/CLI.hpp>
#include <iostream>

#include "common.h"

namespace simt::cli {
void register_modesel(CLI::App& app, int& exit_code);  // cmd_modesel.cpp
}  // namespace simt::cli

int main(int argc, char** argv) {
  CLI::App app{
      "simtspec: conformance suite and reference interpreter for a SIMT assembly language"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "simtspec 0.1.0");
  int exit_code = simt::cli::kExitOk;
  simt::cli::register_run(app, exit_code);
  simt::cli::register_listing(app, exit_code);
  simt::cli::register_print(app, exit_code);
  simt::cli::register_doc(app, exit_code);
  simt::cli::register_test(app, exit_code, argc > 0 ? argv[0] : "simtspec");
  simt::cli::register_lint(app, exit_code);
  simt::cli::register_report(app, exit_code);
  simt::cli::register_serve(app, exit_code);
  simt::cli::register_fuzz(app, exit_code, argc > 0 ? argv[0] : "simtspec");
  simt::cli::register_modesel(app, exit_code);
  simt::cli::register_image(app, exit_code);
  simt::cli::register_merge(app, exit_code);
  simt::cli::register_history(app, exit_code);
  // An unknown command is named as such (CLI11 alone would say that a subcommand is
  // required, as if none had been given).
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      found = found || sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "simtspec: unknown command '" << argv[1] << "' (commands: " << known
                << ")\nrun 'simtspec --help' for usage\n";
      return simt::cli::kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return simt::cli::kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return simt::cli::kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return simt::cli::kExitOk;
  } catch (const CLI::ParseError& e) {
    // Subcommand help arrives as CallForHelp from the subcommand and is handled
    // above; everything else is bad usage.
    std::cerr << "simtspec: " << e.what() << "\n";
    if (!app.get_subcommands().empty())
      std::cerr << "run 'simtspec " << app.get_subcommands().front()->get_name()
                << " --help' for usage\n";
    else
      std::cerr << "run 'simtspec --help' for usage\n";
    return simt::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << "simtspec: out of memory\n";
    return simt::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "simtspec: internal error: " << e.what() << "\n";
    return 3;
  }
  return exit_code;
}
