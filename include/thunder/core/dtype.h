// Element types of tensors and numbers, and PyTorch's type-promotion lattice.
// Torch-free: executors map these to at::ScalarType.
#pragma once

#include <cstdint>
#include <string_view>

namespace thunder {

enum class DType : uint8_t { b8, u8, i8, i16, i32, i64, f16, bf16, f32, f64 };

inline constexpr int kNumDTypes = 10;

// Short name used in type comments: "f32", "i64", "b8".
std::string_view short_name(DType d);
// Long name used as a literal: "float32", "int64", "bool".
std::string_view long_name(DType d);
int64_t item_size(DType d);

inline bool is_float(DType d) {
  return d == DType::f16 || d == DType::bf16 || d == DType::f32 || d == DType::f64;
}
inline bool is_bool(DType d) { return d == DType::b8; }
inline bool is_integer(DType d) { return !is_float(d) && !is_bool(d); }  // excludes bool
inline bool is_signed(DType d) { return d != DType::u8 && d != DType::b8; }

// The kind of a value for promotion: bool < integer < float.
enum class TypeKind : uint8_t { Bool = 0, Int = 1, Float = 2 };
TypeKind kind_of(DType d);

// Promotion of two tensor dtypes of the same priority (torch.promote_types).
DType promote_types(DType a, DType b);

// The default float dtype (torch.get_default_dtype()); float32.
inline constexpr DType kDefaultFloat = DType::f32;

}  // namespace thunder
