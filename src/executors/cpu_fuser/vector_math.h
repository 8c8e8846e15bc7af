// The preamble of every generated kernel: storage conversions for f16/bf16,
// integer division and power with libtorch's semantics, NaN-propagating
// max/min, and branch-free f32 exp/log/log1p/tanh/erf/sigmoid that GCC
// vectorises (glibc's vector math needs -ffast-math, which would break NaN and
// inf semantics). The polynomials were fitted for this file with mpmath
// (chebyfit); measured accuracy against double-precision libm is in
// tests/jit/test_cpu_fuser_math.cpp. f64 uses libm. Also Philox4x32-10 and
// prims.uniform_philox's mapping (thunder/core/philox.h, bit for bit), per
// element and as a tile fill that computes each block once.
#pragma once

#include <string_view>

namespace thunder::cpu_fuser {

std::string_view kernel_preamble();

}  // namespace thunder::cpu_fuser
