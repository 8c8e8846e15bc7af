// Private to src/transforms: what rematerialize and rematerialize_regions
// both mean by a prim that is cheap to recompute, defined once.
#pragma once

#include "thunder/core/symbol.h"

namespace thunder {

// As cheap as an elementwise op and free of state: elementwise and shape
// prims, and pure factories (full, iota, uniform_philox: OpTag::PURE_FACTORY,
// set where those prims are registered).
inline bool is_cheap_prim(const Symbol& s) {
  return s.is_prim && (s.has_tag(OpTag::ELEMENTWISE_OP) || s.has_tag(OpTag::SHAPE_OP) ||
                       s.has_tag(OpTag::PURE_FACTORY));
}

}  // namespace thunder
