// Symbols made for one trace, with their own grad rule: a custom
// torch.autograd.Function called from captured Python code is recorded per
// call (its forward and backward as traced on that call's shapes), so it
// cannot be one registered symbol with one rule. Such a symbol is not in the
// registry (no index); the traces and programs that use it keep it alive
// (Trace::owned_symbols), and its rule lives exactly as long.
#pragma once

#include <memory>

#include "thunder/transforms/autodiff.h"

namespace thunder {

// Makes the symbol (its index stays -1) and ties `rule` to it: autodiff uses
// the rule for every statement of the symbol while the returned pointer (or a
// copy of it) lives.
std::shared_ptr<const Symbol> make_trace_symbol(Symbol s, GradRule rule);

}  // namespace thunder
