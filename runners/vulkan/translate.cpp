#include "translate.h"

#include <algorithm>
#include <sstream>
#include <string_view>

#include "isa/isa.h"

namespace simt::vulkan {
namespace {

using exec::DstKind;
using exec::Insn;
using exec::Src;
using exec::SrcKind;
using isa::Op;
using syntax::StmtKind;

// Thrown inside the translator only; becomes TranslateResult::unsupported.
struct Unsupported {
  std::string reason;
};

std::string u32(uint32_t v) {
  return std::to_string(v) + "u";
}

// VkSubgroupFeatureFlagBits the translation uses (the values are Vulkan's).
constexpr uint32_t kSubgroupBasic = 0x1, kSubgroupVote = 0x2, kSubgroupBallot = 0x8,
                   kSubgroupShuffle = 0x10;

// GLSL lines the translation may have (calls are inlined, so deep or recursive
// calls multiply the program): beyond this the shader is refused.
constexpr size_t kMaxLines = 200000;

// One open structured statement: an if entry or a loop entry of the mask stack
// (branch.mask.entry), emulated per invocation by bools named after `id`.
struct Frame {
  bool loop = false;
  uint32_t id = 0;
  int32_t loop_id = -1;  // if entries: the innermost loop around them (-1: none)
};

// A memory space of an access: a buffer or the workgroup's slm.
struct Space {
  std::string w;       // the GLSL array of its words
  std::string ints;    // buffers: the same words as ints (signed atomics)
  uint32_t bytes = 0;  // its size (mem.check)
  uint32_t index = 0;  // for events: index into exec::Program::buffers, or kSpaceSlm
  bool slm = false;
};

// Atomic operations, the same for atom.* and watom.* (atom.ops).
enum class AtomOp { Add, Sub, Min, Max, MinU, MaxU, And, Or, Xor, Xchg, Cas, Lock, Unlock };

AtomOp atom_op(Op op) {
  switch (op) {
    case Op::AtomAdd:
    case Op::WatomAdd:
      return AtomOp::Add;
    case Op::AtomSub:
    case Op::WatomSub:
      return AtomOp::Sub;
    case Op::AtomMin:
    case Op::WatomMin:
      return AtomOp::Min;
    case Op::AtomMax:
    case Op::WatomMax:
      return AtomOp::Max;
    case Op::AtomMinU:
    case Op::WatomMinU:
      return AtomOp::MinU;
    case Op::AtomMaxU:
    case Op::WatomMaxU:
      return AtomOp::MaxU;
    case Op::AtomAnd:
    case Op::WatomAnd:
      return AtomOp::And;
    case Op::AtomOr:
    case Op::WatomOr:
      return AtomOp::Or;
    case Op::AtomXor:
    case Op::WatomXor:
      return AtomOp::Xor;
    case Op::AtomXchg:
    case Op::WatomXchg:
      return AtomOp::Xchg;
    case Op::AtomCas:
    case Op::WatomCas:
      return AtomOp::Cas;
    case Op::AtomLock:
    case Op::WatomLock:
      return AtomOp::Lock;
    case Op::AtomUnlock:
    case Op::WatomUnlock:
      return AtomOp::Unlock;
    default:
      break;
  }
  throw Unsupported{"an atomic the translator does not know"};
}

class Translator {
 public:
  Translator(const host::Loaded& loaded, const TranslateOptions& opt)
      : loaded_(loaded), prog_(*loaded.program), cfg_(loaded.program->config), opt_(opt) {}

  Translation run() {
    check_launch();
    Translation t;
    t.subgroup_size = cfg_.wave;
    t.local_size_x = cfg_.wave * cfg_.warps;
    t.workgroups = cfg_.workgroups;
    t.total_warps = cfg_.total_warps();
    t.max_steps = cfg_.max_steps;
    t.exact_step_limit = opt_.exact_step_limit;
    if (opt_.exact_step_limit && t.total_warps != 1) {
      throw Unsupported{"an exact step limit in a launch of several warps"};
    }
    BufferBinding ctl;
    ctl.binding = 0;
    ctl.name = "control";
    ctl.bytes = (kCtlWarpSteps + t.total_warps) * 4;
    ctl.init.assign(ctl.bytes, 0);
    t.bindings.push_back(std::move(ctl));
    for (size_t i = 0; i < prog_.buffers.size(); ++i) {
      const auto& b = prog_.buffers[i];
      BufferBinding bb;
      bb.binding = static_cast<uint32_t>(i + 1);
      bb.name = b.name;
      bb.program_buffer = static_cast<int32_t>(i);
      bb.bytes = b.bytes;
      bb.init = b.init;
      bb.init.resize(std::max<size_t>(4, (b.bytes + 3) / 4 * 4), 0);
      bb.output = b.mode != syntax::BufferMode::In;
      t.bindings.push_back(std::move(bb));
      t.buffer_names.push_back(b.name);
    }
    if (t.bindings.size() > opt_.max_storage_buffers) {
      throw Unsupported{std::to_string(t.bindings.size()) +
                        " storage buffers (the program's and the control buffer); the device "
                        "allows " +
                        std::to_string(opt_.max_storage_buffers)};
    }
    signed_.assign(prog_.buffers.size(), false);
    for (const Insn& in : prog_.insns) {
      const isa::Family f = isa::info(in.op).family;
      if (f == isa::Family::Store || f == isa::Family::AtomLane || f == isa::Family::AtomWarp)
        t.writes_memory = true;
    }
    body();
    t.glsl = assemble();
    return t;
  }

 private:
  // state.launch: what the mapping warp = subgroup needs.
  void check_launch() {
    if (cfg_.wave != opt_.subgroup_size) {
      throw Unsupported{"wave " + std::to_string(cfg_.wave) +
                        " differs from the device's subgroup size " +
                        std::to_string(opt_.subgroup_size)};
    }
    if (uint64_t{cfg_.wave} * cfg_.warps > opt_.max_workgroup_invocations) {
      throw Unsupported{"a workgroup of " + std::to_string(cfg_.warps) + " warps of " +
                        std::to_string(cfg_.wave) + " lanes exceeds the device's " +
                        std::to_string(opt_.max_workgroup_invocations) + " invocations"};
    }
    // trap: a shader cannot stop its workgroup at an event and run handler code
    // (the runner does not declare the trap feature; spec/trap.md).
    if (prog_.handler || !prog_.vtables.empty() || !prog_.host.empty())
      throw Unsupported{"a trap handler, vector table or host script (the trap feature)"};
    if (prog_.size() > 60000) {
      // Keeps each warp's step count (at most kLoopBudget x the program size) in 32 bits.
      throw Unsupported{"programs of more than 60000 instructions"};
    }
    const struct {
      uint32_t bit;
      const char* name;
    } ops[] = {{kSubgroupBasic, "basic"},
               {kSubgroupVote, "vote"},
               {kSubgroupBallot, "ballot"},
               {kSubgroupShuffle, "shuffle"}};
    for (const auto& o : ops) {
      if (!(opt_.subgroup_operations & o.bit)) {
        throw Unsupported{std::string("the device has no subgroup ") + o.name +
                          " operations in compute shaders (the exec mask emulation needs them)"};
      }
    }
    // The slm words plus the barrier counter.
    if (uint64_t{(cfg_.slm + 3) / 4 * 4} + 16 > opt_.max_shared_memory) {
      throw Unsupported{"slm of " + std::to_string(cfg_.slm) + " bytes exceeds the device's " +
                        std::to_string(opt_.max_shared_memory) + " bytes of shared memory"};
    }
    // How each launch setting (exec/settings.def) maps onto the shader; a new row
    // does not compile here until it says.
    for (const exec::SettingInfo& s : exec::kSettings) {
      switch (s.id) {
        case exec::Setting::wave:        // the subgroup size (checked above)
        case exec::Setting::warps:       // subgroups per workgroup (checked above)
        case exec::Setting::workgroups:  // the dispatch's workgroups
        case exec::Setting::cores:       // read by %core only (state.launch.placement)
        case exec::Setting::simd:        // read by %simd only
        case exec::Setting::slm:         // a shared array (checked above)
        case exec::Setting::vregs:       // GLSL locals, as many as the program uses
        case exec::Setting::sregs:
        case exec::Setting::mask_depth:  // static depths, checked while translating
        case exec::Setting::call_depth:
        case exec::Setting::stack:      // a stack access is a space the translator does not know
        case exec::Setting::max_steps:  // the control buffer's step budget (run())
        case exec::Setting::policy:     // the device schedules (runner.own_scheduler)
        case exec::Setting::seed:
        case exec::Setting::livelock_check:  // not detected (no `livelock` capability)
          break;
      }
    }
  }

