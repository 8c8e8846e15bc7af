// Errors raised while running (not tracing) still arrive as thunder::Error
// naming the op, and leave the callable usable.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

void expect_error_mentions(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected thunder::Error mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RuntimeErrors, KernelFailureUnderJitNamesTheOp) {
  // libtorch 1.13 has no CPU float16 exp kernel: the trace is fine, the run fails.
  at::Tensor h = at::ones({3}, at::kHalf);
  bool aten_has_kernel = true;
  try {
    at::exp(h);
  } catch (const c10::Error&) {
    aten_has_kernel = false;
  }
  if (aten_has_kernel) GTEST_SKIP() << "this libtorch has a CPU float16 exp kernel";
  // On ATen (cpu_fuser's generated kernels do compute float16 exp).
  auto jfn = jit([](const Tensor& x) { return x.exp(); }, {.executors = {"aten"}});
  expect_error_mentions([&] { jfn(h); }, "ltorch.exp");
  at::Tensor f = at::ones({3});
  EXPECT_TRUE(at::allclose(jfn(f).aten(), at::exp(f)));  // still usable
}

TEST(RuntimeErrors, UndefinedTensorArgumentEagerly) {
  expect_error_mentions([] { thunder::sum(Tensor()); }, "ltorch.sum");
  expect_error_mentions([] { thunder::nn::functional::softmax(Tensor(), 0); }, "ltorch.softmax");
}

TEST(RuntimeErrors, ProxyUsedOutsideItsTrace) {
  Tensor leaked;
  auto jfn = jit([&](const Tensor& x) {
    leaked = x * 2;
    return leaked;
  });
  jfn(at::ones({2}));
  ASSERT_TRUE(leaked.is_proxy());
  expect_error_mentions([&] { leaked + 1; }, "used outside of its trace");
  expect_error_mentions([&] { leaked.aten(); }, "proxy");
}

}  // namespace
}  // namespace thunder
