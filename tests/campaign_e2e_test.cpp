// ci: not sanitized: shards run as separate simtspec processes and merged, fuzz runs against the
// faulty implementation (end to end) Campaigns across machines, end to end (results.merge,
// oracle.fuzz.shard, oracle.fuzz.results, oracle.fuzz.merge) and fuzz triage through
// simtspec-faulty (oracle.fuzz.signature, oracle.fuzz.dedupe, oracle.fuzz.ignore,
// oracle.regress.promote). Each shard is its own simtspec process, as on
// separate machines.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "json.h"
#include "results.h"
#include "store.h"
#include "support.h"

namespace simt {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = SIMT_BINARY_DIR "/simtspec";

class Campaign : public test::TempDirSuite<Campaign> {
 public:
  static constexpr const char* kDirPrefix = "simtspec_campaign_test_";

 protected:
  static test::CommandResult simtspec(const std::string& args) {
    return test::run_command(kBinary, args, dir());
  }
  static std::string q(const fs::path& p) { return test::shell_quote(p.string()); }

  // The JSON lines of a file.
  static std::vector<json::Value> lines(const fs::path& p) {
    std::vector<json::Value> out;
    std::istringstream in(test::read_all(p));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      auto v = json::parse(line);
      EXPECT_TRUE(std::holds_alternative<json::Value>(v)) << p << ": " << line;
      if (auto* x = std::get_if<json::Value>(&v)) out.push_back(std::move(*x));
    }
    return out;
  }

  // A fuzz results file's program lines: (invariant, k, seed, hash, verdict), in order.
  using Program = std::tuple<std::string, uint64_t, uint64_t, std::string, std::string>;
  static std::vector<Program> programs(const fs::path& p) {
    std::vector<Program> out;
    for (const auto& v : lines(p))
      if (v.find("verdict"))
        out.emplace_back(v.find("invariant")->as_string(), v.find("k")->as_uint(),
                         v.find("seed")->as_uint(), v.find("hash")->as_string(),
                         v.find("verdict")->as_string());
    return out;
  }

  static std::string faulty_toml(const std::string& fault, const std::string& name) {
    const fs::path p = dir() / (name + ".toml");
    test::write_all(p, test::faulty_runner_toml(fault));
    return p.string();
  }
};

// oracle.fuzz.shard, oracle.fuzz.merge: three shards, each its own process,
// check between them exactly the programs of the unsharded run, each once; the
// merge gives the unsharded run's program lines in its order.
TEST_F(Campaign, FuzzShardsCheckTheUnshardedPrograms) {
  const std::string common = "fuzz --invariant all --seed 11 --count 10 --out " + q(dir() / "reg");
  auto full = simtspec(common + " --results " + q(dir() / "fuzz-full.jsonl"));
  ASSERT_EQ(full.code, 0) << full.out << full.err;
  std::vector<Program> unsharded = programs(dir() / "fuzz-full.jsonl");
  ASSERT_GT(unsharded.size(), 100u);
  std::multiset<Program> all;
  std::string files;
  for (int i = 0; i < 3; ++i) {
    const fs::path f = dir() / ("fuzz-" + std::to_string(i) + ".jsonl");
    auto r = simtspec(common + " --shard " + std::to_string(i) + "/3 --results " + q(f));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("shard " + std::to_string(i) + "/3"), std::string::npos) << r.out;
    for (const auto& p : programs(f)) {
      EXPECT_EQ(std::get<1>(p) % 3, static_cast<uint64_t>(i));
      all.insert(p);
    }
    files += " " + q(f);
  }
  EXPECT_EQ(all, std::multiset<Program>(unsharded.begin(), unsharded.end()))
      << "the shards' programs (with their hashes and verdicts) are the unsharded run's, each once";
  auto m = simtspec("merge" + files + " --out " + q(dir() / "fuzz-merged"));
  ASSERT_EQ(m.code, 0) << m.out << m.err;
  EXPECT_EQ(programs(dir() / "fuzz-merged" / "fuzz-results.jsonl"), unsharded);
  const auto merged = lines(dir() / "fuzz-merged" / "fuzz-results.jsonl");
  EXPECT_EQ(merged.front().find("shard")->as_string(), "0/1");
  EXPECT_EQ(merged.back().find("summary")->find("programs")->as_uint(), unsharded.size());
}

