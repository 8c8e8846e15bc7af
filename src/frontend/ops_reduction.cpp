// STUB: to be written (this family is not implemented yet).
#include "dispatch.h"

namespace thunder {
Tensor sum(const Tensor& a) { fail("sum: not implemented yet"); }
Tensor sum(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("sum: not implemented yet"); }
Tensor mean(const Tensor& a) { fail("mean: not implemented yet"); }
Tensor mean(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("mean: not implemented yet"); }
Tensor amax(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("amax: not implemented yet"); }
Tensor amin(const Tensor& a, at::IntArrayRef dims, bool keepdim) { fail("amin: not implemented yet"); }
Tensor var(const Tensor& a, bool unbiased) { fail("var: not implemented yet"); }
Tensor var(const Tensor& a, at::IntArrayRef dims, bool unbiased, bool keepdim) { fail("var: not implemented yet"); }
Tensor std(const Tensor& a, bool unbiased) { fail("std: not implemented yet"); }
Tensor std(const Tensor& a, at::IntArrayRef dims, bool unbiased, bool keepdim) { fail("std: not implemented yet"); }
Tensor argmax(const Tensor& a, c10::optional<int64_t> dim, bool keepdim) { fail("argmax: not implemented yet"); }
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) { fail("max: not implemented yet"); }
}  // namespace thunder
