// OpInfo samples for elementwise ops (arithmetic, unary, comparisons, logical
// ops, where, clamp): every op over shapes (broadcast, 0-d, empty,
// non-contiguous), dtypes and Python-number promotion, plus error samples.
#include "ops/opinfo.h"

namespace thunder::testing {
namespace {
using ElementwiseOps = OpInfoTest;

using AtenList = std::vector<at::Tensor>;
using T1 = std::function<Tensor(const Tensor&)>;
using A1 = std::function<at::Tensor(const at::Tensor&)>;
using T2 = std::function<Tensor(const Tensor&, const Tensor&)>;
using A2 = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

// Eager and jit "aten" run libtorch's own kernel, so they match tightly. The
// decomposition into prims may round differently in reduced precision (e.g.
// silu as x * sigmoid(x) rounds sigmoid to the storage type, add with alpha
// rounds alpha * b): one or two ulps of the result dtype.
void set_tolerances(OpSample& s, at::ScalarType result) {
  if (result == at::kHalf) {
    s.rtol = s.atol = 1e-3;
    s.prims_rtol = s.prims_atol = 2e-3;
  } else if (result == at::kBFloat16) {
    s.rtol = s.atol = 8e-3;
    s.prims_rtol = s.prims_atol = 1.6e-2;
  } else if (result == at::kDouble) {
    s.rtol = s.prims_rtol = 1e-10;
    s.atol = s.prims_atol = 1e-12;
  }
}

// The libtorch build may lack a CPU kernel for a dtype (1.13 has no float16
// exp or clamp). Where the reference itself throws, thunder's eager op must
// throw thunder::Error (naming the op) rather than something else; the jit
// paths are skipped, as their kernels are the same libtorch calls.
void check(OpSample s) {
  std::vector<at::Tensor> want;
  try {
    want = s.torch_fn(s.inputs);
  } catch (const c10::Error&) {
    EXPECT_THROW(s.thunder_fn(TensorList(s.inputs.begin(), s.inputs.end())), Error) << s.name;
    return;
  }
  set_tolerances(s, want.at(0).scalar_type());
  check_sample(s);
}

OpSample unary_sample(const std::string& name, const at::Tensor& x, const T1& t, const A1& a) {
  return {name,
          {x},
          [t](const TensorList& v) { return TensorList{t(v[0])}; },
          [a](const AtenList& v) { return AtenList{a(v[0])}; }};
}

OpSample binary_sample(const std::string& name, const at::Tensor& x, const at::Tensor& y,
                       const T2& t, const A2& a) {
  return {name,
          {x, y},
          [t](const TensorList& v) { return TensorList{t(v[0], v[1])}; },
          [a](const AtenList& v) { return AtenList{a(v[0], v[1])}; }};
}

// Value ranges that keep an op in its domain.
enum class Domain { Any, Positive, AboveMinusOne };

at::Tensor input(at::IntArrayRef shape, at::ScalarType dt, Domain d) {
  switch (d) {
    case Domain::Any:
      return make_tensor(shape, dt);
    case Domain::Positive:
      return make_tensor(shape, dt, at::isFloatingType(dt) ? 0.1 : 1, 3);
    case Domain::AboveMinusOne:
      return make_tensor(shape, dt, at::isFloatingType(dt) ? -0.9 : 0, 3);
  }
  return {};
}

// The sample inputs of one shape kind: plain shapes, 0-d, empty, and two kinds
// of non-contiguous layout (transposed, strided slice).
std::vector<std::pair<std::string, at::Tensor>> inputs_of(at::ScalarType dt, Domain d) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  out.emplace_back("[2, 3]", input({2, 3}, dt, d));
  out.emplace_back("[5]", input({5}, dt, d));
  out.emplace_back("0-d", input({}, dt, d));
  out.emplace_back("empty [0, 3]", input({0, 3}, dt, d));
  out.emplace_back("transposed [3, 4]", input({4, 3}, dt, d).t());
  out.emplace_back("strided [4, 3]", input({4, 6}, dt, d).slice(1, 0, 6, 2));
  return out;
}

std::string tag(at::ScalarType dt) { return at::toString(dt); }

// A Python number as libtorch sees it in `2 - x` (Python's rsub semantics: the
// number takes part in promotion). libtorch's C++ `2 - x` instead fills a
// tensor of x's dtype first, which is not the meaning thunder implements.
at::Tensor wrapped(const c10::Scalar& s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

struct UnaryOp {
  const char* name;
  T1 t;
  A1 a;
  Domain domain = Domain::Any;
  bool ints = true;   // defined for integer tensors
  bool bools = true;  // defined for bool tensors
};

std::vector<UnaryOp> unary_ops() {
  return {
      {"neg", [](const Tensor& x) { return neg(x); },
       [](const at::Tensor& x) { return at::neg(x); }, Domain::Any, true, false},
      {"unary -", [](const Tensor& x) { return -x; }, [](const at::Tensor& x) { return -x; },
       Domain::Any, true, false},
      {"abs", [](const Tensor& x) { return abs(x); },
       [](const at::Tensor& x) { return at::abs(x); }, Domain::Any, true, false},
      {"exp", [](const Tensor& x) { return exp(x); },
       [](const at::Tensor& x) { return at::exp(x); }},
      {"log", [](const Tensor& x) { return log(x); },
       [](const at::Tensor& x) { return at::log(x); }, Domain::Positive},
      {"log1p", [](const Tensor& x) { return log1p(x); },
       [](const at::Tensor& x) { return at::log1p(x); }, Domain::AboveMinusOne},
      {"sqrt", [](const Tensor& x) { return sqrt(x); },
       [](const at::Tensor& x) { return at::sqrt(x); }, Domain::Positive},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); },
       [](const at::Tensor& x) { return at::rsqrt(x); }, Domain::Positive},
      {"sin", [](const Tensor& x) { return sin(x); },
       [](const at::Tensor& x) { return at::sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); },
       [](const at::Tensor& x) { return at::cos(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); },
       [](const at::Tensor& x) { return at::tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](const at::Tensor& x) { return at::sigmoid(x); }},
      {"relu", [](const Tensor& x) { return relu(x); },
       [](const at::Tensor& x) { return at::relu(x); }, Domain::Any, true, false},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](const at::Tensor& x) { return at::silu(x); }, Domain::Any, false, false},
      {"erf", [](const Tensor& x) { return erf(x); },
       [](const at::Tensor& x) { return at::erf(x); }},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); },
       [](const at::Tensor& x) { return at::reciprocal(x); }, Domain::Positive},
      {"logical_not", [](const Tensor& x) { return logical_not(x); },
       [](const at::Tensor& x) { return at::logical_not(x); }},
  };
}