// oracle.fuzz.merge: without --keep-going each shard stops at its own first
// failure; the merge keeps what the unsharded run checked (up to the lowest
// failing program) and its failure.
TEST_F(Campaign, FuzzMergeStopsWhereTheUnshardedRunStops) {
  const std::string runner = faulty_toml("cmp-unsigned", "stop");
  const std::string common = "fuzz --invariant differential --runner " + test::shell_quote(runner) +
                             " --seed 20261122 --count 60 --shrink-time 20 --out ";
  auto full =
      simtspec(common + q(dir() / "stop-reg-full") + " --results " + q(dir() / "stop-full.jsonl"));
  ASSERT_EQ(full.code, 1) << full.out << full.err;
  std::string files;
  for (int i = 0; i < 3; ++i) {
    const fs::path f = dir() / ("stop-" + std::to_string(i) + ".jsonl");
    auto r = simtspec(common + q(dir() / ("stop-reg-" + std::to_string(i))) + " --shard " +
                      std::to_string(i) + "/3 --no-db --results " + q(f));
    ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
    files += " " + q(f);
  }
  auto m = simtspec("merge" + files + " --out " + q(dir() / "stop-merged"));
  EXPECT_EQ(m.code, 1) << m.out << m.err;
  EXPECT_EQ(programs(dir() / "stop-merged" / "fuzz-results.jsonl"),
            programs(dir() / "stop-full.jsonl"));
  auto failure_sigs = [&](const fs::path& p) {
    std::vector<std::pair<uint64_t, std::string>> out;
    for (const auto& v : lines(p))
      if (const json::Value* f = v.find("failure"))
        out.emplace_back(f->find("k")->as_uint(), f->find("signature")->as_string());
    return out;
  };
  EXPECT_EQ(failure_sigs(dir() / "stop-merged" / "fuzz-results.jsonl"),
            failure_sigs(dir() / "stop-full.jsonl"));
}

// oracle.fuzz.dedupe, oracle.fuzz.merge: with --keep-going every program is
// checked, so the shards' programs are the unsharded run's (here with two jobs),
// and the merged failures are its signatures, each with its first program and
// its count.
TEST_F(Campaign, KeepGoingShardsMergeTheirCounts) {
  const std::string runner = faulty_toml("cmp-unsigned", "keep");
  const std::string common = "fuzz --invariant differential --runner " + test::shell_quote(runner) +
                             " --seed 20261122 --count 240 --keep-going --shrink-time 20 --out ";
  auto full = simtspec(common + q(dir() / "keep-reg-full") + " --jobs 2 --results " +
                       q(dir() / "keep-full.jsonl") + " --db " + q(dir() / "keep-full.db"));
  ASSERT_EQ(full.code, 1) << full.out << full.err;
  std::string files;
  for (int i = 0; i < 3; ++i) {
    const fs::path f = dir() / ("keep-" + std::to_string(i) + ".jsonl");
    auto r = simtspec(common + q(dir() / ("keep-reg-" + std::to_string(i))) + " --shard " +
                      std::to_string(i) + "/3 --no-db --results " + q(f));
    ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
    files += " " + q(f);
  }
  auto m = simtspec("merge" + files + " --out " + q(dir() / "keep-merged") + " --db " +
                    q(dir() / "keep-merged.db"));
  EXPECT_EQ(m.code, 1) << m.out << m.err;
  const fs::path merged = dir() / "keep-merged" / "fuzz-results.jsonl";
  EXPECT_EQ(programs(merged), programs(dir() / "keep-full.jsonl"));
  using Failure = std::tuple<std::string, uint64_t, uint64_t>;  // signature, k, count
  auto failures = [&](const fs::path& p) {
    std::vector<Failure> out;
    for (const auto& v : lines(p))
      if (const json::Value* f = v.find("failure"))
        out.emplace_back(f->find("signature")->as_string(), f->find("k")->as_uint(),
                         f->find("count")->as_uint());
    return out;
  };
  const auto want = failures(dir() / "keep-full.jsonl");
  EXPECT_EQ(failures(merged), want);
  uint64_t duplicates = 0;
  for (const auto& f : want) duplicates += std::get<2>(f) - 1;
  EXPECT_GT(duplicates, 0u) << "some signature failed more than once";
  // results.merge, results.store.fuzz: the merged fuzz run is recorded as the
  // unsharded run was: the same implementation, counts and failure rows.
  auto only_run = [&](const fs::path& db) {
    auto opened = reports::Store::open(db.string());
    EXPECT_TRUE(std::holds_alternative<reports::Store>(opened)) << db;
    const auto& store = std::get<reports::Store>(opened);
    const auto runs = store.runs();
    EXPECT_EQ(runs.size(), 1u) << db;
    std::set<std::tuple<std::string, std::string, std::string>> rows;
    for (const auto& r : store.results(runs.at(0).id))
      rows.emplace(r.test_id, r.config_key, r.status);
    return std::pair(runs.at(0), rows);
  };
  const auto [full_run, full_rows] = only_run(dir() / "keep-full.db");
  const auto [merged_run, merged_rows] = only_run(dir() / "keep-merged.db");
  EXPECT_EQ(merged_run.kind, "fuzz");
  EXPECT_EQ(merged_run.state, "complete");
  EXPECT_EQ(merged_run.impl_name, full_run.impl_name);
  EXPECT_EQ(merged_run.impl_version, full_run.impl_version);
  EXPECT_EQ(merged_run.runner_digest, full_run.runner_digest);
  EXPECT_EQ(merged_run.runner_digest.size(), 64u);
  EXPECT_EQ(merged_run.counts, full_run.counts);
  EXPECT_EQ(merged_run.selected, full_run.selected);
  EXPECT_EQ(merged_run.run, full_run.run);
  EXPECT_EQ(merged_rows, full_rows);
  EXPECT_EQ(merged_rows.size(), want.size());
  EXPECT_NE(merged_run.options.find("merged_from"), std::string::npos) << merged_run.options;
}

