// OpInfo samples for reductions: sum, mean, amax, amin, var, std, argmax, max.
#include <cmath>

#include "ops/opinfo.h"

namespace thunder::testing {
namespace {
using ReductionOps = OpInfoTest;

using Dims = std::vector<int64_t>;

// Shapes with the dims lists to reduce over (empty = all dims).
const std::vector<std::pair<std::vector<int64_t>, std::vector<Dims>>>& cases() {
  static const std::vector<std::pair<std::vector<int64_t>, std::vector<Dims>>> c = {
      {{2, 3, 4}, {{}, {0}, {1}, {-1}, {0, 2}, {2, -3}, {0, 1, 2}}},
      {{5}, {{}, {0}, {-1}}},
      {{3, 1, 2}, {{1}, {1, 2}}},
      {{}, {{}, {0}, {-1}}},
  };
  return c;
}

std::string label(const std::string& op, at::IntArrayRef shape, const Dims& dims, bool keepdim,
                  at::ScalarType dt) {
  std::ostringstream os;
  os << op << " shape " << shape << " dims " << at::IntArrayRef(dims) << " keepdim " << keepdim
     << " " << dt;
  return os.str();
}

TEST_F(ReductionOps, Sum) {
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf, at::kInt, at::kLong, at::kBool})
    for (const auto& [shape, dimss] : cases())
      for (const Dims& dims : dimss)
        for (bool keepdim : {false, true})
          check1(
              label("sum", shape, dims, keepdim, dt), make_tensor(shape, dt),
              [=](const Tensor& x) { return sum(x, dims, keepdim); },
              [=](const at::Tensor& x) { return at::sum(x, dims, keepdim); },
              dt == at::kHalf ? 1e-2 : 0);
  check1(
      "sum() all", make_tensor({3, 4}), [](const Tensor& x) { return sum(x); },
      [](const at::Tensor& x) { return at::sum(x); });
  check1(
      "sum() of int32 is int64", make_tensor({3, 4}, at::kInt),
      [](const Tensor& x) { return x.sum(); }, [](const at::Tensor& x) { return x.sum(); });
  check1(
      "sum noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) { return sum(x, {1}, true); },
      [](const at::Tensor& x) { return at::sum(x, {1}, true); });
  check1(
      "sum empty dim", make_tensor({0, 3}), [](const Tensor& x) { return sum(x, {0}); },
      [](const at::Tensor& x) { return at::sum(x, {0}); });
  check1(
      "sum empty all", make_tensor({0, 3}), [](const Tensor& x) { return sum(x); },
      [](const at::Tensor& x) { return at::sum(x); });
  check1(
      "sum empty kept dim", make_tensor({0, 3}), [](const Tensor& x) { return sum(x, {1}); },
      [](const at::Tensor& x) { return at::sum(x, {1}); });
}

TEST_F(ReductionOps, SumErrors) {
  error1("ltorch.sum", make_tensor({2, 3}), [](const Tensor& x) { return sum(x, {2}); });
  error1("ltorch.sum", make_tensor({2, 3}), [](const Tensor& x) { return sum(x, {-3}); });
  error1("ltorch.sum", make_tensor({2, 3}), [](const Tensor& x) { return sum(x, {1, -1}); });
  error1("ltorch.sum", make_tensor({}), [](const Tensor& x) { return sum(x, {1}); });
}

TEST_F(ReductionOps, Mean) {
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf})
    for (const auto& [shape, dimss] : cases())
      for (const Dims& dims : dimss)
        for (bool keepdim : {false, true})
          // Half: libtorch divides the rounded half sum, the decomposition divides in float.
          check1(
              label("mean", shape, dims, keepdim, dt), make_tensor(shape, dt),
              [=](const Tensor& x) { return mean(x, dims, keepdim); },
              [=](const at::Tensor& x) { return at::mean(x, dims, keepdim); },
              dt == at::kHalf ? 1e-2 : 0);
  check1(
      "mean() all", make_tensor({3, 4}), [](const Tensor& x) { return x.mean(); },
      [](const at::Tensor& x) { return x.mean(); });
  check1(
      "mean noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) {
        return mean(x, {0, 2});
      },
      [](const at::Tensor& x) {
        return at::mean(x, at::IntArrayRef{0, 2});
      });
  check1(
      "mean of empty is nan", make_tensor({0, 3}), [](const Tensor& x) { return mean(x); },
      [](const at::Tensor& x) { return at::mean(x); });
  check1(
      "mean over empty dim is nan", make_tensor({0, 3}),
      [](const Tensor& x) { return mean(x, {0}, true); },
      [](const at::Tensor& x) { return at::mean(x, {0}, true); });
}