TEST_F(ElementwiseOps, Unary) {
  for (const UnaryOp& op : unary_ops()) {
    for (at::ScalarType dt : kAllTypes) {
      if (dt == at::kBool && !op.bools) continue;
      if (at::isIntegralType(dt, false) && !op.ints) continue;
      for (const auto& [shape, x] : inputs_of(dt, op.domain))
        check(unary_sample(std::string(op.name) + " " + tag(dt) + " " + shape, x, op.t, op.a));
    }
  }
}

TEST_F(ElementwiseOps, UnarySpecialValues) {
  at::Tensor x = at::tensor({0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-30, -1e30});
  for (const UnaryOp& op : unary_ops()) {
    for (at::ScalarType dt : {at::kFloat, at::kDouble})
      check(unary_sample(std::string(op.name) + " special " + tag(dt), x.to(dt), op.t, op.a));
  }
  // reciprocal of integer zero is inf after the int->float promotion.
  check(unary_sample(
      "reciprocal int zero", at::tensor({0, 1, -2}, at::kInt),
      [](const Tensor& x) { return reciprocal(x); },
      [](const at::Tensor& x) { return at::reciprocal(x); }));
}

TEST_F(ElementwiseOps, MethodForms) {
  at::Tensor x = make_tensor({3, 2}, at::kFloat, 0.1, 2);
  check(unary_sample(
      "method chain", x,
      [](const Tensor& t) {
        return t.exp()
            .log()
            .sqrt()
            .rsqrt()
            .sin()
            .cos()
            .tanh()
            .sigmoid()
            .relu()
            .erf()
            .reciprocal()
            .abs()
            .neg();
      },
      [](const at::Tensor& t) {
        return t.exp()
            .log()
            .sqrt()
            .rsqrt()
            .sin()
            .cos()
            .tanh()
            .sigmoid()
            .relu()
            .erf()
            .reciprocal()
            .abs()
            .neg();
      }));
  check(binary_sample(
      "method binary", x, make_tensor({2}),
      [](const Tensor& a, const Tensor& b) {
        return a.add(b, 2)
            .sub(b)
            .mul(b)
            .div(b)
            .pow(2)
            .maximum(b)
            .minimum(a)
            .clamp(-1, 1)
            .add(1.5)
            .sub(0.5, 2)
            .mul(3)
            .div(4)
            .pow(0.5);
      },
      [](const at::Tensor& a, const at::Tensor& b) {
        return a.add(b, 2)
            .sub(b)
            .mul(b)
            .div(b)
            .pow(2)
            .maximum(b)
            .minimum(a)
            .clamp(-1, 1)
            .add(1.5)
            .sub(0.5, 2)
            .mul(3)
            .div(4)
            .pow(0.5);
      }));
  check(binary_sample(
      "method compare", x, make_tensor({2}),
      [](const Tensor& a, const Tensor& b) {
        return a.eq(b)
            .logical_or(a.ne(b))
            .logical_and(a.lt(b).logical_or(a.le(0.5)))
            .logical_or(a.gt(b).logical_and(a.ge(1)))
            .logical_or(a.eq(1.0))
            .logical_not()
            .logical_or(a.ne(2))
            .logical_or(a.lt(0))
            .logical_or(b.gt(0));
      },
      [](const at::Tensor& a, const at::Tensor& b) {
        return a.eq(b)
            .logical_or(a.ne(b))
            .logical_and(a.lt(b).logical_or(a.le(0.5)))
            .logical_or(a.gt(b).logical_and(a.ge(1)))
            .logical_or(a.eq(1.0))
            .logical_not()
            .logical_or(a.ne(2))
            .logical_or(a.lt(0))
            .logical_or(b.gt(0));
      }));
}

