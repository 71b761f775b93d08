// Results of the Vulkan runner's library: a value or an Error, never an exception.
// Every public function of runners/vulkan returns one of these; callers test ok()
// before value(). Error messages are for people (reports, stderr), the kind is for
// code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace simt::vulkan {

struct Error {
  enum class Kind {
    NoDevice,         // no Vulkan loader/driver/device fit for compute (or it failed to start)
    Compile,          // GLSL that glslang rejects; `line` is the first error's line
    Vulkan,           // a Vulkan call failed; `vk_result` is its VkResult
    Timeout,          // a dispatch did not finish within its timeout
    Busy,             // a timed-out dispatch is still running on the device
    DeviceLost,       // VK_ERROR_DEVICE_LOST: the device is unusable for the rest of the process
    Unsupported,      // the device lacks a feature the request needs
    InvalidArgument,  // a caller mistake (wrong buffer count, size, offset ...)
    Internal,         // an exception from a library (e.g. out of memory), caught
  };
  Kind kind = Kind::Internal;
  std::string message;
  int32_t vk_result = 0;         // the VkResult for Kind::Vulkan / DeviceLost / Timeout
  std::optional<uint32_t> line;  // Kind::Compile: 1-based line of the first error

  // "kind: message", e.g. "compile: shader.comp:3: 'x' : undeclared identifier".
  std::string to_string() const;
};

const char* kind_name(Error::Kind k);

inline Error make_error(Error::Kind kind, std::string message) {
  Error e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Only when ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Only when !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : e_(std::move(error)) {}

  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *e_; }  // only when !ok()

 private:
  std::optional<Error> e_;
};

using Status = Result<void>;

}  // namespace simt::vulkan
