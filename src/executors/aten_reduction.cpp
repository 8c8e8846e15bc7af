// ATen kernels for reduction prims and ltorch reductions. Prims reduce exactly
// the listed dims (none for an empty list) and keep the input dtype; ltorch
// kernels are libtorch's own calls.
#include <cmath>

#include "aten_util.h"

namespace thunder::aten::detail {
namespace {

// The correction overload (a plain integer would pick the `bool unbiased` one).
c10::optional<int64_t> integral(double correction) { return static_cast<int64_t>(correction); }

// libtorch 1.13 takes an integer correction; other corrections rescale the
// biased variance by n / (n - correction).
at::Tensor var_corrected(const at::Tensor& a, at::OptionalIntArrayRef dims, double correction,
                         bool keepdim) {
  if (correction == std::floor(correction)) return at::var(a, dims, integral(correction), keepdim);
  at::Tensor biased = at::var(a, dims, integral(0), keepdim);
  double n = biased.numel() == 0
                 ? 0.0
                 : static_cast<double>(a.numel()) / static_cast<double>(biased.numel());
  return biased * (n / std::max(n - correction, 0.0));
}

// An empty dims list means all dims to libtorch's reductions.
at::OptionalIntArrayRef all_if_empty(c10::IntArrayRef dims) {
  if (dims.empty()) return c10::nullopt;
  return dims;
}

}  // namespace

void register_reduction() {
  // ---- prims ----
  THUNDER_KERNEL("prims.sum", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef dims = k.ints(1);
    k.set_output(0, dims.empty() ? a.clone() : at::sum(a, dims, false, a.scalar_type()));
  });
  THUNDER_KERNEL("prims.amax", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef dims = k.ints(1);
    k.set_output(0, dims.empty() ? a.clone() : at::amax(a, dims));
  });
  THUNDER_KERNEL("prims.amin", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef dims = k.ints(1);
    k.set_output(0, dims.empty() ? a.clone() : at::amin(a, dims));
  });
  THUNDER_KERNEL("prims.var", {
    const at::Tensor& a = k.tensor(0);
    c10::IntArrayRef dims = k.ints(1);
    // No reduced dims: every element is its own sample of size 1.
    if (dims.empty())
      k.set_output(0, var_corrected(a.unsqueeze(-1), at::IntArrayRef{-1}, k.number(2), false));
    else
      k.set_output(0, var_corrected(a, dims, k.number(2), false));
  });
  THUNDER_KERNEL("prims.argmax", {
    const at::Tensor& a = k.tensor(0);
    if (k.is_none(1))
      k.set_output(0, at::argmax(a));
    else
      k.set_output(0, at::argmax(a, k.integer(1)));
  });

  // ---- ltorch ----
  THUNDER_KERNEL("ltorch.sum",
                 { k.set_output(0, at::sum(k.tensor(0), all_if_empty(k.ints(1)), k.boolean(2))); });
  THUNDER_KERNEL("ltorch.mean", {
    k.set_output(0, at::mean(k.tensor(0), all_if_empty(k.ints(1)), k.boolean(2)));
  });
  THUNDER_KERNEL("ltorch.amax",
                 { k.set_output(0, at::amax(k.tensor(0), k.ints(1), k.boolean(2))); });
  THUNDER_KERNEL("ltorch.amin",
                 { k.set_output(0, at::amin(k.tensor(0), k.ints(1), k.boolean(2))); });
  THUNDER_KERNEL("ltorch.var", {
    k.set_output(0, var_corrected(k.tensor(0), all_if_empty(k.ints(1)), k.number(2), k.boolean(3)));
  });
  THUNDER_KERNEL("ltorch.std", {
    const at::Tensor& a = k.tensor(0);
    double c = k.number(2);
    if (c == std::floor(c))
      k.set_output(0, at::std(a, all_if_empty(k.ints(1)), integral(c), k.boolean(3)));
    else
      k.set_output(0, at::sqrt(var_corrected(a, all_if_empty(k.ints(1)), c, k.boolean(3))));
  });
  THUNDER_KERNEL("ltorch.argmax", {
    c10::optional<int64_t> dim;
    if (!k.is_none(1)) dim = k.integer(1);
    k.set_output(0, at::argmax(k.tensor(0), dim, k.boolean(2)));
  });
  THUNDER_KERNEL("ltorch.max", {
    auto [values, indices] = at::max(k.tensor(0), k.integer(1), k.boolean(2));
    k.set_output(0, values);
    k.set_output(1, indices);
  });
}

}  // namespace thunder::aten::detail