struct BinaryOp {
  const char* name;
  T2 t;
  A2 a;
  bool bools = true;         // defined when an operand is bool
  Domain rhs = Domain::Any;  // the second operand's range
};

std::vector<BinaryOp> binary_ops() {
#define OP(label, expr)                                         \
  label, [](const Tensor& x, const Tensor& y) { return expr; }, \
      [](const at::Tensor& x, const at::Tensor& y) { return expr; }
#define FN(name)                                                       \
#name,                                                               \
      [](const Tensor& x,                                              \
         const Tensor& y) { return name(x, y); },                      \
                                               [](const at::Tensor& x, \
                                                  const at::Tensor& y) { return at::name(x, y); }
  return {
      {OP("x + y", x + y)},
      {OP("x - y", x - y), false},
      {OP("x * y", x * y)},
      {OP("x / y", x / y)},
      {FN(add)},
      {FN(sub), false},
      {FN(mul)},
      {FN(div)},
      {FN(pow), false, Domain::AboveMinusOne},
      {FN(maximum)},
      {FN(minimum)},
      {OP("x == y", x == y)},
      {OP("x != y", x != y)},
      {OP("x < y", x < y)},
      {OP("x <= y", x <= y)},
      {OP("x > y", x > y)},
      {OP("x >= y", x >= y)},
      {FN(eq)},
      {FN(ne)},
      {FN(lt)},
      {FN(le)},
      {FN(gt)},
      {FN(ge)},
      {FN(logical_and)},
      {FN(logical_or)},
  };
#undef OP
#undef FN
}

// Shape pairs: equal, broadcast both ways, 0-d with dims, empty, non-contiguous.
std::vector<std::tuple<std::string, at::Tensor, at::Tensor>> binary_inputs(at::ScalarType a,
                                                                           at::ScalarType b,
                                                                           Domain rhs) {
  std::vector<std::tuple<std::string, at::Tensor, at::Tensor>> out;
  auto add = [&](std::string name, at::IntArrayRef sa, at::IntArrayRef sb) {
    out.emplace_back(std::move(name), input(sa, a, Domain::Any), input(sb, b, rhs));
  };
  add("[2, 3] [2, 3]", {2, 3}, {2, 3});
  add("[4, 5] [5]", {4, 5}, {5});
  add("[3, 1] [1, 4]", {3, 1}, {1, 4});
  add("[2, 1, 3] [4, 1]", {2, 1, 3}, {4, 1});
  add("0-d [2, 3]", {}, {2, 3});
  add("[2, 3] 0-d", {2, 3}, {});
  add("0-d 0-d", {}, {});
  add("[0, 3] [3]", {0, 3}, {3});
  add("[1] [0]", {1}, {0});
  out.emplace_back("transposed [3, 4]", input({4, 3}, a, Domain::Any).t(),
                   input({4, 3}, b, rhs).t());
  out.emplace_back("strided [4, 3] [3]", input({4, 6}, a, Domain::Any).slice(1, 0, 6, 2),
                   input({3}, b, rhs));
  return out;
}

bool has_bool(at::ScalarType a, at::ScalarType b) { return a == at::kBool || b == at::kBool; }

TEST_F(ElementwiseOps, BinarySameDtype) {
  for (const BinaryOp& op : binary_ops()) {
    for (at::ScalarType dt : kAllTypes) {
      if (!op.bools && dt == at::kBool) continue;
      for (const auto& [shape, x, y] : binary_inputs(dt, dt, op.rhs))
        check(binary_sample(std::string(op.name) + " " + tag(dt) + " " + shape, x, y, op.t, op.a));
    }
  }
}

TEST_F(ElementwiseOps, BinaryMixedDtypes) {
  // Tensor-tensor promotion (torch.promote_types), and 0-d tensors that only
  // promote across categories: f16[n] + f32[] stays f16, i32[n] + f64[] is f64.
  const std::pair<at::ScalarType, at::ScalarType> pairs[] = {
      {at::kFloat, at::kDouble}, {at::kHalf, at::kFloat},    {at::kBFloat16, at::kHalf},
      {at::kInt, at::kLong},     {at::kInt, at::kFloat},     {at::kBool, at::kInt},
      {at::kBool, at::kHalf},    {at::kLong, at::kBFloat16}, {at::kDouble, at::kInt},
      {at::kBool, at::kDouble}};
  for (const BinaryOp& op : binary_ops()) {
    for (auto [a, b] : pairs) {
      for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
        if (!op.bools && has_bool(x, y)) continue;
        std::string name = std::string(op.name) + " " + tag(x) + "," + tag(y);
        check(binary_sample(name + " [3, 4]", input({3, 4}, x, Domain::Any),
                            input({3, 4}, y, op.rhs), op.t, op.a));
        check(binary_sample(name + " [3, 4] 0-d", input({3, 4}, x, Domain::Any),
                            input({}, y, op.rhs), op.t, op.a));
        check(binary_sample(name + " 0-d [4]", input({}, x, Domain::Any), input({4}, y, op.rhs),
                            op.t, op.a));
      }
    }
  }
}