// results.merge: `simtspec test --shard I/3` three times and once unsharded; the
// merged results.jsonl is the unsharded one but for durations, the start, the
// host and the shard options, with the records in suite order.
TEST_F(Campaign, TestShardsMergeIntoTheUnshardedRun) {
  const std::string suites = test::source_path("suites");
  const std::string common = "test " + test::shell_quote(suites) + " --filter 'branch.*' --quiet";
  auto full = simtspec(common + " --out " + q(dir() / "t-full"));
  ASSERT_EQ(full.code, 0) << full.out << full.err;
  std::string shards;
  for (int i = 0; i < 3; ++i) {
    auto r = simtspec(common + " --shard " + std::to_string(i) + "/3 --out " +
                      q(dir() / ("t" + std::to_string(i))));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    shards += " " + q(dir() / ("t" + std::to_string(i)));
  }
  const fs::path db = dir() / "merged.db";
  auto m = simtspec("merge" + shards + " --out " + q(dir() / "t-merged") + " --db " + q(db));
  ASSERT_EQ(m.code, 0) << m.out << m.err;
  for (const char* f : {"results.jsonl", "junit.xml", "index.html"})
    EXPECT_TRUE(fs::exists(dir() / "t-merged" / f)) << f;
  EXPECT_FALSE(fs::exists(dir() / "t-merged" / "results.json"));  // results.stream: one file
  // Read back as records (results.test joins each test's fields back in).
  auto read = [](const fs::path& p) {
    auto r = reports::read_results(p.string());
    EXPECT_TRUE(std::holds_alternative<reports::ResultsFile>(r)) << p;
    return std::get<reports::ResultsFile>(std::move(r));
  };
  const reports::ResultsFile a = read(dir() / "t-full" / "results.jsonl");
  const reports::ResultsFile b = read(dir() / "t-merged" / "results.jsonl");
  ASSERT_GT(a.records.size(), 20u);
  ASSERT_EQ(a.records.size(), b.records.size());
  auto strip = [](json::Value v) {
    json::Value out = json::Object{};
    for (const auto& [k, x] : v.as_object())
      if (k != "duration_ms" && k != "started" && k != "host") out[k] = x;
    // Drops `keys` from the object at `field`, if there is one.
    auto drop = [&](const char* field, const std::set<std::string>& keys) {
      const json::Value* at = out.find(field);
      if (!at || !at->is_object()) return;
      json::Value kept = json::Object{};
      for (const auto& [k, x] : at->as_object())
        if (!keys.count(k)) kept[k] = x;
      out[field] = kept;
    };
    drop("options", {"shard", "merged_from", "jobs"});
    return out;
  };
  // The header, then every record matched by configuration, then the summary.
  EXPECT_EQ(json::dump(strip(a.header)), json::dump(strip(b.header)));
  EXPECT_EQ(b.header.find("options")->find("shard")->as_string(), "0/1");
  EXPECT_EQ(b.header.find("options")->find("merged_from")->as_array().size(), 3u);
  std::map<std::string, std::string> by_config;
  for (const auto& r : a.records)
    by_config[r.file + "[" + r.config_key + "]"] = json::dump(strip(reports::to_json(r)));
  for (size_t i = 0; i < b.records.size(); ++i) {
    const auto& r = b.records[i];
    const std::string key = r.file + "[" + r.config_key + "]";
    ASSERT_TRUE(by_config.count(key)) << key;
    EXPECT_EQ(json::dump(strip(reports::to_json(r))), by_config[key]) << key;
    by_config.erase(key);
    if (i > 0) {  // suite order: by file, then matrix order within a file
      EXPECT_LE(b.records[i - 1].file, r.file);
    }
  }
  EXPECT_TRUE(by_config.empty());
  auto summary = [](json::Value s) {
    std::erase_if(s.as_object(), [](const auto& kv) { return kv.first == "seconds"; });
    return json::dump(s);
  };
  EXPECT_EQ(summary(a.summary), summary(b.summary));
  // results.merge, results.store: the merged run is one run of the store, with the
  // shards' provenance (the suite digest of the header) and every result.
  auto opened = reports::Store::open(db.string());
  ASSERT_TRUE(std::holds_alternative<reports::Store>(opened));
  const auto& store = std::get<reports::Store>(opened);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, "complete");
  EXPECT_EQ(runs[0].impl_name, "reference");
  EXPECT_EQ(runs[0].suite_digest, b.header.find("suite")->find("digest")->as_string());
  EXPECT_EQ(runs[0].suite_digest.size(), 64u);
  EXPECT_EQ(runs[0].selected, a.summary.find("selected")->as_uint());
  EXPECT_EQ(store.results(runs[0].id).size(), b.records.size());
  EXPECT_NE(runs[0].options.find("merged_from"), std::string::npos) << runs[0].options;

  // Bad sets of shards exit 2, naming what is wrong.
  auto missing =
      simtspec("merge " + q(dir() / "t0") + " " + q(dir() / "t1") + " --out " + q(dir() / "bad1"));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("shard 2/3 is missing"), std::string::npos) << missing.err;
  auto twice = simtspec("merge" + shards + " " + q(dir() / "t1") + " --out " + q(dir() / "bad2"));
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("shard 1/3 is given twice"), std::string::npos) << twice.err;
  // A shard run with another filter: a header field differs.
  std::string t2 = test::read_all(dir() / "t2" / "results.jsonl");
  const std::string from = "\"filter\":\"branch.*\"";
  ASSERT_NE(t2.find(from), std::string::npos);
  fs::create_directories(dir() / "t2-other");
  test::write_all(dir() / "t2-other" / "results.jsonl",
                  t2.replace(t2.find(from), from.size(), "\"filter\":\"branch.x*\""));
  auto differs = simtspec("merge " + q(dir() / "t0") + " " + q(dir() / "t1") + " " +
                          q(dir() / "t2-other") + " --out " + q(dir() / "bad3"));
  EXPECT_EQ(differs.code, 2);
  EXPECT_NE(differs.err.find("header field 'options.filter' differs"), std::string::npos)
      << differs.err;
  // Shard 0's records again as shard 2: configurations in two shards.
  std::string t0 = test::read_all(dir() / "t0" / "results.jsonl");
  const std::string s0 = "\"shard\":\"0/3\"";
  ASSERT_NE(t0.find(s0), std::string::npos);
  fs::create_directories(dir() / "t0-as-2");
  test::write_all(dir() / "t0-as-2" / "results.jsonl",
                  t0.replace(t0.find(s0), s0.size(), "\"shard\":\"2/3\""));
  auto doubled = simtspec("merge " + q(dir() / "t0") + " " + q(dir() / "t1") + " " +
                          q(dir() / "t0-as-2") + " --out " + q(dir() / "bad4"));
  EXPECT_EQ(doubled.code, 2);
  EXPECT_NE(doubled.err.find("is in two shards"), std::string::npos) << doubled.err;
}

