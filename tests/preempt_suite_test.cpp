// ci: not sanitized: every configuration of the preemption suite (3.7 min under ASan)
// The preemption suite's images (spec/preempt.md, preempt.tool.image): every
// configuration of every test in suites/preempt/ that preempts its launch is run
// on the reference with its image asked for, and the image must read back
// (read_image, with and without the launch's expectations) and show and diff
// against itself: `simtspec image show` works on every image the suite writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <variant>

#include "exec/image.h"
#include "harness.h"
#include "reference.h"
#include "support.h"

namespace simt {
namespace {

TEST(PreemptSuite, EveryImageTheSuiteWritesReadsBackAndShows) {
  std::string err;
  const auto files = harness::discover({test::source_path("suites/preempt")}, err);
  ASSERT_TRUE(err.empty()) << err;
  size_t images = 0;
  for (const auto& path : files) {
    auto parsed = harness::parse_test(path, test::read_all(path));
    const auto* t = std::get_if<harness::TestFile>(&parsed);
    ASSERT_TRUE(t) << path << " does not parse";
    const bool preempts = std::any_of(t->host.begin(), t->host.end(), [](const auto& h) {
      return h.kind == syntax::HostKind::Preempt;
    });
    if (!preempts || t->expect.status == "rejected") continue;
    for (const auto& s : t->configs) {
      SCOPED_TRACE(path + " @ " + s.key());
      runners::RunRequest req;
      req.program = t->source;
      req.config = s.request();
      if (!t->sets_max_steps) req.config.max_steps = 1000000;  // the harness's cap
      req.validate = t->validate;
      req.host = t->host;
      req.image = true;
      if (t->restore) req.restore = t->restore->bytes();
      auto r = runners::run_reference(req);
      if (r.kind != runners::RunResult::Kind::Outcome || !r.image) continue;
      ++images;
      auto img = exec::read_image(*r.image);
      ASSERT_TRUE(std::holds_alternative<exec::ImageContent>(img))
          << std::get<exec::ImageError>(img).text();
      const auto& c = std::get<exec::ImageContent>(img);
      const std::string shown = exec::show_image(c);
      EXPECT_NE(shown.find("fixed function:"), std::string::npos);
      EXPECT_FALSE(exec::diff_images(c, c).has_value());
    }
  }
  EXPECT_GT(images, 45u) << "the preemption suite writes an image in most configurations";
}

}  // namespace
}  // namespace simt
