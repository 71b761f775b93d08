#include "translate.h"

#include <algorithm>
#include <sstream>

#include "isa/isa.h"

namespace simt::vortex {
namespace {

using exec::DstKind;
using exec::Insn;
using exec::Src;
using exec::SrcKind;
using isa::Op;
using syntax::StmtKind;

struct Unsupported {
  std::string reason;
};

// How each instruction of the table (isa/instructions.def) is lowered: one row per
// mnemonic and no default, so a new row does not compile until it says how it maps.
enum class Lowering {
  Unary,     // mov, not, popc: `rv` on A (none: mov)
  Binary,    // `rv` a0, a0, a1
  Divide,    // `rv` after the alu.div.zero check
  MinMax,    // `rv` (slt/sltu) and a branch-free select (kMax: the larger)
  Compare,   // `rv` (slt/sltu, kSwap: B < A; kNot: negated) to a 0/1 predicate word
  Equal,     // xor, then `rv` (seqz/snez)
  Select,    // sel: branch-free mask select
  PredOp,    // `rv` on 0/1 predicate words (none: pmov)
  Load,      // `rv` of `bytes` after mem.check
  Store,     // `rv` of `bytes` after mem.check
  Exit,      // the live mask less the active threads; tmc
  Ballot,    // xlane.ballot: __ballot masked by exec (kHi: bits 32-63, 0 at wave <= 32)
  Vote,      // xlane.vote: __ballot of the active lanes (kAll: equal to exec, else not 0)
  ReadLane,  // xlane.readlane: lane L's register word, 0 if inactive or out of range
  Shuffle,   // xlane.shfl: the source lane's register word (kXor: own lane xor B)
  Nop,       // nothing
  Inlined,   // call, ret: the callee's statements inlined at each call (context())
  Barrier,   // bar: Vortex's `bar id, count` (barrier())
  AtomLane,  // atom.*: `rv` (an RV32A AMO) by every active thread at once (atomic())
  AtomWarp,  // watom.*: `rv` by the lowest active thread alone (atomic())
  Never,     // not expressible by this design (raw branches, traps, preemption, regions)
};

enum : uint16_t {
  kSwap = 1,
  kNot = 2,
  kMax = 4,
  kHi = 8,        // ballot.hi
  kAll = 16,      // vote.all
  kXor = 32,      // shfl.xor
  kNegate = 64,   // atomics: the operand is negated (sub = amoadd of -A)
  kLockOp = 128,  // atom.lock: operand 1, D = (old == 0)
  kUnlock = 256,  // atom.unlock: operand 0, D = (old != 0)
  kCasOp = 512,   // atom.cas: no AMO; one thread at a time (atomic())
};

struct Mapping {
  Lowering how = Lowering::Never;
  const char* rv = "";
  uint16_t flags = 0;
  uint8_t bytes = 4;
};

// clang-format off
Mapping mapping(Op op) {
  using L = Lowering;
  switch (op) {
    case Op::Mov:     return {L::Unary, ""};
    case Op::Not:     return {L::Unary, "not a0, a0"};
    case Op::Popc:    return {L::Unary, "call __popc"};
    case Op::Add:     return {L::Binary, "add"};
    case Op::Sub:     return {L::Binary, "sub"};
    case Op::Mul:     return {L::Binary, "mul"};
    case Op::MulHi:   return {L::Binary, "mulh"};
    case Op::MulHiU:  return {L::Binary, "mulhu"};
    // alu.div, alu.rem: RISC-V gives -2^31 for -2^31 / -1 and 0 for its remainder, as
    // the spec does; division by zero never reaches the hardware.
    case Op::Div:     return {L::Divide, "div"};
    case Op::DivU:    return {L::Divide, "divu"};
    case Op::Rem:     return {L::Divide, "rem"};
    case Op::RemU:    return {L::Divide, "remu"};
    case Op::And:     return {L::Binary, "and"};
    case Op::Or:      return {L::Binary, "or"};
    case Op::Xor:     return {L::Binary, "xor"};
    // alu.shift: RV32 shifts by the low 5 bits of B, as B & 31.
    case Op::Shl:     return {L::Binary, "sll"};
    case Op::Shr:     return {L::Binary, "srl"};
    case Op::Sra:     return {L::Binary, "sra"};
    case Op::Min:     return {L::MinMax, "slt"};
    case Op::Max:     return {L::MinMax, "slt", kMax};
    case Op::MinU:    return {L::MinMax, "sltu"};
    case Op::MaxU:    return {L::MinMax, "sltu", kMax};
    case Op::CmpEq:   return {L::Equal, "seqz"};
    case Op::CmpNe:   return {L::Equal, "snez"};
    case Op::CmpLt:   return {L::Compare, "slt"};
    case Op::CmpLe:   return {L::Compare, "slt", kSwap | kNot};
    case Op::CmpGt:   return {L::Compare, "slt", kSwap};
    case Op::CmpGe:   return {L::Compare, "slt", kNot};
    case Op::CmpLtU:  return {L::Compare, "sltu"};
    case Op::CmpLeU:  return {L::Compare, "sltu", kSwap | kNot};
    case Op::CmpGtU:  return {L::Compare, "sltu", kSwap};
    case Op::CmpGeU:  return {L::Compare, "sltu", kNot};
    case Op::Sel:     return {L::Select};
    case Op::PAnd:    return {L::PredOp, "and"};
    case Op::POr:     return {L::PredOp, "or"};
    case Op::PXor:    return {L::PredOp, "xor"};
    case Op::PMov:    return {L::PredOp, ""};
    case Op::Ld:      return {L::Load, "lw", 0, 4};
    case Op::LdU8:    return {L::Load, "lbu", 0, 1};
    case Op::LdS8:    return {L::Load, "lb", 0, 1};
    case Op::LdU16:   return {L::Load, "lhu", 0, 2};
    case Op::LdS16:   return {L::Load, "lh", 0, 2};
    case Op::St:      return {L::Store, "sw", 0, 4};
    case Op::St8:     return {L::Store, "sb", 0, 1};
    case Op::St16:    return {L::Store, "sh", 0, 2};
    case Op::Exit:    return {L::Exit};
    case Op::Nop:     return {L::Nop};
    // xlane.*: this simx has no vote or shuffle instruction; through memory (xlane()).
    case Op::Ballot:   return {L::Ballot};
    case Op::BallotHi: return {L::Ballot, "", kHi};
    case Op::VoteAny:  return {L::Vote};
    case Op::VoteAll:  return {L::Vote, "", kAll};
    case Op::ReadLane: return {L::ReadLane};
    case Op::Shfl:     return {L::Shuffle};
    case Op::ShflXor:  return {L::Shuffle, "", kXor};
    // atom.ops with Vortex's RV32A AMOs (atom.lane, atom.warp). atom.lock: amomaxu of 1
    // sets a 0 word to 1 and leaves any nonzero word unchanged; atom.unlock: amoswap of
    // 0. RV32A has no CAS: atom.cas is lr.w/sc.w (buffers, one warp) or a plain load
    // and store (slm, or under the lock of several warps), one thread at a time.
    case Op::AtomAdd:     return {L::AtomLane, "amoadd.w"};
    case Op::AtomSub:     return {L::AtomLane, "amoadd.w", kNegate};
    case Op::AtomMin:     return {L::AtomLane, "amomin.w"};
    case Op::AtomMax:     return {L::AtomLane, "amomax.w"};
    case Op::AtomMinU:    return {L::AtomLane, "amominu.w"};
    case Op::AtomMaxU:    return {L::AtomLane, "amomaxu.w"};
    case Op::AtomAnd:     return {L::AtomLane, "amoand.w"};
    case Op::AtomOr:      return {L::AtomLane, "amoor.w"};
    case Op::AtomXor:     return {L::AtomLane, "amoxor.w"};
    case Op::AtomXchg:    return {L::AtomLane, "amoswap.w"};
    case Op::AtomCas:     return {L::AtomLane, "", kCasOp};
    case Op::AtomLock:    return {L::AtomLane, "amomaxu.w", kLockOp};
    case Op::AtomUnlock:  return {L::AtomLane, "amoswap.w", kUnlock};
    case Op::WatomAdd:    return {L::AtomWarp, "amoadd.w"};
    case Op::WatomSub:    return {L::AtomWarp, "amoadd.w", kNegate};
    case Op::WatomMin:    return {L::AtomWarp, "amomin.w"};
    case Op::WatomMax:    return {L::AtomWarp, "amomax.w"};
    case Op::WatomMinU:   return {L::AtomWarp, "amominu.w"};
    case Op::WatomMaxU:   return {L::AtomWarp, "amomaxu.w"};
    case Op::WatomAnd:    return {L::AtomWarp, "amoand.w"};
    case Op::WatomOr:     return {L::AtomWarp, "amoor.w"};
    case Op::WatomXor:    return {L::AtomWarp, "amoxor.w"};
    case Op::WatomXchg:   return {L::AtomWarp, "amoswap.w"};
    case Op::WatomCas:    return {L::AtomWarp, "", kCasOp};
    case Op::WatomLock:   return {L::AtomWarp, "amomaxu.w", kLockOp};
    case Op::WatomUnlock: return {L::AtomWarp, "amoswap.w", kUnlock};
    case Op::Bar:     return {L::Barrier};
    case Op::Call:
    case Op::Ret:
      return {L::Inlined};
    // Raw branch primitives: only the structured statements map onto split/join and
    // pred. Traps, preemption and sub-vector regions: not claimed.
    case Op::Cbr:
    case Op::Jmp:
    case Op::Push:
    case Op::Invert:
    case Op::Pop:
    case Op::LPush:
    case Op::Brk:
    case Op::Cont:
    case Op::LNext:
    case Op::Sys:
    case Op::TRet:
    case Op::TPause:
    case Op::TClear:
    case Op::FrameLd:
    case Op::FrameSt:
    case Op::VCall:
#define SIMT_CTX_FIELD(id, name, summary) \
  case Op::CtxSave##id:                   \
  case Op::CtxLoad##id:
#include "isa/context.def"
#undef SIMT_CTX_FIELD
    case Op::SysRet:
    case Op::SubvBegin:
    case Op::SubvEnd:
    case Op::kCount:
      return {L::Never};
  }
  return {L::Never};
}
// clang-format on

std::string hex(uint32_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Vortex's SIMT instructions (custom-0 opcode 0x0b, R-type), as the assembler's .insn.
std::string vx_tmc(const char* rs1) {
  return std::string(".insn r 0x0b, 0, 0, x0, ") + rs1 + ", x0";
}
std::string vx_wspawn(const char* n, const char* pc) {
  return std::string(".insn r 0x0b, 1, 0, x0, ") + n + ", " + pc;
}
std::string vx_split(const char* p) {
  return std::string(".insn r 0x0b, 2, 0, x0, ") + p + ", x0";
}
std::string vx_join(const char* tok) {
  return std::string(".insn r 0x0b, 3, 0, x0, ") + tok + ", x0";
}
std::string vx_bar(const char* id, const char* count) {
  return std::string(".insn r 0x0b, 4, 0, x0, ") + id + ", " + count;
}
std::string vx_pred(const char* c, const char* m) {
  return std::string(".insn r 0x0b, 5, 0, x0, ") + c + ", " + m;
}
constexpr const char* kCsrThreadId = "0xcc0";
constexpr const char* kCsrWarpId = "0xcc1";
constexpr const char* kCsrTmask = "0xcc4";  // the warp's thread mask
// The core's local memory (CSR 0xfc3 reads its base), 16 KiB in simx's configuration.
constexpr uint32_t kLocalMemory = 0xffff0000;
constexpr uint32_t kLocalMemoryBytes = 16384;

// Per-warp words after the scalar registers (offsets in words from s10).
enum WarpWord : uint32_t {
  kEmpty = 0,  // 1: our exec is empty (the running threads only carry the warp)
  kLive,       // threads not exited
  kDepth,      // entries of Vortex's IPDOM stack (split tokens)
  kBallot,     // scratch of ballots
  kPick,       // scratch of one lane's value
  kSteps,      // steps this warp committed (exec.step)
  kBars,       // barriers this warp passed (barrier())
  kWarpWords,
};
// Per-frame words (one frame per structured statement in the text).
enum FrameWord : uint32_t {
  kFEmpty = 0,  // `empty` when the frame was opened
  kFSaved,      // the thread mask then
  kFMode,       // if: 0 split/join, 1 tmc
  kFOther,      // if, mode 1: the lanes of the else side
  kFToken,      // if, mode 0: the split's IPDOM depth (join's operand)
  kFBroke,      // loop: lanes that left with break
  kFCont,       // loop: lanes waiting with continue
  kFPhase,      // if, mode 0: 1 once the then side reached the join
  kFrameWords,
};

// Assembly lines a translation may have (calls are inlined, so deep or recursive calls
// multiply the program): beyond this the program is refused.
constexpr size_t kMaxLines = 400000;

struct Frame {
  bool loop = false;
  uint32_t id = 0;
  int32_t loop_id = -1;  // if: the innermost loop around it
  bool has_else = false;
};

class Translator {
 public:
  Translator(const host::Loaded& loaded, const TranslateOptions& options)
      : loaded_(loaded),
        prog_(*loaded.program),
        cfg_(loaded.program->config),
        step_budget_(options.step_budget),
        barriers_(options.barriers) {}

  Translation run() {
    check_launch();
    Translation t;
    t.threads = cfg_.wave;
    t.warps = cfg_.total_warps();
    t.max_steps = cfg_.max_steps;
    t.step_cap = step_cap();
    for (uint32_t i = 0; i < prog_.buffers.size(); ++i) {
      if (prog_.buffers[i].mode != syntax::BufferMode::In)
        t.outputs.push_back({i, (prog_.buffers[i].bytes + 3) / 4});
    }
    for (const Insn& in : prog_.insns) {
      if (isa::info(in.op).family == isa::Family::Store) t.writes_memory = true;
      if (in.op == Op::Bar) barrier_ = cfg_.warps > 1;
    }
    if (barrier_ && cfg_.workgroups > barriers_)
      throw Unsupported{std::to_string(cfg_.workgroups) +
                        " workgroups with barriers: this simx has " + std::to_string(barriers_) +
                        " barrier ids (its compile-time NUM_BARRIERS; --barriers)"};
    for (const Insn& in : prog_.insns)
      if (isa::info(in.op).family == isa::Family::AtomLane ||
          isa::info(in.op).family == isa::Family::AtomWarp)
        t.writes_memory = true;
    // A compare-and-swap with several warps: every memory access takes the lock (lock()).
    for (const Insn& in : prog_.insns)
      if ((mapping(in.op).flags & kCasOp) && cfg_.total_warps() > 1) mem_lock_ = true;
    body();
    t.assembly = assemble(t);
    return t;
  }

 private:
  void check_launch() {
    if (cfg_.wave > 32)
      throw Unsupported{"wave " + std::to_string(cfg_.wave) +
                        " (a Vortex warp has at most 32 threads: simx's thread masks are 32 bits)"};
    if (cfg_.total_warps() > 32)
      throw Unsupported{std::to_string(cfg_.total_warps()) +
                        " warps in all (simx's warp masks are 32 bits; this slice uses one core)"};
    if (prog_.handler || !prog_.vtables.empty() || !prog_.host.empty())
      throw Unsupported{"a trap handler, vector table or host script (the trap feature)"};
    // How each launch setting maps; a new row does not compile until it says.
    for (const exec::SettingInfo& s : exec::kSettings) {
      switch (s.id) {
        case exec::Setting::wave:        // simx -t (checked above)
        case exec::Setting::warps:       // simx -w (checked above)
        case exec::Setting::workgroups:  // consecutive Vortex warps per workgroup
        case exec::Setting::cores:       // read by %core only: wg % cores = 0
        case exec::Setting::simd:        // read by %simd only
        case exec::Setting::slm:         // the core's local memory (memory())
        case exec::Setting::vregs:       // per-thread words in memory
        case exec::Setting::sregs:       // per-warp words in memory
        case exec::Setting::mask_depth:  // static depth of the structured statements
        case exec::Setting::call_depth:  // calls are refused
        case exec::Setting::stack:       // stack accesses are refused
        case exec::Setting::max_steps:   // per-warp step counters (step())
        case exec::Setting::policy:      // Vortex schedules (runner.own_scheduler)
        case exec::Setting::seed:
        case exec::Setting::livelock_check:  // not detected (no `livelock` capability)
          break;
      }
    }
  }

  // ---- output -----------------------------------------------------------------

  void line(const std::string& s) {
    if (++lines_ > kMaxLines)
      throw Unsupported{"the assembly would exceed " + std::to_string(kMaxLines) +
                        " lines (calls are inlined: deep or recursive calls multiply the program)"};
    code_ << "  " << s << '\n';
  }
  void label(const std::string& l) { code_ << l << ":\n"; }
  std::string fresh() { return ".Lx" + std::to_string(labels_++); }

  // Loads or stores `reg` at byte offset `off` from `base` (any offset).
  void mem(const char* op, const std::string& reg, uint32_t off, const char* base) {
    if (off < 2048) {
      line(std::string(op) + " " + reg + ", " + std::to_string(off) + "(" + base + ")");
    } else {
      line("li t6, " + std::to_string(off));
      line(std::string("add t6, t6, ") + base);
      line(std::string(op) + " " + reg + ", 0(t6)");
    }
  }
  uint32_t warp_off(uint32_t w) const { return 4 * (cfg_.sregs + w); }
  uint32_t frame_off(uint32_t id, uint32_t w) const {
    return 4 * (cfg_.sregs + kWarpWords + id * kFrameWords + w);
  }
  void warp_lw(const std::string& reg, uint32_t w) { mem("lw", reg, warp_off(w), "s10"); }
  void warp_sw(const std::string& reg, uint32_t w) { mem("sw", reg, warp_off(w), "s10"); }
  void frame_lw(const std::string& reg, uint32_t id, uint32_t w) {
    mem("lw", reg, frame_off(id, w), "s10");
  }
  void frame_sw(const std::string& reg, uint32_t id, uint32_t w) {
    mem("sw", reg, frame_off(id, w), "s10");
  }

  // ---- operands -----------------------------------------------------------------

  void load_src(const Src& s, const std::string& reg) {
    switch (s.kind) {
      case SrcKind::None:
        line("li " + reg + ", 0");
        return;
      case SrcKind::VReg:
        mem("lw", reg, 4 * s.index, "s11");
        return;
      case SrcKind::LaneId:
        line("mv " + reg + ", s9");  // state.special.lane
        return;
      case SrcKind::Imm:
        line("li " + reg + ", " + hex(s.imm));
        return;
      case SrcKind::SReg:
        mem("lw", reg, 4 * s.index, "s10");
        return;
      case SrcKind::Special:
        special(static_cast<isa::Special>(s.index), reg);
        return;
    }
    throw Unsupported{"an operand the translator does not know"};
  }

  void special(isa::Special sp, const std::string& reg) {
    switch (sp) {
      case isa::Special::Lane:
        line("mv " + reg + ", s9");
        return;
      case isa::Special::Warp:  // warp within the workgroup
        line("mv " + reg + ", s0");
        return;
      case isa::Special::GWarp:  // Vortex's warp id
        line("mv " + reg + ", s8");
        return;
      case isa::Special::Wg:
        line("mv " + reg + ", s1");
        return;
      case isa::Special::Core:  // state.launch.placement: wg mod cores
        line("li " + reg + ", " + std::to_string(cfg_.cores));
        line("remu " + reg + ", s1, " + reg);
        return;
      case isa::Special::Wave:
        line("li " + reg + ", " + std::to_string(cfg_.wave));
        return;
      case isa::Special::Simd:
        line("li " + reg + ", " + std::to_string(cfg_.simd_width()));
        return;
      case isa::Special::NWarps:
        line("li " + reg + ", " + std::to_string(cfg_.warps));
        return;
      case isa::Special::NWg:
        line("li " + reg + ", " + std::to_string(cfg_.workgroups));
        return;
      case isa::Special::Exec:  // state.special.exec: the thread mask, 0 when empty
      case isa::Special::ExecLo:
        warp_lw("t6", kEmpty);
        line("addi t6, t6, -1");  // empty: 0, else all ones
        line("csrr " + reg + ", " + kCsrTmask);
        line("and " + reg + ", " + reg + ", t6");
        return;
      case isa::Special::ExecHi:  // wave <= 32
        line("li " + reg + ", 0");
        return;
      case isa::Special::Esr:
      case isa::Special::Tgid:
      case isa::Special::Gesr:
      case isa::Special::kCount:
        break;
    }
    throw Unsupported{"special register %" + std::string(isa::special_info(sp).name) +
                      " (the trap feature)"};
  }

  // Bytes of local memory per workgroup's slm (state.memory.slm).
  uint32_t slm_stride() const { return (cfg_.slm + 3) / 4 * 4; }

  uint32_t pred_off(uint8_t p) const { return 4 * (cfg_.vregs + p); }

  // A predicate as 0/1 in `reg`.
  void load_pred(uint8_t p, bool neg, const std::string& reg) {
    if (p == isa::kPredTrue) {
      line("li " + reg + ", " + (neg ? "0" : "1"));
      return;
    }
    mem("lw", reg, pred_off(p), "s11");
    if (neg) line("xori " + reg + ", " + reg + ", 1");
  }

  // Writes `reg` to the destination (vector/predicate: this thread's word; scalar:
  // the warp's word, every running thread writing the same value).
  void store_dst(const Insn& in, const std::string& reg) {
    switch (in.dst_kind) {
      case DstKind::V:
        mem("sw", reg, 4 * in.dst, "s11");
        return;
      case DstKind::S:
        mem("sw", reg, 4 * in.dst, "s10");
        return;
      case DstKind::P:
        mem("sw", reg, pred_off(static_cast<uint8_t>(in.dst)), "s11");
        return;
      case DstKind::Special:
        write_exec(static_cast<isa::Special>(in.dst), reg);
        return;
      case DstKind::None:
        break;
    }
    throw Unsupported{"an instruction without destination"};
  }

  // state.special.exec: `mov %exec*, A` sets exec to A's bits of live lanes (waves up
  // to 32: %exec and %exec_lo write the same bits, %exec_hi none); the mask stack, our
  // frames' words and Vortex's IPDOM stack, is untouched.
  void write_exec(isa::Special sp, const std::string& reg) {
    switch (sp) {
      case isa::Special::Exec:
      case isa::Special::ExecLo:
        warp_lw("t1", kLive);
        line("and " + reg + ", " + reg + ", t1");
        break;
      case isa::Special::ExecHi:  // no lane at 32 or above: exec unchanged
        return;
      case isa::Special::Lane:
      case isa::Special::Warp:
      case isa::Special::GWarp:
      case isa::Special::Wg:
      case isa::Special::Core:
      case isa::Special::Wave:
      case isa::Special::Simd:
      case isa::Special::NWarps:
      case isa::Special::NWg:
      case isa::Special::Esr:
      case isa::Special::Tgid:
      case isa::Special::Gesr:
      case isa::Special::kCount:
        throw Unsupported{"a write to a special register other than %exec"};
    }
    set_mask(reg);
  }

  // Vector-form code runs only when exec is not empty (exec.form).
  std::string guard_begin() {
    std::string skip = fresh();
    warp_lw("t0", kEmpty);
    line("bnez t0, " + skip);
    return skip;
  }

  // ---- helpers on uniform values --------------------------------------------------

  // a0 (each running thread's 0/1) -> a0 = the mask of running threads with 1.
  void ballot() { line("call __ballot"); }
  // a0 = lane index, a1 = each thread's value -> a1 = that lane's value.
  void pick() { line("call __pick"); }

  // Raises the event and ends the warp (exec.commit: nothing of the instruction is
  // committed). Registers: a0 code, a1 pc, a2 lane, a3 address, a4 buffer index.
  void raise(isa::Event e, const std::string& lane_reg = "", const std::string& addr_reg = "",
             uint32_t space = 0) {
    if (!addr_reg.empty() && addr_reg != "a3") line("mv a3, " + addr_reg);
    if (addr_reg.empty()) line("li a3, 0");
    if (!lane_reg.empty() && lane_reg != "a2") line("mv a2, " + lane_reg);
    if (lane_reg.empty()) line("li a2, -1");
    line("li a4, " + std::to_string(space));
    line("li a1, " + std::to_string(cur_pc_));
    line("li a0, " + std::to_string(static_cast<uint32_t>(e)));
    // pc_range at the end of the program is no instruction: no step for __raise to
    // take back.
    if (cur_pc_ >= prog_.size()) {
      warp_lw("t1", kSteps);
      line("addi t1, t1, 1");
      warp_sw("t1", kSteps);
    }
    line("j __raise");
  }

  // ---- statements --------------------------------------------------------------------

  void body() {
    const auto& stmts = loaded_.ast.stmts;
    stmt_pc_.resize(stmts.size());
    uint32_t pc = 0;
    for (size_t i = 0; i < stmts.size(); ++i) {
      stmt_pc_[i] = pc;
      pc += stmts[i].kind == StmtKind::Label ? 0 : stmts[i].kind == StmtKind::EndLoop ? 3 : 1;
    }
    if (pc != prog_.size()) throw Unsupported{"the AST and the expanded program disagree"};
    context(0);
  }

  // Translates the statements from index `i` on, in order: the program's entry
  // context (call depth 0), or a called one, which ends at its `ret` (branch.call:
  // calls are inlined, so the PC stack's depth is the static depth of inlining).
  // Statements after an `exit` are translated too: with an empty exec the warp goes
  // on past it.
  void context(size_t i) {
    const auto& stmts = loaded_.ast.stmts;
    const size_t saved_base = ctx_base_;
    ctx_base_ = frames_.size();
    auto own = [&](const char* what) {
      if (frames_.size() <= ctx_base_)
        throw Unsupported{std::string(what) + " closing a block its caller opened"};
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
            code_ << "# pc " << cur_pc_ << ": ret\n";
            if (call_depth_ == 0) {
              raise(isa::Event::CallUnderflow);  // branch.ret: the PC stack is empty
              break;
            }
            if (frames_.size() != ctx_base_)
              throw Unsupported{"ret with a structured block of the callee open"};
            ctx_base_ = saved_base;
            return;  // branch.ret: back after the call
          } else {
            instr(at(st.op));
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
          brk_cont(at(Op::Brk), false);
          break;
        case StmtKind::Continue:
          brk_cont(at(Op::Cont), true);
          break;
        case StmtKind::EndLoop:
          own("endloop");
          endloop_();
          break;
      }
    }
    // Falling through the end of the program (a context without exit or ret, or a
    // warp that goes on with an empty exec): event.pc_range.
    cur_pc_ = static_cast<uint32_t>(prog_.size());
    line("# end of the program: event.pc_range");
    raise(isa::Event::PcRange);
    ctx_base_ = saved_base;
  }

  // branch.call: inlined; call_overflow where the static depth reaches call_depth
  // (recursion included: a call runs whatever exec is, exec.form).
  void call_(const Insn& in) {
    code_ << "# pc " << cur_pc_ << ": " << prog_.text[cur_pc_] << "\n";
    if (call_depth_ >= cfg_.call_depth) {
      raise(isa::Event::CallOverflow);
      return;
    }
    const auto& stmts = loaded_.ast.stmts;
    size_t target = stmts.size();
    for (size_t k = 0; k < stmts.size(); ++k) {
      if (stmt_pc_[k] == in.target && stmts[k].kind != StmtKind::Label) {
        target = k;
        break;
      }
    }
    if (target == stmts.size())
      throw Unsupported{"a call whose target is not the start of a statement"};
    const uint32_t saved_pc = pc_;
    ++call_depth_;
    context(target);
    --call_depth_;
    pc_ = saved_pc;
  }

  // The instruction at pc_, which the code that follows translates; `count`: its step
  // is counted here (endloop's pop counts its own, once after the loop).
  const Insn& at(Op op, bool count = true) {
    if (pc_ >= prog_.size() || prog_.insns[pc_].op != op)
      throw Unsupported{"the AST and the expanded program disagree at pc " + std::to_string(pc_)};
    cur_pc_ = pc_;
    if (count) step();
    return prog_.insns[pc_++];
  }

  // exec.step, exec.step.order: the warp commits one step, unless it has committed
  // max_steps already; then it ends and the launch's outcome says so (kStepFlag:
  // step_limit with one warp, not reproduced with several, whose limit falls at a step
  // that depends on the scheduling). The raising instruction takes its step back
  // (raise()). With several warps each one also stops once another reached its limit.
  void step() {
    if (cfg_.total_warps() > 1) {
      line("la t1, __record");
      line("lw t1, " + std::to_string(4 * kStepFlag) + "(t1)");
      line("bnez t1, __warp_end");
    }
    warp_lw("t1", kSteps);
    line("li t2, " + hex(step_cap()));
    line("bgeu t1, t2, __step_limit");
    line("addi t1, t1, 1");
    warp_sw("t1", kSteps);
  }

  // A warp's step limit: max_steps, or the warp's share of the runner's step budget
  // when that is smaller (kStepBudget), or the 32-bit counter's range.
  uint32_t step_cap() const {
    const uint64_t lanes = std::max<uint64_t>(cfg_.wave, 4);
    const uint64_t share = std::max<uint64_t>(1, step_budget_ / (lanes * cfg_.total_warps()));
    return static_cast<uint32_t>(std::min<uint64_t>({cfg_.max_steps, share, 0xffffffffu}));
  }

  // bar.exited: an ending warp's way out of its workgroup's barrier (barrier()), and
  // __deadlock, where a warp released from a barrier that could not complete ends.
  std::string departure() const {
    if (!barrier_) return "__deadlock:\n  j __warp_gone";
    return "  lw t1, " + std::to_string(warp_off(kBars)) +
           "(s10)\n"
           "  addi t1, t1, 1\n"
           "  la t2, __wgs\n"
           "  slli t3, s1, 2\n"
           "  add t2, t2, t3\n"
           "  amominu.w zero, t1, (t2)\n"
           "  li t2, " +
           std::to_string(cfg_.warps) + "\n  " + vx_bar("s1", "t2") +
           "\n"
           "  j __warp_gone\n"
           "__deadlock:\n"
           "  csrr t0, 0xcc4\n"
           "  neg t1, t0\n"
           "  and t0, t0, t1\n"
           "  " +
           vx_tmc("t0") +
           "\n"
           "  la t1, __record\n"
           "  li t2, 1\n"
           "  sw t2, " +
           std::to_string(4 * kDeadlock) + "(t1)\n  j __warp_gone";
  }

  uint32_t step_flag() const {
    if (step_cap() < cfg_.max_steps)
      return step_cap() < 0xffffffffu ? kStepBudget : kStepCounterFull;
    return cfg_.total_warps() == 1 ? kStepLimitOneWarp : kStepLimitSeveralWarps;
  }

  std::string mnemonic(Op op) const { return std::string(isa::info(op).mnemonic); }

  void instr(const Insn& in) {
    code_ << "# pc " << cur_pc_ << ": " << prog_.text[cur_pc_] << "\n";
    const Mapping m = mapping(in.op);
    switch (m.how) {
      case Lowering::Unary:
      case Lowering::Binary:
      case Lowering::Divide:
      case Lowering::MinMax:
        alu(in, m);
        return;
      case Lowering::Compare:
      case Lowering::Equal:
        compare(in, m);
        return;
      case Lowering::Select:
        select(in);
        return;
      case Lowering::PredOp:
        pred_op(in, m);
        return;
      case Lowering::Load:
      case Lowering::Store:
        memory(in, m);
        return;
      case Lowering::Exit:
        exit_();
        return;
      case Lowering::Ballot:
      case Lowering::Vote:
      case Lowering::ReadLane:
      case Lowering::Shuffle:
        xlane(in, m);
        return;
      case Lowering::AtomLane:
      case Lowering::AtomWarp:
        atomic(in, m);
        return;
      case Lowering::Nop:
        return;
      case Lowering::Barrier:
        barrier();
        return;
      case Lowering::Inlined:
        throw Unsupported{"`" + mnemonic(in.op) + "` outside a statement (internal)"};
      case Lowering::Never:
        throw Unsupported{"`" + mnemonic(in.op) +
                          "` (raw branch primitives, traps, preemption and sub-vector regions are "
                          "not translated: only structured control flow maps onto split/join and "
                          "pred)"};
    }
  }

  // alu.*: the vector form under exec (skipped when empty), the scalar form always
  // (alu.form.scalar).
  void alu(const Insn& in, const Mapping& m) {
    // The scalar form, and `mov` to %exec (scalar only, valid.*), run whatever exec is.
    const bool vector = in.dst_kind != DstKind::S && in.dst_kind != DstKind::Special;
    std::string skip;
    if (vector) skip = guard_begin();
    load_src(in.a, "a0");
    if (m.how != Lowering::Unary) load_src(in.b, "a1");
    switch (m.how) {
      case Lowering::Unary:
        if (*m.rv) line(m.rv);
        break;
      case Lowering::Divide:
        div_zero_check(vector);
        line(std::string(m.rv) + " a0, a0, a1");
        break;
      case Lowering::Binary:
        line(std::string(m.rv) + " a0, a0, a1");
        break;
      case Lowering::MinMax:  // alu.minmax, branch-free (threads may differ)
        // t1 = (a < b); min = t1 ? a : b; max = t1 ? b : a
        line(std::string(m.rv) + " t1, a0, a1");
        if (m.flags & kMax) line("xori t1, t1, 1");
        line("neg t1, t1");
        line("and a0, a0, t1");
        line("not t1, t1");
        line("and a1, a1, t1");
        line("or a0, a0, a1");
        break;
      case Lowering::Compare:
      case Lowering::Equal:
      case Lowering::Select:
      case Lowering::PredOp:
      case Lowering::Load:
      case Lowering::Store:
      case Lowering::Exit:
      case Lowering::Ballot:
      case Lowering::Vote:
      case Lowering::ReadLane:
      case Lowering::Shuffle:
      case Lowering::Nop:
      case Lowering::Barrier:
      case Lowering::AtomLane:
      case Lowering::AtomWarp:
      case Lowering::Inlined:
      case Lowering::Never:
        throw Unsupported{"`" + mnemonic(in.op) + "` is not an ALU instruction"};
    }
    store_dst(in, "a0");
    if (vector) label(skip);
  }

  // alu.div.zero: the vector form raises for the lowest active lane with B = 0, the
  // scalar form (no lane) whatever exec is. a0 = A, a1 = B are kept.
  void div_zero_check(bool vector) {
    const std::string ok = fresh();
    if (!vector) {
      line("bnez a1, " + ok);
      raise(isa::Event::DivZero);
      label(ok);
      return;
    }
    line("mv s2, a0");
    line("mv s3, a1");
    line("seqz a0, a1");
    ballot();
    line("beqz a0, " + ok);
    line("call __ctz");
    raise(isa::Event::DivZero, "a0");
    label(ok);
    line("mv a0, s2");
    line("mv a1, s3");
  }

  // alu.cmp: a 0/1 predicate word of each active lane.
  void compare(const Insn& in, const Mapping& m) {
    const std::string skip = guard_begin();
    load_src(in.a, "a0");
    load_src(in.b, "a1");
    if (m.how == Lowering::Equal) {
      line("xor a0, a0, a1");
      line(std::string(m.rv) + " a0, a0");
    } else {
      line(std::string(m.rv) + (m.flags & kSwap ? " a0, a1, a0" : " a0, a0, a1"));
      if (m.flags & kNot) line("xori a0, a0, 1");
    }
    store_dst(in, "a0");
    label(skip);
  }

  void select(const Insn& in) {  // alu.sel
    const std::string skip = guard_begin();
    load_pred(in.pa, in.na, "t1");
    load_src(in.a, "a0");
    load_src(in.b, "a1");
    line("neg t1, t1");
    line("and a0, a0, t1");
    line("not t1, t1");
    line("and a1, a1, t1");
    line("or a0, a0, a1");
    store_dst(in, "a0");
    label(skip);
  }

  void pred_op(const Insn& in, const Mapping& m) {  // alu.pred
    const std::string skip = guard_begin();
    load_pred(in.pa, in.na, "a0");
    if (*m.rv) {
      load_pred(in.pb, in.nb, "a1");
      line(std::string(m.rv) + " a0, a0, a1");
    }
    store_dst(in, "a0");
    label(skip);
  }

  // mem.address, mem.check, mem.load, mem.store, mem.store.order.
  void memory(const Insn& in, const Mapping& m) {
    const bool store = m.how == Lowering::Store;
    const uint32_t n = m.bytes;
    const char* op = m.rv;
    const bool slm = in.space == exec::kSpaceSlm;
    if (!slm && in.space >= prog_.buffers.size())
      throw Unsupported{"a memory space other than a buffer or slm"};
    // state.memory.slm: Vortex's local memory of the core (one workgroup).
    if (slm && uint64_t{slm_stride()} * cfg_.workgroups > kLocalMemoryBytes)
      throw Unsupported{std::to_string(cfg_.workgroups) + " x slm of " + std::to_string(cfg_.slm) +
                        " bytes (Vortex's local memory has " + std::to_string(kLocalMemoryBytes) +
                        " bytes per core)"};
    const uint32_t bytes = slm ? cfg_.slm : prog_.buffers[in.space].bytes;
    // Stores have no scalar form (mem.store); a load with an s destination checks
    // once without lane (mem.load.scalar) whatever exec is.
    const bool lanes = store || in.dst_kind != DstKind::S;
    uses_slm_ = uses_slm_ || slm;
    std::string skip;
    if (lanes) skip = guard_begin();
    load_src(in.a, "s4");
    line("li t1, " + hex(in.offset));
    line("add s4, s4, t1");  // mem.address: wraps
    const Src& base = in.a;
    const bool constant = base.kind == SrcKind::None || base.kind == SrcKind::Imm;
    const uint32_t ca = (base.kind == SrcKind::Imm ? base.imm : 0u) + in.offset;
    if (!(constant && ca % n == 0 && uint64_t{ca} + n <= bytes)) {
      // s5 = misaligned, s6 = misaligned or out of bounds
      line("andi s5, s4, " + std::to_string(n - 1));
      line("snez s5, s5");
      if (bytes < n) {
        line("li s6, 1");
      } else {
        line("li t1, " + hex(bytes - n));
        line("sltu s6, t1, s4");
      }
      line("or s6, s6, s5");
      const std::string ok = fresh();
      const uint32_t mis = static_cast<uint32_t>(isa::Event::MemMisaligned);
      const uint32_t oob = static_cast<uint32_t>(isa::Event::MemOutOfBounds);
      if (lanes) {
        line("mv a0, s6");
        ballot();
        line("beqz a0, " + ok);
        line("call __ctz");
        line("mv s7, a0");  // the lowest faulting lane
        line("mv a1, s5");
        pick();
        line("mv s5, a1");  // its misalignment
        line("mv a0, s7");
        line("mv a1, s4");
        pick();
        line("mv a3, a1");  // its address
        line("mv a2, s7");
      } else {
        line("beqz s6, " + ok);
        line("mv a3, s4");
        line("li a2, -1");
      }
      line("li a0, " + std::to_string(oob));
      line("beqz s5, 1f");
      line("li a0, " + std::to_string(mis));
      line("1:");
      line("li a4, " + std::to_string(in.space));
      line("li a1, " + std::to_string(cur_pc_));
      line("j __raise");
      label(ok);
    }
    if (mem_lock_) lock();
    line(slm ? "mv t1, tp" : "la t1, buf" + std::to_string(in.space));  // tp: the workgroup's slm
    line("add s4, s4, t1");
    if (store) {
      // Threads store in ascending order within one instruction, so of several lanes
      // writing one location the highest one's value remains (mem.store.order).
      load_src(in.b, "a0");
      line(std::string(op) + " a0, 0(s4)");
    } else {
      line(std::string(op) + " a0, 0(s4)");
      store_dst(in, "a0");
    }
    if (mem_lock_) unlock();
    if (lanes) label(skip);
  }

  // atom.lane, atom.warp (spec/atomics.md) on a buffer or slm. simx applies one AMO to
  // the active threads in ascending order, each getting the word its predecessor left,
  // with no other warp in between (runners/vortex/README.md "Facts", tested): atom.lane.order and
  // atom.step hold for the AMO forms as they are. watom.* runs the AMO on the lowest
  // active thread alone (tmc) and gives its result to every active lane. atom.cas has no
  // AMO: the active threads take turns in ascending order (tmc), each with lr.w/sc.w on
  // a buffer or a plain load and store on slm (sc.w always fails on local memory). Those
  // turns are one step only if no other warp touches memory meanwhile: with several
  // warps every memory access of the program takes one lock (lock()).
  void atomic(const Insn& in, const Mapping& m) {
    const bool warp = m.how == Lowering::AtomWarp;
    const bool cas = (m.flags & kCasOp) != 0;
    const bool slm = in.space == exec::kSpaceSlm;
    if (!slm && in.space >= prog_.buffers.size())
      throw Unsupported{"a memory space other than a buffer or slm"};
    if (slm && uint64_t{slm_stride()} * cfg_.workgroups > kLocalMemoryBytes)
      throw Unsupported{std::to_string(cfg_.workgroups) + " x slm of " + std::to_string(cfg_.slm) +
                        " bytes (Vortex's local memory has " + std::to_string(kLocalMemoryBytes) +
                        " bytes per core)"};
    const uint32_t bytes = slm ? cfg_.slm : prog_.buffers[in.space].bytes;
    uses_slm_ = uses_slm_ || slm;
    // atom.lane, atom.warp.empty: with no active lane nothing happens.
    const std::string skip = guard_begin();
    if (warp) {  // atom.warp: lane l = the lowest active thread, alone
      line(std::string("csrr s7, ") + kCsrTmask);
      line("neg t1, s7");
      line("and t1, t1, s7");
      line(vx_tmc("t1"));
    }
    load_src(in.a, "s4");
    line("li t1, " + hex(in.offset));
    line("add s4, s4, t1");  // atom.address: as mem.address
    atom_check(in, bytes, warp);
    if (mem_lock_) lock();
    line(slm ? "mv t1, tp" : "la t1, buf" + std::to_string(in.space));
    line("add s4, s4, t1");
    // Every lane's operands are read before any lane writes vD (atom.lane.order).
    if (m.flags & kLockOp) {
      line("li s2, 1");  // atom.lock
    } else if (m.flags & kUnlock) {
      line("li s2, 0");  // atom.unlock
    } else {
      load_src(in.b, "s2");
    }
    if (m.flags & kNegate) line("neg s2, s2");  // atom.ops sub: old + (-A), wrapping
    if (cas) load_src(in.c, "s3");
    if (cas && !warp) {
      // The active threads one at a time in ascending order; the lanes still to go in
      // the warp's kPick word (each running thread reads it afresh).
      line(std::string("csrr s7, ") + kCsrTmask);
      warp_sw("s7", kPick);
      const std::string next = fresh();
      label(next);
      warp_lw("t1", kPick);
      line("neg t2, t1");
      line("and t2, t2, t1");
      line(vx_tmc("t2"));
      warp_lw("t1", kPick);
      line("li t2, 1");
      line("sll t2, t2, s9");
      line("not t2, t2");
      line("and t1, t1, t2");
      warp_sw("t1", kPick);
      cas_one(slm);
      store_dst(in, "a0");
      warp_lw("t1", kPick);
      line("bnez t1, " + next);
      line(vx_tmc("s7"));
      if (mem_lock_) unlock();
      label(skip);
      return;
    }
    if (cas) {
      cas_one(slm);
    } else {
      line(std::string(m.rv) + " a0, s2, (s4)");
      if (m.flags & kLockOp) line("seqz a0, a0");  // atom.lock: 1 = acquired
      if (m.flags & kUnlock) line("snez a0, a0");  // atom.unlock: 1 = a lock was held
    }
    if (mem_lock_) unlock();
    if (warp) {  // atom.warp: the one result to every active lane
      warp_sw("a0", kPick);
      line(vx_tmc("s7"));
      warp_lw("a0", kPick);
    }
    store_dst(in, "a0");
    label(skip);
  }

  // With a compare-and-swap and several warps (mem_lock_), every load, store and atomic
  // of every warp runs under one lock, taken after its checks (an event never holds it):
  // the lowest active thread spins on amoswap.w of 1 alone (uniform branches), then the
  // mask is restored; unlock stores 0. A compare-and-swap's turns, one thread at a time,
  // are then one step with respect to every other access (atom.step). a5, t1, t2.
  void lock() {
    line(std::string("csrr a5, ") + kCsrTmask);
    line("neg t1, a5");
    line("and t1, t1, a5");
    line(vx_tmc("t1"));
    line("la t1, __mem_lock");
    line("1:");
    line("li t2, 1");
    line("amoswap.w t2, t2, (t1)");
    line("bnez t2, 1b");
    line(vx_tmc("a5"));
  }
  void unlock() {
    line("la t1, __mem_lock");
    line("sw zero, 0(t1)");
  }

  // atom.ops cas for the one running thread: a0 = old; the word becomes s3 if old = s2.
  // Its branches are uniform (one thread).
  void cas_one(bool slm) {
    // sc.w always fails on local memory; under the lock no other warp touches the
    // program's memory, but the spinning warps' amoswap would clear the reservation.
    if (slm || mem_lock_) {
      line("lw a0, 0(s4)");
      line("bne a0, s2, 1f");
      line("sw s3, 0(s4)");
      line("1:");
      return;
    }
    line("1:");
    line("lr.w a0, (s4)");
    line("bne a0, s2, 2f");
    line("sc.w t1, s3, (s4)");
    line("bnez t1, 1b");
    line("2:");
  }

  // atom.lane.check (every active lane; the lowest failing one raises) and
  // atom.warp.check (`one`: the one running thread, lane l): the 4-byte access at s4
  // (in the space of `bytes`) as mem.check, misaligned before out of bounds.
  void atom_check(const Insn& in, uint32_t bytes, bool one) {
    const Src& base = in.a;
    const bool constant = base.kind == SrcKind::None || base.kind == SrcKind::Imm;
    const uint32_t ca = (base.kind == SrcKind::Imm ? base.imm : 0u) + in.offset;
    if (constant && ca % 4 == 0 && uint64_t{ca} + 4 <= bytes) return;
    line("andi s5, s4, 3");
    line("snez s5, s5");
    if (bytes < 4) {
      line("li s6, 1");
    } else {
      line("li t1, " + hex(bytes - 4));
      line("sltu s6, t1, s4");
    }
    line("or s6, s6, s5");
    const std::string ok = fresh();
    if (one) {
      line("beqz s6, " + ok);
      line("mv a3, s4");
      line("mv a2, s9");
    } else {
      line("mv a0, s6");
      ballot();
      line("beqz a0, " + ok);
      line("call __ctz");
      line("mv s3, a0");  // the lowest failing lane
      line("mv a1, s5");
      pick();
      line("mv s5, a1");  // its misalignment
      line("mv a0, s3");
      line("mv a1, s4");
      pick();
      line("mv a3, a1");  // its address
      line("mv a2, s3");
    }
    line("li a0, " + std::to_string(static_cast<uint32_t>(isa::Event::MemOutOfBounds)));
    line("beqz s5, 1f");
    line("li a0, " + std::to_string(static_cast<uint32_t>(isa::Event::MemMisaligned)));
    line("1:");
    line("li a4, " + std::to_string(in.space));
    line("li a1, " + std::to_string(cur_pc_));
    line("j __raise");
    label(ok);
  }

  // branch.exit: the active lanes retire. If none is live any more the warp ends;
  // otherwise exec is empty until a frame restores lanes that did not exit.
  void exit_() {
    const std::string skip = guard_begin();
    warp_lw("t1", kLive);
    line(std::string("csrr t2, ") + kCsrTmask);
    line("not t2, t2");
    line("and t1, t1, t2");
    warp_sw("t1", kLive);
    line("beqz t1, __warp_end");
    line("li t1, 1");
    warp_sw("t1", kEmpty);
    label(skip);
  }

  // bar.arrive, bar.release, bar.divergent: the warp, whatever its thread mask and
  // `empty`, arrives at its workgroup's Vortex barrier (id = the workgroup, count = its
  // warps) and waits there until every warp of the workgroup has arrived. One warp per
  // workgroup: the barrier completes at once (simx ignores counts below 2 too).
  // bar.exited: a warp that ends (exit, an event, the step limit) arrives at the barrier
  // of its next generation on its way out and records that generation in the
  // workgroup's word (__wgs, the lowest such generation). Every warp of the workgroup
  // then arrives at that generation exactly once, for real or on its way out, so
  // simx's barrier completes; a warp released from a generation at or past the
  // recorded one would have waited for ever on the reference: it ends with the
  // deadlock flag (__deadlock) and arrives nowhere again.
  void barrier() {
    if (!barrier_) return;
    warp_lw("t1", kBars);
    line("addi t1, t1, 1");
    warp_sw("t1", kBars);
    line("li t2, " + std::to_string(cfg_.warps));
    line(vx_bar("s1", "t2"));
    line("la t2, __wgs");
    line("slli t3, s1, 2");
    line("add t2, t2, t3");
    line("lw t3, 0(t2)");
    warp_lw("t1", kBars);
    line("bgeu t1, t3, __deadlock");
  }

  // ---- cross-lane (xlane.*) ----------------------------------------------------------
  //
  // This simx has no vote or shuffle instruction (custom-0 funct7 1 aborts), so the
  // lanes meet in memory. The threads of a warp execute each instruction one after the
  // other in lane order and the warp's instructions one at a time, so what every
  // running thread stored in one instruction is there for all of them at the next;
  // other warps never touch the words used (per warp: s10; per thread: s11).
  // Ballot and vote: __ballot (each thread clears, then `amoor`s its bit into, the
  // warp's scratch word). readlane and shfl read the source lane's vector register
  // where it lives, its thread's word of the per-thread area (the vector registers
  // are kept in memory, "Registers in memory"): the whole instruction's loads come
  // before its stores, so vD may be vA; a source lane that is out of range or
  // inactive (xlane.inactive: its word may hold anything) reads as 0, branch-free.
  void xlane(const Insn& in, const Mapping& m) {
    switch (m.how) {
      case Lowering::Ballot:
        // xlane.ballot: a scalar destination, whatever exec is (empty: 0, exec.form).
        if (m.flags & kHi) {
          line("li a0, 0");  // bits 32-63: no lane at 32 or above (wave <= 32)
        } else {
          load_pred(in.pa, in.na, "a0");
          ballot();  // the running threads with P
          special(isa::Special::Exec, "a1");
          line("and a0, a0, a1");
        }
        store_dst(in, "a0");
        return;
      case Lowering::Vote: {
        // xlane.vote: active lanes only; nothing changes with no active lane.
        const std::string skip = guard_begin();
        load_pred(in.pa, in.na, "a0");
        ballot();  // the active lanes with P (exec is the thread mask: not empty)
        if (m.flags & kAll) {
          line(std::string("csrr t1, ") + kCsrTmask);
          line("xor a0, a0, t1");
          line("seqz a0, a0");
        } else {
          line("snez a0, a0");
        }
        store_dst(in, "a0");
        label(skip);
        return;
      }
      case Lowering::ReadLane:
        // xlane.readlane: a scalar destination and a uniform L, whatever exec is.
        load_src(in.b, "a1");
        special(isa::Special::Exec, "a2");
        source_lane(in);
        store_dst(in, "a0");
        return;
      case Lowering::Shuffle: {
        // xlane.shfl: i = B (unsigned), or own lane xor B, per active lane.
        const std::string skip = guard_begin();
        load_src(in.b, "a1");
        if (m.flags & kXor) line("xor a1, a1, s9");
        line(std::string("csrr a2, ") + kCsrTmask);  // exec (not empty here)
        source_lane(in);
        store_dst(in, "a0");
        label(skip);
        return;
      }
      case Lowering::Unary:
      case Lowering::Binary:
      case Lowering::Divide:
      case Lowering::MinMax:
      case Lowering::Compare:
      case Lowering::Equal:
      case Lowering::Select:
      case Lowering::PredOp:
      case Lowering::Load:
      case Lowering::Store:
      case Lowering::Exit:
      case Lowering::AtomLane:
      case Lowering::AtomWarp:
      case Lowering::Nop:
      case Lowering::Barrier:
      case Lowering::Inlined:
      case Lowering::Never:
        break;
    }
    throw Unsupported{"`" + mnemonic(in.op) + "` is not a cross-lane instruction"};
  }

  // a1 = source lane i, a2 = exec -> a0 = lane i's value of vA if i < wave and lane i
  // is in exec, else 0 (xlane.inactive). Branch-free: an invalid i reads lane 0's word
  // (this thread's own lane's row less its lane) and is masked to 0.
  void source_lane(const Insn& in) {
    if (in.a.kind != SrcKind::VReg)
      throw Unsupported{"a cross-lane source that is not a v register"};
    line("li t1, " + std::to_string(cfg_.wave));
    line("sltu t3, a1, t1");  // i < wave (unsigned)
    line("srl t4, a2, a1");   // bit i of exec (i < 32 when it counts)
    line("andi t4, t4, 1");
    line("and t3, t3, t4");
    line("neg t3, t3");      // all ones if valid
    line("and a1, a1, t3");  // i, or 0
    line("sub t4, a1, s9");  // rows from this thread's
    line("li t1, " + std::to_string(thread_bytes()));
    line("mul t4, t4, t1");
    line("add t4, t4, s11");
    mem("lw", "a0", 4 * in.a.index, "t4");
    line("and a0, a0, t3");
  }

  // Bytes of one thread's area: its vector registers, then its predicate words.
  uint32_t thread_bytes() const { return 4 * (cfg_.vregs + isa::kNumPreds); }

  // ---- structured control flow -------------------------------------------------------

  int32_t innermost_loop() const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      if (it->loop) return static_cast<int32_t>(it->id);
    return -1;
  }

