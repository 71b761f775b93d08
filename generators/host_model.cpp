// The host model (host_model.h). One Model holds the machine the trap chapter
// describes, in its own terms: warps with their run status and mode, cores with
// their trap registers, pending interrupts and single-step rounds, memory, the
// host script's position; run() takes steps as exec.step.order and
// trap.boundary order them. Every rule cites its clause.
#include "host_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <optional>

#include "exec/outcome.h"
#include "isa/isa.h"
#include "reference.h"
#include "spec_alu.h"

namespace simt::gen {

namespace {

using exec::DstKind;
using exec::Insn;
using exec::Src;
using exec::SrcKind;
using isa::Event;

// state.warp: the run status of a warp (trap.pause and trap.return add the last two).
enum class Run : uint8_t { Ready, Barrier, Done, Paused, Returned };

struct Warp {
  uint32_t pc = 0;
  uint64_t exec = 0, live = 0;
  Run status = Run::Ready;
  bool handler = false;  // handler mode (trap.terms)
  bool owed = false;     // owed a step in its core's single-step round (trap.single_step)
  uint32_t sp = 0;       // program-stack pointer (state.memory.stack)
  // The PC stack, and the user's while in handler mode (trap.context). No
  // modelled instruction pushes the mask stack: it stays empty.
  std::vector<uint32_t> calls, user_calls;
  std::vector<uint32_t> v;                   // v[r * wave + lane]
  std::vector<uint32_t> s;                   // scalar registers
  std::array<uint64_t, isa::kNumPreds> p{};  // bit l: lane l
};

// state.core and trap.state: a core's trap registers and the host's requests.
struct Core {
  uint32_t esr = 0, tgid = 0, tba = 0;
  bool installed = false;
  std::deque<uint32_t> pending;  // trap.interrupt: cause words, oldest first
  bool single_step = false, round = false, resume = false;
};

// An event raised by the instruction being executed (exec.commit: it commits nothing).
struct Raised {
  Event code = Event::None;
  int32_t lane = -1;  // event.lane
  uint32_t addr = 0;  // memory events
  uint16_t space = exec::kSpaceNone;
  uint32_t payload = 0;  // syscall: the code
};

struct Outside {
  std::string why;
};

constexpr uint32_t kFrame = 64;  // trap.frame

// exec.sched.random: SplitMix64.
uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// trap.cause
uint32_t cause_word(Event e, uint32_t payload) {
  return static_cast<uint32_t>(e) | (payload & 0xffffffu) << 8;
}

class Model {
 public:
  explicit Model(const exec::Program& p) : p_(p), c_(p.config) {
    W_ = c_.wave;
    full_ = W_ == 64 ? ~0ull : (1ull << W_) - 1;
    n_ = c_.warps * c_.workgroups;
    w_.resize(n_);
    for (auto& w : w_) {
      w.exec = w.live = full_;
      w.sp = c_.stack;  // the stack grows down from its top (trap.frame)
      w.v.assign(size_t{p.vregs_alloc} * W_, 0);
      w.s.assign(p.sregs_alloc, 0);
    }
    cores_.resize(c_.cores);
    if (p.handler)  // trap.install: `.handler` on every core at launch
      for (auto& k : cores_) k.tba = *p.handler, k.installed = true;
    for (const auto& b : p.buffers) mem_.push_back(b.init);
    slm_.assign(c_.workgroups, std::vector<uint8_t>(c_.slm, 0));
    stack_.assign(n_, std::vector<uint8_t>(c_.stack, 0));
    arrived_.assign(c_.workgroups, 0);
    rng_ = c_.seed;
  }

  HostModelResult run() {
    HostModelResult r;
    try {
      r.outcome = runners::to_model(outcome(loop()));
    } catch (const Outside& o) {
      r.error = o.why + " (at step " + std::to_string(steps_) + ")";
    }
    return r;
  }

 private:
  // ---- the launch ------------------------------------------------------------------
  uint32_t core_of(uint32_t g) const {  // state.launch.placement
    return g / c_.warps % c_.cores;
  }
  uint32_t wg_of(uint32_t g) const { return g / c_.warps; }

