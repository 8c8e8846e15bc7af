// Shape ops.
#include "dispatch.h"

namespace thunder {

Tensor reshape(const Tensor& a, at::IntArrayRef shape) { THUNDER_OP("ltorch.reshape", a, shape); }
Tensor view(const Tensor& a, at::IntArrayRef shape) { THUNDER_OP("ltorch.view", a, shape); }
Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  THUNDER_OP("ltorch.flatten", a, start_dim, end_dim);
}
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1) {
  THUNDER_OP("ltorch.transpose", a, dim0, dim1);
}
Tensor permute(const Tensor& a, at::IntArrayRef dims) { THUNDER_OP("ltorch.permute", a, dims); }
Tensor unsqueeze(const Tensor& a, int64_t dim) { THUNDER_OP("ltorch.unsqueeze", a, dim); }
Tensor squeeze(const Tensor& a) { THUNDER_OP("ltorch.squeeze", a, Value()); }
Tensor squeeze(const Tensor& a, int64_t dim) {
  THUNDER_OP("ltorch.squeeze", a, Value(std::vector<int64_t>{dim}));
}
Tensor expand(const Tensor& a, at::IntArrayRef shape) { THUNDER_OP("ltorch.expand", a, shape); }
Tensor contiguous(const Tensor& a) { THUNDER_OP("ltorch.contiguous", a); }
Tensor cat(const TensorList& tensors, int64_t dim) { THUNDER_OP("ltorch.cat", tensors, dim); }
Tensor stack(const TensorList& tensors, int64_t dim) { THUNDER_OP("ltorch.stack", tensors, dim); }
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  THUNDER_OP("ltorch.narrow", a, dim, start, length);
}
Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  THUNDER_OP("ltorch.select", a, dim, index);
}
TensorList split(const Tensor& a, int64_t split_size, int64_t dim) {
  THUNDER_OP_MULTI("ltorch.split", a, split_size, dim);
}
TensorList split(const Tensor& a, at::IntArrayRef split_sizes, int64_t dim) {
  THUNDER_OP_MULTI("ltorch.split", a, split_sizes, dim);
}
TensorList chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  THUNDER_OP_MULTI("ltorch.chunk", a, chunks, dim);
}
Tensor triu(const Tensor& a, int64_t diagonal) { THUNDER_OP("ltorch.triu", a, diagonal); }
Tensor tril(const Tensor& a, int64_t diagonal) { THUNDER_OP("ltorch.tril", a, diagonal); }
Tensor to(const Tensor& a, at::ScalarType dtype) { THUNDER_OP("ltorch.to", a, from_aten(dtype)); }

}  // namespace thunder
