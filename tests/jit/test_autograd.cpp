// The compiled backward: joint trace, split, and the libtorch autograd bridge.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/runtime/memory_meter.h>
#include <thunder/thunder.h>
#include <torch/csrc/autograd/function.h>

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

namespace thunder {
namespace {

TEST(Autograd, NoGradRegionIsAConstantForTheGradient) {
  auto fn = [](const Tensor& x) {
    Tensor y;
    {
      NoGradGuard g;
      y = x * thunder::ones({3});
    }
    return x + y;
  };
  auto jfn = jit(fn, {.arg_names = {"x"}});
  at::Tensor x = at::randn({3}).requires_grad_();
  Tensor out = jfn(x);
  out.backward(at::ones({3}));
  EXPECT_TRUE(at::equal(x.grad(), at::ones({3})));
  // The cotangent passes straight through: no multiplication in the backward.
  Trace bwd = last_backward_traces(jfn).back();
  EXPECT_EQ(stage_name(bwd), "Delete Last Used");
  bwd.provenance.clear();
  EXPECT_EQ(bwd.str(),
            "# saved for backward: 0 bytes in 0 values\n"
            "def backward(g_t3):\n"
            "  # g_t3: \"cpu f32[3]\"\n"
            "  return [g_t3]\n");
  EXPECT_TRUE(last_saved_for_backward(jfn).empty());
  std::string fwd = last_traces(jfn).front().str();
  EXPECT_NE(fwd.find("ltorch.mul"), std::string::npos) << fwd;
}

TEST(Autograd, GradModeIsPartOfTheCacheKey) {
  auto jfn = jit([](const Tensor& x, const Tensor& w) { return x * w; });
  at::Tensor x = at::randn({2, 2}), w = at::randn({2, 2}).requires_grad_();
  Tensor a = jfn(x, w);
  EXPECT_TRUE(a.aten().requires_grad());
  EXPECT_FALSE(last_saved_for_backward(jfn).empty());
  {
    NoGradGuard g;
    Tensor b = jfn(x, w);  // a forward-only program, nothing saved
    EXPECT_FALSE(b.aten().requires_grad());
    EXPECT_TRUE(last_saved_for_backward(jfn).empty());
    EXPECT_TRUE(last_backward_traces(jfn).empty());
  }
  EXPECT_TRUE(at::GradMode::is_enabled());
  jfn(x, w);
  EXPECT_EQ(cache_misses(jfn), 2);
  EXPECT_EQ(cache_hits(jfn), 1);
}

TEST(Autograd, GradModeIsRestoredWhenTheFunctionThrows) {
  auto jfn = jit([](const Tensor& x) {
    NoGradGuard g;
    return x.reshape({7});  // 6 elements: throws while tracing
  });
  EXPECT_THROW(jfn(at::randn({2, 3}).requires_grad_()), Error);
  EXPECT_TRUE(at::GradMode::is_enabled());
}

TEST(Autograd, SecondBackwardIsAClearError) {
  auto jfn = jit([](const Tensor& x) { return x * x; });
  at::Tensor x = at::randn({3}).requires_grad_();
  Tensor out = jfn(x);
  out.backward(at::ones({3}));
  EXPECT_TRUE(at::allclose(x.grad(), 2 * x.detach()));
  try {
    out.backward(at::ones({3}));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("second time"), std::string::npos) << e.what();
  }
}

TEST(Autograd, SavedTensorsAreReleasedByTheBackward) {
  // exp saves its output, an intermediate the forward does not return: the
  // backward must free it. (Saved inputs would prove nothing: they stay alive;
  // hence no rematerialization, which would recompute exp from x.)
  MemoryMeter::install();
  const int64_t bytes = 256 * 256 * 4;
  auto jfn = jit([](const Tensor& x) { return (x * 2.0).exp() * 3.0; }, {.rematerialize = false});
  at::Tensor x = at::randn({256, 256}).requires_grad_();
  jfn(x).backward(at::ones({256, 256}));  // warm: compile, x.grad allocated
  auto saved = last_saved_for_backward(jfn);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].bytes, bytes);
  int64_t before = MemoryMeter::live_bytes();
  Tensor out = jfn(x);
  EXPECT_EQ(MemoryMeter::live_bytes() - before, 2 * bytes);  // the output and exp's output
  out.backward(at::ones({256, 256}));
  EXPECT_EQ(MemoryMeter::live_bytes() - before, bytes);  // only the output is left
}