// Python-number operands: promotion by kind only (wrapped numbers).
TEST_F(ElementwiseOps, NumberOperands) {
  const std::vector<Scalar> numbers = {Scalar(2), Scalar(2.5), Scalar(true), Scalar(-3),
                                       Scalar(0.5)};
  auto c10s = [](const Scalar& s) -> c10::Scalar {
    if (s.is_bool()) return c10::Scalar(s.to_double() != 0);
    if (s.is_integral()) return c10::Scalar(static_cast<int64_t>(s.to_double()));
    return c10::Scalar(s.to_double());
  };
  for (at::ScalarType dt : kAllTypes) {
    for (const Scalar& n : numbers) {
      c10::Scalar c = c10s(n);
      std::string nt = c.isBoolean() ? "True" : c.isIntegral(false) ? "int" : "float";
      nt += "(" + std::to_string(n.to_double()) + ")";
      bool no_bool = dt == at::kBool || n.is_bool();  // subtraction refuses bools
      auto s = [&](const std::string& what, const T1& t, const A1& a, Domain d = Domain::Any) {
        for (const auto& [shape, x] : inputs_of(dt, d))
          check(unary_sample(what + " " + tag(dt) + " " + nt + " " + shape, x, t, a));
      };
      s(
          "x + n", [n](const Tensor& x) { return x + n; },
          [c](const at::Tensor& x) { return x + c; });
      s(
          "n + x", [n](const Tensor& x) { return n + x; },
          [c](const at::Tensor& x) { return c + x; });
      s(
          "x * n", [n](const Tensor& x) { return x * n; },
          [c](const at::Tensor& x) { return x * c; });
      s(
          "n * x", [n](const Tensor& x) { return n * x; },
          [c](const at::Tensor& x) { return c * x; });
      s(
          "x / n", [n](const Tensor& x) { return x / n; },
          [c](const at::Tensor& x) { return x / c; });
      s(
          "n / x", [n](const Tensor& x) { return n / x; },
          [c](const at::Tensor& x) { return at::div(wrapped(c), x); });
      if (!no_bool) {
        s(
            "x - n", [n](const Tensor& x) { return x - n; },
            [c](const at::Tensor& x) { return x - c; });
        s(
            "n - x", [n](const Tensor& x) { return n - x; },
            [c](const at::Tensor& x) { return at::sub(wrapped(c), x); });
      }
      s(
          "x == n", [n](const Tensor& x) { return x == n; },
          [c](const at::Tensor& x) { return x == c; });
      s(
          "x != n", [n](const Tensor& x) { return x != n; },
          [c](const at::Tensor& x) { return x != c; });
      s(
          "x < n", [n](const Tensor& x) { return x < n; },
          [c](const at::Tensor& x) { return x < c; });
      s(
          "x <= n", [n](const Tensor& x) { return x <= n; },
          [c](const at::Tensor& x) { return x <= c; });
      s(
          "x > n", [n](const Tensor& x) { return x > n; },
          [c](const at::Tensor& x) { return x > c; });
      s(
          "x >= n", [n](const Tensor& x) { return x >= n; },
          [c](const at::Tensor& x) { return x >= c; });
      s(
          "eq", [n](const Tensor& x) { return eq(x, n); },
          [c](const at::Tensor& x) { return at::eq(x, c); });
      s(
          "lt", [n](const Tensor& x) { return lt(x, n); },
          [c](const at::Tensor& x) { return at::lt(x, c); });
      // Integers to negative integer powers are an error (tested below).
      bool neg_int_pow = at::isIntegralType(dt, true) && !n.is_floating_point() && c.toDouble() < 0;
      if (dt != at::kBool && !neg_int_pow)
        s(
            "pow(x, n)", [n](const Tensor& x) { return pow(x, n); },
            [c](const at::Tensor& x) { return at::pow(x, c); }, Domain::Positive);
      if (!n.is_bool())
        s(
            "pow(n, x)", [n](const Tensor& x) { return pow(n, x); },
            [c](const at::Tensor& x) { return at::pow(c, x); }, Domain::Positive);
    }
  }
}

