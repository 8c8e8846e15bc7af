// Custom autograd functions, the same shape as torch::autograd::Function:
//
//   struct MP : thunder::autograd::Function<MP> {
//     static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
//       ctx->save_for_backward({a, b});
//       return a * b;
//     }
//     static TensorList backward(AutogradContext* ctx, TensorList grad_outputs) {
//       auto saved = ctx->get_saved_variables();
//       return {grad_outputs[0] * saved[1], Tensor()};  // None: no gradient for b
//     }
//   };
//   Tensor y = MP::apply(a, b);
//
// Eagerly, apply runs through libtorch's torch::autograd::Function (libtorch's
// autograd tracks the inputs). Under thunder::jit, apply records the composite
// symbol "MP" (its decomposition is T::forward); its grad rule replays the
// forward and calls the composite "MP_backward" (decomposition: T::backward)
// on the saved tensors and the output cotangents, so the backward trace shows
// `MP_backward(...)`.
//
// forward's arguments may be Tensors, numbers (int64_t, int, double, bool) and
// int lists (std::vector<int64_t>); it returns a Tensor or a std::tuple of
// Tensors. backward returns one gradient per forward argument (undefined for
// numbers and for inputs without gradient), or one per tensor argument.
// ctx->saved_data holds numbers (and strings, int lists) for the backward.
#pragma once

#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "thunder/core/symbol.h"
#include "thunder/core/tracing.h"
#include "thunder/frontend/tensor.h"
#include "thunder/transforms/autodiff.h"

namespace thunder::autograd {

using SavedData = ska::flat_hash_map<std::string, at::IValue>;

template <class T>
struct Function;

namespace detail {
template <class T, class R, class Args>
struct FunctionImpl;
}

// The ctx of a custom function. Eagerly it forwards to libtorch's ctx; under a
// trace it keeps the saved tensors (proxies) and the non-differentiable marks.
class AutogradContext {
 public:
  // Eager: over libtorch's ctx; is_tensor_arg tells which forward arguments are tensors.
  AutogradContext(torch::autograd::AutogradContext* ctx, std::vector<bool> is_tensor_arg);
  // Trace mode.
  explicit AutogradContext(std::vector<bool> needs_input_grad);
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  void save_for_backward(TensorList tensors);
  TensorList get_saved_variables() const;
  void mark_non_differentiable(const TensorList& outputs);
  // Does forward argument i (by position) need a gradient?
  bool needs_input_grad(size_t i) const;

  // Non-tensor state for the backward (eagerly libtorch's ctx->saved_data).
  SavedData& saved_data;

 private:
  template <class T, class R, class Args>
  friend struct detail::FunctionImpl;
  bool is_marked(const Tensor& t) const;

  torch::autograd::AutogradContext* torch_ = nullptr;
  std::vector<bool> is_tensor_arg_;     // eager
  std::vector<bool> needs_input_grad_;  // trace mode
  SavedData own_data_;
  TensorList saved_;
  TensorList non_diff_;
};

namespace detail {

// Helpers implemented in src/frontend/autograd_function.cpp.
bool tracing();
Value value_of(const Tensor& t);  // traced value (None for an undefined tensor)
Tensor tensor_of(const Value& v);
// The non-differentiable outputs marked by the last forward body run on this thread.
std::vector<ProxyPtr>& pending_non_diff();
Value saved_data_value(const SavedData& d);
void load_saved_data(SavedData& d, const Value& v);
// One gradient per forward argument, from what backward returned.
TensorList normalize_grads(const std::string& name, TensorList grads,
                           const std::vector<bool>& is_tensor_arg);
struct Symbols {
  const Symbol* fwd = nullptr;
  const Symbol* bwd = nullptr;
};
Symbols register_function(const std::type_info& type, size_t num_args, BodyFn fwd, BodyFn bwd,
                          GradRule rule);

template <class F>
struct ForwardTraits;
template <class R, class... P>
struct ForwardTraits<R (*)(AutogradContext*, P...)> {
  using result = R;
  using args = std::tuple<std::decay_t<P>...>;
};

template <class R>
struct IsTensorTuple : std::false_type {};
template <class... Ts>
struct IsTensorTuple<std::tuple<Ts...>> : std::bool_constant<(std::is_same_v<Ts, Tensor> && ...)> {
};

template <class R>
TensorList flat_outputs(const R& r) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return {r};
  } else {
    return std::apply([](const auto&... t) { return TensorList{t...}; }, r);
  }
}
template <class R>
R unflat_outputs(const TensorList& l) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return l.at(0);
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) { return R{l.at(I)...}; }
    (std::make_index_sequence<std::tuple_size_v<R>>());
  }
}

