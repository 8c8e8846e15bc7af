// OpInfo samples for indexing ops: gather, scatter, scatter_add, index_select,
// masked_fill.
#include "ops/opinfo.h"

namespace thunder::testing {
namespace {
using IndexingOps = OpInfoTest;

using ATs = std::vector<at::Tensor>;

// Rows of a random permutation per column: unique indices along dim 0 (scatter
// with duplicate indices has no defined winner).
at::Tensor unique_rows(int64_t rows, int64_t n, int64_t cols) {
  return at::argsort(make_tensor({n, cols}), /*dim=*/int64_t{0}, /*descending=*/false)
      .slice(0, 0, rows)
      .contiguous();
}

TEST_F(IndexingOps, Gather) {
  auto fn = [](int64_t dim) {
    return [dim](const TensorList& x) { return TensorList{gather(x[0], dim, x[1])}; };
  };
  auto ref = [](int64_t dim) {
    return [dim](const ATs& x) { return ATs{at::gather(x[0], dim, x[1])}; };
  };
  check_sample(
      {"gather dim 1", {make_tensor({3, 4}), make_tensor({3, 2}, at::kLong, 0, 3)}, fn(1), ref(1)});
  check_sample({"gather dim 0, smaller index",
                {make_tensor({3, 4}), make_tensor({2, 3}, at::kLong, 0, 2)},
                fn(0),
                ref(0)});
  check_sample({"gather dim -1, 3-D, index longer than a",
                {make_tensor({2, 3, 4}), make_tensor({2, 2, 6}, at::kLong, 0, 3)},
                fn(-1),
                ref(-1)});
  check_sample({"gather int64 values",
                {make_tensor({5}, at::kLong), make_tensor({3}, at::kLong, 0, 4)},
                fn(0),
                ref(0)});
  check_sample({"gather non-contiguous",
                {make_noncontiguous({4, 3}), make_tensor({4, 2}, at::kLong, 0, 2)},
                fn(1),
                ref(1)});

  expect_error("ltorch.gather", {make_tensor({3, 4}), make_tensor({3, 2}, at::kInt, 0, 3)}, fn(1));
  expect_error("ltorch.gather", {make_tensor({3, 4}), make_tensor({3, 2}, at::kLong, 0, 3)}, fn(2));
  expect_error("ltorch.gather", {make_tensor({3, 4}), make_tensor({3}, at::kLong, 0, 3)}, fn(1));
  expect_error("ltorch.gather", {make_tensor({3, 4}), make_tensor({3, 5}, at::kLong, 0, 3)}, fn(0));
}

TEST_F(IndexingOps, Scatter) {
  auto fn = [](int64_t dim) {
    return [dim](const TensorList& x) { return TensorList{scatter(x[0], dim, x[1], x[2])}; };
  };
  auto ref = [](int64_t dim) {
    return [dim](const ATs& x) { return ATs{at::scatter(x[0], dim, x[1], x[2])}; };
  };
  check_sample({"scatter dim 0, larger src",
                {make_tensor({3, 5}), unique_rows(2, 3, 5), make_tensor({3, 6})},
                fn(0),
                ref(0)});
  check_sample({"scatter dim -1",
                {make_tensor({5, 3}), unique_rows(2, 3, 5).t().contiguous(), make_tensor({5, 2})},
                fn(-1),
                ref(-1)});
  check_sample(
      {"scatter bool",
       {make_tensor({4, 2}, at::kBool), unique_rows(3, 4, 2), make_tensor({3, 2}, at::kBool)},
       fn(0),
       ref(0)});
  expect_error("ltorch.scatter",
               {make_tensor({3, 5}), unique_rows(2, 3, 5), make_tensor({3, 6}, at::kDouble)},
               fn(0));
  expect_error("ltorch.scatter",
               {make_tensor({3, 5}), make_tensor({2}, at::kLong, 0, 2), make_tensor({3, 6})},
               fn(0));
}

TEST_F(IndexingOps, ScatterAdd) {
  auto fn = [](int64_t dim) {
    return [dim](const TensorList& x) { return TensorList{scatter_add(x[0], dim, x[1], x[2])}; };
  };
  auto ref = [](int64_t dim) {
    return [dim](const ATs& x) { return ATs{at::scatter_add(x[0], dim, x[1], x[2])}; };
  };
  // Duplicate indices accumulate.
  check_sample({"scatter_add dim 0 duplicates",
                {make_tensor({3, 4}), make_tensor({5, 4}, at::kLong, 0, 2), make_tensor({5, 4})},
                fn(0),
                ref(0)});
  check_sample({"scatter_add dim 1, larger src",
                {make_tensor({3, 4}), make_tensor({2, 6}, at::kLong, 0, 3), make_tensor({3, 7})},
                fn(1),
                ref(1)});
  check_sample({"scatter_add int64",
                {make_tensor({6}, at::kLong), make_tensor({10}, at::kLong, 0, 5),
                 make_tensor({10}, at::kLong)},
                fn(0),
                ref(0)});
  expect_error(
      "ltorch.scatter_add",
      {make_tensor({3, 4}), make_tensor({2, 4}, at::kLong, 0, 2), make_tensor({2, 4}, at::kDouble)},
      fn(0));
  expect_error("ltorch.scatter_add",
               {make_tensor({3, 4}), make_tensor({2, 4}, at::kInt, 0, 2), make_tensor({2, 4})},
               fn(0));
  expect_error("ltorch.scatter_add",
               {make_tensor({3, 4}), make_tensor({2, 4}, at::kLong, 0, 2), make_tensor({2, 4})},
               fn(3));
}

TEST_F(IndexingOps, IndexSelect) {
  auto fn = [](int64_t dim) {
    return [dim](const TensorList& x) { return TensorList{index_select(x[0], dim, x[1])}; };
  };
  auto ref = [](int64_t dim) {
    return [dim](const ATs& x) { return ATs{at::index_select(x[0], dim, x[1])}; };
  };
  check_sample({"index_select dim 0 repeats",
                {make_tensor({4, 3}), at::tensor({3, 0, 3, 1, 2}, at::kLong)},
                fn(0),
                ref(0)});
  check_sample({"index_select dim -1 int32",
                {make_tensor({2, 3, 4}), at::tensor({1, 3}, at::kInt)},
                fn(-1),
                ref(-1)});
  check_sample(
      {"index_select 0-d index", {make_tensor({4, 3}), at::tensor(2, at::kLong)}, fn(0), ref(0)});
  check_sample({"index_select empty index",
                {make_tensor({4, 3}), at::empty({0}, at::kLong)},
                fn(1),
                ref(1)});
  expect_error("ltorch.index_select", {make_tensor({4, 3}), make_tensor({2, 2}, at::kLong, 0, 2)},
               fn(0));
  expect_error("ltorch.index_select", {make_tensor({4, 3}), make_tensor({2})}, fn(0));
  expect_error("ltorch.index_select", {make_tensor({4, 3}), make_tensor({2}, at::kLong, 0, 2)},
               fn(2));
}

TEST_F(IndexingOps, MaskedFill) {
  auto fn = [](double v) {
    return [v](const TensorList& x) { return TensorList{masked_fill(x[0], x[1], v)}; };
  };
  auto ref = [](double v) {
    return [v](const ATs& x) { return ATs{at::masked_fill(x[0], x[1], v)}; };
  };
  check_sample({"masked_fill same shape",
                {make_tensor({3, 4}), make_tensor({3, 4}, at::kBool)},
                fn(-1.5),
                ref(-1.5)});
  check_sample({"masked_fill broadcast mask",
                {make_tensor({3, 4}), make_tensor({4}, at::kBool)},
                fn(7.0),
                ref(7.0)});
  check_sample({"masked_fill mask broadcasts a",
                {make_tensor({4}), make_tensor({2, 4}, at::kBool)},
                fn(0.25),
                ref(0.25)});
  check_sample({"masked_fill -inf",
                {make_tensor({2, 3}), make_tensor({2, 1}, at::kBool)},
                fn(-INFINITY),
                ref(-INFINITY)});
  check_sample({"masked_fill int tensor truncates",
                {make_tensor({5}, at::kLong), make_tensor({5}, at::kBool)},
                fn(2.7),
                ref(2.7)});
  check_sample({"masked_fill bool tensor",
                {make_tensor({5}, at::kBool), make_tensor({5}, at::kBool)},
                fn(1.0),
                ref(1.0)});
  check_sample({"masked_fill int value",
                {make_tensor({2, 3}), make_tensor({2, 3}, at::kBool)},
                [](const TensorList& x) { return TensorList{masked_fill(x[0], x[1], 3)}; },
                [](const ATs& x) { return ATs{at::masked_fill(x[0], x[1], 3)}; }});
  expect_error("ltorch.masked_fill", {make_tensor({3, 4}), make_tensor({3, 4}, at::kLong)},
               fn(1.0));
  expect_error("ltorch.masked_fill", {make_tensor({3, 4}), make_tensor({3}, at::kBool)}, fn(1.0));
}

}  // namespace
}  // namespace thunder::testing
