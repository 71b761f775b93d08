// The Vortex runner (runners/vortex/README.md): the translator's output for each
// instruction family assembled with Debian's RISC-V toolchain (skipped without
// riscv64-unknown-elf-gcc, failing instead under SIMT_REQUIRE_RISCV=1); what it refuses
// and why; the decoding of simx's console; and, where SIMT_SIMX names a simx, programs
// run end to end through simtspec-vortex and compared with the reference (skipped
// otherwise, failing instead under SIMT_REQUIRE_SIMX=1).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness.h"
#include "host/host.h"
#include "process.h"
#include "readme_text.h"
#include "reference.h"
#include "results.h"
#include "translate.h"

namespace {

using namespace simt;
namespace fs = std::filesystem;

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

bool have_riscv() {
  return std::system("riscv64-unknown-elf-gcc --version > /dev/null 2>&1") == 0;
}

#define SKIP_WITHOUT_RISCV()                                                                 \
  if (!have_riscv()) {                                                                       \
    if (env_set("SIMT_REQUIRE_RISCV")) FAIL() << "riscv64-unknown-elf-gcc is not installed"; \
    GTEST_SKIP() << "riscv64-unknown-elf-gcc is not installed (Debian's "                    \
                    "gcc-riscv64-unknown-elf): the translations are not assembled";          \
  }

vortex::TranslateResult translate(const std::string& text) {
  auto loaded = host::load(text);
  EXPECT_TRUE(loaded.loaded.has_value()) << text;
  if (!loaded.loaded) return {};
  return vortex::translate(*loaded.loaded);
}

// Assembles and links the translation as the runner does; "" or the toolchain's
// messages.
std::string assemble(const vortex::Translation& t) {
  char tmpl[] = "/tmp/vortex-test.XXXXXX";
  if (!::mkdtemp(tmpl)) return "mkdtemp failed";
  const fs::path dir = tmpl;
  std::ofstream(dir / "p.S") << t.assembly;
  std::ofstream(dir / "l.ld")
      << "ENTRY(_start)\nSECTIONS { . = 0x80000000; .text : { *(.text.start) *(.text*) }\n"
         ".data : { *(.data*) } }\n";
  const std::string cmd = "cd " + dir.string() +
                          " && riscv64-unknown-elf-gcc -march=rv32ima_zicsr -mabi=ilp32 "
                          "-nostdlib -nostartfiles -static -Wl,--no-warn-rwx-segments -T l.ld "
                          "-o p.elf p.S > log.txt 2>&1 && riscv64-unknown-elf-objcopy -O binary "
                          "p.elf p.bin >> log.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  std::string log;
  if (rc != 0) {
    std::ifstream in(dir / "log.txt");
    log = std::string(std::istreambuf_iterator<char>(in), {});
    if (log.empty()) log = "the toolchain failed";
  } else if (!fs::exists(dir / "p.bin") || fs::file_size(dir / "p.bin") == 0) {
    log = "no image";
  }
  fs::remove_all(dir);
  return log;
}

// One program per instruction family (and per structured statement), each with
// the Vortex instructions its translation must use.
struct Case {
  const char* name;
  const char* program;
  std::vector<const char*> uses;  // substrings of the assembly
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"unary",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n mov v1, 7\n not v2, v1\n popc v3, v2\n"
       " st o[v0], v3\n exit\n",
       {"call __popc", "sw a0, 0(s4)"}},
      {"binary",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n add v1, %lane, 3\n sub v1, v1, 1\n"
       " mul v1, v1, v1\n mulhi v2, v1, -5\n mulhi.u v2, v2, v1\n and v1, v1, 0xff\n"
       " or v1, v1, v2\n xor v1, v1, 9\n shl v1, v1, 33\n shr v1, v1, 1\n sra v1, v1, 2\n"
       " min v1, v1, 5\n max v1, v1, -5\n min.u v1, v1, 100\n max.u v1, v1, 3\n"
       " st o[v0], v1\n exit\n",
       {"mulh a0", "mulhu a0", "sll a0", "srl a0", "sra a0", "slt t1", "sltu t1"}},
      {"division",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n add v1, %lane, 1\n div v2, -7, v1\n"
       " div.u v3, 100, v1\n rem v4, -7, v1\n rem.u v5, v3, v1\n add v2, v2, v4\n"
       " add v2, v2, v5\n st o[v0], v2\n exit\n",
       {"div a0", "divu a0", "rem a0", "remu a0", "call __ctz", "j __raise"}},
      {"scalar division",
       ".wave 4\n.buffer o u32[1] out\n mov s0, 9\n div s1, s0, 3\n st o[0], s1\n exit\n",
       {"bnez a1", "j __raise"}},
      {"compare and select",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 2\n"
       " cmp.ge.u p1, %lane, 1\n cmp.eq p2, %lane, 3\n cmp.ne p3, %lane, 3\n"
       " cmp.le p4, %lane, 1\n cmp.gt p5, %lane, 1\n cmp.lt.u p6, %lane, 1\n"
       " cmp.le.u p7, %lane, 1\n cmp.gt.u p8, %lane, 1\n cmp.ge p9, %lane, 1\n"
       " pand p10, p0, p1\n por p10, p10, !p2\n pxor p10, p10, p3\n pmov p11, p10\n"
       " sel v1, p11, 10, 20\n st o[v0], v1\n exit\n",
       {"slt a0", "sltu a0", "seqz a0", "snez a0", "neg t1"}},
      {"loads and stores",
       ".wave 4\n.buffer i u32[4] in = 1, 2, 3, 4\n.buffer o u8[16] out\n"
       " shl v0, %lane, 2\n ld v1, i[v0]\n ld.u8 v2, i[v0]\n ld.s8 v3, i[v0 + 1]\n"
       " ld.u16 v4, i[v0]\n ld.s16 v5, i[v0 + 2]\n add v1, v1, v2\n st.8 o[%lane], v1\n"
       " st.16 o[v0 + 2], v3\n st o[v0], v4\n ld s0, i[4]\n st o[0], s0\n exit\n",
       {"lw a0, 0(s4)", "lbu a0", "lb a0", "lhu a0", "lh a0", "sb a0", "sh a0", "sw a0",
        "call __pick"}},
      {"slm",
       ".wave 4\n.slm 16\n.buffer o u32[4] out\n shl v0, %lane, 2\n st slm[v0], %lane\n"
       " ld v1, slm[v0]\n st o[v0], v1\n exit\n",
       {"li tp, 0xffff0000", "mv t1, tp", "sw zero, 0(t0)"}},
      {"if else",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 3\n if p0\n"
       " st o[v0], 1\n else\n st o[v0], 2\n endif\n exit\n",
       {".insn r 0x0b, 2, 0, x0, s2, x0", ".insn r 0x0b, 3, 0, x0, t1, x0",
        ".insn r 0x0b, 0, 0, x0, a0, x0"}},
      {"loop break continue",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n mov v1, 0\n loop\n"
       " add v1, v1, 1\n cmp.eq p1, v1, 2\n continue p1\n cmp.ge p0, v1, %lane\n break p0\n"
       " endloop\n st o[v0], v1\n exit\n",
       {".insn r 0x0b, 5, 0, x0, s2, t1", ".Lloop0_top"}},
      {"exit inside if",
       ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n cmp.eq p0, %lane, 1\n if p0\n"
       " exit\n endif\n st o[v0], 5\n exit\n",
       {"beqz t1, __warp_end"}},
      // xlane.*: ballots through the warp's scratch word (amoor), readlane and shfl
      // from the source lane's register word, masked by exec and the range.
      {"cross-lane",
       ".wave 8\n.buffer o u32[8] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 3\n"
       " ballot s0, p0\n ballot.hi s1, !p0\n vote.any p1, p0\n vote.all p2, !p0\n"
       " readlane s2, v0, 5\n readlane s3, v0, s0\n shfl v1, v0, s0\n shfl.xor v2, v1, %lane\n"
       " add v2, v2, s2\n st o[v0], v2\n exit\n",
       {"amoor.w zero, t4, (t3)", "call __ballot", "li a0, 0", "sltu t3, a1, t1", "xor a1, a1, s9",
        "mul t4, t4, t1", "and a0, a0, t3", "seqz a0, a0", "snez a0, a0"}},
      {"several warps and specials",
       ".wave 8\n.warps 3\n.buffer o u32[24] out\n mul v0, %warp, 8\n add v0, v0, %lane\n"
       " shl v0, v0, 2\n add v1, %nwarps, %wave\n add v1, v1, %exec\n st o[v0], v1\n exit\n",
       {".insn r 0x0b, 1, 0, x0, t0, t1", "csrr s8, 0xcc1"}},
      {"bar",
       ".wave 4\n.warps 2\n.workgroups 2\n.buffer o u32[16] out\n mul s0, %gwarp, %wave\n"
       " add v0, s0, %lane\n shl v0, v0, 2\n bar\n st o[v0], 1\n exit\n",
       {".insn r 0x0b, 4, 0, x0, s1, t2", "amominu.w zero, t1, (t2)", "bgeu t1, t3, __deadlock",
        "__wgs: .fill 2, 4, 0xffffffff"}},
      // atom.lane, atom.ops: one RV32A AMO per instruction (sub: amoadd of -A; lock:
      // amomaxu of 1; unlock: amoswap of 0), the checks of atom.lane.check
      {"atomics per lane",
       ".wave 4\n.buffer o u32[4] inout\n shl v0, %lane, 2\n atom.add v1, o[0], 1\n"
       " atom.sub v1, o[v0], v1\n atom.min v1, o[4], v1\n atom.max v1, o[4], v1\n"
       " atom.min.u v1, o[4], v1\n atom.max.u v1, o[4], v1\n atom.and v1, o[8], v1\n"
       " atom.or v1, o[8], v1\n atom.xor v1, o[8], v1\n atom.xchg v1, o[12], v1\n"
       " atom.lock v2, o[12]\n atom.unlock v2, o[v0]\n exit\n",
       {"amoadd.w a0, s2, (s4)", "neg s2, s2", "amomin.w", "amomax.w", "amominu.w", "amomaxu.w",
        "amoand.w", "amoor.w", "amoxor.w", "amoswap.w", "seqz a0, a0", "snez a0, a0",
        "call __ctz"}},
      // atom.warp: the lowest active thread alone (tmc), its result to every lane
      {"atomics per warp",
       ".wave 4\n.slm 8\n.buffer o u32[4] inout\n shl v0, %lane, 2\n watom.add v1, o[v0], 1\n"
       " watom.sub v1, slm[v0], v1\n watom.min v1, o[4], v1\n watom.max v1, o[4], v1\n"
       " watom.min.u v1, o[4], v1\n watom.max.u v1, o[4], v1\n watom.and v1, o[8], v1\n"
       " watom.or v1, o[8], v1\n watom.xor v1, slm[4], v1\n watom.xchg v1, o[12], v1\n"
       " watom.lock v2, o[12]\n watom.unlock v2, o[v0]\n watom.cas v3, o[0], 1, 2\n"
       " watom.cas v3, slm[v0], 1, 2\n exit\n",
       {"csrr s7, 0xcc4", ".insn r 0x0b, 0, 0, x0, t1, x0", ".insn r 0x0b, 0, 0, x0, s7, x0",
        "amoadd.w a0, s2, (s4)", "amoxor.w", "lr.w a0, (s4)", "sc.w t1, s3, (s4)", "sw s3, 0(s4)",
        "mv a2, s9"}},
      // atom.cas per lane, one thread at a time: lr.w/sc.w on buffers, load and store on
      // slm
      {"compare and swap per lane",
       ".wave 4\n.slm 16\n.buffer o u32[4] inout\n shl v0, %lane, 2\n"
       " atom.cas v1, o[0], %lane, 7\n atom.cas v2, slm[v0], v1, %lane\n exit\n",
       {"lr.w a0, (s4)", "sc.w t1, s3, (s4)", "lw a0, 0(s4)", "sw s3, 0(s4)",
        ".insn r 0x0b, 0, 0, x0, t2, x0"}},
      // with several warps every memory access takes the lock (amoswap.w spin, alone)
      {"compare and swap with several warps",
       ".wave 4\n.warps 2\n.buffer o u32[4] inout\n ld v1, o[0]\n atom.cas v1, o[4], v1, 7\n"
       " st o[8], v1\n exit\n",
       {"la t1, __mem_lock", "amoswap.w t2, t2, (t1)", ".insn r 0x0b, 0, 0, x0, a5, x0",
        "sw zero, 0(t1)"}},
  };
  return c;
}

