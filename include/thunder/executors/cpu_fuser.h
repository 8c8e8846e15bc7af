// cpu_fuser: the fusion executor that turns regions of elementwise, view and
// reduction prims into generated C++ kernels (see docs/fusion.md). This
// header holds what is public: the fusion pass the jit pipeline runs after
// claiming, and counters for tests and benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "thunder/executors/executor.h"

namespace thunder {

// Groups the statements cpu_fuser claimed into regions (fusion_type
// "consecutive" or "dataflow"), flattening claimed composites into prims,
// and prepares each region's kernel (compiled, or the ATen fallback). A
// trace without a cpu_fuser executor comes back unchanged.
Trace fusion_pass(const Trace& trace, const std::vector<Executor*>& executors,
                  const std::string& fusion_type);

// The generated C++ source of a region statement (`cppFusionN`, as found in
// last_traces / last_backward_traces); empty for any other statement and when
// code generation is off. For reading what the fuser did, not for editing.
std::string fusion_source(const BoundSymbol& region);

struct CpuFuserStats {
  int64_t compiler_invocations = 0;  // kernels built by the system compiler
  int64_t disk_cache_hits = 0;       // kernels found in $THUNDER_CACHE_DIR
  int64_t memory_cache_hits = 0;     // kernels already loaded in this process
  int64_t fallback_regions = 0;      // regions run op by op on ATen
};

// Counters since process start (or the last reset).
CpuFuserStats cpu_fuser_stats();
void reset_cpu_fuser_stats();

}  // namespace thunder
