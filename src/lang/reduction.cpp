// ltorch reductions: torch's dims/keepdim/dtype rules on top of the reduction
// prims. Low-precision floats are reduced in float32 and rounded once, as
// libtorch accumulates them.
#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {
namespace {

const uint32_t kReduction = tag_bits({OpTag::REDUCTION_OP});

// Canonical reduced dims; an empty list means all dims. A 0-d tensor accepts
// dims 0 and -1 and has nothing to reduce.
std::vector<int64_t> reduction_dims(const std::string& op, const std::vector<int64_t>& dims,
                                    int64_t rank) {
  if (rank == 0) {
    for (int64_t d : dims) canonical_dim(op, d, 0);
    return {};
  }
  return canonical_dims(op, dims, rank);
}

// Re-adds the reduced dims as size-1 dims.
Value keep_dims(const Value& r, const Shape& in_shape, const std::vector<int64_t>& dims) {
  if (dims.empty()) return r;
  Shape shape = in_shape;
  std::vector<int64_t> kept;
  size_t k = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (k < dims.size() && dims[k] == i) {
      shape[i] = 1;
      ++k;
    } else {
      kept.push_back(i);
    }
  }
  return prims::broadcast_in_dim(r, shape, kept);
}

// Reductions without identity (amax, amin, argmax, max) reject size-0 reduced dims.
void check_nonempty(const std::string& op, const Proxy& p, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    THUNDER_CHECK(p.shape[d] != 0,
                  "{}: cannot reduce dim {} of size 0 (tensor of shape {}); the operation has "
                  "no identity",
                  op, d, shape_str(p.shape));
}

void check_float(const std::string& op, const Proxy& p) {
  THUNDER_CHECK(is_float(p.dtype), "{}: expected a floating-point tensor, got {}", op,
                long_name(p.dtype));
}

// var in the accumulation dtype, rounded to the input dtype.
Value var_impl(const std::string& op, const OpArgs& a, bool take_sqrt) {
  const Proxy& p = tensor_arg(op, a[0], "a");
  check_float(op, p);
  auto dims = reduction_dims(op, a.ints(1), p.ndim());
  double correction = a.number(2);
  THUNDER_CHECK(correction >= 0, "{}: correction must be non-negative, got {}", op,
                format_double(correction));
  Value r = prims::var(maybe_convert(a[0], compute_dtype(p.dtype)), dims, correction);
  if (take_sqrt) r = prims::sqrt(r);
  r = maybe_convert(r, p.dtype);
  return a.boolean(3) ? keep_dims(r, p.shape, dims) : r;
}

}  // namespace

