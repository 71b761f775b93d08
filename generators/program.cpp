#include "program.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "generate.h"
#include "isa/isa.h"
#include "pools.h"
#include "sysroutine.h"

namespace simt::gen {

int loop_counter(int fn, int k) {
  return fn == kMain ? 10 + k : 36 + 8 * fn + k;
}
int loop_limit(int fn, int k) {
  return fn == kMain ? 28 + k : 40 + 8 * fn + k;
}
int counted_counter(int fn, int k) {
  return fn == kMain ? 8 + k : 24 + 8 * fn + k;
}
int narrow_save_lo(int fn, int k) {
  return fn == kMain ? 17 + k : 28 + 8 * fn + k;
}
int narrow_save_hi(int fn, int k) {
  return fn == kMain ? 19 + k : 30 + 8 * fn + k;
}

uint32_t width_bytes(Width w) {
  switch (w) {
    case Width::W32:
      return 4;
    case Width::U8:
    case Width::S8:
      return 1;
    case Width::U16:
    case Width::S16:
      return 2;
  }
  return 4;
}

const std::vector<std::string>& atomic_ops() {
  return pools::mnemonics(pools::Id::Atomic);
}
bool atomic_takes_operand(const std::string& op) {
  return !op.ends_with(".lock") && !op.ends_with(".unlock");
}
bool is_cas(const std::string& op) {
  return op.ends_with(".cas");
}

std::string_view kind_name(Kind k) {
  static constexpr std::string_view names[] = {
      "alu",          "select",     "load_input",  "store_scratch", "load_scratch", "if",
      "loop",         "break",      "continue",    "exit",          "call",         "shfl",
      "shfl_xor",     "readlane",   "ballot",      "vote",          "shared_store", "shared_load",
      "exchange",     "scalar_alu", "pred_op",     "scalar_load",   "skip",         "jump",
      "counted_loop", "recurse",    "exec_narrow", "barrier",       "nop",          "trap",
      "spin",         "atomic",     "sys",         "region",        "shared_alu",   "vcall",
      "exec_clear"};
  static_assert(std::size(names) == static_cast<size_t>(Kind::kCount));
  return names[static_cast<size_t>(k)];
}

std::string imm_text(int64_t value, Notation n) {
  const uint32_t bits = static_cast<uint32_t>(value);
  char buf[48];
  switch (n) {
    case Notation::Dec:
    case Notation::kCount:
      return std::to_string(value);
    case Notation::Hex:
      std::snprintf(buf, sizeof buf, "0x%x", bits);
      return buf;
    case Notation::HexUpper:
      std::snprintf(buf, sizeof buf, "0x%X", bits);
      return buf;
    case Notation::Bin: {  // negative values with a '-' (-0b101)
      const uint64_t mag = value < 0 ? static_cast<uint64_t>(-value) : bits;
      std::string s;
      for (int i = 32; i >= 0; --i)
        if (!s.empty() || ((mag >> i) & 1) || i == 0) s += ((mag >> i) & 1) ? '1' : '0';
      return (value < 0 ? "-0b" : "0b") + s;
    }
    case Notation::NegHex:
      if (value < 0) {
        std::snprintf(buf, sizeof buf, "-0x%llx", static_cast<unsigned long long>(-value));
        return buf;
      }
      std::snprintf(buf, sizeof buf, "0x%x", bits);
      return buf;
    case Notation::Padded:
      return value < 0 ? std::to_string(value) : "00" + std::to_string(value);
  }
  return std::to_string(value);
}

int call_target(const Program& p, int fn, const Stmt& s) {
  const int n = static_cast<int>(p.functions.size());
  const int slot = std::max(0, s.slot);
  if (fn == kMain) return n ? slot % n : -1;
  const int later = n - fn - 1;
  return later > 0 ? fn + 1 + slot % later : -1;
}

namespace {

// Registers (oracle.model.registers).
std::string vreg(int r) {
  return "v" + std::to_string(r);
}
std::string sreg(int r) {
  return "s" + std::to_string(r);
}
std::string data(const Program& p, int i) {
  return vreg(2 + (std::max(0, i) % std::max(1, p.nregs)));
}
std::string pred(int i) {
  return "p" + std::to_string(std::max(0, i) % kMaxPred);
}

const char* load_mnemonic(Width w) {
  switch (w) {
    case Width::W32:
      return "ld";
    case Width::U8:
      return "ld.u8";
    case Width::S8:
      return "ld.s8";
    case Width::U16:
      return "ld.u16";
    case Width::S16:
      return "ld.s16";
  }
  return "ld";
}
const char* store_mnemonic(Width w) {
  switch (width_bytes(w)) {
    case 1:
      return "st.8";
    case 2:
      return "st.16";
    default:
      return "st";
  }
}

bool is_division(const std::string& op) {
  return pools::contains(pools::Id::Division, op);
}
// An ALU operation with one source (isa::Family::Unary).
bool is_unary(const std::string& op) {
  const auto found = isa::find(op);
  return found && isa::info(*found).family == isa::Family::Unary;
}

// oracle.model.hostprog: the logging handler of a label, and what it adds to the
// raising warp's resume PC for an event code: 1 for the exceptions (codes 1-10, 15,
// 16: the instruction committed nothing, trap.entry), 0 for the others.
Program::Handler log_kind(const std::string& label) {
  return label == "log_pause"   ? Program::Handler::LogPause
         : label == "log_fault" ? Program::Handler::LogFault
                                : Program::Handler::LogReturn;
}
uint32_t log_skips(uint32_t code) {
  return (code >= 1 && code <= 10) || code == 15 || code == 16 ? 1 : 0;
}

// oracle.model.hostprog: a logging handler's lines after its label. Every warp
// that enters counts the entry in its log (word 0 of its 64; the shrinker may
// drop the count, and the fields then go to record 0) and stores the fields of
// log_fields of what it sees in record n mod 4: %esr, %tgid, %gesr and
// the frame's words 0 (resume PC), 4, 8 (exec), 20 (status), 24 (sp), 32
// (PC-stack depth), 36 (cause), 40 (lane), 44 (address), 48 (space), 52
// (raiser). With log_skip the raising warp of an exception then skips it: the
// frame's resume PC goes up by skip[code] (1 for the exceptions, 0 for the
// others) times the frame's raiser word, so the handler needs no branch and no
// warp's skip depends on another's tclear.
// With log_barrier the warps wait at a barrier first (bar.arrive). Every warp
// clears the ESR; log_ret returns, log_pause pauses, and log_fault divides by
// zero after counting (a double fault, trap.double).
std::vector<std::string> log_lines(const Program& p, Program::Handler h) {
  const std::string base = sreg(kHandlerScalar), n = sreg(kHandlerScalar + 1),
                    rec = sreg(kHandlerScalar + 2), t = sreg(kHandlerScalar + 3),
                    skip = sreg(kHandlerScalar + 4);
  const bool fault = h == Program::Handler::LogFault;
  const bool records = !fault && (p.log_fields & kLogAllFields);
  std::vector<std::string> out;
  if (p.log_count || records) {
    out.push_back("mov " + base + ", %gwarp");
    out.push_back("shl " + base + ", " + base + ", " +
                  std::to_string(std::countr_zero(kLogWords * 4)));
  }
  if (p.log_count) {
    out.push_back("ld " + n + ", hlog[" + base + "]");
    out.push_back("add " + n + ", " + n + ", 1");
    out.push_back("st hlog[" + base + "], " + n);
  }
  if (fault) {
    out.push_back("div " + n + ", " + n + ", 0");  // div_zero in handler mode
    out.push_back("tret");                         // never reached
    return out;
  }
  if (records) {
    std::string at = base;  // record 0 without the count
    if (p.log_count) {
      out.push_back("and " + rec + ", " + n + ", " + std::to_string(kLogRecords - 1));
      out.push_back("mul " + rec + ", " + rec + ", " + std::to_string(4 * kLogFields));
      out.push_back("add " + rec + ", " + rec + ", " + base);
      at = rec;
    }
    // Field f at word 1 + f of the record, read from a special register or the frame.
    static const char* const fields[kLogFields] = {
        "%esr", "%tgid", "%gesr", "0", "4", "8", "20", "24", "32", "36", "40", "44", "48", "52"};
    for (uint32_t f = 0; f < kLogFields; ++f) {
      if (!((p.log_fields >> f) & 1)) continue;
      out.push_back(std::string(fields[f][0] == '%' ? "mov " : "frame.ld ") + t + ", " + fields[f]);
      out.push_back("st hlog[" + at + "+" + std::to_string(4 + 4 * f) + "], " + t);
    }
  }
  if (p.log_barrier) out.push_back("bar");
  if (p.log_skip)
    for (const std::string& l :
         {"frame.ld " + t + ", 36", "and " + t + ", " + t + ", 255", "shl " + t + ", " + t + ", 2",
          "ld " + skip + ", skip[" + t + "]", "frame.ld " + t + ", 52",
          "mul " + skip + ", " + skip + ", " + t, "frame.ld " + t + ", 0",
          "add " + t + ", " + t + ", " + skip, "frame.st 0, " + t})
      out.push_back(l);
  out.push_back("tclear");
  out.push_back(h == Program::Handler::LogPause ? "tpause" : "tret");
  return out;
}

// oracle.model.handler: the handler's lines after its label; a line ending in
// ':' is a label. The recording handler: the raising warp (%esr not 0) counts
// the event in its log and records it (while the log has room), skips an
// exception (codes 1-10) by advancing its frame's resume PC, clears the ESR;
// every warp returns. It uses s48-s51 and p11 only (no statement does).
std::vector<std::string> handler_lines(const Program& p) {
  switch (p.handler) {
    case Program::Handler::None:
      return {};
    case Program::Handler::Return:
      return {"tclear", "tret"};
    case Program::Handler::Custom: {
      std::vector<std::string> out;
      std::string l;
      for (char ch : p.handler_code + "\n") {
        if (ch != '\n') {
          l += ch;
          continue;
        }
        const auto b = l.find_first_not_of(" \t");
        if (b != std::string::npos) out.push_back(l.substr(b));
        l.clear();
      }
      return out;
    }
    case Program::Handler::Mark:
    case Program::Handler::MarkPc: {
      const std::string esr = sreg(kHandlerScalar), at = sreg(kHandlerScalar + 1),
                        t = sreg(kHandlerScalar + 2), pr = "p" + std::to_string(kHandlerPred);
      std::vector<std::string> out = {
          "mov " + esr + ", %esr",  // the cause word to TGID, 0 to the others
          "cmp.eq " + pr + ", " + esr + ", 0",
          "cbr " + pr + ", trap_mark_leave",
          "mov " + at + ", %gwarp",  // TGID itself: the raising warp
          "shl " + at + ", " + at + ", " + std::to_string(std::countr_zero(kRecordWords * 4)),
          "st trec[" + at + "], " + esr};
      if (p.handler == Program::Handler::Mark) {
        out.push_back("mov " + t + ", %gesr");  // its view of the global ESR
        out.push_back("st trec[" + at + "+4], " + t);
      } else {
        out.push_back("frame.ld " + t + ", 0");  // the resume PC
        out.push_back("st trec[" + at + "+8], " + t);
      }
      for (const char* l : {"tclear", "trap_mark_leave:", "tret"}) out.push_back(l);
      return out;
    }
    case Program::Handler::LogReturn:
    case Program::Handler::LogPause:
    case Program::Handler::LogFault:
      return log_lines(p, p.handler);
    case Program::Handler::Record:
      break;
  }
  const std::string esr = sreg(kHandlerScalar), at = sreg(kHandlerScalar + 1),
                    n = sreg(kHandlerScalar + 2), t = sreg(kHandlerScalar + 3),
                    pr = "p" + std::to_string(kHandlerPred);
  auto field = [&](RecordField f) { return "trec[" + at + "+" + std::to_string(4 + 4 * f) + "]"; };
  return {
      "mov " + esr + ", %esr",  // the cause word to TGID, 0 to the others
      "cmp.eq " + pr + ", " + esr + ", 0",
      "cbr " + pr + ", trap_record_leave",
      "mov " + at + ", %tgid",
      "shl " + at + ", " + at + ", " + std::to_string(std::countr_zero(kRecordWords * 4)),
      "ld " + n + ", trec[" + at + "]",  // events so far
      "add " + t + ", " + n + ", 1",
      "st trec[" + at + "], " + t,
      "cmp.ge.u " + pr + ", " + n + ", " + std::to_string(kRecords),
      "cbr " + pr + ", trap_record_skip",  // the log is full: counted only
      "mul " + n + ", " + n + ", " + std::to_string(4 * kRecordFields),
      "add " + at + ", " + at + ", " + n,
      "st " + field(kRecCause) + ", " + esr,
      "mov " + t + ", %tgid",
      "st " + field(kRecTgid) + ", " + t,
      "frame.ld " + t + ", 0",
      "st " + field(kRecPc) + ", " + t,
      "frame.ld " + t + ", 40",
      "st " + field(kRecLane) + ", " + t,
      "frame.ld " + t + ", 44",
      "st " + field(kRecAddr) + ", " + t,
      "frame.ld " + t + ", 48",
      "st " + field(kRecSpace) + ", " + t,
      "mov " + t + ", %gesr",
      "st " + field(kRecGesr) + ", " + t,
      "frame.ld " + t + ", 20",
      "st " + field(kRecStatus) + ", " + t,
      "trap_record_skip:",
      "and " + t + ", " + esr + ", 255",  // the event code
      "cmp.gt.u " + pr + ", " + t + ", 10",
      "cbr " + pr + ", trap_record_clear",  // not an exception: resume where saved
      "frame.ld " + t + ", 0",
      "add " + t + ", " + t + ", 1",
      "frame.st 0, " + t,  // skip the instruction, which committed nothing
      "trap_record_clear:",
      "tclear",
      "trap_record_leave:",
      "tret",
  };
}

class Printer {
 public:
  Printer(const Program& p, Layout* layout) : p_(p), layout_(layout) {}

