// The c10d executor: runs the distributed prims (thunder/prims/distributed.h)
// on libtorch's c10d process groups through the runtime's registry. It claims
// nothing else, and no other executor claims collectives, so a collective is
// always a statement of its own: a fusion-region boundary. thunder::jit puts
// it last in every executor list.
#include <ATen/ATen.h>

#include "thunder/core/error.h"
#include "thunder/executors/executor.h"
#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"
#include "thunder/runtime/process_groups.h"

namespace thunder::c10d_executor {
namespace {

void all_reduce_kernel(KernelCall& k) {
  const at::Tensor& in = k.tensor(0);
  // Gloo has no bfloat16 sum; say so here rather than from a Gloo thread.
  THUNDER_CHECK(in.scalar_type() != at::kBFloat16,
                "prims.all_reduce: bfloat16 is not supported by the gloo backend (convert to "
                "float32 first)");
  // The collective writes its result in place: into a buffer of its own, so
  // no other value of the program (the input may be read again) changes.
  at::Tensor out = in.clone(at::MemoryFormat::Contiguous);
  runtime::start_all_reduce_sum(k.integer(2), out);
  k.set_output(0, std::move(out));
}

void reduce_scatter_kernel(KernelCall& k) {
  const at::Tensor& in = k.tensor(0);
  THUNDER_CHECK(in.scalar_type() != at::kBFloat16,
                "prims.reduce_scatter: bfloat16 is not supported by the gloo backend (convert to "
                "float32 first)");
  const int64_t world = k.integer(3);
  std::vector<int64_t> shard(in.sizes().begin(), in.sizes().end());
  shard[0] /= world;
  at::Tensor out = at::empty(shard, in.options().memory_format(at::MemoryFormat::Contiguous));
  runtime::start_reduce_scatter_sum(k.integer(2), in.contiguous(), out);
  k.set_output(0, std::move(out));
}

// FSDP's gather: every rank's shard into one buffer of its own.
void all_gather_kernel(KernelCall& k) {
  const at::Tensor& shard = k.tensor(0);
  std::vector<int64_t> full(shard.sizes().begin(), shard.sizes().end());
  full[0] *= k.integer(2);
  at::Tensor out = at::empty(full, shard.options().memory_format(at::MemoryFormat::Contiguous));
  runtime::start_all_gather(k.integer(1), shard, out);
  k.set_output(0, std::move(out));
}

// Into a buffer of its own (the input may be read again); on the root the
// result is a copy of the input.
void broadcast_kernel(KernelCall& k) {
  at::Tensor out = k.tensor(0).clone(at::MemoryFormat::Contiguous);
  runtime::start_broadcast(k.integer(2), out, k.integer(1));
  k.set_output(0, std::move(out));
}

void wait_kernel(KernelCall& k) { k.set_output(0, runtime::finish(k.tensor(0))); }

// Replication needs nothing in the forward: the parameter as it is.
void synchronize_kernel(KernelCall& k) { k.set_output(0, k.tensor(0)); }

struct Entry {
  const Symbol* sym;
  Kernel kernel;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = [] {
    prims::ensure_registered();
    return std::vector<Entry>{{&prims::symbol("prims.all_reduce"), &all_reduce_kernel},
                              {&prims::symbol("prims.wait"), &wait_kernel},
                              {&prims::symbol("prims.synchronize"), &synchronize_kernel},
                              {&prims::symbol("prims.reduce_scatter"), &reduce_scatter_kernel},
                              {&prims::symbol("prims.all_gather"), &all_gather_kernel},
                              {&prims::symbol("prims.broadcast"), &broadcast_kernel}};
  }();
  return t;
}

Kernel kernel_of(const Symbol* sym) {
  for (const Entry& e : table())
    if (e.sym == sym) return e.kernel;
  return nullptr;
}

class C10dExecutor : public Executor {
 public:
  std::string_view name() const override { return "c10d"; }
  bool can_claim(const BoundSymbol& b) const override { return kernel_of(b.sym) != nullptr; }
  Kernel kernel(const BoundSymbol& b) const override { return kernel_of(b.sym); }
};

}  // namespace

Executor& c10d_executor() {
  static C10dExecutor e;
  return e;
}

}  // namespace thunder::c10d_executor
