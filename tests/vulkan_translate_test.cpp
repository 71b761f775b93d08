// The program -> GLSL translator (runners/vulkan/translate.h): small programs
// translated, run on the Vulkan device (lavapipe under ctest) and compared with
// the reference interpreter's outcome (status, event, output buffers and step
// count); and programs the translator must refuse, with the reason it gives.
// Device tests skip when the process has no Vulkan device. Programs are written
// at `.wave 8` and loaded with the device's subgroup size as wave. SuiteFiles
// runs every suite file whose wave is the device's subgroup size and prints what
// the translator refused, by reason.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "device.h"
#include "exec/machine.h"
#include "glsl.h"
#include "host/host.h"
#include "translate.h"
#include "vulkan_test_support.h"

namespace simt::vulkan {
namespace {

using namespace std::chrono_literals;

host::Loaded load(std::string_view text, uint32_t wave) {
  host::LoadOptions opt;
  opt.cli.wave = wave;
  auto r = host::load(text, opt);
  if (!r.loaded) {
    ADD_FAILURE() << "program did not load:\n" << r.diags.format("test") << "\n" << text;
    return {};
  }
  return std::move(*r.loaded);
}

// Runs a translation on the device: its outcome and the output buffers (in
// declaration order), or a failure message.
struct DeviceRun {
  DeviceOutcome outcome;
  std::vector<uint32_t> control;
  std::vector<exec::BufferOut> buffers;
  std::string failure;  // not empty: the run did not happen
};

DeviceRun dispatch_once(Device& d, const Translation& t) {
  DeviceRun r;
  auto spirv = glsl_compile(t.glsl);
  if (!spirv.ok()) {
    r.failure = "GLSL does not compile: " + spirv.error().to_string();
    return r;
  }
  PipelineOptions popt;
  popt.buffers = static_cast<uint32_t>(t.bindings.size());
  popt.require_full_subgroups = true;
  auto pipeline = d.create_pipeline(*spirv, popt);
  if (!pipeline.ok()) {
    r.failure = pipeline.error().to_string();
    return r;
  }
  std::vector<Buffer> buffers;
  std::vector<Buffer*> bound;
  for (const auto& b : t.bindings) {
    auto buf = d.create_buffer(b.init.size());
    if (!buf.ok() || !buf->upload(std::as_bytes(std::span(b.init))).ok()) {
      r.failure = "buffer";
      return r;
    }
    buffers.push_back(std::move(buf).value());
  }
  for (auto& b : buffers) bound.push_back(&b);
  Status s = d.dispatch(*pipeline, bound, t.workgroups, 20s);
  if (!s.ok()) {
    r.failure = s.error().to_string();
    return r;
  }
  std::vector<uint32_t> control(t.bindings[0].init.size() / 4);
  if (!buffers[0].download_words(control).ok()) {
    r.failure = "download";
    return r;
  }
  r.outcome = decode_control(t, control);
  r.control = control;
  for (size_t i = 1; i < t.bindings.size(); ++i) {
    const auto& b = t.bindings[i];
    if (!b.output) continue;
    exec::BufferOut out;
    out.name = b.name;
    std::vector<uint8_t> have(b.init.size());
    if (!buffers[i].download(std::as_writable_bytes(std::span(have))).ok()) {
      r.failure = "download";
      return r;
    }
    have.resize(b.bytes);
    out.bytes = std::move(have);
    r.buffers.push_back(std::move(out));
  }
  return r;
}

// As the runner does (runners/vulkan/main.cpp): an outcome that depends on how the
// device happened to interleave the warps (DeviceOutcome::transient) is
// dispatched again, up to kTransientRetries times.
DeviceRun run_on_device(Device& d, const Translation& t) {
  DeviceRun r = dispatch_once(d, t);
  for (int again = 0; again < kTransientRetries && r.failure.empty() && r.outcome.transient;
       ++again)
    r = dispatch_once(d, t);
  return r;
}

TranslateOptions options_of(const Device& d) {
  TranslateOptions topt;
  topt.subgroup_size = d.info().subgroup.size;
  topt.max_workgroup_invocations = d.info().max_workgroup_invocations;
  topt.max_storage_buffers = d.info().max_storage_buffers;
  topt.max_shared_memory = d.info().max_shared_memory;
  topt.subgroup_operations = d.info().subgroup.operations;
  return topt;
}

// The first difference between the reference's outcome and the device's (status,
// event, step count, output buffers), or "" when they agree.
std::string difference(const exec::Outcome& ref, const DeviceRun& got) {
  std::ostringstream o;
  if (got.outcome.kind == DeviceOutcome::Kind::NotReproduced) {
    return "not reproduced: " + got.outcome.reason;
  }
  if (got.outcome.status() != ref.status) {
    o << "status " << exec::status_name(*got.outcome.status()) << ", the reference's "
      << exec::status_name(ref.status);
    return o.str();
  }
  if (got.outcome.event != ref.event) {
    auto show = [](const std::optional<exec::EventInfo>& e) {
      if (!e) return std::string("none");
      return std::string(isa::event_name(e->code)) + " warp " + std::to_string(e->warp) + " pc " +
             std::to_string(e->pc) + " lane " + std::to_string(e->lane) + " addr " +
             std::to_string(e->addr) + " space " + e->space;
    };
    return "event " + show(got.outcome.event) + ", the reference's " + show(ref.event);
  }
  if (got.outcome.steps != ref.steps) {
    o << "steps " << got.outcome.steps << ", the reference's " << ref.steps;
    return o.str();
  }
  if (got.buffers.size() != ref.buffers.size()) return "number of output buffers";
  for (size_t i = 0; i < got.buffers.size(); ++i) {
    const auto& g = got.buffers[i].bytes;
    const auto& w = ref.buffers[i].bytes;
    if (got.buffers[i].name != ref.buffers[i].name) return "output buffer names";
    if (g.size() != w.size()) return "buffer " + ref.buffers[i].name + " size";
    for (size_t b = 0; b < g.size(); ++b) {
      if (g[b] != w[b]) {
        o << "buffer " << ref.buffers[i].name << " byte " << b << ": " << unsigned{g[b]}
          << ", the reference's " << unsigned{w[b]};
        return o.str();
      }
    }
  }
  return "";
}

// The reference's outcome and the device's, compared. Fails the test on any
// difference; the reference must end with `want` (so a test cannot pass vacuously).
// With `exact_steps`, translated with TranslateOptions::exact_step_limit.
void check_against_reference(std::string_view text, exec::Status want = exec::Status::Completed,
                             bool may_not_reproduce = false, bool exact_steps = false) {
  auto dev = Device::get();
  if (!dev.ok()) SIMT_NO_VULKAN_DEVICE(dev.error().to_string());
  Device& d = **dev;
  TranslateOptions topt = options_of(d);
  topt.exact_step_limit = exact_steps;
  host::Loaded loaded = load(text, topt.subgroup_size);
  ASSERT_TRUE(loaded.program);

  exec::Machine m(loaded.program);
  exec::Outcome ref = m.run();
  ASSERT_EQ(exec::status_name(ref.status), exec::status_name(want)) << "the reference's status";

  TranslateResult tr = translate(loaded, topt);
  ASSERT_TRUE(tr.ok()) << tr.unsupported;
  const Translation& t = *tr.translation;
  DeviceRun got = run_on_device(d, t);
  ASSERT_EQ(got.failure, "") << t.glsl;
  if (may_not_reproduce && got.outcome.kind == DeviceOutcome::Kind::NotReproduced) {
    std::cout << "not reproduced: " << got.outcome.reason << "\n";
    return;
  }
  EXPECT_EQ(difference(ref, got), "") << t.glsl;
}

TEST(VulkanTranslate, StraightLineAlu) {
  check_against_reference(R"(
.wave 8
.buffer in  u32[wave] in = iota(0xfffffffa, 0x1234567)
.buffer out u32[16 * wave] out
    shl v0, %lane, 2
    ld v1, in[v0]
    mov s0, 0x80000001
    add v2, v1, s0          ; wraps
    sub v3, %lane, 5        ; negative for low lanes
    mul v4, v1, 0x9e3779b9
    and v5, v1, 0xff00ff
    or v6, v1, %lane
    xor v7, v1, -1
    shl v8, v1, %lane       ; shift amounts mod 32
    add v9, %lane, 30
    shr v10, v1, v9
    sra v11, v3, v9
    min v12, v3, v1
    max.u v13, v3, v1
    not v14, v3
    popc v15, v1
    mulhi v16, v3, v1
    mul s1, %wave, 4
    st out[v0], v2
    add v0, v0, s1
    st out[v0], v3
    add v0, v0, s1
    st out[v0], v4
    add v0, v0, s1
    st out[v0], v5
    add v0, v0, s1
    st out[v0], v6
    add v0, v0, s1
    st out[v0], v7
    add v0, v0, s1
    st out[v0], v8
    add v0, v0, s1
    st out[v0], v10
    add v0, v0, s1
    st out[v0], v11
    add v0, v0, s1
    st out[v0], v12
    add v0, v0, s1
    st out[v0], v13
    add v0, v0, s1
    st out[v0], v14
    add v0, v0, s1
    st out[v0], v15
    add v0, v0, s1
    st out[v0], v16
    cmp.lt p0, v3, 0
    cmp.ge.u p1, v3, 3
    pxor p2, p0, !p1
    sel v17, p2, v1, 77
    add v0, v0, s1
    st out[v0], v17
    exit
)");
}

// Translates `text` with the device's options and runs it, for tests that look at
// the device's outcome itself; a fatal failure if it does not translate or run.
void translate_and_run(std::string_view text, DeviceRun& got) {
  auto dev = Device::get();
  if (!dev.ok()) SIMT_NO_VULKAN_DEVICE(dev.error().to_string());
  TranslateOptions topt = options_of(**dev);
  host::Loaded loaded = load(text, topt.subgroup_size);
  ASSERT_TRUE(loaded.program);
  TranslateResult tr = translate(loaded, topt);
  ASSERT_TRUE(tr.ok()) << tr.unsupported;
  got = run_on_device(**dev, *tr.translation);
  ASSERT_EQ(got.failure, "");
}

// state.special.exec: reads of %exec (also inside a select, whose operands GLSL
// evaluates lazily) and writes that narrow and restore exec, in divergent code.
TEST(VulkanTranslate, ExecReadsAndWrites) {
  check_against_reference(R"(
.wave 8
.buffer out u32[4 * wave] out
    shl v0, %lane, 2
    mul s5, %wave, 4
    and v1, %lane, 1
    cmp.eq p0, v1, 0
    sel v2, p0, %exec, %exec_lo
    st out[v0], v2
    mov s0, %exec
    mov %exec, 0x5
    mov v3, 7
    mov s1, %exec_hi
    mov %exec_lo, s0
    add v0, v0, s5
    st out[v0], v3
    if p0
        mov s2, %exec
        mov %exec_lo, 0xfc
        add v4, %lane, 100
        mov %exec, s2
    endif
    add v0, v0, s5
    st out[v0], v4
    add v5, s1, %exec_hi
    add v0, v0, s5
    st out[v0], v5
    exit
)");
}

// exec.step.order, exec.status.step_limit: a launch of one warp translated with
// exact_step_limit stops where the reference does, also inside a loop and before
// an instruction that would fault; without it the run is not reproduced and asks
// for the exact translation (retry_exact).
TEST(VulkanTranslate, ExactStepLimitInALaunchOfOneWarp) {
  const char* looping = R"(
.wave 8
.max_steps 40
.buffer out u32[wave] out
    shl v0, %lane, 2
    mov v1, 0
    loop
        add v1, v1, 1
        st out[v0], v1
        cmp.ge p0, v1, 1000
        break p0
    endloop
    exit
)";
  check_against_reference(looping, exec::Status::StepLimit, false, true);
  const char* faulting = R"(
.wave 8
.max_steps 4
.buffer out u32[wave] out
    shl v0, %lane, 2
    st out[v0], 5
    mov v1, 0
    mov s3, 1
    div v2, s3, v1
    exit
)";
  check_against_reference(faulting, exec::Status::StepLimit, false, true);
  // One step more: the division runs and faults.
  std::string trapping = faulting;
  trapping.replace(trapping.find(".max_steps 4"), 12, ".max_steps 5");
  check_against_reference(trapping, exec::Status::Trapped, false, true);
  // Completed on the last allowed step: done is checked before the step limit.
  check_against_reference(R"(
.wave 8
.max_steps 3
.buffer out u32[wave] out
    shl v0, %lane, 2
    st out[v0], 5
    exit
)",
                          exec::Status::Completed, false, true);

  DeviceRun got;
  translate_and_run(looping, got);
  if (HasFatalFailure() || IsSkipped()) return;
  EXPECT_EQ(got.outcome.kind, DeviceOutcome::Kind::NotReproduced);
  EXPECT_TRUE(got.outcome.retry_exact) << got.outcome.reason;
}