TEST(Autograd, IntegerOutputsAndUnusedInputsGetNoGradient) {
  auto jfn = jit(
      [](const Tensor& x, const Tensor& unused) { return std::make_tuple(x * 2.0, x.argmax()); });
  at::Tensor x = at::randn({4}).requires_grad_(), u = at::randn({4}).requires_grad_();
  auto [y, idx] = jfn(x, u);
  EXPECT_TRUE(y.aten().requires_grad());
  EXPECT_FALSE(idx.aten().requires_grad());
  EXPECT_EQ(idx.aten().grad_fn(), nullptr);
  y.backward(at::ones({4}));
  EXPECT_TRUE(at::allclose(x.grad(), at::full({4}, 2.0)));
  EXPECT_FALSE(u.grad().defined());
}

TEST(Autograd, ModuleParametersAccumulateGradients) {
  nn::Linear fc(3, 2);
  auto jfc = jit(fc);
  at::Tensor x = at::randn({5, 3});
  jfc(x).sum().backward();
  jfc(x).sum().backward();  // accumulates like eager
  at::Tensor w = fc.weight.aten().detach().clone().requires_grad_();
  at::Tensor b = fc.bias.aten().detach().clone().requires_grad_();
  (at::linear(x, w, b).sum() * 2).backward();
  EXPECT_TRUE(at::allclose(fc.weight.grad().aten(), w.grad()));
  EXPECT_TRUE(at::allclose(fc.bias.grad().aten(), b.grad()));
}

}  // namespace
}  // namespace thunder

#include <torch/csrc/autograd/autograd.h>

namespace thunder {
namespace {

TEST(Autograd, TorchAutogradGradWorksThroughJittedCalls) {
  auto jfn = jit([](const Tensor& x) { return (x * x).sum(); });
  at::Tensor x = at::randn({5}, at::kDouble).requires_grad_();
  Tensor y = jfn(x);
  auto grads = torch::autograd::grad({y.aten()}, {x});
  EXPECT_TRUE(at::allclose(grads[0], 2 * x.detach()));
  EXPECT_FALSE(x.grad().defined());  // grad() does not accumulate
}

TEST(Autograd, CompositeRulesSaveLessThanTheDecomposition) {
  // gelu's rule saves its input only; its decomposition would save several intermediates.
  // aten only: the check reads the composite in the trace (cpu_fuser would fuse its prims).
  auto jfn =
      jit([](const Tensor& x) { return nn::functional::gelu(x, "tanh"); }, {.executors = {"aten"}});
  at::Tensor x = at::randn({64, 64}).requires_grad_();
  Tensor y = jfn(x);
  auto saved = last_saved_for_backward(jfn);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].name, "x0");
  y.backward(at::ones({64, 64}));
  at::Tensor x2 = x.detach().clone().requires_grad_();
  at::gelu(x2, "tanh").backward(at::ones({64, 64}));
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad(), 1e-5, 1e-6));
  std::string fwd = last_traces(jfn).back().str();
  EXPECT_NE(fwd.find("ltorch.gelu(x0, 'tanh')"), std::string::npos) << fwd;
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

TEST(Autograd, UserGradRuleReplacesTheBuiltInOne) {
  // silu has no built-in composite rule (its decomposition is differentiated);
  // a user rule makes the forward one ltorch.silu and the backward its formula.
  auto rule =
      scoped_register_grad("ltorch.silu", [](GradContext& g, const CallArgs& a) -> TensorList {
        Tensor x = a.tensor(0);
        Tensor out = thunder::silu(x);
        Tensor s = x.sigmoid();
        g.put_grad(x, g.get_grad(out) * s * (1 + x * (1 - s)));
        return {out};
      });
  // aten only: the checks read composites in the traces (cpu_fuser would fuse their prims).
  auto jfn = jit([](const Tensor& x) { return silu(x); }, {.executors = {"aten"}});
  at::Tensor x = at::randn({6}, at::kDouble).requires_grad_();
  jfn(x).backward(at::ones({6}, at::kDouble));
  at::Tensor x2 = x.detach().clone().requires_grad_();
  at::silu(x2).backward(at::ones({6}, at::kDouble));
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));
  std::string fwd = last_traces(jfn).back().str();
  EXPECT_NE(fwd.find("ltorch.silu(x0)"), std::string::npos) << fwd;
  std::string bwd = last_backward_traces(jfn).front().str();
  EXPECT_NE(bwd.find("ltorch.sigmoid(x0)"), std::string::npos) << bwd;
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