  // branch.mask.overflow at the static depth of the structured statements.
  void push_frame(const Frame& f) {
    frames_.push_back(f);
    if (frames_.size() > cfg_.mask_depth) raise(isa::Event::MaskOverflow);
  }

  // Opens the frame: remember `empty` and the thread mask.
  void open(const Frame& f) {
    warp_lw("t1", kEmpty);
    frame_sw("t1", f.id, kFEmpty);
    line(std::string("csrr t1, ") + kCsrTmask);
    frame_sw("t1", f.id, kFSaved);
  }

  // The thread mask becomes `reg` (a0..): tmc if not zero, else `empty`.
  void set_mask(const std::string& reg) {
    const std::string none = fresh(), done = fresh();
    line("beqz " + reg + ", " + none);
    warp_sw("zero", kEmpty);
    line(vx_tmc(reg.c_str()));
    line("j " + done);
    label(none);
    line("li t1, 1");
    warp_sw("t1", kEmpty);
    label(done);
  }

  // if P (branch.struct.if): the lanes with P run the then side, the others the else
  // side, then both are restored. Mode 0 (split/join) when both sides have lanes, the
  // then side has at least as many (Vortex runs the larger side first; ours runs then
  // first) and the IPDOM stack has room; otherwise mode 1 (each side under tmc).
  void if_(const Insn& in) {
    Frame f{false, next_id_++, innermost_loop(), false};
    code_ << "# pc " << cur_pc_ << ": if\n";
    push_frame(f);
    const std::string id = std::to_string(f.id);
    open(f);
    const std::string mode1 = ".Lif" + id + "_m1", then = ".Lif" + id + "_then";
    // a0 = lanes with P (0 when empty), a1 = the others
    load_pred(in.pa, in.na, "s2");
    line("mv a0, s2");
    ballot();
    warp_lw("t1", kEmpty);
    line("addi t1, t1, -1");
    line("and a0, a0, t1");
    line(std::string("csrr a1, ") + kCsrTmask);
    line("and a1, a1, t1");
    line("not t2, a0");
    line("and a1, a1, t2");
    line("mv s3, a0");
    line("mv s4, a1");
    line("beqz a0, " + mode1);
    line("beqz a1, " + mode1);
    warp_lw("t1", kDepth);
    line("li t2, " + std::to_string(cfg_.wave - 1));  // simx's IPDOM stack: wave - 1 entries
    line("bgeu t1, t2, " + mode1);
    line("call __popc");
    line("mv s5, a0");
    line("mv a0, s4");
    line("call __popc");
    line("bltu s5, a0, " + mode1);
    // mode 0: split on P; the then lanes run first, the else lanes resume after the
    // split when the then side reaches the join, branch to the else side.
    frame_sw("zero", f.id, kFMode);
    warp_lw("t1", kDepth);
    frame_sw("t1", f.id, kFToken);
    line("addi t1, t1, 1");
    warp_sw("t1", kDepth);
    frame_sw("zero", f.id, kFPhase);
    line(vx_split("s2"));
    // Reached twice: by the then lanes, and by the else lanes when the join resumes
    // them (a per-thread register could have been changed by a %exec write since).
    frame_lw("t1", f.id, kFPhase);
    line("bnez t1, .Lif" + id + "_else");
    line("j " + then);
    label(mode1);
    line("li t1, 1");
    frame_sw("t1", f.id, kFMode);
    frame_sw("s4", f.id, kFOther);
    line("mv a0, s3");
    set_mask("a0");
    label(then);
  }