  std::string run() {
    const Program& p = p_;
    const uint32_t threads = p.threads();
    out_ += "; generated by simtspec-gen " + std::to_string(kGeneratorVersion) + "\n";
    out_ += ".wave " + std::to_string(p.wave) + "\n";
    if (p.simd && p.simd != p.wave) out_ += ".simd " + std::to_string(p.simd) + "\n";
    if (p.warps > 1) out_ += ".warps " + std::to_string(p.warps) + "\n";
    if (p.workgroups > 1) out_ += ".workgroups " + std::to_string(p.workgroups) + "\n";
    if (p.cores > 1) out_ += ".cores " + std::to_string(p.cores) + "\n";
    if (p.policy != "round_robin") out_ += ".policy " + p.policy + "\n";
    if (p.policy == "random") out_ += ".seed " + std::to_string(p.seed) + "\n";
    if (p.mask_depth) out_ += ".mask_depth " + std::to_string(p.mask_depth) + "\n";
    if (p.call_depth) out_ += ".call_depth " + std::to_string(p.call_depth) + "\n";
    if (p.stack) out_ += ".stack " + std::to_string(p.stack) + "\n";
    out_ += ".vregs " + std::to_string(p.vregs()) + "\n";
    out_ += ".sregs " + std::to_string(kSregs) + "\n";
    if (p.vshared) out_ += ".vshared " + std::to_string(kSharedBase) + "\n";  // wave.shared
    // Generated programs run well under this; a faulty implementation that runs
    // away is stopped quickly (oracle.model.print).
    out_ += ".max_steps " + std::to_string(p.max_steps ? p.max_steps : 1000000) + "\n";
    const std::string handler = handler_label(p);
    if (!handler.empty()) out_ += ".handler " + handler + "\n";
    // oracle.model.hostprog: the logging handlers a bind_tba may install, and the
    // vector tables (trap.install, trap.vector).
    const std::vector<std::string> logs = log_labels(p);
    for (const std::string& l : logs)
      if (l != handler) out_ += ".handler_entry " + l + "\n";
    if (!p.functions.empty())
      for (size_t t = 0; t < p.vtables.size(); ++t) {
        if (p.vtables[t].empty()) continue;
        out_ += ".vtable " + vtable_name(t);
        for (size_t e = 0; e < p.vtables[t].size(); ++e)
          out_ += (e ? ", f" : " f") + std::to_string(std::max(0, p.vtables[t][e]) %
                                                      static_cast<int>(p.functions.size()));
        out_ += "\n";
      }
    // oracle.model.preempt: the standard system routine's entries (preempt.routine).
    if (preempts(p))
      out_ += ".sys_save " + std::string(kSysSaveLabel) + "\n.sys_restore " +
              std::string(kSysRestoreLabel) + "\n";
    const bool exchange = uses(p, Kind::Exchange);
    const bool shared =
        uses(p, Kind::SharedStore) || uses(p, Kind::SharedLoad) || uses(p, Kind::Atomic);
    const bool scratch = uses(p, Kind::StoreScratch) || uses(p, Kind::LoadScratch);
    if (exchange) out_ += ".slm " + std::to_string(p.warps * p.wave * 4) + "\n";
    if (!p.input.empty() && (uses(p, Kind::LoadInput) || uses(p, Kind::ScalarLoad)))
      out_ += ".buffer in u32[threads] in = " + input_init(p) + "\n";
    if (scratch)
      out_ += ".buffer scratch u32[threads * " + std::to_string(kScratchSlots) + "] out\n";
    if (shared) out_ += ".buffer shared u32[warps * workgroups * 4] out\n";
    out_ += ".buffer out u32[threads * " + std::to_string(p.nregs) + "] out\n";
    if (uses_trap(p, TrapKind::StraddleEnd)) out_ += ".buffer tail u8[6] out\n";
    if (p.count_atomics && uses(p, Kind::Atomic)) {
      // oracle.invariant.atomic_count: tally[0] per-lane, tally[1] warp-wide
      // counting atomics; per thread its per-lane participations; per warp its
      // non-empty per-lane and warp-wide counting atomics; the two logs by old value.
      out_ += ".buffer tally u32[2] out\n";
      out_ += ".buffer lanes u32[threads] out\n";
      out_ += ".buffer execs u32[warps * workgroups * 2] out\n";
      out_ += ".buffer lane_log u32[" + std::to_string(kCountLog) + "] out\n";
      out_ += ".buffer warp_log u32[" + std::to_string(kCountLog) + "] out\n";
    }
    if (uses_counters(p)) {
      out_ += ".buffer counters u32[8] out =";
      for (int k = 0; k < 8; ++k) out_ += (k ? ", " : " ") + std::to_string(counter_init(k));
      out_ += "\n";
    }
    if (p.handler == Program::Handler::Record || p.handler == Program::Handler::Mark ||
        p.handler == Program::Handler::MarkPc)
      out_ += ".buffer trec u32[warps * workgroups * " + std::to_string(kRecordWords) + "] out\n";
    if (!logs.empty()) {
      out_ += ".buffer hlog u32[warps * workgroups * " + std::to_string(kLogWords) + "] out\n";
      out_ += ".buffer skip u32[32] in =";  // 1 for the exceptions (trap.events)
      for (uint32_t code = 0; code < 32; ++code)
        out_ += (code ? ", " : " ") + std::to_string(log_skips(code));
      out_ += "\n";
    }
    if (p.warps * p.workgroups == 1) {
      line("shl v1, %lane, 2");
    } else {
      line("mul s0, %gwarp, %wave");
      line("add v0, %lane, s0");
      line("shl v1, v0, 2");
    }
    if (shared) line("mul s3, %gwarp, 16");
    if (exchange) {
      // v26: this thread's SLM word; v24: the word of the same lane in the next
      // warp of the workgroup (byte addresses, modulo the workgroup's SLM).
      const uint32_t span = p.warps * p.wave * 4;
      if (p.workgroups == 1) {
        line("add v24, v1, " + std::to_string(p.wave * 4));
      } else {
        line("mul s1, %warp, %wave");
        line("add v25, %lane, s1");
        line("shl v26, v25, 2");
        line("add v24, v26, " + std::to_string(p.wave * 4));
      }
      line("rem.u v24, v24, " + std::to_string(span));
    }
    if (p.budget && uses(p, Kind::Recurse)) line("mov s16, " + std::to_string(p.budget));
    exchange_addr_ = p.workgroups == 1 ? "v1" : "v26";
    threads_ = threads;
    block(p.main, kMain, Depths{});
    for (int j = 0; j < p.nregs; ++j) {
      uint32_t off = static_cast<uint32_t>(j) * threads * 4;
      line("st out[v1" + (off ? "+" + std::to_string(off) : std::string()) + "], " + data(p, j));
    }
    line("exit");
    for (size_t f = 0; f < p.functions.size(); ++f) {
      out_ += "f" + std::to_string(f) + ":\n";
      block(p.functions[f], static_cast<int>(f), Depths{});
      line("ret");
    }
    // oracle.model.handler: after all user code, which never falls into it.
    if (!handler.empty()) {
      label(handler);
      for (const std::string& l : handler_lines(p)) {
        if (l.ends_with(":"))
          label(l.substr(0, l.size() - 1));
        else
          line(l);
      }
    }
    for (const std::string& l : logs) {
      if (l == handler) continue;
      label(l);
      for (const std::string& t : log_lines(p, log_kind(l))) line(t);
    }
    if (layout_) layout_->size = pc_;
    // oracle.model.preempt: the library's routine, verbatim, after all other code
    // (no user or handler code runs into it: it follows an exit, ret or tret).
    if (preempts(p)) out_ += kSysRoutine;
    if (p.line_end == Program::LineEnd::LF) return out_;
    const std::string eol = p.line_end == Program::LineEnd::CR ? "\r" : "\r\n";
    std::string text;
    for (char ch : out_) text += ch == '\n' ? eol : std::string(1, ch);
    return text;
  }

