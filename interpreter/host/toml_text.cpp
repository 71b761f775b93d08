#include "host/toml_text.h"

#include "host/host.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace simt::host {

std::string Utf8Problem::message() const {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", byte);
  return std::string("not UTF-8 (byte ") + b + ")";
}

std::optional<Utf8Problem> first_invalid_utf8(std::string_view text) {
  uint32_t line = 1;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      line += c == '\n';
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = len > 0 && i + len <= n && s[i + 1] >= lo && s[i + 1] <= hi;
    for (size_t k = 2; ok && k < len; ++k) ok = s[i + k] >= 0x80 && s[i + k] <= 0xBF;
    if (!ok) return Utf8Problem{line, c};
    i += len;
  }
  return std::nullopt;
}

namespace {

// What a scan of the text outside strings and comments gives: the first breach of
// the limits of format.toml, if any; the text toml11 reads, `fed`, which is the text
// with a line break added after each comma of an array (toml11 scans a value's whole
// line, format.toml); where the text's own line breaks are in `fed`; and a probe copy
// of `fed` in which every empty array holds one element, `[]` -> `[0]` (empty when
// the text has no empty array).
struct Scan {
  std::optional<TomlError> limit;  // line relative to the text (from 1)
  std::string fed, probe;
  std::vector<size_t> breaks;
  bool empty_array = false;
};

// The hexadecimal digits of a binary number given by its digits (no prefix).
std::string binary_to_hex(std::string_view bits) {
  const size_t first = bits.find('1');
  if (first == std::string_view::npos) return "0";
  bits.remove_prefix(first);
  std::string out;
  out.reserve(bits.size() / 4 + 1);
  size_t lead = bits.size() % 4 ? bits.size() % 4 : 4;  // digits of the first hex digit
  for (size_t k = 0; k < bits.size();) {
    unsigned d = 0;
    for (size_t j = 0; j < lead; ++j) d = d * 2 + unsigned(bits[k++] - '0');
    out += "0123456789abcdef"[d];
    lead = 4;
  }
  return out;
}

Scan scan(std::string_view t) {
  Scan r;
  r.fed.reserve(t.size() + t.size() / 8 + 16);
  uint32_t line = 1;
  bool value = false;         // after '=' on this line, or inside an array or inline table
  std::vector<char> open;     // the arrays '[' and inline tables '{' open, innermost last
  uint32_t braces = 0;        // inline tables in `open`
  uint32_t inline_keys = 0;   // keys in the outermost open inline table
  bool key = true;            // reading a key: a line's start, a table header, after '{' or ','
  uint32_t key_parts = 1;     // parts of that key so far
  std::vector<size_t> zeros;  // where the probe adds '0' (offsets in fed)
  size_t i = 0;
  auto at = [&](size_t k) { return k < t.size() ? t[k] : '\0'; };
  auto copy = [&](size_t to) {  // copies t[i, to) and notes its line breaks
    for (; i < to && i < t.size(); ++i) {
      if (t[i] == '\n') {
        ++line;
        r.breaks.push_back(r.fed.size());
      }
      r.fed += t[i];
    }
  };
  auto breach = [&](std::string message) { r.limit = TomlError{line, std::move(message)}; };
  // Skips spaces, newlines and comments from k; returns the next position.
  auto skip_blank = [&](size_t k) {
    for (;;) {
      while (k < t.size() && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r')) ++k;
      if (at(k) != '#') return k;
      while (k < t.size() && t[k] != '\n') ++k;
    }
  };
  auto start_key = [&] { key = true, key_parts = 1; };
  // Whether a value's token may start at k (not inside a word or a number).
  auto token_start = [&](size_t k) {
    const char p = k == 0 ? ' ' : t[k - 1];
    return p == ' ' || p == '\t' || p == '=' || p == '[' || p == ',' || p == '{' || p == '\n' ||
           p == '\r';
  };
  while (i < t.size() && !r.limit) {
    const char c = t[i];
    if (c == '#') {
      size_t e = i;
      while (e < t.size() && t[e] != '\n') ++e;
      copy(e);
    } else if (c == '"' || c == '\'') {
      const bool multi = at(i + 1) == c && at(i + 2) == c;
      size_t e = i + (multi ? 3 : 1);
      for (; e < t.size(); ++e) {
        if (c == '"' && t[e] == '\\') {
          ++e;  // the escaped character, whatever it is
          continue;
        }
        if (!multi && t[e] == '\n') break;  // unterminated: toml11 reports it
        if (t[e] == c && (!multi || (at(e + 1) == c && at(e + 2) == c))) {
          e += multi ? 3 : 1;
          // A multi-line string may end with up to two more quotes.
          while (multi && at(e) == c) ++e;
          break;
        }
      }
      copy(e);
    } else if ((c == '[' || c == '{') && value) {
      open.push_back(c);
      if (open.size() > kMaxTomlNesting)
        breach("arrays or inline tables nested more than " + std::to_string(kMaxTomlNesting) +
               " deep");
      if (c == '{' && braces++ == 0) inline_keys = 0;
      if (c == '{') start_key();
      copy(i + 1);
      if (c == '[' && at(skip_blank(i)) == ']') {
        zeros.push_back(r.fed.size());
        r.empty_array = true;
      }
    } else if ((c == ']' || c == '}') && !open.empty()) {
      braces -= open.back() == '{';
      open.pop_back();
      copy(i + 1);
    } else if (c == ',' && !open.empty()) {
      copy(i + 1);
      if (open.back() == '[')
        r.fed += '\n';  // a line break of toml11's text only: not in r.breaks
      else
        start_key();  // the next key of an inline table
    } else if (c == '0' && at(i + 1) == 'b' && value && !key && token_start(i)) {
      // toml11 reads a binary integer of 63 digits or more with a signed overflow
      // (undefined behaviour: the release build read 0b1...1 wrongly in CI). It
      // is given the same value in hexadecimal, which it reads as it reads a
      // decimal one (clamped), and exact_integer reads exactly.
      size_t e = i + 2;
      std::string bits;
      while (e < t.size()) {
        if (t[e] == '0' || t[e] == '1')
          bits += t[e++];
        else if (t[e] == '_' && !bits.empty() && (at(e + 1) == '0' || at(e + 1) == '1'))
          ++e;
        else
          break;
      }
      if (bits.size() >= 63) {
        r.fed += "0x" + binary_to_hex(bits);
        i = e;
      } else {
        copy(e);
      }
    } else if (c == '.' && key) {
      if (++key_parts > kMaxKeyParts)
        breach("a key has more than " + std::to_string(kMaxKeyParts) + " parts");
      copy(i + 1);
    } else {
      if (c == '=' && braces > 0 && ++inline_keys > kMaxInlineKeys)
        breach("an inline table holds more than " + std::to_string(kMaxInlineKeys) + " keys");
      if (c == '=') value = true, key = false;
      if (c == '\n' && open.empty()) value = false, start_key();
      copy(i + 1);
    }
    if (!open.empty()) value = true;
  }
  if (r.empty_array && !r.limit) {
    r.probe.reserve(r.fed.size() + zeros.size());
    size_t from = 0;
    for (size_t z : zeros) {
      r.probe.append(r.fed, from, z - from);
      r.probe += '0';
      from = z;
    }
    r.probe.append(r.fed, from, std::string::npos);
  }
  return r;
}

// The line of the text on which toml11's line `fed_line` of `fed` starts.
uint32_t text_line(const std::string& fed, const std::vector<size_t>& breaks, uint32_t fed_line) {
  size_t offset = 0;
  for (uint32_t l = 1; l < fed_line && offset < fed.size(); ++l) {
    offset = fed.find('\n', offset);
    if (offset == std::string::npos) return static_cast<uint32_t>(breaks.size()) + 1;
    ++offset;
  }
  return static_cast<uint32_t>(std::lower_bound(breaks.begin(), breaks.end(), offset) -
                               breaks.begin()) +
         1;
}

// The number at the start of `s` after spaces, and what follows it.
std::optional<uint32_t> leading_number(std::string_view s, std::string_view& rest) {
  size_t k = s.find_first_not_of(' ');
  size_t e = k;
  while (e < s.size() && e - k < 9 && s[e] >= '0' && s[e] <= '9') ++e;
  if (k == std::string_view::npos || e == k) return std::nullopt;
  rest = s.substr(e);
  return static_cast<uint32_t>(std::stoul(std::string(s.substr(k, e - k))));
}

// A toml11 exception as a line of the text and a message. toml11's message is a
// first line, then the places it shows, each as `N | text` (N a line of what toml11
// read). The error is at the first place shown, except for a key defined twice
// (toml::insert_value), which shows the first definition, then the second: the
// error is at the second (format.toml). Read without std::regex, whose matcher
// recurses per character on the long lines toml11 may quote.
TomlError from_exception(const std::exception& e, const std::string& fed,
                         const std::vector<size_t>& breaks, uint32_t first_line) {
  const std::string_view msg = e.what();
  std::string_view head = msg.substr(0, msg.find('\n'));
  std::vector<uint32_t> lines;  // the lines of the text toml11 shows, in order
  for (size_t at = head.size(); at < msg.size();) {
    const size_t end = std::min(msg.find('\n', at + 1), msg.size());
    std::string_view rest;
    const auto n = leading_number(msg.substr(at + 1, end - at - 1), rest);
    if (n && rest.find_first_not_of(' ') != std::string_view::npos &&
        rest[rest.find_first_not_of(' ')] == '|')
      lines.push_back(text_line(fed, breaks, *n) + first_line - 1);
    at = end;
  }
  if (head.rfind("[error] ", 0) == 0) head.remove_prefix(8);
  TomlError err;
  constexpr std::string_view kInsert = "toml::insert_value: ";
  const size_t open = head.find('(');
  const size_t close = head.rfind(") ");
  if (head.rfind(kInsert, 0) == 0 && open != std::string_view::npos &&
      close != std::string_view::npos && close > open && !lines.empty()) {
    std::string_view key = head.substr(open + 1, close - open - 1);
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"')
      key = key.substr(1, key.size() - 2);
    err.line = lines.back();
    err.message = "duplicate key '" + std::string(key.substr(0, 80)) +
                  (key.size() > 80 ? "...'" : "'") + " (first at line " +
                  std::to_string(lines.front()) + ")";
    return err;
  }
  if (!lines.empty()) err.line = lines.front();
  err.message = std::string(head.substr(0, 400));
  return err;
}

std::variant<toml::value, TomlError> parse_exactly(const std::string& fed, const Scan& s,
                                                   uint32_t first_line) {
  try {
    std::istringstream in(fed);
    // toml11 copies the name into every value it reads; only its messages show it,
    // and only their first line and line numbers are kept. A short name costs no
    // allocation per value.
    return toml::parse(in, "toml");
  } catch (const std::exception& e) {
    return from_exception(e, fed, s.breaks, first_line);
  }
}

// trap.host.toml: toml11 v3 keeps integers as int64_t and reads a literal past
// that range without an error: decimal, hexadecimal and octal ones come back
// clamped to INT64_MAX or INT64_MIN, binary ones wrapped. So an integer of a host
// action is read again from its text (the value's source region: the literal as
// written, which toml11 has already checked), exactly up to 2^64 - 1 in
// magnitude; nothing for a larger one. The region is read directly: v.location()
// counts the lines of the text before the value, which made many [[host]] tables
// quadratic (format.toml).
std::optional<HostInt> exact_integer(const toml::value& v) {
  const auto* reg = dynamic_cast<const toml::detail::region*>(toml::detail::get_region(v));
  const std::string literal = reg && reg->is_ok() ? reg->str() : std::string();
  std::string_view t = literal;
  HostInt r;
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
    r.negative = t[0] == '-';
    t.remove_prefix(1);
  }
  uint64_t base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'o' || t[1] == 'b')) {
    base = t[1] == 'x' ? 16 : t[1] == 'o' ? 8 : 2;
    t.remove_prefix(2);
  }
  bool digits = false;
  for (char c : t) {
    if (c == '_') continue;
    const uint64_t d = c >= '0' && c <= '9'   ? uint64_t(c - '0')
                       : c >= 'a' && c <= 'f' ? uint64_t(c - 'a' + 10)
                       : c >= 'A' && c <= 'F' ? uint64_t(c - 'A' + 10)
                                              : base;
    if (d >= base) {  // not the literal toml11 read: its value, which is exact then
      digits = false;
      break;
    }
    if (r.magnitude > (UINT64_MAX - d) / base) return std::nullopt;  // past 2^64 - 1
    r.magnitude = r.magnitude * base + d;
    digits = true;
  }
  if (!digits) {
    const int64_t n = v.as_integer();
    if (n == INT64_MAX || n == INT64_MIN) return std::nullopt;  // possibly clamped
    r.negative = n < 0;
    r.magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  }
  if (r.magnitude == 0) r.negative = false;
  return r;
}

}  // namespace

