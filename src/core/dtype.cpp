#include "thunder/core/dtype.h"

#include <algorithm>

namespace thunder {

std::string_view short_name(DType d) {
  static constexpr std::string_view names[] = {"b8",  "u8",  "i8",   "i16", "i32",
                                               "i64", "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(d)];
}

std::string_view long_name(DType d) {
  static constexpr std::string_view names[] = {"bool",    "uint8",  "int8",    "int16",
                                               "int32",   "int64",  "float16", "bfloat16",
                                               "float32", "float64"};
  return names[static_cast<int>(d)];
}

int64_t item_size(DType d) {
  static constexpr int64_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(d)];
}

TypeKind kind_of(DType d) {
  if (is_bool(d)) return TypeKind::Bool;
  if (is_float(d)) return TypeKind::Float;
  return TypeKind::Int;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
  if (is_float(a)) {
    // f16 and bf16 meet at f32; otherwise the wider wins.
    if ((a == DType::f16 && b == DType::bf16) || (a == DType::bf16 && b == DType::f16))
      return DType::f32;
    return item_size(a) >= item_size(b) ? a : b;
  }
  // Integers: uint8 with a signed type needs a signed type wider than 8 bits.
  if (a == DType::u8 || b == DType::u8) {
    DType other = a == DType::u8 ? b : a;
    return other == DType::i8 ? DType::i16 : other;
  }
  return item_size(a) >= item_size(b) ? a : b;
}

}  // namespace thunder
