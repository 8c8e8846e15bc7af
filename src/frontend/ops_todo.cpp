// TEMPORARY: frontend ops not written yet (helpers replace these).
#include "dispatch.h"
namespace thunder {
Tensor sum(const Tensor& a) { fail("sum: not implemented yet"); }
Tensor sum(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("sum: not implemented yet"); }
Tensor mean(const Tensor& a) { fail("mean: not implemented yet"); }
Tensor mean(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("mean: not implemented yet"); }
Tensor amax(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("amax: not implemented yet"); }
Tensor amin(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("amin: not implemented yet"); }
Tensor var(const Tensor& a, bool unbiased) { fail("var: not implemented yet"); }
Tensor var(const Tensor& a, at::IntArrayRef dims, bool unbiased, bool keepdim) { fail("var: not implemented yet"); }
Tensor std(const Tensor& a, bool unbiased) { fail("std: not implemented yet"); }
Tensor std(const Tensor& a, at::IntArrayRef dims, bool unbiased, bool keepdim) { fail("std: not implemented yet"); }
Tensor argmax(const Tensor& a, c10::optional<int64_t> dim, bool keepdim) { fail("argmax: not implemented yet"); }
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) { fail("max: not implemented yet"); }
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
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) { fail("gather: not implemented yet"); }
Tensor scatter(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) { fail("scatter: not implemented yet"); }
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) { fail("scatter_add: not implemented yet"); }
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) { fail("index_select: not implemented yet"); }
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) { fail("masked_fill: not implemented yet"); }
Tensor matmul(const Tensor& a, const Tensor& b) { fail("matmul: not implemented yet"); }
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
Tensor nn::functional::linear(const Tensor& x, const Tensor& w, const Tensor& b) { fail("linear: not implemented yet"); }
Tensor nn::functional::dropout(const Tensor& x, double p, bool training) { fail("dropout: not implemented yet"); }
Tensor nn::functional::gelu(const Tensor& x, const std::string& approximate) { fail("gelu: not implemented yet"); }
Tensor nn::functional::relu(const Tensor& x) { fail("relu: not implemented yet"); }
Tensor nn::functional::softmax(const Tensor& x, int64_t dim) { fail("softmax: not implemented yet"); }
Tensor nn::functional::log_softmax(const Tensor& x, int64_t dim) { fail("log_softmax: not implemented yet"); }
Tensor nn::functional::layer_norm(const Tensor& x, at::IntArrayRef normalized_shape, const Tensor& w, const Tensor& b, double eps) { fail("layer_norm: not implemented yet"); }
Tensor nn::functional::embedding(const Tensor& indices, const Tensor& weight) { fail("embedding: not implemented yet"); }
Tensor nn::functional::cross_entropy(const Tensor& logits, const Tensor& targets) { fail("cross_entropy: not implemented yet"); }
Tensor nn::functional::scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal) { fail("scaled_dot_product_attention: not implemented yet"); }
}  // namespace thunder