// exec.status.trapped in a launch of several warps: the device cannot stop the
// other warps at the reference's first event; without memory writes and with one
// warp raising an event the outcome is still the reference's. With a store it is
// not reproduced.
TEST(VulkanTranslate, EventInALaunchOfSeveralWarps) {
  const char* quiet = R"(
.wave 8
.warps 2
.workgroups 2
.buffer out u32[threads] out
    cmp.eq p0, %gwarp, 3
    sel v2, p0, 0, 1
    loop
        add v3, v3, 1
        cmp.ge p1, v3, %gwarp
        break p1
    endloop
    mov s3, 7
    div v4, s3, v2
    exit
)";
  check_against_reference(quiet, exec::Status::Trapped);
  std::string writing = quiet;
  writing.replace(writing.find("    exit"), 8, "    st out[0], v4\n    exit");
  DeviceRun got;
  translate_and_run(writing, got);
  if (HasFatalFailure() || IsSkipped()) return;
  EXPECT_EQ(got.outcome.kind, DeviceOutcome::Kind::NotReproduced);
  EXPECT_NE(got.outcome.reason.find("write memory"), std::string::npos) << got.outcome.reason;
}

TEST(VulkanTranslate, DivergentIfElse) {
  check_against_reference(R"(
.wave 8
.buffer out   u32[wave] out
.buffer side  u32[wave] out
.buffer steps u32[wave] out
    shl v1, %lane, 2
    mov s1, 0
    and v0, %lane, 1
    cmp.eq p0, v0, 0
    if p0
        mul v2, %lane, 10
        or v5, v5, 1
        add s1, s1, 1         ; scalar: runs once, whatever exec is
    else
        or v5, v5, 2
        add s1, s1, 1
        and v3, %lane, 3
        cmp.eq p1, v3, 1
        if p1
            add v2, %lane, 1000
        else
            add v2, %lane, 2000
        endif
        cmp.gt p2, %lane, 100
        if p2                 ; no lane: the region is still passed over
            add s1, s1, 10
            mov v2, 0
        endif
    endif
    st out[v1], v2
    st side[v1], v5
    st steps[v1], s1
    st out[0], %lane          ; every lane stores: the highest lane's value remains
    exit
)");
}

