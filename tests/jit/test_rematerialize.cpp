// Min-cut rematerialization under jit: what the forward saves for the
// backward, the policies that steer it, and gradients equal to libtorch's.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/lang/ltorch.h>
#include <thunder/runtime/memory_meter.h>
#include <thunder/thunder.h>

#include "models.h"

namespace thunder {
namespace {

namespace F = nn::functional;

int64_t total_bytes(const std::vector<TensorInfo>& saved) {
  int64_t n = 0;
  for (const TensorInfo& s : saved) n += s.bytes;
  return n;
}

// "name:dtype[shape]" for each saved value, in order.
std::string describe(const std::vector<TensorInfo>& saved) {
  std::string s;
  for (const TensorInfo& i : saved) {
    if (!s.empty()) s += ", ";
    s += i.name + ":" + std::string(c10::toString(i.dtype)) + "[";
    for (size_t k = 0; k < i.shape.size(); ++k) {
      if (k) s += ",";
      s += std::to_string(i.shape[k]);
    }
    s += "]";
  }
  return s;
}

// Bytes the forward leaves alive for the backward besides its output (as
// bench/thunder_bench.cpp measures them, for eager and jit alike).
int64_t live_saved_bytes(const std::function<at::Tensor()>& forward) {
  MemoryMeter::install();
  int64_t before = MemoryMeter::live_bytes();
  at::Tensor out = forward();
  int64_t saved = MemoryMeter::live_bytes() - before - out.nbytes();
  out.backward(at::ones_like(out));
  return saved;
}

TEST(Rematerialize, ElementwiseChainRecomputesFromTheInput) {
  auto fn = [](const Tensor& x) { return (x.sin() * x.cos() + x.exp()).sum(); };
  at::Tensor x = at::randn({64, 32}, at::kDouble);
  at::Tensor ref = x.clone().requires_grad_();
  (ref.sin() * ref.cos() + ref.exp()).sum().backward();

  std::vector<at::Tensor> grads;
  std::vector<std::vector<TensorInfo>> saved;
  for (bool remat : {false, true}) {
    auto jfn = jit(fn, {.rematerialize = remat, .arg_names = {"x"}});
    at::Tensor xr = x.clone().requires_grad_();
    jfn(xr).backward();
    grads.push_back(xr.grad());
    saved.push_back(last_saved_for_backward(jfn));
    EXPECT_TRUE(at::allclose(xr.grad(), ref.grad(), 1e-12, 1e-12)) << remat;
  }
  EXPECT_TRUE(at::equal(grads[0], grads[1]));  // the same kernels, recomputed
  // Without rematerialization cos, sin and exp of x are saved (and x, for
  // the backward's own cos and sin); with it only x.
  EXPECT_EQ(describe(saved[0]),
            "t9:Double[64,32], t14:Double[64,32], x:Double[64,32], t6:Double[64,32]");
  EXPECT_EQ(describe(saved[1]), "x:Double[64,32]");
  EXPECT_EQ(total_bytes(saved[1]), 64 * 32 * 8);
  EXPECT_LT(total_bytes(saved[1]), total_bytes(saved[0]));
}

TEST(Rematerialize, IsItsOwnStageAndTheBackwardStatesTheSavedBytes) {
  auto jfn = jit([](const Tensor& x) { return (x.sin() * 2.0).exp(); }, {.arg_names = {"x"}});
  at::Tensor x = at::randn({8}).requires_grad_();
  jfn(x).backward(at::ones({8}));
  auto names = [](const std::vector<Trace>& traces) {
    std::vector<std::string> out;
    for (const Trace& t : traces) out.emplace_back(stage_name(t));
    return out;
  };
  const std::vector<std::string> lowering = {
      "Transform for execution", "Matmul epilogues",
      "Flatten to prims",        "CSE on prims",
      "Fusion regions",          "Rematerialization between regions",
      "DCE after fusion",        "Fusion kernels",
      "Delete Last Used"};
  std::vector<std::string> fwd = {"Tracing", "Dead Code Elimination", "Autodiff",
                                  "Split forward and backward", "Rematerialization"};
  fwd.insert(fwd.end(), lowering.begin(), lowering.end());
  EXPECT_EQ(names(last_traces(jfn)), fwd);
  std::vector<std::string> bwd_names = {"Split forward and backward", "Rematerialization",
                                        "Common Subexpression Elimination"};
  bwd_names.insert(bwd_names.end(), lowering.begin(), lowering.end());
  auto bwd = last_backward_traces(jfn);
  EXPECT_EQ(names(bwd), bwd_names);
  // Every pass is timed, the backward's too.
  std::vector<std::string> timed;
  for (const auto& [name, ms] : compile_stats(jfn).pass_ms) timed.push_back(name);
  // Split and rematerialization make both sides at once (timed once); the
  // backward is lowered right after.
  std::vector<std::string> want(fwd.begin(), fwd.begin() + 5);
  for (size_t i = 2; i < bwd_names.size(); ++i) want.push_back(bwd_names[i] + " (backward)");
  want.insert(want.end(), lowering.begin(), lowering.end());
  EXPECT_EQ(timed, want);
  std::string split = find_stage(bwd, "Split forward and backward").str();
  EXPECT_NE(split.find("# saved for backward: 64 bytes in 2 values\n"), std::string::npos) << split;
  std::string remat = find_stage(bwd, "Rematerialization").str();
  EXPECT_NE(remat.find("# saved for backward: 32 bytes in 1 values\n"), std::string::npos) << remat;
  std::string last = bwd.back().str();
  EXPECT_NE(last.find("# saved for backward: 32 bytes in 1 values\n"), std::string::npos) << last;
  // exp's output is recomputed from x in the backward: sin, mul, exp.
  EXPECT_NE(last.find("t10 = prims.exp(t7)"), std::string::npos) << last;
  EXPECT_EQ(describe(last_saved_for_backward(jfn)), "x:Float[8]");
}

TEST(Rematerialize, MatmulsAndReductionsAreSavedNotRecomputed) {
  // The matmul's output feeds an elementwise op whose backward reads it; the
  // matmul is never recomputed, so its output is what is saved.
  auto fn = [](const Tensor& x, const Tensor& w) { return x.matmul(w).tanh().sum(); };
  auto jfn = jit(fn, {.arg_names = {"x", "w"}});
  at::Tensor x = at::randn({16, 8}, at::kDouble).requires_grad_();
  at::Tensor w = at::randn({8, 4}, at::kDouble).requires_grad_();
  jfn(x, w).backward();
  at::Tensor x2 = x.detach().clone().requires_grad_(), w2 = w.detach().clone().requires_grad_();
  x2.matmul(w2).tanh().sum().backward();
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad(), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(w.grad(), w2.grad(), 1e-12, 1e-12));
  std::string bwd = last_backward_traces(jfn).back().str();
  EXPECT_EQ(bwd.find("matmul(x, w)"), std::string::npos) << bwd;
  // tanh's backward reads tanh's output. It is saved: the matmul is never
  // recomputed, and a tie with the matmul's output goes to the later value.
  EXPECT_EQ(describe(last_saved_for_backward(jfn)),
            "x:Double[16,8], w:Double[8,4], t9:Double[16,4]");
  // The reduction's small output is saved, never recomputed; exp's output is
  // recomputed from x and it. (t15, amax's keepdim broadcast, is saved too:
  // statements decomposed from a reduction composite count as reductions.)
  auto red = jit([](const Tensor& x) { return (x - x.amax({1}, true)).exp().sum(); },
                 {.arg_names = {"x"}});
  at::Tensor y = at::randn({8, 4}, at::kDouble).requires_grad_();
  red(y).backward();
  at::Tensor y2 = y.detach().clone().requires_grad_();
  (y2 - y2.amax({1}, true)).exp().sum().backward();
  EXPECT_TRUE(at::allclose(y.grad(), y2.grad(), 1e-12, 1e-12));
  EXPECT_EQ(describe(last_saved_for_backward(red)), "x:Double[8,4], t6:Double[8], t15:Double[8,1]");
  std::string rbwd = last_backward_traces(red).back().str();
  EXPECT_EQ(rbwd.find("amax("), std::string::npos) << rbwd;
}

template <typename M>
void expect_grads_equal(M& model, const std::function<at::Tensor()>& jit_loss,
                        const std::function<at::Tensor()>& ref_loss, double tol) {
  jit_loss().backward();
  std::vector<at::Tensor> jit_grads;
  for (auto& p : model.parameters()) {
    jit_grads.push_back(p.grad().clone());
    p.mutable_grad() = at::Tensor();
  }
  ref_loss().backward();
  auto named = model.named_parameters();
  for (size_t i = 0; i < named.size(); ++i) {
    EXPECT_TRUE(at::allclose(jit_grads[i], named[i].second.grad(), tol, tol)) << named[i].first;
    named[i].second.mutable_grad() = at::Tensor();
  }
}

TEST(Rematerialize, GPTBlockSavesNoMoreThanEagerAndGradsMatch) {
  at::manual_seed(0);
  models::GPTBlock gpt(/*vocab=*/64, /*C=*/32, /*heads=*/4);
  for (auto& p : gpt.parameters()) p.set_data(p.data().to(at::kDouble));
  at::Tensor idx = at::randint(0, 64, {2, 16}), targets = at::randint(0, 64, {2, 16});
  auto jon = jit(gpt);
  auto joff = jit(gpt, {.rematerialize = false});
  expect_grads_equal(
      gpt, [&] { return jon(idx, targets).aten(); }, [&] { return gpt.reference(idx, targets); },
      1e-9);
  expect_grads_equal(
      gpt, [&] { return joff(idx, targets).aten(); }, [&] { return gpt.reference(idx, targets); },
      1e-9);
  int64_t eager = live_saved_bytes([&] { return gpt.reference(idx, targets); });
  int64_t on = live_saved_bytes([&] { return jon(idx, targets).aten(); });
  int64_t off = live_saved_bytes([&] { return joff(idx, targets).aten(); });
  for (auto& p : gpt.parameters()) p.mutable_grad() = at::Tensor();
  std::cout << "GPT block saved bytes: eager " << eager << ", jit " << on << " (remat off " << off
            << ")\n";
  EXPECT_LE(on, eager);
  EXPECT_LT(total_bytes(last_saved_for_backward(jon)), total_bytes(last_saved_for_backward(joff)));
}

TEST(Rematerialize, CheckpointRecomputesTheRegion) {
  // The region's matmul, gelu and scale are recomputed in the backward; its
  // inputs and output are the only region values the backward still sees.
  auto block = [](const Tensor& x, const Tensor& w) { return F::gelu(x.matmul(w)) * 0.5; };
  auto plain = [&](const Tensor& x, const Tensor& w, const Tensor& v) {
    return block(x, w).matmul(v).sum();
  };
  auto ckpt = [&](const Tensor& x, const Tensor& w, const Tensor& v) {
    return checkpoint(block, x, w).matmul(v).sum();
  };
  at::Tensor x = at::randn({32, 16}, at::kDouble), w = at::randn({16, 64}, at::kDouble);
  at::Tensor v = at::randn({64, 8}, at::kDouble);
  std::vector<at::Tensor> ref = {w.clone().requires_grad_(), v.clone().requires_grad_()};
  (at::gelu(x.matmul(ref[0])) * 0.5).matmul(ref[1]).sum().backward();
  // Eagerly checkpoint only calls the function.
  EXPECT_TRUE(
      at::allclose(checkpoint(block, Tensor(x), Tensor(w)).aten(), at::gelu(x.matmul(w)) * 0.5));

  auto jplain = jit(plain, {.arg_names = {"x", "w", "v"}});
  auto jckpt = jit(ckpt, {.arg_names = {"x", "w", "v"}});
  std::vector<std::vector<TensorInfo>> saved;
  auto run = [&](auto& j) {
    at::Tensor w2 = w.clone().requires_grad_(), v2 = v.clone().requires_grad_();
    j(x, w2, v2).backward();
    EXPECT_TRUE(at::allclose(w2.grad(), ref[0].grad(), 1e-12, 1e-12));
    EXPECT_TRUE(at::allclose(v2.grad(), ref[1].grad(), 1e-12, 1e-12));
    saved.push_back(last_saved_for_backward(j));
  };
  run(jplain);
  run(jckpt);
  // Without checkpointing the matmul output is saved (gelu's backward reads
  // it, and gelu and the scale are recomputed from it); with it, w instead.
  EXPECT_EQ(describe(saved[0]), "x:Double[32,16], v:Double[64,8], t9:Double[32,64]");
  EXPECT_EQ(describe(saved[1]), "x:Double[32,16], w:Double[16,64], v:Double[64,8]");
  EXPECT_LT(total_bytes(saved[1]), total_bytes(saved[0]));
  std::string bwd = last_backward_traces(jckpt).back().str();
  EXPECT_NE(bwd.find("t9 = prims.matmul(x, w)"), std::string::npos) << bwd;
}

TEST(Rematerialize, DontRecomputeTagKeepsACompositesValueSaved) {
  // log1p(x) * w with only w requiring grad: the backward reads log1p(x),
  // normally recomputed from x; tagged, log1p's value is saved instead.
  auto fn = [](const Tensor& x, const Tensor& w) { return (x.log1p() * w).sum(); };
  at::Tensor x = at::rand({16, 16}), w = at::randn({16, 16});
  auto before = jit(fn, {.arg_names = {"x", "w"}});
  before(x, w.clone().requires_grad_()).backward();
  EXPECT_EQ(describe(last_saved_for_backward(before)), "x:Float[16,16]");

  // add_tags changes the process-wide registry: scoped, the old tags are back after the test.
  auto tagged = scoped_add_tags("ltorch.log1p", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
  auto after = jit(fn, {.arg_names = {"x", "w"}});
  at::Tensor w2 = w.clone().requires_grad_();
  after(x, w2).backward();
  EXPECT_EQ(describe(last_saved_for_backward(after)), "t0:Float[16,16]");
  EXPECT_TRUE(at::allclose(w2.grad(), x.log1p()));
  std::string bwd = last_backward_traces(after).back().str();
  EXPECT_EQ(bwd.find("log1p"), std::string::npos) << bwd;
}

TEST(Rematerialize, RecomputeOpTagOverridesTheCostRules) {
  // A user-tagged reduction is recomputed (its input is saved instead).
  auto tagged = scoped_add_tags("ltorch.amax", {OpTag::RECOMPUTE_IN_BACKWARD});
  auto fn = [](const Tensor& x) { return (x - x.amax({1}, true)).exp().sum(); };
  auto jfn = jit(fn, {.arg_names = {"x"}});
  at::Tensor x = at::randn({8, 4}, at::kDouble).requires_grad_();
  jfn(x).backward();
  at::Tensor x2 = x.detach().clone().requires_grad_();
  (x2 - x2.amax({1}, true)).exp().sum().backward();
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad(), 1e-12, 1e-12));
  EXPECT_EQ(describe(last_saved_for_backward(jfn)), "x:Double[8,4]");
  std::string bwd = last_backward_traces(jfn).back().str();
  EXPECT_NE(bwd.find("amax"), std::string::npos) << bwd;
}

