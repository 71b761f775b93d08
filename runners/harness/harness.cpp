#include "harness.h"

#include "baseline.h"

#include "exec/image.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>
#include <type_traits>

#include "compare.h"
#include "host/host.h"
#include "protocol.h"
#include "reference.h"
#include "results.h"
#include "text/parser.h"

namespace simt::harness {

namespace fs = std::filesystem;
using runners::result_json;
using runners::RunResult;

std::map<std::string, ClauseInfo> load_clauses(const std::string& spec_dir) {
  std::map<std::string, ClauseInfo> out;
  std::regex def(R"(^\*\*\[([a-z0-9_]+(\.[a-z0-9_]+)+)\]\*\*\s*(.*))");
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(spec_dir, ec))
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, def)) {
        std::string text = m[3].str();
        if (text.size() > 160) text = text.substr(0, 157) + "...";
        out.emplace(m[1].str(), ClauseInfo{f.filename().string(), text});
      }
    }
  }
  return out;
}

std::string find_spec_dir(const std::string& hint, const std::string& start) {
  if (!hint.empty()) return hint;
  std::error_code ec;
  fs::path p = fs::absolute(start.empty() ? "." : start, ec);
  if (!fs::is_directory(p, ec)) p = p.parent_path();
  for (; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "spec" / "README.md", ec)) return (p / "spec").string();
    if (p == p.parent_path()) break;
  }
  return std::string(SIMT_SOURCE_DIR) + "/spec";
}