TEST(VulkanTranslate, LoopWithPerLaneTripCountAndBreak) {
  check_against_reference(R"(
.wave 8
.warps 2
.workgroups 2
.buffer out u32[4 * wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2               ; this lane's word
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mul s2, s2, %nwg            ; bytes per row
    mov v2, 0                   ; iterations
    mov v3, 0                   ; sum
    mov s1, 0                   ; back edges taken, per warp
    loop
        add v2, v2, 1
        and v4, v2, 1
        cmp.eq p1, v4, 1
        continue p1             ; odd iterations skip the sum
        add v3, v3, v2
        cmp.ge p0, v2, v0
        break p0                ; lane l leaves after max(l, 1) iterations, rounded up to even
        add s1, s1, 1
    endloop
    st out[v1], v2
    add v1, v1, s2
    st out[v1], v3
    add v1, v1, s2
    st out[v1], s1
    add v1, v1, s2
    st out[v1], %warp
    exit
)");
}

TEST(VulkanTranslate, ExitInDivergentCode) {
  check_against_reference(R"(
.wave 8
.buffer out u32[2 * wave] out
    shl v0, %lane, 2
    mov v1, 1
    and v2, %lane, 3
    loop
        cmp.eq p0, v2, 0
        if p0
            st out[v0], 100
            exit                ; lanes 0 and 4 retire inside an if inside a loop
        endif
        add v1, v1, v1
        sub v2, v2, 1
        cmp.eq p1, v2, 1
        break p1
    endloop
    st out[v0], v1
    mul s0, %wave, 4
    add v3, v0, s0
    cmp.lt p2, %lane, 3
    if p2
        exit
    endif
    st out[v3], %exec
    exit
)");
}

TEST(VulkanTranslate, MemoryEventsMatchTheReference) {
  // mem.check: the lowest failing active lane; misaligned before out of bounds.
  check_against_reference(R"(
.wave 8
.buffer out u32[wave] out
    shl v0, %lane, 2
    st out[v0], 7
    cmp.ge p0, %lane, 1
    if p0
        add v1, v0, 4           ; the last lane is out of bounds
        st out[v1], 9
    endif
    exit
)",
                          exec::Status::Trapped);
  check_against_reference(R"(
.wave 8
.buffer out u32[wave] out
    shl v0, %lane, 2
    sub s0, %wave, 1
    cmp.eq p0, %lane, s0
    sel v0, p0, 2, v0
    ld v1, out[v0]              ; the last lane misaligned
    exit
)",
                          exec::Status::Trapped);
  check_against_reference(R"(
.wave 8
.buffer out u32[4] out
    mov s0, 16
    ld s1, out[s0]              ; scalar: no lane
    exit
)",
                          exec::Status::Trapped);
}

