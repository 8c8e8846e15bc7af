// ATen kernels for the backward helper symbols: libtorch's fused backward ops.
#include <numeric>

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
  // libtorch's fused backward from the forward's statistics. Half types run
  // it in float32 (the statistics' dtype) and round the gradients back. The
  // bias gradient is the sum of grad over the leading dims (libtorch's kernel
  // would want the bias itself, which the backward does not keep).
  THUNDER_KERNEL("ltorch.native_layer_norm_backward", {
    const at::Tensor& x = k.tensor(1);
    const at::Tensor& mean = k.tensor(3);
    const at::Tensor w = k.optional_tensor(5);
    const bool has_bias = k.boolean(6);
    const at::ScalarType ct = mean.scalar_type();
    auto in_ct = [&](const at::Tensor& t) { return t.defined() ? t.to(ct) : t; };
    const at::Tensor go = in_ct(k.tensor(0));
    auto [gx, gw, unused] =
        at::native_layer_norm_backward(go, in_ct(x), k.ints(2), mean, k.tensor(4), in_ct(w),
                                       at::Tensor(), {true, w.defined(), false});
    const at::ScalarType dt = x.scalar_type();
    size_t j = 0;
    k.set_output(j++, gx.to(dt));
    if (w.defined()) k.set_output(j++, gw.to(dt));
    if (has_bias) {
      const int64_t lead = x.dim() - static_cast<int64_t>(k.ints(2).size());
      std::vector<int64_t> dims(lead);
      std::iota(dims.begin(), dims.end(), 0);
      k.set_output(j++, (lead ? go.sum(dims) : go).to(dt));
    }
  });
  // softmax recomputed from the logits and each row's log-sum-exp, then the
  // target's -1 and the scale by grad / count (rows of ignored targets zero).
  THUNDER_KERNEL("ltorch.cross_entropy_backward", {
    const at::Tensor &x = k.tensor(1), &lse = k.tensor(2), &t = k.tensor(3);
    const at::ScalarType ct = lse.scalar_type();
    const at::Tensor valid = t.ne(-100);
    at::Tensor g = at::exp(x.to(ct) - lse.unsqueeze(1));
    g.scatter_add_(1, at::where(valid, t, 0).unsqueeze(1),
                   at::full({x.size(0), 1}, -1.0, g.options()));
    const at::Tensor scale = k.tensor(0).to(ct) / valid.sum().to(ct);
    g.mul_((valid.to(ct) * scale).unsqueeze(1));
    k.set_output(0, g.to(x.scalar_type()));
  });
  THUNDER_KERNEL("ltorch.embedding_backward", {
    k.set_output(0, at::embedding_dense_backward(k.tensor(0), k.tensor(1), k.integer(2),
                                                 /*padding_idx=*/-1, /*scale_grad_by_freq=*/false));
  });
}

}  // namespace thunder::aten::detail
