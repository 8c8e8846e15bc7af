// The dnnl executor: float32 matmul and linear through oneDNN's sgemm against
// eager libtorch (values and gradients) over odd shapes, batch broadcasting,
// transposed and non-contiguous operands, an MLP and the GPT block; which
// statements it claims (float32 CPU only, nothing under THUNDER_DNNL=0); and
// the per-shape choice table. Correctness cases run with THUNDER_DNNL=1 so the
// oneDNN path runs whatever the measurement would pick on this machine.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/executors/dnnl_matmul.h>
#include <thunder/thunder.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "model_grads.h"
#include "models.h"
#include "scoped_env.h"

namespace thunder {
using thunder::test_util::ScopedEnv;
namespace {

namespace F = nn::functional;

// Position of an executor in the default list (BoundSymbol::executor).
int default_index(const std::string& name) {
  const auto ex = JitOptions{}.executors;
  for (size_t i = 0; i < ex.size(); ++i)
    if (ex[i] == name) return static_cast<int>(i);
  return -1;
}

bool is_fused(const BoundSymbol& b) { return b.sym->id.starts_with("dnnlMatmul"); }

// A product statement: plain, or fused with its epilogues (dnnlMatmul0, ...).
bool is_matmul(const BoundSymbol& b) {
  const std::string& id = b.sym->id;
  return id == "ltorch.matmul" || id == "ltorch.linear" || id == "prims.matmul" ||
         id == "prims.linear" || is_fused(b);
}

// The fused statements of a trace, as "<product> + <epilogue> + ..." of their
// subsymbols' ids.
std::vector<std::string> fused_statements(const Trace& t) {
  std::vector<std::string> out;
  for (const BoundSymbol& b : t.bsyms) {
    if (!is_fused(b)) continue;
    std::string s;
    for (const BoundSymbol& sub : b.subsymbols) s += (s.empty() ? "" : " + ") + sub.sym->id;
    out.push_back(s);
  }
  return out;
}

// Executor indices of a trace's matmul and linear statements, in order.
std::vector<int> matmul_executors(const Trace& t) {
  std::vector<int> out;
  for (const BoundSymbol& b : t.bsyms)
    if (is_matmul(b)) out.push_back(b.executor);
  return out;
}

void expect_all_on(const Trace& t, const std::string& executor) {
  std::vector<int> ex = matmul_executors(t);
  EXPECT_FALSE(ex.empty()) << t;
  for (int e : ex) EXPECT_EQ(e, default_index(executor)) << t;
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5))
      << what << ": max abs diff " << (got - want).abs().max().item<double>();
}

using MakeOperands = std::function<std::pair<at::Tensor, at::Tensor>(at::Tensor, at::Tensor)>;

std::pair<at::Tensor, at::Tensor> as_is(at::Tensor a, at::Tensor b) { return {a, b}; }

// Jitted matmul(make(la, lb)) against at::matmul on the same operands: the
// product, and the gradients of the leaves la [sa] and lb [sb] through a
// random cotangent. Both the forward and the backward matmuls must be dnnl's,
// each one primitive on oneDNN's optimised kernels (never its reference
// implementation), built on the first call and reused by a second.
void expect_matmul_matches(at::IntArrayRef sa, at::IntArrayRef sb, MakeOperands make = as_is) {
  ScopedEnv always("THUNDER_DNNL", "1");
  dnnl::reset_choices();
  at::Tensor la = at::randn(sa).requires_grad_(true), lb = at::randn(sb).requires_grad_(true);
  auto [ea, eb] = make(la, lb);
  at::Tensor want = at::matmul(ea, eb);
  at::Tensor g = at::randn(want.sizes());
  (want * g).sum().backward();

  at::Tensor ja = la.detach().clone().requires_grad_(true);
  at::Tensor jb = lb.detach().clone().requires_grad_(true);
  auto [a, b] = make(ja, jb);
  auto jfn = jit([](const Tensor& x, const Tensor& y) { return matmul(x, y); });
  at::Tensor got = jfn(a, b).aten();
  (got * g).sum().backward();

  const std::string what = "a " + c10::str(a.sizes()) + " strides " + c10::str(a.strides()) +
                           ", b " + c10::str(b.sizes()) + " strides " + c10::str(b.strides());
  expect_close(got.detach(), want.detach(), what + ": value");
  expect_close(ja.grad(), la.grad(), what + ": grad a");
  expect_close(jb.grad(), lb.grad(), what + ": grad b");
  expect_all_on(last_traces(jfn).back(), "dnnl");
  expect_all_on(last_backward_traces(jfn).back(), "dnnl");
  const dnnl::ChoiceStats first = dnnl::choice_stats();
  EXPECT_EQ(first.reference_primitives, 0) << what;
  EXPECT_GE(first.primitives_built, 1) << what;
  at::Tensor again = jfn(a, b).aten();
  (again * g).sum().backward();
  EXPECT_EQ(dnnl::choice_stats().primitives_built, first.primitives_built) << what;
}

