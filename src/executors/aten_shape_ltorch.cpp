// ATen kernels for ltorch shape ops: libtorch's own calls (views where
// libtorch makes views).
#include <algorithm>

#include "aten_util.h"

namespace thunder::aten::detail {
namespace {
void set_outputs(KernelCall& k, const std::vector<at::Tensor>& ts) {
  for (size_t j = 0; j < ts.size(); ++j) k.set_output(j, ts[j]);
}

}  // namespace

void register_shape_ltorch() {
  THUNDER_KERNEL("ltorch.reshape", { k.set_output(0, at::reshape(k.tensor(0), k.ints(1))); });
  THUNDER_KERNEL("ltorch.view", { k.set_output(0, k.tensor(0).view(k.ints(1))); });
  THUNDER_KERNEL("ltorch.flatten",
                 { k.set_output(0, at::flatten(k.tensor(0), k.integer(1), k.integer(2))); });
  THUNDER_KERNEL("ltorch.transpose",
                 { k.set_output(0, at::transpose(k.tensor(0), k.integer(1), k.integer(2))); });
  THUNDER_KERNEL("ltorch.permute", { k.set_output(0, at::permute(k.tensor(0), k.ints(1))); });
  THUNDER_KERNEL("ltorch.unsqueeze",
                 { k.set_output(0, at::unsqueeze(k.tensor(0), k.integer(1))); });
  THUNDER_KERNEL("ltorch.squeeze", {
    const at::Tensor& a = k.tensor(0);
    if (k.is_none(1)) {
      k.set_output(0, at::squeeze(a));
      return;
    }
    // libtorch 1.13 squeezes one dim at a time: go from the last dim back so
    // earlier indices stay valid.
    std::vector<int64_t> dims;
    for (int64_t d : k.ints(1)) dims.push_back(a.dim() == 0 ? 0 : c10::maybe_wrap_dim(d, a.dim()));
    std::sort(dims.rbegin(), dims.rend());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    at::Tensor r = a;
    for (int64_t d : dims) r = at::squeeze(r, d);
    k.set_output(0, r);
  });
  THUNDER_KERNEL("ltorch.expand", { k.set_output(0, k.tensor(0).expand(k.ints(1))); });
  THUNDER_KERNEL("ltorch.contiguous", { k.set_output(0, k.tensor(0).contiguous()); });
  THUNDER_KERNEL("ltorch.cat", { k.set_output(0, at::cat(k.tensors(0), k.integer(1))); });
  THUNDER_KERNEL("ltorch.stack", { k.set_output(0, at::stack(k.tensors(0), k.integer(1))); });
  THUNDER_KERNEL("ltorch.narrow", {
    k.set_output(0, at::narrow(k.tensor(0), k.integer(1), k.integer(2), k.integer(3)));
  });
  THUNDER_KERNEL("ltorch.select",
                 { k.set_output(0, at::select(k.tensor(0), k.integer(1), k.integer(2))); });
  THUNDER_KERNEL("ltorch.split", {
    const at::Tensor& a = k.tensor(0);
    if (k.constant(1).kind() == Value::Kind::IntList)
      set_outputs(k, at::split_with_sizes(a, k.ints(1), k.integer(2)));
    else
      set_outputs(k, at::split(a, k.integer(1), k.integer(2)));
  });
  THUNDER_KERNEL("ltorch.chunk",
                 { set_outputs(k, at::chunk(k.tensor(0), k.integer(1), k.integer(2))); });
  THUNDER_KERNEL("ltorch.triu", { k.set_output(0, at::triu(k.tensor(0), k.integer(1))); });
  THUNDER_KERNEL("ltorch.tril", { k.set_output(0, at::tril(k.tensor(0), k.integer(1))); });
  THUNDER_KERNEL("ltorch.to", { k.set_output(0, k.tensor(0).to(k.dtype(1))); });
}

}  // namespace thunder::aten::detail