  // exec.step.order, trap.host, trap.boundary, trap.paused.
  exec::Status loop() {
    for (;;) {
      bool all_done = true;
      for (const auto& w : w_) all_done = all_done && w.status == Run::Done;
      if (all_done) return exec::Status::Completed;
      if (steps_ >= c_.max_steps) return exec::Status::StepLimit;
      if (!boundary()) return exec::Status::Trapped;
      const int g = pick();
      if (g < 0) {
        // trap.host: with no warp ready the host applies the earliest remaining
        // step's actions at once (not a step); the boundary's work follows.
        if (next_ < p_.host.size()) {
          const uint64_t at = p_.host[next_].step;
          while (next_ < p_.host.size() && p_.host[next_].step == at) apply(p_.host[next_++]);
          continue;
        }
        for (const auto& w : w_)
          if (w.status == Run::Paused) return exec::Status::Paused;  // trap.paused
        return exec::Status::Deadlock;                               // exec.status.deadlock
      }
      if (!step(static_cast<uint32_t>(g))) return exec::Status::Trapped;
    }
  }

  // trap.terms: a core is in its handler while one of its warps is in handler
  // mode and not paused (a returned warp waits only while another still runs it).
  bool in_handler(uint32_t core) const {
    for (uint32_t g = 0; g < n_; ++g)
      if (core_of(g) == core && w_[g].handler &&
          (w_[g].status == Run::Ready || w_[g].status == Run::Barrier))
        return true;
    return false;
  }

  // trap.host.*: one action.
  void apply(const exec::HostAction& a) {
    const uint32_t lo = a.core == exec::kAllCores ? 0 : static_cast<uint32_t>(a.core);
    const uint32_t hi = a.core == exec::kAllCores ? c_.cores : lo + 1;
    switch (a.kind) {
      case exec::HostKind::Interrupt: {  // trap.host.interrupt, trap.gesr
        const uint32_t cause = cause_word(Event::Interrupt, a.value);
        if (a.core == exec::kAllCores) {
          gesr_ = cause;
          gesr_cores_ = c_.cores == 64 ? ~0ull : (1ull << c_.cores) - 1;
        }
        for (uint32_t k = lo; k < hi; ++k) cores_[k].pending.push_back(cause);
        break;
      }
      case exec::HostKind::BindTba:  // trap.host.bind_tba, trap.install
        for (uint32_t k = lo; k < hi; ++k) cores_[k].tba = a.value, cores_[k].installed = true;
        break;
      case exec::HostKind::BindVtable:  // trap.host.bind_vtable
        vtable_ = static_cast<int32_t>(a.value);
        break;
      case exec::HostKind::SingleStep:  // trap.host.single_step: the round closes, no trap
        for (uint32_t k = lo; k < hi; ++k) {
          cores_[k].single_step = a.value != 0;
          cores_[k].round = false;
          for (uint32_t g = 0; g < n_; ++g)
            if (core_of(g) == k) w_[g].owed = false;
        }
        break;
      case exec::HostKind::Resume:  // trap.host.resume: a request, carried out below
        for (uint32_t k = lo; k < hi; ++k) cores_[k].resume = true;
        break;
      case exec::HostKind::Preempt:
        // preempt.transparency: a preemption changes nothing this model sees; it
        // is a host action like the others for livelock detection.
        break;
    }
  }

