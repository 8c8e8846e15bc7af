// The guarded cache: what recompiles, what hits, and what is read at call time.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

at::Tensor R(at::IntArrayRef s, at::ScalarType t = at::kFloat) {
  return at::randn(s, at::TensorOptions().dtype(t));
}

TEST(Cache, ShapesDtypesAndStridesKeyTheCache) {
  auto jfn = jit([](const Tensor& x) { return x * 2.0; });
  jfn(R({2, 3}));
  jfn(R({2, 3}));
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_EQ(cache_hits(jfn), 1);
  jfn(R({3, 2}));  // new shape
  EXPECT_EQ(cache_misses(jfn), 2);
  jfn(R({2, 3}, at::kDouble));  // new dtype
  EXPECT_EQ(cache_misses(jfn), 3);
  jfn(R({3, 2}).t());  // same shape as the first, but strided
  EXPECT_EQ(cache_misses(jfn), 4);
  jfn(R({2, 3}));  // the first entry again
  EXPECT_EQ(cache_misses(jfn), 4);
  EXPECT_EQ(cache_hits(jfn), 2);
  EXPECT_EQ(compile_stats(jfn).cache_entries, 4);
}

TEST(Cache, RequiresGradAndGradModeKeyTheCache) {
  auto jfn = jit([](const Tensor& x) { return x.exp(); });
  at::Tensor x = R({4});
  jfn(x);
  jfn(x.clone().requires_grad_());
  EXPECT_EQ(cache_misses(jfn), 2);
  {
    NoGradGuard g;
    jfn(x);
  }
  EXPECT_EQ(cache_misses(jfn), 3);
  jfn(x);  // grad mode back on: the first entry
  EXPECT_EQ(cache_misses(jfn), 3);
  EXPECT_EQ(cache_hits(jfn), 1);
}

TEST(Cache, ConstantsAreGuardedByValue) {
  auto jfn = jit([](const Tensor& x, double a, int64_t b, bool flip) {
    Tensor y = x * a + b;
    return flip ? -y : y;
  });
  at::Tensor x = R({3});
  Tensor r1 = jfn(x, 2.0, int64_t{1}, false);
  EXPECT_TRUE(at::allclose(r1.aten(), x * 2.0 + 1));
  Tensor r2 = jfn(x, 3.0, int64_t{1}, false);
  EXPECT_TRUE(at::allclose(r2.aten(), x * 3.0 + 1));
  Tensor r3 = jfn(x, 3.0, int64_t{2}, true);
  EXPECT_TRUE(at::allclose(r3.aten(), -(x * 3.0 + 2)));
  jfn(x, 3.0, int64_t{2}, true);
  EXPECT_EQ(cache_misses(jfn), 3);
  EXPECT_EQ(cache_hits(jfn), 1);
  // The constant is a literal of the trace.
  EXPECT_NE(last_traces(jfn).front().str().find("ltorch.mul(x0, 3.0)"), std::string::npos);
}

TEST(Cache, ScalarArgumentsNeverRecompile) {
  auto jfn = jit([](const Tensor& x, const Scalar& s) { return x * s; });
  at::Tensor x = R({5});
  for (double s : {1.0, 2.5, -3.0, 7.0}) {
    Tensor r = jfn(x, Scalar(s));
    EXPECT_TRUE(at::allclose(r.aten(), x * s)) << s;
  }
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_EQ(cache_hits(jfn), 3);
  std::string trace = last_traces(jfn).front().str();
  EXPECT_NE(trace.find("def computation(x0, x1)"), std::string::npos) << trace;
  EXPECT_NE(trace.find("# x1: \"float\""), std::string::npos) << trace;
}

TEST(Cache, ChangingConstantsWarnOnceAfterEightRecompiles) {
  auto jfn = jit([](const Tensor& x, double a) { return x + a; });
  at::Tensor x = R({2});
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 12; ++i) jfn(x, static_cast<double>(i));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cache_misses(jfn), 12);
  size_t first = err.find("recompiled");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("recompiled", first + 1), std::string::npos) << "warned more than once";
  EXPECT_NE(err.find("thunder::Scalar"), std::string::npos);
}

TEST(Cache, CapturedTensorsAreReadAtCallTime) {
  at::Tensor w = at::ones({3});
  auto jfn = jit([w](const Tensor& x) { return x * Tensor(w); });
  at::Tensor x = R({3});
  EXPECT_TRUE(at::allclose(jfn(x).aten(), x));
  w.mul_(5.0);  // the captured tensor changes in place: no recompile, new values used
  EXPECT_TRUE(at::allclose(jfn(x).aten(), x * 5.0));
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_EQ(cache_hits(jfn), 1);
  std::string trace = last_traces(jfn).front().str();
  EXPECT_NE(trace.find("def computation(x0, t_captured_0)"), std::string::npos) << trace;
}

