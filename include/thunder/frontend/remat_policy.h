// Rematerialization policies, honoured by the min-cut pass that chooses what
// the forward saves for the backward (docs/rematerialization.md):
//
//   // Never recompute dropout's values in the backward; always recompute gelu's.
//   thunder::add_tags("ltorch.dropout", {thunder::OpTag::DONT_RECOMPUTE_IN_BACKWARD});
//   thunder::add_tags("ltorch.gelu", {thunder::OpTag::RECOMPUTE_IN_BACKWARD});
//
//   // The same for one scope only: the old tags are back when g dies.
//   auto g = thunder::scoped_add_tags("ltorch.dropout",
//                                     {thunder::OpTag::DONT_RECOMPUTE_IN_BACKWARD});
//
//   // Activation checkpointing: the intermediates of block_fn are recomputed
//   // in the backward instead of saved (matmuls included, stateful random
//   // draws excluded), like torch.utils.checkpoint.
//   thunder::Tensor h = thunder::checkpoint(block_fn, x, w);
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "thunder/core/registry_change.h"
#include "thunder/core/symbol.h"
#include "thunder/frontend/tensor.h"

namespace thunder {

// Adds tags to a registered symbol (e.g. "ltorch.dropout"). Passes see them on
// the symbol's statements and on every prim decomposed from it (origins).
// Takes effect for later calls: jitted callables compiled before recompile on
// their next call (the registry version). Throws thunder::Error for an unknown id.
// The change is permanent unless the returned handle is restored: discarding
// it keeps the tags (thunder/core/registry_change.h).
RegistryChange add_tags(const std::string& symbol_id, std::initializer_list<OpTag> tags);
RegistryChange add_tags(const std::string& symbol_id, const std::vector<OpTag>& tags);

// add_tags for a scope: the symbol's tags are put back when the handle dies.
//   { auto g = thunder::scoped_add_tags("ltorch.gelu", {OpTag::RECOMPUTE_IN_BACKWARD}); ... }
[[nodiscard]] ScopedRegistryChange scoped_add_tags(const std::string& symbol_id,
                                                   std::initializer_list<OpTag> tags);
[[nodiscard]] ScopedRegistryChange scoped_add_tags(const std::string& symbol_id,
                                                   const std::vector<OpTag>& tags);

namespace detail {

// While tracing, records the statements of a checkpointed region into a scope
// of its own; finish() tags every value they produced, except the region's
// outputs, with ProxyTag::RECOMPUTE_IN_BACKWARD and records them in the
// enclosing scope. Does nothing outside a trace.
class CheckpointRegion {
 public:
  CheckpointRegion();
  ~CheckpointRegion();  // on an exception: leaves the enclosing scope as it was
  CheckpointRegion(const CheckpointRegion&) = delete;
  CheckpointRegion& operator=(const CheckpointRegion&) = delete;
  void finish(const TensorList& outputs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

inline void region_outputs(const Tensor& t, TensorList& out) { out.push_back(t); }
inline void region_outputs(const TensorList& ts, TensorList& out) {
  out.insert(out.end(), ts.begin(), ts.end());
}
template <typename... Ts>
void region_outputs(const std::tuple<Ts...>& t, TensorList& out) {
  std::apply([&](const auto&... e) { (region_outputs(e, out), ...); }, t);
}

}  // namespace detail

// Calls fn(args...). Eagerly that is all; under thunder::jit the values made
// inside fn are recomputed in the backward rather than saved. fn returns a
// Tensor, a TensorList or a tuple of Tensors.
template <typename Fn, typename... Args>
auto checkpoint(Fn&& fn, Args&&... args) {
  detail::CheckpointRegion region;
  auto out = std::invoke(std::forward<Fn>(fn), std::forward<Args>(args)...);
  TensorList outs;
  detail::region_outputs(out, outs);
  region.finish(outs);
  return out;
}

}  // namespace thunder
