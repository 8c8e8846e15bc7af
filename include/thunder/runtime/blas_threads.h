// One thread pool while compiled programs run. Debian's libtorch reaches
// OpenBLAS for ATen's matmuls, and OpenBLAS keeps a pthread pool of its own,
// sized to the machine whatever at::set_num_threads says; with more than one
// intra-op thread its workers and the OpenMP workers (generated kernels,
// oneDNN, ATen's elementwise kernels) fight over the cores
// (docs/benchmarks.md, "Threads"). While a program that runs a matrix
// product runs with more than one intra-op thread, OpenBLAS is held to one
// thread: matmuls run on oneDNN in
// the OpenMP pool (the dnnl executor measures its choice in this regime) or
// single-threaded, never as a second pool. The count is restored when the
// last program running on any thread ends, so eager code keeps OpenBLAS as
// configured. With one intra-op thread, or without OpenBLAS in the process,
// nothing changes.
#pragma once

namespace thunder {

class BlasThreadsScope {
 public:
  // `products`: whether the program runs matrix products (without, nothing
  // is done: no lock on its calls).
  explicit BlasThreadsScope(bool products = true);
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

  // OpenBLAS's current thread count, or -1 when the process has no OpenBLAS.
  static int openblas_threads();

 private:
  bool entered_;
};

}  // namespace thunder