TEST(DnnlMatmul, TwoDimensionalShapes) {
  at::manual_seed(0);
  expect_matmul_matches({7, 13}, {13, 5});
  expect_matmul_matches({1, 13}, {13, 5});  // one row
  expect_matmul_matches({7, 13}, {13, 1});  // one column
  expect_matmul_matches({7, 1}, {1, 5});    // K = 1
  expect_matmul_matches({64, 96}, {96, 33});
  expect_matmul_matches({129, 33}, {33, 7});  // odd sizes
  expect_matmul_matches({1, 129}, {129, 1});
}

TEST(DnnlMatmul, BatchedAndBroadcast) {
  at::manual_seed(1);
  expect_matmul_matches({2, 3, 4, 5}, {5, 6});            // batch folds into M
  expect_matmul_matches({4, 5}, {2, 5, 6});               // left operand broadcast
  expect_matmul_matches({2, 3, 4, 5}, {3, 5, 6});         // right operand broadcast over dim 0
  expect_matmul_matches({3, 1, 4, 5}, {2, 5, 6});         // both broadcast
  expect_matmul_matches({2, 7, 13}, {2, 13, 5});          // equal batch dims
  expect_matmul_matches({2, 1, 13}, {2, 13, 5});          // batched single rows
  expect_matmul_matches({2, 3, 7, 33}, {2, 3, 33, 7});    // [B, H, T, D] @ [B, H, D, T]
  expect_matmul_matches({2, 1, 7, 33}, {1, 3, 33, 129});  // [B, 1, ..] @ [1, H, ..]
  expect_matmul_matches({3, 7, 33}, {33, 129});           // 3-D @ 2-D
  expect_matmul_matches({7, 33}, {2, 3, 33, 1});          // 2-D @ 4-D
  expect_matmul_matches({1, 1, 7, 33}, {2, 3, 33, 7});    // size-1 batch dims
}

TEST(DnnlMatmul, TransposedViews) {
  at::manual_seed(2);
  // x @ weight.t(): the weight's transpose is a layout, not a copy.
  expect_matmul_matches({7, 13}, {5, 13}, [](at::Tensor a, at::Tensor w) {
    return std::pair{a, w.t()};
  });
  // q @ k.transpose(-2, -1) on 4-D views of one qkv buffer, as attention does.
  expect_matmul_matches({2, 4, 3, 3 * 6}, {2, 4, 3, 3 * 6}, [](at::Tensor q, at::Tensor k) {
    return std::pair{q.transpose(1, 2).narrow(-1, 0, 6),
                     k.transpose(1, 2).narrow(-1, 6, 6).transpose(-2, -1)};
  });
  // Attention on a qkv buffer [B, T, 3 * H * D]: q @ k^T and P @ v on head
  // views [B, H, T, D] (strides, no copies), odd sizes.
  for (int64_t t : {1, 7, 33}) {
    const int64_t h = 3, d = 5;
    expect_matmul_matches({2, t, 3 * h * d}, {2, t, 3 * h * d}, [&](at::Tensor q, at::Tensor k) {
      auto heads = [&](at::Tensor x, int64_t part) {
        return x.narrow(-1, part * h * d, h * d).view({2, t, h, d}).transpose(1, 2);
      };
      return std::pair{heads(q, 0), heads(k, 1).transpose(-2, -1)};
    });
    expect_matmul_matches({2, h, t, t}, {2, t, 3 * h * d}, [&](at::Tensor p, at::Tensor v) {
      return std::pair{p, v.narrow(-1, 2 * h * d, h * d).view({2, t, h, d}).transpose(1, 2)};
    });
  }
  // Both operands transposed.
  expect_matmul_matches({13, 7}, {5, 13}, [](at::Tensor a, at::Tensor b) {
    return std::pair{a.t(), b.t()};
  });
}

