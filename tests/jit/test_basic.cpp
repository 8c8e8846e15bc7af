#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

TEST(Jit, ElementwiseMatchesEager) {
  auto fn = [](const Tensor& x, const Tensor& y) { return (x * 2.0 + y).sigmoid() - y; };
  auto jfn = jit(fn);
  at::Tensor x = at::randn({4, 5}), y = at::randn({5});
  Tensor out = jfn(x, y);
  // In float64: the fused kernel's own sigmoid differs from ATen's in the last
  // bits, and sigmoid(..) - y cancels, so float32 against float32 at
  // allclose's default atol (1e-8) failed now and then.
  const at::Tensor xd = x.to(at::kDouble), yd = y.to(at::kDouble);
  at::Tensor ref = (at::sigmoid(xd * 2.0 + yd) - yd).to(at::kFloat);
  EXPECT_TRUE(at::allclose(out.aten(), ref, 1e-5, 1e-6)) << (out.aten() - ref).abs().max();
  std::cout << last_traces(jfn).back() << last_prologue_trace(jfn);
  jfn(x, y);
  EXPECT_EQ(cache_hits(jfn), 1);
  EXPECT_EQ(cache_misses(jfn), 1);
}

}  // namespace
}  // namespace thunder
