// Which prims cpu_fuser fuses, as data: one row per prim with its kind and,
// for an elementwise prim, its emitter (how codegen.cpp computes one element
// as a loop-IR expression). An elementwise prim without an emitter is not
// fusible, so nothing is claimed that cannot be generated.
#pragma once

#include "emit.h"
#include "thunder/core/bound_symbol.h"

namespace thunder::cpu_fuser {

// Cat: prims.cat of 1-D tensors; its output is written piece by piece and
// never read inside its region (form_regions keeps such cats out otherwise).
enum class OpKind { Elementwise, View, Reduction, Cat };

// The kind of a fusible prim, or nullptr when cpu_fuser does not fuse it.
const OpKind* fusible_kind(const Symbol& sym);

// The emitter of an elementwise prim (nullptr for other kinds).
Emitter emitter(const Symbol& sym);

// Can this statement join a fusion region? Prims: in the table, on CPU, and
// (reductions) over the innermost or all dims, or a leading_sum. Composites:
// when their whole decomposition can, so they are flattened into prims rather
// than run whole.
bool fusible(const BoundSymbol& b);

// Whether b is a prims.sum over a strict prefix of its input's dims (bias and
// norm weight gradients): codegen gives it a nest of its own that walks the
// input in memory order, rows outside, kept columns inside.
bool leading_sum(const BoundSymbol& b);

}  // namespace thunder::cpu_fuser
