// Makes random draws recomputable: every prims.uniform, at top level or inside
// a composite's decomposition, becomes
//   [seed0, offset0] = prims.get_and_update_rng_state(device, counters)
//   t = prims.uniform_philox(shape, minval, maxval, seed0, offset0, device, dtype)
// The draw keeps its output proxy. A composite whose decomposition draws
// (ltorch.dropout, ltorch.rand) is replaced by its rewritten decomposition, so
// no executor claims it whole and calls ATen's stateful RNG; the statements
// keep the composite in their origins (policies set on it still apply) and
// its statement tags (BACKWARD).
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace replace_uniform(const Trace& trace);

}  // namespace thunder