template <class P>
using aten_t = std::conditional_t<std::is_same_v<P, Tensor>, at::Tensor, P>;
template <class P>
aten_t<P> to_aten(const P& p) {
  if constexpr (std::is_same_v<P, Tensor>) {
    return p.defined() ? p.aten() : at::Tensor();
  } else {
    return p;
  }
}

template <class P>
Value arg_value(const P& p) {
  if constexpr (std::is_same_v<P, Tensor>) {
    return value_of(p);
  } else if constexpr (std::is_same_v<P, bool>) {
    return Value(p);
  } else if constexpr (std::is_integral_v<P>) {
    return Value(static_cast<int64_t>(p));
  } else if constexpr (std::is_floating_point_v<P>) {
    return Value(static_cast<double>(p));
  } else {
    static_assert(std::is_same_v<P, std::vector<int64_t>>,
                  "custom function arguments: Tensor, numbers, bool or std::vector<int64_t>");
    return Value(p);
  }
}
template <class P>
P arg_from_value(const Value& v) {
  if constexpr (std::is_same_v<P, Tensor>) {
    return tensor_of(v);
  } else if constexpr (std::is_same_v<P, bool>) {
    return v.as_bool();
  } else if constexpr (std::is_integral_v<P>) {
    return static_cast<P>(v.as_int());
  } else if constexpr (std::is_floating_point_v<P>) {
    return static_cast<P>(v.to_double());
  } else {
    return v.as_int_list();
  }
}

inline torch::autograd::variable_list to_variables(const TensorList& l) {
  torch::autograd::variable_list out;
  for (const Tensor& t : l) out.push_back(t.defined() ? t.aten() : at::Tensor());
  return out;
}

template <class T, class R, class... P>
struct FunctionImpl<T, R, std::tuple<P...>> {
  static_assert(std::is_same_v<R, Tensor> || IsTensorTuple<R>::value,
                "a custom function's forward returns a Tensor or a std::tuple of Tensors");
  static constexpr size_t N = sizeof...(P);
  static std::vector<bool> is_tensor_arg() { return {std::is_same_v<P, Tensor>...}; }

  // ---- eager: libtorch's custom function ----
  struct Torch : torch::autograd::Function<Torch> {
    using Out =
        std::conditional_t<std::is_same_v<R, Tensor>, at::Tensor, torch::autograd::variable_list>;
    static Out forward(torch::autograd::AutogradContext* tctx, aten_t<P>... args) {
      AutogradContext ctx(tctx, is_tensor_arg());
      R r = T::forward(&ctx, P(std::move(args))...);
      if constexpr (std::is_same_v<R, Tensor>) {
        return to_aten(r);
      } else {
        return to_variables(flat_outputs(r));
      }
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* tctx,
                                                   torch::autograd::variable_list grads) {
      AutogradContext ctx(tctx, is_tensor_arg());
      TensorList g(grads.begin(), grads.end());
      TensorList r = T::backward(&ctx, std::move(g));
      return to_variables(normalize_grads(typeid(T).name(), std::move(r), is_tensor_arg()));
    }
  };

  // ---- under a trace: composite symbols and a grad rule ----
  template <size_t... I>
  static R run_forward(AutogradContext& ctx, const std::vector<Value>& vals,
                       std::index_sequence<I...>) {
    return T::forward(&ctx, arg_from_value<P>(vals.at(I))...);
  }
  static std::vector<bool> needs_grad_of(const OpArgs& a,
                                         const std::function<bool(const Value&)>& needs) {
    std::vector<bool> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(needs(a[i]));
    return out;
  }
  static Value outputs_value(const R& r) {
    if constexpr (std::is_same_v<R, Tensor>) {
      return value_of(r);
    } else {
      std::vector<Value> vs;
      for (const Tensor& t : flat_outputs(r)) vs.push_back(value_of(t));
      return Value(std::move(vs));
    }
  }

