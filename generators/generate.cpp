#include "generate.h"

#include <algorithm>

namespace simt::gen {

namespace {

using rc::Gen;
namespace g = rc::gen;

// What a statement may be, where it is generated.
struct Ctx {
  Options o;
  int nregs = 1;
  bool in_loop = false;
  bool top = true;  // top level of main: exchanges allowed
  bool in_function = false;
  int nfunctions = 0;
  bool input = false;
  int depth = 0;  // nesting of if/loop
  int loops = 0;  // nesting of loops
};

Gen<Operand> operand(const Ctx& c) {
  return g::weightedOneOf<Operand>({
      {5, g::map(g::inRange(0, c.nregs),
                 [](int r) {
                   return Operand{Operand::K::Reg, r};
                 })},
      {3, g::map(g::weightedOneOf<int32_t>(
                     {{4, g::inRange<int32_t>(-8, 9)}, {1, g::arbitrary<int32_t>()}}),
                 [](int32_t v) {
                   return Operand{Operand::K::Imm, v};
                 })},
      {2, g::just(Operand{Operand::K::Lane, 0})},
  });
}

Gen<Cond> condition(const Ctx& c) {
  return g::exec([c] {
    Cond k;
    k.reuse = *g::weightedElement<bool>({{1, true}, {5, false}});
    k.cmp = *g::element<std::string>("cmp.lt", "cmp.eq", "cmp.ne", "cmp.le", "cmp.gt", "cmp.ge",
                                     "cmp.lt.u", "cmp.le.u", "cmp.gt.u", "cmp.ge.u");
    k.a = *operand(c);
    k.b = *operand(c);
    k.pred = *g::inRange(0, 4);
    k.negate = *g::weightedElement<bool>({{1, true}, {3, false}});
    return k;
  });
}

const std::vector<std::string>& alu_ops() {
  static const std::vector<std::string> ops = {
      "add",   "sub",   "mul",   "xor",     "and", "or",  "shl",  "shr", "sra",   "min", "max",
      "min.u", "max.u", "mulhi", "mulhi.u", "mov", "not", "popc", "div", "div.u", "rem", "rem.u"};
  return ops;
}

Gen<std::vector<Stmt>> body(Ctx c, int size);

Gen<Stmt> statement(Ctx c, int size) {
  return g::exec([c, size] {
    const Options& o = c.o;
    Stmt s;
    const bool nest = c.depth < std::min(kMaxDepth - 1, 1 + size / 25);
    std::vector<std::pair<uint32_t, Kind>> kinds = {
        {10, Kind::Alu},
        {3, Kind::Select},
        {c.input ? 2u : 0u, Kind::LoadInput},
        {2, Kind::StoreScratch},
        {2, Kind::LoadScratch},
        {nest ? 5u : 0u, Kind::If},
        {nest ? 3u : 0u, Kind::Loop},
        {c.in_loop ? 2u : 0u, Kind::Break},
        {c.in_loop ? 2u : 0u, Kind::Continue},
        {o.exits && c.depth > 0 ? 1u : 0u, Kind::Exit},
        {o.calls && !c.in_function && c.nfunctions > 0 ? 2u : 0u, Kind::Call},
    };
    if (o.communicate) {
      kinds.insert(kinds.end(), {{2, Kind::Shfl},
                                 {2, Kind::ShflXor},
                                 {2, Kind::ReadLane},
                                 {1, Kind::Ballot},
                                 {1, Kind::Vote},
                                 {1, Kind::SharedStore},
                                 {1, Kind::SharedLoad},
                                 {c.top && !c.in_function ? 2u : 0u, Kind::Exchange}});
    }
    // A weighted choice that shrinks towards the first kinds (plain ALU operations).
    uint32_t total = 0;
    for (const auto& k : kinds) total += k.first;
    uint32_t r = *g::inRange<uint32_t>(0, total);
    for (const auto& k : kinds) {
      if (r < k.first) {
        s.kind = k.second;
        break;
      }
      r -= k.first;
    }
    s.dst = *g::inRange(0, c.nregs);
    s.a = *operand(c);
    s.b = *operand(c);
    switch (s.kind) {
      case Kind::Alu:
        s.op = *g::elementOf(alu_ops());
        break;
      case Kind::Select:
      case Kind::Break:
      case Kind::Continue:
      case Kind::Exit:
      case Kind::Ballot:
        s.cond = *condition(c);
        break;
      case Kind::Vote:
        s.cond = *condition(c);
        s.op = *g::element<std::string>("vote.any", "vote.all");
        break;
      case Kind::StoreScratch:
      case Kind::LoadScratch:
        s.slot = *g::inRange(0, kScratchSlots);
        break;
      case Kind::Call:
        s.slot = *g::inRange(0, std::max(1, c.nfunctions));
        break;
      case Kind::ReadLane: {
        const uint32_t widest =
            c.o.waves.empty() ? 64 : *std::max_element(c.o.waves.begin(), c.o.waves.end());
        s.slot = *g::inRange<int>(0, static_cast<int>(widest) + 2);
        break;
      }
      case Kind::ShflXor:
        s.slot = *g::inRange(0, 64);
        break;
      case Kind::SharedStore:
      case Kind::SharedLoad:
        s.slot = *g::inRange(0, 2);
        break;
      case Kind::If: {
        s.cond = *condition(c);
        Ctx inner = c;
        inner.depth += 1;
        inner.top = false;
        s.body = *body(inner, size / 2);
        s.has_else = *g::arbitrary<bool>();
        if (s.has_else) s.other = *body(inner, size / 2);
        break;
      }
      case Kind::Loop: {
        Ctx inner = c;
        inner.depth += 1;
        inner.loops += 1;
        inner.in_loop = true;
        inner.top = false;
        s.limit_reg = *g::arbitrary<bool>();
        s.limit = *g::inRange(0, 5);
        s.body = *body(inner, size / 2);
        break;
      }
      default:
        break;
    }
    return s;
  });
}

// Choices inside a statement are made at the nominal size, so they are uniform
// whatever the program's size; the size only scales lengths and nesting.
Gen<std::vector<Stmt>> body(Ctx c, int size) {
  int max_len = std::clamp(size / 6, 1, 10);
  return g::resize(
      max_len, g::container<std::vector<Stmt>>(g::resize(rc::kNominalSize, statement(c, size))));
}

}  // namespace

Options options_for(const std::string& invariant, const runners::Capabilities* caps) {
  const Invariant* inv = find_invariant(invariant);
  return inv ? options_for(*inv, caps) : Options{};
}

Options options_for(const Invariant& invariant, const runners::Capabilities* caps) {
  Options o;
  o.communicate = invariant.communicating;
  o.small_mask_depth = invariant.small_mask_depth;
  if (caps) {
    // The printer runs every program with SIMD width = wave.
    std::vector<uint32_t> waves;
    for (uint32_t w : o.waves)
      if (caps->waves.count(w) && caps->simds.count(w)) waves.push_back(w);
    if (!waves.empty()) o.waves = waves;  // else every program is unsupported, and says so
    o.max_warps = std::clamp<uint32_t>(caps->max_warps, 1, o.max_warps);
    o.multi_warp = o.max_warps > 1;
    o.random_policy = caps->policies.count("random") > 0;
    o.communicate = o.communicate && caps->features.count("xlane") && caps->features.count("mem") &&
                    caps->features.count("bar");
  }
  return o;
}

rc::Gen<Program> program(const Options& o) {
  return g::withSize([o](int size) {
    return g::resize(
        rc::kNominalSize, g::exec([o, size] {
          Program p;
          p.wave = o.waves.empty() ? 32 : *g::elementOf(o.waves);
          if (o.multi_warp) {
            // Counts above max_warps get weight 0 (never chosen).
            auto w = [&](size_t weight, uint32_t total) {
              return total <= o.max_warps ? weight : 0;
            };
            p.warps = *g::weightedElement<uint32_t>(
                {{w(4, 1), 1}, {w(2, 2), 2}, {w(1, 3), 3}, {w(2, 4), 4}});
            p.workgroups =
                *g::weightedElement<uint32_t>({{w(4, p.warps), 1}, {w(1, 2 * p.warps), 2}});
          }
          if (o.random_policy && *g::weightedElement<bool>({{3, false}, {1, true}})) {
            p.policy = "random";
            p.seed = *g::inRange<uint64_t>(0, 1000);
          }
          if (o.small_mask_depth && *g::weightedElement<bool>({{3, false}, {1, true}}))
            p.mask_depth = *g::inRange<uint32_t>(1, 5);
          p.nregs = *g::inRange(1, kMaxData + 1);
          if (*g::arbitrary<bool>()) {
            p.input = *g::container<std::vector<uint32_t>>(
                p.threads(), g::weightedOneOf<uint32_t>({{3, g::inRange<uint32_t>(0, 16)},
                                                         {1, g::arbitrary<uint32_t>()}}));
          }
          int nfunctions = o.calls ? *g::inRange(0, 3) : 0;
          Ctx c;
          c.o = o;
          c.nregs = p.nregs;
          c.input = !p.input.empty();
          c.nfunctions = nfunctions;
          for (int f = 0; f < nfunctions; ++f) {
            Ctx fc = c;
            fc.in_function = true;
            fc.top = false;
            p.functions.push_back(*body(fc, size / 2));
          }
          p.main = *body(c, size);
          return p;
        }));
  });
}

}  // namespace simt::gen
