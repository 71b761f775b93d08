// Preemption and the context image (spec/preempt.md): the image's layout
// formulas against ImageLayout, save and restore being exact (the same outcome
// and trace with a preemption at every step, by flow A and by flow B with an
// intruder), the image's stability, flow C, every rejection of read_image with
// its byte offset, `image show` and `image diff`, the system-code validation and
// the simtspec commands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "exec/image.h"
#include "exec/machine.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;
using exec::ImageContent;
using exec::ImageError;
using exec::ImageLayout;
using exec::LaunchConfig;
using exec::Machine;
using isa::CtxField;
using syntax::HostKind;
using syntax::HostStep;
using syntax::PreemptFlow;

std::string lines(std::initializer_list<std::string_view> ls) {
  std::string s;
  for (auto l : ls) s += std::string(l) + "\n";
  return s;
}

// The program `body` (which ends in an unconditional exit) with the suite's
// standard system routine (preempt.routine.complete) after it.
std::string with_routine(const std::string& body) {
  return ".sys_save sys_save\n.sys_restore sys_restore\n" + body + "\n" +
         test::read_all(test::source_path("suites/lib/sysroutine.simtlib"));
}

// A `preempt` action (preempt.request).
HostStep preempt_at(uint64_t step, PreemptFlow flow = PreemptFlow::A, int32_t core = -1,
                    std::string intruder = "") {
  HostStep h;
  h.step = step;
  h.kind = HostKind::Preempt;
  h.core = core;
  h.flow = flow;
  h.intruder = std::move(intruder);
  return h;
}

std::shared_ptr<const exec::Program> build(const std::string& text, std::vector<HostStep> host,
                                           exec::Policy policy = exec::Policy::RoundRobin,
                                           uint64_t seed = 0) {
  host::LoadOptions opt;
  opt.host = std::move(host);
  opt.cli.policy = policy;
  opt.cli.seed = seed;
  return test::build(text, opt);
}

using Rec = std::tuple<uint64_t, uint32_t, uint32_t, uint64_t, int, uint32_t, uint32_t>;

struct Result {
  exec::Outcome outcome;
  std::vector<Rec> trace;
};

Result run_traced(Machine& m) {
  Result r;
  m.set_trace([&](const exec::TraceRecord& t) {
    r.trace.emplace_back(t.step, t.warp, t.pc, t.exec, static_cast<int>(t.kind), t.core, t.cause);
  });
  r.outcome = m.run();
  m.set_trace(nullptr);
  return r;
}

Result run_traced(const std::shared_ptr<const exec::Program>& p) {
  Machine m(p);
  return run_traced(m);
}

// exec.outcome: status, event, buffers and steps.
void expect_same(const Result& a, const Result& b) {
  EXPECT_EQ(a.outcome.status, b.outcome.status);
  EXPECT_TRUE(a.outcome.same_result(b.outcome));
  EXPECT_EQ(a.outcome.steps, b.outcome.steps);
  EXPECT_EQ(a.trace.size(), b.trace.size());
  EXPECT_TRUE(a.trace == b.trace) << "the traces differ";
}

// `base` with one preemption action after its own actions at each step 0..n-1.
std::vector<HostStep> every_step(std::vector<HostStep> base, uint64_t n, PreemptFlow flow,
                                 int32_t core = -1, const std::string& intruder = "") {
  std::vector<HostStep> out;
  size_t i = 0;
  for (uint64_t s = 0; s < n; ++s) {
    for (; i < base.size() && base[i].step <= s; ++i) out.push_back(base[i]);
    out.push_back(preempt_at(s, flow, core, intruder));
  }
  for (; i < base.size(); ++i) out.push_back(base[i]);
  return out;
}

// An intruder (preempt.intruder) that writes 0xa5a5a5a5 to every word of its SLM.
std::string intruder(uint32_t cores, uint32_t workgroups, uint32_t slm) {
  return ".wave 8\n.cores " + std::to_string(cores) + "\n.workgroups " +
         std::to_string(workgroups) + "\n.slm " + std::to_string(slm) +
         "\n    shl v0, %lane, 2\n    mov v1, 0xa5a5a5a5\n    loop\n        cmp.ge.u p0, v0, " +
         std::to_string(slm) +
         "\n        break p0\n        st slm[v0], v1\n        add v0, v0, 32\n    endloop\n    "
         "exit\n";
}

const char* const kSmall = ".vregs 8\n.sregs 8\n.mask_depth 4\n.call_depth 4\n.stack 64\n";

// Divergent code, a call inside an if, a uniform loop, two cores and workgroups.
const std::string kDivergent =
    with_routine(std::string(kSmall) + lines({
                                           ".wave 8",
                                           ".warps 2",
                                           ".workgroups 3",
                                           ".cores 2",
                                           ".slm 32",
                                           ".buffer out u32[threads] out",
                                           "    mul s0, %gwarp, %wave",
                                           "    add v0, s0, %lane",
                                           "    shl v1, v0, 2",
                                           "    and v2, %lane, 1",
                                           "    cmp.eq p0, v2, 0",
                                           "    if p0",
                                           "        add v3, v0, 100",
                                           "    else",
                                           "        call f",
                                           "    endif",
                                           "    shl v7, %lane, 2",
                                           "    st slm[v7], v3",
                                           "    mov s1, 0",
                                           "    loop",
                                           "        cmp.ge p1, s1, 3",
                                           "        break p1",
                                           "        add v3, v3, s1",
                                           "        add s1, s1, 1",
                                           "    endloop",
                                           "    ld v4, slm[v7]",
                                           "    add v3, v3, v4",
                                           "    st out[v1], v3",
                                           "    exit",
                                           "f:",
                                           "    mul v3, v0, 3",
                                           "    ret",
                                       }));

