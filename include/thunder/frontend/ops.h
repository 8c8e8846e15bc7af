// Tensor ops as free functions (libtorch's argument order and defaults),
// operators, and factories. Each records an ltorch symbol under a trace and
// runs ATen eagerly otherwise.
#pragma once

#include <ATen/core/TensorBody.h>
#include <c10/core/TensorOptions.h>

#include "thunder/frontend/tensor.h"

namespace thunder {

// ---- elementwise ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Scalar& b);
Tensor pow(const Scalar& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor silu(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& a, c10::optional<Scalar> min, c10::optional<Scalar> max = c10::nullopt);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b);

Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

// ---- operators (Tensor or number on either side) ----
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);

// ---- reductions ----
Tensor sum(const Tensor& a);
Tensor sum(const Tensor& a, at::IntArrayRef dims, bool keepdim = false);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, at::IntArrayRef dims, bool keepdim = false);
Tensor amax(const Tensor& a, at::IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, at::IntArrayRef dims = {}, bool keepdim = false);
Tensor var(const Tensor& a, bool unbiased = true);
Tensor var(const Tensor& a, at::IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& a, bool unbiased = true);
Tensor std(const Tensor& a, at::IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor argmax(const Tensor& a, c10::optional<int64_t> dim = c10::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);

// ---- shape ----
Tensor reshape(const Tensor& a, at::IntArrayRef shape);
Tensor view(const Tensor& a, at::IntArrayRef shape);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& a, at::IntArrayRef dims);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor expand(const Tensor& a, at::IntArrayRef shape);
Tensor contiguous(const Tensor& a);
Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
TensorList split(const Tensor& a, int64_t split_size, int64_t dim = 0);
TensorList split(const Tensor& a, at::IntArrayRef split_sizes, int64_t dim = 0);
TensorList chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
Tensor triu(const Tensor& a, int64_t diagonal = 0);
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor to(const Tensor& a, at::ScalarType dtype);

// ---- indexing ----
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value);

Tensor matmul(const Tensor& a, const Tensor& b);

// ---- factories (libtorch's TensorOptions; default float32 on cpu) ----
Tensor randn(at::IntArrayRef shape, const at::TensorOptions& opts = {});
Tensor rand(at::IntArrayRef shape, const at::TensorOptions& opts = {});
Tensor zeros(at::IntArrayRef shape, const at::TensorOptions& opts = {});
Tensor ones(at::IntArrayRef shape, const at::TensorOptions& opts = {});
Tensor full(at::IntArrayRef shape, const Scalar& value, const at::TensorOptions& opts = {});
Tensor empty(at::IntArrayRef shape, const at::TensorOptions& opts = {});
Tensor arange(const Scalar& end, const at::TensorOptions& opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              const at::TensorOptions& opts = {});
Tensor zeros_like(const Tensor& a);
Tensor ones_like(const Tensor& a);
Tensor rand_like(const Tensor& a);
Tensor randn_like(const Tensor& a);
Tensor empty_like(const Tensor& a);
Tensor full_like(const Tensor& a, const Scalar& value);

namespace nn::functional {
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = {});
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor relu(const Tensor& x);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor layer_norm(const Tensor& x, at::IntArrayRef normalized_shape, const Tensor& w = {},
                  const Tensor& b = {}, double eps = 1e-5);
Tensor embedding(const Tensor& indices, const Tensor& weight);
Tensor cross_entropy(const Tensor& logits, const Tensor& targets);
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    bool is_causal = false);
}  // namespace nn::functional

}  // namespace thunder
