// Campaigns across machines and fuzz triage, the parts that need no run: the
// shapes of the manifests in .ci/campaign (README, "Campaigns across machines";
// results.merge, oracle.fuzz.shard), the split of the seed space
// (oracle.fuzz.shard), failure signatures (oracle.fuzz.signature) and ignore lists
// (oracle.fuzz.ignore). The runs themselves: campaign_e2e_test.cpp.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compare.h"
#include "fuzz.h"
#include "isa/isa.h"
#include "support.h"

namespace simt {
namespace {

const std::string kBinary = SIMT_BINARY_DIR "/simtspec";

std::string manifest(const std::string& name) {
  std::string text = test::read_all(test::source_path(".ci/campaign/" + name));
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

// One integer captured by `re` (its first group) in `text`; -1 if none.
long long captured(const std::string& text, const std::string& re) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(re))) return -1;
  return std::stoll(m[1].str());
}

// A simtspec command of a manifest: its subcommand and the options it names.
struct Command {
  std::string sub, line;
  std::vector<std::string> options;
};

// The simtspec commands in a manifest's text: on lines that are not comments,
// each `simtspec test|fuzz|merge` up to the end of its shell command.
std::vector<Command> commands(const std::string& text) {
  std::vector<Command> out;
  std::istringstream in(text);
  const std::regex cmd(R"((^|[\s/])simtspec (test|fuzz|merge)(\s|$))");
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::smatch m;
    if (!std::regex_search(line, m, cmd)) continue;
    Command c;
    c.sub = m[2].str();
    c.line = line;
    std::istringstream words(m.suffix().str());
    for (std::string w; words >> w;) {
      if (w == "||" || w == "&&" || w == ";" || w == "|") break;
      if (w.rfind("--", 0) == 0) c.options.push_back(w.substr(0, w.find('=')));
    }
    out.push_back(std::move(c));
  }
  return out;
}

// `simtspec SUB --help`, run once per subcommand, in a folder of this process's own
// (run_command captures the output through files there).
const std::string& help_of(const std::string& sub) {
  static std::map<std::string, std::string> help;
  if (!help.count(sub)) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("simtspec_campaign_help_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto r = test::run_command(kBinary, sub + " --help", dir);
    EXPECT_EQ(r.code, 0) << r.err;
    help[sub] = r.out;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return help[sub];
}

// Whether a command's `--shard` argument is `want` (quoted or not).
bool shards_as(std::string line, const std::string& want) {
  std::erase(line, '"');
  const std::string arg = "--shard " + want;
  const size_t at = line.find(arg);
  return at != std::string::npos &&
         (at + arg.size() == line.size() || line[at + arg.size()] == ' ');
}

// Every option a manifest's simtspec commands name is one `simtspec SUB --help`
// lists; test and fuzz shards both run, with index/N as their --shard, and a
// merge follows.
void expect_commands(const std::string& name, const std::string& text, const std::string& index,
                     long long n) {
  std::set<std::string> subs;
  for (const Command& c : commands(text)) {
    subs.insert(c.sub);
    for (const auto& o : c.options) {
      EXPECT_TRUE(std::regex_search(help_of(c.sub), std::regex(o + R"(([^a-z-]|$))")))
          << name << ": simtspec " << c.sub << " has no option " << o << "\n  " << c.line;
    }
    if (c.sub != "merge") {
      EXPECT_TRUE(shards_as(c.line, index + "/" + std::to_string(n)))
          << name << ": not --shard " << index << "/" << n << ": " << c.line;
    }
  }
  EXPECT_EQ(subs, (std::set<std::string>{"test", "fuzz", "merge"})) << name;
}

TEST(CampaignManifests, KubernetesIndexedJob) {
  const std::string text = manifest("k8s-indexed-job.yaml");
  const size_t split = text.find("\n---\n");
  ASSERT_NE(split, std::string::npos) << "the shards' Job, then the merge's";
  const std::string shards = text.substr(0, split);
  EXPECT_NE(shards.find("completionMode: Indexed"), std::string::npos);
  const long long n = captured(shards, R"(\n\s*completions:\s*(\d+))");
  ASSERT_GT(n, 1);
  EXPECT_EQ(captured(shards, R"(\n\s*parallelism:\s*(\d+))"), n);
  EXPECT_NE(shards.find("mountPath: /results"), std::string::npos) << "a shared volume";
  EXPECT_TRUE(commands(text.substr(split)).size() >= 1u &&
              commands(text.substr(split))[0].sub == "merge")
      << "the second Job merges";
  expect_commands("k8s-indexed-job.yaml", text, "${JOB_COMPLETION_INDEX}", n);
}

TEST(CampaignManifests, SlurmJobArray) {
  const std::string text = manifest("slurm-array.sh");
  const long long last = captured(text, R"(\n#SBATCH --array=0-(\d+)\n)");
  ASSERT_GE(last, 1);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(sbatch --dependency=afterany:)")))
      << "a merge job that depends on the array";
  expect_commands("slurm-array.sh", text, "${SLURM_ARRAY_TASK_ID}", last + 1);
}

TEST(CampaignManifests, CiMatrix) {
  const std::string text = manifest("ci-matrix.yml");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\n\s*shard:\s*\[([0-9, ]*)\])")));
  std::vector<long long> listed;
  std::istringstream in(m[1].str());
  for (std::string x; std::getline(in, x, ',');) listed.push_back(std::stoll(x));
  const long long n = static_cast<long long>(listed.size());
  ASSERT_GT(n, 1);
  for (long long i = 0; i < n; ++i) EXPECT_EQ(listed[i], i) << "shards 0..N-1 in order";
  const size_t merge = text.find("\n  merge:\n");
  ASSERT_NE(merge, std::string::npos);
  EXPECT_TRUE(std::regex_search(text.substr(merge), std::regex(R"(\n\s*needs:\s*\[?\s*shard\b)")))
      << "the merge job needs the shards";
  expect_commands("ci-matrix.yml", text, "${{ matrix.shard }}", n);
}

