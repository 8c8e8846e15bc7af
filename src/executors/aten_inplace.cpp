// ATen kernels for in-place prims: copy_ writes into dst and outputs dst itself.
#include "aten_util.h"

namespace thunder::aten::detail {

void register_inplace() {
  THUNDER_KERNEL("prims.copy_", {
    at::Tensor dst = k.tensor(1);
    dst.copy_(k.tensor(0));
    k.set_output(0, std::move(dst));
  });
}

}  // namespace thunder::aten::detail
