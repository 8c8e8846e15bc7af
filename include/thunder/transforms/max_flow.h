// Maximum flow and minimum s-t cut on a small directed graph (Dinic's
// algorithm). Rematerialization builds one such graph per joint trace; this
// file knows nothing about traces.
//
// Capacities are non-negative integers or kInfiniteCapacity. Infinity is
// exact, not a large number: a cut that crosses an infinite edge is never
// minimal, and when every s-t cut crosses one, min_cut says so
// (MinCut::finite == false) instead of looping or overflowing.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace thunder {

inline constexpr int64_t kInfiniteCapacity = std::numeric_limits<int64_t>::max();

class FlowGraph {
 public:
  explicit FlowGraph(int num_nodes = 0) : num_nodes_(num_nodes) {}

  int add_node() { return num_nodes_++; }
  int num_nodes() const { return num_nodes_; }
  // Parallel and antiparallel edges are allowed. Throws thunder::Error on a
  // negative capacity or an unknown node.
  void add_edge(int from, int to, int64_t capacity);

  struct Edge {
    int from, to;
    int64_t capacity;
  };
  const std::vector<Edge>& edges() const { return edges_; }

 private:
  int num_nodes_;
  std::vector<Edge> edges_;
};

struct MinCut {
  bool finite = true;  // false: every s-t cut is infinite (value and source_side are empty)
  int64_t value = 0;   // the maximum flow, equal to the minimum cut's capacity
  // source_side[v]: v cannot reach the sink in the final residual graph. Of
  // all minimum cuts this is the one with the largest source side (ties go to
  // the source: rematerialization then recomputes as little as it can).
  std::vector<bool> source_side;
};

// Throws thunder::Error if source == sink, a node is out of range, or the sum
// of the finite capacities does not fit in 62 bits.
MinCut min_cut(const FlowGraph& graph, int source, int sink);

}  // namespace thunder
