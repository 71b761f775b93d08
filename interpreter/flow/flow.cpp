#include "flow/flow.h"

namespace simt::flow {

bool exit_ends(Context c, bool stack_empty) {
  switch (c) {
    case Context::Main:
      return stack_empty;
    case Context::Handler:
    case Context::System:  // exit is not system code (preempt.valid.mode)
      return true;
    case Context::Function:
      return false;
  }
  return false;
}

Edges in_context(Control k, bool exit_ends) {
  Edges e;
  switch (k) {
    case Control::Next:
    case Control::Call:
    case Control::VectorCall:
    case Control::Push:
    case Control::Invert:
    case Control::Pop:
    case Control::LoopPush:
    case Control::LoopControl:
    case Control::LoopNext:
    case Control::RegionBegin:
    case Control::RegionEnd:
      e.next = true;
      break;
    case Control::Jump:
      e.target = true;
      break;
    case Control::Branch:
      e.next = e.target = true;
      break;
    case Control::Return:
    case Control::Stop:
      break;
    case Control::Exit:
      e.next = !exit_ends;
      break;
  }
  return e;
}

Edges in_program(Control k, bool exit_ends) {
  Edges e;
  switch (k) {
    case Control::Next:
    case Control::Push:
    case Control::Invert:
    case Control::Pop:
    case Control::LoopPush:
    case Control::LoopControl:
    case Control::LoopNext:
      e.next = true;
      break;
    case Control::Jump:
      e.target = true;
      break;
    case Control::Branch:
      e.next = e.target = true;
      break;
    case Control::Call:
    case Control::VectorCall:
      e.callees = true;
      break;
    case Control::Return:
      e.returns = true;
      break;
    case Control::Stop:
      break;
    case Control::Exit:
      e.next = !exit_ends;
      break;
    case Control::RegionBegin:  // wave.skip: exec 0 goes on after the region
    case Control::RegionEnd:    // wave.exit: the next part starts again at the region's start
      e.next = e.mate = true;
      break;
  }
  return e;
}

Edges straight(Control k) {
  Edges e;
  switch (k) {
    case Control::Jump:
      e.target = true;
      break;
    case Control::Branch:
      e.next = e.target = true;
      break;
    case Control::Next:
    case Control::Call:
    case Control::VectorCall:
    case Control::Return:
    case Control::Stop:
    case Control::Exit:
    case Control::Push:
    case Control::Invert:
    case Control::Pop:
    case Control::LoopPush:
    case Control::LoopControl:
    case Control::LoopNext:
    case Control::RegionBegin:
    case Control::RegionEnd:
      e.next = true;
      break;
  }
  return e;
}

int depth_change(Control k) {
  switch (k) {
    case Control::Push:
    case Control::LoopPush:
    case Control::RegionBegin:
      return 1;
    case Control::Pop:
    case Control::RegionEnd:
      return -1;
    case Control::Next:
    case Control::Jump:
    case Control::Branch:
    case Control::Call:
    case Control::VectorCall:
    case Control::Return:
    case Control::Stop:
    case Control::Exit:
    case Control::Invert:
    case Control::LoopControl:
    case Control::LoopNext:
      return 0;
  }
  return 0;
}

Regions pair_regions(std::span<const isa::Op> code) {
  Regions r;
  constexpr uint32_t kNone = ~0u;
  uint32_t open = kNone;  // the subv.begin of the region open
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    switch (isa::info(code[pc]).control) {
      case Control::RegionBegin:
        if (open != kNone)
          r.errors.push_back({RegionError::Kind::Nested, pc, open});
        else
          open = pc;
        break;
      case Control::RegionEnd:
        if (open == kNone) {
          r.errors.push_back({RegionError::Kind::Unopened, pc});
        } else {
          r.list.push_back({open, pc});
          open = kNone;
        }
        break;
      case Control::Next:
      case Control::Jump:
      case Control::Branch:
      case Control::Call:
      case Control::VectorCall:
      case Control::Return:
      case Control::Stop:
      case Control::Exit:
      case Control::Push:
      case Control::Invert:
      case Control::Pop:
      case Control::LoopPush:
      case Control::LoopControl:
      case Control::LoopNext:
        break;
    }
  }
  if (open != kNone) r.errors.push_back({RegionError::Kind::Unclosed, open});
  return r;
}