// Warps that reach a barrier at different times (the early ones wait), SLM
// written before it and read after it, four workgroups on two cores.
const std::string kBarrier = with_routine(std::string(kSmall) + lines({
                                                                    ".wave 8",
                                                                    ".warps 3",
                                                                    ".workgroups 4",
                                                                    ".cores 2",
                                                                    ".slm 96",
                                                                    ".buffer out u32[threads] out",
                                                                    "    mul s2, %gwarp, %wave",
                                                                    "    add v0, s2, %lane",
                                                                    "    shl v1, %lane, 2",
                                                                    "    mul s0, %warp, 32",
                                                                    "    add v1, v1, s0",
                                                                    "    add v2, v0, 7",
                                                                    "    mov s1, 0",
                                                                    "    mul s4, %warp, 3",
                                                                    "    loop",
                                                                    "        cmp.ge.u p1, s1, s4",
                                                                    "        break p1",
                                                                    "        add v2, v2, 1",
                                                                    "        add s1, s1, 1",
                                                                    "    endloop",
                                                                    "    st slm[v1], v2",
                                                                    "    bar",
                                                                    "    shl v5, %lane, 2",
                                                                    "    ld v4, slm[v5]",
                                                                    "    add v4, v4, v2",
                                                                    "    shl v6, v0, 2",
                                                                    "    st out[v6], v4",
                                                                    "    exit",
                                                                }));

// A sub-vector region, a handler entered by host interrupts (the second pending
// while the first is handled), the handler's frame accessed.
const std::string kTrap = with_routine(std::string(kSmall) + lines({
                                                                 ".wave 64",
                                                                 ".simd 32",
                                                                 ".cores 1",
                                                                 ".handler H",
                                                                 ".buffer hrec u32[3] out",
                                                                 ".buffer hcnt u32[1] out",
                                                                 ".buffer cnt u32[wave] out",
                                                                 "    subv.begin",
                                                                 "    add v3, v3, 1",
                                                                 "    nop",
                                                                 "    nop",
                                                                 "    subv.end",
                                                                 "    shl v2, %lane, 2",
                                                                 "    st cnt[v2], v3",
                                                                 "    exit",
                                                                 "H:",
                                                                 "    frame.ld s5, 0",
                                                                 "    frame.ld s6, 4",
                                                                 "    st hrec[0], s5",
                                                                 "    st hrec[4], s6",
                                                                 "    ld s4, hcnt[0]",
                                                                 "    add s4, s4, 1",
                                                                 "    st hcnt[0], s4",
                                                                 "    tclear",
                                                                 "    tret",
                                                             }));
std::vector<HostStep> trap_host() {
  HostStep h;
  h.kind = HostKind::Interrupt;
  h.step = 3;
  h.code = 3;
  HostStep h2 = h;
  h2.code = 4;
  return {h, h2};
}

// Single-step on every core from the start: every warp is owed a step per round.
const std::string kSingleStep = with_routine(std::string(kSmall) + lines({
                                                                       ".wave 8",
                                                                       ".warps 2",
                                                                       ".workgroups 2",
                                                                       ".cores 2",
                                                                       ".handler SS",
                                                                       ".buffer log u32[4] out",
                                                                       "    add s5, s5, 1",
                                                                       "    add s5, s5, 1",
                                                                       "    add s5, s5, 1",
                                                                       "    add s5, s5, 1",
                                                                       "    exit",
                                                                       "SS:",
                                                                       "    shl s1, %gwarp, 2",
                                                                       "    ld s2, log[s1]",
                                                                       "    add s2, s2, s5",
                                                                       "    st log[s1], s2",
                                                                       "    tclear",
                                                                       "    tret",
                                                                   }));
std::vector<HostStep> single_step_host() {
  HostStep h;
  h.kind = HostKind::SingleStep;
  h.step = 0;
  h.on = true;
  return {h};
}

struct Case {
  const char* name;
  const std::string* text;
  std::vector<HostStep> host;
  uint32_t cores, workgroups, slm;
};

std::vector<Case> cases() {
  return {{"divergent", &kDivergent, {}, 2, 3, 32},
          {"barrier", &kBarrier, {}, 2, 4, 96},
          {"trap", &kTrap, trap_host(), 1, 1, 0},
          {"single_step", &kSingleStep, single_step_host(), 2, 2, 0}};
}

constexpr exec::Policy kPolicies[] = {exec::Policy::RoundRobin, exec::Policy::LowestPcFirst,
                                      exec::Policy::OldestFirst, exec::Policy::Random};

// ---- the layout (preempt.image.header, .slot, .slm, .fixed, .size) ---------------

