// The structured warp evaluator (warp_eval.h). One WarpRun walks the statement
// tree for one warp, carrying the set of active lanes; a Launch holds the memory
// and lets the warps take turns between barriers.
#include "warp_eval.h"

#include <algorithm>
#include <array>
#include <bit>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "exec/config.h"
#include "isa/isa.h"
#include "spec_alu.h"

namespace simt::gen {

namespace {

using Set = uint64_t;  // a set of lanes: bit l is lane l

// How a warp's evaluation stops early.
struct Trapped {};   // an event was recorded: the launch ends (exec.status.trapped)
struct WarpDone {};  // the warp's last live lane exited (branch.exit)
struct Aborted {};   // the launch ended while this warp waited (trap, deadlock)
// oracle.model.handler: the handler took the event and the warp resumes after the
// instruction that raised it, which committed nothing (trap.entry, trap.resume).
struct Skipped {};
struct Outside {  // the program is outside the evaluator's domain
  std::string why;
};

constexpr uint32_t kDefaultMaskDepth = exec::kDefaultLaunch.mask_depth;  // state.launch.defaults
constexpr uint32_t kDefaultCallDepth = exec::kDefaultLaunch.call_depth;
constexpr uint64_t kMaxIterations = 2'000'000;  // past this a generated loop is not terminating

int data_reg(const Program& p, int i) {
  return 2 + std::max(0, i) % std::max(1, p.nregs);
}

uint32_t load_le(const std::vector<uint8_t>& m, uint32_t addr, uint32_t n) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < n; ++i) v |= uint32_t{m[addr + i]} << (8 * i);
  return v;
}

// mem.load: zero- or sign-extension of a narrow load.
uint32_t extend(Width w, uint32_t raw) {
  switch (w) {
    case Width::S8:
      return static_cast<uint32_t>(int32_t{static_cast<int8_t>(raw & 0xff)});
    case Width::S16:
      return static_cast<uint32_t>(int32_t{static_cast<int16_t>(raw & 0xffff)});
    default:
      return raw;
  }
}

struct WarpState {
  uint32_t gid = 0, wg = 0, local = 0;
  Set live = 0;
  std::vector<uint32_t> v;  // register-major: v[r * wave + lane]
  std::array<uint32_t, kSregs> s{};
  std::array<Set, isa::kNumPreds> p{};  // bit l: lane l's predicate
  uint32_t masks = 0, calls = 0;        // entries on the mask stack and the PC stack
};

class Launch;

class WarpRun {
 public:
  WarpRun(Launch& l, WarpState& w);
  void run();

 private:
  struct Depths {
    int loops = 0, counted = 0, narrow = 0;
  };
  struct LoopFrame {
    Set continued = 0;  // lanes waiting for the next iteration (branch.cont)
  };

  // ---- registers and operands ------------------------------------------------------
  // wave.shared: in a pass of part p, lane p*simd + i of a shared register is the
  // storage of lane i.
  uint32_t& vr(int r, uint32_t l) {
    if (r >= shared_base_ && shift_) {
      if (l < shift_) throw Outside{"a shared register of a lane outside the current part"};
      l -= shift_;
    }
    return w_.v[static_cast<size_t>(r) * W_ + l];
  }
  int data(int i) const;
  uint32_t special(int32_t idx, Set E) const;
  uint32_t value(const Operand& o, uint32_t l, Set E);
  uint32_t uniform(const Operand& o, Set E);
  int vector_reg(const Operand& o) const { return data(o.k == Operand::K::Reg ? o.v : 0); }
  template <typename F>
  void vset(int r, Set E, F f) {  // exec.form: active lanes only
    for (uint32_t l = 0; l < W_; ++l)
      if ((E >> l) & 1) vr(r, l) = f(l);
  }
  Set cond(const Cond& c, Set E);
  Set write_exec(Set E, isa::Special which, uint32_t v) const;

  // ---- events, stacks, memory --------------------------------------------------------
  uint32_t pc(const Stmt& s, size_t i) const;
  [[noreturn]] void raise(const char* name, uint32_t pc, int32_t lane = -1, uint32_t addr = 0,
                          const std::string& space = {}, bool memory = false, uint32_t payload = 0);
  void log_event(uint32_t cause, uint32_t resume_pc, const model::Event& e);
  void push(const Stmt& s, size_t i);
  void call(const Stmt& s, size_t i);
  std::vector<uint8_t>& space(const std::string& name);
  // mem.check for every active lane, then the accesses in ascending lane order.
  template <typename Addr>
  void check(const std::string& name, Set E, uint32_t n, Addr addr, uint32_t at) {
    const auto& m = space(name);
    for (uint32_t l = 0; l < W_; ++l) {
      if (!((E >> l) & 1)) continue;
      const uint32_t a = addr(l);
      if (a % n) raise("mem_misaligned", at, static_cast<int32_t>(l), a, name, true);
      if (uint64_t{a} + n > m.size())
        raise("mem_out_of_bounds", at, static_cast<int32_t>(l), a, name, true);
    }
  }
  template <typename Addr>
  void load(int d, const std::string& name, Set E, Width wd, Addr addr, uint32_t at) {
    const uint32_t n = width_bytes(wd);
    check(name, E, n, addr, at);
    const auto& m = space(name);
    vset(d, E, [&](uint32_t l) { return extend(wd, load_le(m, addr(l), n)); });
  }
  template <typename Addr, typename Val>
  void store(const std::string& name, Set E, uint32_t n, Addr addr, Val val, uint32_t at) {
    check(name, E, n, addr, at);
    auto& m = space(name);
    for (uint32_t l = 0; l < W_; ++l) {  // mem.store.order: ascending lanes
      if (!((E >> l) & 1)) continue;
      const uint32_t a = addr(l), x = val(l);
      for (uint32_t i = 0; i < n; ++i) m[a + i] = static_cast<uint8_t>(x >> (8 * i));
    }
  }
  uint32_t scalar_load(const std::string& name, Width wd, uint32_t addr, uint32_t at);
  // atom.OP (atom.* or watom.*) on `name` with operands A = a(l), B = b(l); the
  // destination's values into vector register d.
  template <typename Addr, typename A, typename B>
  void atomic(const std::string& op, const std::string& name, Set E, Addr addr, A a, B b, int d,
              uint32_t at) {
    auto& m = space(name);
    auto rmw = [&](uint32_t l) {
      const uint32_t ad = addr(l);
      const spec::AtomicStep st = spec::atomic(op, load_le(m, ad, 4), a(l), b(l));
      for (uint32_t i = 0; i < 4; ++i) m[ad + i] = static_cast<uint8_t>(st.word >> (8 * i));
      return st.result;
    };
    if (op.starts_with("watom.")) {
      // atom.warp, atom.warp.check, atom.warp.empty: once, for the lowest active lane.
      if (E == 0) return;
      const uint32_t l = static_cast<uint32_t>(std::countr_zero(E));
      check(name, Set{1} << l, 4, addr, at);
      const uint32_t r = rmw(l);
      vset(d, E, [&](uint32_t) { return r; });
    } else {
      // atom.lane, atom.lane.check, atom.lane.order: every active lane is checked,
      // then each acts in ascending order; results are written after all acted.
      check(name, E, 4, addr, at);
      std::array<uint32_t, 64> r{};
      for (uint32_t l = 0; l < W_; ++l)
        if ((E >> l) & 1) r[l] = rmw(l);
      vset(d, E, [&](uint32_t l) { return r[l]; });
    }
  }