TEST_F(ReductionOps, MeanErrors) {
  error1("ltorch.mean", make_tensor({2, 3}, at::kLong), [](const Tensor& x) { return mean(x); });
  error1("ltorch.mean", make_tensor({2, 3}, at::kBool), [](const Tensor& x) { return mean(x); });
  error1("ltorch.mean", make_tensor({2, 3}), [](const Tensor& x) { return mean(x, {0, 0}); });
  error1("ltorch.mean", make_tensor({2, 3}), [](const Tensor& x) { return mean(x, {2}); });
}

TEST_F(ReductionOps, AmaxAmin) {
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf, at::kInt, at::kLong, at::kBool})
    for (const auto& [shape, dimss] : cases())
      for (const Dims& dims : dimss)
        for (bool keepdim : {false, true}) {
          at::Tensor x = make_tensor(shape, dt);
          check1(
              label("amax", shape, dims, keepdim, dt), x,
              [=](const Tensor& x) { return amax(x, dims, keepdim); },
              [=](const at::Tensor& x) { return at::amax(x, dims, keepdim); });
          check1(
              label("amin", shape, dims, keepdim, dt), x,
              [=](const Tensor& x) { return amin(x, dims, keepdim); },
              [=](const at::Tensor& x) { return at::amin(x, dims, keepdim); });
        }
  check1(
      "amax noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) { return x.amax({-1}); },
      [](const at::Tensor& x) { return x.amax({-1}); });
  check1(
      "amin of empty tensor over a non-empty dim", make_tensor({0, 3}),
      [](const Tensor& x) { return amin(x, {1}); },
      [](const at::Tensor& x) { return at::amin(x, {1}); });
  check1(
      "amax propagates nan", at::tensor({1.0, NAN, 3.0}).reshape({1, 3}),
      [](const Tensor& x) { return amax(x, {1}); },
      [](const at::Tensor& x) { return at::amax(x, {1}); });
}

TEST_F(ReductionOps, AmaxAminErrors) {
  error1("ltorch.amax", make_tensor({0, 3}), [](const Tensor& x) { return amax(x, {0}); });
  error1("ltorch.amax", make_tensor({0, 3}), [](const Tensor& x) { return amax(x); });
  error1("ltorch.amin", make_tensor({2, 0}), [](const Tensor& x) { return amin(x, {-1}); });
  error1("ltorch.amin", make_tensor({2, 3}), [](const Tensor& x) { return amin(x, {3}); });
}

TEST_F(ReductionOps, VarStd) {
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf})
    for (const auto& [shape, dimss] : cases())
      for (const Dims& dims : dimss)
        for (bool keepdim : {false, true})
          for (bool unbiased : {true, false}) {
            at::Tensor x = make_tensor(shape, dt);
            std::string tag = unbiased ? " unbiased" : " biased";
            double tol = dt == at::kHalf ? 1e-2 : 0;
            check1(
                label("var", shape, dims, keepdim, dt) + tag, x,
                [=](const Tensor& x) { return var(x, dims, unbiased, keepdim); },
                [=](const at::Tensor& x) { return at::var(x, dims, unbiased, keepdim); }, tol);
            check1(
                label("std", shape, dims, keepdim, dt) + tag, x,
                [=](const Tensor& x) { return thunder::std(x, dims, unbiased, keepdim); },
                [=](const at::Tensor& x) { return at::std(x, dims, unbiased, keepdim); }, tol);
          }
  check1(
      "var() all", make_tensor({4, 5}), [](const Tensor& x) { return var(x); },
      [](const at::Tensor& x) { return at::var(x); });
  check1(
      "std(false) all", make_tensor({4, 5}), [](const Tensor& x) { return x.std(false); },
      [](const at::Tensor& x) { return x.std(false); });
  check1(
      "var noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) {
        return x.var({0, 1});
      },
      [](const at::Tensor& x) {
        return x.var(at::IntArrayRef{0, 1});
      });
  check1(
      "var over empty dim", make_tensor({0, 3}),
      [](const Tensor& x) { return var(x, {0}, true, false); },
      [](const at::Tensor& x) { return at::var(x, at::IntArrayRef{0}, true, false); });
}

TEST_F(ReductionOps, VarStdErrors) {
  error1("ltorch.var", make_tensor({2, 3}, at::kLong), [](const Tensor& x) { return var(x); });
  error1("ltorch.std", make_tensor({2, 3}, at::kInt),
         [](const Tensor& x) { return thunder::std(x); });
  error1("ltorch.var", make_tensor({2, 3}),
         [](const Tensor& x) { return var(x, at::IntArrayRef{4}); });
  error1("ltorch.std", make_tensor({2, 3}), [](const Tensor& x) {
    return thunder::std(x, {0, -2});
  });
}

