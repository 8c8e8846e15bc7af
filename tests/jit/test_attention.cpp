// Scaled dot-product attention: the grad rule's ltorch.sdpa_forward /
// ltorch.sdpa_backward pair and the attention executor that claims them,
// against an eager ATen reference (torch's math path with autograd) for
// values and gradients: causal and not, odd sequence lengths and head sizes,
// more or fewer queries than keys, 3-D and 4-D inputs, the strided head views
// of a qkv split, broadcast batch dims; what is saved for backward (no
// [.., T, S] tensor); and the composite path on executor lists without
// `attention` and with code generation off.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scoped_env.h"

namespace thunder {
using thunder::test_util::ScopedEnv;
namespace {

namespace F = nn::functional;

// torch's math path, as a user writes it: q scaled first, masked_fill with
// -inf above the top-left aligned diagonal, softmax, then @ v.
at::Tensor eager_sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
  at::Tensor s =
      at::matmul(q * (1.0 / std::sqrt(static_cast<double>(q.size(-1)))), k.transpose(-2, -1));
  if (causal) {
    const at::Tensor keep = at::ones({q.size(-2), k.size(-2)}, at::kBool).tril();
    s = s.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  }
  return at::matmul(at::softmax(s, -1), v);
}

auto sdpa_fn(bool causal) {
  return [causal](const Tensor& q, const Tensor& k, const Tensor& v) {
    return F::scaled_dot_product_attention(q, k, v, causal);
  };
}

// Float64 checks to 1e-12; float32 results against the float64 reference of
// the same float32 inputs, to 1e-5 relative (and absolute, for values near 0).
void expect_close(const at::Tensor& got, const at::Tensor& want64, at::ScalarType dt,
                  const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want64.sizes()) << what;
  ASSERT_EQ(got.scalar_type(), dt) << what;
  const double tol = dt == at::kDouble ? 1e-12 : 1e-5;
  const at::Tensor g = got.to(at::kDouble);
  EXPECT_TRUE(at::allclose(g, want64, tol, tol))
      << what << ": max abs difference " << (g - want64).abs().max().item<double>();
}

struct Case {
  std::vector<int64_t> q, k, v;
  bool causal;
  at::ScalarType dtype;
};

std::string describe(const Case& c) {
  auto shape = [](const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  };
  return "q " + shape(c.q) + " k " + shape(c.k) + " v " + shape(c.v) +
         (c.causal ? " causal " : " full ") + std::string(at::toString(c.dtype));
}

// Runs `c` through jit(opts) with q, k and v requiring grad and checks the
// output and the three gradients against eager_sdpa in float64. Returns the
// jitted callable for further inspection.
auto check_case(const Case& c, const JitOptions& opts = {}) {
  const std::string what = describe(c);
  const at::Tensor q = at::randn(c.q, c.dtype), k = at::randn(c.k, c.dtype),
                   v = at::randn(c.v, c.dtype);
  const at::Tensor go = at::randn(eager_sdpa(q, k, v, c.causal).sizes(), c.dtype);
  std::vector<at::Tensor> ref_leaves, jit_leaves;
  for (const at::Tensor& t : {q, k, v}) {
    ref_leaves.push_back(t.to(at::kDouble).clone().requires_grad_());
    jit_leaves.push_back(t.clone().requires_grad_());
  }
  const at::Tensor ref = eager_sdpa(ref_leaves[0], ref_leaves[1], ref_leaves[2], c.causal);
  ref.backward(go.to(at::kDouble));

  auto jfn = jit(sdpa_fn(c.causal), opts);
  Tensor out = jfn(jit_leaves[0], jit_leaves[1], jit_leaves[2]);
  expect_close(out.aten(), ref.detach(), c.dtype, what + ": out");
  out.backward(go);
  const char* names[] = {"gq", "gk", "gv"};
  for (int i = 0; i < 3; ++i)
    expect_close(jit_leaves[i].grad(), ref_leaves[i].grad(), c.dtype, what + ": " + names[i]);
  return jfn;
}

int index_of(const std::vector<std::string>& executors, const std::string& name) {
  for (size_t i = 0; i < executors.size(); ++i)
    if (executors[i] == name) return static_cast<int>(i);
  return -1;
}

// Statements of `id` in a trace and the executor index each was claimed by.
std::vector<int> claims(const Trace& t, const std::string& id) {
  std::vector<int> out;
  for (const BoundSymbol& b : t.bound_symbols())
    if (b.sym->id == id) out.push_back(b.executor);
  return out;
}