  // ---- statements ---------------------------------------------------------------------
  Set block(const std::vector<Stmt>& b, int fn, Set E, Depths d);
  Set stmt(const Stmt& s, int fn, Set E, Depths d);
  Set stmt_body(const Stmt& s, int fn, Set E, Depths d);
  void alu(const Stmt& s, int dst, Set E);
  Set loop(const Stmt& s, int fn, Set E, Depths d);
  Set invoke(int f, Set E);
  Set region(const Stmt& s, int fn, Set E, Depths d);
  void trap(const Stmt& s, Set E);
  void tick();

  Launch& L_;
  const Program& p_;
  WarpState& w_;
  const uint32_t W_;
  const Set full_;
  std::vector<LoopFrame*> loops_;  // innermost last; a call starts an empty list
  uint64_t iterations_ = 0;
  // wave.window: in a pass, the current part's lanes (every lane in normal mode)
  // and its first lane; shared registers from shared_base_ (wave.shared).
  Set window_;
  uint32_t shift_ = 0;
  int shared_base_;
};

class Launch {
 public:
  Launch(const Program& p, const EvalOptions& o) : p_(p), reverse_(o.reverse), opt_(o) {
    text_ = print(p, &layout_);
    W_ = p.wave;
    full_ = W_ == 64 ? ~0ull : (1ull << W_) - 1;
    const uint32_t threads = p.threads();
    // The buffers print(p) declares (oracle.model.print), each zero or its initialiser.
    const bool scratch = uses(p, Kind::StoreScratch) || uses(p, Kind::LoadScratch);
    const bool shared =
        uses(p, Kind::SharedStore) || uses(p, Kind::SharedLoad) || uses(p, Kind::Atomic);
    if (!p.input.empty() && (uses(p, Kind::LoadInput) || uses(p, Kind::ScalarLoad))) {
      auto& in = buffers_["in"];
      in.assign(size_t{threads} * 4, 0);
      for (size_t i = 0; i < p.input.size() && i < threads; ++i)
        for (int b = 0; b < 4; ++b) in[4 * i + b] = static_cast<uint8_t>(p.input[i] >> (8 * b));
    }
    if (scratch) declare("scratch", size_t{threads} * kScratchSlots * 4);
    if (shared) declare("shared", size_t{p.warps} * p.workgroups * 16);
    declare("out", size_t{threads} * static_cast<size_t>(p.nregs) * 4);
    if (uses_trap(p, TrapKind::StraddleEnd)) declare("tail", 6);
    if (uses_counters(p)) {
      auto& m = buffers_["counters"];
      m.assign(32, 0);
      for (int k = 0; k < 8; ++k)
        for (int b = 0; b < 4; ++b) m[4 * k + b] = static_cast<uint8_t>(counter_init(k) >> (8 * b));
    }
    if (p.handler == Program::Handler::Record || p.handler == Program::Handler::Mark ||
        p.handler == Program::Handler::MarkPc)
      declare("trec", size_t{p.warps} * p.workgroups * kRecordWords * 4);
    if (uses(p, Kind::Exchange)) slm_.assign(p.workgroups, std::vector<uint8_t>(p.warps * W_ * 4));
    const uint32_t n = p.warps * p.workgroups;
    warps_.resize(n);
    for (uint32_t g = 0; g < n; ++g) {
      WarpState& w = warps_[g];
      w.gid = g;
      w.wg = g / p.warps;
      w.local = g % p.warps;
      w.live = full_;  // state.init
      w.v.assign(size_t{p.vregs()} * W_, 0);
    }
    arrived_.assign(p.workgroups, 0);
    st_.assign(n, St::Ready);
  }

  StructuredResult run() {
    StructuredResult r;
    if (uses(p_, Kind::Spin)) {
      r.error = "the program spins forever (livelock oracle only)";
      return r;
    }
    // Host actions come at step counts, which the evaluator does not keep.
    // Preemption points need no model: a preemption changes nothing the program
    // shows (preempt.transparency, checked by its own invariant).
    if (preemption_points(p_) != p_.host.size()) {
      r.error = "the program has a host script";
      return r;
    }
    if (p_.handler == Program::Handler::Custom) {
      r.error = "the program has a handler of its own";
      return r;
    }
    // oracle.model.hostprog: the logging handlers are the host model's.
    if (!log_labels(p_).empty()) {
      r.error = "the program has a logging handler (the host model's)";
      return r;
    }
    const uint32_t n = static_cast<uint32_t>(warps_.size());
    threaded_ = p_.warps > 1 && (uses(p_, Kind::Barrier) || uses(p_, Kind::Exchange));
    if (!threaded_) {
      // No warp ever waits: each runs to its end in the fixed order.
      for (uint32_t k = 0; k < n && !trapped_ && error_.empty(); ++k)
        body(reverse_ ? n - 1 - k : k);
    } else {
      std::vector<std::thread> threads;
      for (uint32_t g = 0; g < n; ++g) threads.emplace_back([this, g] { thread_main(g); });
      {
        std::unique_lock<std::mutex> lk(mu_);
        pass_baton();
        cv_.wait(lk, [&] { return finished_ || aborted_; });
      }
      for (auto& t : threads) t.join();
    }
    if (!error_.empty()) {
      r.error = error_;
      return r;
    }
    model::Outcome& o = r.outcome;
    o.status = trapped_ ? "trapped" : deadlock_ ? "deadlock" : "completed";
    if (trapped_) {
      o.event = event_;
      r.status_only = n > 1;
    }
    for (const char* name : {"scratch", "shared", "out", "tail", "counters", "trec"}) {
      auto it = buffers_.find(name);
      if (it == buffers_.end()) continue;
      const uint32_t size = std::string_view(name) == "tail" ? 1 : 4;  // tail is u8[6]
      model::Buffer b{name, size == 1 ? "u8" : "u32", {}};
      for (size_t i = 0; i + size <= it->second.size(); i += size)
        b.values.push_back(load_le(it->second, static_cast<uint32_t>(i), size));
      o.buffers.push_back(std::move(b));
    }
    return r;
  }

