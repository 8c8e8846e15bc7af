// Hand-written reference loops for the benchmarks: the yardsticks the
// generated kernels are measured against.
#pragma once

#include <cstdint>

// Scalar libm calls (the loop as usually written, with the kernels' flags).
void hand_fused_gelu_chain(const float* x, const float* w, const float* b, float* out, int64_t n);
// The same loop under -ffast-math: vectorised with glibc's libmvec.
void hand_fused_gelu_chain_fast_math(const float* x, const float* w, const float* b, float* out,
                                     int64_t n);

// out[i] = in[i]: the machine's copy bandwidth, for bandwidth-bound kernels.
void hand_copy(const float* in, float* out, int64_t n);