TEST(Autograd, BackwardHelpersMatchTheirDecompositions) {
  // ATen runs ltorch.gelu_backward & co. with fused kernels; "aten_prims" runs
  // their decompositions. Both must give libtorch's gradients.
  auto fn = [](const Tensor& x) {
    namespace F = nn::functional;
    return F::log_softmax(F::softmax(F::gelu(x, "tanh") + F::gelu(x), -1), 0);
  };
  at::Tensor g = at::randn({4, 5}, at::kDouble);
  at::Tensor ref_x = at::randn({4, 5}, at::kDouble).requires_grad_();
  at::log_softmax(at::softmax(at::gelu(ref_x, "tanh") + at::gelu(ref_x), -1), 0).backward(g);
  for (const char* exec : {"aten", "aten_prims"}) {
    auto jfn = jit(fn, {.executors = {exec}});
    at::Tensor x = ref_x.detach().clone().requires_grad_();
    jfn(x).backward(g);
    EXPECT_TRUE(at::allclose(x.grad(), ref_x.grad(), 1e-10, 1e-10)) << exec;
    std::string bwd = last_backward_traces(jfn).front().str();  // before claiming
    EXPECT_NE(bwd.find("ltorch.gelu_backward("), std::string::npos) << bwd;
  }
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

TEST(Autograd, EnableGradInsideNoGradRegion) {
  auto fn = [](const Tensor& x) {
    Tensor y;
    {
      NoGradGuard off;
      Tensor c = x * 3.0;  // a constant for the gradient
      {
        EnableGradGuard on;
        y = x * x + c;  // differentiable again
      }
    }
    return y;
  };
  auto jfn = jit(fn);
  at::Tensor x = at::randn({4}, at::kDouble).requires_grad_();
  jfn(x).backward(at::ones({4}, at::kDouble));
  EXPECT_TRUE(at::allclose(x.grad(), 2 * x.detach()));
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

TEST(Autograd, LayerNormBackwardHelperMatchesItsDecomposition) {
  at::Tensor g = at::randn({3, 4, 6}, at::kDouble);
  for (bool affine : {true, false}) {
    at::Tensor w = at::randn({4, 6}, at::kDouble).requires_grad_();
    at::Tensor b = at::randn({4, 6}, at::kDouble).requires_grad_();
    at::Tensor x = at::randn({3, 4, 6}, at::kDouble).requires_grad_();
    at::layer_norm(x, {4, 6}, affine ? w : at::Tensor(), affine ? b : at::Tensor(), 1e-3)
        .backward(g);
    for (const char* exec : {"aten", "aten_prims"}) {
      auto jfn = jit(
          [affine](const Tensor& x, const Tensor& w, const Tensor& b) {
            return nn::functional::layer_norm(x, {4, 6}, affine ? w : Tensor(),
                                              affine ? b : Tensor(), 1e-3);
          },
          {.executors = {exec}});
      at::Tensor x2 = x.detach().clone().requires_grad_();
      at::Tensor w2 = w.detach().clone().requires_grad_(), b2 = b.detach().clone().requires_grad_();
      jfn(x2, w2, b2).backward(g);
      EXPECT_TRUE(at::allclose(x2.grad(), x.grad(), 1e-9, 1e-9)) << exec << affine;
      if (affine) {
        EXPECT_TRUE(at::allclose(w2.grad(), w.grad(), 1e-9, 1e-9)) << exec;
        EXPECT_TRUE(at::allclose(b2.grad(), b.grad(), 1e-9, 1e-9)) << exec;
      }
      std::string bwd = last_backward_traces(jfn).front().str();
      EXPECT_NE(bwd.find("ltorch.native_layer_norm_backward("), std::string::npos) << bwd;
    }
  }
}

// The forward keeps each row's mean and rstd; the backward reads them and
// does not normalise x again. Saved: x, the weight and the two statistics
// ([5, 7, 1] each), not the output. On ATen, on prims, and in generated
// kernels; against eager libtorch in float64 on the same values (bfloat16:
// within its rounding of each result). Not ATen in bfloat16: libtorch 1.13's
// own bfloat16 layer norm on CPU is further than that from float64.
TEST(Autograd, LayerNormSavesItsStatistics) {
  for (at::ScalarType dt : {at::kFloat, at::kBFloat16}) {
    const double tol = dt == at::kFloat ? 1e-5 : 1e-2;
    at::Tensor x = at::randn({5, 7, 12}).to(dt).to(at::kDouble).requires_grad_();
    at::Tensor w = (at::rand({12}) + 0.5).to(dt).to(at::kDouble).requires_grad_();
    at::Tensor b = at::randn({12}).to(dt).to(at::kDouble).requires_grad_();
    at::Tensor g = at::randn({5, 7, 12}).to(dt);
    at::Tensor want = at::layer_norm(x, {12}, w, b, 1e-5);
    want.backward(g.to(at::kDouble));
    for (const std::vector<std::string>& ex :
         std::vector<std::vector<std::string>>{{"aten"}, {"aten_prims"}, {"cpu_fuser", "aten"}}) {
      if (dt == at::kBFloat16 && ex[0] == "aten") continue;
      const std::string how = ex[0] + " " + std::string(c10::toString(dt));
      auto jfn =
          jit([](const Tensor& x, const Tensor& w,
                 const Tensor& b) { return nn::functional::layer_norm(x, {12}, w, b, 1e-5); },
              {.executors = ex});
      at::Tensor x2 = x.detach().to(dt).requires_grad_();
      at::Tensor w2 = w.detach().to(dt).requires_grad_(), b2 = b.detach().to(dt).requires_grad_();
      at::Tensor got = jfn(x2, w2, b2).aten();
      got.backward(g);
      auto close = [&](const at::Tensor& a, const at::Tensor& e) {
        return at::allclose(a.to(at::kDouble), e.to(at::kDouble), tol, tol);
      };
      EXPECT_TRUE(close(got, want)) << how;
      EXPECT_TRUE(close(x2.grad(), x.grad())) << how;
      EXPECT_TRUE(close(w2.grad(), w.grad())) << how;
      EXPECT_TRUE(close(b2.grad(), b.grad())) << how;
      const std::string bwd = last_backward_traces(jfn).front().str();
      EXPECT_NE(bwd.find("ltorch.native_layer_norm_backward("), std::string::npos) << bwd;
      EXPECT_EQ(bwd.find("ltorch.layer_norm_stats("), std::string::npos) << bwd;
      EXPECT_EQ(bwd.find("ltorch.layer_norm("), std::string::npos) << bwd;
      int stats = 0, inputs = 0;
      for (const TensorInfo& t : last_saved_for_backward(jfn)) {
        if (t.shape == std::vector<int64_t>{5, 7, 1}) {
          ++stats;
          EXPECT_EQ(t.dtype, at::kFloat) << how << " " << t.name;
        }
        inputs += t.shape == std::vector<int64_t>{5, 7, 12};
      }
      EXPECT_EQ(stats, 2) << how;
      EXPECT_EQ(inputs, 1) << how << ": x only, not the output";
    }
  }
}

// Without grad the plain op runs: no statistics computed for nobody.
TEST(Autograd, LayerNormWithoutGradHasNoStatistics) {
  auto jfn = jit([](const Tensor& x, const Tensor& w) {
    return nn::functional::layer_norm(x, {6}, w, Tensor(), 1e-5);
  });
  at::Tensor x = at::randn({3, 6}).requires_grad_(), w = at::randn({6});
  at::Tensor got = jfn(x.detach(), w).aten();
  EXPECT_TRUE(at::allclose(got, at::layer_norm(x.detach(), {6}, w, {}, 1e-5), 1e-5, 1e-6));
  const std::vector<Trace> stages = last_traces(jfn);
  EXPECT_FALSE(has_stage(stages, "Autodiff"));
  const std::string claimed = find_stage(stages, "Transform for execution").str();
  EXPECT_NE(claimed.find("ltorch.layer_norm("), std::string::npos) << claimed;
  EXPECT_EQ(claimed.find("layer_norm_stats"), std::string::npos) << claimed;
}

// A linear layer after the norm reads its output for the weight gradient:
// the backward recomputes it from x and the statistics (saved anyway)
// instead of the forward saving it. Saved: x, mean, rstd, no [5, 7, 12]
// output; values and gradients against eager libtorch in float64.
TEST(Autograd, LayerNormOutputIsRecomputedNotSaved) {
  at::manual_seed(7);
  at::Tensor x = at::randn({5, 7, 12}, at::kDouble).requires_grad_();
  at::Tensor w = (at::rand({12}, at::kDouble) + 0.5).requires_grad_();
  at::Tensor b = at::randn({12}, at::kDouble).requires_grad_();
  at::Tensor lw = at::randn({3, 12}, at::kDouble).requires_grad_();
  at::Tensor g = at::randn({5, 7, 3}, at::kDouble);
  at::linear(at::layer_norm(x, {12}, w, b, 1e-5), lw).backward(g);
  for (const std::vector<std::string>& ex :
       std::vector<std::vector<std::string>>{{"aten"}, {"aten_prims"}, {"cpu_fuser", "aten"}}) {
    auto jfn = jit(
        [](const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& lw) {
          return nn::functional::linear(nn::functional::layer_norm(x, {12}, w, b, 1e-5), lw);
        },
        {.executors = ex});
    std::vector<at::Tensor> leaves;
    for (const at::Tensor& t : {x, w, b, lw}) leaves.push_back(t.detach().clone().requires_grad_());
    at::Tensor got = jfn(leaves[0], leaves[1], leaves[2], leaves[3]).aten();
    got.backward(g);
    EXPECT_TRUE(
        at::allclose(got, at::linear(at::layer_norm(x, {12}, w, b, 1e-5), lw), 1e-12, 1e-12))
        << ex[0];
    const at::Tensor want[] = {x.grad(), w.grad(), b.grad(), lw.grad()};
    for (int i = 0; i < 4; ++i)
      EXPECT_TRUE(at::allclose(leaves[i].grad(), want[i], 1e-10, 1e-10)) << ex[0] << " grad " << i;
    int full = 0, stats = 0;
    for (const TensorInfo& t : last_saved_for_backward(jfn)) {
      full += t.shape == std::vector<int64_t>{5, 7, 12};
      stats += t.shape == std::vector<int64_t>{5, 7, 1};
    }
    EXPECT_EQ(full, 1) << ex[0] << ": x, not the norm's output";
    EXPECT_EQ(stats, 2) << ex[0];
    const std::vector<Trace> stages = last_backward_traces(jfn);
    const std::string bwd = find_stage(stages, "Rematerialization").str();
    EXPECT_NE(bwd.find("ltorch.layer_norm_from_stats("), std::string::npos) << bwd;
    EXPECT_EQ(bwd.find("ltorch.layer_norm_stats("), std::string::npos) << bwd;
  }
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// The dropout rule: the backward multiplies by the forward's own mask, and it
// saves the 1-byte keep mask rather than 4-byte random values.
TEST(Autograd, DropoutBackwardUsesTheForwardMask) {
  auto fn = [](const Tensor& x) { return nn::functional::dropout(x, 0.75, true); };
  auto jfn = jit(fn, {.arg_names = {"x"}});
  at::Tensor x = (at::rand({256, 64}) + 0.5).requires_grad_();
  Tensor out = jfn(x);
  out.backward(at::ones({256, 64}));
  at::Tensor kept = out.aten().detach() != 0;
  EXPECT_TRUE(at::equal(x.grad() != 0, kept));
  EXPECT_TRUE(at::allclose(x.grad().masked_select(kept), at::full({1}, 4.0f)));
  EXPECT_TRUE(
      at::allclose(out.aten().detach().masked_select(kept), 4 * x.detach().masked_select(kept)));
  double frac = kept.to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(frac, 0.25, 0.03);
  int64_t saved = 0;
  for (const auto& s : last_saved_for_backward(jfn)) saved += s.bytes;
  EXPECT_EQ(saved, 16);  // the draw's seed and offset: the mask is recomputed
  // Identity in eval mode and with p = 0: the cotangent passes through.
  auto id = jit([](const Tensor& x) { return nn::functional::dropout(x, 0.0, true) * 2.0; });
  at::Tensor y = at::randn({5}).requires_grad_();
  id(y).backward(at::ones({5}));
  EXPECT_TRUE(at::equal(y.grad(), at::full({5}, 2.0f)));
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// cross_entropy (incl. ignored targets and 1-D logits), embedding and matmul:
// one fused backward statement each under ATen, the decomposition under
// "aten_prims"; both give libtorch's gradients.
TEST(Autograd, CrossEntropyEmbeddingMatmulRules) {
  namespace F = nn::functional;
  at::Tensor tgt = at::tensor({2, -100, 0, 3, 2}, at::kLong), t0 = at::scalar_tensor(1, at::kLong);
  at::Tensor ids = at::tensor({1, 3, 1, 0, 3, 3}, at::kLong).reshape({2, 3});
  auto fn = [&](const Tensor& logits, const Tensor& w, const Tensor& m) {
    Tensor e = F::embedding(ids, w);                          // [2, 3, 4]
    Tensor h = matmul(e, m).reshape({6, 4}).narrow(0, 0, 5);  // batch-broadcast matmul
    return F::cross_entropy(logits + h, tgt) + F::cross_entropy(matmul(m, w.select(0, 0)), t0);
  };
  at::Tensor rl = at::randn({5, 4}, at::kDouble).requires_grad_();
  at::Tensor rw = at::randn({5, 4}, at::kDouble).requires_grad_();
  at::Tensor rm = at::randn({4, 4}, at::kDouble).requires_grad_();
  auto ref = [&](const at::Tensor& l, const at::Tensor& w, const at::Tensor& m) {
    at::Tensor h = at::matmul(at::embedding(w, ids), m).reshape({6, 4}).narrow(0, 0, 5);
    return at::cross_entropy_loss(l + h, tgt) + at::cross_entropy_loss(at::matmul(m, w[0]), t0);
  };
  ref(rl, rw, rm).backward();
  for (const char* exec : {"aten", "aten_prims"}) {
    auto jfn = jit(fn, {.executors = {exec}});
    at::Tensor l = rl.detach().clone().requires_grad_(), w = rw.detach().clone().requires_grad_(),
               m = rm.detach().clone().requires_grad_();
    Tensor loss = jfn(l, w, m);
    EXPECT_TRUE(at::allclose(loss.aten(), ref(rl, rw, rm), 1e-12, 1e-12)) << exec;
    loss.backward();
    EXPECT_TRUE(at::allclose(l.grad(), rl.grad(), 1e-10, 1e-10)) << exec;
    EXPECT_TRUE(at::allclose(w.grad(), rw.grad(), 1e-10, 1e-10)) << exec;
    EXPECT_TRUE(at::allclose(m.grad(), rm.grad(), 1e-10, 1e-10)) << exec;
    std::string bwd = last_backward_traces(jfn).front().str();
    EXPECT_NE(bwd.find("ltorch.cross_entropy_backward("), std::string::npos) << bwd;
    EXPECT_NE(bwd.find("ltorch.embedding_backward("), std::string::npos) << bwd;
  }
}

// cross_entropy saves each row's log-sum-exp, not [N, C] log-probabilities:
// the only [N, C] tensor the backward reads is the logits argument itself
// (the caller holds it anyway). Values and gradients against libtorch with
// ignored targets, on the ATen executor and the default executors (cpu_fuser's
// regions); float32
// logits too (their log-sum-exp is float32).
TEST(Autograd, CrossEntropySavesTheRowLogSumExpNotTheLogProbabilities) {
  namespace F = nn::functional;
  constexpr int64_t n = 6, c = 37;
  at::manual_seed(3);
  const at::Tensor tgt = at::tensor({5, -100, 0, 36, 2, 5}, at::kLong);
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    const at::Tensor ref_logits = (at::randn({n, c}, dt) * 3.0).requires_grad_();
    const at::Tensor ref = at::cross_entropy_loss(ref_logits, tgt);
    ref.backward();
    const double tol = dt == at::kDouble ? 1e-12 : 1e-5;
    for (const char* exec : {"aten", "default"}) {
      JitOptions o;
      if (std::string(exec) == "aten") o.executors = {"aten"};
      auto jfn = jit([](const Tensor& x, const Tensor& t) { return F::cross_entropy(x, t); }, o);
      at::Tensor logits = ref_logits.detach().clone().requires_grad_();
      Tensor loss = jfn(logits, tgt);
      EXPECT_TRUE(at::allclose(loss.aten(), ref, tol, tol)) << exec << " " << loss.aten();
      loss.backward();
      EXPECT_TRUE(at::allclose(logits.grad(), ref_logits.grad(), tol, tol)) << exec;
      int64_t big = 0, small_bytes = 0;
      for (const TensorInfo& s : last_saved_for_backward(jfn)) {
        if (s.shape == std::vector<int64_t>{n, c}) {
          ++big;
        } else {
          int64_t numel = 1;
          for (int64_t d : s.shape) numel *= d;
          EXPECT_LE(numel, n) << exec << ": saved " << s.name;
          small_bytes += s.bytes;
        }
      }
      EXPECT_EQ(big, 1) << exec << ": only the logits argument is [N, C]";
      EXPECT_LE(small_bytes, 3 * n * 8) << exec;  // log-sum-exp, targets (and a count)
      const std::string bwd = last_backward_traces(jfn).front().str();
      EXPECT_NE(bwd.find("ltorch.cross_entropy_backward("), std::string::npos) << bwd;
    }
  }
}

}  // namespace
}  // namespace thunder