  // The end of the then side: mode 0 goes to the join (which resumes the else lanes),
  // mode 1 sets the mask to the else lanes that are live (branch.invert).
  void then_end(const Frame& f) {
    const std::string id = std::to_string(f.id);
    const std::string mode1 = fresh();
    frame_lw("t1", f.id, kFMode);
    line("bnez t1, " + mode1);
    line("li t1, 1");
    frame_sw("t1", f.id, kFPhase);
    line("j .Lif" + id + "_join");
    label(mode1);
    frame_lw("a0", f.id, kFOther);
    warp_lw("t1", kLive);
    line("and a0, a0, t1");
    set_mask("a0");
    line("j .Lif" + id + "_else_body");
    label(".Lif" + id + "_else");  // mode 0: the else lanes, resumed by the join
    warp_sw("zero", kEmpty);
    label(".Lif" + id + "_else_body");
  }

  void else_(const Insn&) {
    if (frames_.empty() || frames_.back().loop) throw Unsupported{"else without if"};
    code_ << "# pc " << cur_pc_ << ": else\n";
    frames_.back().has_else = true;
    then_end(frames_.back());
  }

  // endif (branch.pop): mode 0 joins (twice: the then lanes switch to the else lanes,
  // the else lanes reconverge); then the mask is the lanes that entered, less those
  // that exited and those that left the innermost loop around (break, continue).
  void endif_(const Insn&) {
    if (frames_.empty() || frames_.back().loop) throw Unsupported{"endif without if"};
    Frame f = frames_.back();
    code_ << "# pc " << cur_pc_ << ": endif\n";
    if (!f.has_else) then_end(f);
    frames_.pop_back();
    const std::string id = std::to_string(f.id);
    const std::string after = ".Lif" + id + "_after";
    label(".Lif" + id + "_join");
    frame_lw("t1", f.id, kFMode);
    line("bnez t1, " + after);
    frame_lw("t1", f.id, kFToken);
    line(vx_join("t1"));
    warp_lw("t1", kDepth);
    line("addi t1, t1, -1");
    warp_sw("t1", kDepth);
    label(after);
    restore(f, f.loop_id);
  }

