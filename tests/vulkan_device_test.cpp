// The Vulkan runner's library (runners/vulkan) on a real device: GLSL compiled in
// process, dispatched, and the buffers checked. Meant for lavapipe (ctest sets
// VK_ICD_FILENAMES to it and MESA_SHADER_CACHE_DISABLE=true); every test skips
// when the process has no Vulkan device.
//
// Some checks need a process of their own, because lavapipe reads
// LP_NATIVE_VECTOR_WIDTH once per process and a timed-out dispatch leaves the
// device busy: the test program runs itself with SIMT_VK_CHILD=<mode> (see
// child_main), bounded by `timeout`, and checks what the child printed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "device.h"
#include "glsl.h"
#include "vulkan_test_support.h"

namespace simt::vulkan {
namespace {

using namespace std::chrono_literals;

constexpr auto kTimeout = 20s;  // a dispatch of these tests (the first one compiles)

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// Compiles, creates the pipeline, uploads `in` (one vector of words per binding),
// dispatches `groups` workgroups and returns the buffers' contents afterwards.
// Any error is a test failure (and an empty result).
std::vector<std::vector<uint32_t>> run(Device& dev, const std::string& glsl,
                                       const std::vector<std::vector<uint32_t>>& in,
                                       uint32_t groups = 1) {
  auto spirv = glsl_compile(glsl);
  if (!spirv.ok()) {
    ADD_FAILURE() << spirv.error().to_string() << "\nin:\n" << glsl;
    return {};
  }
  PipelineOptions opt;
  opt.buffers = static_cast<uint32_t>(in.size());
  auto pipeline = dev.create_pipeline(*spirv, opt);
  if (!pipeline.ok()) {
    ADD_FAILURE() << pipeline.error().to_string();
    return {};
  }
  std::vector<Buffer> buffers;
  std::vector<Buffer*> bound;
  for (const auto& words : in) {
    auto b = dev.create_buffer(words.size() * 4);
    if (!b.ok()) {
      ADD_FAILURE() << b.error().to_string();
      return {};
    }
    EXPECT_TRUE(b->upload_words(words).ok());
    buffers.push_back(std::move(b).value());
  }
  for (auto& b : buffers) bound.push_back(&b);
  Status s = dev.dispatch(*pipeline, bound, groups, kTimeout);
  if (!s.ok()) {
    ADD_FAILURE() << s.error().to_string();
    return {};
  }
  std::vector<std::vector<uint32_t>> out;
  for (size_t i = 0; i < in.size(); ++i) {
    out.emplace_back(in[i].size());
    EXPECT_TRUE(buffers[i].download_words(out.back()).ok());
  }
  return out;
}

bool is_llvmpipe(Device* dev) {
  return dev->info().name.find("llvmpipe") != std::string::npos;
}

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = Device::get();
    if (!d.ok()) SIMT_NO_VULKAN_DEVICE(d.error().to_string());
    dev_ = d.value();
    sg_ = dev_->info().subgroup.size;
  }
  Device* dev_ = nullptr;
  uint32_t sg_ = 0;
};

// The sizes a pipeline can run with: the default, and with subgroup size control
// every power of two of the device's range (no device needed).
TEST(VulkanSubgroupSizes, TheDefaultAndWithSizeControlTheRange) {
  SubgroupInfo s;
  s.size = 32;
  s.min_size = 16;
  s.max_size = 64;
  EXPECT_EQ(s.sizes(), (std::vector<uint32_t>{32}));
  s.size_control = true;
  EXPECT_EQ(s.sizes(), (std::vector<uint32_t>{16, 32, 64}));
  s.size = 4, s.min_size = 4, s.max_size = 4;
  EXPECT_EQ(s.sizes(), (std::vector<uint32_t>{4}));
  s.size = 64, s.min_size = 8, s.max_size = 64;
  EXPECT_EQ(s.sizes(), (std::vector<uint32_t>{8, 16, 32, 64}));
}

