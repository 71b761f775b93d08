// `simtspec merge`: shard results combined into one run (spec/results.md,
// results.merge; spec/oracles.md, oracle.fuzz.merge).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "common.h"
#include "harness.h"
#include "outputs.h"
#include "recording.h"
#include "results.h"

namespace simt::cli {
namespace {
namespace merging {

namespace fs = std::filesystem;

struct MergeArgs {
  std::vector<std::string> files;
  std::string out;
  std::vector<std::string> suite;  // the suite's paths, if not the headers'
  std::string spec;
  std::string db;  // results.store
  bool no_db = false;
};

// A results file named directly, or the results.jsonl of a folder.
std::string results_path(const std::string& arg) {
  std::error_code ec;
  return fs::is_directory(arg, ec) ? (fs::path(arg) / "results.jsonl").string() : arg;
}

// The first path at which two JSON values differ ("" if equal), skipping the
// top-level keys in `skip` ("options.shard" skips a key one level down).
std::string differing_field(const json::Value& a, const json::Value& b, const std::string& prefix,
                            const std::set<std::string>& skip) {
  if (!a.is_object() || !b.is_object()) return a == b ? "" : prefix;
  std::vector<std::string> keys;
  for (const auto& [k, v] : a.as_object()) keys.push_back(k);
  for (const auto& [k, v] : b.as_object())
    if (!a.find(k)) keys.push_back(k);
  for (const auto& k : keys) {
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    if (skip.count(path)) continue;
    const json::Value* x = a.find(k);
    const json::Value* y = b.find(k);
    if (!x || !y) return path;
    std::string d = differing_field(*x, *y, path, skip);
    if (!d.empty()) return d;
  }
  return "";
}

const std::string& str_or_empty(const json::Value& v, std::string_view key) {
  static const std::string empty;
  const json::Value* x = v.find(key);
  return x && x->is_string() ? x->as_string() : empty;
}

// A non-negative integer field, else 0.
uint64_t num(const json::Value& v, std::string_view key) {
  const json::Value* x = v.find(key);
  return x && x->is_uint() ? x->as_uint() : 0;
}

// results.merge: each shard 0..N-1 once, N the same in all; the shard index of
// each file, or a message.
std::variant<std::vector<uint32_t>, std::string> shard_indices(
    const std::vector<std::string>& paths, const std::vector<std::string>& shards) {
  std::vector<uint32_t> index;
  std::map<uint32_t, std::string> seen;
  uint32_t n = 0;
  for (size_t f = 0; f < paths.size(); ++f) {
    auto s = parse_shard(shards[f]);
    if (!s) return paths[f] + ": the header's shard '" + shards[f] + "' is not I/N";
    if (f == 0) n = s->second;
    if (s->second != n)
      return paths[f] + ": shard " + shards[f] + " is of " + std::to_string(s->second) +
             " shards, " + paths[0] + " of " + std::to_string(n);
    if (auto [at, fresh] = seen.emplace(s->first, paths[f]); !fresh)
      return "shard " + shards[f] + " is given twice: " + at->second + " and " + paths[f];
    index.push_back(s->first);
  }
  for (uint32_t i = 0; i < n; ++i)
    if (!seen.count(i))
      return "shard " + std::to_string(i) + "/" + std::to_string(n) + " is missing";
  return index;
}

// shard_indices, with its message printed: nullopt when the shards do not fit.
std::optional<std::vector<uint32_t>> shard_order(const std::vector<std::string>& paths,
                                                 const std::vector<std::string>& shards) {
  auto idx = shard_indices(paths, shards);
  if (auto* e = std::get_if<std::string>(&idx)) {
    std::cerr << "simtspec: " << *e << "\n";
    return std::nullopt;
  }
  return std::get<std::vector<uint32_t>>(std::move(idx));
}

// ---- Test shards (results.merge) --------------------------------------------

int merge_tests(const MergeArgs& a, std::vector<std::string> paths) {
  std::vector<reports::ResultsFile> in;
  for (const auto& p : paths) {
    auto r = reports::read_results(p);
    if (auto* e = std::get_if<std::string>(&r)) {
      std::cerr << "simtspec: " << *e << "\n";
      return kExitUsage;
    }
    in.push_back(std::get<reports::ResultsFile>(std::move(r)));
  }
  // The headers agree but for the shard, the job count, the host and the start.
  const std::set<std::string> skip = {"host", "started", "options.shard", "options.jobs"};
  for (size_t f = 1; f < in.size(); ++f)
    if (std::string d = differing_field(in[0].header, in[f].header, "", skip); !d.empty()) {
      std::cerr << "simtspec: " << paths[f] << ": header field '" << d << "' differs from "
                << paths[0] << "'s\n";
      return kExitUsage;
    }
  std::vector<std::string> shard_names;
  for (const auto& r : in) {
    const json::Value* o = r.header.find("options");
    shard_names.push_back(o ? str_or_empty(*o, "shard") : "");
  }
  const auto indices = shard_order(paths, shard_names);
  if (!indices) return kExitUsage;
  const std::vector<uint32_t>& index = *indices;

  // Suite order: malformed files (as the unsharded run reports them), then the
  // configurations as harness::select orders them (file, then matrix order).
  const json::Value& h = in[0].header;
  std::vector<std::string> suite_paths = a.suite;
  if (suite_paths.empty())
    if (const json::Value* s = h.find("suite");
        s && s->find("paths") && s->find("paths")->is_array())
      for (const auto& p : s->find("paths")->as_array())
        if (p.is_string()) suite_paths.push_back(p.as_string());
  std::string err;
  auto files = harness::discover(suite_paths, err);
  if (!err.empty() || suite_paths.empty()) {
    std::cerr << "simtspec: cannot read the suite the shards ran ("
              << (err.empty() ? "the headers name no paths" : err) << "); give --suite PATH\n";
    return kExitUsage;
  }
  harness::Suite suite = harness::load_suite(files);
  harness::Options sel;
  const json::Value* opts = h.find("options");
  sel.filter = opts ? str_or_empty(*opts, "filter") : "";
  {
    std::stringstream ss(opts ? str_or_empty(*opts, "features") : "");
    for (std::string f; std::getline(ss, f, ',');)
      if (!f.empty()) sel.features.insert(f);
  }
  std::map<std::pair<std::string, std::string>, size_t> order;
  for (const auto& [path, errs] : suite.bad)
    if (sel.filter.empty() || harness::glob_match(sel.filter, path))
      order.emplace(std::pair(path, std::string()), order.size());
  for (const auto& c : harness::select(suite, sel))
    order.emplace(std::pair(c.test->path, c.settings.key()), order.size());

  // Every record once, in suite order.
  std::map<size_t, std::pair<reports::Record, size_t>> by_place;  // place -> record, its file
  for (size_t f = 0; f < in.size(); ++f)
    for (auto& rec : in[f].records) {
      std::pair key(rec.file, rec.config_key);
      auto at = order.find(key);
      if (at == order.end()) {
        std::cerr << "simtspec: " << paths[f] << ": " << key.first << "[" << key.second
                  << "] is not a configuration of the suite at the headers' paths (is it the "
                     "suite the shards ran?)\n";
        return kExitUsage;
      }
      if (auto [was, fresh] = by_place.try_emplace(at->second, std::move(rec), f); !fresh) {
        std::cerr << "simtspec: configuration " << key.first << "[" << key.second
                  << "] is in two shards: " << paths[was->second.second] << " and " << paths[f]
                  << "\n";
        return kExitUsage;
      }
    }

  reports::ResultsFile rf;
  rf.header = in[std::find(index.begin(), index.end(), 0u) - index.begin()].header;
  std::string started = str_or_empty(rf.header, "started");
  json::Array from(paths.size());
  for (size_t f = 0; f < in.size(); ++f) {
    const std::string& s = str_or_empty(in[f].header, "started");
    if (!s.empty() && (started.empty() || s < started)) started = s;
    from[index[f]] = paths[f];
  }
  if (!started.empty()) rf.header["started"] = started;
  rf.header["options"]["shard"] = "0/1";
  rf.header["options"]["merged_from"] = from;
  for (auto& [place, rec] : by_place) rf.records.push_back(std::move(rec.first));

  // The summary, recomputed: counts over the records, `selected` summed over the
  // shards, `seconds` the longest shard's (the shards ran side by side).
  harness::Summary sum;
  for (const auto& rec : rf.records) ++sum.counts[rec.status_name];
  sum.total = rf.records.size();
  double seconds = 0;
  for (const auto& r : in) {
    if (!r.complete()) {
      sum.interrupted = true;
      continue;
    }
    if (const json::Value* s = r.summary.find("selected"); s && s->is_uint())
      sum.selected += static_cast<size_t>(s->as_uint());
    if (const json::Value* s = r.summary.find("seconds"); s && s->is_number())
      seconds = std::max(seconds, s->as_double());
    if (const json::Value* s = r.summary.find("interrupted"); s && s->is_bool() && s->as_bool())
      sum.interrupted = true;
  }
  if (sum.interrupted) sum.selected = std::max(sum.selected, order.size());
  rf.summary = sum.to_json();
  rf.summary["seconds"] = seconds;

  OutLock lock;  // results.lock
  if (auto e = lock.acquire(a.out)) {
    std::cerr << "simtspec: " << *e << "\n";
    return kExitUsage;
  }
  reports::JsonlWriter writer;
  if (!writer.open(a.out + "/results.jsonl", err)) {
    std::cerr << "simtspec: " << err << "\n";
    return kExitUsage;
  }
  writer.write(rf.header);
  for (const auto& rec : rf.records) writer.write(rec);
  json::Value last;
  last["summary"] = rf.summary;
  writer.write(last);
  writer.close();

  // results.merge, results.store: the merged run is recorded as one run, its
  // provenance from the shards' header.
  Recording record;
  if (auto e = record.open(a.db, a.no_db)) {
    std::cerr << "simtspec: " << *e << "\n";
    return kExitUsage;
  }
  record.begin(test_run_info(rf.header));
  for (const auto& rec : rf.records) record.add(rec);
  record.finish(rf.summary, sum.interrupted ? "interrupted" : "complete");

  std::cout << "merged " << in.size() << " shards: " << reports::share_run(sum.run(), sum.selected)
            << ":";
  for (std::string_view k : reports::kStatuses)
    std::cout << " " << reports::thousands(reports::count_of(sum.counts, k)) << " " << k;
  std::cout << "\n";
  const std::string spec_dir = harness::find_spec_dir(a.spec, suite_paths.front());
  if (int rc = write_outputs(std::move(rf), a.out, spec_dir)) return rc;
  std::cout << "report: " << a.out << "/index.html\n";
  return sum.ok() ? kExitOk : kExitFail;
}

// ---- Fuzz shards (oracle.fuzz.merge) ------------------------------------------

struct FuzzFile {
  std::string path;
  json::Value header, summary;
  std::vector<json::Value> programs, failures, ignored;
};

std::variant<FuzzFile, std::string> read_fuzz(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open '" + path + "'";
  FuzzFile f;
  f.path = path;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto parsed = json::parse(line);
    const std::string at = path + ":" + std::to_string(n) + ": ";
    if (std::holds_alternative<json::ParseError>(parsed)) {
      if (in.peek() == EOF) break;  // an interrupted last line
      return at + "not a JSON line";
    }
    json::Value v = std::get<json::Value>(std::move(parsed));
    if (!v.is_object()) return at + "not a JSON object";
    if (n == 1) {
      if (str_or_empty(v, "schema") != "simtspec-fuzz/1")
        return "'" + path + "' is not a simtspec fuzz results file";
      f.header = std::move(v);
    } else if (const json::Value* s = v.find("summary")) {
      f.summary = *s;
    } else if (const json::Value* x = v.find("failure")) {
      if (str_or_empty(*x, "signature").empty() || !x->find("k") || !x->find("k")->is_uint() ||
          str_or_empty(*x, "invariant").empty())
        return at + "a failure needs invariant, k and signature";
      f.failures.push_back(*x);
    } else if (const json::Value* x = v.find("ignored")) {
      f.ignored.push_back(*x);
    } else {
      const json::Value* k = v.find("k");
      if (!k || !k->is_uint() || str_or_empty(v, "invariant").empty() ||
          str_or_empty(v, "verdict").empty())
        return at + "a program needs invariant, k and verdict";
      f.programs.push_back(std::move(v));
    }
  }
  if (f.header.is_null()) return "'" + path + "' has no header line";
  return f;
}

int merge_fuzz(const MergeArgs& a, const std::vector<std::string>& paths) {
  std::vector<FuzzFile> in;
  for (const auto& p : paths) {
    auto r = read_fuzz(p);
    if (auto* e = std::get_if<std::string>(&r)) {
      std::cerr << "simtspec: " << *e << "\n";
      return kExitUsage;
    }
    in.push_back(std::get<FuzzFile>(std::move(r)));
  }
  const std::set<std::string> skip = {"host", "started", "shard", "ignore"};
  for (size_t f = 1; f < in.size(); ++f)
    if (std::string d = differing_field(in[0].header, in[f].header, "", skip); !d.empty()) {
      std::cerr << "simtspec: " << paths[f] << ": header field '" << d << "' differs from "
                << paths[0] << "'s\n";
      return kExitUsage;
    }
  std::vector<std::string> shard_names;
  for (const auto& f : in) shard_names.push_back(str_or_empty(f.header, "shard"));
  const auto indices = shard_order(paths, shard_names);
  if (!indices) return kExitUsage;
  const std::vector<uint32_t>& index = *indices;
  const json::Value& h = in[0].header;
  std::map<std::string, size_t> inv_order;
  if (const json::Value* invs = h.find("invariants"); invs && invs->is_array())
    for (const auto& i : invs->as_array())
      if (i.is_string()) inv_order.emplace(i.as_string(), inv_order.size());
  const json::Value* kg = h.find("keep_going");
  const bool keep_going = kg && kg->is_bool() && kg->as_bool();
  // Without --keep-going the unsharded run stops each invariant at its failing
  // program with the lowest k: programs and failures past it are dropped.
  std::map<std::string, uint64_t> cutoff;
  if (!keep_going)
    for (const auto& f : in)
      for (const auto& x : f.failures) {
        const uint64_t k = num(x, "k");
        auto [at, fresh] = cutoff.try_emplace(str_or_empty(x, "invariant"), k);
        if (!fresh) at->second = std::min(at->second, k);
      }
  auto kept = [&](const json::Value& v) {
    auto c = cutoff.find(str_or_empty(v, "invariant"));
    return c == cutoff.end() || num(v, "k") <= c->second;
  };
  // Programs in the unsharded run's order: k, then the invariants' order.
  std::map<std::pair<uint64_t, size_t>, json::Value> programs;
  std::map<std::string, std::string> ignore_reason;
  uint64_t run_errors = 0;  // errors of a shard as a whole (no program)
  double seconds = 0;
  for (size_t f = 0; f < in.size(); ++f) {
    uint64_t program_errors = 0;
    for (auto& p : in[f].programs) {
      program_errors += str_or_empty(p, "verdict") == "error";
      if (!kept(p)) continue;
      auto inv = inv_order.find(str_or_empty(p, "invariant"));
      if (inv == inv_order.end()) {
        std::cerr << "simtspec: " << paths[f] << ": a program of invariant '"
                  << str_or_empty(p, "invariant") << "', which the header does not name\n";
        return kExitUsage;
      }
      std::pair key(num(p, "k"), inv->second);
      if (!programs.try_emplace(key, std::move(p)).second) {
        std::cerr << "simtspec: program " << key.first << " of " << inv->first
                  << " is in two shards\n";
        return kExitUsage;
      }
    }
    for (const auto& x : in[f].ignored)
      ignore_reason.emplace(str_or_empty(x, "signature"), str_or_empty(x, "reason"));
    if (const json::Value* e = in[f].summary.find("errors"); e && e->is_uint())
      run_errors += e->as_uint() > program_errors ? e->as_uint() - program_errors : 0;
    if (const json::Value* s = in[f].summary.find("seconds"); s && s->is_number())
      seconds = std::max(seconds, s->as_double());
  }
  // Failures by signature: the one with the lowest k first, the counts summed.
  std::map<std::string, json::Value> by_sig;
  for (const auto& f : in)
    for (const auto& x : f.failures) {
      if (!kept(x)) continue;
      const std::string& sig = str_or_empty(x, "signature");
      auto [at, fresh] = by_sig.try_emplace(sig, x);
      if (fresh) continue;
      const uint64_t count = num(at->second, "count") + num(x, "count");
      if (num(x, "k") < num(at->second, "k")) at->second = x;
      at->second["count"] = count;
    }
  std::vector<json::Value> failures;
  for (auto& [sig, x] : by_sig) failures.push_back(std::move(x));
  std::sort(failures.begin(), failures.end(),
            [](const json::Value& x, const json::Value& y) { return num(x, "k") < num(y, "k"); });
  uint64_t failing = 0, errors = run_errors;
  std::map<std::string, uint64_t> ignored;
  for (const auto& [key, p] : programs) {
    const std::string& v = str_or_empty(p, "verdict");
    failing += v == "fails";
    errors += v == "error";
    if (v == "ignored") ++ignored[str_or_empty(p, "signature")];
  }
  uint64_t ignored_total = 0;
  for (const auto& [sig, n] : ignored) ignored_total += n;

  OutLock lock;  // results.lock
  if (auto e = lock.acquire(a.out)) {
    std::cerr << "simtspec: " << *e << "\n";
    return kExitUsage;
  }
  reports::JsonlWriter writer;
  std::string err;
  if (!writer.open(a.out + "/fuzz-results.jsonl", err)) {
    std::cerr << "simtspec: " << err << "\n";
    return kExitUsage;
  }
  json::Value header = in[std::find(index.begin(), index.end(), 0u) - index.begin()].header;
  header["shard"] = "0/1";
  json::Array from(paths.size());
  for (size_t f = 0; f < paths.size(); ++f) from[index[f]] = paths[f];
  header["merged_from"] = from;
  writer.write(header);
  for (const auto& [key, p] : programs) writer.write(p);
  for (const auto& x : failures) {
    json::Value line;
    line["failure"] = x;
    writer.write(line);
  }
  for (const auto& [sig, n] : ignored) {
    json::Value v, line;
    v["signature"] = sig;
    v["count"] = n;
    v["reason"] = ignore_reason[sig];
    line["ignored"] = v;
    writer.write(line);
  }
  json::Value sum;
  sum["programs"] = static_cast<uint64_t>(programs.size());
  sum["failing"] = failing;
  sum["signatures"] = static_cast<uint64_t>(failures.size());
  sum["ignored"] = ignored_total;
  sum["errors"] = errors;
  sum["seconds"] = seconds;
  json::Value last;
  last["summary"] = sum;
  writer.write(last);
  writer.close();

  // results.merge, results.store.fuzz: the merged fuzz run is one run of the
  // store: a row per failure (by signature) and per program in error, then counts.
  Recording record;
  if (auto e = record.open(a.db, a.no_db)) {
    std::cerr << "simtspec: " << *e << "\n";
    return kExitUsage;
  }
  record.begin(fuzz_run_info(header, header["merged_from"]));
  uint64_t unsupported = 0;
  for (const auto& [key, p] : programs) {
    const std::string& v = str_or_empty(p, "verdict");
    unsupported += v == "unsupported";
    if (v != "error") continue;
    json::Value rec;
    rec["id"] = str_or_empty(p, "invariant");
    rec["config_key"] = std::to_string(num(p, "seed"));
    rec["status"] = "error";
    record.add(rec);
  }
  for (const auto& x : failures) {
    json::Value rec;
    rec["id"] = str_or_empty(x, "invariant");
    rec["config_key"] = std::to_string(num(x, "seed"));
    rec["status"] = "fail";
    rec["message"] = str_or_empty(x, "message");
    for (const char* key : {"signature", "count", "file", "known"})
      if (const json::Value* v = x.find(key)) rec[key] = *v;
    record.add(rec);
  }
  {
    const uint64_t ran = programs.size() - unsupported;
    const uint64_t bad = std::min<uint64_t>(failures.size() + errors, ran);
    json::Value s;
    s["selected"] = static_cast<uint64_t>(programs.size());
    s["run"] = ran;
    s["pass"] = ran - bad;
    s["fail"] = static_cast<uint64_t>(failures.size());
    s["unsupported"] = unsupported;
    s["error"] = errors;
    s["seconds"] = seconds;
    record.finish(s, "complete");
  }

  for (const auto& x : failures)
    std::cout << "failure " << str_or_empty(x, "signature") << "  x" << num(x, "count") << "  "
              << (x.find("file")    ? str_or_empty(x, "file")
                  : x.find("known") ? "known signature, see " + str_or_empty(x, "known")
                                    : std::string("(no test written)"))
              << "\n";
  for (const auto& [sig, n] : ignored)
    std::cout << "ignored " << sig << "  x" << n << "  (" << ignore_reason[sig] << ")\n";
  std::cout << "merged " << in.size() << " fuzz shards: " << programs.size() << " programs, "
            << failures.size() << " failure(s)";
  if (errors) std::cout << ", " << errors << " error(s)";
  if (ignored_total) std::cout << ", " << ignored_total << " ignored";
  std::cout << "\nresults: " << a.out << "/fuzz-results.jsonl\n";
  return failures.empty() && !errors ? kExitOk : kExitFail;
}

int run_merge(const MergeArgs& a) {
  std::vector<std::string> paths;
  for (const auto& f : a.files) paths.push_back(results_path(f));
  // The kind of the first file's first line decides; the others must match.
  std::vector<bool> fuzz;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::string first;
    if (!in || !std::getline(in, first)) {
      std::cerr << "simtspec: cannot read '" << p << "'\n";
      return kExitUsage;
    }
    auto v = json::parse(first);
    const json::Value* j = std::get_if<json::Value>(&v);
    const std::string schema = j && j->is_object() ? str_or_empty(*j, "schema") : "";
    if (schema != reports::kSchema && schema != "simtspec-fuzz/1") {
      std::cerr << "simtspec: '" << p
                << "' is neither a simtspec test results file nor a fuzz results file\n";
      return kExitUsage;
    }
    fuzz.push_back(schema != reports::kSchema);
  }
  for (size_t f = 1; f < paths.size(); ++f)
    if (fuzz[f] != fuzz[0]) {
      std::cerr << "simtspec: '" << paths[f] << "' and '" << paths[0]
                << "' are not both test results or both fuzz results\n";
      return kExitUsage;
    }
  return fuzz[0] ? merge_fuzz(a, paths) : merge_tests(a, paths);
}

}  // namespace merging
}  // namespace

void register_merge(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<merging::MergeArgs>();
  auto* cmd = app.add_subcommand(
      "merge", "combine the results of shards (test --shard, fuzz --shard) into one run");
  cmd->add_option("files", a->files,
                  "each shard's results: a results.jsonl (or its folder), or a fuzz --results file")
      ->required();
  cmd->add_option("--out", a->out,
                  "write the merged results.jsonl, junit.xml and report here (fuzz: "
                  "fuzz-results.jsonl)")
      ->required();
  cmd->add_option("--suite", a->suite,
                  "the suite's paths, for its order (default: those in the shards' headers)");
  cmd->add_option("--spec", a->spec, "spec folder (default: found from the suite paths)");
  add_db_options(cmd, a->db, a->no_db, "the merged run");
  cmd->callback([a, &exit_code] { exit_code = merging::run_merge(*a); });
}

}  // namespace simt::cli
