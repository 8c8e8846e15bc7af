#include "fusible.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "thunder/prims/prims.h"

namespace thunder::cpu_fuser {

namespace {

const std::unordered_map<std::string_view, OpKind>& table() {
  using K = OpKind;
  // Matmul, embedding, indexing, pad/slice, cat other than of 1-D tensors,
  // empty and stateful draws stay with aten. Factories that are pure functions of the element index
  // are Elementwise without tensor inputs: full, iota, and uniform_philox (over its 0-d seed and
  // offset; its emitter in codegen.cpp), so dropout fuses whole.
  static const std::unordered_map<std::string_view, OpKind> t = {
      {"prims.neg", K::Elementwise},
      {"prims.abs", K::Elementwise},
      {"prims.exp", K::Elementwise},
      {"prims.log", K::Elementwise},
      {"prims.log1p", K::Elementwise},
      {"prims.sqrt", K::Elementwise},
      {"prims.rsqrt", K::Elementwise},
      {"prims.sin", K::Elementwise},
      {"prims.cos", K::Elementwise},
      {"prims.tanh", K::Elementwise},
      {"prims.erf", K::Elementwise},
      {"prims.reciprocal", K::Elementwise},
      {"prims.sigmoid", K::Elementwise},
      {"prims.bitwise_not", K::Elementwise},
      {"prims.logical_not", K::Elementwise},
      {"prims.add", K::Elementwise},
      {"prims.sub", K::Elementwise},
      {"prims.mul", K::Elementwise},
      {"prims.div", K::Elementwise},
      {"prims.pow", K::Elementwise},
      {"prims.maximum", K::Elementwise},
      {"prims.minimum", K::Elementwise},
      {"prims.bitwise_and", K::Elementwise},
      {"prims.bitwise_or", K::Elementwise},
      {"prims.bitwise_xor", K::Elementwise},
      {"prims.eq", K::Elementwise},
      {"prims.ne", K::Elementwise},
      {"prims.lt", K::Elementwise},
      {"prims.le", K::Elementwise},
      {"prims.gt", K::Elementwise},
      {"prims.ge", K::Elementwise},
      {"prims.logical_and", K::Elementwise},
      {"prims.logical_or", K::Elementwise},
      {"prims.where", K::Elementwise},
      {"prims.convert_element_type", K::Elementwise},
      {"prims.full", K::Elementwise},
      {"prims.iota", K::Elementwise},
      {"prims.uniform_philox", K::Elementwise},
      {"prims.broadcast_in_dim", K::View},
      {"prims.reshape", K::View},
      {"prims.squeeze", K::View},
      {"prims.transpose", K::View},
      {"prims.sum", K::Reduction},
      {"prims.amax", K::Reduction},
      {"prims.amin", K::Reduction},
      {"prims.var", K::Reduction},
      {"prims.argmax", K::Reduction},
      {"prims.cat", K::Cat},
  };
  return t;
}

// Reduced dims must be a suffix of the input's dims (innermost or all): the
// generated loop nest keeps kept dims outside and reduced dims inside.
bool innermost_reduction(const BoundSymbol& b) {
  const Proxy& a = *b.args[0].proxy();
  static const Symbol& argmax = prims::symbol("prims.argmax");
  if (b.sym == &argmax) {
    const Value& dim = b.args[1];
    return dim.is_none() || a.ndim() == 0 || dim.as_int() == a.ndim() - 1;
  }
  const auto& dims = b.args[1].as_int_list();
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != a.ndim() - static_cast<int64_t>(dims.size() - i)) return false;
  return true;
}

}  // namespace

const OpKind* fusible_kind(const Symbol& sym) {
  auto it = table().find(sym.id);
  return it == table().end() ? nullptr : &it->second;
}

bool fusible(const BoundSymbol& b) {
  if (!b.sym->is_prim) {
    if (b.subsymbols.empty()) return false;
    for (const BoundSymbol& s : b.subsymbols)
      if (!fusible(s)) return false;
    return true;
  }
  const OpKind* kind = fusible_kind(*b.sym);
  if (!kind) return false;
  for (const ProxyPtr& p : b.flat_args())
    if (p->is_tensor() && p->device.type != Device::Type::CPU) return false;
  for (const ProxyPtr& p : b.flat_outputs())
    if (!p->is_tensor() || p->device.type != Device::Type::CPU) return false;
  // iota's start and step are written into the kernel as constants.
  static const Symbol& iota = prims::symbol("prims.iota");
  if (b.sym == &iota && (b.args[1].is_proxy() || b.args[2].is_proxy())) return false;
  if (*kind == OpKind::Cat)  // a gradient bucket's pack: 1-D pieces, one after another
    return std::all_of(b.args[0].as_list().begin(), b.args[0].as_list().end(),
                       [](const Value& v) { return v.is_tensor() && v.proxy()->ndim() == 1; });
  return *kind != OpKind::Reduction || innermost_reduction(b);
}

}  // namespace thunder::cpu_fuser
