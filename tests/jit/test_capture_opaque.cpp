// Opaque ATen calls (docs/capture.md): captured ops without a translation run
// as one aten.call statement where no gradient flows through them, checked
// against eager libtorch; where a gradient would flow, and for views and
// random ops, capture refuses them by name.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>
#include <torch/library.h>
#include <torch/torch.h>

#include <atomic>
#include <string>
#include <tuple>

#include "thunder/core/parse_trace.h"
#include "thunder/executors/aten.h"
#include "thunder/lang/ltorch.h"
#include "thunder/transforms/autodiff.h"
#include "torch_twins.h"

namespace {

// A custom operator whose result's size the test sets: a shape that changes
// behind the guard's back, which an opaque call must notice.
std::atomic<int64_t> grow_size{3};
at::Tensor grow(const at::Tensor& x) { return at::zeros({grow_size.load()}, x.options()); }

TORCH_LIBRARY(thunder_opaque_test, m) {
  m.def("grow(Tensor x) -> Tensor");
  m.impl("grow", c10::DispatchKey::CPU, TORCH_FN(grow));
}

}  // namespace

namespace thunder {
namespace {

// Inside erfinv's domain (-1, 1).
at::Tensor Unit(at::IntArrayRef s) {
  return at::rand(s, at::TensorOptions().dtype(at::kDouble)) * 1.8 - 0.9;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected thunder::Error";
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// tanh and mul, then erfinv (no translation), then exp and add.
at::Tensor between(const at::Tensor& x) { return at::erfinv(x.tanh() * 0.5).exp() + 1; }

void expect_split_fusion(const std::function<at::Tensor(const at::Tensor&)>& jf_call,
                         const auto& jf) {
  at::Tensor x = Unit({4, 5});
  EXPECT_TRUE(at::allclose(jf_call(x), between(x), 1e-12, 1e-12));
  const std::string last = last_traces(jf).back().str();
  const size_t first = last.find("cppFusion0"), call = last.find("aten.call('aten::erfinv'"),
               second = last.find("cppFusion1");
  ASSERT_NE(call, std::string::npos) << last;
  ASSERT_NE(first, std::string::npos) << last;
  ASSERT_NE(second, std::string::npos) << last;
  EXPECT_LT(first, call) << last;
  EXPECT_LT(call, second) << last;
  EXPECT_EQ(compile_stats(jf).fusion_regions, 2) << last;  // the call splits the region
  at::Tensor y = Unit({4, 5});
  EXPECT_TRUE(at::allclose(jf_call(y), between(y), 1e-12, 1e-12));
  EXPECT_EQ(cache_hits(jf), 1);
  EXPECT_EQ(cache_misses(jf), 1);
}

TEST(CaptureOpaque, AnUntranslatedOpRunsBetweenFusedRegionsUnderNoGrad) {
  auto jf = jit([](const at::Tensor& x) { return between(x); });
  torch::NoGradGuard no_grad;
  expect_split_fusion([&](const at::Tensor& x) { return jf(x.requires_grad_()); }, jf);
}

TEST(CaptureOpaque, AnUntranslatedOpRunsWhereNoInputRequiresGrad) {
  ASSERT_TRUE(at::GradMode::is_enabled());
  auto jf = jit([](const at::Tensor& x) { return between(x); });
  expect_split_fusion([&](const at::Tensor& x) { return jf(x); }, jf);
}

TEST(CaptureOpaque, TupleResultsAreValuesOfTheirOwn) {
  auto fn = [](const at::Tensor& x) {
    auto [values, indices] = at::kthvalue(x.sin(), 2, 1);
    auto [run_max, where] = at::cummax(x, 0);
    return std::make_tuple(values * 2, indices, run_max + where.to(at::kDouble));
  };
  auto jf = jit(fn);
  for (int call = 0; call < 2; ++call) {
    at::Tensor x = at::randn({4, 6}, at::kDouble);
    auto [a, b, c] = jf(x);
    auto [ea, eb, ec] = fn(x);
    EXPECT_TRUE(at::allclose(a, ea, 1e-12, 1e-12));
    EXPECT_TRUE(at::equal(b, eb));
    EXPECT_EQ(b.scalar_type(), at::kLong);
    EXPECT_TRUE(at::allclose(c, ec, 1e-12, 1e-12));
  }
  EXPECT_EQ(cache_hits(jf), 1);
  const std::string first = last_traces(jf).front().str();
  EXPECT_TRUE(contains(first,
                       "aten.call('aten::kthvalue', [[dtypes.float64, (4,)], "
                       "[dtypes.int64, (4,)]], "))
      << first;
  EXPECT_TRUE(contains(first,
                       "aten.call('aten::cummax', [[dtypes.float64, (4, 6)], "
                       "[dtypes.int64, (4, 6)]], "))
      << first;
}

TEST(CaptureOpaque, AGradientThroughAnUntranslatedOpIsAnErrorNamingIt) {
  auto jf = jit([](const at::Tensor& x) { return at::erfinv(x * 0.5).sum(); });
  at::Tensor x = Unit({5}).requires_grad_();
  const std::string msg = error_of([&] { jf(x); });
  EXPECT_TRUE(contains(msg, "aten::erfinv")) << msg;
  EXPECT_TRUE(contains(msg, "gradient flows through it (input 0 requires grad)")) << msg;
  EXPECT_TRUE(contains(msg, "src/frontend/capture_ops.cpp")) << msg;
  EXPECT_TRUE(contains(msg, "torch::NoGradGuard")) << msg;
  // The same callable, no gradient: it compiles and runs.
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(at::allclose(jf(x), at::erfinv(x * 0.5).sum(), 1e-12, 1e-12));
}

// Integer results carry no gradient, as eagerly: argmin of a tensor that
// requires grad is fine with grad mode on.
TEST(CaptureOpaque, IntegerResultsNeedNoGradient) {
  auto fn = [](const at::Tensor& x) { return at::argmin(x * 2, 0, true) + 1; };
  auto jf = jit(fn);
  at::Tensor x = at::randn({6}, at::kDouble).requires_grad_();
  EXPECT_TRUE(at::equal(jf(x), fn(x)));
  const std::string first = last_traces(jf).front().str();
  EXPECT_TRUE(contains(first, "aten.call('aten::argmin', [[dtypes.int64, (1,)]], ")) << first;
}

TEST(CaptureOpaque, InPlaceOnAFreshTensorRunsItsFunctionalForm) {
  auto fn = [](const at::Tensor& x) {
    at::Tensor y = x * 0.5;
    y.erfinv_();
    return y.exp();
  };
  auto jf = jit(fn);
  torch::NoGradGuard no_grad;
  at::Tensor x = Unit({3, 3}), before = x.clone();
  EXPECT_TRUE(at::allclose(jf(x), fn(x), 1e-12, 1e-12));
  EXPECT_TRUE(at::equal(x, before));
  const std::string first = last_traces(jf).front().str();
  EXPECT_TRUE(contains(first, "aten.call('aten::erfinv', ")) << first;
  // Written into an argument, the functional form's result is copied back
  // into it once per call, as eagerly.
  auto into_arg = jit([](const at::Tensor& x) { return x.erfinv_(); });
  at::Tensor out = into_arg(x);
  EXPECT_TRUE(at::allclose(out, before.erfinv(), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(x, before.erfinv(), 1e-12, 1e-12));
  const std::string written = last_traces(into_arg).front().str();
  EXPECT_TRUE(contains(written, "aten.call('aten::erfinv', ")) << written;
  EXPECT_TRUE(contains(written, "copy_(")) << written;
  at::Tensor y = Unit({3, 3}) * 0.5, y_before = y.clone();
  into_arg(y);  // a cache hit: applied once more, to the new argument only
  EXPECT_TRUE(at::allclose(y, y_before.erfinv(), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(x, before.erfinv(), 1e-12, 1e-12));
}

struct SmoothImpl : torch::nn::Module {
  SmoothImpl()
      : fc(register_module("fc", torch::nn::Linear(4, 8))),
        out(register_module("out", torch::nn::Linear(8, 3))) {}
  at::Tensor forward(const at::Tensor& x) {
    return out(torch::logcumsumexp(torch::relu(fc(x)), 1)).sigmoid();
  }
  torch::nn::Linear fc, out;
};
TORCH_MODULE(Smooth);

TEST(CaptureOpaque, ATorchModuleInEvalModeUnderNoGrad) {
  torch::manual_seed(0);
  Smooth eager, jitted;
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  test::copy_parameters(*eager, *jitted);
  eager->eval();
  jitted->eval();
  auto jm = jit(jitted);
  torch::NoGradGuard no_grad;
  for (int call = 0; call < 2; ++call) {
    at::Tensor x = torch::randn({5, 4}, torch::kDouble);
    EXPECT_TRUE(at::allclose(jm(x), eager(x), 1e-12, 1e-12));
  }
  EXPECT_EQ(cache_hits(jm), 1);
  const std::string first = last_traces(jm).front().str();
  EXPECT_TRUE(contains(first, "aten.call('aten::logcumsumexp', ")) << first;
}

TEST(CaptureOpaque, ExamineReportsOpaqueOps) {
  at::Tensor x = Unit({3});
  auto fn = [](const at::Tensor& x) { return at::erfinv(x * 0.5).sum(); };
  ExamineReport r = examine(fn, x);
  EXPECT_TRUE(r.all_supported()) << r;
  EXPECT_EQ(r.str(),
            "op                count  status\n"
            "aten::mul.Scalar      1  translated\n"
            "aten::erfinv          1  opaque (no grad)\n"
            "aten::sum             1  translated\n"
            "3 ops, 2 translated, 1 opaque (no grad), 0 unsupported\n");
  // With a gradient flowing through it, the same op is unsupported.
  ExamineReport g = examine(fn, x.clone().requires_grad_());
  EXPECT_FALSE(g.all_supported()) << g;
  ASSERT_EQ(g.ops.size(), 3u) << g;
  EXPECT_EQ(g.ops[1].support, ExamineReport::Support::Unsupported) << g;
  EXPECT_TRUE(contains(g.ops[1].reason, "a gradient flows through it")) << g;
}

TEST(CaptureOpaque, ViewsAndRandomOpsAreStillRefused) {
  torch::NoGradGuard no_grad;
  at::Tensor x = at::rand({3, 3});
  auto view = jit([](const at::Tensor& x) { return x.diagonal() * 2; });
  std::string msg = error_of([&] { view(x); });
  EXPECT_TRUE(contains(msg, "aten::diagonal")) << msg;
  EXPECT_TRUE(contains(msg, "returns a view of its input")) << msg;
  auto random = jit([](const at::Tensor& x) { return at::bernoulli(x) * 2; });
  msg = error_of([&] { random(x); });
  EXPECT_TRUE(contains(msg, "aten::bernoulli")) << msg;
  EXPECT_TRUE(contains(msg, "draws random numbers")) << msg;
}

// The operator is looked up by name when the program is lowered, once per
// statement; calls reuse what lowering resolved.
TEST(CaptureOpaque, LoweringLooksTheOperatorUpOnceNotPerCall) {
  auto jf = jit([](const at::Tensor& x) { return between(x); });
  torch::NoGradGuard no_grad;
  const int64_t before = aten::operator_lookups();
  jf(Unit({8}));
  const int64_t compiled = aten::operator_lookups();
  EXPECT_EQ(compiled - before, 1);
  for (int i = 0; i < 20; ++i) jf(Unit({8}));
  EXPECT_EQ(aten::operator_lookups(), compiled);
  EXPECT_EQ(cache_hits(jf), 20);
}

// Any operator the dispatcher knows can be opaque, not only aten's. Its
// result's shape is checked on every call: this one changes behind the guard.
TEST(CaptureOpaque, AResultShapeThatChangesIsAnErrorNamingTheOp) {
  auto jf = jit([](const at::Tensor& x) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("thunder_opaque_test::grow", "")
                               .typed<at::Tensor(const at::Tensor&)>();
    return op.call(x * 2) + 1;
  });
  torch::NoGradGuard no_grad;
  grow_size = 3;
  at::Tensor x = at::randn({2});
  EXPECT_TRUE(at::equal(jf(x), at::ones({3})));
  grow_size = 4;
  const std::string msg = error_of([&] { jf(x); });
  grow_size = 3;
  EXPECT_TRUE(contains(msg, "thunder_opaque_test::grow")) << msg;
  EXPECT_TRUE(contains(msg, "[4]")) << msg;
  EXPECT_TRUE(contains(msg, "[3]")) << msg;
  EXPECT_TRUE(at::equal(jf(x), at::ones({3})));
}

constexpr const char* kOpaqueWithGrad = R"(def computation(x):
  # x: "cpu f32[3]" requires_grad
  t0 = aten.call('aten::erfinv', [[dtypes.float32, (3,)]], x)  # t0: "cpu f32[3]"
  return t0
)";

// The printed statement reads back; a gradient that reaches one anyway (a
// trace from text) is an error naming the op, not a silently dropped gradient.
TEST(CaptureOpaque, AutodiffRefusesAnOpaqueCallThatNeedsAGradient) {
  ltorch::ensure_registered();
  const Trace t = parse_trace(kOpaqueWithGrad);
  EXPECT_EQ(t.str(), kOpaqueWithGrad);
  const std::string msg = error_of([&] { autodiff(t); });
  EXPECT_TRUE(contains(msg, "aten::erfinv")) << msg;
  EXPECT_TRUE(contains(msg, "has no grad rule")) << msg;
}

}  // namespace
}  // namespace thunder
