// Writing gradients: thunder::register_grad installs a grad rule for a symbol,
// written with ordinary thunder ops (Thunder's register_grad). The rule
// computes the forward, reads output cotangents with get_grad and adds input
// cotangents with put_grad; it replaces the built-in rule, if any.
//
//   thunder::register_grad("ltorch.silu",
//     [](thunder::GradContext& g, const thunder::CallArgs& a) -> thunder::TensorList {
//       thunder::Tensor x = a.tensor(0);
//       thunder::Tensor s = x.sigmoid(), out = x * s;
//       g.put_grad(x, g.get_grad(out) * s * (1 + x * (1 - s)));
//       return {out};
//     });
//
// scoped_register_grad does the same until the returned handle dies.
#pragma once

#include <functional>
#include <string>

#include "thunder/core/registry_change.h"
#include "thunder/frontend/tensor.h"

namespace thunder {

class VjpContext;
class OpArgs;

class GradContext {
 public:
  explicit GradContext(VjpContext& v) : v_(v) {}
  // The cotangent of a value the rule computed.
  Tensor get_grad(const Tensor& out);
  // Adds grad to the cotangent of an argument of the rule.
  void put_grad(const Tensor& x, const Tensor& grad);
  // Does the argument need a gradient? (lets a rule skip work)
  bool requires_grad(const Tensor& x) const;

 private:
  VjpContext& v_;
};

// The arguments of the symbol, by position or parameter name.
class CallArgs {
 public:
  explicit CallArgs(const OpArgs& a) : a_(a) {}
  size_t size() const;
  Tensor tensor(size_t i) const;
  Tensor tensor(const std::string& name) const;
  double number(size_t i) const;
  double number(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;

 private:
  const OpArgs& a_;
};

using GradFn = std::function<TensorList(GradContext&, const CallArgs&)>;

// Inside a grad rule or custom function: `t` is saved for the backward as is,
// never recomputed (rematerialization keeps it). With
// JitOptions::strict_saved_for_backward, a value a user rule's backward reads
// without this call is an error. Eagerly (a concrete tensor) it does nothing.
void save_for_backward(const Tensor& t);

// Installs `fn` as the grad rule of the symbol `id` (e.g. "ltorch.dropout").
// Throws thunder::Error for an unknown id. Jitted callables compiled before
// recompile on their next call (the registry version). The rule stays until
// the returned handle is restored; discarding it keeps the rule
// (thunder/core/registry_change.h: nested and out-of-order restores).
RegistryChange register_grad(const std::string& id, GradFn fn);

// register_grad for a scope: the previous rule (built-in or user) is back
// when the handle dies.
//   { auto g = thunder::scoped_register_grad("ltorch.silu", rule); ... }
[[nodiscard]] ScopedRegistryChange scoped_register_grad(const std::string& id, GradFn fn);

}  // namespace thunder
