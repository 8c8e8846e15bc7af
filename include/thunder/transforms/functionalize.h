// In-place functionalization. The frontend traces an in-place op (x.add_(y))
// as its out-of-place op followed by prims.copy_(new_value, x). This pass
// rewrites such a trace into pure dataflow, so later passes may differentiate,
// fuse and reorder it:
// - each copy_ disappears; every later read of the destination reads the new value;
// - a write into a view (view, reshape, flatten, squeeze, unsqueeze,
//   transpose, permute, narrow, select, the pieces of split and chunk) is
//   scattered back into its base, and every other view of that base is
//   re-derived from the base's new value before its next read (expand views
//   are read-only, as in libtorch);
// - statements the pass emits keep the tags of the statement they replace
//   (a backward statement's rewrite stays BACKWARD), and a statement that
//   reads a backward value is itself backward;
// - a composite whose decomposition writes in place is replaced by its
//   rewritten decomposition, unless it has a grad rule (a custom autograd
//   function's forward), which stays whole so autodiff can still apply it;
// - the new values of written trace inputs are returned after the outputs:
//   the runtime copies them into the caller's tensors after the program.
// Inputs that share storage at run time cannot be resolved statically: writes
// into them stay in place (prims.copy_) and are followed by an alias-update
// barrier, prims.update_aliases, over every value aliasing that storage
// (Lightning Thunder's update_aliases).
#pragma once

#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

struct Functionalized {
  // Pure trace; with written inputs it returns [outputs, new values...].
  Trace trace;
  std::vector<ProxyPtr> written_inputs;  // trace inputs written, in input order
  std::vector<ProxyPtr> new_values;      // their values at the end, same order
};

// `alias_groups`: sets of trace inputs that share storage at run time.
Functionalized functionalize(const Trace& trace,
                             const std::vector<std::vector<ProxyPtr>>& alias_groups = {});

// Does any statement, at any depth, write in place (prims.copy_)?
bool has_inplace(const Trace& trace);

}  // namespace thunder
