// Inserts `del` statements right after the last use of each value that the
// trace does not return, so programs free intermediates (and inputs) as early
// as possible.
#pragma once

#include "thunder/core/del_symbol.h"
#include "thunder/core/trace.h"

namespace thunder {

Trace del_last_used(const Trace& trace);

}  // namespace thunder
