// Trap handlers (spec/trap.md): what happens to a core when one of its warps raises
// an event and a handler is installed, the handler's instructions, the join and
// the resume. Rare by design: nothing here is on the hot path of ordinary steps.
#include <cassert>

#include "exec/machine.h"
#include "exec/semantics.h"
#include "exec/trap_unit.h"

namespace simt::exec {

namespace {

// trap.frame: byte offsets of the frame's words.
enum FrameWord : uint32_t {
  kFramePc = 0,
  kFrameExecLo = 4,
  kFrameExecHi = 8,
  kFrameLiveLo = 12,
  kFrameLiveHi = 16,
  kFrameStatus = 20,
  kFrameSp = 24,
  kFrameMaskDepth = 28,
  kFramePcDepth = 32,
  kFrameCause = 36,
  kFrameLane = 40,
  kFrameAddr = 44,
  kFrameSpace = 48,
  kFrameRaiser = 52,
};

}  // namespace

uint32_t TrapUnit::core_of(uint32_t g) const {
  return (g / m_.prog_->config.warps) % m_.prog_->config.cores;
}

uint8_t* TrapUnit::frame_bytes(uint32_t g) {
  WarpState& w = m_.st_.warps[g];
  return m_.st_.mem.stack.data() + size_t{g} * m_.prog_->config.stack + w.sp;
}

uint32_t TrapUnit::frame_word(uint32_t g, uint32_t off) {
  const uint8_t* b = frame_bytes(g) + off;
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

void TrapUnit::set_frame_word(uint32_t g, uint32_t off, uint32_t v) {
  uint8_t* b = frame_bytes(g) + off;
  for (int i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
}

// trap.cause
uint32_t TrapUnit::cause_word(isa::Event e, uint32_t payload) {
  return static_cast<uint32_t>(e) | (payload & 0xffffffu) << 8;
}

// trap.entry, in its order. `resume_pc` is the raising warp's resume PC
// (trap.resume.pc); the others resume where they are. Returns false (and records
// frame_overflow, trap.frame.room) when a warp has no room for its frame. The
// core must have an entering warp.
bool TrapUnit::enter_handler(uint32_t core, uint32_t raiser, uint32_t cause, uint32_t resume_pc,
                             const EventInfo* ev) {
  const LaunchConfig& c = m_.prog_->config;
  CoreState& cs = m_.st_.trap.cores[core];
  // 2. The entering warps: ready or waiting at a barrier, on this core.
  entering_.clear();
  for (uint32_t g = 0; g < m_.nwarps_; ++g) {
    const WarpStatus s = m_.st_.warps[g].status;
    if (core_of(g) == core && (s == WarpStatus::Ready || s == WarpStatus::Barrier))
      entering_.push_back(g);
  }
  // trap.frame.room: checked before anything changes.
  for (uint32_t g : entering_) {
    if (m_.st_.warps[g].sp < kFrameBytes) {
      EventInfo fo;
      fo.code = isa::Event::FrameOverflow;
      fo.warp = g;
      fo.pc = m_.st_.warps[g].pc;
      m_.event_ = std::move(fo);
      return false;
    }
  }
  // 3. Barrier unwind: every workgroup of the core starts its barrier again. The
  // frame records which warps were waiting (trap.frame, offset 20).
  unwound_.assign(entering_.size(), 0);
  for (size_t i = 0; i < entering_.size(); ++i) {
    WarpState& w = m_.st_.warps[entering_[i]];
    if (w.status != WarpStatus::Barrier) continue;
    unwound_[i] = 1;
    w.status = WarpStatus::Ready;
  }
  for (uint32_t wg = 0; wg < c.workgroups; ++wg)
    if (wg % c.cores == core) m_.st_.barriers[wg].arrived = 0;
  // 4. Frames, in ascending global id.
  for (size_t i = 0; i < entering_.size(); ++i) {
    const uint32_t g = entering_[i];
    WarpState& w = m_.st_.warps[g];
    const bool raised = g == raiser;
    const uint32_t old_sp = w.sp;
    w.sp -= kFrameBytes;
    std::fill_n(frame_bytes(g), kFrameBytes, uint8_t{0});
    set_frame_word(g, kFramePc, raised ? resume_pc : w.pc);
    set_frame_word(g, kFrameExecLo, static_cast<uint32_t>(w.exec));
    set_frame_word(g, kFrameExecHi, static_cast<uint32_t>(w.exec >> 32));
    set_frame_word(g, kFrameLiveLo, static_cast<uint32_t>(w.live));
    set_frame_word(g, kFrameLiveHi, static_cast<uint32_t>(w.live >> 32));
    set_frame_word(g, kFrameStatus, unwound_[i]);
    set_frame_word(g, kFrameSp, old_sp);
    set_frame_word(g, kFrameMaskDepth, static_cast<uint32_t>(w.mask_stack.size()));
    set_frame_word(g, kFramePcDepth, static_cast<uint32_t>(w.pc_stack.size()));
    set_frame_word(g, kFrameCause, cause);
    const bool with_lane = raised && ev && ev->lane >= 0;
    set_frame_word(g, kFrameLane, with_lane ? static_cast<uint32_t>(ev->lane) : 0xffffffffu);
    const bool mem_event = raised && ev && !ev->space.empty();
    set_frame_word(g, kFrameAddr, mem_event ? ev->addr : 0);
    // trap.frame: the buffer's index in declaration order (the event's space), 0xffff for slm.
    const uint32_t space = m_.event_space_ == kSpaceSlm ? 0xffffu : m_.event_space_;
    set_frame_word(g, kFrameSpace, mem_event ? space : 0xffffffffu);
    set_frame_word(g, kFrameRaiser, raised ? 1 : 0);
  }
  // 5. ESR and TGID.
  cs.esr = cause;
  cs.tgid = raiser;
  // trap.single_step: an entry, for any cause, ends the core's round.
  cs.round_open = false;
  // 6. The handler's context.
  for (uint32_t g : entering_) {
    WarpState& w = m_.st_.warps[g];
    w.in_handler = true;
    w.pc = cs.tba;
    w.exec = w.live;
    w.user_mask_stack.swap(w.mask_stack);
    w.user_pc_stack.swap(w.pc_stack);
    w.mask_stack.clear();
    w.pc_stack.clear();
    w.ss_owed = false;
    // wave.trap: handler code runs in normal mode; a region's mode and part are
    // set aside (its region state stays as it is).
    w.user_mode = w.mode;
    w.user_part = w.part;
    w.mode = WaveMode::Normal;
    w.part = 0;
  }
  if (m_.trace_)
    m_.trace_(TraceRecord{m_.steps_, raiser, cs.tba, m_.st_.warps[raiser].exec, TraceKind::Enter,
                          core, cause});
  return true;
}

// An event raised by the instruction warp `w` just ran (exec.status.trapped,
// trap.double, trap.none, trap.entry). Returns the status that ends the launch,
// or nothing when the core entered its handler.
std::optional<Status> TrapUnit::take_event(WarpState& w) {
  assert(m_.event_);
  if (w.in_handler) {  // trap.double
    m_.event_->inner = m_.event_->code;
    m_.event_->code = isa::Event::DoubleFault;
    return Status::Trapped;
  }
  const uint32_t g = m_.warp_id(w);
  const uint32_t core = core_of(g);
  if (!m_.st_.trap.cores[core].tba_valid) return Status::Trapped;  // trap.none
  const bool sys = m_.event_->code == isa::Event::Syscall;
  const uint32_t cause = cause_word(m_.event_->code, m_.event_->payload);
  const EventInfo ev = *m_.event_;
  if (!enter_handler(core, g, cause, sys ? w.pc + 1 : w.pc, &ev)) return Status::Trapped;
  m_.event_.reset();
  return std::nullopt;
}

// trap.join: once no warp of the core is still running handler code, the
// returned warps resume.
void TrapUnit::try_join(uint32_t core) {
  for (uint32_t g = 0; g < m_.nwarps_; ++g) {
    const WarpState& w = m_.st_.warps[g];
    if (core_of(g) == core && w.in_handler &&
        (w.status == WarpStatus::Ready || w.status == WarpStatus::Barrier))
      return;
  }
  for (uint32_t g = 0; g < m_.nwarps_; ++g)
    if (core_of(g) == core && m_.st_.warps[g].status == WarpStatus::Returned) resume_warp(g);
}

// trap.resume
void TrapUnit::resume_warp(uint32_t g) {
  WarpState& w = m_.st_.warps[g];
  const uint64_t exec =
      uint64_t{frame_word(g, kFrameExecLo)} | uint64_t{frame_word(g, kFrameExecHi)} << 32;
  w.pc = frame_word(g, kFramePc);
  // wave.trap: back in the region's mode and part, with the part's lanes only.
  w.mode = w.user_mode;
  w.part = w.user_part;
  w.user_mode = WaveMode::Normal;
  w.user_part = 0;
  w.exec = exec & w.live & (w.mode == WaveMode::SubVector ? m_.win_.part_mask(w.part) : m_.full_);
  w.sp += kFrameBytes;
  w.mask_stack.swap(w.user_mask_stack);
  w.pc_stack.swap(w.user_pc_stack);
  w.user_mask_stack.clear();
  w.user_pc_stack.clear();
  w.in_handler = false;
  w.status = WarpStatus::Ready;
  if (m_.trace_)
    m_.trace_(TraceRecord{m_.steps_, g, w.pc, w.exec, TraceKind::Resume, core_of(g), 0});
}

// trap.terms: a core is in its handler while one of its warps runs handler code.
bool TrapUnit::core_in_handler(uint32_t core) const {
  for (uint32_t g = 0; g < m_.nwarps_; ++g) {
    const WarpState& w = m_.st_.warps[g];
    if (core_of(g) == core && w.in_handler &&
        (w.status == WarpStatus::Ready || w.status == WarpStatus::Barrier))
      return true;
  }
  return false;
}

// exec.livelock with a host script: once its last action is applied, the
// detection starts afresh from the state at that boundary.
void TrapUnit::host_script_done() {
  m_.live_.restart(m_.st_);
}

void TrapUnit::refresh() {
  stepping_ = false;
  bool pending = false;
  for (const CoreState& c : m_.st_.trap.cores) {
    stepping_ |= c.single_step;
    pending |= !c.pending.empty() || c.resume;
  }
  core_work_ = stepping_ || pending;
  const uint32_t next = m_.st_.trap.host_next;
  boundary_at_ = core_work_                     ? 0
                 : next < m_.prog_->host.size() ? m_.prog_->host[next].step
                                                : ~uint64_t{0};
}

bool TrapUnit::host_actions_remain() const {
  return m_.st_.trap.host_next < m_.prog_->host.size();
}

bool TrapUnit::round_eligible(uint32_t g) const {
  const WarpState& w = m_.st_.warps[g];
  return w.in_handler || w.ss_owed || !m_.st_.trap.cores[core_of(g)].round_open;
}

void TrapUnit::clear_esr(uint32_t core) {
  m_.st_.trap.cores[core].esr = 0;
  m_.st_.trap.gesr_cores &= ~(uint64_t{1} << core);
  if (m_.st_.trap.gesr_cores == 0) m_.st_.trap.global_esr = 0;
}

// trap.host.*: one host action.
std::optional<Status> TrapUnit::apply_action(const HostAction& a) {
  const uint32_t ncores = static_cast<uint32_t>(m_.st_.trap.cores.size());
  const uint32_t lo = a.core == kAllCores ? 0 : static_cast<uint32_t>(a.core);
  const uint32_t hi = a.core == kAllCores ? ncores : lo + 1;
  switch (a.kind) {
    case HostKind::Interrupt: {  // trap.host.interrupt, trap.gesr
      const uint32_t cause = cause_word(isa::Event::Interrupt, a.value);
      if (a.core == kAllCores) {
        m_.st_.trap.global_esr = cause;
        m_.st_.trap.gesr_cores = ncores == 64 ? ~0ull : (uint64_t{1} << ncores) - 1;
      }
      for (uint32_t c = lo; c < hi; ++c) m_.st_.trap.cores[c].pending.push_back(cause);
      break;
    }
    case HostKind::BindTba:  // trap.host.bind_tba
      for (uint32_t c = lo; c < hi; ++c)
        m_.st_.trap.cores[c].tba = a.value, m_.st_.trap.cores[c].tba_valid = true;
      break;
    case HostKind::BindVtable:  // trap.host.bind_vtable
      m_.st_.trap.vtable = static_cast<int32_t>(a.value);
      break;
    case HostKind::SingleStep:  // trap.host.single_step
      for (uint32_t c = lo; c < hi; ++c) {
        CoreState& cs = m_.st_.trap.cores[c];
        cs.single_step = a.value != 0;
        cs.round_open = false;
        for (uint32_t g = 0; g < m_.nwarps_; ++g)
          if (core_of(g) == c) m_.st_.warps[g].ss_owed = false;
      }
      break;
    case HostKind::Resume:  // trap.host.resume: carried out by boundary()
      for (uint32_t c = lo; c < hi; ++c) m_.st_.trap.cores[c].resume = true;
      break;
    case HostKind::Preempt:  // preempt.request
      return m_.preempt_.preempt(a);
  }
  return std::nullopt;
}

// trap.host: the actions due, in list order; once the last is applied the
// script is done (exec.livelock).
std::optional<Status> TrapUnit::apply_due(uint64_t step) {
  const auto& host = m_.prog_->host;
  while (m_.st_.trap.host_next < host.size() && host[m_.st_.trap.host_next].step <= step)
    if (auto s = apply_action(host[m_.st_.trap.host_next++])) return s;
  if (m_.st_.trap.host_next == host.size()) host_script_done();
  m_.refresh();  // the units and the step loop see the change
  return std::nullopt;
}

// trap.host: with no warp ready, the host does not wait for steps that cannot
// happen: the actions of the earliest remaining step are applied now.
bool TrapUnit::apply_idle_actions(std::optional<Status>& end) {
  const auto& host = m_.prog_->host;
  if (m_.st_.trap.host_next >= host.size()) return false;
  end = apply_due(host[m_.st_.trap.host_next].step);
  return true;
}

// The step boundary (trap.host, trap.interrupt, trap.single_step), before the
// scheduler picks: the host's actions for this step, then for each core in
// ascending order a pending interrupt or the end of a single-step round.
std::optional<Status> TrapUnit::boundary() {
  const auto& host = m_.prog_->host;
  if (m_.st_.trap.host_next < host.size() && host[m_.st_.trap.host_next].step <= m_.steps_)
    if (auto s = apply_due(m_.steps_)) return s;
  if (!core_work_) return std::nullopt;
  const uint32_t ncores = static_cast<uint32_t>(m_.st_.trap.cores.size());
  for (uint32_t c = 0; c < ncores; ++c) {
    CoreState& cs = m_.st_.trap.cores[c];
    if (cs.pending.empty() && !cs.single_step && !cs.resume) continue;
    if (core_in_handler(c)) continue;
    if (cs.resume) {  // trap.host.resume: once the core is out of its handler
      cs.resume = false;
      for (uint32_t g = 0; g < m_.nwarps_; ++g)
        if (core_of(g) == c && m_.st_.warps[g].status == WarpStatus::Paused) resume_warp(g);
    }
    // The core's warps that would enter (trap.entry), and whether any is not done.
    int32_t first = -1;
    bool all_done = true, owed = false;
    for (uint32_t g = 0; g < m_.nwarps_; ++g) {
      if (core_of(g) != c) continue;
      const WarpState& w = m_.st_.warps[g];
      all_done &= w.status == WarpStatus::Done;
      if (first < 0 && (w.status == WarpStatus::Ready || w.status == WarpStatus::Barrier))
        first = static_cast<int32_t>(g);
      owed |= w.ss_owed && w.status == WarpStatus::Ready;
    }
    if (all_done) cs.pending.clear();  // trap.interrupt: dropped
    if (first < 0) continue;           // only paused (or done) warps: stays pending
    const auto g = static_cast<uint32_t>(first);
    uint32_t cause = 0;
    if (!cs.pending.empty()) {  // trap.interrupt: oldest first, one per entry
      cause = cs.pending.front();
      cs.pending.erase(cs.pending.begin());
    } else if (!cs.single_step) {
      // trap.boundary: rounds belong to cores whose own flag is on. This core is
      // here for a resume request (or interrupts it could not take): nothing else.
      continue;
    } else if (cs.round_open && !owed) {  // trap.single_step: the round is over
      cause = cause_word(isa::Event::SingleStep, 0);
    } else if (!cs.round_open) {  // trap.single_step: a new round
      for (uint32_t h = 0; h < m_.nwarps_; ++h) {
        WarpState& w = m_.st_.warps[h];
        if (core_of(h) == c && w.status == WarpStatus::Ready && !w.in_handler) {
          w.ss_owed = true;
          cs.round_open = true;
        }
      }
      continue;
    } else {
      continue;
    }
    const auto code = static_cast<isa::Event>(cause & 0xff);
    if (!cs.tba_valid || !enter_handler(c, g, cause, m_.st_.warps[g].pc, nullptr)) {
      if (!m_.event_) {  // trap.none
        EventInfo e;
        e.code = code;
        e.warp = g;
        e.pc = m_.st_.warps[g].pc;
        e.payload = cause >> 8;
        m_.event_ = std::move(e);
      }
      return Status::Trapped;
    }
  }
  m_.refresh();  // the units and the step loop see the change
  return std::nullopt;
}

// trap.allornone: the ready and barrier warps of a core are all in user mode or all
// in handler mode.
bool TrapUnit::all_or_none(uint32_t core) const {
  int mode = -1;
  for (uint32_t g = 0; g < m_.nwarps_; ++g) {
    const WarpState& w = m_.st_.warps[g];
    if (core_of(g) != core || (w.status != WarpStatus::Ready && w.status != WarpStatus::Barrier))
      continue;
    if (mode < 0) mode = w.in_handler;
    if (mode != static_cast<int>(w.in_handler)) return false;
  }
  return true;
}

}  // namespace simt::exec

namespace simt::exec::sem {

// trap.sys: raises syscall with the code; the frame resumes after the instruction.
Flow Sys::exec(Machine& m, WarpState& w, const Insn& in) {
  if (w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);
  return m.raise_with_payload(w, isa::Event::Syscall, m.uniform(w, in.a));
}

// trap.return, trap.pause: executed by the warp as a whole, whatever exec is.
Flow TRet::exec(Machine& m, WarpState& w, const Insn&) {
  if (!w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);
  w.status = WarpStatus::Returned;
  m.trap().try_join(m.trap().core_of(m.warp_id(w)));
  return Flow::Jump;
}

Flow TPause::exec(Machine& m, WarpState& w, const Insn&) {
  if (!w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);
  w.status = WarpStatus::Paused;
  m.trap().try_join(m.trap().core_of(m.warp_id(w)));
  return Flow::Jump;
}

// trap.clear
Flow TClear::exec(Machine& m, WarpState& w, const Insn&) {
  if (!w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);
  m.trap().clear_esr(m.trap().core_of(m.warp_id(w)));
  return Flow::Next;
}

// trap.frame.access
Flow FrameLd::exec(Machine& m, WarpState& w, const Insn& in) {
  const uint32_t off = m.uniform(w, in.a);
  if (!w.in_handler || off % 4 != 0 || off >= TrapUnit::kFrameBytes)
    return m.raise(w, isa::Event::IllegalInstruction);
  w.sregs[in.dst] = m.trap().frame_word(m.warp_id(w), off);
  return Flow::Next;
}

Flow FrameSt::exec(Machine& m, WarpState& w, const Insn& in) {
  const uint32_t off = m.uniform(w, in.a);
  if (!w.in_handler || off % 4 != 0 || off >= TrapUnit::kFrameBytes)
    return m.raise(w, isa::Event::IllegalInstruction);
  m.trap().set_frame_word(m.warp_id(w), off, m.uniform(w, in.b));
  return Flow::Next;
}

// trap.vector: a call through the bound vector table.
Flow VCall::exec(Machine& m, WarpState& w, const Insn& in) {
  if (w.in_handler) return m.raise(w, isa::Event::IllegalInstruction);
  const int32_t t = m.state().trap.vtable;
  if (t < 0) return m.raise(w, isa::Event::VectorUnbound);
  const std::vector<uint32_t>& table = m.program().vtables[static_cast<size_t>(t)];
  const uint32_t a = m.uniform(w, in.a);
  if (a >= table.size()) return m.raise(w, isa::Event::VectorRange);
  if (w.pc_stack.size() >= m.config().call_depth) return m.raise(w, isa::Event::CallOverflow);
  w.pc_stack.push_back(w.pc + 1);
  w.pc = table[a];
  return Flow::Jump;
}

}  // namespace simt::exec::sem

namespace simt::exec::sem {

// preempt.ctx, preempt.sysret: outside system mode.
Flow system_only(Machine& m, WarpState& w) {
  return m.raise(w, isa::Event::IllegalInstruction);
}

}  // namespace simt::exec::sem
