// Linear algebra and nn prims: matmul, linear, embedding. Strict metas: one
// dtype, one device, no batch broadcasting (ltorch.matmul broadcasts first).
#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {

const uint32_t kMatmul = tag_bits({OpTag::MATMUL_OP});

// Tensor operands must share dtype and device; matmul-like prims compute in floats only.
void check_same(const OpArgs& a, const Proxy& x, size_t xi, const Proxy& y, size_t yi) {
  THUNDER_CHECK(x.dtype == y.dtype, "{}: dtypes {} ({}) and {} ({}) must be equal", a.symbol().id,
                long_name(x.dtype), a.param_name(xi), long_name(y.dtype), a.param_name(yi));
  THUNDER_CHECK(x.device == y.device, "{}: devices {} ({}) and {} ({}) must be equal",
                a.symbol().id, x.device.str(), a.param_name(xi), y.device.str(), a.param_name(yi));
}

void check_float(const OpArgs& a, const Proxy& x, size_t i) {
  THUNDER_CHECK(is_float(x.dtype), "{}: expected a floating-point tensor for {}, got {}",
                a.symbol().id, a.param_name(i), long_name(x.dtype));
}

Value matmul_meta(const OpArgs& a) {
  const Proxy& x = a.tensor(0);
  const Proxy& y = a.tensor(1);
  check_same(a, x, 0, y, 1);
  check_float(a, x, 0);
  THUNDER_CHECK(x.ndim() >= 1 && y.ndim() >= 1,
                "prims.matmul: both arguments must be at least 1-D, got shapes {} and {}",
                shape_str(x.shape), shape_str(y.shape));
  // The contracted sizes: x's last dim against y's first (1-D) or second-to-last dim.
  int64_t kx = x.shape.back();
  int64_t ky = y.ndim() == 1 ? y.shape[0] : y.shape[y.ndim() - 2];
  THUNDER_CHECK(kx == ky, "prims.matmul: shapes {} and {} cannot be multiplied ({} != {})",
                shape_str(x.shape), shape_str(y.shape), kx, ky);
  Shape out;
  if (x.ndim() >= 2 && y.ndim() >= 2) {
    Shape bx(x.shape.begin(), x.shape.end() - 2), by(y.shape.begin(), y.shape.end() - 2);
    THUNDER_CHECK(bx == by, "prims.matmul: batch dims {} and {} of shapes {} and {} must be equal",
                  shape_str(bx), shape_str(by), shape_str(x.shape), shape_str(y.shape));
    out = bx;
    out.push_back(x.shape[x.ndim() - 2]);
    out.push_back(y.shape.back());
  } else if (x.ndim() >= 2) {  // [..., m, k] @ [k] -> [..., m]
    out.assign(x.shape.begin(), x.shape.end() - 1);
  } else if (y.ndim() >= 2) {  // [k] @ [..., k, n] -> [..., n]
    out.assign(y.shape.begin(), y.shape.end() - 2);
    out.push_back(y.shape.back());
  }  // [k] @ [k] -> []
  return new_tensor(out, x.dtype, x.device);
}

Value linear_meta(const OpArgs& a) {
  const Proxy& x = a.tensor(0);
  const Proxy& w = a.tensor(1);
  check_same(a, x, 0, w, 1);
  check_float(a, x, 0);
  THUNDER_CHECK(x.ndim() >= 1, "prims.linear: input a must be at least 1-D, got shape {}",
                shape_str(x.shape));
  THUNDER_CHECK(w.ndim() == 2, "prims.linear: weight w must be 2-D, got shape {}",
                shape_str(w.shape));
  THUNDER_CHECK(x.shape.back() == w.shape[1],
                "prims.linear: shapes {} and {} cannot be multiplied ({} != {})",
                shape_str(x.shape), shape_str(w.shape), x.shape.back(), w.shape[1]);
  if (!a[2].is_none()) {
    const Proxy& b = a.tensor(2);
    check_same(a, x, 0, b, 2);
    THUNDER_CHECK(b.shape == Shape{w.shape[0]},
                  "prims.linear: bias must have shape [{}] (weight {}), got {}", w.shape[0],
                  shape_str(w.shape), shape_str(b.shape));
  }
  Shape out(x.shape.begin(), x.shape.end() - 1);
  out.push_back(w.shape[0]);
  return new_tensor(out, x.dtype, x.device);
}

Value embedding_meta(const OpArgs& a) {
  const Proxy& idx = a.tensor(0);
  const Proxy& w = a.tensor(1);
  THUNDER_CHECK(idx.dtype == DType::i64 || idx.dtype == DType::i32,
                "prims.embedding: indices must be int64 or int32, got {}", long_name(idx.dtype));
  THUNDER_CHECK(w.ndim() == 2, "prims.embedding: weight must be 2-D, got shape {}",
                shape_str(w.shape));
  THUNDER_CHECK(idx.device == w.device,
                "prims.embedding: devices {} (indices) and {} (weight) "
                "must be equal",
                idx.device.str(), w.device.str());
  Shape out = idx.shape;
  out.push_back(w.shape[1]);
  return new_tensor(out, w.dtype, w.device);
}

}  // namespace

void register_linalg() {
  define("prims.matmul", {"a", "b"}, kMatmul, matmul_meta);
  define("prims.linear", {"a", "w", "bias"}, kMatmul, linear_meta);
  define("prims.embedding", {"indices", "weight"}, 0, embedding_meta);
}

}  // namespace detail

Value matmul(const Value& a, const Value& b) { THUNDER_PRIM_CALL("prims.matmul", a, b); }
Value linear(const Value& a, const Value& w, const Value& bias) {
  THUNDER_PRIM_CALL("prims.linear", a, w, bias);
}
Value embedding(const Value& indices, const Value& weight) {
  THUNDER_PRIM_CALL("prims.embedding", indices, weight);
}

}  // namespace thunder::prims
