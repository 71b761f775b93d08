#include "exec/machine.h"

#include <algorithm>
#include <cstring>

namespace simt::exec {

namespace {

// Population count without a library call (the build targets baseline x86-64).
inline uint64_t count_lanes(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (x * 0x0101010101010101ull) >> 56;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

uint32_t word_at(const std::vector<uint8_t>& mem, uint32_t word) {
  uint32_t v = 0;
  size_t base = size_t{word} * 4;
  for (size_t i = 0; i < 4 && base + i < mem.size(); ++i) v |= uint32_t{mem[base + i]} << (8 * i);
  return v;
}

struct Hasher {
  uint64_t h = 0x243F6A8885A308D3ull;
  void u64(uint64_t x) { h = mix(h ^ x) + 0x9E3779B97F4A7C15ull; }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    u64(n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t x;
      std::memcpy(&x, b + i, 8);
      u64(x);
    }
    uint64_t tail = 0;
    for (size_t k = 0; i + k < n; ++k) tail |= uint64_t{b[i + k]} << (8 * k);
    u64(tail);
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    bytes(v.data(), v.size() * sizeof(T));
  }
};

}  // namespace

Machine::Machine(std::shared_ptr<const Program> program) : prog_(std::move(program)) {
  const LaunchConfig& c = prog_->config;
  insns_ = prog_->insns.data();
  size_ = static_cast<uint32_t>(prog_->insns.size());
  wave_ = c.wave;
  full_ = wave_ == 64 ? ~0ull : ((1ull << wave_) - 1);
  nwarps_ = c.total_warps();
  win_.init(wave_, c.simd_width(), prog_->vregs_alloc, prog_->shared_base);
  sched_.init(c.policy, nwarps_);
  lane_ids_.resize(wave_);
  for (uint32_t l = 0; l < wave_; ++l) lane_ids_[l] = l;
  exec_memo_.assign(nwarps_, ExecMemo{});  // mask 0: no lane, all words zero
  exec_words_.assign(size_t{nwarps_} * wave_, 0);
  // With one warp every policy but random (which still draws) picks warp 0.
  one_warp_ = nwarps_ == 1 && c.policy != Policy::Random;
  init_state();
  // exec.livelock: with the random policy the scheduler's generator state is part
  // of the machine state and never recurs in practice; detection is off.
  live_.init(c.livelock_check && c.policy != Policy::Random, st_);
  refresh();
}

// state.init
void Machine::init_state() {
  const LaunchConfig& c = prog_->config;
  st_.warps.assign(nwarps_, WarpState{});
  for (auto& w : st_.warps) {
    w.pc = 0;
    w.exec = w.live = full_;
    w.sp = c.stack;
    w.mask_stack.reserve(c.mask_depth);
    w.pc_stack.reserve(c.call_depth);
    w.sregs.assign(prog_->sregs_alloc, 0);
    w.vregs.assign((size_t{prog_->vregs_alloc} + 1) * wave_, 0);
    w.preds.fill(0);
    w.preds[isa::kPredTrue] = ~0ull;
  }
  st_.mem.buffers.clear();
  for (const auto& b : prog_->buffers) st_.mem.buffers.push_back(b.init);
  st_.mem.slm.assign(c.workgroups, std::vector<uint8_t>(c.slm, 0));
  st_.mem.stack.assign(size_t{nwarps_} * c.stack, 0);
  st_.mem.hash = 0;
  for (uint32_t i = 0; i < st_.mem.buffers.size(); ++i) {
    const auto& mem = st_.mem.buffers[i];
    for (uint32_t wd = 0; size_t{wd} * 4 < mem.size(); ++wd) {
      uint32_t v = word_at(mem, wd);
      if (v) st_.mem.hash ^= mem_word_hash(i, wd, v);
    }
  }
  st_.barriers.assign(c.workgroups, BarrierState{});
  st_.trap = TrapState{};
  st_.trap.cores.assign(c.cores, CoreState{});
  if (prog_->handler)  // trap.install: `.handler LABEL` on every core
    for (auto& core : st_.trap.cores) core.tba = *prog_->handler, core.tba_valid = true;
  st_.sched = SchedState{0, c.seed};
  done_count_ = 0;
}

uint64_t Machine::mem_word_hash(uint32_t space_id, uint32_t word, uint32_t value) const {
  return mix((uint64_t{space_id} << 40) ^ (uint64_t{word} << 8) ^ 0x5bd1e995ull) ^
         mix(uint64_t{value} * 0x9E3779B97F4A7C15ull + space_id);
}

uint32_t Machine::space_id(const WarpState& w, uint16_t space) const {
  if (space == kSpaceSlm) return 0x10000u + warp_id(w) / prog_->config.warps;
  return space;
}

std::vector<uint8_t>& Machine::space_bytes(const WarpState& w, uint16_t space) {
  if (space == kSpaceSlm) return st_.mem.slm[warp_id(w) / prog_->config.warps];
  return st_.mem.buffers[space];
}

void Machine::store(const WarpState& w, uint16_t space, uint32_t addr, uint32_t value,
                    uint32_t size) {
  std::vector<uint8_t>& mem = space_bytes(w, space);
  uint32_t word = addr / 4;
  uint32_t before = word_at(mem, word);
  for (uint32_t i = 0; i < size; ++i) mem[addr + i] = static_cast<uint8_t>(value >> (8 * i));
  uint32_t after = word_at(mem, word);
  if (before != after) {
    uint32_t id = space_id(w, space);
    if (before) st_.mem.hash ^= mem_word_hash(id, word, before);
    if (after) st_.mem.hash ^= mem_word_hash(id, word, after);
  }
}

uint32_t Machine::special(const WarpState& w, isa::Special s) const {
  const LaunchConfig& c = prog_->config;
  uint32_t gw = warp_id(w);
  switch (s) {
    case isa::Special::Lane:
      return 0;  // per-lane; never read as a uniform value
    case isa::Special::Warp:
      return gw % c.warps;
    case isa::Special::GWarp:
      return gw;
    case isa::Special::Wg:
      return gw / c.warps;
    case isa::Special::Core:
      return (gw / c.warps) % c.cores;
    case isa::Special::Wave:
      return c.wave;
    case isa::Special::Simd:
      return c.simd_width();
    case isa::Special::NWarps:
      return c.warps;
    case isa::Special::NWg:
      return c.workgroups;
    case isa::Special::Exec:
    case isa::Special::ExecLo:
      return static_cast<uint32_t>(w.exec);
    case isa::Special::ExecHi:
      return static_cast<uint32_t>(w.exec >> 32);
    case isa::Special::Esr:  // trap.esr: only the raising warp sees the cause
    case isa::Special::Tgid:
    case isa::Special::Gesr: {
      if (!w.in_handler) return 0;
      const uint32_t core = trap_.core_of(gw);
      const CoreState& cs = st_.trap.cores[core];
      if (s == isa::Special::Tgid) return cs.tgid;
      if (gw != cs.tgid) return 0;
      if (s == isa::Special::Esr) return cs.esr;
      return (st_.trap.gesr_cores >> core) & 1 ? st_.trap.global_esr : 0;
    }
    case isa::Special::kCount:
      break;
  }
  return 0;
}

// state.special.exec: writes keep only live lanes below the wave size.
void Machine::write_special(WarpState& w, isa::Special s, uint32_t v) {
  uint64_t e = w.exec;
  switch (s) {
    case isa::Special::Exec:
      e = v;
      break;
    case isa::Special::ExecLo:
      e = (e & 0xffffffff00000000ull) | v;
      break;
    case isa::Special::ExecHi:
      e = (e & 0xffffffffull) | (uint64_t{v} << 32);
      break;
    case isa::Special::Lane:  // not writable (isa::special_info(s).writable): the
    case isa::Special::Warp:  // validator rejects such a write
    case isa::Special::GWarp:
    case isa::Special::Wg:
    case isa::Special::Core:
    case isa::Special::Wave:
    case isa::Special::Simd:
    case isa::Special::NWarps:
    case isa::Special::NWg:
    case isa::Special::Esr:
    case isa::Special::Tgid:
    case isa::Special::Gesr:
    case isa::Special::kCount:
      return;
  }
  // wave.exec: in a sub-vector region only the current part's lanes are kept.
  w.exec = e & w.live & win_.mask();
}

Flow Machine::raise(const WarpState& w, isa::Event e, int32_t lane, uint32_t addr, uint16_t space) {
  EventInfo ev;
  ev.code = e;
  ev.warp = warp_id(w);
  ev.pc = w.pc;
  ev.lane = lane;
  ev.addr = addr;
  if (space == kSpaceSlm)
    ev.space = "slm";
  else if (space < prog_->buffers.size())
    ev.space = prog_->buffers[space].name;
  event_ = std::move(ev);
  event_space_ = space;
  return Flow::Event;
}

// bar.arrive, bar.release: the warp waits at the barrier with its PC on `bar`;
// when every warp of the workgroup has arrived, all of them move past it.
Flow Machine::barrier_arrive(WarpState& w) {
  const uint32_t per_wg = prog_->config.warps;
  const uint32_t wg = warp_id(w) / per_wg;
  BarrierState& b = st_.barriers[wg];
  w.status = WarpStatus::Barrier;
  if (++b.arrived == per_wg) {
    for (uint32_t i = wg * per_wg; i < (wg + 1) * per_wg; ++i) {
      WarpState& o = st_.warps[i];
      if (o.status == WarpStatus::Barrier) {
        o.status = WarpStatus::Ready;
        o.pc += 1;
      }
    }
    b.arrived = 0;
  }
  return Flow::Jump;
}

// trap.single_step: a warp of a core in a round only if it is owed a step. Kept
// out of pick() so that the common case stays a small function.
// The picked warp steps now, so its debt is paid here.
[[gnu::noinline]] int Machine::pick_stepping() {
  const int wi = sched_.pick(st_.sched, st_.warps.data(), [this](uint32_t i) {
    return st_.warps[i].status == WarpStatus::Ready && trap_.round_eligible(i);
  });
  if (wi >= 0) st_.warps[static_cast<size_t>(wi)].ss_owed = false;
  return wi;
}

int Machine::pick() {
  if (trap_.stepping()) [[unlikely]]
    return pick_stepping();
  const WarpState* ws = st_.warps.data();
  return sched_.pick(st_.sched, ws, [ws](uint32_t i) { return ws[i].status == WarpStatus::Ready; });
}

Status Machine::no_ready_status() const {
  for (const auto& w : st_.warps)
    if (w.status == WarpStatus::Paused) return Status::Paused;
  return Status::Deadlock;
}

void Machine::refill_exec_words(uint32_t warp, uint64_t exec) {
  expand_mask(exec, wave_, exec_words_.data() + size_t{warp} * wave_);
  exec_memo_[warp] = ExecMemo{exec, static_cast<uint32_t>(count_lanes(exec))};
}

void Machine::refresh() {
  trap_.refresh();
  // single-step needs pick_stepping(); a trace, the general loop
  single_ = one_warp_ && !trap_.stepping() && !trace_;
  live_.set_waiting(trap_.host_actions_remain());
  attend_at_ = attend_threshold();
}

// exec.step: before the scheduler picks, the launch may have ended (every warp
// done, the step limit), and the step boundary may have work (trap.boundary).
std::optional<Status> Machine::attend() {
  if (done_count_ == nwarps_) return Status::Completed;
  if (steps_ >= prog_->config.max_steps) return Status::StepLimit;
  if (steps_ >= trap_.due())
    if (auto s = trap_.boundary()) return s;
  attend_at_ = attend_threshold();
  return std::nullopt;
}

// exec.step. The loop is written once, for two kinds of launch: `One` when a
// single warp runs under a policy that does not draw, without single-step and
// without a trace sink (single_: the scheduler's choice is warp 0 whenever it is
// ready, and the round-robin cursor stays 0), any launch otherwise. It returns after `n` steps,
// when the launch ends, or (One) as soon as single_ no longer holds; `k` counts
// the steps taken.
template <bool One>
std::optional<Status> Machine::steps_loop(uint64_t n, uint64_t& k) {
  for (; k < n; ++k) {
    // The launch's end, the step limit, the step boundary's work: one comparison.
    if (steps_ >= attend_at_) [[unlikely]] {
      if (auto s = attend()) return finish(*s);
      if (One && !single_) return std::nullopt;
    }
    int wi;
    if constexpr (One)
      wi = st_.warps[0].status == WarpStatus::Ready ? 0 : -1;
    else
      wi = pick();
    if (wi < 0) [[unlikely]] {
      std::optional<Status> end;
      if (trap_.apply_idle_actions(end)) {  // trap.host: not a step
        if (end) return finish(*end);
        if (One && !single_) return std::nullopt;
        --k;
        continue;
      }
      return finish(no_ready_status());  // exec.status.deadlock, trap.paused
    }
    const auto g = static_cast<uint32_t>(wi);
    WarpState& w = st_.warps[g];
    if (!win_.fits(w)) [[unlikely]]
      win_.set(w);  // wave.window
    const uint64_t exec = w.exec;
    if constexpr (!One)
      if (trace_) [[unlikely]]
        trace_(TraceRecord{steps_, g, w.pc, exec});
    // exec.form: with every lane of the window active (every lane in normal mode,
    // the whole part in a sub-vector pass) the instruction needs no exec words;
    // otherwise they are brought up to date before it runs.
    uint32_t active = win_.lanes();
    if (exec != win_.mask()) {
      if (exec != exec_memo_[g].mask) refill_exec_words(g, exec);
      step_words_ = exec_words_.data() + size_t{g} * wave_;
      active = exec_memo_[g].lanes;
    }
    Flow f = w.pc < size_ ? insns_[w.pc].fn(*this, w, insns_[w.pc])
                          : raise(w, isa::Event::PcRange);  // event.pc_range
    if (f == Flow::Event) [[unlikely]] {  // trap.entry, or the launch ends (exec.status.trapped)
      if (auto s = trap_.take_event(w)) return finish(*s);
      f = Flow::Jump;
    }
    assert(trap_.all_or_none(trap_.core_of(g)));  // trap.allornone
    if (f == Flow::Next) ++w.pc;
    ++steps_;
    lane_ops_ += active;
    if constexpr (!One) sched_.stepped(st_.sched, g);
    if (live_.active()) {
      if (live_.repeats(st_, g, w.pc)) [[unlikely]]
        return finish(Status::Livelock);
      live_.tick(st_);
    }
  }
  return std::nullopt;
}

std::optional<Status> Machine::advance(uint64_t n) {
  if (final_) return final_;
  for (uint64_t k = 0; k < n;) {
    auto s = single_ ? steps_loop<true>(n, k) : steps_loop<false>(n, k);
    if (s) return s;
  }
  if (done_count_ == nwarps_) return finish(Status::Completed);
  return std::nullopt;
}

Outcome Machine::run() {
  advance(~0ull);
  return outcome();
}

Outcome Machine::outcome() const {
  Outcome o;
  o.status = final_.value_or(Status::StepLimit);
  if (o.status == Status::Trapped) o.event = event_;
  o.steps = steps_;
  o.lane_ops = lane_ops_;
  for (size_t i = 0; i < prog_->buffers.size(); ++i) {
    const auto& b = prog_->buffers[i];
    if (b.mode == syntax::BufferMode::In) continue;
    o.buffers.push_back({b.name, b.type, st_.mem.buffers[i]});
  }
  return o;
}

void Machine::rehash_memory() {
  st_.mem.hash = 0;
  for (uint32_t i = 0; i < st_.mem.buffers.size(); ++i) {
    const auto& mem = st_.mem.buffers[i];
    for (uint32_t wd = 0; size_t{wd} * 4 < mem.size(); ++wd)
      if (uint32_t v = word_at(mem, wd)) st_.mem.hash ^= mem_word_hash(i, wd, v);
  }
  for (uint32_t wg = 0; wg < st_.mem.slm.size(); ++wg) {
    const auto& mem = st_.mem.slm[wg];
    for (uint32_t wd = 0; size_t{wd} * 4 < mem.size(); ++wd)
      if (uint32_t v = word_at(mem, wd)) st_.mem.hash ^= mem_word_hash(0x10000u + wg, wd, v);
  }
}

void Machine::state_changed() {
  done_count_ = 0;
  for (const auto& w : st_.warps) done_count_ += w.status == WarpStatus::Done;
  rehash_memory();
  refresh();
}

void Machine::restart_livelock() {
  if (!trap_.host_actions_remain()) live_.restart(st_);
  refresh();
}

Snapshot Machine::snapshot() const {
  return Snapshot{prog_->fingerprint, st_, steps_, lane_ops_, live_.detector(), final_, event_};
}

bool Machine::restore(const Snapshot& s) {
  if (s.program != prog_->fingerprint) return false;  // another program or configuration
  const MachineState& n = s.state;
  if (n.warps.size() != st_.warps.size() || n.mem.buffers.size() != st_.mem.buffers.size() ||
      n.barriers.size() != st_.barriers.size() || n.trap.cores.size() != st_.trap.cores.size())
    return false;
  for (size_t i = 0; i < n.warps.size(); ++i) {
    const WarpState& w = n.warps[i];
    if (w.vregs.size() != st_.warps[i].vregs.size() ||
        w.sregs.size() != st_.warps[i].sregs.size() ||
        w.mask_stack.size() > prog_->config.mask_depth ||
        w.pc_stack.size() > prog_->config.call_depth || w.part >= win_.parts() ||
        w.user_part >= win_.parts())
      return false;
  }
  st_ = n;
  steps_ = s.steps;
  lane_ops_ = s.lane_ops;
  live_.set_detector(s.detector);
  final_ = s.final;
  event_ = s.final == Status::Trapped ? s.event : std::nullopt;
  done_count_ = 0;
  for (const auto& w : st_.warps) done_count_ += w.status == WarpStatus::Done;
  refresh();
  return true;
}

// Every field of the state is hashed: each struct is taken apart with a
// structured binding, which does not compile once the struct gains a field until
// the field is named here (and in tests/snapshot_test.cpp's StateFields).
uint64_t Machine::hash() const {
  Hasher h;
  for (const WarpState& w : st_.warps) {
    const auto& [pc, exec, live, status, mode, part, region_pc, region_other, user_mode, user_part,
                 in_handler, ss_owed, sp, mask_stack, pc_stack, user_mask_stack, user_pc_stack,
                 sregs, vregs, preds] = w;
    h.u64(pc);
    h.u64(exec);
    h.u64(live);
    h.u64(static_cast<uint64_t>(status) | uint64_t{static_cast<uint8_t>(mode)} << 8 |
          uint64_t{part} << 16 | uint64_t{in_handler} << 24 | uint64_t{ss_owed} << 25 |
          uint64_t{static_cast<uint8_t>(user_mode)} << 32 | uint64_t{user_part} << 40);
    h.u64(region_pc);  // wave.state
    h.u64(region_other);
    h.u64(sp);
    // The mask and PC stacks, and the user's set aside in handler mode (trap.context).
    for (const auto* stack : {&mask_stack, &user_mask_stack}) {
      h.u64(stack->size());
      for (const MaskEntry& e : *stack) {
        const auto& [saved, other, kind] = e;
        h.u64(saved);
        h.u64(other);
        h.u64(static_cast<uint64_t>(kind));
      }
    }
    h.vec(pc_stack);
    h.vec(user_pc_stack);
    h.vec(sregs);
    h.vec(vregs);
    for (uint64_t p : preds) h.u64(p);
  }
  const auto& [buffers, slm, stack, mem_hash] = st_.mem;
  (void)mem_hash;  // a cache of the bytes hashed here
  for (const auto& b : buffers) h.vec(b);
  for (const auto& s : slm) h.vec(s);
  h.vec(stack);
  const auto& [cores, global_esr, gesr_cores, host_next, vtable] = st_.trap;
  for (const CoreState& c : cores) {
    const auto& [esr, tgid, tba, tba_valid, pending, single_step, round_open, resume] = c;
    h.u64(esr);
    h.u64(tgid);
    h.u64(tba);
    h.u64(tba_valid | uint64_t{single_step} << 1 | uint64_t{round_open} << 2 |
          uint64_t{resume} << 3);
    h.vec(pending);
  }
  for (const BarrierState& b : st_.barriers) {
    const auto& [arrived] = b;
    h.u64(arrived);
  }
  h.u64(global_esr);
  h.u64(gesr_cores);
  h.u64(host_next | uint64_t{static_cast<uint32_t>(vtable)} << 32);
  const auto& [cursor, rng] = st_.sched;
  h.u64(cursor);
  h.u64(rng);
  // MachineState itself: the parts above, in its order.
  [[maybe_unused]] const auto& [warps_, mem_, barriers_, trap_state, sched_state] = st_;
  return mix(h.h);
}

}  // namespace simt::exec