  // ---- operands -------------------------------------------------------------

  std::string src(const Src& s) {
    switch (s.kind) {
      case SrcKind::None:
        return "0u";
      case SrcKind::VReg:
        vregs_ = std::max(vregs_, s.index + 1);
        return "v" + std::to_string(s.index);
      case SrcKind::LaneId:
        return "lane";  // state.special.lane
      case SrcKind::Imm:
        return u32(s.imm);
      case SrcKind::SReg:
        sregs_ = std::max(sregs_, s.index + 1);
        return "s" + std::to_string(s.index);
      case SrcKind::Special:
        switch (static_cast<isa::Special>(s.index)) {
          case isa::Special::Warp:
            return "warp";  // state.special.warp
          case isa::Special::GWarp:
            return "gwarp";
          case isa::Special::Wg:
            return "wg";  // state.special.wg
          case isa::Special::Core:
            return "(wg % " + u32(cfg_.cores) + ")";  // state.special.core, state.launch.placement
          case isa::Special::Wave:
            return u32(cfg_.wave);  // state.special.size
          case isa::Special::Simd:
            return u32(cfg_.simd_width());
          case isa::Special::NWarps:
            return u32(cfg_.warps);
          case isa::Special::NWg:
            return u32(cfg_.workgroups);
          case isa::Special::Exec:
          case isa::Special::ExecLo:
            return "exec_mask.x";  // state.special.exec: read before the instruction (instr)
          case isa::Special::ExecHi:
            return "exec_mask.y";
          default:
            break;
        }
        break;
    }
    throw Unsupported{"an operand the translator does not know"};
  }

  std::string pred(uint8_t p, bool neg) {
    std::string s;
    if (p == isa::kPredTrue) {
      s = "true";  // state.reg.pt
    } else {
      preds_ = std::max<uint32_t>(preds_, p + 1u);
      s = "p" + std::to_string(p);
    }
    return neg ? "(!" + s + ")" : s;
  }

  std::string dst(const Insn& in) {
    switch (in.dst_kind) {
      case DstKind::V:
        vregs_ = std::max(vregs_, in.dst + 1);
        return "v" + std::to_string(in.dst);
      case DstKind::S:
        sregs_ = std::max(sregs_, in.dst + 1);
        return "s" + std::to_string(in.dst);
      case DstKind::P:
        preds_ = std::max(preds_, in.dst + 1);
        return "p" + std::to_string(in.dst);
      case DstKind::Special:
        throw Unsupported{"writes to %exec (mov to a special register)"};
      case DstKind::None:
        break;
    }
    throw Unsupported{"an instruction without destination"};
  }

  // alu.form / alu.form.scalar: the vector form writes active lanes only; the
  // scalar form runs once per warp whatever exec is (every invocation computes it).
  void assign(const Insn& in, const std::string& expr) {
    if (in.dst_kind == DstKind::Special) {
      // state.special.exec: `mov %exec*, A` (scalar form only, valid.*): every
      // invocation computes A and takes its own bit; lanes that are not live stay
      // off; the mask stack (the frames' bools) is untouched.
      const std::string bit = "((" + expr + " >> (lane & 31u)) & 1u) != 0u";
      switch (static_cast<isa::Special>(in.dst)) {
        case isa::Special::Exec:  // bits 0-31 replaced, 32-63 cleared
          line("act = live && lane < 32u && " + bit + ";");
          return;
        case isa::Special::ExecLo:  // bits 0-31 replaced
          line("if (lane < 32u) act = live && " + bit + ";");
          return;
        case isa::Special::ExecHi:  // bits 32-63 replaced
          line("if (lane >= 32u) act = live && " + bit + ";");
          return;
        default:
          break;
      }
    }
    std::string d = dst(in);
    if (in.dst_kind == DstKind::S) {
      line(d + " = " + expr + ";");
    } else {
      line("if (act) " + d + " = " + expr + ";");
    }
  }

  // ---- output ---------------------------------------------------------------

  void line(const std::string& s) {
    if (++lines_ > kMaxLines) {
      throw Unsupported{"the shader would exceed " + std::to_string(kMaxLines) +
                        " lines (calls are inlined: deep or recursive calls multiply the program)"};
    }
    code_ << std::string(indent_ * 2, ' ') << s << '\n';
  }
  void step() { line("steps += 1u;"); }  // exec.step: one committed step of this warp

  // The start of the instruction at cur_pc_. With exact_step_limit (a launch of one
  // warp), exec.step.order: once max_steps steps are committed and the warp is not
  // done, the launch ends step_limit before this instruction runs.
  void begin(const std::string& text) {
    line("// pc " + std::to_string(cur_pc_) + ": " + text);
    if (opt_.exact_step_limit) {
      line("if (steps >= " + u32(step_cap()) + ") { note_flags(" + u32(kFlagStepLimit) +
           "); return; }");
    }
  }

  // The warp raises an event and ends (exec.commit: nothing of the instruction is
  // committed). `lane`, `addr` and `space` are GLSL expressions.
  void raise(isa::Event e, const std::string& lane, const std::string& addr = "0u",
             const std::string& space = "0u") {
    line("raise_event(" + u32(static_cast<uint32_t>(e)) + ", " + u32(cur_pc_) + ", " + lane + ", " +
         addr + ", " + space + ");");
    line("return;");
  }

  std::string mnemonic(Op op) { return std::string(isa::info(op).mnemonic); }

  // ---- statements -------------------------------------------------------------

  void body() {
    indent_ = 1;
    // Each statement's first PC in the expanded program (branch.struct.expand: a
    // label takes none, endloop three, every other statement one).
    const auto& stmts = loaded_.ast.stmts;
    stmt_pc_.resize(stmts.size());
    uint32_t pc = 0;
    for (size_t i = 0; i < stmts.size(); ++i) {
      stmt_pc_[i] = pc;
      pc += stmts[i].kind == StmtKind::Label ? 0 : stmts[i].kind == StmtKind::EndLoop ? 3 : 1;
    }
    if (pc != prog_.size()) throw Unsupported{"the AST and the expanded program disagree"};
    context(0, true);
  }

  // Translates the statements from index `i` along the fall-through path of one
  // context (valid.flow.calls): the program's entry, which ends at an exit with no
  // entry of its own open (valid.flow.end), or a called context, which ends at its
  // `ret`. Without raw branches the path is the statements in order.
  void context(size_t i, bool entry) {
    const auto& stmts = loaded_.ast.stmts;
    const size_t base = frames_.size();
    auto own = [&](const char* what) {
      if (frames_.size() <= base) {
        throw Unsupported{std::string(what) +
                          " closing a block its caller opened (possible only without flow "
                          "validation)"};
      }
    };
    for (; i < stmts.size(); ++i) {
      const auto& st = stmts[i];
      pc_ = stmt_pc_[i];
      switch (st.kind) {
        case StmtKind::Label:
          break;
        case StmtKind::Instr:
          if (st.op == Op::Call) {
            call_(at(Op::Call));
          } else if (st.op == Op::Ret) {
            at(Op::Ret);
            begin("ret");
            if (call_depth_ == 0) {
              raise(isa::Event::CallUnderflow, "0xffffffffu");  // branch.ret
              break;
            }
            if (frames_.size() != base) {
              throw Unsupported{"ret with a structured block of the callee open"};
            }
            step();  // branch.ret: back to the instruction after the call
            return;
          } else {
            instr(at(st.op));
            // valid.flow.end: in the entry context, an exit with no entry open ends
            // the warp (every live lane is active then).
            if (st.op == Op::Exit && entry && frames_.empty()) return;
          }
          break;
        case StmtKind::If:
          if_(at(Op::Push));
          break;
        case StmtKind::Else:
          own("else");
          else_(at(Op::Invert));
          break;
        case StmtKind::EndIf:
          own("endif");
          endif_(at(Op::Pop));
          break;
        case StmtKind::Loop:
          loop_(at(Op::LPush));
          break;
        case StmtKind::Break:
          brk_cont(at(Op::Brk), false, base);
          break;
        case StmtKind::Continue:
          brk_cont(at(Op::Cont), true, base);
          break;
        case StmtKind::EndLoop:
          own("endloop");
          endloop_();
          break;
      }
    }
    // Falling through the end with live lanes (possible only without flow
    // validation, valid.flow.end): event.pc_range, a control event without lane.
    cur_pc_ = static_cast<uint32_t>(prog_.size());
    line("// end of the program: event.pc_range");
    raise(isa::Event::PcRange, "0xffffffffu");
    if (!entry) throw Unsupported{"a called context that runs past the end of the program"};
  }

