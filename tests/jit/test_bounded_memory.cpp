// Memory stays bounded over long runs: the cache holds at most
// JitOptions::max_cache_entries entries (oldest dropped first), and cache
// hits, training steps and ever-changing shapes keep resident memory flat.
// Bounds are on bytes, never on time.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>
#include <unistd.h>

#include <fstream>

namespace thunder {
namespace {

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t total = 0, resident = 0;
  statm >> total >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

constexpr int64_t kMiB = 1 << 20;

// Resident-memory bounds mean nothing under AddressSanitizer: its quarantine
// keeps freed blocks resident on purpose (make test runs these checks).
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() \
  GTEST_SKIP() << "AddressSanitizer's quarantine keeps freed memory resident"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

TEST(BoundedMemory, CacheKeepsAtMostMaxEntriesDroppingTheOldest) {
  auto jfn = jit([](const Tensor& x) { return exp(x) + 1.0; }, {.max_cache_entries = 2});
  const at::Tensor a = at::randn({3}), b = at::randn({4}), c = at::randn({5});
  for (const at::Tensor& x : {a, b, c}) EXPECT_TRUE(at::allclose(jfn(x).aten(), at::exp(x) + 1.0));
  EXPECT_EQ(compile_stats(jfn).cache_entries, 2);
  EXPECT_EQ(compile_stats(jfn).cache_evictions, 1);
  (void)jfn(c);  // still cached
  (void)jfn(b);
  EXPECT_EQ(cache_misses(jfn), 3);
  EXPECT_TRUE(at::allclose(jfn(a).aten(), at::exp(a) + 1.0));  // a was dropped: compiles again
  EXPECT_EQ(cache_misses(jfn), 4);
  EXPECT_EQ(compile_stats(jfn).cache_evictions, 2);
  EXPECT_EQ(last_traces(jfn).front().inputs[0]->shape, (std::vector<int64_t>{3}));
}

TEST(BoundedMemory, MaxCacheEntriesBelowOneIsAnError) {
  try {
    (void)jit([](const Tensor& x) { return x; }, {.max_cache_entries = 0});
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_cache_entries must be at least 1, got 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(BoundedMemory, HundredThousandCacheHitsKeepResidentMemoryFlat) {
  SKIP_UNDER_ASAN();
  auto jfn = jit([](const Tensor& x, const Tensor& y) { return tanh(x * y) + y; });
  const at::Tensor x = at::randn({64}), y = at::randn({64});
  for (int i = 0; i < 2000; ++i) (void)jfn(x, y);
  const int64_t before = resident_bytes();
  for (int i = 0; i < 100000; ++i) (void)jfn(x, y);
  const int64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, 2 * kMiB) << "resident memory grew by " << grown << " bytes";
  EXPECT_EQ(cache_misses(jfn), 1);
}

TEST(BoundedMemory, ThousandTrainingStepsKeepResidentMemoryFlat) {
  SKIP_UNDER_ASAN();
  auto loss_fn = [](const Tensor& x, const Tensor& w) { return (sigmoid(x * w) * x).sum(); };
  auto jfn = jit(loss_fn);
  at::Tensor w = at::randn({32, 32}).requires_grad_(true);
  const at::Tensor x = at::randn({32, 32});
  auto step = [&] {
    Tensor loss = jfn(x, w);
    loss.backward();
    at::NoGradGuard ng;
    w.sub_(w.grad() * 1e-3);
    w.mutable_grad().zero_();
  };
  for (int i = 0; i < 100; ++i) step();
  const int64_t before = resident_bytes();
  for (int i = 0; i < 1000; ++i) step();
  const int64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, 4 * kMiB) << "resident memory grew by " << grown << " bytes";
  EXPECT_EQ(cache_misses(jfn), 1);
}

// Every call a new shape: entries (traces, programs) beyond the bound are
// freed, so memory after 400 shapes is what it was after 100.
TEST(BoundedMemory, EverChangingShapesKeepTheCacheAndMemoryBounded) {
  SKIP_UNDER_ASAN();
  auto jfn = jit([](const Tensor& x) { return (x * 2.0).sin() + x; },
                 {.executors = {"aten"}, .max_cache_entries = 8});
  auto run_shapes = [&](int from, int to) {
    for (int n = from; n < to; ++n) {
      at::Tensor x = at::randn({n});
      ASSERT_TRUE(at::allclose(jfn(x).aten(), (x * 2.0).sin() + x));
    }
  };
  run_shapes(1, 101);
  const int64_t before = resident_bytes();
  run_shapes(101, 401);
  const int64_t grown = resident_bytes() - before;
  EXPECT_EQ(compile_stats(jfn).cache_entries, 8);
  EXPECT_EQ(compile_stats(jfn).cache_evictions, 400 - 8);
  EXPECT_LT(grown, 8 * kMiB) << "resident memory grew by " << grown << " bytes";
}

}  // namespace
}  // namespace thunder
