// ltorch factories: full, zeros, ones, empty, rand, randn and arange, with
// torch's checks and arange's length rule, decomposed into factory prims.
#include <cmath>

#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {
namespace {

void check_shape(const std::string& op, const std::vector<int64_t>& shape) {
  for (int64_t s : shape)
    THUNDER_CHECK(s >= 0, "{}: negative size {} in shape {}", op, s, shape_str(shape));
}

// The literal of `dtype`'s kind for a small integer (0 -> False / 0 / 0.0).
Value typed_literal(int64_t v, DType dtype) {
  if (is_bool(dtype)) return Value(v != 0);
  if (is_float(dtype)) return Value(static_cast<double>(v));
  return Value(v);
}

// shape, device, dtype as positions `first`.. of a factory's arguments.
struct FactoryArgs {
  std::vector<int64_t> shape;
  Device device;
  DType dtype;
};
FactoryArgs factory_args(const OpArgs& a, size_t shape_i, size_t device_i, size_t dtype_i) {
  FactoryArgs f{a.ints(shape_i), Device(), a.dtype(dtype_i)};
  THUNDER_CHECK(a[device_i].kind() == Value::Kind::Device, "{}: device must be a device, got {}",
                a.symbol().id, a[device_i].str());
  f.device = a[device_i].as_device();
  check_shape(a.symbol().id, f.shape);
  return f;
}

void define_filled(const char* id, int64_t fill) {
  define(id, {"shape", "device", "dtype"}, 0, [fill](const OpArgs& a) -> Value {
    FactoryArgs f = factory_args(a, 0, 1, 2);
    return prims::full(f.shape, typed_literal(fill, f.dtype), f.device, f.dtype);
  });
}

// A constant number for arange (its value decides the output's length).
double arange_number(const OpArgs& a, size_t i) {
  const Value& v = a[i];
  THUNDER_CHECK(v.is_number(), "ltorch.arange: {} must be a number, got {}", a.param_name(i),
                v.str());
  THUNDER_CHECK(!v.is_number_proxy(),
                "ltorch.arange: {} must be a constant number (the output's length depends on it), "
                "got the runtime number {}",
                a.param_name(i), v.str());
  return v.to_double();
}

// torch.arange's checks, length and values. Integer dtypes truncate start,
// end and step to int64 first (as ATen's accumulate type does); int64 computes
// the length in exact integer arithmetic, every other dtype in double.
Value arange_body(const OpArgs& a) {
  const std::string id = "ltorch.arange";
  double start = arange_number(a, 0), end = arange_number(a, 1), step = arange_number(a, 2);
  THUNDER_CHECK(a[3].kind() == Value::Kind::Device, "{}: device must be a device, got {}", id,
                a[3].str());
  Device device = a[3].as_device();
  DType dtype = a.dtype(4);
  THUNDER_CHECK(!is_bool(dtype), "{}: dtype bool is not supported", id);
  THUNDER_CHECK(std::isfinite(start) && std::isfinite(end), "{}: unsupported range: {} -> {}", id,
                a[0].str(), a[1].str());
  double length_d = 0;
  if (is_integer(dtype)) {
    auto to_i64 = [&](double d, size_t i) {
      if (a[i].kind() == Value::Kind::Int) return a[i].as_int();  // exact, even past 2^53
      THUNDER_CHECK(std::isfinite(d) && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18,
                    "{}: {} {} cannot be converted to int64 without overflow", id, a.param_name(i),
                    a[i].str());
      return static_cast<int64_t>(d);
    };
    int64_t s = to_i64(start, 0), e = to_i64(end, 1), st = to_i64(step, 2);
    THUNDER_CHECK(st != 0, "{}: step must be nonzero", id);
    THUNDER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                  "{}: upper bound {} and lower bound {} are inconsistent with step sign ({})", id,
                  a[1].str(), a[0].str(), a[2].str());
    if (dtype == DType::i64) {
      int64_t sgn = st > 0 ? 1 : -1;
      length_d = static_cast<double>((e - s + st - sgn) / st);
    } else {
      length_d = std::ceil((end - start) / step);
    }
    THUNDER_CHECK(length_d >= 0 && length_d <= 9.2233720368547758e18,
                  "{}: invalid size {}, possible overflow", id, length_d);
    return prims::iota(static_cast<int64_t>(length_d), s, st, device, dtype);
  }
  THUNDER_CHECK(step != 0, "{}: step must be nonzero", id);
  THUNDER_CHECK((step > 0 && end >= start) || (step < 0 && end <= start),
                "{}: upper bound {} and lower bound {} are inconsistent with step sign ({})", id,
                a[1].str(), a[0].str(), a[2].str());
  length_d = std::ceil((end - start) / step);
  THUNDER_CHECK(length_d >= 0 && length_d <= 9.2233720368547758e18,
                "{}: invalid size {}, possible overflow", id, length_d);
  // ATen computes start + step * i in its CPU accumulate type: double for
  // f32/f64, float for f16/bf16.
  DType compute = (dtype == DType::f16 || dtype == DType::bf16) ? DType::f32 : DType::f64;
  Value idx = prims::iota(static_cast<int64_t>(length_d), 0, 1, device, DType::i64);
  Value v = prims::convert_element_type(idx, compute);
  // x * 1 and x + 0 are exact; leave them out of the trace.
  if (step != 1.0) v = prims::mul(v, Value(step));
  if (start != 0.0) v = prims::add(v, Value(start));
  return maybe_convert(v, dtype);
}

}  // namespace