TEST(VortexTranslate, EachFamilyAssembles) {
  SKIP_WITHOUT_RISCV();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    auto r = translate(c.program);
    ASSERT_TRUE(r.ok()) << r.unsupported;
    for (const char* u : c.uses)
      EXPECT_NE(r.translation->assembly.find(u), std::string::npos) << "missing: " << u;
    EXPECT_EQ(assemble(*r.translation), "");
  }
}

TEST(VortexTranslate, LaunchShape) {
  auto r = translate(".wave 16\n.warps 5\n.buffer o u32[2] out\n.buffer i u32[1] in\n exit\n");
  ASSERT_TRUE(r.ok()) << r.unsupported;
  EXPECT_EQ(r.translation->threads, 16u);
  EXPECT_EQ(r.translation->warps, 5u);
  ASSERT_EQ(r.translation->outputs.size(), 1u);  // `in` buffers are not printed
  EXPECT_EQ(r.translation->outputs[0].program_buffer, 0u);
  EXPECT_EQ(r.translation->outputs[0].words, 2u);
  EXPECT_FALSE(r.translation->writes_memory);
}

TEST(VortexTranslate, RefusesWithTheReason) {
  const std::vector<std::pair<const char*, const char*>> refused = {
      {".wave 4\n.warps 2\n.workgroups 3\n bar\n exit\n",
       "3 workgroups with barriers: this simx has 2 barrier ids"},
      {".wave 4\nl:\n cbr pt, l\n exit\n", "`cbr` (raw branch primitives"},
      {".wave 64\n exit\n", "wave 64"},
      {".wave 4\n.warps 8\n.workgroups 5\n exit\n", "40 warps in all"},
      {".wave 4\n.slm 32768\n st slm[0], 1\n exit\n", "slm of 32768 bytes"},
  };
  for (const auto& [program, reason] : refused) {
    SCOPED_TRACE(program);
    auto r = translate(program);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.unsupported.find(reason), std::string::npos) << r.unsupported;
  }
}

