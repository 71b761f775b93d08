#include "fuzz_wire.h"

#include <cstring>

namespace simt::gen::wire {

namespace {

// Wire types of record fields: how to read (or skip) the value after a tag.
enum Type : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Counts = 3 };

// Field tags of ItemResult. Never reuse a number for another meaning.
enum Tag : uint8_t {
  TInvariant = 1,
  TK = 2,
  TVerdict = 3,
  TMessage = 4,
  TSeconds = 5,
  TCounters = 6,
  TText = 7,
  TSignature = 8,
  THash = 9,
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_bytes(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

void put_head(std::string& out, Tag t, Type ty) {
  out += static_cast<char>(t);
  out += static_cast<char>(ty);
}

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool done() const { return pos_ == s_.size(); }
  bool byte(uint8_t& b) {
    if (pos_ >= s_.size()) return false;
    b = static_cast<uint8_t>(s_[pos_++]);
    return true;
  }
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!byte(b)) return false;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool fixed64(uint64_t& v) {
    if (s_.size() - pos_ < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(s_[pos_++])) << (8 * i);
    return true;
  }
  bool bytes(std::string& out) {
    uint64_t n;
    if (!varint(n) || n > s_.size() - pos_) return false;
    out.assign(s_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool counts(std::map<std::string, uint64_t>& out) {
    uint64_t n;
    if (!varint(n)) return false;
    for (uint64_t i = 0; i < n; ++i) {
      std::string name;
      uint64_t v;
      if (!bytes(name) || !varint(v)) return false;
      out[name] += v;
    }
    return true;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::string encode(const ItemResult& r) {
  std::string out;
  put_head(out, TInvariant, Bytes);
  put_bytes(out, r.invariant);
  put_head(out, TK, Varint);
  put_varint(out, r.k);
  put_head(out, TVerdict, Varint);
  put_varint(out, static_cast<uint64_t>(r.verdict));
  if (!r.message.empty()) {
    put_head(out, TMessage, Bytes);
    put_bytes(out, r.message);
  }
  put_head(out, TSeconds, Fixed64);
  uint64_t bits;
  std::memcpy(&bits, &r.seconds, sizeof bits);
  for (int i = 0; i < 8; ++i) out += static_cast<char>(bits >> (8 * i));
  if (!r.counters.empty()) {
    put_head(out, TCounters, Counts);
    put_varint(out, r.counters.size());
    for (const auto& [name, v] : r.counters) {
      put_bytes(out, name);
      put_varint(out, v);
    }
  }
  if (!r.text.empty()) {
    put_head(out, TText, Bytes);
    put_bytes(out, r.text);
  }
  if (!r.signature.empty()) {
    put_head(out, TSignature, Bytes);
    put_bytes(out, r.signature);
  }
  if (r.hash) {
    put_head(out, THash, Fixed64);
    for (int i = 0; i < 8; ++i) out += static_cast<char>(r.hash >> (8 * i));
  }
  return out;
}

std::optional<ItemResult> decode(std::string_view bytes) {
  ItemResult r;
  Reader in(bytes);
  while (!in.done()) {
    uint8_t tag, type;
    if (!in.byte(tag) || !in.byte(type)) return std::nullopt;
    // The value, by its wire type: known tags keep it, others skip it.
    uint64_t num = 0;
    std::string str;
    std::map<std::string, uint64_t> counts;
    switch (type) {
      case Varint:
        if (!in.varint(num)) return std::nullopt;
        break;
      case Fixed64:
        if (!in.fixed64(num)) return std::nullopt;
        break;
      case Bytes:
        if (!in.bytes(str)) return std::nullopt;
        break;
      case Counts:
        if (!in.counts(counts)) return std::nullopt;
        break;
      default:
        return std::nullopt;  // cannot be skipped
    }
    auto expect = [&](Type t) { return type == t; };
    switch (tag) {
      case TInvariant:
        if (!expect(Bytes)) return std::nullopt;
        r.invariant = std::move(str);
        break;
      case TK:
        if (!expect(Varint)) return std::nullopt;
        r.k = num;
        break;
      case TVerdict:
        if (!expect(Varint) || num > static_cast<uint64_t>(ItemResult::Verdict::Error))
          return std::nullopt;
        r.verdict = static_cast<ItemResult::Verdict>(num);
        break;
      case TMessage:
        if (!expect(Bytes)) return std::nullopt;
        r.message = std::move(str);
        break;
      case TSeconds:
        if (!expect(Fixed64)) return std::nullopt;
        std::memcpy(&r.seconds, &num, sizeof num);
        break;
      case TCounters:
        if (!expect(Counts)) return std::nullopt;
        for (const auto& [name, v] : counts) r.counters[name] += v;
        break;
      case TText:
        if (!expect(Bytes)) return std::nullopt;
        r.text = std::move(str);
        break;
      case TSignature:
        if (!expect(Bytes)) return std::nullopt;
        r.signature = std::move(str);
        break;
      case THash:
        if (!expect(Fixed64)) return std::nullopt;
        r.hash = num;
        break;
      default:
        break;  // a field this reader does not know
    }
  }
  return r;
}

void append_frame(std::string& out, char kind, std::string_view payload) {
  const uint32_t n = static_cast<uint32_t>(payload.size() + 1);
  for (int i = 0; i < 4; ++i) out += static_cast<char>(n >> (8 * i));
  out += kind;
  out.append(payload);
}

bool FrameReader::next(char& kind, std::string& payload) {
  if (buf_.size() - pos_ < 4) return false;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<uint8_t>(buf_[pos_ + i])) << (8 * i);
  if (n == 0 || buf_.size() - pos_ - 4 < n) return false;
  kind = buf_[pos_ + 4];
  payload.assign(buf_, pos_ + 5, n - 1);
  pos_ += 4 + n;
  // Drop what has been read once it is most of the buffer.
  if (pos_ > 4096 && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return true;
}

std::string encode_batch(const std::vector<uint64_t>& items) {
  std::string out;
  put_varint(out, items.size());
  for (uint64_t i : items) put_varint(out, i);
  return out;
}

std::optional<std::vector<uint64_t>> decode_batch(std::string_view bytes) {
  Reader in(bytes);
  uint64_t n;
  if (!in.varint(n) || n > bytes.size()) return std::nullopt;
  std::vector<uint64_t> items(n);
  for (auto& i : items)
    if (!in.varint(i)) return std::nullopt;
  if (!in.done()) return std::nullopt;
  return items;
}

std::string encode_skip(uint64_t invariant, uint64_t k) {
  std::string out;
  put_varint(out, invariant);
  put_varint(out, k);
  return out;
}

bool decode_skip(std::string_view bytes, uint64_t& invariant, uint64_t& k) {
  Reader in(bytes);
  return in.varint(invariant) && in.varint(k) && in.done();
}

}  // namespace simt::gen::wire