TEST_F(ReductionOps, Argmax) {
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf, at::kInt, at::kLong}) {
    // Small integer ranges make ties; torch returns the first maximal index.
    at::Tensor x = make_tensor({3, 4, 5}, dt, -2, 2);
    for (bool keepdim : {false, true}) {
      std::ostringstream os;
      os << dt << " keepdim " << keepdim;
      check1(
          "argmax all " + os.str(), x, [=](const Tensor& x) { return argmax(x, {}, keepdim); },
          [=](const at::Tensor& x) { return at::argmax(x, {}, keepdim); });
      for (int64_t dim : {0, 1, 2, -1, -3})
        check1(
            "argmax dim " + std::to_string(dim) + " " + os.str(), x,
            [=](const Tensor& x) { return argmax(x, dim, keepdim); },
            [=](const at::Tensor& x) { return at::argmax(x, dim, keepdim); });
    }
  }
  for (int64_t dim : {0, -1})
    for (bool keepdim : {false, true})
      check1(
          "argmax 0-d", make_tensor({}), [=](const Tensor& x) { return x.argmax(dim, keepdim); },
          [=](const at::Tensor& x) { return x.argmax(dim, keepdim); });
  check1(
      "argmax 0-d all", make_tensor({}), [](const Tensor& x) { return x.argmax(); },
      [](const at::Tensor& x) { return x.argmax(); });
  check1(
      "argmax noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) { return argmax(x, 1); },
      [](const at::Tensor& x) { return at::argmax(x, 1); });
  check1(
      "argmax empty tensor, non-empty dim", make_tensor({0, 3}),
      [](const Tensor& x) { return argmax(x, 1, true); },
      [](const at::Tensor& x) { return at::argmax(x, 1, true); });
  check1(
      "argmax nan wins", at::tensor({1.0, NAN, 3.0, NAN}),
      [](const Tensor& x) { return argmax(x); }, [](const at::Tensor& x) { return at::argmax(x); });
}

TEST_F(ReductionOps, ArgmaxErrors) {
  error1("ltorch.argmax", make_tensor({3}, at::kBool), [](const Tensor& x) { return argmax(x); });
  error1("ltorch.argmax", make_tensor({0, 3}), [](const Tensor& x) { return argmax(x); });
  error1("ltorch.argmax", make_tensor({0, 3}), [](const Tensor& x) { return argmax(x, 0); });
  error1("ltorch.argmax", make_tensor({2, 3}), [](const Tensor& x) { return argmax(x, 2); });
  error1("ltorch.argmax", make_tensor({}), [](const Tensor& x) { return argmax(x, 1); });
}

OpSample max_sample(const std::string& name, const at::Tensor& x, int64_t dim, bool keepdim) {
  return {name,
          {x},
          [=](const TensorList& v) {
            auto [values, indices] = max(v[0], dim, keepdim);
            return TensorList{values, indices};
          },
          [=](const std::vector<at::Tensor>& v) {
            auto [values, indices] = at::max(v[0], dim, keepdim);
            return std::vector<at::Tensor>{values, indices};
          }};
}

TEST_F(ReductionOps, MaxDim) {
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf, at::kInt, at::kLong, at::kBool}) {
    at::Tensor x = make_tensor({3, 4, 5}, dt, -2, 2);
    for (int64_t dim : {0, 1, 2, -1})
      for (bool keepdim : {false, true}) {
        std::ostringstream os;
        os << "max " << dt << " dim " << dim << " keepdim " << keepdim;
        check_sample(max_sample(os.str(), x, dim, keepdim));
      }
  }
  check_sample(max_sample("max 0-d", make_tensor({}), 0, false));
  check_sample(max_sample("max 0-d keepdim", make_tensor({}), -1, true));
  check_sample(max_sample("max noncontiguous", make_noncontiguous({3, 4, 5}), 1, true));
  check_sample(max_sample("max empty, non-empty dim", make_tensor({0, 4}), 1, false));
  check_sample(max_sample("max nan", at::tensor({1.0, NAN, 3.0, NAN}).reshape({2, 2}), 1, false));
  // The method form.
  check_sample({"Tensor::max",
                {make_tensor({4, 6})},
                [](const TensorList& v) {
                  auto [values, indices] = v[0].max(0);
                  return TensorList{values, indices};
                },
                [](const std::vector<at::Tensor>& v) {
                  auto [values, indices] = v[0].max(0);
                  return std::vector<at::Tensor>{values, indices};
                }});
}

TEST_F(ReductionOps, MaxDimErrors) {
  auto fn = [](int64_t dim) {
    return [dim](const TensorList& v) {
      auto [values, indices] = max(v[0], dim);
      return TensorList{values, indices};
    };
  };
  expect_error("ltorch.max", {make_tensor({2, 3})}, fn(2));
  expect_error("ltorch.max", {make_tensor({2, 3})}, fn(-3));
  expect_error("ltorch.max", {make_tensor({0, 3})}, fn(0));
}

}  // namespace
}  // namespace thunder::testing