// decode_console: the outcome from "#0: " lines; anything else is garbage.
TEST(VortexTranslate, DecodeConsole) {
  auto loaded =
      host::load(".wave 4\n.buffer o u8[5] out\n.buffer i u32[1] in\n st.8 o[0], 1\n exit\n");
  ASSERT_TRUE(loaded.loaded);
  auto r = vortex::translate(*loaded.loaded);
  ASSERT_TRUE(r.ok());
  auto words = [](std::vector<uint32_t> w) {
    std::string s = "Running program.bin...\n";
    char buf[32];
    for (uint32_t x : w) {
      std::snprintf(buf, sizeof buf, "#0: %08x\n", x);
      s += buf;
    }
    return s;
  };
  const uint32_t b = vortex::kMagicBegin, e = vortex::kMagicEnd;
  auto ok = vortex::decode_console(*loaded.loaded->program, *r.translation,
                                   words({b, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x04030201, 0x77, e}));
  ASSERT_EQ(ok.kind, vortex::ConsoleOutcome::Kind::Outcome) << ok.reason;
  EXPECT_EQ(ok.outcome.status, exec::Status::Completed);
  EXPECT_EQ(ok.outcome.steps, 3u);
  ASSERT_EQ(ok.outcome.buffers.size(), 1u);
  EXPECT_EQ(ok.outcome.buffers[0].bytes, (std::vector<uint8_t>{1, 2, 3, 4, 0x77}));
  // An event: out of bounds at lane 2, pc 1, address 8 in buffer 0.
  auto ev = vortex::decode_console(*loaded.loaded->program, *r.translation,
                                   words({b, 1, 2, 0, 1, 2, 8, 0, 0, 1, 0, 0, 0, e}));
  ASSERT_EQ(ev.kind, vortex::ConsoleOutcome::Kind::Outcome) << ev.reason;
  EXPECT_EQ(ev.outcome.status, exec::Status::Trapped);
  ASSERT_TRUE(ev.outcome.event);
  EXPECT_EQ(ev.outcome.event->code, isa::Event::MemOutOfBounds);
  EXPECT_EQ(ev.outcome.event->lane, 2);
  EXPECT_EQ(ev.outcome.event->addr, 8u);
  EXPECT_EQ(ev.outcome.event->space, "o");
  EXPECT_EQ(ev.outcome.steps, 1u);
  // The step flag (exec.step.order): one warp at max_steps is step_limit; a flag that
  // does not fit the launch, or an unknown one, is garbage.
  const uint32_t max = static_cast<uint32_t>(r.translation->max_steps);
  auto sl = vortex::decode_console(
      *loaded.loaded->program, *r.translation,
      words({b, 0, 0, 0, 0, 0, 0, 0, vortex::kStepLimitOneWarp, max, 0, 9, 9, e}));
  ASSERT_EQ(sl.kind, vortex::ConsoleOutcome::Kind::Outcome) << sl.reason;
  EXPECT_EQ(sl.outcome.status, exec::Status::StepLimit);
  EXPECT_EQ(sl.outcome.steps, r.translation->max_steps);
  EXPECT_FALSE(sl.outcome.event);
  ASSERT_EQ(sl.outcome.buffers.size(), 1u);
  EXPECT_EQ(sl.outcome.buffers[0].bytes, (std::vector<uint8_t>{9, 0, 0, 0, 9}));
  for (uint32_t bad_flag : {vortex::kStepLimitOneWarp, 7u}) {
    auto g = vortex::decode_console(*loaded.loaded->program, *r.translation,
                                    words({b, 0, 0, 0, 0, 0, 0, 0, bad_flag, 5, 0, 9, 9, e}));
    EXPECT_EQ(g.kind, vortex::ConsoleOutcome::Kind::Garbage) << bad_flag;
  }
  auto several = vortex::decode_console(
      *loaded.loaded->program, *r.translation,
      words({b, 0, 0, 0, 0, 0, 0, 0, vortex::kStepLimitSeveralWarps, max, 0, 9, 9, e}));
  EXPECT_EQ(several.kind, vortex::ConsoleOutcome::Kind::NotReproduced);
  EXPECT_NE(several.reason.find("depends on our scheduler"), std::string::npos) << several.reason;
  // The deadlock flag (bar.exited, exec.status.deadlock): 1 is deadlock with the buffers
  // as the warps left them; an event takes precedence (the reference ends trapped at it);
  // another value is garbage.
  auto dl = vortex::decode_console(*loaded.loaded->program, *r.translation,
                                   words({b, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 5, 6, e}));
  ASSERT_EQ(dl.kind, vortex::ConsoleOutcome::Kind::Outcome) << dl.reason;
  EXPECT_EQ(dl.outcome.status, exec::Status::Deadlock);
  EXPECT_EQ(dl.outcome.buffers[0].bytes, (std::vector<uint8_t>{5, 0, 0, 0, 6}));
  auto dl_ev = vortex::decode_console(*loaded.loaded->program, *r.translation,
                                      words({b, 1, 2, 0, 1, 2, 8, 0, 0, 1, 1, 0, 0, e}));
  ASSERT_EQ(dl_ev.kind, vortex::ConsoleOutcome::Kind::Outcome) << dl_ev.reason;
  EXPECT_EQ(dl_ev.outcome.status, exec::Status::Trapped);
  auto dl_bad = vortex::decode_console(*loaded.loaded->program, *r.translation,
                                       words({b, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2, 5, 6, e}));
  EXPECT_EQ(dl_bad.kind, vortex::ConsoleOutcome::Kind::Garbage);
  // Truncated, missing, misplaced or malformed words.
  for (const std::string& bad :
       {words({b, 0, 0, 0, 0, 0, 0, 0, 1}), std::string("Running...\n"),
        words({b, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}), words({7, b}),
        words({b, 0, 0, 0, 0, 0, 0, 0, 1, 2, e, 5}), std::string("#0: 0000zz00\n")}) {
    auto g = vortex::decode_console(*loaded.loaded->program, *r.translation, bad);
    EXPECT_EQ(g.kind, vortex::ConsoleOutcome::Kind::Garbage) << bad;
    EXPECT_FALSE(g.reason.empty());
  }
}

// A simx that crashes, hangs or prints garbage makes that request an `error` (the
// runner goes on with the next): stand-in simx scripts, so no simx is needed.
// The runner's step budget (--step-budget): each warp's step limit is max_steps or its
// share of the budget (thread-steps, the wave counted as at least 4), whichever is
// smaller; a warp that reaches a share below max_steps makes the request unsupported,
// never a step_limit the reference would not give.
TEST(VortexTranslate, StepBudget) {
  struct Case {
    const char* program;
    uint64_t budget;
    uint32_t cap;
  } cases[] = {
      {".wave 4\n exit\n", vortex::kDefaultStepBudget, 37500},  // 150,000 / 4
      {".wave 1\n exit\n", vortex::kDefaultStepBudget, 37500},  // the wave counts as 4
      {".wave 32\n.warps 2\n exit\n", vortex::kDefaultStepBudget, 2343},
      {".wave 8\n.workgroups 5\n exit\n", 4000, 100},
      {".wave 4\n.max_steps 100\n exit\n", vortex::kDefaultStepBudget, 100},
      {".wave 4\n.max_steps 100\n exit\n", 1, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.program);
    auto loaded = host::load(c.program);
    ASSERT_TRUE(loaded.loaded);
    auto r = vortex::translate(*loaded.loaded, {c.budget});
    ASSERT_TRUE(r.ok()) << r.unsupported;
    EXPECT_EQ(r.translation->step_cap, c.cap);
  }
  auto loaded = host::load(".wave 4\n.buffer o u32[1] out\n exit\n");
  ASSERT_TRUE(loaded.loaded);
  auto r = vortex::translate(*loaded.loaded);
  ASSERT_TRUE(r.ok());
  std::string console = "Running program.bin...\n";
  char buf[32];
  for (uint32_t x : {vortex::kMagicBegin, 0u, 0u, 0u, 0u, 0u, 0u, 0u, vortex::kStepBudget, 10000u,
                     0u, 0u, vortex::kMagicEnd}) {
    std::snprintf(buf, sizeof buf, "#0: %08x\n", x);
    console += buf;
  }
  auto d = vortex::decode_console(*loaded.loaded->program, *r.translation, console);
  EXPECT_EQ(d.kind, vortex::ConsoleOutcome::Kind::NotReproduced);
  EXPECT_NE(d.reason.find("share of the runner's step budget"), std::string::npos) << d.reason;
}

TEST(VortexRunner, BrokenSimxIsAnError) {
  SKIP_WITHOUT_RISCV();
  char tmpl[] = "/tmp/vortex-fake.XXXXXX";
  ASSERT_TRUE(::mkdtemp(tmpl));
  const fs::path dir = tmpl;
  const std::vector<std::pair<std::string, std::string>> fakes = {
      {"crash", "#!/bin/sh\necho 'Running program.bin...'\nkill -ABRT $$\n"},
      {"hang", "#!/bin/sh\nsleep 60\n"},
      {"garbage", "#!/bin/sh\necho '#0: 5151a0a0'\necho '#0: hello'\n"},
      {"nothing", "#!/bin/sh\necho 'Running program.bin...'\n"},
      {"status", "#!/bin/sh\nexit 3\n"},
  };
  const std::vector<std::string> messages = {"signal 6", "did not finish within 1",
                                             "not an outcome", "printed no outcome",
                                             "exit status 3"};
  auto s = runners::load_process_spec(std::string(SIMT_SOURCE_DIR) + "/runners/vortex/simx.toml");
  ASSERT_TRUE(std::holds_alternative<runners::ProcessSpec>(s));
  for (size_t i = 0; i < fakes.size(); ++i) {
    SCOPED_TRACE(fakes[i].first);
    const fs::path script = dir / fakes[i].first;
    std::ofstream(script) << fakes[i].second;
    fs::permissions(script, fs::perms::owner_all);
    runners::ProcessSpec spec = std::get<runners::ProcessSpec>(s);
    spec.command = std::string(SIMT_BINARY_DIR) + "/simtspec-vortex";
    spec.args = {"--simx", script.string(), "--timeout", "1"};
    auto runner = runners::make_process_runner(std::move(spec));
    runners::RunRequest req;
    req.program = ".wave 4\n.buffer o u32[4] out\n st o[0], 1\n exit\n";
    const auto started = std::chrono::steady_clock::now();
    runners::RunResult r = runner->run(req);
    EXPECT_EQ(r.kind, runners::RunResult::Kind::Error);
    EXPECT_NE(r.message.find(messages[i]), std::string::npos) << r.message;
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
    // The process serves the next request.
    req.program = ".wave 64\n exit\n";
    EXPECT_EQ(runner->run(req).kind, runners::RunResult::Kind::Unsupported);
    runner->shutdown();
  }
  fs::remove_all(dir);
}

