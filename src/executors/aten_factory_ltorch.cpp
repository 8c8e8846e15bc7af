// STUB: to be written (this family is not implemented yet).
#include "aten_util.h"

namespace thunder::aten::detail {
void register_factory_ltorch() {}
}  // namespace thunder::aten::detail
