#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

TEST(Jit, ElementwiseMatchesEager) {
  auto fn = [](const Tensor& x, const Tensor& y) { return (x * 2.0 + y).sigmoid() - y; };
  auto jfn = jit(fn);
  at::Tensor x = at::randn({4, 5}), y = at::randn({5});
  Tensor out = jfn(x, y);
  at::Tensor ref = at::sigmoid(x * 2.0 + y) - y;
  EXPECT_TRUE(at::allclose(out.aten(), ref));
  std::cout << last_traces(jfn).back() << last_prologue_trace(jfn);
  jfn(x, y);
  EXPECT_EQ(cache_hits(jfn), 1);
  EXPECT_EQ(cache_misses(jfn), 1);
}

}  // namespace
}  // namespace thunder
