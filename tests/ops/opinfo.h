// The OpInfo harness: each sample is one op applied to concrete inputs,
// written twice (with thunder ops and with plain libtorch). check_sample runs
// it five ways and compares against libtorch:
//   eager thunder::Tensor, thunder::jit (executor "aten": composites whole),
//   thunder::jit with "aten_prims" (every composite as its decomposition),
//   thunder::jit with "cpu_fuser" then "aten", under both fusion strategies
//   (fusible prims run in generated kernels; the ATen fallback when the suite
//   runs with THUNDER_DISABLE_CODEGEN=1).
// Floats compare with allclose (tolerances per sample), integers and bools
// exactly; dtypes and shapes must match exactly. The final traces of the
// runs without fusion regions must read back: parse(print(t)) prints as t.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <functional>
#include <string>
#include <vector>

namespace thunder::testing {

using ThunderFn = std::function<TensorList(const TensorList&)>;
using TorchFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

struct OpSample {
  std::string name;
  std::vector<at::Tensor> inputs;
  ThunderFn thunder_fn;
  TorchFn torch_fn;
  double rtol = 1e-5;
  double atol = 1e-6;
  // The decomposition may round differently (e.g. mean as sum/n); its own tolerance.
  double prims_rtol = 1e-4;
  double prims_atol = 1e-5;
};

// Compares outputs (shape, dtype, values); reports `how` on failure.
void expect_same(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want,
                 double rtol, double atol, const std::string& how);

// Runs a sample five ways (see above); inside an OpInfoTest, when the test
// body has finished.
void check_sample(const OpSample& s);

// The fixture of the OpInfo suites. check_sample queues its samples while the
// test body runs; TearDown (still part of the test: failures are the test's)
// builds every generated kernel the samples need in one KernelBatch, then
// checks each sample. Hundreds of small kernels then build several times
// faster than one compile per jitted call.
class OpInfoTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

 private:
  std::vector<OpSample> samples_;
};

// Expects fn(inputs) to throw thunder::Error mentioning `needle` (e.g. the op id),
// both eagerly and under jit, and the jitted callable to stay usable.
void expect_error(const std::string& needle, const std::vector<at::Tensor>& inputs,
                  const ThunderFn& fn);

// One tensor in, one out: the shape most samples take.
using TF = std::function<Tensor(const Tensor&)>;
using AF = std::function<at::Tensor(const at::Tensor&)>;

// A one-input, one-output sample; tol > 0 sets every tolerance
// (low-precision dtypes).
void check1(const std::string& name, const at::Tensor& x, TF tf, AF af, double tol = 0);
// expect_error for a one-input, one-output op.
void error1(const std::string& needle, const at::Tensor& x, TF tf);

// Every dtype the suites sweep.
inline constexpr at::ScalarType kAllTypes[] = {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16,
                                               at::kInt,   at::kLong,   at::kBool};

// Sample tensors: deterministic (seeded) random values of a dtype.
at::Tensor make_tensor(at::IntArrayRef shape, at::ScalarType dtype = at::kFloat, double lo = -3.0,
                       double hi = 3.0);
// A non-contiguous tensor of the given logical shape (a transposed buffer).
at::Tensor make_noncontiguous(at::IntArrayRef shape, at::ScalarType dtype = at::kFloat);

}  // namespace thunder::testing