TEST(PreemptLayout, SizesAndOffsetsAreTheFormulas) {
  uint32_t checked = 0;
  for (uint32_t wave : {1u, 8u, 32u, 64u})
    for (uint32_t vregs : {1u, 5u, 32u})
      for (uint32_t sregs : {1u, 7u})
        for (uint32_t m : {1u, 3u, 32u})
          for (uint32_t c : {1u, 16u})
            for (uint32_t cores : {1u, 3u})
              for (uint32_t wgs : {1u, 2u, 7u})
                for (uint32_t nbuf : {0u, 2u}) {
                  LaunchConfig cfg;
                  cfg.wave = wave, cfg.vregs = vregs, cfg.sregs = sregs, cfg.mask_depth = m;
                  cfg.call_depth = c, cfg.cores = cores, cfg.workgroups = wgs, cfg.warps = 2;
                  cfg.slm = 48, cfg.stack = 24;
                  std::vector<uint32_t> bufs;
                  for (uint32_t i = 0; i < nbuf; ++i) bufs.push_back(12 + 4 * i);
                  for (uint64_t set = 1; set < (uint64_t{1} << cores); ++set) {
                    const ImageLayout L = ImageLayout::make(cfg, bufs, 10, set);
                    SCOPED_TRACE("wave " + std::to_string(wave) + " V " + std::to_string(vregs) +
                                 " S " + std::to_string(sregs) + " M " + std::to_string(m) + " C " +
                                 std::to_string(c) + " cores " + std::to_string(cores) + " wgs " +
                                 std::to_string(wgs) + " set " + std::to_string(set));
                    EXPECT_EQ(L.header_bytes, 48 + 8 * 15 + 4 * nbuf);
                    const uint32_t R = 4 * vregs * wave + 4 * sregs + 48 * m + 8 * c + 208;
                    EXPECT_EQ(L.slot_raw, R);
                    EXPECT_EQ(L.slot_bytes, (R + 255) / 256 * 256);
                    uint64_t Q = 0, ncores = 0;
                    uint64_t slm_off = L.header_bytes;
                    for (uint32_t k = 0; k < cores; ++k) {
                      if (!((set >> k) & 1)) continue;
                      ++ncores;
                      const uint64_t on_core = k < wgs ? (wgs - k + cores - 1) / cores : 0;
                      Q += on_core;
                      slm_off += 48 * on_core;  // slm x ceil((workgroups - c) / cores)
                    }
                    EXPECT_EQ(L.workgroups.size(), Q);
                    EXPECT_EQ(L.slm_bytes(), 48 * Q);
                    EXPECT_EQ(L.slots_offset, slm_off);
                    const uint64_t N = 2 * Q;
                    EXPECT_EQ(L.warps.size(), N);
                    const uint64_t sum_bufs = nbuf == 0 ? 0 : 12 + 16;
                    for (uint64_t P : {0u, 3u}) {
                      const uint64_t fixed = 40 + 4 * Q + 32 * ncores + 4 * P + sum_bufs + N * 24;
                      EXPECT_EQ(L.fixed_bytes(P), fixed);
                      EXPECT_EQ(L.total_bytes(P),
                                L.header_bytes + 48 * Q + N * L.slot_bytes + fixed);
                    }
                    // Each field in slot order (context.def), at the sum of the sizes before it.
                    const uint32_t sizes[] = {
                        4 * vregs * wave, 4 * sregs,           128, 4, 8, 8, 4, 4, 20, 4 + 24 * m,
                        4 + 4 * c,        20 + 24 * m + 4 * c, 4};
                    static_assert(std::size(sizes) == isa::kCtxFieldCount);
                    uint32_t off = 0;
                    for (size_t f = 0; f < isa::kCtxFieldCount; ++f) {
                      EXPECT_EQ(L.field_offset[f], off) << isa::ctx_field_name(isa::kCtxFields[f]);
                      EXPECT_EQ(L.field_bytes[f], sizes[f]);
                      off += sizes[f];
                    }
                    ++checked;
                  }
                }
  EXPECT_GT(checked, 2000u);
}

// preempt.image.slots: cores ascending, their workgroups ascending, warps ascending.
TEST(PreemptLayout, SlotOrder) {
  LaunchConfig cfg;
  cfg.warps = 2, cfg.workgroups = 5, cfg.cores = 2;
  const ImageLayout L = ImageLayout::make(cfg, {}, 1, 3);
  EXPECT_EQ(L.workgroups, (std::vector<uint32_t>{0, 2, 4, 1, 3}));
  EXPECT_EQ(L.warps, (std::vector<uint32_t>{0, 1, 4, 5, 8, 9, 2, 3, 6, 7}));
  const ImageLayout one = ImageLayout::make(cfg, {}, 1, 2);
  EXPECT_EQ(one.warps, (std::vector<uint32_t>{2, 3, 6, 7}));
}

// ---- save and restore are exact (preempt.transparency) --------------------------

class PreemptExact : public ::testing::TestWithParam<exec::Policy> {};

TEST_P(PreemptExact, AtEveryStepFlowAAndFlowBWithAnIntruder) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto base = build(*c.text, c.host, GetParam(), 7);
    ASSERT_TRUE(base);
    const Result plain = run_traced(base);
    ASSERT_EQ(plain.outcome.status, exec::Status::Completed);
    const uint64_t n = plain.outcome.steps;
    {
      SCOPED_TRACE("flow A");
      Machine m(build(*c.text, every_step(c.host, n, PreemptFlow::A), GetParam(), 7));
      expect_same(run_traced(m), plain);
      EXPECT_EQ(m.preemptions(), n);
    }
    {
      SCOPED_TRACE("flow B, every core, an intruder");
      const std::string in = intruder(c.cores, c.workgroups, std::max(c.slm, 32u));
      Machine m(build(*c.text, every_step(c.host, n, PreemptFlow::B, -1, in), GetParam(), 7));
      expect_same(run_traced(m), plain);
      EXPECT_EQ(m.preemptions(), n);
    }
    {
      SCOPED_TRACE("flow B, core 0, an intruder");
      const std::string in =
          intruder(1, (c.workgroups + c.cores - 1) / c.cores, std::max(c.slm, 32u));
      Machine m(build(*c.text, every_step(c.host, n, PreemptFlow::B, 0, in), GetParam(), 7));
      expect_same(run_traced(m), plain);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, PreemptExact, ::testing::ValuesIn(kPolicies),
                         [](const auto& info) {
                           return std::string(exec::policy_name(info.param));
                         });

// The intruder does overwrite the launch's SLM windows (so the test above shows
// the DMA step): its own final SLM is all 0xa5.
TEST(PreemptExact, TheIntruderWritesAllItsSlm) {
  Machine m(test::build(intruder(2, 4, 96)));
  EXPECT_EQ(m.run().status, exec::Status::Completed);
  for (const auto& w : m.state().mem.slm)
    EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](uint8_t b) { return b == 0xa5; }));
}