TEST(Cache, TensorListLengthKeysTheCache) {
  auto jfn = jit([](const TensorList& xs) {
    Tensor acc = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) acc = acc + xs[i];
    return acc;
  });
  at::Tensor a = R({2}), b = R({2}), c = R({2});
  EXPECT_TRUE(at::allclose(jfn(std::vector<at::Tensor>{a, b}).aten(), a + b));
  EXPECT_TRUE(at::allclose(jfn(std::vector<at::Tensor>{a, b, c}).aten(), a + b + c));
  EXPECT_EQ(cache_misses(jfn), 2);
  std::string trace = last_traces(jfn).front().str();
  EXPECT_NE(trace.find("def computation(x0_0, x0_1, x0_2)"), std::string::npos) << trace;
}

TEST(Cache, CacheNoneRetracesEveryCall) {
  auto jfn = jit([](const Tensor& x) { return x + 1; }, {.cache = "none"});
  at::Tensor x = R({2});
  jfn(x);
  jfn(x);
  EXPECT_EQ(cache_misses(jfn), 2);
  EXPECT_EQ(cache_hits(jfn), 0);
}

TEST(Cache, AFailedTraceLeavesTheCallableUsable) {
  auto jfn = jit([](const Tensor& x, const Tensor& y) { return x + y; });
  EXPECT_THROW(jfn(R({3}), R({4})), Error);
  at::Tensor a = R({3}), b = R({3});
  EXPECT_TRUE(at::allclose(jfn(a, b).aten(), a + b));
  jfn(a, b);
  EXPECT_EQ(cache_hits(jfn), 1);
}

TEST(Cache, PrologueTracePrintsTheGuards) {
  auto jfn = jit([](const Tensor& x, const Scalar& s, int64_t k) { return x * s + k; },
                 {.arg_names = {"x", "s", "k"}});
  jfn(R({2, 3}), Scalar(2.0), int64_t{4});
  EXPECT_EQ(last_prologue_trace(jfn).str(),
            "# Guards of this cache entry (compiled to a signature compare)\n"
            "def prologue(x, s):\n"
            "  # x: \"cpu f32[2, 3]\"\n"
            "  # s: \"float\"\n"
            "  prologue.check_tensor_metadata(x, (2, 3), devices.Device(\"cpu\"), "
            "dtypes.float32, False, 'contiguous')\n"
            "  prologue.check_number_type(s, 'float')\n"
            "  prologue.check_literal('k', 4)\n"
            "  prologue.check_grad_mode(True)\n"
            "  return None\n");
}

TEST(JitOptions, UnknownNamesAreErrors) {
  auto f = [](const Tensor& x) { return x; };
  try {
    jit(f, {.executors = {"nvfuser"}});
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nvfuser'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("aten"), std::string::npos) << e.what();
  }
  EXPECT_THROW(jit(f, {.fusion_type = "greedy"}), Error);
  EXPECT_THROW(jit(f, {.cache = "always"}), Error);
  EXPECT_THROW(jit(f, {.executors = {}}), Error);
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

struct TinyNet : nn::Module {
  nn::Linear fc{4, 3};
  nn::Dropout drop{0.5};
  TinyNet() {
    register_module("fc", fc);
    register_module("drop", drop);
  }
  Tensor forward(const Tensor& x) { return drop(fc(x)).sum(); }
};

TEST(Cache, ModuleTrainingFlagKeysTheCacheAndTrainingStepsHit) {
  TinyNet net;
  auto jnet = jit(net);
  at::Tensor x = at::randn({2, 4});
  for (int i = 0; i < 3; ++i) jnet(x).backward();  // backward fills .grad: no recompile
  EXPECT_EQ(cache_misses(jnet), 1);
  EXPECT_EQ(cache_hits(jnet), 2);
  net.eval();  // dropout becomes the identity: a new entry
  Tensor y = jnet(x);
  EXPECT_EQ(cache_misses(jnet), 2);
  EXPECT_TRUE(at::allclose(y.aten(), net.fc.forward(x).aten().sum()));
  std::string trace = last_traces(jnet).front().str();
  EXPECT_EQ(trace.find("dropout"), std::string::npos) << trace;
  net.train();
  jnet(x);
  EXPECT_EQ(cache_misses(jnet), 2);
}

}  // namespace
}  // namespace thunder
