// Random prims. uniform and randn draw from libtorch's stateful generator.
// The stateless pair that replace_uniform turns uniform into:
// get_and_update_rng_state (the one stateful step: the key and first counter
// of a draw) and uniform_philox (a pure function of them, see
// thunder/core/philox.h), which a backward may recompute instead of saving.
#include <cmath>

#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {

// The draw's bounds: numbers, and for literals a non-empty finite range.
void check_range(const char* op, const OpArgs& a, size_t lo, size_t hi) {
  THUNDER_CHECK(a[lo].is_number() && a[hi].is_number(),
                "{}: minval and maxval must be numbers, got {} and {}", op, a[lo].str(),
                a[hi].str());
  if (a[lo].is_proxy() || a[hi].is_proxy()) return;  // known at run time only
  double l = a.number(lo), h = a.number(hi);
  THUNDER_CHECK(std::isfinite(l) && std::isfinite(h),
                "{}: minval and maxval must be finite, got {} and {}", op, a[lo].str(),
                a[hi].str());
  THUNDER_CHECK(l < h, "{}: minval must be less than maxval, got minval={} and maxval={}", op,
                a[lo].str(), a[hi].str());
}

void check_float_dtype(const char* op, DType d) {
  THUNDER_CHECK(is_float(d), "{}: dtype must be floating, got {}", op, long_name(d));
}

// A seed or offset: an int, or the cpu i64[] tensor get_and_update_rng_state makes.
void check_state_word(const char* op, const OpArgs& a, size_t i) {
  const Value& v = a[i];
  bool ok = v.kind() == Value::Kind::Int || (v.is_number_proxy() && is_integer(v.number_dtype()));
  if (v.is_tensor()) {
    const Proxy& p = *v.proxy();
    ok = p.dtype == DType::i64 && p.shape.empty() && p.device == Device::cpu();
  }
  THUNDER_CHECK(ok, "{}: {} must be an int or a cpu int64 tensor of shape [], got {}", op,
                a.param_name(i),
                v.is_tensor() ? v.str() + ": \"" + v.proxy()->type_str() + "\"" : v.str());
}

}  // namespace

void register_random() {
  define("prims.uniform", {"shape", "minval", "maxval", "device", "dtype"},
         tag_bits({OpTag::RANDOM_OP}), [](const OpArgs& a) -> Value {
           check_shape("prims.uniform", a.ints(0));
           check_float_dtype("prims.uniform", a.dtype(4));
           check_range("prims.uniform", a, 1, 2);
           return new_tensor(a.ints(0), a.dtype(4), a[3].as_device());
         });
  define("prims.randn", {"shape", "device", "dtype"}, tag_bits({OpTag::RANDOM_OP}),
         [](const OpArgs& a) -> Value {
           check_shape("prims.randn", a.ints(0));
           check_float_dtype("prims.randn", a.dtype(2));
           return new_tensor(a.ints(0), a.dtype(2), a[1].as_device());
         });
  // DONT_DCE: the keys and counters a program takes must not depend on which
  // later passes dropped a dead draw, or fused and unfused runs would differ.
  define(
      "prims.get_and_update_rng_state", {"device", "counters"},
      tag_bits({OpTag::RANDOM_OP, OpTag::DONT_DCE}), [](const OpArgs& a) -> Value {
        const char* op = "prims.get_and_update_rng_state";
        THUNDER_CHECK(a[0].kind() == Value::Kind::Device, "{}: device must be a device, got {}", op,
                      a[0].str());
        int64_t n = a.integer(1);
        THUNDER_CHECK(n >= 0, "{}: counters must be non-negative, got {}", op, n);
        return Value(std::vector<Value>{new_named_tensor("seed", {}, DType::i64, Device::cpu()),
                                        new_named_tensor("offset", {}, DType::i64, Device::cpu())});
      });
  // Not RANDOM_OP: pure (PURE_FACTORY), so passes may recompute, move or deduplicate it.
  define("prims.uniform_philox", {"shape", "minval", "maxval", "seed", "offset", "device", "dtype"},
         tag_bits({OpTag::PURE_FACTORY}), [](const OpArgs& a) -> Value {
           const char* op = "prims.uniform_philox";
           check_shape(op, a.ints(0));
           check_float_dtype(op, a.dtype(6));
           check_range(op, a, 1, 2);
           check_state_word(op, a, 3);
           check_state_word(op, a, 4);
           return new_tensor(a.ints(0), a.dtype(6), a[5].as_device());
         });
}

}  // namespace detail

Value uniform(const Shape& shape, const Value& lo, const Value& hi, Device device, DType dtype) {
  THUNDER_PRIM_CALL("prims.uniform", shape, lo, hi, device, dtype);
}
Value randn(const Shape& shape, Device device, DType dtype) {
  THUNDER_PRIM_CALL("prims.randn", shape, device, dtype);
}
Value get_and_update_rng_state(Device device, int64_t counters) {
  THUNDER_PRIM_CALL("prims.get_and_update_rng_state", device, counters);
}
Value uniform_philox(const Shape& shape, const Value& lo, const Value& hi, const Value& seed,
                     const Value& offset, Device device, DType dtype) {
  THUNDER_PRIM_CALL("prims.uniform_philox", shape, lo, hi, seed, offset, device, dtype);
}

}  // namespace thunder::prims
