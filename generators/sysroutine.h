// The standard system routine (spec/preempt.md, preempt.routine.complete): the
// text of suites/lib/sysroutine.simtlib, which a generated program with
// preemption points carries verbatim after all its code (oracle.model.preempt).
// The library file stays the source; a unit test (gen_preempt_test.cpp) checks
// that this copy equals it byte for byte.
#pragma once

#include <string_view>

namespace simt::gen {

// Its entries, which the program names with `.sys_save` and `.sys_restore`.
inline constexpr std::string_view kSysSaveLabel = "sys_save";
inline constexpr std::string_view kSysRestoreLabel = "sys_restore";

inline constexpr std::string_view kSysRoutine =
    R"simtlib(; ==== lib/sysroutine.simtlib: the standard system routine (preemption) ========
;
; The save and restore routine of spec/preempt.md: at a preemption every warp
; of the affected cores runs `sys_save` in system mode, and at the restore
; `sys_restore` (preempt.save, preempt.restore). Each privileged instruction
; moves one context field, for every lane whatever exec is, between the
; warp's application context and the warp's own slot of the context image,
; which the fixed function gives the warp at entry (preempt.ctx,
; preempt.slot.find). The routine uses no register, so it cannot disturb the
; state it moves, and the same code serves every warp and configuration.
; Relies on preempt.routine, preempt.sysmode, preempt.ctx, preempt.sysret,
; preempt.image.slot.
;
; The including program declares:
;   .sys_save sys_save
;   .sys_restore sys_restore
; and places this code where no other code runs into it (after an `exit`).
;
; Registers: none. Every field of context.def is saved and loaded, so a
; restore gives back exactly the state that was saved.

sys_save:
    ctx.save.vregs                ; every lane of every vector register
    ctx.save.sregs                ; the scalar registers
    ctx.save.preds                ; p0-p15, every lane
    ctx.save.pc                   ; where the warp goes on
    ctx.save.exec                 ; the active lanes
    ctx.save.live                 ; the lanes that have not exited
    ctx.save.status               ; ready, barrier, done, paused or returned
    ctx.save.sp                   ; the program-stack pointer (frames stay in memory)
    ctx.save.mode                 ; normal or sub-vector, the part, the region state
    ctx.save.mstack               ; the mask stack, with its depth
    ctx.save.pcstack              ; the PC stack, with its depth
    ctx.save.handler              ; handler mode and the stacks, mode and part set aside
    ctx.save.owed                 ; the single-step debt
    sysret                        ; done: the fixed function copies SLM and its own state
sys_restore:
    ctx.load.vregs                ; the same fields, in the same order, back
    ctx.load.sregs
    ctx.load.preds
    ctx.load.pc
    ctx.load.exec
    ctx.load.live
    ctx.load.status
    ctx.load.sp
    ctx.load.mode
    ctx.load.mstack
    ctx.load.pcstack
    ctx.load.handler
    ctx.load.owed
    sysret                        ; done: the warp goes on at its saved pc
; ==== end of lib/sysroutine.simtlib ===========================================
)simtlib";

}  // namespace simt::gen
