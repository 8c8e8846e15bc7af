// thunder::jit on torch::nn's attention modules as they are:
// MultiheadAttention and TransformerEncoderLayer against eager libtorch in
// float64 (values, every parameter's gradient, train and eval). Their forward
// asks `equal(query, key)` to detect self-attention; capture answers it for
// one tensor, by shape, or by value for two arguments (guarded), and the
// guard keeps a compiled "same tensor" answer from serving two overlapping
// views. Ops whose result shape
// depends on tensor data are refused by name.
#include <gtest/gtest.h>
#include <thunder/thunder.h>
#include <torch/torch.h>

#include "torch_char_gpt.h"
#include "torch_twins.h"
#include "trace_statements.h"

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
using test::expect_same_parameters;

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
  expect_same_parameters(*eager, *jitted, 1e-10);
  EXPECT_EQ(cache_misses(jm), 1);
  EXPECT_EQ(cache_hits(jm), 4);
  // Named by their path in the module, as for thunder modules.
  const std::string first = last_traces(jm).front().str();
  for (const char* name : {"t_wte_weight", "t_h_1_fc_out_bias", "t_lm_head_weight"})
    EXPECT_NE(first.find(name), std::string::npos) << name;
  // Each layer's hand-written attention ran as one fused attention.
  const std::vector<Trace> stages = last_traces(jm);
  const Trace& recognized = find_stage(stages, "Recognize attention");
  EXPECT_EQ(test_util::count_statements(recognized, "ltorch.scaled_dot_product_attention"), 2)
      << recognized;
}

// Cross-attention: `equal(query, key)` of two arguments of one shape is
// answered by value and guarded; a call whose query equals its key in value
// (eager takes the self-attention path) compiles its own entry. Float64
// against eager, with gradients.
struct CrossAttentionImpl : torch::nn::Module {
  CrossAttentionImpl()
      : attn(register_module(
            "attn", torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(4, 2)))) {}
  at::Tensor forward(const at::Tensor& q, const at::Tensor& kv) {
    return std::get<0>(attn->forward(q, kv, kv, /*key_padding_mask=*/{}, /*need_weights=*/false));
  }
  torch::nn::MultiheadAttention attn;
};
TORCH_MODULE(CrossAttention);

TEST(CaptureTransformer, CrossAttentionIsGuardedByValueAndMatchesEager) {
  torch::manual_seed(2);
  CrossAttention eager, jitted;
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  at::Tensor q = torch::randn({3, 2, 4}, torch::kDouble),
             kv = torch::randn({3, 2, 4}, torch::kDouble);
  at::Tensor qe = q.clone().requires_grad_(), qj = q.clone().requires_grad_();
  at::Tensor oe = eager(qe, kv), oj = jm(qj, kv);
  EXPECT_TRUE(at::allclose(oj, oe, 1e-12, 1e-12)) << (oj - oe).abs().max();
  oe.pow(2).sum().backward();
  oj.pow(2).sum().backward();
  expect_same_gradients(*eager, *jitted, 1e-10);
  EXPECT_TRUE(at::allclose(qj.grad(), qe.grad(), 1e-10, 1e-10));
  const std::string prologue = last_prologue_trace(jm).str();
  EXPECT_NE(prologue.find("prologue.check_equal(x0, x1, False)"), std::string::npos) << prologue;
  // Other values, still different: the same entry.
  at::Tensor q2 = torch::randn({3, 2, 4}, torch::kDouble).requires_grad_();
  EXPECT_TRUE(at::allclose(jm(q2, kv), eager(q2, kv), 1e-12, 1e-12));
  EXPECT_EQ(cache_misses(jm), 1);
  // A key equal to the query in value, another tensor object: eager's
  // self-attention path, in an entry of its own.
  at::Tensor same = q2.detach().clone();
  EXPECT_TRUE(at::allclose(jm(q2, same), eager(q2, same), 1e-12, 1e-12));
  EXPECT_EQ(cache_misses(jm), 2);
  EXPECT_NE(last_prologue_trace(jm).str().find("prologue.check_equal(x0, x1, True)"),
            std::string::npos)
      << last_prologue_trace(jm);
  jm(q2, kv);
  jm(q2, same);
  EXPECT_EQ(cache_misses(jm), 2);
  EXPECT_EQ(cache_hits(jm), 3);
  // examine knows the arguments too: the model is reported as supported.
  const ExamineReport report = examine(jitted, q2, kv);
  EXPECT_TRUE(report.all_supported()) << report;
  // Key and value of another length than the query: equal is false by shape.
  at::Tensor memory = torch::randn({5, 2, 4}, torch::kDouble);
  EXPECT_TRUE(at::allclose(jm(q2, memory), eager(q2, memory), 1e-12, 1e-12));
  EXPECT_EQ(last_prologue_trace(jm).str().find("check_equal"), std::string::npos)
      << last_prologue_trace(jm);
}

TEST(CaptureTransformer, EqualOfValuesThatAreNotArgumentsAsCalledIsRefused) {
  auto jf =
      jit([](const at::Tensor& a, const at::Tensor& b) { return at::equal(a * 2, b) ? a : b; });
  at::Tensor x = torch::randn({3});
  const std::string msg = expect_error([&] { jf(x, x * 2); });
  EXPECT_NE(msg.find("aten::equal"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not both arguments"), std::string::npos) << msg;
  const ExamineReport report = examine(
      [](const at::Tensor& a, const at::Tensor& b) { return at::equal(a * 2, b); }, x, x * 2);
  EXPECT_FALSE(report.all_supported()) << report;
  // An argument written before the comparison: a guard on the call's values
  // would test other data than eager did.
  auto written = jit([](at::Tensor a, const at::Tensor& b) {
    {
      at::NoGradGuard no_grad;
      a.add_(1);
    }
    return at::equal(a, b) ? a * 2 : b;
  });
  at::Tensor a = x.clone();
  const std::string why = expect_error([&] { written(a, x + 1); });
  EXPECT_NE(why.find("unwritten"), std::string::npos) << why;
  EXPECT_TRUE(at::equal(a, x));  // the failed capture's write was undone
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
  // their elements differ: the entry compiled for one tensor must not run;
  // their own entry compares them by value.
  at::Tensor base = torch::arange(5, torch::kFloat);
  at::Tensor a = base.narrow(0, 0, 4), b = base.narrow(0, 1, 4);
  EXPECT_TRUE(at::allclose(jf(a, b), a + b));
  EXPECT_EQ(cache_misses(jf), 2);
  EXPECT_NE(last_prologue_trace(jf).str().find("prologue.check_equal(x0, x1, False)"),
            std::string::npos)
      << last_prologue_trace(jf);
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
