#include "thunder/core/bound_symbol.h"

namespace thunder {

bool BoundSymbol::has_op_tag(OpTag t) const {
  if (sym->has_tag(t)) return true;
  for (const Symbol* s : origins)
    if (s->has_tag(t)) return true;
  return false;
}

std::vector<ProxyPtr> BoundSymbol::flat_args() const {
  std::vector<ProxyPtr> out;
  for (const Value& v : args) v.collect_proxies(out);
  return out;
}

std::vector<ProxyPtr> BoundSymbol::flat_outputs() const {
  std::vector<ProxyPtr> out;
  output.collect_proxies(out);
  return out;
}

}  // namespace thunder