  // ---- called by warps -----------------------------------------------------------------
  const Program& program() const { return p_; }
  const EvalOptions& options() const { return opt_; }
  const Layout& layout() const { return layout_; }
  uint32_t wave() const { return W_; }
  Set full() const { return full_; }
  std::vector<uint8_t>* buffer(const std::string& name) {
    auto it = buffers_.find(name);
    return it == buffers_.end() ? nullptr : &it->second;
  }
  std::vector<uint8_t>& slm(uint32_t wg) { return slm_.at(wg); }
  void record(model::Event e) {
    event_ = std::move(e);
    trapped_ = true;
  }
  // bar.arrive, bar.release: the warp waits until every warp of its workgroup
  // has arrived (at any barrier); meanwhile the others take their turns.
  void barrier(WarpState& w) {
    if (!threaded_) {
      if (p_.warps != 1) throw Outside{"a barrier in a program the evaluator runs without turns"};
      return;  // the one warp of the workgroup has arrived: released at once
    }
    std::unique_lock<std::mutex> lk(mu_);
    st_[w.gid] = St::Waiting;
    if (++arrived_[w.wg] == p_.warps) {
      for (uint32_t i = w.wg * p_.warps; i < (w.wg + 1) * p_.warps; ++i)
        if (st_[i] == St::Waiting) st_[i] = St::Ready;
      arrived_[w.wg] = 0;
    }
    pass_baton();
    cv_.wait(lk, [&] { return running_ == static_cast<int>(w.gid) || aborted_; });
    if (aborted_) throw Aborted{};
  }

 private:
  enum class St { Ready, Waiting, Done };

  void declare(const std::string& name, size_t bytes) { buffers_[name].assign(bytes, 0); }

  void body(uint32_t g) {
    try {
      WarpRun(*this, warps_[g]).run();
    } catch (const WarpDone&) {
    } catch (const Trapped&) {
    } catch (const Outside& o) {
      error_ = o.why;
    } catch (const std::exception& e) {
      error_ = std::string("internal: ") + e.what();
    }
  }

  void thread_main(uint32_t g) {
    try {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return running_ == static_cast<int>(g) || aborted_; });
        if (aborted_) return;
      }
      WarpRun(*this, warps_[g]).run();
    } catch (const WarpDone&) {
    } catch (const Aborted&) {
      return;
    } catch (const Trapped&) {
      std::lock_guard<std::mutex> lk(mu_);
      aborted_ = true;
      cv_.notify_all();
      return;
    } catch (const Outside& o) {
      std::lock_guard<std::mutex> lk(mu_);
      error_ = o.why;
      aborted_ = true;
      cv_.notify_all();
      return;
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lk(mu_);
      error_ = std::string("internal: ") + e.what();
      aborted_ = true;
      cv_.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lk(mu_);
    st_[g] = St::Done;
    pass_baton();
  }

  // The next warp to run: the first ready one in the fixed order. None ready:
  // the launch has completed (every warp done) or deadlocked (exec.status.deadlock).
  void pass_baton() {
    const int n = static_cast<int>(st_.size());
    running_ = -1;
    for (int k = 0; k < n; ++k) {
      const int g = reverse_ ? n - 1 - k : k;
      if (st_[static_cast<size_t>(g)] == St::Ready) {
        running_ = g;
        break;
      }
    }
    if (running_ < 0) {
      bool all_done = true;
      for (St s : st_) all_done = all_done && s == St::Done;
      if (all_done) {
        finished_ = true;
      } else {
        deadlock_ = true;
        aborted_ = true;
      }
    }
    cv_.notify_all();
  }

  const Program& p_;
  const bool reverse_;
  const EvalOptions opt_;
  std::string text_;
  Layout layout_;
  uint32_t W_ = 0;
  Set full_ = 0;
  std::map<std::string, std::vector<uint8_t>> buffers_;
  std::vector<std::vector<uint8_t>> slm_;
  std::vector<WarpState> warps_;
  // Turns (threaded runs only): the warp whose turn it is, the others wait.
  bool threaded_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = -1;
  bool finished_ = false, aborted_ = false, deadlock_ = false, trapped_ = false;
  std::vector<St> st_;
  std::vector<uint32_t> arrived_;  // per workgroup (bar.arrive)
  model::Event event_;
  std::string error_;
};

// ---- WarpRun ----------------------------------------------------------------------------

WarpRun::WarpRun(Launch& l, WarpState& w)
    : L_(l),
      p_(l.program()),
      w_(w),
      W_(l.wave()),
      full_(l.full()),
      window_(l.full()),
      shared_base_(l.program().vshared && !l.options().private_shared ? kSharedBase : INT32_MAX) {}

int WarpRun::data(int i) const {
  return data_reg(p_, i);
}

// state.special.*: the uniform special registers, for this warp with exec E.
uint32_t WarpRun::special(int32_t idx, Set E) const {
  const spec::Launch l{p_.wave, p_.simd_width(), p_.warps, p_.workgroups, p_.cores};
  if (auto v = spec::special(idx, l, w_.gid, E)) return *v;
  throw Outside{"a per-lane special register read as a uniform value"};
}

uint32_t WarpRun::value(const Operand& o, uint32_t l, Set E) {
  switch (o.k) {
    case Operand::K::Reg:
      return vr(data(o.v), l);
    case Operand::K::Imm:
      return static_cast<uint32_t>(o.v);  // syntax.operand.imm
    case Operand::K::Lane:
      return l;  // state.special.lane
    case Operand::K::Special:
      return special(o.v, E);
    case Operand::K::Scalar:
      return w_.s[kScalarAcc];
    case Operand::K::Shared:
      return vr(kSharedBase + std::max(0, o.v) % kSharedRegs, l);
  }
  return 0;
}

uint32_t WarpRun::uniform(const Operand& o, Set E) {
  if (o.k == Operand::K::Reg || o.k == Operand::K::Lane || o.k == Operand::K::Shared)
    throw Outside{"a per-lane operand of a scalar statement"};
  return value(o, 0, E);
}

// alu.cmp into the predicate for the active lanes (unless reused); the
// condition's lanes, negated as written.
Set WarpRun::cond(const Cond& c, Set E) {
  const size_t pr = static_cast<size_t>(std::max(0, c.pred) % kMaxPred);
  if (!c.reuse) {
    if (!spec::is_compare(c.cmp)) throw Outside{"unknown comparison " + c.cmp};
    for (uint32_t l = 0; l < W_; ++l) {
      if (!((E >> l) & 1)) continue;
      const bool b = spec::compare(c.cmp, value(c.a, l, E), value(c.b, l, E));
      w_.p[pr] = (w_.p[pr] & ~(Set{1} << l)) | (Set{b} << l);
    }
  }
  return (c.negate ? ~w_.p[pr] : w_.p[pr]) & full_;
}