// ---- end to end on simx ---------------------------------------------------------------

#define SKIP_WITHOUT_SIMX()                                                              \
  SKIP_WITHOUT_RISCV();                                                                  \
  if (!env_set("SIMT_SIMX")) {                                                           \
    if (env_set("SIMT_REQUIRE_SIMX")) FAIL() << "SIMT_SIMX does not name a simx";        \
    GTEST_SKIP() << "SIMT_SIMX does not name a simx (Vortex's simulator, built outside " \
                    "simtspec): the programs are not run";                               \
  }

std::unique_ptr<runners::Runner> vortex_runner(const std::vector<std::string>& extra_args = {}) {
  auto s = runners::load_process_spec(std::string(SIMT_SOURCE_DIR) + "/runners/vortex/simx.toml");
  if (auto* err = std::get_if<std::string>(&s)) {
    ADD_FAILURE() << *err;
    return nullptr;
  }
  runners::ProcessSpec spec = std::get<runners::ProcessSpec>(s);
  spec.command = std::string(SIMT_BINARY_DIR) + "/simtspec-vortex";
  spec.args.insert(spec.args.end(), extra_args.begin(), extra_args.end());
  return runners::make_process_runner(std::move(spec));
}

// How an end-to-end test compares `steps` with the reference's.
enum class Steps {
  Compared,
  Ignored,             // the number of retries is the scheduler's choice
  IgnoredWhenTrapped,  // after an event the other warps run on (README, "Not done")
};

// Runs `program` on simx and on the reference: both must end in an outcome, and the
// outcomes (exec.outcome: status, event, buffers, and `steps` as `steps` says) must be
// equal. Returns the reference's outcome (none after a failure).
std::optional<model::Outcome> expect_as_reference(runners::Runner& runner, const char* program,
                                                  Steps steps = Steps::Compared) {
  SCOPED_TRACE(program);
  runners::RunRequest req;
  req.program = program;
  runners::RunResult got = runner.run(req);
  if (got.kind != runners::RunResult::Kind::Outcome) {
    ADD_FAILURE() << "simx gave no outcome: " << got.message << got.stderr_text;
    return std::nullopt;
  }
  const runners::RunResult want = runners::run_reference(req);
  if (want.kind != runners::RunResult::Kind::Outcome) {
    ADD_FAILURE() << "the reference gave no outcome: " << want.message;
    return std::nullopt;
  }
  if (steps == Steps::Ignored ||
      (steps == Steps::IgnoredWhenTrapped && want.outcome.status == "trapped"))
    got.outcome.steps = want.outcome.steps;
  EXPECT_EQ(json::dump(model::to_json(got.outcome)), json::dump(model::to_json(want.outcome)));
  EXPECT_EQ(got.outcome.steps, want.outcome.steps);
  return want.outcome;
}

// Programs whose every path the slice handles: divergence in both orders (split when
// the then side is the larger, tmc otherwise), nesting deeper than simx's IPDOM stack,
// lanes leaving loops from inside ifs, exits inside ifs and loops, the sides' order
// through memory, empty regions with scalar instructions, and the events.
const char* const kPrograms[] = {
    // then side larger: split/join; the else side reads what the then side wrote
    ".wave 8\n.buffer o u32[9] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 5\n if p0\n"
    " st o[32], %lane\n st o[v0], 1\n else\n ld v1, o[32]\n st o[v0], v1\n endif\n exit\n",
    // else side larger: tmc; same order
    ".wave 8\n.buffer o u32[9] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 2\n if p0\n"
    " st o[32], %lane\n st o[v0], 1\n else\n ld v1, o[32]\n add v1, v1, %lane\n"
    " st o[v0], v1\n endif\n exit\n",
    // nesting deeper than the IPDOM stack of wave 4 (3 entries)
    ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n mov v1, 0\n cmp.ne p0, %lane, 3\n"
    " if p0\n add v1, v1, 1\n cmp.ne p1, %lane, 2\n if p1\n add v1, v1, 10\n"
    " cmp.ne p2, %lane, 1\n if p2\n add v1, v1, 100\n cmp.ne p3, %lane, 0\n if p3\n"
    " add v1, v1, 1000\n else\n add v1, v1, 5000\n endif\n endif\n endif\n endif\n"
    " st o[v0], v1\n exit\n",
    // break and continue inside ifs; scalar counter runs with exec empty too
    ".wave 8\n.buffer o u32[9] out\n shl v0, %lane, 2\n mov v1, 0\n mov v2, 0\n mov s1, 0\n"
    " loop\n add v1, v1, 1\n add s1, s1, 1\n rem.u v3, v1, 3\n cmp.eq p1, v3, 0\n"
    " if p1\n continue p1\n endif\n add v2, v2, v1\n cmp.ge p0, v1, %lane\n if p0\n"
    " break p0\n endif\n add v2, v2, 100\n endloop\n st o[v0], v2\n st o[32], s1\n exit\n",
    // exits inside an if and a loop; the rest go on
    ".wave 8\n.buffer o u32[8] out\n shl v0, %lane, 2\n st o[v0], 7\n cmp.eq p0, %lane, 3\n"
    " if p0\n exit\n endif\n mov v1, 0\n loop\n add v1, v1, 1\n cmp.eq p1, v1, %lane\n"
    " if p1\n st o[v0], v1\n exit\n endif\n cmp.ge p2, v1, 6\n break p2\n endloop\n"
    " st o[v0], 99\n exit\n",
    // an empty then side runs its scalar instructions (branch.struct.empty)
    ".wave 4\n.buffer o u32[2] out\n mov s0, 1\n cmp.gt p0, %lane, 10\n if p0\n"
    " add s0, s0, 5\n st o[0], 3\n else\n add s0, s0, 20\n endif\n st o[4], s0\n exit\n",
    // div_zero at the lowest active lane; the other side had stored already
    ".wave 8\n.buffer o u32[8] out\n shl v0, %lane, 2\n st o[v0], 1\n cmp.lt p0, %lane, 5\n"
    " if p0\n st o[v0], 2\n else\n sub v1, %lane, 6\n div v2, 10, v1\n endif\n exit\n",
    // out of bounds and misaligned at lanes of an else side; a scalar load's event
    ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n cmp.ge p0, %lane, 2\n if !p0\n"
    " st o[v0], 1\n else\n add v1, v0, 6\n st o[v1], 5\n endif\n exit\n",
    ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n st o[v0], 1\n add v1, v0, 1\n"
    " cmp.eq p0, %lane, 3\n if p0\n ld v2, o[v1]\n endif\n exit\n",
    ".wave 4\n.buffer o u32[4] out\n mov s0, 16\n st o[0], 4\n cmp.gt p0, %lane, 9\n if p0\n"
    " ld s1, o[s0]\n endif\n exit\n",
    // several warps, each diverging on its own
    ".wave 4\n.warps 3\n.buffer o u32[12] out\n mul v0, %warp, 4\n add v0, v0, %lane\n"
    " shl v0, v0, 2\n cmp.le p0, %lane, %warp\n if p0\n st o[v0], %warp\n else\n"
    " st o[v0], 100\n endif\n exit\n",
    // exec written inside a side (state.special.exec): also empty, then restored
    ".wave 8\n.buffer o u32[9] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 6\n if p0\n"
    " mov %exec, 0x0f\n st o[v0], 1\n mov %exec, 0\n mov s0, 3\n st o[v0], 9\n else\n"
    " st o[v0], 2\n endif\n st o[32], %exec\n add v1, %lane, s0\n cmp.eq p1, %lane, 7\n"
    " if p1\n st o[v0], v1\n endif\n exit\n",
    // exec written inside a split's then side to every lane: the else lanes then run
    // the then side too, and still take the else side when the join resumes them
    ".wave 8\n.buffer o u32[9] out\n shl v0, %lane, 2\n cmp.lt p0, %lane, 5\n if p0\n"
    " mov %exec, 0xff\n st o[v0], 1\n cmp.ge p1, %lane, 5\n if p1\n st o[32], 7\n endif\n"
    " else\n ld v1, o[v0]\n add v1, v1, 10\n st o[v0], v1\n endif\n exit\n",
    // a split inside a split at wave 2 after exec widened again: simx's IPDOM stack (one
    // entry) is full, so the inner if runs under tmc
    ".wave 2\n.buffer o u32[4] out\n shl v0, %lane, 2\n cmp.eq p0, %lane, 0\n if p0\n"
    " mov %exec, 3\n cmp.eq p1, %lane, 1\n if p1\n st o[v0], 5\n else\n st o[v0], 6\n endif\n"
    " ld v1, o[v0]\n st o[v0 + 8], v1\n else\n st o[v0], 9\n endif\n exit\n",
    // slm: zero at launch, shared by the warps; out of bounds in slm
    ".wave 4\n.warps 2\n.slm 40\n.buffer o u32[8] out\n mul v0, %warp, 4\n add v0, v0, %lane\n"
    " shl v0, v0, 2\n ld v1, slm[v0]\n add v1, v1, %lane\n st slm[v0], v1\n ld.u8 v2, slm[v0]\n"
    " st o[v0], v2\n ld v3, slm[36]\n cmp.ne p0, v3, 0\n if p0\n st o[0], 99\n endif\n exit\n",
    ".wave 4\n.slm 12\n.buffer o u32[4] out\n shl v0, %lane, 2\n st o[v0], 1\n st slm[v0], %lane\n"
    " exit\n",
    // calls (inlined): from divergent code, with a loop inside; recursion to call_overflow
    ".wave 8\n.buffer o u32[8] out\n shl v0, %lane, 2\n mov v1, 0\n cmp.lt p0, %lane, 3\n if p0\n"
    " call f\n else\n call f\n call f\n endif\n st o[v0], v1\n exit\nf:\n mov v2, 0\n loop\n"
    " add v1, v1, %lane\n add v2, v2, 1\n cmp.ge p1, v2, 2\n break p1\n endloop\n ret\n",
    ".wave 4\n.call_depth 5\n.buffer o u32[1] out\n mov s0, 0\n call g\n exit\ng:\n add s0, s0, 1\n"
    " st o[0], s0\n call g\n ret\n",
    // several workgroups: consecutive Vortex warps, slm per workgroup, %wg, %core
    ".wave 4\n.warps 2\n.workgroups 3\n.cores 2\n.slm 8\n.buffer o u32[24] out\n"
    " mul v0, %gwarp, 4\n add v0, v0, %lane\n shl v0, v0, 2\n shl v1, %warp, 2\n"
    " ld v2, slm[v1]\n add v2, v2, %wg\n add v2, v2, 1\n st slm[v1], v2\n ld v2, slm[v1]\n"
    " mul v3, %core, 1000\n add v3, v3, v2\n mul v4, %nwg, 100\n add v3, v3, v4\n"
    " st o[v0], v3\n exit\n",
    // wave 1 and wave 32
    ".wave 1\n.buffer o u32[1] out\n mov v1, 3\n cmp.eq p0, v1, 3\n if p0\n st o[0], 5\n endif\n"
    " exit\n",
    ".wave 32\n.buffer o u32[32] out\n shl v0, %lane, 2\n and v1, %lane, 7\n cmp.eq p0, v1, 0\n"
    " if p0\n st o[v0], %exec\n else\n st o[v0], %lane\n endif\n exit\n",
};

