// Fully sharded data parallel (thunder/distributed.h, fsdp): parameters kept
// as dim-0 shards, gathered in the traced forward by prims.all_gather and
// wait (the gather's grad rule reduce-scatters the gradients), the padding
// rows cut off; ZeRO-3 tags the gathered values for recomputation, so the
// min-cut gathers them again in the backward instead of saving them.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "dispatch.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/distributed.h"
#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"
#include "thunder/runtime/process_groups.h"

namespace thunder::distributed::detail {

FsdpBase::FsdpBase(std::shared_ptr<nn::Module> inner, ProcessGroup group, FsdpOptions options)
    : inner_(std::move(inner)), group_(std::move(group)), options_(options) {
  THUNDER_CHECK(inner_ != nullptr, "distributed.fsdp: the model is null");
  THUNDER_CHECK(options_.bucket_size_mb >= 0,
                "distributed.fsdp: bucket_size_mb must be >= 0, got {}", options_.bucket_size_mb);
  register_module("module", inner_);
  check_same_parameters(inner_->named_parameters(), group_, "fsdp");
  at::NoGradGuard no_grad;
  if (options_.broadcast_parameters)
    for (const auto& [name, t] : inner_->named_parameters()) group_.broadcast(t.detach(), 0);
  const int64_t world = group_.world_size(), rank = group_.rank();
  for (const auto& [name, t] : inner_->named_parameters()) {
    if (t.dim() == 0) {
      replicated_.push_back(t);
      continue;
    }
    const int64_t size = t.size(0), rows = (size + world - 1) / world;
    // This rank's rows [rank * rows, (rank + 1) * rows), zero past the end.
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    shape[0] = rows;
    at::Tensor shard = at::zeros(shape, t.options());
    const int64_t first = std::min(size, rank * rows), last = std::min(size, (rank + 1) * rows);
    if (last > first) shard.narrow(0, 0, last - first).copy_(t.narrow(0, first, last - first));
    // The parameter object stays (the model's members, the optimizer's
    // references); its data becomes the shard, as Python's `p.data = shard`.
    at::Tensor param = t;
    param.set_data(shard);
    sharded_.push_back({name, Sharded{param, size}});
  }
}

std::vector<int64_t> FsdpBase::collective_groups() const { return {group_.handle()}; }

int64_t FsdpBase::gradient_bucket_bytes() const {
  return static_cast<int64_t>(options_.bucket_size_mb * 1024 * 1024);
}

std::vector<std::pair<std::string, at::Tensor>> FsdpBase::full_parameters() const {
  at::NoGradGuard no_grad;
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& [name, s] : sharded_) {
    std::vector<int64_t> shape(s.param.sizes().begin(), s.param.sizes().end());
    shape[0] *= group_.world_size();
    at::Tensor whole = at::empty(shape, s.param.options());
    runtime::all_gather_into(group_.handle(), s.param.detach(), whole);
    out.emplace_back(name, whole.narrow(0, 0, s.size).clone());
  }
  return out;
}

void FsdpBase::gather_parameters() const {
  TraceCtx* ctx = current_trace_ctx();
  thunder::detail::CaptureTable* captures = thunder::detail::current_captures();
  THUNDER_CHECK(ctx != nullptr && captures != nullptr,
                "distributed.fsdp: the model holds only this rank's shards; call it through "
                "thunder::jit");
  ctx->grad_enabled = at::GradMode::is_enabled();
  const int64_t world = group_.world_size();
  for (const auto& [name, s] : sharded_) {
    ProxyPtr shard = captures->proxy_for(s.param);
    const Value future = prims::all_gather(Value(shard), group_.handle(), world);
    const Value gathered = prims::wait(future);
    Value whole = gathered;
    if (s.size < gathered.proxy()->shape[0]) {  // the last shard's padding rows
      std::vector<int64_t> start(shard->shape.size(), 0), end = gathered.proxy()->shape,
                                                          strides(shard->shape.size(), 1);
      end[0] = s.size;
      whole = prims::slice(gathered, start, end, strides);
    }
    if (options_.strategy == ShardingStrategy::ZERO3)
      for (const Value& v : {future, gathered, whole})
        v.proxy()->tags |= static_cast<uint32_t>(ProxyTag::RECOMPUTE_IN_BACKWARD);
    captures->replace(s.param, whole.proxy());
  }
  for (const at::Tensor& t : replicated_) {
    if (!t.requires_grad()) continue;
    ProxyPtr in = captures->proxy_for(t);
    captures->replace(t, prims::synchronize(Value(in), group_.handle(), world).proxy());
  }
}

}  // namespace thunder::distributed::detail
