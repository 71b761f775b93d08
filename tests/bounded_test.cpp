// Hostile input stays linear: deep nesting through validation (valid.scope),
// printing (syntax.print.indent) and loading, and long TOML arrays and many TOML
// tables (format.toml). These tests count what the code does rather than time it:
// the bytes it allocates (this program replaces the global operator new to count
// them) and the bytes it prints. Where only time could grow faster than the input
// (a scan of a list per statement, a fixpoint over the call graph, toml11 scanning
// a value's whole line), the input is sized so that the quadratic code takes many
// minutes while the linear one takes seconds; the TIMEOUT that tests/CMakeLists.txt
// gives this program's tests (300 s) fails them. Each such test names what the
// quadratic code took on the build machine (2 shared cores, optimised build). Under
// a sanitizer those tests run a tenth of the size: they check the results there,
// the optimised build checks the time.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <variant>
#include <vector>

#include "format.h"
#include "host/host.h"
#include "host/toml_text.h"
#include "process.h"
#include "text/parser.h"
#include "text/printer.h"
#include "valid/valid.h"

// ---- counting allocations ----------------------------------------------------------
namespace {
bool g_counting = false;
int64_t g_live = 0, g_peak = 0;  // bytes, since counting began
}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  if (g_counting) {
    g_live += static_cast<int64_t>(malloc_usable_size(p));
    g_peak = std::max(g_peak, g_live);
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (p && g_counting) g_live -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  operator delete(p);
}