TEST(VulkanTranslate, DivisionAndRemainder) {
  // alu.div, alu.rem: truncation toward zero, the sign of the dividend, -2^31 / -1;
  // inactive lanes with a zero divisor raise nothing (alu.div.zero).
  check_against_reference(R"(
.wave 8
.warps 2
.workgroups 2
.buffer out u32[8 * wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mul s2, s2, %nwg            ; bytes per row
    sub v2, 3, %lane            ; 3 2 1 0 -1 -2 ...: zero in lane 3
    mul v3, %lane, -7
    add v3, v3, 5               ; dividends of both signs
    cmp.ne p0, v2, 0
    if p0
        div v4, v3, v2
        rem v5, v3, v2
        div.u v6, v3, v2
        rem.u v7, v3, v2
    endif
    mov s3, 0x80000000
    div s4, s3, -1              ; -2^31
    rem s5, s3, -1              ; 0
    div v8, s3, -1
    rem v9, -7, 2               ; -1
    st out[v1], v4
    add v1, v1, s2
    st out[v1], v5
    add v1, v1, s2
    st out[v1], v6
    add v1, v1, s2
    st out[v1], v7
    add v1, v1, s2
    st out[v1], s4
    add v1, v1, s2
    st out[v1], s5
    add v1, v1, s2
    st out[v1], v8
    add v1, v1, s2
    st out[v1], v9
    exit
)");
}

TEST(VulkanTranslate, DivZeroEvents) {
  // alu.div.zero: the lowest active lane with a zero divisor (lane 1 is inactive).
  check_against_reference(R"(
.wave 8
.buffer q u32[wave] out
    shl v0, %lane, 2
    st q[v0], 9
    and v1, %lane, 1
    cmp.ne p1, %lane, 1
    if p1
        rem.u v3, 42, v1          ; zero in lanes 0, 2, 4 ...; lane 0 active
    endif
    exit
)",
                          exec::Status::Trapped);
  check_against_reference(R"(
.wave 8
.buffer q u32[wave] out
    shl v0, %lane, 2
    st q[v0], 9
    sub v1, %lane, 1            ; zero in lane 1 only
    div v3, 42, v1
    exit
)",
                          exec::Status::Trapped);
  check_against_reference(R"(
.wave 8
.buffer q u32[wave] out
    cmp.eq p0, %lane, 100
    if p0
        div s1, 1, 0              ; scalar form: no active lane, still raised, no lane
    endif
    exit
)",
                          exec::Status::Trapped);
}

