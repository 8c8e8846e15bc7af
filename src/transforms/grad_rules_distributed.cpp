// Grad rules of the distributed prims (thunder/prims/distributed.h).

#include "grad_rule_registry.h"
#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"

namespace thunder {

void register_distributed_grad_rules() {
  // Data-parallel replication (DDP): the forward reads the parameter as it
  // is; the backward averages its gradient over the ranks: each rank's share
  // scaled by 1/world (exact for a power-of-two world) and summed by an
  // asynchronous all_reduce whose wait the gradient's users read.
  set_grad_rule("prims.synchronize", [](VjpContext& g, const OpArgs& a) {
    const int64_t group = a.integer(1), world = a.integer(2);
    Value out = prims::synchronize(a[0], group, world);
    if (g.requires_grad(a[0])) {
      Value go = g.get_grad(out);
      Value share = world == 1 ? go : prims::div(go, static_cast<double>(world));
      g.put_grad(a[0], prims::wait(prims::all_reduce(share, "sum", group)));
    }
    return out;
  });
  // Fully sharded (FSDP): the forward gathers every rank's shard; the
  // backward scales the gathered value's gradient by 1/world and
  // reduce-scatters it, so each rank gets the average of its shard's rows.
  set_grad_rule("prims.all_gather", [](VjpContext& g, const OpArgs& a) {
    const int64_t group = a.integer(1), world = a.integer(2);
    Value out = prims::all_gather(a[0], group, world);
    if (g.requires_grad(a[0])) {
      Value go = g.get_grad(out);
      Value share = world == 1 ? go : prims::div(go, static_cast<double>(world));
      g.put_grad(a[0], prims::wait(prims::reduce_scatter(share, "sum", group, world)));
    }
    return out;
  });
  // A future's value is the collective's result: the gradient passes through.
  set_grad_rule("prims.wait", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::wait(a[0]);
    if (g.requires_grad(a[0])) g.put_grad(a[0], g.get_grad(out));
    return out;
  });
}

}  // namespace thunder
