// thunder::distributed: data-parallel training across processes on
// libtorch's c10d (Gloo on CPU). A process group is made once per process
// (init_process_group); ddp(model, group) wraps a thunder module so that,
// under thunder::jit, every parameter passes through prims.synchronize,
// whose grad rule puts the gradient all-reduce (and its wait) into the
// backward trace. docs/distributed.md has the design and an example.
//
//   namespace td = thunder::distributed;
//   td::ProcessGroup pg = td::init_process_group();   // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   auto jm = thunder::jit(td::ddp(model, pg, {.bucket_size_mb = 25}));
//   jm(x).backward();                                 // gradients averaged over the ranks
//   { auto guard = td::no_sync(jm); jm(x).backward(); }  // accumulate locally
//
// Launch N ranks on one machine with `build/bin/thunder-run --nproc N prog args...`.
#pragma once

#include <torch/nn/module.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "thunder/frontend/guarded_state.h"
#include "thunder/frontend/jit.h"
#include "thunder/frontend/nn.h"

namespace thunder::distributed {

// How to reach the other ranks. Fields in this order (designated initializers).
struct ProcessGroupOptions {
  std::string backend = "gloo";  // the only backend so far
  int64_t rank = -1;             // -1: from the environment (RANK)
  int64_t world_size = -1;       // -1: from the environment (WORLD_SIZE)
  // Non-empty: rendezvous through a c10d FileStore at this path (a file no
  // earlier run has used). Empty: a TCPStore that rank 0 serves.
  std::string store_path;
  std::string master_addr;  // TCPStore host; empty: MASTER_ADDR, else 127.0.0.1
  int64_t master_port = 0;  // TCPStore port; 0: MASTER_PORT, else 29500
  // How long joining the group, and each collective's wait, may take before
  // thunder::Error (a rank that died or went elsewhere).
  double timeout_s = 300;
};

// A handle on a c10d process group (copies share it). Collectives in traces
// name it by handle(); it stays usable by programs while any copy lives.
class ProcessGroup {
 public:
  int64_t rank() const;
  int64_t world_size() const;
  int64_t handle() const;  // the group's id in traces (prims.all_reduce(t, 'sum', 0))
  // How many times this process compared a new cache entry's collective
  // sequence with the other ranks on this group (once per compiled entry
  // that communicates on it; cache hits compare nothing).
  int64_t collective_checks() const;

  // Blocking helpers on concrete tensors (in place).
  void barrier() const;
  void broadcast(const at::Tensor& t, int64_t root = 0) const;
  void all_reduce_sum(const at::Tensor& t) const;

