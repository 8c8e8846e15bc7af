// OpInfo samples for elementwise ops (arithmetic, unary, comparisons, where, clamp).
#include "ops/opinfo.h"

namespace thunder::testing {
namespace {

TEST(ElementwiseOps, AddBroadcastAndScalar) {
  check_sample({"add broadcast", {make_tensor({4, 5}), make_tensor({5})},
                [](const TensorList& x) { return TensorList{x[0] + x[1]}; },
                [](const std::vector<at::Tensor>& x) { return std::vector<at::Tensor>{x[0] + x[1]}; }});
  check_sample({"f16 * 2.5 stays f16", {make_tensor({3}, at::kHalf)},
                [](const TensorList& x) { return TensorList{x[0] * 2.5}; },
                [](const std::vector<at::Tensor>& x) { return std::vector<at::Tensor>{x[0] * 2.5}; },
                1e-3, 1e-3, 1e-3, 1e-3});
  check_sample({"i64 * 2.5 becomes f32", {make_tensor({3}, at::kLong)},
                [](const TensorList& x) { return TensorList{x[0] * 2.5}; },
                [](const std::vector<at::Tensor>& x) { return std::vector<at::Tensor>{x[0] * 2.5}; }});
}

TEST(ElementwiseOps, MatmulErrorNamesOp) {
  expect_error("ltorch.add", {make_tensor({3}), make_tensor({4})},
               [](const TensorList& x) { return TensorList{x[0] + x[1]}; });
}

}  // namespace
}  // namespace thunder::testing
