// thunder::distributed's process groups and the ddp wrapper. The one source
// file that includes Gloo: ProcessGroupGloo.hpp compiles only with
// USE_C10D_GLOO and Debian's libgloo-dev headers; libtorch_cpu has the code.
#define USE_C10D_GLOO
#include "thunder/distributed.h"

#include <ATen/core/grad_mode.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "dispatch.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/prims/distributed.h"
#include "thunder/runtime/process_groups.h"

namespace thunder::distributed {

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  int64_t handle = -1;
  ~Impl() { runtime::unregister_process_group(handle); }
};

namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    THUNDER_CHECK(
        fallback >= 0,
        "distributed.init_process_group: {} is not set (launch with build/bin/thunder-run "
        "--nproc N, or pass ProcessGroupOptions)",
        name);
    return fallback;
  }
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  THUNDER_CHECK(end != v && *end == '\0',
                "distributed.init_process_group: {}='{}' is not an integer", name, v);
  return x;
}

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::string(v);
}

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

// The n-th group a process makes uses keys under "thunder_pg_<n>/", the same
// on every rank, so several groups can share one store.
int next_group_number() {
  static std::atomic<int> n{0};
  return n.fetch_add(1);
}

// Gloo and the TCPStore write to sockets on threads of their own; a write to
// a rank that exited must fail (and reach the caller as thunder::Error), not
// kill the process with SIGPIPE. Threads inherit the signal mask of the
// thread that starts them, so SIGPIPE is blocked while a group is made.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t old_;
};

void check_ok(c10::intrusive_ptr<c10d::Work> work, const ProcessGroup& g, const char* op) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    fail("distributed.{}: failed on rank {} of {}: {}", op, g.rank(), g.world_size(), e.what());
  }
}

}  // namespace

ProcessGroup init_process_group(const ProcessGroupOptions& o) {
  THUNDER_CHECK(o.backend == "gloo",
                "distributed.init_process_group: unknown backend '{}' (only 'gloo' is supported)",
                o.backend);
  const int64_t rank = o.rank >= 0 ? o.rank : env_int("RANK", -1);
  const int64_t world = o.world_size >= 0 ? o.world_size : env_int("WORLD_SIZE", -1);
  THUNDER_CHECK(world >= 1 && rank >= 0 && rank < world,
                "distributed.init_process_group: rank {} is not in [0, world_size {})", rank,
                world);
  THUNDER_CHECK(o.timeout_s > 0,
                "distributed.init_process_group: timeout_s must be positive, got {}", o.timeout_s);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  const std::string addr =
      o.master_addr.empty() ? env_string("MASTER_ADDR", "127.0.0.1") : o.master_addr;
  c10::intrusive_ptr<c10d::Store> store;
  SigpipeBlocked for_the_groups_threads;
  try {
    if (!o.store_path.empty()) {
      store = c10::make_intrusive<c10d::FileStore>(o.store_path, static_cast<int>(world));
    } else {
      const int64_t port = o.master_port > 0 ? o.master_port : env_int("MASTER_PORT", 29500);
      THUNDER_CHECK(port > 0 && port < 65536, "distributed.init_process_group: bad port {}", port);
      c10d::TCPStoreOptions so;
      so.port = static_cast<uint16_t>(port);
      so.isServer = rank == 0;
      so.numWorkers = static_cast<size_t>(world);
      so.waitWorkers = true;
      so.timeout = timeout;
      store = c10::make_intrusive<c10d::TCPStore>(addr, so);
    }
    store->setTimeout(timeout);
    const std::string prefix = "thunder_pg_" + std::to_string(next_group_number());
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(!o.store_path.empty() || is_loopback(addr)
                                   ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                   : c10d::ProcessGroupGloo::createDefaultDevice());
    auto impl = std::make_shared<ProcessGroup::Impl>();
    impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, static_cast<int>(rank),
                                                           static_cast<int>(world), options);
    // A second group over the same ranks for comparing collective sequences
    // (runtime/collective_check.h), so that a comparison never pairs with a
    // collective of a rank that is not comparing.
    auto control = c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>(prefix + "_control", store), static_cast<int>(rank),
        static_cast<int>(world), options);
    impl->handle = runtime::register_process_group(impl->pg, timeout, std::move(control));
    return ProcessGroup(std::move(impl));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail("distributed.init_process_group: rank {} of {} could not join the group ({}): {}", rank,
         world, o.store_path.empty() ? "tcp store at " + addr : "file store " + o.store_path,
         e.what());
  }
}

ProcessGroup init_process_group() { return init_process_group(ProcessGroupOptions{}); }

thunder::Tensor broadcast(const thunder::Tensor& t, int64_t root, const ProcessGroup& group) {
  THUNDER_CHECK(root >= 0 && root < group.world_size(),
                "distributed.broadcast: root {} is not a rank of {}", root, group.world_size());
  if (t.is_proxy())
    return thunder::Tensor(
        prims::wait(prims::broadcast(Value(t.proxy()), root, group.handle())).proxy());
  at::Tensor copy = t.aten().detach().clone(at::MemoryFormat::Contiguous);
  group.broadcast(copy, root);
  return copy;
}

int64_t ProcessGroup::rank() const { return impl_->pg->getRank(); }
int64_t ProcessGroup::world_size() const { return impl_->pg->getSize(); }
int64_t ProcessGroup::handle() const { return impl_->handle; }
int64_t ProcessGroup::collective_checks() const { return runtime::comparisons(impl_->handle); }

void ProcessGroup::barrier() const { check_ok(impl_->pg->barrier(), *this, "barrier"); }

