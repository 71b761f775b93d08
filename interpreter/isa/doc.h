// Reference tables generated from the instruction table (Markdown). The spec's
// instruction list (spec/instructions.md) embeds them; a test checks they agree.
#pragma once

#include <string>

namespace simt::doc {

std::string instruction_table();
std::string special_table();
std::string event_table();

}  // namespace simt::doc