TEST(VortexRunner, ProgramsMatchTheReference) {
  SKIP_WITHOUT_SIMX();
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  for (const char* program : kPrograms) expect_as_reference(*runner, program);
  runner->shutdown();
}

// xlane.*: the cross-lane instructions against the reference: partial exec in a split's
// two sides, no active lane, inactive and out-of-range source lanes, predicates as 0/1
// words (votes, then sel), several warps and workgroups, waves 1 and 32, exec written
// with tmc and lanes that left a loop.
const char* const kCrossLanePrograms[] = {
    // every lane active: ballot (P, !P), ballot.hi = 0, votes, readlane with an immediate,
    // an s register, out of range (8, 0xffffffff), shfl reversed and out of range, shfl.xor, vD =
    // vA
    ".wave 8\n.buffer a u32[8] out\n.buffer b u32[8] out\n.buffer c u32[8] out\n"
    ".buffer s u32[8] out\n shl v0, %lane, 2\n mul v1, %lane, 11\n add v1, v1, 5\n"
    " cmp.lt p0, %lane, 3\n ballot s0, p0\n ballot s1, !p0\n ballot.hi s2, pt\n"
    " vote.any p1, p0\n vote.all p2, p0\n vote.all p3, pt\n cmp.gt p5, %lane, 100\n"
    " vote.any p4, p5\n readlane s3, v1, 6\n mov s4, 2\n readlane s5, v1, s4\n"
    " readlane s6, v1, 8\n mov s7, 0xffffffff\n readlane s7, v1, s7\n sub v2, 7, %lane\n"
    " shfl v3, v1, v2\n shfl.xor v4, v1, 3\n add v5, %lane, 5\n shfl v6, v1, v5\n"
    " shfl v1, v1, v5\n mov v7, 0\n sel v8, p1, 1, 0\n or v7, v7, v8\n sel v8, p2, 2, 0\n"
    " or v7, v7, v8\n sel v8, p3, 4, 0\n or v7, v7, v8\n sel v8, p4, 8, 0\n or v7, v7, v8\n"
    " st a[v0], v3\n st b[v0], v4\n add v6, v6, v1\n shl v7, v7, 16\n add v6, v6, v7\n"
    " st c[v0], v6\n st s[0], s0\n st s[4], s1\n st s[8], s2\n st s[12], s3\n"
    " st s[16], s5\n st s[20], s6\n st s[24], s7\n exit\n",
    // partial exec in both sides of a split: inactive and out-of-range sources read 0,
    // votes over the active lanes only, inactive lanes keep their predicate (sel after endif)
    ".wave 8\n.buffer a u32[8] out\n.buffer s u32[8] out\n shl v0, %lane, 2\n"
    " mul v1, %lane, 3\n add v1, v1, 1\n cmp.lt p0, %lane, 5\n pmov p3, pt\n if p0\n"
    " cmp.ge p1, %lane, 2\n ballot s0, p1\n vote.all p2, p1\n vote.any p3, p1\n"
    " readlane s1, v1, 6\n readlane s2, v1, 4\n add v2, %lane, 3\n shfl v3, v1, v2\n"
    " shfl.xor v4, v1, 1\n add v3, v3, v4\n st a[v0], v3\n else\n ballot s3, pt\n"
    " vote.all p3, !p0\n readlane s4, v1, 1\n mov s5, 7\n readlane s5, v1, s5\n"
    " sub v2, %lane, 1\n shfl v3, v1, v2\n st a[v0], v3\n endif\n sel v5, p3, 100, 200\n"
    " ld v6, a[v0]\n add v6, v6, v5\n st a[v0], v6\n st s[0], s0\n st s[4], s1\n"
    " st s[8], s2\n st s[12], s3\n st s[16], s4\n st s[20], s5\n exit\n",
    // no active lane (exec.form): ballot and readlane still write 0, vote and shfl change nothing
    ".wave 4\n.buffer a u32[4] out\n.buffer s u32[4] out\n shl v0, %lane, 2\n"
    " add v1, %lane, 40\n mov v3, 9\n mov s0, 11\n mov s1, 22\n mov s2, 33\n pmov p1, pt\n"
    " pmov p2, !pt\n cmp.eq p0, %lane, 1000\n if p0\n ballot s0, pt\n ballot.hi s1, pt\n"
    " readlane s2, v1, 0\n vote.all p1, !pt\n vote.any p2, pt\n shfl v3, v1, 0\n endif\n"
    " sel v4, p1, 1, 0\n sel v5, p2, 2, 0\n add v4, v4, v5\n add v4, v4, v3\n"
    " st a[v0], v4\n st s[0], s0\n st s[4], s1\n st s[8], s2\n exit\n",
    // several warps of two workgroups: each warp's scratch words and registers are its own
    ".wave 4\n.warps 3\n.workgroups 2\n.buffer a u32[24] out\n.buffer s u32[6] out\n"
    " mul v0, %gwarp, 4\n add v0, v0, %lane\n shl v0, v0, 2\n mul v1, %gwarp, 100\n"
    " add v1, v1, %lane\n add v2, %lane, 1\n and v2, v2, 3\n shfl v3, v1, v2\n"
    " shfl.xor v4, v3, 2\n cmp.le p0, %lane, %warp\n ballot s0, p0\n mov s2, %warp\n"
    " readlane s1, v4, s2\n vote.all p1, p0\n sel v5, p1, 1000, 0\n add v4, v4, v5\n"
    " shl v6, s0, 16\n add v4, v4, v6\n add v4, v4, s1\n st a[v0], v4\n shl v7, %gwarp, 2\n"
    " cmp.eq p2, %lane, 0\n if p2\n st s[v7], s0\n endif\n exit\n",
    // wave 1: lane 0 only; lane 1 is out of range
    ".wave 1\n.buffer s u32[8] out\n mov v1, 77\n ballot s0, pt\n ballot.hi s1, pt\n"
    " vote.any p0, pt\n vote.all p1, !pt\n readlane s2, v1, 0\n readlane s3, v1, 1\n"
    " shfl v2, v1, 0\n shfl.xor v3, v1, 1\n shfl v4, v1, %lane\n sel v5, p0, 1, 0\n"
    " sel v6, p1, 2, 0\n add v5, v5, v6\n st s[0], s0\n st s[4], s1\n st s[8], s2\n"
    " st s[12], s3\n st s[16], v2\n st s[20], v3\n st s[24], v4\n st s[28], v5\n exit\n",
    // wave 32: ballot of the odd lanes, ballot.hi, readlane 31 and 32, shfl.xor 31 and 32, a split
    ".wave 32\n.buffer a u32[32] out\n.buffer s u32[4] out\n shl v0, %lane, 2\n"
    " mul v1, %lane, 7\n and v2, %lane, 1\n cmp.eq p0, v2, 1\n ballot s0, p0\n"
    " ballot.hi s1, pt\n readlane s2, v1, 31\n mov s3, 32\n readlane s3, v1, s3\n"
    " shfl.xor v3, v1, 31\n shfl.xor v4, v1, 32\n add v3, v3, v4\n cmp.lt p1, %lane, 20\n"
    " if p1\n mov v5, %lane\n add v5, v5, 13\n shfl v6, v1, v5\n vote.all p2, p1\n"
    " sel v7, p2, 5000, 0\n add v6, v6, v7\n add v3, v3, v6\n endif\n st a[v0], v3\n"
    " st s[0], s0\n st s[4], s1\n st s[8], s2\n st s[12], s3\n exit\n",
    // exec written (tmc) to a sparse mask; lanes leaving a loop (pred) before the cross-lane reads
    ".wave 8\n.buffer a u32[8] out\n.buffer s u32[4] out\n shl v0, %lane, 2\n"
    " mul v1, %lane, 5\n mov %exec, 0xa5\n ballot s0, pt\n shfl.xor v2, v1, 1\n"
    " shfl v3, v1, 7\n add v2, v2, v3\n readlane s1, v1, 5\n readlane s2, v1, 6\n"
    " mov %exec, 0xff\n st a[v0], v2\n mov v4, 0\n mov v5, 0\n loop\n add v4, v4, 1\n"
    " cmp.ge p0, v4, %lane\n break p0\n ballot s3, pt\n add v5, v5, s3\n shfl v6, v4, 7\n"
    " add v5, v5, v6\n endloop\n ld v7, a[v0]\n shl v5, v5, 8\n add v7, v7, v5\n"
    " st a[v0], v7\n st s[0], s0\n st s[4], s1\n st s[8], s2\n st s[12], s3\n exit\n",
};

