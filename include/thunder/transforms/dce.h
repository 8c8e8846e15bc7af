// Dead code elimination: drops statements whose outputs nothing reads,
// keeping those tagged DONT_DCE or IN_PLACE.
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace dce(const Trace& trace);

}  // namespace thunder
