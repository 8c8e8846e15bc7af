// STUB: to be written (this family is not implemented yet).
#include "dispatch.h"

namespace thunder {
Tensor matmul(const Tensor& a, const Tensor& b) { fail("matmul: not implemented yet"); }
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