uint32_t TomlDoc::line(const toml::value& v) const {
  const auto* reg = dynamic_cast<const toml::detail::region*>(toml::detail::get_region(v));
  if (!reg || !reg->is_ok()) return 0;
  const auto offset = static_cast<size_t>(reg->first() - reg->begin());
  return static_cast<uint32_t>(std::lower_bound(breaks_.begin(), breaks_.end(), offset) -
                               breaks_.begin()) +
         first_line_;
}

std::variant<TomlDoc, TomlError> parse_toml(std::string_view text, uint32_t first_line) {
  if (auto bad = first_invalid_utf8(text))
    return TomlError{bad->line + first_line - 1, bad->message() + "; TOML text must be UTF-8"};
  Scan s = scan(text);
  if (s.limit) {
    s.limit->line += first_line - 1;
    return *s.limit;
  }
  // A key path through an empty array crashes toml11; through a one-element array
  // it is a plain error. So the probe is read first: if it is refused, so is the
  // text, for the same reason and at the same line.
  if (s.empty_array) {
    auto probe = parse_exactly(s.probe, s, first_line);
    if (auto* e = std::get_if<TomlError>(&probe)) return *e;
  }
  auto parsed = parse_exactly(s.fed, s, first_line);
  if (auto* e = std::get_if<TomlError>(&parsed)) return *e;
  TomlDoc doc;
  doc.root = std::move(std::get<toml::value>(parsed));
  doc.breaks_ = std::move(s.breaks);
  doc.first_line_ = first_line;
  return doc;
}

