// The structured program model the generators produce, shrink and print
// (spec/oracles.md, oracle.model). It is deliberately smaller than the language:
// data lives in a few vector registers, every loop carries its own termination
// guard, and the printer adds a fixed prologue and epilogue, so that every
// generated program is valid whatever the shrinker removes. Two evaluators run
// this model directly: the per-lane sequential evaluator (evaluator.h) and the
// structured warp evaluator (warp_eval.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "syntax/ast.h"

namespace simt::gen {

// Register conventions of printed programs (oracle.model.registers). The
// evaluators model registers by these numbers, so a statement that writes one
// of them affects exactly what it affects in the printed program.
inline constexpr int kMaxData = 8;  // data registers v2 .. v9
inline constexpr int kMaxPred = 8;  // condition predicates p0 .. p7
inline constexpr int kScratchSlots = 4;
inline constexpr int kMaxDepth = 4;      // nesting of if/loop blocks (3 levels generated)
inline constexpr int kMaxFunctions = 3;  // f0, f1, f2
inline constexpr uint32_t kVregs = 64;   // `.vregs 64`
inline constexpr uint32_t kSregs = 64;   // `.sregs 64`
inline constexpr int kAddrTemp = 18;     // v18: base of negative-offset accesses
inline constexpr int kTrapTemp = 19;     // v19: addresses and divisors of trap statements
inline constexpr int kDivTemp = 20;      // v20: guarded divisors
inline constexpr int kSharedTemp = 21;   // v21: shared-buffer addresses
inline constexpr int kSlmNext = 24;      // v24: the neighbour's SLM word
inline constexpr int kSlmMine = 26;      // v26: this thread's SLM word (several workgroups)
inline constexpr int kScalarAcc = 5;     // s5: result of scalar statements
inline constexpr int kReadLaneReg = 6;   // s6: lane index of readlane with a register
inline constexpr int kScalarDiv = 7;     // s7: guarded scalar divisors
inline constexpr int kBudget = 16;       // s16: recursion budget
inline constexpr int kCountedPred = 8;   // p8: counted-loop back-edge condition
inline constexpr int kRecursePred = 12;  // p12: recursion guard
inline constexpr int kVotePred = 14;     // p14: vote results
inline constexpr int kGuardPred = 15;    // p15: loop guards
// Mixed-wave-size programs (oracle.model.regions): the shared temporaries
// v64-v67, declared shared with `.vshared 64` (wave.shared) above every register
// the rest of the program uses; the program then has `.vregs 68`. The software
// loop's scalars sH and sL (wave.soft.loop) are s60 and s61, which no statement uses.
inline constexpr int kSharedBase = 64;
inline constexpr int kSharedRegs = 4;
// s13: the result of scalar statements in a region within the model, read only by
// the add right after its write (a region's s5 could be read after it, wave.scalar).
inline constexpr int kRegionScalar = 13;
inline constexpr int kSoftHigh = 60;
inline constexpr int kSoftLow = 61;
// The lowered warp-wide atomic (Program::lower_warp_atomics): v23 its operand, v22
// the per-lane result, s21 the lowest active lane, s22/s23/s12 its computation,
// p13 the lane test.
inline constexpr int kLoweredResult = 22;
inline constexpr int kLoweredPred = 13;
// The counting instrumentation (Program::count_atomics, oracle.invariant.atomic_count):
// v60 the counting atomic's old value, v61 this lane's participations, v62 the log
// entry, v63 its byte address; s56 whether any lane is active, s57 an address,
// s58 / s59 the warp's non-empty per-lane / warp-wide counting atomics so far.
inline constexpr int kCountOld = 60;
inline constexpr int kCountScalar = 56;
// Entries of each log; old values at or above it all land in the last word.
inline constexpr uint32_t kCountLog = 1024;
// The logging handlers of host programs (Program::Handler::Log*, oracle.model.hostprog):
// scratch registers s48-s52; the log `hlog`, kLogWords words per global warp: word
// 0 the entries the warp took part in, then kLogRecords records of kLogFields
// words, entry n (from 1) in record n mod kLogRecords; the table `skip`.
inline constexpr uint32_t kLogWords = 64;
inline constexpr uint32_t kLogRecords = 4;
inline constexpr uint32_t kLogFields = 14;
inline constexpr uint32_t kLogAllFields = (1u << kLogFields) - 1;
// The maximum step count host programs run with (`.max_steps`): they have no loop,
// so a launch that gets there runs an event the handler skips over and over.
inline constexpr uint64_t kHostMaxSteps = 20000;
// The recording trap handler (Program::Handler::Record, oracle.model.handler): its
// scalar scratch registers s48-s51 and predicate p11, which no statement uses; its
// log buffer `trec`, kRecordWords words per global warp: word 0 the number of
// events the warp raised, then up to kRecords records of kRecordFields words.
inline constexpr int kHandlerScalar = 48;
inline constexpr int kHandlerPred = 11;
inline constexpr uint32_t kRecordWords = 64;
inline constexpr uint32_t kRecords = 7;
inline constexpr uint32_t kRecordFields = 8;
// The fields of a record, in order (trap.frame, trap.esr, trap.gesr).
enum RecordField : uint32_t {
  kRecCause,   // %esr: the cause word (trap.cause)
  kRecTgid,    // %tgid: the raising warp's global id
  kRecPc,      // frame word 0 as saved: the resume PC (trap.resume.pc)
  kRecLane,    // frame word 40: the event's lane, or 0xffffffff
  kRecAddr,    // frame word 44: the event's address, or 0
  kRecSpace,   // frame word 48: the event's space, or 0xffffffff
  kRecGesr,    // %gesr: the global ESR as the core sees it (trap.gesr)
  kRecStatus,  // frame word 20: 1 if the warp was unwound from a barrier
};
// A function index for the context of main in the helpers below.
inline constexpr int kMain = -1;

// Loop counter and limit vector registers of structured loops at nesting k of
// context `fn` (kMain or a function index): main v10-v13 / v28-v31, function i
// v(36+8i)-v(39+8i) / v(40+8i)-v(43+8i). Each function has its own, so that a
// call from inside a loop does not disturb the caller's counter.
int loop_counter(int fn, int k);
int loop_limit(int fn, int k);
// Counter of counted loops (scalar) at nesting k: main s8-s11, function i s(24+8i)+k.
int counted_counter(int fn, int k);
// Exec saved by an exec-narrowing region at nesting k (0 or 1): bits 0-31 and 32-63.
int narrow_save_lo(int fn, int k);
int narrow_save_hi(int fn, int k);

// How an immediate is written (syntax.lex.number): the value is the same.
enum class Notation : uint8_t {
  Dec,       // 5, -5
  Hex,       // 0x1f, the 32-bit pattern in lowercase
  HexUpper,  // 0x1F
  Bin,       // 0b101
  NegHex,    // -0x5 for negative values (else as Hex)
  Padded,    // 007 (leading zeros), negative values as Dec
  kCount
};

struct Operand {
  // Reg: data register `v` (index mod nregs); Imm: the value `v`; Lane: %lane;
  // Special: the uniform special register with isa::Special index `v`; Scalar: s5;
  // Shared: the shared temporary v(64 + v mod 4) (oracle.model.regions).
  enum class K : uint8_t { Reg, Imm, Lane, Special, Scalar, Shared } k = K::Imm;
  int32_t v = 0;
  Notation notation = Notation::Dec;  // Imm only
  bool operator==(const Operand&) const = default;
  bool uniform() const { return k == K::Imm || k == K::Special || k == K::Scalar; }
};

struct Cond {
  bool reuse = false;  // test predicate `pred` as it is, with no compare
  std::string cmp = "cmp.lt";
  Operand a, b;
  int pred = 0;  // p0..p7
  bool negate = false;
  bool operator==(const Cond&) const = default;
};

// Width and extension of a memory access (mem.load, mem.store).
enum class Width : uint8_t { W32, U8, S8, U16, S16 };
uint32_t width_bytes(Width w);

// Trap statements (oracle.model.traps): accesses and divisions that raise an
// event in some lanes, in single-warp programs only.
enum class TrapKind : uint8_t {
  VectorDivZero,    // and v19, A, 3; div dst, B, v19: lanes where A mod 4 = 0
  ScalarDivZero,    // div s5, s5, 0
  LoadOutOfRange,   // shl v19, v1, slot; ld dst, out[v19]
  StoreOutOfRange,  // shl v19, v1, slot; st out[v19], A
  Misaligned,       // add v19, v1, %lane; ld dst, out[v19]
  ScalarLoadOut,    // ld s5, out[size of out]
  NegativeAddress,  // ld dst, out[v1-4]: lane 0 of warp 0 wraps to 2^32 - 4
  MisalignedPast,   // ld{,.u16,.s16} dst, out[v1+size of out+1]: misaligned and past the end
  StraddleEnd,      // ld dst, tail[4]: a word whose first byte is in the 6-byte buffer tail
  // Version 3:
  AtomicLaneOut,  // shl v19, v1, 1 + limit; atom.OP dst, out[v19], A: every active lane checked
  AtomicWarpOut,  // shl v19, v1, 1 + limit; watom.OP dst, out[v19], A: the lowest active lane only
  kCount
};

enum class Kind : uint8_t {
  Alu,           // op dst, a[, b] (div/rem through a guarded divisor)
  Select,        // cmp cond; sel dst, p, a, b
  LoadInput,     // ld dst, in[v1]
  StoreScratch,  // st{,.8,.16} scratch[v1 + slot area + offset], a   (or through v18 - D)
  LoadScratch,   // ld{,.u8,.s8,.u16,.s16} dst, scratch[...]
  If,            // cond; if [!]p ... [else ...] endif   (raw: push/invert/pop)
  Loop,          // mov vC, 0; [and vL, a, 7]; loop; guard; body; endloop   (raw: primitives)
  Break,         // cond; break [!]p   (raw: brk)
  Continue,      // cond; continue [!]p   (raw: cont)
  Exit,          // cond; if p; exit; endif   (raw: exit, every active lane)
  Call,          // call f<slot>: from main any function, from f_i a later one
  // Lanes communicate (not in lane-independent programs):
  Shfl,         // shfl dst, a-register, b
  ShflXor,      // shfl.xor dst, a-register, slot
  ReadLane,     // [mov s6, slot;] readlane s2, a-register, slot|s6; mov dst, s2
  Ballot,       // cond; ballot[.hi] s2, p; mov dst, s2
  Vote,         // cond; vote.any/all p14, p; sel dst, p14, 1, 0
  SharedStore,  // st shared[...], a  (lanes of a warp may collide; warps never do)
  SharedLoad,   // ld dst, shared[...]
  Exchange,     // st slm[mine], a; bar; ld dst, slm[neighbour]; bar
  // Version 2:
  ScalarAlu,    // op s5, ua, ub (uniform operands); [add dst, dst, s5]
  PredOp,       // pand/por/pxor pD, [!]pA, [!]pB | pmov pD, [!]pA; [sel dst, pD, 1, 0]
  ScalarLoad,   // ld{,.u8,...} s5, in|out[offset]; [add dst, dst, s5]
  Skip,         // cond; cbr p, L; body; L:     (taken only when uniform)
  Jump,         // jmp L; body (never runs); L:
  CountedLoop,  // mov sC, 0; L: body; add sC, sC, 1; cmp.lt p8, sC, limit; cbr p8, L
  Recurse,      // guarded call of the enclosing function, budget s16
  ExecNarrow,   // save exec; exec = exec & mask (writes %exec...); body; restore exec
  Barrier,      // bar
  Nop,          // nop
  Trap,         // a statement that raises an event in some lanes (TrapKind in slot)
  Spin,         // loop (raw: L:) body; break !pt (raw: jmp L): never ends (livelock oracle)
  // Version 3:
  Atomic,  // [address as SharedStore;] atom.OP|watom.OP dst, shared[...], a (cas: 0, a)
  // Version 4:
  Sys,  // sys A (A uniform): a system call with the code A (trap.sys)
  // Version 5 (oracle.model.regions):
  Region,     // subv.begin; body; subv.end   (top level of main only)
  SharedAlu,  // op v(64 + slot), a[, b]: a write of a shared temporary
  // Version 6 (oracle.model.hostprog):
  VCall,      // vcall A (A uniform): entry A of the bound vector table (trap.vector)
  ExecClear,  // mov %exec, 0: the epilogue's stores and exit act on no lane, and
              // the warp runs on past main's exit (event.pc_range)
  kCount
};
std::string_view kind_name(Kind k);

// The atomic mnemonics Kind::Atomic chooses from (atom.*, watom.*), whether one
// takes an operand (all but lock and unlock), and whether it is a compare-exchange.
const std::vector<std::string>& atomic_ops();
bool atomic_takes_operand(const std::string& op);
bool is_cas(const std::string& op);

struct Stmt {
  Kind kind = Kind::Alu;
  std::string op;  // Alu, ScalarAlu, PredOp: mnemonic; Vote: vote.any/all; Ballot: ballot/.hi
  int dst = 0;     // data register index (PredOp: destination predicate)
  Operand a, b;
  Cond cond;
  // scratch slot, function index, lane, xor mask, shared address mode, trap kind,
  // shared temporary (SharedAlu)
  int slot = 0;
  bool has_else = false;       // If
  bool limit_reg = false;      // Loop: trip count from (a & 7) instead of the immediate limit
  int limit = 0;               // Loop, CountedLoop: immediate trip count
  bool raw = false;            // If, Loop, Break, Continue, Exit, Spin: as primitives
  Width width = Width::W32;    // StoreScratch, LoadScratch, ScalarLoad
  int offset = 0;              // memory: byte offset inside the word (aligned to the width)
  int neg = 0;                 // memory: > 0 prints the address as (v18 - neg), v18 = address + neg
  bool accumulate = false;     // ScalarAlu, ScalarLoad: add s5 into dst; PredOp: select into dst
  uint64_t mask = 0;           // ExecNarrow: lanes kept
  bool region_scalar = false;  // ScalarAlu, ScalarLoad: the result in s13, not s5
  int p2 = 0;                  // PredOp: second source predicate
  bool n2 = false;             // PredOp: second source negated
  // If: `again` runs after a second `invert`, on the lanes of the first side that
  // are still there (branch.invert); an if with it is always printed raw.
  std::vector<Stmt> body, other, again;
  bool operator==(const Stmt&) const = default;
};

struct Program {
  uint32_t wave = 8, warps = 1, workgroups = 1;
  uint32_t simd = 0;   // 0: the same as wave
  uint32_t cores = 1;  // only %core observes it
  std::string policy = "round_robin";
  uint64_t seed = 0;
  uint32_t mask_depth = 0;      // 0: the default
  uint32_t call_depth = 0;      // 0: the default
  int nregs = 1;                // data registers v2 .. v(1 + nregs), stored at the end
  uint32_t budget = 0;          // recursion budget (s16 at launch)
  std::vector<uint32_t> input;  // the `in` buffer, one value per thread (empty: no buffer)
  // How `in` is initialised when its values allow it (syntax.buffer.init): a list,
  // iota(a, b) for an arithmetic sequence, fill(v) for equal values.
  enum class InputForm : uint8_t { List, Iota, Fill } input_form = InputForm::List;
  // Line ends of the printed text (syntax.lex.lines): LF, CR LF or CR alone.
  enum class LineEnd : uint8_t { LF, CRLF, CR } line_end = LineEnd::LF;
  // Prints each warp-wide atomic as the per-lane one restricted to the lowest
  // active lane followed by a readlane broadcast (the atomic-broadcast oracle).
  bool lower_warp_atomics = false;
  // After each atomic statement, a counting atomic of the same family (atom.add or
  // watom.add of 1 on `tally`) and the instructions that record its participants
  // and old value (the atomic-count oracle).
  bool count_atomics = false;
  // The trap handler installed with `.handler` (oracle.model.handler): none; the
  // recording handler (logs each event in `trec`, skips exceptions, returns);
  // one that only returns (`tclear; tret`, the trap-transparency oracle); or the
  // instructions in handler_code (tests of the oracles).
  // Mark: the shrinker's smaller recorder (oracle.shrink): the raising warp
  // stores its cause word and its view of the global ESR at the head of its log
  // and returns; nothing is skipped. MarkPc: the cause word and the frame's
  // resume PC (word 2) instead.
  // LogReturn, LogPause, LogFault: the logging handlers of host programs
  // (oracle.model.hostprog), installed at launch; a host script's bind_tba may name
  // any of their labels (log_ret, log_pause, log_fault) whatever `handler` is.
  enum class Handler : uint8_t {
    None,
    Record,
    Return,
    Custom,
    Mark,
    MarkPc,
    LogReturn,
    LogPause,
    LogFault
  } handler = Handler::None;
  std::string handler_code;  // Custom: the handler's lines, after its label `trap_custom`
  // `.stack` (state.memory.stack), 0 for the default. Below 64 no frame fits, so
  // the first entry ends the launch with frame_overflow (trap.frame.room).
  uint32_t stack = 0;
  // The launch's host script (trap.host): not part of the text; run with it
  // (host::LoadOptions::host), and a regression test carries it as [[host]].
  std::vector<syntax::HostStep> host;
  // oracle.model.regions: `.vshared 64` (the shared temporaries are shared,
  // wave.shared); without it they are private registers like the others.
  bool vshared = false;
  // How Region statements print: as a sub-vector region (subv.begin ... subv.end);
  // as `nop` in place of subv.begin and subv.end (normal mode, the same PCs: the
  // mode-equivalence oracle); as the software loop of wave.soft.loop around the
  // body (the software-loop oracle); or as the one-scalar sequence of
  // wave.soft.source (sS = s60, sT = s61), which agrees only sometimes.
  enum class RegionForm : uint8_t {
    Hardware,
    Nops,
    Software,
    SoftwareSource
  } region_form = RegionForm::Hardware;
  // oracle.model.hostprog: the fields of its records the logging handlers store
  // (bit f: field f, kLogAllFields all of them, 0 no record: they only count
  // entries), and whether they skip the exceptions (the shrinker turns each off);
  // the vector tables `.vtable vtI f.., f..` (function indices, taken modulo the
  // functions; none printed without functions); `.max_steps` (0: 1000000).
  uint32_t log_fields = kLogAllFields;
  bool log_skip = true;
  bool log_count = true;  // without: no count, and the fields go to record 0
  // The logging handlers that return or pause wait at a barrier before their
  // skip (bar.arrive in handler code: the join waits for them, trap.join).
  bool log_barrier = false;
  std::vector<std::vector<int>> vtables;
  uint64_t max_steps = 0;
  bool host_program = false;  // generated as a host program (it prints nothing)
  std::vector<Stmt> main;
  std::vector<std::vector<Stmt>> functions;
  bool operator==(const Program&) const = default;

