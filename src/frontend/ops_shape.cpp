// STUB: to be written (this family is not implemented yet).
#include "dispatch.h"

namespace thunder {
Tensor reshape(const Tensor& a, at::IntArrayRef shape) { fail("reshape: not implemented yet"); }
Tensor view(const Tensor& a, at::IntArrayRef shape) { fail("view: not implemented yet"); }
Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) { fail("flatten: not implemented yet"); }
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1) { fail("transpose: not implemented yet"); }
Tensor permute(const Tensor& a, at::IntArrayRef dims) { fail("permute: not implemented yet"); }
Tensor unsqueeze(const Tensor& a, int64_t dim) { fail("unsqueeze: not implemented yet"); }
Tensor squeeze(const Tensor& a) { fail("squeeze: not implemented yet"); }
Tensor squeeze(const Tensor& a, int64_t dim) { fail("squeeze: not implemented yet"); }
Tensor expand(const Tensor& a, at::IntArrayRef shape) { fail("expand: not implemented yet"); }
Tensor contiguous(const Tensor& a) { fail("contiguous: not implemented yet"); }
Tensor cat(const TensorList& tensors, int64_t dim) { fail("cat: not implemented yet"); }
Tensor stack(const TensorList& tensors, int64_t dim) { fail("stack: not implemented yet"); }
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) { fail("narrow: not implemented yet"); }
Tensor select(const Tensor& a, int64_t dim, int64_t index) { fail("select: not implemented yet"); }
TensorList split(const Tensor& a, int64_t split_size, int64_t dim) { fail("split: not implemented yet"); }
TensorList split(const Tensor& a, at::IntArrayRef split_sizes, int64_t dim) { fail("split: not implemented yet"); }
TensorList chunk(const Tensor& a, int64_t chunks, int64_t dim) { fail("chunk: not implemented yet"); }
Tensor triu(const Tensor& a, int64_t diagonal) { fail("triu: not implemented yet"); }
Tensor tril(const Tensor& a, int64_t diagonal) { fail("tril: not implemented yet"); }
Tensor to(const Tensor& a, at::ScalarType dtype) { fail("to: not implemented yet"); }
}  // namespace thunder
