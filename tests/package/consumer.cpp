#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <iostream>

int main() {
  auto jfn = thunder::jit([](const thunder::Tensor& x) { return (x * 2.0).exp(); });
  at::Tensor x = at::ones({3});
  bool ok = at::allclose(jfn(x).aten(), at::exp(x * 2.0));
  std::cout << (ok ? "find_package(Thunder) consumer: ok" : "consumer: WRONG RESULT") << "\n";
  return ok ? 0 : 1;
}
