// The trap handler (spec/trap.md): installing a handler, the entry sequence, the
// frame, ESR virtualisation, the join and the resume, system calls, double faults.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol.h"
#include "reference.h"
#include "support.h"

namespace simt {
namespace {

using exec::Status;
using isa::Event;
using test::outcome;

host::LoadOptions lowest_pc_first() {
  host::LoadOptions opt;
  opt.cli.policy = exec::Policy::LowestPcFirst;
  return opt;
}

std::vector<uint32_t> words(const exec::Outcome& o, const char* name) {
  auto w = o.words(name);
  return w ? *w : std::vector<uint32_t>{};
}

// trap.none: without a handler an event ends the launch as before.
TEST(Trap, NoHandlerEndsTrapped) {
  auto o = outcome(R"(
.wave 4
    div v1, 1, 0
    exit
)");
  ASSERT_EQ(o.status, Status::Trapped);
  EXPECT_EQ(o.event->code, Event::DivZero);
}

// trap.sys, trap.resume.pc, trap.return, trap.join: a system call whose handler
// returns at once continues after the `sys`.
TEST(Trap, SystemCallReturnsToTheNextInstruction) {
  auto o = outcome(R"(
.wave 4
.handler H
.buffer out u32[4] out
    shl v1, %lane, 2
    sys 5
    st out[v1], 7
    exit
H:
    tclear
    tret
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(words(o, "out"), (std::vector<uint32_t>{7, 7, 7, 7}));
}

// trap.esr, trap.cause, trap.frame: the raising warp reads the cause, a bystander
// warp reads 0; both read TGID; the raising warp's frame holds its resume PC.
TEST(Trap, BystanderReadsNullEsr) {
  auto o = outcome(R"(
.wave 2
.warps 2
.handler H
.buffer log u32[8] out
    cmp.eq p0, %gwarp, 1
    mov s1, %gwarp
    mul s1, s1, 16
    cbr p0, RAISE
    nop
    exit
RAISE:
    sys 0x123
    exit
H:
    mov s2, %gwarp
    mul s2, s2, 16
    mov s3, %esr
    st log[s2], s3
    mov s3, %tgid
    st log[s2 + 4], s3
    frame.ld s3, 0
    st log[s2 + 8], s3
    frame.ld s3, 52
    st log[s2 + 12], s3
    tclear
    tret
)");
  ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
  const uint32_t cause = 11u | 0x123u << 8;
  // Round robin: warp 0 had run the `nop` (its PC 5, the exit) when warp 1 raised
  // at the `sys` (PC 6, resume PC 7).
  EXPECT_EQ(words(o, "log"), (std::vector<uint32_t>{0, 1, 5, 0, cause, 1, 7, 1}));
}

// trap.resume.pc, trap.frame.access: fix and retry, skip by editing the frame.
TEST(Trap, SkipTheFaultingInstructionByEditingTheFrame) {
  auto o = outcome(R"(
.wave 4
.handler H
.buffer out u32[4] out
    shl v1, %lane, 2
    div v2, 10, 0
    st out[v1], 3
    exit
H:
    frame.ld s1, 0
    add s1, s1, 1
    frame.st 0, s1
    tclear
    tret
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(words(o, "out"), (std::vector<uint32_t>{3, 3, 3, 3}));
}

// A handler that returns without fixing the cause retries it forever: livelock
// (trap.resume.pc, exec.livelock).
TEST(Trap, ReturnWithoutFixingLivelocks) {
  auto o = outcome(R"(
.wave 4
.handler H
    div v2, 10, 0
    exit
H:
    tclear
    tret
)");
  EXPECT_EQ(o.status, Status::Livelock);
}

// trap.double: an event inside the handler ends the launch with double_fault.
TEST(Trap, EventInTheHandlerIsADoubleFault) {
  auto o = outcome(R"(
.wave 4
.handler H
    sys 1
    exit
H:
    div s1, 1, 0
    tret
)");
  ASSERT_EQ(o.status, Status::Trapped);
  EXPECT_EQ(o.event->code, Event::DoubleFault);
  EXPECT_EQ(o.event->inner, Event::DivZero);
  EXPECT_EQ(o.event->pc, 2u);
}

// trap.double, event.lane, runner.protocol.response: a double fault carries its
// inner event's lane, and its address and space when the inner event is a
// memory event; nothing else. Checked on the outcome and on the protocol's
// response.
TEST(Trap, DoubleFaultCarriesTheInnerEventsFields) {
  struct Case {
    const char* handler;  // after `H:`, in a program whose only warp does `sys 1`
    Event inner;
    int32_t lane;
    const char* space;  // "" for none
    uint32_t addr;
  };
  const Case cases[] = {
      {"    shl v1, %lane, 2\n    ld v2, buf[v1 + 12]\n", Event::MemOutOfBounds, 3, "buf", 24},
      {"    ld s2, buf[28]\n", Event::MemOutOfBounds, -1, "buf", 28},
      {"    mov v1, 1\n    st buf[6], v1\n", Event::MemMisaligned, 0, "buf", 6},
      {"    sub v2, %lane, 5\n    div v3, 7, v2\n", Event::DivZero, 5, "", 0},
      {"    div s3, 7, 0\n", Event::DivZero, -1, "", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.handler);
    const std::string text = std::string(".wave 8\n.handler H\n.buffer other u32[2] in\n") +
                             ".buffer buf u32[6] inout\n    sys 1\n    exit\nH:\n" + c.handler +
                             "    tclear\n    tret\n";
    auto o = outcome(text);
    ASSERT_EQ(o.status, Status::Trapped);
    EXPECT_EQ(o.event->code, Event::DoubleFault);
    EXPECT_EQ(o.event->inner, c.inner);
    EXPECT_EQ(o.event->lane, c.lane);
    EXPECT_EQ(o.event->space, c.space);
    EXPECT_EQ(o.event->addr, c.addr);
    runners::RunRequest req;
    req.program = text;
    const json::Value v = runners::response_json(runners::run_reference(req), 1);
    const json::Value* e = v.find("event");
    ASSERT_TRUE(e) << json::dump(v);
    EXPECT_EQ(e->find("name")->as_string(), "double_fault");
    EXPECT_EQ(e->find("lane") != nullptr, c.lane >= 0) << json::dump(v);
    EXPECT_EQ(e->find("space") != nullptr, *c.space != 0) << json::dump(v);
    EXPECT_EQ(e->find("addr") != nullptr, *c.space != 0) << json::dump(v);
    EXPECT_EQ(e->find("code"), nullptr) << json::dump(v);
    if (*c.space) {
      EXPECT_EQ(e->find("space")->as_string(), c.space);
      EXPECT_EQ(e->find("addr")->as_uint(), c.addr);
    }
  }
}

// exec.commit, trap.entry: an instruction whose event a handler handles counts
// as one step (the entry); one whose event ends the launch (no handler, a double
// fault, no room for a frame) is not counted.
TEST(Trap, StepsCountAHandledEventOnceAndAnEndingOneNot) {
  const char* handled = ".wave 4\n.handler H\n    nop\n    sys 1\n    exit\nH:\n    tret\n";
  auto h = outcome(handled);
  ASSERT_EQ(h.status, Status::Completed);
  EXPECT_EQ(h.steps, 4u);  // nop, sys (the entry), tret, exit
  auto d = outcome(
      ".wave 4\n.handler H\n    nop\n    sys 1\n    exit\nH:\n    nop\n"
      "    div s1, 1, 0\n    tret\n");
  ASSERT_EQ(d.status, Status::Trapped);
  EXPECT_EQ(d.event->code, Event::DoubleFault);
  EXPECT_EQ(d.steps, 3u);  // nop, sys (the entry), nop; not the div
  auto none = outcome(".wave 4\n    nop\n    sys 1\n    exit\n");
  ASSERT_EQ(none.status, Status::Trapped);
  EXPECT_EQ(none.steps, 1u);  // nop; not the sys
  auto room = outcome(
      ".wave 4\n.stack 32\n.handler H\n    nop\n    sys 1\n    exit\nH:\n"
      "    tret\n");
  ASSERT_EQ(room.status, Status::Trapped);
  EXPECT_EQ(room.event->code, Event::FrameOverflow);
  EXPECT_EQ(room.steps, 1u);  // nop; not the sys
}

// trap.context, trap.resume: the handler runs with every live lane and its own
// stacks; the user's exec and mask stack come back exactly.
TEST(Trap, UserExecAndStacksAreRestored) {
  auto o = outcome(R"(
.wave 4
.handler H
.buffer out u32[8] out
    shl v1, %lane, 2
    cmp.lt p0, %lane, 2
    if p0
      sys 9
      mov v2, %exec
      st out[v1], v2
    endif
    ld v3, out[v1]
    add v3, v3, 100
    st out[v1 + 16], v3
    exit
H:
    mov s5, %exec
    cmp.eq p1, s5, 15
    if p1
      tclear
    endif
    tret
)");
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(words(o, "out"), (std::vector<uint32_t>{3, 3, 0, 0, 103, 103, 100, 100}));
}

// trap.entry (barrier unwind), trap.join: a warp waiting at a barrier enters the
// handler, executes `bar` again when it resumes, and the barrier releases once.
TEST(Trap, BarrierIsUnwoundAndReleasesOnce) {
  auto o = outcome(R"(
.wave 2
.warps 2
.handler H
.buffer out u32[4] out
    cmp.eq p0, %warp, 1
    cbr p0, LATE
    bar
    mov s1, %warp
    shl s1, s1, 2
    st out[s1], 1
    exit
LATE:
    sys 1
    bar
    st out[4], 2
    exit
H:
    frame.ld s2, 20
    mov s3, %warp
    shl s3, s3, 2
    st out[s3 + 8], s2
    tclear
    tret
)",
                   lowest_pc_first());
  ASSERT_EQ(o.status, Status::Completed) << exec::status_name(o.status);
  // out[2], out[3]: each warp's frame status word, 1 for warp 0, which waited.
  EXPECT_EQ(words(o, "out"), (std::vector<uint32_t>{1, 2, 1, 0}));
}

// trap.pause, trap.paused: every warp pauses, the launch ends paused.
TEST(Trap, PauseEndsPaused) {
  auto o = outcome(R"(
.wave 4
.handler H
    sys 2
    exit
H:
    tpause
)");
  EXPECT_EQ(o.status, Status::Paused);
}

// trap.join: exit in the handler is illegal, so a double fault (the validator
// rejects it, trap.valid.mode; without the flow checks it runs).
TEST(Trap, ExitInTheHandlerIsADoubleFault) {
  auto o = test::outcome_unvalidated(R"(
.wave 4
.handler H
    sys 2
    exit
H:
    exit
)");
  ASSERT_EQ(o.status, Status::Trapped);
  EXPECT_EQ(o.event->code, Event::DoubleFault);
  EXPECT_EQ(o.event->inner, Event::IllegalInstruction);
}

// trap.frame.room: no room for a frame is frame_overflow.
TEST(Trap, NoRoomForTheFrame) {
  auto o = outcome(R"(
.wave 4
.stack 48
.handler H
    sys 2
    exit
H:
    tret
)");
  ASSERT_EQ(o.status, Status::Trapped);
  EXPECT_EQ(o.event->code, Event::FrameOverflow);
}

// trap.valid.mode, trap.valid.disjoint: handler-only instructions in user code,
// sys and exit in handler code, and code reached from both, are rejected with
// the clause they break.
TEST(TrapValidation, ModesAndDisjointCode) {
  struct Case {
    const char* text;
    const char* clause;
  };
  const Case cases[] = {
      {".wave 4\n    tret\n    exit\n", "trap.valid.mode"},
      {".wave 4\n    frame.ld s1, 0\n    exit\n", "trap.valid.mode"},
      {".wave 4\n.handler H\n    sys 1\n    exit\nH:\n    sys 2\n    tret\n", "trap.valid.mode"},
      {".wave 4\n.handler H\n    sys 1\n    exit\nH:\n    exit\n", "trap.valid.mode"},
      {".wave 4\n.handler H\n    sys 1\nH:\n    tret\n", "trap.valid.disjoint"},
      {".wave 4\n.handler H\n    call F\n    exit\nH:\n    call F\n    tret\nF:\n    ret\n",
       "trap.valid.disjoint"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto r = host::load(c.text);
    ASSERT_FALSE(r.loaded);
    ASSERT_FALSE(r.diags.list().empty());
    EXPECT_EQ(r.diags.first().clause, c.clause) << r.diags.format("t");
  }
  // A handler calling its own function validates.
  EXPECT_TRUE(host::load(".wave 4\n.handler H\n    sys 1\n    exit\nH:\n    call F\n    tret\nF:\n"
                         "    tclear\n    ret\n")
                  .loaded);
}

// trap.terms: user code, handler code and unreached code, as the flow analysis
// reaches them. Each case is a program and the clause of its first error, or
// nullptr when it validates.
TEST(TrapValidation, UserHandlerAndUnreachedCode) {
  struct Case {
    const char* what;
    const char* text;
    const char* clause;
    uint32_t line;  // of the first error
  };
  const Case cases[] = {
      // Unreached code may hold handler-only instructions (trap.valid.mode)...
      {"unreached tret, tclear, frame.st",
       ".wave 4\n    exit\n    tclear\n    frame.st 0, 1\n"
       "    tret\n",
       nullptr, 0},
      // ...but not reads past the register counts (trap.valid.regs).
      {"unreached read past sregs", ".wave 4\n.sregs 4\n    exit\n    mov s1, s9\n    tret\n",
       "valid.reg.range", 4},
      // A vector table no reached vcall calls is unreached: its entries may hold
      // handler-only instructions.
      {"table without a vcall", ".wave 4\n.vtable t F\n    exit\nF:\n    tclear\n    ret\n",
       nullptr, 0},
      // With a vcall in user code, its entries are user code.
      {"table with a user vcall",
       ".wave 4\n.vtable t F\n    vcall 0\n    exit\nF:\n    tclear\n    ret\n", "trap.valid.mode",
       6},
      // With a vcall in handler code only, its entries are handler code: the only
      // error is the vcall (not the entry's tclear, not "both").
      {"table with a handler vcall",
       ".wave 4\n.handler H\n.vtable t F\n    sys 1\n    exit\nF:\n    tclear\n    ret\nH:\n"
       "    vcall 0\n    tret\n",
       "trap.valid.mode", 10},
      // A handler entry at PC 0 makes the program's entry handler code as well.
      {"handler entry at PC 0", ".wave 4\n.handler S\nS:\n    nop\n    exit\n",
       "trap.valid.disjoint", 4},
      // A handler entry at the end runs past it at once, like a call to the end.
      {"handler entry at the end", ".wave 4\n.handler_entry E\n    exit\nE:\n", "trap.valid.mode",
       2},
      {".handler at the end", ".wave 4\n    nop\n.handler E\n    exit\nE:\n", "trap.valid.mode", 3},
      {"call to the end", ".wave 4\n    call E\n    exit\nE:\n", "valid.flow.calls", 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = host::load(c.text);
    if (!c.clause) {
      EXPECT_TRUE(r.loaded) << r.diags.format("t");
      continue;
    }
    if (r.loaded || r.diags.list().empty()) {
      ADD_FAILURE() << "validates; expected " << c.clause;
      continue;
    }
    EXPECT_EQ(r.diags.first().clause, c.clause) << r.diags.format("t");
    EXPECT_EQ(r.diags.first().span.line, c.line) << r.diags.format("t");
  }
  // Without the flow checks none of these is checked (format.validate): a handler
  // entry at the end loads, and entering it runs past the end in handler mode.
  host::LoadOptions off;
  off.validate_flow = false;
  EXPECT_TRUE(host::load(".wave 4\n.handler E\n    sys 1\n    exit\nE:\n", off).loaded);
  auto o = outcome(".wave 4\n.handler E\n    sys 1\n    exit\nE:\n", off);
  ASSERT_EQ(o.status, Status::Trapped);
  EXPECT_EQ(o.event->code, Event::DoubleFault);
  EXPECT_EQ(o.event->inner, Event::PcRange);
}

}  // namespace
}  // namespace simt