TEST_F(VulkanTest, ReportsTheDeviceAndItsSubgroups) {
  const DeviceInfo& info = dev_->info();
  std::printf("device: %s, Vulkan %s, driver %s\nsubgroup size %u (%u..%u), operations: %s\n",
              info.name.c_str(), info.api_version_string().c_str(), info.driver.c_str(), sg_,
              info.subgroup.min_size, info.subgroup.max_size,
              info.subgroup.operation_names().c_str());
  std::printf(
      "workgroups: up to %u invocations, %u in x, %u of them; shared memory %u bytes\n"
      "storage buffers: %u per pipeline, %u bytes each; int64 %d int16 %d int8 %d "
      "storage 8-bit %d 16-bit %d; full subgroups %d\n",
      info.max_workgroup_invocations, info.max_workgroup_size_x, info.max_workgroup_count_x,
      info.max_shared_memory, info.max_storage_buffers, info.max_storage_buffer_range, info.int64,
      info.int16, info.int8, info.storage_8bit, info.storage_16bit, info.subgroup.full_subgroups);
  EXPECT_GE(info.api_version, static_cast<uint32_t>(VK_API_VERSION_1_2));
  EXPECT_GT(sg_, 0u);
  EXPECT_EQ(sg_ & (sg_ - 1), 0u) << "subgroup size " << sg_ << " is not a power of two";
  EXPECT_LE(info.subgroup.min_size, sg_);
  EXPECT_GE(info.subgroup.max_size, sg_);
  EXPECT_TRUE(info.subgroup.has(VK_SUBGROUP_FEATURE_BASIC_BIT));
  EXPECT_GE(info.max_storage_buffers, 4u);
  EXPECT_GE(info.max_workgroup_invocations, 128u);
}

// 4 subgroups each take an atomicAdd on one counter: the old values are 0..4S-1,
// and within a subgroup they increase in lane order (lavapipe adds a subgroup's
// increments at once, in lane order; Vulkan does not promise the order).
TEST_F(VulkanTest, AtomicAddOverFourSubgroupsGivesAPermutationInLaneOrder) {
  const uint32_t n = 4 * sg_;
  std::string glsl = replace_all(R"(#version 450
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = N) in;
layout(set = 0, binding = 0) buffer Counter { uint counter; };
layout(set = 0, binding = 1) buffer Old { uint old[]; };
layout(set = 0, binding = 2) buffer Where { uint where[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  old[i] = atomicAdd(counter, 1u);
  where[i] = gl_SubgroupID * 1000u + gl_SubgroupInvocationID;
}
)",
                                 "N", std::to_string(n));
  auto out = run(*dev_, glsl, {{0}, std::vector<uint32_t>(n), std::vector<uint32_t>(n)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0][0], n);
  std::vector<uint32_t> sorted = out[1];
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << "not a permutation of 0.." << n - 1;
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[2][i], (i / sg_) * 1000 + i % sg_) << "invocation " << i;
    if (i % sg_ != 0) {
      EXPECT_LT(out[1][i - 1], out[1][i])
          << "lanes " << i % sg_ - 1 << " and " << i % sg_ << " of subgroup " << i / sg_;
    }
  }
}

// Inside a divergent if/else a ballot holds exactly the lanes on that path; after
// it, all lanes again.
TEST_F(VulkanTest, BallotInsideADivergentIfHoldsThatPathsLanes) {
  ASSERT_TRUE(dev_->info().subgroup.has(VK_SUBGROUP_FEATURE_BALLOT_BIT));
  ASSERT_LE(sg_, 32u);
  const uint32_t n = 2 * sg_;
  std::string glsl = replace_all(R"(#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = N) in;
layout(set = 0, binding = 0) buffer Inside { uint inside[]; };
layout(set = 0, binding = 1) buffer After { uint after[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  uint lane = gl_SubgroupInvocationID;
  if (lane % 3u == 0u || lane == 5u) {
    inside[i] = subgroupBallot(true).x;
  } else {
    inside[i] = subgroupBallot(true).x;
  }
  after[i] = subgroupBallot(true).x;
}
)",
                                 "N", std::to_string(n));
  auto out = run(*dev_, glsl, {std::vector<uint32_t>(n), std::vector<uint32_t>(n)});
  ASSERT_EQ(out.size(), 2u);
  const uint32_t all = sg_ == 32 ? 0xffffffffu : (1u << sg_) - 1;
  uint32_t then_mask = 0;
  for (uint32_t l = 0; l < sg_; ++l) {
    if (l % 3 == 0 || l == 5) then_mask |= 1u << l;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t lane = i % sg_;
    const bool then_path = (then_mask >> lane) & 1;
    const uint32_t want = then_path ? then_mask : all & ~then_mask;
    EXPECT_EQ(out[0][i], want) << "lane " << lane;
    EXPECT_EQ(out[1][i], all) << "lane " << lane << " after the if";
  }
}

