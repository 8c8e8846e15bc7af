// Elementwise prims: strict metas (one shape, one dtype, one device).
#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {

enum class Allowed { Any, Float, IntOrBool };

void check_dtype(const OpArgs& a, size_t i, DType d, Allowed allowed) {
  if (allowed == Allowed::Float && !is_float(d))
    fail("{}: expected a floating-point tensor for {}, got {}", a.symbol().id, a.param_name(i),
         long_name(d));
  if (allowed == Allowed::IntOrBool && is_float(d))
    fail("{}: expected an integer or bool tensor for {}, got {}", a.symbol().id, a.param_name(i),
         long_name(d));
}

// The tensor operands must agree in shape, dtype and device; numbers may not be
// of a higher kind than the tensors. Returns the first tensor operand.
const Proxy& check_operands(const OpArgs& a, size_t first, Allowed allowed) {
  const Proxy* ref = nullptr;
  size_t ref_i = 0;
  for (size_t i = first; i < a.size(); ++i) {
    const Value& v = a[i];
    if (v.is_tensor()) {
      const Proxy& p = *v.proxy();
      if (!ref) {
        ref = &p;
        ref_i = i;
        continue;
      }
      THUNDER_CHECK(p.shape == ref->shape, "{}: shapes {} ({}) and {} ({}) must be equal",
                    a.symbol().id, shape_str(ref->shape), a.param_name(ref_i), shape_str(p.shape),
                    a.param_name(i));
      THUNDER_CHECK(p.dtype == ref->dtype, "{}: dtypes {} ({}) and {} ({}) must be equal",
                    a.symbol().id, long_name(ref->dtype), a.param_name(ref_i), long_name(p.dtype),
                    a.param_name(i));
      THUNDER_CHECK(p.device == ref->device, "{}: devices {} ({}) and {} ({}) must be equal",
                    a.symbol().id, ref->device.str(), a.param_name(ref_i), p.device.str(),
                    a.param_name(i));
    } else if (!v.is_number()) {
      fail("{}: argument {} must be a tensor or a number, got {}", a.symbol().id, a.param_name(i),
           v.str());
    }
  }
  THUNDER_CHECK(ref != nullptr, "{}: expected at least one tensor operand, got only numbers",
                a.symbol().id);
  check_dtype(a, ref_i, ref->dtype, allowed);
  for (size_t i = first; i < a.size(); ++i) {
    if (!a[i].is_number()) continue;
    DType nd = a[i].number_dtype();
    THUNDER_CHECK(static_cast<int>(kind_of(nd)) <= static_cast<int>(kind_of(ref->dtype)),
                  "{}: number {} ({}) is of a higher kind than the tensor dtype {}", a.symbol().id,
                  a[i].str(), a.param_name(i), long_name(ref->dtype));
  }
  return *ref;
}

void unary(const char* id, Allowed allowed, bool bool_out = false) {
  define(id, {"a"}, tag_bits({OpTag::ELEMENTWISE_OP}),
         [allowed, bool_out](const OpArgs& a) -> Value {
           a.tensor(0);
           const Proxy& t = check_operands(a, 0, allowed);
           return new_tensor(t.shape, bool_out ? DType::b8 : t.dtype, t.device);
         });
}

void binary(const char* id, Allowed allowed, bool bool_out = false) {
  define(id, {"a", "b"}, tag_bits({OpTag::ELEMENTWISE_OP}),
         [allowed, bool_out](const OpArgs& a) -> Value {
           THUNDER_CHECK(a.size() == 2, "{}: expected 2 arguments, got {}", a.symbol().id,
                         a.size());
           const Proxy& t = check_operands(a, 0, allowed);
           return new_tensor(t.shape, bool_out ? DType::b8 : t.dtype, t.device);
         });
}

}  // namespace

