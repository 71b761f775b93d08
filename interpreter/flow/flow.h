// Control flow in one place: the successors of an instruction, the pairing of
// sub-vector regions and the abstract mask stack with its transfer function
// (spec/validation.md valid.flow.*, spec/wave.md wave.valid.*), all written over the
// instruction table's Control column (isa::Control) with switches that list every
// kind. The validator, modesel and the predecoder use them; none of them switches
// on individual control instructions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "isa/isa.h"

namespace simt::flow {

using isa::Control;

// ---- successors ----------------------------------------------------------------

// The contexts the flow checks explore (valid.flow.calls, trap.install): the
// program's entry, a handler entry, a called function.
// System: the system routine's save or restore entry (preempt.valid.mode).
enum class Context : uint8_t { Main, Handler, Function, System };

// branch.exit, valid.flow.end: `exit` ends the path in handler code (where it is an
// error, trap.valid.mode) and in the entry context with no mask-stack entry of that
// context open (every live lane is active, so the warp ends); elsewhere the lanes
// that did not exit go on.
bool exit_ends(Context c, bool stack_empty);

// Where control can go from an instruction, in this order: next, target, callees,
// returns, mate (valid.flow.order: the next instruction first, then the target).
struct Edges {
  bool next = false;     // PC + 1
  bool target = false;   // the label operand (the instruction's last operand)
  bool callees = false;  // the code it calls: call's label, every vector-table entry for vcall
  bool returns = false;  // the instruction after each call of its function (ret)
  bool mate = false;     // the instruction after the other end of its sub-vector region
};

// Within one context (valid.flow.order, valid.flow.calls): a call goes on at the
// next instruction; ret, tret and tpause end the path, exit where `exit_ends` says.
Edges in_context(Control k, bool exit_ends);

// Across the program, for liveness (wave.modesel.need): a call goes into the code it
// calls and ret back to after each call of its function; subv.begin also goes past
// its subv.end (wave.skip) and subv.end also to after its subv.begin (wave.exit).
Edges in_program(Control k, bool exit_ends);

// Ignoring where paths end: every instruction but jmp can go on at the next one,
// jmp and cbr to their target. A must-analysis over these edges sees every path of
// the others and more (wave.valid.shared).
Edges straight(Control k);

// The mask-stack entries an instruction opens (1) or closes (-1); 0 for the rest.
int depth_change(Control k);

// ---- sub-vector regions (wave.valid.pair, wave.valid.nest) ------------------------

struct Region {
  uint32_t begin = 0, end = 0;  // the PCs of its subv.begin and subv.end
};

struct RegionError {
  enum class Kind : uint8_t {
    Nested,    // a subv.begin inside a region (wave.valid.nest); `open` is the region's
    Unopened,  // a subv.end with no region open (wave.valid.pair)
    Unclosed,  // a subv.begin with no subv.end after it (wave.valid.pair)
  };
  Kind kind;
  uint32_t pc;        // the instruction at fault
  uint32_t open = 0;  // Nested: the subv.begin of the region still open
};

struct Regions {
  std::vector<Region> list;         // in program order
  std::vector<RegionError> errors;  // in PC order; an unclosed region last
};

// Pairs each subv.begin with the next subv.end. A subv.begin inside a region and a
// subv.end with none open are errors that change nothing.
Regions pair_regions(std::span<const isa::Op> code);

// ---- the abstract mask stack (valid.flow.order, wave.valid.balance) ---------------

// The kind of an entry: the abstract stack is the sequence of entry kinds pushed
// since the entry of the current context (subv.begin pushes a region entry).
enum class Entry : uint8_t { If, Loop, Region };

// An abstract stack, interned by Stacks: two stacks are equal iff their ids are.
enum class Stack : uint32_t {};
inline constexpr Stack kEmpty{0};

// What the transfer function found wrong (the analyses name the clause).
enum class Fault : uint8_t {
  None,
  RegionOpen,   // subv.end: entries the region opened are still open (wave.valid.balance)
  AtFloor,      // pop, invert, lnext: the top entry is out of reach, no entry opened
                // above the floor (inside a region: wave.valid.balance)
  NoEntry,      // pop, invert: no entry open (valid.flow.pop)
  LoopOnTop,    // invert: a loop entry on top (valid.flow.pop)
  NoLoop,       // brk, cont: no loop entry above the floor (valid.flow.pop,
                // wave.valid.balance)
  NoLoopOnTop,  // lnext: no loop entry on top (valid.flow.pop)
};

struct Step {
  Stack after;  // the stack after the instruction; after a fault, pop and subv.end
                // still close the top entry if there is one and the rest change nothing
  Fault fault = Fault::None;
};

// Sequences are interned in a tree: a stack is the id of its top entry's node, so a
// push, a pop, a comparison and a transfer take constant time whatever the depth
// (valid.scope).
class Stacks {
 public:
  Stack push(Stack below, Entry e);
  Stack pop(Stack s) const { return node(s).below; }
  bool empty(Stack s) const { return s == kEmpty; }
  // The top entry's kind; the stack must not be empty.
  Entry top(Stack s) const { return node(s).kind; }
  uint32_t size(Stack s) const { return node(s).size; }
  // wave.valid.balance: the entries up to the innermost region's (0 if none) are out
  // of reach inside the region.
  uint32_t floor(Stack s) const { return node(s).floor; }
  // A loop entry above the floor.
  bool has_loop(Stack s) const { return node(s).loop; }
  // A loop entry above the bottom `floor` entries.
  bool loop_above(Stack s, uint32_t floor) const;
  // `s` is `base` with zero or more entries pushed on it.
  bool extends(Stack s, Stack base) const;

  // The transfer function of instruction kind `k`, the bottom `floor` entries out of
  // reach; the first form takes the floor of `s` (its innermost region).
  Step step(Stack s, Control k) { return step(s, k, floor(s)); }
  Step step(Stack s, Control k, uint32_t floor);

  // valid.flow.join: "no entry", "1 entry (if)", "2 entries (if, loop)": the kinds
  // from the bottom up; past eight entries, only the innermost ("40 entries (..., if)").
  std::string describe(Stack s) const;

 private:
  struct Node {
    Stack below;
    Entry kind;
    uint32_t size;
    uint32_t floor;
    bool loop;
  };
  const Node& node(Stack s) const { return nodes_[static_cast<uint32_t>(s)]; }
  std::vector<Node> nodes_{Node{kEmpty, Entry::If, 0, 0, false}};
  std::unordered_map<uint64_t, Stack> index_;  // (below, kind) -> node
};

}  // namespace simt::flow
