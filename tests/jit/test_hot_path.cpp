// The cache-hit path allocates nothing: guards and dispatch reuse their
// buffers. Counted by replacing the global operator new in this binary.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
}  // namespace

void* operator new(size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace thunder {
namespace {

int64_t allocations_during(const std::function<void()>& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
}

TEST(HotPath, CacheHitAllocatesNothing) {
  // No kernels run (the program returns an input), so every allocation would
  // be the jit's own: flattening, guards, lookup, the program frame.
  auto jfn = jit([](const TensorList& xs, const Scalar& s, int64_t k) { return xs[k]; });
  std::vector<at::Tensor> xs;
  for (int i = 0; i < 8; ++i) xs.push_back(at::randn({2, 3}));
  Tensor warm = jfn(xs, Scalar(1.5), int64_t{3});
  jfn(xs, Scalar(2.5), int64_t{3});
  int64_t n = allocations_during([&] {
    for (int i = 0; i < 100; ++i) {
      Tensor r = jfn(xs, Scalar(0.5 * i), int64_t{3});
    }
  });
  EXPECT_EQ(n, 0);
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_EQ(cache_hits(jfn), 101);
}

TEST(HotPath, WithKernelsOnlyATenAllocates) {
  // With kernels, the only allocations are ATen's own: compare with eager.
  auto jfn = jit([](const Tensor& x) { return x * 2.0; });
  at::Tensor x = at::randn({4});
  jfn(x);
  jfn(x);
  int64_t eager = allocations_during([&] {
    for (int i = 0; i < 100; ++i) at::Tensor r = x * 2.0;
  });
  int64_t jitted = allocations_during([&] {
    for (int i = 0; i < 100; ++i) Tensor r = jfn(x);
  });
  EXPECT_GT(eager, 0) << "the counter must see ATen's allocations";
  EXPECT_LE(jitted, eager);
}

}  // namespace
}  // namespace thunder
