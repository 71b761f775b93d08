#include "result.h"

namespace simt::vulkan {

const char* kind_name(Error::Kind k) {
  switch (k) {
    case Error::Kind::NoDevice:
      return "no Vulkan device";
    case Error::Kind::Compile:
      return "compile";
    case Error::Kind::Vulkan:
      return "vulkan";
    case Error::Kind::Timeout:
      return "timeout";
    case Error::Kind::Busy:
      return "busy";
    case Error::Kind::DeviceLost:
      return "device lost";
    case Error::Kind::Unsupported:
      return "unsupported";
    case Error::Kind::InvalidArgument:
      return "invalid argument";
    case Error::Kind::Internal:
      return "internal";
  }
  return "?";
}

std::string Error::to_string() const {
  return std::string(kind_name(kind)) + ": " + message;
}

}  // namespace simt::vulkan
