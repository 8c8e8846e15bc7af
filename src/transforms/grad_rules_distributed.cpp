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
}

}  // namespace thunder
