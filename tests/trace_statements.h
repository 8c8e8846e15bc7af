// Counts a trace's top-level statements of one symbol (decompositions not
// included): for tests that check what a pass or the pipeline wrote.
#pragma once

#include <algorithm>
#include <string_view>

#include "thunder/core/trace.h"

namespace thunder::test_util {

inline int count_statements(const Trace& t, std::string_view id) {
  return static_cast<int>(std::count_if(t.bsyms.begin(), t.bsyms.end(),
                                        [&](const BoundSymbol& b) { return b.sym->id == id; }));
}

}  // namespace thunder::test_util
