// A hand-fused reference loop for the fusion benchmark.
#pragma once

#include <cstdint>

void hand_fused_gelu_chain(const float* x, const float* w, const float* b, float* out,
                           int64_t n);
