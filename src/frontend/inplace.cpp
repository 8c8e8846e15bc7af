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
// Runs an eager in-place op; libtorch's refusals (e.g. in-place on a leaf that
// requires grad) become thunder::Error naming the op, and the tensor is unchanged.
template <typename F>
void guarded(const char* op, F&& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    fail("Tensor.{}: {}", op, e.what_without_backtrace());
  }
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  guarded("add_", [&] { target(*this, "add_").add_(concrete(o, "add_"), scalar(alpha)); });
  return *this;
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  guarded("add_", [&] { target(*this, "add_").add_(scalar(o), scalar(alpha)); });
  return *this;
}
Tensor& Tensor::mul_(const Tensor& o) {
  guarded("mul_", [&] { target(*this, "mul_").mul_(concrete(o, "mul_")); });
  return *this;
}
Tensor& Tensor::mul_(const Scalar& o) {
  guarded("mul_", [&] { target(*this, "mul_").mul_(scalar(o)); });
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src) {
  guarded("copy_", [&] { target(*this, "copy_").copy_(concrete(src, "copy_")); });
  return *this;
}
Tensor& Tensor::fill_(const Scalar& v) {
  guarded("fill_", [&] { target(*this, "fill_").fill_(scalar(v)); });
  return *this;
}
Tensor& Tensor::zero_() {
  guarded("zero_", [&] { target(*this, "zero_").zero_(); });
  return *this;
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) {
  guarded("masked_fill_", [&] { target(*this, "masked_fill_").masked_fill_(concrete(mask, "masked_fill_"), scalar(v)); });
  return *this;
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  guarded("scatter_add_", [&] { target(*this, "scatter_add_")
      .scatter_add_(dim, concrete(index, "scatter_add_"), concrete(src, "scatter_add_")); });
  return *this;
}
Tensor& Tensor::uniform_(double from, double to) {
  guarded("uniform_", [&] { target(*this, "uniform_").uniform_(from, to); });
  return *this;
}

}  // namespace thunder
