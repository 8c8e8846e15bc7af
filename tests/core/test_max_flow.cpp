// Max-flow / min-cut on hand-built graphs, cross-checked by brute force.
#include <gtest/gtest.h>

#include <random>

#include "thunder/core/error.h"
#include "thunder/transforms/max_flow.h"

namespace thunder {
namespace {

constexpr int64_t kInf = kInfiniteCapacity;

// The capacity of the cut (side, not side); kInf if an infinite edge crosses it.
int64_t cut_capacity(const FlowGraph& g, const std::vector<bool>& side) {
  int64_t sum = 0;
  for (const FlowGraph::Edge& e : g.edges()) {
    if (!side[e.from] || side[e.to]) continue;
    if (e.capacity == kInf) return kInf;
    sum += e.capacity;
  }
  return sum;
}

// Checks that `cut` is a valid minimum cut of value `expected` (kInf: none finite).
void expect_min_cut(const FlowGraph& g, int s, int t, int64_t expected) {
  MinCut cut = min_cut(g, s, t);
  if (expected == kInf) {
    EXPECT_FALSE(cut.finite);
    return;
  }
  ASSERT_TRUE(cut.finite);
  EXPECT_EQ(cut.value, expected);
  ASSERT_EQ(cut.source_side.size(), static_cast<size_t>(g.num_nodes()));
  EXPECT_TRUE(cut.source_side[s]);
  EXPECT_FALSE(cut.source_side[t]);
  EXPECT_EQ(cut_capacity(g, cut.source_side), expected);
}

TEST(MaxFlow, TextbookNetwork) {
  // CLRS figure 26.1: maximum flow 23, cut {s, v1, v2, v4}.
  enum { s, v1, v2, v3, v4, t };
  FlowGraph g(6);
  g.add_edge(s, v1, 16);
  g.add_edge(s, v2, 13);
  g.add_edge(v2, v1, 4);
  g.add_edge(v1, v3, 12);
  g.add_edge(v3, v2, 9);
  g.add_edge(v2, v4, 14);
  g.add_edge(v4, v3, 7);
  g.add_edge(v3, t, 20);
  g.add_edge(v4, t, 4);
  expect_min_cut(g, s, t, 23);
  EXPECT_EQ(min_cut(g, s, t).source_side, (std::vector<bool>{1, 1, 1, 0, 1, 0}));
}

TEST(MaxFlow, SingleEdgeAndChainBottleneck) {
  FlowGraph one(2);
  one.add_edge(0, 1, 7);
  expect_min_cut(one, 0, 1, 7);
  FlowGraph chain(4);
  chain.add_edge(0, 1, 5);
  chain.add_edge(1, 2, 2);
  chain.add_edge(2, 3, 9);
  expect_min_cut(chain, 0, 3, 2);
  EXPECT_EQ(min_cut(chain, 0, 3).source_side, (std::vector<bool>{1, 1, 0, 0}));
}

TEST(MaxFlow, InfiniteEdgesWithAFiniteCutElsewhere) {
  // s =inf=> a -3-> b =inf=> t, and s -4-> b: the cut is {a->b, s->b} = 7.
  FlowGraph g(4);
  g.add_edge(0, 1, kInf);
  g.add_edge(1, 2, 3);
  g.add_edge(2, 3, kInf);
  g.add_edge(0, 2, 4);
  expect_min_cut(g, 0, 3, 7);
  // The node splitting of rematerialization: a value x_in -> x_out of cost 10,
  // infinite everywhere else.
  FlowGraph split(4);
  split.add_edge(0, 1, kInf);
  split.add_edge(1, 2, 10);
  split.add_edge(2, 3, kInf);
  expect_min_cut(split, 0, 3, 10);
  // Infinite edges that lead nowhere do not matter.
  FlowGraph dead_end(4);
  dead_end.add_edge(0, 1, kInf);
  dead_end.add_edge(1, 2, kInf);
  dead_end.add_edge(0, 3, 1);
  expect_min_cut(dead_end, 0, 3, 1);
}

TEST(MaxFlow, NoFiniteCut) {
  FlowGraph g(3);
  g.add_edge(0, 1, kInf);
  g.add_edge(1, 2, kInf);
  g.add_edge(0, 2, 5);
  expect_min_cut(g, 0, 2, kInf);
  // Many infinite parallel paths: still answered at once, no overflow.
  FlowGraph wide(12);
  for (int i = 1; i <= 10; ++i) {
    wide.add_edge(0, i, kInf);
    wide.add_edge(i, 11, kInf);
  }
  expect_min_cut(wide, 0, 11, kInf);
}

TEST(MaxFlow, ParallelAndAntiparallelEdges) {
  FlowGraph parallel(2);
  parallel.add_edge(0, 1, 3);
  parallel.add_edge(0, 1, 4);
  parallel.add_edge(1, 0, 100);  // antiparallel: does not help s -> t
  expect_min_cut(parallel, 0, 1, 7);
  // Antiparallel pair in the middle of a diamond.
  FlowGraph diamond(4);
  diamond.add_edge(0, 1, 10);
  diamond.add_edge(0, 2, 1);
  diamond.add_edge(1, 2, 5);
  diamond.add_edge(2, 1, 5);
  diamond.add_edge(1, 3, 1);
  diamond.add_edge(2, 3, 10);
  expect_min_cut(diamond, 0, 3, 7);
}

TEST(MaxFlow, DisconnectedSourceAndSink) {
  FlowGraph g(4);
  g.add_edge(0, 1, 5);
  g.add_edge(2, 3, kInf);
  expect_min_cut(g, 0, 3, 0);
  EXPECT_EQ(min_cut(g, 0, 3).source_side, (std::vector<bool>{1, 1, 0, 0}));
  FlowGraph zero(2);
  zero.add_edge(0, 1, 0);
  expect_min_cut(zero, 0, 1, 0);
}

TEST(MaxFlow, BadInputsAreErrors) {
  FlowGraph g(2);
  EXPECT_THROW(g.add_edge(0, 2, 1), Error);
  EXPECT_THROW(g.add_edge(0, 1, -1), Error);
  EXPECT_THROW(min_cut(g, 0, 0), Error);
  EXPECT_THROW(min_cut(g, 0, 5), Error);
}

// Every cut of small random graphs, enumerated, against min_cut.
TEST(MaxFlow, MatchesBruteForceOnRandomGraphs) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 7);
    FlowGraph g(n);
    const int m = static_cast<int>(rng() % (3 * n));
    for (int k = 0; k < m; ++k) {
      int a = static_cast<int>(rng() % n), b = static_cast<int>(rng() % n);
      if (a == b) continue;
      g.add_edge(a, b, rng() % 6 == 0 ? kInf : static_cast<int64_t>(rng() % 10));
    }
    const int s = 0, t = n - 1;
    int64_t best = kInf;
    for (uint32_t mask = 0; mask < (1u << n); ++mask) {
      if (!(mask & (1u << s)) || (mask & (1u << t))) continue;
      std::vector<bool> side(n);
      for (int v = 0; v < n; ++v) side[v] = mask & (1u << v);
      best = std::min(best, cut_capacity(g, side));
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_min_cut(g, s, t, best);
  }
}

}  // namespace
}  // namespace thunder
