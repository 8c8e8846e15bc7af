// Common subexpression elimination: a pure statement whose symbol and
// arguments equal an earlier statement's is dropped, and its outputs are
// renamed to the earlier statement's outputs in every later statement
// (decompositions included) and in the trace output.
//
// Arguments compare by value: proxies by identity (after the renamings made
// so far), literals and lists by value (2 and 2.0 differ, so do 0.1 and
// 0.1000000001). Only pure statements merge: nothing tagged DONT_DCE or
// IN_PLACE (symbol, origins or decomposition: copy_, update_aliases,
// get_and_update_rng_state), nothing that draws random numbers statefully
// (RANDOM_OP on the symbol or in its decomposition; prims.uniform_philox is
// not RANDOM_OP: pure, it merges), and never a forward statement with a backward one
// (StmtTag::BACKWARD). Outputs whose proxies differ in dtype, shape,
// requires_grad or tags are left alone. Deterministic: the earliest
// statement survives.
#pragma once

#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

Trace cse(const Trace& trace);

// The same on a list of statements (a region's decomposition): returns the
// statements kept and renames `output` accordingly.
std::vector<BoundSymbol> cse(const std::vector<BoundSymbol>& bsyms, Value& output);

}  // namespace thunder
