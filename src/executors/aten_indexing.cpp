// ATen kernels for the indexing prims and ltorch ops.
#include "aten_util.h"

namespace thunder::aten::detail {

void register_indexing() {
  THUNDER_KERNEL("prims.take_along_axis",
                 { k.set_output(0, at::gather(k.tensor(0), k.integer(2), k.tensor(1))); });
  // prims and ltorch share these: libtorch's op already has the prim's meaning.
  for (const char* prefix : {"prims.", "ltorch."}) {
    register_kernel(std::string(prefix) + "index_select", [](KernelCall& k) {
      k.set_output(0, at::index_select(k.tensor(0), k.integer(1), k.tensor(2)));
    });
    register_kernel(std::string(prefix) + "scatter", [](KernelCall& k) {
      k.set_output(0, at::scatter(k.tensor(0), k.integer(1), k.tensor(2), k.tensor(3)));
    });
    register_kernel(std::string(prefix) + "scatter_add", [](KernelCall& k) {
      k.set_output(0, at::scatter_add(k.tensor(0), k.integer(1), k.tensor(2), k.tensor(3)));
    });
  }
  // gather's argument order differs from take_along_axis's.
  THUNDER_KERNEL("ltorch.gather",
                 { k.set_output(0, at::gather(k.tensor(0), k.integer(1), k.tensor(2))); });
  THUNDER_KERNEL("ltorch.masked_fill", {
    if (k.is_tensor(2))
      k.set_output(0, at::masked_fill(k.tensor(0), k.tensor(1), k.tensor(2)));
    else
      k.set_output(0, at::masked_fill(k.tensor(0), k.tensor(1), k.scalar(2)));
  });
}

}  // namespace thunder::aten::detail