  // The expanded instruction at the current PC, checked against the AST (the
  // expansion of branch.struct.expand, in the same order).
  const Insn& at(Op op) {
    if (pc_ >= prog_.size() || prog_.insns[pc_].op != op) {
      throw Unsupported{"the AST and the expanded program disagree at pc " + std::to_string(pc_)};
    }
    cur_pc_ = pc_;
    return prog_.insns[pc_++];
  }

  void instr(const Insn& in) {
    begin(prog_.text[cur_pc_]);
    // state.special.exec: %exec is read here, in subgroup-uniform control flow, for
    // every invocation; a ballot inside the instruction's expression could run in
    // only some invocations (the branches of a ?: are evaluated lazily).
    auto reads_exec = [](const Src& s) {
      if (s.kind != SrcKind::Special) return false;
      auto sp = static_cast<isa::Special>(s.index);
      return sp == isa::Special::Exec || sp == isa::Special::ExecLo || sp == isa::Special::ExecHi;
    };
    if (reads_exec(in.a) || reads_exec(in.b) || reads_exec(in.c)) {
      uses_exec_mask_ = true;
      line("exec_mask = subgroupBallot(act);");
    }
    const auto& info = isa::info(in.op);
    using F = isa::Family;
    switch (info.family) {
      case F::Unary:
      case F::Binary:
        alu(in);
        break;
      case F::Compare:
        compare(in);
        break;
      case F::Select:  // alu.sel
        assign(in, "(" + pred(in.pa, in.na) + " ? " + src(in.a) + " : " + src(in.b) + ")");
        break;
      case F::PredOp:
        pred_op(in);
        break;
      case F::Load:
      case F::Store:
        memory(in);
        break;
      case F::Ballot:
      case F::Vote:
      case F::ReadLane:
      case F::Shuffle:
        xlane(in);
        break;
      case F::AtomLane:
        atom_lane(in);
        break;
      case F::AtomWarp:
        atom_warp(in);
        break;
      case F::Control:
        control(in);
        return;  // control() counts its own step
    }
    step();
  }

  void alu(const Insn& in) {
    std::string a = src(in.a), b = in.op == Op::Mov || in.op == Op::Not || in.op == Op::Popc
                                       ? std::string()
                                       : src(in.b);
    std::string e;
    switch (in.op) {
      case Op::Mov:  // alu.mov
        e = a;
        break;
      case Op::Not:  // alu.not
        e = "~" + a;
        break;
      case Op::Popc:  // alu.popc
        e = "uint(bitCount(" + a + "))";
        break;
      case Op::Add:  // alu.add: GLSL uint arithmetic wraps modulo 2^32
        e = "(" + a + " + " + b + ")";
        break;
      case Op::Sub:  // alu.sub
        e = "(" + a + " - " + b + ")";
        break;
      case Op::Mul:  // alu.mul
        e = "(" + a + " * " + b + ")";
        break;
      case Op::MulHi:  // alu.mulhi
        e = "mulhi_s(" + a + ", " + b + ")";
        break;
      case Op::MulHiU:
        e = "mulhi_u(" + a + ", " + b + ")";
        break;
      case Op::And:  // alu.bitwise
        e = "(" + a + " & " + b + ")";
        break;
      case Op::Or:
        e = "(" + a + " | " + b + ")";
        break;
      case Op::Xor:
        e = "(" + a + " ^ " + b + ")";
        break;
      case Op::Shl:  // alu.shift: by B mod 32 (GLSL leaves shifts >= 32 undefined)
        e = "(" + a + " << (" + b + " & 31u))";
        break;
      case Op::Shr:
        e = "(" + a + " >> (" + b + " & 31u))";
        break;
      case Op::Sra:  // >> on int fills with the sign bit
        e = "uint(int(" + a + ") >> int(" + b + " & 31u))";
        break;
      case Op::Min:  // alu.minmax
        e = "uint(min(int(" + a + "), int(" + b + ")))";
        break;
      case Op::Max:
        e = "uint(max(int(" + a + "), int(" + b + ")))";
        break;
      case Op::MinU:
        e = "min(" + a + ", " + b + ")";
        break;
      case Op::MaxU:
        e = "max(" + a + ", " + b + ")";
        break;
      case Op::Div:
      case Op::DivU:
      case Op::Rem:
      case Op::RemU:
        divide(in, a, b);
        return;
      default:
        throw Unsupported{"`" + mnemonic(in.op) + "`"};
    }
    assign(in, e);
  }

  // alu.div, alu.rem, alu.div.zero. The helpers never divide by zero (a lane that
  // is inactive may hold a zero divisor) nor compute -2^31 / -1 in hardware.
  void divide(const Insn& in, const std::string& a, const std::string& b) {
    const char* fn = in.op == Op::Div    ? "div_s"
                     : in.op == Op::DivU ? "div_u"
                     : in.op == Op::Rem  ? "rem_s"
                                         : "rem_u";
    line("{");
    ++indent_;
    line("uint x = " + a + ";");
    line("uint y = " + b + ";");
    if (in.dst_kind == DstKind::S) {
      // alu.div.zero, scalar form: raised whatever exec is; the event has no lane.
      line("if (y == 0u) {");
      ++indent_;
      raise(isa::Event::DivZero, "0xffffffffu");
      --indent_;
      line("}");
    } else {
      // The lowest active lane with a zero divisor (event.lane); none with no active lane.
      line("uvec4 bad = subgroupBallot(act && y == 0u);");
      line("if (bad != uvec4(0u)) {");
      ++indent_;
      raise(isa::Event::DivZero, "subgroupBallotFindLSB(bad)");
      --indent_;
      line("}");
    }
    assign(in, std::string(fn) + "(x, y)");
    --indent_;
    line("}");
  }

  // alu.cmp: bits of active lanes only.
  void compare(const Insn& in) {
    std::string a = src(in.a), b = src(in.b);
    auto s = [&](const char* op) { return "(int(" + a + ") " + op + " int(" + b + "))"; };
    auto u = [&](const char* op) { return "(" + a + " " + op + " " + b + ")"; };
    std::string e;
    switch (in.op) {
      case Op::CmpEq:
        e = u("==");
        break;
      case Op::CmpNe:
        e = u("!=");
        break;
      case Op::CmpLt:
        e = s("<");
        break;
      case Op::CmpLe:
        e = s("<=");
        break;
      case Op::CmpGt:
        e = s(">");
        break;
      case Op::CmpGe:
        e = s(">=");
        break;
      case Op::CmpLtU:
        e = u("<");
        break;
      case Op::CmpLeU:
        e = u("<=");
        break;
      case Op::CmpGtU:
        e = u(">");
        break;
      case Op::CmpGeU:
        e = u(">=");
        break;
      default:
        throw Unsupported{"`" + mnemonic(in.op) + "`"};
    }
    assign(in, e);
  }

  // alu.pred
  void pred_op(const Insn& in) {
    std::string p = pred(in.pa, in.na);
    std::string e;
    switch (in.op) {
      case Op::PAnd:
        e = "(" + p + " && " + pred(in.pb, in.nb) + ")";
        break;
      case Op::POr:
        e = "(" + p + " || " + pred(in.pb, in.nb) + ")";
        break;
      case Op::PXor:
        e = "(" + p + " != " + pred(in.pb, in.nb) + ")";
        break;
      case Op::PMov:
        e = p;
        break;
      default:
        throw Unsupported{"`" + mnemonic(in.op) + "`"};
    }
    assign(in, e);
  }

