// The guards of every cache entry of a jitted function (the compile report
// lists them all; last_prologue_trace gives the one run last).
#pragma once

#include <vector>

#include "thunder/core/trace.h"
#include "thunder/frontend/jit.h"

namespace thunder::detail {

// One prologue trace per cache entry, oldest first.
std::vector<Trace> entry_prologues(const JitState& s);

}  // namespace thunder::detail