// subgroupShuffle with an index read from memory; subgroupBroadcast with a lane
// that is dynamically uniform (read from memory), which needs SPIR-V 1.5.
TEST_F(VulkanTest, ShuffleAndBroadcastWithDynamicLanes) {
  ASSERT_TRUE(dev_->info().subgroup.has(VK_SUBGROUP_FEATURE_SHUFFLE_BIT));
  const uint32_t n = 2 * sg_;
  std::string glsl = replace_all(R"(#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = N) in;
layout(set = 0, binding = 0) buffer Src { uint src[]; };
layout(set = 0, binding = 1) buffer Shuffled { uint shuffled[]; };
layout(set = 0, binding = 2) buffer Params { uint broadcast_lane; uint broadcast[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  uint value = i * 7u + 1u;
  shuffled[i] = subgroupShuffle(value, src[i]);
  broadcast[i] = subgroupBroadcast(value, broadcast_lane);
}
)",
                                 "N", std::to_string(n));
  std::vector<uint32_t> src(n);
  for (uint32_t i = 0; i < n; ++i) src[i] = (i * 5 + 3) % sg_;
  std::vector<uint32_t> params(n + 1);
  params[0] = sg_ - 1;
  auto out = run(*dev_, glsl, {src, std::vector<uint32_t>(n), params});
  ASSERT_EQ(out.size(), 3u);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t base = i / sg_ * sg_;
    EXPECT_EQ(out[1][i], (base + src[i]) * 7 + 1) << "invocation " << i;
    EXPECT_EQ(out[2][i + 1], (base + sg_ - 1) * 7 + 1) << "invocation " << i;
  }
}

// Shared memory written by every subgroup, a barrier, then read across subgroups.
TEST_F(VulkanTest, SharedMemoryAndBarrierAcrossSubgroups) {
  const uint32_t n = std::min(8 * sg_, dev_->info().max_workgroup_invocations);
  ASSERT_GE(n / sg_, 2u) << "needs at least two subgroups per workgroup";
  std::string glsl = replace_all(R"(#version 450
layout(local_size_x = N) in;
layout(set = 0, binding = 0) buffer Out { uint outv[]; };
shared uint cells[N];
void main() {
  uint i = gl_LocalInvocationIndex;
  cells[i] = i * i + gl_WorkGroupID.x;
  barrier();
  uint j = (i + SG + 1u) % N;
  uint k = (N - 1u) - i;
  outv[gl_WorkGroupID.x * N + i] = cells[j] + cells[k] * 3u;
}
)",
                                 "N", std::to_string(n));
  glsl = replace_all(glsl, "SG", std::to_string(sg_) + "u");
  const uint32_t groups = 3;
  auto out = run(*dev_, glsl, {std::vector<uint32_t>(n * groups)}, groups);
  ASSERT_EQ(out.size(), 1u);
  for (uint32_t g = 0; g < groups; ++g) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t j = (i + sg_ + 1) % n, k = n - 1 - i;
      EXPECT_EQ(out[0][g * n + i], (j * j + g) + (k * k + g) * 3) << "group " << g << " " << i;
    }
  }
}

TEST_F(VulkanTest, ACompileErrorNamesItsLine) {
  auto r = glsl_compile(
      "#version 450\n"
      "layout(local_size_x = 1) in;\n"
      "void main() {\n"
      "  uint x = undeclared_thing + 1u;\n"
      "}\n",
      "bad.comp");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, Error::Kind::Compile);
  ASSERT_TRUE(r.error().line.has_value()) << r.error().message;
  EXPECT_EQ(*r.error().line, 4u);
  EXPECT_NE(r.error().message.find("bad.comp:4:"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("undeclared_thing"), std::string::npos) << r.error().message;

  // A shader without main is a link error, still a compile error.
  auto no_main = glsl_compile("#version 450\nlayout(local_size_x = 1) in;\nvoid f() {}\n");
  ASSERT_FALSE(no_main.ok());
  EXPECT_EQ(no_main.error().kind, Error::Kind::Compile);
  EXPECT_FALSE(no_main.error().message.empty());
}