  // syntax.buffer.init: iota(a, b) or fill(v) where the form asks for it and the
  // values are such a sequence (modulo 2^32), else the list of values.
  static std::string input_init(const Program& p) {
    const auto& in = p.input;
    const uint32_t step = in.size() > 1 ? in[1] - in[0] : 0;
    bool arithmetic = true, equal = true;
    for (size_t i = 1; i < in.size(); ++i) {
      arithmetic = arithmetic && in[i] - in[i - 1] == step;
      equal = equal && in[i] == in[0];
    }
    if (p.input_form == Program::InputForm::Iota && arithmetic && in.size() == p.threads())
      return "iota(" + std::to_string(in[0]) + ", " + std::to_string(step) + ")";
    if (p.input_form == Program::InputForm::Fill && equal && in.size() == p.threads())
      return "fill(" + std::to_string(in[0]) + ")";
    std::string list;
    for (size_t i = 0; i < in.size(); ++i) list += (i ? ", " : "") + std::to_string(in[i]);
    return list;
  }

 private:
  // Nesting counts of a context, for the registers each construct uses.
  struct Depths {
    int loops = 0, counted = 0, narrow = 0;
    // The innermost loop is printed as primitives: break and continue must be too
    // (valid.struct.loopctl: a structured break needs a structured loop).
    bool raw_loop = false;
  };

