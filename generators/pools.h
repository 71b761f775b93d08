// The instruction pools of the program generators (generate.cpp, program.cpp):
// the instructions a generated statement draws from, selected from the
// instruction table (interpreter/isa/instructions.def, through isa::table()) by
// family, feature and clause, so that a new row of a pooled family is generated
// without a change here. Every table row is in a pool or in unpooled(), each
// exclusion with its reason (tests/gen_pools_test.cpp checks both).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/isa.h"

namespace simt::gen::pools {

enum class Id : uint8_t {
  Alu,       // the ALU statements' operations (vector, scalar, shared, region scalar)
  Compare,   // the comparison of a condition
  PredOp,    // predicate-logic statements
  Ballot,    // ballot statements
  Vote,      // vote statements
  Division,  // the division of a div_zero trap statement
  Atomic,    // atomic statements on `shared` and the atomic trap statements
  Counter,   // atomics on the `counters` buffer (their suffixes, for atom. and watom.)
  kCount
};

// A table row a pool (or every pool) leaves out, and why.
struct Excluded {
  isa::Op op;
  std::string_view reason;
};

struct Pool {
  Id id;
  std::string_view name;
  // The selection: the rows of one of these families, of this feature (any if
  // none) and, if any are named, with one of these clauses.
  std::span<const isa::Family> families;
  std::optional<isa::Feature> feature;
  std::span<const std::string_view> clauses;
  // Rows of the selection the pool leaves out, each with its reason.
  std::span<const Excluded> excluded;
  // The draw order: these first, then the rest of the selection in table order.
  // A generator draws by index, so this order is what a seed means (the fuzz
  // seeds and the RapidCheck properties were recorded with it): it keeps the
  // order of the lists the pools replaced where that differs from table order.
  std::span<const isa::Op> first;
  // Closed: the pool is exactly `first` (its users keep a fact per member, such
  // as the `counters` word); a selected row in neither `first` nor `excluded` is
  // an error of the pool table that the tests report.
  bool closed = false;
};

// The pools, indexed by Id.
std::span<const Pool> all();
const Pool& pool(Id id);

// Whether a row is in the pool's selection (exclusions not applied).
bool selects(const Pool& p, const isa::OpInfo& row);
// The pool's members in draw order.
const std::vector<isa::Op>& ops(Id id);
const std::vector<std::string>& mnemonics(Id id);
bool contains(Id id, std::string_view mnemonic);

// Table rows in no pool, each with its reason: the printer writes them as part of
// a statement's fixed instruction sequence, or no generator emits them.
std::span<const Excluded> unpooled();

}  // namespace simt::gen::pools
