// STUB: to be written (this family is not implemented yet).
#include "dispatch.h"

namespace thunder {
Tensor randn(at::IntArrayRef shape, const at::TensorOptions& opts) { fail("randn: not implemented yet"); }
Tensor rand(at::IntArrayRef shape, const at::TensorOptions& opts) { fail("rand: not implemented yet"); }
Tensor zeros(at::IntArrayRef shape, const at::TensorOptions& opts) { fail("zeros: not implemented yet"); }
Tensor ones(at::IntArrayRef shape, const at::TensorOptions& opts) { fail("ones: not implemented yet"); }
Tensor full(at::IntArrayRef shape, const Scalar& value, const at::TensorOptions& opts) { fail("full: not implemented yet"); }
Tensor empty(at::IntArrayRef shape, const at::TensorOptions& opts) { fail("empty: not implemented yet"); }
Tensor arange(const Scalar& end, const at::TensorOptions& opts) { fail("arange: not implemented yet"); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const at::TensorOptions& opts) { fail("arange: not implemented yet"); }
Tensor zeros_like(const Tensor& a) { fail("zeros_like: not implemented yet"); }
Tensor ones_like(const Tensor& a) { fail("ones_like: not implemented yet"); }
Tensor rand_like(const Tensor& a) { fail("rand_like: not implemented yet"); }
Tensor randn_like(const Tensor& a) { fail("randn_like: not implemented yet"); }
Tensor empty_like(const Tensor& a) { fail("empty_like: not implemented yet"); }
Tensor full_like(const Tensor& a, const Scalar& value) { fail("full_like: not implemented yet"); }
}  // namespace thunder
