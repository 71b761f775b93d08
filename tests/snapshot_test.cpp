// Snapshots (spec/execution.md, exec.snapshot; spec/state.md): at any step
// boundary the complete state can be copied, compared, hashed and restored into a
// machine built from the same program and configuration, which then continues
// exactly as the original: same steps, same trace, same outcome.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "support.h"

namespace simt {
namespace {

using exec::Machine;
using exec::Snapshot;
using exec::Status;

// One traced step, comparable (exec.trace.format is a function of these fields).
struct Rec {
  uint64_t step;
  uint32_t warp, pc;
  uint64_t exec;
  bool operator==(const Rec&) const = default;
};

struct Named {
  const char* name;
  const char* text;
};

// Programs covering every kind of state: several warps and workgroups with
// barriers and SLM, divergent nested loops, calls from divergent code, a livelock,
// the random policy, and launches that end trapped, in deadlock and at the limit.
const Named kPrograms[] = {
    {"barriers", R"(
.wave 4
.warps 3
.workgroups 2
.slm 48
.buffer out u32[threads] out
    mul s0, %warp, 16
    shl v0, %lane, 2
    add v1, v0, s0
    add v2, %lane, %gwarp
    mov v3, 0
    loop
        cmp.ge p0, v3, v2
        break p0
        add v3, v3, 1
    endloop
    st slm[v1], v3
    bar
    add s1, %warp, 1
    rem.u s1, s1, %nwarps
    mul s1, s1, 16
    add v4, v0, s1
    ld v5, slm[v4]
    bar
    add v5, v5, v3
    st slm[v1], v5
    bar
    mul s2, %gwarp, 16
    add v6, v0, s2
    ld v7, slm[v1]
    st out[v6], v7
    exit
)"},
    {"divergent_loops", R"(
.wave 8
.buffer acc   u32[wave] out
.buffer iters u32[wave] out
    and v2, %lane, 3
    add v2, v2, 1
    rem.u v4, %lane, 7
    mov v1, 0
    mov v5, 0
    mov v7, 0
    loop
        cmp.ge p0, v1, v2
        break p0
        mov v3, 0
        loop
            cmp.ge p1, v3, v4
            break p1
            add v3, v3, 1
            add v7, v7, 1
            and v6, v3, 1
            cmp.eq p2, v6, 0
            continue p2
            add v5, v5, v3
        endloop
        cmp.eq p3, %lane, 6
        if p3
            exit
        endif
        add v1, v1, 1
    endloop
    shl v0, %lane, 2
    st acc[v0], v5
    st iters[v0], v7
    exit
)"},
    {"calls", R"(
.wave 8
.call_depth 4
.buffer out u32[wave] out
    shl v0, %lane, 2
    and v1, %lane, 3
    cmp.eq p0, v1, 0
    cmp.eq p1, v1, 1
    if p0
        call f
    else
        if p1
            call g
        else
            call f
        endif
    endif
    call g
    st out[v0], v2
    exit
f:
    add v2, v2, %lane
    ret
g:
    add v2, v2, 1000
    call f
    ret
)"},
    {"livelock", R"(
.wave 8
.warps 2
.buffer flag u32[1] inout
.buffer data u32[wave] inout
    shl v0, %lane, 2
    cmp.eq p0, %warp, 1
    cbr p0, producer
    mov s3, 0
warmup:
    add s3, s3, 1
    cmp.lt p2, s3, 9
    cbr p2, warmup
spin:
    ld s0, flag[0]
    cmp.ne p1, s0, 1
    cbr p1, spin
    exit
producer:
    shl v2, %lane, 1
    st data[v0], v2
    st flag[0], 2
    exit
)"},
    {"random", R"(
.wave 4
.warps 4
.policy random
.seed 42
.buffer out u32[2] out
    add s0, %gwarp, 2
again:
    st out[0], %gwarp
    ld s1, out[4]
    add s1, s1, 1
    st out[4], s1
    sub s0, s0, 1
    cmp.ne p0, s0, 0
    cbr p0, again
    exit
)"},
    {"trapped", R"(
.wave 8
.buffer out u32[wave] out
    shl v0, %lane, 2
    mov v1, 20
    sub v2, 23, %lane
    mov s0, 0
again:
    div v3, v1, v2
    st out[v0], v3
    sub v2, v2, 1
    add s0, s0, 1
    cmp.lt p0, s0, 30
    cbr p0, again
    exit
)"},
    {"deadlock", R"(
.wave 4
.warps 3
    mov s0, %warp
    cmp.eq p0, s0, 2
    cbr p0, leave
    add s0, s0, 3
again:
    sub s0, s0, 1
    cmp.ne p1, s0, 0
    cbr p1, again
    bar
    exit
leave:
    exit
)"},
    {"step_limit", R"(
.wave 4
.warps 2
.max_steps 150
.buffer out u32[1] out
    mov s0, 0
again:
    add s0, s0, 1
    st out[0], s0
    jmp again
)"},
};

struct Reference {
  std::shared_ptr<const exec::Program> prog;
  exec::Outcome outcome;
  std::vector<Rec> trace;
};

Reference reference_run(const char* text) {
  Reference r;
  r.prog = test::build(text);
  if (!r.prog) return r;
  Machine m(r.prog);
  m.set_trace([&](const exec::TraceRecord& t) {
    r.trace.push_back({t.step, t.warp, t.pc, t.exec});
  });
  r.outcome = m.run();
  return r;
}

const std::vector<Reference>& references() {
  static const std::vector<Reference> refs = [] {
    std::vector<Reference> v;
    for (const auto& p : kPrograms) v.push_back(reference_run(p.text));
    return v;
  }();
  return refs;
}

// The launch statuses the programs end with.
TEST(SnapshotPrograms, EndAsIntended) {
  const Status want[] = {Status::Completed, Status::Completed, Status::Completed,
                         Status::Livelock,  Status::Completed, Status::Trapped,
                         Status::Deadlock,  Status::StepLimit};
  static_assert(std::size(want) == std::size(kPrograms));
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    SCOPED_TRACE(kPrograms[i].name);
    const auto& r = references()[i];
    ASSERT_TRUE(r.prog);
    EXPECT_EQ(r.outcome.status, want[i]);
    EXPECT_GT(r.outcome.steps, 20u);
    // One trace line per committed step, plus the faulting instruction if trapped.
    EXPECT_EQ(r.trace.size(), r.outcome.steps + (want[i] == Status::Trapped ? 1 : 0));
  }
}

// Restores snapshot `s` (taken after `k` steps) into a fresh machine and checks that
// it continues exactly like the reference run.
void expect_continues_identically(const Reference& ref, const Snapshot& s, uint64_t k,
                                  uint64_t hash) {
  Machine b(ref.prog);
  ASSERT_TRUE(b.restore(s)) << "restore rejected a snapshot of the same program";
  EXPECT_TRUE(b.state() == s.state);
  EXPECT_EQ(b.steps(), k);
  EXPECT_EQ(b.hash(), hash);
  std::vector<Rec> trace;
  b.set_trace([&](const exec::TraceRecord& t) { trace.push_back({t.step, t.warp, t.pc, t.exec}); });
  auto o = b.run();
  EXPECT_TRUE(o.same_result(ref.outcome)) << "restored at step " << k;
  EXPECT_EQ(o.status, ref.outcome.status);
  EXPECT_EQ(o.steps, ref.outcome.steps) << "restored at step " << k;
  EXPECT_EQ(o.lane_ops, ref.outcome.lane_ops);
  ASSERT_LE(k, ref.trace.size());
  EXPECT_TRUE(trace == std::vector<Rec>(ref.trace.begin() + static_cast<long>(k), ref.trace.end()))
      << "trace differs after restoring at step " << k;
}

// The steps at which the tests take snapshots: every step for short runs.
std::vector<uint64_t> snapshot_steps(const Reference& r) {
  // After a livelock is detected the launch has ended: the last boundary before it
  // is the last step at which it still runs.
  uint64_t last = r.outcome.status == Status::Livelock ? r.outcome.steps - 1 : r.outcome.steps;
  std::vector<uint64_t> ks;
  uint64_t stride = last > 400 ? last / 200 : 1;
  for (uint64_t k = 0; k <= last; k += stride) ks.push_back(k);
  if (ks.back() != last) ks.push_back(last);
  return ks;
}

// exec.snapshot: a snapshot taken after any step k, restored into a fresh machine,
// gives the same outcome, step count and trace suffix; taking it does not disturb
// the original either.
TEST(Snapshot, RestoreAtEveryStepContinuesIdentically) {
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    SCOPED_TRACE(kPrograms[i].name);
    const auto& ref = references()[i];
    ASSERT_TRUE(ref.prog);
    for (uint64_t k : snapshot_steps(ref)) {
      Machine a(ref.prog);
      std::vector<Rec> trace;
      a.set_trace([&](const exec::TraceRecord& t) {
        trace.push_back({t.step, t.warp, t.pc, t.exec});
      });
      a.advance(k);
      ASSERT_EQ(a.steps(), k);
      const Snapshot s = a.snapshot();
      EXPECT_EQ(s.steps, k);
      expect_continues_identically(ref, s, k, a.hash());
      auto o = a.run();
      EXPECT_TRUE(o.same_result(ref.outcome));
      EXPECT_EQ(o.steps, ref.outcome.steps);
      EXPECT_TRUE(trace == ref.trace) << "the original changed after a snapshot at step " << k;
    }
  }
}

