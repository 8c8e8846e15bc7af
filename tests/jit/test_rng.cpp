// The stateless RNG end to end: jitted rand, rand_like and dropout draw with
// uniform_philox from a (seed, offset) that get_and_update_rng_state takes
// from libtorch's default generator: fresh values on every call, the same
// values after torch::manual_seed with the same seed, exactly the values of
// thunder/core/philox.h. (Tensor::uniform_ is in place, which jit refuses
// until functionalization lands, so it is not covered here.)
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <thunder/core/philox.h>
#include <thunder/thunder.h>

#include <mutex>

namespace thunder {
namespace {

namespace F = nn::functional;

// The key the next jitted draw will take after at::manual_seed(seed).
uint64_t next_key_after_seed(uint64_t seed) {
  at::manual_seed(seed);
  uint64_t key;
  {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    key = at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
  }
  at::manual_seed(seed);
  return key;
}

std::string all_traces(const std::vector<Trace>& traces) {
  std::string s;
  for (const Trace& t : traces) s += t.str();
  return s;
}

TEST(Rng, ConsecutiveCallsDrawDifferentValuesAndReseedingRepeatsThem) {
  auto fn = [](const Tensor& x) {
    return TensorList{rand({64, 3}), rand_like(x), F::dropout(x, 0.5, true)};
  };
  auto jfn = jit(fn);
  at::Tensor x = at::rand({100}) + 1.0;
  at::manual_seed(7);
  TensorList a = jfn(x), b = jfn(x);
  at::manual_seed(7);
  TensorList c = jfn(x);
  at::manual_seed(8);
  TensorList d = jfn(x);
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_FALSE(at::equal(a[i].aten(), b[i].aten()));
    EXPECT_TRUE(at::equal(a[i].aten(), c[i].aten()));
    EXPECT_FALSE(at::equal(a[i].aten(), d[i].aten()));
  }
  // Two draws in one program differ too (each takes its own key).
  EXPECT_FALSE(at::equal(a[0].aten().flatten().narrow(0, 0, 100), a[1].aten()));
  EXPECT_EQ(cache_misses(jfn), 1);
}

TEST(Rng, EagerAndJittedDrawsShareTheGenerator) {
  auto jfn = jit([] { return rand({16}); });
  auto run = [&] {
    at::manual_seed(3);
    at::Tensor a = jfn().aten();
    at::Tensor e = at::rand({5});  // advances the same generator
    at::Tensor b = jfn().aten();
    return std::vector<at::Tensor>{a, e, b};
  };
  std::vector<at::Tensor> r1 = run(), r2 = run();
  for (size_t i = 0; i < r1.size(); ++i) EXPECT_TRUE(at::equal(r1[i], r2[i])) << i;
  EXPECT_FALSE(at::equal(r1[0], r1[2]));
}

template <typename T, typename C>
at::Tensor reference(uint64_t key, int64_t n, at::ScalarType dt) {
  at::Tensor e = at::empty({n}, dt);
  T* p = e.data_ptr<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = philox::element<T, C>(key, 0, i, C{0}, C{1});
  return e;
}

// The kernel computes exactly philox::element, from the key the generator
// hands out and counter 0, for every dtype, across parallel chunks and with a
// partial last counter (numel not a multiple of 4).
TEST(Rng, KernelMatchesThePhiloxReferenceBitForBit) {
  const int64_t n = 100003;
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    SCOPED_TRACE(c10::toString(dt));
    auto jrand = jit([dt] { return rand({n}, dt); });
    uint64_t key = next_key_after_seed(11);
    at::Tensor r = jrand().aten();
    at::Tensor expected = dt == at::kFloat    ? reference<float, float>(key, n, dt)
                          : dt == at::kDouble ? reference<double, double>(key, n, dt)
                          : dt == at::kHalf   ? reference<at::Half, float>(key, n, dt)
                                              : reference<at::BFloat16, float>(key, n, dt);
    EXPECT_TRUE(at::equal(r, expected));
  }
}

// U(0, 1) in every float dtype: in [0, 1) (half rounding that reaches 1 maps
// to 0), mean 0.5. The mean of 2^16 draws has standard deviation ~1.1e-3;
// 0.01 is ~9 of them.
TEST(Rng, RangeAndMeanInEveryFloatDtype) {
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    SCOPED_TRACE(c10::toString(dt));
    auto jfn = jit([dt] { return rand({256, 256}, dt); });
    at::Tensor u = jfn().aten();
    EXPECT_EQ(u.scalar_type(), dt);
    at::Tensor d = u.to(at::kDouble);
    EXPECT_GE(d.min().item<double>(), 0.0);
    EXPECT_LT(d.max().item<double>(), 1.0);
    EXPECT_NEAR(d.mean().item<double>(), 0.5, 0.01);
  }
}

