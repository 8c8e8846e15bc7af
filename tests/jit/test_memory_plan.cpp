// The memory plan: large buffers a jitted function frees are reused by its
// later allocations, never while a tensor still holds them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

constexpr int64_t kN = 1 << 20;  // 4 MB of f32: above the pool's threshold

TEST(MemoryPlan, FreedBuffersAreReusedAcrossCalls) {
  // Op by op on ATen, so the chain has intermediates to free and reuse.
  auto jfn = jit([](const Tensor& x) { return ((x * 2.0 + 1.0).exp() - x).sin(); },
                 {.executors = {"aten"}});
  at::Tensor x = at::randn({kN});
  at::Tensor ref = ((x * 2.0 + 1.0).exp() - x).sin();
  at::Tensor out = jfn(x).aten();
  void* first = out.data_ptr();
  EXPECT_TRUE(at::equal(out, ref));
  int64_t reuses_after_first = compile_stats(jfn).buffer_reuses;
  EXPECT_GT(reuses_after_first,
            0);  // intermediates freed at their last use are reused within the call
  // While the output is alive its buffer is not reused.
  at::Tensor out2 = jfn(x).aten();
  EXPECT_NE(out2.data_ptr(), first);
  EXPECT_TRUE(at::equal(out, ref));
  EXPECT_TRUE(at::equal(out2, ref));
  // Once dropped, it is.
  out = at::Tensor();
  out2 = at::Tensor();
  at::Tensor out3 = jfn(x).aten();
  EXPECT_TRUE(at::equal(out3, ref));
  EXPECT_GT(compile_stats(jfn).buffer_reuses, reuses_after_first + 2);
  EXPECT_GT(compile_stats(jfn).idle_buffer_bytes, 0);
}

TEST(MemoryPlan, TwoForwardsBeforeOneBackward) {
  auto fn = [](const Tensor& x, const Tensor& w) { return ((x * w).tanh() * x).exp().sum(); };
  auto jfn = jit(fn);
  at::manual_seed(0);
  at::Tensor w = (at::randn({kN}) * 0.1).requires_grad_();
  at::Tensor x1 = at::randn({kN}), x2 = at::randn({kN});
  Tensor l1 = jfn(x1, w);
  Tensor l2 = jfn(x2, w);  // reuses buffers, but not the ones l1's backward saved
  l1.backward();
  at::Tensor g1 = w.grad().clone();
  w.mutable_grad() = at::Tensor();  // each call's own gradient, not a difference of sums
  l2.backward();
  at::Tensor g2 = w.grad();
  at::Tensor we = w.detach().clone().requires_grad_();
  ((x1 * we).tanh() * x1).exp().sum().backward();
  EXPECT_TRUE(at::allclose(g1, we.grad(), 1e-5, 1e-5));
  we.mutable_grad() = at::Tensor();
  ((x2 * we).tanh() * x2).exp().sum().backward();
  EXPECT_TRUE(at::allclose(g2, we.grad(), 1e-5, 1e-5));
}

TEST(MemoryPlan, OutputsOutliveTheJittedFunction) {
  at::Tensor x = at::randn({kN});
  at::Tensor out;
  {
    auto jfn = jit([](const Tensor& x) { return (x + 1.0) * 3.0; });
    jfn(x);
    out = jfn(x).aten();
  }  // the pool goes with the function; the output keeps its buffer
  EXPECT_TRUE(at::allclose(out, (x + 1.0) * 3.0));
  out = at::Tensor();  // freed straight to the system now
}

}  // namespace
}  // namespace thunder