  // trap.boundary: (1) the host actions due, (2) each core not in its handler, in
  // ascending order: its resume request, then, if it has a ready or barrier warp,
  // a pending interrupt, else the close of a finished round, else a new round.
  // False when the launch ends (trapped: no handler, or no room for a frame).
  bool boundary() {
    while (next_ < p_.host.size() && p_.host[next_].step <= steps_) apply(p_.host[next_++]);
    for (uint32_t k = 0; k < c_.cores; ++k) {
      Core& core = cores_[k];
      if (in_handler(k)) continue;
      if (core.resume) {  // trap.host.resume: every paused warp, or none
        core.resume = false;
        for (uint32_t g = 0; g < n_; ++g)
          if (core_of(g) == k && w_[g].status == Run::Paused) resume(g);
      }
      bool all_done = true, owed_ready = false;
      int32_t first = -1;
      for (uint32_t g = 0; g < n_; ++g) {
        if (core_of(g) != k) continue;
        const Warp& w = w_[g];
        all_done = all_done && w.status == Run::Done;
        if (first < 0 && (w.status == Run::Ready || w.status == Run::Barrier))
          first = static_cast<int32_t>(g);
        owed_ready = owed_ready || (w.owed && w.status == Run::Ready);
      }
      if (all_done) core.pending.clear();  // trap.interrupt: dropped
      if (first < 0) continue;             // only paused or done warps: they wait
      const uint32_t g = static_cast<uint32_t>(first);
      if (!core.pending.empty()) {  // trap.interrupt: the oldest, one per entry
        const uint32_t cause = core.pending.front();
        core.pending.pop_front();
        if (!enter(k, g, cause, w_[g].pc, nullptr)) return false;
      } else if (core.round && !owed_ready) {  // trap.single_step: the round is over
        if (!enter(k, g, cause_word(Event::SingleStep, 0), w_[g].pc, nullptr)) return false;
      } else if (!core.round && core.single_step) {  // trap.single_step: a new round
        for (uint32_t h = 0; h < n_; ++h)
          if (core_of(h) == k && w_[h].status == Run::Ready && !w_[h].handler)
            w_[h].owed = core.round = true;
      }
    }
    return true;
  }

  // exec.sched.*: the warp the policy picks among the eligible ones, -1 if none.
  // trap.single_step: while its core's round is open, a user-mode warp is eligible
  // only if it is owed a step.
  int pick() {
    std::vector<uint32_t> ok;
    for (uint32_t g = 0; g < n_; ++g) {
      const Warp& w = w_[g];
      if (w.status != Run::Ready) continue;
      if (cores_[core_of(g)].round && !w.handler && !w.owed) continue;
      ok.push_back(g);
    }
    if (ok.empty()) return -1;
    switch (c_.policy) {
      case exec::Policy::RoundRobin:  // the first at or after the cursor, wrapping
        for (uint32_t i = 0; i < n_; ++i) {
          const uint32_t g = (cursor_ + i) % n_;
          if (std::find(ok.begin(), ok.end(), g) != ok.end()) return static_cast<int>(g);
        }
        return -1;
      case exec::Policy::LowestPcFirst: {  // the smallest pc, ties to the lowest id
        uint32_t best = ok[0];
        for (uint32_t g : ok)
          if (w_[g].pc < w_[best].pc) best = g;
        return static_cast<int>(best);
      }
      case exec::Policy::OldestFirst:  // the lowest id
        return static_cast<int>(ok[0]);
      case exec::Policy::Random:  // the (r mod n)-th of the n
        return static_cast<int>(ok[splitmix(rng_) % ok.size()]);
    }
    return -1;
  }

