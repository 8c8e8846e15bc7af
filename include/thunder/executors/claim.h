// The claiming pass: assigns every statement to the first executor (in
// priority order) that can run it whole; a statement no executor claims is
// replaced by its decomposition, recursively. The result is the execution
// trace that programs are lowered from.
#pragma once

#include <vector>

#include "thunder/executors/executor.h"

namespace thunder {

Trace claim_executors(const Trace& trace, const std::vector<Executor*>& executors);

}  // namespace thunder