// state.special.exec: a scalar write of %exec, %exec_lo or %exec_hi; bits of lanes
// that are not live (or not below the wave size) are cleared, and in a pass those
// of the other parts (wave.exec).
Set WarpRun::write_exec(Set E, isa::Special which, uint32_t v) const {
  Set e = E;
  if (which == isa::Special::Exec)
    e = v;
  else if (which == isa::Special::ExecLo)
    e = (E & 0xffffffff00000000ull) | v;
  else
    e = (E & 0xffffffffull) | (Set{v} << 32);
  return e & w_.live & full_ & window_;
}

uint32_t WarpRun::pc(const Stmt& s, size_t i) const {
  const auto& pcs = L_.layout().pcs;
  auto it = pcs.find(&s);
  if (it == pcs.end() || i >= it->second.size())
    throw Outside{"no PC for instruction " + std::to_string(i) + " of a " +
                  std::string(kind_name(s.kind)) + " statement"};
  return it->second[i];
}

void WarpRun::raise(const char* name, uint32_t at, int32_t lane, uint32_t addr,
                    const std::string& space, bool memory, uint32_t payload) {
  model::Event e;
  e.name = name;
  e.warp = w_.gid;
  e.pc = at;
  e.lane = lane;  // event.lane: -1 for scalar forms and control instructions
  if (memory) {
    e.addr = addr;
    e.space = space;
  }
  const bool sys = e.name == "syscall";
  if (sys) e.code = payload & 0xffffffu;       // trap.cause: modulo 2^24
  if (p_.handler == Program::Handler::None) {  // trap.none
    L_.record(std::move(e));
    throw Trapped{};
  }
  if (p_.stack && p_.stack < 64) {
    // trap.frame.room: no room for the frame; the lowest entering warp (this one
    // in a program of one warp) at its pc, which is still the raising instruction's.
    model::Event fo;
    fo.name = "frame_overflow";
    fo.warp = w_.gid;
    fo.pc = at;
    L_.record(std::move(fo));
    throw Trapped{};
  }
  // trap.entry, trap.resume.pc: an exception resumes at its own PC, a system
  // call after it.
  const auto code = isa::find_event(e.name);
  if (!code) throw Outside{"an event the evaluator does not know: " + e.name};
  const uint32_t cause = static_cast<uint32_t>(*code) | (sys ? *e.code << 8 : 0);
  if (p_.handler == Program::Handler::Mark || p_.handler == Program::Handler::MarkPc) {
    // The shrinker's recorder: cause and (null) global ESR at the head of the
    // raising warp's log; an exception would be raised again for ever.
    if (!sys) throw Outside{"an exception under the shrinker's marking handler"};
    auto& m = this->space("trec");  // `space` is also this function's parameter
    for (uint32_t i = 0; i < 4; ++i) {
      m.at(w_.gid * kRecordWords * 4 + i) = static_cast<uint8_t>(cause >> (8 * i));
      m.at(w_.gid * kRecordWords * 4 + 4 + i) = 0;
      if (p_.handler == Program::Handler::MarkPc)  // the resume PC: after the sys
        m.at(w_.gid * kRecordWords * 4 + 8 + i) = static_cast<uint8_t>((at + 1) >> (8 * i));
    }
    throw Skipped{};
  }
  if (p_.handler == Program::Handler::Return) {
    // tclear; tret: a system call continues, an exception is raised again for ever.
    if (sys) throw Skipped{};
    throw Outside{"an exception under a handler that only returns"};
  }
  // The recording handler logs the event and skips an exception (codes 1-10).
  log_event(cause, sys ? at + 1 : at, e);
  throw Skipped{};
}

// oracle.model.handler: what the recording handler stores for the raising warp:
// the count, then (while the log has room) the record (trap.esr, trap.frame).
void WarpRun::log_event(uint32_t cause, uint32_t resume_pc, const model::Event& e) {
  auto& m = space("trec");
  auto put = [&](uint32_t at, uint32_t v) {
    for (uint32_t i = 0; i < 4; ++i) m.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
  };
  const uint32_t base = w_.gid * kRecordWords * 4;
  const uint32_t n = load_le(m, base, 4);
  put(base, n + 1);
  if (n >= kRecords) return;
  uint32_t index = 0xffffffffu;  // runner.protocol.response: buffer index, 0xffff for slm
  if (!e.space.empty()) {
    const auto names = buffer_names(p_);
    const auto it = std::find(names.begin(), names.end(), e.space);
    index = e.space == "slm" ? 0xffffu : static_cast<uint32_t>(it - names.begin());
  }
  const uint32_t rec = base + 4 + n * kRecordFields * 4;
  put(rec + 4 * kRecCause, cause);
  put(rec + 4 * kRecTgid, w_.gid);
  put(rec + 4 * kRecPc, resume_pc);
  put(rec + 4 * kRecLane, e.lane >= 0 ? static_cast<uint32_t>(e.lane) : 0xffffffffu);
  put(rec + 4 * kRecAddr, e.space.empty() ? 0 : e.addr);
  put(rec + 4 * kRecSpace, index);
  put(rec + 4 * kRecGesr, 0);    // no host script: the global ESR stays null
  put(rec + 4 * kRecStatus, 0);  // the raising warp was running, not at a barrier
}

// branch.push, branch.lpush: mask_overflow when the stack is full.
void WarpRun::push(const Stmt& s, size_t i) {
  const uint32_t limit = p_.mask_depth ? p_.mask_depth : kDefaultMaskDepth;
  if (w_.masks >= limit && p_.handler != Program::Handler::None)
    throw Outside{"a mask_overflow under a handler (a skipped push is not modelled)"};
  if (w_.masks >= limit) raise("mask_overflow", pc(s, i));
  ++w_.masks;
}

// branch.call: call_overflow when the PC stack is full.
void WarpRun::call(const Stmt& s, size_t i) {
  const uint32_t limit = p_.call_depth ? p_.call_depth : kDefaultCallDepth;
  if (w_.calls >= limit) raise("call_overflow", pc(s, i));
  ++w_.calls;
}

std::vector<uint8_t>& WarpRun::space(const std::string& name) {
  if (name == "slm") return L_.slm(w_.wg);  // state.memory.slm: the workgroup's own
  auto* b = L_.buffer(name);
  if (!b) throw Outside{"no buffer " + name};
  return *b;
}

// mem.load.scalar: once per warp, at a uniform address; events carry no lane.
uint32_t WarpRun::scalar_load(const std::string& name, Width wd, uint32_t addr, uint32_t at) {
  const auto& m = space(name);
  const uint32_t n = width_bytes(wd);
  if (addr % n) raise("mem_misaligned", at, -1, addr, name, true);
  if (uint64_t{addr} + n > m.size()) raise("mem_out_of_bounds", at, -1, addr, name, true);
  return extend(wd, load_le(m, addr, n));
}

void WarpRun::tick() {
  if (++iterations_ > kMaxIterations)
    throw Outside{"a loop runs more than " + std::to_string(kMaxIterations) + " iterations"};
}

