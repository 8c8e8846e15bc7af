#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <iostream>

using thunder::Tensor;
namespace F = thunder::nn::functional;

int main() {
  auto fn = [](const Tensor& x, const Tensor& w, const thunder::Scalar& scale) {
    Tensor h = F::gelu(F::linear(x, w), "tanh");
    return F::softmax(h * scale, -1);
  };
  auto jfn = thunder::jit(fn, {.arg_names = {"x", "w", "scale"}});

  at::Tensor x = at::randn({2, 4}), w = at::randn({3, 4});
  Tensor y = jfn(x, w, thunder::Scalar(0.5));  // traces, compiles, runs
  y = jfn(x, w, thunder::Scalar(2.0));         // cache hit: no recompile for a Scalar

  std::cout << thunder::last_traces(jfn).front();  // the trace, as a program
  std::cout << "hits " << thunder::cache_hits(jfn) << ", misses " << thunder::cache_misses(jfn)
            << "\n";
}
