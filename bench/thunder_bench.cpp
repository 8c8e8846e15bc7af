// thunder-cpp benchmarks: every workload eager (libtorch) and jitted, side
// by side, from one process. Numbers are printed, never asserted.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <thunder/thunder.h>

#include <torch/csrc/api/include/torch/version.h>

#include <cstdio>

#include "bench_util.h"

using thunder::Tensor;
using thunder::bench::row;
using thunder::bench::time_us;

namespace {

void per_call_overhead() {
  std::printf("\n== Per-call overhead (3-element tensors, grad mode off) ==\n");
  thunder::bench::header();
  at::NoGradGuard no_grad;
  at::Tensor x = at::randn({3});
  auto three_ops = [](const Tensor& a) { return (a * 2.0 + 1.0).sin(); };
  auto jfn = thunder::jit(three_ops);
  double eager = time_us([&] { at::Tensor r = at::sin(x * 2.0 + 1.0); }, 20000);
  double thunder_eager = time_us([&] { Tensor r = three_ops(x); }, 20000);
  double jitted = time_us([&] { Tensor r = jfn(x); }, 20000);
  row("3 ops: libtorch eager vs jit", eager, jitted);
  row("3 ops: thunder::Tensor eager vs jit", thunder_eager, jitted);

  // Guard and dispatch cost alone: a function returning its first input runs no kernel.
  std::printf("\n%-44s %12s %16s\n", "identity function, N tensor inputs", "jit call",
              "per extra input");
  double base = 0;
  for (int n : {1, 8, 64}) {
    std::vector<at::Tensor> xs;
    for (int i = 0; i < n; ++i) xs.push_back(at::randn({3}));
    auto id = thunder::jit([](const thunder::TensorList& ts) { return ts[0]; });
    double us = time_us([&] { Tensor r = id(xs); }, 20000);
    if (n == 1) base = us;
    std::printf("%-44s %9.3f us %13.4f us\n", ("N = " + std::to_string(n)).c_str(), us,
                n == 1 ? 0.0 : (us - base) / (n - 1));
  }
  std::printf("(eager libtorch dispatch of one op on 3 elements: %.3f us)\n",
              time_us([&] { at::Tensor r = at::sin(x); }, 20000));
}

}  // namespace

int main() {
  at::set_num_threads(1);
  std::printf("thunder-cpp benchmarks (libtorch %d.%d, 1 intra-op thread)\n", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
  per_call_overhead();
  return 0;
}
