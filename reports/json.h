// A small JSON value, writer and parser for results files, the runner protocol and
// `--json` output (RFC 8259). Objects keep insertion order so output is stable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace simt::json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  // Int holds every integer from INT64_MIN to INT64_MAX; UInt only those above
  // INT64_MAX (up to 2^64 - 1), so each integer has exactly one representation.
  enum class Type : uint8_t { Null, Bool, Int, Double, String, Array, Object, UInt };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int v) : v_(int64_t{v}) {}
  Value(int64_t v) : v_(v) {}
  Value(uint32_t v) : v_(int64_t{v}) {}
  Value(uint64_t v) {
    if (v <= static_cast<uint64_t>(INT64_MAX))
      v_ = static_cast<int64_t>(v);
    else
      v_ = v;
  }
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(Array a) : v_(std::move(a)) {}
  Value(Object o) : v_(std::move(o)) {}

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::Null; }
  bool is_bool() const { return type() == Type::Bool; }
  bool is_int() const { return type() == Type::Int; }
  bool is_number() const { return is_int() || is_uint() || type() == Type::Double; }
  // A non-negative integer (Int >= 0 or UInt).
  bool is_uint() const {
    return type() == Type::UInt || (type() == Type::Int && std::get<int64_t>(v_) >= 0);
  }
  bool is_string() const { return type() == Type::String; }
  bool is_array() const { return type() == Type::Array; }
  bool is_object() const { return type() == Type::Object; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const {  // a UInt wraps (two's complement); check is_uint() first
    if (type() == Type::UInt) return static_cast<int64_t>(std::get<uint64_t>(v_));
    return is_int() ? std::get<int64_t>(v_) : static_cast<int64_t>(std::get<double>(v_));
  }
  uint64_t as_uint() const {
    return type() == Type::UInt ? std::get<uint64_t>(v_)
                                : static_cast<uint64_t>(std::get<int64_t>(v_));
  }
  double as_double() const {
    if (type() == Type::UInt) return static_cast<double>(std::get<uint64_t>(v_));
    return is_int() ? static_cast<double>(std::get<int64_t>(v_)) : std::get<double>(v_);
  }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Object access: nullptr if absent or not an object.
  const Value* find(std::string_view key) const;
  // Object insert-or-replace (turns a null into an object).
  Value& operator[](std::string_view key);
  void push_back(Value v);  // turns a null into an array

  bool operator==(const Value& o) const { return v_ == o.v_; }

 private:
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object, uint64_t> v_;
};

// Compact (one line) or indented output.
std::string dump(const Value& v, int indent = -1);
std::string escape(std::string_view s);  // the quoted JSON string

struct ParseError {
  size_t offset = 0;
  std::string message;
};
// Parses exactly one JSON value (surrounding whitespace allowed). Depth-limited.
std::variant<Value, ParseError> parse(std::string_view text);

}  // namespace simt::json
