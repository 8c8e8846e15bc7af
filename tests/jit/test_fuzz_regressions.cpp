// Minimised programs from bugs the differential fuzzer (tests/fuzz) found,
// each checked against eager libtorch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

void expect_close(const at::Tensor& got, const at::Tensor& want) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-6)) << got << "\n" << want;
}

// A value made from a no_grad result gets autograd history from an in-place
// add: what is computed from it afterwards must carry the gradient (it was
// dropped, so x.grad missed the path through the add).
TEST(FuzzRegressions, InPlaceWriteGivesAutogradHistory) {
  auto program = [](auto x, auto nograd_mul) {
    auto t = nograd_mul(x) * 1.0;
    t.add_(x);
    return (t * x).sum({1}, true);
  };
  at::Tensor x = at::randn({2, 4}, at::kDouble).requires_grad_();
  at::Tensor want = program(x, [](const at::Tensor& a) {
    at::NoGradGuard g;
    return a * a;
  });
  want.sum().backward();
  at::Tensor want_grad = x.grad().clone();
  x.mutable_grad().reset();
  for (const char* executors : {"aten", "cpu_fuser"}) {
    SCOPED_TRACE(executors);
    std::vector<std::string> ex = {executors};
    if (ex[0] != "aten") ex.push_back("aten");
    auto jfn = jit(
        [&](const Tensor& a) {
          return program(a, [](const Tensor& v) {
            NoGradGuard g;
            return v * v;
          });
        },
        {.executors = ex});
    Tensor got = jfn(x);
    expect_close(got.aten(), want);
    got.aten().sum().backward();
    expect_close(x.grad(), want_grad);
    x.mutable_grad().reset();
  }
}

// The same value returned twice: one cotangent per occurrence, summed (the
// second cotangent input clashed by name with the first).
TEST(FuzzRegressions, ValueReturnedTwiceGetsBothCotangents) {
  auto jfn = jit([](const Tensor& x) {
    Tensor y = nn::functional::dropout(x * 2.0, 0.0, true);
    return std::make_tuple(y, y);
  });
  at::Tensor x = at::randn({3}).requires_grad_();
  auto [a, b] = jfn(x);
  at::Tensor w1 = at::randn({3}), w2 = at::randn({3});
  (a.aten() * w1 + b.aten() * w2).sum().backward();
  expect_close(x.grad(), 2.0 * (w1 + w2));
}

// Rematerialization between regions put recomputed prims before the prims of
// the consumer they read (consecutive regions; the region read t5 before
// computing it).
TEST(FuzzRegressions, RecomputedPrimsComeAfterWhatTheyRead) {
  auto program = [](auto v0, auto nograd_mul) {
    auto v1 = nograd_mul(v0, v0);
    auto v2 = minimum(v0, v0);
    auto v3 = v1 * v2;
    auto v6 = v0 * 1.0;
    v6.add_(v1);
    auto v8 = clamp(v6, -1.0, 1.0);
    return std::make_tuple(v6 * v8, v3 * 1.0 + 1.0, v2.narrow(0, 0, 1));
  };
  at::Tensor x = at::randn({3, 1});
  auto [w0, w1, w2] = program(x, [](const at::Tensor& a, const at::Tensor& b) {
    at::NoGradGuard g;
    return a * b;
  });
  auto jfn = jit(
      [&](const Tensor& a) {
        return program(a, [](const Tensor& u, const Tensor& v) {
          NoGradGuard g;
          return u * v;
        });
      },
      {.executors = {"cpu_fuser", "aten"}, .fusion_type = "consecutive"});
  auto [g0, g1, g2] = jfn(x);
  expect_close(g0.aten(), w0);
  expect_close(g1.aten(), w1);
  expect_close(g2.aten(), w2);
}

// Fuzzer seed 36: a custom function applied to a tensor that does not
// require grad, while another input that does is used only under no_grad.
// Eagerly no result has autograd history; under jit none may either (the
// program, compiled without a backward, ran its ATen kernels with grad mode
// on and `c * w` came back with a graph).
struct TanhTimesTwo : autograd::Function<TanhTimesTwo> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x) {
    Tensor y = tanh(x);
    ctx->save_for_backward({y});
    return y * 2.0;
  }
  static TensorList backward(autograd::AutogradContext* ctx, TensorList grad) {
    Tensor y = ctx->get_saved_variables()[0];
    return {grad[0] * 2.0 * (1.0 - y * y)};
  }
};

TEST(FuzzRegressions, CustomFunctionOfAConstantHasNoHistory) {
  for (const char* executors : {"aten", "cpu_fuser"}) {
    SCOPED_TRACE(executors);
    std::vector<std::string> ex = {executors};
    if (ex[0] != "aten") ex.push_back("aten");
    auto jfn = jit(
        [](const Tensor& w, const Tensor& c) {
          Tensor nograd;
          {
            at::NoGradGuard g;  // libtorch's guard, as the fuzzer's programs use it
            nograd = c * w;
          }
          return std::make_tuple(TanhTimesTwo::apply(c), nograd);
        },
        {.executors = ex});
    at::Tensor w = at::randn({1, 4}).requires_grad_(), c = at::randn({1, 4});
    auto [a, b] = jfn(w, c);
    EXPECT_TRUE(last_backward_traces(jfn).empty());
    expect_close(a.aten(), at::tanh(c) * 2.0);
    expect_close(b.aten(), c * w.detach());
    EXPECT_FALSE(a.aten().requires_grad());
    EXPECT_FALSE(b.aten().requires_grad());
  }
}

}  // namespace
}  // namespace thunder
