// OpInfo samples for matmul and nn.functional ops (linear, dropout, gelu,
// softmax, log_softmax, layer_norm, embedding, cross_entropy, sdpa).
#include "ops/opinfo.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"

namespace thunder::testing {
namespace {
using NnOps = OpInfoTest;

namespace F = thunder::nn::functional;
using ATs = std::vector<at::Tensor>;

OpSample matmul_sample(const std::string& name, ATs inputs) {
  return {name, std::move(inputs),
          [](const TensorList& x) { return TensorList{matmul(x[0], x[1])}; },
          [](const ATs& x) { return ATs{at::matmul(x[0], x[1])}; }};
}

TEST_F(NnOps, Matmul) {
  check_sample(matmul_sample("2-D @ 2-D", {make_tensor({3, 4}), make_tensor({4, 5})}));
  check_sample(matmul_sample("1-D @ 1-D", {make_tensor({4}), make_tensor({4})}));
  check_sample(matmul_sample("1-D @ 2-D", {make_tensor({4}), make_tensor({4, 5})}));
  check_sample(matmul_sample("2-D @ 1-D", {make_tensor({3, 4}), make_tensor({4})}));
  check_sample(matmul_sample("3-D @ 1-D", {make_tensor({2, 3, 4}), make_tensor({4})}));
  check_sample(matmul_sample("1-D @ 3-D", {make_tensor({4}), make_tensor({2, 4, 5})}));
  check_sample(matmul_sample("batched", {make_tensor({2, 3, 4}), make_tensor({2, 4, 5})}));
  check_sample(matmul_sample("3-D @ 2-D", {make_tensor({2, 3, 4}), make_tensor({4, 5})}));
  check_sample(matmul_sample("2-D @ 4-D", {make_tensor({3, 4}), make_tensor({2, 2, 4, 5})}));
  check_sample(
      matmul_sample("batch broadcast", {make_tensor({2, 1, 3, 4}), make_tensor({5, 4, 6})}));
  check_sample(
      matmul_sample("non-contiguous", {make_noncontiguous({3, 4}), make_noncontiguous({4, 5})}));
  check_sample(
      matmul_sample("f64", {make_tensor({3, 4}, at::kDouble), make_tensor({4, 2}, at::kDouble)}));
  check_sample(matmul_sample("empty k", {make_tensor({3, 0}), make_tensor({0, 2})}));
}

TEST_F(NnOps, MatmulErrors) {
  auto mm = [](const TensorList& x) { return TensorList{matmul(x[0], x[1])}; };
  expect_error("cannot be multiplied", {make_tensor({3, 4}), make_tensor({5, 6})}, mm);
  expect_error("ltorch.matmul", {make_tensor({4}), make_tensor({5})}, mm);
  expect_error("ltorch.matmul", {make_tensor({2, 3, 4}), make_tensor({3, 4, 5})}, mm);
  expect_error("ltorch.matmul", {make_tensor({}), make_tensor({4})}, mm);
  expect_error("ltorch.matmul", {make_tensor({3, 4}), make_tensor({4, 5}, at::kDouble)}, mm);
}

TEST_F(NnOps, Linear) {
  check_sample({"linear with bias",
                {make_tensor({2, 3, 4}), make_tensor({5, 4}), make_tensor({5})},
                [](const TensorList& x) { return TensorList{F::linear(x[0], x[1], x[2])}; },
                [](const ATs& x) { return ATs{at::linear(x[0], x[1], x[2])}; }});
  check_sample({"linear without bias",
                {make_tensor({3, 4}), make_tensor({5, 4})},
                [](const TensorList& x) { return TensorList{F::linear(x[0], x[1])}; },
                [](const ATs& x) { return ATs{at::linear(x[0], x[1])}; }});
  check_sample({"linear 1-D input",
                {make_tensor({4}), make_tensor({5, 4}), make_tensor({5})},
                [](const TensorList& x) { return TensorList{F::linear(x[0], x[1], x[2])}; },
                [](const ATs& x) { return ATs{at::linear(x[0], x[1], x[2])}; }});
  auto lin = [](const TensorList& x) { return TensorList{F::linear(x[0], x[1], x[2])}; };
  expect_error("ltorch.linear", {make_tensor({3, 4}), make_tensor({5, 3}), make_tensor({5})}, lin);
  expect_error("ltorch.linear", {make_tensor({3, 4}), make_tensor({5, 4}), make_tensor({4})}, lin);
}

TEST_F(NnOps, Dropout) {
  auto drop = [](double p, bool training) {
    return [p, training](const TensorList& x) { return TensorList{F::dropout(x[0], p, training)}; };
  };
  auto ref = [](double p, bool training) {
    return [p, training](const ATs& x) { return ATs{at::dropout(x[0], p, training)}; };
  };
  check_sample({"dropout p=0", {make_tensor({4, 5})}, drop(0.0, true), ref(0.0, true)});
  check_sample({"dropout eval", {make_tensor({4, 5})}, drop(0.5, false), ref(0.5, false)});
  check_sample({"dropout p=1", {make_tensor({4, 5})}, drop(1.0, true), ref(1.0, true)});
  expect_error("dropout probability has to be between 0 and 1", {make_tensor({3})},
               drop(1.5, true));
}

// Random at p=0.5: every element is 0 or x / (1 - p), and a fair share is kept.
TEST_F(NnOps, DropoutIsMaskedAndScaled) {
  at::Tensor x = make_tensor({64, 64}, at::kFloat, 0.5, 3.0);  // nonzero inputs
  auto fn = [](const TensorList& xs) { return TensorList{F::dropout(xs[0], 0.5, true)}; };
  auto check = [&](const at::Tensor& out, const std::string& how) {
    SCOPED_TRACE(how);
    ASSERT_EQ(out.sizes(), x.sizes());
    ASSERT_EQ(out.scalar_type(), x.scalar_type());
    at::Tensor kept = out != 0;
    EXPECT_TRUE(at::equal(at::where(kept, out, at::zeros_like(out)),
                          at::where(kept, x * 2.0, at::zeros_like(x))));
    double frac = kept.to(at::kDouble).mean().item<double>();
    EXPECT_GT(frac, 0.4);
    EXPECT_LT(frac, 0.6);
  };
  check(fn({x})[0].aten(), "eager");
  for (const char* exec : {"aten", "aten_prims"}) {
    auto jfn = jit(fn, {.executors = {exec}});
    check(jfn(TensorList{x})[0].aten(), exec);
    // A second call draws a fresh mask.
    EXPECT_FALSE(at::equal(jfn(TensorList{x})[0].aten(), jfn(TensorList{x})[0].aten())) << exec;
  }
}

TEST_F(NnOps, DropoutSymbolIsRandom) {
  EXPECT_TRUE(ltorch::symbol("ltorch.dropout").has_tag(OpTag::RANDOM_OP));
  EXPECT_TRUE(ltorch::symbol("ltorch.matmul").has_tag(OpTag::MATMUL_OP));
  EXPECT_TRUE(ltorch::symbol("ltorch.linear").has_tag(OpTag::MATMUL_OP));
  EXPECT_TRUE(prims::symbol("prims.matmul").has_tag(OpTag::MATMUL_OP));
  EXPECT_TRUE(prims::symbol("prims.linear").has_tag(OpTag::MATMUL_OP));
}

TEST_F(NnOps, Gelu) {
  for (const char* approx : {"none", "tanh"})
    check_sample({std::string("gelu ") + approx,
                  {make_tensor({4, 5})},
                  [approx](const TensorList& x) { return TensorList{F::gelu(x[0], approx)}; },
                  [approx](const ATs& x) { return ATs{at::gelu(x[0], approx)}; }});
  check_sample({"gelu f64",
                {make_tensor({7}, at::kDouble)},
                [](const TensorList& x) { return TensorList{F::gelu(x[0])}; },
                [](const ATs& x) { return ATs{at::gelu(x[0])}; }});
  // bf16 is computed in float32 by both libtorch and the decomposition; they round once.
  check_sample({"gelu bf16",
                {make_tensor({4, 5}, at::kBFloat16)},
                [](const TensorList& x) { return TensorList{F::gelu(x[0], "tanh")}; },
                [](const ATs& x) { return ATs{at::gelu(x[0], "tanh")}; },
                1e-2,
                1e-2,
                1e-2,
                1e-2});
  expect_error("ltorch.gelu", {make_tensor({3})},
               [](const TensorList& x) { return TensorList{F::gelu(x[0], "fast")}; });
}

TEST_F(NnOps, SoftmaxAndLogSoftmax) {
  at::Tensor x = make_tensor({3, 4, 5});
  for (int64_t dim : {0, 1, 2, -1}) {
    check_sample({"softmax dim " + std::to_string(dim),
                  {x},
                  [dim](const TensorList& t) { return TensorList{F::softmax(t[0], dim)}; },
                  [dim](const ATs& t) { return ATs{at::softmax(t[0], dim)}; }});
    check_sample({"log_softmax dim " + std::to_string(dim),
                  {x},
                  [dim](const TensorList& t) { return TensorList{F::log_softmax(t[0], dim)}; },
                  [dim](const ATs& t) { return ATs{at::log_softmax(t[0], dim)}; }});
  }
  // Large logits: only a max-shifted decomposition stays finite.
  check_sample({"softmax large values",
                {make_tensor({2, 6}, at::kFloat, 500.0, 1000.0)},
                [](const TensorList& t) { return TensorList{F::softmax(t[0], 1)}; },
                [](const ATs& t) { return ATs{at::softmax(t[0], 1)}; }});
  check_sample({"log_softmax large values",
                {make_tensor({2, 6}, at::kFloat, 500.0, 1000.0)},
                [](const TensorList& t) { return TensorList{F::log_softmax(t[0], 1)}; },
                [](const ATs& t) { return ATs{at::log_softmax(t[0], 1)}; }});
  check_sample({"softmax f64 non-contiguous",
                {make_noncontiguous({4, 3}, at::kDouble)},
                [](const TensorList& t) { return TensorList{F::softmax(t[0], 0)}; },
                [](const ATs& t) { return ATs{at::softmax(t[0], 0)}; }});
  check_sample({"softmax 0-d",
                {make_tensor({})},
                [](const TensorList& t) { return TensorList{F::softmax(t[0], -1)}; },
                [](const ATs& t) { return ATs{at::softmax(t[0], -1)}; }});
  check_sample({"log_softmax bf16",
                {make_tensor({3, 8}, at::kBFloat16)},
                [](const TensorList& t) { return TensorList{F::log_softmax(t[0], 1)}; },
                [](const ATs& t) { return ATs{at::log_softmax(t[0], 1)}; },
                1e-2,
                1e-2,
                1e-2,
                1e-2});
  expect_error("ltorch.softmax", {make_tensor({3, 4})},
               [](const TensorList& t) { return TensorList{F::softmax(t[0], 2)}; });
  expect_error("ltorch.log_softmax", {make_tensor({3, 4})},
               [](const TensorList& t) { return TensorList{F::log_softmax(t[0], -3)}; });
}

TEST_F(NnOps, LayerNorm) {
  check_sample(
      {"layer_norm affine",
       {make_tensor({2, 3, 4}), make_tensor({4}), make_tensor({4})},
       [](const TensorList& x) { return TensorList{F::layer_norm(x[0], {4}, x[1], x[2])}; },
       [](const ATs& x) { return ATs{at::layer_norm(x[0], {4}, x[1], x[2])}; }});
  check_sample({"layer_norm no affine, 2 dims",
                {make_tensor({2, 3, 4})},
                [](const TensorList& x) {
                  return TensorList{F::layer_norm(x[0], {3, 4})};
                },
                [](const ATs& x) {
                  return ATs{at::layer_norm(x[0], {3, 4})};
                }});
  check_sample(
      {"layer_norm weight only, eps",
       {make_tensor({5, 6}), make_tensor({6})},
       [](const TensorList& x) {
         return TensorList{F::layer_norm(x[0], {6}, x[1], Tensor(), 1e-3)};
       },
       [](const ATs& x) { return ATs{at::layer_norm(x[0], {6}, x[1], at::Tensor(), 1e-3)}; }});
  check_sample(
      {"layer_norm bias only f64",
       {make_tensor({5, 6}, at::kDouble), make_tensor({6}, at::kDouble)},
       [](const TensorList& x) { return TensorList{F::layer_norm(x[0], {6}, Tensor(), x[1])}; },
       [](const ATs& x) { return ATs{at::layer_norm(x[0], {6}, at::Tensor(), x[1])}; }});
  check_sample(
      {"layer_norm bf16",
       {make_tensor({4, 8}, at::kBFloat16), make_tensor({8}, at::kBFloat16),
        make_tensor({8}, at::kBFloat16)},
       [](const TensorList& x) { return TensorList{F::layer_norm(x[0], {8}, x[1], x[2])}; },
       [](const ATs& x) { return ATs{at::layer_norm(x[0], {8}, x[1], x[2])}; },
       2e-2,
       2e-2,
       2e-2,
       2e-2});
  expect_error("ltorch.layer_norm", {make_tensor({3, 4})},
               [](const TensorList& x) { return TensorList{F::layer_norm(x[0], {5})}; });
  expect_error("ltorch.layer_norm", {make_tensor({3, 4}), make_tensor({3})},
               [](const TensorList& x) { return TensorList{F::layer_norm(x[0], {4}, x[1])}; });
}

TEST_F(NnOps, Embedding) {
  auto emb = [](const TensorList& x) { return TensorList{F::embedding(x[0], x[1])}; };
  auto ref = [](const ATs& x) { return ATs{at::embedding(x[1], x[0])}; };
  check_sample(
      {"embedding int64", {make_tensor({2, 3}, at::kLong, 0, 9), make_tensor({10, 4})}, emb, ref});
  check_sample(
      {"embedding int32 1-D", {make_tensor({5}, at::kInt, 0, 9), make_tensor({10, 4})}, emb, ref});
  expect_error("ltorch.embedding", {make_tensor({3}), make_tensor({10, 4})}, emb);
  expect_error("ltorch.embedding", {make_tensor({3}, at::kLong, 0, 3), make_tensor({10})}, emb);
}

TEST_F(NnOps, CrossEntropy) {
  auto ce = [](const TensorList& x) { return TensorList{F::cross_entropy(x[0], x[1])}; };
  auto ref = [](const ATs& x) { return ATs{at::cross_entropy_loss(x[0], x[1])}; };
  check_sample(
      {"cross_entropy [N, C]", {make_tensor({5, 7}), make_tensor({5}, at::kLong, 0, 6)}, ce, ref});
  check_sample(
      {"cross_entropy [C]", {make_tensor({7}), make_tensor({}, at::kLong, 0, 6)}, ce, ref});
  check_sample({"cross_entropy ignores -100",
                {make_tensor({4, 3}, at::kDouble), at::tensor({2, -100, 0, -100}, at::kLong)},
                ce,
                ref});
  expect_error("ltorch.cross_entropy", {make_tensor({5, 7}), make_tensor({4}, at::kLong, 0, 6)},
               ce);
  expect_error("ltorch.cross_entropy", {make_tensor({5, 7}), make_tensor({5})}, ce);
}

TEST_F(NnOps, ScaledDotProductAttention) {
  for (bool causal : {false, true}) {
    auto fn = [causal](const TensorList& x) {
      return TensorList{F::scaled_dot_product_attention(x[0], x[1], x[2], causal)};
    };
    auto ref = [causal](const ATs& x) {
      return ATs{
          std::get<0>(at::_scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, false, causal))};
    };
    std::string c = causal ? " causal" : "";
    check_sample({"sdpa 4-D" + c,
                  {make_tensor({2, 3, 5, 8}), make_tensor({2, 3, 6, 8}), make_tensor({2, 3, 6, 4})},
                  fn,
                  ref});
    check_sample({"sdpa 3-D square" + c,
                  {make_tensor({2, 4, 8}), make_tensor({2, 4, 8}), make_tensor({2, 4, 8})},
                  fn,
                  ref});
  }
  expect_error("ltorch.scaled_dot_product_attention",
               {make_tensor({2, 4, 8}), make_tensor({2, 4, 6}), make_tensor({2, 4, 8})},
               [](const TensorList& x) {
                 return TensorList{F::scaled_dot_product_attention(x[0], x[1], x[2])};
               });
}

TEST_F(NnOps, Relu) {
  check_sample({"F::relu",
                {make_tensor({3, 4})},
                [](const TensorList& x) { return TensorList{F::relu(x[0])}; },
                [](const ATs& x) { return ATs{at::relu(x[0])}; }});
}

}  // namespace
}  // namespace thunder::testing