  // The frame's saved mask & live & ~(lanes that left loop `loop`), or empty; `empty`
  // again if it was when the frame opened.
  void restore(const Frame& f, int32_t loop) {
    const std::string was_empty = fresh(), done = fresh();
    frame_lw("t1", f.id, kFEmpty);
    line("bnez t1, " + was_empty);
    frame_lw("a0", f.id, kFSaved);
    warp_lw("t1", kLive);
    line("and a0, a0, t1");
    if (loop >= 0) {
      frame_lw("t1", static_cast<uint32_t>(loop), kFBroke);
      frame_lw("t2", static_cast<uint32_t>(loop), kFCont);
      line("or t1, t1, t2");
      line("not t1, t1");
      line("and a0, a0, t1");
    }
    set_mask("a0");
    line("j " + done);
    label(was_empty);
    line("li t1, 1");
    warp_sw("t1", kEmpty);
    label(done);
  }

  // loop (branch.struct.loop): lanes leave with break, wait with continue until the
  // end of the iteration; the loop goes on while a lane is active (lnext, cbr).
  void loop_(const Insn&) {
    Frame f{true, next_id_++, -1, false};
    code_ << "# pc " << cur_pc_ << ": loop\n";
    push_frame(f);
    open(f);
    frame_sw("zero", f.id, kFBroke);
    frame_sw("zero", f.id, kFCont);
    label(".Lloop" + std::to_string(f.id) + "_top");
  }

