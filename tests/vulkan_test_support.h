// What the Vulkan tests do without a Vulkan device: skip with the reason, or fail
// when SIMT_REQUIRE_VULKAN=1 (CI has lavapipe, so a skip there would hide that the
// tests did not run).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace simt::vulkan {

inline bool vulkan_required() {
  const char* v = std::getenv("SIMT_REQUIRE_VULKAN");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace simt::vulkan

// Ends the current test (a void function): fails under SIMT_REQUIRE_VULKAN=1,
// skips otherwise. `why` is streamed into the message.
#define SIMT_NO_VULKAN_DEVICE(why)                                              \
  do {                                                                          \
    if (::simt::vulkan::vulkan_required()) {                                    \
      FAIL() << "SIMT_REQUIRE_VULKAN=1 but there is no Vulkan device: " << why; \
    }                                                                           \
    GTEST_SKIP() << "no Vulkan device: " << why;                                \
  } while (0)
