#include "thunder/transforms/dce.h"

#include <algorithm>
#include <unordered_set>

namespace thunder {

Trace dce(const Trace& trace) {
  std::unordered_set<const Proxy*> needed;
  std::vector<ProxyPtr> outs;
  trace.output.collect_proxies(outs);
  for (const auto& p : outs) needed.insert(p.get());

  std::vector<bool> keep(trace.bsyms.size(), false);
  for (size_t i = trace.bsyms.size(); i-- > 0;) {
    const BoundSymbol& b = trace.bsyms[i];
    bool k = b.has_op_tag(OpTag::DONT_DCE) || b.has_op_tag(OpTag::IN_PLACE);
    for (const ProxyPtr& p : b.flat_outputs()) k = k || needed.count(p.get());
    if (!k) continue;
    keep[i] = true;
    for (const ProxyPtr& p : b.flat_args()) needed.insert(p.get());
  }
  Trace out = trace.empty_like();
  for (size_t i = 0; i < trace.bsyms.size(); ++i)
    if (keep[i]) out.bsyms.push_back(trace.bsyms[i]);
  return out;
}

}  // namespace thunder
