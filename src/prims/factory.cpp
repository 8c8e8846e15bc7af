// Factory prims: full, iota and empty (random draws are in random.cpp).
#include "prim_util.h"

namespace thunder::prims {
namespace detail {
void register_factory() {
  // full and iota are PURE_FACTORY (cheap to recompute); empty is not: its
  // contents are whatever the memory held.
  define("prims.full", {"shape", "fill_value", "device", "dtype"}, tag_bits({OpTag::PURE_FACTORY}),
         [](const OpArgs& a) -> Value {
           check_shape("prims.full", a.ints(0));
           THUNDER_CHECK(a[1].is_number(), "prims.full: fill_value must be a number, got {}",
                         a[1].str());
           return new_tensor(a.ints(0), a.dtype(3), a[2].as_device());
         });
  define("prims.iota", {"length", "start", "step", "device", "dtype"},
         tag_bits({OpTag::PURE_FACTORY}), [](const OpArgs& a) -> Value {
           int64_t n = a.integer(0);
           THUNDER_CHECK(n >= 0, "prims.iota: length must be non-negative, got {}", n);
           THUNDER_CHECK(a.integer(2) != 0, "prims.iota: step must not be 0");
           THUNDER_CHECK(!is_bool(a.dtype(4)), "prims.iota: dtype must not be bool");
           return new_tensor({n}, a.dtype(4), a[3].as_device());
         });
  define("prims.empty", {"shape", "device", "dtype"}, 0, [](const OpArgs& a) -> Value {
    check_shape("prims.empty", a.ints(0));
    return new_tensor(a.ints(0), a.dtype(2), a[1].as_device());
  });
}

}  // namespace detail

Value full(const Shape& shape, const Value& fill, Device device, DType dtype) {
  THUNDER_PRIM_CALL("prims.full", shape, fill, device, dtype);
}
Value iota(int64_t length, int64_t start, int64_t step, Device device, DType dtype) {
  THUNDER_PRIM_CALL("prims.iota", length, start, step, device, dtype);
}
Value empty(const Shape& shape, Device device, DType dtype) {
  THUNDER_PRIM_CALL("prims.empty", shape, device, dtype);
}

}  // namespace thunder::prims
