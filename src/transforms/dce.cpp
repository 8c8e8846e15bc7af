#include "thunder/transforms/dce.h"

#include <algorithm>
#include <unordered_set>

namespace thunder {

std::vector<BoundSymbol> dce(const std::vector<BoundSymbol>& bsyms, const Value& output) {
  std::unordered_set<const Proxy*> needed;
  std::vector<ProxyPtr> outs;
  output.collect_proxies(outs);
  for (const auto& p : outs) needed.insert(p.get());

  std::vector<bool> keep(bsyms.size(), false);
  for (size_t i = bsyms.size(); i-- > 0;) {
    const BoundSymbol& b = bsyms[i];
    bool k = b.has_op_tag(OpTag::DONT_DCE) || b.has_op_tag(OpTag::IN_PLACE);
    for (const ProxyPtr& p : b.flat_outputs()) k = k || needed.count(p.get());
    if (!k) continue;
    keep[i] = true;
    for (const ProxyPtr& p : b.flat_args()) needed.insert(p.get());
  }
  std::vector<BoundSymbol> kept;
  for (size_t i = 0; i < bsyms.size(); ++i)
    if (keep[i]) kept.push_back(bsyms[i]);
  return kept;
}

Trace dce(const Trace& trace) {
  Trace out = trace.empty_like();
  out.bsyms = dce(trace.bsyms, trace.output);
  return out;
}

}  // namespace thunder
