// ATen kernels for elementwise prims and ltorch ops.
#include "aten_util.h"

namespace thunder::aten::detail {

namespace {
at::Tensor T(const KernelCall& k, size_t i) { return tensor_or_wrapped(k, i); }
}  // namespace

void register_elementwise() {
#define UNARY(name, expr)              \
  THUNDER_KERNEL("prims." #name, {     \
    const at::Tensor& a = k.tensor(0); \
    k.set_output(0, expr);             \
  });                                  \
  THUNDER_KERNEL("ltorch." #name, {    \
    const at::Tensor& a = k.tensor(0); \
    k.set_output(0, expr);             \
  })
  UNARY(neg, at::neg(a));
  UNARY(abs, at::abs(a));
  UNARY(exp, at::exp(a));
  UNARY(log, at::log(a));
  UNARY(log1p, at::log1p(a));
  UNARY(sqrt, at::sqrt(a));
  UNARY(rsqrt, at::rsqrt(a));
  UNARY(sin, at::sin(a));
  UNARY(cos, at::cos(a));
  UNARY(tanh, at::tanh(a));
  UNARY(erf, at::erf(a));
  UNARY(reciprocal, at::reciprocal(a));
  UNARY(sigmoid, at::sigmoid(a));
  UNARY(logical_not, at::logical_not(a));
#undef UNARY
  THUNDER_KERNEL("prims.bitwise_not", { k.set_output(0, at::bitwise_not(k.tensor(0))); });
  THUNDER_KERNEL("ltorch.relu", { k.set_output(0, at::relu(k.tensor(0))); });
  THUNDER_KERNEL("ltorch.silu", { k.set_output(0, at::silu(k.tensor(0))); });

  // Binary ops: the Scalar overload when the number is on the right (as user
  // code `x * 2.0` calls it), else wrapped numbers.
#define BINARY(id, fn)                               \
  THUNDER_KERNEL(id, {                               \
    if (k.is_tensor(0) && !k.is_tensor(1))           \
      k.set_output(0, fn(k.tensor(0), k.scalar(1))); \
    else                                             \
      k.set_output(0, fn(T(k, 0), T(k, 1)));         \
  })
  BINARY("prims.add", at::add);
  BINARY("prims.sub", at::sub);
  BINARY("prims.mul", at::mul);
  BINARY("ltorch.mul", at::mul);
  BINARY("ltorch.div", at::div);
  BINARY("prims.pow", at::pow);
  BINARY("ltorch.pow", at::pow);
  BINARY("prims.eq", at::eq);
  BINARY("ltorch.eq", at::eq);
  BINARY("prims.ne", at::ne);
  BINARY("ltorch.ne", at::ne);
  BINARY("prims.lt", at::lt);
  BINARY("ltorch.lt", at::lt);
  BINARY("prims.le", at::le);
  BINARY("ltorch.le", at::le);
  BINARY("prims.gt", at::gt);
  BINARY("ltorch.gt", at::gt);
  BINARY("prims.ge", at::ge);
  BINARY("ltorch.ge", at::ge);
  BINARY("prims.bitwise_and", at::bitwise_and);
  BINARY("prims.bitwise_or", at::bitwise_or);
  BINARY("prims.bitwise_xor", at::bitwise_xor);
#undef BINARY
  // Ops without Scalar overloads take wrapped numbers on both sides.
#define BINARY_T(id, fn) THUNDER_KERNEL(id, { k.set_output(0, fn(T(k, 0), T(k, 1))); })
  BINARY_T("prims.maximum", at::maximum);
  BINARY_T("ltorch.maximum", at::maximum);
  BINARY_T("prims.minimum", at::minimum);
  BINARY_T("ltorch.minimum", at::minimum);
  BINARY_T("prims.logical_and", at::logical_and);
  BINARY_T("ltorch.logical_and", at::logical_and);
  BINARY_T("prims.logical_or", at::logical_or);
  BINARY_T("ltorch.logical_or", at::logical_or);
#undef BINARY_T

  THUNDER_KERNEL("prims.div", {
    const at::Tensor a = T(k, 0), b = T(k, 1);
    bool integral = !at::isFloatingType(a.scalar_type()) && !at::isFloatingType(b.scalar_type());
    k.set_output(0, integral ? at::div(a, b, "trunc") : at::div(a, b));
  });
  THUNDER_KERNEL("ltorch.add", {
    if (k.is_tensor(0) && !k.is_tensor(1))
      k.set_output(0, at::add(k.tensor(0), k.scalar(1), k.scalar(2)));
    else
      k.set_output(0, at::add(T(k, 0), T(k, 1), k.scalar(2)));
  });
  THUNDER_KERNEL("ltorch.sub", {
    if (k.is_tensor(0) && !k.is_tensor(1))
      k.set_output(0, at::sub(k.tensor(0), k.scalar(1), k.scalar(2)));
    else
      k.set_output(0, at::sub(T(k, 0), T(k, 1), k.scalar(2)));
  });
  THUNDER_KERNEL("ltorch.clamp", {
    c10::optional<c10::Scalar> lo, hi;
    if (!k.is_none(1)) lo = k.scalar(1);
    if (!k.is_none(2)) hi = k.scalar(2);
    k.set_output(0, at::clamp(k.tensor(0), lo, hi));
  });
  THUNDER_KERNEL("prims.where", { k.set_output(0, at::where(k.tensor(0), T(k, 1), T(k, 2))); });
  THUNDER_KERNEL("ltorch.where", {
    const at::Tensor& c = k.tensor(0);
    if (k.is_tensor(1) && k.is_tensor(2))
      k.set_output(0, at::where(c, k.tensor(1), k.tensor(2)));
    else if (k.is_tensor(1))
      k.set_output(0, at::where(c, k.tensor(1), k.scalar(2)));
    else if (k.is_tensor(2))
      k.set_output(0, at::where(c, k.scalar(1), k.tensor(2)));
    else
      k.set_output(0, at::where(c, k.scalar(1), k.scalar(2)));
  });
  THUNDER_KERNEL("prims.convert_element_type", { k.set_output(0, k.tensor(0).to(k.dtype(1))); });
}

}  // namespace thunder::aten::detail