TEST(Attention, OddLengthsAndHeadSizesMatchEager) {
  at::manual_seed(0);
  for (at::ScalarType dt : {at::kDouble, at::kFloat})
    for (bool causal : {true, false})
      for (int64_t t : {1, 7, 33, 129})
        for (int64_t d : {5, 24, 64})
          check_case({{2, 3, t, d}, {2, 3, t, d}, {2, 3, t, d}, causal, dt});
}

// Top-left aligned causal mask: with more queries than keys the rows past the
// last key see every key (no row is fully masked); with fewer, row i sees
// keys 0..i. v may have its own head size.
TEST(Attention, QueriesAndKeysOfDifferentLengths) {
  at::manual_seed(1);
  for (at::ScalarType dt : {at::kDouble, at::kFloat})
    for (bool causal : {true, false}) {
      check_case({{2, 2, 12, 8}, {2, 2, 5, 8}, {2, 2, 5, 8}, causal, dt});
      check_case({{2, 2, 5, 8}, {2, 2, 12, 8}, {2, 2, 12, 6}, causal, dt});
      check_case({{1, 1, 1, 3}, {1, 1, 9, 3}, {1, 1, 9, 4}, causal, dt});
    }
}

TEST(Attention, ThreeAndFiveDimensionalInputs) {
  at::manual_seed(2);
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    check_case({{3, 9, 16}, {3, 9, 16}, {3, 9, 16}, true, dt});
    check_case({{2, 2, 2, 7, 5}, {2, 2, 2, 7, 5}, {2, 2, 2, 7, 5}, false, dt});
  }
}

// The forward and backward are one statement each, claimed by the attention
// executor; the backward saves q, k, v, out and lse, never a [.., T, S] tensor.
TEST(Attention, ClaimedAndSavesNoProbabilities) {
  at::manual_seed(3);
  constexpr int64_t b = 2, h = 3, t = 33, d = 24;
  const int self = index_of(JitOptions{}.executors, "attention");
  ASSERT_GE(self, 0) << "attention is a default executor";
  for (at::ScalarType dt : {at::kFloat, at::kDouble}) {
    auto jfn = check_case({{b, h, t, d}, {b, h, t, d}, {b, h, t, d}, true, dt});
    EXPECT_EQ(claims(last_traces(jfn).back(), "ltorch.sdpa_forward"), std::vector<int>{self})
        << last_traces(jfn).back();
    EXPECT_EQ(claims(last_backward_traces(jfn).back(), "ltorch.sdpa_backward"),
              std::vector<int>{self})
        << last_backward_traces(jfn).back();
    int64_t saved_bytes = 0;
    for (const TensorInfo& s : last_saved_for_backward(jfn)) {
      EXPECT_FALSE(s.shape.size() >= 2 && s.shape[s.shape.size() - 2] == t && s.shape.back() == t)
          << "saved a [.., T, T] tensor " << s.name;
      saved_bytes += s.bytes;
    }
    const int64_t elem = dt == at::kDouble ? 8 : 4;
    EXPECT_EQ(saved_bytes, (4 * b * h * t * d + b * h * t) * elem);  // q, k, v, out; lse
  }
}

// Without grad the plain op is one statement on the attention executor.
TEST(Attention, ForwardWithoutGradIsClaimedWhole) {
  at::manual_seed(4);
  const at::Tensor q = at::randn({2, 4, 17, 8}), k = at::randn({2, 4, 17, 8}),
                   v = at::randn({2, 4, 17, 8});
  auto jfn = jit(sdpa_fn(true));
  expect_close(jfn(q, k, v).aten(), eager_sdpa(q, k, v, true).to(at::kDouble), at::kFloat, "out");
  const Trace final_trace = last_traces(jfn).back();
  EXPECT_EQ(claims(final_trace, "ltorch.scaled_dot_product_attention"),
            std::vector<int>{index_of(JitOptions{}.executors, "attention")})
      << final_trace;
}