TEST(VortexRunner, CrossLaneMatchesTheReference) {
  SKIP_WITHOUT_SIMX();
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  for (const char* program : kCrossLanePrograms) {
    const auto want = expect_as_reference(*runner, program);
    if (want) {
      EXPECT_EQ(want->status, "completed") << program;
    }
  }
  runner->shutdown();
}

// Atomics (spec/atomics.md) on buffers and slm against the reference: every operation
// per lane under a partial exec on words the lanes share (atom.lane.order), the warp
// form with its lowest active lane and unchecked other lanes (atom.warp), several warps
// contending on one word (atom.step: order-independent results only), compare-and-swap
// chains at wave 32 and wave 1, the events (atom.lane.check, atom.warp.check) and an
// empty exec (atom.warp.empty).
const char* const kAtomicPrograms[] = {
    // per lane, lane 2 inactive, lanes contending on each word
    ".wave 8\n.buffer w u32[10] inout = 5, 0xf0, 0x0f, 0xff, 100, -3, 7, 9, 50, 1\n"
    ".buffer r u32[80] out\n shl v0, %lane, 2\n sub v9, %lane, 4\n mov v1, 77\n"
    " cmp.ne p0, %lane, 2\n if p0\n atom.add v1, w[0], %lane\n atom.or v2, w[4], v9\n"
    " atom.xor v3, w[8], %lane\n atom.and v4, w[12], v9\n atom.max v5, w[16], v9\n"
    " atom.min v6, w[20], v9\n atom.max.u v7, w[24], v9\n atom.min.u v8, w[28], v9\n"
    " atom.sub v10, w[32], %lane\n atom.xchg v11, w[36], v11\n endif\n st r[v0], v1\n"
    " st r[v0 + 32], v2\n st r[v0 + 64], v3\n st r[v0 + 96], v4\n st r[v0 + 128], v5\n"
    " st r[v0 + 160], v6\n st r[v0 + 192], v7\n st r[v0 + 224], v8\n st r[v0 + 256], v10\n"
    " st r[v0 + 288], v11\n exit\n",
    // the same on slm, vD = the operand's register, per-lane words
    ".wave 8\n.slm 32\n.buffer r u32[24] out\n shl v0, %lane, 2\n and v1, %lane, 3\n"
    " shl v1, v1, 2\n mov v2, %lane\n cmp.ge p0, %lane, 1\n if p0\n atom.add v2, slm[v1], v2\n"
    " atom.max v3, slm[16], %lane\n atom.lock v4, slm[20]\n atom.lock v5, slm[v1 + 16]\n"
    " atom.unlock v6, slm[20]\n endif\n st r[v0], v2\n ld v7, slm[v1]\n add v7, v7, v3\n"
    " st r[v0 + 32], v7\n shl v4, v4, 4\n shl v5, v5, 8\n or v4, v4, v5\n or v4, v4, v6\n"
    " st r[v0 + 64], v4\n exit\n",
    // per warp: lane 3 is the lowest active lane; the other lanes' addresses are out of
    // bounds and unchecked; inactive lanes keep vD
    ".wave 8\n.slm 16\n.buffer w u32[4] inout = 10, 0, 0, 0\n.buffer r u32[64] out\n"
    " shl v0, %lane, 2\n mov v1, 77\n mov v2, 77\n mov v3, 77\n mov v5, 77\n mov v6, 77\n"
    " mov v7, 77\n mov v8, 77\n cmp.ge p0, %lane, 3\n if p0\n add v4, %lane, 1\n"
    " mul v9, %lane, 100\n sub v9, v9, 300\n watom.add v1, w[v9], v4\n"
    " watom.xchg v2, slm[v9], v4\n watom.max v3, slm[0], %lane\n watom.lock v5, w[4]\n"
    " watom.lock v6, w[4]\n watom.unlock v7, w[v9 + 4]\n watom.cas v8, w[8], 0, %lane\n"
    " watom.sub v10, slm[4], v4\n watom.cas v11, slm[8], 0, v4\n endif\n st r[v0], v1\n"
    " st r[v0 + 32], v2\n st r[v0 + 64], v3\n st r[v0 + 96], v5\n st r[v0 + 128], v6\n"
    " st r[v0 + 160], v7\n st r[v0 + 192], v8\n ld v12, slm[4]\n ld v13, slm[8]\n"
    " add v12, v12, v13\n add v12, v12, v10\n add v12, v12, v11\n st r[v0 + 224], v12\n"
    " exit\n",
    // several warps contending: a counter per lane and per warp, on a buffer and in slm;
    // every lane's ticket is distinct (a bitmap of tickets ends full); one lock winner
    ".wave 32\n.warps 3\n.slm 8\n.buffer w u32[4] inout\n.buffer bm u32[6] out\n"
    " atom.add v1, w[0], 1\n watom.add v2, w[4], 1\n atom.add v3, slm[0], 1\n"
    " atom.lock v4, w[8]\n atom.add v5, w[12], v4\n shr v6, v1, 5\n shl v6, v6, 2\n"
    " shl v7, 1, v1\n atom.or v8, bm[v6], v7\n shr v6, v3, 5\n shl v6, v6, 2\n shl v7, 1, v3\n"
    " atom.or v8, bm[v6 + 12], v7\n exit\n",
    ".wave 4\n.warps 4\n.slm 4\n.buffer w u32[2] inout\n loop\n atom.add v1, w[0], %lane\n"
    " watom.sub v2, slm[0], 1\n atom.max.u v3, w[4], v1\n cmp.ge p0, v2, -8\n break !p0\n"
    " endloop\n exit\n",
    // compare-and-swap chains in ascending lane order at wave 32, and at wave 1
    ".wave 32\n.slm 8\n.buffer w u32[2] inout\n.buffer r u32[96] out\n shl v0, %lane, 2\n"
    " add v1, %lane, 1\n atom.cas v2, w[0], %lane, v1\n atom.cas v3, slm[0], %lane, v1\n"
    " cmp.ne p0, %lane, 0\n if p0\n atom.cas v4, w[4], 0, %lane\n endif\n st r[v0], v2\n"
    " st r[v0 + 128], v3\n st r[v0 + 256], v4\n exit\n",
    ".wave 1\n.slm 4\n.buffer w u32[2] inout = 3, 4\n.buffer r u32[6] out\n"
    " atom.cas v1, w[0], 3, 9\n atom.cas v2, w[4], 3, 9\n atom.cas v3, slm[0], 0, 5\n"
    " atom.lock v4, slm[0]\n atom.unlock v5, slm[0]\n watom.xor v6, w[4], 6\n st r[0], v1\n"
    " st r[4], v2\n st r[8], v3\n st r[12], v4\n st r[16], v5\n st r[20], v6\n exit\n",
    // atom.step for a compare-and-swap among several warps: warp 0's lanes all swap 0 for
    // 1 while the other warps store 0 to the word; the instruction being one step, lane
    // 0 alone succeeds each time (a store between two lanes' turns would let a second
    // one succeed), whatever the order of the warps
    ".wave 8\n.warps 3\n.buffer w u32[1] inout\n.buffer c u32[12] out\n mov v9, 0\n"
    " cmp.eq p1, %warp, 0\n if p1\n loop\n atom.xchg v1, w[0], 0\n atom.cas v3, w[0], 0, 1\n"
    " cmp.eq p2, v3, 0\n sel v4, p2, 1, 0\n shl v5, v9, 2\n atom.add v6, c[v5], v4\n"
    " add v9, v9, 1\n cmp.ge p3, v9, 12\n break p3\n endloop\n else\n loop\n st w[0], 0\n"
    " add v9, v9, 1\n cmp.ge p3, v9, 40\n break p3\n endloop\n endif\n exit\n",
    // events: out of bounds at lane 3 (no lane acts), misaligned at the lowest failing
    // active lane, the warp form's lane l in slm, compare-and-swap misaligned
    ".wave 4\n.buffer o u32[4] inout = 1, 2, 3, 4\n shl v0, %lane, 2\n add v1, v0, 4\n"
    " atom.add v2, o[v1], 1\n exit\n",
    ".wave 4\n.buffer o u32[4] inout\n shl v0, %lane, 2\n add v1, v0, 2\n cmp.ne p0, %lane, 0\n"
    " if p0\n atom.max v2, o[v1], 1\n endif\n exit\n",
    ".wave 4\n.slm 8\n.buffer o u32[1] out\n shl v0, %lane, 2\n st o[0], 1\n cmp.ge p0, %lane, 2\n"
    " if p0\n watom.xchg v1, slm[v0], 5\n endif\n exit\n",
    ".wave 4\n.buffer o u32[4] inout\n shl v0, %lane, 2\n add v1, v0, 1\n cmp.eq p0, %lane, 3\n"
    " if p0\n atom.cas v2, o[v1], 0, 1\n endif\n exit\n",
    // an empty exec: nothing accessed, no event
    ".wave 4\n.buffer o u32[1] inout\n cmp.gt p0, %lane, 9\n if p0\n atom.add v1, o[64], 1\n"
    " watom.cas v1, o[3], 0, 1\n endif\n st o[0], 5\n exit\n",
};

