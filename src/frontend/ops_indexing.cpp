// Indexing ops: gather, scatter, scatter_add, index_select, masked_fill.
#include "dispatch.h"

namespace thunder {

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  THUNDER_OP("ltorch.gather", a, dim, index);
}
Tensor scatter(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  THUNDER_OP("ltorch.scatter", a, dim, index, src);
}
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  THUNDER_OP("ltorch.scatter_add", a, dim, index, src);
}
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  THUNDER_OP("ltorch.index_select", a, dim, index);
}
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  THUNDER_OP("ltorch.masked_fill", a, mask, value);
}

}  // namespace thunder
