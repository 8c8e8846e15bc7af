// Hand-written reference loops for the benchmarks: the yardsticks the
// generated kernels are measured against.
#pragma once

#include <cstdint>

void hand_fused_gelu_chain(const float* x, const float* w, const float* b, float* out,
                           int64_t n);

// out[i] = in[i]: the machine's copy bandwidth, for bandwidth-bound kernels.
void hand_copy(const float* in, float* out, int64_t n);
