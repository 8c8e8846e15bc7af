// ATen kernels for shape prims (views where ATen makes views) and ltorch
// shape ops.
#include "aten_util.h"

namespace thunder::aten::detail {

namespace {
void register_shape_prims() {
  THUNDER_KERNEL("prims.broadcast_in_dim", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef shape = k.ints(1), dims = k.ints(2);
    at::DimVector view(shape.size(), 1);
    for (size_t i = 0; i < dims.size(); ++i) view[dims[i]] = a.size(static_cast<int64_t>(i));
    k.set_output(0, a.reshape(view).expand(shape));
  });
  THUNDER_KERNEL("prims.reshape", { k.set_output(0, k.tensor(0).reshape(k.ints(1))); });
  THUNDER_KERNEL("prims.transpose", { k.set_output(0, k.tensor(0).permute(k.ints(1))); });
  THUNDER_KERNEL("prims.slice", {
    at::Tensor t = k.tensor(0);
    c10::IntArrayRef start = k.ints(1), end = k.ints(2), step = k.ints(3);
    for (size_t d = 0; d < start.size(); ++d)
      if (start[d] != 0 || end[d] != t.size(d) || step[d] != 1)
        t = t.slice(static_cast<int64_t>(d), start[d], end[d], step[d]);
    k.set_output(0, t);
  });
  THUNDER_KERNEL("prims.squeeze", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef dims = k.ints(1);
    at::DimVector shape;
    for (int64_t i = 0; i < a.dim(); ++i)
      if (std::find(dims.begin(), dims.end(), i) == dims.end()) shape.push_back(a.size(i));
    k.set_output(0, a.reshape(shape));
  });
  THUNDER_KERNEL("prims.cat", { k.set_output(0, at::cat(k.tensors(0), k.integer(1))); });
  THUNDER_KERNEL("prims.pad", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef cfg = k.ints(2);
    const int64_t n = a.dim();
    bool interior = false;
    for (int64_t i = 0; i < n; ++i) interior = interior || cfg[3 * i + 2] != 0;
    if (!interior) {
      // constant_pad_nd takes (lo, hi) pairs from the last dim backwards.
      at::DimVector pads;
      for (int64_t i = n - 1; i >= 0; --i) {
        pads.push_back(cfg[3 * i]);
        pads.push_back(cfg[3 * i + 1]);
      }
      k.set_output(0, at::constant_pad_nd(a, pads, k.scalar(1)));
      return;
    }
    // Interior padding: scatter the input into a dilated buffer, then apply lo/hi.
    at::DimVector dilated_shape;
    for (int64_t i = 0; i < n; ++i) {
      int64_t s = a.size(i);
      dilated_shape.push_back(s > 0 ? s + (s - 1) * cfg[3 * i + 2] : 0);
    }
    at::Tensor buf = at::full(dilated_shape, k.scalar(1), a.options());
    at::Tensor view = buf;
    for (int64_t i = 0; i < n; ++i) view = view.slice(i, 0, dilated_shape[i], cfg[3 * i + 2] + 1);
    view.copy_(a);
    at::DimVector pads;
    for (int64_t i = n - 1; i >= 0; --i) {
      pads.push_back(cfg[3 * i]);
      pads.push_back(cfg[3 * i + 1]);
    }
    k.set_output(0, at::constant_pad_nd(buf, pads, k.scalar(1)));
  });
}
}  // namespace

void register_shape() {
  register_shape_prims();
  register_shape_ltorch();
}

}  // namespace thunder::aten::detail