  // ---- entry, join, resume ---------------------------------------------------------
  // trap.entry, in its order, for core k with TGID `raiser`, the cause word and the
  // raiser's resume PC; `ev` is the raising instruction's event (none for an
  // interrupt or a single-step trap). False when the launch ends: no handler on
  // the core (trap.none, trap.interrupt, trap.single_step) or no room for a frame
  // (trap.frame.room); event_ then says why.
  bool enter(uint32_t k, uint32_t raiser, uint32_t cause, uint32_t resume_pc, const Raised* ev) {
    Core& core = cores_[k];
    if (!core.installed) {  // only for an entry at a boundary: step() sees to the others
      exec::EventInfo e;
      e.code = static_cast<Event>(cause & 0xff);
      e.warp = raiser;
      e.pc = w_[raiser].pc;
      e.payload = cause >> 8;
      event_ = e;
      return false;
    }
    std::vector<uint32_t> entering;  // 2. ready or barrier warps of the core
    for (uint32_t g = 0; g < n_; ++g)
      if (core_of(g) == k && (w_[g].status == Run::Ready || w_[g].status == Run::Barrier))
        entering.push_back(g);
    for (uint32_t g : entering)  // trap.frame.room: before anything changes
      if (w_[g].sp < kFrame) {
        exec::EventInfo e;
        e.code = Event::FrameOverflow;
        e.warp = g;
        e.pc = w_[g].pc;
        event_ = e;
        return false;
      }
    std::vector<uint32_t> unwound;  // 3. barrier unwind
    for (uint32_t g : entering) {
      unwound.push_back(w_[g].status == Run::Barrier ? 1 : 0);
      w_[g].status = Run::Ready;
    }
    for (uint32_t wg = 0; wg < c_.workgroups; ++wg)
      if (wg % c_.cores == k) arrived_[wg] = 0;
    for (size_t i = 0; i < entering.size(); ++i) {  // 4. frames, ascending
      const uint32_t g = entering[i];
      Warp& w = w_[g];
      const bool raised = g == raiser;
      const uint32_t old_sp = w.sp;
      w.sp -= kFrame;
      std::fill_n(stack_[g].begin() + w.sp, kFrame, uint8_t{0});
      auto put = [&](uint32_t off, uint32_t v) { frame_store(g, off, v); };
      put(0, raised ? resume_pc : w.pc);  // trap.resume.pc
      put(4, static_cast<uint32_t>(w.exec));
      put(8, static_cast<uint32_t>(w.exec >> 32));
      put(12, static_cast<uint32_t>(w.live));
      put(16, static_cast<uint32_t>(w.live >> 32));
      put(20, unwound[i]);
      put(24, old_sp);
      put(28, 0);  // mask-stack depth: no modelled instruction pushes
      put(32, static_cast<uint32_t>(w.calls.size()));
      put(36, cause);
      const bool lane = raised && ev && ev->lane >= 0;
      put(40, lane ? static_cast<uint32_t>(ev->lane) : 0xffffffffu);
      const bool memory = raised && ev && ev->space != exec::kSpaceNone;
      put(44, memory ? ev->addr : 0);
      put(48, memory ? (ev->space == exec::kSpaceSlm ? 0xffffu : ev->space) : 0xffffffffu);
      put(52, raised ? 1 : 0);
    }
    core.esr = cause;  // 5. ESR and TGID
    core.tgid = raiser;
    core.round = false;  // trap.single_step: any entry closes the round, debts cleared
    for (uint32_t g = 0; g < n_; ++g)
      if (core_of(g) == k) w_[g].owed = false;
    for (uint32_t g : entering) {  // 6. the handler's context
      Warp& w = w_[g];
      w.handler = true;
      w.pc = core.tba;
      w.exec = w.live;
      w.user_calls = std::move(w.calls);
      w.calls.clear();
    }
    return true;
  }

  // trap.join: once no warp of the core runs its handler (ready or at a barrier in
  // handler mode), the returned warps resume.
  void join(uint32_t k) {
    if (in_handler(k)) return;
    for (uint32_t g = 0; g < n_; ++g)
      if (core_of(g) == k && w_[g].status == Run::Returned) resume(g);
  }

  // trap.resume
  void resume(uint32_t g) {
    Warp& w = w_[g];
    w.pc = frame_load(g, 0);
    const uint64_t exec = uint64_t{frame_load(g, 4)} | uint64_t{frame_load(g, 8)} << 32;
    w.exec = exec & w.live;
    w.sp += kFrame;
    w.calls = std::move(w.user_calls);
    w.user_calls.clear();
    w.handler = false;
    w.status = Run::Ready;
  }

  uint32_t frame_load(uint32_t g, uint32_t off) const {
    uint32_t v = 0;
    for (uint32_t i = 0; i < 4; ++i) v |= uint32_t{stack_[g][w_[g].sp + off + i]} << (8 * i);
    return v;
  }
  void frame_store(uint32_t g, uint32_t off, uint32_t v) {
    for (uint32_t i = 0; i < 4; ++i)
      stack_[g][w_[g].sp + off + i] = static_cast<uint8_t>(v >> (8 * i));
  }

