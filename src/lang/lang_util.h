// Shared helpers for ltorch bodies (private to src/lang): PyTorch's
// broadcasting and type promotion expressed with prims.
#pragma once

#include <numbers>
#include <string>
#include <vector>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"

namespace thunder::ltorch::detail {

// 1/sqrt(2), correctly rounded (sqrt2 / 2 is exact; 1 / sqrt2 rounds twice and
// is one ulp low). gelu's body and its grad rule share it, so CSE merges the
// backward's erf(x * c) with the forward's recomputed one.
inline constexpr double kInvSqrt2 = std::numbers::sqrt2 / 2;

// Registers a composite symbol.
void define(std::string id, std::vector<std::string> params, uint32_t tags, BodyFn body);

// torch.broadcast_shapes; throws naming `op` and both shapes.
Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b);
// Broadcasts every tensor among `vals` to their common shape (numbers pass).
std::vector<Value> maybe_broadcast(const std::string& op, const std::vector<Value>& vals);
// Broadcasts one tensor to `shape` (no-op if equal).
Value broadcast_to(const std::string& op, const Value& t, const Shape& shape);

// torch.result_type over tensors (0-d and dimensioned ranked apart) and numbers.
DType result_type(const std::string& op, const std::vector<Value>& vals);

enum class Promotion {
  Default,     // compute and return the promoted dtype
  IntToFloat,  // integer/bool results become the default float (div, exp, sqrt)
  AlwaysBool,  // compute in the promoted dtype, return bool (comparisons)
};

// Broadcasts the operands and converts tensors to the computation dtype.
// `out_dtype` receives the dtype of the result.
std::vector<Value> elementwise_prep(const std::string& op, const std::vector<Value>& vals,
                                    Promotion promotion, DType* out_dtype = nullptr);

// The dtype half-precision values are computed and accumulated in (float32);
// other dtypes compute in themselves.
inline DType compute_dtype(DType d) { return d == DType::f16 || d == DType::bf16 ? DType::f32 : d; }

// The shape of a normalisation's per-row statistics: `shape` with its last
// `normalized` dims 1 (at::native_layer_norm's mean and rstd).
inline Shape stat_shape(const Shape& shape, size_t normalized) {
  Shape s(shape.begin(), shape.end() - static_cast<std::ptrdiff_t>(normalized));
  s.resize(shape.size(), 1);
  return s;
}

// Checks a layer norm's statistics of x over its last normalized_shape dims:
// mean and rstd in the compute dtype, shaped stat_shape (layer_norm_from_stats
// and native_layer_norm_backward read them).
void check_layer_norm_stats(const std::string& op, const Proxy& x, const std::vector<int64_t>& ns,
                            const Value& mean, const Value& rstd);

// Converts a tensor to `dtype` unless it already is; numbers become the matching literal.
Value maybe_convert(const Value& v, DType dtype);

// Proxy accessors with clear errors.
const Proxy& tensor_arg(const std::string& op, const Value& v, const char* name);
int64_t canonical_dim(const std::string& op, int64_t dim, int64_t rank);
// Sorted unique canonical dims; an empty list means all dims.
std::vector<int64_t> canonical_dims(const std::string& op, const std::vector<int64_t>& dims,
                                    int64_t rank);

// The per-family registration functions, called once by ensure_registered().
void register_elementwise();
void register_reduction();
void register_shape();
void register_indexing();
void register_nn();
void register_attention();
void register_factory();
void register_backward();

}  // namespace thunder::ltorch::detail

// Defines a wrapper's body: looks the symbol up once, then calls it.
#define THUNDER_LTORCH_CALL(id, ...)                                    \
  static const ::thunder::Symbol& sym_ = ::thunder::ltorch::symbol(id); \
  return ::thunder::call_symbol(sym_, {__VA_ARGS__})
