// Custom autograd functions (thunder::autograd::Function), eager and under jit,
// against plain libtorch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

using autograd::AutogradContext;

struct MP : autograd::Function<MP> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
    ctx->save_for_backward({a, b});
    return a * b;
  }
  static TensorList backward(AutogradContext* ctx, TensorList grad_outputs) {
    auto saved = ctx->get_saved_variables();
    return {grad_outputs[0] * saved[1], Tensor()};  // None for b
  }
};

// Full gradient for both inputs.
struct FullMul : autograd::Function<FullMul> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
    ctx->save_for_backward({a, b});
    return a * b;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    auto s = ctx->get_saved_variables();
    return {g[0] * s[1], g[0] * s[0]};
  }
};

// A number argument, kept in saved_data for the backward.
struct Scale : autograd::Function<Scale> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double scale) {
    ctx->saved_data["scale"] = scale;
    return x * scale;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    double s = ctx->saved_data["scale"].toDouble();
    return {g[0] * s, Tensor()};
  }
};

// A float output marked non-differentiable.
struct NonDiff : autograd::Function<NonDiff> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = x * 2.0;
    ctx->mark_non_differentiable({y});
    return y;
  }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0]}; }
};

// An integer output (argmax): never differentiable.
struct ArgMax : autograd::Function<ArgMax> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = x.argmax(0);
    ctx->mark_non_differentiable({y});
    return y;
  }
  static TensorList backward(AutogradContext*, TensorList) { return {Tensor()}; }
};

// Two outputs (tanh and exp), one backward for both.
struct TanhExp : autograd::Function<TanhExp> {
  static std::tuple<Tensor, Tensor> forward(AutogradContext* ctx, Tensor x) {
    Tensor t = x.tanh(), e = x.exp();
    ctx->save_for_backward({t, e});
    return {t, e};
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    auto s = ctx->get_saved_variables();
    return {g[0] * (1 - s[0] * s[0]) + g[1] * s[1]};
  }
};

at::Tensor leaf(std::vector<int64_t> shape) {
  return at::randn(shape, at::kDouble).requires_grad_();
}
at::Tensor copy(const at::Tensor& t) { return t.detach().clone().requires_grad_(); }

TEST(CustomFunction, EagerMatchesLibtorch) {
  at::Tensor a = leaf({3, 4}), b = leaf({3, 4});
  Tensor y = MP::apply(a, b);
  EXPECT_TRUE(at::allclose(y.aten(), a * b));
  ASSERT_TRUE(y.requires_grad());
  at::Tensor g = at::randn({3, 4}, at::kDouble);
  y.backward(g);
  EXPECT_TRUE(at::allclose(a.grad(), g * b));
  EXPECT_FALSE(b.grad().defined());
}

TEST(CustomFunction, JitMatchesLibtorchAndShowsSymbols) {
  auto jfn = jit([](const Tensor& a, const Tensor& b) { return MP::apply(a, b); },
                 {.arg_names = {"a", "b"}});
  at::Tensor a = leaf({3, 4}), b = leaf({3, 4});
  Tensor y = jfn(a, b);
  EXPECT_TRUE(at::allclose(y.aten(), a * b));
  ASSERT_TRUE(y.requires_grad());
  at::Tensor g = at::randn({3, 4}, at::kDouble);
  y.backward(g);
  EXPECT_TRUE(at::allclose(a.grad(), g * b));
  EXPECT_FALSE(b.grad().defined());
  std::string fwd = last_traces(jfn).front().str();
  EXPECT_NE(fwd.find("MP("), std::string::npos) << fwd;
  std::string bwd = last_backward_traces(jfn).front().str();
  EXPECT_NE(bwd.find("MP_backward("), std::string::npos) << bwd;
}

TEST(CustomFunction, BothGradsEagerAndJit) {
  at::Tensor a = leaf({5}), b = leaf({5}), g = at::randn({5}, at::kDouble);
  FullMul::apply(a, b).backward(g);
  at::Tensor a2 = copy(a), b2 = copy(b);
  auto jfn = jit([](const Tensor& x, const Tensor& y) { return FullMul::apply(x, y); });
  jfn(a2, b2).backward(g);
  EXPECT_TRUE(at::allclose(a.grad(), g * b));
  EXPECT_TRUE(at::allclose(b.grad(), g * a));
  EXPECT_TRUE(at::allclose(a2.grad(), g * b));
  EXPECT_TRUE(at::allclose(b2.grad(), g * a));
}

TEST(CustomFunction, UndefinedGradLeavesInputWithoutGrad) {
  // Only b requires grad, and MP returns None for it.
  at::Tensor a = at::randn({4}, at::kDouble), b = leaf({4});
  Tensor y = MP::apply(a, b);
  EXPECT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_FALSE(b.grad().defined());

  at::Tensor c = leaf({4}), d = leaf({4});
  auto jfn = jit([](const Tensor& x, const Tensor& z) { return (MP::apply(x, z) * z).sum(); });
  jfn(c, d).backward();
  // d's gradient comes only through the outer `* z`: MP gives none for it.
  EXPECT_TRUE(at::allclose(c.grad(), d * d));
  EXPECT_TRUE(at::allclose(d.grad(), c * d));
}

