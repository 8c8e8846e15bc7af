#include "emit.h"

#include <fmt/format.h>

#include <cmath>

namespace thunder::cpu_fuser {

using ir::Type;

ir::Type storage_type(DType d) {
  switch (d) {
    case DType::b8:
      return Type::Bool;
    case DType::u8:
      return Type::U8;
    case DType::i8:
      return Type::I8;
    case DType::i16:
      return Type::I16;
    case DType::i32:
      return Type::I32;
    case DType::i64:
      return Type::I64;
    case DType::f16:
      return Type::F16;
    case DType::bf16:
      return Type::BF16;
    case DType::f32:
      return Type::F32;
    case DType::f64:
      return Type::F64;
  }
  return Type::I64;
}

ir::Type compute_type(DType d) {
  return d == DType::f16 || d == DType::bf16 ? Type::F32 : storage_type(d);
}

ir::Expr round_to(DType d, ir::Expr e) {
  if (d == DType::f16) return ir::call("rh", {e});
  if (d == DType::bf16) return ir::call("rbf", {e});
  return e;
}

std::string double_literal(double x) {
  if (std::isnan(x)) return "__builtin_nan(\"\")";
  if (std::isinf(x)) return x > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  return fmt::format("{:.17g}", x);
}

ir::Expr literal(const Value& v, DType d) {
  if (is_bool(d)) return ir::lit(v.to_double() != 0 ? "true" : "false");
  if (is_float(d))
    return round_to(d, ir::cast(compute_type(d), ir::lit(double_literal(v.to_double()))));
  int64_t i = v.kind() == Value::Kind::Int ? v.as_int() : static_cast<int64_t>(v.to_double());
  std::string text = i == INT64_MIN ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", i);
  return ir::cast(storage_type(d), ir::lit(std::move(text)));
}

}  // namespace thunder::cpu_fuser
