// ltorch elementwise ops: broadcasting and type promotion, then prims.
#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {
namespace {

using PrimUnary = Value (*)(const Value&);
using PrimBinary = Value (*)(const Value&, const Value&);

const uint32_t kElementwise = tag_bits({OpTag::ELEMENTWISE_OP});

void unary(const std::string& name, PrimUnary prim, Promotion promotion) {
  std::string id = "ltorch." + name;
  define(id, {"a"}, kElementwise, [id, prim, promotion](const OpArgs& a) -> Value {
    tensor_arg(id, a[0], "a");
    return prim(elementwise_prep(id, {a[0]}, promotion)[0]);
  });
}

void binary(const std::string& name, PrimBinary prim, Promotion promotion) {
  std::string id = "ltorch." + name;
  define(id, {"a", "b"}, kElementwise, [id, prim, promotion](const OpArgs& a) -> Value {
    THUNDER_CHECK(a[0].is_tensor() || a[1].is_tensor(),
                  "{}: expected a tensor operand, got {} and {}", id, a[0].str(), a[1].str());
    auto ops = elementwise_prep(id, {a[0], a[1]}, promotion);
    return prim(ops[0], ops[1]);
  });
}

bool is_bool_operand(const Value& v) {
  return v.is_tensor() ? is_bool(v.proxy()->dtype) : v.is_number() && is_bool(v.number_dtype());
}

// alpha * b in `dtype` (b and alpha already of its kind). A prim takes at most
// one number, so a number b is folded with a literal alpha, or else made a
// tensor of a's shape first.
Value scale(const Value& a, const Value& b, const Value& alpha, DType dtype) {
  if (b.is_tensor()) return prims::mul(b, alpha);
  if (!b.is_number_proxy() && !alpha.is_number_proxy()) {
    if (is_float(dtype)) return Value(b.to_double() * alpha.to_double());
    if (is_bool(dtype)) return Value(b.to_double() != 0 && alpha.to_double() != 0);
    auto as_i64 = [](const Value& v) {
      return v.kind() == Value::Kind::Int ? v.as_int() : static_cast<int64_t>(v.to_double());
    };
    // Wraps on overflow like the int64 arithmetic of the kernels.
    return Value(static_cast<int64_t>(static_cast<uint64_t>(as_i64(b)) *
                                      static_cast<uint64_t>(as_i64(alpha))));
  }
  const Proxy& t = *a.proxy();
  return prims::mul(prims::full(t.shape, b, t.device, dtype), alpha);
}

// add/sub with alpha: a + alpha * b. As in torch, bool subtraction is refused
// (logical_not / logical_xor are meant).
void add_like(const std::string& name, PrimBinary prim, bool refuses_bools) {
  std::string id = "ltorch." + name;
  define(
      id, {"a", "b", "alpha"}, kElementwise, [id, prim, refuses_bools](const OpArgs& a) -> Value {
        THUNDER_CHECK(a[0].is_tensor() || a[1].is_tensor(),
                      "{}: expected a tensor operand, got {} and {}", id, a[0].str(), a[1].str());
        THUNDER_CHECK(!refuses_bools || (!is_bool_operand(a[0]) && !is_bool_operand(a[1])),
                      "{}: subtraction with a bool operand ({} - {}) is not supported; use "
                      "logical_not() or logical_xor() instead",
                      id, a[0].str(), a[1].str());
        DType dtype;
        auto ops = elementwise_prep(id, {a[0], a[1]}, Promotion::Default, &dtype);
        const Value& alpha = a[2];
        THUNDER_CHECK(alpha.is_number(), "{}: alpha must be a number, got {}", id, alpha.str());
        THUNDER_CHECK(!is_bool(alpha.number_dtype()) || is_bool(dtype),
                      "{}: a bool alpha ({}) is only supported for bool results, not {}", id,
                      alpha.str(), long_name(dtype));
        if (!alpha.is_number_proxy()) {
          THUNDER_CHECK(is_float(dtype) || alpha.kind() != Value::Kind::Double,
                        "{}: alpha {} must be an integer for an {} result", id, alpha.str(),
                        long_name(dtype));
          if (alpha.to_double() == 1.0) return prim(ops[0], ops[1]);
        }
        return prim(ops[0], scale(ops[0], ops[1], maybe_convert(alpha, dtype), dtype));
      });
}

}  // namespace

