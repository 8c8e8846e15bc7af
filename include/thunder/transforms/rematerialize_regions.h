// Rematerialization between fusion regions: when a consumer region reads a
// value that a producer region computed with cheap elementwise or shape prims,
// the consumer recomputes it from what it can read instead, if that moves
// fewer bytes. A pass of its own after region formation and before the
// regions' kernels are made.
//
// For a value v that region B reads from region A, the recomputation walks
// A's decomposition back from v until it reaches values B can read: B's
// inputs, values B already computes, A's inputs (defined before A, so before
// B; nothing is deleted until del_last_used runs after fusion) and, past a
// statement that cannot be recomputed, A's other outputs. Every statement on
// the way must be recomputable: a prim tagged ELEMENTWISE_OP, SHAPE_OP or
// PURE_FACTORY (prims.full, prims.iota, prims.uniform_philox), with no
// REDUCTION_OP, MATMUL_OP, RANDOM_OP (stateful draws only), IN_PLACE,
// DONT_DCE or DONT_RECOMPUTE_IN_BACKWARD on it or its origins.
//
// Cost, in bytes moved through memory: reading v costs numel x item size,
// and A writing v costs as much again when nothing else reads v (A then
// drops it). Recomputing costs the bytes of the values B reads in addition.
// A value is recomputed when that is strictly cheaper. The choice is greedy,
// one value at a time in B's input order, each seeing the previous ones'
// effect (a value B already recomputes or reads is free); see docs/fusion.md.
#pragma once

#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

// The pass on a trace whose region statements have Symbol::is_region; drops
// the regions left without outputs.
Trace rematerialize_regions(const Trace& trace);

// `stmts` is a topologically ordered program; the statements flagged in
// `is_region` are regions: `subsymbols` their prims, `args` the values read
// from outside (first-use order), `output` a list of the values read after
// them or returned in `output` (the program's result). Copies of recomputed
// prims go to the front of the consumer (tagged like it), whose inputs are
// recomputed; a producer drops outputs nothing reads any more and the prims
// only they needed. A producer left without outputs has no subsymbols, inputs
// or outputs: the caller drops it. Returns how many values were recomputed.
int rematerialize_between_regions(std::vector<BoundSymbol>& stmts,
                                  const std::vector<bool>& is_region, const Value& output);

}  // namespace thunder
