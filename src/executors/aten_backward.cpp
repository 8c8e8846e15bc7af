// ATen kernels for the backward helper symbols: libtorch's fused backward ops.
#include "aten_util.h"

namespace thunder::aten::detail {

void register_backward() {
  THUNDER_KERNEL("ltorch.gelu_backward",
                 { k.set_output(0, at::gelu_backward(k.tensor(0), k.tensor(1), k.string(2))); });
  THUNDER_KERNEL("ltorch.softmax_backward", {
    const at::Tensor& out = k.tensor(1);
    k.set_output(0, at::_softmax_backward_data(k.tensor(0), out, k.integer(2), out.scalar_type()));
  });
  THUNDER_KERNEL("ltorch.log_softmax_backward", {
    const at::Tensor& out = k.tensor(1);
    k.set_output(0,
                 at::_log_softmax_backward_data(k.tensor(0), out, k.integer(2), out.scalar_type()));
  });
}

}  // namespace thunder::aten::detail