// preempt.flow.a, preempt.steps: right after a flow-A preemption the machine's
// state and step count are what they were before it.
TEST(PreemptExact, StateAfterFlowAIsTheStateBefore) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto p = build(*c.text, c.host);
    const uint64_t n = run_traced(p).outcome.steps;
    for (uint64_t k = 0; k < n; ++k) {
      Machine m(p);
      m.advance(k);
      const exec::Snapshot before = m.snapshot();
      exec::HostAction a;
      a.kind = HostKind::Preempt;
      EXPECT_FALSE(m.preempt().preempt(a).has_value());
      EXPECT_TRUE(m.state() == before.state) << "step " << k;
      EXPECT_EQ(m.steps(), before.steps);
    }
  }
}

// ---- the image's stability (preempt.restore.request) ----------------------------

TEST(PreemptImage, SavingTwiceGivesTheSameBytes) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto p = build(*c.text, c.host);
    const uint64_t n = run_traced(p).outcome.steps;
    for (uint64_t k = 0; k < n; k += 3) {
      Machine m(p);
      m.advance(k);
      exec::HostAction a;
      a.kind = HostKind::Preempt;
      m.preempt().preempt(a);
      const std::vector<uint8_t> first = m.last_image();
      m.preempt().preempt(a);  // save -> restore -> save
      EXPECT_EQ(first, m.last_image()) << "step " << k;
      ASSERT_TRUE(std::holds_alternative<ImageContent>(exec::read_image(first)));
    }
  }
}

// Two actions at one step: the second image is the first, but for the host
// script's position, which has passed one more action (preempt.restore.request).
TEST(PreemptImage, TwoActionsAtOneStep) {
  const auto one = build(kBarrier, {preempt_at(9)});
  const auto two = build(kBarrier, {preempt_at(9), preempt_at(9)});
  Machine a(one), b(two);
  a.run(), b.run();
  ASSERT_EQ(a.preemptions(), 1u);
  ASSERT_EQ(b.preemptions(), 2u);
  std::vector<uint8_t> x = a.last_image(), y = b.last_image();
  ASSERT_EQ(x.size(), y.size());
  auto img = std::get<ImageContent>(exec::read_image(x));
  const uint64_t host_pos = img.layout.sched_offset() + 24;
  EXPECT_EQ(x[host_pos], 1);
  EXPECT_EQ(y[host_pos], 2);
  y[host_pos] = 1;
  EXPECT_EQ(x, y);
}

// ---- flow C (preempt.flow.c) -------------------------------------------------------

TEST(PreemptFlowC, StartingFromAnImageEndsAsTheLaunchWould) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Result plain = run_traced(build(*c.text, c.host));
    for (uint64_t k = 0; k < plain.outcome.steps; k += 2) {
      std::vector<HostStep> host = c.host;
      host.insert(std::upper_bound(host.begin(), host.end(), k,
                                   [](uint64_t s, const HostStep& h) { return s < h.step; }),
                  preempt_at(k));
      const auto p = build(*c.text, host);
      Machine a(p);
      run_traced(a);
      ASSERT_EQ(a.preemptions(), 1u);
      Machine b(p);
      ASSERT_FALSE(b.start_from_image(a.last_image()).has_value());
      EXPECT_EQ(b.steps(), k);
      const Result r = run_traced(b);
      EXPECT_EQ(r.outcome.status, plain.outcome.status) << "step " << k;
      EXPECT_TRUE(r.outcome.same_result(plain.outcome)) << "step " << k;
      EXPECT_EQ(r.outcome.steps, plain.outcome.steps);
      // The rest of the trace: the uninterrupted launch's from step k on (a record holds
      // the steps before it).
      std::vector<Rec> rest;
      for (const Rec& t : plain.trace)
        if (std::get<0>(t) >= k) rest.push_back(t);
      EXPECT_TRUE(r.trace == rest) << "step " << k;
    }
  }
}

// ---- read_image's rejections (preempt.image.check) --------------------------------

struct Image {
  std::shared_ptr<const exec::Program> prog;
  std::vector<uint8_t> bytes;
  ImageContent content;
  exec::ImageExpect expect;
};

// The image of `text` preempted (all cores) at `step`.
Image image_of(const std::string& text, std::vector<HostStep> host, uint64_t step,
               host::LoadOptions opt = {}) {
  host.insert(std::upper_bound(host.begin(), host.end(), step,
                               [](uint64_t s, const HostStep& h) { return s < h.step; }),
              preempt_at(step));
  opt.host = host;
  Image im;
  im.prog = test::build(text, opt);
  Machine m(im.prog);
  m.run();
  im.bytes = m.last_image();
  im.expect = m.preempt().expect(false);
  auto r = exec::read_image(im.bytes, &im.expect);
  if (auto* e = std::get_if<ImageError>(&r)) ADD_FAILURE() << e->text();
  if (auto* c = std::get_if<ImageContent>(&r)) im.content = std::move(*c);
  return im;
}

void put32(std::vector<uint8_t>& b, uint64_t off, uint32_t v) {
  exec::put_u32(b, off, v);
}
void put64(std::vector<uint8_t>& b, uint64_t off, uint64_t v) {
  exec::put_u64(b, off, v);
}
uint32_t get32(const std::vector<uint8_t>& b, uint64_t off) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{b[off + i]} << (8 * i);
  return v;
}

