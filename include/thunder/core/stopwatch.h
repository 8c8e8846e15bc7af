// Wall time of compile steps (pass times in compile_stats, stage provenance).
#pragma once

#include <chrono>

namespace thunder {

class Stopwatch {
 public:
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace thunder