TEST(VulkanTranslate, CrossLane) {
  check_against_reference(R"(
.wave 8
.warps 2
.workgroups 2
.buffer out u32[8 * wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mul s2, s2, %nwg
    mul v2, %lane, 10
    add v2, v2, s0
    and v3, %lane, 1
    cmp.eq p0, v3, 0
    cmp.lt.u p1, %lane, 3
    ballot s4, p0
    ballot.hi s5, p0
    mov v5, 77
    mov v6, 77
    mov v7, 77
    if p0                           ; even lanes only
        ballot s6, p1
        vote.any p2, p1
        vote.all p3, p1
        sel v5, p2, 1, 2
        sel v6, p3, 3, 4
        add v8, %lane, 1
        shfl v7, v2, v8             ; odd source lanes are inactive: 0; past the end: 0
        readlane s7, v2, 2          ; active
        readlane s8, v2, 1          ; inactive: 0
        mov s9, 1000
        readlane s10, v2, s9        ; out of range: 0
        shfl.xor v9, v2, 2
    endif
    shfl v10, v2, v2                ; out of range for most lanes
    cmp.eq p4, %lane, 100
    if p4
        ballot s11, pt              ; no active lane: 0
        vote.any p5, pt             ; nothing changes
    endif
    sel v11, p5, 5, 6
    add s12, s4, s5
    add s12, s12, s6
    add s12, s12, s7
    add s12, s12, s8
    add s12, s12, s10
    add s12, s12, s11
    st out[v1], v5
    add v1, v1, s2
    st out[v1], v6
    add v1, v1, s2
    st out[v1], v7
    add v1, v1, s2
    st out[v1], s12
    add v1, v1, s2
    st out[v1], v9
    add v1, v1, s2
    st out[v1], v10
    add v1, v1, s2
    st out[v1], v11
    add v1, v1, s2
    st out[v1], s6
    exit
)");
}

TEST(VulkanTranslate, SubWordMemoryAndSlm) {
  // mem.load / mem.store of 1, 2 and 4 bytes in a buffer and in slm; lanes of several
  // warps store bytes of the same words; slm is zero at launch and per workgroup.
  // The last store, by every lane of every warp, goes to a byte no lane loads: the
  // device runs the warps in any order, and a byte that a lane also loads (bytes[1]
  // once) made the loaded value depend on whether another warp had reached the end.
  check_against_reference(R"(
.wave 8
.warps 2
.workgroups 2
.slm 512
.buffer bytes u8[4 * wave * warps * workgroups] out
.buffer halves u16[wave * warps * workgroups] out
.buffer out u32[6 * wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0               ; global lane
    shl v1, v0, 2
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mul s2, s2, %nwg
    mul v2, v0, 0x1f3
    add v2, v2, 0x7f
    st.8 bytes[v0], v2              ; neighbouring lanes share words
    shl v3, v0, 1
    st.16 halves[v3], v2
    mul s3, %warp, %wave
    add v4, %lane, s3               ; lane of the workgroup
    st.8 slm[v4], v2
    shl v5, v4, 1
    add v5, v5, 128
    st.16 slm[v5], v2
    ld.s8 v6, slm[v4]
    ld.u8 v7, slm[v4]
    ld.s16 v8, slm[v5]
    ld.u16 v9, slm[v5]
    ld v10, slm[256]                ; never written: 0
    and v11, %lane, 1
    cmp.eq p0, v11, 0
    if p0
        st.8 bytes[v0], 0xee        ; even lanes overwrite their byte
    endif
    ld.s8 v12, bytes[v0]
    st out[v1], v6
    add v1, v1, s2
    st out[v1], v7
    add v1, v1, s2
    st out[v1], v8
    add v1, v1, s2
    st out[v1], v9
    add v1, v1, s2
    st out[v1], v10
    add v1, v1, s2
    st out[v1], v12
    mov v13, 5
    st.8 bytes[65], v13             ; every lane the same byte: the highest lane's
    exit
)");
  check_against_reference(R"(
.wave 8
.slm 64
.buffer out u32[wave] out
    shl v0, %lane, 1
    shl s1, %wave, 1
    sub s1, 66, s1
    cmp.ge p0, %lane, 1
    if p0
        add v1, v0, s1              ; 2 l + 66 - 2 wave: the last lane reaches past 64 bytes
        ld.u16 v2, slm[v1]
    endif
    exit
)",
                          exec::Status::Trapped);
  check_against_reference(R"(
.wave 8
.buffer out u16[wave] out
    cmp.ge p0, %lane, 1
    if p0
        st.16 out[%lane], 1         ; odd lanes misaligned: lane 1 reported
    endif
    exit
)",
                          exec::Status::Trapped);
}

TEST(VulkanTranslate, AtomicsPerLaneInAscendingOrder) {
  check_against_reference(R"(
.wave 8
.warps 2
.workgroups 2
.slm 64
.buffer cnt u32[4] inout = 0, 100, -5, 0
.buffer out u32[8 * wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v1, v0, 2
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mul s2, s2, %nwg
    shl s3, %warp, 4                ; this warp's 16 bytes of slm
    and v2, %lane, 1
    cmp.eq p0, v2, 1
    mov v3, 99
    mov v4, 99
    if p0                           ; odd lanes
        atom.add v3, slm[s3], %lane     ; old values in ascending lane order
        sub v5, 3, %lane
        atom.min v4, slm[s3 + 4], v5    ; signed, on slm
    endif
    atom.cas v6, slm[s3 + 8], %lane, 7  ; lane 0 succeeds
    atom.lock v7, slm[s3 + 12]          ; lane 0 acquires
    atom.unlock v8, slm[s3 + 12]        ; lane 0 releases, the others find it free
    atom.add v9, cnt[0], 1              ; counted over every warp
    sub v10, 0, %lane
    atom.max v11, cnt[8], v10           ; signed, on a buffer
    atom.or v12, cnt[12], %lane
    st out[v1], v3
    add v1, v1, s2
    st out[v1], v4
    add v1, v1, s2
    st out[v1], v6
    add v1, v1, s2
    st out[v1], v7
    add v1, v1, s2
    st out[v1], v8
    add v1, v1, s2
    ld v13, slm[s3]
    st out[v1], v13
    add v1, v1, s2
    ld v14, slm[s3 + 4]
    st out[v1], v14
    add v1, v1, s2
    ld v15, slm[s3 + 8]
    st out[v1], v15
    exit
)");
  // One warp: the old values themselves are compared.
  check_against_reference(R"(
.wave 8
.buffer cnt u32[2] inout = 10, 0
.buffer out u32[4 * wave] out
    shl v1, %lane, 2
    mul s2, %wave, 4
    cmp.ne p0, %lane, 2
    mov v3, 55
    if p0
        mul v2, %lane, 3
        atom.sub v3, cnt[0], v2
        atom.xchg v4, cnt[4], %lane
    endif
    watom.add v5, cnt[0], %lane         ; once, for lane 0, its operand 0
    cmp.ge p1, %lane, 3
    if p1
        watom.xchg v6, cnt[4], %lane    ; once, for lane 3
    endif
    st out[v1], v3
    add v1, v1, s2
    st out[v1], v4
    add v1, v1, s2
    st out[v1], v5
    add v1, v1, s2
    st out[v1], v6
    exit
)");
}

TEST(VulkanTranslate, AtomicEvents) {
  // atom.lane.check: every active lane checked, the lowest failing one reported, nothing done.
  check_against_reference(R"(
.wave 8
.buffer c u32[wave] inout
    shl v0, %lane, 2
    cmp.ge p0, %lane, 1
    if p0
        atom.add v1, c[v0], 1
        add v2, v0, 12              ; lanes from wave - 3 on are out of bounds
        atom.add v1, c[v2], 1
    endif
    exit
)",
                          exec::Status::Trapped);
  // atom.warp.check: only the lowest active lane's address (lane 1's, misaligned).
  check_against_reference(R"(
.wave 8
.buffer c u32[wave] inout
    shl v0, %lane, 2
    cmp.ge p0, %lane, 1
    if p0
        cmp.eq p1, %lane, 1
        sel v0, p1, 2, 1000         ; the other lanes' addresses are out of bounds
        watom.add v1, c[v0], 1
    endif
    exit
)",
                          exec::Status::Trapped);
}

