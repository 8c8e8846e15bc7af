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
  // libtorch's fused kernels: statistics from one forward pass, then the backward.
  THUNDER_KERNEL("ltorch.layer_norm_backward", {
    const at::Tensor& x = k.tensor(1);
    at::Tensor w = k.optional_tensor(3), b = k.optional_tensor(4);
    auto [out, mean, rstd] = at::native_layer_norm(x, k.ints(2), w, b, k.number(5));
    auto [gx, gw, gb] = at::native_layer_norm_backward(k.tensor(0), x, k.ints(2), mean, rstd, w, b,
                                                       {true, w.defined(), b.defined()});
    size_t j = 0;
    k.set_output(j++, gx);
    if (w.defined()) k.set_output(j++, gw);
    if (b.defined()) k.set_output(j++, gb);
  });
  // libtorch's own pair: nll_loss_backward then log_softmax's backward.
  THUNDER_KERNEL("ltorch.cross_entropy_backward", {
    const at::Tensor &lp = k.tensor(1), &t = k.tensor(2);
    at::Tensor total = t.ne(-100).sum().to(lp.scalar_type());
    at::Tensor glp =
        at::nll_loss_backward(k.tensor(0), lp, t, {}, at::Reduction::Mean, -100, total);
    k.set_output(0, at::_log_softmax_backward_data(glp, lp, 1, lp.scalar_type()));
  });
  THUNDER_KERNEL("ltorch.embedding_backward", {
    k.set_output(0, at::embedding_dense_backward(k.tensor(0), k.tensor(1), k.integer(2),
                                                 /*padding_idx=*/-1, /*scale_grad_by_freq=*/false));
  });
}

}  // namespace thunder::aten::detail