// The promotion cases API.md names, checked for their result dtypes directly.
TEST_F(ElementwiseOps, PromotionExamples) {
  struct Case {
    std::string name;
    at::Tensor x;
    T1 t;
    A1 a;
    at::ScalarType want;
  };
  at::Tensor i64 = make_tensor({3}, at::kLong), f16 = make_tensor({3}, at::kHalf),
             i32 = make_tensor({3}, at::kInt), b = make_tensor({3}, at::kBool),
             f32 = make_tensor({3}, at::kFloat, 0.5, 2);
  const Case cases[] = {
      {"i64 * 2.5 -> f32", i64, [](const Tensor& x) { return x * 2.5; },
       [](const at::Tensor& x) { return x * 2.5; }, at::kFloat},
      {"f16 * 2.5 stays f16", f16, [](const Tensor& x) { return x * 2.5; },
       [](const at::Tensor& x) { return x * 2.5; }, at::kHalf},
      {"i32 + 5 stays i32", i32, [](const Tensor& x) { return x + 5; },
       [](const at::Tensor& x) { return x + 5; }, at::kInt},
      {"bool + 1 -> i64", b, [](const Tensor& x) { return x + 1; },
       [](const at::Tensor& x) { return x + 1; }, at::kLong},
      {"bool + True stays bool", b, [](const Tensor& x) { return x + true; },
       [](const at::Tensor& x) { return x + true; }, at::kBool},
      {"2 - x", f32, [](const Tensor& x) { return 2 - x; },
       [](const at::Tensor& x) { return at::sub(wrapped(2), x); }, at::kFloat},
      {"2 / x", f32, [](const Tensor& x) { return 2 / x; },
       [](const at::Tensor& x) { return at::div(wrapped(2), x); }, at::kFloat},
      {"2 / i32 -> f32", i32, [](const Tensor& x) { return 2 / x; },
       [](const at::Tensor& x) { return at::div(wrapped(2), x); }, at::kFloat},
      {"x / int tensor -> f32", i32,
       [](const Tensor& x) {
         return x / Tensor(at::tensor({2, 3, 4}, at::kInt));
       },
       [](const at::Tensor& x) {
         return x / at::tensor({2, 3, 4}, at::kInt);
       },
       at::kFloat},
      {"i64 / i64 -> f32", i64, [](const Tensor& x) { return x / x.add(10); },
       [](const at::Tensor& x) { return x / x.add(10); }, at::kFloat},
      {"i32 / 2 -> f32", i32, [](const Tensor& x) { return x / 2; },
       [](const at::Tensor& x) { return x / 2; }, at::kFloat},
      {"f16 + f32 0-d stays f16", f16,
       [](const Tensor& x) { return x + Tensor(at::scalar_tensor(1.5f)); },
       [](const at::Tensor& x) { return x + at::scalar_tensor(1.5f); }, at::kHalf},
      {"i32 + f64 0-d -> f64", i32,
       [](const Tensor& x) { return x + Tensor(at::scalar_tensor(1.5, at::kDouble)); },
       [](const at::Tensor& x) { return x + at::scalar_tensor(1.5, at::kDouble); }, at::kDouble},
      {"i32 + i64 0-d stays i32", i32,
       [](const Tensor& x) { return x + Tensor(at::scalar_tensor(7, at::kLong)); },
       [](const at::Tensor& x) { return x + at::scalar_tensor(7, at::kLong); }, at::kInt},
      {"exp(i64) -> f32", i64, [](const Tensor& x) { return exp(x); },
       [](const at::Tensor& x) { return at::exp(x); }, at::kFloat},
      {"sqrt(bool) -> f32", b, [](const Tensor& x) { return sqrt(x); },
       [](const at::Tensor& x) { return at::sqrt(x); }, at::kFloat},
      {"relu(i32) stays i32", i32, [](const Tensor& x) { return relu(x); },
       [](const at::Tensor& x) { return at::relu(x); }, at::kInt},
      {"x == 2.5 on i64 -> bool", i64, [](const Tensor& x) { return x == 2.5; },
       [](const at::Tensor& x) { return x == 2.5; }, at::kBool},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.a(c.x).scalar_type(), c.want) << c.name << " (libtorch itself)";
    check(unary_sample(c.name, c.x, c.t, c.a));
  }
}

