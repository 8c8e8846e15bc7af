// MemoryMeter: counts the bytes currently allocated through ATen's CPU
// allocator (thunder's own, src/runtime/cpu_allocator.cpp). Used by benchmarks and the demo to
// measure what a forward pass leaves alive for the backward (saved-for-backward bytes), the same
// way for eager libtorch and for jitted programs.
#pragma once

#include <cstdint>

namespace thunder {

class MemoryMeter {
 public:
  // Installs thunder's CPU allocator (idempotent; stays installed for the process).
  static void install();
  static int64_t live_bytes();
  static int64_t peak_bytes();
  static void reset_peak();
};

}  // namespace thunder