  // An instruction line (or a structured statement expanding to `n` instructions)
  // owned by statement `s` (nullptr: prologue and epilogue).
  void line(const std::string& text, const Stmt* s = nullptr, int n = 1) {
    out_ += std::string(static_cast<size_t>(4 + 2 * indent_), ' ') + text + "\n";
    for (int i = 0; i < n; ++i) {
      if (layout_ && s) layout_->pcs[s].push_back(pc_);
      ++pc_;
    }
  }
  void label(const std::string& name) { out_ += name + ":\n"; }
  std::string fresh_label() { return "L" + std::to_string(labels_++); }

  std::string opnd(const Operand& o) {
    switch (o.k) {
      case Operand::K::Reg:
        return data(p_, o.v);
      case Operand::K::Lane:
        return "%lane";
      case Operand::K::Imm:
        return imm_text(o.v, o.notation);
      case Operand::K::Special: {
        const auto idx = static_cast<size_t>(
            std::clamp<int32_t>(o.v, 0, static_cast<int32_t>(isa::Special::kCount) - 1));
        return "%" + std::string(isa::specials()[idx].name);
      }
      case Operand::K::Scalar:
        return sreg(kScalarAcc);
      case Operand::K::Shared:
        return vreg(kSharedBase + std::max(0, o.v) % kSharedRegs);
    }
    return "0";
  }
  // A vector register for operands that must be one.
  std::string reg(const Operand& o) { return data(p_, o.k == Operand::K::Reg ? o.v : 0); }

  std::string cond(const Cond& c, const Stmt* s) {
    if (!c.reuse) line(c.cmp + " " + pred(c.pred) + ", " + opnd(c.a) + ", " + opnd(c.b), s);
    return (c.negate ? "!" : "") + pred(c.pred);
  }

  // The scratch word area of a slot plus the byte offset (oracle.model.memory).
  std::string scratch_addr(const Stmt& s) {
    const uint32_t off = static_cast<uint32_t>(s.slot % kScratchSlots) * threads_ * 4 +
                         static_cast<uint32_t>(s.offset);
    if (s.neg > 0) {
      line("add v18, v1, " + std::to_string(off + static_cast<uint32_t>(s.neg)), &s);
      return "scratch[v18-" + imm_text(s.neg, s.neg % 2 ? Notation::Hex : Notation::Dec) + "]";
    }
    return "scratch[v1" + (off ? "+" + std::to_string(off) : std::string()) + "]";
  }

  std::string shared_addr(const Stmt& s) {
    if (s.slot % 2 == 0) return "shared[s3]";
    line("and v21, " + opnd(s.b) + ", 3", &s);
    line("shl v21, v21, 2", &s);
    line("add v21, v21, s3", &s);
    return "shared[v21]";
  }

  void block(const std::vector<Stmt>& b, int fn, Depths d) {
    for (const auto& s : b) stmt(s, fn, d);
  }

  void nested(const std::vector<Stmt>& b, int fn, Depths d) {
    ++indent_;
    block(b, fn, d);
    --indent_;
  }

  void alu(const Stmt& s, const std::string& d, const std::string& tmp_or) {
    const std::string& op = s.op;
    if (is_unary(op)) {
      line(op + " " + d + ", " + opnd(s.a), &s);
    } else if (is_division(op)) {
      // The divisor is made odd, so it is never zero (oracle.model.div).
      if (s.b.k == Operand::K::Imm) {
        line(op + " " + d + ", " + opnd(s.a) + ", " + std::to_string(s.b.v | 1), &s);
      } else {
        line("or " + tmp_or + ", " + opnd(s.b) + ", 1", &s);
        line(op + " " + d + ", " + opnd(s.a) + ", " + tmp_or, &s);
      }
    } else {
      line(op + " " + d + ", " + opnd(s.a) + ", " + opnd(s.b), &s);
    }
  }

