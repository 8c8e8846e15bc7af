#include "thunder/runtime/blas_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <atomic>
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

// Programs running now (any thread); the count OpenBLAS had before the first
// of them. Transitions between none and some are made under the mutex and
// re-checked there, so a program starting while the last one ends never
// saves the held count as the one to restore.
std::atomic<int> running{0};
std::mutex transition;
bool held = false;
int saved_threads = 0;

}  // namespace

BlasThreadsScope::BlasThreadsScope(bool products) : entered_(false) {
  if (!products || !openblas().present() || at::get_num_threads() <= 1) return;
  entered_ = true;
  if (running.fetch_add(1) != 0) return;
  std::lock_guard<std::mutex> lock(transition);
  if (held || running.load() == 0) return;
  saved_threads = openblas().get();
  openblas().set(1);
  held = true;
}

BlasThreadsScope::~BlasThreadsScope() {
  if (!entered_ || running.fetch_sub(1) != 1) return;
  std::lock_guard<std::mutex> lock(transition);
  if (!held || running.load() != 0) return;
  openblas().set(saved_threads);
  held = false;
}

int BlasThreadsScope::openblas_threads() { return openblas().present() ? openblas().get() : -1; }

}  // namespace thunder
