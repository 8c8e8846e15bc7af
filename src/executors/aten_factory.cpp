// ATen kernels for factory prims and ltorch factories.
#include "aten_util.h"

namespace thunder::aten::detail {

namespace {
at::TensorOptions opts(const KernelCall& k, size_t device, size_t dtype) {
  return at::TensorOptions().device(k.device(device)).dtype(k.dtype(dtype));
}

void register_factory_prims() {
  THUNDER_KERNEL("prims.full",
                 { k.set_output(0, at::full(k.ints(0), k.scalar(1), opts(k, 2, 3))); });
  THUNDER_KERNEL("prims.iota", {
    int64_t n = k.integer(0), start = k.integer(1), step = k.integer(2);
    k.set_output(0, at::arange(start, start + n * step, step, opts(k, 3, 4)));
  });
  THUNDER_KERNEL("prims.empty", { k.set_output(0, at::empty(k.ints(0), opts(k, 1, 2))); });
  THUNDER_KERNEL("prims.uniform", {
    k.set_output(0, at::empty(k.ints(0), opts(k, 3, 4)).uniform_(k.number(1), k.number(2)));
  });
  THUNDER_KERNEL("prims.randn", { k.set_output(0, at::randn(k.ints(0), opts(k, 1, 2))); });
}
}  // namespace

void register_factory() {
  register_factory_prims();
  register_factory_ltorch();
}

}  // namespace thunder::aten::detail