// exec.snapshot: a snapshot taken once the launch has ended, at every final status,
// restores into a machine that has ended too: it commits no further step and
// reports the same outcome, event included.
TEST(Snapshot, RestoreAfterTheEndKeepsTheFinalStatus) {
  std::set<Status> seen;
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    SCOPED_TRACE(kPrograms[i].name);
    const auto& ref = references()[i];
    Machine a(ref.prog);
    a.run();
    const Snapshot s = a.snapshot();
    ASSERT_EQ(s.final, ref.outcome.status);
    Machine b(ref.prog);
    ASSERT_TRUE(b.restore(s));
    uint64_t traced = 0;
    b.set_trace([&](const exec::TraceRecord&) { ++traced; });
    EXPECT_EQ(b.step(), ref.outcome.status);
    auto o = b.run();
    EXPECT_EQ(traced, 0u) << "the restored machine ran on after the launch ended";
    EXPECT_TRUE(o.same_result(ref.outcome));
    EXPECT_EQ(o.steps, ref.outcome.steps);
    seen.insert(o.status);
  }
  // Every final status of this version (paused is reserved for the trap chapter).
  EXPECT_EQ(seen, (std::set<Status>{Status::Completed, Status::Trapped, Status::Deadlock,
                                    Status::Livelock, Status::StepLimit}));
}

