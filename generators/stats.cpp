#include "stats.h"

#include "exec/outcome.h"
#include "host/host.h"
#include "isa/isa.h"

namespace simt::gen {

namespace {

using syntax::OperandType;
using syntax::RegFile;

// How the text writes an immediate (syntax.lex.number, syntax.operand.imm).
std::string notation_of(const std::string& t) {
  std::string s = t;
  bool negative = false;
  if (!s.empty() && s[0] == '-') {
    negative = true;
    s = s.substr(1);
    while (!s.empty() && s[0] == ' ') s = s.substr(1);
  }
  std::string form = "decimal";
  if (s.rfind("0x", 0) == 0)
    form = "hex";
  else if (s.rfind("0b", 0) == 0)
    form = "binary";
  else if (s.size() > 1 && s[0] == '0')
    form = "leading-zeros";
  return negative ? "negative-" + form : form;
}

void count_operands(const syntax::Program& ast, std::map<std::string, uint64_t>& counts) {
  for (const auto& s : ast.stmts) {
    if (s.kind != syntax::StmtKind::Instr) continue;
    const auto kinds = isa::info(s.op).sig.view();
    for (size_t i = 0; i < s.operands.size() && i < kinds.size(); ++i) {
      const auto& o = s.operands[i];
      const auto k = kinds[i];
      if (k == isa::OperandKind::Dst) {
        const char* form = o.value.file == RegFile::V   ? "dst-vector-form"
                           : o.value.file == RegFile::S ? "dst-scalar-form"
                                                        : "dst-special";
        ++counts[std::string("operand:") + form];
      }
      switch (o.type) {
        case OperandType::Value:
          if (o.value.file == RegFile::Imm)
            ++counts["operand:imm-" + notation_of(o.spelling)];
          else if (o.value.file == RegFile::Special)
            ++counts["operand:special-%" +
                     std::string(isa::special_info(static_cast<isa::Special>(o.value.index)).name)];
          else if (k == isa::OperandKind::Lane)
            ++counts["operand:lane-register"];
          break;
        case OperandType::Pred:
          ++counts[std::string("operand:pred-") + (o.negate ? "negated-" : "") +
                   (o.value.file == RegFile::PTrue ? "pt" : "p")];
          break;
        case OperandType::Mem: {
          const char* base = o.value.file == RegFile::None ? "absolute"
                             : o.value.file == RegFile::V  ? "vector-base"
                             : o.value.file == RegFile::S  ? "scalar-base"
                                                           : "special-base";
          ++counts[std::string("operand:mem-") + base];
          if (o.offset < 0 || (!o.spelling.empty() && o.spelling[0] == '-'))
            ++counts["operand:mem-negative-offset"];
          else if (o.offset > 0)
            ++counts["operand:mem-positive-offset"];
          ++counts[std::string("operand:mem-") + (o.name == "slm" ? "slm" : "buffer")];
          break;
        }
        case OperandType::Label:
          break;
      }
    }
  }
}

}  // namespace

void count_constructs(const Program& p, const Check& check,
                      std::map<std::string, uint64_t>& counts) {
  for (const auto& [k, n] : kind_counts(p)) counts["kind:" + std::string(kind_name(k))] += n;
  if (p.warps * p.workgroups > 1) ++counts["launch:several-warps"];
  if (p.workgroups > 1) ++counts["launch:several-workgroups"];
  if (p.cores > 1) ++counts["launch:several-cores"];
  if (p.simd) ++counts["launch:simd-below-wave"];
  if (p.vshared) ++counts["launch:vshared"];  // wave.shared
  if (p.mask_depth) ++counts["launch:mask_depth-set"];
  if (p.call_depth) ++counts["launch:call_depth-set"];
  ++counts["launch:wave-" + std::to_string(p.wave)];
  ++counts["launch:policy-" + p.policy];
  if (p.handler != Program::Handler::None) ++counts["launch:handler-" + handler_label(p)];
  if (p.stack) ++counts["launch:stack-set"];
  if (!p.host.empty()) ++counts["launch:host-script"];
  if (p.host_program) ++counts["launch:host-program"];  // oracle.model.hostprog
  if (!p.vtables.empty() && !p.functions.empty()) ++counts["launch:vtable"];
  // trap.host: the actions of the script the check ran with (an oracle may make
  // its own, Check::host), by kind; single_step by its flag.
  for (const auto& h : check.host.empty() ? p.host : check.host) {
    ++counts["host:" + std::string(syntax::host_kind_name(h.kind))];
    if (h.kind == syntax::HostKind::SingleStep)
      ++counts[h.on ? "host:single_step-on" : "host:single_step-off"];
  }
  auto r = host::load(print(p));
  if (r.loaded) {
    for (const auto& in : r.loaded->program->insns)
      ++counts["instr:" + std::string(isa::info(in.op).mnemonic)];
    // The expansion keeps every instruction as written and carries the
    // predicates of structured statements into their primitives.
    count_operands(r.loaded->expanded, counts);
  }
  if (check.expected) {
    ++counts["status:" + check.expected->status];
    if (check.expected->event) ++counts["event:" + check.expected->event->name];
  }
}

std::vector<std::string> instruction_keys() {
  std::vector<std::string> out;
  for (const auto& i : isa::table()) out.push_back("instr:" + std::string(i.mnemonic));
  return out;
}

std::vector<std::string> kind_keys() {
  std::vector<std::string> out;
  for (size_t k = 0; k < static_cast<size_t>(Kind::kCount); ++k)
    out.push_back("kind:" + std::string(kind_name(static_cast<Kind>(k))));
  return out;
}

std::vector<std::string> host_action_keys() {
  std::vector<std::string> out;
  // HostKind's values run from Interrupt (0) to Resume (trap.host.*).
  for (uint8_t k = 0; k <= static_cast<uint8_t>(syntax::HostKind::Resume); ++k)
    out.push_back("host:" + std::string(syntax::host_kind_name(static_cast<syntax::HostKind>(k))));
  return out;
}

std::vector<std::string> status_keys() {
  std::vector<std::string> out;
  for (exec::Status s : exec::kAllStatuses)
    out.push_back("status:" + std::string(exec::status_name(s)));
  return out;
}

std::vector<std::string> event_keys() {
  std::vector<std::string> out;
  for (isa::Event e : isa::all_events()) out.push_back("event:" + std::string(isa::event_name(e)));
  return out;
}

const std::map<std::string, std::string>& unreachable_keys() {
  // valid.flow.pop: the flow rules reject every program in which `invert`, `pop`,
  // `lnext`, `brk` or `cont` can find an empty or wrong mask stack, and the
  // generators make only valid programs (the validator invariant's mutants are
  // rejected, never run).
  static const std::map<std::string, std::string> keys = {
      {"event:mask_underflow", "only programs the validator rejects raise it (valid.flow.pop)"},
      {"event:mask_mismatch", "only programs the validator rejects raise it (valid.flow.pop)"}};
  return keys;
}

std::vector<std::string> operand_keys() {
  std::vector<std::string> out;
  for (const char* form : {"decimal", "hex", "binary", "leading-zeros"}) {
    out.push_back(std::string("operand:imm-") + form);
    if (std::string(form) != "leading-zeros")
      out.push_back(std::string("operand:imm-negative-") + form);
  }
  for (const char* k :
       {"dst-vector-form", "dst-scalar-form", "dst-special", "lane-register", "pred-p",
        "pred-negated-p", "pred-pt", "pred-negated-pt", "mem-absolute", "mem-vector-base",
        "mem-scalar-base", "mem-negative-offset", "mem-positive-offset", "mem-slm", "mem-buffer"})
    out.push_back(std::string("operand:") + k);
  for (const auto& s : isa::specials()) out.push_back("operand:special-%" + std::string(s.name));
  return out;
}

}  // namespace simt::gen
