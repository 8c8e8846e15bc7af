#include "thunder/transforms/sort_waits.h"

#include <algorithm>
#include <unordered_set>

#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"

namespace thunder {

namespace {

const Symbol& all_reduce_symbol() {
  static const Symbol& s = prims::symbol("prims.all_reduce");
  return s;
}
// Collectives that return a future (prims.synchronize_sharded blocks).
bool is_async_collective(const BoundSymbol& b) {
  static const Symbol& reduce_scatter = prims::symbol("prims.reduce_scatter");
  return b.sym == &all_reduce_symbol() || b.sym == &reduce_scatter;
}
const Symbol& wait_symbol() {
  static const Symbol& s = prims::symbol("prims.wait");
  return s;
}

bool reads_any(const BoundSymbol& b, const std::unordered_set<const Proxy*>& values) {
  for (const ProxyPtr& p : b.flat_args())
    if (values.count(p.get())) return true;
  return false;
}

}  // namespace

bool has_collectives(const Trace& trace) {
  return std::any_of(trace.bsyms.begin(), trace.bsyms.end(), [](const BoundSymbol& b) {
    return prims::is_collective(*b.sym) || b.sym == &wait_symbol();
  });
}

Trace sort_waits(const Trace& trace) {
  Trace out = trace.empty_like();
  // Values that exist so far: the inputs, then every emitted statement's outputs.
  std::unordered_set<const Proxy*> ready;
  for (const ProxyPtr& p : trace.inputs) ready.insert(p.get());
  std::vector<BoundSymbol> collectives, waits;  // held back, in trace order
  for (const BoundSymbol& b : trace.bsyms)
    if (is_async_collective(b)) collectives.push_back(b);
  auto emit = [&](const BoundSymbol& b) {
    out.bsyms.push_back(b);
    for (const ProxyPtr& p : b.flat_outputs()) ready.insert(p.get());
  };
  // Issues every held collective whose inputs are ready (in trace order).
  auto issue_ready = [&] {
    for (bool again = true; again;) {
      again = false;
      for (auto it = collectives.begin(); it != collectives.end(); ++it) {
        std::vector<ProxyPtr> args = it->flat_args();
        if (std::all_of(args.begin(), args.end(),
                        [&](const ProxyPtr& p) { return ready.count(p.get()) > 0; })) {
          BoundSymbol c = std::move(*it);
          collectives.erase(it);
          emit(c);
          again = true;
          break;
        }
      }
    }
  };
  auto flush_waits_read_by = [&](const BoundSymbol& b) {
    for (auto it = waits.begin(); it != waits.end();) {
      std::unordered_set<const Proxy*> outs;
      for (const ProxyPtr& p : it->flat_outputs()) outs.insert(p.get());
      if (reads_any(b, outs)) {
        BoundSymbol w = std::move(*it);
        it = waits.erase(it);
        emit(w);
      } else {
        ++it;
      }
    }
  };
  issue_ready();
  for (const BoundSymbol& b : trace.bsyms) {
    if (is_async_collective(b)) continue;  // issued by issue_ready
    if (b.sym == &wait_symbol()) {
      waits.push_back(b);
      continue;
    }
    flush_waits_read_by(b);
    emit(b);
    issue_ready();
  }
  issue_ready();  // (collectives whose inputs never appeared: kept, at the end)
  for (const BoundSymbol& c : collectives) emit(c);
  for (const BoundSymbol& w : waits) emit(w);
  return out;
}

}  // namespace thunder
