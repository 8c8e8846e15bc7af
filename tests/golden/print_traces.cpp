// Prints the traces of small programs for FileCheck golden tests
// (tests/golden/*.check, run by ctest through FileCheck-14).
#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <cstring>
#include <iostream>

using thunder::Tensor;
namespace F = thunder::nn::functional;

struct Block : thunder::nn::Module {
  thunder::nn::Linear fc{8, 16};
  thunder::nn::LayerNorm norm{16};
  Block() {
    register_module("fc", fc);
    register_module("norm", norm);
  }
  Tensor forward(const Tensor& x) { return norm(F::gelu(fc(x), "tanh")); }
};

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  at::manual_seed(0);
  if (std::strcmp(argv[1], "module") == 0) {
    Block block;
    auto jblock = thunder::jit(block, {.executors = {"aten"}, .arg_names = {"x"}});
    jblock(at::randn({4, 8}));
    for (const auto& t : thunder::last_traces(jblock)) std::cout << t << "\n";
    std::cout << thunder::last_prologue_trace(jblock);
    return 0;
  }
  if (std::strcmp(argv[1], "decomposed") == 0) {
    auto fn = [](const Tensor& x, const Tensor& mask) {
      return F::softmax(thunder::where(mask, x, -1e9), -1);
    };
    auto jfn = thunder::jit(fn, {.executors = {"aten_prims"}, .arg_names = {"x", "mask"}});
    jfn(at::randn({2, 3}), at::rand({3}) > 0.5);
    std::cout << thunder::last_traces(jfn).back();
    return 0;
  }
  return 2;
}
