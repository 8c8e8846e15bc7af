// add_tags and checkpoint: the user's handles on rematerialization.
#include "thunder/frontend/remat_policy.h"

#include <unordered_set>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"

namespace thunder {

RegistryChange add_tags(const std::string& symbol_id, std::initializer_list<OpTag> tags) {
  return add_tags(symbol_id, std::vector<OpTag>(tags));
}

RegistryChange add_tags(const std::string& symbol_id, const std::vector<OpTag>& tags) {
  ltorch::ensure_registered();
  THUNDER_CHECK(symbol_registry().find(symbol_id) != nullptr, "add_tags: unknown symbol '{}'",
                symbol_id);
  uint32_t bits = 0;
  for (OpTag t : tags) bits |= static_cast<uint32_t>(t);
  return symbol_registry().add_tags(symbol_id, bits);
}

ScopedRegistryChange scoped_add_tags(const std::string& symbol_id,
                                     std::initializer_list<OpTag> tags) {
  return add_tags(symbol_id, tags);
}

ScopedRegistryChange scoped_add_tags(const std::string& symbol_id, const std::vector<OpTag>& tags) {
  return add_tags(symbol_id, tags);
}

namespace detail {

struct CheckpointRegion::State {
  TraceCtx* ctx;
  std::vector<BoundSymbol> stmts;
};

CheckpointRegion::CheckpointRegion() {
  TraceCtx* ctx = current_trace_ctx();
  if (!ctx) return;
  state_.reset(new State{ctx, {}});
  ctx->push_scope(&state_->stmts, nullptr);
}

CheckpointRegion::~CheckpointRegion() {
  if (state_) state_->ctx->pop_scope();
}

namespace {

void tag_outputs(const BoundSymbol& b, const std::unordered_set<const Proxy*>& keep) {
  for (const ProxyPtr& p : b.flat_outputs())
    if (!keep.count(p.get())) p->tags |= static_cast<uint32_t>(ProxyTag::RECOMPUTE_IN_BACKWARD);
  for (const BoundSymbol& s : b.subsymbols) tag_outputs(s, keep);
}

}  // namespace

void CheckpointRegion::finish(const TensorList& outputs) {
  if (!state_) return;
  std::unique_ptr<State> st = std::move(state_);
  st->ctx->pop_scope();
  // The region's outputs are computed (and saved, if need be) as usual; its
  // arguments are not produced here, so they are never tagged.
  std::unordered_set<const Proxy*> keep;
  for (const Tensor& t : outputs)
    if (t.is_proxy()) keep.insert(t.proxy().get());
  for (BoundSymbol& b : st->stmts) {
    tag_outputs(b, keep);
    st->ctx->record(std::move(b));
  }
}

}  // namespace detail
}  // namespace thunder
