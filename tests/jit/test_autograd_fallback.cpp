// Until the compiled backward exists, a jitted program's ATen kernels are
// recorded by libtorch's autograd like eager code: gradients must match eager.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

TEST(AutogradFallback, GradientsMatchEager) {
  auto fn = [](const Tensor& x, const Tensor& w) { return ((x * w).tanh() + x / 3.0).sigmoid(); };
  for (const char* exec : {"aten", "aten_prims"}) {
    auto jfn = jit(fn, {.executors = {exec}});
    at::Tensor x = at::randn({4, 3}, at::kDouble).requires_grad_();
    at::Tensor w = at::randn({3}, at::kDouble).requires_grad_();
    Tensor out = jfn(x, w);
    at::Tensor g = at::randn({4, 3}, at::kDouble);
    out.backward(g);
    at::Tensor x2 = x.detach().clone().requires_grad_(), w2 = w.detach().clone().requires_grad_();
    at::sigmoid(at::tanh(x2 * w2) + x2 / 3.0).backward(g);
    EXPECT_TRUE(at::allclose(x.grad(), x2.grad())) << exec;
    EXPECT_TRUE(at::allclose(w.grad(), w2.grad())) << exec;
  }
}

}  // namespace
}  // namespace thunder
