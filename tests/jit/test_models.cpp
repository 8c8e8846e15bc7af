// Whole models under jit: loss and every parameter gradient equal plain libtorch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include "char_gpt.h"
#include "models.h"

namespace thunder {
namespace {

template <typename M>
void expect_grads_match(M& model, const std::function<Tensor()>& jit_loss,
                        const std::function<at::Tensor()>& ref_loss, double tol) {
  Tensor loss = jit_loss();
  loss.backward();
  std::vector<at::Tensor> jit_grads;
  for (auto& p : model.parameters()) {
    jit_grads.push_back(p.grad().clone());
    p.mutable_grad() = at::Tensor();
  }
  at::Tensor ref = ref_loss();
  ref.backward();
  EXPECT_TRUE(at::allclose(loss.aten(), ref, tol, tol)) << loss << " vs " << ref;
  auto named = model.named_parameters();
  for (size_t i = 0; i < named.size(); ++i) {
    ASSERT_TRUE(jit_grads[i].defined()) << named[i].first;
    EXPECT_TRUE(at::allclose(jit_grads[i], named[i].second.grad(), tol, tol))
        << named[i].first << " max diff "
        << (jit_grads[i] - named[i].second.grad()).abs().max().template item<double>();
  }
}

TEST(Models, MLPLossAndGradsMatchLibtorch) {
  at::manual_seed(0);
  models::MLP mlp(16, 64);
  for (auto& p : mlp.parameters()) p.set_data(p.data().to(at::kDouble));
  auto jmlp = jit(mlp);
  at::Tensor x = at::randn({8, 16}, at::kDouble);
  expect_grads_match(
      mlp, [&] { return jmlp(x).sum(); }, [&] { return mlp.reference(x).sum(); }, 1e-10);
}

TEST(Models, GPTBlockLossAndGradsMatchLibtorch) {
  at::manual_seed(0);
  models::GPTBlock gpt(/*vocab=*/50, /*C=*/32, /*heads=*/4);
  for (auto& p : gpt.parameters()) p.set_data(p.data().to(at::kDouble));
  auto jgpt = jit(gpt);
  at::Tensor idx = at::randint(0, 50, {2, 8}), targets = at::randint(0, 50, {2, 8});
  expect_grads_match(
      gpt, [&] { return jgpt(idx, targets); }, [&] { return gpt.reference(idx, targets); }, 1e-9);
}

// The demo's model (two blocks, positions via arange, causal sdpa), small:
// jitted vs the same module run eagerly (thunder::Tensor eager = libtorch).
TEST(Models, CharGPTLossAndGradsMatchEager) {
  at::manual_seed(0);
  models::CharGPT gpt(/*vocab=*/20, /*context=*/8, /*C=*/16, /*heads=*/2, /*layers=*/2);
  for (auto& p : gpt.parameters()) p.set_data(p.data().to(at::kDouble));
  auto jgpt = jit(gpt);
  at::Tensor idx = at::randint(0, 20, {3, 8}), targets = at::randint(0, 20, {3, 8});
  expect_grads_match(
      gpt, [&] { return jgpt(idx, targets); }, [&] { return gpt.forward(idx, targets).aten(); },
      1e-9);
}

}  // namespace
}  // namespace thunder