void register_reduction() {
  define("ltorch.sum", {"a", "dims", "keepdim"}, kReduction, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.sum";
    const Proxy& p = tensor_arg(id, a[0], "a");
    auto dims = reduction_dims(id, a.ints(1), p.ndim());
    // Integer and bool sums are int64, as in torch.
    DType out = is_float(p.dtype) ? p.dtype : DType::i64;
    Value r = prims::sum(maybe_convert(a[0], compute_dtype(out)), dims);
    r = maybe_convert(r, out);
    return a.boolean(2) ? keep_dims(r, p.shape, dims) : r;
  });

  define("ltorch.mean", {"a", "dims", "keepdim"}, kReduction, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.mean";
    const Proxy& p = tensor_arg(id, a[0], "a");
    THUNDER_CHECK(is_float(p.dtype),
                  "ltorch.mean: could not infer output dtype; the input must be a floating-point "
                  "tensor, got {}",
                  long_name(p.dtype));
    auto dims = reduction_dims(id, a.ints(1), p.ndim());
    int64_t n = 1;
    for (int64_t d : dims) n *= p.shape[d];
    Value r = prims::sum(maybe_convert(a[0], compute_dtype(p.dtype)), dims);
    // n == 0 gives 0/0 = nan, like torch.
    r = maybe_convert(prims::div(r, static_cast<double>(n)), p.dtype);
    return a.boolean(2) ? keep_dims(r, p.shape, dims) : r;
  });

  for (const char* name : {"amax", "amin"}) {
    std::string id = std::string("ltorch.") + name;
    bool is_max = std::string(name) == "amax";
    define(id, {"a", "dims", "keepdim"}, kReduction, [id, is_max](const OpArgs& a) -> Value {
      const Proxy& p = tensor_arg(id, a[0], "a");
      auto dims = reduction_dims(id, a.ints(1), p.ndim());
      check_nonempty(id, p, dims);
      Value r = is_max ? prims::amax(a[0], dims) : prims::amin(a[0], dims);
      return a.boolean(2) ? keep_dims(r, p.shape, dims) : r;
    });
  }

  define("ltorch.var", {"a", "dims", "correction", "keepdim"}, kReduction,
         [](const OpArgs& a) -> Value { return var_impl("ltorch.var", a, false); });
  define("ltorch.std", {"a", "dims", "correction", "keepdim"}, kReduction,
         [](const OpArgs& a) -> Value { return var_impl("ltorch.std", a, true); });

  define("ltorch.argmax", {"a", "dim", "keepdim"}, kReduction, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.argmax";
    const Proxy& p = tensor_arg(id, a[0], "a");
    THUNDER_CHECK(!is_bool(p.dtype), "ltorch.argmax: not implemented for bool tensors");
    bool keepdim = a.boolean(2);
    if (a[1].is_none()) {
      THUNDER_CHECK(p.numel() != 0,
                    "ltorch.argmax: cannot reduce a tensor of shape {} with no elements over all "
                    "dims; pass a dim",
                    shape_str(p.shape));
      Value r = prims::argmax(a[0], Value());
      // keepdim over the flattened tensor keeps every dim as size 1.
      return keepdim && p.ndim() > 0 ? prims::broadcast_in_dim(r, Shape(p.ndim(), 1), {}) : r;
    }
    int64_t dim = canonical_dim(id, a.integer(1), p.ndim());
    if (p.ndim() == 0) return prims::argmax(a[0], int64_t{0});
    check_nonempty(id, p, {dim});
    Value r = prims::argmax(a[0], dim);
    return keepdim ? keep_dims(r, p.shape, {dim}) : r;
  });

  define("ltorch.max", {"a", "dim", "keepdim"}, kReduction, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.max";
    const Proxy& p = tensor_arg(id, a[0], "a");
    int64_t dim = canonical_dim(id, a.integer(1), p.ndim());
    if (p.ndim() == 0)
      return Value(std::vector<Value>{prims::amax(a[0], {}), prims::argmax(a[0], int64_t{0})});
    check_nonempty(id, p, {dim});
    Value values = prims::amax(a[0], {dim});
    // argmax has no bool kernel in torch; bytes order the same way.
    Value idx = prims::argmax(is_bool(p.dtype) ? maybe_convert(a[0], DType::u8) : a[0], dim);
    if (a.boolean(2)) {
      values = keep_dims(values, p.shape, {dim});
      idx = keep_dims(idx, p.shape, {dim});
    }
    return Value(std::vector<Value>{values, idx});
  });
}

}  // namespace detail

Value sum(const Value& a, const std::vector<int64_t>& dims, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.sum", a, dims, keepdim);
}
Value mean(const Value& a, const std::vector<int64_t>& dims, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.mean", a, dims, keepdim);
}
Value amax(const Value& a, const std::vector<int64_t>& dims, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.amax", a, dims, keepdim);
}
Value amin(const Value& a, const std::vector<int64_t>& dims, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.amin", a, dims, keepdim);
}
Value var(const Value& a, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.var", a, dims, correction, keepdim);
}
Value std(const Value& a, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.std", a, dims, correction, keepdim);
}
Value argmax(const Value& a, const Value& dim, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.argmax", a, dim, keepdim);
}
Value max(const Value& a, int64_t dim, bool keepdim) {
  THUNDER_LTORCH_CALL("ltorch.max", a, dim, keepdim);
}

}  // namespace thunder::ltorch