// exec.snapshot: restoring into the same machine rewinds it, even after its launch
// ended, and it runs the rest again identically.
TEST(Snapshot, RewindTheSameMachine) {
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    SCOPED_TRACE(kPrograms[i].name);
    const auto& ref = references()[i];
    Machine m(ref.prog);
    const Snapshot start = m.snapshot();
    m.advance(ref.outcome.steps / 2);
    const Snapshot mid = m.snapshot();
    auto first = m.run();
    EXPECT_TRUE(first.same_result(ref.outcome));
    for (const Snapshot* s : {&mid, &start}) {
      ASSERT_TRUE(m.restore(*s));
      std::vector<Rec> trace;
      m.set_trace([&](const exec::TraceRecord& t) {
        trace.push_back({t.step, t.warp, t.pc, t.exec});
      });
      auto again = m.run();
      m.set_trace({});
      EXPECT_TRUE(again.same_result(ref.outcome));
      EXPECT_EQ(again.steps, ref.outcome.steps);
      EXPECT_TRUE(trace == std::vector<Rec>(ref.trace.begin() + static_cast<long>(s->steps),
                                            ref.trace.end()));
    }
  }
}

// exec.snapshot: two machines after the same number of steps have equal states,
// equal snapshots and equal hashes; the detector state is part of the snapshot.
TEST(SnapshotHash, EqualStatesHashEqual) {
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    SCOPED_TRACE(kPrograms[i].name);
    const auto& ref = references()[i];
    Machine a(ref.prog), b(ref.prog);
    uint64_t last = snapshot_steps(ref).back();
    for (uint64_t k = 0; k <= last; ++k) {
      ASSERT_TRUE(a.state() == b.state()) << "step " << k;
      ASSERT_EQ(a.hash(), b.hash()) << "step " << k;
      Snapshot sa = a.snapshot(), sb = b.snapshot();
      EXPECT_TRUE(sa.state == sb.state);
      EXPECT_TRUE(sa.detector == sb.detector);
      a.step();
      b.step();
    }
  }
}

