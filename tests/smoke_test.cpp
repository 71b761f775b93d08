#include <gtest/gtest.h>

#include "support.h"

namespace simt {
namespace {

TEST(Smoke, VectorAddCompletes) {
  auto r = test::run(R"(
.wave 8
.buffer a u32[wave] in = iota(1, 1)
.buffer out u32[wave] out
    shl v1, %lane, 2
    ld v2, a[v1]
    add v2, v2, v2
    st out[v1], v2
    exit
)");
  ASSERT_TRUE(r.ok()) << r.diags;
  EXPECT_EQ(r.status(), exec::Status::Completed);
  EXPECT_EQ(test::words(*r.outcome, "out"), (std::vector<uint32_t>{2, 4, 6, 8, 10, 12, 14, 16}));
}

}  // namespace
}  // namespace simt