namespace simt {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kScale = 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kScale = 10;
#else
constexpr size_t kScale = 1;
#endif
#else
constexpr size_t kScale = 1;
#endif

// The most heap that `f` holds at once, beyond what was held before it ran.
template <typename F>
int64_t peak_bytes(F&& f) {
  g_live = g_peak = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_peak;
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

syntax::Program parse_ok(const std::string& text) {
  auto r = text::parse(text);
  EXPECT_TRUE(r.ok()) << r.diags.format("t");
  return std::move(r.program);
}

size_t instructions(const syntax::Program& p) {
  return static_cast<size_t>(std::count_if(p.stmts.begin(), p.stmts.end(), [](const auto& s) {
    return s.kind == syntax::StmtKind::Instr;
  }));
}

// valid.scope: the flow checks of N nested blocks hold a constant number of bytes
// per instruction. (They held each instruction's abstract stack as a string as
// long as the nesting: 20 000 nested ifs took 800 MB.)
TEST(Bounded, ValidatingDeepNestingHoldsLinearMemory) {
  constexpr size_t kDepth = 20000;
  const std::pair<std::string, std::string> blocks[] = {{"if p0\n", "endif\n"},
                                                        {"loop\nbreak p0\n", "endloop\n"}};
  for (const auto& [open, close] : blocks) {
    SCOPED_TRACE(open);
    const auto ast = parse_ok(".buffer o u32[wave] out\n" + repeat(open, kDepth) +
                              repeat(close, kDepth) + "exit\n");
    syntax::Diagnostics d;
    valid::check_structure(ast, d);
    ASSERT_TRUE(d.empty()) << d.format("t");
    const auto ex = valid::expand(ast);
    exec::LaunchConfig cfg;
    const int64_t bytes = peak_bytes([&] { valid::validate(ex, cfg, d); });
    EXPECT_LT(bytes, static_cast<int64_t>(200 * instructions(ex)))
        << bytes << " bytes for " << instructions(ex) << " instructions";
  }
}

// syntax.print.indent: printing N nested blocks writes a bounded number of bytes
// per statement (indentation stops growing at 32 blocks), and the text reads back.
TEST(Bounded, PrintingDeepNestingIsLinear) {
  constexpr size_t kDepth = 5000;
  const auto ast = parse_ok(repeat("if p0\nnop\n", kDepth) + repeat("else\nendif\n", kDepth) +
                            "loop\nbreak\nendloop\nexit\n");
  const std::string text = text::print(ast);
  EXPECT_LT(text.size(), 80 * ast.stmts.size());
  size_t widest = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    widest = std::max(widest, text.find_first_not_of(' ', at) - at);
    at = end + 1;
  }
  EXPECT_EQ(widest, 4u + 2 * 32);
  EXPECT_FALSE(text::roundtrip_problem(ast).has_value());
}

// The whole pipeline on a deep nesting (parse, structure, expansion, validation,
// predecoding) holds a bounded number of bytes per instruction.
TEST(Bounded, LoadingDeepNestingHoldsLinearMemory) {
  constexpr size_t kDepth = 20000;
  const std::string text = ".buffer o u32[wave] out\n.mask_depth 1024\n" +
                           repeat("if p0\nloop\nbreak p1\n", kDepth) +
                           repeat("endloop\nendif\n", kDepth) + "exit\n";
  host::LoadResult r;
  const int64_t bytes = peak_bytes([&] { r = host::load(text); });
  ASSERT_TRUE(r.loaded) << r.diags.format("t");
  const size_t n = r.loaded->program->size();
  EXPECT_LT(bytes, static_cast<int64_t>(1500 * n)) << bytes << " bytes for " << n;
}

// Loading a straight-line program: what one instruction costs, as written, expanded
// and predecoded (each `add v0, v0, 1` took 1365 bytes before the AST was packed).
TEST(Bounded, LoadingHoldsUnderAKilobytePerInstruction) {
  constexpr size_t kCount = 100000;
  const std::string text =
      ".buffer o u32[wave] out\n" + repeat("add v0, v0, 1\n", kCount) + "exit\n";
  host::LoadResult r;
  const int64_t bytes = peak_bytes([&] { r = host::load(text); });
  ASSERT_TRUE(r.loaded) << r.diags.format("t");
  EXPECT_LT(bytes, static_cast<int64_t>(1000 * kCount)) << bytes / kCount << " bytes each";
}

// valid.struct.loopctl: whether a loop is open is known without scanning the open
// blocks (it took a scan of every `if` below the loop for each `break`: over 300 s
// for 400 000 of each).
TEST(Bounded, BreaksBelowManyIfsAreLinear) {
  constexpr size_t kIfs = 600000 / kScale, kBreaks = 600000 / kScale;
  syntax::Program p;
  auto stmt = [&](syntax::StmtKind k) {
    syntax::Stmt s;
    s.kind = k;
    if (k == syntax::StmtKind::If) {
      syntax::Operand o;
      o.type = syntax::OperandType::Pred;
      o.value.file = syntax::RegFile::PTrue;
      s.operands.push_back(o);
    }
    p.stmts.push_back(std::move(s));
  };
  for (size_t i = 0; i < kIfs; ++i) stmt(syntax::StmtKind::If);
  stmt(syntax::StmtKind::Loop);
  for (size_t i = 0; i < kBreaks; ++i) stmt(syntax::StmtKind::Break);
  stmt(syntax::StmtKind::EndLoop);
  for (size_t i = 0; i < kIfs; ++i) stmt(syntax::StmtKind::EndIf);
  syntax::Diagnostics d;
  valid::check_structure(p, d);
  EXPECT_TRUE(d.empty()) << d.format("t");
}

// valid.mem.space: a memory operand's buffer is found without a scan of every
// declaration (over 300 s for 300 000 buffers and operands).
TEST(Bounded, ManyBuffersAreLinear) {
  constexpr size_t kBuffers = 400000 / kScale;
  std::string text;
  for (size_t i = 0; i < kBuffers; ++i) text += ".buffer b" + std::to_string(i) + " u8[1] out\n";
  for (size_t i = 0; i < kBuffers; ++i) text += "ld v0, b" + std::to_string(i) + "[0]\n";
  text += "exit\n";
  const auto ex = valid::expand(parse_ok(text));
  syntax::Diagnostics d;
  valid::validate(ex, exec::LaunchConfig{}, d);
  EXPECT_TRUE(d.empty()) << d.format("t");
}

// trap.valid.mode: a chain of functions called in the reverse of the order they are
// found, which a fixpoint over all the contexts took one round per function to mark
// as handler code (over 300 s for 200 000 functions).
TEST(Bounded, ALongCallChainIsLinear) {
  constexpr size_t kFunctions = 300000 / kScale;
  // main calls f0 .. f{n-1} in order, so they are found in that order; f{i} calls
  // f{i-1}; handler code calls the last: it reaches them from the last down.
  std::string text = ".handler h\n";
  for (size_t i = 0; i < 1000; ++i) text += ".handler_entry e" + std::to_string(i) + "\n";
  for (size_t i = 0; i < kFunctions; ++i) text += "call f" + std::to_string(i) + "\n";
  text += "exit\nh:\ncall f" + std::to_string(kFunctions - 1) + "\ntret\n";
  for (size_t i = 0; i < 1000; ++i) text += "e" + std::to_string(i) + ":\ntret\n";
  for (size_t i = 0; i < kFunctions; ++i) {
    text += "f" + std::to_string(i) + ":\n";
    if (i > 0) text += "call f" + std::to_string(i - 1) + "\n";
    text += "ret\n";
  }
  const auto ex = valid::expand(parse_ok(text));
  syntax::Diagnostics d;
  valid::validate(ex, exec::LaunchConfig{}, d);
  // Every function is both user code and handler code (trap.valid.disjoint).
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.first().clause, "trap.valid.disjoint") << d.format("t");
  EXPECT_EQ(d.size(), syntax::Diagnostics::kMaxReported);
}