// exec.snapshot, exec.livelock: the hash covers the state, not the step count: the
// repeated states of a livelock are equal and hash equal at different steps.
TEST(SnapshotHash, RepeatedStateHashesEqualAtDifferentSteps) {
  auto loaded = test::load(".wave 4\n    nop\n    nop\ncycle:\n    nop\n    nop\n    jmp cycle\n");
  ASSERT_TRUE(loaded.loaded);
  Machine m(loaded.loaded->program);
  std::vector<uint64_t> hashes;
  std::vector<exec::MachineState> states;
  for (int k = 0; k <= 8; ++k) {
    hashes.push_back(m.hash());
    states.push_back(m.state());
    if (m.step()) break;
  }
  ASSERT_GE(states.size(), 6u);
  // The state after step 2 recurs after step 5 (cycle of 3).
  EXPECT_TRUE(states[2] == states[5]);
  EXPECT_EQ(hashes[2], hashes[5]);
  EXPECT_FALSE(states[2] == states[3]);
  EXPECT_NE(hashes[2], hashes[3]);
}

// state.*, exec.snapshot: changing any single part of the state makes the states
// unequal and (for these cases) the hashes different.
TEST(SnapshotHash, AnySingleChangeIsSeen) {
  const auto& ref = references()[0];  // barriers: several warps, slm, masks
  Machine a(ref.prog);
  a.advance(45);
  const Snapshot base = a.snapshot();
  ASSERT_FALSE(base.state.warps[0].mask_stack.empty() && base.state.warps[1].mask_stack.empty());
  using Change = std::function<void(exec::MachineState&)>;
  const std::vector<std::pair<const char*, Change>> changes = {
      {"pc", [](auto& s) { s.warps[1].pc ^= 1; }},
      {"exec", [](auto& s) { s.warps[1].exec ^= 1; }},
      {"live", [](auto& s) { s.warps[1].live ^= 2; }},
      {"status", [](auto& s) { s.warps[1].status = exec::WarpStatus::Barrier; }},
      {"mode", [](auto& s) { s.warps[1].mode = exec::WaveMode::SubVector; }},
      {"region start", [](auto& s) { s.warps[1].region_pc = 5; }},  // wave.state
      {"region lanes", [](auto& s) { s.warps[1].region_other ^= 2; }},
      {"mode set aside", [](auto& s) { s.warps[1].user_mode = exec::WaveMode::SubVector; }},
      {"in_handler", [](auto& s) { s.warps[1].in_handler = true; }},
      {"sp", [](auto& s) { s.warps[1].sp -= 16; }},
      {"mask stack push", [](auto& s) { s.warps[1].mask_stack.push_back({}); }},
      {"pc stack push", [](auto& s) { s.warps[1].pc_stack.push_back(3); }},
      {"sreg", [](auto& s) { s.warps[4].sregs[7] ^= 1; }},
      {"vreg", [](auto& s) { s.warps[5].vregs[9] ^= 0x80000000; }},
      {"predicate", [](auto& s) { s.warps[2].preds[5] ^= 4; }},
      {"buffer byte", [](auto& s) { s.mem.buffers[0][3] ^= 1; }},
      {"slm byte", [](auto& s) { s.mem.slm[1][47] ^= 1; }},
      {"stack byte", [](auto& s) { s.mem.stack[5] ^= 1; }},
      {"core esr", [](auto& s) { s.trap.cores[0].esr = 1; }},
      {"core tba", [](auto& s) { s.trap.cores[0].tba_valid = true; }},
      {"barrier count", [](auto& s) { s.barriers[1].arrived += 1; }},
      {"global esr", [](auto& s) { s.trap.global_esr = 2; }},
      {"round-robin cursor", [](auto& s) { s.sched.cursor = (s.sched.cursor + 1) % 6; }},
      {"random state", [](auto& s) { s.sched.rng += 1; }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    Snapshot s = base;
    change(s.state);
    EXPECT_FALSE(s.state == base.state);
    Machine b(ref.prog);
    ASSERT_TRUE(b.restore(s));
    EXPECT_FALSE(b.state() == a.state());
    EXPECT_NE(b.hash(), a.hash());
  }
  // A mask-stack entry that differs only in its kind, saved or other mask.
  for (int field = 0; field < 3; ++field) {
    Snapshot s = base;
    size_t w = s.state.warps[0].mask_stack.empty() ? 1 : 0;
    auto& e = s.state.warps[w].mask_stack.back();
    if (field == 0)
      e.kind = e.kind == exec::MaskKind::If ? exec::MaskKind::Loop : exec::MaskKind::If;
    if (field == 1) e.saved ^= 1;
    if (field == 2) e.other ^= 1;
    Machine b(ref.prog);
    ASSERT_TRUE(b.restore(s));
    EXPECT_FALSE(b.state() == a.state()) << "field " << field;
    EXPECT_NE(b.hash(), a.hash()) << "field " << field;
  }
}

// ---- every field of every unit's state (exec.snapshot, exec.livelock) -------------
//
// The state is one value, MachineState, made of the warps, memory, barriers and
// the units' parts (TrapState, SchedState). Each struct is taken apart below with
// a structured binding, which stops compiling when the struct gains a field: the
// new field must be named here, and the test then checks that changing it alone
// makes the state unequal (what the livelock detector and a restored snapshot
// compare) and changes Machine::hash (which binds every field the same way).
namespace fields {

// Changes a value, whatever its type, to a different value of the same size
// (restore and the step loop rely on sizes, the test does not restore).
template <class T>
void perturb(T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    v = !v;
  } else if constexpr (std::is_enum_v<T>) {
    v = static_cast<T>(static_cast<std::underlying_type_t<T>>(v) ^ 1);
  } else if constexpr (std::is_integral_v<T>) {
    v ^= 1;
  } else if constexpr (requires { v.push_back(v.back()); }) {
    if (v.empty())
      v.emplace_back();
    else
      perturb(v.back());
  } else if constexpr (requires { v.front(); }) {  // std::array
    perturb(v.front());
  } else {
    static_assert(std::is_same_v<T, exec::MaskEntry>, "a struct the test does not know");
    v.saved ^= 1;
  }
}

template <class V>
void visit(exec::MaskEntry& e, V&& v) {
  auto& [saved, other, kind] = e;
  v("mask entry saved", saved), v("mask entry other", other), v("mask entry kind", kind);
}
template <class V>
void visit(exec::CoreState& c, V&& v) {
  auto& [esr, tgid, tba, tba_valid, pending, single_step, round_open, resume] = c;
  v("core esr", esr), v("core tgid", tgid), v("core tba", tba), v("core tba_valid", tba_valid);
  v("core pending", pending), v("core single_step", single_step);
  v("core round_open", round_open), v("core resume", resume);
}
template <class V>
void visit(exec::WarpState& w, V&& v) {
  auto& [pc, exec, live, status, mode, part, region_pc, region_other, user_mode, user_part,
         in_handler, ss_owed, sp, mask_stack, pc_stack, user_mask_stack, user_pc_stack, sregs,
         vregs, preds] = w;
  v("pc", pc), v("exec", exec), v("live", live), v("status", status), v("mode", mode);
  v("part", part), v("region_pc", region_pc), v("region_other", region_other);
  v("user_mode", user_mode), v("user_part", user_part), v("in_handler", in_handler);
  v("ss_owed", ss_owed), v("sp", sp), v("mask_stack", mask_stack), v("pc_stack", pc_stack);
  v("user_mask_stack", user_mask_stack), v("user_pc_stack", user_pc_stack);
  v("sregs", sregs), v("vregs", vregs), v("preds", preds);
}
// The whole state, through its parts; memory's hash is a cache of its bytes, not
// a field of its own (it changes with them).
template <class V>
void visit(exec::MachineState& s, V&& v) {
  auto& [warps, mem, barriers, trap, sched] = s;
  for (auto& w : warps) visit(w, v);
  auto& [buffers, slm, stack, mem_hash] = mem;
  (void)mem_hash;
  v("buffers", buffers), v("slm", slm), v("stack", stack);
  for (auto& b : barriers) {
    auto& [arrived] = b;
    v("barrier arrived", arrived);
  }
  auto& [cores, global_esr, gesr_cores, host_next, vtable] = trap;
  for (auto& c : cores) visit(c, v);
  v("global_esr", global_esr), v("gesr_cores", gesr_cores), v("host_next", host_next);
  v("vtable", vtable);
  auto& [cursor, rng] = sched;
  v("sched cursor", cursor), v("sched rng", rng);
  // The mask-stack entries' own fields, in the first warp that has one.
  for (auto& w : warps)
    if (!w.mask_stack.empty()) {
      visit(w.mask_stack.back(), v);
      break;
    }
}

}  // namespace fields