std::optional<TomlError> host_from_toml(const TomlDoc& doc, const toml::value& array,
                                        const std::string& name,
                                        std::vector<syntax::HostStep>& out) {
  auto line = [&](const toml::value& v) { return doc.line(v); };
  if (!array.is_array())
    return TomlError{line(array), "'host' must be an array of tables [[host]]"};
  for (const toml::value& t : array.as_array()) {
    if (!t.is_table()) return TomlError{line(t), "each element of 'host' must be a table"};
    std::vector<HostField> keys;
    for (const auto& [k, v] : t.as_table()) {
      if (v.is_integer()) {
        auto n = exact_integer(v);
        if (!n)
          return TomlError{line(t), "[[host]]: '" + k.substr(0, 40) +
                                        "' is out of range: integers of a host script go "
                                        "up to 18446744073709551615"};
        keys.push_back({k, HostValue{*n}});
      } else if (v.is_boolean())
        keys.push_back({k, HostValue{v.as_boolean()}});
      else if (v.is_string())
        keys.push_back({k, HostValue{v.as_string().str}});
      else
        return TomlError{line(v),
                         "'" + k.substr(0, 40) + "' must be an integer, a boolean or a string"};
    }
    syntax::HostStep h;
    if (auto e = host_step_from(keys, h)) return TomlError{line(t), "[[host]]: " + *e};
    h.origin = name;
    h.span = syntax::Span{line(t), 1, 0};
    out.push_back(std::move(h));
  }
  return std::nullopt;
}

}  // namespace simt::host
