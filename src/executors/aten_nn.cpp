// ATen kernels for the linear algebra and nn prims and ltorch ops. The ltorch
// kernels are libtorch's own functions, so eager thunder ops equal libtorch.
#include <numeric>
#include <vector>

#include "aten_util.h"

namespace thunder::aten::detail {

void register_nn() {
  THUNDER_KERNEL("prims.matmul", { k.set_output(0, at::matmul(k.tensor(0), k.tensor(1))); });
  THUNDER_KERNEL("prims.linear",
                 { k.set_output(0, at::linear(k.tensor(0), k.tensor(1), k.optional_tensor(2))); });
  THUNDER_KERNEL("prims.embedding", { k.set_output(0, at::embedding(k.tensor(1), k.tensor(0))); });

  THUNDER_KERNEL("ltorch.matmul", { k.set_output(0, at::matmul(k.tensor(0), k.tensor(1))); });
  THUNDER_KERNEL("ltorch.linear",
                 { k.set_output(0, at::linear(k.tensor(0), k.tensor(1), k.optional_tensor(2))); });
  THUNDER_KERNEL("ltorch.dropout",
                 { k.set_output(0, at::dropout(k.tensor(0), k.number(1), k.boolean(2))); });
  THUNDER_KERNEL("ltorch.gelu", { k.set_output(0, at::gelu(k.tensor(0), k.string(1))); });
  THUNDER_KERNEL("ltorch.softmax", { k.set_output(0, at::softmax(k.tensor(0), k.integer(1))); });
  THUNDER_KERNEL("ltorch.log_softmax",
                 { k.set_output(0, at::log_softmax(k.tensor(0), k.integer(1))); });
  // mean and rstd over the normalised dims (kept as size 1), in float32 for
  // half types (the trace's compute dtype).
  THUNDER_KERNEL("ltorch.layer_norm_stats", {
    const at::Tensor& x = k.tensor(0);
    const bool half = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
    const at::Tensor xc = half ? x.to(at::kFloat) : x;
    std::vector<int64_t> dims(k.ints(1).size());
    std::iota(dims.begin(), dims.end(), x.dim() - static_cast<int64_t>(dims.size()));
    auto [var, mean] = at::var_mean(xc, dims, /*unbiased=*/false, /*keepdim=*/true);
    k.set_output(0, mean);
    k.set_output(1, (var + k.number(2)).rsqrt_());
  });
  THUNDER_KERNEL("ltorch.layer_norm_from_stats", {
    const at::Tensor& x = k.tensor(0);
    const at::ScalarType ct = k.tensor(2).scalar_type();
    at::Tensor out = (x.to(ct) - k.tensor(2)).mul_(k.tensor(3));
    if (!k.is_none(4)) out.mul_(k.tensor(4).to(ct));
    if (!k.is_none(5)) out.add_(k.tensor(5).to(ct));
    k.set_output(0, out.to(x.scalar_type()));
  });
  THUNDER_KERNEL("ltorch.layer_norm", {
    k.set_output(0, at::layer_norm(k.tensor(0), k.ints(1), k.optional_tensor(2),
                                   k.optional_tensor(3), k.number(4)));
  });
  THUNDER_KERNEL("ltorch.embedding", { k.set_output(0, at::embedding(k.tensor(1), k.tensor(0))); });
  THUNDER_KERNEL("ltorch.cross_entropy",
                 { k.set_output(0, at::cross_entropy_loss(k.tensor(0), k.tensor(1))); });
  THUNDER_KERNEL("ltorch.nll_loss", { k.set_output(0, at::nll_loss(k.tensor(0), k.tensor(1))); });
  // libtorch 1.13 has no public scaled_dot_product_attention; its private op is
  // the same math (and is what torch.nn.functional calls there).
  THUNDER_KERNEL("ltorch.scaled_dot_product_attention", {
    auto out = at::_scaled_dot_product_attention(k.tensor(0), k.tensor(1), k.tensor(2), {}, 0.0,
                                                 /*need_attn_weights=*/false, k.boolean(3));
    k.set_output(0, std::get<0>(out));
  });
}

}  // namespace thunder::aten::detail
