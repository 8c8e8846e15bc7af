// In-place methods eagerly: the same effect as libtorch on the tensor and its
// views, and the same handle returned. (Under jit they are issue 6's work and
// refuse with thunder::Error for now: see tests/errors.)
#include "ops/opinfo.h"

namespace thunder::testing {
namespace {

void expect_inplace(const char* name, const std::function<void(Tensor&)>& ours,
                    const std::function<void(at::Tensor&)>& theirs, at::Tensor start) {
  SCOPED_TRACE(name);
  at::Tensor a = start.clone(), b = start.clone();
  at::Tensor view_a = a.select(0, 0);  // a view sees the write
  Tensor t(a);
  ours(t);
  theirs(b);
  EXPECT_TRUE(t.aten().is_same(a)) << "the handle must still wrap the same tensor";
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_TRUE(at::equal(view_a, b.select(0, 0)));
}

TEST(InplaceEager, EveryInPlaceMethodMatchesLibtorch) {
  at::Tensor x = make_tensor({3, 4});
  at::Tensor y = make_tensor({3, 4}), row = make_tensor({4});
  at::Tensor mask = make_tensor({3, 4}, at::kBool);
  at::Tensor index = at::randint(0, 3, {2, 4});
  at::Tensor src = make_tensor({2, 4});
  expect_inplace(
      "add_ tensor", [&](Tensor& t) { t.add_(y, 2); }, [&](at::Tensor& t) { t.add_(y, 2); }, x);
  expect_inplace(
      "add_ broadcast", [&](Tensor& t) { t.add_(row); }, [&](at::Tensor& t) { t.add_(row); }, x);
  expect_inplace(
      "add_ number", [&](Tensor& t) { t.add_(1.5); }, [&](at::Tensor& t) { t.add_(1.5); }, x);
  expect_inplace(
      "mul_ tensor", [&](Tensor& t) { t.mul_(y); }, [&](at::Tensor& t) { t.mul_(y); }, x);
  expect_inplace(
      "mul_ number", [&](Tensor& t) { t.mul_(-2); }, [&](at::Tensor& t) { t.mul_(-2); }, x);
  expect_inplace(
      "copy_", [&](Tensor& t) { t.copy_(y); }, [&](at::Tensor& t) { t.copy_(y); }, x);
  expect_inplace(
      "copy_ broadcast", [&](Tensor& t) { t.copy_(row); }, [&](at::Tensor& t) { t.copy_(row); }, x);
  expect_inplace(
      "fill_", [&](Tensor& t) { t.fill_(7); }, [&](at::Tensor& t) { t.fill_(7); }, x);
  expect_inplace(
      "zero_", [&](Tensor& t) { t.zero_(); }, [&](at::Tensor& t) { t.zero_(); }, x);
  expect_inplace(
      "masked_fill_", [&](Tensor& t) { t.masked_fill_(mask, -1.0); },
      [&](at::Tensor& t) { t.masked_fill_(mask, -1.0); }, x);
  expect_inplace(
      "scatter_add_", [&](Tensor& t) { t.scatter_add_(0, index, src); },
      [&](at::Tensor& t) { t.scatter_add_(0, index, src); }, x);
  at::manual_seed(7);
  at::Tensor u1 = x.clone();
  Tensor(u1).uniform_(-2.0, 3.0);
  at::manual_seed(7);
  at::Tensor u2 = x.clone();
  u2.uniform_(-2.0, 3.0);
  EXPECT_TRUE(at::equal(u1, u2)) << "uniform_ with the same seed";
  EXPECT_TRUE((u1 >= -2.0).all().item<bool>() && (u1 < 3.0).all().item<bool>());
}

TEST(InplaceEager, ErrorsNameTheMethod) {
  Tensor t(at::zeros({3}));
  try {
    t.add_(at::ones({4}));
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.add_"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(at::equal(t.aten(), at::zeros({3})));
}

}  // namespace
}  // namespace thunder::testing
