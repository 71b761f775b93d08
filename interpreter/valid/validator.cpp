#include <algorithm>
#include <bitset>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "flow/flow.h"
#include "valid/valid.h"

namespace simt::valid {

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

namespace {

// preempt.valid.mode: the privileged instructions by direction (context.def).
constexpr isa::Op kCtxSaves[] = {
#define SIMT_CTX_FIELD(id, name, summary) isa::Op::CtxSave##id,
#include "isa/context.def"
#undef SIMT_CTX_FIELD
};
constexpr isa::Op kCtxLoads[] = {
#define SIMT_CTX_FIELD(id, name, summary) isa::Op::CtxLoad##id,
#include "isa/context.def"
#undef SIMT_CTX_FIELD
};
bool is_one_of(std::span<const isa::Op> ops, isa::Op op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

bool per_lane(const syntax::Value& v) {
  return v.file == RegFile::V || (v.file == RegFile::Special &&
                                  isa::special_info(static_cast<isa::Special>(v.index)).per_lane);
}

class Validator {
 public:
  Validator(const Program& p, const exec::LaunchConfig& c, syntax::Diagnostics& d)
      : p_(p), c_(c), d_(d) {}

  void run(bool flow) {
    buffers();
    labels();
    for (const auto& s : p_.stmts) {
      if (s.kind == StmtKind::Instr) {
        pcs_.push_back(&s);
        operands(s);
      } else if (s.kind != StmtKind::Label) {
        d_.add(DiagKind::Invalid, s.span, "structured statement left after expansion",
               "branch.struct.expand");
      }
    }
    regions();
    if (flow && ok_for_flow_) flow_analysis();
  }

 private:
  void err(Span s, std::string m, const char* clause) {
    d_.add(DiagKind::Invalid, s, std::move(m), clause);
    ok_for_flow_ = false;
  }

  // valid.buffer.unique
  void buffers() {
    auto& seen = buffer_names_;
    for (const auto& b : p_.buffers) {
      if (b.name == "slm")
        err(b.span, "'slm' is reserved for shared local memory", "valid.buffer.unique");
      auto [it, fresh] = seen.emplace(b.name, &b);
      if (!fresh)
        err(b.span,
            "buffer '" + b.name + "' is already declared on line " +
                std::to_string(it->second->span.line),
            "valid.buffer.unique");
    }
  }

  // valid.label.unique; label -> PC
  void labels() {
    uint32_t pc = 0;
    for (const auto& s : p_.stmts) {
      if (s.kind == StmtKind::Label) {
        auto [it, fresh] = label_pc_.emplace(s.label, pc);
        if (!fresh) err(s.span, "label '" + s.label + "' is defined twice", "valid.label.unique");
      } else if (s.kind == StmtKind::Instr) {
        ++pc;
      }
    }
    size_ = pc;
    // trap.install: the handler entry is a label of the program (valid.label.defined).
    if (p_.handler.value && !label_pc_.contains(*p_.handler.value))
      err(p_.handler.span, "undefined label '" + *p_.handler.value + "'", "valid.label.defined");
    for (const auto& e : p_.handler_entries)
      if (!label_pc_.contains(*e.value))
        err(e.span, "undefined label '" + *e.value + "'", "valid.label.defined");
    // preempt.valid.entries: the system routine's entries are labels of the
    // program, and a program has both or neither.
    for (const auto* e : {&p_.sys_save, &p_.sys_restore})
      if (e->value && !label_pc_.contains(*e->value))
        err(e->span, "undefined label '" + *e->value + "'", "valid.label.defined");
    if (p_.sys_save.value.has_value() != p_.sys_restore.value.has_value()) {
      const auto& given = p_.sys_save.value ? p_.sys_save : p_.sys_restore;
      err(given.span,
          std::string("a system routine needs both entries: .sys_save and .sys_restore (") +
              (p_.sys_save.value ? ".sys_restore" : ".sys_save") + " is missing)",
          "preempt.valid.entries");
    }
    // trap.vector: table names are unique, entries are labels of the program.
    std::unordered_map<std::string, uint32_t> tables;
    for (const auto& t : p_.vtables) {
      auto [it, fresh] = tables.emplace(t.name, t.span.line);
      if (!fresh)
        err(t.span,
            "vector table '" + t.name + "' is already declared on line " +
                std::to_string(it->second),
            "trap.vector");
      for (const auto& l : t.labels)
        if (!label_pc_.contains(l))
          err(t.span, "undefined label '" + l + "'", "valid.label.defined");
    }
  }

  // `read`: the operand is read, not written. An out-of-range register read is
  // kept until the flow analysis knows whether it is handler code (trap.valid.regs).
  void value_range(const Operand& o, const syntax::Value& v, bool read) {
    auto out_of_range = [&](std::string msg) {
      if (read && v.index < 256)  // 256: the most registers a program may declare
        late_reads_.push_back({static_cast<uint32_t>(pcs_.size() - 1), o.span, std::move(msg)});
      else
        err(o.span, std::move(msg), "valid.reg.range");
    };
    if (v.file == RegFile::V && v.index >= c_.vregs)
      out_of_range("v" + std::to_string(v.index) + " is out of range: the program has " +
                   std::to_string(c_.vregs) + " vector registers (.vregs)");
    if (v.file == RegFile::S && v.index >= c_.sregs)
      out_of_range("s" + std::to_string(v.index) + " is out of range: the program has " +
                   std::to_string(c_.sregs) + " scalar registers (.sregs)");
    if (v.file == RegFile::P && v.index >= isa::kNumPreds)
      err(o.span,
          "p" + std::to_string(v.index) + " is out of range: predicates are p0 to p" +
              std::to_string(isa::kNumPreds - 1),
          "valid.reg.range");
  }

  // valid.reg.range, valid.form.*, valid.mem.space, valid.label.defined
  void operands(const Stmt& s) {
    const auto& info = isa::info(s.op);
    auto kinds = info.sig.view();
    if (s.operands.size() != kinds.size()) {
      err(s.span,
          "'" + std::string(info.mnemonic) + "' needs " + std::to_string(kinds.size()) +
              " operands",
          "syntax.instr");
      return;
    }
    bool scalar_form = false;
    bool special_dst = false;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const Operand& o = s.operands[i];
      const bool read = kinds[i] != OperandKind::Dst && kinds[i] != OperandKind::VDst &&
                        kinds[i] != OperandKind::SDst && kinds[i] != OperandKind::PDst;
      value_range(o, o.value, read);
      switch (kinds[i]) {
        case OperandKind::Dst:
          scalar_form = o.value.file == RegFile::S;
          if (o.value.file == RegFile::Special) {
            special_dst = true;
            scalar_form = true;
            const auto& si = isa::special_info(static_cast<isa::Special>(o.value.index));
            if (!si.writable)
              err(o.span, "%" + std::string(si.name) + " is read-only", "valid.form.dest");
            else if (s.op != Op::Mov)
              err(o.span, "only 'mov' may write %" + std::string(si.name), "valid.form.dest");
          }
          break;
        case OperandKind::PDst:
          if (o.value.file == RegFile::PTrue)
            err(o.span, "pt is always true and cannot be written", "valid.form.dest");
          break;
        case OperandKind::Mem:
          if (o.name != "slm" && !has_buffer(o.name))
            err(o.span, "no buffer named '" + o.name + "' (declare it with .buffer)",
                "valid.mem.space");
          if (o.name == "slm" && c_.slm == 0)
            err(o.span, "the program uses slm but declares no shared local memory (.slm)",
                "valid.mem.space");
          break;
        case OperandKind::Label:
          if (!label_pc_.count(o.name))
            err(o.span, "undefined label '" + o.name + "'", "valid.label.defined");
          break;
        default:
          break;
      }
    }
    (void)special_dst;
    // The trap instructions act once per warp: their operands are uniform (the
    // instruction's clause says so: trap.sys, trap.frame.access, trap.vector).
    if (info.feature == isa::Feature::trap)
      for (const Operand& o : s.operands)
        if (o.type == OperandType::Value && per_lane(o.value))
          err(o.span,
              "'" + std::string(info.mnemonic) + "' acts once per warp: its operands must be " +
                  "uniform, not per-lane",
              std::string(info.clause).c_str());
    if (scalar_form) {
      for (size_t i = 1; i < kinds.size(); ++i) {
        const Operand& o = s.operands[i];
        if ((o.type == OperandType::Value || o.type == OperandType::Mem) && per_lane(o.value))
          err(o.span,
              "a scalar destination needs uniform sources; '" +
                  std::string(o.value.file == RegFile::V ? "v" + std::to_string(o.value.index)
                                                         : "%lane") +
                  "' is per-lane",
              "valid.form.uniform");
      }
    }
  }

  // ---- wave.valid.*: sub-vector regions (always checked: the executor relies on
  // them) ---------------------------------------------------------------------
  void regions() {
    if (p_.vshared.value && *p_.vshared.value > c_.vregs)
      err(p_.vshared.span,
          ".vshared " + std::to_string(*p_.vshared.value) +
              " is past the vector registers: the program has " + std::to_string(c_.vregs) +
              " (.vregs)",
          "wave.valid.shared.base");
    // wave.valid.pair, wave.valid.nest: regions are [begin, end] PC ranges.
    std::vector<isa::Op> code;
    code.reserve(size_);
    for (const Stmt* s : pcs_) code.push_back(s->op);
    const flow::Regions paired = flow::pair_regions(code);
    for (const auto& e : paired.errors) {
      const Span at = pcs_[e.pc]->span;
      switch (e.kind) {
        case flow::RegionError::Kind::Nested:
          err(at,
              "sub-vector regions do not nest: the region opened on line " +
                  std::to_string(pcs_[e.open]->span.line) + " is still open",
              "wave.valid.nest");
          break;
        case flow::RegionError::Kind::Unopened:
          err(at, "subv.end with no sub-vector region open", "wave.valid.pair");
          break;
        case flow::RegionError::Kind::Unclosed:
          err(at, "subv.begin with no subv.end after it", "wave.valid.pair");
          break;
      }
    }
    std::vector<std::pair<uint32_t, uint32_t>>& regs = regions_;
    for (const auto& r : paired.list) regs.emplace_back(r.begin, r.end);
    if (regs.empty()) return;
    // Which region each PC's instruction is inside (after its subv.begin, up to
    // and including its subv.end), or -1.
    std::vector<int> in(size_, -1);
    for (size_t r = 0; r < regs.size(); ++r)
      for (uint32_t pc = regs[r].first + 1; pc <= regs[r].second; ++pc)
        in[pc] = static_cast<int>(r);
    auto region_at = [&](const std::string& label) {
      auto it = label_pc_.find(label);
      return it == label_pc_.end() || it->second >= size_ ? -1 : in[it->second];
    };
    for (uint32_t pc = 0; pc < size_; ++pc) {
      const Stmt& s = *pcs_[pc];
      const auto& info = isa::info(s.op);
      const std::string mn(info.mnemonic);
      const int r = in[pc];
      if (r >= 0 && info.feature == isa::Feature::bar)
        err(s.span, "bar inside a sub-vector region: the parts would arrive one by one",
            "wave.valid.bar");
      else if (r >= 0 && info.family == isa::Family::AtomWarp)
        err(s.span,
            mn + " inside a sub-vector region: a warp-wide atomic acts once per wave, which "
                 "a part cannot do",
            "wave.valid.watom");
      // The label a jmp, cbr or call names (valid.label.defined has checked it).
      const std::string* label = !s.operands.empty() && s.operands.back().type == OperandType::Label
                                     ? &s.operands.back().name
                                     : nullptr;
      switch (info.control) {
        case isa::Control::Call:
          if (r >= 0)
            err(s.span, mn + " inside a sub-vector region: control would leave the region",
                "wave.valid.branch");
          else if (label && region_at(*label) >= 0)
            err(s.span, "call to '" + *label + "', inside a sub-vector region",
                "wave.valid.branch");
          break;
        case isa::Control::VectorCall:
        case isa::Control::Return:
          if (r >= 0)
            err(s.span, mn + " inside a sub-vector region: control would leave the region",
                "wave.valid.branch");
          break;
        case isa::Control::Jump:
        case isa::Control::Branch:
          if (label) {
            const int t = region_at(*label);
            if (t != r && r >= 0)
              err(s.span, mn + " to '" + *label + "' leaves the sub-vector region",
                  "wave.valid.branch");
            else if (t != r)
              err(s.span,
                  mn + " to '" + *label +
                      "' enters a sub-vector region other than at its subv.begin",
                  "wave.valid.branch");
          }
          break;
        case isa::Control::Next:
        case isa::Control::Stop:
        case isa::Control::Exit:
        case isa::Control::Push:
        case isa::Control::Invert:
        case isa::Control::Pop:
        case isa::Control::LoopPush:
        case isa::Control::LoopControl:
        case isa::Control::LoopNext:
        case isa::Control::RegionBegin:
        case isa::Control::RegionEnd:
          break;
      }
    }
    // Handler entries and vector-table entries are entered from outside.
    std::vector<std::pair<std::string, Span>> entries;
    if (p_.handler.value) entries.emplace_back(*p_.handler.value, p_.handler.span);
    for (const auto& e : p_.handler_entries) entries.emplace_back(*e.value, e.span);
    for (const auto* e : {&p_.sys_save, &p_.sys_restore})
      if (e->value) entries.emplace_back(*e->value, e->span);
    for (const auto& t : p_.vtables)
      for (const auto& l : t.labels) entries.emplace_back(l, t.span);
    for (const auto& [label, span] : entries)
      if (region_at(label) >= 0)
        err(span,
            "'" + label + "' is inside a sub-vector region: it cannot be entered from outside",
            "wave.valid.branch");
  }

  bool has_buffer(const std::string& n) const { return buffer_names_.contains(n); }

  // The kinds of code an instruction is (trap.terms, preempt.valid.mode), as bits.
  // System code is what the save entry reaches (kSave) and what the restore entry
  // reaches (kRestore).
  enum : uint8_t { kUser = 1, kHandler = 2, kSave = 4, kRestore = 8, kSystem = kSave | kRestore };

  // ---- valid.flow.*: abstract interpretation of the mask stack -------------------
  // The abstract state is the sequence of mask-stack entry kinds pushed since the
  // entry of the current context (valid.flow.*, wave.valid.balance): flow::Stacks.
  using AState = flow::Stack;

  void flow_analysis() {
    if (size_ == 0) {
      err(Span{1, 1, 0}, "the program has no instructions", "valid.flow.end");
      return;
    }
    // The program entry is analysed as the main context, the handler entry (if
    // any, trap.install) as the handler's; every call target, PC 0 included, once
    // more as a called context (valid.flow.calls).
    std::vector<uint32_t> entries{0};
    std::vector<flow::Context> kinds{flow::Context::Main};
    std::vector<bool> is_root(size_, false);
    is_root[0] = true;
    // trap.install: `.handler` and every `.handler_entry` are handler contexts.
    std::vector<const syntax::Directive<std::string>*> handlers;
    if (p_.handler.value) handlers.push_back(&p_.handler);
    for (const auto& e : p_.handler_entries) handlers.push_back(&e);
    // trap.terms: a handler entry at PC 0 makes the program's entry handler code
    // too; likewise a system entry there (preempt.valid.mode).
    std::vector<uint8_t> root_modes{kUser};
    auto add_root = [&](const syntax::Directive<std::string>& d, flow::Context kind, uint8_t mode,
                        const char* what, const char* clause) {
      auto it = label_pc_.find(*d.value);
      if (it == label_pc_.end()) return;  // valid.label.defined reports it
      if (it->second >= size_) {
        // trap.valid.mode, preempt.valid.entries: like a call to the end (valid.flow.calls).
        err(d.span,
            std::string(what) + " '" + *d.value + "' is the end of the program: the " +
                (mode == kHandler ? "handler" : "system routine") +
                " would run past the last instruction",
            clause);
      } else if (!is_root[it->second]) {
        is_root[it->second] = true;
        entries.push_back(it->second);
        kinds.push_back(kind);
        root_modes.push_back(mode);
      } else {
        for (size_t i = 0; i < entries.size(); ++i)
          if (entries[i] == it->second) root_modes[i] |= mode;
      }
    };
    for (const auto* h : handlers)
      add_root(*h, flow::Context::Handler, kHandler, "handler entry", "trap.valid.mode");
    for (const auto& [e, mode] :
         {std::pair{&p_.sys_save, kSave}, std::pair{&p_.sys_restore, kRestore}})
      if (e->value)
        add_root(*e, flow::Context::System, mode, "system routine entry", "preempt.valid.entries");
    const size_t roots = entries.size();
    // trap.vector: the targets of every vcall, the entries of every table in order.
    for (const auto& t : p_.vtables)
      for (const auto& l : t.labels) {
        vcall_targets_.emplace_back(&l, label_pc_.at(l));
        if (!vcall_end_ && vcall_targets_.back().second >= size_) vcall_end_ = &l;
      }
    at_.assign(size_, flow::kEmpty);
    seen_.assign(size_, 0);
    reported_.assign(size_, 0);
    std::vector<bool> is_called(size_, false);
    std::vector<Context> ctxs;
    for (size_t i = 0; i < entries.size(); ++i) {
      ctxs.emplace_back();
      analyse(static_cast<uint32_t>(i + 1), entries[i],
              i < roots ? kinds[i] : flow::Context::Function, entries, is_called, ctxs.back());
    }
    modes(entries, root_modes, ctxs);
    shared_reads();
  }

  // wave.valid.shared: inside a region a shared register is written before it is
  // read on every path from the region's start. A forward must-analysis over the
  // region's instructions (control stays inside a region, wave.valid.branch):
  // the set of shared registers written on every path so far. Only a write made
  // with no mask-stack entry of the region open counts: inside an `if` or a loop
  // some lanes of the part may not write.
  void shared_reads() {
    if (!p_.vshared.value || *p_.vshared.value >= c_.vregs) return;
    const uint32_t base = *p_.vshared.value;
    using Set = std::bitset<256>;
    for (const auto& region : regions_) {
      // Plain variables: clang (the fuzz build) does not let the lambda below
      // capture structured bindings.
      const uint32_t begin = region.first, end = region.second;
      std::vector<std::optional<Set>> at(size_t{end} - begin + 1);  // index pc - begin
      std::vector<int> depth(at.size(), 0);  // entries opened in the region (valid.flow.join)
      std::deque<uint32_t> work;
      at[1] = Set();
      work.push_back(begin + 1);
      std::vector<bool> reported(at.size(), false);
      while (!work.empty()) {
        const uint32_t pc = work.front();
        work.pop_front();
        Set set = *at[pc - begin];
        int d = depth[pc - begin];
        const Stmt& s = *pcs_[pc];
        const auto kinds = isa::info(s.op).sig.view();
        for (size_t i = 0; i < kinds.size() && i < s.operands.size(); ++i) {
          const Operand& o = s.operands[i];
          const bool write = kinds[i] == OperandKind::Dst || kinds[i] == OperandKind::VDst ||
                             kinds[i] == OperandKind::SDst || kinds[i] == OperandKind::PDst;
          if (o.value.file != RegFile::V || o.value.index < base || o.value.index >= c_.vregs)
            continue;
          if (!write && !set.test(o.value.index) && !reported[pc - begin]) {
            reported[pc - begin] = true;
            err(o.span,
                "v" + std::to_string(o.value.index) + " is shared (.vshared " +
                    std::to_string(base) +
                    ") and read before this region writes it: in a part's pass it would hold "
                    "another part's value",
                "wave.valid.shared");
          }
        }
        for (size_t i = 0; d == 0 && i < kinds.size() && i < s.operands.size(); ++i)
          if ((kinds[i] == OperandKind::Dst || kinds[i] == OperandKind::VDst) &&
              s.operands[i].value.file == RegFile::V)
            set.set(s.operands[i].value.index);
        const isa::Control k = isa::info(s.op).control;
        d += flow::depth_change(k);
        if (pc == end) continue;
        auto go = [&](uint32_t to) {
          if (to <= begin || to > end) return;  // wave.valid.branch reports it
          std::optional<Set>& dst = at[to - begin];
          if (!dst) {
            dst = set;
            depth[to - begin] = d;
            work.push_back(to);
          } else if ((*dst & set) != *dst) {
            *dst &= set;
            work.push_back(to);
          }
        };
        const flow::Edges e = flow::straight(k);
        if (e.next) go(pc + 1);
        if (e.target) go(target(s, s.operands.size() - 1));
      }
    }
  }

  // What the analysis of one context found.
  struct Context {
    std::vector<uint32_t> reached;  // the PCs it reaches
    std::vector<uint32_t> callees;  // the targets of its calls
    bool vcalls = false;            // it reaches a vcall (trap.vector)
  };

  // trap.terms, trap.valid.disjoint, trap.valid.mode: user code is what PC 0
  // reaches, with the functions it calls; handler code what a handler entry
  // reaches, likewise; unreached code (mode 0) is neither. The modes flow along
  // the call graph from the roots with a work list (each context's mode changes at
  // most twice); every vcall calls every vector-table entry, through one node
  // standing for them all.
  void modes(const std::vector<uint32_t>& entries, const std::vector<uint8_t>& root_modes,
             const std::vector<Context>& ctxs) {
    const size_t roots = root_modes.size();
    const size_t vnode = entries.size();  // the vector-table entries
    std::vector<uint8_t> ctx_mode(entries.size() + 1, 0);
    std::unordered_map<uint32_t, size_t> ctx_of_entry;  // called contexts by entry PC
    for (size_t i = roots; i < entries.size(); ++i) ctx_of_entry[entries[i]] = i;
    std::deque<size_t> work;
    auto reach = [&](size_t to, uint8_t mode) {
      uint8_t& m = ctx_mode[to];
      if ((m | mode) != m) m |= mode, work.push_back(to);
    };
    for (size_t i = 0; i < roots; ++i) reach(i, root_modes[i]);
    while (!work.empty()) {
      const size_t i = work.front();
      work.pop_front();
      const uint8_t mode = ctx_mode[i];
      if (i == vnode) {
        for (const auto& t : vcall_targets_)
          if (t.second < size_) reach(ctx_of_entry.at(t.second), mode);
        continue;
      }
      for (uint32_t t : ctxs[i].callees) reach(ctx_of_entry.at(t), mode);
      if (ctxs[i].vcalls) reach(vnode, mode);
    }
    std::vector<uint8_t> pc_mode(size_, 0);
    for (size_t i = 0; i < entries.size(); ++i)
      for (uint32_t pc : ctxs[i].reached) pc_mode[pc] |= ctx_mode[i];
    // trap.valid.regs, trap.regs: reads past .vregs/.sregs in handler code only.
    for (const auto& r : late_reads_)
      if (pc_mode[r.pc] != kHandler)
        err(r.span, r.message + "; only handler code may read past them (trap.valid.regs)",
            "valid.reg.range");
    for (uint32_t pc = 0; pc < size_; ++pc) {
      const Stmt& s = *pcs_[pc];
      const std::string mn(isa::info(s.op).mnemonic);
      if (pc_mode[pc] == (kUser | kHandler)) {
        err(s.span, "this instruction is both user code and handler code", "trap.valid.disjoint");
        continue;
      }
      // preempt.valid.mode: system code is system code only, and holds only system
      // instructions and nop.
      if ((pc_mode[pc] & kSystem) && (pc_mode[pc] & ~kSystem)) {
        err(s.span,
            std::string("this instruction is both system code and ") +
                (pc_mode[pc] & kUser ? "user" : "handler") + " code",
            "preempt.valid.mode");
        continue;
      }
      if ((pc_mode[pc] & kSystem) && isa::info(s.op).mode != isa::Mode::System &&
          s.op != isa::Op::Nop) {
        err(s.span,
            mn + " in system code: the system routine runs only ctx.save.*, ctx.load.*, "
                 "sysret and nop",
            "preempt.valid.mode");
        continue;
      }
      // preempt.valid.mode: a save loads no field and a restore saves none.
      if ((pc_mode[pc] & kSave) && is_one_of(kCtxLoads, s.op)) {
        err(s.span, mn + " in the save routine: it only saves fields", "preempt.valid.mode");
        continue;
      }
      if ((pc_mode[pc] & kRestore) && is_one_of(kCtxSaves, s.op)) {
        err(s.span, mn + " in the restore routine: it only loads fields", "preempt.valid.mode");
        continue;
      }
      switch (isa::info(s.op).mode) {
        case isa::Mode::Any:
          break;
        case isa::Mode::Handler:
          if (pc_mode[pc] == kUser) err(s.span, mn + " outside handler code", "trap.valid.mode");
          break;
        case isa::Mode::User:
          if (pc_mode[pc] == kHandler) err(s.span, mn + " in handler code", "trap.valid.mode");
          break;
        case isa::Mode::Switch:
          if (pc_mode[pc] == kHandler)
            err(s.span, mn + " in handler code: handler code runs in normal mode",
                "wave.valid.handler");
          break;
        case isa::Mode::System:
          if (pc_mode[pc] & (kUser | kHandler))
            err(s.span, mn + " outside system code", "preempt.valid.mode");
          break;
      }
    }
  }

  uint32_t target(const Stmt& s, size_t opnd) const {
    return label_pc_.at(s.operands.at(opnd).name);
  }

  // Explores one context (valid.flow.order). `id` (from 1) marks the PCs this
  // context has reached and reported in seen_ and reported_, so that these arrays
  // serve every context without being cleared.
  void analyse(uint32_t id, uint32_t entry, flow::Context ctx, std::vector<uint32_t>& entries,
               std::vector<bool>& is_called, Context& out) {
    const bool main = ctx != flow::Context::Function;
    std::deque<uint32_t> work;
    at_[entry] = flow::kEmpty;
    seen_[entry] = id;
    work.push_back(entry);
    auto report = [&](uint32_t pc, std::string msg, const char* clause) {
      if (reported_[pc] == id) return;
      reported_[pc] = id;
      err(pcs_[pc]->span, std::move(msg), clause);
    };
    auto note_call = [&](uint32_t t) {
      if (!is_called[t]) {
        is_called[t] = true;
        entries.push_back(t);
      }
    };
    auto flow_to = [&](uint32_t from, uint32_t to, AState st) {
      if (to >= size_) {
        report(from,
               main ? "control can run past the end of the program (end it with exit, jmp or ret)"
                    : "control can run past the end of the program inside the function",
               "valid.flow.end");
        return;
      }
      if (seen_[to] != id) {
        seen_[to] = id;
        at_[to] = st;
        work.push_back(to);
      } else if (at_[to] != st) {
        report(to,
               "the mask stack differs where paths join: one path arrives with " +
                   stacks_.describe(at_[to]) + ", another with " + stacks_.describe(st),
               "valid.flow.join");
      }
    };
    const char* where = main ? "" : " in this function";
    const flow::Stacks& S = stacks_;
    while (!work.empty()) {
      uint32_t pc = work.front();
      work.pop_front();
      out.reached.push_back(pc);
      const AState st = at_[pc];
      const Stmt& s = *pcs_[pc];
      const auto& info = isa::info(s.op);
      const std::string mn(info.mnemonic);
      // wave.valid.balance: entries below a region's start are out of reach inside it.
      const uint32_t floor = S.floor(st);
      const flow::Step step = stacks_.step(st, info.control);
      switch (step.fault) {
        case flow::Fault::None:
          break;
        case flow::Fault::RegionOpen: {
          const uint32_t open = S.size(st) - floor;
          report(pc,
                 "the mask stack is not balanced across the sub-vector region: " +
                     std::to_string(open) + " entr" + (open == 1 ? "y" : "ies") +
                     " pushed in it still open",
                 "wave.valid.balance");
          break;
        }
        case flow::Fault::AtFloor:
          report(pc,
                 mn + " inside a sub-vector region with no " +
                     (info.control == isa::Control::LoopNext ? "loop" : "push") +
                     " of the region open",
                 "wave.valid.balance");
          break;
        case flow::Fault::NoEntry:
          report(pc, mn + " with no push open" + where, "valid.flow.pop");
          break;
        case flow::Fault::LoopOnTop:
          report(pc, mn + " inside a loop but outside any push of that loop", "valid.flow.pop");
          break;
        case flow::Fault::NoLoop:
          report(pc,
                 mn + (floor > 0 ? " with no loop opened inside the sub-vector region"
                                 : " outside of any loop" + std::string(where)),
                 floor > 0 ? "wave.valid.balance" : "valid.flow.pop");
          break;
        case flow::Fault::NoLoopOnTop:
          report(pc, mn + " with a push still open, or outside a loop", "valid.flow.pop");
          break;
      }
      if (step.fault != flow::Fault::None) continue;  // the path goes no further
      switch (info.control) {
        case isa::Control::Call: {
          const uint32_t t = target(s, s.operands.size() - 1);
          if (t >= size_) {
            report(pc,
                   "call to '" + s.operands.back().name +
                       "', the end of the program: the called code runs past the last "
                       "instruction",
                   "valid.flow.calls");
          } else {
            out.callees.push_back(t);
            note_call(t);
          }
          break;
        }
        case isa::Control::VectorCall:
          // trap.vector: vcall may call any entry of any vector table. The first
          // vcall reached notes them all as called contexts.
          if (vcall_end_)
            report(pc,
                   "call to '" + *vcall_end_ +
                       "', the end of the program: the called code runs past the last "
                       "instruction",
                   "valid.flow.calls");
          if (!vtables_noted_)
            for (const auto& t : vcall_targets_)
              if (t.second < size_) note_call(t.second);
          vtables_noted_ = true;
          out.vcalls = true;
          break;
        case isa::Control::Return:
          if (main)
            report(pc, "ret outside a called function: the PC stack would underflow",
                   "valid.flow.ret");
          else if (!S.empty(st))
            report(pc,
                   "ret with " + std::to_string(S.size(st)) + " mask-stack entr" +
                       (S.size(st) == 1 ? "y" : "ies") + " still open in the function",
                   "valid.flow.ret");
          break;
        case isa::Control::Next:
        case isa::Control::Jump:
        case isa::Control::Branch:
        case isa::Control::Stop:  // trap.return, trap.pause: the warp leaves the handler
        case isa::Control::Exit:  // in handler code, reported by modes(): trap.valid.mode
        case isa::Control::Push:
        case isa::Control::Invert:
        case isa::Control::Pop:
        case isa::Control::LoopPush:
        case isa::Control::LoopControl:
        case isa::Control::LoopNext:
        case isa::Control::RegionBegin:
        case isa::Control::RegionEnd:
          break;
      }
      // With no mask-stack entry open in the kernel's own code, every live lane is
      // active and exit ends the warp; otherwise the lanes that did not exit carry
      // on and exit falls through (branch.exit).
      const flow::Edges e = flow::in_context(info.control, flow::exit_ends(ctx, S.empty(st)));
      if (e.next) flow_to(pc, pc + 1, step.after);
      if (e.target) flow_to(pc, target(s, s.operands.size() - 1), step.after);
    }
  }

  const Program& p_;
  const exec::LaunchConfig& c_;
  syntax::Diagnostics& d_;
  std::unordered_map<std::string, uint32_t> label_pc_;
  std::unordered_map<std::string, const syntax::BufferDecl*> buffer_names_;
  std::vector<const Stmt*> pcs_;
  uint32_t size_ = 0;
  bool ok_for_flow_ = true;
  struct LateRead {
    uint32_t pc;
    Span span;
    std::string message;
  };
  std::vector<LateRead> late_reads_;  // trap.valid.regs
  // valid.flow.*: the abstract stacks, and per PC the stack the context `seen_[pc]`
  // (from 1) first brought there; `reported_[pc]`: the context that reported it.
  flow::Stacks stacks_;
  std::vector<AState> at_;
  std::vector<uint32_t> seen_, reported_;
  // trap.vector: every vector-table entry (label, PC), in order; the first that is
  // the end of the program, if any; whether a vcall has noted them as called.
  std::vector<std::pair<const std::string*, uint32_t>> vcall_targets_;
  const std::string* vcall_end_ = nullptr;
  bool vtables_noted_ = false;
  std::vector<std::pair<uint32_t, uint32_t>> regions_;  // wave.valid.pair: [subv.begin, subv.end]
};

}  // namespace

void validate(const Program& expanded, const exec::LaunchConfig& cfg, syntax::Diagnostics& d,
              Options opt) {
  Validator v(expanded, cfg, d);
  v.run(opt.flow);
}

}  // namespace simt::valid
