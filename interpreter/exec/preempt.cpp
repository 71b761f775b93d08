// Preemption (spec/preempt.md): the save and the restore in their orders
// (preempt.save, preempt.restore), the system routine in system mode
// (preempt.sysmode), the flows (preempt.flow.*), the intruder and the physical
// SLM (preempt.slm, preempt.intruder). Rare by design: nothing here is on the
// step loop's path.
#include "exec/preempt.h"

#include <algorithm>
#include <cassert>

#include "exec/machine.h"
#include "exec/semantics.h"

namespace simt::exec {

void Device::write(uint32_t core, uint64_t off, std::span<const uint8_t> bytes) {
  if (slm.size() <= core) slm.resize(size_t{core} + 1);
  std::vector<uint8_t>& s = slm[core];
  if (s.size() < off + bytes.size()) s.resize(off + bytes.size(), 0);
  std::copy(bytes.begin(), bytes.end(), s.begin() + static_cast<ptrdiff_t>(off));
}

void Device::read(uint32_t core, uint64_t off, std::span<uint8_t> out) const {
  std::fill(out.begin(), out.end(), uint8_t{0});
  if (core >= slm.size()) return;
  const std::vector<uint8_t>& s = slm[core];
  for (size_t i = 0; i < out.size() && off + i < s.size(); ++i) out[i] = s[off + i];
}

namespace {

template <class S>
constexpr SysOpInfo sys_op_of() {
  if constexpr (requires { S::kSysOp; })
    return SysOpInfo{S::kSysOp, S::kField};
  else
    return SysOpInfo{};
}

constexpr SysOpInfo kSysOps[] = {
#define X(id, mn, fam, sig, semantics, feat, ctl, mode, clause, summary) \
  isa::Op::id == isa::Op::Nop ? SysOpInfo{SysOp::Nop} : sys_op_of<semantics>(),
#include "isa/instructions.def"
#undef X
};
static_assert(std::size(kSysOps) == isa::kOpCount);

}  // namespace

SysOpInfo sys_op(isa::Op op) {
  return kSysOps[static_cast<size_t>(op)];
}

ImageLayout PreemptUnit::layout(uint64_t core_set) const {
  const Program& p = *m_.prog_;
  std::vector<uint32_t> sizes;
  for (const auto& b : p.buffers) sizes.push_back(b.bytes);
  return ImageLayout::make(p.config, std::move(sizes), static_cast<uint32_t>(p.size()), core_set);
}

ImageExpect PreemptUnit::expect(bool all_cores) const {
  const Program& p = *m_.prog_;
  ImageExpect e;
  e.cfg = p.config;
  for (const auto& b : p.buffers) e.buffer_bytes.push_back(b.bytes);
  e.insns = static_cast<uint32_t>(p.size());
  e.host_actions = static_cast<uint32_t>(p.host.size());
  e.vtables = static_cast<uint32_t>(p.vtables.size());
  e.all_cores = all_cores;
  return e;
}

// preempt.sysmode, preempt.sysmode.events: the warp's routine, alone, from its
// entry to its sysret. System code has no jumps, so it ends within the program's
// length.
bool PreemptUnit::routine(uint32_t g, uint64_t slot, uint32_t entry, bool save,
                          const ImageLayout& l) {
  const Program& p = *m_.prog_;
  WarpState& w = m_.st_.warps[g];
  auto event = [&](isa::Event e, uint32_t pc) {
    EventInfo ev;
    ev.code = e;
    ev.warp = g;
    ev.pc = pc;
    m_.event_ = std::move(ev);
    return false;
  };
  for (uint32_t pc = entry;; ++pc) {
    if (pc >= p.size()) return event(isa::Event::PcRange, pc);
    const SysOpInfo s = sys_op(p.insns[pc].op);
    switch (s.op) {
      case SysOp::None:
        return event(isa::Event::IllegalInstruction, pc);
      case SysOp::Nop:
        break;
      case SysOp::Save:
        if (!save) return event(isa::Event::IllegalInstruction, pc);
        if (faults_.mask_stack_not_saved && s.field == isa::CtxField::Mstack) break;
        save_field(image_, slot, l, s.field, w);
        break;
      case SysOp::Load:
        if (save) return event(isa::Event::IllegalInstruction, pc);
        load_field(image_, slot, l, s.field, w);
        if (faults_.part_restarts && s.field == isa::CtxField::Mode && w.part != 0) {
          w.part = 0;
          w.exec &= m_.win_.part_mask(0);
        }
        break;
      case SysOp::Return:
        return true;
    }
  }
}

// preempt.slm: the launch's windows are its cores' physical SLM.
void PreemptUnit::sync_windows_to_device() {
  const LaunchConfig& c = m_.prog_->config;
  for (uint32_t wg = 0; wg < c.workgroups; ++wg)
    m_.device_->write(wg % c.cores, uint64_t{wg / c.cores} * c.slm, m_.st_.mem.slm[wg]);
}

// preempt.save, in its order.
std::optional<Status> PreemptUnit::save(uint64_t core_set) {
  const LaunchConfig& c = m_.prog_->config;
  const ImageLayout l = layout(core_set);
  uint64_t pending = 0;
  for (uint32_t core : l.cores) pending += m_.st_.trap.cores[core].pending.size();
  if (faults_.barrier_unwound)  // as trap.entry does, which a save must not
    for (uint32_t g : l.warps) {
      WarpState& w = m_.st_.warps[g];
      if (w.status == WarpStatus::Barrier) w.status = WarpStatus::Ready;
      m_.st_.barriers[g / c.warps].arrived = 0;
    }
  // 1. Stop: the warps are at a step boundary. 2. Header.
  image_.assign(l.total_bytes(pending), 0);
  std::span<uint8_t> img(image_);
  std::copy(std::begin(kImageMagic), std::end(kImageMagic), img.begin());
  put_u32(img, 8, kImageVersion);
  put_u32(img, 12, l.header_bytes);
  put_u64(img, 16, image_.size());
  put_u64(img, 24, core_set);
  put_u32(img, 32, l.insns);
  put_u32(img, 36, static_cast<uint32_t>(l.buffer_bytes.size()));
  put_u32(img, 40, l.slot_bytes);
  put_u32(img, 44, kImageSettings);
  for (size_t i = 0; i < kSettingCount; ++i)
    put_u64(img, kImageHeaderFixed + 8 * i, setting_word(c, kSettings[i].id));
  for (size_t i = 0; i < l.buffer_bytes.size(); ++i)
    put_u32(img, kImageHeaderFixed + 8 * uint64_t{kImageSettings} + 4 * i, l.buffer_bytes[i]);
  // 3. Routine: each warp in slot order, to its sysret.
  for (size_t i = 0; i < l.warps.size(); ++i)
    if (!routine(l.warps[i], l.slot_offset(i), *m_.prog_->sys_save, true, l)) {
      image_.clear();  // preempt.sysmode.events: a save that faults writes no image
      return Status::Trapped;
    }
  // 4. DMA: each core's windows.
  sync_windows_to_device();
  uint64_t off = l.slm_offset;
  for (uint32_t wg : l.workgroups) {
    std::copy(m_.st_.mem.slm[wg].begin(), m_.st_.mem.slm[wg].end(),
              img.begin() + static_cast<ptrdiff_t>(off));
    off += c.slm;
  }
  // 5. The fixed function's section.
  put_u64(img, l.fixed_offset, m_.steps_);
  for (size_t k = 0; k < l.workgroups.size(); ++k)
    put_u32(img, l.barrier_offset() + 4 * k, m_.st_.barriers[l.workgroups[k]].arrived);
  off = l.sched_offset();
  put_u32(img, off, faults_.cursor_not_saved ? 0 : m_.st_.sched.cursor);
  put_u64(img, off + 4, m_.st_.sched.rng);
  put_u32(img, off + 12, m_.st_.trap.global_esr);
  put_u64(img, off + 16, m_.st_.trap.gesr_cores);
  put_u32(img, off + 24, m_.st_.trap.host_next);
  put_u32(img, off + 28, static_cast<uint32_t>(m_.st_.trap.vtable));
  uint64_t pend = l.pending_offset();
  for (size_t k = 0; k < l.cores.size(); ++k) {
    const CoreState& cs = m_.st_.trap.cores[l.cores[k]];
    const uint32_t words[] = {cs.esr,
                              cs.tgid,
                              cs.tba,
                              uint32_t{cs.tba_valid},
                              uint32_t{cs.single_step},
                              uint32_t{cs.round_open},
                              uint32_t{cs.resume},
                              static_cast<uint32_t>(cs.pending.size())};
    for (size_t j = 0; j < std::size(words); ++j)
      put_u32(img, l.cores_offset() + kCoreRecord * k + 4 * j, words[j]);
    for (uint32_t p : cs.pending) {
      put_u32(img, pend, p);
      pend += 4;
    }
  }
  off = pend;
  for (const auto& b : m_.st_.mem.buffers) {
    std::copy(b.begin(), b.end(), img.begin() + static_cast<ptrdiff_t>(off));
    off += b.size();
  }
  for (uint32_t g : l.warps) {
    const auto from = m_.st_.mem.stack.begin() + static_cast<ptrdiff_t>(uint64_t{g} * c.stack);
    std::copy(from, from + c.stack, img.begin() + static_cast<ptrdiff_t>(off));
    off += c.stack;
  }
  assert(off == image_.size());
  ++count_;
  return std::nullopt;
}

// preempt.restore, in its order, from an image read_image accepted.
std::optional<Status> PreemptUnit::restore(const ImageContent& img) {
  const LaunchConfig& c = m_.prog_->config;
  const ImageLayout& l = img.layout;
  const ImageFixed& fx = img.fixed;
  // 2. The fixed function's section.
  m_.steps_ = fx.steps;
  for (size_t k = 0; k < l.workgroups.size(); ++k)
    m_.st_.barriers[l.workgroups[k]].arrived = fx.barriers[k];
  m_.st_.sched = fx.sched;
  m_.st_.trap.global_esr = fx.global_esr;
  m_.st_.trap.gesr_cores = fx.gesr_cores;
  m_.st_.trap.host_next = fx.host_next;
  m_.st_.trap.vtable = fx.vtable == 0xffffffffu ? -1 : static_cast<int32_t>(fx.vtable);
  for (size_t k = 0; k < l.cores.size(); ++k) m_.st_.trap.cores[l.cores[k]] = fx.cores[k];
  m_.st_.mem.buffers = fx.buffers;
  for (size_t i = 0; i < l.warps.size(); ++i)
    std::copy(fx.stacks[i].begin(), fx.stacks[i].end(),
              m_.st_.mem.stack.begin() + static_cast<ptrdiff_t>(uint64_t{l.warps[i]} * c.stack));
  // 3. DMA: the image's SLM into the cores' physical SLM, where the windows are.
  for (size_t k = 0, wi = 0; k < l.cores.size() && !faults_.slm_not_restored; ++k) {
    uint64_t at = 0;
    for (; wi < l.workgroups.size() && l.core_of(l.workgroups[wi]) == l.cores[k]; ++wi) {
      const uint32_t wg = l.workgroups[wi];
      m_.device_->write(l.cores[k], uint64_t{wg / c.cores} * c.slm,
                        std::span<const uint8_t>(img.slm[k]).subspan(at, c.slm));
      at += c.slm;
    }
  }
  for (uint32_t wg : l.workgroups)
    m_.device_->read(wg % c.cores, uint64_t{wg / c.cores} * c.slm, m_.st_.mem.slm[wg]);
  // 4. Routine: each warp in slot order, from the restore entry to its sysret.
  for (size_t i = 0; i < l.warps.size(); ++i)
    if (!routine(l.warps[i], l.slot_offset(i), *m_.prog_->sys_restore, false, l))
      return Status::Trapped;
  // 5. Continue: what the machine derives from its state follows it.
  m_.state_changed();
  return std::nullopt;
}

// preempt.request, preempt.flow.a, preempt.flow.b
std::optional<Status> PreemptUnit::preempt(const HostAction& a) {
  if (baseline_) return std::nullopt;  // preempt.transparency: a boundary only
  const uint32_t ncores = m_.prog_->config.cores;
  const uint64_t all = ncores == 64 ? ~0ull : (uint64_t{1} << ncores) - 1;
  const uint64_t core_set =
      a.core == kAllCores ? all : uint64_t{1} << static_cast<uint32_t>(a.core);
  if (auto s = save(core_set)) return s;
  if (a.flow == PreemptFlow::B && a.intruder >= 0) run_intruder(a);
  auto img = read_image(image_, nullptr);
  assert(std::holds_alternative<ImageContent>(img));
  return restore(std::get<ImageContent>(img));
}

// preempt.intruder: a launch of its own on the affected cores, to its end; what
// remains of it is its windows in those cores' physical SLM.
void PreemptUnit::run_intruder(const HostAction& a) {
  const auto& prog = m_.prog_->intruders[static_cast<size_t>(a.intruder)];
  Machine intruder(prog);
  intruder.run();
  const LaunchConfig& ic = prog->config;
  for (uint32_t wg = 0; wg < ic.workgroups; ++wg) {
    const uint32_t core = a.core == kAllCores ? wg % ic.cores : static_cast<uint32_t>(a.core);
    const uint64_t k = a.core == kAllCores ? wg / ic.cores : wg;
    m_.device_->write(core, k * ic.slm, intruder.state().mem.slm[wg]);
  }
}

// preempt.flow.c
std::optional<ImageError> PreemptUnit::start_from(std::span<const uint8_t> bytes) {
  const ImageExpect e = expect(true);
  auto img = read_image(bytes, &e);
  if (auto* err = std::get_if<ImageError>(&img)) return *err;
  image_.assign(bytes.begin(), bytes.end());
  if (auto s = restore(std::get<ImageContent>(img))) m_.final_ = *s;
  m_.restart_livelock();
  return std::nullopt;
}

}  // namespace simt::exec
