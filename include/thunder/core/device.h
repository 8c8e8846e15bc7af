// Devices: "cpu" and "cuda:N". CUDA devices are parsed and printed even though
// the executors in this build only run on the CPU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace thunder {

struct Device {
  enum class Type : uint8_t { CPU, CUDA };
  Type type = Type::CPU;
  int16_t index = -1;  // -1: unspecified (cpu, or the current cuda device)

  static Device cpu() { return {}; }
  static Device cuda(int16_t i = 0) { return {Type::CUDA, i}; }
  // Parses "cpu", "cuda", "cuda:1"; throws thunder::Error otherwise.
  static Device parse(std::string_view s);

  std::string str() const;  // "cpu", "cuda:0"
  friend bool operator==(const Device&, const Device&) = default;
};

}  // namespace thunder
