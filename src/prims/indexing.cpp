// Indexing prims: take_along_axis (gather), index_select, scatter, scatter_add.
// Index values are read at run time; metas check ranks, sizes and dtypes only.
#include <algorithm>

#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {

// dims are canonical in prims: 0 <= dim < rank (0 for a 0-d tensor).
void check_dim(const char* op, int64_t dim, int64_t rank) {
  THUNDER_CHECK(dim >= 0 && dim < std::max<int64_t>(rank, 1),
                "{}: dim {} must be in [0, {}) for a tensor of rank {}", op, dim,
                std::max<int64_t>(rank, 1), rank);
}

void check_index_dtype(const char* op, const Proxy& index) {
  THUNDER_CHECK(index.dtype == DType::i64, "{}: index must be int64, got {}", op,
                long_name(index.dtype));
}

void check_device(const char* op, const Proxy& a, const Proxy& b, const char* bname) {
  THUNDER_CHECK(a.device == b.device, "{}: devices {} (a) and {} ({}) must be equal", op,
                a.device.str(), b.device.str(), bname);
}

// index must have a's rank and fit in a outside `dim` (gather and scatter).
void check_index_fits(const char* op, const Proxy& a, const Proxy& index, int64_t dim) {
  THUNDER_CHECK(index.ndim() == a.ndim(), "{}: index of shape {} must have the rank of a {}", op,
                shape_str(index.shape), shape_str(a.shape));
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (d != dim)
      THUNDER_CHECK(index.shape[d] <= a.shape[d],
                    "{}: index shape {} exceeds a shape {} in dim {} ({} > {})", op,
                    shape_str(index.shape), shape_str(a.shape), d, index.shape[d], a.shape[d]);
}

// scatter/scatter_add(a, dim, index, src): src has a's dtype and rank and covers index.
Value scatter_meta(const OpArgs& args) {
  const char* op = args.symbol().id.c_str();
  const Proxy& a = args.tensor(0);
  int64_t dim = args.integer(1);
  const Proxy& index = args.tensor(2);
  const Proxy& src = args.tensor(3);
  check_dim(op, dim, a.ndim());
  check_index_dtype(op, index);
  check_device(op, a, index, "index");
  check_device(op, a, src, "src");
  THUNDER_CHECK(src.dtype == a.dtype, "{}: dtypes {} (a) and {} (src) must be equal", op,
                long_name(a.dtype), long_name(src.dtype));
  check_index_fits(op, a, index, dim);
  THUNDER_CHECK(src.ndim() == a.ndim(), "{}: src of shape {} must have the rank of a {}", op,
                shape_str(src.shape), shape_str(a.shape));
  for (int64_t d = 0; d < src.ndim(); ++d)
    THUNDER_CHECK(index.shape[d] <= src.shape[d],
                  "{}: index shape {} exceeds src shape {} in dim {} ({} > {})", op,
                  shape_str(index.shape), shape_str(src.shape), d, index.shape[d], src.shape[d]);
  return new_tensor(a.shape, a.dtype, a.device);
}

}  // namespace

void register_indexing() {
  define("prims.take_along_axis", {"a", "index", "dim"}, 0, [](const OpArgs& args) -> Value {
    const char* op = "prims.take_along_axis";
    const Proxy& a = args.tensor(0);
    const Proxy& index = args.tensor(1);
    int64_t dim = args.integer(2);
    check_dim(op, dim, a.ndim());
    check_index_dtype(op, index);
    check_device(op, a, index, "index");
    check_index_fits(op, a, index, dim);
    return new_tensor(index.shape, a.dtype, a.device);
  });

  define("prims.index_select", {"a", "dim", "index"}, 0, [](const OpArgs& args) -> Value {
    const char* op = "prims.index_select";
    const Proxy& a = args.tensor(0);
    int64_t dim = args.integer(1);
    const Proxy& index = args.tensor(2);
    check_dim(op, dim, a.ndim());
    THUNDER_CHECK(index.dtype == DType::i64 || index.dtype == DType::i32,
                  "{}: index must be int64 or int32, got {}", op, long_name(index.dtype));
    THUNDER_CHECK(index.ndim() <= 1, "{}: index must be 0-d or 1-D, got shape {}", op,
                  shape_str(index.shape));
    check_device(op, a, index, "index");
    Shape out = a.shape;
    if (a.ndim() > 0) {
      out[dim] = index.numel();
    } else {
      THUNDER_CHECK(index.numel() == 1, "{}: a 0-d tensor takes exactly one index, got shape {}",
                    op, shape_str(index.shape));
    }
    return new_tensor(out, a.dtype, a.device);
  });

  define("prims.scatter", {"a", "dim", "index", "src"}, 0, scatter_meta);
  define("prims.scatter_add", {"a", "dim", "index", "src"}, 0, scatter_meta);
}

}  // namespace detail

Value take_along_axis(const Value& a, const Value& index, int64_t dim) {
  THUNDER_PRIM_CALL("prims.take_along_axis", a, index, dim);
}
Value index_select(const Value& a, int64_t dim, const Value& index) {
  THUNDER_PRIM_CALL("prims.index_select", a, dim, index);
}
Value scatter(const Value& a, int64_t dim, const Value& index, const Value& src) {
  THUNDER_PRIM_CALL("prims.scatter", a, dim, index, src);
}
Value scatter_add(const Value& a, int64_t dim, const Value& index, const Value& src) {
  THUNDER_PRIM_CALL("prims.scatter_add", a, dim, index, src);
}

}  // namespace thunder::prims
