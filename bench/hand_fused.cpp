// Hand-written loops compiled with cpu_fuser's kernel flags (see
// CMakeLists.txt): the yardsticks for the generated kernels.
#include "hand_fused.h"

#include <cmath>

// The gelu(x * w + b) * sigmoid(x) + tanh(x) chain as one loop.
void hand_fused_gelu_chain(const float* x, const float* w, const float* b, float* out, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float h = x[i] * w[i] + b[i];
    float gelu = 0.5f * h * (1.0f + std::erf(h * 0.70710678118654752f));
    float sig = 1.0f / (1.0f + std::exp(-x[i]));
    out[i] = gelu * sig + std::tanh(x[i]);
  }
}

// Parallelized like the generated kernels (OpenMP, static schedule) so the
// comparison sees the same thread count.
void hand_copy(const float* in, float* out, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
}