  // ---- cross-lane ------------------------------------------------------------------

  // xlane.*: subgroup ballots and shuffles in subgroup-uniform control flow. A source
  // lane counts only if it is below wave and active (xlane.inactive); the shuffle's
  // index is masked to the subgroup so that it is always defined.
  void xlane(const Insn& in) {
    const std::string w1 = u32(cfg_.wave - 1);
    const std::string wv = u32(cfg_.wave);
    switch (in.op) {
      case Op::Ballot:  // xlane.ballot: scalar, whatever exec is
        line(dst(in) + " = subgroupBallot(act && " + pred(in.pa, in.na) + ").x;");
        return;
      case Op::BallotHi:
        line(dst(in) + " = subgroupBallot(act && " + pred(in.pa, in.na) + ").y;");
        return;
      case Op::VoteAny:  // xlane.vote: active lanes only
        line("{ bool r = subgroupAny(act && " + pred(in.pa, in.na) + "); if (act) " + dst(in) +
             " = r; }");
        return;
      case Op::VoteAll:
        line("{ bool r = subgroupAll(!act || " + pred(in.pa, in.na) + "); if (act) " + dst(in) +
             " = r; }");
        return;
      case Op::ReadLane:  // xlane.readlane: L is uniform
        line("{");
        ++indent_;
        line("uint l = " + src(in.b) + ";");
        line("uint v = subgroupShuffle(" + src(in.a) + ", l & " + w1 + ");");
        line("bool on = l < " + wv + " && subgroupBallotBitExtract(subgroupBallot(act), l & " + w1 +
             ");");
        line(dst(in) + " = on ? v : 0u;");
        --indent_;
        line("}");
        return;
      case Op::Shfl:  // xlane.shfl: every lane reads before any writes
      case Op::ShflXor:
        line("{");
        ++indent_;
        line("uint i = " + std::string(in.op == Op::ShflXor ? "lane ^ " : "") + src(in.b) + ";");
        line("uint v = subgroupShuffle(" + src(in.a) + ", i & " + w1 + ");");
        // A shuffle of act, not subgroupBallotBitExtract: with an index that differs
        // between invocations lavapipe's gave false for active lanes.
        line("bool on = i < " + wv + " && subgroupShuffle(act, i & " + w1 + ");");
        line("if (act) " + dst(in) + " = on ? v : 0u;");
        --indent_;
        line("}");
        return;
      default:
        break;
    }
    throw Unsupported{"cross-lane instruction `" + mnemonic(in.op) + "`"};
  }

  // ---- memory -----------------------------------------------------------------------

  Space space(const Insn& in) {
    Space s;
    if (in.space == exec::kSpaceSlm) {
      // state.memory.slm: the workgroup's shared words.
      uses_slm_ = true;
      s.w = "slm";
      s.bytes = cfg_.slm;
      s.index = exec::kSpaceSlm;
      s.slm = true;
      return s;
    }
    if (in.space >= prog_.buffers.size())
      throw Unsupported{"a memory space the translator does not know"};
    s.w = "b" + std::to_string(in.space) + ".w";
    s.ints = "b" + std::to_string(in.space) + "s.w";
    s.bytes = prog_.buffers[in.space].bytes;
    s.index = in.space;
    return s;
  }

  // True when the access's address is a constant that passes mem.check.
  static bool constant_ok(const Insn& in, const Space& sp, uint32_t n) {
    const Src& base = in.a;
    if (base.kind != SrcKind::None && base.kind != SrcKind::Imm) return false;
    uint32_t a = (base.kind == SrcKind::Imm ? base.imm : 0u) + in.offset;
    return a % n == 0 && uint64_t{a} + n <= sp.bytes;
  }

  // mem.check for an access of n bytes at `a` (a GLSL variable): misaligned first,
  // then out of bounds. `lanes`: every active lane is checked and the lowest failing
  // one reported (event.lane); otherwise once per warp and without lane
  // (mem.load.scalar). Proven absent for constant addresses.
  void check_access(const Insn& in, const Space& sp, uint32_t n, bool lanes) {
    if (constant_ok(in, sp, n)) return;
    line("bool mis = (a & " + u32(n - 1) + ") != 0u;");
    line(std::string("bool oob = ") + (sp.bytes < n ? "true" : "a > " + u32(sp.bytes - n)) + ";");
    const std::string mis = u32(static_cast<uint32_t>(isa::Event::MemMisaligned));
    const std::string oob = u32(static_cast<uint32_t>(isa::Event::MemOutOfBounds));
    if (lanes) {
      line("uvec4 bad = subgroupBallot(act && (mis || oob));");
      line("if (bad != uvec4(0u)) {");
      ++indent_;
      line("uint l = subgroupBallotFindLSB(bad);");
      line("raise_event(subgroupShuffle(mis, l) ? " + mis + " : " + oob + ", " + u32(cur_pc_) +
           ", l, subgroupShuffle(a, l), " + u32(sp.index) + ");");
    } else {
      line("if (mis || oob) {");
      ++indent_;
      line("raise_event(mis ? " + mis + " : " + oob + ", " + u32(cur_pc_) + ", 0xffffffffu, a, " +
           u32(sp.index) + ");");
    }
    line("return;");
    --indent_;
    line("}");
  }

  // mem.consistency: later instructions of every lane of the warp see the stores.
  void store_fence(const Space& sp) {
    line(sp.slm ? "subgroupMemoryBarrierShared();" : "subgroupMemoryBarrierBuffer();");
    line("subgroupBarrier();");
  }

  // mem.address, mem.check, mem.load, mem.store, mem.store.order.
  void memory(const Insn& in) {
    const bool store = isa::info(in.op).family == isa::Family::Store;
    uint32_t n = 4;
    switch (in.op) {
      case Op::LdU8:
      case Op::LdS8:
      case Op::St8:
        n = 1;
        break;
      case Op::LdU16:
      case Op::LdS16:
      case Op::St16:
        n = 2;
        break;
      default:
        break;
    }
    const Space sp = space(in);
    // Stores have no scalar form (mem.store): they run per active lane and their
    // events carry the lane even with a uniform address (event.lane).
    const bool lanes = store || in.dst_kind == DstKind::V;
    line("{");
    ++indent_;
    line("uint a = " + src(in.a) + " + " + u32(in.offset) + ";");  // mem.address: wraps
    check_access(in, sp, n, lanes);
    const std::string word = sp.w + "[a >> 2]";
    if (store) {
      // mem.store.order: of the active lanes writing one location (same size, aligned:
      // the same address), the highest one's value remains; the others do not write.
      line("uint value = " + src(in.b) + ";");
      line("bool loses = store_loses(a, act);");
      if (n == 4) {
        line("if (act && !loses) " + word + " = value;");
      } else {
        // Sub-word: clear then set the bytes in the containing word, atomically, so
        // that other lanes' and warps' bytes of the word are kept.
        const std::string mask = n == 1 ? "0xffu" : "0xffffu";
        line("uint sh = (a & 3u) * 8u;");
        line("if (act && !loses) {");
        ++indent_;
        line("atomicAnd(" + word + ", ~(" + mask + " << sh));");
        line("atomicOr(" + word + ", (value & " + mask + ") << sh);");
        --indent_;
        line("}");
      }
      store_fence(sp);
    } else {
      std::string e = word;
      const std::string off = "int((a & 3u) * 8u)";
      if (in.op == Op::LdU8 || in.op == Op::LdU16) {
        e = "bitfieldExtract(" + word + ", " + off + ", " + std::to_string(n * 8) + ")";
      } else if (in.op == Op::LdS8 || in.op == Op::LdS16) {
        e = "uint(bitfieldExtract(int(" + word + "), " + off + ", " + std::to_string(n * 8) + "))";
      }
      assign(in, e);
    }
    --indent_;
    line("}");
  }

  // ---- atomics ----------------------------------------------------------------------

