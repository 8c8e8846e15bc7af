// Flattening before fusion: every statement claimed by one executor that is
// not a prim is replaced by its decomposition, recursively, so region
// formation sees prims only. Flattened statements keep the composite's
// statement tags (BACKWARD) and stay claimed by the executor; their origins
// were recorded while tracing.
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace flatten_to_prims(const Trace& trace, int executor);

}  // namespace thunder