TEST(VulkanTranslate, BarrierExchangesThroughSlm) {
  check_against_reference(R"(
.wave 8
.warps 4
.workgroups 2
.slm 512
.buffer got u32[2 * wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v9, v0, 2
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mul s2, s2, %nwg
    mul s1, %warp, 3                ; warps idle for different times first
    mov s4, 0
    loop
        cmp.ge p0, %lane, 0
        cmp.ge p1, s4, s1
        break p1
        add s4, s4, 1
    endloop
    mul s3, %warp, %wave
    add v1, %lane, s3
    shl v1, v1, 2
    mul v2, %wg, 1000
    add v2, v2, v1
    st slm[v1], v2
    cmp.lt.u p2, %lane, 2
    if p2
        bar                         ; inside a divergent region: once for the warp
    else
    endif
    add s5, %warp, 1
    rem.u s5, s5, %nwarps
    mul s5, s5, %wave
    shl s5, s5, 2
    shl v3, %lane, 2
    add v3, v3, s5
    ld v4, slm[v3]                  ; the next warp's slot
    st got[v9], v4
    bar
    add v4, v4, 1
    st slm[v3], v4
    mov v6, 0
    loop                            ; bar in a loop: the same number of rounds in every warp
        bar
        add v6, v6, 1
        cmp.ge p3, v6, 3
        break p3
    endloop
    ld v5, slm[v1]
    add v9, v9, s2
    st got[v9], v5
    exit
)");
}

TEST(VulkanTranslate, BarrierAfterAWarpExitedDeadlocks) {
  // bar.exited: warp 1 ends before arriving; the others stay blocked at the bar
  // (their stores before it remain, those after never happen). On lavapipe the
  // barrier() of the arriving subgroups returned before the ending subgroup reached
  // its own, which the translation detects: the outcome is then not reproduced,
  // never a wrong status.
  check_against_reference(R"(
.wave 8
.warps 3
.workgroups 2
.buffer out u32[wave * warps * workgroups] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v9, v0, 2
    st out[v9], 1
    cmp.eq p0, %warp, 1
    if p0
        exit
    endif
    bar
    st out[v9], 2
    exit
)",
                          exec::Status::Deadlock, true);
  // Every warp passes two bars, then warp 0 a third alone: deadlock after the second.
  check_against_reference(R"(
.wave 8
.warps 2
.buffer out u32[wave * warps] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v9, v0, 2
    bar
    st out[v9], 1
    bar
    st out[v9], 2
    cmp.eq p0, %warp, 0
    mov s1, 0
    loop
        cmp.ge p1, s1, %warp
        break p1
        bar
        st out[v9], 3
        add s1, s1, 1
    endloop
    exit
)",
                          exec::Status::Deadlock, true);
}

TEST(VulkanTranslate, Calls) {
  // branch.call / branch.ret: the callee runs with the caller's active lanes, from
  // divergent code, nested, and exits inside a function.
  check_against_reference(R"(
.wave 8
.warps 2
.buffer out u32[4 * wave * warps] out
    mul s0, %gwarp, %wave
    add v0, %lane, s0
    shl v9, v0, 2
    mul s2, %wave, 4
    mul s2, s2, %nwarps
    mov v1, 0
    and v2, %lane, 3
    cmp.eq p0, v2, 0
    if p0
        call twice
    else
        call inc
    endif
    call twice
    st out[v9], v1
    add v9, v9, s2
    st out[v9], s3
    cmp.eq p1, %lane, 5
    if p1
        call leave                  ; lane 5 exits inside the function
    endif
    add v9, v9, s2
    st out[v9], %exec
    exit
twice:
    call inc
    call inc
    ret
inc:
    add v1, v1, 1
    add s3, s3, 1                   ; scalar: counts calls, whatever exec is
    ret
leave:
    exit
    ret
)");
  // call_overflow: recursion until the PC stack holds call_depth entries.
  check_against_reference(R"(
.wave 8
.call_depth 5
.buffer out u32[wave] out
    shl v9, %lane, 2
    call f
    exit
f:
    add v1, v1, 1
    st out[v9], v1
    call f
    ret
)",
                          exec::Status::Trapped);
  // Recursion that ends the warp before the PC stack overflows.
  check_against_reference(R"(
.wave 8
.buffer out u32[wave] out
    shl v9, %lane, 2
    call f
    exit
f:
    add v1, v1, 1
    st out[v9], v1
    cmp.ge p0, v1, 4
    if p0
        exit
    endif
    call f
    ret
)");
}