TEST(SnapshotHash, EveryFieldOfEveryUnitIsSeen) {
  const auto& ref = references()[0];
  Machine a(ref.prog);
  a.advance(45);
  const Snapshot base = a.snapshot();
  // How many leaves the state has, then each one changed alone.
  size_t leaves = 0;
  {
    exec::MachineState copy = base.state;
    fields::visit(copy, [&](const char*, auto&) { ++leaves; });
  }
  ASSERT_GT(leaves, 100u);
  std::set<std::string> names;
  for (size_t i = 0; i < leaves; ++i) {
    Machine b(ref.prog);
    ASSERT_TRUE(b.restore(base));
    size_t k = 0;
    std::string name;
    fields::visit(b.mutable_state(), [&](const char* what, auto& field) {
      if (k++ == i) fields::perturb(field), name = what;
    });
    SCOPED_TRACE(name + " (leaf " + std::to_string(i) + ")");
    names.insert(name);
    EXPECT_FALSE(b.state() == a.state());
    EXPECT_NE(b.hash(), a.hash());
  }
  EXPECT_EQ(names.size(), 20u + 8u + 3u + 3u + 1u + 4u + 2u);  // every field was changed
}

// exec.snapshot: a snapshot restores only into a machine of the same program and
// configuration; otherwise restore returns false and leaves the machine unchanged.
TEST(SnapshotRestore, RejectsOtherConfigurations) {
  const char* text = ".wave 8\n.warps 2\n.buffer out u32[4] out\n    nop\n    exit\n";
  auto source = test::load(text);
  ASSERT_TRUE(source.loaded);
  Machine a(source.loaded->program);
  a.advance(1);
  const Snapshot s = a.snapshot();
  struct Other {
    const char* what;
    host::Overrides cli;
  };
  std::vector<Other> others(6);
  others[0] = {"warps", {}};
  others[0].cli.warps = 3;
  others[1] = {"workgroups", {}};
  others[1].cli.workgroups = 2;
  others[2] = {"wave", {}};
  others[2].cli.wave = 16;
  others[3] = {"vregs", {}};
  others[3].cli.vregs = 16;
  others[4] = {"sregs", {}};
  others[4].cli.sregs = 64;
  others[5] = {"cores", {}};
  others[5].cli.cores = 2;
  for (const auto& o : others) {
    SCOPED_TRACE(o.what);
    host::LoadOptions opt;
    opt.cli = o.cli;
    auto loaded = test::load(text, opt);
    ASSERT_TRUE(loaded.loaded);
    Machine b(loaded.loaded->program);
    const exec::MachineState before = b.state();
    EXPECT_FALSE(b.restore(s));
    EXPECT_TRUE(b.state() == before);
    EXPECT_EQ(b.steps(), 0u);
  }
  // A program with another number of buffers.
  auto two = test::load(
      ".wave 8\n.warps 2\n.buffer out u32[4] out\n.buffer x u32[1] out\n"
      "    nop\n    exit\n");
  ASSERT_TRUE(two.loaded);
  Machine c(two.loaded->program);
  EXPECT_FALSE(c.restore(s));
  // A mask stack deeper than the machine's mask_depth.
  auto deep = test::load(
      ".mask_depth 4\n    if pt\n    if pt\n    if pt\n    nop\n    endif\n"
      "    endif\n    endif\n    exit\n");
  auto shallow = test::load(
      ".mask_depth 2\n    if pt\n    if pt\n    if pt\n    nop\n    endif\n"
      "    endif\n    endif\n    exit\n");
  ASSERT_TRUE(deep.loaded && shallow.loaded);
  Machine d(deep.loaded->program);
  d.advance(3);
  Machine e(shallow.loaded->program);
  EXPECT_FALSE(e.restore(d.snapshot()));
}

