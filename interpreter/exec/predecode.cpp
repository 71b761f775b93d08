#include <algorithm>
#include <limits>
#include <unordered_map>

#include "exec/program.h"
#include "flow/flow.h"
#include "text/printer.h"

namespace simt::exec {

using syntax::DiagKind;
using syntax::OperandType;
using syntax::RegFile;
using syntax::StmtKind;

namespace {

// Evaluates a buffer size expression (syntax.buffer.size). Values stay within
// [-2^40, 2^40] so nothing overflows; false if a bound is exceeded.
bool eval_size(const syntax::SizeExpr& e, const LaunchConfig& c, int64_t& out, int depth = 0) {
  using K = syntax::SizeExpr::Kind;
  constexpr int64_t kBound = int64_t{1} << 40;
  if (depth > 200) return false;
  switch (e.kind) {
    case K::Num:
      out = e.num;
      return true;
    case K::Sym:
      if (e.sym == "wave")
        out = c.wave;
      else if (e.sym == "simd")
        out = c.simd_width();
      else if (e.sym == "warps")
        out = c.warps;
      else if (e.sym == "workgroups")
        out = c.workgroups;
      else if (e.sym == "threads")
        out = static_cast<int64_t>(c.threads());
      else
        return false;
      return true;
    case K::Neg:
      if (!e.lhs || !eval_size(*e.lhs, c, out, depth + 1)) return false;
      out = -out;
      return true;
    default:
      break;
  }
  int64_t l = 0, r = 0;
  if (!e.lhs || !e.rhs || !eval_size(*e.lhs, c, l, depth + 1) ||
      !eval_size(*e.rhs, c, r, depth + 1))
    return false;
  if (e.kind == K::Add)
    out = l + r;
  else if (e.kind == K::Sub)
    out = l - r;
  else {
    if (l != 0 && (r > kBound / (l < 0 ? -l : l) || r < -kBound / (l < 0 ? -l : l))) return false;
    out = l * r;
  }
  return out >= -kBound && out <= kBound;
}

void put(std::vector<uint8_t>& bytes, size_t index, uint32_t size, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  for (uint32_t i = 0; i < size; ++i) bytes[index * size + i] = static_cast<uint8_t>(u >> (8 * i));
}

}  // namespace

std::vector<BufferLayout> layout_buffers(const syntax::Program& p, const LaunchConfig& cfg,
                                         syntax::Diagnostics& d) {
  std::vector<BufferLayout> out;
  uint64_t total = 0;
  for (const auto& b : p.buffers) {
    BufferLayout L;
    L.name = b.name;
    L.type = b.type;
    L.mode = b.mode;
    const uint32_t es = syntax::elem_size(b.type);
    int64_t count = 0;
    if (!eval_size(b.count, cfg, count) || count < 0 ||
        static_cast<uint64_t>(count) * es > kMaxBufferBytes) {
      d.add(DiagKind::Config, b.span,
            "buffer '" + b.name + "' has a size that is negative or over " +
                std::to_string(kMaxBufferBytes >> 20) + " MiB in this launch configuration");
      continue;
    }
    total += static_cast<uint64_t>(count) * es;
    if (total > kMaxBufferBytes) {
      d.add(DiagKind::Config, b.span,
            "buffers exceed " + std::to_string(kMaxBufferBytes >> 20) + " MiB in total");
      continue;
    }
    L.count = static_cast<uint32_t>(count);
    L.bytes = L.count * es;
    L.init.assign(L.bytes, 0);
    // syntax.buffer.init: values must fit the element type (signed or unsigned).
    const int64_t lo =
        es == 4 ? std::numeric_limits<int32_t>::min() : -(int64_t{1} << (8 * es - 1));
    const int64_t hi =
        es == 4 ? std::numeric_limits<uint32_t>::max() : (int64_t{1} << (8 * es)) - 1;
    using K = syntax::BufferInit::Kind;
    auto fits = [&](int64_t v) {
      if (v >= lo && v <= hi) return true;
      d.add(DiagKind::Config, b.span,
            "initial value " + std::to_string(v) + " does not fit " +
                std::string(syntax::elem_type_name(b.type)) + " in buffer '" + b.name + "'");
      return false;
    };
    switch (b.init.kind) {
      case K::Zero:
        break;
      case K::List:
        if (b.init.values.size() > L.count) {
          d.add(DiagKind::Config, b.span,
                "buffer '" + b.name + "' has " + std::to_string(b.init.values.size()) +
                    " initial values but only " + std::to_string(L.count) + " elements");
          continue;
        }
        for (size_t i = 0; i < b.init.values.size(); ++i) {
          if (!fits(b.init.values[i])) break;
          put(L.init, i, es, b.init.values[i]);
        }
        break;
      case K::Fill:
        if (b.init.values.size() != 1 || !fits(b.init.values[0])) break;
        for (size_t i = 0; i < L.count; ++i) put(L.init, i, es, b.init.values[0]);
        break;
      case K::Iota: {
        if (b.init.values.size() != 2) break;
        // Wraps modulo the element width, like a store of each value.
        uint64_t v = static_cast<uint64_t>(b.init.values[0]);
        const uint64_t step = static_cast<uint64_t>(b.init.values[1]);
        for (size_t i = 0; i < L.count; ++i, v += step) put(L.init, i, es, static_cast<int64_t>(v));
        break;
      }
    }
    out.push_back(std::move(L));
  }
  return out;
}

namespace {

// The i-th source operand slot of an instruction, in operand order.
Src& source(Insn& in, int i) {
  return i == 0 ? in.a : i == 1 ? in.b : in.c;
}

Src to_src(const syntax::Value& v) {
  Src s;
  switch (v.file) {
    case RegFile::V:
      s.kind = SrcKind::VReg;
      s.index = v.index;
      break;
    case RegFile::S:
      s.kind = SrcKind::SReg;
      s.index = v.index;
      break;
    case RegFile::Imm:
      s.kind = SrcKind::Imm;
      s.imm = static_cast<uint32_t>(v.imm);
      break;
    case RegFile::Special:
      s.kind = static_cast<isa::Special>(v.index) == isa::Special::Lane ? SrcKind::LaneId
                                                                        : SrcKind::Special;
      s.index = v.index;
      break;
    default:
      s.kind = SrcKind::None;
      break;
  }
  return s;
}

// trap.host: the host script against the program and its configuration. Each
// error is located where the action was written.
bool resolve_host(const syntax::Program& ex, const LaunchConfig& cfg,
                  const std::unordered_map<std::string, uint32_t>& labels,
                  const std::vector<syntax::HostStep>& host, std::vector<HostAction>& out,
                  syntax::Diagnostics& d) {
  bool ok = true;
  auto err = [&](const syntax::HostStep& h, const std::string& m) {
    d.add(DiagKind::Config, h.span, "host script: " + m, "trap.host", h.origin);
    ok = false;
  };
  uint64_t last = 0;
  for (const auto& h : host) {
    HostAction a;
    a.step = h.step;
    a.kind = h.kind;
    a.core = h.core;
    if (h.step >= cfg.max_steps)
      err(h, "step " + std::to_string(h.step) + " is at or past max_steps (" +
                 std::to_string(cfg.max_steps) + ")");
    if (h.step < last) err(h, "the actions' steps must not decrease");
    last = std::max(last, h.step);
    if (h.core != kAllCores && static_cast<uint32_t>(h.core) >= cfg.cores)
      err(h, "core " + std::to_string(h.core) + " is out of range: the launch has " +
                 std::to_string(cfg.cores) + " core" + (cfg.cores == 1 ? "" : "s"));
    switch (h.kind) {
      case HostKind::Interrupt:
        a.value = h.code;
        break;
      case HostKind::SingleStep:
        a.value = h.on ? 1 : 0;
        break;
      case HostKind::Resume:
        break;
      case HostKind::BindTba: {
        bool entry = ex.handler.value == h.name;
        for (const auto& e : ex.handler_entries) entry |= e.value == h.name;
        auto it = labels.find(h.name);
        if (it == labels.end())
          err(h, "undefined label '" + h.name + "'");
        else if (!entry)
          err(h, "label '" + h.name + "' is not a handler entry (.handler or .handler_entry)");
        else
          a.value = it->second;
        break;
      }
      case HostKind::Preempt:  // preempt.request
        a.flow = h.flow;
        if (!ex.sys_save.value || !ex.sys_restore.value)
          err(h, "preempt needs a system routine (.sys_save and .sys_restore)");
        break;
      case HostKind::BindVtable: {
        size_t i = 0;
        while (i < ex.vtables.size() && ex.vtables[i].name != h.name) ++i;
        if (i == ex.vtables.size())
          err(h, "no vector table named '" + h.name + "' (.vtable)");
        else
          a.value = static_cast<uint32_t>(i);
        break;
      }
    }
    out.push_back(a);
  }
  return ok;
}

// FNV-1a over everything that defines the launch: the printed instructions, the
// resolved labels, the buffers and the configuration.
uint64_t fingerprint(const Program& p) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto bytes = [&](const void* d, size_t n) {
    const auto* b = static_cast<const uint8_t*>(d);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  };
  auto u64 = [&](uint64_t v) { bytes(&v, sizeof v); };
  for (size_t i = 0; i < p.text.size(); ++i) {
    bytes(p.text[i].data(), p.text[i].size());
    u64(p.insns[i].target);
  }
  for (const auto& b : p.buffers) {
    bytes(b.name.data(), b.name.size());
    u64(static_cast<uint64_t>(b.type) | uint64_t{static_cast<uint8_t>(b.mode)} << 8);
    bytes(b.init.data(), b.init.size());
  }
  LaunchConfig c = p.config;  // every setting, simd as the width it means
  c.simd = c.simd_width();
#define SIMT_SETTING(name, ...) u64(setting_bits(c.name));
#include "exec/settings.def"
  u64(p.handler ? uint64_t{*p.handler} + 1 : 0);
  u64(p.shared_base);                // wave.shared
  for (const auto& t : p.vtables) {  // trap.vector
    u64(t.size());
    for (uint32_t e : t) u64(e);
  }
  for (const auto& a : p.host)  // trap.host
    for (uint64_t v :
         {a.step, uint64_t{static_cast<uint8_t>(a.kind)}, uint64_t{static_cast<uint32_t>(a.core)},
          uint64_t{a.value}, uint64_t{static_cast<uint8_t>(a.flow)}})
      u64(v);
  u64(p.sys_save ? uint64_t{*p.sys_save} + 1 : 0);  // preempt.routine
  u64(p.sys_restore ? uint64_t{*p.sys_restore} + 1 : 0);
  return h;
}

}  // namespace