  // The GLSL atomic doing `op` on word `i` (a GLSL expression) of the space with
  // operands x and y; its value is the old word.
  std::string atomic_call(AtomOp op, const Space& sp, const std::string& i) {
    const std::string w = sp.w + "[" + i + "]";
    switch (op) {
      case AtomOp::Add:
        return "atomicAdd(" + w + ", x)";
      case AtomOp::Sub:
        return "atomicAdd(" + w + ", 0u - x)";
      case AtomOp::MinU:
        return "atomicMin(" + w + ", x)";
      case AtomOp::MaxU:
        return "atomicMax(" + w + ", x)";
      case AtomOp::And:
        return "atomicAnd(" + w + ", x)";
      case AtomOp::Or:
        return "atomicOr(" + w + ", x)";
      case AtomOp::Xor:
        return "atomicXor(" + w + ", x)";
      case AtomOp::Xchg:
        return "atomicExchange(" + w + ", x)";
      case AtomOp::Cas:
        return "atomicCompSwap(" + w + ", x, y)";
      case AtomOp::Lock:  // atom.lock: compare-and-swap of 0 with 1
        return "atomicCompSwap(" + w + ", 0u, 1u)";
      case AtomOp::Unlock:  // atom.unlock: stores 0
        return "atomicExchange(" + w + ", 0u)";
      case AtomOp::Min:
      case AtomOp::Max:
        if (sp.slm) {
          // Shared memory has one type: a compare-and-swap that reports losing it.
          uses_slm_signed_ = true;
          return std::string(op == AtomOp::Min ? "slm_smin" : "slm_smax") + "(" + i + ", x)";
        }
        signed_[sp.index] = true;
        return "uint(" + std::string(op == AtomOp::Min ? "atomicMin" : "atomicMax") + "(" +
               sp.ints + "[" + i + "], int(x)))";
    }
    return "0u";
  }

  // The word's new value from `old` (atom.ops).
  static std::string new_value(AtomOp op) {
    switch (op) {
      case AtomOp::Add:
        return "old + x";
      case AtomOp::Sub:
        return "old - x";
      case AtomOp::Min:
        return "uint(min(int(old), int(x)))";
      case AtomOp::Max:
        return "uint(max(int(old), int(x)))";
      case AtomOp::MinU:
        return "min(old, x)";
      case AtomOp::MaxU:
        return "max(old, x)";
      case AtomOp::And:
        return "old & x";
      case AtomOp::Or:
        return "old | x";
      case AtomOp::Xor:
        return "old ^ x";
      case AtomOp::Xchg:
        return "x";
      case AtomOp::Cas:
        return "old == x ? y : old";
      case AtomOp::Lock:
        return "old == 0u ? 1u : old";
      case AtomOp::Unlock:
        return "0u";
    }
    return "old";
  }

  // The destination's value from `old`: old, or the lock results (atom.lock, atom.unlock).
  static std::string result(AtomOp op) {
    if (op == AtomOp::Lock) return "(old == 0u ? 1u : 0u)";
    if (op == AtomOp::Unlock) return "(old != 0u ? 1u : 0u)";
    return "old";
  }

  void atom_operands(const Insn& in) {
    line("uint a = " + src(in.a) + " + " + u32(in.offset) + ";");  // atom.address
    line("uint x = " + src(in.b) + ";");
    line("uint y = " + src(in.c) + ";");
  }

  // atom.lane, atom.lane.order, atom.lane.check: every active lane checked first;
  // then one lane at a time, in ascending order, does its atomic (one GLSL atomic per
  // lane, ordered by subgroup barriers), each seeing the memory left by the ones before.
  void atom_lane(const Insn& in) {
    const AtomOp op = atom_op(in.op);
    const Space sp = space(in);
    line("{");
    ++indent_;
    atom_operands(in);
    check_access(in, sp, 4, true);
    line("uint old = 0u;");
    line("uvec4 am = subgroupBallot(act);");
    for (uint32_t l = 0; l < cfg_.wave; ++l) {
      line("if (subgroupBallotBitExtract(am, " + u32(l) + ")) {");
      ++indent_;
      line("if (lane == " + u32(l) + ") old = " + atomic_call(op, sp, "a >> 2") + ";");
      store_fence(sp);
      --indent_;
      line("}");
    }
    if (cfg_.total_warps() > 1) {
      // atom.step: no other warp acts between the lanes. Each active lane's next
      // active lane on the same word must have seen this lane's new value; if not,
      // another warp's atomic came between them.
      line("uint nw = " + new_value(op) + ";");
      line("bool found = false, seen_other = false;");
      for (uint32_t d = 1; d < cfg_.wave; ++d) {
        line(
            "{ uint j = min(lane + " + u32(d) + ", " + u32(cfg_.wave - 1) + "); bool on = lane + " +
            u32(d) + " < " + u32(cfg_.wave) +
            " && subgroupShuffle(act, j); uint oa = subgroupShuffle(a, j); uint oo = "
            "subgroupShuffle(old, j); if (!found && on && oa == a) { found = true; seen_other = oo "
            "!= nw; } }");
      }
      line("if (subgroupAny(act && seen_other)) note_flags(" + u32(kFlagAtomicInterleaved) + ");");
    }
    line("if (act) " + dst(in) + " = " + result(op) + ";");
    --indent_;
    line("}");
  }

  // atom.warp, atom.warp.check, atom.warp.empty: once, for the lowest active lane,
  // with its address and operands; the old value goes to every active lane.
  void atom_warp(const Insn& in) {
    const AtomOp op = atom_op(in.op);
    const Space sp = space(in);
    line("{");
    ++indent_;
    atom_operands(in);
    line("uvec4 am = subgroupBallot(act);");
    line("if (am != uvec4(0u)) {");
    ++indent_;
    line("uint l = subgroupBallotFindLSB(am);");
    line("uint la = subgroupShuffle(a, l);");
    if (!constant_ok(in, sp, 4)) {
      line("bool mis = (la & 3u) != 0u;");
      line(std::string("bool oob = ") + (sp.bytes < 4 ? "true" : "la > " + u32(sp.bytes - 4)) +
           ";");
      line("if (mis || oob) {");
      ++indent_;
      line("raise_event(mis ? " + u32(static_cast<uint32_t>(isa::Event::MemMisaligned)) + " : " +
           u32(static_cast<uint32_t>(isa::Event::MemOutOfBounds)) + ", " + u32(cur_pc_) +
           ", l, la, " + u32(sp.index) + ");");
      line("return;");
      --indent_;
      line("}");
    }
    line("x = subgroupShuffle(x, l);");
    line("y = subgroupShuffle(y, l);");
    line("uint old = 0u;");
    line("if (lane == l) old = " + atomic_call(op, sp, "la >> 2") + ";");
    line("old = subgroupShuffle(old, l);");
    store_fence(sp);
    line("if (act) " + dst(in) + " = " + result(op) + ";");
    --indent_;
    line("}");
    --indent_;
    line("}");
  }

  // ---- control ----------------------------------------------------------------------

  void control(const Insn& in) {
    switch (in.op) {
      case Op::Nop:  // branch.nop
        step();
        return;
      case Op::Exit:
        // branch.exit: the active lanes retire; every restore below ands with `live`,
        // which removes them from saved and other of every mask-stack entry.
        line("live = live && !act;");
        line("act = false;");
        step();
        line("if (!subgroupAny(live)) {  // the warp is done");
        ++indent_;
        line("return;");
        --indent_;
        line("}");
        return;
      case Op::Bar:
        bar();
        return;
      default:
        break;
    }
    // Jumps and explicit mask-stack instructions: only the structured statements are
    // translated.
    throw Unsupported{"branch primitive `" + mnemonic(in.op) +
                      "` (only structured if/else/endif and loop/endloop are translated)"};
  }

