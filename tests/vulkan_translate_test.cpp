// The program -> GLSL translator (runners/vulkan/translate.h): small programs
// translated, run on the Vulkan device (lavapipe under ctest) and compared with
// the reference interpreter's outcome (status, event, output buffers and step
// count); and programs the translator must refuse, with the reason it gives.
// Device tests skip when the process has no Vulkan device. Programs are written
// at `.wave 8` and loaded with the device's subgroup size as wave.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "device.h"
#include "exec/machine.h"
#include "glsl.h"
#include "host/host.h"
#include "translate.h"

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

// The reference's outcome and the device's, compared. Fails the test on any
// difference; the reference must end with `want` (so a test cannot pass vacuously).
void check_against_reference(std::string_view text, exec::Status want = exec::Status::Completed) {
  auto dev = Device::get();
  if (!dev.ok()) GTEST_SKIP() << dev.error().to_string();
  Device& d = **dev;
  TranslateOptions topt;
  topt.subgroup_size = d.info().subgroup.size;
  topt.max_workgroup_invocations = d.info().max_workgroup_invocations;
  topt.max_storage_buffers = d.info().max_storage_buffers;
  host::Loaded loaded = load(text, topt.subgroup_size);
  ASSERT_TRUE(loaded.program);

  exec::Machine m(loaded.program);
  exec::Outcome ref = m.run();
  ASSERT_EQ(ref.status, want) << "the reference's status";

  TranslateResult tr = translate(loaded, topt);
  ASSERT_TRUE(tr.ok()) << tr.unsupported;
  const Translation& t = *tr.translation;
  auto spirv = glsl_compile(t.glsl);
  ASSERT_TRUE(spirv.ok()) << spirv.error().to_string() << "\n" << t.glsl;
  PipelineOptions popt;
  popt.buffers = static_cast<uint32_t>(t.bindings.size());
  popt.require_full_subgroups = true;
  auto pipeline = d.create_pipeline(*spirv, popt);
  ASSERT_TRUE(pipeline.ok()) << pipeline.error().to_string();
  std::vector<Buffer> buffers;
  std::vector<Buffer*> bound;
  for (const auto& b : t.bindings) {
    auto buf = d.create_buffer(b.init.size());
    ASSERT_TRUE(buf.ok()) << buf.error().to_string();
    ASSERT_TRUE(buf->upload(std::as_bytes(std::span(b.init))).ok());
    buffers.push_back(std::move(buf).value());
  }
  for (auto& b : buffers) bound.push_back(&b);
  Status s = d.dispatch(*pipeline, bound, t.workgroups, 20s);
  ASSERT_TRUE(s.ok()) << s.error().to_string();

  std::vector<uint32_t> control(t.bindings[0].init.size() / 4);
  ASSERT_TRUE(buffers[0].download_words(control).ok());
  DeviceOutcome got = decode_control(t, control);
  ASSERT_NE(got.kind, DeviceOutcome::Kind::NotReproduced) << got.reason << "\n" << t.glsl;
  EXPECT_EQ(got.kind == DeviceOutcome::Kind::Trapped, ref.status == exec::Status::Trapped)
      << t.glsl;
  EXPECT_EQ(got.event, ref.event) << t.glsl;
  EXPECT_EQ(got.steps, ref.steps) << t.glsl;

  // Output buffers, in declaration order (exec.outcome).
  size_t out_index = 0;
  for (size_t i = 1; i < t.bindings.size(); ++i) {
    const auto& b = t.bindings[i];
    if (!b.output) continue;
    ASSERT_LT(out_index, ref.buffers.size());
    const auto& want = ref.buffers[out_index++];
    ASSERT_EQ(want.name, b.name);
    std::vector<uint8_t> have(b.init.size());
    ASSERT_TRUE(buffers[i].download(std::as_writable_bytes(std::span(have))).ok());
    have.resize(b.bytes);
    EXPECT_EQ(have, want.bytes) << "buffer " << b.name << "\n" << t.glsl;
  }
  EXPECT_EQ(out_index, ref.buffers.size());
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
    cmp.ge p0, %lane, 3
    if p0
        add v1, v0, 8           ; lanes 6 and 7 are out of bounds
        st out[v1], 9
    endif
    exit
)",
                          exec::Status::Trapped);
  check_against_reference(R"(
.wave 8
.buffer out u32[wave] out
    shl v0, %lane, 2
    cmp.eq p0, %lane, 5
    sel v0, p0, 2, v0
    ld v1, out[v0]              ; lane 5 misaligned
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
  EXPECT_NE(unsupported(".wave 8\n.buffer o u32[8] out\n  shfl v0, v1, 1\n  exit\n").find("shfl"),
            std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  ballot s0, pt\n  exit\n").find("ballot"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  bar\n  exit\n").find("bar"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  div v0, v1, 3\n  exit\n").find("div"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n.buffer o u8[8] out\n  st.8 o[0], 1\n  exit\n").find("st.8"),
            std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n.slm 64\n  st slm[0], 1\n  exit\n").find("shared local memory"),
            std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  push pt\n  pop\n  exit\n").find("push"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  call f\n  exit\nf:\n  ret\n").find("call"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\nl:\n  jmp l\n").find("jmp"), std::string::npos);
  EXPECT_NE(unsupported(".wave 8\n  mov %exec, 1\n  exit\n").find("%exec"), std::string::npos);
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
  if (!dev.ok()) GTEST_SKIP() << dev.error().to_string();
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
