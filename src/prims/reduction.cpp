// Reduction prims: sum, amax, amin, var, argmax. Reduced dims are removed from
// the output; an empty dims list reduces nothing (lang maps "all dims" onto
// the explicit list).
#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {

const uint32_t kReduction = tag_bits({OpTag::REDUCTION_OP});

// Checks `dims` (sorted, unique, in range) and returns the shape without them.
Shape reduced_shape(const std::string& op, const Proxy& t, const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    THUNDER_CHECK(dims[i] >= 0 && dims[i] < t.ndim(),
                  "{}: dim {} in dims {} is out of range for a tensor of rank {}", op, dims[i],
                  Value(dims).str(), t.ndim());
    THUNDER_CHECK(i == 0 || dims[i] > dims[i - 1], "{}: dims {} must be sorted and unique", op,
                  Value(dims).str());
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < t.ndim(); ++i) {
    if (k < dims.size() && dims[k] == i) {
      ++k;
      continue;
    }
    out.push_back(t.shape[i]);
  }
  return out;
}

// amax/amin have no identity: reducing a size-0 dim is an error, as in torch.
void check_nonempty_dims(const std::string& op, const Proxy& t, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    THUNDER_CHECK(t.shape[d] != 0,
                  "{}: cannot reduce dim {} of size 0 of a tensor of shape {} (no identity)", op, d,
                  shape_str(t.shape));
}

}  // namespace

void register_reduction() {
  define("prims.sum", {"a", "dims"}, kReduction, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    // A bool sum has no bool result in torch; callers convert to an integer first.
    THUNDER_CHECK(!is_bool(t.dtype), "prims.sum: bool tensors are not supported, got {}",
                  long_name(t.dtype));
    return new_tensor(reduced_shape("prims.sum", t, a.ints(1)), t.dtype, t.device);
  });

  for (const char* id : {"prims.amax", "prims.amin"}) {
    std::string op = id;
    define(op, {"a", "dims"}, kReduction, [op](const OpArgs& a) -> Value {
      const Proxy& t = a.tensor(0);
      Shape out = reduced_shape(op, t, a.ints(1));
      check_nonempty_dims(op, t, a.ints(1));
      return new_tensor(out, t.dtype, t.device);
    });
  }

  define("prims.var", {"a", "dims", "correction"}, kReduction, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    THUNDER_CHECK(is_float(t.dtype), "prims.var: expected a floating-point tensor, got {}",
                  long_name(t.dtype));
    double c = a.number(2);
    THUNDER_CHECK(c >= 0, "prims.var: correction must be non-negative, got {}", format_double(c));
    return new_tensor(reduced_shape("prims.var", t, a.ints(1)), t.dtype, t.device);
  });

  define("prims.argmax", {"a", "dim"}, kReduction, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    THUNDER_CHECK(!is_bool(t.dtype), "prims.argmax: bool tensors are not supported");
    if (a[1].is_none()) {
      THUNDER_CHECK(t.numel() != 0,
                    "prims.argmax: cannot reduce a tensor of shape {} with no elements",
                    shape_str(t.shape));
      return new_tensor({}, DType::i64, t.device);
    }
    int64_t dim = a.integer(1);
    if (t.ndim() == 0) {
      // A 0-d tensor has one element: dim 0 is its only (implicit) dim.
      THUNDER_CHECK(dim == 0, "prims.argmax: dim {} is out of range for a 0-d tensor", dim);
      return new_tensor({}, DType::i64, t.device);
    }
    Shape out = reduced_shape("prims.argmax", t, {dim});
    check_nonempty_dims("prims.argmax", t, {dim});
    return new_tensor(out, DType::i64, t.device);
  });
}

}  // namespace detail

Value sum(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.sum", a, dims);
}
Value amax(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.amax", a, dims);
}
Value amin(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.amin", a, dims);
}
Value var(const Value& a, const std::vector<int64_t>& dims, double correction) {
  THUNDER_PRIM_CALL("prims.var", a, dims, correction);
}
Value argmax(const Value& a, const Value& dim) { THUNDER_PRIM_CALL("prims.argmax", a, dim); }

}  // namespace thunder::prims
