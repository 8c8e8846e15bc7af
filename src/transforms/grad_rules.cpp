// Built-in grad rules, one per line where possible: each computes the forward
// with prims and states the input cotangents with get_grad/put_grad.
#include <algorithm>

#include "thunder/core/error.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"

namespace thunder {

namespace {

const Proxy& P(const Value& v) { return *v.proxy(); }

// The gradient of broadcast_in_dim: sum over the broadcast dims, then reshape.
Value unbroadcast(const Value& g, const Shape& in_shape, const std::vector<int64_t>& dims) {
  const Shape& out_shape = P(g).shape;
  std::vector<int64_t> reduce;
  for (int64_t d = 0; d < static_cast<int64_t>(out_shape.size()); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    if (it == dims.end() || (in_shape[it - dims.begin()] == 1 && out_shape[d] != 1))
      reduce.push_back(d);
  }
  Value r = reduce.empty() ? g : prims::sum(g, reduce);
  return P(r).shape == in_shape ? r : prims::reshape(r, in_shape);
}

}  // namespace
void set_grad_rule(std::string_view id, GradRule rule);
namespace {
void rule(const char* id, GradRule r) { set_grad_rule(id, std::move(r)); }

}  // namespace

void register_builtin_grad_rules() {
  rule("prims.add", [](GradContext& g, const OpArgs& a) {
    Value out = prims::add(a[0], a[1]);
    Value go = g.get_grad(out);
    g.put_grad(a[0], go);
    g.put_grad(a[1], go);
    return out;
  });
  rule("prims.sub", [](GradContext& g, const OpArgs& a) {
    Value out = prims::sub(a[0], a[1]);
    Value go = g.get_grad(out);
    g.put_grad(a[0], go);
    if (g.requires_grad(a[1])) g.put_grad(a[1], prims::neg(go));
    return out;
  });
  rule("prims.mul", [](GradContext& g, const OpArgs& a) {
    Value out = prims::mul(a[0], a[1]);
    Value go = g.get_grad(out);
    if (g.requires_grad(a[0])) g.put_grad(a[0], prims::mul(go, a[1]));
    if (g.requires_grad(a[1])) g.put_grad(a[1], prims::mul(go, a[0]));
    return out;
  });
  rule("prims.neg", [](GradContext& g, const OpArgs& a) {
    Value out = prims::neg(a[0]);
    g.put_grad(a[0], prims::neg(g.get_grad(out)));
    return out;
  });
  rule("prims.broadcast_in_dim", [](GradContext& g, const OpArgs& a) {
    Value out = prims::broadcast_in_dim(a[0], a.ints(1), a.ints(2));
    if (g.requires_grad(a[0])) g.put_grad(a[0], unbroadcast(g.get_grad(out), P(a[0]).shape, a.ints(2)));
    return out;
  });
}

}  // namespace thunder
