// In-place methods. Eager: libtorch's in-place ops on the wrapped tensor.
// Under jit they need functionalization (not built yet), so they refuse
// clearly instead of silently losing the effect.
#include <ATen/ATen.h>

#include "dispatch.h"

namespace thunder {

namespace {
at::Tensor& target(Tensor& t, const char* op) {
  THUNDER_CHECK(!t.is_proxy() && !detail::tracing(),
                "Tensor.{}: in-place ops are not supported under thunder::jit yet", op);
  return const_cast<at::Tensor&>(t.aten());
}
const at::Tensor& concrete(const Tensor& t, const char* op) {
  THUNDER_CHECK(!t.is_proxy(), "Tensor.{}: argument {} is a proxy", op, t.proxy()->name);
  return t.aten();
}
c10::Scalar scalar(const Scalar& s) {
  const Value& v = s.value();
  if (v.kind() == Value::Kind::Bool) return v.as_bool();
  if (v.kind() == Value::Kind::Int) return v.as_int();
  return v.to_double();
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  target(*this, "add_").add_(concrete(o, "add_"), scalar(alpha));
  return *this;
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  target(*this, "add_").add_(scalar(o), scalar(alpha));
  return *this;
}
Tensor& Tensor::mul_(const Tensor& o) {
  target(*this, "mul_").mul_(concrete(o, "mul_"));
  return *this;
}
Tensor& Tensor::mul_(const Scalar& o) {
  target(*this, "mul_").mul_(scalar(o));
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src) {
  target(*this, "copy_").copy_(concrete(src, "copy_"));
  return *this;
}
Tensor& Tensor::fill_(const Scalar& v) {
  target(*this, "fill_").fill_(scalar(v));
  return *this;
}
Tensor& Tensor::zero_() {
  target(*this, "zero_").zero_();
  return *this;
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) {
  target(*this, "masked_fill_").masked_fill_(concrete(mask, "masked_fill_"), scalar(v));
  return *this;
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  target(*this, "scatter_add_")
      .scatter_add_(dim, concrete(index, "scatter_add_"), concrete(src, "scatter_add_"));
  return *this;
}
Tensor& Tensor::uniform_(double from, double to) {
  target(*this, "uniform_").uniform_(from, to);
  return *this;
}

}  // namespace thunder