TEST_F(VulkanTest, CallerMistakesAreErrorsNotCrashes) {
  auto spirv = glsl_compile(R"(#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
layout(set = 0, binding = 1) buffer B { uint b[]; };
void main() { b[0] = a[0] + 1u; }
)");
  ASSERT_TRUE(spirv.ok()) << spirv.error().to_string();
  PipelineOptions opt;
  opt.buffers = 2;
  auto p = dev_->create_pipeline(*spirv, opt);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  auto a = dev_->create_buffer(16);
  auto b = dev_->create_buffer(16);
  ASSERT_TRUE(a.ok() && b.ok());

  Status one = dev_->dispatch(*p, {&*a}, 1, kTimeout);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().kind, Error::Kind::InvalidArgument);
  Status null = dev_->dispatch(*p, {&*a, nullptr}, 1, kTimeout);
  ASSERT_FALSE(null.ok());
  EXPECT_EQ(null.error().kind, Error::Kind::InvalidArgument);
  Status zero = dev_->dispatch(*p, {&*a, &*b}, 0, kTimeout);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, Error::Kind::InvalidArgument);

  const uint32_t five[5] = {1, 2, 3, 4, 5};
  Status big = a->upload_words(five);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().kind, Error::Kind::InvalidArgument);
  uint32_t word[1] = {0};
  EXPECT_FALSE(a->download_words(word, 13).ok());

  auto empty = dev_->create_buffer(0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, Error::Kind::InvalidArgument);
  const uint32_t not_spirv[] = {1, 2, 3};
  auto bad = dev_->create_pipeline(not_spirv);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, Error::Kind::InvalidArgument);

  // And the pipeline still works.
  const uint32_t forty[1] = {40};
  ASSERT_TRUE(a->upload_words(forty).ok());
  Status ok = dev_->dispatch(*p, {&*a, &*b}, 1, kTimeout);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  ASSERT_TRUE(b->download_words(word).ok());
  EXPECT_EQ(word[0], 41u);
}

// With computeFullSubgroups a pipeline may require full subgroups: with a
// workgroup size that is a multiple of the subgroup size, every ballot is full.
TEST_F(VulkanTest, FullSubgroupsCanBeRequired) {
  if (!dev_->info().subgroup.full_subgroups) GTEST_SKIP() << "no computeFullSubgroups";
  const uint32_t n = 4 * dev_->info().subgroup.max_size;
  auto spirv = glsl_compile(replace_all(R"(#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = N) in;
layout(set = 0, binding = 0) buffer Out { uint count[]; };
void main() { count[gl_LocalInvocationIndex] = subgroupBallotBitCount(subgroupBallot(true)); }
)",
                                        "N", std::to_string(n)));
  ASSERT_TRUE(spirv.ok()) << spirv.error().to_string();
  PipelineOptions opt;
  opt.require_full_subgroups = true;
  auto p = dev_->create_pipeline(*spirv, opt);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  auto b = dev_->create_buffer(n * 4);
  ASSERT_TRUE(b.ok());
  Status s = dev_->dispatch(*p, {&*b}, 2, kTimeout);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  std::vector<uint32_t> count(n);
  ASSERT_TRUE(b->download_words(count).ok());
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(count[i], sg_) << "invocation " << i;
}

// A pipeline may ask for a subgroup size only among SubgroupInfo::sizes(): another
// is Unsupported, saying which; the default size is always accepted.
TEST_F(VulkanTest, ARequiredSubgroupSizeMustBeOneTheDeviceOffers) {
  const auto sizes = dev_->info().subgroup.sizes();
  ASSERT_FALSE(sizes.empty());
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), sg_), sizes.end());
  auto spirv = glsl_compile(R"(#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint w[]; };
void main() { w[gl_LocalInvocationIndex] = 1u; }
)");
  ASSERT_TRUE(spirv.ok()) << spirv.error().to_string();
  PipelineOptions opt;
  opt.subgroup_size = sg_;
  EXPECT_TRUE(dev_->create_pipeline(*spirv, opt).ok());
  uint32_t absent = 128;
  while (std::find(sizes.begin(), sizes.end(), absent) != sizes.end()) absent *= 2;
  opt.subgroup_size = absent;
  auto p = dev_->create_pipeline(*spirv, opt);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, Error::Kind::Unsupported);
  EXPECT_NE(p.error().message.find("subgroups of " + std::to_string(absent) + " lanes"),
            std::string::npos)
      << p.error().message;
}

