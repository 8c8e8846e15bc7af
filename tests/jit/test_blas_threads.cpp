// BlasThreadsScope: while a compiled program runs with more than one
// intra-op thread, OpenBLAS is held to one thread (one pool: OpenMP), and
// its count is restored when the last running program ends, on any thread.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "thunder/runtime/blas_threads.h"
#include "thunder/runtime/program.h"

namespace thunder {
namespace {

// Sets OpenBLAS's count and the intra-op threads for one test, restoring both.
class BlasThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_ = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (set_ == nullptr || BlasThreadsScope::openblas_threads() < 0)
      GTEST_SKIP() << "no OpenBLAS in this process";
    blas_before_ = BlasThreadsScope::openblas_threads();
    intra_before_ = at::get_num_threads();
    set_(2);  // so that holding it to 1 is visible
  }
  void TearDown() override {
    if (set_ == nullptr) return;
    set_(blas_before_);
    at::set_num_threads(intra_before_);
  }
  void (*set_)(int) = nullptr;
  int blas_before_ = 0, intra_before_ = 1;
};

TEST_F(BlasThreadsTest, HeldToOneWhileProgramsRunWithSeveralIntraOpThreads) {
  at::set_num_threads(2);
  {
    BlasThreadsScope outer;
    EXPECT_EQ(BlasThreadsScope::openblas_threads(), 1);
    {
      BlasThreadsScope nested;
      EXPECT_EQ(BlasThreadsScope::openblas_threads(), 1);
    }
    EXPECT_EQ(BlasThreadsScope::openblas_threads(), 1) << "the outer program still runs";
  }
  EXPECT_EQ(BlasThreadsScope::openblas_threads(), 2);
}

TEST_F(BlasThreadsTest, LeftAloneWithOneIntraOpThread) {
  at::set_num_threads(1);
  BlasThreadsScope scope;
  EXPECT_EQ(BlasThreadsScope::openblas_threads(), 2);
}

// A program without matrix products (an elementwise kernel) changes nothing.
TEST_F(BlasThreadsTest, LeftAloneByProgramsWithoutProducts) {
  at::set_num_threads(2);
  BlasThreadsScope scope(/*products=*/false);
  EXPECT_EQ(BlasThreadsScope::openblas_threads(), 2);
}

// Programs starting and ending on several threads at once never leave the
// held count behind.
TEST_F(BlasThreadsTest, RestoredAfterConcurrentPrograms) {
  at::set_num_threads(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 2000; ++i) {
        BlasThreadsScope scope;
        if (BlasThreadsScope::openblas_threads() != 1) ADD_FAILURE() << "not held inside a scope";
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(BlasThreadsScope::openblas_threads(), 2);
}

// Through jit: forward and backward (an ATen and a oneDNN matmul) give eager's
// values at 2 intra-op threads and leave OpenBLAS as it was.
TEST_F(BlasThreadsTest, JittedMatmulsRestoreTheCount) {
  at::set_num_threads(2);
  auto jfn = jit([](const Tensor& a, const Tensor& b) { return a.matmul(b).tanh(); });
  const at::Tensor a = at::randn({64, 48}), b = at::randn({48, 40});
  at::Tensor a2 = a.clone().requires_grad_(), b2 = b.clone().requires_grad_();
  at::Tensor got = jfn(a2, b2).aten();
  EXPECT_EQ(BlasThreadsScope::openblas_threads(), 2);
  got.sum().backward();
  EXPECT_EQ(BlasThreadsScope::openblas_threads(), 2);
  at::Tensor a3 = a.clone().requires_grad_(), b3 = b.clone().requires_grad_();
  at::Tensor want = at::matmul(a3, b3).tanh();
  want.sum().backward();
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(a2.grad(), a3.grad(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(b2.grad(), b3.grad(), 1e-4, 1e-5));
}

// Which programs enter the scope: those with a product in their final trace
// (here a oneDNN or ATen matmul, claimed whole), not an elementwise kernel.
TEST(BlasThreads, OnlyProgramsWithProductsHoldOpenBlas) {
  auto count_products = [](const Trace& t) {
    return std::count_if(t.bsyms.begin(), t.bsyms.end(), runs_matrix_product);
  };
  auto product = jit([](const Tensor& a, const Tensor& b) { return a.matmul(b).tanh(); });
  product(at::randn({8, 6}), at::randn({6, 4}));
  EXPECT_EQ(count_products(last_traces(product).back()), 1) << last_traces(product).back();
  auto elementwise = jit([](const Tensor& a) { return (a * 2).exp(); });
  elementwise(at::randn({8}));
  EXPECT_EQ(count_products(last_traces(elementwise).back()), 0) << last_traces(elementwise).back();
}

}  // namespace
}  // namespace thunder
