// Elementwise ops and operators.
#include "dispatch.h"

namespace thunder {

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { THUNDER_OP("ltorch.add", a, b, alpha); }
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) { THUNDER_OP("ltorch.add", a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { THUNDER_OP("ltorch.sub", a, b, alpha); }
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) { THUNDER_OP("ltorch.sub", a, b, alpha); }

#define BINARY(name)                                                                          \
  Tensor name(const Tensor& a, const Tensor& b) { THUNDER_OP("ltorch." #name, a, b); }        \
  Tensor name(const Tensor& a, const Scalar& b) { THUNDER_OP("ltorch." #name, a, b); }
BINARY(mul) BINARY(div) BINARY(pow) BINARY(eq) BINARY(ne) BINARY(lt) BINARY(le) BINARY(gt)
BINARY(ge)
#undef BINARY
Tensor pow(const Scalar& a, const Tensor& b) { THUNDER_OP("ltorch.pow", a, b); }

#define TT(name) \
  Tensor name(const Tensor& a, const Tensor& b) { THUNDER_OP("ltorch." #name, a, b); }
TT(maximum) TT(minimum) TT(logical_and) TT(logical_or)
#undef TT

#define UNARY(name) \
  Tensor name(const Tensor& a) { THUNDER_OP("ltorch." #name, a); }
UNARY(neg) UNARY(abs) UNARY(exp) UNARY(log) UNARY(log1p) UNARY(sqrt) UNARY(rsqrt) UNARY(sin)
UNARY(cos) UNARY(tanh) UNARY(sigmoid) UNARY(relu) UNARY(silu) UNARY(erf) UNARY(reciprocal)
UNARY(logical_not)
#undef UNARY

Tensor clamp(const Tensor& a, c10::optional<Scalar> min, c10::optional<Scalar> max) {
  detail::OpArg lo = min ? detail::OpArg(*min) : detail::OpArg(Value());
  detail::OpArg hi = max ? detail::OpArg(*max) : detail::OpArg(Value());
  THUNDER_OP("ltorch.clamp", a, lo, hi);
}

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { THUNDER_OP("ltorch.where", c, a, b); }
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) { THUNDER_OP("ltorch.where", c, a, b); }
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) { THUNDER_OP("ltorch.where", c, a, b); }
Tensor where(const Tensor& c, const Scalar& a, const Scalar& b) { THUNDER_OP("ltorch.where", c, a, b); }

// Operators. A number on the left keeps libtorch's meaning (2 - x, 2 / x).
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { THUNDER_OP("ltorch.sub", a, b, 1); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { THUNDER_OP("ltorch.div", a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }

}  // namespace thunder