TEST(CustomFunction, NonDifferentiableOutputs) {
  at::Tensor x = leaf({4, 3});
  Tensor y = NonDiff::apply(x);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.aten().grad_fn() == nullptr);
  EXPECT_TRUE(at::allclose(y.aten(), x * 2));
  Tensor i = ArgMax::apply(x);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_TRUE(at::equal(i.aten(), x.argmax(0)));

  auto jy = jit([](const Tensor& t) { return NonDiff::apply(t); });
  Tensor y2 = jy(x);
  EXPECT_FALSE(y2.requires_grad());
  EXPECT_TRUE(y2.aten().grad_fn() == nullptr);
  EXPECT_TRUE(at::allclose(y2.aten(), x * 2));
  auto ji = jit([](const Tensor& t) { return ArgMax::apply(t); });
  Tensor i2 = ji(x);
  EXPECT_FALSE(i2.requires_grad());
  EXPECT_TRUE(at::equal(i2.aten(), x.argmax(0)));

  // Mixed: a non-differentiable output used next to a differentiable path.
  auto jm = jit([](const Tensor& t) { return (NonDiff::apply(t) * t).sum(); });
  at::Tensor x2 = copy(x);
  jm(x2).backward();
  EXPECT_TRUE(at::allclose(x2.grad(), x * 2));
}

TEST(CustomFunction, NumberArgument) {
  at::Tensor x = leaf({3}), g = at::randn({3}, at::kDouble);
  Tensor y = Scale::apply(x, 2.5);
  EXPECT_TRUE(at::allclose(y.aten(), x * 2.5));
  y.backward(g);
  EXPECT_TRUE(at::allclose(x.grad(), g * 2.5));

  at::Tensor x2 = copy(x);
  auto jfn = jit([](const Tensor& t, double s) { return Scale::apply(t, s); });
  Tensor y2 = jfn(x2, 2.5);
  EXPECT_TRUE(at::allclose(y2.aten(), x * 2.5));
  y2.backward(g);
  EXPECT_TRUE(at::allclose(x2.grad(), g * 2.5));
  std::string bwd = last_backward_traces(jfn).front().str();
  EXPECT_NE(bwd.find("Scale_backward("), std::string::npos) << bwd;
  // An int literal converts to the double parameter.
  at::Tensor x3 = copy(x);
  Scale::apply(x3, 3).sum().backward();
  EXPECT_TRUE(at::allclose(x3.grad(), at::full({3}, 3.0, at::kDouble)));
}

TEST(CustomFunction, InsideALargerJittedFunction) {
  auto fn = [](const Tensor& x, const Tensor& w) { return MP::apply(x.tanh(), w).sum(); };
  auto jfn = jit(fn);
  at::Tensor x = leaf({4, 3}), w = leaf({4, 3});
  Tensor out = jfn(x, w);
  out.backward();
  at::Tensor x2 = copy(x), w2 = copy(w);
  at::Tensor ref = (x2.tanh() * w2).sum();
  EXPECT_TRUE(at::allclose(out.aten(), ref));
  ref.backward();
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));
  // MP gives no gradient for its second argument.
  EXPECT_FALSE(w.grad().defined());

  auto fn2 = [](const Tensor& x, const Tensor& w) { return FullMul::apply(x.tanh(), w).sum(); };
  auto jfn2 = jit(fn2);
  at::Tensor x3 = copy(x), w3 = copy(w);
  jfn2(x3, w3).backward();
  EXPECT_TRUE(at::allclose(x3.grad(), x2.grad()));
  EXPECT_TRUE(at::allclose(w3.grad(), w2.grad()));
}

TEST(CustomFunction, TupleOutputs) {
  at::Tensor x = leaf({5});
  auto [t, e] = TanhExp::apply(x);
  (t.aten().sum() + 2 * e.aten().sum()).backward();
  at::Tensor x2 = copy(x);
  (x2.tanh().sum() + 2 * x2.exp().sum()).backward();
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));

  auto jfn = jit([](const Tensor& v) {
    auto [a, b] = TanhExp::apply(v);
    return a.sum() + b.sum() * 2.0;
  });
  at::Tensor x3 = copy(x);
  jfn(x3).backward();
  EXPECT_TRUE(at::allclose(x3.grad(), x2.grad()));
}

TEST(CustomFunction, NoGradInputsRunWithoutAutodiff) {
  at::Tensor a = at::randn({3}, at::kDouble), b = at::randn({3}, at::kDouble);
  auto jfn = jit([](const Tensor& x, const Tensor& y) { return MP::apply(x, y); });
  Tensor y = jfn(a, b);
  EXPECT_TRUE(at::allclose(y.aten(), a * b));
  EXPECT_FALSE(y.requires_grad());
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// ctx->save_for_backward is an explicit save: strict mode accepts it, and the
// saved set is exactly what the function saved.
TEST(CustomFunction, SavedTensorsAreExplicitForStrictMode) {
  auto jfn = jit([](const Tensor& a, const Tensor& b) { return MP::apply(a.exp(), b); },
                 {.strict_saved_for_backward = true, .arg_names = {"a", "b"}});
  at::Tensor a = leaf({3, 4}), b = leaf({3, 4});
  Tensor y = jfn(a, b);
  at::Tensor g = at::randn({3, 4}, at::kDouble);
  y.backward(g);
  EXPECT_TRUE(at::allclose(a.grad(), g * b * a.exp()));
  std::vector<std::string> names;
  for (const auto& s : last_saved_for_backward(jfn)) names.push_back(s.name);
  // exp's built-in rule saves its output; MP saved its two arguments (a.exp() and b).
  EXPECT_EQ(names.size(), 2u);
}

}  // namespace
}  // namespace thunder
