// ATen kernels for the ltorch factories: the libtorch factory of the same name.
#include "aten_util.h"

namespace thunder::aten::detail {

namespace {
at::TensorOptions options(const KernelCall& k, size_t device, size_t dtype) {
  return at::TensorOptions().device(k.device(device)).dtype(k.dtype(dtype));
}
}  // namespace

void register_factory_ltorch() {
  THUNDER_KERNEL("ltorch.full",
                 { k.set_output(0, at::full(k.ints(0), k.scalar(1), options(k, 2, 3))); });
  THUNDER_KERNEL("ltorch.zeros", { k.set_output(0, at::zeros(k.ints(0), options(k, 1, 2))); });
  THUNDER_KERNEL("ltorch.ones", { k.set_output(0, at::ones(k.ints(0), options(k, 1, 2))); });
  THUNDER_KERNEL("ltorch.empty", { k.set_output(0, at::empty(k.ints(0), options(k, 1, 2))); });
  THUNDER_KERNEL("ltorch.rand", { k.set_output(0, at::rand(k.ints(0), options(k, 1, 2))); });
  THUNDER_KERNEL("ltorch.randn", { k.set_output(0, at::randn(k.ints(0), options(k, 1, 2))); });
  THUNDER_KERNEL("ltorch.arange", {
    k.set_output(0, at::arange(k.scalar(0), k.scalar(1), k.scalar(2), options(k, 3, 4)));
  });
}

}  // namespace thunder::aten::detail
