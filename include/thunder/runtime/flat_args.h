// The flattened arguments of one jitted call, in calling order. The jit
// fills a reused vector of these per call (no allocation once warm); guards
// read their metadata and programs read tensors and numbers from them.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <cstdint>

namespace thunder {

struct FlatArg {
  enum class Kind : uint8_t { Tensor, Scalar, Int, Double, Bool, ListLen };
  Kind kind = Kind::Int;
  at::Tensor tensor;  // Tensor (undefined = None)
  int64_t i = 0;      // Int, Bool, ListLen; Scalar: 0 int, 1 float, 2 bool
  double d = 0.0;     // Double; Scalar value

  c10::Scalar scalar() const {
    if (i == 1) return c10::Scalar(d);
    if (i == 2) return c10::Scalar(d != 0.0);
    return c10::Scalar(static_cast<int64_t>(d));
  }
};

}  // namespace thunder