  static Value forward_body(const OpArgs& a) {
    AutogradContext ctx(
        needs_grad_of(a, [](const Value& v) { return v.is_tensor() && v.proxy()->requires_grad; }));
    R r = run_forward(ctx, a.values(), std::index_sequence_for<P...>());
    std::vector<ProxyPtr> marks;
    for (const Tensor& t : flat_outputs(r))
      if (t.is_proxy() && ctx.is_marked(t)) marks.push_back(t.proxy());
    pending_non_diff() = std::move(marks);
    return outputs_value(r);
  }

  static Value backward_body(const OpArgs& a) {
    std::vector<bool> needs;
    for (const Value& v : a.list(3)) needs.push_back(v.as_bool());
    AutogradContext ctx(std::move(needs));
    for (const Value& v : a.list(0)) ctx.saved_.push_back(tensor_of(v));
    load_saved_data(ctx.saved_data, a[2]);
    TensorList g;
    for (const Value& v : a.list(1)) g.push_back(tensor_of(v));
    TensorList r = normalize_grads(a.symbol().id, T::backward(&ctx, std::move(g)), is_tensor_arg());
    std::vector<Value> out;
    for (const Tensor& t : r) out.push_back(value_of(t));
    return Value(std::move(out));
  }

  static Value grad_rule(VjpContext& v, const OpArgs& a) {
    std::vector<bool> needs = needs_grad_of(a, [&](const Value& x) { return v.requires_grad(x); });
    AutogradContext ctx(needs);
    R r = run_forward(ctx, a.values(), std::index_sequence_for<P...>());
    TensorList outs = flat_outputs(r);
    bool any = false;
    for (const Tensor& t : outs) {
      if (!t.is_proxy()) continue;
      if (ctx.is_marked(t)) {
        t.proxy()->requires_grad = false;
      } else {
        any = any || t.proxy()->requires_grad;
      }
    }
    Value result = outputs_value(r);
    if (!any) return result;
    std::vector<Value> gs, saved, needs_v;
    for (const Tensor& t : outs)
      gs.push_back(t.is_proxy() && t.proxy()->is_tensor() ? v.get_grad(value_of(t)) : Value());
    for (const Tensor& t : ctx.saved_) saved.push_back(value_of(t));
    for (bool b : needs) needs_v.push_back(Value(b));
    Value grads =
        call_symbol(*symbols().bwd, {Value(std::move(saved)), Value(std::move(gs)),
                                     saved_data_value(ctx.saved_data), Value(std::move(needs_v))});
    const std::vector<Value>& gl = grads.as_list();
    for (size_t i = 0; i < a.size() && i < gl.size(); ++i)
      if (a[i].is_tensor() && gl[i].is_tensor()) v.put_grad(a[i], gl[i]);
    return result;
  }

  static const Symbols& symbols() {
    static const Symbols s =
        register_function(typeid(T), N, &forward_body, &backward_body, &grad_rule);
    return s;
  }

  static R apply(P... args) {
    if (tracing()) {
      const Symbols& s = symbols();
      pending_non_diff().clear();
      Value out = call_symbol(*s.fwd, {arg_value(args)...});
      for (const ProxyPtr& p : pending_non_diff()) p->requires_grad = false;
      pending_non_diff().clear();
      if constexpr (std::is_same_v<R, Tensor>) {
        return tensor_of(out);
      } else {
        TensorList l;
        for (const Value& v : out.as_list()) l.push_back(tensor_of(v));
        return unflat_outputs<R>(l);
      }
    }
    if constexpr (std::is_same_v<R, Tensor>) {
      return Tensor(Torch::apply(to_aten(args)...));
    } else {
      torch::autograd::variable_list l = Torch::apply(to_aten(args)...);
      return unflat_outputs<R>(TensorList(l.begin(), l.end()));
    }
  }
};

template <class T>
using FunctionImplOf = FunctionImpl<T, typename ForwardTraits<decltype(&T::forward)>::result,
                                    typename ForwardTraits<decltype(&T::forward)>::args>;

}  // namespace detail

// CRTP base of a custom function T with static forward and backward.
template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    return detail::FunctionImplOf<T>::apply(std::forward<Args>(args)...);
  }
};

}  // namespace thunder::autograd
