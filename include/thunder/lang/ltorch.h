// Torch-semantics ops ("ltorch.*"): each is a composite Symbol whose body
// decomposes into prims, applying PyTorch's broadcasting, type promotion
// (Python numbers included: f16_tensor * 2.5 stays f16, i64_tensor * 2.5
// becomes the default float), defaults and error messages. These functions
// must be called inside a trace; arguments and results are Values.
#pragma once

#include <string_view>
#include <vector>

#include "thunder/core/symbol.h"

namespace thunder::ltorch {

// Registers every ltorch symbol (and the prims) once, and looks one up.
void ensure_registered();
const Symbol& symbol(std::string_view id);

// ---- elementwise ----
Value add(const Value& a, const Value& b, const Value& alpha = 1);
Value sub(const Value& a, const Value& b, const Value& alpha = 1);
Value mul(const Value& a, const Value& b);
Value div(const Value& a, const Value& b);  // true division
Value pow(const Value& a, const Value& b);
Value neg(const Value& a);
Value abs(const Value& a);
Value exp(const Value& a);
Value log(const Value& a);
Value log1p(const Value& a);
Value sqrt(const Value& a);
Value rsqrt(const Value& a);
Value sin(const Value& a);
Value cos(const Value& a);
Value tanh(const Value& a);
Value sigmoid(const Value& a);
Value relu(const Value& a);
Value silu(const Value& a);
Value erf(const Value& a);
Value reciprocal(const Value& a);
Value maximum(const Value& a, const Value& b);
Value minimum(const Value& a, const Value& b);
Value clamp(const Value& a, const Value& min, const Value& max);  // numbers or None
Value where(const Value& pred, const Value& a, const Value& b);
Value eq(const Value& a, const Value& b);
Value ne(const Value& a, const Value& b);
Value lt(const Value& a, const Value& b);
Value le(const Value& a, const Value& b);
Value gt(const Value& a, const Value& b);
Value ge(const Value& a, const Value& b);
Value logical_and(const Value& a, const Value& b);
Value logical_or(const Value& a, const Value& b);
Value logical_not(const Value& a);

// ---- reductions ---- (dims: an int list, empty = all dims)
Value sum(const Value& a, const std::vector<int64_t>& dims, bool keepdim);
Value mean(const Value& a, const std::vector<int64_t>& dims, bool keepdim);
Value amax(const Value& a, const std::vector<int64_t>& dims, bool keepdim);
Value amin(const Value& a, const std::vector<int64_t>& dims, bool keepdim);
Value var(const Value& a, const std::vector<int64_t>& dims, double correction, bool keepdim);
Value std(const Value& a, const std::vector<int64_t>& dims, double correction, bool keepdim);
Value argmax(const Value& a, const Value& dim, bool keepdim);  // dim: int or None
// Returns a list [values, indices].
Value max(const Value& a, int64_t dim, bool keepdim);

// ---- shape ----
Value reshape(const Value& a, const std::vector<int64_t>& shape);  // one -1 allowed
Value view(const Value& a, const std::vector<int64_t>& shape);
Value flatten(const Value& a, int64_t start_dim, int64_t end_dim);
Value transpose(const Value& a, int64_t dim0, int64_t dim1);
Value permute(const Value& a, const std::vector<int64_t>& dims);
Value unsqueeze(const Value& a, int64_t dim);
Value squeeze(const Value& a, const Value& dims);  // int list, or None for all size-1 dims
Value expand(const Value& a, const std::vector<int64_t>& shape);  // -1 keeps a dim
Value contiguous(const Value& a);
Value cat(const std::vector<Value>& tensors, int64_t dim);
Value stack(const std::vector<Value>& tensors, int64_t dim);
Value narrow(const Value& a, int64_t dim, int64_t start, int64_t length);
Value select(const Value& a, int64_t dim, int64_t index);
Value split(const Value& a, const std::vector<int64_t>& sizes, int64_t dim);  // list out
Value split(const Value& a, int64_t split_size, int64_t dim);                 // list out
Value chunk(const Value& a, int64_t chunks, int64_t dim);                     // list out
Value triu(const Value& a, int64_t diagonal);
Value tril(const Value& a, int64_t diagonal);
Value to(const Value& a, DType dtype);

// ---- indexing ----
Value gather(const Value& a, int64_t dim, const Value& index);
Value scatter(const Value& a, int64_t dim, const Value& index, const Value& src);
Value scatter_add(const Value& a, int64_t dim, const Value& index, const Value& src);
Value index_select(const Value& a, int64_t dim, const Value& index);
Value masked_fill(const Value& a, const Value& mask, const Value& value);

// ---- linear algebra and nn ----
Value matmul(const Value& a, const Value& b);
Value linear(const Value& x, const Value& w, const Value& bias);  // bias may be None
Value dropout(const Value& x, double p, bool training);
Value gelu(const Value& x, const std::string& approximate);  // "none" or "tanh"
Value softmax(const Value& x, int64_t dim);
Value log_softmax(const Value& x, int64_t dim);
Value layer_norm(const Value& x, const std::vector<int64_t>& normalized_shape, const Value& w,
                 const Value& b, double eps);
// layer_norm in two steps, as its grad rule writes it: the statistics, a list
// [mean, rstd] (1/sqrt(var + eps)) in the compute dtype (float32 for half
// types), shaped like x with each normalised dim 1 (at::native_layer_norm's
// mean and rstd); then the output from them, elementwise.
Value layer_norm_stats(const Value& x, const std::vector<int64_t>& normalized_shape, double eps);
Value layer_norm_from_stats(const Value& x, const std::vector<int64_t>& normalized_shape,
                            const Value& mean, const Value& rstd, const Value& w, const Value& b);
// torch.nn.functional.batch_norm's output over dim 1 of x ([N, C, ...]):
// batch statistics in training, running_mean and running_var otherwise. It
// updates nothing: the running statistics' update is a separate, detached
// copy_ in the trace (capture records it).
Value batch_norm(const Value& x, const Value& running_mean, const Value& running_var,
                 const Value& w, const Value& b, bool training, double eps);
Value embedding(const Value& indices, const Value& weight);
Value cross_entropy(const Value& logits, const Value& targets);  // mean reduction
Value nll_loss(const Value& log_probs, const Value& targets);    // [N, C], [N]; mean
Value scaled_dot_product_attention(const Value& q, const Value& k, const Value& v, bool is_causal);

// ---- backward helpers (emitted by grad rules; ATen has fused kernels) ----
Value gelu_backward(const Value& grad, const Value& a, const std::string& approximate);
Value softmax_backward(const Value& grad, const Value& out, int64_t dim);
Value log_softmax_backward(const Value& grad, const Value& out, int64_t dim);

// layer_norm's three gradients, a list [grad_a, grad_weight or None,
// grad_bias or None], from layer_norm_stats' mean and rstd (no statistics
// recomputed); has_bias: whether the forward had a bias.
Value native_layer_norm_backward(const Value& grad, const Value& a,
                                 const std::vector<int64_t>& normalized_shape, const Value& mean,
                                 const Value& rstd, const Value& weight, bool has_bias);

// d cross_entropy / d logits from the logits ([N, C]), each row's log-sum-exp
// ([N], in the compute dtype) and the targets ([N]): softmax is recomputed
// from the logits, so the forward saves N numbers instead of [N, C]
// log-probabilities.
Value cross_entropy_backward(const Value& grad, const Value& logits, const Value& log_sum_exp,
                             const Value& targets);
// d embedding / d weight: the cotangent rows summed into a [num_weights, D] tensor.
Value embedding_backward(const Value& grad, const Value& indices, int64_t num_weights);
// Attention's grad rule pair (q, k, v of one batch shape): sdpa_forward returns
// [out, lse], lse being each query row's log-sum-exp of the scaled, masked
// scores ([.., T], in the compute dtype); sdpa_backward returns [gq, gk, gv],
// recomputing the probabilities from q, k and lse, so the forward saves no
// [.., T, S] tensor.
Value sdpa_forward(const Value& q, const Value& k, const Value& v, bool is_causal);
Value sdpa_backward(const Value& grad, const Value& q, const Value& k, const Value& v,
                    const Value& out, const Value& lse, bool is_causal);

// ---- factories ----
Value full(const std::vector<int64_t>& shape, const Value& fill_value, Device device, DType dtype);
Value zeros(const std::vector<int64_t>& shape, Device device, DType dtype);
Value ones(const std::vector<int64_t>& shape, Device device, DType dtype);
Value empty(const std::vector<int64_t>& shape, Device device, DType dtype);
Value rand(const std::vector<int64_t>& shape, Device device, DType dtype);
Value randn(const std::vector<int64_t>& shape, Device device, DType dtype);
Value arange(const Value& start, const Value& end, const Value& step, Device device, DType dtype);

}  // namespace thunder::ltorch
