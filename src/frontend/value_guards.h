// Guards on argument values, which capture answers at trace time where the
// metadata guards cannot: `aten::equal` of two different arguments (what
// torch::nn::MultiheadAttention asks to tell self- from cross-attention).
// A cache entry holding them is used only by calls whose arguments compare
// the same way; the comparison costs what eager's does.
#pragma once

#include <cstdint>
#include <vector>

namespace thunder::detail {

struct EqualGuard {
  int32_t a, b;  // flat argument indices
  bool equal;    // at::equal(a, b) when the entry was traced
};

// Capture hands the guards of the trace it just made to the jit compiling it
// on this thread.
void set_traced_equal_guards(std::vector<EqualGuard> guards);
std::vector<EqualGuard> take_traced_equal_guards();

}  // namespace thunder::detail
