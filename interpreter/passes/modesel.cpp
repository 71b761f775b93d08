// Mode selection (spec/wave.md, wave.modesel.*). The pass works on the structured
// program and reads the expanded one (valid::expand) for control flow, so each
// structured statement is mapped to the PCs it expands to. Analyses:
//   contexts   valid.flow.calls: main, handler and function code, with the abstract
//              mask stack at each PC (flow/flow.h, as the validator computes it);
//   liveness   wave.modesel.need: backward, over a graph where calls go to the
//              called code and `ret` to the instruction after every call; the
//              needs of segments are taken on the program without its regions
//              (normalized_needs), which makes the pass idempotent;
//   groups     wave.modesel.threshold, checked by wave.modesel.safe/.shared (and
//              three checks the clause's list lacks: a jmp loop, a scalar a loop
//              carries past its end, a read of exec; plus wave.valid.nest and
//              wave.valid.balance, which the output must meet);
// then each group is rewritten with the chosen strategy (wave.modesel.strategy).
#include "passes/modesel.h"

#include <algorithm>
#include <bitset>
#include <cstdio>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "flow/flow.h"
#include "valid/valid.h"

namespace simt::passes {

using isa::Control;
using isa::Family;
using isa::Feature;
using isa::Op;
using isa::OperandKind;
using syntax::DiagKind;
using syntax::Operand;
using syntax::OperandType;
using syntax::Program;
using syntax::RegFile;
using syntax::Span;
using syntax::Stmt;
using syntax::StmtKind;
using syntax::Value;

namespace {

static_assert(isa::kMaxVRegs == isa::kMaxSRegs);
using Regs = std::bitset<isa::kMaxVRegs>;

// state.special.exec: %exec, %exec_lo and %exec_hi are the only writable special
// registers.
bool is_exec(const Value& v) {
  return v.file == RegFile::Special && v.index < static_cast<uint32_t>(isa::Special::kCount) &&
         isa::special_info(static_cast<isa::Special>(v.index)).writable;
}

// The registers an instruction reads and writes, from its signature.
struct Uses {
  Regs vread, vwrite, sread, swrite;
  bool exec_read = false, exec_write = false;
};

Uses uses_of(const Stmt& s) {
  Uses u;
  if (s.kind != StmtKind::Instr) return u;
  const auto kinds = isa::info(s.op).sig.view();
  for (size_t i = 0; i < kinds.size() && i < s.operands.size(); ++i) {
    const OperandKind k = kinds[i];
    if (k == OperandKind::PDst || k == OperandKind::Pred || k == OperandKind::Label) continue;
    const Value& v = s.operands[i].value;
    const bool write = k == OperandKind::Dst || k == OperandKind::VDst || k == OperandKind::SDst;
    if ((v.file == RegFile::V || v.file == RegFile::S) && v.index >= isa::kMaxVRegs) continue;
    if (v.file == RegFile::V)
      (write ? u.vwrite : u.vread).set(v.index);
    else if (v.file == RegFile::S)
      (write ? u.swrite : u.sread).set(v.index);
    else if (is_exec(v))
      (write ? u.exec_write : u.exec_read) = true;
  }
  return u;
}

std::string mnemonic(const Stmt& s) {
  return std::string(isa::info(s.op).mnemonic);
}

Control control(const Stmt& s) {
  return isa::info(s.op).control;
}

bool is_call(Control k) {
  return k == Control::Call || k == Control::VectorCall;
}

// ---- building statements -------------------------------------------------------

Operand value(RegFile f, uint32_t index, Span sp) {
  Operand o;
  o.type = OperandType::Value;
  o.value.file = f;
  o.value.index = index;
  o.span = sp;
  return o;
}
Operand sreg(uint32_t i, Span sp) {
  return value(RegFile::S, i, sp);
}
Operand special(isa::Special s, Span sp) {
  return value(RegFile::Special, static_cast<uint32_t>(s), sp);
}
Operand imm(int64_t v, std::string text, Span sp) {
  Operand o = value(RegFile::Imm, 0, sp);
  o.value.imm = v;
  o.spelling = std::move(text);
  return o;
}
Operand pt(Span sp) {
  Operand o;
  o.type = OperandType::Pred;
  o.value.file = RegFile::PTrue;
  o.span = sp;
  return o;
}
Operand label_ref(std::string name, Span sp) {
  Operand o;
  o.type = OperandType::Label;
  o.name = std::move(name);
  o.span = sp;
  return o;
}
Stmt instr(Op op, std::vector<Operand> ops, Span sp) {
  Stmt s;
  s.kind = StmtKind::Instr;
  s.op = op;
  s.operands = std::move(ops);
  s.span = sp;
  return s;
}
Stmt label(std::string name, Span sp) {
  Stmt s;
  s.kind = StmtKind::Label;
  s.label = std::move(name);
  s.span = sp;
  return s;
}

// ---- the pass -----------------------------------------------------------------

using CtxKind = flow::Context;

// valid.flow.calls: one context of the program's code.
struct Ctx {
  CtxKind kind = CtxKind::Main;
  uint32_t entry = 0;
  std::vector<std::optional<flow::Stack>> st;  // abstract mask stack at each PC reached
  std::vector<uint32_t> reached;               // PCs reached, in discovery order
  std::vector<uint32_t> calls;                 // `call` and `vcall` PCs reached
  bool under = false;                          // entered under a mask-stack entry
};

struct Segment {
  std::string kind;
  size_t first = 0, last = 0;  // statement indices, inclusive
  uint32_t need = 0;
  int group = 0;
};

struct Group {
  size_t first_seg = 0, last_seg = 0;
  size_t a = 0, b = 0;          // statement indices, inclusive
  uint32_t ga = 0, gb = 0;      // PCs [ga, gb)
  std::set<size_t> outside;     // leading labels placed before the block
  bool falls_through = false;   // control can leave the group at its end
  std::set<std::string> inner;  // labels of the group that stay inside the block
};

class Pass {
 public:
  Pass(const Program& p, const exec::LaunchConfig& cfg, Strategy strategy, ModeselResult& r)
      : p_(p), cfg_(cfg), strategy_(strategy), r_(r) {}

  void run(std::optional<uint32_t> threshold) {
    const uint32_t simd = std::max<uint32_t>(1, cfg_.simd_width());
    parts_ = std::max<uint32_t>(1, cfg_.wave / simd);
    r_.threshold = threshold.value_or(cfg_.vregs / parts_);  // wave.modesel.threshold (default N)
    // The pass works on valid programs: the analyses rely on what validation checks.
    valid::check_structure(p_, r_.diags);
    if (!r_.diags.empty()) return;
    e_ = valid::expand(p_);
    valid::validate(e_, cfg_, r_.diags);
    if (!r_.diags.empty()) return;
    map_statements();
    contexts();
    liveness();
    normalized_needs();
    segments();
    form_groups();
    bool ok = true;
    for (auto& g : groups_) ok = check(g) && ok;
    if (!ok) return;
    r_.program = transform();
  }

