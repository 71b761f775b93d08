// `simtspec doc instructions|specials|events`: the tables, generated from the
// instruction table; spec/instructions.md embeds this output and a unit test
// checks that the two agree.
#include <iostream>

#include "common.h"
#include "isa/doc.h"

namespace simt::cli {

void register_doc(CLI::App& app, int& exit_code) {
  auto what = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("doc", "print a reference table generated from the instruction table");
  cmd->add_option("table", *what, "instructions, specials or events")
      ->required()
      ->check(CLI::IsMember({"instructions", "specials", "events"}));
  cmd->callback([what, &exit_code] {
    if (*what == "instructions")
      std::cout << doc::instruction_table();
    else if (*what == "specials")
      std::cout << doc::special_table();
    else
      std::cout << doc::event_table();
    exit_code = kExitOk;
  });
}

}  // namespace simt::cli