// exec.snapshot: configurations whose state has the same shape (same vector sizes)
// but which differ in wave, slm, buffer size or stack size. The spec allows
// restoring only into the same configuration; a restore that accepts these is
// reported (skip) as an interpreter gap.
TEST(SnapshotRestore, RejectsOtherConfigurationsOfTheSameShape) {
  struct Pair {
    const char* what;
    const char* from;
    const char* into;
  };
  const Pair pairs[] = {
      {"wave 8 x 32 vregs vs wave 16 x 16 vregs", ".wave 8\n.vregs 32\n    nop\n    exit\n",
       ".wave 16\n.vregs 16\n    nop\n    exit\n"},
      {"slm size", ".slm 16\n    nop\n    exit\n", ".slm 32\n    nop\n    exit\n"},
      {"buffer size", ".buffer b u32[4] out\n    nop\n    exit\n",
       ".buffer b u32[8] out\n    nop\n    exit\n"},
      {"stack size", ".stack 256\n    nop\n    exit\n", ".stack 512\n    nop\n    exit\n"},
      {"program text", "    nop\n    exit\n", "    exit\n    exit\n"},
      {"policy", ".policy round_robin\n    nop\n    exit\n", ".policy random\n    nop\n    exit\n"},
  };
  std::string accepted;
  for (const auto& p : pairs) {
    SCOPED_TRACE(p.what);
    auto from = test::load(p.from);
    auto into = test::load(p.into);
    ASSERT_TRUE(from.loaded && into.loaded);
    Machine a(from.loaded->program);
    Machine b(into.loaded->program);
    if (b.restore(a.snapshot())) accepted += std::string(" [") + p.what + "]";
  }
  EXPECT_TRUE(accepted.empty()) << "Machine::restore accepts snapshots from another program or "
                                   "configuration of the same shape:"
                                << accepted;
}

