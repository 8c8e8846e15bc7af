// STUB: to be written (this family is not implemented yet).
#include "prim_util.h"

namespace thunder::prims::detail {
void register_reduction() {}
}  // namespace thunder::prims::detail