// The README documents each manifest with the merge step, and its commands name
// real options.
TEST(CampaignManifests, ReadmeSection) {
  const std::string readme = test::read_all(test::source_path("README.md"));
  const size_t at = readme.find("\n## Campaigns across machines\n");
  ASSERT_NE(at, std::string::npos);
  const std::string section = readme.substr(at, readme.find("\n## ", at + 1) - at);
  for (const char* name : {"k8s-indexed-job.yaml", "slurm-array.sh", "ci-matrix.yml",
                           "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "simtspec merge"})
    EXPECT_NE(section.find(name), std::string::npos) << name;
  const auto cmds = commands(section);
  EXPECT_GE(cmds.size(), 4u);
  for (const Command& c : cmds) {
    for (const auto& o : c.options) {
      EXPECT_TRUE(std::regex_search(help_of(c.sub), std::regex(o + R"(([^a-z-]|$))")))
          << "README: simtspec " << c.sub << " has no option " << o << "\n  " << c.line;
    }
  }
}

// The checks above can fail: a manifest whose N disagrees, or that names an
// option simtspec lacks, is caught.
TEST(CampaignManifests, ChecksCatchBadManifests) {
  const std::string bad = "simtspec test suites --shard ${I}/3 --no-such-option\n";
  auto c = commands(bad);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].options, (std::vector<std::string>{"--shard", "--no-such-option"}));
  EXPECT_TRUE(shards_as(c[0].line, "${I}/3"));
  EXPECT_FALSE(shards_as(c[0].line, "${I}/4"));
  EXPECT_FALSE(shards_as(c[0].line, "${I}/31"));
  EXPECT_TRUE(commands("# simtspec test --shard 0/1\n").empty()) << "comments are not commands";
}

// oracle.fuzz.shard: the shards of a --count run partition its programs.
TEST(FuzzShard, ShardsPartitionThePrograms) {
  for (uint64_t count = 0; count <= 12; ++count)
    for (uint64_t n = 1; n <= 5; ++n) {
      std::multiset<uint64_t> seen;
      for (uint64_t s = 0; s < n; ++s) {
        const uint64_t programs = gen::shard_programs(count, s, n);
        for (uint64_t i = 0; i < programs; ++i) {
          const uint64_t k = gen::shard_program(i, s, n);
          EXPECT_EQ(k % n, s);
          seen.insert(k);
        }
      }
      std::multiset<uint64_t> want;
      for (uint64_t k = 0; k < count; ++k) want.insert(k);
      EXPECT_EQ(seen, want) << count << " programs in " << n << " shards";
    }
}

// oracle.fuzz.signature
TEST(FuzzSignature, FromTheCheck) {
  struct Row {
    std::string invariant;
    std::optional<gen::Difference> d;
    std::string want;
  };
  const Row rows[] = {
      {"differential", gen::Difference{"buffer", "", ""}, "differential/buffer/-/-"},
      {"differential", gen::Difference{"status", "syscall", "trap.control"},
       "differential/status/syscall/trap.control"},
      {"differential", gen::Difference{"event", "div_zero", "alu.binary"},
       "differential/event/div_zero/alu.binary"},
      {"image-exchange", gen::Difference{"image", "", ""}, "image-exchange/image/-/-"},
      {"differential", gen::Difference{"error", "", ""}, "differential/error/-/-"},
      {"scheduler", std::nullopt, "scheduler/other/-/-"},
  };
  for (const Row& r : rows) {
    gen::Check c = gen::failing("x");
    c.difference = r.d;
    EXPECT_EQ(gen::failure_signature(r.invariant, c), r.want);
  }
}