TEST(DnnlMatmul, NonContiguousOperands) {
  at::manual_seed(3);
  // Rows spaced wider than the row (a leading dimension > K).
  expect_matmul_matches({7, 20}, {13, 5}, [](at::Tensor a, at::Tensor b) {
    return std::pair{a.narrow(1, 2, 13), b};
  });
  // Neither inner stride is 1: copied first.
  expect_matmul_matches({14, 26}, {13, 10}, [](at::Tensor a, at::Tensor b) {
    return std::pair{a.slice(0, 0, 14, 2).slice(1, 0, 26, 2), b.slice(1, 0, 10, 2)};
  });
  // A batch operand expanded (stride 0) from one matrix.
  expect_matmul_matches({1, 4, 5}, {3, 5, 6}, [](at::Tensor a, at::Tensor b) {
    return std::pair{a.expand({3, 4, 5}), b};
  });
}

TEST(DnnlMatmul, LinearWithAndWithoutBias) {
  ScopedEnv always("THUNDER_DNNL", "1");
  at::manual_seed(4);
  for (bool with_bias : {true, false}) {
    for (auto xs : {std::vector<int64_t>{13}, {7, 13}, {2, 3, 13}}) {
      at::Tensor x = at::randn(xs).requires_grad_(true),
                 w = at::randn({5, 13}).requires_grad_(true);
      at::Tensor bias = with_bias ? at::randn({5}).requires_grad_(true) : at::Tensor();
      at::Tensor want = at::linear(x, w, bias);
      at::Tensor g = at::randn(want.sizes());
      (want * g).sum().backward();
      at::Tensor jx = x.detach().clone().requires_grad_(true);
      at::Tensor jw = w.detach().clone().requires_grad_(true);
      at::Tensor jb = with_bias ? bias.detach().clone().requires_grad_(true) : at::Tensor();
      const std::string what = "x " + c10::str(x.sizes()) + (with_bias ? " with bias" : "");
      at::Tensor got;
      if (with_bias) {
        auto jfn = jit(
            [](const Tensor& a, const Tensor& w, const Tensor& b) { return F::linear(a, w, b); });
        got = jfn(jx, jw, jb).aten();
        expect_all_on(last_traces(jfn).back(), "dnnl");
      } else {
        auto jfn = jit([](const Tensor& a, const Tensor& w) { return F::linear(a, w); });
        got = jfn(jx, jw).aten();
        expect_all_on(last_traces(jfn).back(), "dnnl");
      }
      (got * g).sum().backward();
      expect_close(got.detach(), want.detach(), what + ": value");
      expect_close(jx.grad(), x.grad(), what + ": grad x");
      expect_close(jw.grad(), w.grad(), what + ": grad w");
      if (with_bias) expect_close(jb.grad(), bias.grad(), what + ": grad bias");
    }
  }
}

TEST(DnnlMatmul, JittedMLP) {
  ScopedEnv always("THUNDER_DNNL", "1");
  at::manual_seed(5);
  models::MLP mlp(24, 40);
  auto jmlp = jit(mlp);
  at::Tensor x = at::randn({2, 9, 24});
  test::expect_grads_match(
      mlp, [&] { return jmlp(x).sum(); }, [&] { return mlp.reference(x).sum(); }, 1e-4, 1e-5);
  expect_all_on(last_traces(jmlp).back(), "dnnl");
  expect_all_on(last_backward_traces(jmlp).back(), "dnnl");
}

TEST(DnnlMatmul, JittedGPTBlock) {
  ScopedEnv always("THUNDER_DNNL", "1");
  at::manual_seed(6);
  models::GPTBlock gpt(/*vocab=*/50, /*C=*/32, /*heads=*/4);
  auto jgpt = jit(gpt);
  at::Tensor idx = at::randint(0, 50, {2, 8}), targets = at::randint(0, 50, {2, 8});
  test::expect_grads_match(
      gpt, [&] { return jgpt(idx, targets); }, [&] { return gpt.reference(idx, targets); }, 1e-4,
      1e-5);
  // qkv, proj, fc, fc_out, lm_head (q @ k^T and att @ v are inside the
  // attention the pipeline recognised: docs/attention.md).
  const Trace fwd = last_traces(jgpt).back();
  EXPECT_EQ(matmul_executors(fwd).size(), 5u) << fwd;
  expect_all_on(fwd, "dnnl");
  expect_all_on(last_backward_traces(jgpt).back(), "dnnl");
  // In training both residual adds fuse; fc's gelu does not (its input is
  // saved for gelu's backward).
  EXPECT_EQ(fused_statements(fwd),
            (std::vector<std::string>{"ltorch.linear + prims.add", "ltorch.linear + prims.add"}))
      << fwd;
}

