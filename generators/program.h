// The structured program model the generators produce, shrink and print
// (spec/oracles.md). It is deliberately smaller than the language: data lives in
// a few vector registers, every loop carries its own termination guard, and the
// printer adds a fixed prologue and epilogue, so that every generated program is
// valid whatever the shrinker removes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simt::gen {

// Register conventions of printed programs (oracle.model.registers):
//   v0 global thread id, v1 its byte address (4 * v0), v2.. the data registers,
//   v10-v13 loop counters of main, v14-v17 of functions, v20-v23 temporaries,
//   v24-v27 slm addresses for exchanges, s2 cross-lane results, s3/s4 shared
//   buffer bases, p0-p7 conditions, p15 loop guards.
inline constexpr int kMaxData = 8;
inline constexpr int kMaxPred = 8;
inline constexpr int kScratchSlots = 4;
inline constexpr int kMaxDepth = 4;

struct Operand {
  enum class K : uint8_t { Reg, Imm, Lane } k = K::Imm;
  int32_t v = 0;  // Reg: data register index; Imm: the value
  bool operator==(const Operand&) const = default;
};

struct Cond {
  bool reuse = false;  // test predicate `pred` as it is, with no compare
  std::string cmp = "cmp.lt";
  Operand a, b;
  int pred = 0;  // p0..p7
  bool negate = false;
  bool operator==(const Cond&) const = default;
};

enum class Kind : uint8_t {
  Alu,           // op dst, a[, b] (div/rem through a guarded divisor)
  Select,        // cmp cond; sel dst, p, a, b
  LoadInput,     // ld dst, in[v1]
  StoreScratch,  // st scratch[v1 + slot * threads * 4], a
  LoadScratch,   // ld dst, scratch[...]
  If,            // cond; if [!]p ... [else ...] endif
  Loop,          // mov vC, 0; [and vL, a, 7]; loop; guard; body; endloop
  Break,         // cond; break [!]p
  Continue,      // cond; continue [!]p
  Exit,          // cond; if p; exit; endif
  Call,          // call f<slot>
  // Lanes communicate (not in lane-independent programs):
  Shfl,         // shfl dst, a-register, b
  ShflXor,      // shfl.xor dst, a-register, slot
  ReadLane,     // readlane s2, a-register, slot; mov dst, s2
  Ballot,       // cond; ballot s2, p; mov dst, s2
  Vote,         // cond; vote.any/all p7, p; sel dst, p7, 1, 0
  SharedStore,  // st shared[...], a  (lanes of a warp may collide; warps never do)
  SharedLoad,   // ld dst, shared[...]
  Exchange,     // st slm[mine], a; bar; ld dst, slm[neighbour]; bar   (main, top level)
};

struct Stmt {
  Kind kind = Kind::Alu;
  std::string op;  // Alu: mnemonic; Vote: vote.any / vote.all
  int dst = 0;     // data register index
  Operand a, b;
  Cond cond;
  int slot = 0;            // scratch slot, function index, lane, xor mask, shared address mode
  bool has_else = false;   // If
  bool limit_reg = false;  // Loop: trip count from (a & 7) instead of the immediate limit
  int limit = 0;           // Loop: immediate trip count
  std::vector<Stmt> body, other;
  bool operator==(const Stmt&) const = default;
};

struct Program {
  uint32_t wave = 8, warps = 1, workgroups = 1;
  std::string policy = "round_robin";
  uint64_t seed = 0;
  uint32_t mask_depth = 0;      // 0: the default
  int nregs = 1;                // data registers v2 .. v(1 + nregs), stored at the end
  std::vector<uint32_t> input;  // the `in` buffer, one value per thread (empty: no buffer)
  std::vector<Stmt> main;
  std::vector<std::vector<Stmt>> functions;
  bool operator==(const Program&) const = default;

  uint32_t threads() const { return wave * warps * workgroups; }
};

// The program as source text (oracle.model.print).
std::string print(const Program& p);

// Whether a statement of kind k lets lanes communicate (cross-lane, shared or
// exchange), and whether any statement of a program does.
bool communicating(Kind k);
bool communicates(const Program& p);
// Whether a body or a program has a statement of kind k, nested ones included.
bool uses(const std::vector<Stmt>& b, Kind k);
bool uses(const Program& p, Kind k);
// Number of statements, nested ones included.
size_t statement_count(const Program& p);

}  // namespace simt::gen
