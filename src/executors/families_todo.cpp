// TEMPORARY: families not written yet (each helper removes its line).
#include "aten_util.h"
namespace thunder::aten::detail {
void register_reduction() {}
void register_shape_ltorch() {}
void register_indexing() {}
void register_nn() {}
void register_factory_ltorch() {}
void register_inplace() {}
}  // namespace thunder::aten::detail