  // break P / continue P (branch.brk, branch.cont): the active lanes with P leave;
  // the rest go on under pred (none left: exec is empty).
  void brk_cont(const Insn& in, bool cont) {
    code_ << "# pc " << cur_pc_ << ": " << (cont ? "continue" : "break") << "\n";
    int32_t l = -1;  // branch.loop.find: the innermost loop of this context (valid.flow.pop)
    for (size_t k = frames_.size(); k > ctx_base_ && l < 0; --k)
      if (frames_[k - 1].loop) l = static_cast<int32_t>(frames_[k - 1].id);
    if (l < 0) throw Unsupported{"break or continue outside a loop of its context"};
    const std::string skip = guard_begin();
    load_pred(in.pa, in.na, "s2");
    line("mv a0, s2");
    ballot();  // a0 = the lanes leaving
    frame_lw("t1", static_cast<uint32_t>(l), cont ? kFCont : kFBroke);
    line("or t1, t1, a0");
    frame_sw("t1", static_cast<uint32_t>(l), cont ? kFCont : kFBroke);
    line(std::string("csrr t1, ") + kCsrTmask);
    line("not a0, a0");
    line("and a0, a0, t1");
    const std::string none = fresh();
    line("beqz a0, " + none);
    line("xori s2, s2, 1");
    line(vx_pred("s2", "t1"));  // some lane stays, so pred narrows to them
    line("j " + skip);
    label(none);
    line("li t1, 1");
    warp_sw("t1", kEmpty);
    label(skip);
  }