  // ---- a step ----------------------------------------------------------------------
  void fill(exec::EventInfo& e, const Raised& r) const {
    e.lane = r.lane;
    if (r.space != exec::kSpaceNone) {
      e.addr = r.addr;
      e.space = r.space == exec::kSpaceSlm ? "slm" : p_.buffers[r.space].name;
    }
  }

  // exec.step: warp g executes the instruction at its pc. False when the launch
  // ends (an event no handler takes).
  bool step(uint32_t g) {
    Warp& w = w_[g];
    w.owed = false;  // trap.single_step: its step clears its debt
    std::optional<Raised> r;
    if (w.pc >= p_.size()) {
      r = Raised{Event::PcRange};  // event.pc_range
    } else {
      r = execute(g, p_.insns[w.pc]);
    }
    if (r) {
      if (w.handler) {  // trap.double: never handled
        exec::EventInfo e;
        e.code = Event::DoubleFault;
        e.inner = r->code;
        e.warp = g;
        e.pc = w.pc;
        fill(e, *r);
        e.payload = r->payload;
        event_ = e;
        return false;
      }
      const uint32_t k = core_of(g);
      if (!cores_[k].installed) {  // trap.none: as without the chapter
        exec::EventInfo e;
        e.code = r->code;
        e.warp = g;
        e.pc = w.pc;
        fill(e, *r);
        e.payload = r->payload;
        event_ = e;
        return false;
      }
      // trap.entry: the step counts once; a system call resumes after the `sys`.
      const bool sys = r->code == Event::Syscall;
      if (!enter(k, g, cause_word(r->code, r->payload), sys ? w.pc + 1 : w.pc, &*r)) return false;
    }
    ++steps_;
    if (c_.policy == exec::Policy::RoundRobin) cursor_ = (g + 1) % n_;  // exec.sched.round_robin
    return true;
  }

  // ---- operands ----------------------------------------------------------------------
  uint32_t special(const Warp& w, uint32_t g, isa::Special s) const {
    const uint32_t k = core_of(g);
    switch (s) {
      case isa::Special::Esr:  // trap.esr: to TGID only, 0 in user mode
        return w.handler && cores_[k].tgid == g ? cores_[k].esr : 0;
      case isa::Special::Tgid:
        return w.handler ? cores_[k].tgid : 0;
      case isa::Special::Gesr:  // trap.gesr through the core's view
        return w.handler && cores_[k].tgid == g && ((gesr_cores_ >> k) & 1) ? gesr_ : 0;
      default: {
        const spec::Launch l{c_.wave, c_.simd_width(), c_.warps, c_.workgroups, c_.cores};
        if (auto v = spec::special(static_cast<int32_t>(s), l, g, w.exec)) return *v;
        throw Outside{"the special register %" + std::string(isa::special_info(s).name)};
      }
    }
  }
  uint32_t value(const Warp& w, uint32_t g, const Src& s, uint32_t lane) const {
    switch (s.kind) {
      case SrcKind::None:
        return 0;
      case SrcKind::VReg:
        return w.v[size_t{s.index} * W_ + lane];
      case SrcKind::LaneId:
        return lane;
      case SrcKind::Imm:
        return s.imm;
      case SrcKind::SReg:
        return w.s[s.index];
      case SrcKind::Special:
        return special(w, g, static_cast<isa::Special>(s.index));
    }
    return 0;
  }
  bool pred(const Warp& w, uint8_t p, bool negate, uint32_t lane) const {
    const bool b = p == isa::kPredTrue ? true : ((w.p[p] >> lane) & 1);
    return b != negate;
  }

