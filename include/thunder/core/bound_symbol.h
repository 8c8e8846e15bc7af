// BoundSymbol: one statement of a trace: a symbol applied to arguments, with
// its outputs, its decomposition (subsymbols, recorded while tracing) and tags.
// `origins` names the composites this statement was decomposed from, so a pass
// that only sees prims can still honour a policy set on e.g. ltorch.dropout.
#pragma once

#include <cstdint>
#include <vector>

#include "thunder/core/symbol.h"

namespace thunder {

enum class StmtTag : uint32_t {
  BACKWARD = 1u << 0,  // part of the backward computation of a joint trace
};

struct BoundSymbol {
  const Symbol* sym = nullptr;
  std::vector<Value> args;
  Value output;  // a proxy, a list of proxies, or None
  std::vector<BoundSymbol> subsymbols;
  uint32_t tags = 0;                   // StmtTag bits
  std::vector<const Symbol*> origins;  // enclosing composites, outermost first
  int executor = -1;                   // executor that runs it (after claiming), -1: none yet

  bool has_tag(StmtTag t) const { return tags & static_cast<uint32_t>(t); }
  // True if the symbol or any composite it came from carries the tag.
  bool has_op_tag(OpTag t) const;
  std::vector<ProxyPtr> flat_args() const;
  std::vector<ProxyPtr> flat_outputs() const;
};

}  // namespace thunder
