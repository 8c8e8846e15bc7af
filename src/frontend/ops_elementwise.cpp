// Elementwise ops and operators.
#include "dispatch.h"

namespace thunder {

namespace {
// An undefined Tensor (None) is no operand of these ops. The eager kernels
// expect real tensors, so refuse it here, as the ltorch bodies do under a trace.
void need(const char* op, const char* name, const Tensor& t) {
  THUNDER_CHECK(t.defined(), "{}: argument {} must be a tensor, got None", op, name);
}
void need(const char*, const char*, const Scalar&) {}
}  // namespace

#define NEED2(op, a, b) need(op, "a", a), need(op, "b", b)

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  NEED2("ltorch.add", a, b);
  THUNDER_OP("ltorch.add", a, b, alpha);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  NEED2("ltorch.add", a, b);
  THUNDER_OP("ltorch.add", a, b, alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  NEED2("ltorch.sub", a, b);
  THUNDER_OP("ltorch.sub", a, b, alpha);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  NEED2("ltorch.sub", a, b);
  THUNDER_OP("ltorch.sub", a, b, alpha);
}

#define BINARY(name)                              \
  Tensor name(const Tensor& a, const Tensor& b) { \
    NEED2("ltorch." #name, a, b);                 \
    THUNDER_OP("ltorch." #name, a, b);            \
  }                                               \
  Tensor name(const Tensor& a, const Scalar& b) { \
    NEED2("ltorch." #name, a, b);                 \
    THUNDER_OP("ltorch." #name, a, b);            \
  }
BINARY(mul)
BINARY(div)
BINARY(pow)
BINARY(eq) BINARY(ne) BINARY(lt) BINARY(le) BINARY(gt) BINARY(ge)
#undef BINARY
    Tensor pow(const Scalar& a, const Tensor& b) {
  NEED2("ltorch.pow", a, b);
  THUNDER_OP("ltorch.pow", a, b);
}

#define TT(name)                                  \
  Tensor name(const Tensor& a, const Tensor& b) { \
    NEED2("ltorch." #name, a, b);                 \
    THUNDER_OP("ltorch." #name, a, b);            \
  }
TT(maximum)
TT(minimum)
TT(logical_and)
TT(logical_or)
#undef TT

#define UNARY(name)                 \
  Tensor name(const Tensor& a) {    \
    need("ltorch." #name, "a", a);  \
    THUNDER_OP("ltorch." #name, a); \
  }
    UNARY(neg) UNARY(abs) UNARY(exp) UNARY(log) UNARY(log1p) UNARY(sqrt) UNARY(rsqrt) UNARY(sin)
        UNARY(cos) UNARY(tanh) UNARY(sigmoid) UNARY(relu) UNARY(silu) UNARY(erf) UNARY(reciprocal)
            UNARY(logical_not)
#undef UNARY

                Tensor
    clamp(const Tensor& a, c10::optional<Scalar> min, c10::optional<Scalar> max) {
  need("ltorch.clamp", "a", a);
  detail::OpArg lo = min ? detail::OpArg(*min) : detail::OpArg(Value());
  detail::OpArg hi = max ? detail::OpArg(*max) : detail::OpArg(Value());
  THUNDER_OP("ltorch.clamp", a, lo, hi);
}

#define WHERE(A, B)                                       \
  Tensor where(const Tensor& c, const A& a, const B& b) { \
    need("ltorch.where", "pred", c);                      \
    NEED2("ltorch.where", a, b);                          \
    THUNDER_OP("ltorch.where", c, a, b);                  \
  }
WHERE(Tensor, Tensor)
WHERE(Tensor, Scalar)
WHERE(Scalar, Tensor)
WHERE(Scalar, Scalar)
#undef WHERE

    // Operators. A number on the left keeps libtorch's meaning (2 - x, 2 / x).
    Tensor
    operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) {
  NEED2("ltorch.sub", a, b);
  THUNDER_OP("ltorch.sub", a, b, 1);
}
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) {
  NEED2("ltorch.div", a, b);
  THUNDER_OP("ltorch.div", a, b);
}
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

#undef NEED2

}  // namespace thunder
