#include "thunder/transforms/sort_waits.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"

namespace thunder {

namespace {

bool is_all_gather(const BoundSymbol& b) {
  static const Symbol& s = prims::symbol("prims.all_gather");
  return b.sym == &s;
}
// Collectives (each returns a future).
bool is_async_collective(const BoundSymbol& b) { return prims::is_collective(*b.sym); }
const Symbol& wait_symbol() {
  static const Symbol& s = prims::symbol("prims.wait");
  return s;
}

constexpr size_t kGathersInFlight = 2;

bool reads_any(const BoundSymbol& b, const std::unordered_set<const Proxy*>& values) {
  for (const ProxyPtr& p : b.flat_args())
    if (values.count(p.get())) return true;
  return false;
}

// Statements that only build a collective's input (a gradient bucket's
// pads, reshapes, cat, and the fusion regions that scale its gradients):
// shape prims, cats and regions whose outputs nothing but collectives and
// other such statements read, and that read no waited value.
// They move up with their collective, so a bucket is issued as soon as its
// gradients exist rather than where the bucketing pass put its pack.
std::vector<bool> pack_statements(const Trace& trace) {
  static const Symbol& cat = prims::symbol("prims.cat");
  const std::vector<BoundSymbol>& bs = trace.bsyms;
  std::unordered_map<const Proxy*, std::vector<size_t>> readers;
  std::unordered_set<const Proxy*> waited;
  for (size_t i = 0; i < bs.size(); ++i) {
    for (const ProxyPtr& p : bs[i].flat_args()) readers[p.get()].push_back(i);
    if (bs[i].sym == &wait_symbol())
      for (const ProxyPtr& p : bs[i].flat_outputs()) waited.insert(p.get());
  }
  std::vector<bool> pack(bs.size(), false);
  for (size_t i = bs.size(); i-- > 0;) {  // readers come later: decided first
    const BoundSymbol& b = bs[i];
    const bool shape = b.sym->is_prim && (b.sym->has_tag(OpTag::SHAPE_OP) || b.sym == &cat);
    if (!shape && !b.sym->is_region) continue;
    if (reads_any(b, waited)) continue;
    const std::vector<ProxyPtr> outs = b.flat_outputs();
    pack[i] = !outs.empty() && std::all_of(outs.begin(), outs.end(), [&](const ProxyPtr& p) {
      auto it = readers.find(p.get());
      return it != readers.end() &&
             std::all_of(it->second.begin(), it->second.end(),
                         [&](size_t r) { return pack[r] || is_async_collective(bs[r]); });
    });
  }
  return pack;
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
  // Held back, in trace order: collectives, and waits (with views of waited values).
  std::vector<BoundSymbol> collectives, waits, packs;
  const std::vector<bool> is_pack = pack_statements(trace);
  for (size_t i = 0; i < trace.bsyms.size(); ++i) {
    if (is_async_collective(trace.bsyms[i])) collectives.push_back(trace.bsyms[i]);
    if (is_pack[i]) packs.push_back(trace.bsyms[i]);
  }
  auto emit = [&](const BoundSymbol& b) {
    out.bsyms.push_back(b);
    for (const ProxyPtr& p : b.flat_outputs()) ready.insert(p.get());
  };
  // Gathers issued and not yet waited for: FSDP's parameter gathers all have
  // their inputs at the start, and issuing every one at once would hold every
  // gathered parameter at once. At most kGathersInFlight run ahead.
  std::unordered_set<const Proxy*> gathers_in_flight;
  auto issue = [&](std::vector<BoundSymbol>::iterator it) {
    BoundSymbol c = std::move(*it);
    collectives.erase(it);
    if (is_all_gather(c))
      for (const ProxyPtr& p : c.flat_outputs()) gathers_in_flight.insert(p.get());
    emit(c);
  };
  auto all_ready = [&](const BoundSymbol& b) {
    const std::vector<ProxyPtr> args = b.flat_args();
    return std::all_of(args.begin(), args.end(),
                       [&](const ProxyPtr& p) { return ready.count(p.get()) > 0; });
  };
  // Emits every held pack statement, then every held collective, whose
  // inputs are ready (in trace order).
  auto issue_ready = [&] {
    for (bool again = true; again;) {
      again = false;
      for (auto it = packs.begin(); it != packs.end();) {
        if (!all_ready(*it)) {
          ++it;
          continue;
        }
        emit(*it);
        it = packs.erase(it);
      }
      for (auto it = collectives.begin(); it != collectives.end(); ++it) {
        if (is_all_gather(*it) && gathers_in_flight.size() >= kGathersInFlight) continue;
        if (all_ready(*it)) {
          issue(it);
          again = true;
          break;
        }
      }
    }
  };
  // Emits a held statement (a wait, or a view of a waited value), after the
  // held statements it reads; a wait after its collective (which the
  // gathers' cap may still hold back).
  std::function<void(size_t)> flush = [&](size_t i) {
    BoundSymbol w = std::move(waits[i]);
    waits.erase(waits.begin() + static_cast<std::ptrdiff_t>(i));
    for (const ProxyPtr& f : w.flat_args()) {
      for (size_t j = 0; j < waits.size(); ++j) {
        const std::vector<ProxyPtr> outs = waits[j].flat_outputs();
        if (std::find(outs.begin(), outs.end(), f) != outs.end()) {
          flush(j);
          break;
        }
      }
      auto held = std::find_if(collectives.begin(), collectives.end(), [&](const BoundSymbol& c) {
        const std::vector<ProxyPtr> outs = c.flat_outputs();
        return std::find(outs.begin(), outs.end(), f) != outs.end();
      });
      if (held != collectives.end()) issue(held);
    }
    const bool is_wait = w.sym == &wait_symbol();
    if (is_wait)
      for (const ProxyPtr& f : w.flat_args()) gathers_in_flight.erase(f.get());
    emit(w);
    if (is_wait) issue_ready();
  };
  auto flush_read_by = [&](const BoundSymbol& b) {
    for (size_t i = 0; i < waits.size();) {
      std::unordered_set<const Proxy*> outs;
      for (const ProxyPtr& p : waits[i].flat_outputs()) outs.insert(p.get());
      if (reads_any(b, outs)) {
        flush(i);
        i = 0;  // flush may have emitted others too
      } else {
        ++i;
      }
    }
  };
  // A shape prim reading only held values (FSDP's slice dropping the padding
  // rows of a gathered parameter) waits with them: emitting it would force
  // its wait early.
  auto reads_only_held = [&](const BoundSymbol& b) {
    if (!b.sym->is_prim || !b.sym->has_tag(OpTag::SHAPE_OP)) return false;
    const std::vector<ProxyPtr> args = b.flat_args();
    return !args.empty() && std::all_of(args.begin(), args.end(), [&](const ProxyPtr& p) {
      return std::any_of(waits.begin(), waits.end(), [&](const BoundSymbol& w) {
        const std::vector<ProxyPtr> outs = w.flat_outputs();
        return std::find(outs.begin(), outs.end(), p) != outs.end();
      });
    });
  };
  issue_ready();
  for (size_t i = 0; i < trace.bsyms.size(); ++i) {
    const BoundSymbol& b = trace.bsyms[i];
    if (is_async_collective(b) || is_pack[i]) continue;  // issued by issue_ready
    if (b.sym == &wait_symbol() || reads_only_held(b)) {
      waits.push_back(b);
      continue;
    }
    flush_read_by(b);
    emit(b);
    issue_ready();
  }
  issue_ready();  // (collectives whose inputs never appeared: kept, at the end)
  for (const BoundSymbol& p : packs) emit(p);
  for (const BoundSymbol& c : collectives) emit(c);
  while (!waits.empty()) flush(0);
  return out;
}

}  // namespace thunder