void expect_rejected(std::span<const uint8_t> bytes, const exec::ImageExpect* e, uint64_t offset,
                     const std::string& substr) {
  auto r = exec::read_image(bytes, e);
  ASSERT_TRUE(std::holds_alternative<ImageError>(r)) << "accepted; expected offset " << offset;
  const ImageError& err = std::get<ImageError>(r);
  EXPECT_EQ(err.offset, offset) << err.message;
  EXPECT_NE(err.message.find(substr), std::string::npos) << err.message;
}

// The first step at which kDivergent's warp 0 is inside its if (exec 0x55 of live
// 0xff, one mask-stack entry, no call).
uint64_t in_the_if() {
  Machine m(test::build(kDivergent));
  for (uint64_t k = 0; k < 1000; ++k) {
    const exec::WarpState& w = m.state().warps[0];
    if (w.mask_stack.size() == 1 && w.exec == 0x55 && w.pc_stack.empty()) return k;
    if (m.step()) break;
  }
  ADD_FAILURE() << "warp 0 never inside the if";
  return 0;
}

uint64_t field_at(const Image& im, size_t slot, CtxField f) {
  return im.content.layout.slot_offset(slot) +
         im.content.layout.field_offset[static_cast<size_t>(f)];
}

TEST(PreemptReject, HeaderFields) {
  const Image im = image_of(kDivergent, {}, in_the_if());
  const auto* e = &im.expect;
  auto changed = [&](auto edit) {
    std::vector<uint8_t> b = im.bytes;
    edit(b);
    return b;
  };
  expect_rejected(changed([](auto& b) { b[0] ^= 1; }), e, 0, "magic");
  expect_rejected(changed([](auto& b) { put32(b, 8, 2); }), e, 8, "version");
  expect_rejected(changed([](auto& b) { put32(b, 12, get32(b, 12) + 4); }), e, 12, "header size");
  expect_rejected(changed([](auto& b) { put32(b, 12, get32(b, 12) + 4); }), nullptr, 12,
                  "header size");
  {
    std::vector<uint8_t> b = im.bytes;
    b.pop_back();
    expect_rejected(b, e, b.size(), "truncated");
    b.push_back(0), b.push_back(0);
    expect_rejected(b, e, im.bytes.size(), "bytes");
    expect_rejected(b, nullptr, im.bytes.size(), "bytes");
  }
  expect_rejected(changed([](auto& b) { put64(b, 24, 0); }), e, 24, "core set");
  expect_rejected(changed([](auto& b) { put64(b, 24, 4); }), e, 24, "core set");  // cores = 2
  expect_rejected(changed([](auto& b) { put32(b, 32, get32(b, 32) + 1); }), e, 32, "instructions");
  expect_rejected(changed([](auto& b) { put32(b, 36, 2); }), e, 36, "buffers");
  expect_rejected(changed([](auto& b) { put32(b, 40, get32(b, 40) + 256); }), e, 40, "slot size");
  expect_rejected(changed([](auto& b) { put32(b, 40, get32(b, 40) + 256); }), nullptr, 40,
                  "slot size");
  expect_rejected(changed([](auto& b) { put32(b, 44, 14); }), e, 44, "settings");
  // A buffer's size against the program.
  expect_rejected(changed([](auto& b) { put32(b, 48 + 8 * 15, get32(b, 48 + 8 * 15) + 4); }), e,
                  48 + 8 * 15, "buffer 0");
  // The total size against its formula (and the length).
  {
    std::vector<uint8_t> b = im.bytes;
    b.insert(b.end(), 4, 0);
    put64(b, 16, b.size());
    expect_rejected(b, nullptr, 16, "total size");
  }
}

// Each setting against another launch, in the header's order.
TEST(PreemptReject, SettingsOfAnotherLaunch) {
  const Image im = image_of(kDivergent, {}, 5);
  for (size_t i = 0; i < exec::kSettingCount; ++i) {
    const exec::Setting s = exec::kSettings[i].id;
    SCOPED_TRACE(std::string(exec::kSettings[i].name));
    exec::ImageExpect other = im.expect;
    switch (s) {
      case exec::Setting::wave:
        other.cfg.wave = 16;
        other.cfg.vregs = 4;
        break;  // both differ
      case exec::Setting::simd:
        other.cfg.simd = 4;
        break;
      case exec::Setting::warps:
        other.cfg.warps = 1;
        break;
      case exec::Setting::workgroups:
        other.cfg.workgroups = 4;
        break;
      case exec::Setting::cores:
        other.cfg.cores = 1;
        break;
      case exec::Setting::slm:
        other.cfg.slm = 64;
        break;
      case exec::Setting::vregs:
        other.cfg.vregs = 9;
        break;
      case exec::Setting::sregs:
        other.cfg.sregs = 9;
        break;
      case exec::Setting::mask_depth:
        other.cfg.mask_depth = 5;
        break;
      case exec::Setting::call_depth:
        other.cfg.call_depth = 5;
        break;
      case exec::Setting::stack:
        other.cfg.stack = 128;
        break;
      case exec::Setting::policy:
        other.cfg.policy = exec::Policy::Random;
        break;
      case exec::Setting::seed:
        other.cfg.seed = 99;
        break;
      case exec::Setting::max_steps:
        other.cfg.max_steps = 1000;
        break;
      case exec::Setting::livelock_check:
        other.cfg.livelock_check = false;
        break;
    }
    expect_rejected(im.bytes, &other, 48 + 8 * i,
                    "another configuration: " + std::string(exec::kSettings[i].name));
  }
}

// preempt.image.header, preempt.image.check: the image holds the SIMD width in effect: simd 0 (a
// launch's "equals wave") is no image's, with or without a launch (found by fuzz_image: read alone
// it was taken as the width, then the launch its own header describes rejected it).
TEST(PreemptReject, ASimdOfZero) {
  const Image im = image_of(kDivergent, {}, 5);
  std::vector<uint8_t> b = im.bytes;
  put64(b, 48 + 8, 0);
  expect_rejected(b, nullptr, 48 + 8, "simd: 0 is out of range");
  expect_rejected(b, &im.expect, 48 + 8, "another configuration: simd is 0");
}