void WarpRun::run() {
  const Program& p = p_;
  const uint32_t threads = p.threads();
  const Set E = full_;
  // The prologue (oracle.model.print): v1 is the thread's byte address.
  if (p.warps * p.workgroups == 1) {
    vset(1, E, [](uint32_t l) { return l << 2; });
  } else {
    w_.s[0] = w_.gid * W_;
    vset(0, E, [&](uint32_t l) { return l + w_.s[0]; });
    vset(1, E, [&](uint32_t l) { return vr(0, l) << 2; });
  }
  if (uses(p, Kind::SharedStore) || uses(p, Kind::SharedLoad) || uses(p, Kind::Atomic))
    w_.s[3] = w_.gid * 16;
  if (uses(p, Kind::Exchange)) {
    const uint32_t span = p.warps * W_ * 4;
    if (p.workgroups == 1) {
      vset(kSlmNext, E, [&](uint32_t l) { return vr(1, l) + W_ * 4; });
    } else {
      w_.s[1] = w_.local * W_;
      vset(25, E, [&](uint32_t l) { return l + w_.s[1]; });
      vset(kSlmMine, E, [&](uint32_t l) { return vr(25, l) << 2; });
      vset(kSlmNext, E, [&](uint32_t l) { return vr(kSlmMine, l) + W_ * 4; });
    }
    vset(kSlmNext, E, [&](uint32_t l) { return vr(kSlmNext, l) % span; });
  }
  if (p.budget && uses(p, Kind::Recurse)) w_.s[kBudget] = p.budget;
  const Set end = block(p.main, kMain, E, Depths{});
  // The epilogue: every data register to `out`, then exit.
  auto& out = space("out");
  for (int j = 0; j < p.nregs; ++j) {
    const uint32_t off = static_cast<uint32_t>(j) * threads * 4;
    for (uint32_t l = 0; l < W_; ++l)
      if ((end >> l) & 1) {
        const uint32_t a = vr(1, l) + off, x = vr(2 + j, l);
        for (int b = 0; b < 4; ++b) out.at(a + b) = static_cast<uint8_t>(x >> (8 * b));
      }
  }
  if (end != w_.live) throw Outside{"lanes are live but inactive at the end of main"};
  w_.live = 0;  // branch.exit: every live lane retires, the warp is done
}

Set WarpRun::block(const std::vector<Stmt>& b, int fn, Set E, Depths d) {
  for (const auto& s : b) E = stmt(s, fn, E, d);
  return E;
}

// A vector ALU statement (alu.form), division through an odd divisor
// (oracle.model.div): `or tmp, b, 1` first unless b is an immediate.
void WarpRun::alu(const Stmt& s, int dst, Set E) {
  const std::string& op = s.op;
  if (spec::is_unary(op)) {
    vset(dst, E, [&](uint32_t l) { return spec::alu(op, value(s.a, l, E), 0); });
  } else if (spec::is_division(op)) {
    if (s.b.k == Operand::K::Imm) {
      const uint32_t b = static_cast<uint32_t>(s.b.v | 1);
      vset(dst, E, [&](uint32_t l) { return spec::alu(op, value(s.a, l, E), b); });
    } else {
      vset(kDivTemp, E, [&](uint32_t l) { return value(s.b, l, E) | 1; });
      vset(dst, E, [&](uint32_t l) { return spec::alu(op, value(s.a, l, E), vr(kDivTemp, l)); });
    }
  } else if (spec::is_binary(op)) {
    vset(dst, E, [&](uint32_t l) { return spec::alu(op, value(s.a, l, E), value(s.b, l, E)); });
  } else {
    throw Outside{"unknown ALU operation " + op};
  }
}

// branch.struct.loop: `lpush`, then iterations while any lane is in the loop:
// the guard and counter, the body, `lnext` (lanes that continued rejoin), and the
// back edge taken while the set is not empty; `pop` restores the lanes that
// entered, less those that exited.
Set WarpRun::loop(const Stmt& s, int fn, Set E, Depths d) {
  const int k = std::min(d.loops, kMaxDepth - 1);
  const int counter = loop_counter(fn, k), limit = loop_limit(fn, k);
  vset(counter, E, [](uint32_t) { return 0u; });
  if (s.limit_reg) vset(limit, E, [&](uint32_t l) { return value(s.a, l, E) & 7; });
  push(s, s.limit_reg ? 2 : 1);
  LoopFrame frame;
  loops_.push_back(&frame);
  Depths inner = d;
  inner.loops += 1;
  Set active = E;
  for (;;) {
    tick();
    // cmp.ge p15, counter, limit; break p15; add counter, counter, 1
    for (uint32_t l = 0; l < W_; ++l) {
      if (!((active >> l) & 1)) continue;
      const uint32_t bound = s.limit_reg ? vr(limit, l) : static_cast<uint32_t>(s.limit);
      const bool out = spec::compare("cmp.ge", vr(counter, l), bound);
      w_.p[kGuardPred] = (w_.p[kGuardPred] & ~(Set{1} << l)) | (Set{out} << l);
    }
    active &= ~w_.p[kGuardPred];
    vset(counter, active, [&](uint32_t l) { return vr(counter, l) + 1; });
    active = block(s.body, fn, active, inner);
    active |= frame.continued;  // branch.lnext
    frame.continued = 0;
    if (active == 0) break;  // branch.cbr.empty: the back edge falls through
  }
  loops_.pop_back();
  --w_.masks;  // branch.pop
  return E & w_.live;
}

// wave.enter, wave.exit, wave.union: a region with no active lane is skipped
// (wave.skip); otherwise each part that holds a lane of E runs the body once, in
// ascending order, with E's lanes of that part (scalar statements once per pass,
// wave.scalar; events name whole-wave lanes); the set after the region is the
// union of what the passes left. Lanes that exit leave for good (wave.exit.lanes).
Set WarpRun::region(const Stmt& s, int fn, Set E, Depths d) {
  if (E == 0) return E;
  const uint32_t simd = p_.simd_width();
  Set out = 0;
  for (uint32_t q = 0; q * simd < W_; ++q) {
    const Set part = (simd == 64 ? ~Set{0} : ((Set{1} << simd) - 1) << (q * simd)) & full_;
    if ((E & part) == 0 && !L_.options().run_empty_parts) continue;
    window_ = part;
    shift_ = q * simd;
    try {
      out |= block(s.body, fn, E & part, d);
    } catch (...) {
      window_ = full_;
      shift_ = 0;
      throw;
    }
    window_ = full_;
    shift_ = 0;
  }
  return out & w_.live;
}

// A call (branch.call) runs the function with the caller's active lanes; its
// loops are its own. `ret` returns with whatever lanes are active then.
Set WarpRun::invoke(int f, Set E) {
  std::vector<LoopFrame*> saved;
  saved.swap(loops_);
  const Set out = block(p_.functions[static_cast<size_t>(f)], f, E, Depths{});
  loops_.swap(saved);
  --w_.calls;  // branch.ret
  return out;
}

