// STUB: to be written (this family is not implemented yet).
#include "lang_util.h"

namespace thunder::ltorch::detail {
void register_reduction() {}
}  // namespace thunder::ltorch::detail
