// A submodule registered under two names (shared weights, applied twice):
// parameters() lists its tensors once, as torch does, so an optimizer steps
// them once; the jitted gradient sums both uses, as eager libtorch's does.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

struct Twice : nn::Module {
  nn::Linear shared{4, 4};
  Twice() {
    register_module("first", shared);
    register_module("second", shared);
  }
  Tensor forward(const Tensor& x) const { return shared(tanh(shared(x))).sum(); }
};

TEST(SharedModules, ParametersAreListedOnceAndTheGradientSumsBothUses) {
  at::manual_seed(0);
  Twice m;
  const auto named = m.named_parameters();
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].first, "first.weight");
  EXPECT_EQ(named[1].first, "first.bias");
  at::Tensor x = at::randn({3, 4});
  // Eager reference: the same computation in libtorch on copies.
  at::Tensor w = m.shared.weight.aten().detach().clone().requires_grad_();
  at::Tensor b = m.shared.bias.aten().detach().clone().requires_grad_();
  at::linear(at::tanh(at::linear(x, w, b)), w, b).sum().backward();
  auto jm = jit(m);
  jm(x).aten().backward();
  EXPECT_TRUE(at::allclose(m.shared.weight.aten().grad(), w.grad(), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(m.shared.bias.aten().grad(), b.grad(), 1e-5, 1e-6));
}

}  // namespace
}  // namespace thunder