  // endloop = lnext; cbr pt back; pop. A loop entered with exec empty runs once.
  void endloop_() {
    if (frames_.empty() || !frames_.back().loop) throw Unsupported{"endloop without loop"};
    Frame f = frames_.back();
    frames_.pop_back();
    const std::string id = std::to_string(f.id);
    at(Op::LNext);  // a step each iteration
    code_ << "# pc " << cur_pc_ << ": endloop (lnext, cbr, pop)\n";
    at(Op::Cbr);  // a step each iteration
    const uint32_t cbr_pc = cur_pc_;
    at(Op::Pop, false);  // one step, after the last iteration
    const uint32_t pop_pc = cur_pc_;
    cur_pc_ = cbr_pc;
    const std::string pop = ".Lloop" + id + "_pop";
    frame_lw("t1", f.id, kFEmpty);
    line("bnez t1, " + pop);
    // lnext: the active lanes and those that continued (still live)
    warp_lw("t1", kEmpty);
    line("addi t1, t1, -1");
    line(std::string("csrr a0, ") + kCsrTmask);
    line("and a0, a0, t1");
    frame_lw("t1", f.id, kFCont);
    line("or a0, a0, t1");
    warp_lw("t1", kLive);
    line("and a0, a0, t1");
    frame_sw("zero", f.id, kFCont);
    // cbr: back while a lane is active
    line("beqz a0, " + pop);
    warp_sw("zero", kEmpty);
    line(vx_tmc("a0"));
    line("j .Lloop" + id + "_top");
    label(pop);
    cur_pc_ = pop_pc;
    step();
    restore(f, -1);
  }