void register_factory() {
  define("ltorch.full", {"shape", "fill_value", "device", "dtype"}, 0,
         [](const OpArgs& a) -> Value {
           FactoryArgs f = factory_args(a, 0, 2, 3);
           THUNDER_CHECK(a[1].is_number(), "ltorch.full: fill_value must be a number, got {}",
                         a[1].str());
           return prims::full(f.shape, a[1], f.device, f.dtype);
         });
  define_filled("ltorch.zeros", 0);
  define_filled("ltorch.ones", 1);
  define("ltorch.empty", {"shape", "device", "dtype"}, 0, [](const OpArgs& a) -> Value {
    FactoryArgs f = factory_args(a, 0, 1, 2);
    return prims::empty(f.shape, f.device, f.dtype);
  });
  define("ltorch.rand", {"shape", "device", "dtype"}, tag_bits({OpTag::RANDOM_OP}),
         [](const OpArgs& a) -> Value {
           FactoryArgs f = factory_args(a, 0, 1, 2);
           THUNDER_CHECK(is_float(f.dtype),
                         "ltorch.rand: dtype must be a floating-point dtype, got {}",
                         long_name(f.dtype));
           return prims::uniform(f.shape, Value(0.0), Value(1.0), f.device, f.dtype);
         });
  define("ltorch.randn", {"shape", "device", "dtype"}, tag_bits({OpTag::RANDOM_OP}),
         [](const OpArgs& a) -> Value {
           FactoryArgs f = factory_args(a, 0, 1, 2);
           THUNDER_CHECK(is_float(f.dtype),
                         "ltorch.randn: dtype must be a floating-point dtype, got {}",
                         long_name(f.dtype));
           return prims::randn(f.shape, f.device, f.dtype);
         });
  define("ltorch.arange", {"start", "end", "step", "device", "dtype"}, 0, arange_body);
}

}  // namespace detail

Value full(const std::vector<int64_t>& shape, const Value& fill_value, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.full", shape, fill_value, device, dtype);
}
Value zeros(const std::vector<int64_t>& shape, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.zeros", shape, device, dtype);
}
Value ones(const std::vector<int64_t>& shape, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.ones", shape, device, dtype);
}
Value empty(const std::vector<int64_t>& shape, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.empty", shape, device, dtype);
}
Value rand(const std::vector<int64_t>& shape, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.rand", shape, device, dtype);
}
Value randn(const std::vector<int64_t>& shape, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.randn", shape, device, dtype);
}
Value arange(const Value& start, const Value& end, const Value& step, Device device, DType dtype) {
  THUNDER_LTORCH_CALL("ltorch.arange", start, end, step, device, dtype);
}

}  // namespace thunder::ltorch