void register_elementwise() {
  unary("prims.neg", Allowed::Any);
  unary("prims.abs", Allowed::Any);
  for (const char* id :
       {"prims.exp", "prims.log", "prims.log1p", "prims.sqrt", "prims.rsqrt", "prims.sin",
        "prims.cos", "prims.tanh", "prims.erf", "prims.reciprocal", "prims.sigmoid"})
    unary(id, Allowed::Float);
  unary("prims.bitwise_not", Allowed::IntOrBool);
  unary("prims.logical_not", Allowed::Any, /*bool_out=*/true);

  for (const char* id : {"prims.add", "prims.sub", "prims.mul", "prims.div", "prims.pow",
                         "prims.maximum", "prims.minimum"})
    binary(id, Allowed::Any);
  for (const char* id : {"prims.bitwise_and", "prims.bitwise_or", "prims.bitwise_xor"})
    binary(id, Allowed::IntOrBool);
  for (const char* id : {"prims.eq", "prims.ne", "prims.lt", "prims.le", "prims.gt", "prims.ge",
                         "prims.logical_and", "prims.logical_or"})
    binary(id, Allowed::Any, /*bool_out=*/true);

  define("prims.where", {"pred", "a", "b"}, tag_bits({OpTag::ELEMENTWISE_OP}),
         [](const OpArgs& a) -> Value {
           const Proxy& pred = a.tensor(0);
           THUNDER_CHECK(pred.dtype == DType::b8, "prims.where: pred must be bool, got {}",
                         long_name(pred.dtype));
           THUNDER_CHECK(a.size() == 3, "prims.where: expected 3 arguments, got {}", a.size());
           THUNDER_CHECK(a[1].is_tensor() || a[2].is_tensor(),
                         "prims.where: a or b must be a tensor, got {} and {}", a[1].str(),
                         a[2].str());
           const Proxy& t = check_operands(a, 1, Allowed::Any);
           THUNDER_CHECK(t.shape == pred.shape,
                         "prims.where: pred shape {} and value shape {} "
                         "must be equal",
                         shape_str(pred.shape), shape_str(t.shape));
           THUNDER_CHECK(t.device == pred.device, "prims.where: devices {} and {} must be equal",
                         pred.device.str(), t.device.str());
           return new_tensor(t.shape, t.dtype, t.device);
         });

  define("prims.convert_element_type", {"a", "dtype"}, tag_bits({OpTag::ELEMENTWISE_OP}),
         [](const OpArgs& a) -> Value {
           const Proxy& t = a.tensor(0);
           return new_tensor(t.shape, a.dtype(1), t.device);
         });
}

}  // namespace detail

#define UNARY(name) \
  Value name(const Value& a) { THUNDER_PRIM_CALL("prims." #name, a); }
#define BINARY(name) \
  Value name(const Value& a, const Value& b) { THUNDER_PRIM_CALL("prims." #name, a, b); }

UNARY(neg)
UNARY(abs)
UNARY(exp) UNARY(log) UNARY(log1p) UNARY(sqrt) UNARY(rsqrt) UNARY(sin) UNARY(cos) UNARY(tanh)
    UNARY(erf) UNARY(reciprocal) UNARY(sigmoid) UNARY(bitwise_not) UNARY(logical_not) BINARY(add)
        BINARY(sub) BINARY(mul) BINARY(div) BINARY(pow) BINARY(maximum) BINARY(minimum)
            BINARY(bitwise_and) BINARY(bitwise_or) BINARY(bitwise_xor) BINARY(eq) BINARY(ne)
                BINARY(lt) BINARY(le) BINARY(gt) BINARY(ge) BINARY(logical_and) BINARY(logical_or)
#undef UNARY
#undef BINARY

                    Value where(const Value& pred, const Value& a, const Value& b) {
  THUNDER_PRIM_CALL("prims.where", pred, a, b);
}

Value convert_element_type(const Value& a, DType dtype) {
  THUNDER_PRIM_CALL("prims.convert_element_type", a, dtype);
}

}  // namespace thunder::prims
