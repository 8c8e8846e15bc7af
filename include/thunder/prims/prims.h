// Primitive symbols ("prims.*"): the vocabulary every pass and executor
// understands. Metas are strict: tensor operands must agree exactly in shape,
// dtype and device (no broadcasting, no type promotion); a number operand of an
// elementwise prim must not be of a higher kind (bool < int < float) than the
// tensor. Violations throw thunder::Error naming the prim and the values.
// Reductions drop the reduced dimensions; lang adds keepdim on top.
#pragma once

#include <string_view>
#include <vector>

#include "thunder/core/symbol.h"

namespace thunder::prims {

// Registers every prim once (idempotent) and looks one up.
void ensure_registered();
const Symbol& symbol(std::string_view id);

// ---- elementwise unary (same shape and dtype out) ----
Value neg(const Value& a);
Value abs(const Value& a);
// float-only
Value exp(const Value& a);
Value log(const Value& a);
Value log1p(const Value& a);
Value sqrt(const Value& a);
Value rsqrt(const Value& a);
Value sin(const Value& a);
Value cos(const Value& a);
Value tanh(const Value& a);
Value erf(const Value& a);
Value reciprocal(const Value& a);
Value sigmoid(const Value& a);
// bool/int only
Value bitwise_not(const Value& a);
// any dtype, bool out
Value logical_not(const Value& a);

// ---- elementwise binary (a tensor and a tensor or number) ----
Value add(const Value& a, const Value& b);
Value sub(const Value& a, const Value& b);
Value mul(const Value& a, const Value& b);
Value div(const Value& a, const Value& b);  // true division for floats, truncation for ints
Value pow(const Value& a, const Value& b);
Value maximum(const Value& a, const Value& b);
Value minimum(const Value& a, const Value& b);
Value bitwise_and(const Value& a, const Value& b);  // bool/int
Value bitwise_or(const Value& a, const Value& b);
Value bitwise_xor(const Value& a, const Value& b);
// comparisons and logical ops: bool out
Value eq(const Value& a, const Value& b);
Value ne(const Value& a, const Value& b);
Value lt(const Value& a, const Value& b);
Value le(const Value& a, const Value& b);
Value gt(const Value& a, const Value& b);
Value ge(const Value& a, const Value& b);
Value logical_and(const Value& a, const Value& b);
Value logical_or(const Value& a, const Value& b);

// pred must be bool; a and b tensors of one dtype (or numbers), all one shape.
Value where(const Value& pred, const Value& a, const Value& b);
Value convert_element_type(const Value& a, DType dtype);

// ---- shape ----
// Output dim broadcast_dims[i] takes input dim i (which is 1 or equal to it).
Value broadcast_in_dim(const Value& a, const Shape& shape,
                       const std::vector<int64_t>& broadcast_dims);
Value reshape(const Value& a, const Shape& shape);  // same numel
Value transpose(const Value& a, const std::vector<int64_t>& permutation);
// start <= end per dim, strides >= 1.
Value slice(const Value& a, const std::vector<int64_t>& start, const std::vector<int64_t>& end,
            const std::vector<int64_t>& strides);
Value squeeze(const Value& a, const std::vector<int64_t>& dims);  // each dim has size 1
Value cat(const std::vector<Value>& tensors, int64_t dim);        // one dtype, same other dims
// config: (lo, hi, interior) per dim, flattened; lo/hi may be negative.
Value pad(const Value& a, const Value& padding_value, const std::vector<int64_t>& config);

// ---- reductions (dims sorted, unique, non-negative; reduced dims removed) ----
Value sum(const Value& a, const std::vector<int64_t>& dims);
Value amax(const Value& a, const std::vector<int64_t>& dims);
Value amin(const Value& a, const std::vector<int64_t>& dims);
Value var(const Value& a, const std::vector<int64_t>& dims, double correction);  // float only
Value argmax(const Value& a, const Value& dim);  // dim: int or None (flattened); i64 out

// ---- linear algebra and nn ----
// torch.matmul rules for 1-D/2-D; N-D operands need equal batch dims.
Value matmul(const Value& a, const Value& b);
Value linear(const Value& a, const Value& w, const Value& bias);  // bias may be None
Value embedding(const Value& indices, const Value& weight);       // integer indices

// ---- indexing ----
Value take_along_axis(const Value& a, const Value& index, int64_t dim);  // gather
Value index_select(const Value& a, int64_t dim, const Value& index);
// Writes src[i] at index[i] along dim (one winner per duplicate index, as torch.scatter).
Value scatter(const Value& a, int64_t dim, const Value& index, const Value& src);
Value scatter_add(const Value& a, int64_t dim, const Value& index, const Value& src);

// ---- factories ----
Value full(const Shape& shape, const Value& fill_value, Device device, DType dtype);
Value iota(int64_t length, int64_t start, int64_t step, Device device, DType dtype);
Value empty(const Shape& shape, Device device, DType dtype);

// ---- random ----
// Stateful draws from libtorch's generator (RANDOM_OP); minval < maxval.
Value uniform(const Shape& shape, const Value& minval, const Value& maxval, Device device,
              DType dtype);
Value randn(const Shape& shape, Device device, DType dtype);
// The stateless RNG (thunder/core/philox.h; replace_uniform emits these).
// The key and first counter of a draw on `device` that consumes `counters`
// Philox counters, advancing the device's RNG state: [seed, offset], each a
// cpu i64[] tensor (RANDOM_OP, DONT_DCE).
Value get_and_update_rng_state(Device device, int64_t counters);
// U(minval, maxval) from the Philox stream at (seed, offset): a pure function
// of its arguments (no tag). seed and offset: ints or cpu i64[] tensors.
Value uniform_philox(const Shape& shape, const Value& minval, const Value& maxval,
                     const Value& seed, const Value& offset, Device device, DType dtype);

// ---- in place ----
// Writes src into dst (same shape and dtype) and returns dst's new value.
Value copy_(const Value& src, const Value& dst);

}  // namespace thunder::prims
