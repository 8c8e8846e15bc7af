// matmul and nn::functional ops. An undefined Tensor (Tensor()) passes None.
#include "dispatch.h"

namespace thunder {

Tensor matmul(const Tensor& a, const Tensor& b) { THUNDER_OP("ltorch.matmul", a, b); }

namespace nn::functional {

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  THUNDER_OP("ltorch.linear", x, w, b);
}
Tensor dropout(const Tensor& x, double p, bool training) {
  THUNDER_OP("ltorch.dropout", x, p, training);
}
Tensor gelu(const Tensor& x, const std::string& approximate) {
  THUNDER_OP("ltorch.gelu", x, approximate);
}
Tensor relu(const Tensor& x) { THUNDER_OP("ltorch.relu", x); }
Tensor softmax(const Tensor& x, int64_t dim) { THUNDER_OP("ltorch.softmax", x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { THUNDER_OP("ltorch.log_softmax", x, dim); }
Tensor layer_norm(const Tensor& x, at::IntArrayRef normalized_shape, const Tensor& w,
                  const Tensor& b, double eps) {
  THUNDER_OP("ltorch.layer_norm", x, normalized_shape, w, b, eps);
}
Tensor embedding(const Tensor& indices, const Tensor& weight) {
  THUNDER_OP("ltorch.embedding", indices, weight);
}
Tensor cross_entropy(const Tensor& logits, const Tensor& targets) {
  THUNDER_OP("ltorch.cross_entropy", logits, targets);
}
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    bool is_causal) {
  THUNDER_OP("ltorch.scaled_dot_product_attention", q, k, v, is_causal);
}

}  // namespace nn::functional
}  // namespace thunder
