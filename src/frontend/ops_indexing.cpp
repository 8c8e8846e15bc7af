// STUB: to be written (this family is not implemented yet).
#include "dispatch.h"

namespace thunder {
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) { fail("gather: not implemented yet"); }
Tensor scatter(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) { fail("scatter: not implemented yet"); }
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) { fail("scatter_add: not implemented yet"); }
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) { fail("index_select: not implemented yet"); }
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) { fail("masked_fill: not implemented yet"); }
}  // namespace thunder
