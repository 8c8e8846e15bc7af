#include "thunder/transforms/fusion_regions.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "thunder/prims/distributed.h"

namespace thunder {

namespace {

bool is_backward(const BoundSymbol& b) { return b.has_tag(StmtTag::BACKWARD); }

// Statement-level dataflow edges (producer -> consumer), deduplicated.
struct Edges {
  std::vector<std::vector<size_t>> producers, consumers;
  explicit Edges(const std::vector<BoundSymbol>& bsyms)
      : producers(bsyms.size()), consumers(bsyms.size()) {
    std::unordered_map<const Proxy*, size_t> def;
    for (size_t i = 0; i < bsyms.size(); ++i) {
      for (const ProxyPtr& p : bsyms[i].flat_args()) {
        auto it = def.find(p.get());
        if (it == def.end()) continue;
        auto& pr = producers[i];
        if (std::find(pr.begin(), pr.end(), it->second) == pr.end()) {
          pr.push_back(it->second);
          consumers[it->second].push_back(i);
        }
      }
      for (const ProxyPtr& p : bsyms[i].flat_outputs()) def[p.get()] = i;
    }
  }
};

// Groups as a union-find over statements; the group graph is derived from the
// statement edges on demand (traces are small enough for repeated searches).
class Grouping {
 public:
  Grouping(const Edges& e, size_t n) : e_(e), parent_(n), members_(n) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
    for (size_t i = 0; i < n; ++i) members_[i] = {i};
  }
  size_t find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void merge(size_t a, size_t b) {
    a = find(a), b = find(b);
    if (a > b) std::swap(a, b);  // the root is the smaller index: stable ids
    parent_[b] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    std::sort(members_[a].begin(), members_[a].end());
    members_[b].clear();
  }
  const std::vector<size_t>& members(size_t root) const { return members_[root]; }
  std::vector<size_t> successors(size_t root) {
    std::vector<size_t> out;
    for (size_t s : members_[root])
      for (size_t c : e_.consumers[s]) {
        size_t g = find(c);
        if (g != root && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
      }
    return out;
  }
  // Is group b reachable from any of `starts`?
  bool reachable(std::vector<size_t> stack, size_t b) {
    std::unordered_set<size_t> seen(stack.begin(), stack.end());
    while (!stack.empty()) {
      size_t g = stack.back();
      stack.pop_back();
      if (g == b) return true;
      for (size_t s : successors(g))
        if (seen.insert(s).second) stack.push_back(s);
    }
    return false;
  }
  // Is there a path from group a to group b (b != a) through at least one other group?
  bool path_via_other(size_t a, size_t b) {
    std::vector<size_t> starts;
    for (size_t s : successors(a))
      if (s != b) starts.push_back(s);
    return reachable(std::move(starts), b);
  }
  // Merging creates a cycle iff one group reaches the other through a third.
  bool can_merge(size_t a, size_t b) { return !path_via_other(a, b) && !path_via_other(b, a); }
  bool reaches(size_t a, size_t b) { return reachable(successors(a), b); }

 private:
  const Edges& e_;
  std::vector<size_t> parent_;
  std::vector<std::vector<size_t>> members_;
};

std::vector<std::vector<size_t>> consecutive_groups(const std::vector<BoundSymbol>& bsyms,
                                                    const std::vector<bool>& fusible) {
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < bsyms.size(); ++i) {
    if (!fusible[i]) continue;
    bool extend = i > 0 && fusible[i - 1] && !groups.empty() && groups.back().back() == i - 1 &&
                  is_backward(bsyms[i - 1]) == is_backward(bsyms[i]);
    if (!extend) groups.emplace_back();
    groups.back().push_back(i);
  }
  return groups;
}

std::vector<std::vector<size_t>> dataflow_groups(const std::vector<BoundSymbol>& bsyms,
                                                 const std::vector<bool>& fusible) {
  Edges edges(bsyms);
  Grouping g(edges, bsyms.size());
  auto compatible = [&](size_t a, size_t b) {
    return fusible[a] && fusible[b] && is_backward(bsyms[a]) == is_backward(bsyms[b]);
  };
  // Vertical: pull each statement into its producers' groups, to a fixpoint.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < bsyms.size(); ++i)
      for (size_t p : edges.producers[i]) {
        if (!compatible(p, i)) continue;
        size_t a = g.find(p), b = g.find(i);
        if (a != b && g.can_merge(a, b)) g.merge(a, b), changed = true;
      }
  }
  // Horizontal: independent groups of one side of the boundary become one,
  // unless that would hold back a collective's input: a merged group runs
  // once both groups' inputs exist, so a group feeding a collective (a
  // gradient bucket) stays apart from one that waits for a later statement
  // (a matmul the collective should overlap).
  std::vector<bool> feeds_collective(bsyms.size(), false);
  for (size_t i = bsyms.size(); i-- > 0;) {
    feeds_collective[i] = prims::is_collective(*bsyms[i].sym);
    for (size_t c : edges.consumers[i])
      feeds_collective[i] = feeds_collective[i] || feeds_collective[c];
  }
  // The last statement outside the group that the group reads (-1: none).
  auto ready_after = [&](size_t root) {
    long last = -1;
    for (size_t s : g.members(root))
      for (size_t p : edges.producers[s])
        if (g.find(p) != root) last = std::max(last, static_cast<long>(p));
    return last;
  };
  auto feeds = [&](size_t root) {
    const auto& m = g.members(root);
    return std::any_of(m.begin(), m.end(), [&](size_t s) { return feeds_collective[s]; });
  };
  auto delays_collective = [&](size_t a, size_t b) {
    const long ra = ready_after(a), rb = ready_after(b);
    return (feeds(a) && rb > ra) || (feeds(b) && ra > rb);
  };
  std::vector<size_t> roots;
  for (size_t i = 0; i < bsyms.size(); ++i)
    if (fusible[i] && g.find(i) == i) roots.push_back(i);
  for (size_t x = 0; x < roots.size(); ++x) {
    if (g.find(roots[x]) != roots[x]) continue;
    for (size_t y = x + 1; y < roots.size(); ++y) {
      size_t a = g.find(roots[x]), b = roots[y];
      if (g.find(b) != b || !compatible(a, b)) continue;
      if (!g.reaches(a, b) && !g.reaches(b, a) && !delays_collective(a, b)) g.merge(a, b);
    }
  }
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < bsyms.size(); ++i)
    if (fusible[i] && g.find(i) == i) groups.push_back(g.members(i));
  return groups;
}

}  // namespace

