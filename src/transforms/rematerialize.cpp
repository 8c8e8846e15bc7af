// Min-cut rematerialization of a forward/backward split (see the header for
// the graph and the policies).
#include "thunder/transforms/rematerialize.h"

#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "recompute_cost.h"
#include "thunder/transforms/dce.h"
#include "thunder/transforms/max_flow.h"

namespace thunder {

namespace {

// Recomputing would change the result (a stateful draw, a mutation) or
// override the user (DONT_RECOMPUTE_IN_BACKWARD). RANDOM_OP (stateful; the
// stateless uniform_philox is not) counts on the symbol and in its
// decomposition, not via origins: ltorch.dropout is tagged for its draw, and
// the elementwise rest of it is deterministic given the draw.
bool is_pinned(const BoundSymbol& b) {
  if (b.has_op_tag(OpTag::DONT_RECOMPUTE_IN_BACKWARD) || b.has_op_tag(OpTag::IN_PLACE)) return true;
  if (b.sym->has_tag(OpTag::RANDOM_OP)) return true;
  for (const BoundSymbol& s : b.subsymbols)
    if (is_pinned(s)) return true;
  return false;
}

// Cheap enough to recompute by default: elementwise and shape prims (or pure
// factories) all the way down, nothing from a reduction or a matmul.
bool is_cheap(const BoundSymbol& b) {
  if (b.has_op_tag(OpTag::REDUCTION_OP) || b.has_op_tag(OpTag::MATMUL_OP)) return false;
  if (b.sym->is_prim) return is_cheap_prim(*b.sym);
  if (b.subsymbols.empty()) return false;  // nothing says what it costs
  for (const BoundSymbol& s : b.subsymbols)
    if (!is_cheap(s)) return false;
  return true;
}

// Statements of a random composite (dropout's keep mask and scaling) are
// left to the cost model: forcing them past the pinned draw would save the
// draw itself (4-8 bytes an element) instead of the 1-byte mask.
bool wants_recompute(const BoundSymbol& b, const Proxy& out) {
  if (b.has_op_tag(OpTag::RANDOM_OP)) return false;
  return b.has_op_tag(OpTag::RECOMPUTE_IN_BACKWARD) || out.has_tag(ProxyTag::RECOMPUTE_IN_BACKWARD);
}

bool any_output_wants_recompute(const BoundSymbol& b) {
  for (const ProxyPtr& p : b.flat_outputs())
    if (wants_recompute(b, *p)) return true;
  return false;
}

// Cut capacity of saving a value: twice its bytes, so an input (held by the
// caller anyway) can cost half without fractions.
int64_t save_cost(const Proxy& p, bool is_input) {
  int64_t bytes = p.is_tensor() ? p.numel() * item_size(p.dtype) : 8;
  return is_input ? bytes : 2 * bytes;
}

}  // namespace

ForwardBackward rematerialize(const ForwardBackward& fb) {
  const Trace& fwd = fb.forward;

  // Nodes: the forward's inputs, then its statements' outputs, in order.
  std::vector<ProxyPtr> values;
  std::unordered_map<const Proxy*, int> index;
  std::unordered_map<const Proxy*, size_t> producer;
  auto add_value = [&](const ProxyPtr& p) {
    if (index.emplace(p.get(), static_cast<int>(values.size())).second) values.push_back(p);
  };
  for (const ProxyPtr& p : fwd.inputs) add_value(p);
  for (size_t i = 0; i < fwd.bsyms.size(); ++i)
    for (const ProxyPtr& p : fwd.bsyms[i].flat_outputs()) {
      add_value(p);
      producer.emplace(p.get(), i);
    }

  const int source = 0, sink = 1;
  auto in = [&](const Proxy* p) { return 2 + 2 * index.at(p); };
  auto out = [&](const Proxy* p) { return 3 + 2 * index.at(p); };
  FlowGraph g(2 + 2 * static_cast<int>(values.size()));
  for (const ProxyPtr& p : fwd.inputs) {
    g.add_edge(source, in(p.get()), kInfiniteCapacity);  // inputs cannot be recomputed
    g.add_edge(in(p.get()), out(p.get()), save_cost(*p, /*is_input=*/true));
  }
  for (const BoundSymbol& b : fwd.bsyms) {
    bool recomputable = !is_pinned(b) && (is_cheap(b) || any_output_wants_recompute(b));
    std::vector<ProxyPtr> args = b.flat_args();
    for (const ProxyPtr& o : b.flat_outputs()) {
      bool banned = !recomputable || o->has_tag(ProxyTag::SAVED_FOR_BACKWARD);
      if (banned) g.add_edge(source, in(o.get()), kInfiniteCapacity);
      bool must_recompute = !banned && wants_recompute(b, *o);
      g.add_edge(in(o.get()), out(o.get()),
                 must_recompute ? kInfiniteCapacity : save_cost(*o, /*is_input=*/false));
      for (const ProxyPtr& a : args) g.add_edge(out(a.get()), in(o.get()), kInfiniteCapacity);
    }
  }
  for (const ProxyPtr& s : fb.saved) g.add_edge(out(s.get()), sink, kInfiniteCapacity);

  // With the policies above a finite cut exists (every chain up from the
  // backward ends at an input or a pinned value, both saveable); should a
  // future policy contradict itself, compile anyway with the split's set.
  MinCut cut = min_cut(g, source, sink);
  if (!cut.finite) {
    ForwardBackward same = fb;
    same.backward.notes.push_back(
        "Rematerialization found no finite cut: saving what the backward reads");
    return same;
  }

  // Walk up from what the backward reads: a value whose v_in is on the source
  // side is saved, any other is recomputed from its producer's arguments.
  std::vector<bool> saved_flag(values.size(), false), recompute(fwd.bsyms.size(), false);
  std::unordered_set<const Proxy*> visited;
  std::vector<const Proxy*> stack;
  for (const ProxyPtr& s : fb.saved) stack.push_back(s.get());
  while (!stack.empty()) {
    const Proxy* p = stack.back();
    stack.pop_back();
    if (!visited.insert(p).second) continue;
    if (cut.source_side[in(p)]) {
      saved_flag[index.at(p)] = true;
      continue;
    }
    size_t i = producer.at(p);  // inputs are always on the source side
    recompute[i] = true;
    for (const ProxyPtr& a : fwd.bsyms[i].flat_args()) stack.push_back(a.get());
  }

  ForwardBackward r;
  for (size_t k = 0; k < values.size(); ++k)
    if (saved_flag[k]) r.saved.push_back(values[k]);
  std::unordered_set<const Proxy*> is_saved;
  for (const ProxyPtr& s : r.saved) is_saved.insert(s.get());

  // Backward: recomputed statements in dependency order, each just before
  // the first statement (or the return) that reads it.
  const size_t num_cotangents = fb.backward.inputs.size() - fb.saved.size();
  r.backward = fb.backward.empty_like();
  r.backward.inputs = r.saved;
  r.backward.inputs.insert(r.backward.inputs.end(), fb.backward.inputs.end() - num_cotangents,
                           fb.backward.inputs.end());
  std::vector<bool> emitted(fwd.bsyms.size(), false);
  std::function<void(const ProxyPtr&)> materialize = [&](const ProxyPtr& p) {
    auto it = producer.find(p.get());
    if (is_saved.count(p.get()) || it == producer.end()) return;
    size_t i = it->second;
    if (!recompute[i] || emitted[i]) return;
    emitted[i] = true;
    for (const ProxyPtr& a : fwd.bsyms[i].flat_args()) materialize(a);
    BoundSymbol copy = fwd.bsyms[i];
    copy.tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
    r.backward.bsyms.push_back(std::move(copy));
  };
  for (const BoundSymbol& b : fb.backward.bsyms) {
    for (const ProxyPtr& a : b.flat_args()) materialize(a);
    r.backward.bsyms.push_back(b);
  }
  std::vector<ProxyPtr> results;
  fb.backward.output.collect_proxies(results);
  for (const ProxyPtr& p : results) materialize(p);
  r.backward = dce(r.backward);

  // Forward: its outputs and the new saved set.
  const auto& fwd_results = fwd.output.as_list();
  std::vector<Value> outs(fwd_results.begin(), fwd_results.end() - fb.saved.size());
  for (const ProxyPtr& s : r.saved) outs.emplace_back(s);
  r.forward = fwd;
  r.forward.output = Value(std::move(outs));
  r.forward = dce(r.forward);
  return r;
}

}  // namespace thunder