TEST(PreemptReject, SlotFields) {
  const Image im = image_of(kDivergent, {}, in_the_if());
  const auto* e = &im.expect;
  const ImageLayout& L = im.content.layout;
  ASSERT_NE(im.content.slots[0].exec, 0u);
  ASSERT_EQ(im.content.slots[0].mask_stack.size(), 1u);
  auto reject = [&](uint64_t off, uint32_t v, uint64_t want, const std::string& substr) {
    std::vector<uint8_t> b = im.bytes;
    put32(b, off, v);
    expect_rejected(b, e, want, substr);
  };
  reject(field_at(im, 0, CtxField::Status), 5, field_at(im, 0, CtxField::Status), "status");
  reject(field_at(im, 0, CtxField::Mode), 2, field_at(im, 0, CtxField::Mode), "mode.mode");
  reject(field_at(im, 0, CtxField::Exec) + 1, 1, field_at(im, 0, CtxField::Exec), "exec");
  reject(field_at(im, 0, CtxField::Live), 0, field_at(im, 0, CtxField::Live),
         "exec has a lane that is not live");
  reject(field_at(im, 0, CtxField::Preds) + 8 * 3, 0x100, field_at(im, 0, CtxField::Preds) + 24,
         "preds p3");
  reject(field_at(im, 0, CtxField::Mstack), 5, field_at(im, 0, CtxField::Mstack), "depth");
  reject(field_at(im, 0, CtxField::Mstack) + 4 + 16, 2, field_at(im, 0, CtxField::Mstack) + 20,
         "mstack[0].kind");
  reject(field_at(im, 0, CtxField::Mstack) + 4 + 20, 1, field_at(im, 0, CtxField::Mstack) + 24,
         "mstack[0].pad");
  // An unused stack entry (above the depth).
  reject(field_at(im, 0, CtxField::Mstack) + 4 + 24 + 8, 1, field_at(im, 0, CtxField::Mstack) + 36,
         "mstack[1].unused");
  reject(field_at(im, 0, CtxField::Pcstack) + 4, 7, field_at(im, 0, CtxField::Pcstack) + 4,
         "pcstack[0].unused");
  reject(field_at(im, 0, CtxField::Sp), 65, field_at(im, 0, CtxField::Sp), "sp");
  reject(field_at(im, 0, CtxField::Handler), 2, field_at(im, 0, CtxField::Handler), "in_handler");
  reject(field_at(im, 0, CtxField::Handler) + 4, 1, field_at(im, 0, CtxField::Handler) + 4,
         "user_mode");
  reject(field_at(im, 0, CtxField::Owed), 2, field_at(im, 0, CtxField::Owed), "owed");
  // A reserved byte.
  ASSERT_LT(L.slot_raw, L.slot_bytes);
  {
    std::vector<uint8_t> b = im.bytes;
    const uint64_t last = L.slot_offset(1) - 1;
    b[last] = 1;
    expect_rejected(b, e, last, "reserved");
  }
}

// A part at or past wave / simd (a sub-vector configuration: 2 parts).
TEST(PreemptReject, PartPastTheParts) {
  const Image im = image_of(kTrap, trap_host(), 2);
  std::vector<uint8_t> b = im.bytes;
  ASSERT_EQ(im.content.slots[0].mode, exec::WaveMode::SubVector);
  const uint64_t part = field_at(im, 0, CtxField::Mode) + 4;
  put32(b, part, 2);
  expect_rejected(b, &im.expect, part, "mode.part");
}

TEST(PreemptReject, FixedSectionFields) {
  const Image im = image_of(kBarrier, {}, 20);
  const auto* e = &im.expect;
  const ImageLayout& L = im.content.layout;
  auto reject = [&](uint64_t off, uint32_t v, const std::string& substr) {
    std::vector<uint8_t> b = im.bytes;
    put32(b, off, v);
    expect_rejected(b, e, off, substr);
  };
  reject(L.barrier_offset() + 4, 3, "barrier count");        // G = 3
  reject(L.sched_offset(), 12, "round-robin cursor");        // 12 warps
  reject(L.sched_offset() + 24, 2, "host script position");  // one action
  reject(L.sched_offset() + 28, 0, "vector table");
  reject(L.sched_offset() + 16, 4, "global ESR core set");
  reject(L.cores_offset() + 12, 2, "TBA installed");
}

TEST(PreemptReject, APendingCauseWordWhoseCodeIsNotAnInterrupt) {
  // Interrupts at step 3 (codes 3 and 4): at step 4 the first is being handled,
  // the second pending.
  const Image im = image_of(kTrap, trap_host(), 4);
  ASSERT_EQ(im.content.fixed.cores[0].pending.size(), 1u);
  std::vector<uint8_t> b = im.bytes;
  const uint64_t off = im.content.layout.pending_offset();
  EXPECT_EQ(get32(b, off) & 0xff, 12u);
  b[off] = 11;
  expect_rejected(b, &im.expect, off, "not interrupt (12)");
}

// Every prefix is truncated at its length: never accepted, never a crash.
TEST(PreemptReject, EveryPrefixIsTruncated) {
  for (const Image& im : {image_of(kDivergent, {}, in_the_if()), image_of(kTrap, trap_host(), 4)}) {
    const std::span<const uint8_t> all(im.bytes);
    for (size_t n = 0; n < im.bytes.size(); ++n)
      for (const exec::ImageExpect* e :
           {&im.expect, static_cast<const exec::ImageExpect*>(nullptr)}) {
        auto r = exec::read_image(all.first(n), e);
        ASSERT_TRUE(std::holds_alternative<ImageError>(r)) << n;
        const ImageError& err = std::get<ImageError>(r);
        ASSERT_EQ(err.offset, n) << err.message;
        ASSERT_NE(err.message.find("truncated"), std::string::npos) << err.message;
      }
  }
}