TEST(VulkanTranslate, MaskOverflowAtStaticDepth) {
  check_against_reference(R"(
.wave 8
.mask_depth 2
.buffer out u32[wave] out
    shl v9, %lane, 2
    if pt
        loop
            st out[v9], 1
            if pt                   ; the third entry
                st out[v9], 2
            endif
            break pt
        endloop
    endif
    exit
)",
                          exec::Status::Trapped);
}

// ---- every suite file ------------------------------------------------------------

std::filesystem::path suites_dir() {
  if (const char* d = std::getenv("SIMT_SUITES_DIR")) return d;
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "suites";
}

bool has_wave_directive(const std::string& text) {
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    size_t i = l.find_first_not_of(" \t");
    if (i != std::string::npos && l.compare(i, 5, ".wave") == 0 &&
        (l.size() == i + 5 || l[i + 5] == ' ' || l[i + 5] == '\t'))
      return true;
  }
  return false;
}

// Every suite file whose wave is the device's subgroup size (a file without `.wave`
// runs at that size), translated and run on the device, compared with the reference
// run of the same loaded program. Only outcomes that do not depend on the scheduling
// policy are compared (the same under round_robin, lowest_pc_first and random with
// seeds 1 to 3), and not livelock or step_limit ones; the step count only when it is
// the same under those policies. Prints what was refused, by reason.
TEST(VulkanTranslate, SuiteFiles) {
  auto dev = Device::get();
  if (!dev.ok()) SIMT_NO_VULKAN_DEVICE(dev.error().to_string());
  Device& d = **dev;
  const TranslateOptions topt = options_of(d);
  const std::filesystem::path root = suites_dir();
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".simt") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  std::map<std::string, int> skipped, refused, not_reproduced;
  int translated = 0, matched = 0;
  std::vector<std::string> mismatches;
  for (const auto& f : files) {
    const std::string name = std::filesystem::relative(f, root).string();
    std::string text, err;
    ASSERT_TRUE(host::read_file(f.string(), text, err)) << err;
    host::LoadOptions lopt;
    if (!has_wave_directive(text)) lopt.cli.wave = topt.subgroup_size;
    auto r = host::load(text, lopt);
    if (!r.loaded) {
      ++skipped["does not load (a test of rejected programs)"];
      continue;
    }
    const host::Loaded& loaded = *r.loaded;
    if (loaded.config.wave != topt.subgroup_size) {
      ++skipped["wave differs from the subgroup size"];
      continue;
    }
    exec::Outcome ref = exec::Machine(loaded.program).run();
    if (ref.status == exec::Status::Livelock || ref.status == exec::Status::StepLimit) {
      ++skipped["reference ends livelock or step_limit"];
      continue;
    }
    bool same = true, same_steps = true;
    auto other = [&](exec::Policy p, uint64_t seed) {
      host::LoadOptions o = lopt;
      o.cli.policy = p;
      o.cli.seed = seed;
      auto lr = host::load(text, o);
      if (!lr.loaded) {
        same = false;
        return;
      }
      exec::Outcome x = exec::Machine(lr.loaded->program).run();
      same = same && x.same_result(ref);
      same_steps = same_steps && x.steps == ref.steps;
    };
    other(exec::Policy::RoundRobin, 0);
    other(exec::Policy::LowestPcFirst, 0);
    for (uint64_t seed = 1; seed <= 3; ++seed) other(exec::Policy::Random, seed);
    if (!same) {
      ++skipped["outcome depends on the policy"];
      continue;
    }
    TranslateResult tr = translate(loaded, topt);
    if (!tr.ok()) {
      ++refused[tr.unsupported];
      continue;
    }
    ++translated;
    DeviceRun got = run_on_device(d, *tr.translation);
    if (!got.failure.empty()) {
      mismatches.push_back(name + ": " + got.failure);
      continue;
    }
    if (got.outcome.kind == DeviceOutcome::Kind::NotReproduced) {
      ++not_reproduced[got.outcome.reason];
      continue;
    }
    if (!same_steps) got.outcome.steps = ref.steps;  // informational, and policy-dependent here
    std::string diff = difference(ref, got);
    if (diff.empty()) {
      ++matched;
    } else {
      mismatches.push_back(name + ": " + diff);
    }
  }
  std::ostringstream o;
  o << "suite files at subgroup size " << topt.subgroup_size << ": " << files.size() << " files, "
    << translated << " translated, " << matched << " matched, " << mismatches.size()
    << " mismatched\n";
  auto table = [&](const char* title, const std::map<std::string, int>& m) {
    o << title << ":\n";
    for (const auto& [k, n] : m) o << "  " << n << "  " << k << "\n";
  };
  table("not compared", skipped);
  table("unsupported", refused);
  table("not reproduced at run time", not_reproduced);
  std::cout << o.str();
  for (const auto& m : mismatches) ADD_FAILURE() << m;
}