void ProcessGroup::broadcast(const at::Tensor& t, int64_t root) const {
  THUNDER_CHECK(root >= 0 && root < world_size(),
                "distributed.broadcast: root {} is not a rank of {}", root, world_size());
  std::vector<at::Tensor> ts{t};
  check_ok(impl_->pg->broadcast(ts, c10d::BroadcastOptions{.rootRank = root}), *this, "broadcast");
}

void ProcessGroup::all_reduce_sum(const at::Tensor& t) const {
  std::vector<at::Tensor> ts{t};
  check_ok(impl_->pg->allreduce(ts), *this, "all_reduce_sum");
}

namespace detail {

// Rank 0's hash goes to everyone, and every rank learns whether any rank differs.
void check_same_parameters(const NamedTensors& params, const ProcessGroup& g, const char* who) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  for (const auto& [name, t] : params) {
    mix(name);
    mix(std::string(c10::toString(t.scalar_type())));
    for (int64_t s : t.sizes()) mix(std::to_string(s));
  }
  const double x = static_cast<double>(h & ((1ull << 52) - 1));  // exact in a double
  at::Tensor root = at::full({1}, x, at::kDouble);
  g.broadcast(root, 0);
  at::Tensor differs = at::full({1}, root.item<double>() == x ? 0.0 : 1.0, at::kDouble);
  g.all_reduce_sum(differs);
  THUNDER_CHECK(differs.item<double>() == 0.0,
                "distributed.{}: the ranks' models differ (parameter names, shapes or dtypes); "
                "every rank must wrap the same model",
                who);
}

DdpBase::DdpBase(std::shared_ptr<nn::Module> inner, ProcessGroup group, DdpOptions options)
    : inner_(std::move(inner)), group_(std::move(group)), options_(options) {
  THUNDER_CHECK(inner_ != nullptr, "distributed.ddp: the model is null");
  register_module("module", inner_);
  parameters_ = [m = inner_.get()] { return m->named_parameters(); };
  start();
}

DdpBase::DdpBase(std::function<NamedTensors()> parameters, ProcessGroup group, DdpOptions options)
    : parameters_(std::move(parameters)), group_(std::move(group)), options_(options) {
  start();
}

void DdpBase::start() {
  THUNDER_CHECK(options_.bucket_size_mb >= 0,
                "distributed.ddp: bucket_size_mb must be >= 0, got {}", options_.bucket_size_mb);
  check_same_parameters(parameters_(), group_, "ddp");
  if (options_.broadcast_parameters) {
    at::NoGradGuard no_grad;
    for (const auto& [name, t] : parameters_()) group_.broadcast(t.detach(), 0);
  }
}

std::vector<std::pair<std::string, std::function<bool()>>> DdpBase::guarded_flags() const {
  return {{"ddp.sync_gradients", [this] { return sync_gradients(); }}};
}

void DdpBase::pause_sync() { sync_.store(false, std::memory_order_relaxed); }

void DdpBase::resume_sync(bool combine) {
  sync_.store(true, std::memory_order_relaxed);
  if (combine) average_gradients();
}

at::Tensor average_over_ranks(const std::vector<at::Tensor>& grads, const ProcessGroup& group) {
  THUNDER_CHECK(
      std::all_of(grads.begin(), grads.end(),
                  [&](const at::Tensor& g) { return g.scalar_type() == grads[0].scalar_type(); }),
      "distributed.no_sync: parameters of several dtypes are not supported yet");
  at::NoGradGuard no_grad;
  // The 1/world folded into the pack.
  at::Tensor packed = at::cat(grads) / static_cast<double>(group.world_size());
  group.all_reduce_sum(packed);
  return packed;
}

void DdpBase::average_gradients() {
  std::vector<at::Tensor> params;
  std::vector<at::Tensor> flat;
  at::NoGradGuard no_grad;
  for (const auto& [name, t] : parameters_()) {
    if (!t.requires_grad()) continue;
    params.push_back(t);
    flat.push_back(t.grad().defined() ? t.grad().reshape({-1})
                                      : at::zeros({t.numel()}, t.options()));
  }
  if (params.empty()) return;
  const at::Tensor packed = average_over_ranks(flat, group_);
  int64_t offset = 0;
  for (at::Tensor& p : params) {
    at::Tensor avg = packed.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
    if (p.grad().defined())
      p.mutable_grad().copy_(avg);
    else
      p.mutable_grad() = avg.clone();
  }
}

std::vector<int64_t> DdpBase::collective_groups() const { return {group_.handle()}; }

int64_t DdpBase::gradient_bucket_bytes() const {
  return static_cast<int64_t>(options_.bucket_size_mb * 1024 * 1024);
}

void DdpBase::synchronize_parameters() const {
  if (!sync_gradients()) return;
  TraceCtx* ctx = current_trace_ctx();
  thunder::detail::CaptureTable* captures = thunder::detail::current_captures();
  if (ctx == nullptr || captures == nullptr) return;  // eager: nothing to synchronize
  ctx->grad_enabled = at::GradMode::is_enabled();
  for (const auto& [name, t] : parameters_()) {
    if (!t.requires_grad()) continue;
    ProxyPtr in = captures->proxy_for(t);
    Value synced = prims::synchronize(Value(in), group_.handle(), group_.world_size());
    captures->replace(t, synced.proxy());
  }
}

GradientSync& gradient_sync_of(nn::Module* m, const char* who) {
  auto* d = dynamic_cast<GradientSync*>(m);
  THUNDER_CHECK(d != nullptr,
                "distributed.{}: the jitted callable was not made from a ddp(...) or fsdp(...) "
                "model",
                who);
  return *d;
}

}  // namespace detail
}  // namespace thunder::distributed