// oracle.fuzz.signature: the difference of constructed failures, through the
// comparison the differential invariant makes (runner.firstdiff).
TEST(FuzzSignature, FromTheComparison) {
  auto prog = test::build(
      ".wave 4\n.buffer out u32[threads] out\n    shl v9, %lane, 2\n    div v1, %lane, 0\n"
      "    st out[v9], v1\n    sys 3\n    exit\n");
  ASSERT_TRUE(prog);
  auto pc_of = [&](const char* mnemonic) {
    for (uint32_t pc = 0; pc < prog->insns.size(); ++pc)
      if (prog->insns[pc].op == *isa::find(mnemonic)) return pc;
    ADD_FAILURE() << mnemonic;
    return 0u;
  };
  auto outcome = [](const std::string& status, std::optional<model::Event> e,
                    std::vector<int64_t> out) {
    runners::RunResult r;
    r.kind = runners::RunResult::Kind::Outcome;
    r.outcome.status = status;
    r.outcome.event = std::move(e);
    r.outcome.buffers.push_back({"out", "u32", std::move(out)});
    return r;
  };
  auto event = [](const std::string& name, uint32_t pc) {
    model::Event e;
    e.name = name;
    e.pc = pc;
    return e;
  };
  struct Row {
    runners::RunResult ref, got;
    std::string want;  // kind/event/family
  };
  const uint32_t div = pc_of("div"), sys = pc_of("sys");
  const Row rows[] = {
      {outcome("completed", std::nullopt, {0, 1, 2, 3}),
       outcome("completed", std::nullopt, {0, 1, 7, 3}), "buffer/-/-"},
      {outcome("trapped", event("div_zero", div), {0, 0, 0, 0}),
       outcome("completed", std::nullopt, {0, 0, 0, 0}), "status/div_zero/alu.binary"},
      {outcome("completed", std::nullopt, {0, 0, 0, 0}),
       outcome("trapped", event("syscall", sys), {0, 0, 0, 0}), "status/syscall/trap.control"},
      {outcome("trapped", event("syscall", sys), {0, 0, 0, 0}),
       outcome("trapped", event("syscall", div), {0, 0, 0, 0}), "event/syscall/trap.control"},
      {outcome("trapped", event("syscall", sys), {0, 1, 0, 0}),
       outcome("trapped", event("syscall", sys), {0, 0, 0, 0}), "buffer/syscall/trap.control"},
      {outcome("trapped", event("syscall", 9999), {0, 0, 0, 0}),
       outcome("completed", std::nullopt, {0, 0, 0, 0}), "status/syscall/-"},
  };
  harness::Layout l;
  l.wave = l.simd = 4;
  for (const Row& r : rows) {
    harness::Verdict v = harness::compare_with_reference(r.ref, r.got, l);
    ASSERT_FALSE(v.ok) << r.want;
    gen::Check c = gen::failing(v.message);
    c.difference = gen::difference_of(v, r.ref, r.got, *prog);
    EXPECT_EQ(gen::failure_signature("differential", c), "differential/" + r.want) << v.message;
  }
}

// oracle.fuzz.ignore
TEST(FuzzIgnore, ParsesAndMatches) {
  auto parsed = gen::parse_ignore_list(
      "# known\n[[ignore]]\nsignature = \"differential/buffer/*\"\nreason = \"bug 12\"\n\n"
      "[[ignore]]\nsignature = \"differential/*/syscall/?rap.control\"\nreason = \"bug 13\"\n");
  ASSERT_TRUE(std::holds_alternative<std::vector<gen::IgnoreEntry>>(parsed))
      << std::get<std::string>(parsed);
  const auto& list = std::get<std::vector<gen::IgnoreEntry>>(parsed);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(gen::ignored_by(list, "differential/buffer/-/-"), "bug 12");
  EXPECT_EQ(gen::ignored_by(list, "differential/buffer/syscall/trap.control"), "bug 12")
      << "the first entry that matches gives the reason";
  EXPECT_EQ(gen::ignored_by(list, "differential/status/syscall/trap.control"), "bug 13");
  EXPECT_EQ(gen::ignored_by(list, "differential/status/-/-"), std::nullopt);
  EXPECT_EQ(gen::ignored_by(list, "structured/buffer/-/-"), std::nullopt);
  auto empty = gen::parse_ignore_list("");
  ASSERT_TRUE(std::holds_alternative<std::vector<gen::IgnoreEntry>>(empty));
}

TEST(FuzzIgnore, MalformedListsNameTheLine) {
  const std::pair<const char*, const char*> bad[] = {
      {"[[ignore]]\nsignature = \"a\"\nreasn = \"b\"\n", "3: unknown key 'reasn'"},
      {"[[ignore]]\nsignature = \"a\"\n", "without a reason"},
      {"[[ignore]]\nreason = \"b\"\n", "without a signature"},
      {"[[ignore]]\nsignature = 3\nreason = \"b\"\n", "2: 'signature' must be a non-empty string"},
      {"[[ignore]]\nsignature = \"\"\nreason = \"b\"\n", "2: 'signature' must be"},
      {"ignore = 1\n", "must be an array of tables"},
      {"other = \"x\"\n", "1: unknown key 'other'"},
      {"[[ignore]]\nsignature = \"a\n", "2: "},
  };
  for (const auto& [text, want] : bad) {
    auto parsed = gen::parse_ignore_list(text);
    ASSERT_TRUE(std::holds_alternative<std::string>(parsed)) << text;
    EXPECT_NE(std::get<std::string>(parsed).find(want), std::string::npos)
        << text << "\n -> " << std::get<std::string>(parsed);
  }
}

}  // namespace
}  // namespace simt