// A statement; under a handler, one whose instruction raised an event ends there
// (its last instruction raised it and committed nothing) and the lanes go on.
Set WarpRun::stmt(const Stmt& s, int fn, Set E, Depths d) {
  try {
    return stmt_body(s, fn, E, d);
  } catch (const Skipped&) {
    return E;
  }
}

Set WarpRun::stmt_body(const Stmt& s, int fn, Set E, Depths d) {
  const Program& p = p_;
  const int dst = data(s.dst);
  switch (s.kind) {
    case Kind::Alu:
      alu(s, dst, E);
      return E;
    case Kind::Select: {
      const Set P = cond(s.cond, E);
      vset(dst, E, [&](uint32_t l) { return (P >> l) & 1 ? value(s.a, l, E) : value(s.b, l, E); });
      return E;
    }
    case Kind::LoadInput:
      if (p.input.empty())
        vset(dst, E, [](uint32_t) { return 0u; });
      else
        load(
            dst, "in", E, Width::W32, [&](uint32_t l) { return vr(1, l); }, pc(s, 0));
      return E;
    case Kind::StoreScratch:
    case Kind::LoadScratch: {
      const uint32_t off = static_cast<uint32_t>(s.slot % kScratchSlots) * p.threads() * 4 +
                           static_cast<uint32_t>(s.offset);
      int base = 1;
      uint32_t sub = 0;
      if (s.neg > 0) {  // add v18, v1, off + neg; then the address is v18 - neg
        const uint32_t neg = static_cast<uint32_t>(s.neg);
        vset(kAddrTemp, E, [&](uint32_t l) { return vr(1, l) + off + neg; });
        base = kAddrTemp;
        sub = neg;
      }
      auto addr = [&](uint32_t l) { return s.neg > 0 ? vr(base, l) - sub : vr(1, l) + off; };
      const uint32_t at = pc(s, s.neg > 0 ? 1 : 0);
      if (s.kind == Kind::StoreScratch)
        store(
            "scratch", E, width_bytes(s.width), addr, [&](uint32_t l) { return value(s.a, l, E); },
            at);
      else
        load(dst, "scratch", E, s.width, addr, at);
      return E;
    }
    case Kind::If: {
      // branch.push / invert / pop; branch.struct.empty: both sides always run,
      // possibly with no lane.
      const Set P = cond(s.cond, E);
      push(s, s.cond.reuse ? 0 : 1);
      Set then_out = block(s.body, fn, E & P, d);
      const Set rest = E & ~P;
      const Set else_out = s.has_else || !s.again.empty() ? block(s.other, fn, rest, d) : rest;
      // A second invert returns to the first side's lanes, less those that
      // exited or left a loop meanwhile (branch.invert).
      if (!s.again.empty()) then_out = block(s.again, fn, then_out, d);
      --w_.masks;
      return then_out | else_out;
    }
    case Kind::Loop:
      return loop(s, fn, E, d);
    case Kind::Break:
    case Kind::Continue: {
      // branch.brk, branch.cont: the lanes with P leave the innermost loop (until
      // its end, or until its next iteration).
      if (loops_.empty()) throw Outside{"break or continue outside a loop"};
      const Set m = E & cond(s.cond, E);
      if (s.kind == Kind::Continue) loops_.back()->continued |= m;
      return E & ~m;
    }
    case Kind::Exit: {
      // if p; exit; endif (branch.exit): the lanes retire for good. Raw: `exit`
      // alone, every active lane.
      if (s.raw) {
        w_.live &= ~E;
        if (w_.live == 0) throw WarpDone{};
        return 0;
      }
      const Set m = E & cond(s.cond, E);
      push(s, s.cond.reuse ? 0 : 1);
      w_.live &= ~m;
      if (w_.live == 0) throw WarpDone{};
      --w_.masks;
      return E & ~m;
    }
    case Kind::Call: {
      const int t = call_target(p, fn, s);
      if (t < 0) return E;
      call(s, 0);
      return invoke(t, E);
    }
    case Kind::Shfl:
    case Kind::ShflXor: {
      // xlane.shfl: all lanes read before any writes; an inactive or
      // out-of-range source reads 0 (xlane.inactive).
      std::vector<uint32_t> src(W_);
      const int a = vector_reg(s.a);
      for (uint32_t l = 0; l < W_; ++l) src[l] = vr(a, l);
      std::vector<uint32_t> idx(W_);
      for (uint32_t l = 0; l < W_; ++l)
        if ((E >> l) & 1)
          idx[l] = s.kind == Kind::Shfl ? value(s.b, l, E) : l ^ static_cast<uint32_t>(s.slot);
      vset(dst, E,
           [&](uint32_t l) { return idx[l] < W_ && ((E >> idx[l]) & 1) ? src[idx[l]] : 0u; });
      return E;
    }
    case Kind::ReadLane: {
      // xlane.readlane: a scalar result, whatever exec is.
      const uint32_t lane = static_cast<uint32_t>(std::max(0, s.slot));
      if (s.limit) w_.s[kReadLaneReg] = lane;
      const int a = vector_reg(s.a);
      w_.s[2] = lane < W_ && ((E >> lane) & 1) ? vr(a, lane) : 0;
      vset(dst, E, [&](uint32_t) { return w_.s[2]; });
      return E;
    }
    case Kind::Ballot: {
      const Set bits = cond(s.cond, E) & E;  // xlane.ballot
      w_.s[2] = static_cast<uint32_t>(s.op == "ballot.hi" ? bits >> 32 : bits);
      vset(dst, E, [&](uint32_t) { return w_.s[2]; });
      return E;
    }
    case Kind::Vote: {
      const Set P = cond(s.cond, E) & E;  // xlane.vote
      const bool r = s.op == "vote.all" ? P == E : P != 0;
      for (uint32_t l = 0; l < W_; ++l)
        if ((E >> l) & 1) w_.p[kVotePred] = (w_.p[kVotePred] & ~(Set{1} << l)) | (Set{r} << l);
      vset(dst, E, [&](uint32_t l) { return (w_.p[kVotePred] >> l) & 1 ? 1u : 0u; });
      return E;
    }
    case Kind::Atomic: {
      int base = -1;
      const bool counters = s.slot == kCounterSlot;
      if (!counters && s.slot % 2) {  // the per-lane address of SharedStore
        vset(kSharedTemp, E, [&](uint32_t l) { return value(s.b, l, E) & 3; });
        vset(kSharedTemp, E, [&](uint32_t l) { return vr(kSharedTemp, l) << 2; });
        vset(kSharedTemp, E, [&](uint32_t l) { return vr(kSharedTemp, l) + w_.s[3]; });
        base = kSharedTemp;
      }
      const uint32_t word = counters ? 4 * static_cast<uint32_t>(counter_word(s.op)) : 0;
      auto addr = [&](uint32_t l) { return counters ? word : base < 0 ? w_.s[3] : vr(base, l); };
      const uint32_t at = pc(s, !counters && s.slot % 2 ? 3 : 0);
      const std::string space_name = counters ? "counters" : "shared";
      const int out = counters ? kLoweredResult : dst;  // counters: the old value is dropped
      // Operands: A, and for cas the expected 0 then A.
      auto a = [&](uint32_t l) { return is_cas(s.op) ? 0u : value(s.a, l, E); };
      auto b = [&](uint32_t l) { return is_cas(s.op) ? value(s.a, l, E) : 0u; };
      atomic(s.op, space_name, E, addr, a, b, out, at);
      return E;
    }
    case Kind::SharedStore:
    case Kind::SharedLoad: {
      int base = -1;
      if (s.slot % 2) {  // and v21, b, 3; shl v21, v21, 2; add v21, v21, s3
        vset(kSharedTemp, E, [&](uint32_t l) { return value(s.b, l, E) & 3; });
        vset(kSharedTemp, E, [&](uint32_t l) { return vr(kSharedTemp, l) << 2; });
        vset(kSharedTemp, E, [&](uint32_t l) { return vr(kSharedTemp, l) + w_.s[3]; });
        base = kSharedTemp;
      }
      auto addr = [&](uint32_t l) { return base < 0 ? w_.s[3] : vr(base, l); };
      const uint32_t at = pc(s, s.slot % 2 ? 3 : 0);
      if (s.kind == Kind::SharedStore)
        store(
            "shared", E, 4, addr, [&](uint32_t l) { return value(s.a, l, E); }, at);
      else
        load(dst, "shared", E, Width::W32, addr, at);
      return E;
    }
    case Kind::Exchange: {
      const int mine = p.workgroups == 1 ? 1 : kSlmMine;
      store(
          "slm", E, 4, [&](uint32_t l) { return vr(mine, l); },
          [&](uint32_t l) { return value(s.a, l, E); }, pc(s, 0));
      L_.barrier(w_);
      load(
          dst, "slm", E, Width::W32, [&](uint32_t l) { return vr(kSlmNext, l); }, pc(s, 2));
      L_.barrier(w_);
      return E;
    }
    case Kind::ScalarAlu: {
      // alu.form.scalar: once per warp whatever exec is, from uniform sources.
      const std::string& op = s.op;
      const uint32_t a = uniform(s.a, E);
      uint32_t r = 0;
      if (spec::is_unary(op)) {
        r = spec::alu(op, a, 0);
      } else if (spec::is_division(op)) {
        uint32_t b = 0;
        if (s.b.k == Operand::K::Imm) {
          b = static_cast<uint32_t>(s.b.v | 1);
        } else {
          w_.s[kScalarDiv] = uniform(s.b, E) | 1;
          b = w_.s[kScalarDiv];
        }
        r = spec::alu(op, a, b);
      } else if (spec::is_binary(op)) {
        r = spec::alu(op, a, uniform(s.b, E));
      } else {
        throw Outside{"unknown ALU operation " + op};
      }
      w_.s[s.region_scalar ? kRegionScalar : kScalarAcc] = r;
      if (s.accumulate) vset(dst, E, [&](uint32_t l) { return vr(dst, l) + r; });
      return E;
    }
    case Kind::PredOp: {
      // alu.pred: for every active lane.
      const size_t pd = static_cast<size_t>(std::max(0, s.dst) % kMaxPred);
      const Set pa = s.cond.negate ? ~w_.p[static_cast<size_t>(std::max(0, s.cond.pred) % kMaxPred)]
                                   : w_.p[static_cast<size_t>(std::max(0, s.cond.pred) % kMaxPred)];
      const Set pb = s.n2 ? ~w_.p[static_cast<size_t>(std::max(0, s.p2) % kMaxPred)]
                          : w_.p[static_cast<size_t>(std::max(0, s.p2) % kMaxPred)];
      Set r = pa;
      if (s.op == "pand") r = pa & pb;
      if (s.op == "por") r = pa | pb;
      if (s.op == "pxor") r = pa ^ pb;
      if (s.op != "pmov" && s.op != "por" && s.op != "pxor" && s.op != "pand")
        throw Outside{"unknown predicate operation " + s.op};
      w_.p[pd] = (w_.p[pd] & ~E) | (r & E);
      if (s.accumulate) vset(dst, E, [&](uint32_t l) { return (w_.p[pd] >> l) & 1 ? 1u : 0u; });
      return E;
    }
    case Kind::ScalarLoad: {
      // oracle.model.memory: `in`, else `out` (the warp's own words with several warps).
      const uint32_t slot = static_cast<uint32_t>(std::max(0, s.slot));
      const uint32_t offset = static_cast<uint32_t>(s.offset);
      const bool in = !p.input.empty(), one = p.warps * p.workgroups == 1;
      uint32_t addr = 0;
      size_t at = 0;
      if (in) {
        addr = slot % p.threads() * 4 + offset;
      } else if (one) {
        addr = slot % (p.threads() * static_cast<uint32_t>(p.nregs)) * 4 + offset;
      } else {
        w_.s[4] = w_.s[0] << 2;  // shl s4, s0, 2
        addr = w_.s[4] + slot % W_ * 4 + offset;
        at = 1;
      }
      const uint32_t r = scalar_load(in ? "in" : "out", s.width, addr, pc(s, at));
      w_.s[s.region_scalar ? kRegionScalar : kScalarAcc] = r;
      if (s.accumulate) vset(dst, E, [&](uint32_t l) { return vr(dst, l) + r; });
      return E;
    }
    case Kind::Skip: {
      // branch.cbr: taken only when some lane is active and every active lane has P.
      const Set P = cond(s.cond, E);
      if (E != 0 && (E & P) == E) return E;
      return block(s.body, fn, E, d);
    }
    case Kind::Jump:
      return E;  // branch.jmp: the body is never reached
    case Kind::CountedLoop: {
      const int c = counted_counter(fn, std::min(d.counted, kMaxDepth - 1));
      Depths inner = d;
      inner.counted += 1;
      w_.s[static_cast<size_t>(c)] = 0;
      for (;;) {
        tick();
        E = block(s.body, fn, E, inner);
        w_.s[static_cast<size_t>(c)] += 1;
        // cmp.lt p8, sC, limit (active lanes); cbr p8, L (branch.cbr)
        const bool lt =
            spec::compare("cmp.lt", w_.s[static_cast<size_t>(c)], static_cast<uint32_t>(s.limit));
        for (uint32_t l = 0; l < W_; ++l)
          if ((E >> l) & 1)
            w_.p[kCountedPred] = (w_.p[kCountedPred] & ~(Set{1} << l)) | (Set{lt} << l);
        if (!(E != 0 && (E & w_.p[kCountedPred]) == E)) break;
      }
      return E;
    }
    case Kind::Recurse: {
      if (fn == kMain) return E;  // printed only in functions
      // cmp.gt p12, s16, 0; cbr p12, go; jmp done; go: sub; call; add; done:
      const bool gt = spec::compare("cmp.gt", w_.s[kBudget], 0);
      for (uint32_t l = 0; l < W_; ++l)
        if ((E >> l) & 1)
          w_.p[kRecursePred] = (w_.p[kRecursePred] & ~(Set{1} << l)) | (Set{gt} << l);
      if (!(E != 0 && (E & w_.p[kRecursePred]) == E)) return E;
      w_.s[kBudget] -= 1;
      bool called = true;
      try {
        call(s, 4);
      } catch (const Skipped&) {
        called = false;  // call_overflow handled: the add after the call runs
      }
      const Set out = called ? invoke(fn, E) : E;
      w_.s[kBudget] += 1;
      return out;
    }
    case Kind::ExecNarrow: {
      const int k = std::min(d.narrow, 1);
      const size_t lo = static_cast<size_t>(narrow_save_lo(fn, k)),
                   hi = static_cast<size_t>(narrow_save_hi(fn, k));
      const bool wide = W_ > 32;
      const isa::Special low = !wide && s.slot % 2 ? isa::Special::Exec : isa::Special::ExecLo;
      w_.s[lo] = static_cast<uint32_t>(E);
      if (wide) w_.s[hi] = static_cast<uint32_t>(E >> 32);
      w_.s[4] = w_.s[lo] & static_cast<uint32_t>(s.mask);
      E = write_exec(E, low, w_.s[4]);
      if (wide) {
        w_.s[4] = w_.s[hi] & static_cast<uint32_t>(s.mask >> 32);
        E = write_exec(E, isa::Special::ExecHi, w_.s[4]);
      }
      Depths inner = d;
      inner.narrow += 1;
      E = block(s.body, fn, E, inner);
      E = write_exec(E, low, w_.s[lo]);
      if (wide) E = write_exec(E, isa::Special::ExecHi, w_.s[hi]);
      return E;
    }
    case Kind::Barrier:
      L_.barrier(w_);  // bar.divergent: whatever exec is
      return E;
    case Kind::Nop:
      return E;
    case Kind::Trap:
      trap(s, E);
      return E;
    case Kind::Sys:  // trap.sys: a system call with the code A, uniform
      raise("syscall", pc(s, 0), -1, 0, {}, false, uniform(s.a, E));
    case Kind::Region:
      return region(s, fn, E, d);
    case Kind::SharedAlu:
      alu(s, kSharedBase + std::max(0, s.slot) % kSharedRegs, E);
      return E;
    case Kind::Spin:
    case Kind::VCall:      // host programs: the host model's (oracle.model.hostprog)
    case Kind::ExecClear:  // the warp runs past main's exit
    case Kind::kCount:
      break;
  }
  throw Outside{"a " + std::string(kind_name(s.kind)) + " statement"};
}