  // bar.arrive, bar.release, bar.exited, bar.divergent: executed by the warp whatever
  // exec is. With one warp per workgroup the barrier releases at once. Otherwise each
  // arrival adds one to the workgroup's shared counter before a barrier(); every warp
  // of the workgroup is then at a barrier() either arriving at a `bar` or, once it has
  // ended, in drain() (which keeps attending the barriers). After the barrier() each
  // reads the counter (a second barrier() keeps the next round's arrivals out of the
  // read): if fewer than `warps` warps arrived in this round, some warp ended before
  // arriving, the barrier can never complete and the arriving warps are blocked
  // (exec.status.deadlock). Memory written before the barrier is visible after it.
  void bar() {
    step();  // bar.arrive is a step, also when the barrier never completes
    if (cfg_.warps == 1) return;
    uses_bar_ = true;
    line("if (subgroupElect()) atomicAdd(bar_arrived, 1u);");
    line("memoryBarrierShared();");
    line("memoryBarrierBuffer();");
    line("barrier();");
    line("{");
    ++indent_;
    line("uint at = bar_arrived;");
    line("uint ended = bar_ended;");
    line("barrier();");
    line("uint arrived = at - bar_seen;");
    line("bar_seen = at;");
    // Every warp is either arriving or ended; otherwise barrier() did not wait for all.
    line("if (arrived + ended != " + u32(cfg_.warps) + ") { note_flags(" + u32(kFlagBarrierEarly) +
         "); return; }");
    line("if (arrived != " + u32(cfg_.warps) + ") {  // bar.exited: blocked forever");
    ++indent_;
    line("if (subgroupElect()) atomicAdd(ctl.w[" + u32(kCtlBlocked) + "], 1u);");
    line("return;");
    --indent_;
    line("}");
    --indent_;
    line("}");
  }

  // branch.call: inlined. The PC stack's depth is the static depth of inlining, so
  // call_overflow is raised where the reference raises it (recursion included: without
  // raw branches every call runs whatever exec is, so recursion always reaches it
  // unless the warp ends first).
  void call_(const Insn& in) {
    begin(prog_.text[cur_pc_]);
    if (call_depth_ >= cfg_.call_depth) {
      raise(isa::Event::CallOverflow, "0xffffffffu");
      return;
    }
    step();
    const auto& stmts = loaded_.ast.stmts;
    size_t target = stmts.size();
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (stmt_pc_[i] == in.target && stmts[i].kind != StmtKind::Label) {
        target = i;
        break;
      }
    }
    if (target == stmts.size()) {
      throw Unsupported{"a call whose target is not the start of a statement"};
    }
    const size_t saved_pc = pc_;
    ++call_depth_;
    context(target, false);
    --call_depth_;
    pc_ = saved_pc;
  }

  // branch.mask.overflow: the static depth of the structured statements (inlined
  // callees included) is the mask stack's depth.
  bool push_frame(Frame f) {
    frames_.push_back(f);
    if (frames_.size() > cfg_.mask_depth) {
      raise(isa::Event::MaskOverflow, "0xffffffffu");
      return false;
    }
    return true;
  }

  int32_t innermost_loop() const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      if (it->loop) return static_cast<int32_t>(it->id);
    return -1;
  }

  // branch.struct.if / branch.push: push (if, exec, exec and not P); exec = exec and P.
  void if_(const Insn& in) {
    Frame f{false, next_id_++, innermost_loop()};
    std::string id = std::to_string(f.id);
    begin(prog_.text[cur_pc_] + " (if)");
    push_frame(f);
    std::string p = pred(in.pa, in.na);
    line("bool saved" + id + " = act;");
    line("bool other" + id + " = act && !" + p + ";");
    line("act = act && " + p + ";");
    step();
  }

  // branch.invert: exchange exec with the entry's other side. The other side's
  // lanes were inactive since the push, so none of them exited or left a loop.
  void else_(const Insn&) {
    if (frames_.empty() || frames_.back().loop) throw Unsupported{"else without if"};
    const Frame& f = frames_.back();
    std::string id = std::to_string(f.id);
    begin("invert (else)");
    line("{ bool t = act; act = other" + id + " && live; other" + id + " = t; }");
    step();
  }

  // branch.pop: exec = saved, less the lanes that exited (branch.exit) and, inside a
  // loop, those that left its current iteration with break or continue
  // (branch.brk, branch.cont remove them from the entries above the loop's).
  void endif_(const Insn&) {
    if (frames_.empty() || frames_.back().loop) throw Unsupported{"endif without if"};
    Frame f = frames_.back();
    frames_.pop_back();
    std::string id = std::to_string(f.id);
    begin("pop (endif)");
    std::string e = "saved" + id + " && live";
    if (f.loop_id >= 0) {
      std::string l = std::to_string(f.loop_id);
      e += " && !broke" + l + " && !cont" + l;
    }
    line("act = " + e + ";");
    step();
  }

  // branch.struct.loop / branch.lpush: push (loop, exec, empty). Lanes that break
  // are `broke`, lanes that continue `cont` (the entry's other) until lnext.
  //
  // Loop cap: lavapipe leaves every loop once the loops of a shader together ran
  // 65,535 iterations per subgroup, silently. Each translated loop counts its
  // entries and iterations in `iters` (uniform: the loops run in subgroup-uniform
  // control flow), and a warp that would exceed kLoopBudget stops, sets
  // kFlagLoopBudget and ends (decode_control reports NotReproduced). It also stops
  // with kFlagStepBudget once it committed max_steps steps: the reference would end
  // step_limit (exec.status.step_limit) or livelock before.
  void loop_(const Insn&) {
    Frame f{true, next_id_++, -1};
    std::string id = std::to_string(f.id);
    begin("lpush (loop)");
    push_frame(f);
    line("bool saved" + id + " = act;");
    line("bool broke" + id + " = false;");
    line("bool cont" + id + " = false;");
    step();
    line("iters += 1u;");
    line("while (true) {");
    ++indent_;
    line("if (iters >= " + u32(kLoopBudget) + ") { note_flags(" + u32(kFlagLoopBudget) +
         "); return; }");
    line("iters += 1u;");
    line("if (steps >= " + u32(step_cap()) + ") { note_flags(" + u32(kFlagStepBudget) +
         "); return; }");
  }

  uint32_t step_cap() const {
    return static_cast<uint32_t>(std::min<uint64_t>(cfg_.max_steps, 0xffffffffu));
  }

  // branch.brk / branch.cont on the innermost loop (branch.loop.find), which must
  // belong to the context (valid.flow.pop).
  void brk_cont(const Insn& in, bool cont, size_t base) {
    int32_t j = -1;
    for (size_t k = frames_.size(); k > base; --k) {
      if (frames_[k - 1].loop) {
        j = static_cast<int32_t>(frames_[k - 1].id);
        break;
      }
    }
    if (j < 0) throw Unsupported{"break or continue outside a loop of its context"};
    std::string id = std::to_string(j);
    begin(prog_.text[cur_pc_]);
    line("{");
    ++indent_;
    line("bool m = act && " + pred(in.pa, in.na) + ";");
    line("act = act && !m;");
    line((cont ? "cont" : "broke") + id + " = " + (cont ? "cont" : "broke") + id + " || m;");
    --indent_;
    line("}");
    step();
  }

  // endloop = lnext; cbr pt, __loopN; pop (branch.struct.loop).
  void endloop_() {
    if (frames_.empty() || !frames_.back().loop) throw Unsupported{"endloop without loop"};
    Frame f = frames_.back();
    frames_.pop_back();
    std::string id = std::to_string(f.id);
    at(Op::LNext);
    // branch.lnext: lanes that continued rejoin.
    begin("lnext");
    line("act = act || (cont" + id + " && live);");
    line("cont" + id + " = false;");
    step();
    at(Op::Cbr);
    // branch.cbr.uniform / branch.cbr.empty: the back edge is taken while a lane is active.
    begin("cbr pt (back edge)");
    step();
    line("if (!subgroupAny(act)) break;");
    --indent_;
    line("}");
    at(Op::Pop);
    // branch.pop: the lanes that entered the loop, less those that exited.
    begin("pop (endloop)");
    line("act = saved" + id + " && live;");
    step();
  }

  // ---- the shader ---------------------------------------------------------------

