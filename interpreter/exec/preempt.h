// The preemption unit (spec/preempt.md): the fixed function's part of a save and
// a restore (stop, header, DMA, its own section), the system routine run by each
// warp in system mode, the flows, the intruder, and the cores' physical SLM.
// Rare by design: the step loop never consults it; a `preempt` host action does
// (trap.host, through the trap unit).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "exec/image.h"
#include "exec/outcome.h"
#include "exec/state.h"

namespace simt::exec {

class Machine;

// preempt.slm: each core's physical SLM, which outlives launches. A launch's
// workgroup windows live in it; an intruder on the same cores overwrites them.
struct Device {
  std::vector<std::vector<uint8_t>> slm;  // per core, grown as launches need
  void write(uint32_t core, uint64_t off, std::span<const uint8_t> bytes);
  void read(uint32_t core, uint64_t off, std::span<uint8_t> out) const;
};

// What a system routine moves, by instruction (preempt.ctx, preempt.sysret); from
// the semantics column of the instruction table.
enum class SysOp : uint8_t { None, Nop, Save, Load, Return };
struct SysOpInfo {
  SysOp op = SysOp::None;
  isa::CtxField field = isa::CtxField::Vregs;
};
SysOpInfo sys_op(isa::Op op);

// Planted faults of the test-only faulty implementation (runners/faulty): each
// makes the save or the restore wrong in one named way. The reference never sets
// them; they exist so that the suite and the fuzzer can be shown to find such
// bugs (preempt.* clauses named per fault in runners/faulty/README.md).
struct PreemptFaults {
  bool mask_stack_not_saved = false;  // ctx.save.mstack writes nothing
  bool cursor_not_saved = false;      // the round-robin cursor is not in the image
  bool slm_not_restored = false;      // the restore's DMA step is skipped
  bool part_restarts = false;         // ctx.load.mode restarts a region at part 0
  bool barrier_unwound = false;       // barrier waits unwound instead of saved
};

class PreemptUnit {
 public:
  explicit PreemptUnit(Machine& m) : m_(m) {}
  PreemptUnit(const PreemptUnit&) = delete;
  PreemptUnit& operator=(const PreemptUnit&) = delete;

  // preempt.request: one preemption for a `preempt` host action: the save, then
  // its flow (A: restore at once; B: the intruder, then the restore). Returns the
  // status that ends the launch when the system routine raised an event
  // (preempt.sysmode.events).
  std::optional<Status> preempt(const HostAction& a);
  // preempt.flow.c: the launch starts from an image. On a bad image nothing
  // changes and the error (preempt.image.check) is returned.
  std::optional<ImageError> start_from(std::span<const uint8_t> image);
  // The image of the launch's last preemption (empty before the first).
  const std::vector<uint8_t>& last_image() const { return image_; }
  uint32_t preemptions() const { return count_; }
  // The restore's expectations for this launch (preempt.image.check).
  ImageExpect expect(bool all_cores) const;
  void set_faults(const PreemptFaults& f) { faults_ = f; }

 private:
  ImageLayout layout(uint64_t core_set) const;
  std::optional<Status> save(uint64_t core_set);
  std::optional<Status> restore(const ImageContent& img);
  // Runs warp g's routine from `entry` in system mode (preempt.sysmode). False
  // when it raised an event (recorded as the launch's).
  bool routine(uint32_t g, uint64_t slot, uint32_t entry, bool save, const ImageLayout& l);
  void sync_windows_to_device();
  void run_intruder(const HostAction& a);

  Machine& m_;
  PreemptFaults faults_;
  std::vector<uint8_t> image_;
  uint32_t count_ = 0;
};

}  // namespace simt::exec
