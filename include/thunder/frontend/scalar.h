// thunder::Scalar: a number argument. Concrete outside a trace; under
// thunder::jit a Scalar argument becomes a number proxy, a runtime input that
// never forces a recompile (unlike plain C++ numbers, which are constants).
#pragma once

#include <type_traits>

#include "thunder/core/value.h"

namespace thunder {

class Scalar {
 public:
  template <typename T>
  requires std::is_arithmetic_v<T> Scalar(T v) {  // NOLINT: implicit like at::Scalar
    if constexpr (std::is_same_v<T, bool>)
      v_ = Value(v);
    else if constexpr (std::is_integral_v<T>)
      v_ = Value(static_cast<int64_t>(v));
    else
      v_ = Value(static_cast<double>(v));
  }
  explicit Scalar(ProxyPtr number_proxy) : v_(std::move(number_proxy)) {}

  bool is_proxy() const { return v_.is_proxy(); }
  bool is_floating_point() const { return v_.number_dtype() == DType::f64; }
  bool is_integral() const { return v_.number_dtype() == DType::i64; }
  bool is_bool() const { return v_.number_dtype() == DType::b8; }
  double to_double() const { return v_.to_double(); }  // concrete only
  // The literal, or the number proxy under a trace.
  const Value& value() const { return v_; }

 private:
  Value v_;
};

}  // namespace thunder