// The char-GPT's layout: q, k and v are [B, H, T, D] views of one [B, T, 3C]
// buffer (strides from [B, T, 3, H, D]). The attention statements read the
// views themselves: no copy is made between the split and the kernel.
TEST(Attention, HeadViewsOfAQkvSplit) {
  at::manual_seed(5);
  constexpr int64_t b = 2, t = 19, h = 4, hd = 6, c = h * hd;
  auto heads = [](const auto& x, int64_t part) {
    return x.narrow(2, part * c, c).view({b, t, h, hd}).transpose(1, 2);
  };
  for (at::ScalarType dt : {at::kFloat, at::kDouble}) {
    const at::Tensor x = at::randn({b, t, 3 * c}, dt), go = at::randn({b, h, t, hd}, dt);
    const at::Tensor xr = x.to(at::kDouble).clone().requires_grad_();
    at::Tensor ref = eager_sdpa(heads(xr, 0), heads(xr, 1), heads(xr, 2), true);
    ref.backward(go.to(at::kDouble));

    auto jfn = jit([&](const Tensor& qkv) {
      std::vector<Tensor> parts = qkv.split(c, 2);
      auto split_heads = [&](const Tensor& p) { return p.view({b, t, h, hd}).transpose(1, 2); };
      return F::scaled_dot_product_attention(split_heads(parts[0]), split_heads(parts[1]),
                                             split_heads(parts[2]), true);
    });
    const at::Tensor xj = x.clone().requires_grad_();
    Tensor out = jfn(xj);
    expect_close(out.aten(), ref.detach(), dt, "out");
    out.backward(go);
    expect_close(xj.grad(), xr.grad(), dt, "gqkv");

    const Trace fwd = last_traces(jfn).back();
    const int self = index_of(JitOptions{}.executors, "attention");
    EXPECT_EQ(claims(fwd, "ltorch.sdpa_forward"), std::vector<int>{self}) << fwd;
    // Everything before the attention statement is a view (or a del): no
    // region, no copy.
    for (const BoundSymbol& s : fwd.bound_symbols()) {
      if (s.sym->id == "ltorch.sdpa_forward") break;
      if (s.sym->id == "del") continue;
      EXPECT_TRUE(s.sym->id.find("split") != std::string::npos ||
                  s.sym->id.find("view") != std::string::npos ||
                  s.sym->id.find("reshape") != std::string::npos ||
                  s.sym->id.find("transpose") != std::string::npos)
          << "statement before the attention kernel: " << s.sym->id << "\n"
          << fwd;
    }
  }
}

// Batch dims that broadcast (as in matmul): the grad rule expands them for
// the kernel and sums the gradients back.
TEST(Attention, BroadcastBatchDims) {
  at::manual_seed(6);
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    check_case({{2, 3, 7, 5}, {1, 3, 9, 5}, {3, 9, 4}, true, dt});
    check_case({{3, 7, 5}, {2, 3, 7, 5}, {2, 1, 7, 5}, false, dt});
  }
}

// The decomposition into prims gives the same values on every executor list
// without `attention`, and with cpu_fuser's regions on the ATen fallback.
TEST(Attention, CompositePathMatches) {
  at::manual_seed(7);
  for (const std::vector<std::string>& executors :
       {std::vector<std::string>{"aten"}, std::vector<std::string>{"cpu_fuser", "aten"},
        std::vector<std::string>{"dnnl", "cpu_fuser", "aten"},
        std::vector<std::string>{"aten_prims", "aten"}}) {
    for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
      auto jfn = check_case({{2, 3, 13, 5}, {2, 3, 13, 5}, {2, 3, 13, 5}, true, dt},
                            {.executors = executors});
      // The backward is still the one symbol (decomposed by claiming), and
      // nothing [.., T, T] is saved.
      EXPECT_NE(last_backward_traces(jfn).front().str().find("ltorch.sdpa_backward("),
                std::string::npos);
      for (const TensorInfo& s : last_saved_for_backward(jfn))
        EXPECT_FALSE(s.shape.size() >= 2 && s.shape.back() == 13 &&
                     s.shape[s.shape.size() - 2] == 13)
            << executors.front() << ": saved " << s.name;
    }
  }
  ScopedEnv no_codegen("THUNDER_DISABLE_CODEGEN", "1");
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    check_case({{2, 3, 13, 5}, {2, 3, 13, 5}, {2, 3, 13, 5}, false, dt},
               {.executors = {"cpu_fuser", "aten"}});
    check_case({{2, 3, 13, 5}, {2, 3, 13, 5}, {2, 3, 13, 5}, true, dt});
  }
}

}  // namespace
}  // namespace thunder
