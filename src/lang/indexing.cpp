// ltorch indexing ops: gather, scatter, scatter_add, index_select, masked_fill.
// They check torch's rules (index dtypes, ranks, sizes) and call the indexing
// prims with canonical dims; masked_fill is a broadcast where.
#include <cmath>

#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {
namespace {

const Proxy& int64_index(const std::string& op, const Value& v) {
  const Proxy& index = tensor_arg(op, v, "index");
  THUNDER_CHECK(index.dtype == DType::i64, "{}: expected index of dtype int64, got {}", op,
                long_name(index.dtype));
  return index;
}

void check_same_rank(const std::string& op, const Proxy& a, const Proxy& t, const char* name) {
  THUNDER_CHECK(t.ndim() == a.ndim(),
                "{}: {} of shape {} must have the same number of dimensions as a {}", op, name,
                shape_str(t.shape), shape_str(a.shape));
}

// scatter and scatter_add share their checks (torch's scatter_gather_dtype_check and
// shape checks); returns the canonical dim.
int64_t scatter_checks(const std::string& op, const OpArgs& args) {
  const Proxy& a = tensor_arg(op, args[0], "a");
  const Proxy& index = int64_index(op, args[2]);
  const Proxy& src = tensor_arg(op, args[3], "src");
  int64_t dim = canonical_dim(op, args.integer(1), a.ndim());
  THUNDER_CHECK(src.dtype == a.dtype, "{}: expected src dtype {} to equal a dtype {}", op,
                long_name(src.dtype), long_name(a.dtype));
  check_same_rank(op, a, index, "index");
  check_same_rank(op, a, src, "src");
  for (int64_t d = 0; d < a.ndim(); ++d) {
    THUNDER_CHECK(d == dim || index.shape[d] <= a.shape[d],
                  "{}: index shape {} exceeds a shape {} in dim {}", op, shape_str(index.shape),
                  shape_str(a.shape), d);
    THUNDER_CHECK(index.shape[d] <= src.shape[d],
                  "{}: index shape {} exceeds src shape {} in dim {}", op, shape_str(index.shape),
                  shape_str(src.shape), d);
  }
  return dim;
}

// A literal fill value in a's dtype, converted the way masked_fill_ does (truncation
// for integers, nonzero for bool).
Value fill_literal(const std::string& op, const Value& v, DType dtype) {
  if (v.is_number_proxy()) {
    THUNDER_CHECK(static_cast<int>(kind_of(v.number_dtype())) <= static_cast<int>(kind_of(dtype)),
                  "{}: a runtime {} value cannot fill a {} tensor", op, long_name(v.number_dtype()),
                  long_name(dtype));
    return v;
  }
  double d = v.to_double();
  if (is_float(dtype)) return Value(d);
  if (is_bool(dtype)) return Value(d != 0.0);
  THUNDER_CHECK(std::isfinite(d), "{}: value {} cannot be converted to {}", op, v.str(),
                long_name(dtype));
  return v.kind() == Value::Kind::Int ? v : Value(static_cast<int64_t>(std::trunc(d)));
}

}  // namespace

void register_indexing() {
  define("ltorch.gather", {"a", "dim", "index"}, 0, [](const OpArgs& args) -> Value {
    const std::string op = "ltorch.gather";
    const Proxy& a = tensor_arg(op, args[0], "a");
    const Proxy& index = int64_index(op, args[2]);
    int64_t dim = canonical_dim(op, args.integer(1), a.ndim());
    check_same_rank(op, a, index, "index");
    for (int64_t d = 0; d < a.ndim(); ++d)
      THUNDER_CHECK(d == dim || index.shape[d] <= a.shape[d],
                    "{}: index shape {} exceeds a shape {} in dim {}", op, shape_str(index.shape),
                    shape_str(a.shape), d);
    return prims::take_along_axis(args[0], args[2], dim);
  });

  define("ltorch.scatter", {"a", "dim", "index", "src"}, 0, [](const OpArgs& args) -> Value {
    int64_t dim = scatter_checks("ltorch.scatter", args);
    return prims::scatter(args[0], dim, args[2], args[3]);
  });

  define("ltorch.scatter_add", {"a", "dim", "index", "src"}, 0, [](const OpArgs& args) -> Value {
    int64_t dim = scatter_checks("ltorch.scatter_add", args);
    return prims::scatter_add(args[0], dim, args[2], args[3]);
  });

  define("ltorch.index_select", {"a", "dim", "index"}, 0, [](const OpArgs& args) -> Value {
    const std::string op = "ltorch.index_select";
    const Proxy& a = tensor_arg(op, args[0], "a");
    const Proxy& index = tensor_arg(op, args[2], "index");
    THUNDER_CHECK(index.dtype == DType::i64 || index.dtype == DType::i32,
                  "{}: expected index of dtype int64 or int32, got {}", op, long_name(index.dtype));
    THUNDER_CHECK(index.ndim() <= 1, "{}: index must be 0-d or 1-D, got shape {}", op,
                  shape_str(index.shape));
    int64_t dim = canonical_dim(op, args.integer(1), a.ndim());
    return prims::index_select(args[0], dim, args[2]);
  });

  define("ltorch.masked_fill", {"a", "mask", "value"}, 0, [](const OpArgs& args) -> Value {
    const std::string op = "ltorch.masked_fill";
    const Proxy& a = tensor_arg(op, args[0], "a");
    const Proxy& mask = tensor_arg(op, args[1], "mask");
    THUNDER_CHECK(mask.dtype == DType::b8, "{}: mask must be a bool tensor, got {}", op,
                  long_name(mask.dtype));
    const Value& value = args[2];
    // Like torch, the result has the broadcast shape of a and mask.
    Shape shape = broadcast_shapes(op, a.shape, mask.shape);
    Value fill;
    if (value.is_tensor()) {
      const Proxy& v = *value.proxy();
      THUNDER_CHECK(v.ndim() == 0, "{}: a tensor value must be 0-d, got shape {}", op,
                    shape_str(v.shape));
      fill = prims::broadcast_in_dim(maybe_convert(value, a.dtype), shape, {});
    } else {
      THUNDER_CHECK(value.is_number(), "{}: value must be a number or a 0-d tensor, got {}", op,
                    value.str());
      fill = fill_literal(op, value, a.dtype);
    }
    return prims::where(broadcast_to(op, args[1], shape), fill, broadcast_to(op, args[0], shape));
  });
}

}  // namespace detail

Value gather(const Value& a, int64_t dim, const Value& index) {
  THUNDER_LTORCH_CALL("ltorch.gather", a, dim, index);
}
Value scatter(const Value& a, int64_t dim, const Value& index, const Value& src) {
  THUNDER_LTORCH_CALL("ltorch.scatter", a, dim, index, src);
}
Value scatter_add(const Value& a, int64_t dim, const Value& index, const Value& src) {
  THUNDER_LTORCH_CALL("ltorch.scatter_add", a, dim, index, src);
}
Value index_select(const Value& a, int64_t dim, const Value& index) {
  THUNDER_LTORCH_CALL("ltorch.index_select", a, dim, index);
}
Value masked_fill(const Value& a, const Value& mask, const Value& value) {
  THUNDER_LTORCH_CALL("ltorch.masked_fill", a, mask, value);
}

}  // namespace thunder::ltorch