// llvmpipe leaves every loop once a subgroup has run 65,535 iterations, counted
// over all the shader's loops together: a loop meant to run 100,000 times stops
// early, two loops of 50,000 stop early, and once the count is spent every later
// loop runs once. Silently. A device without the cap runs them fully.
// (device.cpp, "Long shaders", has the other measurements.)
TEST_F(VulkanTest, LongLoopsRunFullyOrStopAtLlvmpipesSharedCap) {
  std::string glsl = R"(#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Out { uint one; uint two; uint first; uint each; };
void main() {
  uint t = 0u;
  for (uint i = 0u; i < first; ++i) t += 1u;
  one = t;
  t = 0u;
  for (uint i = 0u; i < each; ++i) t += 1u;
  for (uint i = 0u; i < each; ++i) t += 1u;
  two = t;
}
)";
  // Two loops of 50,000, then one loop of 100,000 followed by the two.
  auto two_loops = run(*dev_, glsl, {{0, 0, 0, 50000}});
  auto three_loops = run(*dev_, glsl, {{0, 0, 100000, 50000}});
  ASSERT_EQ(two_loops.size(), 1u);
  ASSERT_EQ(three_loops.size(), 1u);
  const uint32_t two = two_loops[0][1], one = three_loops[0][0], after = three_loops[0][1];
  std::printf(
      "two loops of 50000 ran %u; a loop of 100000 ran %u, then two loops of 50000 ran %u\n", two,
      one, after);
  if (is_llvmpipe(dev_) && one != 100000) {
    EXPECT_EQ(one, 65535u);
    EXPECT_GT(two, 50000u) << "the second loop did not run";
    EXPECT_LE(two, 65535u) << "the two loops have a cap each";
    EXPECT_LE(after, 2u) << "loops after the cap is spent";
  } else {
    EXPECT_EQ(two, 100000u);
    EXPECT_EQ(one, 100000u);
    EXPECT_EQ(after, 100000u);
  }
}

// ---- tests in a child process --------------------------------------------------------

struct Child {
  int exit_code = -1;  // 124: killed by `timeout`
  std::string output;  // stdout and stderr
};

// Runs this test program with SIMT_VK_CHILD=mode and `env` (NAME=VALUE words),
// bounded by `timeout seconds`.
Child run_child(const std::string& mode, const std::string& env, int seconds) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return {};
  exe[len] = 0;
  std::string cmd = "env SIMT_VK_CHILD=" + mode + " " + env + " timeout " +
                    std::to_string(seconds) + " '" + exe + "' 2>&1";
  Child c;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return c;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) c.output.append(buf, got);
  int status = pclose(p);
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

// The line "key=..." of a child's output, without the key ("" if absent).
std::string field(const std::string& output, const std::string& key) {
  size_t at = output.find(key + "=");
  if (at == std::string::npos) return "";
  at += key.size() + 1;
  return output.substr(at, output.find('\n', at) - at);
}

// lavapipe's subgroup size is LP_NATIVE_VECTOR_WIDTH / 32, read once per process:
// 512 gives 16 lanes, 64 gives 2, and a shader sees and uses that many.
TEST_F(VulkanTest, NativeVectorWidthSetsTheSubgroupSize) {
  if (!is_llvmpipe(dev_)) GTEST_SKIP() << "LP_NATIVE_VECTOR_WIDTH is lavapipe's";
  for (auto [width, size] : {std::pair{512, 16}, std::pair{64, 2}}) {
    Child c = run_child(
        "width",
        "LP_NATIVE_VECTOR_WIDTH=" + std::to_string(width) + " MESA_SHADER_CACHE_DISABLE=true", 120);
    SCOPED_TRACE("LP_NATIVE_VECTOR_WIDTH=" + std::to_string(width) + ", child output:\n" +
                 c.output);
    ASSERT_EQ(c.exit_code, 0);
    const std::string want = std::to_string(size);
    EXPECT_EQ(field(c.output, "reported"), want);
    EXPECT_EQ(field(c.output, "gl_SubgroupSize"), want);
    EXPECT_EQ(field(c.output, "ballot"), want);
    EXPECT_EQ(field(c.output, "add"), want);
  }
}

