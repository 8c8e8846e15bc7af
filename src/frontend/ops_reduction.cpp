// Reductions. An empty dims list reduces all dims; var/std's `unbiased` is
// correction 1 (true) or 0 (false).
#include "dispatch.h"

namespace thunder {

namespace {
const at::IntArrayRef kAllDims{};
double correction(bool unbiased) { return unbiased ? 1.0 : 0.0; }
}  // namespace

Tensor sum(const Tensor& a) { THUNDER_OP("ltorch.sum", a, kAllDims, false); }
Tensor sum(const Tensor& a, at::IntArrayRef dims, bool keepdim) {
  THUNDER_OP("ltorch.sum", a, dims, keepdim);
}
Tensor mean(const Tensor& a) { THUNDER_OP("ltorch.mean", a, kAllDims, false); }
Tensor mean(const Tensor& a, at::IntArrayRef dims, bool keepdim) {
  THUNDER_OP("ltorch.mean", a, dims, keepdim);
}
Tensor amax(const Tensor& a, at::IntArrayRef dims, bool keepdim) {
  THUNDER_OP("ltorch.amax", a, dims, keepdim);
}
Tensor amin(const Tensor& a, at::IntArrayRef dims, bool keepdim) {
  THUNDER_OP("ltorch.amin", a, dims, keepdim);
}
Tensor var(const Tensor& a, bool unbiased) {
  THUNDER_OP("ltorch.var", a, kAllDims, correction(unbiased), false);
}
Tensor var(const Tensor& a, at::IntArrayRef dims, bool unbiased, bool keepdim) {
  THUNDER_OP("ltorch.var", a, dims, correction(unbiased), keepdim);
}
Tensor std(const Tensor& a, bool unbiased) {
  THUNDER_OP("ltorch.std", a, kAllDims, correction(unbiased), false);
}
Tensor std(const Tensor& a, at::IntArrayRef dims, bool unbiased, bool keepdim) {
  THUNDER_OP("ltorch.std", a, dims, correction(unbiased), keepdim);
}
Tensor argmax(const Tensor& a, c10::optional<int64_t> dim, bool keepdim) {
  detail::OpArg d = dim ? detail::OpArg(*dim) : detail::OpArg(Value());
  THUNDER_OP("ltorch.argmax", a, d, keepdim);
}

namespace {
TensorList max_impl(const Tensor& a, int64_t dim, bool keepdim) {
  THUNDER_OP_MULTI("ltorch.max", a, dim, keepdim);
}
}  // namespace

std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  TensorList r = max_impl(a, dim, keepdim);
  THUNDER_INTERNAL_CHECK(r.size() == 2, "ltorch.max: expected 2 outputs, got {}", r.size());
  return {r[0], r[1]};
}

}  // namespace thunder
