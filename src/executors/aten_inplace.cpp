// ATen kernels for in-place prims: copy_ writes into dst and outputs dst
// itself; update_aliases outputs its inputs unchanged (a barrier in the trace only).
#include "aten_util.h"

namespace thunder::aten::detail {

void register_inplace() {
  THUNDER_KERNEL("prims.copy_", {
    at::Tensor dst = k.tensor(1);
    dst.copy_(k.tensor(0));
    k.set_output(0, std::move(dst));
  });
  THUNDER_KERNEL("prims.update_aliases", {
    std::vector<at::Tensor> ts = k.tensors(0);
    for (size_t i = 0; i < ts.size(); ++i) k.set_output(i, std::move(ts[i]));
  });
}

}  // namespace thunder::aten::detail
