// Factories. Under a trace they record the ltorch factory with the device and
// dtype from the TensorOptions (default float32 on cpu). Eagerly they call the
// libtorch factory with the full options, so layout, pinned memory and
// requires_grad behave exactly as in libtorch (the ltorch symbol has no place
// for them; under a trace, requires_grad in the options is ignored: a factory's
// output is a constant of the traced program).
#include <ATen/ATen.h>

#include "dispatch.h"
#include "thunder/executors/kernel.h"

namespace thunder {

namespace {

DType dtype_of(const at::TensorOptions& o) { return from_aten(o.dtype().toScalarType()); }
Device device_of(const at::TensorOptions& o) { return from_aten(o.device()); }

c10::Scalar concrete_scalar(const char* id, const Scalar& s) {
  const Value& v = s.value();
  THUNDER_CHECK(!v.is_proxy(), "{}: number proxy {} used outside of its trace", id,
                v.proxy()->name);
  if (v.kind() == Value::Kind::Bool) return v.as_bool();
  if (v.kind() == Value::Kind::Int) return v.as_int();
  return v.to_double();
}

Tensor traced(const char* id, std::initializer_list<detail::OpArg> args) {
  return detail::run_op1(ltorch::symbol(id), args);
}

// Runs a libtorch factory with `opts`, applying requires_grad the way
// torch::zeros does (ATen's factories refuse it), and speaking thunder's errors.
template <typename F>
Tensor eager(const char* id, const at::TensorOptions& opts, F&& make) {
  try {
    at::Tensor t = make(opts.requires_grad(false));
    if (opts.requires_grad()) t.requires_grad_(true);
    return t;
  } catch (const c10::Error& e) {
    fail("{}: {}", id, e.what_without_backtrace());
  }
}

// Shape-only factories (zeros, ones, empty, rand, randn).
template <typename F>
Tensor shaped(const char* id, at::IntArrayRef shape, const at::TensorOptions& opts, F&& make) {
  if (detail::tracing()) return traced(id, {shape, device_of(opts), dtype_of(opts)});
  return eager(id, opts, [&](const at::TensorOptions& o) { return make(shape, o); });
}

// The input of a *_like factory; a concrete tensor met under a trace becomes a
// captured input, so that its metadata is guarded like an argument's.
const Tensor& like_input(const char* name, const Tensor& a) {
  THUNDER_CHECK(a.defined(), "{}: the input tensor is undefined (None)", name);
  if (detail::tracing() && !a.is_proxy()) detail::traced_value(a);
  return a;
}

template <typename F>
Tensor like(const char* name, const char* id, const Tensor& a, F&& make) {
  like_input(name, a);
  if (detail::tracing())
    return traced(id, {a.sizes(), from_aten(a.device()), from_aten(a.dtype())});
  return eager(id, at::TensorOptions(), [&](const at::TensorOptions&) { return make(a.aten()); });
}

}  // namespace

Tensor randn(at::IntArrayRef shape, const at::TensorOptions& opts) {
  return shaped("ltorch.randn", shape, opts,
                [](at::IntArrayRef s, const at::TensorOptions& o) { return at::randn(s, o); });
}
Tensor rand(at::IntArrayRef shape, const at::TensorOptions& opts) {
  return shaped("ltorch.rand", shape, opts,
                [](at::IntArrayRef s, const at::TensorOptions& o) { return at::rand(s, o); });
}
Tensor zeros(at::IntArrayRef shape, const at::TensorOptions& opts) {
  return shaped("ltorch.zeros", shape, opts,
                [](at::IntArrayRef s, const at::TensorOptions& o) { return at::zeros(s, o); });
}
Tensor ones(at::IntArrayRef shape, const at::TensorOptions& opts) {
  return shaped("ltorch.ones", shape, opts,
                [](at::IntArrayRef s, const at::TensorOptions& o) { return at::ones(s, o); });
}
Tensor empty(at::IntArrayRef shape, const at::TensorOptions& opts) {
  return shaped("ltorch.empty", shape, opts,
                [](at::IntArrayRef s, const at::TensorOptions& o) { return at::empty(s, o); });
}

Tensor full(at::IntArrayRef shape, const Scalar& value, const at::TensorOptions& opts) {
  const char* id = "ltorch.full";
  if (detail::tracing()) {
    // Like at::full: without a dtype, the fill value's kind picks it.
    DType dtype = opts.has_dtype()      ? dtype_of(opts)
                  : value.is_bool()     ? DType::b8
                  : value.is_integral() ? DType::i64
                                        : kDefaultFloat;
    return traced(id, {shape, value, device_of(opts), dtype});
  }
  c10::Scalar v = concrete_scalar(id, value);
  return eager(id, opts, [&](const at::TensorOptions& o) { return at::full(shape, v, o); });
}

Tensor arange(const Scalar& end, const at::TensorOptions& opts) { return arange(0, end, 1, opts); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const at::TensorOptions& opts) {
  const char* id = "ltorch.arange";
  if (detail::tracing()) {
    // Like at::arange: integer (or bool) start, end and step give int64.
    auto integral = [](const Scalar& s) { return s.is_integral() || s.is_bool(); };
    DType dtype = opts.has_dtype()                                     ? dtype_of(opts)
                  : integral(start) && integral(end) && integral(step) ? DType::i64
                                                                       : kDefaultFloat;
    return traced(id, {start, end, step, device_of(opts), dtype});
  }
  c10::Scalar s = concrete_scalar(id, start), e = concrete_scalar(id, end),
              st = concrete_scalar(id, step);
  return eager(id, opts, [&](const at::TensorOptions& o) { return at::arange(s, e, st, o); });
}

Tensor zeros_like(const Tensor& a) {
  return like("zeros_like", "ltorch.zeros", a,
              [](const at::Tensor& t) { return at::zeros_like(t); });
}
Tensor ones_like(const Tensor& a) {
  return like("ones_like", "ltorch.ones", a, [](const at::Tensor& t) { return at::ones_like(t); });
}
Tensor rand_like(const Tensor& a) {
  return like("rand_like", "ltorch.rand", a, [](const at::Tensor& t) { return at::rand_like(t); });
}
Tensor randn_like(const Tensor& a) {
  return like("randn_like", "ltorch.randn", a,
              [](const at::Tensor& t) { return at::randn_like(t); });
}
Tensor empty_like(const Tensor& a) {
  return like("empty_like", "ltorch.empty", a,
              [](const at::Tensor& t) { return at::empty_like(t); });
}
Tensor full_like(const Tensor& a, const Scalar& value) {
  const char* id = "ltorch.full";
  like_input("full_like", a);
  if (detail::tracing())
    return traced(id, {a.sizes(), value, from_aten(a.device()), from_aten(a.dtype())});
  c10::Scalar v = concrete_scalar(id, value);
  return eager(id, at::TensorOptions(),
               [&](const at::TensorOptions&) { return at::full_like(a.aten(), v); });
}

}  // namespace thunder