// exec.snapshot (property): the snapshot step is chosen at random; the restored
// machine continues exactly like the reference, and so does a machine rewound to it
// after running further.
RC_GTEST_PROP(SnapshotProperty, RestoreAtRandomStepContinuesIdentically, ()) {
  const size_t i = *rc::gen::inRange<size_t>(0, std::size(kPrograms));
  const auto& ref = references()[i];
  RC_ASSERT(ref.prog != nullptr);
  const uint64_t last = snapshot_steps(ref).back();
  const uint64_t k = *rc::gen::inRange<uint64_t>(0, last + 1);
  const uint64_t further = *rc::gen::inRange<uint64_t>(0, 50);
  RC_TAG(kPrograms[i].name);

  Machine a(ref.prog);
  a.advance(k);
  const Snapshot s = a.snapshot();
  const uint64_t h = a.hash();
  a.advance(further);

  for (Machine* m : std::initializer_list<Machine*>{&a, nullptr}) {
    Machine fresh(ref.prog);
    Machine& b = m ? *m : fresh;
    RC_ASSERT(b.restore(s));
    RC_ASSERT(b.hash() == h);
    RC_ASSERT(b.steps() == k);
    std::vector<Rec> trace;
    b.set_trace([&](const exec::TraceRecord& t) {
      trace.push_back({t.step, t.warp, t.pc, t.exec});
    });
    auto o = b.run();
    RC_ASSERT(o.same_result(ref.outcome));
    RC_ASSERT(o.steps == ref.outcome.steps);
    RC_ASSERT(trace == std::vector<Rec>(ref.trace.begin() + static_cast<long>(k), ref.trace.end()));
  }
}

}  // namespace
}  // namespace simt