// Compare-and-swap with several warps contending, every access under the lock: retry
// loops whose buffers do not depend on the order of the warps (a chain of increments
// by every lane, one slm lock winner, tickets in a bitmap; one warp-wide increment per
// warp). Their steps do (the retries), so steps are not compared.
const char* const kContendedCas[] = {
    ".wave 8\n.warps 3\n.slm 8\n.buffer w u32[4] inout\n.buffer bm u32[1] out\n"
    " mov v5, 0\n loop\n ld v1, w[0]\n add v2, v1, 1\n atom.cas v3, w[0], v1, v2\n"
    " cmp.eq p0, v3, v1\n break p0\n endloop\n atom.lock v4, slm[0]\n atom.add v6, w[4], v4\n"
    " watom.cas v7, w[8], 0, 5\n shl v8, 1, v3\n atom.or v9, bm[0], v8\n exit\n",
    ".wave 4\n.warps 4\n.buffer w u32[2] inout\n loop\n ld v1, w[0]\n add v2, v1, %lane\n"
    " add v2, v2, 1\n watom.cas v3, w[0], v1, v2\n cmp.eq p0, v3, v1\n break p0\n endloop\n"
    " atom.add v4, w[4], 1\n exit\n",
};

TEST(VortexRunner, AtomicsMatchTheReference) {
  SKIP_WITHOUT_SIMX();
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  for (const char* program : kAtomicPrograms) expect_as_reference(*runner, program);
  for (const char* program : kContendedCas) expect_as_reference(*runner, program, Steps::Ignored);
  runner->shutdown();
}

// What the runner cannot run is `unsupported` with the reason, never an outcome.
// bar.arrive, bar.release, bar.exited, bar.divergent, exec.status.deadlock: Vortex's
// `bar` per workgroup; warps that end arrive on their way out, and a warp released from
// a barrier that a departed warp never reached ends the launch in deadlock, with the
// buffers as every warp left them (other workgroups run on to their ends).
const char* const kBarrierPrograms[] = {
    // slm exchange between 4 warps of 2 workgroups, twice in a loop
    ".wave 8\n.warps 4\n.workgroups 2\n.slm 256\n.buffer o u32[64] out\n"
    " mul s0, %gwarp, %wave\n add v0, s0, %lane\n shl v0, v0, 2\n mul s2, %warp, 32\n"
    " shl v1, %lane, 2\n add v1, v1, s2\n mov v2, 0\n mov s3, 0\n loop\n"
    " add v3, v2, %gwarp\n st slm[v1], v3\n bar\n xor v4, v1, 32\n ld v5, slm[v4]\n"
    " add v2, v2, v5\n bar\n add s3, s3, 1\n cmp.lt p0, s3, 2\n break !p0\n endloop\n"
    " st o[v0], v2\n exit\n",
    // warp 1 exits before the barrier: deadlock; `before` stored, `after` not
    ".wave 8\n.warps 3\n.buffer before u32[24] out\n.buffer after u32[24] out\n"
    " mul s0, %gwarp, %wave\n add v0, s0, %lane\n shl v0, v0, 2\n add s1, %warp, 1\n"
    " mul s1, s1, 100\n st before[v0], s1\n cmp.eq p0, %warp, 1\n if p0\n exit\n endif\n"
    " bar\n st after[v0], s1\n exit\n",
    // warp 1 exits late (after a loop), when the others already wait: deadlock
    ".wave 4\n.warps 2\n.buffer o u32[8] out\n mul s0, %gwarp, %wave\n add v0, s0, %lane\n"
    " shl v0, v0, 2\n cmp.eq p0, %warp, 1\n if p0\n mov s2, 0\n loop\n add s2, s2, 1\n"
    " cmp.lt p1, s2, 30\n break !p1\n endloop\n st o[v0], s2\n exit\n endif\n bar\n"
    " st o[v0], 7\n exit\n",
    // two workgroups: the first deadlocks, the second completes its barriers
    ".wave 4\n.warps 2\n.workgroups 2\n.buffer o u32[16] out\n mul s0, %gwarp, %wave\n"
    " add v0, s0, %lane\n shl v0, v0, 2\n cmp.eq p0, %gwarp, 1\n if p0\n exit\n endif\n"
    " bar\n st o[v0], 1\n bar\n st o[v0], 2\n exit\n",
    // bar inside divergent code: each pass of the pc arrives (both sides of an if)
    ".wave 8\n.warps 2\n.buffer o u32[16] out\n mul s0, %gwarp, %wave\n add v0, s0, %lane\n"
    " shl v0, v0, 2\n cmp.lt p0, %lane, 5\n if p0\n bar\n st o[v0], 1\n else\n bar\n"
    " st o[v0], 2\n endif\n exit\n",
    // an event in warp 1 while warp 0 waits; nothing stores: trapped at the event
    (".wave 4\n.warps 2\n.buffer i u32[4] in\n.buffer o u32[4] out\n cmp.eq p0, %warp, 1\n"
     " if p0\n ld v1, i[64]\n endif\n bar\n exit\n"),
};

