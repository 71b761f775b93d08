// ci: not sanitized: modesel over every suite program: a semantic sweep (release build)
// wave.modesel over the conformance suite: every program of suites/**/*.simt,
// transformed by `modesel` at threshold 0 (every segment that needs a register
// goes into a group) with the switch and duplicate strategies, still passes its
// test's expectations on the reference. Each configuration of a test's matrix is
// transformed and run on its own (the pass works for one launch shape), as it is
// and, for programs that leave the SIMD width to the launch, at simd = wave / 2
// and wave / 4 too, so that groups run in two and four parts (the original is run
// at that shape as well: the transformed program must pass where it passes), unless
// the program raises events.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "passes/modesel.h"
#include "reference.h"
#include "support.h"
#include "text/printer.h"

namespace simt {
namespace {

// A handler that reads or writes a frame's resume PC or exec words (trap.frame:
// offsets 0, 4 and 8) sees the code's layout and the part a pass runs, which the
// pass changes by design: such programs are outside what it preserves.
bool reads_frame_layout(const syntax::Program& p) {
  for (const auto& s : p.stmts) {
    if (s.kind != syntax::StmtKind::Instr) continue;
    const syntax::Operand* off = s.op == isa::Op::FrameLd   ? &s.operands.at(1)
                                 : s.op == isa::Op::FrameSt ? &s.operands.at(0)
                                                            : nullptr;
    if (off && (off->value.file != syntax::RegFile::Imm || off->value.imm <= 8)) return true;
  }
  return false;
}

enum class Verdict { None, Unchanged, Refused, Layout, Changed };

struct Tally {
  size_t changed = 0, refused = 0, unchanged = 0, rejected = 0, unvalidated = 0, layout = 0;
  std::map<std::string, size_t> refusals;  // clause -> number of files
};

constexpr const char* kOrig = "#orig";
constexpr const char* kTransformed = "#modesel";

void run_suite_through(passes::Strategy strategy, const char* name) {
  std::string err;
  auto files = harness::discover({test::source_path("suites")}, err);
  ASSERT_TRUE(err.empty()) << err;
  auto suite = harness::load_suite(files);
  harness::Suite runs;
  Tally tally;
  for (const auto& t : suite.tests) {
    if (t.expect.status == "rejected") {
      ++tally.rejected;
      continue;
    }
    if (!t.validate) {  // the pass works on valid programs
      ++tally.unvalidated;
      continue;
    }
    Verdict verdict = Verdict::None;
    std::set<std::string> clauses;
    auto load = [&](const harness::Settings& c) {
      host::LoadOptions opt = runners::load_options(c.request());
      opt.host = t.host;
      return host::load(t.source, opt);
    };
    for (const auto& c : t.configs) {
      auto first = load(c);
      if (!first.loaded) continue;
      std::vector<harness::Settings> shapes{c};
      const uint32_t wave = first.loaded->config.wave;
      // wave.modesel.model: an event raised in a group interrupts the wave at a
      // different point once the group runs part by part (the earlier parts have run
      // all of it, the later ones nothing): programs that raise events (a trapped
      // status, or a handler that takes them) are compared at one part only.
      const auto& ast = first.loaded->ast;
      const bool events = t.expect.status == "trapped" || t.expect.status == "paused" ||
                          ast.handler.value || !ast.handler_entries.empty();
      if (first.loaded->config.simd_width() == wave && !events)
        for (uint32_t k : {2u, 4u})
          if (wave % k == 0) {
            harness::Settings s = c;
            s.simd = wave / k;
            shapes.push_back(s);
          }
      for (const auto& s : shapes) {
        auto loaded = load(s);
        if (!loaded.loaded) continue;
        auto r = passes::modesel(loaded.loaded->ast, loaded.loaded->config, 0, strategy);
        if (!r.program) {
          verdict = std::max(verdict, Verdict::Refused);
          for (const auto& d : r.diags.list()) clauses.insert(d.clause);
          continue;
        }
        if (*r.program == loaded.loaded->ast) {
          verdict = std::max(verdict, Verdict::Unchanged);
          continue;
        }
        if (reads_frame_layout(loaded.loaded->ast)) {
          verdict = std::max(verdict, Verdict::Layout);
          continue;
        }
        verdict = Verdict::Changed;
        harness::TestFile orig = t;
        orig.id += kOrig;
        orig.configs = {s};
        // The pass moves instructions: an event's PC is not compared.
        std::erase_if(orig.expect.event_fields,
                      [](const harness::EventField& f) { return f.key == "pc"; });
        harness::TestFile copy = orig;
        copy.id = t.id + kTransformed;
        copy.source = text::print(*r.program);
        // wave.modesel.output: the output validates, and the pass changes nothing in it.
        host::LoadOptions opt = runners::load_options(s.request());
        opt.host = t.host;
        auto again = host::load(copy.source, opt);
        if (!again.loaded) {
          ADD_FAILURE() << name << ": " << t.path << ": the output does not load:\n"
                        << again.diags.format("output") << copy.source;
          continue;
        }
        auto r2 = passes::modesel(again.loaded->ast, again.loaded->config, 0, strategy);
        EXPECT_TRUE(r2.program && *r2.program == again.loaded->ast)
            << name << ": " << t.path << ": not idempotent:\n"
            << copy.source << "\nbecomes\n"
            << (r2.program ? text::print(*r2.program) : r2.diags.format("output"));
        if (s.simd != c.simd) runs.tests.push_back(std::move(orig));
        runs.tests.push_back(std::move(copy));
      }
    }
    switch (verdict) {
      case Verdict::Changed:
        ++tally.changed;
        break;
      case Verdict::Refused:
        ++tally.refused;
        for (const auto& cl : clauses) ++tally.refusals[cl];
        break;
      case Verdict::Unchanged:
        ++tally.unchanged;
        break;
      case Verdict::Layout:
        ++tally.layout;
        break;
      case Verdict::None:
        break;
    }
  }
  std::cout << name << ": " << suite.tests.size() << " suite files: " << tally.changed
            << " changed, " << tally.refused << " refused, " << tally.unchanged
            << " unchanged; not run: " << tally.rejected << " rejected tests, " << tally.unvalidated
            << " run without validation, " << tally.layout << " reading a frame's PC or exec\n";
  for (const auto& [clause, n] : tally.refusals)
    std::cout << "  files refused by " << clause << ": " << n << "\n";
  // id without its suffix and config key -> status, per variant.
  std::map<std::string, std::string> orig, transformed;
  std::map<std::string, std::string> failure;
  auto runner = runners::make_reference_runner();
  test::run_suite(*runner, runs, [&](const json::Value& rec) {
    std::string id = rec.find("id")->as_string();
    const bool is_orig = id.ends_with(kOrig);
    id.resize(id.size() - (is_orig ? std::string(kOrig) : std::string(kTransformed)).size());
    const std::string key = id + " @" + rec.find("config_key")->as_string();
    const std::string status = rec.find("status")->as_string();
    (is_orig ? orig : transformed)[key] = status;
    if (!is_orig && status != "pass") {
      const json::Value* msg = rec.find("message");
      failure[key] =
          status + ": " + (msg ? msg->as_string() : "") + "\n" + rec.find("source")->as_string();
    }
  });
  size_t pass = 0, skipped = 0;
  for (const auto& [key, status] : transformed) {
    auto o = orig.find(key);
    if (o != orig.end() && o->second != "pass") {
      ++skipped;  // the program itself does not pass at this shape (it reads %simd)
      continue;
    }
    if (status == "pass")
      ++pass;
    else
      ADD_FAILURE() << name << ": " << key << ": " << failure[key];
  }
  std::cout << name << ": " << pass << " of " << transformed.size()
            << " transformed configurations pass (" << skipped
            << " not compared: the original fails at that SIMD width)\n";
  EXPECT_GT(tally.changed, 80u);
  EXPECT_GT(pass, 1000u);
}

TEST(ModeselSuite, SwitchAtThreshold0KeepsEveryExpectation) {
  run_suite_through(passes::Strategy::Switch, "switch");
}

TEST(ModeselSuite, DuplicateAtThreshold0KeepsEveryExpectation) {
  run_suite_through(passes::Strategy::Duplicate, "duplicate");
}

}  // namespace
}  // namespace simt
