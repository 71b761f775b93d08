#include "exec/machine.h"

#include <cstdio>
#include <cstring>

namespace simt::exec {

std::optional<std::vector<uint32_t>> Outcome::words(std::string_view buffer) const {
  for (const auto& b : buffers) {
    if (b.name != buffer) continue;
    std::vector<uint32_t> w(b.bytes.size() / 4);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = uint32_t{b.bytes[4 * i]} | uint32_t{b.bytes[4 * i + 1]} << 8 |
             uint32_t{b.bytes[4 * i + 2]} << 16 | uint32_t{b.bytes[4 * i + 3]} << 24;
    return w;
  }
  return std::nullopt;
}

std::string_view status_name(Status s) {
  switch (s) {
    case Status::Completed:
      return "completed";
    case Status::Trapped:
      return "trapped";
    case Status::Paused:
      return "paused";
    case Status::Deadlock:
      return "deadlock";
    case Status::Livelock:
      return "livelock";
    case Status::StepLimit:
      return "step_limit";
  }
  return "completed";
}

std::optional<Status> find_status(std::string_view name) {
  for (Status s : kAllStatuses)
    if (status_name(s) == name) return s;
  return std::nullopt;
}

namespace {

uint64_t splitmix64(uint64_t& state) {  // exec.sched.random
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

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
  // wave.parts: part p is lanes p*simd to (p+1)*simd - 1.
  simd_ = c.simd_width();
  parts_ = wave_ / simd_;
  for (uint32_t p = 0; p < parts_; ++p)
    part_masks_[p] = (simd_ == 64 ? ~0ull : ((1ull << simd_) - 1)) << (p * simd_);
  shared_base_ = prog_->shared_base;
  for (uint32_t t = 0; t <= parts_; ++t) {
    const size_t shift = t == 0 ? 0 : size_t{t - 1} * simd_;
    voffs_[t].resize(prog_->vregs_alloc);
    for (uint32_t r = 0; r < prog_->vregs_alloc; ++r)
      voffs_[t][r] = (size_t{r} + 1) * wave_ - (r >= shared_base_ ? shift : 0);
  }
  win_lo_ = 0, win_hi_ = win_n_ = wave_, win_mask_ = full_;
  voff_ = voffs_[0].data();
  lane_ids_.resize(wave_);
  for (uint32_t l = 0; l < wave_; ++l) lane_ids_[l] = l;
  exec_memo_.assign(nwarps_, ExecMemo{});  // mask 0: no lane, all words zero
  exec_words_.assign(size_t{nwarps_} * wave_, 0);
  // exec.livelock: with the random policy the scheduler's generator state is part
  // of the machine state and never recurs in practice; detection is off.
  livelock_enabled_ = c.livelock_check && c.policy != Policy::Random;
  // trap.host: host actions (and what they start) are work at the step boundary.
  // With one warp every policy but random (which still draws) picks warp 0.
  one_warp_ = nwarps_ == 1 && c.policy != Policy::Random;
  init_state();
  update_async();
  det_.tortoise = st_;
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
  st_.cores.assign(c.cores, CoreState{});
  if (prog_->handler)  // trap.install: `.handler LABEL` on every core
    for (auto& core : st_.cores) core.tba = *prog_->handler, core.tba_valid = true;
  st_.gesr_cores = 0;
  st_.barriers.assign(c.workgroups, BarrierState{});
  st_.global_esr = 0;
  st_.host_next = 0;
  st_.vtable = -1;
  st_.rr_cursor = 0;
  st_.rng = c.seed;
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
      const uint32_t core = core_of(gw);
      const CoreState& cs = st_.cores[core];
      if (s == isa::Special::Tgid) return cs.tgid;
      if (gw != cs.tgid) return 0;
      if (s == isa::Special::Esr) return cs.esr;
      return (st_.gesr_cores >> core) & 1 ? st_.global_esr : 0;
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
    default:
      return;
  }
  // wave.exec: in a sub-vector region only the current part's lanes are kept.
  w.exec = e & w.live & win_mask_;
}

// wave.window: normal mode acts on every lane; a part's pass on the part's lanes,
// where a shared register's lane p*simd + i addresses lane i's storage.
void Machine::set_window(const WarpState& w) {
  win_key_ = window_key(w);
  if (w.mode == WaveMode::Normal || w.part >= parts_) {
    win_lo_ = 0, win_hi_ = win_n_ = wave_, win_mask_ = full_;
    voff_ = voffs_[0].data();
    return;
  }
  win_lo_ = w.part * simd_;
  win_hi_ = win_lo_ + simd_;
  win_n_ = simd_;
  win_mask_ = part_masks_[w.part];
  voff_ = voffs_[1 + w.part].data();
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

void Machine::warp_done(WarpState& w) {
  w.status = WarpStatus::Done;
  ++done_count_;
}

// exec.sched.*
template <class Ok>
int Machine::pick_among(Ok ok) {
  switch (prog_->config.policy) {
    case Policy::RoundRobin:
      for (uint32_t i = 0, c = st_.rr_cursor; i < nwarps_; ++i, c = (c + 1 == nwarps_ ? 0 : c + 1))
        if (ok(c)) return static_cast<int>(c);
      return -1;
    case Policy::LowestPcFirst: {
      int best = -1;
      for (uint32_t i = 0; i < nwarps_; ++i)
        if (ok(i) && (best < 0 || st_.warps[i].pc < st_.warps[static_cast<size_t>(best)].pc))
          best = static_cast<int>(i);
      return best;
    }
    case Policy::OldestFirst:
      for (uint32_t i = 0; i < nwarps_; ++i)
        if (ok(i)) return static_cast<int>(i);
      return -1;
    case Policy::Random: {
      uint32_t ready = 0;
      for (uint32_t i = 0; i < nwarps_; ++i) ready += ok(i);
      // exec.sched.random: a step draws; with no warp ready there is no step
      // (the launch ends, or the host acts at once, trap.host), and no draw.
      if (ready == 0) return -1;
      uint64_t r = splitmix64(st_.rng);
      uint32_t k = static_cast<uint32_t>(r % ready);
      for (uint32_t i = 0; i < nwarps_; ++i)
        if (ok(i) && k-- == 0) return static_cast<int>(i);
      return -1;
    }
  }
  return -1;
}

// trap.single_step: a warp of a core in a round only if it is owed a step. Kept
// out of pick() so that the common case stays a small function.
// The picked warp steps now, so its debt is paid here.
[[gnu::noinline]] int Machine::pick_stepping() {
  const int wi = pick_among(
      [this](uint32_t i) { return st_.warps[i].status == WarpStatus::Ready && round_eligible(i); });
  if (wi >= 0) st_.warps[static_cast<size_t>(wi)].ss_owed = false;
  return wi;
}

int Machine::pick() {
  if (stepping_) [[unlikely]]
    return pick_stepping();
  const WarpState* ws = st_.warps.data();
  return pick_among([ws](uint32_t i) { return ws[i].status == WarpStatus::Ready; });
}

std::optional<Status> Machine::finish(Status s) {
  final_ = s;
  return s;
}

void Machine::refill_exec_words(uint32_t warp, uint64_t exec) {
  expand_mask(exec, wave_, exec_words_.data() + size_t{warp} * wave_);
  exec_memo_[warp] = ExecMemo{exec, static_cast<uint32_t>(count_lanes(exec))};
}

// exec.step
std::optional<Status> Machine::advance(uint64_t n) {
  if (final_) return final_;
  const uint64_t max_steps = prog_->config.max_steps;
  const bool rr = prog_->config.policy == Policy::RoundRobin;
  for (uint64_t k = 0; k < n; ++k) {
    if (done_count_ == nwarps_) return finish(Status::Completed);
    if (steps_ >= max_steps) return finish(Status::StepLimit);
    if (boundary_due())  // trap.boundary
      if (auto s = boundary()) return finish(*s);
    int wi = single_ ? (st_.warps[0].status == WarpStatus::Ready ? 0 : -1) : pick();
    if (wi < 0) {
      if (apply_idle_actions()) {  // trap.host: not a step
        --k;
        continue;
      }
      return finish(no_ready_status());  // exec.status.deadlock, trap.paused
    }
    WarpState& w = st_.warps[static_cast<size_t>(wi)];
    if (window_key(w) != win_key_) [[unlikely]]
      set_window(w);  // wave.window
    const uint64_t exec = w.exec;
    if (trace_) trace_(TraceRecord{steps_, static_cast<uint32_t>(wi), w.pc, exec});
    // exec.form: with a partial exec, the warp's exec words (exec_words) are
    // brought up to date before the instruction runs, however exec last changed.
    const ExecMemo& memo = exec_memo_[static_cast<size_t>(wi)];
    // With every lane of the window active (every lane in normal mode, the whole
    // part in a sub-vector pass) the instruction needs no exec words.
    if (exec != win_mask_) {
      if (exec != memo.mask) refill_exec_words(static_cast<uint32_t>(wi), exec);
      step_words_ = exec_words_.data() + static_cast<size_t>(wi) * wave_;
    }
    Flow f = w.pc < size_ ? insns_[w.pc].fn(*this, w, insns_[w.pc])
                          : raise(w, isa::Event::PcRange);  // event.pc_range
    if (f == Flow::Event) {  // trap.entry, or the launch ends (exec.status.trapped)
      if (auto s = take_event(w)) return finish(*s);
      f = Flow::Jump;
    }
    assert(all_or_none(core_of(static_cast<uint32_t>(wi))));  // trap.allornone
    if (f == Flow::Next) ++w.pc;
    ++steps_;
    lane_ops_ += exec == win_mask_ ? win_n_ : memo.lanes;
    if (rr)
      st_.rr_cursor = static_cast<uint32_t>(wi) + 1 == nwarps_ ? 0 : static_cast<uint32_t>(wi) + 1;
    if (livelock_active_) {
      // The full comparison can only succeed when the warp that just stepped is
      // back at the PC it had in the saved state; checking that first keeps the
      // per-step cost to one comparison on most steps.
      if (w.pc == det_.tortoise.warps[static_cast<size_t>(wi)].pc &&
          check_livelock(static_cast<size_t>(wi)))
        return finish(Status::Livelock);
      if (++det_.lam == det_.power) {
        det_.tortoise = st_;
        det_.power *= 2;
        det_.lam = 0;
      }
    }
  }
  if (done_count_ == nwarps_) return finish(Status::Completed);
  return std::nullopt;
}

Outcome Machine::run() {
  advance(~0ull);
  return outcome();
}

// exec.livelock: Brent's cycle detection over the full machine state. The state
// after the latest step is compared with the state recorded after step 2^k - 1
// (advance() records it); equal states mean the deterministic machine repeats
// forever. Cheap control fields are compared before the registers and memory.
bool Machine::check_livelock(size_t stepped) {
  const MachineState& t = det_.tortoise;
  bool same =
      st_.rr_cursor == t.rr_cursor && st_.mem.hash == t.mem.hash && st_.barriers == t.barriers;
  for (size_t i = 0; same && i < st_.warps.size(); ++i) {
    const WarpState& a = st_.warps[i];
    const WarpState& b = t.warps[i];
    same = a.pc == b.pc && a.exec == b.exec && a.live == b.live && a.status == b.status &&
           a.mask_stack.size() == b.mask_stack.size() && a.pc_stack.size() == b.pc_stack.size();
  }
  // A loop's counter usually differs: the registers of the warp that just
  // stepped are compared before the whole state.
  const WarpState& a = st_.warps[stepped];
  const WarpState& b = t.warps[stepped];
  return same && a.sregs == b.sregs && a.vregs == b.vregs && a.preds == b.preds && st_ == t;
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

Snapshot Machine::snapshot() const {
  return Snapshot{prog_->fingerprint, st_, steps_, lane_ops_, det_, final_, event_};
}

bool Machine::restore(const Snapshot& s) {
  if (s.program != prog_->fingerprint) return false;  // another program or configuration
  const MachineState& n = s.state;
  if (n.warps.size() != st_.warps.size() || n.mem.buffers.size() != st_.mem.buffers.size() ||
      n.barriers.size() != st_.barriers.size() || n.cores.size() != st_.cores.size())
    return false;
  for (size_t i = 0; i < n.warps.size(); ++i) {
    const WarpState& w = n.warps[i];
    if (w.vregs.size() != st_.warps[i].vregs.size() ||
        w.sregs.size() != st_.warps[i].sregs.size() ||
        w.mask_stack.size() > prog_->config.mask_depth ||
        w.pc_stack.size() > prog_->config.call_depth || w.part >= parts_ || w.user_part >= parts_)
      return false;
  }
  st_ = n;
  steps_ = s.steps;
  lane_ops_ = s.lane_ops;
  det_ = s.detector;
  final_ = s.final;
  event_ = s.final == Status::Trapped ? s.event : std::nullopt;
  done_count_ = 0;
  for (const auto& w : st_.warps) done_count_ += w.status == WarpStatus::Done;
  update_async();
  return true;
}

uint64_t Machine::hash() const {
  Hasher h;
  for (const auto& w : st_.warps) {
    h.u64(w.pc);
    h.u64(w.exec);
    h.u64(w.live);
    h.u64(static_cast<uint64_t>(w.status) | uint64_t{static_cast<uint8_t>(w.mode)} << 8 |
          uint64_t{w.part} << 16 | uint64_t{w.in_handler} << 24 | uint64_t{w.ss_owed} << 25 |
          uint64_t{static_cast<uint8_t>(w.user_mode)} << 32 | uint64_t{w.user_part} << 40);
    h.u64(w.region_pc);  // wave.state
    h.u64(w.region_other);
    h.u64(w.sp);
    // The mask and PC stacks, and the user's set aside in handler mode (trap.context).
    for (const auto* stacks : {&w.mask_stack, &w.user_mask_stack}) {
      h.u64(stacks->size());
      for (const auto& e : *stacks) {
        h.u64(e.saved);
        h.u64(e.other);
        h.u64(static_cast<uint64_t>(e.kind));
      }
    }
    h.vec(w.pc_stack);
    h.vec(w.user_pc_stack);
    h.vec(w.sregs);
    h.vec(w.vregs);
    for (uint64_t p : w.preds) h.u64(p);
  }
  for (const auto& b : st_.mem.buffers) h.vec(b);
  for (const auto& s : st_.mem.slm) h.vec(s);
  h.vec(st_.mem.stack);
  for (const auto& c : st_.cores) {
    h.u64(c.esr);
    h.u64(c.tgid);
    h.u64(c.tba);
    h.u64(c.tba_valid | uint64_t{c.single_step} << 1 | uint64_t{c.round_open} << 2 |
          uint64_t{c.resume} << 3);
    h.vec(c.pending);
  }
  for (const auto& b : st_.barriers) h.u64(b.arrived);
  h.u64(st_.global_esr);
  h.u64(st_.gesr_cores);
  h.u64(st_.host_next | uint64_t{static_cast<uint32_t>(st_.vtable)} << 32);
  h.u64(st_.rr_cursor);
  h.u64(st_.rng);
  return mix(h.h);
}

// exec.trace.format
std::string format_trace(const Program& p, const TraceRecord& r) {
  char head[160];
  int digits = static_cast<int>((p.config.wave + 3) / 4);
  if (r.kind == TraceKind::Enter) {  // trap.entry
    const auto code = static_cast<isa::Event>(r.cause & 0xff);
    std::snprintf(head, sizeof head, "#%llu core %u enters its handler at pc=%u: %s",
                  static_cast<unsigned long long>(r.step), r.core, r.pc,
                  std::string(isa::event_name(code)).c_str());
    std::string out = head;
    if (r.cause >> 8) out += " code " + std::to_string(r.cause >> 8);
    return out + ", raised by w" + std::to_string(r.warp);
  }
  if (r.kind == TraceKind::Resume) {  // trap.join, trap.resume
    std::snprintf(head, sizeof head, "#%llu w%u leaves the handler of core %u: pc=%u exec=0x%0*llx",
                  static_cast<unsigned long long>(r.step), r.warp, r.core, r.pc, digits,
                  static_cast<unsigned long long>(r.exec));
    return head;
  }
  std::snprintf(head, sizeof head, "#%llu w%u pc=%u exec=0x%0*llx ",
                static_cast<unsigned long long>(r.step), r.warp, r.pc, digits,
                static_cast<unsigned long long>(r.exec));
  std::string out = head;
  if (r.pc < p.text.size()) {
    out += p.text[r.pc];
    out += "  ; line " + std::to_string(p.spans[r.pc].line);
  } else {
    out += "<past the end of the program>";
  }
  return out;
}

}  // namespace simt::exec