  void stmt(const Stmt& s, int fn, Depths dep) {
    const std::string d = data(p_, s.dst);
    switch (s.kind) {
      case Kind::Alu:
        alu(s, d, vreg(kDivTemp));
        break;
      case Kind::Select: {
        std::string pr = cond(s.cond, &s);
        line("sel " + d + ", " + pr + ", " + opnd(s.a) + ", " + opnd(s.b), &s);
        break;
      }
      case Kind::LoadInput:
        if (p_.input.empty())
          line("mov " + d + ", 0", &s);
        else
          line("ld " + d + ", in[v1]", &s);
        break;
      case Kind::StoreScratch: {
        std::string a = scratch_addr(s);
        line(std::string(store_mnemonic(s.width)) + " " + a + ", " + opnd(s.a), &s);
        break;
      }
      case Kind::LoadScratch: {
        std::string a = scratch_addr(s);
        line(std::string(load_mnemonic(s.width)) + " " + d + ", " + a, &s);
        break;
      }
      case Kind::If: {
        const bool raw = s.raw || !s.again.empty();
        std::string pr = cond(s.cond, &s);
        line((raw ? "push " : "if ") + pr, &s);
        nested(s.body, fn, dep);
        if (s.has_else || !s.again.empty()) {
          line(raw ? "invert" : "else", &s);
          nested(s.other, fn, dep);
        }
        if (!s.again.empty()) {
          line("invert", &s);  // back to the first side (branch.invert)
          nested(s.again, fn, dep);
        }
        line(raw ? "pop" : "endif", &s);
        break;
      }
      case Kind::Loop: {
        const int k = std::min(dep.loops, kMaxDepth - 1);
        const std::string counter = vreg(loop_counter(fn, k));
        const std::string limit = vreg(loop_limit(fn, k));
        line("mov " + counter + ", 0", &s);
        if (s.limit_reg) line("and " + limit + ", " + opnd(s.a) + ", 7", &s);
        const std::string head = s.raw ? fresh_label() : std::string();
        if (s.raw) {
          line("lpush", &s);
          label(head);
        } else {
          line("loop", &s);
        }
        ++indent_;
        line("cmp.ge p15, " + counter + ", " + (s.limit_reg ? limit : std::to_string(s.limit)), &s);
        line(s.raw ? "brk p15" : "break p15", &s);
        line("add " + counter + ", " + counter + ", 1", &s);
        Depths inner = dep;
        inner.loops += 1;
        inner.raw_loop = s.raw;
        block(s.body, fn, inner);
        --indent_;
        if (s.raw) {
          line("lnext", &s);
          line("cbr pt, " + head, &s);
          line("pop", &s);
        } else {
          line("endloop", &s, 3);  // lnext; cbr pt, __loopN; pop (branch.struct.loop)
        }
        break;
      }
      case Kind::Break: {
        const std::string pr = cond(s.cond, &s);
        line((s.raw || dep.raw_loop ? "brk " : "break ") + pr, &s);
        break;
      }
      case Kind::Continue: {
        const std::string pr = cond(s.cond, &s);
        line((s.raw || dep.raw_loop ? "cont " : "continue ") + pr, &s);
        break;
      }
      case Kind::Exit: {
        if (s.raw) {  // every active lane retires
          line("exit", &s);
          break;
        }
        std::string pr = cond(s.cond, &s);
        line("if " + pr, &s);
        line("    exit", &s);
        line("endif", &s);
        break;
      }
      case Kind::Call: {
        const int t = call_target(p_, fn, s);
        if (t >= 0) line("call f" + std::to_string(t), &s);
        break;
      }
      case Kind::Shfl:
        line("shfl " + d + ", " + reg(s.a) + ", " + opnd(s.b), &s);
        break;
      case Kind::ShflXor:
        line("shfl.xor " + d + ", " + reg(s.a) + ", " + std::to_string(s.slot), &s);
        break;
      case Kind::ReadLane: {
        const uint32_t lane = static_cast<uint32_t>(std::max(0, s.slot));
        if (s.limit) {
          line("mov s6, " + std::to_string(lane), &s);
          line("readlane s2, " + reg(s.a) + ", s6", &s);
        } else {
          const Notation n = s.b.notation == Notation::NegHex ? Notation::Hex : s.b.notation;
          line("readlane s2, " + reg(s.a) + ", " + imm_text(lane, n), &s);
        }
        line("mov " + d + ", s2", &s);
        break;
      }
      case Kind::Ballot: {
        std::string pr = cond(s.cond, &s);
        line((s.op == "ballot.hi" ? "ballot.hi" : "ballot") + std::string(" s2, ") + pr, &s);
        line("mov " + d + ", s2", &s);
        break;
      }
      case Kind::Vote: {
        std::string pr = cond(s.cond, &s);
        line((s.op == "vote.all" ? "vote.all" : "vote.any") + std::string(" p14, ") + pr, &s);
        line("sel " + d + ", p14, 1, 0", &s);
        break;
      }
      case Kind::SharedStore: {
        std::string a = shared_addr(s);
        line("st " + a + ", " + opnd(s.a), &s);
        break;
      }
      case Kind::SharedLoad: {
        std::string a = shared_addr(s);
        line("ld " + d + ", " + a, &s);
        break;
      }
      case Kind::Atomic: {  // atom.lane, atom.warp: vector destination only
        // On counters the old value is discarded (into v22): the order does not show.
        const bool counters = s.slot == kCounterSlot;
        const std::string a =
            counters ? "counters[" + std::to_string(4 * counter_word(s.op)) + "]" : shared_addr(s);
        const std::string dest = counters ? "v22" : d;
        std::string operands;
        if (atomic_takes_operand(s.op)) operands = (is_cas(s.op) ? ", 0, " : ", ") + opnd(s.a);
        if (!(p_.lower_warp_atomics && s.op.starts_with("watom."))) {
          line(s.op + " " + dest + ", " + a + operands, &s);
          if (p_.count_atomics) count_atomic(s);
          break;
        }
        // atom.warp as the per-lane form in the lowest active lane alone, then a
        // readlane broadcast. The operand is read first, under the warp's exec (it
        // may be %exec). The lowest lane: ctz(x) = popc((x & -x) - 1), which is 32
        // for x = 0, so lane = ctz(lo) + (lo == 0) * ctz(hi); 64 with none.
        if (!operands.empty()) {
          line("mov v23, " + opnd(s.a), &s);
          operands = (is_cas(s.op) ? ", 0, " : ", ") + std::string("v23");
        }
        for (const char* l :
             {"ballot s22, pt", "sub s21, 0, s22", "and s21, s21, s22", "sub s21, s21, 1",
              "popc s21, s21", "min.u s22, s22, 1", "xor s22, s22, 1", "ballot.hi s23, pt",
              "sub s12, 0, s23", "and s12, s12, s23", "sub s12, s12, 1", "popc s12, s12",
              "mul s12, s12, s22", "add s21, s21, s12", "cmp.eq p13, %lane, s21"})
          line(l, &s);
        line("if p13", &s);
        ++indent_;
        line(s.op.substr(1) + " v22, " + a + operands, &s);  // watom.X -> atom.X
        --indent_;
        line("endif", &s);
        line("readlane s21, v22, s21", &s);
        line("mov " + dest + ", s21", &s);
        break;
      }
      case Kind::Exchange:
        line("st slm[" + exchange_addr_ + "], " + opnd(s.a), &s);
        line("bar", &s);
        line("ld " + d + ", slm[v24]", &s);
        line("bar", &s);
        break;
      case Kind::ScalarAlu: {
        const std::string r = sreg(s.region_scalar ? kRegionScalar : kScalarAcc);
        alu(s, r, sreg(kScalarDiv));
        if (s.accumulate) line("add " + d + ", " + d + ", " + r, &s);
        break;
      }
      case Kind::PredOp: {
        const std::string a = (s.cond.negate ? "!" : "") + pred(s.cond.pred);
        if (s.op == "pmov") {
          line("pmov " + pred(s.dst) + ", " + a, &s);
        } else {
          const std::string op = s.op == "por" || s.op == "pxor" ? s.op : "pand";
          line(op + " " + pred(s.dst) + ", " + a + ", " + (s.n2 ? "!" : "") + pred(s.p2), &s);
        }
        if (s.accumulate) line("sel " + d + ", " + pred(s.dst) + ", 1, 0", &s);
        break;
      }
      case Kind::ScalarLoad: {
        const std::string m = scalar_load_operand(s);
        const std::string r = sreg(s.region_scalar ? kRegionScalar : kScalarAcc);
        line(std::string(load_mnemonic(s.width)) + " " + r + ", " + m, &s);
        if (s.accumulate) line("add " + d + ", " + d + ", " + r, &s);
        break;
      }
      case Kind::Skip: {
        const std::string l = fresh_label();
        line("cbr " + cond(s.cond, &s) + ", " + l, &s);
        nested(s.body, fn, dep);
        label(l);
        break;
      }
      case Kind::Jump: {
        const std::string l = fresh_label();
        line("jmp " + l, &s);
        nested(s.body, fn, dep);
        label(l);
        break;
      }
      case Kind::CountedLoop: {
        const int k = std::min(dep.counted, kMaxDepth - 1);
        const std::string c = sreg(counted_counter(fn, k));
        const std::string l = fresh_label();
        line("mov " + c + ", 0", &s);
        label(l);
        Depths inner = dep;
        inner.counted += 1;
        nested(s.body, fn, inner);
        line("add " + c + ", " + c + ", 1", &s);
        line("cmp.lt p8, " + c + ", " + std::to_string(s.limit), &s);
        line("cbr p8, " + l, &s);
        break;
      }
      case Kind::Recurse: {
        if (fn == kMain) break;  // only functions recurse
        const std::string go = fresh_label(), done = fresh_label();
        line("cmp.gt p12, s16, 0", &s);
        line("cbr p12, " + go, &s);
        line("jmp " + done, &s);
        label(go);
        line("sub s16, s16, 1", &s);
        line("call f" + std::to_string(fn), &s);
        line("add s16, s16, 1", &s);
        label(done);
        break;
      }
      case Kind::ExecNarrow: {
        const int k = std::min(dep.narrow, 1);
        const std::string lo = sreg(narrow_save_lo(fn, k)), hi = sreg(narrow_save_hi(fn, k));
        const bool wide = p_.wave > 32;
        // %exec (clears bits 32-63) where the wave has no lane above 31, else the halves.
        const std::string low_name = !wide && s.slot % 2 ? "%exec" : "%exec_lo";
        line("mov " + lo + ", %exec_lo", &s);
        if (wide) line("mov " + hi + ", %exec_hi", &s);
        line("and s4, " + lo + ", " + std::to_string(static_cast<uint32_t>(s.mask)), &s);
        line("mov " + low_name + ", s4", &s);
        if (wide) {
          line("and s4, " + hi + ", " + std::to_string(static_cast<uint32_t>(s.mask >> 32)), &s);
          line("mov %exec_hi, s4", &s);
        }
        Depths inner = dep;
        inner.narrow += 1;
        nested(s.body, fn, inner);
        line("mov " + low_name + ", " + lo, &s);
        if (wide) line("mov %exec_hi, " + hi, &s);
        break;
      }
      case Kind::Barrier:
        line("bar", &s);
        break;
      case Kind::Nop:
        line("nop", &s);
        break;
      case Kind::Trap:
        trap(s, d);
        break;
      case Kind::Sys:
        line("sys " + opnd(s.a), &s);
        break;
      case Kind::VCall:  // trap.vector
        line("vcall " + opnd(s.a), &s);
        break;
      case Kind::ExecClear:  // state.special.exec: no lane stays active
        line("mov %exec, 0", &s);
        break;
      case Kind::Region:
        region(s, fn, dep);
        break;
      case Kind::SharedAlu:
        alu(s, vreg(kSharedBase + std::max(0, s.slot) % kSharedRegs), vreg(kDivTemp));
        break;
      case Kind::Spin: {
        const std::string l = fresh_label();
        if (s.raw)
          label(l);
        else
          line("loop", &s);
        nested(s.body, fn, dep);
        if (s.raw) {
          line("jmp " + l, &s);
        } else {
          line("    break !pt", &s);
          line("endloop", &s, 3);
        }
        break;
      }
      case Kind::kCount:
        break;
    }
  }