  // mem.address, mem.check: the space's bytes, and the first failing active lane.
  std::vector<uint8_t>& space(uint32_t g, uint16_t sp) {
    if (sp == exec::kSpaceSlm) return slm_[wg_of(g)];
    return mem_[sp];
  }
  std::optional<Raised> check(uint32_t g, const Insn& in, uint64_t lanes, uint32_t n, bool scalar) {
    const Warp& w = w_[g];
    const auto& m = space(g, in.space);
    for (uint32_t l = 0; l < W_; ++l) {
      if (!((lanes >> l) & 1)) continue;
      const uint32_t a = value(w, g, in.a, l) + in.offset;
      Raised r;
      r.lane = scalar ? -1 : static_cast<int32_t>(l);
      r.addr = a;
      r.space = in.space;
      if (a % n) return r.code = Event::MemMisaligned, r;
      if (uint64_t{a} + n > m.size()) return r.code = Event::MemOutOfBounds, r;
      if (scalar) break;
    }
    return std::nullopt;
  }

  // ---- instructions ------------------------------------------------------------------
  std::optional<Raised> execute(uint32_t g, const Insn& in) {
    Warp& w = w_[g];
    const isa::OpInfo& info = isa::info(in.op);
    const uint64_t E = w.exec;  // exec.form: vector-form instructions act on these lanes
    switch (info.family) {
      case isa::Family::Unary:
      case isa::Family::Binary: {
        const std::string mn(info.mnemonic);
        const bool div = spec::is_division(mn);
        if (in.dst_kind == DstKind::V) {  // alu.form
          std::array<uint32_t, 64> out{};
          for (uint32_t l = 0; l < W_; ++l) {
            if (!((E >> l) & 1)) continue;
            const uint32_t a = value(w, g, in.a, l), b = value(w, g, in.b, l);
            if (div && b == 0) return Raised{Event::DivZero, static_cast<int32_t>(l)};
            out[l] = spec::alu(mn, a, b);
          }
          for (uint32_t l = 0; l < W_; ++l)
            if ((E >> l) & 1) w.v[size_t{in.dst} * W_ + l] = out[l];
        } else {  // alu.form.scalar, state.special.exec
          const uint32_t a = value(w, g, in.a, 0), b = value(w, g, in.b, 0);
          if (div && b == 0) return Raised{Event::DivZero};
          const uint32_t x = spec::alu(mn, a, b);
          if (in.dst_kind == DstKind::S) {
            w.s[in.dst] = x;
          } else {
            const auto which = static_cast<isa::Special>(in.dst);
            uint64_t e = w.exec;
            if (which == isa::Special::Exec)
              e = x;
            else if (which == isa::Special::ExecLo)
              e = (e & ~0xffffffffull) | x;
            else if (which == isa::Special::ExecHi)
              e = (e & 0xffffffffull) | uint64_t{x} << 32;
            else
              throw Outside{"a write of a special register other than exec"};
            w.exec = e & w.live & full_;
          }
        }
        ++w.pc;
        return std::nullopt;
      }
      case isa::Family::Compare: {  // alu.cmp
        const std::string mn(info.mnemonic);
        for (uint32_t l = 0; l < W_; ++l) {
          if (!((E >> l) & 1)) continue;
          const bool b = spec::compare(mn, value(w, g, in.a, l), value(w, g, in.b, l));
          w.p[in.dst] = (w.p[in.dst] & ~(1ull << l)) | (uint64_t{b} << l);
        }
        ++w.pc;
        return std::nullopt;
      }
      case isa::Family::Select:  // alu.sel
        for (uint32_t l = 0; l < W_; ++l)
          if ((E >> l) & 1)
            w.v[size_t{in.dst} * W_ + l] =
                pred(w, in.pa, in.na, l) ? value(w, g, in.a, l) : value(w, g, in.b, l);
        ++w.pc;
        return std::nullopt;
      case isa::Family::PredOp:  // alu.pred
        for (uint32_t l = 0; l < W_; ++l) {
          if (!((E >> l) & 1)) continue;
          const bool a = pred(w, in.pa, in.na, l), b = pred(w, in.pb, in.nb, l);
          const bool x = in.op == isa::Op::PAnd   ? a && b
                         : in.op == isa::Op::POr  ? a || b
                         : in.op == isa::Op::PXor ? a != b
                                                  : a;
          w.p[in.dst] = (w.p[in.dst] & ~(1ull << l)) | (uint64_t{x} << l);
        }
        ++w.pc;
        return std::nullopt;
      case isa::Family::Load: {  // mem.load, mem.load.scalar
        const uint32_t n = in.op == isa::Op::Ld                               ? 4
                           : in.op == isa::Op::LdU8 || in.op == isa::Op::LdS8 ? 1
                                                                              : 2;
        const bool scalar = in.dst_kind == DstKind::S;
        const uint64_t lanes = scalar ? 1 : E;
        if (auto r = check(g, in, lanes, n, scalar)) return r;
        const auto& m = space(g, in.space);
        for (uint32_t l = 0; l < W_; ++l) {
          if (!((lanes >> l) & 1)) continue;
          const uint32_t a = value(w, g, in.a, l) + in.offset;
          uint32_t x = 0;
          for (uint32_t i = 0; i < n; ++i) x |= uint32_t{m[a + i]} << (8 * i);
          if (in.op == isa::Op::LdS8) x = static_cast<uint32_t>(int32_t{static_cast<int8_t>(x)});
          if (in.op == isa::Op::LdS16) x = static_cast<uint32_t>(int32_t{static_cast<int16_t>(x)});
          if (scalar)
            w.s[in.dst] = x;
          else
            w.v[size_t{in.dst} * W_ + l] = x;
        }
        ++w.pc;
        return std::nullopt;
      }
      case isa::Family::Store: {  // mem.store, mem.store.order
        const uint32_t n = in.op == isa::Op::St ? 4 : in.op == isa::Op::St8 ? 1 : 2;
        if (auto r = check(g, in, E, n, false)) return r;
        auto& m = space(g, in.space);
        for (uint32_t l = 0; l < W_; ++l) {
          if (!((E >> l) & 1)) continue;
          const uint32_t a = value(w, g, in.a, l) + in.offset, x = value(w, g, in.b, l);
          for (uint32_t i = 0; i < n; ++i) m[a + i] = static_cast<uint8_t>(x >> (8 * i));
        }
        ++w.pc;
        return std::nullopt;
      }
      case isa::Family::Control:
        return control(g, in);
      default:
        throw Outside{"the instruction " + std::string(info.mnemonic)};
    }
  }