std::vector<std::vector<size_t>> fusion_groups(const std::vector<BoundSymbol>& bsyms,
                                               const std::vector<bool>& fusible,
                                               FusionStrategy strategy) {
  return strategy == FusionStrategy::Consecutive ? consecutive_groups(bsyms, fusible)
                                                 : dataflow_groups(bsyms, fusible);
}

Trace form_fusion_regions(const Trace& trace, const std::vector<bool>& fusible,
                          FusionStrategy strategy, int executor,
                          const RegionSymbolFn& make_symbol) {
  const auto& bsyms = trace.bsyms;
  std::vector<std::vector<size_t>> groups = fusion_groups(bsyms, fusible, strategy);
  // Units: each group, and each statement outside groups, keyed by its first statement.
  std::vector<long> unit_of(bsyms.size(), -1);
  std::vector<std::vector<size_t>> units;
  std::vector<bool> is_region;
  for (const auto& grp : groups) {
    for (size_t s : grp) unit_of[s] = static_cast<long>(units.size());
    units.push_back(grp);
    is_region.push_back(true);
  }
  for (size_t i = 0; i < bsyms.size(); ++i)
    if (unit_of[i] < 0) {
      unit_of[i] = static_cast<long>(units.size());
      units.push_back({i});
      is_region.push_back(false);
    }

  // Topological order of units; ties go to the earliest original statement.
  Edges edges(bsyms);
  std::vector<std::vector<size_t>> succ(units.size());
  std::vector<int> indegree(units.size(), 0);
  for (size_t i = 0; i < bsyms.size(); ++i)
    for (size_t c : edges.consumers[i]) {
      size_t a = unit_of[i], b = unit_of[c];
      if (a == b || std::find(succ[a].begin(), succ[a].end(), b) != succ[a].end()) continue;
      succ[a].push_back(b);
      ++indegree[b];
    }
  using Key = std::pair<size_t, size_t>;  // (first statement, unit)
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  for (size_t u = 0; u < units.size(); ++u)
    if (indegree[u] == 0) ready.push({units[u].front(), u});

  // Who reads each proxy (by unit), to find region outputs.
  std::unordered_map<const Proxy*, std::vector<size_t>> readers;
  for (size_t i = 0; i < bsyms.size(); ++i)
    for (const ProxyPtr& p : bsyms[i].flat_args()) readers[p.get()].push_back(unit_of[i]);
  std::unordered_set<const Proxy*> returned;
  {
    std::vector<ProxyPtr> outs;
    trace.output.collect_proxies(outs);
    for (const auto& p : outs) returned.insert(p.get());
  }

  // The program in its new order, regions without symbols yet.
  std::vector<BoundSymbol> stmts;
  std::vector<bool> stmt_is_region;
  while (!ready.empty()) {
    size_t u = ready.top().second;
    ready.pop();
    for (size_t s : succ[u])
      if (--indegree[s] == 0) ready.push({units[s].front(), s});
    stmt_is_region.push_back(is_region[u]);
    if (!is_region[u]) {
      stmts.push_back(bsyms[units[u].front()]);
      continue;
    }
    BoundSymbol region;
    region.executor = executor;
    std::unordered_set<const Proxy*> defined, seen_in;
    std::vector<Value> ins, outs;
    for (size_t s : units[u]) {
      const BoundSymbol& b = bsyms[s];
      for (const ProxyPtr& p : b.flat_args())
        if (!defined.count(p.get()) && seen_in.insert(p.get()).second) ins.emplace_back(p);
      for (const ProxyPtr& p : b.flat_outputs()) {
        defined.insert(p.get());
        bool read_outside = returned.count(p.get()) > 0;
        for (size_t r : readers[p.get()]) read_outside = read_outside || r != u;
        if (read_outside) outs.emplace_back(p);
      }
      region.subsymbols.push_back(b);
      if (is_backward(b)) region.tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
    }
    region.args = std::move(ins);
    region.output = Value(std::move(outs));
    stmts.push_back(std::move(region));
  }

  Trace out = trace.empty_like();
  int region_count = 0;
  for (size_t i = 0; i < stmts.size(); ++i) {
    BoundSymbol& b = stmts[i];
    if (!stmt_is_region[i]) {
      out.bsyms.push_back(std::move(b));
      continue;
    }
    std::shared_ptr<const Symbol> sym = make_symbol(region_count, b);
    if (!sym) {  // declined: the statements stay as they are
      for (BoundSymbol& s : b.subsymbols) out.bsyms.push_back(std::move(s));
      continue;
    }
    ++region_count;
    b.sym = sym.get();
    out.owned_symbols.push_back(std::move(sym));
    out.bsyms.push_back(std::move(b));
  }
  return out;
}

}  // namespace thunder
