// thunder::Tensor: the user's tensor handle. Outside a trace it is concrete:
// it wraps an at::Tensor (zero copy) and every op runs eagerly on ATen with
// libtorch's semantics, autograd included. Inside thunder::jit tracing it is a
// proxy and every op is recorded into the trace instead.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>

#include <string>
#include <tuple>
#include <vector>

#include "thunder/core/proxy.h"
#include "thunder/frontend/scalar.h"

namespace thunder {

class Tensor;
using TensorList = std::vector<Tensor>;

class Tensor {
 public:
  Tensor() = default;                         // the "None" tensor
  Tensor(at::Tensor t) : t_(std::move(t)) {}  // NOLINT: implicit, zero copy
  explicit Tensor(ProxyPtr p) : p_(std::move(p)) {}

  bool is_proxy() const { return p_ != nullptr; }
  const ProxyPtr& proxy() const { return p_; }
  // The wrapped at::Tensor; throws thunder::Error on a proxy.
  const at::Tensor& aten() const;

  bool defined() const { return p_ != nullptr || t_.defined(); }
  c10::IntArrayRef sizes() const;
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  at::ScalarType dtype() const;
  at::ScalarType scalar_type() const { return dtype(); }
  at::Device device() const;
  bool requires_grad() const;
  bool is_contiguous() const;  // proxies are logically contiguous

  // Concrete only.
  Tensor grad() const;
  void backward(const Tensor& grad = Tensor()) const;
  Tensor& requires_grad_(bool on = true);
  template <typename T>
  T item() const {
    return aten().item<T>();
  }

  // ---- elementwise ----
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(const Scalar& o) const;
  Tensor pow(const Tensor& o) const;
  Tensor pow(const Scalar& o) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor erf() const;
  Tensor reciprocal() const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor clamp(c10::optional<Scalar> min, c10::optional<Scalar> max = c10::nullopt) const;
  Tensor eq(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_not() const;

  // ---- reductions ----
  Tensor sum() const;
  Tensor sum(at::IntArrayRef dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(at::IntArrayRef dims, bool keepdim = false) const;
  Tensor amax(at::IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(at::IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(at::IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(at::IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor argmax(c10::optional<int64_t> dim = c10::nullopt, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;

  // ---- shape ----
  Tensor reshape(at::IntArrayRef shape) const;
  Tensor view(at::IntArrayRef shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(at::IntArrayRef dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(at::IntArrayRef shape) const;
  Tensor contiguous() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  TensorList split(int64_t split_size, int64_t dim = 0) const;
  TensorList split(at::IntArrayRef split_sizes, int64_t dim = 0) const;
  TensorList chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor to(at::ScalarType dtype) const;

  // ---- indexing ----
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;

  Tensor matmul(const Tensor& o) const;

  // ---- in place (return *this) ----
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(const Scalar& o);
  Tensor& copy_(const Tensor& src);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& uniform_(double from = 0.0, double to = 1.0);

  // Used by in-place ops under a trace: rebinds this handle to a new proxy.
  void rebind(ProxyPtr p) { p_ = std::move(p); }

 private:
  at::Tensor t_;
  ProxyPtr p_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace thunder
