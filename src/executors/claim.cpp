#include "thunder/executors/claim.h"

#include "thunder/core/del_symbol.h"
#include "thunder/core/error.h"
#include "thunder/core/trace.h"

namespace thunder {

namespace {

void claim_into(const BoundSymbol& b, const std::vector<Executor*>& executors,
                std::vector<BoundSymbol>& out) {
  for (size_t i = 0; i < executors.size(); ++i) {
    if (!executors[i]->can_claim(b)) continue;
    BoundSymbol c = b;
    c.executor = static_cast<int>(i);
    out.push_back(std::move(c));
    return;
  }
  if (b.subsymbols.empty()) {
    std::string names;
    for (Executor* e : executors) names += (names.empty() ? "" : ", ") + std::string(e->name());
    fail("{}: no executor can run it (executors: {})", b.sym->id, names);
  }
  for (BoundSymbol s : b.subsymbols) {
    s.tags |= b.tags;  // a decomposed backward statement stays a backward statement
    claim_into(s, executors, out);
  }
}

}  // namespace

Trace claim_executors(const Trace& trace, const std::vector<Executor*>& executors) {
  Trace out = trace.empty_like();
  for (const BoundSymbol& b : trace.bsyms) {
    if (b.sym == &del_symbol()) {
      out.bsyms.push_back(b);
      continue;
    }
    claim_into(b, executors, out.bsyms);
  }
  return out;
}

}  // namespace thunder
