// The reference runner's conversion from interpreter outcomes to the result model.
#pragma once

#include "exec/machine.h"
#include "model.h"

namespace simt::runners {

model::Outcome to_model(const exec::Outcome& o);
// Decodes buffer bytes into element values (i32 signed, the others unsigned).
std::vector<int64_t> decode(syntax::ElemType t, const std::vector<uint8_t>& bytes);

}  // namespace simt::runners