// No driver: Device::get() is an error of kind NoDevice, not a crash.
TEST(VulkanNoDevice, WithoutADriverTheErrorIsNoDevice) {
  Child c = run_child("nodevice", "VK_ICD_FILENAMES=/nonexistent/icd.json", 60);
  SCOPED_TRACE("child output:\n" + c.output);
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(field(c.output, "kind"), "no Vulkan device");
  EXPECT_NE(field(c.output, "message"), "");
}

// A dispatch that does not end in time returns Timeout, the next one Busy, and the
// process still ends (see kTimeoutNote in device.cpp).
TEST_F(VulkanTest, ADispatchThatRunsTooLongTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  // The child exits normally while the shader still runs; lavapipe's in-flight
  // job is never freed then, which LeakSanitizer (ASan builds) would report.
  Child c = run_child("timeout", "ASAN_OPTIONS=detect_leaks=0", 120);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SCOPED_TRACE("child output:\n" + c.output);
  std::printf("child with a timed-out dispatch ended after %.1f s\n", seconds);
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(field(c.output, "first"), "timeout");
  EXPECT_EQ(field(c.output, "second"), "busy");
  EXPECT_EQ(field(c.output, "busy"), "1");
}

// After a timeout the device is busy until the shader ends, then usable again;
// what was destroyed meanwhile is destroyed then.
TEST_F(VulkanTest, TheDeviceIsUsableAgainWhenATimedOutDispatchEnds) {
  Child c = run_child("recover", "", 120);
  SCOPED_TRACE("child output:\n" + c.output);
  EXPECT_EQ(c.exit_code, 0);
  if (field(c.output, "first") == "ok") {
    GTEST_SKIP() << "the 3-second shader ended within 0.1 s: a much faster device";
  }
  EXPECT_EQ(field(c.output, "first"), "timeout");
  EXPECT_EQ(field(c.output, "retired"), "7") << "a buffer, its memory and 5 pipeline objects";
  EXPECT_EQ(field(c.output, "retired_after"), "0");
  EXPECT_EQ(field(c.output, "again"), "ok");
  std::printf("busy for %s s after the timeout\n", field(c.output, "busy_for").c_str());
}

// ---- the child side --------------------------------------------------------------------

int child_width() {
  auto d = Device::get();
  if (!d.ok()) {
    std::printf("error=%s\n", d.error().to_string().c_str());
    return 1;
  }
  Device& dev = *d.value();
  std::printf("reported=%u\n", dev.info().subgroup.size);
  const std::string glsl = R"(#version 450
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint size[64]; uint ballot[64]; uint add[64]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  size[i] = gl_SubgroupSize;
  ballot[i] = subgroupBallotBitCount(subgroupBallot(true));
  add[i] = subgroupAdd(1u);
}
)";
  auto spirv = glsl_compile(glsl);
  if (!spirv.ok()) {
    std::printf("error=%s\n", spirv.error().to_string().c_str());
    return 1;
  }
  auto p = dev.create_pipeline(*spirv);
  auto b = dev.create_buffer(3 * 64 * 4);
  if (!p.ok() || !b.ok()) return 1;
  Status s = dev.dispatch(*p, {&*b}, 1, kTimeout);
  if (!s.ok()) {
    std::printf("error=%s\n", s.error().to_string().c_str());
    return 1;
  }
  std::vector<uint32_t> out(3 * 64);
  if (!b->download_words(out).ok()) return 1;
  // Every invocation must agree; print the first one's values, or "mixed".
  const char* names[] = {"gl_SubgroupSize", "ballot", "add"};
  for (int k = 0; k < 3; ++k) {
    bool same = std::all_of(out.begin() + 64 * k, out.begin() + 64 * (k + 1),
                            [&](uint32_t v) { return v == out[64 * k]; });
    if (same) {
      std::printf("%s=%u\n", names[k], out[64 * k]);
    } else {
      std::printf("%s=mixed\n", names[k]);
    }
  }
  return 0;
}

int child_nodevice() {
  auto d = Device::get();
  if (d.ok()) {
    std::printf("kind=none (a device: %s)\n", d.value()->info().name.c_str());
    return 0;
  }
  std::printf("kind=%s\nmessage=%s\n", kind_name(d.error().kind), d.error().message.c_str());
  return 0;
}