// ---- image show and image diff (preempt.tool.image) -------------------------------

TEST(PreemptShow, NamesEveryContextField) {
  const Image im = image_of(kDivergent, {}, in_the_if());
  const std::string text = exec::show_image(im.content);
  for (CtxField f : isa::kCtxFields)
    EXPECT_NE(text.find("  " + std::string(isa::ctx_field_name(f))), std::string::npos)
        << isa::ctx_field_name(f) << " in:\n"
        << text.substr(0, 2000);
  EXPECT_NE(text.find("warp 5 (slot"), std::string::npos);
  EXPECT_NE(text.find("fixed function:"), std::string::npos);
}

TEST(PreemptDiff, NamesTheFirstDifferingField) {
  const Image im = image_of(kDivergent, {}, in_the_if());
  ASSERT_FALSE(exec::diff_images(im.content, im.content).has_value());
  ASSERT_EQ(im.content.layout.warps[0], 0u);
  const auto& w = im.content.slots[0];
  ASSERT_EQ(w.live, 0xffu);
  ASSERT_EQ(w.exec, 0x55u);
  ASSERT_EQ(w.pc_stack.size(), 0u);
  const uint64_t lane3 = 4 * 3;  // v0 lane 3
  const std::tuple<CtxField, uint64_t, uint8_t, std::string> cases[] = {
      {CtxField::Vregs, lane3, 1, "vregs v0 lane 3"},
      {CtxField::Sregs, 4, 1, "sregs s1"},
      {CtxField::Preds, 0, 0x01, "preds p0"},
      {CtxField::Pc, 0, 1, "pc"},
      {CtxField::Exec, 0, 0x04, "exec"},
      {CtxField::Live, 0, 0x7f, "live"},
      {CtxField::Status, 0, 3, "status"},
      {CtxField::Sp, 0, 4, "sp"},
      {CtxField::Mode, 0, 1, "mode.mode"},
      {CtxField::Mstack, 4 + 16, 1, "mstack[0].kind"},
      {CtxField::Pcstack, 0, 1, "pcstack.depth"},
      {CtxField::Handler, 0, 1, "handler.in_handler"},
      {CtxField::Owed, 0, 1, "owed"},
  };
  for (const auto& [f, at, byte, name] : cases) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> b = im.bytes;
    const uint64_t off = field_at(im, 0, f) + at;
    b[off] = b[off] == byte ? byte + 1 : byte;
    auto r = exec::read_image(b);
    ASSERT_TRUE(std::holds_alternative<ImageContent>(r)) << std::get<ImageError>(r).text();
    const auto d = exec::diff_images(im.content, std::get<ImageContent>(r));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->rfind("warp 0 " + name + ": ", 0), 0u) << *d;
  }
  // A fixed-section field and an SLM byte.
  {
    std::vector<uint8_t> b = im.bytes;
    b[im.content.layout.fixed_offset] ^= 1;
    const auto d = exec::diff_images(im.content, std::get<ImageContent>(exec::read_image(b)));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->rfind("steps: ", 0), 0u) << *d;
  }
  {
    std::vector<uint8_t> b = im.bytes;
    b[im.content.layout.slm_offset + 5] ^= 1;
    const auto d = exec::diff_images(im.content, std::get<ImageContent>(exec::read_image(b)));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->rfind("slm core 0 byte 5: ", 0), 0u) << *d;
  }
}

// ---- validation (preempt.valid.entries, preempt.valid.mode) -----------------------

TEST(PreemptValid, MessagesAreExact) {
  const std::pair<std::string, const char*> cases[] = {
      {lines({".sys_save S", "    exit", "S:  sysret"}),
       "test:1:1: invalid program: a system routine needs both entries: .sys_save and "
       ".sys_restore (.sys_restore is missing) (preempt.valid.entries)"},
      {lines({".sys_save S", ".sys_restore R", "    exit", "S:  sysret", "R:"}),
       "test:2:1: invalid program: system routine entry 'R' is the end of the program: the "
       "system routine would run past the last instruction (preempt.valid.entries)"},
      {lines({".sys_save S", ".sys_restore S", "    exit", "S:  add s0, s0, 1", "    sysret"}),
       "test:4:5: invalid program: add in system code: the system routine runs only ctx.save.*, "
       "ctx.load.*, sysret and nop (preempt.valid.mode)"},
      {lines({".sys_save S", ".sys_restore S", "    ctx.save.pc", "    exit", "S:  sysret"}),
       "test:3:5: invalid program: ctx.save.pc outside system code (preempt.valid.mode)"},
      {lines(
           {".handler H", ".sys_save S", ".sys_restore S", "    exit", "H:  sysret", "S:  sysret"}),
       "test:5:5: invalid program: sysret outside system code (preempt.valid.mode)"},
      {lines({".sys_save S", ".sys_restore S", "S:  nop", "    exit"}),
       "test:3:5: invalid program: this instruction is both system code and user code "
       "(preempt.valid.mode)"},
      {lines({".sys_save S", ".sys_restore S", "    exit", "S:  jmp T", "T:  sysret"}),
       "test:4:5: invalid program: jmp in system code: the system routine runs only ctx.save.*, "
       "ctx.load.*, sysret and nop (preempt.valid.mode)"},
  };
  for (const auto& [src, expected] : cases) {
    SCOPED_TRACE(src);
    auto r = test::load(src);
    ASSERT_FALSE(r.loaded.has_value());
    EXPECT_NE(r.diags.format("test").find(expected), std::string::npos) << r.diags.format("test");
  }
  // The standard routine itself is valid.
  EXPECT_TRUE(test::load(with_routine("    exit\n")).loaded.has_value());
}

