// In-place methods. Eager: libtorch's in-place ops on the wrapped tensor.
// Under jit: the out-of-place op, cast and broadcast-checked like libtorch's
// in-place op, followed by prims.copy_ into the destination; the
// functionalization pass (src/transforms/functionalize.cpp) turns that into
// pure dataflow and the runtime writes inputs back after the call.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "dispatch.h"
#include "thunder/prims/prims.h"

namespace thunder {

namespace {
at::Tensor& target(Tensor& t, const char* op) {
  THUNDER_CHECK(!t.is_proxy(), "Tensor.{}: tensor proxy {} used outside of its trace", op,
                t.proxy()->name);
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

// Under a trace: records `dst = result` as prims.copy_. `any_cast` is copy_'s
// rule (any dtype, any broadcastable shape); the others follow libtorch's
// in-place rule (the result must cast safely to dst's dtype and keep its shape).
void record_inplace(const char* op, const Tensor& dst, Tensor result, bool any_cast = false) {
  Value d = detail::traced_value(dst);
  const Proxy& p = *d.proxy();
  if (result.dtype() != dst.dtype()) {
    THUNDER_CHECK(any_cast || c10::canCast(result.dtype(), dst.dtype()),
                  "Tensor.{}: result type {} can't be cast to the desired output type {} of {}", op,
                  c10::toString(result.dtype()), c10::toString(dst.dtype()), p.name);
    result = thunder::to(result, dst.dtype());
  }
  if (result.sizes() != dst.sizes()) {
    THUNDER_CHECK(any_cast,
                  "Tensor.{}: output {} with shape {} doesn't match the broadcast shape {}", op,
                  p.name, shape_str(p.shape), shape_str(result.sizes().vec()));
    result = thunder::expand(result, dst.sizes());
  }
  current_trace_ctx()->grad_enabled = at::GradMode::is_enabled();
  prims::copy_(detail::traced_value(result), d);
}

// libtorch refuses in-place on a leaf that requires grad while grad mode is on;
// under a trace the leaves are the trace's inputs (arguments and parameters).
void check_not_grad_leaf(const char* op, const Tensor& t) {
  if (!at::GradMode::is_enabled()) return;
  Value v = detail::traced_value(t);
  const ProxyPtr& p = v.proxy();
  const auto& ins = current_trace_ctx()->trace().inputs;
  THUNDER_CHECK(!p->requires_grad || std::find(ins.begin(), ins.end(), p) == ins.end(),
                "Tensor.{}: a leaf Variable that requires grad ({}) is being used in an in-place "
                "operation (use thunder::NoGradGuard for an optimizer-style update)",
                op, p->name);
}

// Each in-place method: its traced form, else libtorch's eager op.
template <typename Traced, typename Eager>
Tensor& inplace(const char* op, Tensor& self, Traced&& traced, Eager&& eager) {
  if (detail::tracing()) {
    check_not_grad_leaf(op, self);
    traced();
  } else {
    guarded(op, [&] { eager(target(self, op)); });
  }
  return self;
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  return inplace(
      "add_", *this, [&] { record_inplace("add_", *this, thunder::add(*this, o, alpha)); },
      [&](at::Tensor& t) { t.add_(concrete(o, "add_"), scalar(alpha)); });
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  return inplace(
      "add_", *this, [&] { record_inplace("add_", *this, thunder::add(*this, o, alpha)); },
      [&](at::Tensor& t) { t.add_(scalar(o), scalar(alpha)); });
}
Tensor& Tensor::mul_(const Tensor& o) {
  return inplace(
      "mul_", *this, [&] { record_inplace("mul_", *this, thunder::mul(*this, o)); },
      [&](at::Tensor& t) { t.mul_(concrete(o, "mul_")); });
}
Tensor& Tensor::mul_(const Scalar& o) {
  return inplace(
      "mul_", *this, [&] { record_inplace("mul_", *this, thunder::mul(*this, o)); },
      [&](at::Tensor& t) { t.mul_(scalar(o)); });
}
Tensor& Tensor::copy_(const Tensor& src) {
  return inplace(
      "copy_", *this, [&] { record_inplace("copy_", *this, src, true); },
      [&](at::Tensor& t) { t.copy_(concrete(src, "copy_")); });
}
Tensor& Tensor::fill_(const Scalar& v) {
  return inplace(
      "fill_", *this, [&] { record_inplace("fill_", *this, thunder::full_like(*this, v), true); },
      [&](at::Tensor& t) { t.fill_(scalar(v)); });
}
Tensor& Tensor::zero_() {
  return inplace(
      "zero_", *this, [&] { record_inplace("zero_", *this, thunder::zeros_like(*this)); },
      [&](at::Tensor& t) { t.zero_(); });
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) {
  return inplace(
      "masked_fill_", *this,
      [&] { record_inplace("masked_fill_", *this, thunder::masked_fill(*this, mask, v)); },
      [&](at::Tensor& t) { t.masked_fill_(concrete(mask, "masked_fill_"), scalar(v)); });
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return inplace(
      "scatter_add_", *this,
      [&] { record_inplace("scatter_add_", *this, thunder::scatter_add(*this, dim, index, src)); },
      [&](at::Tensor& t) {
        t.scatter_add_(dim, concrete(index, "scatter_add_"), concrete(src, "scatter_add_"));
      });
}
Tensor& Tensor::uniform_(double from, double to) {
  return inplace(
      "uniform_", *this,
      [&] {
        // prims.uniform draws exactly as libtorch's uniform_ does, so seeded runs match eager.
        const Proxy& p = *detail::traced_value(*this).proxy();
        THUNDER_CHECK(is_float(p.dtype),
                      "Tensor.uniform_: {} has dtype {}, expected a "
                      "floating-point dtype",
                      p.name, long_name(p.dtype));
        current_trace_ctx()->grad_enabled = at::GradMode::is_enabled();
        record_inplace(
            "uniform_", *this,
            Tensor(prims::uniform(p.shape, Value(from), Value(to), p.device, p.dtype).proxy()));
      },
      [&](at::Tensor& t) { t.uniform_(from, to); });
}

}  // namespace thunder
