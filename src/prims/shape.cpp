// Shape prims: broadcast_in_dim, reshape, transpose, slice, squeeze, cat, pad.
#include <algorithm>

#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {
const uint32_t kShape = tag_bits({OpTag::SHAPE_OP});
}

void register_shape() {
  define("prims.broadcast_in_dim", {"a", "shape", "broadcast_dimensions"}, kShape,
         [](const OpArgs& a) -> Value {
           const Proxy& t = a.tensor(0);
           const Shape& shape = a.ints(1);
           const auto& dims = a.ints(2);
           THUNDER_CHECK(static_cast<int64_t>(dims.size()) == t.ndim(),
                         "prims.broadcast_in_dim: {} broadcast_dimensions for a tensor of rank {}",
                         dims.size(), t.ndim());
           for (size_t i = 0; i < dims.size(); ++i) {
             THUNDER_CHECK(dims[i] >= 0 && dims[i] < static_cast<int64_t>(shape.size()) &&
                               (i == 0 || dims[i] > dims[i - 1]),
                           "prims.broadcast_in_dim: broadcast_dimensions {} must be increasing "
                           "and within rank {}",
                           Value(dims).str(), shape.size());
             THUNDER_CHECK(t.shape[i] == 1 || t.shape[i] == shape[dims[i]],
                           "prims.broadcast_in_dim: input dim {} of size {} cannot broadcast to "
                           "size {}",
                           i, t.shape[i], shape[dims[i]]);
           }
           for (int64_t s : shape)
             THUNDER_CHECK(s >= 0, "prims.broadcast_in_dim: negative size in shape {}",
                           shape_str(shape));
           return new_tensor(shape, t.dtype, t.device);
         });

  define("prims.reshape", {"a", "shape"}, kShape, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    const Shape& shape = a.ints(1);
    for (int64_t s : shape)
      THUNDER_CHECK(s >= 0, "prims.reshape: negative size in shape {}", shape_str(shape));
    THUNDER_CHECK(numel(shape) == t.numel(),
                  "prims.reshape: cannot reshape {} ({} elements) to {} ({} elements)",
                  shape_str(t.shape), t.numel(), shape_str(shape), numel(shape));
    return new_tensor(shape, t.dtype, t.device);
  });

  define("prims.transpose", {"a", "permutation"}, kShape, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    const auto& perm = a.ints(1);
    THUNDER_CHECK(static_cast<int64_t>(perm.size()) == t.ndim(),
                  "prims.transpose: permutation {} has {} entries for a tensor of rank {}",
                  Value(perm).str(), perm.size(), t.ndim());
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      THUNDER_CHECK(sorted[i] == static_cast<int64_t>(i),
                    "prims.transpose: {} is not a permutation of 0..{}", Value(perm).str(),
                    t.ndim() - 1);
    Shape out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = t.shape[perm[i]];
    return new_tensor(out, t.dtype, t.device);
  });

  define("prims.slice", {"a", "start_indices", "end_indices", "strides"}, kShape,
         [](const OpArgs& a) -> Value {
           const Proxy& t = a.tensor(0);
           const auto &start = a.ints(1), &end = a.ints(2), &strides = a.ints(3);
           THUNDER_CHECK(static_cast<int64_t>(start.size()) == t.ndim() &&
                             start.size() == end.size() && end.size() == strides.size(),
                         "prims.slice: start {}, end {} and strides {} need {} entries each",
                         Value(start).str(), Value(end).str(), Value(strides).str(), t.ndim());
           Shape out(start.size());
           for (size_t i = 0; i < start.size(); ++i) {
             THUNDER_CHECK(
                 0 <= start[i] && start[i] <= end[i] && end[i] <= t.shape[i] && strides[i] >= 1,
                 "prims.slice: dim {}: start {}, end {}, stride {} invalid for size {}", i,
                 start[i], end[i], strides[i], t.shape[i]);
             out[i] = (end[i] - start[i] + strides[i] - 1) / strides[i];
           }
           return new_tensor(out, t.dtype, t.device);
         });

  define("prims.squeeze", {"a", "dims"}, kShape, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    const auto& dims = a.ints(1);
    Shape out;
    for (int64_t i = 0; i < t.ndim(); ++i) {
      bool drop = std::find(dims.begin(), dims.end(), i) != dims.end();
      if (drop)
        THUNDER_CHECK(t.shape[i] == 1, "prims.squeeze: dim {} has size {}, not 1", i, t.shape[i]);
      else
        out.push_back(t.shape[i]);
    }
    for (int64_t d : dims)
      THUNDER_CHECK(d >= 0 && d < t.ndim(), "prims.squeeze: dim {} out of range for rank {}", d,
                    t.ndim());
    return new_tensor(out, t.dtype, t.device);
  });

  define("prims.cat", {"tensors", "dim"}, kShape, [](const OpArgs& a) -> Value {
    const auto& ts = a.list(0);
    int64_t dim = a.integer(1);
    THUNDER_CHECK(!ts.empty(), "prims.cat: expected at least one tensor");
    for (const Value& v : ts)
      THUNDER_CHECK(v.is_tensor(), "prims.cat: expected tensors, got {}", v.str());
    const Proxy& first = *ts[0].proxy();
    THUNDER_CHECK(dim >= 0 && dim < first.ndim(), "prims.cat: dim {} out of range for rank {}", dim,
                  first.ndim());
    Shape out = first.shape;
    for (size_t k = 1; k < ts.size(); ++k) {
      const Proxy& p = *ts[k].proxy();
      THUNDER_CHECK(p.dtype == first.dtype, "prims.cat: dtypes {} and {} must be equal",
                    long_name(first.dtype), long_name(p.dtype));
      THUNDER_CHECK(p.device == first.device, "prims.cat: devices {} and {} must be equal",
                    first.device.str(), p.device.str());
      THUNDER_CHECK(p.ndim() == first.ndim(), "prims.cat: ranks {} and {} must be equal",
                    first.ndim(), p.ndim());
      for (int64_t i = 0; i < p.ndim(); ++i)
        if (i != dim)
          THUNDER_CHECK(p.shape[i] == first.shape[i],
                        "prims.cat: shapes {} and {} differ outside dim {}", shape_str(first.shape),
                        shape_str(p.shape), dim);
      out[dim] += p.shape[dim];
    }
    return new_tensor(out, first.dtype, first.device);
  });

  define("prims.pad", {"a", "padding_value", "padding_config"}, kShape,
         [](const OpArgs& a) -> Value {
           const Proxy& t = a.tensor(0);
           THUNDER_CHECK(a[1].is_number(), "prims.pad: padding_value must be a number, got {}",
                         a[1].str());
           const auto& cfg = a.ints(2);
           THUNDER_CHECK(static_cast<int64_t>(cfg.size()) == 3 * t.ndim(),
                         "prims.pad: padding_config needs 3 entries per dim ({}), got {}",
                         3 * t.ndim(), cfg.size());
           Shape out(t.ndim());
           for (int64_t i = 0; i < t.ndim(); ++i) {
             int64_t lo = cfg[3 * i], hi = cfg[3 * i + 1], interior = cfg[3 * i + 2];
             THUNDER_CHECK(interior >= 0, "prims.pad: negative interior padding {}", interior);
             int64_t n = t.shape[i];
             out[i] = lo + hi + n + (n > 0 ? (n - 1) * interior : 0);
             THUNDER_CHECK(out[i] >= 0, "prims.pad: dim {} would have negative size {}", i, out[i]);
           }
           return new_tensor(out, t.dtype, t.device);
         });
}

}  // namespace detail

Value broadcast_in_dim(const Value& a, const Shape& shape, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.broadcast_in_dim", a, shape, dims);
}
Value reshape(const Value& a, const Shape& shape) { THUNDER_PRIM_CALL("prims.reshape", a, shape); }
Value transpose(const Value& a, const std::vector<int64_t>& perm) {
  THUNDER_PRIM_CALL("prims.transpose", a, perm);
}
Value slice(const Value& a, const std::vector<int64_t>& start, const std::vector<int64_t>& end,
            const std::vector<int64_t>& strides) {
  THUNDER_PRIM_CALL("prims.slice", a, start, end, strides);
}
Value squeeze(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_PRIM_CALL("prims.squeeze", a, dims);
}
Value cat(const std::vector<Value>& tensors, int64_t dim) {
  THUNDER_PRIM_CALL("prims.cat", Value(tensors), dim);
}
Value pad(const Value& a, const Value& padding_value, const std::vector<int64_t>& config) {
  THUNDER_PRIM_CALL("prims.pad", a, padding_value, config);
}

}  // namespace thunder::prims