  // oracle.model.regions: a region as subv.begin/subv.end (wave.enter,
  // wave.exit), as two nops (normal mode at the same PCs), or as the software
  // loop of wave.soft.loop around its body, with sH = s60 and sL = s61.
  void region(const Stmt& s, int fn, Depths dep) {
    if (p_.region_form == Program::RegionForm::Hardware ||
        p_.region_form == Program::RegionForm::Nops) {
      const bool hw = p_.region_form == Program::RegionForm::Hardware;
      line(hw ? "subv.begin" : "nop", &s);
      nested(s.body, fn, dep);
      line(hw ? "subv.end" : "nop", &s);
      return;
    }
    if (p_.region_form == Program::RegionForm::SoftwareSource) {
      const std::string ss = sreg(kSoftHigh), st = sreg(kSoftLow);
      const std::string top = fresh_label(), fin = fresh_label();
      line("mov " + ss + ", %exec_hi", &s);  // save the high half
      line("mov %exec_hi, 0", &s);           // the low half runs first
      label(top);
      nested(s.body, fn, dep);
      line("mov " + st + ", %exec_lo", &s);  // the low half's leftover
      line("mov %exec_lo, 0", &s);
      line("cbr pt, " + fin, &s);  // exec_hi not 0: the high pass has ended
      line("mov %exec_hi, " + ss, &s);
      line("mov " + ss + ", " + st, &s);
      line("cbr pt, " + top, &s);
      label(fin);
      line("mov %exec_lo, " + ss, &s);
      return;
    }
    const std::string sh = sreg(kSoftHigh), sl = sreg(kSoftLow);
    const std::string top = fresh_label(), next = fresh_label(), fin = fresh_label();
    line("mov " + sh + ", %exec_hi", &s);  // the high half, run second
    line("mov " + sl + ", 0", &s);         // what the low half's pass leaves
    line("mov %exec_hi, 0", &s);           // exec = the low half
    line("cbr pt, " + top, &s);            // low half not empty: run it
    line("jmp " + next, &s);
    label(top);
    nested(s.body, fn, dep);
    line("or " + sl + ", " + sl + ", %exec_lo", &s);  // the low pass's leftover
    line("mov %exec_lo, 0", &s);                      // exec = exec_hi
    line("cbr pt, " + fin, &s);                       // the high pass left lanes: done
    label(next);
    line("mov %exec_hi, " + sh, &s);  // the high half's turn, if it has lanes
    line("mov " + sh + ", 0", &s);    // and never again
    line("cbr pt, " + top, &s);
    label(fin);
    line("mov %exec_lo, " + sl, &s);  // exec = union of what the passes left
  }

  // ScalarLoad's memory operand (oracle.model.memory): a word of `in` (read-only),
  // else of `out` that only this warp writes: any word with one warp, else one of
  // the warp's own first words, s4 = 4 * s0 being its first thread's byte address.
  std::string scalar_load_operand(const Stmt& s) {
    const uint32_t slot = static_cast<uint32_t>(std::max(0, s.slot));
    const uint32_t offset = static_cast<uint32_t>(s.offset);
    if (!p_.input.empty()) return "in[" + std::to_string(slot % threads_ * 4 + offset) + "]";
    if (p_.warps * p_.workgroups == 1)
      return "out[" +
             std::to_string(slot % (threads_ * static_cast<uint32_t>(p_.nregs)) * 4 + offset) + "]";
    line("shl s4, s0, 2", &s);
    return "out[s4+" + std::to_string(slot % p_.wave * 4 + offset) + "]";
  }

  void trap(const Stmt& s, const std::string& d) {
    const auto kind = static_cast<TrapKind>(s.slot % static_cast<int>(TrapKind::kCount));
    const uint32_t out_bytes = threads_ * static_cast<uint32_t>(p_.nregs) * 4;
    const int shift = 1 + std::max(0, s.limit) % 3;
    switch (kind) {
      case TrapKind::VectorDivZero: {
        line("and v19, " + opnd(s.a) + ", 3", &s);
        const std::string op = is_division(s.op) ? s.op : "div";
        line(op + " " + d + ", " + opnd(s.b) + ", v19", &s);
        break;
      }
      case TrapKind::ScalarDivZero:
        line("div s5, s5, 0", &s);
        break;
      case TrapKind::LoadOutOfRange:
        line("shl v19, v1, " + std::to_string(shift), &s);
        line("ld " + d + ", out[v19]", &s);
        break;
      case TrapKind::StoreOutOfRange:
        line("shl v19, v1, " + std::to_string(shift), &s);
        line("st out[v19], " + opnd(s.a), &s);
        break;
      case TrapKind::Misaligned:
        line("add v19, v1, %lane", &s);
        line(std::string(load_mnemonic(s.width)) + " " + d + ", out[v19]", &s);
        break;
      case TrapKind::ScalarLoadOut:
        line("ld s5, out[" + std::to_string(out_bytes) + "]", &s);
        break;
      case TrapKind::NegativeAddress:
        line("ld " + d + ", out[v1-4]", &s);
        break;
      case TrapKind::MisalignedPast:
        line(std::string(load_mnemonic(s.width)) + " " + d + ", out[v1+" +
                 std::to_string(out_bytes + 1) + "]",
             &s);
        break;
      case TrapKind::StraddleEnd:
        line("ld " + d + ", tail[4]", &s);
        break;
      case TrapKind::AtomicLaneOut:
      case TrapKind::AtomicWarpOut: {
        line("shl v19, v1, " + std::to_string(shift), &s);
        std::string operands;
        if (atomic_takes_operand(s.op)) operands = (is_cas(s.op) ? ", 0, " : ", ") + opnd(s.a);
        line(s.op + " " + d + ", out[v19]" + operands, &s);
        break;
      }
      case TrapKind::kCount:
        break;
    }
  }

  const Program& p_;
  Layout* layout_;
  std::string out_;
  // oracle.invariant.atomic_count: a counting atomic of the statement's family,
  // then (under the same exec) the warp's count of non-empty ones, stored by its
  // active lanes, and the log entry at the old value: per-lane (ordinal << 14 |
  // gwarp << 7 | lane + 1), warp-wide (ordinal << 7 | gwarp + 1).
  void count_atomic(const Stmt& s) {
    const bool warp = s.op.starts_with("watom.");
    const std::string any = "s" + std::to_string(kCountScalar),
                      addr = "s" + std::to_string(kCountScalar + 1),
                      ord = "s" + std::to_string(kCountScalar + (warp ? 3 : 2)),
                      old = "v" + std::to_string(kCountOld),
                      mine = "v" + std::to_string(kCountOld + 1),
                      entry = "v" + std::to_string(kCountOld + 2),
                      at = "v" + std::to_string(kCountOld + 3);
    for (const std::string& l :
         {"ballot " + any + ", pt", "ballot.hi " + addr + ", pt",
          "or " + any + ", " + any + ", " + addr, "min.u " + any + ", " + any + ", 1",
          "add " + ord + ", " + ord + ", " + any, "mul " + addr + ", %gwarp, 8",
          "st execs[" + addr + (warp ? "+4" : "") + "], " + ord})
      line(l, &s);
    if (warp) {
      line("watom.add " + old + ", tally[4], 1", &s);
      line("shl " + entry + ", " + ord + ", 7", &s);
      line("add " + entry + ", " + entry + ", %gwarp", &s);
    } else {
      line("atom.add " + old + ", tally[0], 1", &s);
      line("add " + mine + ", " + mine + ", 1", &s);
      line("st lanes[v1], " + mine, &s);
      line("shl " + entry + ", " + ord + ", 14", &s);
      line("mul " + addr + ", %gwarp, 128", &s);
      line("or " + entry + ", " + entry + ", " + addr, &s);
      line("add " + entry + ", " + entry + ", %lane", &s);
    }
    line("add " + entry + ", " + entry + ", 1", &s);
    line("min.u " + at + ", " + old + ", " + std::to_string(kCountLog - 1), &s);
    line("shl " + at + ", " + at + ", 2", &s);
    line(std::string(warp ? "st warp_log[" : "st lane_log[") + at + "], " + entry, &s);
  }