 private:
  // ---- the expanded program --------------------------------------------------
  void map_statements() {
    for (const auto& s : e_.stmts)
      if (s.kind == StmtKind::Instr) ins_.push_back(&s);
    n_ = static_cast<uint32_t>(ins_.size());
    uint32_t pc = 0;
    size_t ei = 0;
    const size_t ns = p_.stmts.size();
    first_pc_.resize(ns);
    end_pc_.resize(ns);
    eidx_.resize(ns);
    match_.resize(ns);
    std::vector<size_t> open;
    for (size_t i = 0; i < ns; ++i) {
      const Stmt& s = p_.stmts[i];
      // branch.struct.expand: a loop becomes lpush and a label, endloop three
      // instructions, every other statement one statement.
      const uint32_t count = s.kind == StmtKind::Label ? 0 : s.kind == StmtKind::EndLoop ? 3 : 1;
      first_pc_[i] = pc;
      eidx_[i] = ei;
      pc += count;
      end_pc_[i] = pc;
      ei += s.kind == StmtKind::Loop ? 2 : s.kind == StmtKind::EndLoop ? 3 : 1;
      match_[i] = i;
      if (s.kind == StmtKind::Instr) {  // pc - 1 is its PC
        as_written_.resize(pc, false);
        as_written_[pc - 1] = true;
      }
      if (s.kind == StmtKind::If || s.kind == StmtKind::Loop) open.push_back(i);
      if ((s.kind == StmtKind::EndIf || s.kind == StmtKind::EndLoop) && !open.empty()) {
        match_[open.back()] = i;
        open.pop_back();
      }
    }
    as_written_.resize(n_, false);
    uint32_t lpc = 0;
    for (const auto& s : e_.stmts) {
      if (s.kind == StmtKind::Label)
        label_pc_.emplace(s.label, lpc);
      else
        ++lpc;
    }
    for (const auto& s : p_.stmts)
      if (s.kind == StmtKind::Label) labels_.insert(s.label);
    uses_.reserve(n_);
    for (uint32_t i = 0; i < n_; ++i) uses_.push_back(uses_of(*ins_[i]));
    // wave.valid.pair: regions as PC pairs.
    region_mate_.assign(n_, 0);
    std::vector<Op> code;
    code.reserve(n_);
    for (const Stmt* s : ins_) code.push_back(s->op);
    for (const auto& r : flow::pair_regions(code).list)
      region_mate_[r.begin] = r.end, region_mate_[r.end] = r.begin;
    // Every reference to a label by an instruction, by name.
    for (uint32_t i = 0; i < n_; ++i)
      for (const auto& o : ins_[i]->operands)
        if (o.type == OperandType::Label) refs_[o.name].push_back(i);
    if (p_.handler.value) entry_refs_.insert(*p_.handler.value);
    for (const auto& h : p_.handler_entries) entry_refs_.insert(*h.value);
    for (const auto& t : p_.vtables)
      for (const auto& l : t.labels) entry_refs_.insert(l);
  }

  // The PC a branch or call names (n_ if the label is not there).
  uint32_t target(const Stmt& s) const { return pc_of(s.operands.back().name); }
  uint32_t pc_of(const std::string& label) const {
    auto it = label_pc_.find(label);
    return it == label_pc_.end() ? n_ : it->second;
  }

  // The code a `call` or `vcall` enters (trap.vector: any entry of any table).
  std::vector<uint32_t> callees(const Stmt& s) const {
    std::vector<uint32_t> t;
    if (control(s) == Control::Call) {
      t.push_back(target(s));
    } else if (control(s) == Control::VectorCall) {
      for (const auto& v : p_.vtables)
        for (const auto& l : v.labels) t.push_back(pc_of(l));
    }
    std::erase_if(t, [&](uint32_t x) { return x >= n_; });
    return t;
  }

  // ---- contexts (valid.flow.calls, valid.flow.order) ----------------------------
  // The successors of `pc` in its context with the abstract stack after it: calls
  // go on at the next instruction; ret, tret, tpause and an exit that ends the
  // warp have none (flow::in_context, as in the validator). The program is valid:
  // the transfer function finds no fault on the paths the validator followed.
  void context_successors(uint32_t pc, flow::Stack st, CtxKind kind,
                          std::vector<std::pair<uint32_t, flow::Stack>>& next) {
    const Stmt& s = *ins_[pc];
    const Control k = control(s);
    const flow::Stack t = stacks_.step(st, k).after;
    auto go = [&](uint32_t to) {
      if (to < n_) next.emplace_back(to, t);
    };
    const flow::Edges e = flow::in_context(k, flow::exit_ends(kind, stacks_.empty(st)));
    if (e.next) go(pc + 1);
    if (e.target) go(target(s));
  }

  void analyse(size_t ci) {
    std::vector<std::optional<flow::Stack>> st(n_);
    std::vector<uint32_t> reached, calls;
    std::deque<uint32_t> work;
    const CtxKind kind = ctxs_[ci].kind;
    st[ctxs_[ci].entry] = flow::kEmpty;
    work.push_back(ctxs_[ci].entry);
    std::vector<std::pair<uint32_t, flow::Stack>> next;
    while (!work.empty()) {
      const uint32_t pc = work.front();
      work.pop_front();
      reached.push_back(pc);
      if (is_call(control(*ins_[pc]))) {
        calls.push_back(pc);
        for (uint32_t t : callees(*ins_[pc]))
          if (!fn_of_entry_.contains(t)) {
            fn_of_entry_[t] = ctxs_.size();
            Ctx c;
            c.kind = CtxKind::Function;
            c.entry = t;
            ctxs_.push_back(std::move(c));
          }
      }
      next.clear();
      context_successors(pc, *st[pc], kind, next);
      for (const auto& [to, x] : next)
        if (!st[to]) {
          st[to] = x;
          work.push_back(to);
        }
    }
    Ctx& c = ctxs_[ci];
    c.st = std::move(st);
    c.reached = std::move(reached);
    c.calls = std::move(calls);
  }

  void contexts() {
    if (n_ == 0) return;
    ctxs_.push_back(Ctx{});  // the main context (PC 0)
    std::set<uint32_t> roots{0};
    std::vector<std::string> handlers;
    if (p_.handler.value) handlers.push_back(*p_.handler.value);
    for (const auto& h : p_.handler_entries) handlers.push_back(*h.value);
    for (const auto& h : handlers) {
      auto it = label_pc_.find(h);
      if (it == label_pc_.end() || it->second >= n_ || !roots.insert(it->second).second) continue;
      Ctx c;
      c.kind = CtxKind::Handler;
      c.entry = it->second;
      ctxs_.push_back(std::move(c));
    }
    for (size_t i = 0; i < ctxs_.size(); ++i) analyse(i);
    // A function is entered under a mask-stack entry if some call to it is.
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& c : ctxs_)
        for (uint32_t pc : c.calls) {
          const bool under = c.under || !stacks_.empty(*c.st[pc]);
          if (!under) continue;
          for (uint32_t t : callees(*ins_[pc])) {
            Ctx& f = ctxs_[fn_of_entry_.at(t)];
            if (!f.under) f.under = changed = true;
          }
        }
    }
    main_ = &ctxs_[0];
  }

