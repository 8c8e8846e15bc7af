// A trace as a Graphviz dataflow graph (dot text), for the compile report.
// Statements are boxes, trace inputs ellipses, edges follow values from the
// statement that makes them to the statements that read them. A fusion region
// is a cluster holding its prims, linked to the region's generated source.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "thunder/core/trace.h"

namespace thunder::report {

struct DotMarks {
  // Prefix of every id the graph emits ("forward", "backward"): two graphs
  // share one page, so their ids must not collide.
  std::string side;
  // Values saved for the backward, with their bytes: highlighted (a node of
  // their own in the forward, the input itself in the backward).
  std::map<std::string, int64_t> saved_bytes;
  // Names the forward computes: a backward statement making one of them is
  // a recomputation and is marked.
  std::set<std::string> forward_names;
};

// Id of a region's cluster in the graph, and the page anchor of its source.
std::string region_cluster_id(const std::string& side, const BoundSymbol& region);
std::string region_anchor(const std::string& side, const BoundSymbol& region);

std::string trace_to_dot(const Trace& t, const DotMarks& marks);

}  // namespace thunder::report