// oracle.model.traps: what each trap statement's instructions do.
void WarpRun::trap(const Stmt& s, Set E) {
  const int dst = data(s.dst);
  const uint32_t shift = 1 + static_cast<uint32_t>(std::max(0, s.limit) % 3);
  switch (static_cast<TrapKind>(s.slot % static_cast<int>(TrapKind::kCount))) {
    case TrapKind::VectorDivZero: {
      vset(kTrapTemp, E, [&](uint32_t l) { return value(s.a, l, E) & 3; });
      const std::string op = spec::is_division(s.op) ? s.op : "div";
      for (uint32_t l = 0; l < W_; ++l)  // alu.div.zero: the lowest active lane
        if (((E >> l) & 1) && vr(kTrapTemp, l) == 0)
          raise("div_zero", pc(s, 1), static_cast<int32_t>(l));
      vset(dst, E, [&](uint32_t l) { return spec::alu(op, value(s.b, l, E), vr(kTrapTemp, l)); });
      return;
    }
    case TrapKind::ScalarDivZero:
      raise("div_zero", pc(s, 0));  // the scalar form raises whatever exec is
    case TrapKind::LoadOutOfRange:
      vset(kTrapTemp, E, [&](uint32_t l) { return vr(1, l) << shift; });
      load(
          dst, "out", E, Width::W32, [&](uint32_t l) { return vr(kTrapTemp, l); }, pc(s, 1));
      return;
    case TrapKind::StoreOutOfRange:
      vset(kTrapTemp, E, [&](uint32_t l) { return vr(1, l) << shift; });
      store(
          "out", E, 4, [&](uint32_t l) { return vr(kTrapTemp, l); },
          [&](uint32_t l) { return value(s.a, l, E); }, pc(s, 1));
      return;
    case TrapKind::Misaligned:
      vset(kTrapTemp, E, [&](uint32_t l) { return vr(1, l) + l; });
      load(
          dst, "out", E, s.width, [&](uint32_t l) { return vr(kTrapTemp, l); }, pc(s, 1));
      return;
    case TrapKind::ScalarLoadOut: {
      const uint32_t size = p_.threads() * static_cast<uint32_t>(p_.nregs) * 4;
      w_.s[kScalarAcc] = scalar_load("out", Width::W32, size, pc(s, 0));
      return;
    }
    case TrapKind::NegativeAddress:
      load(
          dst, "out", E, Width::W32, [&](uint32_t l) { return vr(1, l) - 4; }, pc(s, 0));
      return;
    case TrapKind::MisalignedPast: {
      // mem.check: misalignment is reported before out of bounds.
      const uint32_t past = p_.threads() * static_cast<uint32_t>(p_.nregs) * 4 + 1;
      load(
          dst, "out", E, s.width, [&](uint32_t l) { return vr(1, l) + past; }, pc(s, 0));
      return;
    }
    case TrapKind::StraddleEnd:  // mem.check: bytes 4-7 of a 6-byte buffer
      load(
          dst, "tail", E, Width::W32, [](uint32_t) { return 4u; }, pc(s, 0));
      return;
    case TrapKind::AtomicLaneOut:
    case TrapKind::AtomicWarpOut: {
      vset(kTrapTemp, E, [&](uint32_t l) { return vr(1, l) << shift; });
      const bool cas = is_cas(s.op);
      atomic(
          s.op, "out", E, [&](uint32_t l) { return vr(kTrapTemp, l); },
          [&](uint32_t l) { return cas ? 0u : value(s.a, l, E); },
          [&](uint32_t l) { return cas ? value(s.a, l, E) : 0u; }, dst, pc(s, 1));
      return;
    }
    case TrapKind::kCount:
      break;
  }
}

}  // namespace

StructuredResult evaluate_structured(const Program& p, const EvalOptions& o) {
  Launch launch(p, o);
  return launch.run();
}

}  // namespace simt::gen