// ---- epilogues: elementwise statements fused into the product as post-ops ----

void expect_close_rel(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5))
      << what << ": max abs diff " << (got - want).abs().max().item<double>();
}

// Runs fn jitted (inference) on args against eager ref, and returns the
// final trace's fused statements.
template <class Fn, class Ref>
std::vector<std::string> fused_in_inference(Fn fn, Ref ref, const std::vector<at::Tensor>& args,
                                            const std::string& what) {
  ScopedEnv always("THUNDER_DNNL", "1");
  NoGradGuard no_grad;
  auto jfn = jit(fn);
  at::Tensor got;
  if constexpr (std::is_invocable_v<Fn, Tensor, Tensor>)
    got = jfn(args[0], args[1]).aten();
  else
    got = jfn(args[0], args[1], args[2]).aten();
  expect_close_rel(got, ref(), what);
  const Trace t = last_traces(jfn).back();
  for (const BoundSymbol& b : t.bsyms)
    if (is_fused(b)) EXPECT_EQ(b.executor, default_index("dnnl")) << t;
  return fused_statements(t);
}

TEST(DnnlEpilogues, EachEpilogueMatchesEager) {
  at::manual_seed(10);
  at::Tensor x = at::randn({3, 33, 129}), w = at::randn({7, 129}), b = at::randn({7});
  at::Tensor r = at::randn({3, 33, 7});
  using V = std::vector<std::string>;
  EXPECT_EQ(
      fused_in_inference([](const Tensor& x, const Tensor& w,
                            const Tensor& b) { return F::gelu(F::linear(x, w, b)); },
                         [&] { return at::gelu(at::linear(x, w, b)); }, {x, w, b}, "gelu erf"),
      (V{"ltorch.linear + ltorch.gelu"}));
  EXPECT_EQ(fused_in_inference([](const Tensor& x, const Tensor& w,
                                  const Tensor& b) { return F::gelu(F::linear(x, w, b), "tanh"); },
                               [&] { return at::gelu(at::linear(x, w, b), "tanh"); }, {x, w, b},
                               "gelu tanh"),
            (V{"ltorch.linear + ltorch.gelu"}));
  EXPECT_EQ(fused_in_inference([](const Tensor& x, const Tensor& w,
                                  const Tensor& b) { return F::relu(F::linear(x, w, b)); },
                               [&] { return at::relu(at::linear(x, w, b)); }, {x, w, b}, "relu"),
            (V{"ltorch.linear + ltorch.relu"}));
  EXPECT_EQ(fused_in_inference([](const Tensor& x,
                                  const Tensor& w) { return matmul(x, w.transpose(0, 1)) * 0.125; },
                               [&] { return at::matmul(x, w.t()) * 0.125; }, {x, w}, "scale"),
            (V{"ltorch.matmul + ltorch.mul"}));
  EXPECT_EQ(fused_in_inference([](const Tensor& x, const Tensor& w,
                                  const Tensor& r) { return r + F::linear(x, w); },
                               [&] { return r + at::linear(x, w); }, {x, w, r}, "residual add"),
            (V{"ltorch.linear + ltorch.add"}));
  // A chain: bias, scale, residual, relu in one statement.
  EXPECT_EQ(
      fused_in_inference([](const Tensor& x, const Tensor& w,
                            const Tensor& r) { return F::relu(F::linear(x, w) * 0.5 + r); },
                         [&] { return at::relu(at::linear(x, w) * 0.5 + r); }, {x, w, r}, "chain"),
      (V{"ltorch.linear + ltorch.mul + ltorch.add + ltorch.relu"}));
  // A residual that is a transposed view is read as such (copied contiguous).
  at::Tensor rt = at::randn({3, 7, 33}).transpose(1, 2);
  EXPECT_EQ(
      fused_in_inference(
          [](const Tensor& x, const Tensor& w, const Tensor& r) { return F::linear(x, w) + r; },
          [&] { return at::linear(x, w) + rt; }, {x, w, rt}, "strided residual"),
      (V{"ltorch.linear + ltorch.add"}));
}