  std::string assemble() {
    std::ostringstream o;
    const uint32_t w = cfg_.wave;
    const uint32_t local = w * cfg_.warps;
    o << "#version 450\n"
         "#extension GL_KHR_shader_subgroup_basic : require\n"
         "#extension GL_KHR_shader_subgroup_vote : require\n"
         "#extension GL_KHR_shader_subgroup_ballot : require\n"
         "#extension GL_KHR_shader_subgroup_shuffle : require\n"
      << "// simtspec program translated by runners/vulkan/translate.cpp: wave " << w << ", warps "
      << cfg_.warps << ", workgroups " << cfg_.workgroups << "\n"
      << "layout(local_size_x = " << local << ") in;\n"
      << "layout(std430, set = 0, binding = 0) coherent buffer Control { uint w[]; } ctl;\n";
    for (size_t i = 0; i < prog_.buffers.size(); ++i) {
      o << "layout(std430, set = 0, binding = " << i + 1 << ") coherent buffer Buffer" << i
        << " { uint w[]; } b" << i << ";  // " << prog_.buffers[i].name << "\n";
      if (signed_[i]) {
        // The same words as ints, for the signed atomics (atom.min, atom.max).
        o << "layout(std430, set = 0, binding = " << i + 1 << ") coherent buffer BufferS" << i
          << " { int w[]; } b" << i << "s;\n";
      }
    }
    const uint32_t slm_words = (cfg_.slm + 3) / 4;
    if (uses_slm_)
      o << "shared uint slm[" << std::max(1u, slm_words) << "];  // state.memory.slm\n";
    if (uses_bar_) {
      o << "shared uint bar_arrived;  // arrivals at the workgroup's barriers so far\n"
           "shared uint bar_ended;  // warps of the workgroup in drain()\n"
           "uint bar_seen = 0u;  // bar_arrived after the previous round\n";
    }
    o << "uint steps = 0u;  // steps this warp committed (the same in all its invocations)\n"
         "uint iters = 0u;  // loop entries and iterations, against kLoopBudget\n"
         "uint gwarp;\n"
         "uint lane;\n"
         "\n"
         "void flag(uint bit) {\n"
         "  if (subgroupElect()) atomicOr(ctl.w["
      << kCtlFlags << "], bit);\n"
      << "}\n";
    if (uses_bar_) {
      // A warp that ended keeps attending its workgroup's barriers (so that the others'
      // rounds see it as ended, bar.exited) until every warp has ended: a round in which
      // no warp arrived.
      o << "void drain() {\n"
           "  if (subgroupElect()) atomicAdd(bar_ended, 1u);\n"
           "  while (true) {\n"
        << "    if (iters >= " << kLoopBudget << "u) { flag(" << kFlagLoopBudget
        << "u); return; }\n"
        << "    iters += 1u;\n"
           "    memoryBarrierShared();\n"
           "    memoryBarrierBuffer();\n"
           "    barrier();\n"
           "    uint at = bar_arrived;\n"
           "    uint ended = bar_ended;\n"
           "    barrier();\n"
           "    uint arrived = at - bar_seen;\n"
           "    bar_seen = at;\n"
        << "    if (arrived + ended != " << cfg_.warps << "u) { flag(" << kFlagBarrierEarly
        << "u); return; }\n"
        << "    if (arrived == 0u) return;\n"
           "  }\n"
           "}\n";
    }
    o << "// The warp ends (done, an event, a budget or blocked): its step count for "
         "decode_control.\n"
         "void finish() {\n"
         "  if (subgroupElect()) {\n"
      << "    ctl.w[" << kCtlWarpSteps << "u + gwarp] = steps;\n"
      << "    atomicAdd(ctl.w[" << kCtlWarpsEnded << "], 1u);\n"
      << "  }\n"
      << "}\n"
      // Ending the warp is written once, in main(), after run() returns: each event
      // site or budget check only notes why (GLSL inlines every call, and lavapipe
      // compiles each atomic into a loop over the lanes, so per-site atomics made the
      // shaders several times slower to compile).
      << "// An event (events.md), noted by the raising warp; main() records it.\n"
         "bool ev_raised = false;\n"
         "uint ev_code, ev_pc, ev_lane, ev_addr, ev_space;\n"
         "void raise_event(uint code, uint pc, uint lane, uint addr, uint space) {\n"
         "  ev_raised = true;\n"
         "  ev_code = code;\n"
         "  ev_pc = pc;\n"
         "  ev_lane = lane;\n"
         "  ev_addr = addr;\n"
         "  ev_space = space;\n"
         "}\n"
         "// The first event raised in the launch is recorded.\n"
         "void record_event() {\n"
         "  if (subgroupElect()) {\n"
      << "    atomicAdd(ctl.w[" << kCtlEvents << "], 1u);\n"
      << "    if (atomicCompSwap(ctl.w[" << kCtlClaim << "], 0u, 1u) == 0u) {\n"
      << "      ctl.w[" << kCtlCode << "] = ev_code;\n"
      << "      ctl.w[" << kCtlWarp << "] = gwarp;\n"
      << "      ctl.w[" << kCtlPc << "] = ev_pc;\n"
      << "      ctl.w[" << kCtlLane << "] = ev_lane;\n"
      << "      ctl.w[" << kCtlAddr << "] = ev_addr;\n"
      << "      ctl.w[" << kCtlSpace << "] = ev_space;\n"
      << "      ctl.w[" << kCtlEventSteps << "] = steps;\n"
      << "    }\n"
         "  }\n"
         "}\n"
         "// kFlag* bits the warp noted (a budget or a check that stopped it, an\n"
         "// interleaving it saw); main() sets them in the control buffer once.\n"
         "uint noted_flags = 0u;\n"
         "void note_flags(uint bits) { noted_flags |= bits; }\n"
         "uint mulhi_s(uint a, uint b) { int hi, lo; imulExtended(int(a), int(b), hi, lo); "
         "return uint(hi); }\n"
         "uint mulhi_u(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }\n"
         "// alu.div, alu.rem: on magnitudes, so -2^31 / -1 is -2^31 and -2^31 rem -1 is 0;\n"
         "// a zero divisor (an inactive lane's) gives 0 instead of undefined behaviour.\n"
         "uint div_u(uint a, uint b) { return b == 0u ? 0u : a / b; }\n"
         "uint rem_u(uint a, uint b) { return b == 0u ? 0u : a % b; }\n"
         "uint div_s(uint a, uint b) {\n"
         "  if (b == 0u) return 0u;\n"
         "  uint ua = int(a) < 0 ? 0u - a : a;\n"
         "  uint ub = int(b) < 0 ? 0u - b : b;\n"
         "  uint q = ua / ub;\n"
         "  return ((a ^ b) & 0x80000000u) != 0u ? 0u - q : q;\n"
         "}\n"
         "uint rem_s(uint a, uint b) { return b == 0u ? 0u : a - b * div_s(a, b); }\n";
    if (uses_slm_signed_) {
      o << "// atom.min / atom.max on slm: one compare-and-swap; losing it to another warp\n"
           "// (not seen on lavapipe, which runs a workgroup's subgroups one at a time between\n"
           "// barriers) is reported.\n";
      for (const char* m : {"min", "max"}) {
        o << "uint slm_s" << m << "(uint i, uint x) {\n"
          << "  uint old = slm[i];\n"
          << "  uint prev = atomicCompSwap(slm[i], old, uint(" << m << "(int(old), int(x))));\n"
          << "  if (prev != old) atomicOr(ctl.w[" << kCtlFlags << "], " << kFlagSlmContention
          << "u);\n"
          << "  return prev;\n"
          << "}\n";
      }
    }
    o << "// mem.store.order: true when a higher active lane stores to the same address.\n"
         "// Unrolled (no loop: loops count against lavapipe's cap); called in uniform flow.\n"
         "bool store_loses(uint a, bool act) {\n"
         "  bool loses = false;\n";
    for (uint32_t d = 1; d < w; ++d) {
      o << "  { uint l = min(lane + " << d << "u, " << w - 1
        << "u); uint oa = subgroupShuffle(a, l); "
        << "bool on = subgroupShuffle(act, l); loses = loses || (lane + " << d << "u < " << w
        << "u && on && oa == a); }\n";
    }
    o << "  return loses;\n"
         "}\n"
         "\n";
    o << "void run(uint warp, uint wg) {\n"
         "  // state.init: exec and live hold every lane; registers and predicates are 0.\n"
         "  bool act = true;\n"
         "  bool live = true;\n";
    if (uses_exec_mask_) o << "  uvec4 exec_mask;  // %exec, read before the instruction\n";
    for (uint32_t i = 0; i < vregs_; ++i) o << "  uint v" << i << " = 0u;\n";
    for (uint32_t i = 0; i < sregs_; ++i) o << "  uint s" << i << " = 0u;\n";
    for (uint32_t i = 0; i < preds_; ++i) o << "  bool p" << i << " = false;\n";
    o << code_.str() << "}\n\n";
    std::string head = o.str();
    o.str("");
    o << "void main() {\n"
         "  lane = gl_SubgroupInvocationID;\n"
         "  uint warp = gl_SubgroupID;\n"
         "  uint wg = gl_WorkGroupID.x;\n"
      << "  gwarp = wg * " << cfg_.warps << "u + warp;  // state.launch.placement\n";
    if (uses_slm_ || uses_bar_) {
      // state.memory.slm: zero at launch (shared memory starts undefined); the loop's
      // trip count is uniform and counted against the loop budget.
      o << "  if (gl_LocalInvocationIndex == 0u) {\n"
        << (uses_bar_ ? "    bar_arrived = 0u;\n    bar_ended = 0u;\n" : "") << "  }\n";
      if (uses_slm_) {
        const uint32_t trips = (slm_words + local - 1) / local;
        o << "  iters += " << trips << "u;\n"
          << "  for (uint k = 0u; k < " << trips << "u; ++k) {\n"
          << "    uint i = k * " << local << "u + gl_LocalInvocationIndex;\n"
          << "    if (i < " << slm_words << "u) slm[i] = 0u;\n"
          << "  }\n";
      }
      o << "  memoryBarrierShared();\n"
           "  barrier();\n";
    }
    // The program runs in run(); once it returns (the warp ended), the warp keeps
    // attending its workgroup's barriers in drain(). drain() is called here only:
    // lavapipe (Mesa 22.3.6) let a barrier() complete early for one subgroup when
    // another subgroup's loop contained a (not executed) call of drain(). It also
    // lets the arriving subgroups through when another ends (returns from run())
    // while they wait: the round's check then reports kFlagBarrierEarly.
    o << "  run(warp, wg);\n"
         "  if (ev_raised) record_event();\n"
         "  if (noted_flags != 0u) flag(noted_flags);\n"
         "  finish();\n"
      << (uses_bar_ ? "  drain();\n" : "") << "}\n";
    return head + o.str();
  }

