// cpu_fuser: the fusion executor that turns regions of elementwise, view and
// reduction prims into generated C++ kernels (see docs/fusion.md). Its fusion
// passes are reached through the Executor interface; this header holds what
// else is public: the generated source of a region, and counters for tests
// and benchmarks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "thunder/executors/executor.h"

namespace thunder {

// The generated C++ source of a region statement (`cppFusionN`, as found in
// last_traces / last_backward_traces); empty for any other statement, before
// the kernels pass, and when code generation is off. For reading what the
// fuser did, not for editing.
std::string fusion_source(const BoundSymbol& region);

struct CpuFuserStats {
  int64_t compiler_invocations = 0;  // kernels built by the system compiler
  int64_t disk_cache_hits = 0;       // kernels found in $THUNDER_CACHE_DIR
  int64_t memory_cache_hits = 0;     // kernels already loaded in this process
  int64_t fallback_regions = 0;      // regions run op by op on ATen
  int64_t rebuilt_kernels = 0;       // disk-cache files found broken and rebuilt
  int64_t compiler_runs = 0;         // compiler processes (kernels built together share one)
};

// Builds generated kernels together instead of one compile per call. While a
// KernelBatch lives, jitted calls on its thread that need a kernel not yet
// built (in memory or in $THUNDER_CACHE_DIR) do not wait for the compiler:
// those regions run op by op on ATen, with the same results, and the batch
// collects their sources. build() (and the destructor) compiles everything
// collected at once, one compiler process per core; the cache entries that
// asked use their kernels from their next call on, including calls already
// running on other threads. Most of a small kernel's build is starting the
// compiler and linker, so this is several times faster than building kernel
// by kernel: warm a server up by calling the jitted model once per expected
// shape inside a batch. Batches nest (the innermost collects).
class KernelBatch {
 public:
  KernelBatch();
  ~KernelBatch();
  KernelBatch(const KernelBatch&) = delete;
  KernelBatch& operator=(const KernelBatch&) = delete;
  // Kernels collected and not yet built.
  int64_t pending() const;
  // Builds what was collected; returns how many kernels are now in use (the
  // others failed to compile and stay on the ATen fallback).
  int64_t build();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Counters since process start (or the last reset).
CpuFuserStats cpu_fuser_stats();
void reset_cpu_fuser_stats();

}  // namespace thunder
