// Fully sharded data parallel (thunder/distributed.h, fsdp): parameters kept
// as dim-0 shards, gathered in the traced forward by prims.all_gather and
// wait (the gather's grad rule reduce-scatters the gradients), the padding
// rows cut off; ZeRO-3 tags the gathered values for recomputation, so the
// min-cut gathers them again in the backward instead of saving them.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "capture_session.h"
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
  register_module("module", inner_);
  shard(inner_->named_parameters());
}

FsdpBase::FsdpBase(const NamedTensors& parameters, ProcessGroup group, FsdpOptions options)
    : group_(std::move(group)), options_(options) {
  shard(parameters);
}

void FsdpBase::shard(const NamedTensors& parameters) {
  THUNDER_CHECK(options_.bucket_size_mb >= 0,
                "distributed.fsdp: bucket_size_mb must be >= 0, got {}", options_.bucket_size_mb);
  check_same_parameters(parameters, group_, "fsdp");
  at::NoGradGuard no_grad;
  if (options_.broadcast_parameters)
    for (const auto& [name, t] : parameters) group_.broadcast(t.detach(), 0);
  const int64_t world = group_.world_size(), rank = group_.rank();
  for (const auto& [name, t] : parameters) {
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
    // The leaf no_sync's traces read: one object for the wrapper's life (a
    // compiled entry holds it), its data the whole parameter only under no_sync.
    at::Tensor whole = at::empty({0}, t.options());
    whole.set_requires_grad(t.requires_grad());
    sharded_.push_back({name, Sharded{param, size, whole}});
  }
}

ShardSwap::~ShardSwap() {
  if (shards_.empty()) return;
  thunder::detail::CaptureKeyOff bookkeeping;  // not ops of the captured forward
  for (auto& [param, shard] : shards_) param.set_data(shard);
}

std::vector<std::pair<std::string, std::function<bool()>>> FsdpBase::guarded_flags() const {
  return {{"fsdp.sync_gradients", [this] { return sync_gradients(); }}};
}

// The whole of a sharded parameter (every rank's shard, padding cut off).
static at::Tensor gather_whole(const ProcessGroup& group, const at::Tensor& shard, int64_t size) {
  std::vector<int64_t> shape(shard.sizes().begin(), shard.sizes().end());
  shape[0] *= group.world_size();
  at::Tensor whole = at::empty(shape, shard.options());
  runtime::all_gather_into(group.handle(), shard.detach(), whole);
  return whole.narrow(0, 0, size);
}

void FsdpBase::pause_sync() {
  at::NoGradGuard no_grad;
  for (auto& [name, s] : sharded_) {
    s.whole.set_data(gather_whole(group_, s.param, s.size));
    s.whole.mutable_grad().reset();
  }
  sync_.store(false, std::memory_order_relaxed);
}

// The unsharded gradients, padded and averaged over the ranks in one flat
// all-reduce (with the replicated parameters'); each rank adds its rows.
void FsdpBase::resume_sync(bool combine) {
  sync_.store(true, std::memory_order_relaxed);
  at::NoGradGuard no_grad;
  const int64_t world = group_.world_size(), rank = group_.rank();
  if (combine) {
    std::vector<at::Tensor> flat;
    for (auto& [name, s] : sharded_) {
      if (!s.param.requires_grad()) continue;
      std::vector<int64_t> shape(s.param.sizes().begin(), s.param.sizes().end());
      shape[0] *= world;
      at::Tensor padded = at::zeros(shape, s.param.options());
      if (s.whole.grad().defined()) padded.narrow(0, 0, s.size).copy_(s.whole.grad());
      flat.push_back(padded.reshape({-1}));
    }
    for (const at::Tensor& t : replicated_)
      if (t.requires_grad())
        flat.push_back(t.grad().defined() ? t.grad().reshape({-1}) : at::zeros({1}, t.options()));
    if (!flat.empty()) {
      const at::Tensor packed = average_over_ranks(flat, group_);
      int64_t offset = 0;
      auto add_to_grad = [](at::Tensor& p, const at::Tensor& g) {
        if (p.grad().defined())
          p.mutable_grad().add_(g);
        else
          p.mutable_grad() = g.clone();
      };
      for (auto& [name, s] : sharded_) {
        if (!s.param.requires_grad()) continue;
        const int64_t n = s.param.numel();
        add_to_grad(s.param, packed.narrow(0, offset + rank * n, n).view(s.param.sizes()));
        offset += n * world;
      }
      for (at::Tensor t : replicated_)
        if (t.requires_grad()) {  // averaged already: the sum holds the pre-guard part
          t.mutable_grad() = packed.narrow(0, offset, 1).view({}).clone();
          offset += 1;
        }
    }
  }
  for (auto& [name, s] : sharded_) {  // the whole parameters' memory goes
    s.whole.set_data(at::empty({0}, s.param.options()));
    s.whole.mutable_grad().reset();
  }
}

std::vector<int64_t> FsdpBase::collective_groups() const { return {group_.handle()}; }

int64_t FsdpBase::gradient_bucket_bytes() const {
  return static_cast<int64_t>(options_.bucket_size_mb * 1024 * 1024);
}

std::vector<std::pair<std::string, at::Tensor>> FsdpBase::full_parameters() const {
  at::NoGradGuard no_grad;
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& [name, s] : sharded_)
    out.emplace_back(name, gather_whole(group_, s.param, s.size).clone());
  return out;
}

ShardSwap FsdpBase::gather_parameters() const {
  TraceCtx* ctx = current_trace_ctx();
  thunder::detail::CaptureTable* captures = thunder::detail::current_captures();
  THUNDER_CHECK(ctx != nullptr && captures != nullptr,
                "distributed.fsdp: the model holds only this rank's shards; call it through "
                "thunder::jit");
  ctx->grad_enabled = at::GradMode::is_enabled();
  const int64_t world = group_.world_size();
  const bool sync = sync_gradients();
  std::vector<std::pair<at::Tensor, at::Tensor>> swapped;
  for (const auto& [name, s] : sharded_) {
    ProxyPtr shard = captures->proxy_for(s.param);
    if (!sync) {  // no_sync: the leaf gathered at the guard's entry
      captures->replace(s.param, captures->proxy_for(s.whole));
    } else {
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
    if (inner_ == nullptr) {                       // a torch::nn module runs eagerly under capture
      thunder::detail::CaptureKeyOff bookkeeping;  // not ops of the captured forward
      at::NoGradGuard no_grad;
      at::Tensor data = sync ? gather_whole(group_, s.param, s.size) : s.whole.detach();
      swapped.emplace_back(s.param, s.param.detach());
      at::Tensor param = s.param;
      param.set_data(data);
    }
  }
  for (const at::Tensor& t : replicated_) {
    if (!t.requires_grad() || !sync) continue;
    ProxyPtr in = captures->proxy_for(t);
    captures->replace(t, prims::synchronize(Value(in), group_.handle(), world).proxy());
  }
  return ShardSwap(std::move(swapped));
}

}  // namespace thunder::distributed::detail