TEST(DnnlEpilogues, NotFusedWhenTheProductHasAnotherReader) {
  at::manual_seed(11);
  at::Tensor x = at::randn({5, 9}), w = at::randn({4, 9});
  using V = std::vector<std::string>;
  // h is returned too, and read twice.
  EXPECT_EQ(fused_in_inference(
                [](const Tensor& x, const Tensor& w) {
                  Tensor h = F::linear(x, w);
                  return F::gelu(h) + h;
                },
                [&] {
                  at::Tensor h = at::linear(x, w);
                  return at::gelu(h) + h;
                },
                {x, w}, "two readers"),
            V{});
  // Broadcasting adds and non-literal scales are not post-ops.
  at::Tensor row = at::randn({4});
  EXPECT_EQ(
      fused_in_inference(
          [](const Tensor& x, const Tensor& w, const Tensor& r) { return F::linear(x, w) + r; },
          [&] { return at::linear(x, w) + row; }, {x, w, row}, "broadcast add"),
      V{});
  // The product of two matmuls accumulates one onto the other (a backward's
  // gradient sum): one of them fuses the add.
  at::Tensor y = at::randn({5, 9}), v = at::randn({4, 9});
  EXPECT_EQ(fused_in_inference([](const Tensor& x, const Tensor& w,
                                  const Tensor& y) { return F::linear(x, w) + F::linear(y, w); },
                               [&] { return at::linear(x, w) + at::linear(y, w); }, {x, w, y},
                               "sum of products"),
            (V{"ltorch.linear + ltorch.add"}));
}

TEST(DnnlEpilogues, Float64IsNotFusedAndExact) {
  ScopedEnv always("THUNDER_DNNL", "1");
  NoGradGuard no_grad;
  // Elementwise ops on ATen too, so the whole result is eager's bit for bit.
  auto jfn = jit([](const Tensor& x, const Tensor& w) { return F::gelu(F::linear(x, w)) * 2.0; },
                 {.executors = {"dnnl", "aten"}});
  at::Tensor x = at::randn({7, 13}, at::kDouble), w = at::randn({5, 13}, at::kDouble);
  EXPECT_TRUE(at::equal(jfn(x, w).aten(), at::gelu(at::linear(x, w)) * 2.0));
  const Trace t = last_traces(jfn).back();
  EXPECT_TRUE(fused_statements(t).empty()) << t;
  for (int e : matmul_executors(t)) EXPECT_EQ(e, 1) << t;  // "aten" in this list
}

// Training a GPT-like MLP with a residual: the residual add fuses in the
// forward; values and gradients match eager.
TEST(DnnlEpilogues, TrainingWithFusedResidual) {
  ScopedEnv always("THUNDER_DNNL", "1");
  at::manual_seed(12);
  models::MLP mlp(24, 40);
  auto block = [&](const Tensor& x) { return x + mlp.forward(x); };
  auto jblock = jit(block);
  at::Tensor x = at::randn({2, 9, 24});
  test::expect_grads_match(
      mlp, [&] { return (jblock(x) * jblock(x)).sum(); },
      [&] {
        at::Tensor y = x + mlp.reference(x);
        return (y * y).sum();
      },
      1e-4, 1e-5);
  const Trace fwd = last_traces(jblock).back();
  EXPECT_EQ(fused_statements(fwd), (std::vector<std::string>{"ltorch.linear + prims.add"})) << fwd;
}

// Inference through the MLP: fc1's bias and GELU are one primitive, built on
// the first call and reused by every later call.
TEST(DnnlEpilogues, MLPInferencePrimitiveBuiltOnce) {
  ScopedEnv always("THUNDER_DNNL", "1");
  dnnl::reset_choices();
  at::manual_seed(13);
  NoGradGuard no_grad;
  models::MLP mlp(24, 40);
  auto jmlp = jit(mlp);
  at::Tensor x = at::randn({2, 9, 24});
  expect_close_rel(jmlp(x).aten(), mlp.reference(x), "first call");
  const int64_t built = dnnl::choice_stats().primitives_built;
  EXPECT_EQ(built, 2);  // fc1 + gelu, fc2
  for (int i = 0; i < 3; ++i) expect_close_rel(jmlp(x).aten(), mlp.reference(x), "again");
  EXPECT_EQ(dnnl::choice_stats().primitives_built, built);
  EXPECT_EQ(dnnl::choice_stats().reference_primitives, 0);
  const Trace t = last_traces(jmlp).back();
  EXPECT_EQ(fused_statements(t), (std::vector<std::string>{"ltorch.linear + ltorch.gelu"})) << t;
  // The fused statement prints its statements as '#' lines.
  const std::string text = t.str();
  EXPECT_NE(text.find("= dnnlMatmul0("), std::string::npos) << text;
  EXPECT_NE(text.find("# t"), std::string::npos) << text;
}

