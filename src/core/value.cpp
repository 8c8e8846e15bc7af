#include "thunder/core/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "thunder/core/error.h"

namespace thunder {

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, laid out like Python's repr: positional when
  // the decimal exponent is in [-4, 16), scientific otherwise ("1e-05", "1e+16").
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, end);  // "-d.ddde+XX"
  size_t epos = sci.find('e');
  int exp10 = std::stoi(sci.substr(epos + 1));
  std::string mant = sci.substr(0, epos);
  bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits = mant.substr(0, 1) + (mant.size() > 2 ? mant.substr(2) : "");
  std::string out;
  if (exp10 >= -4 && exp10 < 16) {
    int point = exp10 + 1;  // digits before the decimal point
    if (point <= 0) {
      out = "0." + std::string(-point, '0') + digits;
    } else if (point >= static_cast<int>(digits.size())) {
      out = digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  } else {
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + e;
  }
  return neg ? "-" + out : out;
}

double Value::to_double() const {
  switch (kind()) {
    case Kind::Bool:
      return as_bool() ? 1.0 : 0.0;
    case Kind::Int:
      return static_cast<double>(as_int());
    case Kind::Double:
      return as_double();
    default:
      fail("Value: {} is not a number literal", str());
  }
}

DType Value::number_dtype() const {
  switch (kind()) {
    case Kind::Bool:
      return DType::b8;
    case Kind::Int:
      return DType::i64;
    case Kind::Double:
      return DType::f64;
    case Kind::Proxy:
      if (proxy()->is_number()) return proxy()->dtype;
      break;
    default:
      break;
  }
  fail("Value: {} is not a number", str());
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return as_bool() ? "True" : "False";
    case Kind::Int:
      return std::to_string(as_int());
    case Kind::Double:
      return format_double(as_double());
    case Kind::String:
      return "'" + as_string() + "'";
    case Kind::DType:
      return "dtypes." + std::string(long_name(as_dtype()));
    case Kind::Device:
      return "devices.Device(\"" + as_device().str() + "\")";
    case Kind::IntList: {
      const auto& l = as_int_list();
      std::string s = "(";
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + std::to_string(l[i]);
      return s + (l.size() == 1 ? ",)" : ")");
    }
    case Kind::Proxy:
      return proxy()->name;
    case Kind::List: {
      std::string s = "[";
      const auto& l = as_list();
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i].str();
      return s + "]";
    }
  }
  return "?";
}

void Value::collect_proxies(std::vector<ProxyPtr>& out) const {
  if (is_proxy()) {
    out.push_back(proxy());
  } else if (is_list()) {
    for (const Value& v : as_list()) v.collect_proxies(out);
  }
}

bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }

}  // namespace thunder