// oracle.fuzz.dedupe, oracle.regress.promote: a --keep-going run against a
// planted fault counts its failures by signature and promotes one test per
// signature, carrying it; a second run into the same folder promotes nothing.
TEST_F(Campaign, PromotesOnlyNewSignatures) {
  const std::string runner = faulty_toml("cmp-unsigned", "promote");
  const fs::path out = dir() / "promote-reg";
  const std::string args = "fuzz --invariant differential --runner " + test::shell_quote(runner) +
                           " --seed 20261122 --count 300 --keep-going --shrink-time 20 --out " +
                           q(out) + " --results ";
  auto first = simtspec(args + q(dir() / "promote-1.jsonl"));
  ASSERT_EQ(first.code, 1) << first.out << first.err;
  std::set<std::string> written;
  for (const auto& e : fs::directory_iterator(out)) written.insert(e.path().filename().string());
  ASSERT_FALSE(written.empty());
  // Each signature once, with its count: the failing programs with it.
  std::map<std::string, uint64_t> per_sig, counted;
  for (const auto& v : lines(dir() / "promote-1.jsonl")) {
    if (const json::Value* s = v.find("signature"); s && v.find("verdict"))
      ++per_sig[s->as_string()];
    if (const json::Value* f = v.find("failure")) {
      EXPECT_FALSE(counted.count(f->find("signature")->as_string()));
      counted[f->find("signature")->as_string()] = f->find("count")->as_uint();
      ASSERT_TRUE(f->find("file")) << "a new signature is promoted";
      EXPECT_NE(test::read_all(f->find("file")->as_string())
                    .find("; signature = \"" + f->find("signature")->as_string() + "\""),
                std::string::npos);
    }
  }
  EXPECT_EQ(counted, per_sig);
  EXPECT_EQ(written.size(), counted.size());
  bool some_duplicate = false;
  for (const auto& [sig, n] : counted) some_duplicate = some_duplicate || n > 1;
  EXPECT_TRUE(some_duplicate) << "the planted fault fails many programs with one signature";
  EXPECT_NE(first.out.find("failure differential/buffer/-/-  x"), std::string::npos) << first.out;
  auto lint = simtspec("lint " + q(out));
  EXPECT_EQ(lint.code, 0) << lint.out << lint.err;

  auto second = simtspec(args + q(dir() / "promote-2.jsonl"));
  EXPECT_EQ(second.code, 1) << "known failures still fail\n" << second.out << second.err;
  std::set<std::string> after;
  for (const auto& e : fs::directory_iterator(out)) after.insert(e.path().filename().string());
  EXPECT_EQ(after, written) << "nothing new promoted";
  EXPECT_NE(second.out.find("known signature, see " + (out / *written.begin()).string()),
            std::string::npos)
      << second.out;
}

