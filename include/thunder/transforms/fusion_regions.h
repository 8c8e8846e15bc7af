// Fusion region formation: groups statements that one fusion executor claimed
// into regions, each replaced by a single statement that prints as
// `[t4, t7] = cppFusion0(x, t1)` with its prims as '#' lines. Torch-free so
// that region formation is unit-tested on hand-built traces.
//
// Strategies:
//   Consecutive: maximal runs of adjacent fusible statements.
//   Dataflow:    merge along producer/consumer edges regardless of statement
//                order (refusing merges that would create a cycle through an
//                unfused statement), then merge independent groups
//                horizontally. The result is re-sorted topologically, ties
//                broken by original position, so printing is deterministic.
// Regions never mix forward and backward statements (StmtTag::BACKWARD).
#pragma once

#include <functional>
#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

enum class FusionStrategy { Consecutive, Dataflow };

// Groups of statement indices (each sorted), one per region, in trace order of
// their first statement. Non-fusible statements are in no group.
std::vector<std::vector<size_t>> fusion_groups(const std::vector<BoundSymbol>& bsyms,
                                               const std::vector<bool>& fusible,
                                               FusionStrategy strategy);

// Makes the region statement's symbol (Symbol::is_region set); `k` counts
// regions of this trace from 0. Returning nullptr declines the region: its
// statements stay unfused. The trace keeps the symbol (Trace::owned_symbols).
using RegionSymbolFn =
    std::function<std::shared_ptr<const Symbol>(int k, const BoundSymbol& region)>;

// Replaces each group by a region statement (claimed by `executor`; its
// symbol comes from `make_symbol` once inputs, outputs and subsymbols are set).
// Region inputs are the values its statements read from outside, in first-use
// order; its outputs those read after it (or returned), in definition order.
Trace form_fusion_regions(const Trace& trace, const std::vector<bool>& fusible,
                          FusionStrategy strategy, int executor, const RegionSymbolFn& make_symbol);

}  // namespace thunder
