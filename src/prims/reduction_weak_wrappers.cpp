// TEMPORARY (helper h2): weak call wrappers for the reduction prims that nn
// decompositions use, so this branch links before the reduction family lands.
// The reduction family's own (strong) definitions win at link time; delete this
// file once src/prims/reduction.cpp defines the wrappers.
#include "prim_util.h"

namespace thunder::prims {

__attribute__((weak)) Value sum(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.sum", a, dims);
}
__attribute__((weak)) Value amax(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.amax", a, dims);
}
__attribute__((weak)) Value var(const Value& a, const std::vector<int64_t>& dims,
                                double correction) {
  THUNDER_PRIM_CALL("prims.var", a, dims, correction);
}

}  // namespace thunder::prims
