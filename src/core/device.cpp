#include "thunder/core/device.h"

#include <charconv>

#include "thunder/core/error.h"

namespace thunder {

Device Device::parse(std::string_view s) {
  if (s == "cpu") return cpu();
  if (s == "cuda") return {Type::CUDA, -1};
  if (s.substr(0, 5) == "cuda:") {
    int idx = -1;
    auto digits = s.substr(5);
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), idx);
    if (ec == std::errc() && p == digits.data() + digits.size() && idx >= 0 && idx < 32768)
      return cuda(static_cast<int16_t>(idx));
  }
  fail("Device: cannot parse device string '{}' (expected 'cpu', 'cuda' or 'cuda:N')", s);
}

std::string Device::str() const {
  if (type == Type::CPU) return "cpu";
  return index < 0 ? "cuda" : "cuda:" + std::to_string(index);
}

}  // namespace thunder
