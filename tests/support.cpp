#include "support.h"

#include <sys/wait.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "fuzz.h"
#include "lint.h"
#include "process.h"
#include "reference.h"
#include "text/parser.h"

namespace simt::exec {
void PrintTo(Status s, std::ostream* os) {
  *os << status_name(s);
}
}  // namespace simt::exec

namespace simt::test {

host::LoadResult load(std::string_view text, host::LoadOptions opt) {
  return host::load(text, opt);
}

Run run(std::string_view text, host::LoadOptions opt) {
  Run r;
  auto loaded = host::load(text, opt);
  if (!loaded.loaded) {
    r.diags = loaded.diags.format("test");
    return r;
  }
  r.program = loaded.loaded->program;
  exec::Machine m(r.program);
  r.outcome = m.run();
  return r;
}

Run run_unvalidated(std::string_view text) {
  host::LoadOptions opt;
  opt.validate_flow = false;
  return run(text, opt);
}

std::shared_ptr<const exec::Program> build(std::string_view text, host::LoadOptions opt) {
  auto r = host::load(text, opt);
  if (!r.loaded) {
    ADD_FAILURE() << "program did not load:\n" << r.diags.format("test") << "\n" << text;
    return nullptr;
  }
  return r.loaded->program;
}

exec::Outcome outcome(std::string_view text, host::LoadOptions opt) {
  auto prog = build(text, opt);
  if (!prog) return {};
  exec::Machine m(prog);
  return m.run();
}

exec::Outcome outcome_unvalidated(std::string_view text) {
  host::LoadOptions opt;
  opt.validate_flow = false;
  return outcome(text, opt);
}

std::vector<uint32_t> words(const exec::Outcome& o, std::string_view buffer) {
  if (auto w = o.words(buffer)) return *w;
  ADD_FAILURE() << "no output buffer named " << buffer;
  return {};
}

std::string source_path(std::string_view relative) {
  return std::string(SIMT_SOURCE_DIR) + "/" + std::string(relative);
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_all(const std::filesystem::path& p, std::string_view text) {
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::vector<syntax::Diagnostic> parse_errors(std::string_view src) {
  auto r = text::parse(src);
  std::vector<syntax::Diagnostic> out = r.diags.list();
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.span.line != b.span.line ? a.span.line < b.span.line : a.span.col < b.span.col;
  });
  return out;
}

std::string show(const std::vector<syntax::Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += syntax::format_diag("t", d) + "\n";
  return s;
}

void expect_syntax_error(std::string_view src, uint32_t line, uint32_t col,
                         std::string_view substr) {
  SCOPED_TRACE(testing::Message() << "source: " << testing::PrintToString(std::string(src)));
  auto ds = parse_errors(src);
  ASSERT_EQ(ds.size(), 1u) << show(ds);
  EXPECT_EQ(ds[0].kind, syntax::DiagKind::Syntax);
  EXPECT_EQ(ds[0].span.line, line) << show(ds);
  EXPECT_EQ(ds[0].span.col, col) << show(ds);
  EXPECT_NE(ds[0].message.find(substr), std::string::npos)
      << "message: " << ds[0].message << "\nexpected to contain: " << substr;
}

syntax::SizeExpr num(int64_t n) {
  syntax::SizeExpr e;
  e.kind = syntax::SizeExpr::Kind::Num;
  e.num = n;
  return e;
}
syntax::SizeExpr sym(std::string s) {
  syntax::SizeExpr e;
  e.kind = syntax::SizeExpr::Kind::Sym;
  e.sym = std::move(s);
  return e;
}
syntax::SizeExpr bin(syntax::SizeExpr::Kind k, syntax::SizeExpr l, syntax::SizeExpr r) {
  syntax::SizeExpr e;
  e.kind = k;
  e.lhs = std::make_shared<syntax::SizeExpr>(std::move(l));
  e.rhs = std::make_shared<syntax::SizeExpr>(std::move(r));
  return e;
}

syntax::SizeExpr neg(syntax::SizeExpr x) {
  syntax::SizeExpr e;
  e.kind = syntax::SizeExpr::Kind::Neg;
  e.lhs = std::make_shared<syntax::SizeExpr>(std::move(x));
  return e;
}

const char* const kSignedCompareTest = R"(; simtspec-test 1
; id = "demo.cmp_signed"
; title = "signed compare"
; clauses = ["alu.cmp"]
; features = ["alu"]
; [matrix]
; wave = [8, 64]
; [expect]
; status = "completed"
; [expect.buffers.out]
; each = "lane < 4 ? 1 : 0"
.buffer out u32[threads] out
    shl v9, %lane, 2
    sub v1, %lane, 4
    cmp.lt p0, v1, 0
    sel v2, p0, 1, 0
    st out[v9], v2
    exit
)";

