#include "json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace simt::json {

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : as_object())
    if (k == key) return &v;
  return nullptr;
}

Value& Value::operator[](std::string_view key) {
  if (is_null()) v_ = Object{};
  auto& obj = as_object();
  for (auto& [k, v] : obj)
    if (k == key) return v;
  obj.emplace_back(std::string(key), Value{});
  return obj.back().second;
}

void Value::push_back(Value v) {
  if (is_null()) v_ = Array{};
  as_array().push_back(std::move(v));
}

std::string escape(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

void write(const Value& v, int indent, int level, std::string& out) {
  auto newline = [&](int lvl) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * lvl), ' ');
  };
  switch (v.type()) {
    case Value::Type::Null:
      out += "null";
      break;
    case Value::Type::Bool:
      out += v.as_bool() ? "true" : "false";
      break;
    case Value::Type::Int:
      out += std::to_string(v.as_int());
      break;
    case Value::Type::UInt:
      out += std::to_string(v.as_uint());
      break;
    case Value::Type::Double: {
      double d = v.as_double();
      if (!std::isfinite(d)) {
        out += "null";
        break;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
      break;
    }
    case Value::Type::String:
      out += escape(v.as_string());
      break;
    case Value::Type::Array: {
      const auto& a = v.as_array();
      if (a.empty()) {
        out += "[]";
        break;
      }
      // Arrays of scalars stay on one line to keep buffer dumps readable.
      bool flat = true;
      for (const auto& e : a) flat = flat && (e.is_number() || e.is_bool() || e.is_null());
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += flat || indent < 0 ? (indent < 0 ? "," : ", ") : ",";
        if (!flat) newline(level + 1);
        write(a[i], indent, level + 1, out);
      }
      if (!flat) newline(level);
      out += ']';
      break;
    }
    case Value::Type::Object: {
      const auto& o = v.as_object();
      if (o.empty()) {
        out += "{}";
        break;
      }
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += ',';
        newline(level + 1);
        out += escape(o[i].first);
        out += indent < 0 ? ":" : ": ";
        write(o[i].second, indent, level + 1, out);
      }
      newline(level);
      out += '}';
      break;
    }
  }
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  std::variant<Value, ParseError> run() {
    Value v;
    if (!value(v, 0)) return err_;
    ws();
    if (i_ != s_.size()) return ParseError{i_, "unexpected data after the JSON value"};
    return v;
  }

 private:
  bool fail(std::string m) {
    err_ = ParseError{i_, std::move(m)};
    return false;
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return fail("invalid literal");
    i_ += w.size();
    return true;
  }
  bool value(Value& out, int depth) {
    if (depth > 200) return fail("nesting too deep");
    ws();
    if (i_ >= s_.size()) return fail("unexpected end of input");
    char c = s_[i_];
    if (c == 'n') return lit("null") && (out = Value(), true);
    if (c == 't') return lit("true") && (out = Value(true), true);
    if (c == 'f') return lit("false") && (out = Value(false), true);
    if (c == '"') {
      std::string str;
      if (!string(str)) return false;
      out = Value(std::move(str));
      return true;
    }
    if (c == '[') {
      ++i_;
      Array a;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        out = Value(std::move(a));
        return true;
      }
      for (;;) {
        Value e;
        if (!value(e, depth + 1)) return false;
        a.push_back(std::move(e));
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          break;
        }
        return fail("expected ',' or ']'");
      }
      out = Value(std::move(a));
      return true;
    }
    if (c == '{') {
      ++i_;
      Object o;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        out = Value(std::move(o));
        return true;
      }
      for (;;) {
        ws();
        std::string key;
        if (i_ >= s_.size() || s_[i_] != '"') return fail("expected a string key");
        if (!string(key)) return false;
        ws();
        if (i_ >= s_.size() || s_[i_] != ':') return fail("expected ':'");
        ++i_;
        Value e;
        if (!value(e, depth + 1)) return false;
        o.emplace_back(std::move(key), std::move(e));
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          break;
        }
        return fail("expected ',' or '}'");
      }
      out = Value(std::move(o));
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return fail("unexpected character");
  }
  bool number(Value& out) {
    size_t start = i_;
    if (s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !(s_[i_] >= '0' && s_[i_] <= '9')) return fail("invalid number");
    if (s_[i_] == '0')
      ++i_;
    else
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    bool integer = true;
    if (i_ < s_.size() && s_[i_] == '.') {
      integer = false;
      ++i_;
      if (i_ >= s_.size() || !(s_[i_] >= '0' && s_[i_] <= '9')) return fail("invalid number");
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      integer = false;
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !(s_[i_] >= '0' && s_[i_] <= '9')) return fail("invalid number");
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    }
    std::string_view txt = s_.substr(start, i_ - start);
    if (integer) {
      int64_t v = 0;
      auto r = std::from_chars(txt.data(), txt.data() + txt.size(), v);
      if (r.ec == std::errc() && r.ptr == txt.data() + txt.size()) {
        out = Value(v);
        return true;
      }
      uint64_t u = 0;  // above INT64_MAX
      r = std::from_chars(txt.data(), txt.data() + txt.size(), u);
      if (r.ec == std::errc() && r.ptr == txt.data() + txt.size()) {
        out = Value(u);
        return true;
      }
    }
    std::string tmp(txt);
    char* end = nullptr;
    double d = std::strtod(tmp.c_str(), &end);
    out = Value(d);
    return true;
  }
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool u4(uint32_t& cp) {
    if (i_ + 4 > s_.size()) return fail("truncated \\u escape");
    cp = 0;
    for (int k = 0; k < 4; ++k) {
      int h = hex(s_[i_ + static_cast<size_t>(k)]);
      if (h < 0) return fail("invalid \\u escape");
      cp = cp * 16 + static_cast<uint32_t>(h);
    }
    i_ += 4;
    return true;
  }
  static void utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80)
      out += static_cast<char>(cp);
    else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool string(std::string& out) {
    ++i_;  // opening quote
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++i_;
        continue;
      }
      ++i_;
      if (i_ >= s_.size()) break;
      char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!u4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 6 <= s_.size() && s_[i_] == '\\' &&
              s_[i_ + 1] == 'u') {
            // Pair with a following low surrogate; any other escape is left for
            // the next round of the loop.
            size_t save = i_;
            i_ += 2;
            uint32_t lo = 0;
            if (u4(lo) && lo >= 0xDC00 && lo < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              i_ = save;
              err_ = ParseError{};
            }
          }
          utf8(cp, out);
          break;
        }
        default:
          return fail("invalid escape");
      }
    }
    return fail("unterminated string");
  }

  std::string_view s_;
  size_t i_ = 0;
  ParseError err_;
};

}  // namespace

std::string dump(const Value& v, int indent) {
  std::string out;
  write(v, indent, 0, out);
  return out;
}

std::variant<Value, ParseError> parse(std::string_view text) {
  return Parser(text).run();
}

}  // namespace simt::json