// About 4.4 ms a workgroup on lavapipe on 2 cores: each subgroup's loop stops at
// llvmpipe's 65,535-iteration cap. 65,535 workgroups take about 5 minutes.
const char* const kLongShader = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Out { uint sum; };
void main() {
  uint t = gl_GlobalInvocationID.x;
  for (uint i = 0u; i < 0xffffffffu; ++i) {
    t = t * 1664525u + i;
    t = t * 22695477u + 1u;
    t ^= t >> 7;
    t = t * 1103515245u + 12345u;
  }
  atomicAdd(sum, t);
}
)";

// The child processes' device, kLongShader's SPIR-V and pipeline and a 4-byte
// buffer; nullopt (after printing the error) when any is missing.
struct LongShaderSetup {
  Device* dev = nullptr;
  std::vector<uint32_t> spirv;
  Pipeline pipeline;
  Buffer buffer;
};
std::optional<LongShaderSetup> long_shader_setup() {
  auto d = Device::get();
  if (!d.ok()) {
    std::printf("error=%s\n", d.error().to_string().c_str());
    return std::nullopt;
  }
  auto spirv = glsl_compile(kLongShader);
  if (!spirv.ok()) {
    std::printf("error=%s\n", spirv.error().to_string().c_str());
    return std::nullopt;
  }
  auto p = d.value()->create_pipeline(*spirv);
  auto b = d.value()->create_buffer(4);
  if (!p.ok() || !b.ok()) return std::nullopt;
  return LongShaderSetup{d.value(), std::move(spirv).value(), std::move(p).value(),
                         std::move(b).value()};
}

// Times out after 2 s on a shader that would run for minutes, then tries again.
int child_timeout() {
  auto setup = long_shader_setup();
  if (!setup) return 1;
  Device& dev = *setup->dev;
  auto* p = &setup->pipeline;
  auto* b = &setup->buffer;
  const uint32_t groups = dev.info().max_workgroup_count_x;
  const auto start = std::chrono::steady_clock::now();
  Status first = dev.dispatch(*p, {&*b}, groups, 2s);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("first=%s\nwaited=%.2f\n", first.ok() ? "ok" : kind_name(first.error().kind), waited);
  Status second = dev.dispatch(*p, {&*b}, 1, 1s);
  std::printf("second=%s\n", second.ok() ? "ok" : kind_name(second.error().kind));
  std::printf("busy=%d\n", dev.busy() ? 1 : 0);
  std::fflush(stdout);
  return 0;  // the buffer and pipeline go to the graveyard; the device is never destroyed
}

// Times out after 0.1 s on a shader of about 3 s, waits until the device is no
// longer busy, and dispatches again.
int child_recover() {
  auto setup = long_shader_setup();
  if (!setup) return 1;
  Device& dev = *setup->dev;
  auto* spirv = &setup->spirv;
  auto* p = &setup->pipeline;
  auto* b = &setup->buffer;
  Status first = dev.dispatch(*p, {&*b}, 700, 100ms);
  std::printf("first=%s\n", first.ok() ? "ok" : kind_name(first.error().kind));
  {
    // Released while busy: kept until the dispatch ends, then destroyed.
    auto spare = dev.create_buffer(64);
    auto spare_pipeline = dev.create_pipeline(*spirv);
    if (!spare.ok() || !spare_pipeline.ok()) return 1;
  }
  std::printf("retired=%zu\n", dev.retired_objects());
  const auto start = std::chrono::steady_clock::now();
  while (dev.busy() && std::chrono::steady_clock::now() - start < 100s) {
    std::this_thread::sleep_for(10ms);
  }
  std::printf("busy_for=%.2f\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::printf("retired_after=%zu\n", dev.retired_objects());
  const uint32_t zero[1] = {0};
  if (!b->upload_words(zero).ok()) return 1;
  Status again = dev.dispatch(*p, {&*b}, 1, kTimeout);
  std::printf("again=%s\n", again.ok() ? "ok" : again.error().to_string().c_str());
  return 0;
}

int child_main(std::string_view mode) {
  if (mode == "recover") return child_recover();
  if (mode == "width") return child_width();
  if (mode == "nodevice") return child_nodevice();
  if (mode == "timeout") return child_timeout();
  std::printf("unknown SIMT_VK_CHILD mode\n");
  return 2;
}

}  // namespace
}  // namespace simt::vulkan

int main(int argc, char** argv) {
  if (const char* mode = std::getenv("SIMT_VK_CHILD")) return simt::vulkan::child_main(mode);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