TEST_F(ElementwiseOps, Alpha) {
  struct Case {
    std::string name;
    at::ScalarType a, b;
    Scalar alpha;
  };
  const Case cases[] = {{"f32 alpha 2", at::kFloat, at::kFloat, 2},
                        {"f32 alpha 0.5", at::kFloat, at::kFloat, 0.5},
                        {"f32 alpha -1", at::kFloat, at::kFloat, -1},
                        {"f64 alpha 1e-3", at::kDouble, at::kDouble, 1e-3},
                        {"i32 alpha 3", at::kInt, at::kInt, 3},
                        {"i64 alpha -2", at::kLong, at::kLong, -2},
                        {"i32 + f32 alpha 0.25", at::kInt, at::kFloat, 0.25},
                        {"f16 alpha 0.1", at::kHalf, at::kHalf, 0.1},
                        {"bf16 alpha 3", at::kBFloat16, at::kBFloat16, 3},
                        {"i64 alpha 0", at::kLong, at::kLong, 0}};
  for (const Case& c : cases) {
    c10::Scalar alpha = c.alpha.is_bool()       ? c10::Scalar(c.alpha.to_double() != 0)
                        : c.alpha.is_integral() ? c10::Scalar(int64_t(c.alpha.to_double()))
                                                : c10::Scalar(c.alpha.to_double());
    Scalar al = c.alpha;
    for (const auto& [shape, x, y] : binary_inputs(c.a, c.b, Domain::Any)) {
      check(binary_sample(
          "add " + c.name + " " + shape, x, y,
          [al](const Tensor& a, const Tensor& b) { return add(a, b, al); },
          [alpha](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b, alpha); }));
      check(binary_sample(
          "sub " + c.name + " " + shape, x, y,
          [al](const Tensor& a, const Tensor& b) { return sub(a, b, al); },
          [alpha](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b, alpha); }));
    }
    // A number second operand.
    check(unary_sample(
        "add number " + c.name, make_tensor({4}, c.a),
        [al](const Tensor& a) { return add(a, 3, al); },
        [alpha](const at::Tensor& a) { return at::add(a, 3, alpha); }));
    check(unary_sample(
        "sub number " + c.name, make_tensor({4}, c.a),
        [al](const Tensor& a) { return sub(a, 3, al); },
        [alpha](const at::Tensor& a) { return at::sub(a, 3, alpha); }));
  }
  // Bool alpha with a bool result.
  check(binary_sample(
      "add bool alpha True", make_tensor({5}, at::kBool), make_tensor({5}, at::kBool),
      [](const Tensor& a, const Tensor& b) { return add(a, b, true); },
      [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b, true); }));
  check(binary_sample(
      "add bool alpha False", make_tensor({5}, at::kBool), make_tensor({5}, at::kBool),
      [](const Tensor& a, const Tensor& b) { return add(a, b, false); },
      [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b, false); }));
}

TEST_F(ElementwiseOps, Clamp) {
  struct Bounds {
    std::string name;
    c10::optional<Scalar> lo, hi;
  };
  const Bounds bounds[] = {{"[-1, 1]", Scalar(-1), Scalar(1)},
                           {"[-0.5, 1.5]", Scalar(-0.5), Scalar(1.5)},
                           {"min only 0.5", Scalar(0.5), c10::nullopt},
                           {"min only 0", Scalar(0), c10::nullopt},
                           {"max only 0.5", c10::nullopt, Scalar(0.5)},
                           {"max only 2", c10::nullopt, Scalar(2)},
                           {"min > max", Scalar(1), Scalar(-1)},
                           {"bool bounds on non-bool", Scalar(false), Scalar(true)}};
  auto c10opt = [](const c10::optional<Scalar>& s) -> c10::optional<c10::Scalar> {
    if (!s) return c10::nullopt;
    if (s->is_bool()) return c10::Scalar(s->to_double() != 0);
    if (s->is_integral()) return c10::Scalar(static_cast<int64_t>(s->to_double()));
    return c10::Scalar(s->to_double());
  };
  for (at::ScalarType dt : kAllTypes) {
    if (dt == at::kBool) continue;
    for (const Bounds& b : bounds) {
      auto lo = b.lo, hi = b.hi;
      auto alo = c10opt(lo), ahi = c10opt(hi);
      for (const auto& [shape, x] : inputs_of(dt, Domain::Any))
        check(unary_sample(
            "clamp " + b.name + " " + tag(dt) + " " + shape, x,
            [lo, hi](const Tensor& t) { return clamp(t, lo, hi); },
            [alo, ahi](const at::Tensor& t) { return at::clamp(t, alo, ahi); }));
    }
  }
  // Integer tensors with float bounds promote (torch's clamp takes part in promotion).
  check(unary_sample(
      "clamp i32 min 0.5 -> f32", make_tensor({6}, at::kInt),
      [](const Tensor& t) { return clamp(t, 0.5); },
      [](const at::Tensor& t) { return at::clamp(t, 0.5); }));
  check(unary_sample(
      "clamp bool int bounds -> i64", make_tensor({6}, at::kBool),
      [](const Tensor& t) { return clamp(t, 0, 1); },
      [](const at::Tensor& t) { return at::clamp(t, 0, 1); }));
  check(unary_sample(
      "clamp keeps nan", at::tensor({NAN, 1.0f, -5.0f}),
      [](const Tensor& t) { return clamp(t, -1, 0.5); },
      [](const at::Tensor& t) { return at::clamp(t, -1, 0.5); }));
}