std::optional<Program> predecode(const syntax::Program& ex, const LaunchConfig& cfg,
                                 std::vector<BufferLayout> buffers, syntax::Diagnostics& d,
                                 const std::vector<syntax::HostStep>& host) {
  Program prog;
  prog.config = cfg;
  prog.vregs_alloc = cfg.vregs;
  prog.sregs_alloc = cfg.sregs;
  prog.buffers = std::move(buffers);
  if (prog.buffers.size() != ex.buffers.size()) {
    d.add(DiagKind::Config, syntax::Span{}, "buffers were not laid out");
    return std::nullopt;
  }
  std::unordered_map<std::string, uint16_t> space;
  for (size_t i = 0; i < prog.buffers.size() && i < kSpaceSlm; ++i)
    space.emplace(prog.buffers[i].name, static_cast<uint16_t>(i));
  std::unordered_map<std::string, uint32_t> labels;
  uint32_t pc = 0;
  for (const auto& s : ex.stmts) {
    if (s.kind == StmtKind::Label)
      labels.emplace(s.label, pc);
    else if (s.kind == StmtKind::Instr)
      ++pc;
  }
  prog.insns.reserve(pc);
  prog.text.reserve(pc);
  prog.spans.reserve(pc);
  // preempt.routine: the system routine's entries.
  for (auto [dir, entry] :
       {std::pair{&ex.sys_save, &prog.sys_save}, std::pair{&ex.sys_restore, &prog.sys_restore}}) {
    if (!dir->value) continue;
    auto it = labels.find(*dir->value);
    if (it == labels.end()) {
      d.add(DiagKind::Invalid, dir->span, "undefined label '" + *dir->value + "'");
      return std::nullopt;
    }
    *entry = it->second;
  }
  if (ex.handler.value) {  // trap.install
    auto it = labels.find(*ex.handler.value);
    if (it == labels.end()) {
      d.add(DiagKind::Invalid, ex.handler.span, "undefined label '" + *ex.handler.value + "'");
      return std::nullopt;
    }
    prog.handler = it->second;
  }
  for (const auto& t : ex.vtables) {  // trap.vector
    auto& pcs = prog.vtables.emplace_back();
    for (const auto& l : t.labels) {
      auto it = labels.find(l);
      if (it == labels.end()) {
        d.add(DiagKind::Invalid, t.span, "undefined label '" + l + "'");
        return std::nullopt;
      }
      pcs.push_back(it->second);
    }
  }
  if (!resolve_host(ex, cfg, labels, host, prog.host, d)) return std::nullopt;
  // The executor indexes registers, predicates and buffers without checks; these
  // guards keep that safe whatever the validator was asked to skip.
  auto bad = [&](const syntax::Stmt& s, const std::string& m) {
    d.add(DiagKind::Invalid, s.span, m);
  };
  auto reg_ok = [&](const syntax::Value& v) {
    return !(v.file == RegFile::V && v.index >= cfg.vregs) &&
           !(v.file == RegFile::S && v.index >= cfg.sregs) &&
           !(v.file == RegFile::P && v.index >= isa::kNumPreds) &&
           !(v.file == RegFile::Special && v.index >= static_cast<uint32_t>(isa::Special::kCount));
  };
  for (const auto& s : ex.stmts) {
    if (s.kind == StmtKind::Label) continue;
    if (s.kind != StmtKind::Instr) {
      bad(s, "structured statement reached the predecoder");
      return std::nullopt;
    }
    const auto& info = isa::info(s.op);
    auto kinds = info.sig.view();
    if (s.operands.size() != kinds.size()) {
      bad(s, "wrong operand count");
      return std::nullopt;
    }
    Insn in;
    in.op = s.op;
    int srcs = 0, preds = 0;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const auto& o = s.operands[i];
      const bool write = kinds[i] == isa::OperandKind::Dst || kinds[i] == isa::OperandKind::VDst ||
                         kinds[i] == isa::OperandKind::SDst || kinds[i] == isa::OperandKind::PDst;
      // trap.regs: a read past .vregs/.sregs (the validator allows it in handler
      // code only) reads the zero register, one past the last, never written.
      syntax::Value v = o.value;
      if (!write && v.file == RegFile::V && v.index >= cfg.vregs && v.index < 256)
        v.index = cfg.vregs, prog.vregs_alloc = cfg.vregs + 1;
      if (!write && v.file == RegFile::S && v.index >= cfg.sregs && v.index < 256)
        v.index = cfg.sregs, prog.sregs_alloc = cfg.sregs + 1;
      if (!reg_ok(o.value) && !(v.file == RegFile::V && v.index == cfg.vregs) &&
          !(v.file == RegFile::S && v.index == cfg.sregs)) {
        bad(s, "register out of range");
        return std::nullopt;
      }
      switch (kinds[i]) {
        case isa::OperandKind::Dst:
        case isa::OperandKind::VDst:
        case isa::OperandKind::SDst:
        case isa::OperandKind::PDst:
          in.dst = o.value.index;
          in.dst_kind = o.value.file == RegFile::V         ? DstKind::V
                        : o.value.file == RegFile::S       ? DstKind::S
                        : o.value.file == RegFile::P       ? DstKind::P
                        : o.value.file == RegFile::Special ? DstKind::Special
                                                           : DstKind::None;
          if (in.dst_kind == DstKind::None ||
              (in.dst_kind == DstKind::Special &&
               (s.op != isa::Op::Mov ||
                !isa::special_info(static_cast<isa::Special>(o.value.index)).writable))) {
            bad(s, "destination cannot be written");
            return std::nullopt;
          }
          break;
        case isa::OperandKind::Src:
        case isa::OperandKind::VSrc:
        case isa::OperandKind::Lane:
          source(in, srcs++) = to_src(v);
          break;
        case isa::OperandKind::Pred:
          if (preds++ == 0) {
            in.pa = o.value.file == RegFile::PTrue ? isa::kPredTrue
                                                   : static_cast<uint8_t>(o.value.index);
            in.na = o.negate;
          } else {
            in.pb = o.value.file == RegFile::PTrue ? isa::kPredTrue
                                                   : static_cast<uint8_t>(o.value.index);
            in.nb = o.negate;
          }
          break;
        case isa::OperandKind::Mem: {
          if (o.name == "slm") {
            in.space = kSpaceSlm;
          } else {
            auto it = space.find(o.name);
            if (it == space.end()) {
              bad(s, "unknown buffer '" + o.name + "'");
              return std::nullopt;
            }
            in.space = it->second;
          }
          in.offset = static_cast<uint32_t>(o.offset);
          source(in, srcs++) = to_src(v);
          break;
        }
        case isa::OperandKind::Label: {
          auto it = labels.find(o.name);
          if (it == labels.end()) {
            bad(s, "undefined label '" + o.name + "'");
            return std::nullopt;
          }
          in.target = it->second;
          break;
        }
      }
    }
    // A scalar destination with a per-lane source would read lane data as uniform.
    if ((in.dst_kind == DstKind::S || in.dst_kind == DstKind::Special) &&
        info.family != isa::Family::ReadLane &&
        (in.a.per_lane() || in.b.per_lane() || in.c.per_lane())) {
      bad(s, "scalar destination with a per-lane source");
      return std::nullopt;
    }
    // The trap instructions read their operands once per warp (trap.sys, trap.frame.access).
    if (info.feature == isa::Feature::trap && (in.a.per_lane() || in.b.per_lane())) {
      bad(s, "per-lane operand of a trap instruction");
      return std::nullopt;
    }
    in.fn = select_handler(in);
    prog.insns.push_back(in);
    prog.text.push_back(text::print_stmt(s));
    prog.spans.push_back(s.span);
  }
  // wave.enter, wave.skip: subv.begin's target is the instruction after its
  // subv.end (wave.valid.pair guarantees one, not nested).
  std::vector<isa::Op> code;
  code.reserve(prog.insns.size());
  for (const Insn& in : prog.insns) code.push_back(in.op);
  const flow::Regions regions = flow::pair_regions(code);
  if (!regions.errors.empty()) {
    const flow::RegionError& e = regions.errors.front();
    switch (e.kind) {
      case flow::RegionError::Kind::Nested:
        d.add(DiagKind::Invalid, prog.spans[e.pc], "nested sub-vector region");
        break;
      case flow::RegionError::Kind::Unopened:
        d.add(DiagKind::Invalid, prog.spans[e.pc], "subv.end without subv.begin");
        break;
      case flow::RegionError::Kind::Unclosed:
        d.add(DiagKind::Invalid, prog.spans[e.pc], "subv.begin without subv.end");
        break;
    }
    return std::nullopt;
  }
  for (const flow::Region& r : regions.list) prog.insns[r.begin].target = r.end + 1;
  // wave.shared: registers at or above the base are shared (none without .vshared).
  prog.shared_base = ex.vshared.value ? *ex.vshared.value : prog.vregs_alloc;
  prog.fingerprint = fingerprint(prog);
  return prog;
}

}  // namespace simt::exec