  int indent_ = 0;
  uint32_t pc_ = 0;
  int labels_ = 0;
  uint32_t threads_ = 0;
  std::string exchange_addr_ = "v26";
};

}  // namespace

std::string handler_label(const Program& p) {
  switch (p.handler) {
    case Program::Handler::None:
      return "";
    case Program::Handler::Record:
      return "trap_record";
    case Program::Handler::Return:
      return "trap_return";
    case Program::Handler::Custom:
      return "trap_custom";
    case Program::Handler::Mark:
    case Program::Handler::MarkPc:
      return "trap_mark";
    case Program::Handler::LogReturn:
    case Program::Handler::LogPause:
    case Program::Handler::LogFault:
      return log_label(p.handler);
  }
  return "";
}

std::string log_label(Program::Handler h) {
  return h == Program::Handler::LogPause   ? "log_pause"
         : h == Program::Handler::LogFault ? "log_fault"
                                           : "log_ret";
}

std::vector<std::string> log_labels(const Program& p) {
  std::vector<std::string> out;
  auto add = [&](const std::string& l) {
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  };
  if (p.handler == Program::Handler::LogReturn || p.handler == Program::Handler::LogPause ||
      p.handler == Program::Handler::LogFault)
    add(log_label(p.handler));
  for (const auto& h : p.host)
    if (h.kind == syntax::HostKind::BindTba &&
        (h.name == "log_ret" || h.name == "log_pause" || h.name == "log_fault"))
      add(h.name);
  return out;
}

std::string vtable_name(size_t i) {
  return "vt" + std::to_string(i);
}

std::vector<std::string> buffer_names(const Program& p) {
  std::vector<std::string> out;
  if (!p.input.empty() && (uses(p, Kind::LoadInput) || uses(p, Kind::ScalarLoad)))
    out.push_back("in");
  if (uses(p, Kind::StoreScratch) || uses(p, Kind::LoadScratch)) out.push_back("scratch");
  if (uses(p, Kind::SharedStore) || uses(p, Kind::SharedLoad) || uses(p, Kind::Atomic))
    out.push_back("shared");
  out.push_back("out");
  if (uses_trap(p, TrapKind::StraddleEnd)) out.push_back("tail");
  if (p.count_atomics && uses(p, Kind::Atomic))
    for (const char* b : {"tally", "lanes", "execs", "lane_log", "warp_log"}) out.push_back(b);
  if (uses_counters(p)) out.push_back("counters");
  if (p.handler == Program::Handler::Record || p.handler == Program::Handler::Mark ||
      p.handler == Program::Handler::MarkPc)
    out.push_back("trec");
  if (!log_labels(p).empty()) {
    out.push_back("hlog");
    out.push_back("skip");
  }
  return out;
}

std::string print(const Program& p, Layout* layout) {
  if (layout) *layout = Layout{};
  return Printer(p, layout).run();
}

namespace {

template <typename Pred>
bool any_statement(const std::vector<Stmt>& b, const Pred& pred) {
  for (const auto& s : b)
    if (pred(s) || any_statement(s.body, pred) || any_statement(s.other, pred) ||
        any_statement(s.again, pred))
      return true;
  return false;
}
template <typename Pred>
bool any_statement(const Program& p, const Pred& pred) {
  if (any_statement(p.main, pred)) return true;
  for (const auto& f : p.functions)
    if (any_statement(f, pred)) return true;
  return false;
}

void count_kinds(const std::vector<Stmt>& b, std::map<Kind, uint64_t>& out) {
  for (const auto& s : b) {
    ++out[s.kind];
    count_kinds(s.body, out);
    count_kinds(s.other, out);
    count_kinds(s.again, out);
  }
}

}  // namespace

bool uses(const std::vector<Stmt>& b, Kind k) {
  return any_statement(b, [k](const Stmt& s) { return s.kind == k; });
}
bool uses(const Program& p, Kind k) {
  return any_statement(p, [k](const Stmt& s) { return s.kind == k; });
}

bool preempts(const Program& p) {
  return preemption_points(p) > 0;
}

size_t preemption_points(const Program& p) {
  return static_cast<size_t>(std::count_if(p.host.begin(), p.host.end(), [](const auto& h) {
    return h.kind == syntax::HostKind::Preempt;
  }));
}

size_t sys_routine_instructions() {
  static const size_t n = [] {
    size_t count = 0;
    std::string_view t = kSysRoutine;
    while (!t.empty()) {
      const size_t eol = t.find('\n');
      std::string_view l = t.substr(0, eol);
      t = eol == std::string_view::npos ? std::string_view{} : t.substr(eol + 1);
      l = l.substr(0, l.find(';'));
      while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.remove_suffix(1);
      while (!l.empty() && l.front() == ' ') l.remove_prefix(1);
      if (!l.empty() && !l.ends_with(':')) ++count;
    }
    return count;
  }();
  return n;
}

bool uses_trap(const Program& p, TrapKind k) {
  return any_statement(p, [k](const Stmt& s) {
    return s.kind == Kind::Trap &&
           static_cast<TrapKind>(s.slot % static_cast<int>(TrapKind::kCount)) == k;
  });
}

const std::vector<std::string>& commutative_atomics() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const std::string& mn : pools::mnemonics(pools::Id::Counter))
      v.push_back(mn.substr(mn.find('.') + 1));  // the operation after atom.
    return v;
  }();
  return ops;
}
int counter_word(const std::string& op) {
  const std::string k = op.substr(op.find('.') + 1);
  const auto& ops = commutative_atomics();
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i] == k) return static_cast<int>(i);
  return -1;
}
uint32_t counter_init(int word) {
  // and, min.u start all ones; min at the largest, max at the smallest signed value.
  static constexpr uint32_t init[] = {0,           0xffffffffu, 0,           0,
                                      0x7fffffffu, 0x80000000u, 0xffffffffu, 0};
  return init[word];
}

uint32_t Program::vregs() const {
  return vshared || uses_shared_temps(*this) ? kSharedBase + kSharedRegs : kVregs;
}