// A debugging aid: SIMT_VK_FILE=path --gtest_also_run_disabled_tests prints the
// translation of one program and how its run compares.
TEST(VulkanTranslate, DISABLED_OneFile) {
  auto dev = Device::get();
  if (!dev.ok()) SIMT_NO_VULKAN_DEVICE(dev.error().to_string());
  const char* path = std::getenv("SIMT_VK_FILE");
  if (!path) GTEST_SKIP() << "SIMT_VK_FILE is not set";
  std::string text, err;
  ASSERT_TRUE(host::read_file(path, text, err)) << err;
  const TranslateOptions topt = options_of(**dev);
  host::LoadOptions lopt;
  if (!has_wave_directive(text)) lopt.cli.wave = topt.subgroup_size;
  auto r = host::load(text, lopt);
  ASSERT_TRUE(r.loaded) << r.diags.format(path);
  exec::Outcome ref = exec::Machine(r.loaded->program).run();
  TranslateResult tr = translate(*r.loaded, topt);
  ASSERT_TRUE(tr.ok()) << tr.unsupported;
  Translation t = *tr.translation;
  if (const char* g = std::getenv("SIMT_VK_GLSL")) {  // a hand-edited shader instead
    ASSERT_TRUE(host::read_file(g, t.glsl, err)) << err;
  }
  std::cout << t.glsl;
  DeviceRun got = run_on_device(**dev, t);
  std::cout << "control words:";
  for (uint32_t w : got.control) std::cout << " " << w;
  std::cout << "\n";
  for (const auto& b : got.buffers) {
    std::cout << b.name << ":";
    for (size_t i = 0; i + 3 < b.bytes.size(); i += 4) {
      uint32_t w;
      std::memcpy(&w, &b.bytes[i], 4);
      std::cout << " " << w;
    }
    std::cout << "\n";
  }
  ASSERT_EQ(got.failure, "");
  std::cout << "reference " << exec::status_name(ref.status) << ", steps " << ref.steps
            << "\ndifference: " << difference(ref, got) << "\n";
}

// ---- refused programs ------------------------------------------------------------

std::string unsupported(std::string_view text) {
  host::Loaded loaded = load(text, 8);
  if (!loaded.program) return "(did not load)";
  TranslateOptions opt;
  opt.subgroup_size = 8;
  TranslateResult r = translate(loaded, opt);
  EXPECT_FALSE(r.ok()) << r.translation->glsl;
  return r.unsupported;
}

TEST(VulkanTranslate, UnsupportedInstructionsAreNamed) {
  EXPECT_NE(unsupported(".wave 8\n  push pt\n  pop\n  exit\n").find("push"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\nl:\n  jmp l\n").find("jmp"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  cbr pt, l\nl:\n  exit\n").find("cbr"), std::string::npos);
}

// TranslateOptions::exact_step_limit is for launches of one warp only.
TEST(VulkanTranslate, ExactStepLimitNeedsOneWarp) {
  host::Loaded loaded = load(".wave 8\n.warps 2\n  exit\n", 8);
  ASSERT_TRUE(loaded.program);
  TranslateOptions opt;
  opt.subgroup_size = 8;
  opt.exact_step_limit = true;
  TranslateResult r = translate(loaded, opt);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.unsupported.find("several warps"), std::string::npos) << r.unsupported;
}

TEST(VulkanTranslate, UnsupportedLaunches) {
  host::Loaded loaded = load(".wave 8\n  exit\n", 8);
  ASSERT_TRUE(loaded.program);
  TranslateOptions opt;
  opt.subgroup_size = 16;
  TranslateResult r = translate(loaded, opt);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.unsupported.find("subgroup size 16"), std::string::npos) << r.unsupported;
}

// The loop budget: a warp whose loops would run past it stops and says so.
TEST(VulkanTranslate, LoopBudgetIsReported) {
  auto dev = Device::get();
  if (!dev.ok()) SIMT_NO_VULKAN_DEVICE(dev.error().to_string());
  Device& d = **dev;
  const uint32_t wave = d.info().subgroup.size;
  host::Loaded loaded = load(R"(
.wave 8
.buffer out u32[1] out
    mov v0, 0
    loop
        add v0, v0, 1
        cmp.ge p0, v0, 100000
        break p0
    endloop
    st out[0], v0
    exit
)",
                             wave);
  ASSERT_TRUE(loaded.program);
  TranslateOptions opt;
  opt.subgroup_size = wave;
  TranslateResult tr = translate(loaded, opt);
  ASSERT_TRUE(tr.ok()) << tr.unsupported;
  const Translation& t = *tr.translation;
  auto spirv = glsl_compile(t.glsl);
  ASSERT_TRUE(spirv.ok()) << spirv.error().to_string();
  PipelineOptions popt;
  popt.buffers = static_cast<uint32_t>(t.bindings.size());
  auto pipeline = d.create_pipeline(*spirv, popt);
  ASSERT_TRUE(pipeline.ok());
  auto ctl = d.create_buffer(t.bindings[0].init.size());
  auto out = d.create_buffer(t.bindings[1].init.size());
  ASSERT_TRUE(ctl.ok() && out.ok());
  ASSERT_TRUE(d.dispatch(*pipeline, {&*ctl, &*out}, t.workgroups, 20s).ok());
  std::vector<uint32_t> control(t.bindings[0].init.size() / 4);
  ASSERT_TRUE(ctl->download_words(control).ok());
  DeviceOutcome o = decode_control(t, control);
  EXPECT_EQ(o.kind, DeviceOutcome::Kind::NotReproduced);
  EXPECT_NE(o.reason.find("loop"), std::string::npos) << o.reason;
  EXPECT_TRUE(control[kCtlFlags] & kFlagLoopBudget);
}

}  // namespace
}  // namespace simt::vulkan
