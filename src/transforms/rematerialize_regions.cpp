#include "thunder/transforms/rematerialize_regions.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "recompute_cost.h"
#include "thunder/core/error.h"
#include "thunder/transforms/dce.h"

namespace thunder {

namespace {

using ProxySet = std::unordered_set<const Proxy*>;

int64_t bytes(const Proxy& p) { return p.is_tensor() ? p.numel() * item_size(p.dtype) : 8; }

bool recomputable(const BoundSymbol& b) {
  for (OpTag t : {OpTag::REDUCTION_OP, OpTag::MATMUL_OP, OpTag::IN_PLACE, OpTag::DONT_DCE,
                  OpTag::DONT_RECOMPUTE_IN_BACKWARD})
    if (b.has_op_tag(t)) return false;
  if (b.sym->has_tag(OpTag::RANDOM_OP)) return false;  // stateful; uniform_philox is not
  return b.subsymbols.empty() && is_cheap_prim(*b.sym);
}

bool contains(const std::vector<ProxyPtr>& ps, const Proxy* p) {
  return std::any_of(ps.begin(), ps.end(), [p](const ProxyPtr& q) { return q.get() == p; });
}

// Orders statements so each comes after the statements (of the list) it
// reads, keeping the given order otherwise. Recomputed prims go to the front
// of a consumer, but may read values the consumer computes itself (found by
// the differential fuzzer: a region read t5 before computing it).
std::vector<BoundSymbol> dependency_order(std::vector<BoundSymbol> subs) {
  std::unordered_map<const Proxy*, size_t> producer;
  for (size_t i = 0; i < subs.size(); ++i)
    for (const ProxyPtr& p : subs[i].flat_outputs()) producer[p.get()] = i;
  std::vector<bool> placed(subs.size(), false);
  std::vector<BoundSymbol> out;
  while (out.size() < subs.size()) {
    size_t i = 0;
    for (; i < subs.size(); ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (const ProxyPtr& p : subs[i].flat_args()) {
        auto it = producer.find(p.get());
        ready = ready && (it == producer.end() || it->second == i || placed[it->second]);
      }
      if (ready) break;  // the earliest ready statement goes next
    }
    THUNDER_INTERNAL_CHECK(i < subs.size(), "rematerialize_regions: a cycle among region prims");
    placed[i] = true;
    out.push_back(std::move(subs[i]));
  }
  return out;
}

// Values read from outside a list of statements, in first-use order.
std::vector<Value> inputs_of(const std::vector<BoundSymbol>& subs) {
  ProxySet defined, seen;
  std::vector<Value> ins;
  for (const BoundSymbol& s : subs) {
    for (const ProxyPtr& p : s.flat_args())
      if (!defined.count(p.get()) && seen.insert(p.get()).second) ins.emplace_back(p);
    for (const ProxyPtr& p : s.flat_outputs()) defined.insert(p.get());
  }
  return ins;
}

// Keeps the prims a region's outputs need, and its inputs to match.
void prune(BoundSymbol& region) {
  region.subsymbols = dce(region.subsymbols, region.output);
  region.args = region.subsymbols.empty() ? std::vector<Value>{} : inputs_of(region.subsymbols);
}

struct Plan {
  std::vector<size_t> stmts;     // indices into the producer's subsymbols, in order
  std::vector<ProxyPtr> leaves;  // values the consumer must read in addition
  bool ok = false;
};

// How B (which can read `available`) would recompute v from A's prims.
Plan plan_recompute(const BoundSymbol& a, const ProxyPtr& v, const ProxySet& available) {
  std::unordered_map<const Proxy*, size_t> def;
  for (size_t i = 0; i < a.subsymbols.size(); ++i)
    for (const ProxyPtr& p : a.subsymbols[i].flat_outputs()) def[p.get()] = i;
  std::vector<ProxyPtr> a_outputs = a.flat_outputs();
  Plan plan;
  std::vector<bool> take(a.subsymbols.size(), false);
  ProxySet visited{v.get()}, leaf_seen;
  std::vector<ProxyPtr> stack{v};
  auto leaf = [&](const ProxyPtr& p) {
    if (!available.count(p.get()) && leaf_seen.insert(p.get()).second) plan.leaves.push_back(p);
  };
  while (!stack.empty()) {
    ProxyPtr p = stack.back();
    stack.pop_back();
    auto it = def.find(p.get());
    if (it == def.end() || (p != v && available.count(p.get()))) {
      leaf(p);
      continue;
    }
    const BoundSymbol& s = a.subsymbols[it->second];
    if (!recomputable(s)) {
      if (p == v || !contains(a_outputs, p.get())) return plan;  // not ok
      leaf(p);                                                   // materialised by A anyway
      continue;
    }
    take[it->second] = true;
    std::vector<ProxyPtr> args = s.flat_args();
    for (auto r = args.rbegin(); r != args.rend(); ++r)  // first argument first
      if (visited.insert(r->get()).second) stack.push_back(*r);
  }
  for (size_t i = 0; i < take.size(); ++i)
    if (take[i]) plan.stmts.push_back(i);
  plan.ok = true;
  return plan;
}

}  // namespace

int rematerialize_between_regions(std::vector<BoundSymbol>& stmts,
                                  const std::vector<bool>& is_region, const Value& output) {
  ProxySet returned;
  {
    std::vector<ProxyPtr> outs;
    output.collect_proxies(outs);
    for (const ProxyPtr& p : outs) returned.insert(p.get());
  }
  auto producer_of = [&](const Proxy* v) -> long {
    for (size_t i = 0; i < stmts.size(); ++i)
      if (is_region[i] && contains(stmts[i].flat_outputs(), v)) return static_cast<long>(i);
    return -1;
  };
  // Does any statement but `except` read v at the top level (or the program return it)?
  auto read_elsewhere = [&](const Proxy* v, size_t except) {
    if (returned.count(v)) return true;
    for (size_t i = 0; i < stmts.size(); ++i)
      if (i != except && contains(stmts[i].flat_args(), v)) return true;
    return false;
  };

  int recomputed = 0;
  for (size_t b = 0; b < stmts.size(); ++b) {
    if (!is_region[b]) continue;
    ProxySet tried;
    for (bool changed = true; changed;) {
      changed = false;
      for (const ProxyPtr& v : stmts[b].flat_args()) {
        if (!v->is_tensor() || !tried.insert(v.get()).second) continue;
        long a = producer_of(v.get());
        if (a < 0 || static_cast<size_t>(a) == b ||
            stmts[a].has_tag(StmtTag::BACKWARD) != stmts[b].has_tag(StmtTag::BACKWARD))
          continue;
        BoundSymbol& consumer = stmts[b];
        ProxySet available;
        for (const ProxyPtr& p : consumer.flat_args())
          if (p != v) available.insert(p.get());
        for (const BoundSymbol& s : consumer.subsymbols)
          for (const ProxyPtr& p : s.flat_outputs()) available.insert(p.get());
        Plan plan = plan_recompute(stmts[a], v, available);
        if (!plan.ok) continue;
        bool drop = !read_elsewhere(v.get(), b);
        int64_t before = bytes(*v) * (drop ? 2 : 1), after = 0;
        for (const ProxyPtr& p : plan.leaves) after += bytes(*p);
        if (after >= before) continue;

        std::vector<BoundSymbol> subs;
        for (size_t i : plan.stmts) {
          BoundSymbol s = stmts[a].subsymbols[i];
          s.tags = (s.tags & ~static_cast<uint32_t>(StmtTag::BACKWARD)) |
                   (consumer.tags & static_cast<uint32_t>(StmtTag::BACKWARD));
          subs.push_back(std::move(s));
        }
        for (BoundSymbol& s : consumer.subsymbols) subs.push_back(std::move(s));
        consumer.subsymbols = dependency_order(std::move(subs));
        consumer.args = inputs_of(consumer.subsymbols);
        ++recomputed;
        if (drop) {
          BoundSymbol& producer = stmts[a];
          std::vector<Value> kept;
          for (const Value& o : producer.output.as_list())
            if (o.proxy() != v) kept.push_back(o);
          producer.output = Value(std::move(kept));
          prune(producer);
        }
        changed = true;
        break;  // the consumer's inputs changed: look again
      }
    }
  }
  return recomputed;
}

Trace rematerialize_regions(const Trace& trace) {
  Trace out = trace.empty_like();
  out.bsyms = trace.bsyms;
  std::vector<bool> is_region;
  for (const BoundSymbol& b : out.bsyms) is_region.push_back(b.sym->is_region);
  rematerialize_between_regions(out.bsyms, is_region, out.output);
  // A producer whose outputs consumers now all recompute is left empty.
  std::erase_if(out.bsyms,
                [](const BoundSymbol& b) { return b.sym->is_region && b.subsymbols.empty(); });
  return out;
}

}  // namespace thunder
