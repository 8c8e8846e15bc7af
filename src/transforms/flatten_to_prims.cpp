#include "thunder/transforms/flatten_to_prims.h"

namespace thunder {

namespace {

void flatten_into(const BoundSymbol& b, int executor, std::vector<BoundSymbol>& out) {
  if (b.sym->is_prim) {
    out.push_back(b);
    out.back().executor = executor;
    return;
  }
  for (BoundSymbol s : b.subsymbols) {
    s.tags |= b.tags;
    flatten_into(s, executor, out);
  }
}

}  // namespace

Trace flatten_to_prims(const Trace& trace, int executor) {
  Trace flat = trace.empty_like();
  for (const BoundSymbol& b : trace.bsyms) {
    if (b.executor == executor)
      flatten_into(b, executor, flat.bsyms);
    else
      flat.bsyms.push_back(b);
  }
  return flat;
}

}  // namespace thunder