// With libtorch's stateful generator (disable_replace_uniform) the draw cannot
// be replayed: the mask is saved, as 1 byte per element.
TEST(Rematerialize, DropoutSavesTheBoolMaskNeverTheUniformValues) {
  auto fn = [](const Tensor& x) { return F::dropout(x.sin(), 0.5, true).sum(); };
  auto jfn = jit(fn, {.disable_replace_uniform = true, .arg_names = {"x"}});
  at::Tensor x = at::randn({128, 32}, at::kDouble).requires_grad_();
  Tensor out = jfn(x);
  out.backward();
  auto saved = last_saved_for_backward(jfn);
  EXPECT_EQ(describe(saved), "x:Double[128,32], t12:Bool[128,32]");
  EXPECT_EQ(total_bytes(saved), 128 * 32 * 8 + 128 * 32);
  // The gradient is cos(x) times the scaled keep mask the forward drew.
  std::string bwd = last_backward_traces(jfn).back().str();
  EXPECT_EQ(bwd.find("uniform"), std::string::npos) << bwd;
  at::Tensor kept = x.grad() != 0;
  EXPECT_TRUE(at::allclose(x.grad(), at::cos(x.detach()) * kept * 2.0, 1e-12, 1e-12));
  EXPECT_NEAR(kept.to(at::kDouble).mean().item<double>(), 0.5, 0.05);
  // Checkpointed, sin is recomputed; the draw is not, and the mask is still
  // what is saved.
  auto region = [](const Tensor& x) { return F::dropout(x.sin(), 0.5, true) * 2.0; };
  auto jckpt = jit([&](const Tensor& x) { return checkpoint(region, x).sum(); },
                   {.disable_replace_uniform = true, .arg_names = {"x"}});
  at::Tensor x2 = x.detach().clone().requires_grad_();
  jckpt(x2).backward();
  EXPECT_EQ(describe(last_saved_for_backward(jckpt)), "x:Double[128,32], t13:Bool[128,32]");
  at::Tensor kept2 = x2.grad() != 0;
  EXPECT_TRUE(at::allclose(x2.grad(), at::cos(x.detach()) * kept2 * 4.0, 1e-12, 1e-12));
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// Issue 4's dropout outcomes: p = 0.9 on 1024x1024, forward and backward,
// under each policy. The backward's mask is always the forward's.
TEST(Rematerialize, DropoutPoliciesOn1024x1024) {
  constexpr int64_t n = 1024;
  auto fn = [](const Tensor& x) { return F::dropout(x, 0.9, true); };
  at::Tensor g = at::randn({n, n}).abs() + 0.5;
  auto run = [&](JitOptions o) {
    auto jfn = jit(fn, o);
    at::Tensor x = (at::rand({n, n}) + 0.5).requires_grad_();  // no zeros
    at::Tensor out = jfn(x).aten();
    out.backward(g);
    at::Tensor kept = out.detach() != 0;
    EXPECT_TRUE(at::equal(x.grad() != 0, kept));
    EXPECT_TRUE(at::allclose(x.grad(), g * kept * 10.0f, 1e-5, 1e-5));
    // Binomial(2^20, 0.1): sd of the fraction ~3e-4; 0.005 is ~17 sd.
    EXPECT_NEAR(kept.to(at::kDouble).mean().item<double>(), 0.1, 0.005);
    return std::make_pair(last_saved_for_backward(jfn), last_backward_traces(jfn).back().str());
  };
  auto big = [&](const std::vector<TensorInfo>& saved) {
    std::vector<std::string> out;
    for (const TensorInfo& s : saved)
      if (at::IntArrayRef(s.shape) == at::IntArrayRef({n, n}))
        out.push_back(std::string(c10::toString(s.dtype)));
    return out;
  };
  {  // default: seed and offset are saved, the mask is recomputed
    auto [saved, bwd] = run({});
    EXPECT_TRUE(big(saved).empty());
    EXPECT_EQ(total_bytes(saved), 16);
    EXPECT_NE(bwd.find("prims.uniform_philox("), std::string::npos) << bwd;
  }
  {  // libtorch's generator: the bool mask is saved, never the float draws
    auto [saved, bwd] = run({.disable_replace_uniform = true});
    EXPECT_EQ(big(saved), std::vector<std::string>{"Bool"});
    EXPECT_EQ(bwd.find("uniform"), std::string::npos) << bwd;
  }
  {  // DONT_RECOMPUTE_IN_BACKWARD on dropout: mask saved, no draw in the backward
    auto tagged = scoped_add_tags("ltorch.dropout", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
    auto [saved, bwd] = run({});
    EXPECT_EQ(big(saved), std::vector<std::string>{"Bool"});
    EXPECT_EQ(bwd.find("uniform"), std::string::npos) << bwd;
    EXPECT_EQ(bwd.find("rng_state"), std::string::npos) << bwd;
  }
}

}  // namespace
}  // namespace thunder
