// Broadcasting and type promotion with PyTorch's rules.
#include <algorithm>
#include <optional>

#include "lang_util.h"

namespace thunder::ltorch::detail {

Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    THUNDER_CHECK(da == db || da == 1 || db == 1,
                  "{}: shapes {} and {} cannot be broadcast together (dim {}: {} vs {})", op,
                  shape_str(a), shape_str(b), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Value broadcast_to(const std::string& op, const Value& t, const Shape& shape) {
  const Proxy& p = *t.proxy();
  if (p.shape == shape) return t;
  THUNDER_CHECK(p.shape.size() <= shape.size(), "{}: cannot broadcast shape {} to {}", op,
                shape_str(p.shape), shape_str(shape));
  std::vector<int64_t> dims(p.shape.size());
  size_t offset = shape.size() - p.shape.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i] = static_cast<int64_t>(offset + i);
    THUNDER_CHECK(p.shape[i] == 1 || p.shape[i] == shape[offset + i],
                  "{}: cannot broadcast shape {} to {}", op, shape_str(p.shape), shape_str(shape));
  }
  return prims::broadcast_in_dim(t, shape, dims);
}

std::vector<Value> maybe_broadcast(const std::string& op, const std::vector<Value>& vals) {
  Shape common;
  bool any = false;
  for (const Value& v : vals)
    if (v.is_tensor()) {
      common = any ? broadcast_shapes(op, common, v.proxy()->shape) : v.proxy()->shape;
      any = true;
    }
  std::vector<Value> out;
  out.reserve(vals.size());
  for (const Value& v : vals) out.push_back(v.is_tensor() ? broadcast_to(op, v, common) : v);
  return out;
}

namespace {
// Mirrors at::native's combine_categories: a higher category wins unless the
// lower one is of a higher kind.

}  // namespace

DType result_type(const std::string& op, const std::vector<Value>& vals) {
  std::optional<DType> dim, zero, wrapped;
  auto upd = [](std::optional<DType>& s, DType d) { s = s ? promote_types(*s, d) : d; };
  for (const Value& v : vals) {
    if (v.is_tensor()) {
      const Proxy& p = *v.proxy();
      upd(p.ndim() > 0 ? dim : zero, p.dtype);
    } else if (v.is_number()) {
      DType d = v.number_dtype();
      upd(wrapped, d == DType::f64 ? kDefaultFloat : d);
    } else {
      fail("{}: expected tensors or numbers, got {}", op, v.str());
    }
  }
  auto combine = [](std::optional<DType> higher,
                    std::optional<DType> lower) -> std::optional<DType> {
    if (!higher) return lower;
    if (!lower) return higher;
    if (is_float(*higher)) return higher;
    if (*higher == DType::b8 || is_float(*lower)) return promote_types(*higher, *lower);
    return higher;
  };
  auto r = combine(dim, combine(zero, wrapped));
  THUNDER_INTERNAL_CHECK(r.has_value(), "{}: no operands to promote", op);

  return *r;
}

Value maybe_convert(const Value& v, DType dtype) {
  if (v.is_tensor()) {
    if (v.proxy()->dtype == dtype) return v;
    return prims::convert_element_type(v, dtype);
  }
  if (v.is_number_proxy() || !v.is_number()) return v;
  // Literal numbers take the kind of the computation (2 -> 2.0 for floats).
  if (is_float(dtype)) return Value(v.to_double());
  if (is_bool(dtype)) return Value(v.to_double() != 0.0);
  if (v.kind() == Value::Kind::Bool) return Value(int64_t{v.as_bool()});
  return v;
}

std::vector<Value> elementwise_prep(const std::string& op, const std::vector<Value>& vals,
                                    Promotion promotion, DType* out_dtype) {
  DType compute = result_type(op, vals);
  DType result = compute;
  if (promotion == Promotion::IntToFloat && !is_float(compute)) compute = result = kDefaultFloat;
  if (promotion == Promotion::AlwaysBool) result = DType::b8;
  if (out_dtype) *out_dtype = result;
  std::vector<Value> out = maybe_broadcast(op, vals);
  for (Value& v : out) v = maybe_convert(v, compute);
  return out;
}

const Proxy& tensor_arg(const std::string& op, const Value& v, const char* name) {
  THUNDER_CHECK(v.is_tensor(), "{}: argument {} must be a tensor, got {}", op, name, v.str());
  return *v.proxy();
}

int64_t canonical_dim(const std::string& op, int64_t dim, int64_t rank) {
  int64_t r = rank == 0 ? 1 : rank;
  THUNDER_CHECK(dim >= -r && dim < r,
                "{}: dim {} is out of range for a tensor of rank {} (expected [{}, {}])", op, dim,
                rank, -r, r - 1);
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> canonical_dims(const std::string& op, const std::vector<int64_t>& dims,
                                    int64_t rank) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) {
    int64_t c = canonical_dim(op, d, rank);
    THUNDER_CHECK(std::find(out.begin(), out.end(), c) == out.end(),
                  "{}: dim {} appears more than once in {}", op, d, Value(dims).str());
    out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace thunder::ltorch::detail
