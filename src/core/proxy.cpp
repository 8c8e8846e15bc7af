#include "thunder/core/proxy.h"

namespace thunder {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string Proxy::type_str() const {
  if (is_number()) {
    if (dtype == DType::b8) return "bool";
    return is_float(dtype) ? "float" : "int";
  }
  return device.str() + " " + std::string(short_name(dtype)) + shape_str(shape);
}

const char* tag_word(ProxyTag t) {
  switch (t) {
    case ProxyTag::DETACHED_AUTOGRAD_GRAPH:
      return "detached";
    case ProxyTag::RECOMPUTE_IN_BACKWARD:
      return "recompute_in_backward";
    case ProxyTag::SAVED_FOR_BACKWARD:
      return "saved_for_backward";
  }
  return "?";
}

}  // namespace thunder