void register_elementwise() {
  add_like("add", prims::add, /*refuses_bools=*/false);
  add_like("sub", prims::sub, /*refuses_bools=*/true);
  binary("mul", prims::mul, Promotion::Default);
  binary("div", prims::div, Promotion::IntToFloat);
  define("ltorch.pow", {"a", "b"}, kElementwise, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.pow";
    THUNDER_CHECK(a[0].is_tensor() || a[1].is_tensor(),
                  "{}: expected a tensor operand, got {} and {}", id, a[0].str(), a[1].str());
    // torch refuses a constant negative integer exponent for an integer base.
    if (a[0].is_tensor() && !is_float(a[0].proxy()->dtype) && a[1].kind() == Value::Kind::Int)
      THUNDER_CHECK(a[1].as_int() >= 0,
                    "{}: integers to negative integer powers are not allowed ({} ** {})", id,
                    long_name(a[0].proxy()->dtype), a[1].str());
    DType dtype;
    auto ops = elementwise_prep(id, {a[0], a[1]}, Promotion::Default, &dtype);
    THUNDER_CHECK(!is_bool(dtype), "{}: not supported for bool operands ({} and {})", id,
                  a[0].str(), a[1].str());
    return prims::pow(ops[0], ops[1]);
  });
  binary("maximum", prims::maximum, Promotion::Default);
  binary("minimum", prims::minimum, Promotion::Default);
  binary("eq", prims::eq, Promotion::AlwaysBool);
  binary("ne", prims::ne, Promotion::AlwaysBool);
  binary("lt", prims::lt, Promotion::AlwaysBool);
  binary("le", prims::le, Promotion::AlwaysBool);
  binary("gt", prims::gt, Promotion::AlwaysBool);
  binary("ge", prims::ge, Promotion::AlwaysBool);
  binary("logical_and", prims::logical_and, Promotion::AlwaysBool);
  binary("logical_or", prims::logical_or, Promotion::AlwaysBool);

  for (auto [name, prim] : {std::pair<const char*, PrimUnary>{"neg", prims::neg},
                            std::pair<const char*, PrimUnary>{"abs", prims::abs}}) {
    std::string id = std::string("ltorch.") + name;
    define(id, {"a"}, kElementwise, [id, prim = prim](const OpArgs& a) -> Value {
      const Proxy& p = tensor_arg(id, a[0], "a");
      THUNDER_CHECK(!is_bool(p.dtype), "{}: not supported for bool tensors (use logical_not)", id);
      return prim(a[0]);
    });
  }
  unary("logical_not", prims::logical_not, Promotion::AlwaysBool);
  unary("exp", prims::exp, Promotion::IntToFloat);
  unary("log", prims::log, Promotion::IntToFloat);
  unary("log1p", prims::log1p, Promotion::IntToFloat);
  unary("sqrt", prims::sqrt, Promotion::IntToFloat);
  unary("rsqrt", prims::rsqrt, Promotion::IntToFloat);
  unary("sin", prims::sin, Promotion::IntToFloat);
  unary("cos", prims::cos, Promotion::IntToFloat);
  unary("tanh", prims::tanh, Promotion::IntToFloat);
  unary("sigmoid", prims::sigmoid, Promotion::IntToFloat);
  unary("erf", prims::erf, Promotion::IntToFloat);
  unary("reciprocal", prims::reciprocal, Promotion::IntToFloat);

  define("ltorch.relu", {"a"}, kElementwise, [](const OpArgs& a) -> Value {
    const Proxy& p = tensor_arg("ltorch.relu", a[0], "a");
    THUNDER_CHECK(!is_bool(p.dtype), "ltorch.relu: not defined for bool tensors");
    return prims::maximum(a[0], is_float(p.dtype) ? Value(0.0) : Value(int64_t{0}));
  });
  define("ltorch.silu", {"a"}, kElementwise, [](const OpArgs& a) -> Value {
    const Proxy& p = tensor_arg("ltorch.silu", a[0], "a");
    THUNDER_CHECK(is_float(p.dtype), "ltorch.silu: expected a floating-point tensor, got {}",
                  long_name(p.dtype));
    return prims::mul(a[0], prims::sigmoid(a[0]));
  });
  define("ltorch.clamp", {"a", "min", "max"}, kElementwise, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.clamp";
    tensor_arg(id, a[0], "a");
    THUNDER_CHECK(!a[1].is_none() || !a[2].is_none(),
                  "ltorch.clamp: at least one of min and max must not be None");
    std::vector<Value> vals{a[0]};
    for (int i : {1, 2})
      if (!a[i].is_none()) vals.push_back(a[i]);
    DType dtype;
    auto ops = elementwise_prep(id, vals, Promotion::Default, &dtype);
    THUNDER_CHECK(!is_bool(dtype), "ltorch.clamp: not supported for bool results (a is {})",
                  long_name(a[0].proxy()->dtype));
    Value r = ops[0];
    size_t k = 1;
    if (!a[1].is_none()) r = prims::maximum(r, ops[k++]);
    if (!a[2].is_none()) r = prims::minimum(r, ops[k++]);
    return r;
  });
  define("ltorch.where", {"pred", "a", "b"}, kElementwise, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.where";
    const Proxy& pred = tensor_arg(id, a[0], "pred");
    THUNDER_CHECK(pred.dtype == DType::b8, "ltorch.where: pred must be a bool tensor, got {}",
                  long_name(pred.dtype));
    DType dtype = result_type(id, {a[1], a[2]});
    auto ops = maybe_broadcast(id, {a[0], a[1], a[2]});
    // Broadcast number branches too, so the prim sees at least one tensor value.
    if (!ops[1].is_tensor() && !ops[2].is_tensor())
      ops[1] = prims::full(ops[0].proxy()->shape, maybe_convert(ops[1], dtype),
                           ops[0].proxy()->device, dtype);
    return prims::where(ops[0], maybe_convert(ops[1], dtype), maybe_convert(ops[2], dtype));
  });
}

}  // namespace detail