TEST_F(ElementwiseOps, Where) {
  auto cond = [](at::IntArrayRef s) { return make_tensor(s, at::kBool); };
  auto tw = [](const Tensor& c, const Tensor& a, const Tensor& b) { return where(c, a, b); };
  auto aw = [](const at::Tensor& c, const at::Tensor& a, const at::Tensor& b) {
    return at::where(c, a, b);
  };
  auto sample3 = [&](const std::string& name, std::vector<at::Tensor> in) {
    OpSample s{name, in, [tw](const TensorList& v) { return TensorList{tw(v[0], v[1], v[2])}; },
               [aw](const AtenList& v) { return AtenList{aw(v[0], v[1], v[2])}; }};
    check(s);
  };
  for (at::ScalarType dt : kAllTypes) {
    sample3("same shape " + tag(dt),
            {cond({2, 3}), make_tensor({2, 3}, dt), make_tensor({2, 3}, dt)});
    sample3("broadcast all " + tag(dt),
            {cond({3, 1}), make_tensor({1, 4}, dt), make_tensor({4}, dt)});
    sample3("0-d cond " + tag(dt), {cond({}), make_tensor({2, 2}, dt), make_tensor({2, 2}, dt)});
    sample3("0-d all " + tag(dt), {cond({}), make_tensor({}, dt), make_tensor({}, dt)});
    sample3("empty " + tag(dt), {cond({0, 2}), make_tensor({0, 2}, dt), make_tensor({2}, dt)});
    sample3("non-contiguous " + tag(dt), {cond({4, 3}).t(), make_noncontiguous({3, 4}, dt),
                                          make_tensor({4, 6}, dt).slice(1, 0, 6, 2).t()});
  }
  sample3("promote f32 f64", {cond({5}), make_tensor({5}), make_tensor({5}, at::kDouble)});
  sample3("promote i32 f16", {cond({5}), make_tensor({5}, at::kInt), make_tensor({5}, at::kHalf)});
  sample3("promote bool i64",
          {cond({5}), make_tensor({5}, at::kBool), make_tensor({5}, at::kLong)});
  sample3("promote f16 f32 0-d", {cond({5}), make_tensor({5}, at::kHalf), make_tensor({})});

  // Number branches.
  auto sample1 = [&](const std::string& name, const at::Tensor& c, const at::Tensor& x, const T2& t,
                     const A2& a) { check(binary_sample(name, c, x, t, a)); };
  for (at::ScalarType dt : kAllTypes) {
    sample1(
        "where(c, x, 0.5) " + tag(dt), cond({3, 4}), make_tensor({4}, dt),
        [](const Tensor& c, const Tensor& x) { return where(c, x, 0.5); },
        [](const at::Tensor& c, const at::Tensor& x) { return at::where(c, x, 0.5); });
    sample1(
        "where(c, 2, x) " + tag(dt), cond({4}), make_tensor({3, 4}, dt),
        [](const Tensor& c, const Tensor& x) { return where(c, 2, x); },
        [](const at::Tensor& c, const at::Tensor& x) { return at::where(c, 2, x); });
    sample1(
        "where(c, x, True) " + tag(dt), cond({4}), make_tensor({4}, dt),
        [](const Tensor& c, const Tensor& x) { return where(c, x, true); },
        [](const at::Tensor& c, const at::Tensor& x) { return at::where(c, x, true); });
  }
  auto both = [&](const std::string& name, const at::Tensor& c, Scalar a, Scalar b, c10::Scalar ca,
                  c10::Scalar cb) {
    check(unary_sample(
        name, c, [a, b](const Tensor& t) { return where(t, a, b); },
        [ca, cb](const at::Tensor& t) { return at::where(t, ca, cb); }));
  };
  both("where(c, 1, 0) -> i64", cond({2, 3}), 1, 0, 1, 0);
  both("where(c, 1.5, 0) -> f32", cond({2, 3}), 1.5, 0, 1.5, 0);
  both("where(c, True, False) -> bool", cond({4}), true, false, true, false);
  both("where(c, -2.0, 2.0) 0-d", cond({}), -2.0, 2.0, -2.0, 2.0);
  both("where(c, 1, 2) empty", cond({0}), 1, 2, 1, 2);
}

// Runtime numbers (thunder::Scalar arguments) never recompile.
TEST_F(ElementwiseOps, NumberProxies) {
  at::Tensor x = make_tensor({3, 2});
  auto jfn = jit([](const Tensor& t, const Scalar& s) {
    return TensorList{t * s,
                      s * t,
                      t + s,
                      t - s,
                      s - t,
                      t / s,
                      s / t,
                      add(t, t, s),
                      t > s,
                      clamp(t, s),
                      where(t > 0, t, s),
                      add(t, 2, s),
                      sub(t, s, 3),
                      add(t, s, s)};
  });
  for (double v : {2.5, -0.5, 3.0}) {
    TensorList got = jfn(x, Scalar(v));
    AtenList want = {x * v,
                     v * x,
                     x + v,
                     x - v,
                     v - x,
                     x / v,
                     v / x,
                     at::add(x, x, v),
                     x > v,
                     at::clamp(x, v),
                     at::where(x > 0, x, v),
                     at::add(x, 2, v),
                     at::sub(x, v, 3),
                     at::add(x, v, v)};
    AtenList g;
    for (const Tensor& t : got) g.push_back(t.aten());
    expect_same(g, want, 1e-6, 1e-6, "value " + std::to_string(v));
  }
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_EQ(cache_hits(jfn), 2);
}

