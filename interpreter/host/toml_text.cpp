#include "host/toml_text.h"

#include "host/host.h"

#include <cstdio>
#include <regex>
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

// What a scan of the text outside strings and comments finds: how deep arrays and
// inline tables nest (and where the limit is first passed), and a probe copy in
// which every empty array holds one element, `[]` -> `[0]`.
struct Scan {
  uint32_t deep_line = 0;  // first line nesting passes kMaxTomlNesting, 0 if none
  std::string probe;
};

Scan scan(std::string_view t) {
  Scan r;
  r.probe.reserve(t.size() + 16);
  uint32_t line = 1, depth = 0;
  bool value = false;  // after '=' on this line, or inside an array or inline table
  size_t i = 0;
  auto at = [&](size_t k) { return k < t.size() ? t[k] : '\0'; };
  auto copy = [&](size_t to) {  // copies t[i, to) and counts its lines
    for (; i < to && i < t.size(); ++i) {
      line += t[i] == '\n';
      r.probe += t[i];
    }
  };
  // Skips spaces, newlines and comments from k; returns the next position.
  auto skip_blank = [&](size_t k) {
    for (;;) {
      while (k < t.size() && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r')) ++k;
      if (at(k) != '#') return k;
      while (k < t.size() && t[k] != '\n') ++k;
    }
  };
  while (i < t.size()) {
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
    } else if (c == '[' && value) {
      ++depth;
      if (depth > kMaxTomlNesting && r.deep_line == 0) r.deep_line = line;
      copy(i + 1);
      if (at(skip_blank(i)) == ']') r.probe += '0';
    } else if (c == '{' && value) {
      ++depth;
      if (depth > kMaxTomlNesting && r.deep_line == 0) r.deep_line = line;
      copy(i + 1);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
      copy(i + 1);
    } else {
      if (c == '=') value = true;
      if (c == '\n' && depth == 0) value = false;
      copy(i + 1);
    }
    if (depth > 0) value = true;
  }
  return r;
}

TomlError from_exception(const std::exception& e) {
  const std::string msg = e.what();
  TomlError err;
  std::smatch m;
  if (std::regex_search(msg, m, std::regex(R"(-->\s*\S+\s*\n\s*\|\s*\n\s*(\d+)\s*\|)")) ||
      std::regex_search(msg, m, std::regex(R"(line\s+(\d+))")))
    err.line = static_cast<uint32_t>(std::stoul(m[1].str()));
  err.message = msg.substr(0, msg.find('\n'));
  if (err.message.rfind("[error] ", 0) == 0) err.message.erase(0, 8);
  return err;
}

std::variant<toml::value, TomlError> parse_exactly(const std::string& text,
                                                   const std::string& name) {
  try {
    std::istringstream in(text);
    return toml::parse(in, name);
  } catch (const std::exception& e) {
    return from_exception(e);
  }
}

// trap.host.toml: toml11 v3 keeps integers as int64_t and reads a literal past
// that range without an error: decimal, hexadecimal and octal ones come back
// clamped to INT64_MAX or INT64_MIN, binary ones wrapped. So an integer of a host
// action is read again from its text (the value's source region: the literal as
// written, which toml11 has already checked), exactly up to 2^64 - 1 in
// magnitude; nothing for a larger one.
std::optional<HostInt> exact_integer(const toml::value& v) {
  const toml::source_location loc = v.location();
  const std::string& line = loc.line_str();
  std::string_view t;
  if (loc.column() >= 1 && loc.column() - 1 + size_t{loc.region()} <= line.size())
    t = std::string_view(line).substr(loc.column() - 1, loc.region());
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

std::variant<toml::value, TomlError> parse_toml(std::string_view text, const std::string& name) {
  if (auto bad = first_invalid_utf8(text))
    return TomlError{bad->line, bad->message() + "; TOML text must be UTF-8"};
  Scan s = scan(text);
  if (s.deep_line)
    return TomlError{s.deep_line, "arrays or inline tables nested more than " +
                                      std::to_string(kMaxTomlNesting) + " deep"};
  // A key path through an empty array crashes toml11; through a one-element array
  // it is a plain error. So the probe is read first: if it is refused, so is the
  // text, for the same reason and at the same line.
  if (s.probe != text) {
    auto probe = parse_exactly(s.probe, name);
    if (auto* e = std::get_if<TomlError>(&probe)) return *e;
  }
  return parse_exactly(std::string(text), name);
}

std::optional<TomlError> host_from_toml(const toml::value& array, const std::string& name,
                                        uint32_t line_offset, std::vector<syntax::HostStep>& out) {
  auto line = [&](const toml::value& v) {
    return static_cast<uint32_t>(v.location().line()) + line_offset;
  };
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
