// Value: an argument or output of a bound symbol. Either a literal stored
// inline (None, bool, int, float, string, dtype, device, int list), a proxy, or
// a list of values (e.g. the tensors of cat, the outputs of split).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "thunder/core/proxy.h"

namespace thunder {

class Value {
 public:
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,
    Double,
    String,
    DType,
    Device,
    IntList,
    Proxy,
    List
  };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int v) : v_(int64_t{v}) {}
  Value(int64_t v) : v_(v) {}
  Value(double v) : v_(v) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(thunder::DType d) : v_(d) {}
  Value(thunder::Device d) : v_(d) {}
  Value(std::vector<int64_t> l) : v_(std::move(l)) {}
  Value(ProxyPtr p) : v_(std::move(p)) {}
  Value(std::vector<Value> l) : v_(std::move(l)) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_proxy() const { return kind() == Kind::Proxy; }
  bool is_tensor() const { return is_proxy() && proxy()->is_tensor(); }
  bool is_number_proxy() const { return is_proxy() && proxy()->is_number(); }
  // A number literal or a number proxy.
  bool is_number() const {
    return kind() == Kind::Bool || kind() == Kind::Int || kind() == Kind::Double ||
           is_number_proxy();
  }
  bool is_list() const { return kind() == Kind::List; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  // A number literal (bool, int or float) as double.
  double to_double() const;
  const std::string& as_string() const { return std::get<std::string>(v_); }
  thunder::DType as_dtype() const { return std::get<thunder::DType>(v_); }
  thunder::Device as_device() const { return std::get<thunder::Device>(v_); }
  const std::vector<int64_t>& as_int_list() const { return std::get<std::vector<int64_t>>(v_); }
  const ProxyPtr& proxy() const { return std::get<ProxyPtr>(v_); }
  const std::vector<Value>& as_list() const { return std::get<std::vector<Value>>(v_); }
  std::vector<Value>& as_list() { return std::get<std::vector<Value>>(v_); }

  // The element type of a number (literal or proxy): b8, i64 or f64.
  thunder::DType number_dtype() const;

  // Python-style printing: None, True, 2, 2.0, 1e-05, 'tanh', dtypes.float32,
  // devices.Device("cpu"), (2, 3), [t0, t1]; proxies print as their name.
  std::string str() const;

  // Every proxy reachable from this value, in order.
  void collect_proxies(std::vector<ProxyPtr>& out) const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, thunder::DType, thunder::Device,
               std::vector<int64_t>, ProxyPtr, std::vector<Value>>
      v_;
};

// Python repr of a float ("2.0", "0.1", "1e-05", "inf", "nan").
std::string format_double(double d);

}  // namespace thunder
