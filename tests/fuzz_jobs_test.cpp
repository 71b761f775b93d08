// `simtspec fuzz --jobs N` (spec/oracles.md, oracle.fuzz): the records worker
// processes send.
#include <gtest/gtest.h>

#include "fuzz_wire.h"

namespace simt {
namespace {

using gen::wire::ItemResult;

// ---------------------------------------------------------------------------
// The record and the frames

ItemResult sample() {
  ItemResult r;
  r.invariant = "differential";
  r.k = 0x123456789abcull;
  r.verdict = ItemResult::Verdict::Fails;
  r.message = std::string("line 1\nline 2 with a NUL \0 and \xff", 32);
  r.seconds = 0.000123;
  r.counters = {{"stmt.if", 3}, {"instr.add", 17}, {"big", UINT64_MAX}};
  r.text = ".wave 8\nexit\n";
  return r;
}

TEST(FuzzWire, RecordsRoundTrip) {
  for (auto v :
       {ItemResult::Verdict::Holds, ItemResult::Verdict::Fails, ItemResult::Verdict::Unsupported,
        ItemResult::Verdict::Skipped, ItemResult::Verdict::Error}) {
    ItemResult r = sample();
    r.verdict = v;
    auto back = gen::wire::decode(gen::wire::encode(r));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, r);
  }
  ItemResult empty;
  auto back = gen::wire::decode(gen::wire::encode(empty));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, empty);
}

// Extensible: a reader skips fields it does not know, of every wire type.
TEST(FuzzWire, UnknownFieldsAreSkipped) {
  const ItemResult r = sample();
  std::string bytes = gen::wire::encode(r);
  bytes += std::string("\x63\x00\x81\x01", 4);                   // tag 99, varint 129
  bytes += std::string("\x64\x01", 2) + std::string(8, '\x07');  // tag 100, fixed64
  bytes += std::string("\x65\x02\x03xyz", 6);                    // tag 101, bytes
  bytes += std::string("\x66\x03\x01\x01q\x05", 6);              // tag 102, counts
  auto back = gen::wire::decode(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(FuzzWire, MalformedRecordsAreRejected) {
  const std::string bytes = gen::wire::encode(sample());
  for (size_t n = 1; n < bytes.size(); ++n) {
    auto back = gen::wire::decode(bytes.substr(0, n));
    // A prefix may end between fields; then it decodes, but never to the whole record.
    if (back) {
      EXPECT_NE(*back, sample()) << n;
    }
  }
  EXPECT_FALSE(gen::wire::decode(std::string("\x01\x09", 2)).has_value());       // wire type 9
  EXPECT_FALSE(gen::wire::decode(std::string("\x02\x02\x01x", 4)).has_value());  // k as bytes
  EXPECT_FALSE(gen::wire::decode(std::string("\x03\x00\x09", 3)).has_value());   // verdict 9
}

// Frames arrive from a pipe in pieces of any size.
TEST(FuzzWire, FramesSurviveAnySplit) {
  std::string stream;
  std::vector<std::pair<char, std::string>> sent;
  for (int i = 0; i < 300; ++i) {
    ItemResult r = sample();
    r.k = static_cast<uint64_t>(i);
    r.text.assign(static_cast<size_t>(i * 37 % 5000), 'x');
    sent.push_back({gen::wire::kResult, gen::wire::encode(r)});
  }
  sent.push_back({gen::wire::kBatch, gen::wire::encode_batch({1, 2, 300, UINT64_MAX})});
  sent.push_back({gen::wire::kSkip, gen::wire::encode_skip(3, 77)});
  sent.push_back({gen::wire::kFatal, ""});
  for (const auto& [kind, payload] : sent) gen::wire::append_frame(stream, kind, payload);
  for (size_t piece : {1u, 3u, 4u, 5u, 4096u, 100000u}) {
    gen::wire::FrameReader in;
    std::vector<std::pair<char, std::string>> got;
    for (size_t at = 0; at < stream.size(); at += piece) {
      in.feed(stream.data() + at, std::min(piece, stream.size() - at));
      char kind;
      std::string payload;
      while (in.next(kind, payload)) got.push_back({kind, payload});
    }
    EXPECT_EQ(got, sent) << piece;
    EXPECT_TRUE(in.empty());
  }
  auto items = gen::wire::decode_batch(gen::wire::encode_batch({1, 2, 300, UINT64_MAX}));
  ASSERT_TRUE(items.has_value());
  EXPECT_EQ(*items, (std::vector<uint64_t>{1, 2, 300, UINT64_MAX}));
  uint64_t j = 0, k = 0;
  EXPECT_TRUE(gen::wire::decode_skip(gen::wire::encode_skip(3, 77), j, k));
  EXPECT_EQ(j, 3u);
  EXPECT_EQ(k, 77u);
  EXPECT_FALSE(gen::wire::decode_batch(std::string("\x05\x01", 2)).has_value());
}

}  // namespace
}  // namespace simt
