// In-place errors under jit: each names the op and the offending value, leaves
// the caller's tensors unchanged and the jitted callable usable.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

void expect_error_mentioning_all(const std::function<void()>& f,
                                 const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "expected thunder::Error";
  } catch (const Error& e) {
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST(InPlaceErrors, LeafThatRequiresGradUnderJit) {
  auto jfn = jit(
      [](Tensor w, Tensor g) {
        w.add_(g, -0.1);
        return w * 1.0;
      },
      {.arg_names = {"w", "g"}});
  at::Tensor w = at::ones({3}).requires_grad_(), g = at::ones({3});
  expect_error_mentioning_all([&] { jfn(w, g); }, {"Tensor.add_", "leaf", "(w)"});
  EXPECT_TRUE(at::equal(w.detach(), at::ones({3})));  // unchanged
  NoGradGuard no_grad;  // the same function is fine as an optimizer-style update
  jfn(w, g);
  EXPECT_TRUE(at::allclose(w.detach(), at::full({3}, 0.9)));
}

TEST(InPlaceErrors, ResultTypeCannotBeCast) {
  auto jfn = jit([](Tensor i) { return i.mul_(2.5); }, {.arg_names = {"i"}});
  at::Tensor i = at::ones({3}, at::kLong);
  expect_error_mentioning_all([&] { jfn(i); }, {"Tensor.mul_", "Float", "Long", "i"});
  EXPECT_TRUE(at::equal(i, at::ones({3}, at::kLong)));
}

TEST(InPlaceErrors, BroadcastWouldChangeTheShape) {
  auto jfn = jit([](Tensor a, Tensor b) { return a.add_(b); }, {.arg_names = {"a", "b"}});
  at::Tensor a = at::zeros({3});
  expect_error_mentioning_all([&] { jfn(a, at::ones({2, 3})); }, {"Tensor.add_", "a", "[2, 3]"});
  EXPECT_TRUE(at::equal(a, at::zeros({3})));
  EXPECT_TRUE(at::equal(jfn(a, at::ones({3})).aten(), at::ones({3})));  // still usable
}

TEST(InPlaceErrors, WriteIntoAnExpandedView) {
  auto jfn = jit(
      [](Tensor a) {
        a.expand({2, 3}).add_(1.0);
        return a;
      },
      {.arg_names = {"a"}});
  at::Tensor a = at::zeros({1, 3});
  expect_error_mentioning_all([&] { jfn(a); }, {"expanded view", "a", "[1, 3]", "[2, 3]"});
  EXPECT_TRUE(at::equal(a, at::zeros({1, 3})));
}

TEST(InPlaceErrors, WritingAValueThatRequiresGradIntoAnInput) {
  auto jfn = jit(
      [](Tensor buf, Tensor w) {
        buf.copy_(w * 2.0);
        return buf;
      },
      {.arg_names = {"buf", "w"}});
  at::Tensor buf = at::zeros({3}), w = at::ones({3}).requires_grad_();
  expect_error_mentioning_all([&] { jfn(buf, w); }, {"input buf", "requires grad"});
  EXPECT_TRUE(at::equal(buf, at::zeros({3})));
}

TEST(InPlaceErrors, UniformNeedsAFloatingPointTensor) {
  auto jfn = jit([](Tensor i) { return i.uniform_(); }, {.arg_names = {"i"}});
  expect_error_mentioning_all([&] { jfn(at::zeros({2}, at::kLong)); }, {"Tensor.uniform_", "i"});
}

}  // namespace
}  // namespace thunder
