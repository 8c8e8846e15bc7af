// Grad rules of the distributed prims (thunder/prims/distributed.h).
#include <vector>

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
  // Fully sharded (FSDP): the forward gathers the shards; the backward pads
  // the full gradient back to world shards, scales it by 1/world and
  // reduce-scatters it, so each rank gets the average of its shard's rows.
  set_grad_rule("prims.synchronize_sharded", [](VjpContext& g, const OpArgs& a) {
    const int64_t group = a.integer(1), world = a.integer(2), size = a.integer(3);
    Value out = prims::synchronize_sharded(a[0], group, world, size);
    if (g.requires_grad(a[0])) {
      Value go = g.get_grad(out);
      const Proxy& shard = a.tensor(0);
      const int64_t padding = shard.shape[0] * world - size;
      if (padding > 0) {
        std::vector<int64_t> config(3 * shard.shape.size(), 0);
        config[1] = padding;  // after the last row of dim 0
        go = prims::pad(go, Value(0.0), config);
      }
      Value share = world == 1 ? go : prims::div(go, static_cast<double>(world));
      g.put_grad(a[0], prims::wait(prims::reduce_scatter(share, "sum", group, world)));
    }
    return out;
  });
}

}  // namespace thunder
