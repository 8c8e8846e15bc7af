// Dead code elimination: drops statements whose outputs nothing reads,
// keeping those tagged DONT_DCE or IN_PLACE.
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace dce(const Trace& trace);

// The same over a list of statements whose results `output` holds (a
// region's prims, for instance).
std::vector<BoundSymbol> dce(const std::vector<BoundSymbol>& bsyms, const Value& output);

}  // namespace thunder
