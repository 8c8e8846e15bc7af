// The gelu chain hand-fused once more, compiled with -ffast-math (see
// CMakeLists.txt) so that GCC vectorises erf/exp/tanh with glibc's vector
// math library (libmvec): the strongest loop a user can write without their
// own vector math, and what the generated kernel is measured against. The
// fast-math semantics (no NaN/inf guarantees) are what the kernels avoid.
#include <cmath>

#include "hand_fused.h"

void hand_fused_gelu_chain_fast_math(const float* x, const float* w, const float* b, float* out,
                                     int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float h = x[i] * w[i] + b[i];
    float gelu = 0.5f * h * (1.0f + erff(h * 0.70710678118654752f));
    float sig = 1.0f / (1.0f + expf(-x[i]));
    out[i] = gelu * sig + tanhf(x[i]);
  }
}
