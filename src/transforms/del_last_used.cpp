#include "thunder/transforms/del_last_used.h"

#include <unordered_map>
#include <unordered_set>

#include "thunder/core/tracing.h"

namespace thunder {

Trace del_last_used(const Trace& trace) {
  std::unordered_set<const Proxy*> returned;
  std::vector<ProxyPtr> outs;
  trace.output.collect_proxies(outs);
  for (const auto& p : outs) returned.insert(p.get());

  // The statement index after which each value is dead.
  std::unordered_map<const Proxy*, size_t> last;
  for (size_t i = 0; i < trace.bsyms.size(); ++i) {
    const BoundSymbol& b = trace.bsyms[i];
    for (const ProxyPtr& p : b.flat_args()) last[p.get()] = i;
    for (const ProxyPtr& p : b.flat_outputs()) last.emplace(p.get(), i);  // unread outputs
  }
  std::vector<std::vector<ProxyPtr>> dels(trace.bsyms.size());
  std::unordered_set<const Proxy*> seen;
  auto consider = [&](const ProxyPtr& p) {
    if (!p->is_tensor() || returned.count(p.get()) || !seen.insert(p.get()).second) return;
    auto it = last.find(p.get());
    if (it != last.end()) dels[it->second].push_back(p);
  };
  for (size_t i = 0; i < trace.bsyms.size(); ++i) {
    for (const ProxyPtr& p : trace.bsyms[i].flat_args()) consider(p);
    for (const ProxyPtr& p : trace.bsyms[i].flat_outputs()) consider(p);
  }

  Trace out = trace.empty_like();
  for (size_t i = 0; i < trace.bsyms.size(); ++i) {
    out.bsyms.push_back(trace.bsyms[i]);
    if (dels[i].empty()) continue;
    BoundSymbol d;
    d.sym = &del_symbol();
    for (const ProxyPtr& p : dels[i]) d.args.emplace_back(p);
    out.bsyms.push_back(std::move(d));
  }
  return out;
}

}  // namespace thunder