  std::optional<Raised> control(uint32_t g, const Insn& in) {
    Warp& w = w_[g];
    const uint32_t k = core_of(g);
    auto handler_only = [&]() -> std::optional<Raised> {  // trap.valid.mode at run time
      if (!w.handler) return Raised{Event::IllegalInstruction};
      return std::nullopt;
    };
    switch (in.op) {
      case isa::Op::Nop:  // branch.nop
        ++w.pc;
        return std::nullopt;
      case isa::Op::Jmp:  // branch.jmp
        w.pc = in.target;
        return std::nullopt;
      case isa::Op::Cbr: {  // branch.cbr: taken when some lane is active and every one has P
        bool all = w.exec != 0;
        for (uint32_t l = 0; l < W_; ++l)
          if ((w.exec >> l) & 1) all = all && pred(w, in.pa, in.na, l);
        w.pc = all ? in.target : w.pc + 1;
        return std::nullopt;
      }
      case isa::Op::Bar: {  // bar.arrive, bar.release
        const uint32_t wg = wg_of(g);
        w.status = Run::Barrier;
        if (++arrived_[wg] == c_.warps) {
          arrived_[wg] = 0;
          for (uint32_t h = 0; h < n_; ++h)
            if (wg_of(h) == wg && w_[h].status == Run::Barrier) {
              w_[h].status = Run::Ready;
              ++w_[h].pc;
            }
        }
        return std::nullopt;
      }
      case isa::Op::Exit:  // branch.exit; trap.join: in a handler, illegal
        if (w.handler) return Raised{Event::IllegalInstruction};
        w.live &= ~w.exec;
        w.exec = 0;
        if (w.live == 0) w.status = Run::Done;
        ++w.pc;
        return std::nullopt;
      case isa::Op::Call:  // branch.call
        if (w.calls.size() >= c_.call_depth) return Raised{Event::CallOverflow};
        w.calls.push_back(w.pc + 1);
        w.pc = in.target;
        return std::nullopt;
      case isa::Op::Ret:  // branch.ret
        if (w.calls.empty()) return Raised{Event::CallUnderflow};
        w.pc = w.calls.back();
        w.calls.pop_back();
        return std::nullopt;
      case isa::Op::Sys: {  // trap.sys
        if (w.handler) return Raised{Event::IllegalInstruction};
        Raised r{Event::Syscall};
        r.payload = value(w, g, in.a, 0);
        return r;
      }
      case isa::Op::VCall: {  // trap.vector
        if (w.handler) return Raised{Event::IllegalInstruction};
        if (vtable_ < 0) return Raised{Event::VectorUnbound};
        const auto& table = p_.vtables[static_cast<size_t>(vtable_)];
        const uint32_t a = value(w, g, in.a, 0);
        if (a >= table.size()) return Raised{Event::VectorRange};
        if (w.calls.size() >= c_.call_depth) return Raised{Event::CallOverflow};
        w.calls.push_back(w.pc + 1);
        w.pc = table[a];
        return std::nullopt;
      }
      case isa::Op::TRet:    // trap.return
      case isa::Op::TPause:  // trap.pause
        if (auto r = handler_only()) return r;
        w.status = in.op == isa::Op::TRet ? Run::Returned : Run::Paused;
        join(k);
        return std::nullopt;
      case isa::Op::TClear:  // trap.clear, trap.gesr
        if (auto r = handler_only()) return r;
        cores_[k].esr = 0;
        gesr_cores_ &= ~(1ull << k);
        if (gesr_cores_ == 0) gesr_ = 0;
        ++w.pc;
        return std::nullopt;
      case isa::Op::FrameLd:
      case isa::Op::FrameSt: {  // trap.frame.access
        const uint32_t off = value(w, g, in.a, 0);
        if (!w.handler || off % 4 || off >= kFrame) return Raised{Event::IllegalInstruction};
        if (in.op == isa::Op::FrameLd)
          w.s[in.dst] = frame_load(g, off);
        else
          frame_store(g, off, value(w, g, in.b, 0));
        ++w.pc;
        return std::nullopt;
      }
      default:
        throw Outside{"the instruction " + std::string(isa::info(in.op).mnemonic)};
    }
  }