// trap.vector: every vcall calls every vector-table entry, which a context notes
// once, not once per vcall.
TEST(Bounded, ManyVcallsHoldLinearMemory) {
  constexpr size_t kEntries = 3000;
  std::string text = ".vtable t";
  for (size_t i = 0; i < kEntries; ++i) text += (i ? ", f" : " f") + std::to_string(i);
  text += "\n" + repeat("vcall s0\n", kEntries) + "exit\n";
  for (size_t i = 0; i < kEntries; ++i) text += "f" + std::to_string(i) + ":\nvcall s0\nret\n";
  const auto ex = valid::expand(parse_ok(text));
  syntax::Diagnostics d;
  const int64_t bytes = peak_bytes([&] { valid::validate(ex, exec::LaunchConfig{}, d); });
  EXPECT_TRUE(d.empty()) << d.format("t");
  EXPECT_LT(bytes, static_cast<int64_t>(2000 * instructions(ex))) << bytes;
}

// format.toml: an array of 600 000 numbers on one line (toml11 scanned the whole
// line for each element: over 300 s for 300 000), in a test header and in a launch
// configuration.
TEST(Bounded, LongOneLineTomlArraysAreLinear) {
  constexpr size_t kCount = 600000 / kScale;
  std::string values = "values = [" + repeat("7, ", kCount - 1) + "7]";
  const std::string test =
      "; simtspec-test 1\n; id = \"x.y\"\n; title = \"t\"\n"
      "; clauses = [\"branch.call\"]\n; features = [\"mem\"]\n"
      "; [expect]\n; status = \"completed\"\n; [expect.buffers.o]\n; " +
      values + "\n.buffer o u32[wave] out\nexit\n";
  auto r = harness::parse_test("big.simt", test);
  ASSERT_TRUE(std::holds_alternative<harness::TestFile>(r));
  const auto& t = std::get<harness::TestFile>(r);
  ASSERT_EQ(t.expect.buffers.size(), 1u);
  ASSERT_EQ(t.expect.buffers[0].values->size(), kCount);
  host::Overrides o;
  auto e = host::parse_config_toml("[launch]\n" + values + "\nwave = 8\n", "c.toml", o);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, "c.toml:2: unknown key 'values' in [launch]");
}

// format.toml, trap.host.toml: 100 000 [[host]] tables after 8 MB of comments (each
// step's line was found by counting the lines of the text before it: 274 s for
// half of each).
TEST(Bounded, ManyHostTablesAreLinear) {
  constexpr size_t kSteps = 100000 / kScale, kComments = 80000 / kScale;
  std::string text = repeat("#" + std::string(99, '-') + "\n", kComments);
  for (size_t i = 0; i < kSteps; ++i)
    text += "[[host]]\nstep = " + std::to_string(i) + "\naction = \"resume\"\n";
  std::vector<syntax::HostStep> steps;
  auto e = host::parse_host_toml(text, "h.toml", steps);
  ASSERT_FALSE(e.has_value()) << *e;
  ASSERT_EQ(steps.size(), kSteps);
  EXPECT_EQ(steps.back().span.line, kComments + 3 * kSteps - 2);
}

// format.toml, runner.toml: 400 000 xfail patterns on one line (over 300 s for
// 200 000).
TEST(Bounded, LongXfailListIsLinear) {
  constexpr size_t kCount = 400000 / kScale;
  std::string list;
  for (size_t i = 0; i < kCount; ++i) list += (i ? ", \"t." : "\"t.") + std::to_string(i) + "\"";
  const std::string text = "name = \"x\"\ncommand = \"/bin/true\"\nxfail = [" + list +
                           "]\n[capabilities]\nwaves = [32]\nfeatures = [\"alu\"]\n";
  auto r = runners::parse_process_spec(text, "r.toml");
  ASSERT_TRUE(std::holds_alternative<runners::ProcessSpec>(r)) << std::get<std::string>(r);
  EXPECT_EQ(std::get<runners::ProcessSpec>(r).xfail.size(), kCount);
  // A value after the long line keeps its own line (toml11 reads the array with a
  // line break after each comma: its lines are not the file's).
  r = runners::parse_process_spec(
      "name = \"x\"\ncommand = \"/bin/true\"\nxfail = [" + list + "]\ntimeout = \"x\"\n", "r.toml");
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r), "r.toml:4: 'timeout' must be a number of seconds");
}

}  // namespace
}  // namespace simt
