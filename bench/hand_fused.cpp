// The gelu(x * w + b) * sigmoid(x) + tanh(x) chain as one hand-written loop,
// compiled with cpu_fuser's kernel flags (see CMakeLists.txt): the yardstick
// for the generated kernel.
#include "hand_fused.h"

#include <cmath>

void hand_fused_gelu_chain(const float* x, const float* w, const float* b, float* out,
                           int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float h = x[i] * w[i] + b[i];
    float gelu = 0.5f * h * (1.0f + std::erf(h * 0.70710678118654752f));
    float sig = 1.0f / (1.0f + std::exp(-x[i]));
    out[i] = gelu * sig + std::tanh(x[i]);
  }
}
