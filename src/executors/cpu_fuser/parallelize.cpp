#include <algorithm>

#include "loop_transforms.h"

namespace thunder::cpu_fuser::ir {

void parallelize(Nest& nest, int64_t min_work, int64_t chunk_work) {
  if (nest.range->kind != Node::Kind::Int) {
    nest.chunk = chunk_work;
    nest.min_parallel = min_work;
    return;
  }
  const int64_t range = nest.range->value;
  if (nest.work < min_work || range <= 1) {
    nest.chunk = 0;
    return;
  }
  const int64_t per = std::max<int64_t>(1, nest.work / std::max<int64_t>(range, 1));
  nest.chunk = std::max<int64_t>(1, chunk_work / per);
}

}  // namespace thunder::cpu_fuser::ir
