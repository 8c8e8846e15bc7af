// thunder::Tensor metadata, and methods that forward to the free functions.
#include "thunder/frontend/tensor.h"

#include <ATen/ATen.h>

#include <ostream>

#include "dispatch.h"
#include "thunder/executors/kernel.h"

namespace thunder {

namespace {
[[noreturn]] void concrete_only(const Tensor& t, const char* what) {
  fail("Tensor.{}: needs a concrete tensor, but {} is a proxy of a trace", what, t.proxy()->name);
}
}  // namespace

const at::Tensor& Tensor::aten() const {
  if (p_) concrete_only(*this, "aten");
  return t_;
}

c10::IntArrayRef Tensor::sizes() const { return p_ ? c10::IntArrayRef(p_->shape) : t_.sizes(); }
int64_t Tensor::size(int64_t d) const {
  int64_t n = dim();
  int64_t c = d < 0 ? d + n : d;
  THUNDER_CHECK(c >= 0 && c < n, "Tensor.size: dim {} is out of range for a tensor of rank {}", d,
                n);
  return sizes()[c];
}
int64_t Tensor::dim() const { return p_ ? p_->ndim() : t_.dim(); }
int64_t Tensor::numel() const { return p_ ? p_->numel() : t_.numel(); }
at::ScalarType Tensor::dtype() const { return p_ ? to_aten(p_->dtype) : t_.scalar_type(); }
at::Device Tensor::device() const { return p_ ? to_aten(p_->device) : t_.device(); }
bool Tensor::requires_grad() const { return p_ ? p_->requires_grad : t_.requires_grad(); }
bool Tensor::is_contiguous() const { return p_ ? true : t_.is_contiguous(); }

Tensor Tensor::grad() const {
  if (p_) concrete_only(*this, "grad");
  return t_.grad();
}
void Tensor::backward(const Tensor& grad) const {
  if (p_) concrete_only(*this, "backward");
  t_.backward(grad.defined() ? grad.aten() : at::Tensor());
}
Tensor& Tensor::requires_grad_(bool on) {
  if (p_) concrete_only(*this, "requires_grad_");
  t_.requires_grad_(on);
  return *this;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (t.is_proxy()) return os << t.proxy()->name << ": \"" << t.proxy()->type_str() << "\"";
  if (!t.defined()) return os << "None";
  return os << t.aten();
}

// ---- methods: forward to the free functions ----
#define M0(name) \
  Tensor Tensor::name() const { return thunder::name(*this); }
M0(neg)
M0(abs)
M0(exp) M0(log) M0(log1p) M0(sqrt) M0(rsqrt) M0(sin) M0(cos) M0(tanh) M0(sigmoid) M0(relu) M0(erf)
    M0(reciprocal) M0(logical_not) M0(sum) M0(mean) M0(contiguous)
#undef M0
#define M1(name, T) \
  Tensor Tensor::name(T o) const { return thunder::name(*this, o); }
        M1(mul, const Tensor&) M1(mul, const Scalar&) M1(div, const Tensor&) M1(div, const Scalar&)
            M1(pow, const Tensor&) M1(pow, const Scalar&) M1(maximum, const Tensor&)
                M1(minimum,
                   const Tensor&) M1(eq, const Tensor&) M1(eq, const Scalar&) M1(ne, const Tensor&)
                    M1(ne, const Scalar&) M1(lt, const Tensor&) M1(lt, const Scalar&)
                        M1(le, const Tensor&) M1(le, const Scalar&) M1(gt, const Tensor&)
                            M1(gt, const Scalar&) M1(ge, const Tensor&) M1(ge, const Scalar&)
                                M1(logical_and, const Tensor&) M1(logical_or, const Tensor&)
                                    M1(reshape, at::IntArrayRef) M1(view, at::IntArrayRef)
                                        M1(permute, at::IntArrayRef) M1(unsqueeze, int64_t)
                                            M1(expand,
                                               at::IntArrayRef) M1(triu, int64_t) M1(tril, int64_t)
                                                M1(to, at::ScalarType) M1(matmul, const Tensor&)
#undef M1

                                                    Tensor Tensor::add(const Tensor& o,
                                                                       const Scalar& alpha) const {
  return thunder::add(*this, o, alpha);
}
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return thunder::add(*this, o, alpha);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return thunder::sub(*this, o, alpha);
}
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return thunder::sub(*this, o, alpha);
}
Tensor Tensor::clamp(c10::optional<Scalar> min, c10::optional<Scalar> max) const {
  return thunder::clamp(*this, min, max);
}
Tensor Tensor::sum(at::IntArrayRef dims, bool keepdim) const {
  return thunder::sum(*this, dims, keepdim);
}
Tensor Tensor::mean(at::IntArrayRef dims, bool keepdim) const {
  return thunder::mean(*this, dims, keepdim);
}
Tensor Tensor::amax(at::IntArrayRef dims, bool keepdim) const {
  return thunder::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(at::IntArrayRef dims, bool keepdim) const {
  return thunder::amin(*this, dims, keepdim);
}
Tensor Tensor::var(bool unbiased) const { return thunder::var(*this, unbiased); }
Tensor Tensor::var(at::IntArrayRef dims, bool unbiased, bool keepdim) const {
  return thunder::var(*this, dims, unbiased, keepdim);
}
Tensor Tensor::std(bool unbiased) const { return thunder::std(*this, unbiased); }
Tensor Tensor::std(at::IntArrayRef dims, bool unbiased, bool keepdim) const {
  return thunder::std(*this, dims, unbiased, keepdim);
}
Tensor Tensor::argmax(c10::optional<int64_t> dim, bool keepdim) const {
  return thunder::argmax(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return thunder::max(*this, dim, keepdim);
}
Tensor Tensor::flatten(int64_t s, int64_t e) const { return thunder::flatten(*this, s, e); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return thunder::transpose(*this, d0, d1); }
Tensor Tensor::squeeze() const { return thunder::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return thunder::squeeze(*this, d); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const {
  return thunder::narrow(*this, d, s, l);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return thunder::select(*this, d, i); }
TensorList Tensor::split(int64_t s, int64_t d) const { return thunder::split(*this, s, d); }
TensorList Tensor::split(at::IntArrayRef s, int64_t d) const { return thunder::split(*this, s, d); }
TensorList Tensor::chunk(int64_t c, int64_t d) const { return thunder::chunk(*this, c, d); }
Tensor Tensor::gather(int64_t d, const Tensor& i) const { return thunder::gather(*this, d, i); }
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Tensor& s) const {
  return thunder::scatter(*this, d, i, s);
}
Tensor Tensor::scatter_add(int64_t d, const Tensor& i, const Tensor& s) const {
  return thunder::scatter_add(*this, d, i, s);
}
Tensor Tensor::index_select(int64_t d, const Tensor& i) const {
  return thunder::index_select(*this, d, i);
}
Tensor Tensor::masked_fill(const Tensor& m, const Scalar& v) const {
  return thunder::masked_fill(*this, m, v);
}

}  // namespace thunder
