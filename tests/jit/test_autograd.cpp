// The compiled backward: joint trace, split, and the libtorch autograd bridge.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

TEST(Autograd, BroadcastMulAddMatchesLibtorch) {
  auto fn = [](const Tensor& x, const Tensor& w) { return x * w + w - x; };
  auto jfn = jit(fn, {.arg_names = {"x", "w"}});
  at::Tensor x = at::randn({4, 3}, at::kDouble).requires_grad_();
  at::Tensor w = at::randn({3}, at::kDouble).requires_grad_();
  Tensor out = jfn(x, w);
  ASSERT_TRUE(out.aten().grad_fn() != nullptr);
  EXPECT_EQ(out.aten().grad_fn()->name(), "ThunderBackward");
  at::Tensor g = at::randn({4, 3}, at::kDouble);
  out.backward(g);
  at::Tensor x2 = x.detach().clone().requires_grad_(), w2 = w.detach().clone().requires_grad_();
  (x2 * w2 + w2 - x2).backward(g);
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));
  EXPECT_TRUE(at::allclose(w.grad(), w2.grad()));
  for (const auto& t : last_traces(jfn)) std::cout << t << "\n";
  for (const auto& t : last_backward_traces(jfn)) std::cout << t << "\n";
}

}  // namespace
}  // namespace thunder