  struct Impl;
  explicit ProcessGroup(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

// From RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (what thunder-run and
// torchrun set).
ProcessGroup init_process_group();
ProcessGroup init_process_group(const ProcessGroupOptions& options);

// Rank `root`'s value of `t` on every rank of `group` (every rank calls it,
// with the same shape and dtype). Under thunder::jit: prims.broadcast and its
// wait in the trace (not differentiable); on a concrete tensor: a blocking
// broadcast into a copy. A root outside the group is a thunder::Error.
thunder::Tensor broadcast(const thunder::Tensor& t, int64_t root, const ProcessGroup& group);

struct DdpOptions {
  // Gradients are all-reduced in greedy buckets of at most this size (MiB), in
  // the order the backward produces them; 0: one all_reduce per parameter.
  double bucket_size_mb = 25;
  // Copy rank 0's parameters to every rank when wrapping (replicas start equal).
  bool broadcast_parameters = true;
};

// How fsdp keeps the gathered parameters for the backward.
enum class ShardingStrategy {
  ZERO2,  // the forward's gathered parameters are saved for the backward
  ZERO3,  // the backward gathers them again (less memory, twice the gathers)
};

struct FsdpOptions {
  ShardingStrategy strategy = ShardingStrategy::ZERO2;
  // Gradients are reduce-scattered in greedy buckets of at most this size
  // (MiB), in the order the backward produces them; 0: one per parameter.
  double bucket_size_mb = 25;
  // Copy rank 0's parameters to every rank before sharding.
  bool broadcast_parameters = true;
};

namespace detail {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// A torch::nn module's parameters by their dotted names (the ddp and fsdp
// wrappers of torch::nn modules).
inline NamedTensors named_parameters_of(const torch::nn::Module& m) {
  NamedTensors out;
  for (const auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

// `grads` (1-D, one dtype), packed, scaled by 1/world and summed over the
// group in one all-reduce: every rank gets the ranks' average, packed in
// order (no_sync's exit, for ddp and fsdp). A collective.
at::Tensor average_over_ranks(const std::vector<at::Tensor>& grads, const ProcessGroup& group);

// Every rank must wrap the same parameters (names, shapes, dtypes): compared
// by a hash before any collective sizes them (Gloo aborts on mismatches).
void check_same_parameters(const NamedTensors& params, const ProcessGroup& g, const char* who);

// A wrapper whose backward communicates gradients, which no_sync pauses.
// The flag is part of the jit cache guard (GuardedState): each setting has
// its own compiled entry.
class GradientSync : public thunder::detail::GuardedState {
 public:
  // Gradient communication on (the default) or off (no_sync).
  bool sync_gradients() const { return sync_.load(std::memory_order_relaxed); }
  // no_sync's entry (the outermost guard): communication off. Every rank
  // enters at the same point (fsdp gathers the whole parameters here).
  virtual void pause_sync() = 0;
  // no_sync's exit: communication on again; with `combine`, the gradients
  // accumulated meanwhile are combined over the ranks (a collective).
  virtual void resume_sync(bool combine) = 0;

 protected:
  std::atomic<bool> sync_{true};
};

// The ddp or fsdp wrapper a jitted callable was made from; throws
// thunder::Error naming `who` otherwise.
GradientSync& gradient_sync_of(nn::Module* m, const char* who);

// The untyped part of DistributedDataParallel (src/frontend/distributed.cpp).
class DdpBase : public nn::Module,
                public GradientSync,
                public thunder::detail::GradientBuckets,
                public thunder::detail::CollectiveGroups {
 public:
  // A thunder module, registered as the child "module".
  DdpBase(std::shared_ptr<nn::Module> inner, ProcessGroup group, DdpOptions options);
  // The parameters of a torch::nn module (TorchDistributedDataParallelImpl).
  DdpBase(std::function<NamedTensors()> parameters, ProcessGroup group, DdpOptions options);
  DdpBase(const DdpBase&) = delete;
  DdpBase& operator=(const DdpBase&) = delete;

  const ProcessGroup& process_group() const { return group_; }
  const DdpOptions& options() const { return options_; }
  void pause_sync() override;
  void resume_sync(bool combine) override;  // combine: average_gradients()
  std::vector<std::pair<std::string, std::function<bool()>>> guarded_flags() const override;
  int64_t gradient_bucket_bytes() const override;
  std::vector<int64_t> collective_groups() const override;
  // Averages the parameters' gradients (.grad) over the group in place; a
  // parameter that requires grad and has none counts as zeros.
  void average_gradients();

  // Under a jit trace with synchronization on: each parameter that requires
  // grad becomes prims.synchronize(parameter) for the code that follows.
  void synchronize_parameters() const;

 private:
  void start();                        // the constructors' shared part
  std::shared_ptr<nn::Module> inner_;  // null for a torch::nn module
  std::function<NamedTensors()> parameters_;
  ProcessGroup group_;
  DdpOptions options_;
};

// What fsdp's traced forward of a torch::nn module gave its parameters for
// the eager run that capture records (their whole values); the destructor
// gives each its shard back. Empty for a thunder module.
class [[nodiscard]] ShardSwap {
 public:
  ShardSwap() = default;
  explicit ShardSwap(std::vector<std::pair<at::Tensor, at::Tensor>> shards)
      : shards_(std::move(shards)) {}
  ShardSwap(ShardSwap&&) = default;
  ShardSwap& operator=(ShardSwap&&) = delete;
  ~ShardSwap();

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> shards_;  // (parameter, its shard)
};

// The untyped part of FullyShardedDataParallel (src/frontend/fsdp.cpp).
class FsdpBase : public nn::Module,
                 public GradientSync,
                 public thunder::detail::GradientBuckets,
                 public thunder::detail::CollectiveGroups {
 public:
  // A thunder module, registered as the child "module".
  FsdpBase(std::shared_ptr<nn::Module> inner, ProcessGroup group, FsdpOptions options);
  // The parameters of a torch::nn module (TorchFullyShardedDataParallelImpl).
  FsdpBase(const NamedTensors& parameters, ProcessGroup group, FsdpOptions options);
  FsdpBase(const FsdpBase&) = delete;
  FsdpBase& operator=(const FsdpBase&) = delete;

  const ProcessGroup& process_group() const { return group_; }
  const FsdpOptions& options() const { return options_; }
  std::vector<int64_t> collective_groups() const override;
  int64_t gradient_bucket_bytes() const override;
  std::vector<std::pair<std::string, std::function<bool()>>> guarded_flags() const override;
  // no_sync: the whole parameters are gathered once at the guard's entry and
  // the traced forward reads them (no collectives); their gradients
  // accumulate unsharded, and at the exit are averaged over the ranks and
  // each rank adds its rows to its shards' gradients.
  void pause_sync() override;
  void resume_sync(bool combine) override;
  // The whole parameters, gathered from every rank's shard (a collective:
  // every rank calls it), by name, as the model had them before sharding.
  std::vector<std::pair<std::string, at::Tensor>> full_parameters() const;

  // Under a jit trace: each sharded parameter becomes its gathered whole
  // (prims.all_gather, wait, and a slice dropping the padding) for the code
  // that follows; a 0-dim one is replicated (prims.synchronize). Under
  // no_sync: the whole parameters gathered at the guard's entry. A torch::nn
  // module's parameters also hold their whole values until the ShardSwap
  // ends (capture runs the module eagerly). Outside a trace: thunder::Error.
  ShardSwap gather_parameters() const;

 private:
  void shard(const NamedTensors& parameters);
  struct Sharded {
    at::Tensor param;  // now this rank's shard, padded
    int64_t size;      // dim 0 before sharding
    at::Tensor whole;  // under no_sync: the gathered parameter, a leaf; else empty
  };
  std::shared_ptr<nn::Module> inner_;  // null for a torch::nn module
  ProcessGroup group_;
  FsdpOptions options_;
  std::vector<std::pair<std::string, Sharded>> sharded_;
  std::vector<at::Tensor> replicated_;
};

}  // namespace detail

// A module whose parameters are sharded across the ranks of a group; see fsdp().
template <typename M>
class FullyShardedDataParallel : public detail::FsdpBase {
 public:
  FullyShardedDataParallel(std::shared_ptr<M> m, ProcessGroup group, FsdpOptions options)
      : FsdpBase(m, std::move(group), options), module(std::move(m)) {}

  template <typename... A>
  auto forward(A&&... args) const {
    detail::ShardSwap whole = gather_parameters();
    return module->forward(std::forward<A>(args)...);
  }
  template <typename... A>
  auto operator()(A&&... args) const {
    return forward(std::forward<A>(args)...);
  }

  std::shared_ptr<M> module;  // registered as the child "module"
};

// Wraps `model` for fully sharded data parallel training (ZeRO): broadcasts
// rank 0's parameters, then keeps on each rank a dim-0 shard of every
// parameter (padded to a multiple of the world size): `model->parameters()`
// are the shards from then on (give them to the optimizer). Under
// thunder::jit the forward gathers the parameters and the backward
// reduce-scatters their gradients; ZERO3 gathers again in the backward
// instead of keeping the gathered parameters. Runs under thunder::jit only.
template <typename M>
requires std::derived_from<M, nn::Module> std::shared_ptr<FullyShardedDataParallel<M>> fsdp(
    std::shared_ptr<M> model, const ProcessGroup& group, FsdpOptions options = {}) {
  return std::make_shared<FullyShardedDataParallel<M>>(std::move(model), group, options);
}
template <typename M>
requires std::derived_from<M, nn::Module> std::shared_ptr<FullyShardedDataParallel<M>> fsdp(
    M& model, const ProcessGroup& group, FsdpOptions options = {}) {
  return fsdp(std::shared_ptr<M>(std::shared_ptr<M>(), &model), group, options);
}

// fsdp of a torch::nn module: a torch::nn module itself (its child "module"
// is the model), so thunder::jit captures it; its forward gathers the
// parameters first, and the jit reads its thunder-side state.
template <typename Impl>
class TorchFullyShardedDataParallelImpl : public torch::nn::Module {
 public:
  TorchFullyShardedDataParallelImpl(std::shared_ptr<Impl> m, ProcessGroup group,
                                    FsdpOptions options)
      : module(register_module("module", std::move(m))),
        state_(std::make_shared<detail::FsdpBase>(detail::named_parameters_of(*module),
                                                  std::move(group), options)) {}

  template <typename... A>
  auto forward(A&&... a) -> decltype(std::declval<Impl&>().forward(std::forward<A>(a)...)) {
    detail::ShardSwap whole = state_->gather_parameters();
    return module->forward(std::forward<A>(a)...);
  }
  // See FsdpBase::full_parameters (a collective).
  std::vector<std::pair<std::string, at::Tensor>> full_parameters() const {
    return state_->full_parameters();
  }
  // What thunder::jit reads (jit.h: ForeignModule::interfaces) and no_sync sets.
  detail::FsdpBase* thunder_state() const { return state_.get(); }

  std::shared_ptr<Impl> module;

 private:
  std::shared_ptr<detail::FsdpBase> state_;
};

// The same for a torch::nn module (a holder, as torch::nn::Linear, or a
// shared_ptr to the Impl): returns a torch::nn module to give thunder::jit;
// the model's parameters() are this rank's shards from then on.
template <typename H>
requires thunder::detail::TorchModulePtr<std::remove_cvref_t<H>>::value auto fsdp(
    const H& model, const ProcessGroup& group, FsdpOptions options = {}) {
  using P = thunder::detail::TorchModulePtr<std::remove_cvref_t<H>>;
  return std::make_shared<TorchFullyShardedDataParallelImpl<typename P::Impl>>(P::get(model), group,
                                                                               options);
}

// A module replicated across the ranks of a group; see ddp().
template <typename M>
class DistributedDataParallel : public detail::DdpBase {
 public:
  DistributedDataParallel(std::shared_ptr<M> m, ProcessGroup group, DdpOptions options)
      : DdpBase(m, std::move(group), options), module(std::move(m)) {}

  template <typename... A>
  auto forward(A&&... args) const {
    synchronize_parameters();
    return module->forward(std::forward<A>(args)...);
  }
  template <typename... A>
  auto operator()(A&&... args) const {
    return forward(std::forward<A>(args)...);
  }

  std::shared_ptr<M> module;  // registered as the child "module" (t_module_fc_weight)
};

// ddp of a torch::nn module: a torch::nn module itself (its child "module" is
// the model), so thunder::jit captures it like any torch::nn module; its
// forward synchronizes the parameters first, and the jit reads its
// thunder-side state (bucket size, process group, no_sync flag).
template <typename Impl>
class TorchDistributedDataParallelImpl : public torch::nn::Module {
 public:
  TorchDistributedDataParallelImpl(std::shared_ptr<Impl> m, ProcessGroup group, DdpOptions options)
      : module(register_module("module", std::move(m))),
        state_(std::make_shared<detail::DdpBase>(
            [inner = module.get()] { return detail::named_parameters_of(*inner); },
            std::move(group), options)) {}

  template <typename... A>
  auto forward(A&&... a) -> decltype(std::declval<Impl&>().forward(std::forward<A>(a)...)) {
    state_->synchronize_parameters();
    return module->forward(std::forward<A>(a)...);
  }
  // What thunder::jit reads (jit.h: ForeignModule::interfaces) and no_sync sets.
  detail::DdpBase* thunder_state() const { return state_.get(); }

  std::shared_ptr<Impl> module;

 private:
  std::shared_ptr<detail::DdpBase> state_;
};

// Wraps `model` for data-parallel training: broadcasts rank 0's parameters
// (options.broadcast_parameters), and under thunder::jit averages every
// parameter's gradient over the group in the backward. Outside of jit the
// wrapper runs the model as it is (no communication).
template <typename M>
requires std::derived_from<M, nn::Module> std::shared_ptr<DistributedDataParallel<M>> ddp(
    std::shared_ptr<M> model, const ProcessGroup& group, DdpOptions options = {}) {
  return std::make_shared<DistributedDataParallel<M>>(std::move(model), group, options);
}
// The same for a torch::nn module (a holder, as torch::nn::Linear, or a
// shared_ptr to the Impl): returns a torch::nn module to give thunder::jit.
template <typename H>
requires thunder::detail::TorchModulePtr<std::remove_cvref_t<H>>::value auto ddp(
    const H& model, const ProcessGroup& group, DdpOptions options = {}) {
  using P = thunder::detail::TorchModulePtr<std::remove_cvref_t<H>>;
  return std::make_shared<TorchDistributedDataParallelImpl<typename P::Impl>>(P::get(model), group,
                                                                              options);
}
// The same for a module the caller owns (it must outlive the wrapper).
template <typename M>
requires std::derived_from<M, nn::Module> std::shared_ptr<DistributedDataParallel<M>> ddp(
    M& model, const ProcessGroup& group, DdpOptions options = {}) {
  return ddp(std::shared_ptr<M>(std::shared_ptr<M>(), &model), group, options);
}

// While it lives, backward passes of the ddp or fsdp model accumulate
// gradients locally without communicating (gradient accumulation over
// micro-batches). When the outermost guard ends, the gradients accumulated
// so far are averaged over the ranks in one flat all-reduce (so every rank
// must leave it at the same point), and later backward passes add averaged
// gradients to them: the result is the average of every rank's accumulated
// sum. For fsdp the guard's entry is a collective too (it gathers the whole
// parameters, which stay with their unsharded gradients until the exit; do
// not step the optimizer inside). The setting is part of the jit cache guard
// (each has its own compiled entry) and affects every thread calling the
// model. Nothing is communicated when the guard ends by an exception (fsdp
// then drops the gradients accumulated inside).
class [[nodiscard]] NoSyncGuard {
 public:
  explicit NoSyncGuard(detail::GradientSync& m)
      : m_(m), was_(m.sync_gradients()), exceptions_(std::uncaught_exceptions()) {
    if (was_) m_.pause_sync();
  }
  ~NoSyncGuard() noexcept(false) {
    if (was_) m_.resume_sync(std::uncaught_exceptions() == exceptions_);
  }
  NoSyncGuard(const NoSyncGuard&) = delete;
  NoSyncGuard& operator=(const NoSyncGuard&) = delete;

 private:
  detail::GradientSync& m_;
  bool was_;
  int exceptions_;
};

template <typename F>
NoSyncGuard no_sync(const Jitted<F>& jitted) {
  return NoSyncGuard(
      detail::gradient_sync_of(thunder::detail::jit_module(jitted.state()), "no_sync"));
}
// Of a ddp(...) or fsdp(...) wrapper itself.
template <typename W>
NoSyncGuard no_sync(const std::shared_ptr<W>& wrapper) {
  if constexpr (requires { wrapper->thunder_state(); })
    return NoSyncGuard(*wrapper->thunder_state());
  else
    return NoSyncGuard(static_cast<detail::GradientSync&>(*wrapper));
}

}  // namespace thunder::distributed
