// register_grad: a user rule written with thunder::Tensor ops, adapted to the
// Value-level rule registry of the autodiff transform.
#include "thunder/frontend/autograd.h"

#include "dispatch.h"
#include "thunder/transforms/autodiff.h"

namespace thunder {

namespace {
Value value_of(const Tensor& t) { return t.defined() ? detail::traced_value(t) : Value(); }
}  // namespace

Tensor GradContext::get_grad(const Tensor& out) {
  return Tensor(v_.get_grad(value_of(out)).proxy());
}
void GradContext::put_grad(const Tensor& x, const Tensor& grad) {
  v_.put_grad(value_of(x), value_of(grad));
}
bool GradContext::requires_grad(const Tensor& x) const { return v_.requires_grad(value_of(x)); }

size_t CallArgs::size() const { return a_.size(); }
Tensor CallArgs::tensor(size_t i) const {
  return a_[i].is_none() ? Tensor() : Tensor(a_.tensor_ptr(i));
}
Tensor CallArgs::tensor(const std::string& name) const {
  const Value& v = a_.get(name);
  THUNDER_CHECK(v.is_tensor() || v.is_none(), "{}: argument {} is not a tensor: {}", a_.symbol().id,
                name, v.str());
  return v.is_none() ? Tensor() : Tensor(v.proxy());
}
double CallArgs::number(size_t i) const { return a_.number(i); }
double CallArgs::number(const std::string& name) const {
  const Value& v = a_.get(name);
  THUNDER_CHECK(v.is_number() && !v.is_proxy(), "{}: argument {} is not a number: {}",
                a_.symbol().id, name, v.str());
  return v.to_double();
}
int64_t CallArgs::integer(const std::string& name) const {
  const Value& v = a_.get(name);
  THUNDER_CHECK(v.kind() == Value::Kind::Int, "{}: argument {} is not an int: {}", a_.symbol().id,
                name, v.str());
  return v.as_int();
}
bool CallArgs::boolean(const std::string& name) const {
  const Value& v = a_.get(name);
  THUNDER_CHECK(v.kind() == Value::Kind::Bool, "{}: argument {} is not a bool: {}", a_.symbol().id,
                name, v.str());
  return v.as_bool();
}

void save_for_backward(const Tensor& t) {
  if (t.defined() && t.is_proxy())
    t.proxy()->tags |= static_cast<uint32_t>(ProxyTag::SAVED_FOR_BACKWARD);
}

RegistryChange register_grad(const std::string& id, GradFn fn) {
  ltorch::ensure_registered();
  THUNDER_CHECK(symbol_registry().find(id) != nullptr, "register_grad: unknown symbol '{}'", id);
  return register_grad_rule(id, [fn = std::move(fn)](VjpContext& v, const OpArgs& a) -> Value {
    GradContext g(v);
    TensorList outs = fn(g, CallArgs(a));
    std::vector<Value> vals;
    for (const Tensor& t : outs) vals.push_back(value_of(t));
    THUNDER_CHECK(!vals.empty(), "{}: a grad rule must return the forward outputs", a.symbol().id);
    return vals.size() == 1 ? vals[0] : Value(std::move(vals));
  });
}

ScopedRegistryChange scoped_register_grad(const std::string& id, GradFn fn) {
  return register_grad(id, std::move(fn));
}

}  // namespace thunder
