// Attention's input checks: each names the op and the offending value, on the
// jitted op and on the grad rule's forward and backward symbols.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/lang/ltorch.h>
#include <thunder/thunder.h>

#include <string>
#include <vector>

namespace thunder {
namespace {

namespace F = nn::functional;

// Calls jit(sdpa) on q, k, v and expects a thunder::Error whose message holds
// every string in `parts`.
void expect_sdpa_error(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const std::vector<std::string>& parts) {
  auto jfn = jit([](const Tensor& a, const Tensor& b, const Tensor& c) {
    return F::scaled_dot_product_attention(a, b, c, /*is_causal=*/true);
  });
  try {
    jfn(q, k, v);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(AttentionErrors, MismatchedDtypes) {
  expect_sdpa_error(at::randn({2, 3, 4, 8}), at::randn({2, 3, 4, 8}, at::kDouble),
                    at::randn({2, 3, 4, 8}),
                    {"ltorch.scaled_dot_product_attention", "float32 (q)", "float64 (k)"});
  expect_sdpa_error(at::randn({2, 3, 4, 8}), at::randn({2, 3, 4, 8}),
                    at::randn({2, 3, 4, 8}, at::kDouble),
                    {"ltorch.scaled_dot_product_attention", "float64 (v)"});
}

TEST(AttentionErrors, IntegerInputs) {
  const at::Tensor i = at::ones({2, 3, 4, 8}, at::kLong);
  expect_sdpa_error(i, i, i, {"ltorch.scaled_dot_product_attention", "floating-point", "int64"});
}

TEST(AttentionErrors, MismatchedHeadSizes) {
  expect_sdpa_error(
      at::randn({2, 3, 4, 8}), at::randn({2, 3, 4, 6}), at::randn({2, 3, 4, 8}),
      {"ltorch.scaled_dot_product_attention", "[2, 3, 4, 8]", "[2, 3, 4, 6]", "embedding size"});
}

TEST(AttentionErrors, MismatchedSequenceLengths) {
  expect_sdpa_error(at::randn({2, 3, 4, 8}), at::randn({2, 3, 5, 8}), at::randn({2, 3, 4, 8}),
                    {"ltorch.scaled_dot_product_attention", "[2, 3, 5, 8]", "sequence length"});
}

TEST(AttentionErrors, OneDimensionalInput) {
  expect_sdpa_error(at::randn({8}), at::randn({4, 8}), at::randn({4, 8}),
                    {"ltorch.scaled_dot_product_attention", "at least 2-D", "[8]"});
}

// No key at all: every query row would be fully masked (softmax of nothing).
TEST(AttentionErrors, NoKeys) {
  expect_sdpa_error(at::randn({2, 3, 4, 8}), at::randn({2, 3, 0, 8}), at::randn({2, 3, 0, 8}),
                    {"ltorch.scaled_dot_product_attention", "[2, 3, 0, 8]", "no keys"});
}

// The grad rule's pair checks its own inputs: one batch shape, and an lse of
// one value per query row in the compute dtype.
TEST(AttentionErrors, ForwardAndBackwardSymbols) {
  auto expect_error = [](auto fn, const std::vector<at::Tensor>& args,
                         const std::vector<std::string>& parts) {
    auto jfn = jit(fn);
    try {
      jfn(args[0], args[1], args[2]);
      FAIL() << "expected thunder::Error";
    } catch (const Error& e) {
      for (const std::string& p : parts)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  expect_error(
      [](const Tensor& q, const Tensor& k, const Tensor& v) {
        return Tensor(
            ltorch::sdpa_forward(Value(q.proxy()), Value(k.proxy()), Value(v.proxy()), false)
                .as_list()[0]
                .proxy());
      },
      {at::randn({2, 3, 4, 8}), at::randn({1, 3, 4, 8}), at::randn({1, 3, 4, 8})},
      {"ltorch.sdpa_forward", "batch dims", "[1, 3, 4, 8]"});
  auto backward_with_lse = [](const Tensor& q, const Tensor& k, const Tensor& lse) {
    return Tensor(ltorch::sdpa_backward(Value(q.proxy()), Value(q.proxy()), Value(k.proxy()),
                                        Value(k.proxy()), Value(q.proxy()), Value(lse.proxy()),
                                        true)
                      .as_list()[0]
                      .proxy());
  };
  expect_error(backward_with_lse, {at::randn({2, 4, 8}), at::randn({2, 4, 8}), at::randn({2, 5})},
               {"ltorch.sdpa_backward", "lse", "[2, 4]", "[2, 5]"});
  expect_error(backward_with_lse,
               {at::randn({2, 4, 8}), at::randn({2, 4, 8}), at::randn({2, 4}, at::kDouble)},
               {"ltorch.sdpa_backward", "lse", "float32", "float64"});
}

}  // namespace
}  // namespace thunder