  // ---- the program ---------------------------------------------------------------------

  std::string assemble(const Translation& t) {
    std::ostringstream o;
    const uint32_t full = cfg_.wave == 32 ? 0xffffffffu : (1u << cfg_.wave) - 1;
    const uint32_t thread_bytes = this->thread_bytes();
    const uint32_t warp_bytes = 4 * (cfg_.sregs + kWarpWords + next_id_ * kFrameWords);
    o << "# simtspec program translated by runners/vortex/translate.cpp: wave " << cfg_.wave
      << ", warps " << cfg_.warps << ", workgroups " << cfg_.workgroups << "\n"
      << "  .section .text.start, \"ax\"\n"
         "  .globl _start\n"
         "_start:\n";
    if (uses_slm_) {
      // state.memory.slm: zero at launch (never-written memory reads 0xbaadf00d on simx).
      o << "  li t0, " << hex(kLocalMemory) << "\n  li t1, "
        << hex(kLocalMemory + slm_stride() * cfg_.workgroups)
        << "\n1:\n  bgeu t0, t1, 2f\n  sw zero, 0(t0)\n  addi t0, t0, 4\n  j 1b\n2:\n";
    }
    o << "  li t0, " << cfg_.total_warps() << "\n  la t1, __warp\n  " << vx_wspawn("t0", "t1")
      << "\n"
      << "__warp:\n"
      << "  li t0, " << hex(full) << "\n  " << vx_tmc("t0") << "\n"
      << "  csrr s9, " << kCsrThreadId << "\n"
      << "  csrr s8, " << kCsrWarpId
      << "\n"
      // s0 = warp in the workgroup, s1 = workgroup, tp = the workgroup's slm
      << "  li t0, " << cfg_.warps << "\n  remu s0, s8, t0\n  divu s1, s8, t0\n"
      << "  li t0, " << slm_stride() << "\n  mul t0, t0, s1\n  li tp, " << hex(kLocalMemory)
      << "\n  add tp, tp, t0\n"
      << "  li t0, " << warp_bytes << "\n  mul t0, t0, s8\n  la s10, __warps\n  add s10, s10, t0\n"
      << "  li t0, " << cfg_.wave << "\n  mul t0, t0, s8\n  add t0, t0, s9\n"
      << "  li t1, " << thread_bytes << "\n  mul t0, t0, t1\n  la s11, __threads\n"
      << "  add s11, s11, t0\n"
      << "  li t0, " << hex(full) << "\n  sw t0, " << warp_off(kLive) << "(s10)\n";
    o << code_.str();
    o << R"(
# ---- runtime: helpers on the running threads (uniform control flow only) ----
# __ballot: a0 = 0/1 per thread -> a0 = mask of the running threads with 1
__ballot:
  addi t3, s10, )"
      << warp_off(kBallot) << R"(
  sw zero, 0(t3)
  sll t4, a0, s9
  amoor.w zero, t4, (t3)
  lw a0, 0(t3)
  ret
# __pick: a0 = lane, a1 = value per thread -> a1 = the value of that lane
__pick:
  addi t3, s10, )"
      << warp_off(kPick) << R"(
  sw zero, 0(t3)
  sub t4, s9, a0
  seqz t4, t4
  neg t4, t4
  and t4, t4, a1
  amoor.w zero, t4, (t3)
  lw a1, 0(t3)
  ret
# __popc: a0 -> number of set bits (branch-free)
__popc:
  srli t3, a0, 1
  li t4, 0x55555555
  and t3, t3, t4
  sub a0, a0, t3
  li t4, 0x33333333
  and t3, a0, t4
  srli a0, a0, 2
  and a0, a0, t4
  add a0, a0, t3
  srli t3, a0, 4
  add a0, a0, t3
  li t4, 0x0f0f0f0f
  and a0, a0, t4
  li t4, 0x01010101
  mul a0, a0, t4
  srli a0, a0, 24
  ret
# __ctz: a0 (not 0) -> index of its lowest set bit
__ctz:
  neg t3, a0
  and a0, a0, t3
  addi a0, a0, -1
  j __popc
# __raise: a0 code, a1 pc, a2 lane, a3 address, a4 buffer: one thread records the
# first event of the launch; the warp ends. The raising instruction is not a step
# (exec.commit): the step counted for it is taken back.
__raise:
  lw t1, )"
      << warp_off(kSteps) << R"((s10)
  addi t1, t1, -1
  sw t1, )"
      << warp_off(kSteps) << R"((s10)
  csrr t0, 0xcc4
  neg t1, t0
  and t0, t0, t1
  .insn r 0x0b, 0, 0, x0, t0, x0
  la t1, __record
  li t2, 1
  amoadd.w t2, t2, (t1)
  bnez t2, __warp_done
  sw a0, 4(t1)
  sw s8, 8(t1)
  sw a1, 12(t1)
  sw a2, 16(t1)
  sw a3, 20(t1)
  sw a4, 24(t1)
  j __warp_done
# __step_limit: the warp committed max_steps steps and is not done (exec.step.order)
__step_limit:
  la t1, __record
  li t2, )"
      << step_flag() << R"(
  sw t2, )"
      << 4 * kStepFlag << R"((t1)