  const host::Loaded& loaded_;
  const exec::Program& prog_;
  const exec::LaunchConfig& cfg_;
  TranslateOptions opt_;
  std::ostringstream code_;
  size_t lines_ = 0;
  int indent_ = 1;
  size_t pc_ = 0;
  uint32_t cur_pc_ = 0;
  uint32_t vregs_ = 0, sregs_ = 0, preds_ = 0;
  uint32_t next_id_ = 0;
  uint32_t call_depth_ = 0;
  std::vector<uint32_t> stmt_pc_;
  std::vector<Frame> frames_;
  std::vector<bool> signed_;  // per buffer: an int view is declared
  bool uses_slm_ = false, uses_slm_signed_ = false, uses_bar_ = false;
  bool uses_exec_mask_ = false;  // some instruction reads %exec (instr)
};

}  // namespace

TranslateResult translate(const host::Loaded& loaded, const TranslateOptions& options) {
  TranslateResult r;
  if (!loaded.program) {
    r.unsupported = "no predecoded program";
    return r;
  }
  try {
    Translator t(loaded, options);
    r.translation = t.run();
  } catch (const Unsupported& u) {
    r.unsupported = u.reason;
  }
  return r;
}

std::optional<exec::Status> DeviceOutcome::status() const {
  switch (kind) {
    case Kind::Completed:
      return exec::Status::Completed;
    case Kind::Trapped:
      return exec::Status::Trapped;
    case Kind::Deadlock:
      return exec::Status::Deadlock;
    case Kind::StepLimit:
      return exec::Status::StepLimit;
    case Kind::NotReproduced:
      break;
  }
  return std::nullopt;
}

DeviceOutcome decode_control(const Translation& t, std::span<const uint32_t> control) {
  DeviceOutcome o;
  auto word = [&](uint32_t i) -> uint32_t { return i < control.size() ? control[i] : 0u; };
  auto not_reproduced = [&](std::string why) {
    o.kind = DeviceOutcome::Kind::NotReproduced;
    o.reason = std::move(why);
    return o;
  };
  if (control.size() < kCtlWarpSteps + t.total_warps) {
    return not_reproduced("the control buffer is too short");
  }
  for (uint32_t g = 0; g < t.total_warps; ++g) o.steps += word(kCtlWarpSteps + g);
  const uint32_t flags = word(kCtlFlags);
  if (flags & kFlagLoopBudget) {
    return not_reproduced(
        "a warp's loops reached the iteration budget kept below lavapipe's loop cap");
  }
  if (flags & kFlagStepLimit) {
    o.kind = DeviceOutcome::Kind::StepLimit;  // exec.status.step_limit, exact_step_limit
    return o;
  }
  // Without exact_step_limit, a launch of one warp that reached max_steps is run again
  // with it (retry_exact); in a launch of several, the step at which the reference's
  // limit falls depends on its scheduling (exec.sched).
  const bool retry = t.total_warps == 1 && !t.exact_step_limit;
  if (flags & kFlagStepBudget) {
    o.retry_exact = retry;
    return not_reproduced("a warp reached max_steps (the reference ends step_limit or livelock)");
  }
  if (flags & kFlagAtomicInterleaved) {
    o.transient = true;
    return not_reproduced(
        "per-lane atomics of two warps on one word interleaved (atom.step makes each atomic "
        "one step)");
  }
  if (flags & kFlagBarrierEarly) {
    return not_reproduced(
        "barrier() let a subgroup through before every subgroup of its workgroup arrived or "
        "ended");
  }
  if (flags & kFlagSlmContention) {
    o.transient = true;
    return not_reproduced(
        "a signed atomic min/max on slm lost its compare-and-swap to another warp");
  }
  if (word(kCtlWarpsEnded) != t.total_warps) {
    return not_reproduced(std::to_string(word(kCtlWarpsEnded)) + " of " +
                          std::to_string(t.total_warps) + " warps ended");
  }
  if (word(kCtlEvents) > 0) {
    if (t.total_warps > 1) {
      // exec.status.trapped ends the launch at the first event in the reference's
      // order (exec.sched), which the device does not follow: the other warps ran on.
      // The outcome is still the reference's when no warp writes memory (each warp's
      // path is then its own, the buffers stay as launched), exactly one warp raised
      // an event, and all the steps of the run are fewer than max_steps (so the
      // reference cannot reach the limit before the event, exec.step.order).
      if (t.writes_memory) {
        return not_reproduced("an event in a launch of several warps that write memory");
      }
      if (word(kCtlEvents) > 1) {
        return not_reproduced("events in " + std::to_string(word(kCtlEvents)) +
                              " warps (the first one depends on the reference's scheduling)");
      }
      if (o.steps >= t.max_steps) {
        return not_reproduced(
            "max_steps steps or more in all around an event in a launch of several warps");
      }
    }
    // exec.step.order: the event's instruction runs only if fewer than max_steps steps
    // were committed before it.
    if (word(kCtlEventSteps) >= t.max_steps) {
      o.retry_exact = retry;
      return not_reproduced("max_steps reached before the event (the reference ends step_limit)");
    }
    exec::EventInfo e;
    e.code = static_cast<isa::Event>(word(kCtlCode));
    e.warp = word(kCtlWarp);
    e.pc = word(kCtlPc);
    e.lane = word(kCtlLane) == 0xffffffffu ? -1 : static_cast<int32_t>(word(kCtlLane));
    if (e.code == isa::Event::MemMisaligned || e.code == isa::Event::MemOutOfBounds) {
      e.addr = word(kCtlAddr);
      uint32_t space = word(kCtlSpace);
      e.space = space == exec::kSpaceSlm        ? "slm"
                : space < t.buffer_names.size() ? t.buffer_names[space]
                                                : "?";
    }
    o.kind = DeviceOutcome::Kind::Trapped;
    o.event = e;
    return o;
  }
  if (word(kCtlBlocked) > 0) {
    // exec.step.order: step_limit is checked before deadlock.
    if (o.steps >= t.max_steps) {
      return not_reproduced("max_steps steps before the deadlock (the reference ends step_limit)");
    }
    o.kind = DeviceOutcome::Kind::Deadlock;
    return o;
  }
  if (o.steps > t.max_steps) {
    o.retry_exact = retry;
    return not_reproduced("more than max_steps steps in all (the reference ends step_limit)");
  }
  o.kind = DeviceOutcome::Kind::Completed;
  return o;
}

}  // namespace simt::vulkan