  // ---- liveness (wave.modesel.need) -------------------------------------------
  // The PCs the edges `e` of `pc` lead to, in the order of flow::Edges; `returns`:
  // where a ret returns to.
  void successors(uint32_t pc, const flow::Edges& e, const std::set<uint32_t>& returns,
                  std::vector<uint32_t>& out) const {
    const Stmt& s = *ins_[pc];
    out.clear();
    if (e.next) out.push_back(pc + 1);
    if (e.target) out.push_back(target(s));
    if (e.callees)
      for (uint32_t t : callees(s)) out.push_back(t);
    if (e.returns) out.insert(out.end(), returns.begin(), returns.end());
    if (e.mate) out.push_back(region_mate_[pc] + 1);
    std::erase_if(out, [&](uint32_t x) { return x >= n_; });
  }

  void liveness() {
    in_.assign(n_, Regs{});
    out_.assign(n_, Regs{});
    need_.assign(n_, 0);
    if (n_ == 0) return;
    // A vector write kills only where no mask-stack entry is open (counting the
    // entries the callers of a function have open); code no context reaches kills
    // nothing.
    std::vector<bool> under(n_, false), seen(n_, false), exit_falls(n_, false);
    for (const auto& c : ctxs_)
      for (uint32_t pc : c.reached) {
        seen[pc] = true;
        if (c.under || !stacks_.empty(*c.st[pc])) under[pc] = true;
        // The exit of the kernel's own code with no entry open ends the warp:
        // nothing is live after it. Elsewhere the lanes that did not exit go on.
        if (!flow::exit_ends(c.kind, stacks_.empty(*c.st[pc]))) exit_falls[pc] = true;
      }
    for (uint32_t pc = 0; pc < n_; ++pc)
      if (!seen[pc]) under[pc] = true;  // (and an exit no code reaches goes nowhere)
    // `ret` goes back to the instruction after every call of its function.
    std::vector<std::set<uint32_t>> ret_sites(n_);
    for (const auto& c : ctxs_)
      for (uint32_t call : c.calls)
        for (uint32_t t : callees(*ins_[call]))
          if (call + 1 < n_)
            for (uint32_t pc : ctxs_[fn_of_entry_.at(t)].reached)
              if (control(*ins_[pc]) == Control::Return) ret_sites[pc].insert(call + 1);
    lsucc_.assign(n_, {});
    for (uint32_t pc = 0; pc < n_; ++pc)
      successors(pc, flow::in_program(control(*ins_[pc]), !exit_falls[pc]), ret_sites[pc],
                 lsucc_[pc]);
    kill_.assign(n_, false);
    for (uint32_t pc = 0; pc < n_; ++pc) kill_[pc] = !under[pc];
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t pc = n_; pc-- > 0;) {
        Regs o;
        for (uint32_t s : lsucc_[pc]) o |= in_[s];
        Regs i = uses_[pc].vread | (kill_[pc] ? o & ~uses_[pc].vwrite : o);
        if (o != out_[pc] || i != in_[pc]) {
          out_[pc] = o;
          in_[pc] = i;
          changed = true;
        }
      }
    }
    // Scalar registers live before each PC: a scalar write happens whatever exec is
    // (alu.form.scalar), so it always kills.
    sin_.assign(n_, Regs{});
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t pc = n_; pc-- > 0;) {
        Regs o;
        for (uint32_t s : lsucc_[pc]) o |= sin_[s];
        const Regs i = uses_[pc].sread | (o & ~uses_[pc].swrite);
        if (i != sin_[pc]) {
          sin_[pc] = i;
          changed = true;
        }
      }
    }
    // |live_in ∪ live_out|; for a call, what is live after it is what is live
    // where it returns to.
    std::vector<uint32_t> base(n_);
    for (uint32_t pc = 0; pc < n_; ++pc) {
      Regs after = out_[pc];
      if (is_call(control(*ins_[pc]))) after = pc + 1 < n_ ? in_[pc + 1] : Regs{};
      base[pc] = static_cast<uint32_t>((in_[pc] | after).count());
    }
    // A call needs the most any instruction of the code it calls (transitively) needs.
    std::vector<uint32_t> ctx_max(ctxs_.size(), 0);
    for (size_t ci = 0; ci < ctxs_.size(); ++ci)
      for (uint32_t pc : ctxs_[ci].reached) ctx_max[ci] = std::max(ctx_max[ci], base[pc]);
    for (uint32_t pc = 0; pc < n_; ++pc) {
      need_[pc] = base[pc];
      if (!is_call(control(*ins_[pc]))) continue;
      for (size_t ci : closure({pc})) need_[pc] = std::max(need_[pc], ctx_max[ci]);
    }
  }

  // The function contexts the calls at `pcs` enter, transitively.
  std::set<size_t> closure(const std::vector<uint32_t>& pcs) const {
    std::set<size_t> out;
    std::vector<uint32_t> work = pcs;
    while (!work.empty()) {
      const uint32_t pc = work.back();
      work.pop_back();
      if (!is_call(control(*ins_[pc]))) continue;
      for (uint32_t t : callees(*ins_[pc])) {
        auto it = fn_of_entry_.find(t);
        if (it == fn_of_entry_.end() || !out.insert(it->second).second) continue;
        for (uint32_t c : ctxs_[it->second].calls) work.push_back(c);
      }
    }
    return out;
  }

  // ---- needs of the statements (wave.modesel.need) -------------------------------
  // The need of each statement: the most any of its instructions needs.
  std::vector<uint32_t> statement_needs() const {
    std::vector<uint32_t> out(p_.stmts.size(), 0);
    for (size_t i = 0; i < p_.stmts.size(); ++i)
      for (uint32_t pc = first_pc_[i]; pc < end_pc_[i] && pc < n_; ++pc)
        out[i] = std::max(out[i], need_[pc]);
    return out;
  }

  // Needs only, for the normalised program of normalized_needs().
  std::vector<uint32_t> needs_only() {
    e_ = valid::expand(p_);
    map_statements();
    contexts();
    liveness();
    return statement_needs();
  }

  // The body of a block the pass generated, [first, end) in statements: the first
  // copy of `duplicate` (up to the `or`s of exec into the accumulator), or the BODY
  // of the software loop (up to its `or`, `mov` and `cbr`); the whole block's
  // inside if it has neither shape.
  std::pair<size_t, size_t> generated_body(size_t i, size_t j) const {
    const std::string& name = p_.stmts[i].label;
    auto find = [&](const std::string& l) {
      for (size_t k = i + 1; k < j; ++k)
        if (p_.stmts[k].kind == StmtKind::Label && p_.stmts[k].label == l) return k;
      return j;
    };
    auto is_instr = [&](size_t k, Op op) {
      return p_.stmts[k].kind == StmtKind::Instr && p_.stmts[k].op == op;
    };
    const size_t top = find(name + "_top"), next = find(name + "_next");
    if (top < next && next < j && next >= top + 4 && is_instr(next - 3, Op::Or) &&
        is_instr(next - 2, Op::Mov) && is_instr(next - 1, Op::Cbr))
      return {top + 1, next - 3};
    const size_t p0 = find(name + "_p0"), s0 = find(name + "_s0");
    if (p0 < s0 && s0 < j) {
      size_t end = s0;
      while (end > p0 + 1 && is_instr(end - 1, Op::Or) && p_.stmts[end - 1].operands.size() == 3 &&
             is_exec(p_.stmts[end - 1].operands[2].value))
        --end;
      return {p0 + 1, end};
    }
    return {i + 1, j};
  }

  // wave.modesel.need on the program as it would be with no region: the markers of
  // the regions at the top level dropped (each lane runs a region's body once, as
  // in normal mode) and each generated block replaced by the group it came from
  // (its first copy, or the software loop's body). So a group's transformation
  // changes no other segment's need, and the pass is idempotent
  // (wave.modesel.output).
  void normalized_needs() {
    Program q = p_;
    q.stmts.clear();
    const size_t ns = p_.stmts.size();
    std::vector<std::vector<size_t>> from(ns);  // statement -> its copies in q
    auto copy = [&](size_t k) {
      from[k].push_back(q.stmts.size());
      q.stmts.push_back(p_.stmts[k]);
    };
    int depth = 0;
    for (size_t i = 0; i < ns; ++i) {
      const Stmt& s = p_.stmts[i];
      if (depth == 0) {
        if (auto j = generated_block(i)) {
          const auto [b, e] = generated_body(i, *j);
          for (size_t k = b; k < e; ++k) copy(k);
          i = *j;
          continue;
        }
        if (s.kind == StmtKind::Instr && control(s) == Control::RegionBegin)
          if (auto j = region_end(i)) {
            for (size_t k = i + 1; k < *j; ++k) copy(k);
            i = *j;
            continue;
          }
      }
      if (s.kind == StmtKind::If || s.kind == StmtKind::Loop) ++depth;
      if (s.kind == StmtKind::EndIf || s.kind == StmtKind::EndLoop) --depth;
      copy(i);
    }
    ModeselResult unused;
    Pass sub(q, cfg_, strategy_, unused);
    const std::vector<uint32_t> qneed = sub.needs_only();
    stmt_need_.assign(ns, 0);
    for (size_t i = 0; i < ns; ++i)
      for (size_t k : from[i]) stmt_need_[i] = std::max(stmt_need_[i], qneed[k]);
  }

  // ---- segments (wave.modesel.segments) -------------------------------------------
  bool reached_main(size_t i) const {
    const uint32_t pc = first_pc_[i];
    return pc < n_ && main_ && main_->st[pc].has_value();
  }

  // `__modselN`: the start of a block the pass generated, if its end label follows
  // at the top level (wave.modesel.output). Returns the end label's index.
  std::optional<size_t> generated_block(size_t i) const {
    const Stmt& s = p_.stmts[i];
    if (s.kind != StmtKind::Label || s.label.rfind("__modsel", 0) != 0) return std::nullopt;
    const std::string num = s.label.substr(8);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    const std::string end = s.label + "_end";
    int depth = 0;
    for (size_t j = i + 1; j < p_.stmts.size(); ++j) {
      const Stmt& t = p_.stmts[j];
      if (t.kind == StmtKind::If || t.kind == StmtKind::Loop) ++depth;
      if (t.kind == StmtKind::EndIf || t.kind == StmtKind::EndLoop) --depth;
      if (depth == 0 && t.kind == StmtKind::Label && t.label == end) return j;
    }
    return std::nullopt;
  }

  std::optional<size_t> region_end(size_t i) const {
    int depth = 0;
    for (size_t j = i + 1; j < p_.stmts.size(); ++j) {
      const Stmt& t = p_.stmts[j];
      if (t.kind == StmtKind::If || t.kind == StmtKind::Loop) ++depth;
      if (t.kind == StmtKind::EndIf || t.kind == StmtKind::EndLoop) --depth;
      if (t.kind == StmtKind::Instr && control(t) == Control::RegionEnd) {
        if (depth == 0) return j;
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  void segments() {
    const size_t ns = p_.stmts.size();
    bool chunk_open = false;
    auto add = [&](std::string kind, size_t a, size_t b) {
      chunk_open = false;
      Segment s;
      s.kind = std::move(kind);
      s.first = a;
      s.last = b;
      for (size_t i = a; i <= b; ++i) s.need = std::max(s.need, stmt_need_[i]);
      segs_.push_back(std::move(s));
    };
    for (size_t i = 0; i < ns;) {
      const Stmt& s = p_.stmts[i];
      const size_t end = match_[i];  // the whole block of an if or loop
      if (!reached_main(i)) {        // not the main context's code
        chunk_open = false;
        i = end + 1;
        continue;
      }
      if (auto j = generated_block(i)) {
        add("region", i, *j);
        i = *j + 1;
        continue;
      }
      if (s.kind == StmtKind::Instr && control(s) == Control::RegionBegin) {
        if (auto j = region_end(i)) {
          add("region", i, *j);
          i = *j + 1;
          continue;
        }
      }
      if (s.kind == StmtKind::Loop) {
        add("loop", i, end);
      } else if (s.kind == StmtKind::Instr && control(s) == Control::Call) {
        add("call", i, i);
      } else if (chunk_open && s.kind != StmtKind::Label) {
        Segment& c = segs_.back();  // the chunk goes on
        c.last = end;
        for (size_t k = i; k <= end; ++k) c.need = std::max(c.need, stmt_need_[k]);
      } else {
        add("chunk", i, end);
        chunk_open = true;
      }
      i = end + 1;
    }
  }

  // ---- groups (wave.modesel.threshold) -------------------------------------------
  void form_groups() {
    for (size_t k = 0; k < segs_.size(); ++k) {
      Segment& s = segs_[k];
      if (s.kind == "region") {
        s.group = -1;  // never changed
        continue;
      }
      if (s.need <= r_.threshold) continue;
      // Consecutive hot segments (nothing between them) form one group.
      if (!groups_.empty() && groups_.back().last_seg + 1 == k && segs_[k - 1].group > 0 &&
          segs_[k - 1].last + 1 == s.first) {
        groups_.back().last_seg = k;
        groups_.back().b = s.last;
      } else {
        Group g;
        g.first_seg = g.last_seg = k;
        g.a = s.first;
        g.b = s.last;
        groups_.push_back(g);
      }
      s.group = static_cast<int>(groups_.size());
    }
    for (auto& g : groups_) {
      g.ga = first_pc_[g.a];
      g.gb = end_pc_[g.b];
    }
  }

  // ---- checks (wave.modesel.safe, wave.modesel.shared) -------------------------
  bool refuse(Span at, const Group& g, const std::string& what, const char* clause) {
    r_.diags.add(DiagKind::Syntax, at,
                 "modesel cannot transform the group of lines " + lines(g) + ": " + what, clause);
    return false;
  }

  std::string lines(const Group& g) const {
    return std::to_string(p_.stmts[g.a].span.line) + "-" + std::to_string(p_.stmts[g.b].span.line);
  }

  bool in_group(const Group& g, uint32_t pc) const { return pc >= g.ga && pc < g.gb; }

  bool check(Group& g) {
    bool ok = true;
    const Span first = p_.stmts[g.a].span;
    // The labels of the group: its statements' and the loops' generated ones.
    std::set<std::string> names;
    for (size_t i = g.a; i <= g.b; ++i) {
      const Stmt& s = p_.stmts[i];
      if (s.kind == StmtKind::Label) names.insert(s.label);
      if (s.kind == StmtKind::Loop) names.insert(e_.stmts[eidx_[i] + 1].label);
    }
    auto referenced_from = [&](const std::string& name, bool inside) {
      auto it = refs_.find(name);
      if (it != refs_.end())
        for (uint32_t pc : it->second)
          if (in_group(g, pc) == inside) return std::optional<uint32_t>(pc);
      return std::optional<uint32_t>();
    };
    // Labels before the group's first instruction that only code outside it
    // branches to stay outside, before the block: a branch to them enters the block
    // at its start.
    for (size_t i = g.a; i <= g.b && p_.stmts[i].kind == StmtKind::Label; ++i)
      if (!referenced_from(p_.stmts[i].label, true)) g.outside.insert(i);
    for (size_t i = g.a; i <= g.b; ++i) {
      const Stmt& s = p_.stmts[i];
      if (s.kind != StmtKind::Label || g.outside.contains(i)) continue;
      g.inner.insert(s.label);
      if (auto pc = referenced_from(s.label, false))
        ok = refuse(s.span, g,
                    "label '" + s.label + "' is a branch target of line " +
                        std::to_string(ins_[*pc]->span.line) + ", outside the group",
                    "wave.modesel.safe");
      else if (entry_refs_.contains(s.label))
        ok = refuse(s.span, g,
                    "label '" + s.label +
                        "' is a handler or vector-table entry: it is entered "
                        "from outside the group",
                    "wave.modesel.safe");
    }
    // The code the group calls (not for switch, which refuses calls).
    std::vector<uint32_t> gcalls;
    for (uint32_t pc = g.ga; pc < g.gb; ++pc)
      if (is_call(control(*ins_[pc]))) gcalls.push_back(pc);
    const std::set<size_t> called = closure(gcalls);
    std::vector<bool> in_called(n_, false);
    for (size_t ci : called)
      for (uint32_t pc : ctxs_[ci].reached) in_called[pc] = true;
    // Instructions, in the group and in the code it calls.
    std::set<std::string> stored;  // spaces the group stores to
    auto each_insn = [&](auto&& fn) {
      for (uint32_t pc = g.ga; pc < g.gb; ++pc) fn(pc, true);
      if (strategy_ != Strategy::Switch)
        for (uint32_t pc = 0; pc < n_; ++pc)
          if (in_called[pc] && !in_group(g, pc)) fn(pc, false);
    };
    each_insn([&](uint32_t pc, bool) {
      const auto& info = isa::info(ins_[pc]->op);
      if (info.family == Family::Store || info.family == Family::AtomLane ||
          info.family == Family::AtomWarp)
        for (const auto& o : ins_[pc]->operands)
          if (o.type == OperandType::Mem) stored.insert(o.name);
    });
    each_insn([&](uint32_t pc, bool grp) {
      const Stmt& s = *ins_[pc];
      const auto& info = isa::info(s.op);
      const Control k = info.control;
      const std::string mn = "'" + mnemonic(s) + "'";
      const std::string where = grp ? "" : " in code the group calls";
      if (info.feature == Feature::wave)
        ok = refuse(s.span, g, mn + where + ": sub-vector regions do not nest", "wave.valid.nest");
      else if (info.feature == Feature::bar)
        ok = refuse(s.span, g, mn + where + ": the parts would arrive at the barrier one by one",
                    "wave.modesel.safe");
      else if (k == Control::Return && grp)
        ok = refuse(s.span, g, mn + ": control would leave the group", "wave.modesel.safe");
      else if (info.feature == Feature::trap)
        ok = refuse(s.span, g, mn + where + ": a trap instruction acts once per warp",
                    "wave.modesel.safe");
      else if (info.family == Family::AtomWarp)
        ok = refuse(s.span, g, mn + where + ": a warp-wide atomic acts once for the whole wave",
                    "wave.modesel.safe");
      else if (info.feature == Feature::xlane)
        ok = refuse(s.span, g,
                    mn + where + ": a cross-lane instruction would see one part of the wave",
                    "wave.modesel.safe");
      else if (uses_[pc].exec_write)
        ok = refuse(s.span, g, mn + where + " writes an exec register", "wave.modesel.safe");
      else if (uses_[pc].exec_read)
        ok = refuse(s.span, g,
                    mn + where + " reads an exec register, which holds one part in a pass",
                    "wave.modesel.safe");
      else if (k == Control::Branch &&
               (s.operands[0].value.file != RegFile::PTrue || s.operands[0].negate))
        ok = refuse(s.span, g,
                    mn + where + " with a predicate other than pt: it would be judged per part",
                    "wave.modesel.safe");
      else if (k == Control::Call && grp && strategy_ == Strategy::Switch)
        ok = refuse(s.span, g, mn + ": control would leave the sub-vector region",
                    "wave.valid.branch");
      else if (grp && (k == Control::Jump || k == Control::Branch) &&
               !names.contains(s.operands.back().name))
        ok = refuse(s.span, g, mn + " to '" + s.operands.back().name + "', outside the group",
                    "wave.modesel.safe");
      else if (k == Control::Jump && target(s) <= pc)
        ok = refuse(s.span, g,
                    mn + where + " back to '" + s.operands.back().name +
                        "': a loop closed by jmp that only exit ends would run without end in "
                        "the pass of a part whose lanes have all exited",
                    "wave.modesel.safe");
      else if (info.family == Family::Load && s.operands[0].value.file == RegFile::S &&
               stored.contains(s.operands[1].name))
        ok = refuse(s.span, g,
                    "scalar-form " + mn + where + " from '" + s.operands[1].name +
                        "', which the group stores to: each part's pass would load anew",
                    "wave.modesel.safe");
    });
    ok = check_scalars(g, in_called) && ok;
    ok = check_loop_scalars(g, in_called) && ok;
    ok = check_balance(g) && ok;
    // Where control leaves the group at its end.
    std::vector<std::pair<uint32_t, flow::Stack>> next;
    for (uint32_t pc = g.ga; pc < g.gb; ++pc) {
      if (!main_->st[pc]) continue;
      next.clear();
      context_successors(pc, *main_->st[pc], CtxKind::Main, next);
      for (const auto& nx : next)
        if (nx.first == g.gb) g.falls_through = true;
    }
    if (strategy_ == Strategy::Switch) ok = check_shared(g) && ok;
    if (strategy_ == Strategy::Software && !(cfg_.wave == 64 && cfg_.simd_width() == 32))
      ok = refuse(first, g,
                  "the software loop is defined for wave 64 and simd 32 only (here wave " +
                      std::to_string(cfg_.wave) + ", simd " + std::to_string(cfg_.simd_width()) +
                      ")",
                  "wave.modesel.strategy");
    if (strategy_ == Strategy::Duplicate)
      for (const auto& l : g.inner)
        for (uint32_t part = 0; part < parts_; ++part)
          if (labels_.contains(copy_label(l, part)))
            ok = refuse(first, g,
                        "the copy's label '" + copy_label(l, part) + "' is already defined",
                        "wave.modesel.strategy");
    if (cfg_.sregs + scalars_needed() > isa::kMaxSRegs)
      ok = refuse(first, g,
                  "the strategy needs " + std::to_string(scalars_needed()) +
                      " scalar registers above the program's " + std::to_string(cfg_.sregs) +
                      ", past " + std::to_string(isa::kMaxSRegs),
                  "wave.modesel.strategy");
    return ok;
  }

  // Must-written scalars (forward): for each PC that `entry` reaches inside `in_set`,
  // the scalar registers every path from `entry` has written before it. Calls go
  // into the code they call; an exit goes on (the other parts' lanes are live).
  struct ScalarFlow {
    std::vector<Regs> win;
    std::vector<bool> reach;
  };
  ScalarFlow written_before(uint32_t entry, const std::vector<bool>& in_set) const {
    auto succ = [&](uint32_t pc, std::vector<uint32_t>& out) {
      const Stmt& s = *ins_[pc];
      const Control k = control(s);
      switch (k) {
        case Control::Exit:
          out.assign(1, pc + 1);
          break;
        case Control::Call:
        case Control::VectorCall:
          out = callees(s);
          if (strategy_ == Strategy::Switch) out.push_back(pc + 1);
          break;
        case Control::Next:
        case Control::Jump:
        case Control::Branch:
        case Control::Return:
        case Control::Stop:
        case Control::Push:
        case Control::Invert:
        case Control::Pop:
        case Control::LoopPush:
        case Control::LoopControl:
        case Control::LoopNext:
        case Control::RegionBegin:
        case Control::RegionEnd:
          out = lsucc_[pc];
          break;
      }
      std::erase_if(out, [&](uint32_t x) { return x >= n_ || !in_set[x]; });
    };
    ScalarFlow f;
    f.win.assign(n_, ~Regs{});
    f.reach.assign(n_, false);
    f.win[entry] = Regs{};
    f.reach[entry] = true;
    std::deque<uint32_t> work{entry};
    std::vector<uint32_t> next;
    while (!work.empty()) {
      const uint32_t pc = work.front();
      work.pop_front();
      const Regs wout = f.win[pc] | uses_[pc].swrite;
      succ(pc, next);
      for (uint32_t t : next) {
        if (t == entry) continue;  // nothing is written before the entry
        const Regs w = f.win[t] & wout;
        if (!f.reach[t] || w != f.win[t]) {
          f.reach[t] = true;
          f.win[t] = w;
          work.push_back(t);
        }
      }
    }
    return f;
  }

  // A scalar register both read before being written and written in the group:
  // the second part's pass would read what the first wrote. "Before" is along some
  // path from the group's start (through the code it calls); a write counts
  // whatever exec is (alu.form.scalar).
  bool check_scalars(const Group& g, const std::vector<bool>& in_called) {
    std::vector<bool> in_set(n_, false);
    for (uint32_t pc = 0; pc < n_; ++pc) in_set[pc] = in_group(g, pc) || in_called[pc];
    const ScalarFlow f = written_before(g.ga, in_set);
    const auto& reach = f.reach;
    const auto& win = f.win;
    Regs written, early;
    for (uint32_t pc = 0; pc < n_; ++pc)
      if (reach[pc]) {
        written |= uses_[pc].swrite;
        early |= uses_[pc].sread & ~win[pc];
      }
    const Regs bad = written & early;
    bool ok = true;
    for (uint32_t r = 0; r < isa::kMaxSRegs; ++r) {
      if (!bad.test(r)) continue;
      uint32_t at = g.ga;
      for (uint32_t pc = 0; pc < n_; ++pc)
        if (reach[pc] && uses_[pc].sread.test(r) && !win[pc].test(r)) {
          at = pc;
          break;
        }
      ok = refuse(ins_[at]->span, g,
                  "s" + std::to_string(r) +
                      " is read before it is written in the group and written in it: the "
                      "second part's pass would read the first's value",
                  "wave.modesel.safe");
    }
    return ok;
  }

  // A scalar register that a loop of the group carries from one iteration to the
  // next (read in an iteration before it is written in it, and written in it) and
  // that is live after the loop: a part's pass runs the loop only as long as that
  // part's lanes do, so the value the loop leaves can differ from normal mode's. A
  // loop is a `cbr pt` back to an earlier instruction (endloop's included).
  bool check_loop_scalars(const Group& g, const std::vector<bool>& in_called) {
    bool ok = true;
    for (uint32_t back = 0; back < n_; ++back) {
      const Stmt& s = *ins_[back];
      if (control(s) != Control::Branch || !(in_group(g, back) || in_called[back])) continue;
      const uint32_t head = target(s);
      if (head > back) continue;
      std::vector<bool> in_set(in_called);
      for (uint32_t pc = head; pc <= back; ++pc) in_set[pc] = true;
      const ScalarFlow f = written_before(head, in_set);
      Regs written, early;
      for (uint32_t pc = 0; pc < n_; ++pc)
        if (f.reach[pc]) {
          written |= uses_[pc].swrite;
          early |= uses_[pc].sread & ~f.win[pc];
        }
      const Regs bad = written & early & (back + 1 < n_ ? sin_[back + 1] : Regs{});
      for (uint32_t r = 0; r < isa::kMaxSRegs; ++r)
        if (bad.test(r))
          ok =
              refuse(s.span, g,
                     "s" + std::to_string(r) +
                         " carries a value from one iteration of the loop "
                         "of lines " +
                         std::to_string(ins_[head]->span.line) + "-" + std::to_string(s.span.line) +
                         " to the next and is read after it: a part's pass runs the loop only "
                         "while that part's lanes do",
                     "wave.modesel.safe");
    }
    return ok;
  }

  // wave.valid.balance: the group neither closes nor leaves open an entry of the
  // mask stack it did not open itself.
  bool check_balance(const Group& g) {
    if (!main_->st[g.ga]) return true;
    const flow::Stack base = *main_->st[g.ga];
    std::vector<std::pair<uint32_t, flow::Stack>> next;
    for (uint32_t pc = g.ga; pc < g.gb; ++pc) {
      if (!main_->st[pc]) continue;
      const flow::Stack st = *main_->st[pc];
      const Stmt& s = *ins_[pc];
      // The entries below the group's are out of reach in it, as below a region's
      // in the region: the transfer function with the group's start as the floor.
      const bool bad_step =
          stacks_.step(st, control(s), stacks_.size(base)).fault != flow::Fault::None;
      bool bad = !stacks_.extends(st, base) || bad_step;
      next.clear();
      context_successors(pc, st, CtxKind::Main, next);
      for (const auto& [to, x] : next)
        if (to == g.gb && x != base) bad = true;
      if (bad)
        return refuse(s.span, g,
                      "'" + mnemonic(s) +
                          "' unbalances the mask stack: a group neither leaves an entry open "
                          "nor uses one opened before it",
                      "wave.valid.balance");
    }
    return true;
  }

  // wave.modesel.shared: no shared register is live into the group (read in it
  // before written, a masked write not counting) or out of it (written in it and
  // live after it).
  bool check_shared(const Group& g) {
    if (!p_.vshared.value || *p_.vshared.value >= cfg_.vregs) return true;
    Regs shared;
    for (uint32_t v = *p_.vshared.value; v < cfg_.vregs && v < isa::kMaxVRegs; ++v) shared.set(v);
    bool ok = true;
    const std::string line = std::to_string(p_.stmts[g.a].span.line);
    // Into: a read reached from the group's start with no killing write before it.
    Regs written;
    for (uint32_t pc = g.ga; pc < g.gb; ++pc) written |= uses_[pc].vwrite;
    for (uint32_t v = 0; v < isa::kMaxVRegs; ++v) {
      if (!shared.test(v)) continue;
      std::vector<bool> seen(n_, false);
      std::deque<uint32_t> work{g.ga};
      seen[g.ga] = true;
      std::optional<uint32_t> read;
      while (!work.empty() && !read) {
        const uint32_t pc = work.front();
        work.pop_front();
        if (uses_[pc].vread.test(v)) {
          read = pc;
          break;
        }
        if (kill_[pc] && uses_[pc].vwrite.test(v)) continue;
        for (uint32_t t : lsucc_[pc])
          if (in_group(g, t) && !seen[t]) seen[t] = true, work.push_back(t);
      }
      if (read)
        ok = refuse(ins_[*read]->span, g,
                    "shared register v" + std::to_string(v) +
                        " is live into the group that starts on line " + line +
                        ": it is read before the group writes it",
                    "wave.modesel.shared");
      else if (written.test(v) && g.falls_through && in_[g.gb].test(v)) {
        uint32_t at = g.ga;
        while (!uses_[at].vwrite.test(v)) ++at;
        ok = refuse(ins_[at]->span, g,
                    "shared register v" + std::to_string(v) +
                        " is live out of the group that starts on line " + line +
                        ": it is written in it and read after it",
                    "wave.modesel.shared");
      }
    }
    return ok;
  }

  // ---- the strategies (wave.modesel.strategy) ------------------------------------
  static std::string copy_label(const std::string& l, uint32_t part) {
    return l + "__p" + std::to_string(part);
  }

  uint32_t halves() const { return cfg_.wave > 32 ? 2 : 1; }

  // Does some part's lane mask cover only some lanes of a 32-lane half?
  bool needs_temp() const {
    for (uint32_t p = 0; p < parts_; ++p)
      for (uint32_t h = 0; h < halves(); ++h) {
        const uint32_t m = half_mask(part_mask(p), h), full = half_mask(wave_mask(), h);
        if ((m & full) != 0 && (m & full) != full) return true;
      }
    return false;
  }

  uint32_t scalars_needed() const {
    switch (strategy_) {
      case Strategy::Switch:
        return 0;
      case Strategy::Duplicate:
        return 2 * halves() + (needs_temp() ? 1 : 0);
      case Strategy::Software:
        return 2;
    }
    return 0;
  }

  uint64_t wave_mask() const { return cfg_.wave >= 64 ? ~0ull : (1ull << cfg_.wave) - 1; }
  uint64_t part_mask(uint32_t p) const {
    const uint32_t simd = cfg_.simd_width();
    const uint64_t m = simd >= 64 ? ~0ull : (1ull << simd) - 1;
    return (m << (p * simd)) & wave_mask();
  }
  static uint32_t half_mask(uint64_t m, uint32_t h) { return static_cast<uint32_t>(m >> (32 * h)); }
  static isa::Special half_reg(uint32_t h) {
    return h == 0 ? isa::Special::ExecLo : isa::Special::ExecHi;
  }

  std::string next_block_name() {
    for (;; ++block_no_) {
      const std::string name = "__modsel" + std::to_string(block_no_);
      bool used = false;
      for (const auto& l : labels_)
        if (l == name || l.rfind(name + "_", 0) == 0) used = true;
      if (!used) return "__modsel" + std::to_string(block_no_++);
    }
  }

  void emit_duplicate(const Group& g, const std::vector<Stmt>& body, std::vector<Stmt>& out) {
    const Span sp = p_.stmts[g.a].span;
    const std::string name = next_block_name();
    const uint32_t base = cfg_.sregs, nh = halves();
    auto entry = [&](uint32_t h) { return base + h; };     // the entry exec, per half
    auto acc = [&](uint32_t h) { return base + nh + h; };  // what the copies leave
    const uint32_t tmp = base + 2 * nh;
    out.push_back(label(name, sp));
    for (uint32_t h = 0; h < nh; ++h)
      out.push_back(instr(Op::Mov, {sreg(entry(h), sp), special(half_reg(h), sp)}, sp));
    for (uint32_t h = 0; h < nh; ++h)
      out.push_back(instr(Op::Mov, {sreg(acc(h), sp), imm(0, "", sp)}, sp));
    for (uint32_t part = 0; part < parts_; ++part) {
      const std::string run = name + "_p" + std::to_string(part),
                        skip = name + "_s" + std::to_string(part);
      // The guard: exec = the entry lanes of this part; no lane jumps over the copy.
      for (uint32_t h = 0; h < nh; ++h) {
        const uint32_t m = half_mask(part_mask(part), h), full = half_mask(wave_mask(), h);
        if ((m & full) == 0) {
          out.push_back(instr(Op::Mov, {special(half_reg(h), sp), imm(0, "", sp)}, sp));
        } else if ((m & full) == full) {
          out.push_back(instr(Op::Mov, {special(half_reg(h), sp), sreg(entry(h), sp)}, sp));
        } else {
          char hex[16];
          std::snprintf(hex, sizeof hex, "0x%08X", m);
          out.push_back(instr(Op::And, {sreg(tmp, sp), sreg(entry(h), sp), imm(m, hex, sp)}, sp));
          out.push_back(instr(Op::Mov, {special(half_reg(h), sp), sreg(tmp, sp)}, sp));
        }
      }
      out.push_back(instr(Op::Cbr, {pt(sp), label_ref(run, sp)}, sp));
      out.push_back(instr(Op::Jmp, {label_ref(skip, sp)}, sp));
      out.push_back(label(run, sp));
      for (Stmt s : body) {  // the copy, its labels renamed
        if (s.kind == StmtKind::Label && g.inner.contains(s.label))
          s.label = copy_label(s.label, part);
        for (auto& o : s.operands)
          if (o.type == OperandType::Label && g.inner.contains(o.name))
            o.name = copy_label(o.name, part);
        out.push_back(std::move(s));
      }
      for (uint32_t h = 0; h < nh; ++h)
        out.push_back(
            instr(Op::Or, {sreg(acc(h), sp), sreg(acc(h), sp), special(half_reg(h), sp)}, sp));
      out.push_back(label(skip, sp));
    }
    for (uint32_t h = 0; h < nh; ++h)
      out.push_back(instr(Op::Mov, {special(half_reg(h), sp), sreg(acc(h), sp)}, sp));
    out.push_back(label(name + "_end", sp));
  }

  // wave.soft.loop, with sH = the first scalar above the program's, sL the next.
  void emit_software(const Group& g, const std::vector<Stmt>& body, std::vector<Stmt>& out) {
    const Span sp = p_.stmts[g.a].span;
    const std::string name = next_block_name();
    const uint32_t sh = cfg_.sregs, sl = cfg_.sregs + 1;
    const std::string top = name + "_top", next = name + "_next", fin = name + "_fin";
    const auto lo = isa::Special::ExecLo, hi = isa::Special::ExecHi;
    out.push_back(label(name, sp));
    out.push_back(instr(Op::Mov, {sreg(sh, sp), special(hi, sp)}, sp));
    out.push_back(instr(Op::Mov, {sreg(sl, sp), imm(0, "", sp)}, sp));
    out.push_back(instr(Op::Mov, {special(hi, sp), imm(0, "", sp)}, sp));
    out.push_back(instr(Op::Cbr, {pt(sp), label_ref(top, sp)}, sp));
    out.push_back(instr(Op::Jmp, {label_ref(next, sp)}, sp));
    out.push_back(label(top, sp));
    out.insert(out.end(), body.begin(), body.end());
    out.push_back(instr(Op::Or, {sreg(sl, sp), sreg(sl, sp), special(lo, sp)}, sp));
    out.push_back(instr(Op::Mov, {special(lo, sp), imm(0, "", sp)}, sp));
    out.push_back(instr(Op::Cbr, {pt(sp), label_ref(fin, sp)}, sp));
    out.push_back(label(next, sp));
    out.push_back(instr(Op::Mov, {special(hi, sp), sreg(sh, sp)}, sp));
    out.push_back(instr(Op::Mov, {sreg(sh, sp), imm(0, "", sp)}, sp));
    out.push_back(instr(Op::Cbr, {pt(sp), label_ref(top, sp)}, sp));
    out.push_back(label(fin, sp));
    out.push_back(instr(Op::Mov, {special(lo, sp), sreg(sl, sp)}, sp));
    out.push_back(label(name + "_end", sp));
  }

  Program transform() {
    Program out = p_;
    if (groups_.empty()) return out;
    out.stmts.clear();
    size_t i = 0;
    for (const auto& g : groups_) {
      for (; i < g.a; ++i) out.stmts.push_back(p_.stmts[i]);
      std::vector<Stmt> body;
      for (size_t j = g.a; j <= g.b; ++j) {
        if (g.outside.contains(j))
          out.stmts.push_back(p_.stmts[j]);
        else
          body.push_back(p_.stmts[j]);
      }
      const Span sp = p_.stmts[g.a].span;
      switch (strategy_) {
        case Strategy::Switch:
          out.stmts.push_back(instr(Op::SubvBegin, {}, sp));
          out.stmts.insert(out.stmts.end(), body.begin(), body.end());
          out.stmts.push_back(instr(Op::SubvEnd, {}, sp));
          break;
        case Strategy::Duplicate:
          emit_duplicate(g, body, out.stmts);
          break;
        case Strategy::Software:
          emit_software(g, body, out.stmts);
          break;
      }
      // The group ended the warp (its control never reached its end): so does the
      // block, whose own end is reached once the parts have run.
      if (!g.falls_through) out.stmts.push_back(instr(Op::Exit, {}, p_.stmts[g.b].span));
      i = g.b + 1;
    }
    for (; i < p_.stmts.size(); ++i) out.stmts.push_back(p_.stmts[i]);
    if (const uint32_t extra = scalars_needed(); extra > 0)
      out.launch.sregs.value = cfg_.sregs + extra;  // raised, or added
    return out;
  }

 public:
  void report_segments() {
    for (size_t k = 0; k < segs_.size(); ++k) {
      const Segment& s = segs_[k];
      r_.segments.push_back({static_cast<uint32_t>(k + 1), s.kind, p_.stmts[s.first].span.line,
                             p_.stmts[s.last].span.line, s.need, s.group});
    }
  }

 private:
  const Program& p_;
  const exec::LaunchConfig& cfg_;
  Strategy strategy_;
  ModeselResult& r_;
  uint32_t parts_ = 1;
  Program e_;
  std::vector<const Stmt*> ins_;
  uint32_t n_ = 0;
  std::vector<uint32_t> first_pc_, end_pc_;  // per statement: its PCs [first, end)
  std::vector<size_t> eidx_;                 // per statement: its first expanded statement
  std::vector<size_t> match_;                // per statement: the end of its block
  std::vector<bool> as_written_;  // per PC: an instruction as written (not from if or loop)
  std::unordered_map<std::string, uint32_t> label_pc_;
  std::set<std::string> labels_;  // the program's labels
  std::vector<Uses> uses_;
  std::vector<uint32_t> region_mate_;
  std::map<std::string, std::vector<uint32_t>> refs_;
  std::set<std::string> entry_refs_;
  flow::Stacks stacks_;  // the abstract mask stacks of the contexts
  std::vector<Ctx> ctxs_;
  std::unordered_map<uint32_t, size_t> fn_of_entry_;
  const Ctx* main_ = nullptr;
  std::vector<std::vector<uint32_t>> lsucc_;
  std::vector<Regs> in_, out_;
  std::vector<Regs> sin_;  // scalar registers live before each PC
  std::vector<bool> kill_;
  std::vector<uint32_t> need_;
  std::vector<uint32_t> stmt_need_;  // per statement, from normalized_needs()
  std::vector<Segment> segs_;
  std::vector<Group> groups_;
  uint32_t block_no_ = 1;
};

}  // namespace

ModeselResult modesel(const Program& p, const exec::LaunchConfig& cfg,
                      std::optional<uint32_t> threshold, Strategy s) {
  ModeselResult r;
  r.threshold = 0;
  Pass pass(p, cfg, s, r);
  pass.run(threshold);
  pass.report_segments();
  return r;
}

std::string explain(const ModeselResult& r) {
  std::string out = "; modesel: threshold " + std::to_string(r.threshold) + ", " +
                    std::to_string(r.segments.size()) + " segment" +
                    (r.segments.size() == 1 ? "" : "s") + "\n";
  for (const auto& s : r.segments) {
    out += "; segment " + std::to_string(s.index) + ": " + s.kind + ", lines " +
           std::to_string(s.first_line) + "-" + std::to_string(s.last_line) + ", need " +
           std::to_string(s.need) + ": ";
    out += s.group < 0 ? "kept" : s.group == 0 ? "normal" : "region " + std::to_string(s.group);
    out += "\n";
  }
  return out;
}

}  // namespace simt::passes