TEST(DnnlMatmul, Float64StaysOnAten) {
  ScopedEnv always("THUNDER_DNNL", "1");
  auto jfn = jit([](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  at::Tensor a = at::randn({7, 13}, at::kDouble), b = at::randn({13, 5}, at::kDouble);
  EXPECT_TRUE(at::equal(jfn(a, b).aten(), at::matmul(a, b)));
  expect_all_on(last_traces(jfn).back(), "aten");
}

TEST(DnnlMatmul, DisabledByEnvironment) {
  ScopedEnv off("THUNDER_DNNL", "0");
  at::manual_seed(7);
  auto jfn = jit([](const Tensor& a, const Tensor& w) { return F::linear(matmul(a, a), w); });
  at::Tensor a = at::randn({6, 6}), w = at::randn({4, 6});
  expect_close(jfn(a, w).aten(), at::linear(at::matmul(a, a), w), "value");
  expect_all_on(last_traces(jfn).back(), "aten");
}

TEST(DnnlMatmul, BadEnvironmentValueIsAnError) {
  ScopedEnv bad("THUNDER_DNNL", "yes");
  auto jfn = jit([](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  at::Tensor a = at::randn({2, 2});
  EXPECT_THROW(jfn(a, a), Error);
}

// Unset THUNDER_DNNL: the first call of a shape class measures both libraries
// and remembers the winner; a second call of the same class does not measure.
TEST(DnnlMatmul, ChoiceIsMeasuredOncePerShape) {
  ScopedEnv measure("THUNDER_DNNL", nullptr);
  dnnl::reset_choices();
  at::manual_seed(8);
  auto jfn = jit([](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  at::Tensor a = at::randn({9, 17}), b = at::randn({17, 11});
  expect_close(jfn(a, b).aten(), at::matmul(a, b), "first call");
  EXPECT_EQ(dnnl::choice_stats().measured, 1);
  at::Tensor a2 = at::randn({9, 17}), b2 = at::randn({17, 11});
  expect_close(jfn(a2, b2).aten(), at::matmul(a2, b2), "second call");
  EXPECT_EQ(dnnl::choice_stats().measured, 1);
  at::Tensor c = at::randn({3, 17});
  expect_close(jfn(c, b).aten(), at::matmul(c, b), "another shape");
  EXPECT_EQ(dnnl::choice_stats().measured, 2);
  expect_all_on(last_traces(jfn).back(), "dnnl");
  dnnl::reset_choices();
  EXPECT_EQ(dnnl::choice_stats().measured, 0);
}

// Threads calling one jitted linear on three shapes at once: every result is
// right, each shape class is measured once in the process (not once per
// thread), and after reset_choices() the threads' own copies are dropped and
// the classes measured again.
TEST(DnnlMatmul, ThreadsShareTheChoicesAndResetReachesThem) {
  ScopedEnv measure("THUNDER_DNNL", nullptr);
  dnnl::reset_choices();
  at::manual_seed(9);
  auto jfn = jit([](const Tensor& x, const Tensor& w) { return F::linear(x, w); });
  const at::Tensor w = at::randn({13, 21});
  const std::vector<at::Tensor> xs = {at::randn({5, 21}), at::randn({2, 7, 21}),
                                      at::randn({31, 21})};
  auto hammer = [&] {
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 30; ++i) {
          const at::Tensor& x = xs[(t + i) % xs.size()];
          if (!at::allclose(jfn(x, w).aten(), at::linear(x, w), 1e-4, 1e-5)) ++wrong;
        }
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
  };
  hammer();
  EXPECT_EQ(dnnl::choice_stats().measured, 3);
  dnnl::reset_choices();
  hammer();
  EXPECT_EQ(dnnl::choice_stats().measured, 3);
  expect_all_on(last_traces(jfn).back(), "dnnl");
}

}  // namespace
}  // namespace thunder
