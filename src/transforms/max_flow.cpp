// Dinic's maximum flow with exact infinite capacities.
//
// Infinity is handled up front: if the source reaches the sink through
// infinite edges alone, no finite cut exists and we stop. Otherwise the nodes
// reachable through infinite edges form a cut made of finite edges, so the
// minimum cut is at most the sum F of all finite capacities, and any cut
// crossing an edge of capacity F + 1 is worse. Infinite edges then become
// F + 1 and the algorithm runs on plain integers that cannot overflow.
#include "thunder/transforms/max_flow.h"

#include <algorithm>
#include <queue>

#include "thunder/core/error.h"

namespace thunder {

void FlowGraph::add_edge(int from, int to, int64_t capacity) {
  THUNDER_CHECK(from >= 0 && from < num_nodes_ && to >= 0 && to < num_nodes_,
                "FlowGraph::add_edge: edge {} -> {} names a node outside [0, {})", from, to,
                num_nodes_);
  THUNDER_CHECK(capacity >= 0, "FlowGraph::add_edge: edge {} -> {} has negative capacity {}", from,
                to, capacity);
  edges_.push_back({from, to, capacity});
}

namespace {

// Residual graph: edge 2k is edge k of the input, 2k + 1 its reverse.
class Dinic {
 public:
  Dinic(int n, int source, int sink) : head_(n, -1), level_(n), next_(n), s_(source), t_(sink) {}

  void add(int from, int to, int64_t cap) {
    link(from, to, cap);
    link(to, from, 0);
  }

  int64_t max_flow() {
    int64_t flow = 0;
    while (build_levels()) {
      next_ = head_;
      while (int64_t f = augment(s_, kInfiniteCapacity)) flow += f;
    }
    return flow;
  }

  // Nodes that `to` is reachable from through edges with spare capacity.
  std::vector<bool> reaching(int to) const {
    std::vector<bool> seen(head_.size(), false);
    std::vector<int> stack = {to};
    seen[to] = true;
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      for (int e = head_[v]; e != -1; e = link_[e])  // e ^ 1 enters v
        if (cap_[e ^ 1] > 0 && !seen[to_[e]]) seen[to_[e]] = true, stack.push_back(to_[e]);
    }
    return seen;
  }

  // Nodes reachable from `from` through edges with spare capacity.
  std::vector<bool> reachable(int from) const {
    std::vector<bool> seen(head_.size(), false);
    std::vector<int> stack = {from};
    seen[from] = true;
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      for (int e = head_[u]; e != -1; e = link_[e])
        if (cap_[e] > 0 && !seen[to_[e]]) seen[to_[e]] = true, stack.push_back(to_[e]);
    }
    return seen;
  }

 private:
  void link(int from, int to, int64_t cap) {
    to_.push_back(to);
    cap_.push_back(cap);
    link_.push_back(head_[from]);
    head_[from] = static_cast<int>(to_.size()) - 1;
  }

  // BFS distances from the source over edges with spare capacity.
  bool build_levels() {
    std::fill(level_.begin(), level_.end(), -1);
    std::queue<int> q;
    level_[s_] = 0;
    q.push(s_);
    while (!q.empty()) {
      int u = q.front();
      q.pop();
      for (int e = head_[u]; e != -1; e = link_[e])
        if (cap_[e] > 0 && level_[to_[e]] < 0) level_[to_[e]] = level_[u] + 1, q.push(to_[e]);
    }
    return level_[t_] >= 0;
  }

  // One augmenting path along increasing levels; next_ skips exhausted edges.
  int64_t augment(int u, int64_t limit) {
    if (u == t_) return limit;
    for (int& e = next_[u]; e != -1; e = link_[e]) {
      int v = to_[e];
      if (cap_[e] <= 0 || level_[v] != level_[u] + 1) continue;
      if (int64_t f = augment(v, std::min(limit, cap_[e]))) {
        cap_[e] -= f;
        cap_[e ^ 1] += f;
        return f;
      }
    }
    return 0;
  }

  std::vector<int> head_, level_, next_;
  std::vector<int> to_, link_;
  std::vector<int64_t> cap_;
  int s_, t_;
};

}  // namespace

MinCut min_cut(const FlowGraph& graph, int source, int sink) {
  const int n = graph.num_nodes();
  THUNDER_CHECK(source >= 0 && source < n && sink >= 0 && sink < n,
                "min_cut: source {} or sink {} is not a node of a graph with {} nodes", source,
                sink, n);
  THUNDER_CHECK(source != sink, "min_cut: source and sink are the same node {}", source);

  Dinic infinite_only(n, source, sink);
  int64_t finite_sum = 0;
  constexpr int64_t kLimit = int64_t{1} << 62;
  for (const FlowGraph::Edge& e : graph.edges()) {
    if (e.capacity == kInfiniteCapacity) {
      infinite_only.add(e.from, e.to, 1);
      continue;
    }
    finite_sum += e.capacity;
    THUNDER_CHECK(finite_sum < kLimit, "min_cut: the finite capacities sum to more than 2^62");
  }
  MinCut cut;
  if (infinite_only.reachable(source)[sink]) {
    cut.finite = false;
    return cut;
  }

  Dinic dinic(n, source, sink);
  for (const FlowGraph::Edge& e : graph.edges())
    dinic.add(e.from, e.to, e.capacity == kInfiniteCapacity ? finite_sum + 1 : e.capacity);
  cut.value = dinic.max_flow();
  cut.source_side = dinic.reaching(sink);
  cut.source_side.flip();
  return cut;
}

}  // namespace thunder
