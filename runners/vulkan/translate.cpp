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

// One open structured statement: an if entry or a loop entry of the mask stack
// (branch.mask.entry), emulated per invocation by bools named after `id`.
struct Frame {
  bool loop = false;
  uint32_t id = 0;
  int32_t loop_id = -1;  // if entries: the innermost loop around them (-1: none)
};

class Translator {
 public:
  Translator(const host::Loaded& loaded, const TranslateOptions& opt)
      : loaded_(loaded), prog_(*loaded.program), cfg_(loaded.program->config), opt_(opt) {}

  Translation run() {
    check_launch();
    Translation t;
    t.local_size_x = cfg_.wave * cfg_.warps;
    t.workgroups = cfg_.workgroups;
    t.total_warps = cfg_.total_warps();
    t.max_steps = cfg_.max_steps;
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
    if (prog_.size() > 60000) {
      // Keeps each warp's step count (at most kLoopBudget x the program size) in 32 bits.
      throw Unsupported{"programs of more than 60000 instructions"};
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
            return "subgroupBallot(act).x";  // state.special.exec
          case isa::Special::ExecHi:
            return "subgroupBallot(act).y";
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
    std::string d = dst(in);
    if (in.dst_kind == DstKind::S) {
      line(d + " = " + expr + ";");
    } else {
      line("if (act) " + d + " = " + expr + ";");
    }
  }

  // ---- output ---------------------------------------------------------------

  void line(const std::string& s) { code_ << std::string(indent_ * 2, ' ') << s << '\n'; }
  void step() { line("steps += 1u;"); }  // exec.step: one committed step of this warp

  std::string mnemonic(Op op) { return std::string(isa::info(op).mnemonic); }

  // ---- statements -------------------------------------------------------------

  void body() {
    indent_ = 1;
    pc_ = 0;
    for (const auto& st : loaded_.ast.stmts) {
      switch (st.kind) {
        case StmtKind::Label:
          break;  // only jmp/cbr/call use labels, and those are not translated
        case StmtKind::Instr:
          instr(at(st.op));
          break;
        case StmtKind::If:
          if_(at(Op::Push));
          break;
        case StmtKind::Else:
          else_(at(Op::Invert));
          break;
        case StmtKind::EndIf:
          endif_(at(Op::Pop));
          break;
        case StmtKind::Loop:
          loop_(at(Op::LPush));
          break;
        case StmtKind::Break:
          brk_cont(at(Op::Brk), false);
          break;
        case StmtKind::Continue:
          brk_cont(at(Op::Cont), true);
          break;
        case StmtKind::EndLoop:
          endloop_();
          break;
      }
    }
    // Falling through the end with live lanes (possible only without flow
    // validation, valid.flow.end): event.pc_range, a control event without lane.
    line("// end of the program: event.pc_range");
    line("raise_event(" + u32(static_cast<uint32_t>(isa::Event::PcRange)) + ", " +
         u32(static_cast<uint32_t>(prog_.size())) + ", 0xffffffffu, 0u, 0u);");
    line("finish();");
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
    line("// pc " + std::to_string(cur_pc_) + ": " + prog_.text[cur_pc_]);
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
        throw Unsupported{"cross-lane instruction `" + mnemonic(in.op) + "` (not translated yet)"};
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
      default:
        // div, div.u, rem, rem.u: alu.div.zero would need div_zero emulated.
        throw Unsupported{"`" + mnemonic(in.op) + "` (division and div_zero not translated yet)"};
    }
    assign(in, e);
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

  // mem.address, mem.check, mem.load, mem.store, mem.store.order.
  void memory(const Insn& in) {
    bool store = isa::info(in.op).family == isa::Family::Store;
    if (in.op != Op::Ld && in.op != Op::St) {
      throw Unsupported{"sub-word memory access `" + mnemonic(in.op) + "` (not translated yet)"};
    }
    if (in.space == exec::kSpaceSlm) {
      throw Unsupported{"shared local memory (`" + mnemonic(in.op) +
                        "` on slm, not translated yet)"};
    }
    if (in.space >= prog_.buffers.size())
      throw Unsupported{"a memory space the translator does not know"};
    const uint32_t bytes = prog_.buffers[in.space].bytes;
    const std::string buf = "b" + std::to_string(in.space) + ".w";
    const std::string space = u32(in.space);
    // The base operand of a store is in.a and its value in.b; a load's base is in.a.
    const Src& base = in.a;
    // Stores have no scalar form (mem.store): they run per active lane and their
    // events carry the lane even with a uniform address (event.lane).
    const bool lanes = store || in.dst_kind == DstKind::V;
    line("{");
    ++indent_;
    line("uint a = " + src(base) + " + " + u32(in.offset) + ";");  // mem.address: wraps
    // mem.check: misaligned first, then out of bounds; proven absent for constant addresses.
    bool check = true;
    if (base.kind == SrcKind::None || base.kind == SrcKind::Imm) {
      uint32_t a = (base.kind == SrcKind::Imm ? base.imm : 0u) + in.offset;
      check = a % 4 != 0 || uint64_t{a} + 4 > bytes;
    }
    if (check) {
      line("bool mis = (a & 3u) != 0u;");
      line(std::string("bool oob = ") + (bytes < 4 ? "true" : "a > " + u32(bytes - 4)) + ";");
      const std::string mis = u32(static_cast<uint32_t>(isa::Event::MemMisaligned));
      const std::string oob = u32(static_cast<uint32_t>(isa::Event::MemOutOfBounds));
      if (lanes) {
        // Every active lane is checked first; the lowest failing lane is reported (event.lane).
        line("uvec4 bad = subgroupBallot(act && (mis || oob));");
        line("if (bad != uvec4(0u)) {");
        ++indent_;
        line("uint l = subgroupBallotFindLSB(bad);");
        line("raise_event(subgroupShuffle(mis, l) ? " + mis + " : " + oob + ", " + u32(cur_pc_) +
             ", l, subgroupShuffle(a, l), " + space + ");");
      } else {
        // mem.load.scalar: once per warp whatever exec is; the event has no lane.
        line("if (mis || oob) {");
        ++indent_;
        line("raise_event(mis ? " + mis + " : " + oob + ", " + u32(cur_pc_) + ", 0xffffffffu, a, " +
             space + ");");
      }
      line("finish();");
      line("return;");
      --indent_;
      line("}");
    }
    if (store) {
      // mem.store.order: of the active lanes writing one word, the highest one's value
      // remains; the others do not write (GLSL leaves simultaneous writes unordered).
      line("uint value = " + src(in.b) + ";");
      line("bool loses = store_loses(a, act);");
      line("if (act && !loses) " + buf + "[a >> 2] = value;");
      // mem.consistency: later instructions of every lane of the warp see the store.
      line("subgroupMemoryBarrierBuffer();");
      line("subgroupBarrier();");
    } else {
      assign(in, buf + "[a >> 2]");
    }
    --indent_;
    line("}");
  }

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
        line("finish();");
        line("return;");
        --indent_;
        line("}");
        return;
      default:
        break;
    }
    // Labels, jumps, calls and explicit mask-stack instructions: only the structured
    // statements are translated.
    throw Unsupported{"branch primitive `" + mnemonic(in.op) +
                      "` (only structured if/else/endif and loop/endloop are translated)"};
  }

  void push_frame(Frame f) {
    frames_.push_back(f);
    if (frames_.size() > cfg_.mask_depth) {
      // branch.mask.overflow would be raised; not emulated.
      throw Unsupported{"structured statements nested deeper than mask_depth " +
                        std::to_string(cfg_.mask_depth) + " (mask_overflow)"};
    }
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
    line("// pc " + std::to_string(cur_pc_) + ": " + prog_.text[cur_pc_] + " (if)");
    std::string p = pred(in.pa, in.na);
    line("bool saved" + id + " = act;");
    line("bool other" + id + " = act && !" + p + ";");
    line("act = act && " + p + ";");
    step();
    push_frame(f);
  }

  // branch.invert: exchange exec with the entry's other side. The other side's
  // lanes were inactive since the push, so none of them exited or left a loop.
  void else_(const Insn&) {
    if (frames_.empty() || frames_.back().loop) throw Unsupported{"else without if"};
    const Frame& f = frames_.back();
    std::string id = std::to_string(f.id);
    line("// pc " + std::to_string(cur_pc_) + ": invert (else)");
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
    line("// pc " + std::to_string(cur_pc_) + ": pop (endif)");
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
    line("// pc " + std::to_string(cur_pc_) + ": lpush (loop)");
    line("bool saved" + id + " = act;");
    line("bool broke" + id + " = false;");
    line("bool cont" + id + " = false;");
    step();
    line("iters += 1u;");
    line("while (true) {");
    ++indent_;
    line("if (iters >= " + u32(kLoopBudget) + ") { flag(" + u32(kFlagLoopBudget) +
         "); finish(); return; }");
    line("iters += 1u;");
    line("if (steps >= " + u32(step_cap()) + ") { flag(" + u32(kFlagStepBudget) +
         "); finish(); return; }");
    push_frame(f);
  }

  uint32_t step_cap() const {
    return static_cast<uint32_t>(std::min<uint64_t>(cfg_.max_steps, 0xffffffffu));
  }

  // branch.brk / branch.cont on the innermost loop (branch.loop.find).
  void brk_cont(const Insn& in, bool cont) {
    int32_t j = innermost_loop();
    if (j < 0) throw Unsupported{"break or continue outside a loop"};
    std::string id = std::to_string(j);
    line("// pc " + std::to_string(cur_pc_) + ": " + prog_.text[cur_pc_]);
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
    line("// pc " + std::to_string(cur_pc_) + ": lnext");
    line("act = act || (cont" + id + " && live);");
    line("cont" + id + " = false;");
    step();
    at(Op::Cbr);
    // branch.cbr.uniform / branch.cbr.empty: the back edge is taken while a lane is active.
    line("// pc " + std::to_string(cur_pc_) + ": cbr pt (back edge)");
    step();
    line("if (!subgroupAny(act)) break;");
    --indent_;
    line("}");
    at(Op::Pop);
    // branch.pop: the lanes that entered the loop, less those that exited.
    line("// pc " + std::to_string(cur_pc_) + ": pop (endloop)");
    line("act = saved" + id + " && live;");
    step();
  }

  // ---- the shader ---------------------------------------------------------------

  std::string assemble() {
    std::ostringstream o;
    const uint32_t w = cfg_.wave;
    o << "#version 450\n"
         "#extension GL_KHR_shader_subgroup_basic : require\n"
         "#extension GL_KHR_shader_subgroup_vote : require\n"
         "#extension GL_KHR_shader_subgroup_ballot : require\n"
         "#extension GL_KHR_shader_subgroup_shuffle : require\n"
      << "// simtspec program translated by runners/vulkan/translate.cpp: wave " << w << ", warps "
      << cfg_.warps << ", workgroups " << cfg_.workgroups << "\n"
      << "layout(local_size_x = " << w * cfg_.warps << ") in;\n"
      << "layout(std430, set = 0, binding = 0) coherent buffer Control { uint w[]; } ctl;\n";
    for (size_t i = 0; i < prog_.buffers.size(); ++i) {
      o << "layout(std430, set = 0, binding = " << i + 1 << ") coherent buffer Buffer" << i
        << " { uint w[]; } b" << i << ";  // " << prog_.buffers[i].name << "\n";
    }
    o << "uint steps = 0u;  // steps this warp committed (the same in all its invocations)\n"
         "uint iters = 0u;  // loop entries and iterations, against kLoopBudget\n"
         "uint gwarp;\n"
         "\n"
         "// The warp ends (done, an event or a budget): its step count for decode_control.\n"
         "void finish() {\n"
         "  if (subgroupElect()) {\n"
      << "    ctl.w[" << kCtlWarpSteps << "u + gwarp] = steps;\n"
      << "    atomicAdd(ctl.w[" << kCtlWarpsEnded << "], 1u);\n"
      << "  }\n"
         "}\n"
         "void flag(uint bit) {\n"
         "  if (subgroupElect()) atomicOr(ctl.w["
      << kCtlFlags
      << "], bit);\n"
         "}\n"
         "// An event (events.md): the first one raised in the launch is recorded.\n"
         "void raise_event(uint code, uint pc, uint lane, uint addr, uint space) {\n"
         "  if (subgroupElect()) {\n"
      << "    atomicAdd(ctl.w[" << kCtlEvents << "], 1u);\n"
      << "    if (atomicCompSwap(ctl.w[" << kCtlClaim << "], 0u, 1u) == 0u) {\n"
      << "      ctl.w[" << kCtlCode << "] = code;\n"
      << "      ctl.w[" << kCtlWarp << "] = gwarp;\n"
      << "      ctl.w[" << kCtlPc << "] = pc;\n"
      << "      ctl.w[" << kCtlLane << "] = lane;\n"
      << "      ctl.w[" << kCtlAddr << "] = addr;\n"
      << "      ctl.w[" << kCtlSpace << "] = space;\n"
      << "      ctl.w[" << kCtlEventSteps << "] = steps;\n"
      << "    }\n"
         "  }\n"
         "}\n"
         "uint mulhi_s(uint a, uint b) { int hi, lo; imulExtended(int(a), int(b), hi, lo); "
         "return uint(hi); }\n"
         "uint mulhi_u(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }\n"
         "// mem.store.order: true when a higher active lane stores to the same word.\n"
         "// Unrolled (no loop: loops count against lavapipe's cap); called in uniform flow.\n"
         "bool store_loses(uint a, bool act) {\n"
         "  uint lane = gl_SubgroupInvocationID;\n"
         "  bool loses = false;\n";
    for (uint32_t d = 1; d < w; ++d) {
      o << "  { uint l = min(lane + " << d << "u, " << w - 1
        << "u); uint oa = subgroupShuffle(a, l); "
        << "bool on = subgroupShuffle(act, l); loses = loses || (lane + " << d << "u < " << w
        << "u && on && oa == a); }\n";
    }
    o << "  return loses;\n"
         "}\n"
         "\n"
         "void main() {\n"
         "  uint lane = gl_SubgroupInvocationID;\n"
         "  uint warp = gl_SubgroupID;\n"
         "  uint wg = gl_WorkGroupID.x;\n"
      << "  gwarp = wg * " << cfg_.warps << "u + warp;  // state.launch.placement\n"
      << "  // state.init: exec and live hold every lane; registers and predicates are 0.\n"
         "  bool act = true;\n"
         "  bool live = true;\n";
    for (uint32_t i = 0; i < vregs_; ++i) o << "  uint v" << i << " = 0u;\n";
    for (uint32_t i = 0; i < sregs_; ++i) o << "  uint s" << i << " = 0u;\n";
    for (uint32_t i = 0; i < preds_; ++i) o << "  bool p" << i << " = false;\n";
    o << code_.str() << "}\n";
    return o.str();
  }

  const host::Loaded& loaded_;
  const exec::Program& prog_;
  const exec::LaunchConfig& cfg_;
  TranslateOptions opt_;
  std::ostringstream code_;
  int indent_ = 1;
  size_t pc_ = 0;
  uint32_t cur_pc_ = 0;
  uint32_t vregs_ = 0, sregs_ = 0, preds_ = 0;
  uint32_t next_id_ = 0;
  std::vector<Frame> frames_;
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
  if (flags & kFlagStepBudget) {
    return not_reproduced("a warp reached max_steps (the reference ends step_limit or livelock)");
  }
  if (word(kCtlWarpsEnded) != t.total_warps) {
    return not_reproduced(std::to_string(word(kCtlWarpsEnded)) + " of " +
                          std::to_string(t.total_warps) + " warps ended");
  }
  if (word(kCtlEvents) > 0) {
    if (t.total_warps > 1) {
      // The other warps ran on: which of their steps precede the event depends on the
      // reference's scheduling (exec.sched), which the device does not follow.
      return not_reproduced("an event in a launch of several warps");
    }
    // exec.step.order: the event's instruction runs only if fewer than max_steps steps
    // were committed before it.
    if (word(kCtlEventSteps) >= t.max_steps) {
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
      e.space = space < t.buffer_names.size() ? t.buffer_names[space] : "?";
    }
    o.kind = DeviceOutcome::Kind::Trapped;
    o.event = e;
    return o;
  }
  if (o.steps > t.max_steps) {
    return not_reproduced("more than max_steps steps in all (the reference ends step_limit)");
  }
  o.kind = DeviceOutcome::Kind::Completed;
  return o;
}

}  // namespace simt::vulkan
