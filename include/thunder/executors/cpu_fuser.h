// cpu_fuser: the fusion executor that turns regions of elementwise, view and
// reduction prims into generated C++ kernels (see docs/fusion.md). Its fusion
// passes are reached through the Executor interface; this header holds what
// else is public: the generated source of a region, and counters for tests
// and benchmarks.
#pragma once

#include <cstdint>
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
};

// Counters since process start (or the last reset).
CpuFuserStats cpu_fuser_stats();
void reset_cpu_fuser_stats();

}  // namespace thunder