  // exec.outcome: the status, the event of `trapped`, the output buffers.
  exec::Outcome outcome(exec::Status s) const {
    exec::Outcome o;
    o.status = s;
    if (s == exec::Status::Trapped) o.event = event_;
    o.steps = steps_;
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      const auto& b = p_.buffers[i];
      if (b.mode == syntax::BufferMode::In) continue;
      o.buffers.push_back(exec::BufferOut{b.name, b.type, mem_[i]});
    }
    return o;
  }

  const exec::Program& p_;
  const exec::LaunchConfig& c_;
  uint32_t W_ = 0, n_ = 0;
  uint64_t full_ = 0;
  std::vector<Warp> w_;
  std::vector<Core> cores_;
  std::vector<std::vector<uint8_t>> mem_, slm_, stack_;
  std::vector<uint32_t> arrived_;  // bar.arrive: per workgroup
  uint32_t gesr_ = 0;  // trap.gesr: the cause word and the cores that have not cleared it
  uint64_t gesr_cores_ = 0;
  size_t next_ = 0;  // the host script's next action
  int32_t vtable_ = -1;
  uint32_t cursor_ = 0;  // exec.sched.round_robin
  uint64_t rng_ = 0;     // exec.sched.random
  uint64_t steps_ = 0;
  exec::EventInfo event_;
};

}  // namespace

HostModelResult run_host_model(const exec::Program& p) {
  return Model(p).run();
}

}  // namespace simt::gen
