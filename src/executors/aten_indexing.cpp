// ATen kernels for the indexing prims and ltorch ops.
#include "aten_util.h"

namespace thunder::aten::detail {

void register_indexing() {
  THUNDER_KERNEL("prims.take_along_axis", {
    k.set_output(0, at::gather(k.tensor(0), k.integer(2), k.tensor(1)));
  });
  THUNDER_KERNEL("prims.index_select", {
    k.set_output(0, at::index_select(k.tensor(0), k.integer(1), k.tensor(2)));
  });
  THUNDER_KERNEL("prims.scatter", {
    k.set_output(0, at::scatter(k.tensor(0), k.integer(1), k.tensor(2), k.tensor(3)));
  });
  THUNDER_KERNEL("prims.scatter_add", {
    k.set_output(0, at::scatter_add(k.tensor(0), k.integer(1), k.tensor(2), k.tensor(3)));
  });

  THUNDER_KERNEL("ltorch.gather", {
    k.set_output(0, at::gather(k.tensor(0), k.integer(1), k.tensor(2)));
  });
  THUNDER_KERNEL("ltorch.index_select", {
    k.set_output(0, at::index_select(k.tensor(0), k.integer(1), k.tensor(2)));
  });
  THUNDER_KERNEL("ltorch.scatter", {
    k.set_output(0, at::scatter(k.tensor(0), k.integer(1), k.tensor(2), k.tensor(3)));
  });
  THUNDER_KERNEL("ltorch.scatter_add", {
    k.set_output(0, at::scatter_add(k.tensor(0), k.integer(1), k.tensor(2), k.tensor(3)));
  });
  THUNDER_KERNEL("ltorch.masked_fill", {
    if (k.is_tensor(2))
      k.set_output(0, at::masked_fill(k.tensor(0), k.tensor(1), k.tensor(2)));
    else
      k.set_output(0, at::masked_fill(k.tensor(0), k.tensor(1), k.scalar(2)));
  });
}

}  // namespace thunder::aten::detail