TEST(VortexRunner, BarriersMatchTheReference) {
  SKIP_WITHOUT_SIMX();
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  std::set<std::string> statuses;
  for (const char* program : kBarrierPrograms) {
    // After an event the other warps run on to their ends on Vortex (README, "Not
    // done"): the steps of a trapped launch of several warps are not compared.
    const auto want = expect_as_reference(*runner, program, Steps::IgnoredWhenTrapped);
    if (want) statuses.insert(want->status);
  }
  // The programs test something: deadlocks, completions and an event among them.
  EXPECT_EQ(statuses, (std::set<std::string>{"completed", "deadlock", "trapped"}));
  runner->shutdown();
}

TEST(VortexRunner, UnsupportedAndErrors) {
  SKIP_WITHOUT_SIMX();
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  runners::RunRequest req;
  runners::RunResult r;
  req.program = ".wave 4\n.warps 2\n.buffer o u32[1] out\n st o[0], 1\n div v0, 1, 0\n exit\n";
  r = runner->run(req);
  EXPECT_EQ(r.kind, runners::RunResult::Kind::Unsupported);
  EXPECT_NE(r.message.find("not reproduced on Vortex"), std::string::npos) << r.message;
  runner->shutdown();
}

// exec.step.order, exec.status.step_limit: the translated program counts each warp's
// steps. One warp stops exactly at max_steps (the reference's status, steps and
// buffers, also with an empty exec, a split's two sides and an event one step short);
// several warps reaching the limit are unsupported with the reason, decided from the
// simx run alone.
TEST(VortexRunner, StepLimit) {
  SKIP_WITHOUT_SIMX();
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  const char* const one_warp[] = {
      // a loop that never ends: every iteration stores
      ".wave 4\n.max_steps 100\n.buffer o u32[4] out\n shl v0, %lane, 2\n mov v1, 0\n loop\n"
      " add v1, v1, 1\n st o[v0], v1\n endloop\n exit\n",
      // diverging (split) inside the loop, lanes leaving: the limit falls in a side
      ".wave 8\n.max_steps 77\n.buffer o u32[8] out\n shl v0, %lane, 2\n mov v1, 0\n loop\n"
      " add v1, v1, 1\n cmp.lt p0, %lane, 5\n if p0\n st o[v0], v1\n else\n add v2, v1, 100\n"
      " st o[v0], v2\n endif\n cmp.eq p1, %lane, 7\n break p1\n endloop\n exit\n",
      // an empty exec: every lane broke, the scalar instructions still step
      ".wave 4\n.max_steps 40\n.buffer o u32[1] out\n mov s0, 0\n loop\n break pt\n"
      " add s0, s0, 1\n st o[0], s0\n endloop\n loop\n add s0, s0, 1\n st o[0], s0\n"
      " endloop\n exit\n",
      // a call, then the limit inside the callee's loop
      ".wave 4\n.max_steps 50\n.buffer o u32[1] out\n mov s0, 0\n call f\n exit\nf:\n loop\n"
      " add s0, s0, 1\n st o[0], s0\n endloop\n ret\n",
      // an event before the limit: the faulting instruction is not a step
      ".wave 4\n.max_steps 7\n.buffer o u32[1] out\n mov s0, 1\n st o[0], s0\n mov s1, 0\n"
      " div s2, s0, s1\n exit\n",
      // exactly max_steps steps and completed (exec.step.order: completed first)
      ".wave 4\n.max_steps 3\n.buffer o u32[1] out\n mov s0, 5\n st o[0], s0\n exit\n",
      // one step short: step_limit
      ".wave 4\n.max_steps 2\n.buffer o u32[1] out\n mov s0, 5\n st o[0], s0\n exit\n",
  };
  for (const char* program : one_warp) expect_as_reference(*runner, program);
  // The reference must say step_limit for the first four (the tests test something).
  for (size_t i = 0; i < 4; ++i) {
    runners::RunRequest req;
    req.program = one_warp[i];
    EXPECT_EQ(runners::run_reference(req).outcome.status, "step_limit") << one_warp[i];
  }
  const char* const several_warps[] = {
      // every warp loops forever
      ".wave 4\n.warps 2\n.max_steps 100\n.buffer o u32[8] out\n mul v0, %warp, 16\n"
      " shl v1, %lane, 2\n add v0, v0, v1\n mov v1, 0\n loop\n add v1, v1, 1\n"
      " st o[v0], v1\n endloop\n exit\n",
      // each warp ends below max_steps, but not all of them together
      ".wave 4\n.warps 3\n.max_steps 10\n.buffer o u32[1] out\n mov s0, 1\n add s0, s0, 1\n"
      " add s0, s0, 1\n add s0, s0, 1\n exit\n",
  };
  for (const char* program : several_warps) {
    SCOPED_TRACE(program);
    runners::RunRequest req;
    req.program = program;
    runners::RunResult got = runner->run(req);
    EXPECT_EQ(got.kind, runners::RunResult::Kind::Unsupported) << got.message;
    EXPECT_NE(got.message.find("the step limit among several warps depends on our scheduler"),
              std::string::npos)
        << got.message;
    EXPECT_EQ(runners::run_reference(req).outcome.status, "step_limit");
  }
  runner->shutdown();
  // A launch that would run into the default max_steps (1,000,000) stops at its share of
  // the step budget (--step-budget 4000: 1,000 steps at wave 4): unsupported, neither
  // step_limit nor an error of simx's timeout.
  {
    auto budget_runner = vortex_runner({"--step-budget", "4000"});
    ASSERT_TRUE(budget_runner);
    runners::RunRequest req;
    req.program =
        ".wave 4\n.buffer o u32[4] out\n shl v0, %lane, 2\n mov v1, 0\n loop\n"
        " add v1, v1, 1\n st o[v0], v1\n endloop\n exit\n";
    runners::RunResult got = budget_runner->run(req);
    EXPECT_EQ(got.kind, runners::RunResult::Kind::Unsupported) << got.message;
    EXPECT_NE(got.message.find("a warp committed 1000 steps, its share of the runner's step "
                               "budget, before max_steps 1000000"),
              std::string::npos)
        << got.message;
    budget_runner->shutdown();
  }
}

// The certification's figures (runners/vortex/README.md "Certification of simx") are
// those of a run of this suite on the simx that SIMT_SIMX names: how many
// configurations run, and how many pass, fail, end in error, xfail and are unsupported.
TEST(VortexRunner, TheCertificationFiguresAreThoseOfThisSuite) {
  SKIP_WITHOUT_SIMX();
  std::string err;
  const harness::Suite suite =
      harness::load_suite(harness::discover({std::string(SIMT_SOURCE_DIR) + "/suites"}, err));
  ASSERT_TRUE(err.empty()) << err;
  harness::Options o;
  o.jobs = 2;
  const auto cases = harness::select(suite, o);
  auto runner = vortex_runner();
  ASSERT_TRUE(runner);
  const harness::Summary sum =
      harness::run(*runner, suite, cases, o, [](const reports::Record&) {});
  runner->shutdown();
  auto n = [&](const char* k) { return reports::thousands(reports::count_of(sum.counts, k)); };
  const std::string want = "runs " + reports::thousands(sum.run()) + " of the " +
                           reports::thousands(cases.size()) + " configurations (" +
                           reports::thousands(suite.tests.size()) + " tests)";
  const std::string counts = "**" + n("pass") + " pass, " + n("fail") + " fail, " + n("error") +
                             " error, " + n("xfail") + " xfail, " + n("unsupported") +
                             " unsupported.**";
  const std::string section =
      test_text::section_of("runners/vortex/README.md", "Certification of simx");
  EXPECT_NE(section.find(want), std::string::npos) << "it should say: " << want;
  EXPECT_NE(section.find(counts), std::string::npos) << "it should say: " << counts;
  EXPECT_EQ(reports::count_of(sum.counts, "fail") + reports::count_of(sum.counts, "error"), 0u);
}

}  // namespace