Stack Stacks::push(Stack below, Entry e) {
  const uint64_t key = uint64_t{static_cast<uint32_t>(below)} << 2 | static_cast<uint8_t>(e);
  auto [it, fresh] = index_.emplace(key, Stack{static_cast<uint32_t>(nodes_.size())});
  if (fresh) {
    const Node& b = node(below);
    Node n{below, e, b.size + 1, b.floor, b.loop};
    if (e == Entry::Region) n.floor = n.size, n.loop = false;
    if (e == Entry::Loop) n.loop = true;
    nodes_.push_back(n);
  }
  return it->second;
}

bool Stacks::loop_above(Stack s, uint32_t floor) const {
  if (floor == node(s).floor) return node(s).loop;
  for (Stack t = s; size(t) > floor; t = pop(t))
    if (top(t) == Entry::Loop) return true;
  return false;
}

bool Stacks::extends(Stack s, Stack base) const {
  if (size(s) < size(base)) return false;
  while (size(s) > size(base)) s = pop(s);
  return s == base;
}

Step Stacks::step(Stack s, Control k, uint32_t floor) {
  const bool empty = this->empty(s);
  // The top entry is the floor's: out of reach (inside a region, its own entry).
  const bool at_floor = !empty && size(s) == floor;
  const Stack popped = empty ? s : pop(s);
  switch (k) {
    case Control::Push:
      return {push(s, Entry::If)};
    case Control::LoopPush:
      return {push(s, Entry::Loop)};
    case Control::RegionBegin:  // wave.valid.balance
      return {push(s, Entry::Region)};
    case Control::RegionEnd:
      if (empty || top(s) != Entry::Region) return {popped, Fault::RegionOpen};
      return {popped};
    case Control::Invert:
      if (at_floor) return {s, Fault::AtFloor};
      if (empty) return {s, Fault::NoEntry};
      if (top(s) != Entry::If) return {s, Fault::LoopOnTop};
      return {s};
    case Control::Pop:
      if (at_floor) return {popped, Fault::AtFloor};
      if (empty) return {popped, Fault::NoEntry};
      return {popped};
    case Control::LoopControl:
      if (!loop_above(s, floor)) return {s, Fault::NoLoop};
      return {s};
    case Control::LoopNext:
      if (at_floor) return {s, Fault::AtFloor};
      if (empty || top(s) != Entry::Loop) return {s, Fault::NoLoopOnTop};
      return {s};
    case Control::Next:
    case Control::Jump:
    case Control::Branch:
    case Control::Call:
    case Control::VectorCall:
    case Control::Return:
    case Control::Stop:
    case Control::Exit:
      return {s};
  }
  return {s};
}

std::string Stacks::describe(Stack s) const {
  if (s == kEmpty) return "no entry";
  constexpr uint32_t kDescribed = 8;
  std::vector<Entry> inner;  // the innermost entries, from the top down
  for (Stack t = s; t != kEmpty && inner.size() < kDescribed; t = pop(t))
    inner.push_back(node(t).kind);
  std::string kinds = size(s) > kDescribed ? "..." : "";
  for (auto it = inner.rbegin(); it != inner.rend(); ++it)
    kinds += std::string(kinds.empty() ? "" : ", ") + (*it == Entry::If     ? "if"
                                                       : *it == Entry::Loop ? "loop"
                                                                            : "sub-vector region");
  return std::to_string(size(s)) + (size(s) == 1 ? " entry (" : " entries (") + kinds + ")";
}

}  // namespace simt::flow
