// What `simtspec fuzz --jobs N` worker processes and their parent say to each
// other through pipes (spec/oracles.md, oracle.fuzz.jobs): the parent sends batches of
// item numbers and "skip" notices, a worker answers one record per item.
//
// Frames: a 4-byte little-endian length, then a kind byte and the payload.
// Records are sequences of tagged fields (tag, wire type, value), so a field is
// added with one line in encode() and one case in decode(); a reader skips the
// tags it does not know.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simt::gen::wire {

// One program's result, from the process that checked it.
struct ItemResult {
  enum class Verdict : uint8_t {
    Holds,        // the invariant holds
    Fails,        // it fails: `message` says how
    Unsupported,  // not run: `message` is the capability the runner lacks
    Skipped,      // not checked: an earlier program of its invariant failed
    Error,        // checking it went wrong (an exception, the worker died): `message`
  };
  std::string invariant;
  uint64_t k = 0;  // the program's number: its seed is the run's seed + k
  Verdict verdict = Verdict::Holds;
  std::string message;
  double seconds = 0;  // spent generating and checking it
  // Per-program counts (Check::counts), summed per invariant by the parent.
  std::map<std::string, uint64_t> counters;
  std::string text;       // the printed program, with --print
  std::string signature;  // of a failure (oracle.fuzz.signature)
  uint64_t hash = 0;      // of the program's text, when FuzzOptions::on_program is set

  bool operator==(const ItemResult&) const = default;
};

std::string encode(const ItemResult& r);
// nullopt for a malformed record.
std::optional<ItemResult> decode(std::string_view bytes);

// Frame kinds.
inline constexpr char kResult = 'R';  // worker -> parent: an encoded ItemResult
inline constexpr char kFatal = 'F';   // worker -> parent: it cannot work (a message)
inline constexpr char kBatch = 'B';   // parent -> worker: items to check, in order
inline constexpr char kSkip = 'S';    // parent -> worker: skip invariant i above k

void append_frame(std::string& out, char kind, std::string_view payload);

// Collects bytes from a pipe and hands out whole frames.
class FrameReader {
 public:
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  // The next whole frame, if there is one.
  bool next(char& kind, std::string& payload);
  bool empty() const { return pos_ == buf_.size(); }

 private:
  std::string buf_;
  size_t pos_ = 0;
};

// Batches and skip notices.
std::string encode_batch(const std::vector<uint64_t>& items);
std::optional<std::vector<uint64_t>> decode_batch(std::string_view bytes);
std::string encode_skip(uint64_t invariant, uint64_t k);
bool decode_skip(std::string_view bytes, uint64_t& invariant, uint64_t& k);

}  // namespace simt::gen::wire
