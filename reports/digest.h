// SHA-256 (FIPS 180-4) for the results store's provenance (spec/results.md,
// results.store.provenance): the runner description's and the suite's digests.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace simt::reports {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t length_ = 0;  // bytes hashed so far
};

// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace simt::reports
