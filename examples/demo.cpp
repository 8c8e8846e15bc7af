#include <ATen/ATen.h>
#include <thunder/thunder.h>
#include <iostream>
int main() {
  auto jfn = thunder::jit([](const thunder::Tensor& x) { return x * 2.0; });
  std::cout << jfn(at::ones({3})) << "\n" << thunder::last_traces(jfn).back();
}
