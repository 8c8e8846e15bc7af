// Custom autograd functions: the non-template parts (ctx, symbol registration).
#include "thunder/frontend/autograd_function.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "dispatch.h"
#include "thunder/frontend/autograd.h"

namespace thunder::autograd {

AutogradContext::AutogradContext(torch::autograd::AutogradContext* ctx,
                                 std::vector<bool> is_tensor_arg)
    : saved_data(ctx->saved_data), torch_(ctx), is_tensor_arg_(std::move(is_tensor_arg)) {}

AutogradContext::AutogradContext(std::vector<bool> needs_input_grad)
    : saved_data(own_data_), needs_input_grad_(std::move(needs_input_grad)) {}

void AutogradContext::save_for_backward(TensorList tensors) {
  if (torch_) {
    torch_->save_for_backward(detail::to_variables(tensors));
    return;
  }
  for (const Tensor& t : tensors) thunder::save_for_backward(t);
  saved_ = std::move(tensors);
}

TensorList AutogradContext::get_saved_variables() const {
  if (torch_) {
    torch::autograd::variable_list l = torch_->get_saved_variables();
    return TensorList(l.begin(), l.end());
  }
  return saved_;
}

void AutogradContext::mark_non_differentiable(const TensorList& outputs) {
  if (torch_) {
    torch_->mark_non_differentiable(detail::to_variables(outputs));
    return;
  }
  for (const Tensor& t : outputs) non_diff_.push_back(t);
}

bool AutogradContext::is_marked(const Tensor& t) const {
  return t.is_proxy() && std::any_of(non_diff_.begin(), non_diff_.end(), [&](const Tensor& m) {
           return m.is_proxy() && m.proxy() == t.proxy();
         });
}

bool AutogradContext::needs_input_grad(size_t i) const {
  if (torch_) {
    THUNDER_CHECK(i < is_tensor_arg_.size(), "needs_input_grad: no argument {}", i);
    if (!is_tensor_arg_[i]) return false;
    size_t edge = std::count(is_tensor_arg_.begin(), is_tensor_arg_.begin() + i, true);
    return torch_->needs_input_grad(edge);
  }
  THUNDER_CHECK(i < needs_input_grad_.size(), "needs_input_grad: no argument {}", i);
  return needs_input_grad_[i];
}

namespace detail {

namespace {

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                           std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

// The class name of T: the part after the last "::" (outside template
// arguments), reduced to identifier characters.
std::string class_name(const std::type_info& type) {
  std::string full = demangle(type.name());
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    char c = full[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (depth == 0 && c == ':' && i + 1 < full.size() && full[i + 1] == ':') start = i + 2;
  }
  std::string out;
  for (char c : full.substr(start))
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "Function" + out;
  return out;
}

}  // namespace

bool tracing() { return thunder::detail::tracing(); }

Value value_of(const Tensor& t) { return t.defined() ? thunder::detail::traced_value(t) : Value(); }

Tensor tensor_of(const Value& v) {
  if (v.is_none()) return Tensor();
  THUNDER_CHECK(v.is_tensor(), "custom function: expected a tensor, got {}", v.str());
  return Tensor(v.proxy());
}

std::vector<ProxyPtr>& pending_non_diff() {
  thread_local std::vector<ProxyPtr> marks;
  return marks;
}

Value saved_data_value(const SavedData& d) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : d) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::vector<Value> out;
  for (const std::string& k : keys) {
    const at::IValue& v = d.at(k);
    out.push_back(Value(k));
    if (v.isBool()) {
      out.push_back(Value(v.toBool()));
    } else if (v.isInt()) {
      out.push_back(Value(v.toInt()));
    } else if (v.isDouble()) {
      out.push_back(Value(v.toDouble()));
    } else if (v.isString()) {
      out.push_back(Value(v.toStringRef()));
    } else if (v.isIntList()) {
      out.push_back(Value(v.toIntVector()));
    } else if (v.isNone()) {
      out.push_back(Value());
    } else {
      fail(
          "custom function: ctx->saved_data['{}'] holds a {}; under thunder::jit saved_data "
          "holds numbers, bools, strings and int lists (save tensors with save_for_backward)",
          k, v.tagKind());
    }
  }
  return Value(std::move(out));
}

void load_saved_data(SavedData& d, const Value& v) {
  const std::vector<Value>& l = v.as_list();
  for (size_t i = 0; i + 1 < l.size(); i += 2) {
    const Value& x = l[i + 1];
    at::IValue iv;
    switch (x.kind()) {
      case Value::Kind::Bool:
        iv = x.as_bool();
        break;
      case Value::Kind::Int:
        iv = x.as_int();
        break;
      case Value::Kind::Double:
        iv = x.as_double();
        break;
      case Value::Kind::String:
        iv = x.as_string();
        break;
      case Value::Kind::IntList:
        iv = x.as_int_list();
        break;
      default:
        break;
    }
    d[l[i].as_string()] = std::move(iv);
  }
}

TensorList normalize_grads(const std::string& name, TensorList grads,
                           const std::vector<bool>& is_tensor_arg) {
  size_t n = is_tensor_arg.size();
  size_t n_tensors = std::count(is_tensor_arg.begin(), is_tensor_arg.end(), true);
  // Extra trailing None entries are fine (as in libtorch).
  while (grads.size() > n && !grads.back().defined()) grads.pop_back();
  if (grads.size() == n) {
    for (size_t i = 0; i < n; ++i)
      THUNDER_CHECK(is_tensor_arg[i] || !grads[i].defined(),
                    "{}: backward returned a gradient for argument {}, which is not a tensor",
                    demangle(name.c_str()), i);
    return grads;
  }
  THUNDER_CHECK(grads.size() == n_tensors,
                "{}: backward returned {} gradients, expected {} (one per forward argument)",
                demangle(name.c_str()), grads.size(), n);
  TensorList out(n);
  for (size_t i = 0, k = 0; i < n; ++i)
    if (is_tensor_arg[i]) out[i] = grads[k++];
  return out;
}

Symbols register_function(const std::type_info& type, size_t num_args, BodyFn fwd, BodyFn bwd,
                          GradRule rule) {
  SymbolRegistry& reg = symbol_registry();
  std::string base = class_name(type), name = base;
  for (int k = 1; reg.find(name) != nullptr || reg.find(name + "_backward") != nullptr; ++k)
    name = base + "_" + std::to_string(k);
  Symbol f;
  f.id = name;
  for (size_t i = 0; i < num_args; ++i) f.params.push_back("arg" + std::to_string(i));
  f.body = std::move(fwd);
  Symbol b;
  b.id = name + "_backward";
  b.params = {"saved", "grad_outputs", "saved_data", "needs_input_grad"};
  b.body = std::move(bwd);
  Symbols s;
  s.fwd = &reg.add(std::move(f));
  s.bwd = &reg.add(std::move(b));
  register_grad_rule_of_new_symbol(s.fwd->id, std::move(rule));
  return s;
}

}  // namespace detail
}  // namespace thunder::autograd
