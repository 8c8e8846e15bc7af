// Proxies: named SSA values of a trace. A tensor proxy carries the metadata a
// meta function needs (shape, dtype, device, requires_grad) and a tag set; a
// number proxy stands for a runtime scalar (a thunder::Scalar argument).
// Proxies are shared by pointer between traces: passes never mutate a proxy
// that another trace can see; they make a new one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "thunder/core/device.h"
#include "thunder/core/dtype.h"

namespace thunder {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[2, 3]"

// Tags on values (as opposed to OpTag on symbols).
enum class ProxyTag : uint32_t {
  DETACHED_AUTOGRAD_GRAPH = 1u << 0,  // produced with grad disabled: constant for autodiff
  RECOMPUTE_IN_BACKWARD = 1u << 1,    // prefer recomputing over saving
  SAVED_FOR_BACKWARD = 1u << 2,  // saved explicitly (thunder::save_for_backward): never recomputed
};

// Every ProxyTag, in printing order, and the word that stands for it after a
// value's type comment (`# t3: "cpu f32[4]" detached`), so the trace parser
// reads back what the printer writes.
inline constexpr ProxyTag kProxyTags[] = {ProxyTag::DETACHED_AUTOGRAD_GRAPH,
                                          ProxyTag::RECOMPUTE_IN_BACKWARD,
                                          ProxyTag::SAVED_FOR_BACKWARD};
const char* tag_word(ProxyTag t);  // "detached", "recompute_in_backward", "saved_for_backward"

struct Proxy {
  enum class Kind : uint8_t { Tensor, Number };
  std::string name;
  Kind kind = Kind::Tensor;
  Shape shape;               // empty for numbers and 0-d tensors
  DType dtype = DType::f32;  // numbers: b8, i64 or f64
  Device device;
  bool requires_grad = false;
  uint32_t tags = 0;  // ProxyTag bits

  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_number() const { return kind == Kind::Number; }
  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return thunder::numel(shape); }
  bool has_tag(ProxyTag t) const { return tags & static_cast<uint32_t>(t); }
  // The type comment body: "cpu f32[2, 3]" for tensors, "int" / "float" / "bool" for numbers.
  std::string type_str() const;
};

using ProxyPtr = std::shared_ptr<Proxy>;

}  // namespace thunder