#define UNARY(name) \
  Value name(const Value& a) { THUNDER_LTORCH_CALL("ltorch." #name, a); }
#define BINARY(name) \
  Value name(const Value& a, const Value& b) { THUNDER_LTORCH_CALL("ltorch." #name, a, b); }

UNARY(neg)
UNARY(abs)
UNARY(exp) UNARY(log) UNARY(log1p) UNARY(sqrt) UNARY(rsqrt) UNARY(sin) UNARY(cos) UNARY(tanh)
    UNARY(sigmoid) UNARY(relu) UNARY(silu) UNARY(erf) UNARY(reciprocal) UNARY(logical_not)
        BINARY(mul) BINARY(div) BINARY(pow) BINARY(maximum) BINARY(minimum) BINARY(eq) BINARY(ne)
            BINARY(lt) BINARY(le) BINARY(gt) BINARY(ge) BINARY(logical_and) BINARY(logical_or)
#undef UNARY
#undef BINARY

                Value add(const Value& a, const Value& b, const Value& alpha) {
  THUNDER_LTORCH_CALL("ltorch.add", a, b, alpha);
}
Value sub(const Value& a, const Value& b, const Value& alpha) {
  THUNDER_LTORCH_CALL("ltorch.sub", a, b, alpha);
}
Value clamp(const Value& a, const Value& min, const Value& max) {
  THUNDER_LTORCH_CALL("ltorch.clamp", a, min, max);
}
Value where(const Value& pred, const Value& a, const Value& b) {
  THUNDER_LTORCH_CALL("ltorch.where", pred, a, b);
}

}  // namespace thunder::ltorch