TEST_F(ElementwiseOps, Errors) {
  auto f = [](at::IntArrayRef s, at::ScalarType dt = at::kFloat) { return make_tensor(s, dt); };
  // Undefined tensors (None) are no operands.
  const std::vector<at::Tensor> x3 = {f({3})};
  expect_error("ltorch.neg: argument a must be a tensor, got None", {},
               [](const TensorList&) { return TensorList{neg(Tensor())}; });
  expect_error("ltorch.add: argument b must be a tensor, got None", x3,
               [](const TensorList& x) { return TensorList{x[0] + Tensor()}; });
  expect_error("ltorch.sub: argument b must be a tensor, got None", {},
               [](const TensorList&) { return TensorList{2 - Tensor()}; });
  expect_error("ltorch.maximum: argument a must be a tensor, got None", x3,
               [](const TensorList& x) { return TensorList{maximum(Tensor(), x[0])}; });
  expect_error("ltorch.clamp: argument a must be a tensor, got None", {},
               [](const TensorList&) { return TensorList{clamp(Tensor(), 0)}; });
  expect_error("ltorch.where: argument pred must be a tensor, got None", x3,
               [](const TensorList& x) { return TensorList{where(Tensor(), x[0], 1)}; });
  // Broadcasting.
  expect_error("ltorch.add", {f({3}), f({4})},
               [](const TensorList& x) { return TensorList{x[0] + x[1]}; });
  expect_error("ltorch.mul", {f({2, 3}), f({3, 2})},
               [](const TensorList& x) { return TensorList{x[0] * x[1]}; });
  expect_error("ltorch.eq", {f({2}), f({0})},
               [](const TensorList& x) { return TensorList{x[0] == x[1]}; });
  expect_error("ltorch.where", {f({3}, at::kBool), f({4}), f({4})},
               [](const TensorList& x) { return TensorList{where(x[0], x[1], x[2])}; });
  // where needs a bool condition.
  expect_error("ltorch.where", {f({3}), f({3}), f({3})},
               [](const TensorList& x) { return TensorList{where(x[0], x[1], x[2])}; });
  expect_error("ltorch.where", {f({3}, at::kInt), f({3}), f({3})},
               [](const TensorList& x) { return TensorList{where(x[0], 1.0, 2.0)}; });
  // clamp needs a bound, and refuses bool results.
  expect_error("ltorch.clamp", {f({3})},
               [](const TensorList& x) { return TensorList{clamp(x[0], c10::nullopt)}; });
  expect_error("ltorch.clamp", {f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{clamp(x[0], false, true)}; });
  // alpha: float alpha with an integer result; bool alpha with a non-bool result.
  expect_error("ltorch.add", {f({3}, at::kLong), f({3}, at::kLong)},
               [](const TensorList& x) { return TensorList{add(x[0], x[1], 2.5)}; });
  expect_error("ltorch.sub", {f({3}, at::kInt)},
               [](const TensorList& x) { return TensorList{sub(x[0], 1, 0.5)}; });
  expect_error("ltorch.add", {f({3}), f({3})},
               [](const TensorList& x) { return TensorList{add(x[0], x[1], true)}; });
  // Subtraction refuses bool operands (tensors or numbers).
  expect_error("ltorch.sub", {f({3}, at::kBool), f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{x[0] - x[1]}; });
  expect_error("ltorch.sub", {f({3}, at::kBool), f({3})},
               [](const TensorList& x) { return TensorList{x[0] - x[1]}; });
  expect_error("ltorch.sub", {f({3}), f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{x[0] - x[1]}; });
  expect_error("ltorch.sub", {f({3})}, [](const TensorList& x) { return TensorList{x[0] - true}; });
  expect_error("ltorch.sub", {f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{1 - x[0]}; });
  // Bool tensors: no negation, abs, relu, pow.
  expect_error("ltorch.neg", {f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{-x[0]}; });
  expect_error("ltorch.abs", {f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{abs(x[0])}; });
  expect_error("ltorch.relu", {f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{relu(x[0])}; });
  expect_error("ltorch.pow", {f({3}, at::kBool), f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{pow(x[0], x[1])}; });
  // silu is for floating-point tensors only.
  expect_error("ltorch.silu", {f({3}, at::kInt)},
               [](const TensorList& x) { return TensorList{silu(x[0])}; });
  expect_error("ltorch.silu", {f({3}, at::kBool)},
               [](const TensorList& x) { return TensorList{silu(x[0])}; });
  // Integers to negative integer powers.
  expect_error("ltorch.pow", {f({3}, at::kLong)},
               [](const TensorList& x) { return TensorList{pow(x[0], -2)}; });
  expect_error("ltorch.pow", {f({3}, at::kInt)},
               [](const TensorList& x) { return TensorList{pow(x[0], -1)}; });
}

}  // namespace
}  // namespace thunder::testing