# __warp_end: every lane exited
__warp_end:
  csrr t0, 0xcc4
  neg t1, t0
  and t0, t0, t1
  .insn r 0x0b, 0, 0, x0, t0, x0
# __warp_done: one thread of an ended warp; the last warp prints the outcome
__warp_done:
)" << departure()
      << R"(
__warp_gone:
  lw t2, )"
      << warp_off(kSteps) << R"((s10)
  la t1, __record + )"
      << 4 * kStepTotal << R"(
  amoadd.w zero, t2, (t1)
  la t1, __ended
  li t2, 1
  amoadd.w t2, t2, (t1)
  li t3, )"
      << cfg_.total_warps() - 1 << R"(
  beq t2, t3, __finish
  .insn r 0x0b, 0, 0, x0, x0, x0
__finish:
  li a0, )"
      << hex(kMagicBegin) << R"(
  call __puthex
  la a1, __record
  li a2, )"
      << kRecordWords << R"(
  call __dump
)";
    for (const OutputBuffer& b : t.outputs) {
      o << "  la a1, buf" << b.program_buffer << "\n  li a2, " << b.words << "\n  call __dump\n";
    }
    o << "  li a0, " << hex(kMagicEnd) << R"(
  call __puthex
  sw zero, 0x88(x0)
  .insn r 0x0b, 0, 0, x0, x0, x0
# __dump: a1 = address, a2 = words
__dump:
  mv s2, ra
1:
  beqz a2, 2f
  lw a0, 0(a1)
  call __puthex
  addi a1, a1, 4
  addi a2, a2, -1
  j 1b
2:
  mv ra, s2
  ret
# __puthex: a0 as 8 hex digits and a newline on console 0 (byte stores to 0x40)
__puthex:
  li t0, 28
1:
  srl t1, a0, t0
  andi t1, t1, 15
  addi t1, t1, 48
  li t2, 58
  blt t1, t2, 2f
  addi t1, t1, 39
2:
  sb t1, 0x40(x0)
  addi t0, t0, -4
  bgez t0, 1b
  li t1, 10
  sb t1, 0x40(x0)
  ret

  .data
  .balign 4
__record: .space )"
      << 4 * kRecordWords << R"(
__ended: .word 0
__wgs: .fill )"
      << cfg_.workgroups << R"(, 4, 0xffffffff
__mem_lock: .word 0
)";
    for (uint32_t i = 0; i < prog_.buffers.size(); ++i) {
      const auto& b = prog_.buffers[i];
      o << "  .balign 4\nbuf" << i << ":  # " << b.name << ", " << b.bytes << " bytes\n";
      std::vector<uint8_t> init = b.init;
      init.resize(std::max<size_t>(4, (b.bytes + 3) / 4 * 4), 0);
      for (size_t k = 0; k < init.size(); k += 4) {
        const uint32_t w =
            init[k] | init[k + 1] << 8 | init[k + 2] << 16 | uint32_t{init[k + 3]} << 24;
        o << "  .word " << hex(w) << "\n";
      }
    }
    o << "  .balign 4\n__warps: .space " << warp_bytes * cfg_.total_warps() << "\n"
      << "  .balign 4\n__threads: .space " << thread_bytes * cfg_.total_warps() * cfg_.wave << "\n";
    return o.str();
  }

  const host::Loaded& loaded_;
  const exec::Program& prog_;
  const exec::LaunchConfig& cfg_;
  std::ostringstream code_;
  std::vector<uint32_t> stmt_pc_;
  std::vector<Frame> frames_;
  uint32_t pc_ = 0, cur_pc_ = 0;
  uint32_t next_id_ = 0;
  uint32_t labels_ = 0;
  bool uses_slm_ = false;
  bool mem_lock_ = false;  // every memory access under __mem_lock (lock())
  size_t ctx_base_ = 0;    // frames_ of the contexts that called this one
  uint32_t call_depth_ = 0;
  size_t lines_ = 0;
  uint64_t step_budget_ = kDefaultStepBudget;
  uint32_t barriers_ = kDefaultBarriers;
  bool barrier_ = false;  // some `bar` with several warps per workgroup
};

}  // namespace

TranslateResult translate(const host::Loaded& loaded, const TranslateOptions& options) {
  TranslateResult r;
  try {
    r.translation = Translator(loaded, options).run();
  } catch (const Unsupported& u) {
    r.unsupported = u.reason;
  }
  return r;
}

ConsoleOutcome decode_console(const exec::Program& program, const Translation& t,
                              const std::string& console) {
  ConsoleOutcome r;
  std::vector<uint32_t> words;
  std::istringstream in(console);
  std::string l;
  bool started = false, ended = false;
  while (std::getline(in, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.rfind("#0: ", 0) != 0) continue;
    const std::string h = l.substr(4);
    if (h.size() != 8 || h.find_first_not_of("0123456789abcdef") != std::string::npos) {
      r.reason = "simx printed '" + l + "' where a hex word was expected";
      return r;
    }
    const uint32_t w = static_cast<uint32_t>(std::stoul(h, nullptr, 16));
    if (!started) {
      if (w != kMagicBegin) {
        r.reason = "simx printed '" + l + "' before the outcome";
        return r;
      }
      started = true;
      continue;
    }
    if (ended) {
      r.reason = "simx printed '" + l + "' after the outcome";
      return r;
    }
    size_t expected = kRecordWords;
    for (const OutputBuffer& b : t.outputs) expected += b.words;
    if (words.size() == expected) {
      if (w != kMagicEnd) {
        r.reason = "the outcome printed by simx does not end where expected";
        return r;
      }
      ended = true;
      continue;
    }
    words.push_back(w);
  }
  if (!ended) {
    r.reason = started ? "simx's output ends inside the outcome" : "simx printed no outcome";
    return r;
  }
  exec::Outcome& o = r.outcome;
  o.steps = words[kStepTotal];  // exec.step: the steps every warp committed
  auto not_reproduced = [&](std::string why) {
    r.kind = ConsoleOutcome::Kind::NotReproduced;
    r.reason = std::move(why);
    return r;
  };
  const char* const several =
      "the step limit among several warps depends on our scheduler (exec.step.order: the "
      "reference ends step_limit once all warps together committed max_steps steps)";
  switch (words[kStepFlag]) {
    case 0:
      break;
    case kStepLimitOneWarp:  // exec.status.step_limit: max_steps steps, the warp not done
      if (t.warps != 1 || words[0] != 0 || o.steps != t.max_steps) {
        r.reason = "a step limit record that does not fit the launch";
        return r;
      }
      o.status = exec::Status::StepLimit;
      break;
    case kStepLimitSeveralWarps:
      return not_reproduced("a warp reached max_steps: " + std::string(several));
    case kStepBudget:
      return not_reproduced("a warp committed " + std::to_string(t.step_cap) +
                            " steps, its share of the runner's step budget, before max_steps " +
                            std::to_string(t.max_steps) +
                            " (simx runs 6,000 to 16,000 thread-steps a second: --step-budget)");
    case kStepCounterFull:
      return not_reproduced(
          "a warp committed 2^32 - 1 steps (max_steps is beyond the runner's "
          "32-bit step counters)");
    default:
      r.reason = "a step flag of " + std::to_string(words[kStepFlag]);
      return r;
  }
  // exec.step.order: several warps that together committed more than max_steps steps
  // (or max_steps before an event) ended step_limit on the reference, at a step and
  // with buffers that depend on the order of the warps' steps.
  const uint32_t events = words[0];
  if (t.warps > 1 && (o.steps > t.max_steps || (events > 0 && o.steps >= t.max_steps)))
    return not_reproduced(std::to_string(o.steps) + " steps in all: " + several);
  if (events > 0) {
    if (t.warps > 1 && (t.writes_memory || events > 1)) {
      r.kind = ConsoleOutcome::Kind::NotReproduced;
      r.reason = events > 1 ? "several warps raised events: which one ends the launch first "
                              "depends on the scheduling (the reference stops every warp at the "
                              "first)"
                            : "an event in a launch of several warps that store to memory: the "
                              "other warps went on storing after it on Vortex";
      return r;
    }
    o.status = exec::Status::Trapped;
    exec::EventInfo e;
    e.code = static_cast<isa::Event>(words[1]);
    e.warp = words[2];
    e.pc = words[3];
    e.lane = words[4] == 0xffffffffu ? -1 : static_cast<int32_t>(words[4]);
    const bool memory_event =
        e.code == isa::Event::MemMisaligned || e.code == isa::Event::MemOutOfBounds;
    if (memory_event) {
      e.addr = words[5];
      if (words[6] == exec::kSpaceSlm) {
        e.space = "slm";
      } else if (words[6] < program.buffers.size()) {
        e.space = program.buffers[words[6]].name;
      } else {
        r.reason = "an event record names buffer " + std::to_string(words[6]);
        return r;
      }
    }
    o.event = e;
  } else if (words[kDeadlock] == 1 && o.status == exec::Status::Completed) {
    // exec.status.deadlock, bar.exited: a warp waited at a barrier that a departed warp
    // could not reach; the other warps ran on to their ends, as on the reference.
    o.status = exec::Status::Deadlock;
  } else if (words[kDeadlock] > 1) {
    r.reason = "a deadlock flag of " + std::to_string(words[kDeadlock]);
    return r;
  }
  size_t k = kRecordWords;
  for (const OutputBuffer& b : t.outputs) {
    const auto& pb = program.buffers[b.program_buffer];
    exec::BufferOut out;
    out.name = pb.name;
    out.type = pb.type;
    for (uint32_t i = 0; i < b.words; ++i, ++k)
      for (int s = 0; s < 32; s += 8) out.bytes.push_back(static_cast<uint8_t>(words[k] >> s));
    out.bytes.resize(pb.bytes);
    o.buffers.push_back(std::move(out));
  }
  r.kind = ConsoleOutcome::Kind::Outcome;
  return r;
}

}  // namespace simt::vortex
