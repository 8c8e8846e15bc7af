// Whole models under jit: loss and every parameter gradient equal plain libtorch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include "char_gpt.h"
#include "model_grads.h"
#include "models.h"

namespace thunder {
namespace {

using test::expect_grads_match;

TEST(Models, MLPLossAndGradsMatchLibtorch) {
  at::manual_seed(0);
  models::MLP mlp(16, 64);
  for (auto& p : mlp.parameters()) p.set_data(p.data().to(at::kDouble));
  auto jmlp = jit(mlp);
  at::Tensor x = at::randn({8, 16}, at::kDouble);
  expect_grads_match(
      mlp, [&] { return jmlp(x).sum(); }, [&] { return mlp.reference(x).sum(); }, 1e-10, 1e-10);
}

TEST(Models, GPTBlockLossAndGradsMatchLibtorch) {
  at::manual_seed(0);
  models::GPTBlock gpt(/*vocab=*/50, /*C=*/32, /*heads=*/4);
  for (auto& p : gpt.parameters()) p.set_data(p.data().to(at::kDouble));
  auto jgpt = jit(gpt);
  at::Tensor idx = at::randint(0, 50, {2, 8}), targets = at::randint(0, 50, {2, 8});
  expect_grads_match(
      gpt, [&] { return jgpt(idx, targets); }, [&] { return gpt.reference(idx, targets); }, 1e-9,
      1e-9);
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
      1e-9, 1e-9);
}

}  // namespace
}  // namespace thunder