  uint32_t threads() const { return wave * warps * workgroups; }
  uint32_t simd_width() const { return simd ? simd : wave; }
  // Vector registers per lane (`.vregs`): 68 when the shared temporaries are
  // used or declared (oracle.model.regions), else 64.
  uint32_t vregs() const;
};

// Where each statement's own instructions landed in the printed program
// (oracle.model.print): the PCs of the instructions a statement emits itself, in
// order, excluding those of its nested bodies. The structured evaluator takes
// the PC of an event from here; it is the only thing it takes from the printer.
struct Layout {
  std::map<const Stmt*, std::vector<uint32_t>> pcs;
  uint32_t size = 0;  // instructions in all
};

// The program as source text (oracle.model.print), and where its statements are.
std::string print(const Program& p, Layout* layout = nullptr);

// Whether a statement of kind k lets lanes communicate (cross-lane, shared or
// exchange), and whether any statement of a program does.
bool communicating(Kind k);
bool communicates(const Program& p);
// Whether a body or a program has a statement of kind k, nested ones included.
bool uses(const std::vector<Stmt>& b, Kind k);
bool uses(const Program& p, Kind k);
// The operands statement s prints (and so reads), by kind.
std::vector<const Operand*> operands_read(const Stmt& s);
// Whether a statement reads or writes a shared temporary, and whether p has any.
bool uses_shared_temp(const Stmt& s);
bool uses_shared_temps(const Program& p);
// oracle.model.regions: "" if p is a mixed-wave-size program within the model
// (regions only at the top level of main, with lane-local bodies whose scalar
// writes are never read before them and whose shared temporaries are written
// before they are read, at the region's own top level, and are not used outside
// regions), else what breaks the model.
std::string region_problem(const Program& p);
// The program with every region replaced by its body and no `.vshared`
// (the shared temporaries become private registers): normal mode.
Program without_regions(const Program& p);
// oracle.model.preempt: whether p's host script has a preemption point (a
// `preempt` action); such a program prints `.sys_save`/`.sys_restore` and the
// standard system routine (sysroutine.h) after all its other code.
bool preempts(const Program& p);
// The number of preemption points in p's host script.
size_t preemption_points(const Program& p);
// The instructions of the standard system routine (not the application's:
// oracle.shrink counts the application's only).
size_t sys_routine_instructions();
// Whether a trap statement of kind k appears in p.
bool uses_trap(const Program& p, TrapKind k);
// Whether a statement of p raises an event (trap or sys statements).
bool raises(const Program& p);
// Whether a warp-wide atomic (watom.*) appears in p.
bool uses_warp_atomic(const Program& p);
// Whether an atomic on `counters` (slot kCounterSlot) appears in p.
bool uses_counters(const Program& p);

// Atomic statements with slot 2 update the buffer `counters`, shared by every
// warp, with a commutative operation, one word per operation, and discard the old
// value (into v22): the final memory does not depend on the schedule
// ([exec.sched.independence] with atomics). The commutative suffixes, each
// word's operation and initial value:
const std::vector<std::string>& commutative_atomics();  // add, and, or, ... max.u
int counter_word(const std::string& op);                // index into counters, or -1
uint32_t counter_init(int word);
inline constexpr int kCounterSlot = 2;
// Number of statements, nested ones included.
size_t statement_count(const Program& p);
// Statements per kind, nested ones included.
std::map<Kind, uint64_t> kind_counts(const Program& p);

// The function a Call statement in context `fn` calls, or -1 if it prints nothing
// (main calls f(slot mod n); f_i calls a later function, if there is one).
int call_target(const Program& p, int fn, const Stmt& s);

// The handler's entry label and lines (oracle.model.handler), "" for None.
std::string handler_label(const Program& p);
// oracle.model.hostprog: the label of a logging handler (LogReturn, LogPause,
// LogFault), and the labels print(p) defines: the installed one and every one a
// bind_tba of its host script names, in that order.
std::string log_label(Program::Handler h);
std::vector<std::string> log_labels(const Program& p);
// The name of vector table i (`vt0`, `vt1`, ...).
std::string vtable_name(size_t i);
// The names of the buffers print(p) declares, in declaration order (their index
// is the space of memory events, trap.frame).
std::vector<std::string> buffer_names(const Program& p);

// The 32-bit pattern of the immediate as the printer writes it (syntax.operand.imm).
std::string imm_text(int64_t value, Notation n);

}  // namespace simt::gen