std::vector<const Operand*> operands_read(const Stmt& s) {
  std::vector<const Operand*> out;
  out.reserve(4);
  auto cond = [&] {
    if (s.cond.reuse) return;
    out.push_back(&s.cond.a);
    out.push_back(&s.cond.b);
  };
  switch (s.kind) {
    case Kind::Alu:
    case Kind::ScalarAlu:
    case Kind::SharedAlu:
      out.push_back(&s.a);
      if (!is_unary(s.op)) out.push_back(&s.b);
      break;
    case Kind::Select:
      cond();
      out.push_back(&s.a);
      out.push_back(&s.b);
      break;
    case Kind::StoreScratch:
    case Kind::Exchange:
    case Kind::Sys:
    case Kind::VCall:
      out.push_back(&s.a);
      break;
    case Kind::If:
    case Kind::Break:
    case Kind::Continue:
    case Kind::Ballot:
    case Kind::Vote:
    case Kind::Skip:
      cond();
      break;
    case Kind::Exit:
      if (!s.raw) cond();
      break;
    case Kind::Loop:
      if (s.limit_reg) out.push_back(&s.a);
      break;
    case Kind::Shfl:
      out.push_back(&s.b);
      break;
    case Kind::SharedStore:
      out.push_back(&s.a);
      if (s.slot % 2) out.push_back(&s.b);
      break;
    case Kind::SharedLoad:
      if (s.slot % 2) out.push_back(&s.b);
      break;
    case Kind::Atomic:
      if (atomic_takes_operand(s.op)) out.push_back(&s.a);
      if (s.slot != kCounterSlot && s.slot % 2) out.push_back(&s.b);
      break;
    case Kind::Trap:
      out.push_back(&s.a);
      out.push_back(&s.b);
      break;
    default:
      break;
  }
  return out;
}

bool uses_shared_temp(const Stmt& s) {
  if (s.kind == Kind::SharedAlu) return true;
  for (const Operand* o : operands_read(s))
    if (o->k == Operand::K::Shared) return true;
  return false;
}

bool uses_shared_temps(const Program& p) {
  return any_statement(p, [](const Stmt& s) { return uses_shared_temp(s); });
}

namespace {

bool exec_special(const Operand& o) {
  return o.k == Operand::K::Special && (o.v == static_cast<int32_t>(isa::Special::Exec) ||
                                        o.v == static_cast<int32_t>(isa::Special::ExecLo) ||
                                        o.v == static_cast<int32_t>(isa::Special::ExecHi));
}

// oracle.model.regions: what in a region's body (at nesting `depth`) breaks the
// model; `ready` holds the shared temporaries the region's top level has written.
std::string region_body_problem(const std::vector<Stmt>& b, unsigned& ready, int depth) {
  for (const Stmt& s : b) {
    switch (s.kind) {
      case Kind::Alu:
      case Kind::Select:
      case Kind::LoadInput:
      case Kind::StoreScratch:
      case Kind::LoadScratch:
      case Kind::If:
      case Kind::Loop:
      case Kind::Break:
      case Kind::Continue:
      case Kind::Exit:
      case Kind::PredOp:
      case Kind::Nop:
      case Kind::Jump:
      case Kind::ScalarAlu:
      case Kind::ScalarLoad:
      case Kind::SharedAlu:
        break;
      default:
        return "a " + std::string(kind_name(s.kind)) + " statement in a region";
    }
    for (const Operand* o : operands_read(s)) {
      // wave.modesel.safe: a scalar read before the region writes it would see the
      // previous pass's value (s5 is read only by the add after its own write).
      if (o->k == Operand::K::Scalar) return "s5 read in a region";
      if (exec_special(*o)) return "%exec read in a region";
      if (o->k == Operand::K::Shared && !((ready >> (std::max(0, o->v) % kSharedRegs)) & 1))
        return "v" + std::to_string(kSharedBase + std::max(0, o->v) % kSharedRegs) +
               " read in a region before the region's top level writes it";
    }
    // Scalar results in s13, read only by their own add: s5 could be read after the
    // region, where a pass's last write (one whose loop ran for some parts only)
    // need not be normal mode's.
    if ((s.kind == Kind::ScalarAlu || s.kind == Kind::ScalarLoad) && !s.region_scalar)
      return "a scalar statement in a region writes s5";
    // Every active lane writes it: later statements may read it.
    if (s.kind == Kind::SharedAlu && depth == 0) ready |= 1u << (std::max(0, s.slot) % kSharedRegs);
    for (const auto* child : {&s.body, &s.other, &s.again}) {
      unsigned inner = ready;
      if (auto d = region_body_problem(*child, inner, depth + 1); !d.empty()) return d;
    }
  }
  return "";
}

}  // namespace

std::string region_problem(const Program& p) {
  auto nested_region = [](const std::vector<Stmt>& b) {
    return any_statement(b, [](const Stmt& s) { return s.kind == Kind::Region; });
  };
  auto shared = [](const std::vector<Stmt>& b) {
    return any_statement(b, [](const Stmt& s) { return uses_shared_temp(s); });
  };
  for (const auto& f : p.functions)
    if (nested_region(f) || shared(f)) return "a function has a region or a shared temporary";
  for (const Stmt& s : p.main) {
    if (s.kind == Kind::Region) {
      unsigned ready = 0;
      if (auto d = region_body_problem(s.body, ready, 0); !d.empty()) return d;
      continue;
    }
    if (s.kind == Kind::SharedAlu || uses_shared_temp(s) || shared(s.body) || shared(s.other) ||
        shared(s.again))
      return "a shared temporary outside the regions";
    if (nested_region(s.body) || nested_region(s.other) || nested_region(s.again))
      return "a region below the top level of main";
  }
  return "";
}

Program without_regions(const Program& p) {
  Program q = p;
  q.vshared = false;
  q.main.clear();
  for (const Stmt& s : p.main) {
    if (s.kind == Kind::Region)
      q.main.insert(q.main.end(), s.body.begin(), s.body.end());
    else
      q.main.push_back(s);
  }
  return q;
}

bool raises(const Program& p) {
  return uses(p, Kind::Trap) || uses(p, Kind::Sys) || uses(p, Kind::VCall);
}

bool uses_counters(const Program& p) {
  return any_statement(
      p, [](const Stmt& s) { return s.kind == Kind::Atomic && s.slot == kCounterSlot; });
}

bool uses_warp_atomic(const Program& p) {
  return any_statement(
      p, [](const Stmt& s) { return s.kind == Kind::Atomic && s.op.starts_with("watom."); });
}

bool communicating(Kind k) {
  switch (k) {
    case Kind::Shfl:
    case Kind::ShflXor:
    case Kind::ReadLane:
    case Kind::Ballot:
    case Kind::Vote:
    case Kind::SharedStore:
    case Kind::SharedLoad:
    case Kind::Exchange:
    case Kind::Atomic:
    // Warp-level: they run once per warp whatever exec is, or read other lanes' state.
    case Kind::ScalarAlu:
    case Kind::ScalarLoad:
    case Kind::Skip:
    case Kind::CountedLoop:
    case Kind::Recurse:
    case Kind::ExecNarrow:
    case Kind::Barrier:
    case Kind::Trap:
    case Kind::Sys:
    case Kind::Spin:
    case Kind::VCall:
    case Kind::ExecClear:
      return true;
    default:
      return false;
  }
}

bool communicates(const Program& p) {
  return any_statement(p, [](const Stmt& s) {
    auto exec_special = [](const Operand& o) {
      return o.k == Operand::K::Scalar ||
             (o.k == Operand::K::Special && (o.v == static_cast<int32_t>(isa::Special::Exec) ||
                                             o.v == static_cast<int32_t>(isa::Special::ExecLo) ||
                                             o.v == static_cast<int32_t>(isa::Special::ExecHi)));
    };
    return communicating(s.kind) || exec_special(s.a) || exec_special(s.b) ||
           exec_special(s.cond.a) || exec_special(s.cond.b);
  });
}

size_t statement_count(const Program& p) {
  std::map<Kind, uint64_t> k = kind_counts(p);
  size_t n = 0;
  for (const auto& [kind, c] : k) n += c;
  return n;
}

std::map<Kind, uint64_t> kind_counts(const Program& p) {
  std::map<Kind, uint64_t> out;
  count_kinds(p.main, out);
  for (const auto& f : p.functions) count_kinds(f, out);
  return out;
}

}  // namespace simt::gen
