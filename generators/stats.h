// What generated programs contain, counted for `simtspec fuzz --stats`
// (spec/oracles.md, oracle.fuzz.stats): statement kinds of the model, the
// instructions of the expanded program (one count per row of the instruction
// table), operand forms as the text writes them, launch settings, and the
// outcome's status and event.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oracles.h"
#include "program.h"

namespace simt::gen {

// Adds the counts of one program (and its check's outcome) to `counts`. Keys:
// "kind:<statement kind>", "instr:<mnemonic>", "operand:<form>",
// "launch:<setting>", "host:<action kind>", "status:<status>", "event:<event name>".
void count_constructs(const Program& p, const Check& check,
                      std::map<std::string, uint64_t>& counts);

// Every key count_constructs can produce for instructions and statement kinds
// (so a report can name those never generated).
std::vector<std::string> instruction_keys();
std::vector<std::string> kind_keys();
std::vector<std::string> operand_keys();
// oracle.fuzz.stats: every host action kind ("host:<kind>"), outcome status and
// event, so a report can name those never reached; and those no generated
// program can reach, with the reason.
std::vector<std::string> host_action_keys();
std::vector<std::string> status_keys();
std::vector<std::string> event_keys();
const std::map<std::string, std::string>& unreachable_keys();

}  // namespace simt::gen