Suite load_suite(const std::vector<std::string>& files) {
  Suite s;
  for (const auto& f : files) {
    std::string text, err;
    if (!host::read_file(f, text, err)) {
      s.bad[f].push_back({0, err});
      continue;
    }
    auto r = parse_test(f, text);
    if (std::holds_alternative<NotATest>(r))
      s.not_tests.push_back(f);
    else if (auto* errs = std::get_if<std::vector<FormatError>>(&r))
      s.bad[f] = *errs;
    else
      s.tests.push_back(std::get<TestFile>(std::move(r)));
  }
  return s;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool matches_xfail(const std::vector<std::string>& globs, const std::string& id,
                   const std::string& key) {
  for (const auto& g : globs) {
    auto at = g.find('@');
    if (at == std::string::npos) {
      if (glob_match(g, id)) return true;
    } else if (glob_match(g.substr(0, at), id) && glob_match(g.substr(at + 1), key)) {
      return true;
    }
  }
  return false;
}

std::vector<Case> select(const Suite& s, const Options& o) {
  std::vector<Case> all;
  for (const auto& t : s.tests) {
    // A filter with '@' selects configurations: "id-glob@config-key-glob".
    const bool by_config = o.filter.find('@') != std::string::npos;
    if (!o.filter.empty() && !by_config && !glob_match(o.filter, t.id)) continue;
    if (!o.features.empty()) {
      bool any = false;
      for (const auto& f : t.features) any = any || o.features.count(f);
      if (!any) continue;
    }
    for (const auto& c : t.configs)
      if (!by_config || glob_match(o.filter, t.id + "@" + c.key())) all.push_back({&t, c});
  }
  std::vector<Case> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (o.shard_count <= 1 || i % o.shard_count == o.shard_index) out.push_back(all[i]);
  return out;
}

size_t Summary::run() const {
  return total - reports::count_of(counts, "unsupported");
}

bool Summary::ok() const {
  if (interrupted) return false;
  for (const auto& s : reports::kStatusTable)
    if (s.failing && reports::count_of(counts, s.name) > 0) return false;
  return true;
}

json::Value Summary::to_json() const {
  json::Value v;
  v["total"] = static_cast<uint64_t>(total);
  v["selected"] = static_cast<uint64_t>(selected);
  v["run"] = static_cast<uint64_t>(run());
  for (std::string_view k : reports::kStatuses)
    v[k] = static_cast<uint64_t>(reports::count_of(counts, k));
  if (interrupted) v["interrupted"] = true;
  return v;
}

namespace {

using reports::Record;
using reports::Status;
using runners::shell_quote;

// What the reference knows about a configuration before anything runs.
struct Prepared {
  runners::RunConfig request;  // what the request carries: the matrix entry, the step cap
  runners::RunConfig config;   // every setting, resolved (results.record `config`)
  Layout layout;
  std::vector<std::string> needs;  // format.requires
  bool loads = false;
};

Prepared prepare(const Case& c, const Options& o) {
  Prepared p;
  const TestFile& t = *c.test;
  const Settings& s = c.settings;
  // runner.protocol.request: the request sets what the test configuration sets (and
  // the step cap); everything else is the program's directive or the default. The
  // reference resolves the rest from the same request.
  p.request = s.request();
  if (!t.sets_max_steps) p.request.max_steps = o.max_steps;
  host::LoadOptions opt = runners::load_options(p.request);
  opt.validate_flow = t.validate;
  opt.host = t.host;  // trap.host
  std::set<std::string> mnemonics;
  exec::LaunchConfig cfg;
  auto loaded = host::load(t.source, opt);
  if (loaded.loaded) {
    p.loads = true;
    cfg = loaded.loaded->config;
    for (const auto& b : loaded.loaded->program->buffers)
      if (b.mode != syntax::BufferMode::In) p.layout.buffer_len[b.name] = b.count;
    // format.requires: the mnemonics as written, not those of the expansion.
    for (const auto& st : loaded.loaded->ast.stmts)
      if (st.kind == syntax::StmtKind::Instr)
        mnemonics.insert(std::string(isa::info(st.op).mnemonic));
  } else {
    // Rejected programs: take what configuration the text gives, if it parses.
    auto parsed = text::parse(t.source);
    syntax::Diagnostics ignore;
    cfg = host::resolve_config(parsed.program.launch, opt, ignore);
    for (const auto& st : parsed.program.stmts)
      if (st.kind == syntax::StmtKind::Instr)
        mnemonics.insert(std::string(isa::info(st.op).mnemonic));
  }
  p.config = runners::run_config(cfg);
  if (s.policy) p.config.policy = *s.policy;  // an unknown name must reach the runner as written
  p.layout.wave = cfg.wave;
  p.layout.simd = cfg.simd_width();
  p.layout.warps = cfg.warps;
  p.layout.workgroups = cfg.workgroups;
  p.layout.cores = cfg.cores;
  // A configuration outside the architecture's limits is something to reject, not
  // a capability to have: then only `validate` is needed (format.requires).
  if (!exec::check(cfg) && exec::find_policy(*p.config.policy)) p.needs = p.config.needs();
  for (const auto& f : t.features) p.needs.push_back("feature:" + f);
  for (const auto& m : mnemonics) p.needs.push_back("instr:" + m);
  if (t.expect.status == "rejected") p.needs.push_back("validate");
  if (t.expect.status == "livelock") p.needs.push_back("livelock");
  if (!t.validate) p.needs.push_back("no_validate");
  if (!t.host.empty()) p.needs.push_back("host");  // trap.host.toml
  // format.expect.image, format.restore: images compared or restored byte for byte.
  if (t.expect.image || t.expect.image_offset || t.restore) p.needs.push_back("preempt.image");
  for (const auto& r : t.required) p.needs.push_back(r);
  return p;
}

// results.record `reproduce`: from any directory, so the test file is named by its
// absolute path (the program and the runner description come absolute from the CLI).
std::string reproduce(const Case& c, const Options& o, bool reference) {
  const Settings& s = c.settings;
  std::error_code ec;
  fs::path abs = fs::absolute(c.test->path, ec);
  const std::string file = ec ? c.test->path : abs.lexically_normal().string();
  if (!reference) {
    return shell_quote(o.simtspec) + " test " + shell_quote(file) + " --runner " +
           shell_quote(o.runner_arg) + " --filter " +
           shell_quote(c.test->id + "@" + c.settings.key());
  }
  std::string cmd = shell_quote(o.simtspec) + " run " + shell_quote(file);
  auto arg = [](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
      return shell_quote(v);
    else if constexpr (std::is_same_v<std::decay_t<decltype(v)>, bool>)
      return std::string(v ? "true" : "false");
    else
      return std::to_string(v);
  };
#define SIMT_SETTING(name, T, def, lim, lo, hi, dir, flag, mx, ...) \
  SIMT_SETTING_IF_##mx(if (s.name) cmd += " " flag " " + arg(*s.name);)
#include "exec/settings.def"
  // The same launch as the run: the harness's step cap, and no flow checks for
  // format.validate tests.
  if (!c.test->sets_max_steps) cmd += " --max-steps " + std::to_string(o.max_steps);
  if (!c.test->validate) cmd += " --no-validate";
  if (!c.test->host.empty()) cmd += " --host " + shell_quote(file);  // its [[host]]
  return cmd + " --trace";
}

// A result as a record holds it (results.record `actual`, `reference`): a context
// image by its size only (the bytes were compared; the first difference, if any,
// is named in `first_diff`).
json::Value record_result(const RunResult& r) {
  json::Value v = result_json(r);
  if (v.is_object())
    std::erase_if(v.as_object(), [](const auto& kv) { return kv.first == "image"; });
  if (r.image) v["image_bytes"] = static_cast<uint64_t>(r.image->size());
  return v;
}

Record base_record(const TestFile& t, const Settings& s) {
  Record r;
  r.id = t.id;
  r.title = t.title;
  r.file = t.path;
  r.config_key = s.key();
  r.clauses.assign(t.clauses.begin(), t.clauses.end());
  r.features.assign(t.features.begin(), t.features.end());
  return r;
}

Record run_case(runners::Runner& runner, const Case& c, const Options& o) {
  auto t0 = std::chrono::steady_clock::now();
  const TestFile& t = *c.test;
  Record rec = base_record(t, c.settings);
  Prepared p = prepare(c, o);
  rec.config = p.config.to_json();
  rec.expected = t.expect.raw;
  rec.source = t.source;
  if (!t.host.empty()) rec.host = host::host_to_toml(t.host);  // trap.host.toml
  // results.record `preemptions`: the host script's preemption points (preempt.request).
  for (const auto& h : t.host) {
    if (h.kind != syntax::HostKind::Preempt) continue;
    reports::Preemption e;
    e.step = static_cast<int64_t>(h.step);
    e.core = h.core == syntax::kAllCores ? json::Value("all") : json::Value(int64_t{h.core});
    e.flow = h.flow == syntax::PreemptFlow::A ? "A" : "B";
    e.intruder = h.intruder;
    rec.preemptions.push_back(std::move(e));
  }
  if (t.restore) rec.restore_bytes = static_cast<int64_t>(t.restore->size);  // format.restore
  auto finish = [&](Status status, const std::string& message) {
    bool xf = matches_xfail(runner.xfail(), t.id, c.settings.key());
    Status st = status;
    std::string msg = message;
    if (xf && status == Status::fail) st = Status::xfail;
    if (xf && status == Status::pass) {
      st = Status::xpass;
      msg = "passed, but the runner lists it as an expected failure";
    }
    rec.set_status(st);
    rec.message = msg;
    rec.reproduce = reproduce(c, o, runner.is_reference());
    rec.duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return rec;
  };
  // runner.own_scheduler: the runner's policies are not consulted.
  const bool own_scheduler = runner.capabilities().extras.count("own_scheduler") > 0;
  if (own_scheduler)
    std::erase_if(p.needs, [](const std::string& n) { return n.rfind("policy:", 0) == 0; });
  if (auto miss = runner.capabilities().missing(p.needs)) {
    rec.checks = 0;
    return finish(Status::unsupported, "the runner lacks " + *miss);
  }
  runners::RunRequest req;
  req.program = t.source;
  req.config = p.request;
  req.validate = t.validate;
  req.host = t.host;
  // preempt.image: the image comes back for the expectation, and for the
  // differential comparison of a runner that declares byte-exact images.
  const bool preempts = std::any_of(t.host.begin(), t.host.end(), [](const syntax::HostStep& h) {
    return h.kind == syntax::HostKind::Preempt;
  });
  const bool exact_images = runner.capabilities().extras.count("preempt.image") > 0;
  req.image = t.expect.image.has_value() ||
              (preempts && exact_images && o.differential && !runner.is_reference());
  if (t.restore) req.restore = t.restore->bytes();
  if (own_scheduler) {
    rec.config["policy"] = "own";
    PolicyCheck pc = policy_dependence(req, p.layout, o.timeout);
    if (!pc.error.empty()) {
      rec.checks = 0;
      return finish(Status::error, pc.error);
    }
    if (!pc.depends.empty()) {
      rec.checks = 0;
      return finish(Status::unsupported,
                    pc.depends + "; the runner schedules warps itself (own_scheduler)");
    }
  }
  RunResult actual = runner.run(req);
  rec.stderr_text = actual.stderr_text.substr(0, 16384);
  if (actual.kind == RunResult::Kind::Unsupported) {  // runner.harness
    rec.checks = 0;
    return finish(Status::unsupported, "the implementation: " + actual.message);
  }
  if (actual.kind == RunResult::Kind::Error) {
    rec.checks = 0;
    rec.actual = record_result(actual);
    return finish(Status::error, actual.message);
  }
  rec.actual = record_result(actual);
  Verdict v = check_expectation(t.expect, actual, p.layout);
  size_t checks = v.checks;
  if (o.differential && !runner.is_reference()) {
    // results.record `reference`: every differential record carries the
    // reference's outcome, a configuration failing its expectation included.
    RunResult ref = runners::run_reference_within(req, o.timeout);
    if (ref.kind == RunResult::Kind::Error) {
      rec.checks = 0;
      return finish(Status::error, "the reference could not run it: " + ref.message);
    }
    rec.reference = record_result(ref);
    if (v.ok) {
      Verdict d = compare_with_reference(ref, actual, p.layout);
      checks += d.checks;
      if (!d.ok) v = d;
    }
    // preempt.image: the images byte for byte, then each restored on the other
    // side (the implementation's on the reference, the reference's on the
    // implementation) must finish with the reference's outcome.
    if (v.ok && req.image && ref.image && actual.image) {
      Verdict d = compare_images(ref, actual);
      checks += d.checks;
      if (!d.ok) v = d;
      // preempt.flow.c: a launch starts only from an image of every core, so an
      // image of one core is compared, not exchanged (runner.preempt).
      auto read = exec::read_image(*ref.image);
      const auto* whole = std::get_if<exec::ImageContent>(&read);
      const bool every_core = whole && whole->layout.cores.size() == whole->layout.cfg.cores;
      for (int side = 0; v.ok && every_core && side < 2; ++side) {
        runners::RunRequest from = req;
        from.image = false;
        from.restore = side == 0 ? *actual.image : *ref.image;
        RunResult r = side == 0 ? runners::run_reference_within(from, o.timeout) : runner.run(from);
        if (r.kind == RunResult::Kind::Error) {
          rec.checks = 0;
          return finish(Status::error,
                        std::string(side == 0 ? "the reference" : "the implementation") +
                            " could not run from the other's image: " + r.message);
        }
        Verdict x = compare_with_reference(ref, r, p.layout);
        checks += x.checks;
        if (!x.ok) {
          x.message =
              std::string(side == 0 ? "the implementation's image restored on the reference"
                                    : "the reference's image restored on the implementation") +
              ": " + x.message;
          v = x;
        }
      }
    }
  }
  rec.checks = static_cast<int64_t>(checks);
  if (!v.ok) {
    // runner.firstdiff: the record holds it typed.
    if (v.first_diff.is_object()) rec.first_diff = reports::first_diff_from_json(v.first_diff);
    // Traces of the failing configuration: the reference's, and the runner's if it can.
    runners::RunRequest traced = req;
    traced.trace = true;
    RunResult ref_t = runners::run_reference_within(traced, o.timeout);
    rec.reference_trace = ref_t.trace;
    if (!runner.is_reference() && runner.capabilities().extras.count("trace")) {
      // results.record `trace_error`: a traced re-run that fails, or answers without
      // a trace, is reported, not silently dropped.
      RunResult mine = runner.run(traced);
      rec.trace = mine.trace;
      if (mine.kind == RunResult::Kind::Error) {
        std::string e = "the re-run with trace = true failed: " + mine.message;
        if (!mine.stderr_text.empty()) e += "\n" + mine.stderr_text.substr(0, 4096);
        rec.trace_error = e;
      } else if (mine.trace.empty()) {
        rec.trace_error =
            "the re-run with trace = true answered without a trace (the runner declares the "
            "trace capability)";
      }
    } else if (runner.is_reference()) {
      rec.trace = rec.reference_trace;
    }
    return finish(Status::fail, v.message);
  }
  // format.expect.nonempty: the status always counts as a check, so what can be
  // vacuous is a buffer expectation (`each` over an empty buffer).
  if (!v.vacuous.empty()) return finish(Status::error, v.vacuous + " (format.expect.nonempty)");
  return finish(Status::pass, "");
}

Record bad_file_record(const std::string& path, const std::vector<FormatError>& errs) {
  Record rec;
  rec.id = path;
  rec.title = "malformed test file";
  rec.file = path;
  rec.set_status(Status::error);
  for (const auto& e : errs)
    rec.message += path + ":" + std::to_string(e.line) + ": " + e.message + "\n";
  rec.checks = 0;
  return rec;
}

}  // namespace

Summary run(runners::Runner& runner, const Suite& suite, const std::vector<Case>& cases,
            const Options& o, const ResultSink& sink) {
  Summary sum;
  std::mutex mu;
  auto emit = [&](const Record& rec) {
    std::lock_guard<std::mutex> g(mu);
    ++sum.total;
    ++sum.counts[rec.status_name];
    sink(rec);
  };
  std::vector<const std::string*> bad;
  if (o.shard_index == 0)  // malformed files are reported once, by shard 0
    for (const auto& [path, errs] : suite.bad)
      if (o.filter.empty() || glob_match(o.filter, path)) bad.push_back(&path);
  sum.selected = bad.size() + cases.size();
  for (const std::string* path : bad) emit(bad_file_record(*path, suite.bad.at(*path)));
  const std::atomic<bool>& stop = runners::interrupt_flag();
  std::atomic<size_t> next{0};
  auto guarded = [&](const Case& c) {
    Record rec;
    try {
      rec = run_case(runner, c, o);
    } catch (const std::exception& e) {
      rec = base_record(*c.test, c.settings);
      rec.set_status(Status::error);
      rec.message = std::string("harness error: ") + e.what();
      rec.checks = 0;
    }
    return rec;
  };
  // results.interrupted: a run the interrupt cut short says nothing about the
  // implementation; it is left out, as if it had not started.
  auto cut_short = [&](const Record& rec) {
    return stop.load() && rec.status == Status::error &&
           rec.message.find(runners::kInterrupted) != std::string::npos;
  };
  auto worker = [&] {
    for (size_t i; !stop.load() && (i = next.fetch_add(1)) < cases.size();) {
      Record rec = guarded(cases[i]);
      if (cut_short(rec)) continue;
      // results.rerun: the reruns the interrupt cut short are not counted.
      if (o.reruns > 0 && (o.rerun_if ? o.rerun_if(rec) : rec.failing())) {
        std::vector<Record> again;
        for (uint32_t k = 0; k < o.reruns && !stop.load(); ++k) {
          Record r = guarded(cases[i]);
          if (!cut_short(r)) again.push_back(std::move(r));
        }
        apply_reruns(rec, again);
      }
      emit(rec);
    }
  };
  uint32_t jobs = std::max<uint32_t>(
      1, std::min<uint32_t>(o.jobs, static_cast<uint32_t>(std::max<size_t>(1, cases.size()))));
  std::vector<std::thread> threads;
  for (uint32_t j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
  sum.interrupted = stop.load() && sum.total < sum.selected;
  return sum;
}

}  // namespace simt::harness
