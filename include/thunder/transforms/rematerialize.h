// Rematerialization: choose what the forward saves for the backward by a
// minimum cut, recomputing cheap values in the backward instead of saving
// them (Thunder's rematerialization, PyTorch's min-cut partitioner).
//
// Every forward value v is split into v_in -> v_out with the capacity of
// saving it (its bytes; forward inputs half, as the caller holds them
// anyway). The source feeds the forward inputs and every value that must not
// be recomputed; values the backward reads drain into the sink; a statement
// links each argument's v_out to each output's v_in with infinite capacity.
// A minimum cut crosses exactly the edges v_in -> v_out of the values to
// save; what lies beyond it is recomputed in the backward.
//
// Policies (see docs/rematerialization.md):
//  - never recomputed: statements drawing random numbers statefully
//    (RANDOM_OP on the symbol or in its decomposition; prims.uniform_philox is
//    pure, not RANDOM_OP), in-place statements, statements tagged DONT_RECOMPUTE_IN_BACKWARD
//    (directly, via origins or in the decomposition; thunder::add_tags), and
//    values tagged ProxyTag::SAVED_FOR_BACKWARD (thunder::save_for_backward);
//  - by default recomputed only when cheap: a prim tagged ELEMENTWISE_OP or
//    SHAPE_OP or PURE_FACTORY (full, iota, uniform_philox), or a composite whose whole
//    decomposition is such prims, with no REDUCTION_OP or MATMUL_OP on the
//    statement or its origins;
//  - always recomputed (saving costs infinity) when not pinned above: statements
//    tagged OpTag::RECOMPUTE_IN_BACKWARD (also via origins) and values tagged
//    ProxyTag::RECOMPUTE_IN_BACKWARD (thunder::checkpoint); this overrides
//    the cost rules, so a checkpointed matmul is recomputed.
#pragma once

#include "thunder/transforms/autodiff.h"

namespace thunder {

// Takes a split (forward returning [outputs..., saved...], backward(saved...,
// cotangents...)) and returns one with the min-cut saved set: recomputed
// forward statements are copied into the backward (tagged BACKWARD) before
// their first use, and the forward keeps only what its outputs and the new
// saved set need. Saved values come in forward order (inputs first). If no
// finite cut exists, returns `fb` unchanged with a note on the backward.
ForwardBackward rematerialize(const ForwardBackward& fb);

}  // namespace thunder
