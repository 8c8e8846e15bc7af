#include "thunder/executors/executor.h"

namespace thunder {

Trace fusion_pass(const Trace& trace, const std::vector<Executor*>& executors,
                  FusionStrategy strategy) {
  Trace t = trace;
  for (size_t k = 0; k < executors.size(); ++k) {
    FusionContext ctx{static_cast<int>(k), &executors, strategy};
    for (const FusionPass& pass : executors[k]->fusion_passes()) t = pass.run(t, ctx);
  }
  return t;
}

}  // namespace thunder