// dropout p = 0.9 on 2^20 elements, forward and backward: the backward uses
// the forward's mask (gradient nonzero exactly where the output is), scaled
// by 1 / (1 - p) = 10. The kept fraction is binomial with standard deviation
// sqrt(0.1 * 0.9 / 2^20) ~ 2.9e-4; 0.005 is ~17 of them.
TEST(Rng, DropoutForwardBackward) {
  auto jfn = jit([](const Tensor& x) { return F::dropout(x, 0.9, true); }, {.arg_names = {"x"}});
  at::Tensor x = (at::rand({1024, 1024}) + 0.5).requires_grad_();
  at::Tensor g = at::rand({1024, 1024}) + 1.0;
  at::Tensor previous_mask;
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE(call);
    x.mutable_grad() = at::Tensor();
    Tensor out = jfn(x);
    out.backward(g);
    at::Tensor kept = out.aten().detach() != 0;
    EXPECT_TRUE(at::equal(x.grad() != 0, kept));
    EXPECT_NEAR(kept.to(at::kDouble).mean().item<double>(), 0.1, 0.005);
    const float scale = static_cast<float>(1.0 / (1.0 - 0.9));  // 10.0f, as torch
    EXPECT_TRUE(at::equal(x.grad().masked_select(kept), g.masked_select(kept) * scale));
    EXPECT_TRUE(at::allclose(out.aten().detach().masked_select(kept),
                             x.detach().masked_select(kept) * scale));
    if (call == 1) {
      EXPECT_FALSE(at::equal(kept, previous_mask));
    }
    previous_mask = kept;
  }
  std::string fwd = last_traces(jfn).back().str();
  EXPECT_NE(fwd.find("prims.get_and_update_rng_state"), std::string::npos) << fwd;
  EXPECT_NE(fwd.find("prims.uniform_philox"), std::string::npos) << fwd;
}

TEST(Rng, TracesShowTheReplacementStage) {
  at::Tensor x = at::rand({8});
  for (bool grad : {false, true}) {
    SCOPED_TRACE(grad);
    auto jfn = jit([](const Tensor& x) { return F::dropout(x, 0.5, true); }, {.arg_names = {"x"}});
    jfn(grad ? x.clone().requires_grad_() : x);
    std::vector<Trace> traces = last_traces(jfn);
    auto stage = std::find_if(traces.begin(), traces.end(),
                              [](const Trace& t) { return stage_name(t) == "Replace uniform"; });
    ASSERT_NE(stage, traces.end()) << all_traces(traces);
    // No executor can claim a stateful dropout or uniform after the stage.
    for (auto t = stage; t != traces.end(); ++t) {
      std::string s = t->str();
      EXPECT_EQ(s.find("= ltorch.dropout("), std::string::npos) << s;
      EXPECT_EQ(s.find("prims.uniform("), std::string::npos) << s;
      EXPECT_NE(s.find("[seed0, offset0] = prims.get_and_update_rng_state("), std::string::npos)
          << s;
    }
  }
}

TEST(Rng, DisableReplaceUniformKeepsTheStatefulDraw) {
  at::Tensor x = at::rand({8});
  for (bool grad : {false, true}) {
    SCOPED_TRACE(grad);
    auto jfn = jit([](const Tensor& x) { return F::dropout(x, 0.5, true); },
                   {.executors = {"aten_prims"}, .disable_replace_uniform = true});
    jfn(grad ? x.clone().requires_grad_() : x);
    std::string s = all_traces(last_traces(jfn));
    EXPECT_NE(s.find("prims.uniform("), std::string::npos) << s;
    EXPECT_EQ(s.find("uniform_philox"), std::string::npos) << s;
    EXPECT_EQ(s.find("Replace uniform"), std::string::npos) << s;
    EXPECT_NE(last_traces(jfn).back().str().find("prims.uniform("), std::string::npos);
    // Still random from call to call, and reproducible (ATen's generator).
    at::manual_seed(5);
    at::Tensor a = jfn(x).aten();
    at::Tensor b = jfn(x).aten();
    at::manual_seed(5);
    EXPECT_TRUE(at::equal(a, jfn(x).aten()));
    EXPECT_FALSE(at::equal(a, b));
  }
}

}  // namespace
}  // namespace thunder
