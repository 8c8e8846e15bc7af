#include "thunder/runtime/blas_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <mutex>

namespace thunder {
namespace {

// OpenBLAS's thread-count functions, looked up once in the loaded libraries
// (libtorch's dependency; no header or link dependency of ours).
struct OpenBlas {
  using Set = void (*)(int);
  using Get = int (*)();
  Set set = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  Get get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  bool present() const { return set != nullptr && get != nullptr; }
};
const OpenBlas& openblas() {
  static const OpenBlas o;
  return o;
}

// Programs running now (any thread) and the count OpenBLAS had before the
// first of them, both under the mutex: a program entering while another
// leaves waits, so it never runs with OpenBLAS unheld and never saves the
// held count as the one to restore. (Only programs with a product lock it:
// an uncontended lock beside their matmuls.)
std::mutex mu;
int running = 0;
int saved_threads = 0;

}  // namespace

BlasThreadsScope::BlasThreadsScope(bool products) : entered_(false) {
  if (!products || !openblas().present() || at::get_num_threads() <= 1) return;
  entered_ = true;
  std::lock_guard<std::mutex> lock(mu);
  if (running++ > 0) return;
  saved_threads = openblas().get();
  openblas().set(1);
}

BlasThreadsScope::~BlasThreadsScope() {
  if (!entered_) return;
  std::lock_guard<std::mutex> lock(mu);
  if (--running == 0) openblas().set(saved_threads);
}

int BlasThreadsScope::openblas_threads() { return openblas().present() ? openblas().get() : -1; }

}  // namespace thunder
