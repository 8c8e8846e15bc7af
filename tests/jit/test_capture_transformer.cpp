// thunder::jit on torch::nn's attention modules as they are:
// MultiheadAttention and TransformerEncoderLayer against eager libtorch in
// float64 (values, every parameter's gradient, train and eval). Their forward
// asks `equal(query, key)` to detect self-attention; capture answers it for
// one tensor and refuses it for two, and the guard keeps a compiled "same
// tensor" answer from serving two overlapping views. Ops whose result shape
// depends on tensor data are refused by name.
#include <gtest/gtest.h>
#include <thunder/thunder.h>
#include <torch/torch.h>

#include "torch_char_gpt.h"
#include "torch_twins.h"

namespace thunder {
namespace {

// Self-attention with the attention weights returned too (need_weights).
struct SelfAttentionImpl : torch::nn::Module {
  SelfAttentionImpl(int64_t embed, int64_t heads)
      : attn(register_module("attn", torch::nn::MultiheadAttention(
                                         torch::nn::MultiheadAttentionOptions(embed, heads)))) {}
  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x) { return attn(x, x, x); }
  torch::nn::MultiheadAttention attn;
};
TORCH_MODULE(SelfAttention);

using test::copy_parameters;
using test::expect_same_gradients;

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected thunder::Error";
  return "";
}

TEST(CaptureTransformer, MultiheadSelfAttentionMatchesEagerWithGradients) {
  torch::manual_seed(0);
  SelfAttention eager(8, 2), jitted(8, 2);
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  at::Tensor x = torch::randn({5, 3, 8}, torch::kDouble);  // (sequence, batch, embed)
  at::Tensor xe = x.clone().requires_grad_(), xj = x.clone().requires_grad_();
  auto [oe, we] = eager(xe);
  auto [oj, wj] = jm(xj);
  EXPECT_TRUE(at::allclose(oj, oe, 1e-12, 1e-12)) << (oj - oe).abs().max();
  EXPECT_TRUE(at::allclose(wj, we, 1e-12, 1e-12)) << (wj - we).abs().max();
  (oe.pow(2).sum() + we.sum(-1).mean()).backward();
  (oj.pow(2).sum() + wj.sum(-1).mean()).backward();
  expect_same_gradients(*eager, *jitted, 1e-10);
  EXPECT_TRUE(at::allclose(xj.grad(), xe.grad(), 1e-10, 1e-10));
  // The self-attention test became `true` at trace time: no trace of it.
  const std::string traced = last_traces(jm).front().str();
  EXPECT_EQ(traced.find("equal"), std::string::npos) << traced;
  EXPECT_NE(traced.find("ltorch.linear"), std::string::npos) << traced;
  jm(xj);
  EXPECT_EQ(cache_misses(jm), 1);
  EXPECT_EQ(cache_hits(jm), 1);
}

TEST(CaptureTransformer, EncoderLayerTrainsLikeEagerAndEvalIsItsOwnEntry) {
  torch::manual_seed(1);
  auto options = torch::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0);
  torch::nn::TransformerEncoderLayer eager(options), jitted(options);
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  torch::optim::AdamW opt_e(eager->parameters(), torch::optim::AdamWOptions(1e-2));
  torch::optim::AdamW opt_j(jitted->parameters(), torch::optim::AdamWOptions(1e-2));
  at::Tensor x = torch::randn({6, 2, 8}, torch::kDouble);
  at::Tensor target = torch::randn({6, 2, 8}, torch::kDouble);
  for (int step = 0; step < 3; ++step) {
    opt_e.zero_grad();
    opt_j.zero_grad();
    at::Tensor le = (eager(x) - target).pow(2).mean();
    at::Tensor lj = (jm(x) - target).pow(2).mean();
    EXPECT_TRUE(at::allclose(lj, le, 1e-12, 1e-12)) << step << ": " << lj << " vs " << le;
    le.backward();
    lj.backward();
    expect_same_gradients(*eager, *jitted, 1e-10);
    opt_e.step();
    opt_j.step();
  }
  EXPECT_EQ(cache_misses(jm), 1);
  EXPECT_GT(compile_stats(jm).fusion_regions, 0);

  eager->eval();
  jitted->eval();
  at::Tensor ye, yj;
  {
    torch::NoGradGuard no_grad;
    ye = eager(x);
    yj = jm(x);
  }
  EXPECT_TRUE(at::allclose(yj, ye, 1e-12, 1e-12)) << (yj - ye).abs().max();
  EXPECT_EQ(cache_misses(jm), 2);
}