// oracle.fuzz.ignore: an ignore list beside the runner description turns the
// failures it matches into ignored ones (exit 0 when nothing else fails); a
// malformed one stops the run with its location (exit 2).
TEST_F(Campaign, IgnoreListBesideTheRunner) {
  const std::string runner = faulty_toml("cmp-unsigned", "ignoring");
  const fs::path list = dir() / "ignoring.fuzz-ignore.toml";
  test::write_all(list, "[[ignore]]\nsignature = \"differential/*\"\nreason = \"bug 12\"\n");
  const std::string args = "fuzz --invariant differential --runner " + test::shell_quote(runner) +
                           " --seed 20261122 --count 100 --out " + q(dir() / "ignore-reg");
  auto r = simtspec(args);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ignored differential/buffer/-/-  x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(bug 12)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir() / "ignore-reg")) << "nothing ignored is written";
  test::write_all(list, "[[ignore]]\nsignature = \"differential/*\"\nreasn = \"bug 12\"\n");
  auto bad = simtspec(args);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find(list.string() + ":3: unknown key 'reasn'"), std::string::npos) << bad.err;
}

// Bad shards, results files and merge inputs are bad usage: exit 2 with a message.
TEST_F(Campaign, BadInputExitsTwo) {
  const std::string fuzz = "fuzz --invariant sequential --seed 1 --count 2 --out " + q(dir() / "x");
  for (const char* shard : {"3/3", "1/0", "1/3x", "-1/3", "a/b", "1/", "/3", "1 /3"}) {
    auto r = simtspec(fuzz + " --shard " + test::shell_quote(shard));
    EXPECT_EQ(r.code, 2) << shard << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("--shard must be I/N"), std::string::npos) << shard << "\n" << r.err;
  }
  auto results = simtspec(fuzz + " --results " + q(dir() / "no" / "such" / "dir" / "r.jsonl"));
  EXPECT_EQ(results.code, 2) << results.err;
  test::write_all(dir() / "not-results.jsonl", "{\"a\": 1}\n");
  auto merge = simtspec("merge " + q(dir() / "not-results.jsonl") + " --out " + q(dir() / "m"));
  EXPECT_EQ(merge.code, 2);
  EXPECT_NE(merge.err.find("neither a simtspec test results file nor a fuzz results file"),
            std::string::npos)
      << merge.err;
  test::write_all(dir() / "bad-fuzz.jsonl",
                  "{\"schema\": \"simtspec-fuzz/1\", \"shard\": \"0/1\"}\n{\"invariant\": "
                  "\"x\", \"k\": -3, \"verdict\": \"holds\"}\n{}\n");
  auto bad = simtspec("merge " + q(dir() / "bad-fuzz.jsonl") + " --out " + q(dir() / "m2"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("bad-fuzz.jsonl:2: a program needs invariant, k and verdict"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace simt