// ---- simtspec run and simtspec image (preempt.tool.run, preempt.tool.image) -------

const std::string kBinary = SIMT_BINARY_DIR "/simtspec";

class PreemptCli : public test::TempDirSuite<PreemptCli> {
 public:
  static constexpr const char* kDirPrefix = "simtspec-preempt-cli-";

 protected:
  static test::CommandResult simtspec(const std::string& args) {
    return test::run_command(kBinary, args, dir());
  }
  static std::string path(const std::string& name) {
    return test::shell_quote((dir() / name).string());
  }
  static std::string status_line(const std::string& out) {
    const size_t a = out.find("status:");
    return a == std::string::npos ? "" : out.substr(a, out.find('\n', a) - a);
  }
};

TEST_F(PreemptCli, RunPreemptImageAndRestore) {
  test::write_all(dir() / "p.simt", kBarrier);
  const auto plain = simtspec("run " + path("p.simt"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  const auto saved = simtspec("run " + path("p.simt") + " --preempt-at 9 --image " + path("a.img"));
  ASSERT_EQ(saved.code, 0) << saved.err;
  EXPECT_NE(saved.out.find("preemptions: 1"), std::string::npos) << saved.out;
  EXPECT_EQ(status_line(saved.out), status_line(plain.out));
  ASSERT_TRUE(fs::exists(dir() / "a.img"));
  // The image's host script position is past the --preempt-at action: restored
  // with the same script (preempt.flow.c), the launch ends as it would have.
  const auto restored =
      simtspec("run " + path("p.simt") + " --preempt-at 9 --restore " + path("a.img"));
  ASSERT_EQ(restored.code, 0) << restored.err;
  EXPECT_EQ(restored.out.find("preemptions:"), std::string::npos) << restored.out;  // passed
  EXPECT_FALSE(status_line(plain.out).empty()) << plain.out;
  EXPECT_EQ(status_line(restored.out), status_line(plain.out));
  auto without = [](std::string out) {
    const size_t a = out.find("preemptions: ");
    if (a != std::string::npos) out.erase(a, out.find('\n', a) + 1 - a);
    return out.substr(out.find("status:"));
  };
  EXPECT_EQ(without(restored.out), without(plain.out));
  // Without the action the script is shorter than the image's position.
  const auto other_script = simtspec("run " + path("p.simt") + " --restore " + path("a.img"));
  EXPECT_EQ(other_script.code, 2);
  EXPECT_NE(other_script.err.find(": host script position 1 is past the script's end"),
            std::string::npos)
      << other_script.err;

  const auto show = simtspec("image show " + path("a.img"));
  EXPECT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("  steps = 9"), std::string::npos) << show.out;

  ASSERT_EQ(simtspec("run " + path("p.simt") + " --preempt-at 10 --image " + path("b.img")).code,
            0);
  const auto same = simtspec("image diff " + path("a.img") + " " + path("a.img"));
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("equal"), std::string::npos);
  const auto differ = simtspec("image diff " + path("a.img") + " " + path("b.img"));
  EXPECT_EQ(differ.code, 1) << differ.err;
  EXPECT_EQ(differ.out.rfind("first difference: warp ", 0), 0u) << differ.out;

  // A bad image: FILE:OFFSET: message, exit 2 (run --restore, image show, image diff).
  std::string bytes = test::read_all(dir() / "a.img");
  test::write_all(dir() / "bad.img", bytes.substr(0, 100));
  const std::string bad = (dir() / "bad.img").string();
  const auto r = simtspec("run " + path("p.simt") + " --preempt-at 9 --restore " + path("bad.img"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind(bad + ":100: truncated", 0), 0u) << r.err;
  const auto s = simtspec("image show " + path("bad.img"));
  EXPECT_EQ(s.code, 2);
  EXPECT_EQ(s.err.rfind(bad + ":100: truncated", 0), 0u) << s.err;
  const auto d = simtspec("image diff " + path("a.img") + " " + path("bad.img"));
  EXPECT_EQ(d.code, 2);
  EXPECT_EQ(d.err.rfind(bad + ":100: truncated", 0), 0u) << d.err;
  // Another configuration: the image against a launch with another wave.
  const auto w =
      simtspec("run " + path("p.simt") + " --preempt-at 9 --wave 16 --restore " + path("a.img"));
  EXPECT_EQ(w.code, 2);
  EXPECT_EQ(w.err.rfind((dir() / "a.img").string() + ":48: another configuration: wave", 0), 0u)
      << w.err;
}

TEST_F(PreemptCli, UsageErrors) {
  test::write_all(dir() / "q.simt", kBarrier);
  test::write_all(dir() / "i.simt", intruder(1, 1, 32));
  const std::string p = path("q.simt");
  for (const std::string& args :
       {"run " + p + " --preempt-at 3 --flow C",
        "run " + p + " --preempt-at 3 --flow A --intruder " + path("i.simt"),
        "run " + p + " --image " + path("never.img"), "run " + p + " --preempt-at 3 --core 5"}) {
    SCOPED_TRACE(args);
    const auto r = simtspec(args);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_FALSE(r.err.empty());
  }
  EXPECT_FALSE(fs::exists(dir() / "never.img"));
  // Flow B with an intruder is fine.
  const auto b = simtspec("run " + p + " --preempt-at 3 --flow B --intruder " + path("i.simt"));
  EXPECT_EQ(b.code, 0) << b.err;
}

}  // namespace
}  // namespace simt