// The demo's plain-libtorch char-GPT, unmodified: five AdamW steps in float64
// give eager's losses and parameters.
TEST(CaptureTransformer, PlainLibtorchCharGPTTrainsLikeEager) {
  torch::manual_seed(3);
  models::TorchCharGPT eager(11, 8, 16, 2, 2), jitted(11, 8, 16, 2, 2);
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  torch::optim::AdamW opt_e(eager->parameters(), torch::optim::AdamWOptions(3e-3));
  torch::optim::AdamW opt_j(jitted->parameters(), torch::optim::AdamWOptions(3e-3));
  for (int step = 0; step < 5; ++step) {
    at::Tensor idx = torch::randint(11, {3, 8}, torch::kLong);
    at::Tensor targets = torch::randint(11, {3, 8}, torch::kLong);
    opt_e.zero_grad();
    opt_j.zero_grad();
    at::Tensor le = eager(idx, targets), lj = jm(idx, targets);
    EXPECT_TRUE(at::allclose(lj, le, 1e-12, 1e-12)) << step << ": " << lj << " vs " << le;
    le.backward();
    lj.backward();
    expect_same_gradients(*eager, *jitted, 1e-10);
    opt_e.step();
    opt_j.step();
  }
  auto pe = eager->parameters(), pj = jitted->parameters();
  for (size_t i = 0; i < pe.size(); ++i)
    EXPECT_TRUE(at::allclose(pj[i], pe[i], 1e-10, 1e-10)) << "parameter " << i;
  EXPECT_EQ(cache_misses(jm), 1);
  EXPECT_EQ(cache_hits(jm), 4);
  // Named by their path in the module, as for thunder modules.
  const std::string first = last_traces(jm).front().str();
  for (const char* name : {"t_wte_weight", "t_h_1_fc_out_bias", "t_lm_head_weight"})
    EXPECT_NE(first.find(name), std::string::npos) << name;
}

TEST(CaptureTransformer, CrossAttentionIsRefusedByNameAndTheCallableStaysUsable) {
  torch::manual_seed(2);
  torch::nn::MultiheadAttention attn(torch::nn::MultiheadAttentionOptions(4, 1));
  auto jf =
      jit([&](const at::Tensor& q, const at::Tensor& kv) { return std::get<0>(attn(q, kv, kv)); });
  at::Tensor q = torch::randn({3, 1, 4}), kv = torch::randn({3, 1, 4});
  const std::string msg = expect_error([&] { jf(q, kv); });
  EXPECT_NE(msg.find("aten::equal"), std::string::npos) << msg;
  EXPECT_NE(msg.find("two different tensors"), std::string::npos) << msg;
  // The same callable with one tensor (self-attention) compiles and is right.
  at::Tensor want = std::get<0>(attn(q, q, q));
  EXPECT_TRUE(at::allclose(jf(q, q), want, 1e-5, 1e-6));
}

TEST(CaptureTransformer, SameTensorAndOverlappingViewsAreDifferentEntries) {
  auto jf =
      jit([](const at::Tensor& a, const at::Tensor& b) { return at::equal(a, b) ? a * 2 : a + b; });
  at::Tensor x = torch::randn({4});
  EXPECT_TRUE(at::allclose(jf(x, x), x * 2));
  // The same view through another tensor object: same elements, same entry.
  EXPECT_TRUE(at::allclose(jf(x, x.view({4})), x * 2));
  EXPECT_EQ(cache_misses(jf), 1);
  EXPECT_EQ(cache_hits(jf), 1);
  // Two overlapping views of one buffer share storage as (x, x) does, but
  // their elements differ: the entry compiled for one tensor must not run.
  at::Tensor base = torch::arange(5, torch::kFloat);
  const std::string msg = expect_error([&] { jf(base.narrow(0, 0, 4), base.narrow(0, 1, 4)); });
  EXPECT_NE(msg.find("aten::equal"), std::string::npos) << msg;
  EXPECT_EQ(cache_misses(jf), 2);
  // The prologue states the guard.
  jf(x, x);
  const std::string prologue = last_prologue_trace(jf).str();
  EXPECT_NE(prologue.find("prologue.check_same_view"), std::string::npos) << prologue;
}

TEST(CaptureTransformer, OpsWithDataDependentShapesAreRefusedByName) {
  at::Tensor x = torch::tensor({0.0, 1.5, 0.0, -2.0});
  const std::vector<std::pair<std::string, std::function<at::Tensor(const at::Tensor&)>>> cases = {
      {"aten::nonzero", [](const at::Tensor& t) { return t.nonzero(); }},
      {"aten::masked_select", [](const at::Tensor& t) { return t.masked_select(t > 0); }},
      {"aten::_unique2", [](const at::Tensor& t) { return std::get<0>(at::_unique2(t)); }},
  };
  for (const auto& [op, fn] : cases) {
    auto jf = jit([fn = fn](const at::Tensor& t) { return fn(t); });
    const std::string msg = expect_error([&] { jf(x); });
    EXPECT_NE(msg.find(op), std::string::npos) << msg;
    EXPECT_NE(msg.find("depends on tensor data"), std::string::npos) << msg;
    // A refused call leaves no entry: the next call tries again, and fails again.
    expect_error([&] { jf(x); });
    EXPECT_EQ(cache_misses(jf), 2) << op;
  }
}

}  // namespace
}  // namespace thunder