const char* const kRunawayTest = R"(; simtspec-test 1
; id = "demo.runaway"
; title = "a counter loop with no step cap to speak of"
; clauses = ["exec.status.step_limit"]
; features = ["alu", "branch"]
; [expect]
; status = "step_limit"
.wave 1
.max_steps 18446744073709551615
l:  add s0, s0, 1
    jmp l
)";

std::string faulty_runner_toml(std::string_view fault, double timeout) {
  const std::string f(fault);
  return "name = \"faulty-" + f + "\"\ncommand = \"" + std::string(SIMT_BINARY_DIR) +
         "/simtspec-faulty\"\nargs = [\"--fault\", \"" + f +
         "\"]\ntimeout = " + std::to_string(timeout) +
         "\n[capabilities]\nwaves = [1, 2, 4, 8, 16, 32, 64]\n"
         "policies = [\"round_robin\", \"lowest_pc_first\", \"oldest_first\", \"random\"]\n"
         "features = [\"alu\", \"mem\", \"xlane\", \"bar\", \"branch\", \"watomic\", \"trap\", "
         "\"wave\", \"preempt\"]\n"
         "extras = [\"validate\", \"livelock\", \"trace\", \"no_validate\", \"host\", "
         "\"preempt.image\"]\n";
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CommandResult run_command(const std::string& program, const std::string& args,
                          const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = "timeout " + std::to_string(kCommandBoundSeconds) + " " +
                          shell_quote(program) + " " + args + " >" + shell_quote(out.string()) +
                          " 2>" + shell_quote(err.string()) + " </dev/null";
  const int st = std::system(cmd.c_str());
  CommandResult r;
  r.exited = st != -1 && WIFEXITED(st);
  r.code = r.exited ? WEXITSTATUS(st) : -1;
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

void expect_lints(const harness::Suite& suite) {
  auto issues = harness::lint(suite, harness::load_clauses(source_path("spec")));
  for (const auto& i : issues) ADD_FAILURE() << i.file << ":" << i.line << ": " << i.message;
}

harness::Summary run_suite(runners::Runner& runner, const harness::Suite& suite,
                           const std::function<void(const json::Value&)>& each) {
  harness::Options o;
  return harness::run(runner, suite, harness::select(suite, o), o, [&](const reports::Record& r) {
    if (each) each(reports::to_json(r));
  });
}

}  // namespace simt::test

namespace simt::test {

gen::Check check(const std::string& invariant, const gen::Program& p, uint64_t seed,
                 runners::Runner* runner) {
  gen::OracleContext ctx;
  ctx.seed = seed;
  ctx.runner = runner;
  return gen::find_invariant(invariant)->check(p, gen::print(p), ctx);
}

std::unique_ptr<runners::Runner> faulty_runner(const std::string& fault, double timeout) {
  auto spec = runners::parse_process_spec(faulty_runner_toml(fault, timeout), fault + ".toml");
  EXPECT_TRUE(std::holds_alternative<runners::ProcessSpec>(spec));
  return runners::make_process_runner(std::get<runners::ProcessSpec>(spec));
}

void fuzz_finds_fault(const std::string& invariant, const std::string& fault, FoundFault* out) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() /
                 ("simtspec_fault_" + invariant + "_" + fault + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto runner = faulty_runner(fault);
  gen::FuzzOptions o;
  o.invariants = {invariant};
  o.seed = 20261122;
  o.count = 3000;
  o.jobs = 2;
  o.runner = runner.get();
  o.runner_factory = [fault] { return faulty_runner(fault); };
  o.out_dir = dir.string();
  o.max_shrink_seconds = 60;
  std::string log;
  gen::FuzzResult r = gen::fuzz(o, [&](const std::string& l) { log += l + "\n"; });
  ASSERT_EQ(r.failures.size(), 1u) << fault << " was not found in " << r.programs << " programs\n"
                                   << log;
  const gen::FuzzFailure& f = r.failures[0];
  ASSERT_FALSE(f.file.empty()) << log;
  out->programs = r.programs;
  out->original_instructions = f.original_instructions;
  out->shrunk_instructions = f.shrunk_instructions;
  out->text = read_all(f.file);
  std::string err;
  auto suite = harness::load_suite(harness::discover({dir.string()}, err));
  ASSERT_EQ(suite.tests.size(), 1u)
      << (suite.bad.empty() ? "" : suite.bad.begin()->second[0].message);
  expect_lints(suite);
  auto reference_runner = runners::make_reference_runner();
  EXPECT_TRUE(run_suite(*reference_runner, suite).ok()) << out->text;
  auto on_fault = run_suite(*runner, suite);
  EXPECT_GT(on_fault.counts["fail"], 0u) << out->text;
  runner->shutdown();
  std::cout << invariant << ", " << fault << ": found after " << r.programs << " programs, "
            << f.original_instructions << " -> " << f.shrunk_instructions << " instructions\n";
  fs::remove_all(dir);
}

std::string fault_case_name(std::string_view invariant, std::string_view fault) {
  std::string n = std::string(invariant) + "_" + std::string(fault);
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

}  // namespace simt::test
