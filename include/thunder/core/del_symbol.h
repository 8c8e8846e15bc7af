// The `del` statement's symbol. It lives in core, not beside the pass that
// inserts it (transforms/del_last_used.h), because the trace parser must
// resolve `del a, b` lines and core cannot depend on transforms.
#pragma once

#include "thunder/core/symbol.h"

namespace thunder {

// Registered on first use; DONT_DCE, so no pass drops a free.
const Symbol& del_symbol();

}  // namespace thunder
