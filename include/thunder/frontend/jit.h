// thunder::jit: traces a callable (or a module's forward) into a trace,
// compiles it, and caches the program behind compiled guards. Arguments may
// be Tensors (or at::Tensor), vectors of Tensors, thunder::Scalar (a runtime
// number input) and plain C++ numbers and bools (trace-time constants guarded
// by value). Results may be a Tensor, a std::tuple of Tensors or a vector.
//
// A callable over at::Tensor (plain libtorch code) that cannot take
// thunder::Tensor is captured at the dispatcher instead (capture.h): on a
// miss it runs once on the real arguments and its aten ops are translated
// into the trace; the guards, the cache and the pipeline are the same.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <tuple>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "thunder/core/trace.h"
#include "thunder/frontend/capture.h"
#include "thunder/frontend/nn.h"
#include "thunder/frontend/options.h"
#include "thunder/runtime/flat_args.h"
#include "thunder/runtime/guard.h"

namespace torch::jit {
struct Graph;
}
namespace torch::nn {
class Module;
}

namespace thunder {

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  at::ScalarType dtype;
  int64_t bytes;
};

struct CompileStats {
  int64_t compiles = 0;
  double last_compile_ms = 0;
  std::vector<std::pair<std::string, double>> pass_ms;  // last compile, in pipeline order
  int64_t fusion_regions = 0;
  int64_t cache_entries = 0;
  int64_t cache_evictions = 0;  // entries dropped for JitOptions::max_cache_entries
  // Memory plan: allocations served from buffers the function freed earlier,
  // and the bytes of free buffers it keeps for reuse.
  int64_t buffer_reuses = 0;
  int64_t idle_buffer_bytes = 0;
};

namespace detail {

class JitState;
using TraceFn = Value (*)(void* ctx, const std::vector<Value>& args);

// What the jit needs from a module that is not a thunder module (a torch::nn
// or TorchScript module): each submodule's training flag, guarded like a
// thunder module's, and its parameters and buffers by path, which become the
// trace's named inputs (t_fc1_weight) when it is traced.
struct ForeignModule {
  std::vector<std::function<bool()>> training_flags;
  std::function<std::vector<std::pair<std::string, at::Tensor>>()> named_tensors;
  // Optional: adds to the guard signature the identity of each parameter,
  // buffer and submodule the module holds now, without allocating, so that
  // replacing one compiles a new entry instead of reusing tensors it dropped.
  std::function<void(GuardSignature&)> add_identities;
  // Optional: the thunder-side state of a wrapper around a torch::nn module
  // (distributed::ddp), whose guarded flags, gradient buckets and process
  // groups the jit reads as it reads a thunder module's (guarded_state.h).
  nn::Module* interfaces = nullptr;
};

std::shared_ptr<JitState> make_jit_state(JitOptions options, nn::Module* module,
                                         ForeignModule foreign = {});

// One call's scratch (flat arguments, flat outputs, guard signature). Each
// thread keeps a stack of them, one per nesting level (a jitted function may
// call another while it is traced), so calls on any number of threads share
// no scratch and, once warm, allocate none. Leaving the call releases the
// arguments and outputs it still holds.
struct CallScratch;
class CallFrame {
 public:
  CallFrame();
  ~CallFrame();
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;
  std::vector<FlatArg>& inputs();
  std::vector<at::Tensor>& outs();  // flat outputs (undefined = None)
  CallScratch& scratch() { return s_; }

 private:
  CallScratch& s_;
};

// Guards, compiles on a miss, runs; the frame's outs get the flat outputs.
void jit_call(JitState& s, CallFrame& frame, TraceFn fn, void* ctx);

// ---- argument flattening and rebuilding ----
template <typename A>
struct Normalize {
  using type = A;
};
template <>
struct Normalize<at::Tensor> {
  using type = Tensor;
};
template <>
struct Normalize<std::vector<at::Tensor>> {
  using type = TensorList;
};
template <typename A>
using normalized_t = typename Normalize<std::remove_cvref_t<A>>::type;

[[noreturn]] void bad_jit_argument(const char* what);

inline void flatten(std::vector<FlatArg>& out, const at::Tensor& t) {
  FlatArg& f = out.emplace_back();
  f.kind = FlatArg::Kind::Tensor;
  f.tensor = t;
}
inline void flatten(std::vector<FlatArg>& out, const Tensor& t) {
  if (t.is_proxy()) bad_jit_argument("a proxy tensor (call the jitted function outside of traces)");
  flatten(out, t.defined() ? t.aten() : at::Tensor());
}
template <typename T>
void flatten(std::vector<FlatArg>& out, const std::vector<T>& ts) {
  FlatArg& f = out.emplace_back();
  f.kind = FlatArg::Kind::ListLen;
  f.i = static_cast<int64_t>(ts.size());
  for (const auto& t : ts) flatten(out, t);
}
inline void flatten(std::vector<FlatArg>& out, const Scalar& s) {
  if (s.is_proxy()) bad_jit_argument("a proxy Scalar");
  FlatArg& f = out.emplace_back();
  f.kind = FlatArg::Kind::Scalar;
  f.i = s.is_floating_point() ? 1 : s.is_bool() ? 2 : 0;
  f.d = s.to_double();
}
template <typename T>
requires std::is_arithmetic_v<T>
void flatten(std::vector<FlatArg>& out, T v) {
  FlatArg& f = out.emplace_back();
  if constexpr (std::is_same_v<T, bool>) {
    f.kind = FlatArg::Kind::Bool;
    f.i = v;
  } else if constexpr (std::is_integral_v<T>) {
    f.kind = FlatArg::Kind::Int;
    f.i = static_cast<int64_t>(v);
  } else {
    f.kind = FlatArg::Kind::Double;
    f.d = static_cast<double>(v);
  }
}

// Argument types a plain-libtorch callable is called with.
template <typename A>
struct Concrete {
  using type = A;
};
template <>
struct Concrete<Tensor> {
  using type = at::Tensor;
};
template <>
struct Concrete<TensorList> {
  using type = std::vector<at::Tensor>;
};
template <typename A>
using concrete_t = typename Concrete<std::remove_cvref_t<A>>::type;

// Is F plain libtorch code (captured at the dispatcher) for these arguments?
template <typename F, typename... A>
inline constexpr bool is_captured_v =
    !std::is_invocable_v<F&, normalized_t<A>...> && std::is_invocable_v<F&, concrete_t<A>...>;

// Rebuilds a concrete argument from the flat call inputs.
template <typename A>
A rebuild_concrete(const std::vector<FlatArg>& in, size_t& pos) {
  const FlatArg& f = in[pos++];
  if constexpr (std::is_same_v<A, at::Tensor>) {
    return f.tensor;
  } else if constexpr (std::is_same_v<A, std::vector<at::Tensor>>) {
    std::vector<at::Tensor> l;
    for (int64_t i = 0; i < f.i; ++i) l.push_back(in[pos++].tensor);
    return l;
  } else if constexpr (std::is_same_v<A, bool>) {
    return f.i != 0;
  } else if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(f.i);
  } else {
    static_assert(std::is_floating_point_v<A>,
                  "thunder::jit of plain libtorch code takes tensors, vectors of tensors and "
                  "plain numbers (not thunder::Scalar)");
    return static_cast<A>(f.d);
  }
}

inline void flatten_concrete(std::vector<at::Tensor>& out, const at::Tensor& t) {
  out.push_back(t);
}
inline void flatten_concrete(std::vector<at::Tensor>& out, const std::vector<at::Tensor>& l) {
  out.insert(out.end(), l.begin(), l.end());
}
template <typename... Ts>
void flatten_concrete(std::vector<at::Tensor>& out, const std::tuple<Ts...>& t) {
  std::apply([&](const auto&... e) { (flatten_concrete(out, e), ...); }, t);
}

// Rebuilds a typed argument from the traced values (proxies and constants).
template <typename A>
A rebuild(const std::vector<Value>& vals, size_t& pos) {
  const Value& v = vals[pos++];
  if constexpr (std::is_same_v<A, Tensor>) {
    return v.is_none() ? Tensor() : Tensor(v.proxy());
  } else if constexpr (std::is_same_v<A, TensorList>) {
    TensorList l;
    for (int64_t i = 0, n = v.as_int(); i < n; ++i) l.push_back(rebuild<Tensor>(vals, pos));
    return l;
  } else if constexpr (std::is_same_v<A, Scalar>) {
    return Scalar(v.proxy());
  } else if constexpr (std::is_same_v<A, bool>) {
    return v.as_bool();
  } else if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(v.as_int());
  } else {
    static_assert(std::is_floating_point_v<A>, "unsupported argument type for thunder::jit");
    return static_cast<A>(v.as_double());
  }
}

// Result <-> flat values.
inline void flatten_result(std::vector<Value>& out, const Tensor& t);
template <typename... Ts>
void flatten_result(std::vector<Value>& out, const std::tuple<Ts...>& t) {
  std::apply([&](const auto&... e) { (flatten_result(out, e), ...); }, t);
}
inline void flatten_result(std::vector<Value>& out, const TensorList& l) {
  for (const Tensor& t : l) flatten_result(out, t);
}
Value result_value(const Tensor& t);
inline void flatten_result(std::vector<Value>& out, const Tensor& t) {
  out.push_back(result_value(t));
}

template <typename R>
R unflatten_result(std::vector<at::Tensor>& outs, size_t& pos) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return Tensor(std::move(outs[pos++]));
  } else if constexpr (std::is_same_v<R, at::Tensor>) {
    return std::move(outs[pos++]);
  } else if constexpr (std::is_same_v<R, TensorList>) {
    TensorList l;
    while (pos < outs.size()) l.emplace_back(std::move(outs[pos++]));
    return l;
  } else if constexpr (std::is_same_v<R, std::vector<at::Tensor>>) {
    std::vector<at::Tensor> l;
    while (pos < outs.size()) l.push_back(std::move(outs[pos++]));
    return l;
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return R{unflatten_result<std::tuple_element_t<I, R>>(outs, pos)...};
    }
    (std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

// Introspection on the state.
std::vector<Trace> last_traces(const JitState& s);
std::vector<Trace> last_backward_traces(const JitState& s);
Trace last_prologue_trace(const JitState& s);
std::vector<TensorInfo> last_saved_for_backward(const JitState& s);
int64_t cache_hits(const JitState& s);
int64_t cache_misses(const JitState& s);
CompileStats compile_stats(const JitState& s);

}  // namespace detail

// The compiled callable. Reusable, and thread-safe: any number of threads may
// call it at once (docs/threads.md).
template <typename F>
class Jitted {
 public:
  Jitted(F fn, JitOptions options, nn::Module* module = nullptr)
      : fn_(std::move(fn)), state_(detail::make_jit_state(std::move(options), module)) {}
  Jitted(F fn, JitOptions options, detail::ForeignModule module)
      : fn_(std::move(fn)),
        state_(detail::make_jit_state(std::move(options), nullptr, std::move(module))) {}

  template <typename... A>
  auto operator()(A&&... args) {
    detail::CallFrame frame;
    std::vector<FlatArg>& in = frame.inputs();
    (detail::flatten(in, args), ...);
    size_t pos = 0;
    if constexpr (detail::is_captured_v<F, A...>) {
      using R = std::invoke_result_t<F&, detail::concrete_t<A>...>;
      CaptureCall call{this, &in};
      detail::jit_call(*state_, frame, &capture_thunk<R, detail::concrete_t<A>...>, &call);
      return detail::unflatten_result<R>(frame.outs(), pos);
    } else {
      using R = std::invoke_result_t<F&, detail::normalized_t<A>...>;
      detail::jit_call(*state_, frame, &trace_thunk<R, detail::normalized_t<A>...>, this);
      return detail::unflatten_result<R>(frame.outs(), pos);
    }
  }

  const detail::JitState& state() const { return *state_; }

 private:
  template <typename R, typename... A>
  static Value trace_thunk(void* self, const std::vector<Value>& vals) {
    auto* j = static_cast<Jitted*>(self);
    [[maybe_unused]] size_t pos = 0;  // unread when A is empty
    std::tuple<A...> args{detail::rebuild<A>(vals, pos)...};
    R r = std::apply(j->fn_, std::move(args));
    std::vector<Value> flat;
    detail::flatten_result(flat, r);
    if constexpr (std::is_same_v<R, Tensor>) return flat[0];
    return Value(std::move(flat));
  }

  // The other way to make the trace: run the plain-libtorch callable on the
  // real arguments with capture on; `vals` are the trace's inputs for them.
  struct CaptureCall {
    Jitted* j;
    const std::vector<FlatArg>* in;  // the call's flat arguments
  };
  template <typename R, typename... A>
  static Value capture_thunk(void* ctx, const std::vector<Value>& vals) {
    Jitted* j = static_cast<CaptureCall*>(ctx)->j;
    const std::vector<FlatArg>& in = *static_cast<CaptureCall*>(ctx)->in;
    size_t pos = 0;
    std::tuple<A...> args{detail::rebuild_concrete<A>(in, pos)...};
    struct Run {
      Jitted* j;
      std::tuple<A...>* args;
    } run{j, &args};
    Value out = detail::capture_call(
        in, vals,
        [](void* p, std::vector<at::Tensor>& results) {
          auto* r = static_cast<Run*>(p);
          detail::flatten_concrete(results, std::apply(r->j->fn_, *r->args));
        },
        &run);
    if constexpr (std::is_same_v<R, at::Tensor>) return out.as_list().at(0);
    return out;
  }

  F fn_;
  std::shared_ptr<detail::JitState> state_;
};

namespace detail {
template <typename T>
struct IsModulePtr : std::false_type {};
template <typename M>
struct IsModulePtr<std::shared_ptr<M>> : std::bool_constant<std::derived_from<M, nn::Module>> {};

// A torch::nn module, recognised by its interface (this header includes no
// torch::nn header): a std::shared_ptr<Impl> or a TORCH_MODULE holder.
template <typename M>
concept TorchModuleImpl = !std::derived_from<M, nn::Module> && requires(const M& m) {
  { m.is_training() } -> std::same_as<bool>;
  m.modules();
  m.named_parameters();
};
template <typename T>
struct TorchModulePtr : std::false_type {};
template <typename M>
requires TorchModuleImpl<M>
struct TorchModulePtr<std::shared_ptr<M>> : std::true_type {
  using Impl = M;
  static std::shared_ptr<M> get(const std::shared_ptr<M>& p) { return p; }
};
template <typename H>
requires requires(const H& h) { h.ptr(); } && TorchModuleImpl<typename H::ContainedType>
struct TorchModulePtr<H> : std::true_type {
  using Impl = typename H::ContainedType;
  static std::shared_ptr<Impl> get(const H& h) { return h.ptr(); }
};

// A TorchScript module (torch::jit::Module, from torch::jit::load or made in
// C++), recognised by its interface.
template <typename M>
concept TorchScriptModule = requires(const M& m) {
  m.get_method("forward");
  m._ivalue();
  { m.is_training() } -> std::same_as<bool>;
};

[[noreturn]] void bad_script_result(const std::string& kind);

// Adds a non-tensor attribute's value (int, float, bool, string, None, and
// lists and tuples of them) to the guard signature: the graph interpreter
// reads such attributes as trace-time constants. Returns false for other
// kinds (objects, dicts), which are not guarded.
bool add_attribute_value(const c10::IValue& v, GuardSignature& sig);

// The identities of a TorchScript module object's tensor slots (parameters,
// buffers, tensor attributes) and submodules, and the values of its other
// attributes (`training` among them), recursively, in slot order.
template <typename Object>
void add_slot_identities(const Object& object, GuardSignature& sig) {
  for (const auto& slot : object.slots()) {
    if (slot.isTensor()) {
      sig.add(reinterpret_cast<intptr_t>(slot.toTensor().unsafeGetTensorImpl()));
    } else if (slot.isObject() && slot.toObjectRef().type()->is_module()) {
      sig.add(reinterpret_cast<intptr_t>(&slot.toObjectRef()));
      add_slot_identities(slot.toObjectRef(), sig);
    } else {
      add_attribute_value(slot, sig);
    }
  }
}

// The identities of a torch::nn module's registered parameters, buffers and
// submodules, recursively, read without allocating
// (torch_module_identities.cpp), so that replace_module or a newly
// registered tensor compiles a new entry.
void add_torch_module_identities(const torch::nn::Module& m, GuardSignature& sig);

// A TorchScript method's graph, copied and inlined (calls to submodules'
// methods replaced by their bodies), once per jit().
std::shared_ptr<torch::jit::Graph> inlined_graph(const std::shared_ptr<torch::jit::Graph>& g);

// Interprets an inlined forward graph node by node (script_interpreter.cpp):
// aten ops are called through the dispatcher, where capture translates them;
// attributes, constants, lists and tuples are host values; `If` and `Loop`
// are evaluated and unrolled on their host conditions; a node that reads
// tensor data into a host value is refused by name. TorchScript's own
// interpreter and graph optimizer never run.
c10::IValue interpret_script(const torch::jit::Graph& graph, c10::IValue self,
                             std::vector<c10::IValue> args);

// Runs a TorchScript module's forward on tensors through interpret_script;
// one tensor result.
template <typename M>
struct TorchScriptForward {
  M module;
  std::shared_ptr<torch::jit::Graph> forward;  // inlined
  template <typename... A>
  requires(std::same_as<std::remove_cvref_t<A>, at::Tensor> && ...)
  at::Tensor operator()(A&&... a) {
    auto r = interpret_script(*forward, module._ivalue(), {c10::IValue(std::forward<A>(a))...});
    if (!r.isTensor()) bad_script_result(r.tagKind());
    return r.toTensor();
  }
};

// Calls the module's forward with exactly the arguments it takes, never
// with thunder::Tensor (so capture is chosen, also for modules whose forward
// takes anything, as torch::nn::Sequential's does).
template <typename A>
inline constexpr bool is_thunder_tensor_v =
    std::same_as<std::remove_cvref_t<A>, Tensor> || std::same_as<std::remove_cvref_t<A>, TensorList>;
template <typename Impl>
struct TorchForward {
  std::shared_ptr<Impl> module;
  template <typename... A>
  requires(!is_thunder_tensor_v<A> && ...) &&
          requires(Impl& m, A&&... a) { m.forward(std::forward<A>(a)...); }
  auto operator()(A&&... a) const { return module->forward(std::forward<A>(a)...); }
};
}  // namespace detail

template <typename F>
requires(!std::derived_from<std::remove_cvref_t<F>, nn::Module> &&
         !detail::IsModulePtr<std::remove_cvref_t<F>>::value &&
         !detail::TorchModulePtr<std::remove_cvref_t<F>>::value &&
         !detail::TorchScriptModule<std::remove_cvref_t<F>>)
    Jitted<std::decay_t<F>> jit(F&& fn, JitOptions options = {}) {
  return Jitted<std::decay_t<F>>(std::forward<F>(fn), std::move(options));
}

// A module: its forward is traced and its parameters become trace inputs.
template <typename M>
requires std::derived_from<M, nn::Module>
auto jit(std::shared_ptr<M> m, JitOptions options = {}) {
  auto fn = [m](auto&&... a) { return m->forward(std::forward<decltype(a)>(a)...); };
  return Jitted<decltype(fn)>(std::move(fn), std::move(options), m.get());
}
template <typename M>
requires std::derived_from<M, nn::Module>
auto jit(M& m, JitOptions options = {}) {
  auto fn = [&m](auto&&... a) { return m.forward(std::forward<decltype(a)>(a)...); };
  return Jitted<decltype(fn)>(std::move(fn), std::move(options), &m);
}

// A torch::nn module (plain libtorch): run through capture; its parameters
// and buffers are captured inputs read at call time (gradients reach
// model->parameters()); every submodule's training flag is guarded, and so
// are the identities of its registered tensors and submodules.
template <typename H>
requires detail::TorchModulePtr<std::remove_cvref_t<H>>::value
auto jit(const H& model, JitOptions options = {}) {
  using P = detail::TorchModulePtr<std::remove_cvref_t<H>>;
  using Impl = typename P::Impl;
  std::shared_ptr<Impl> impl = P::get(model);
  detail::ForeignModule foreign;
  for (const auto& m : impl->modules())
    foreign.training_flags.push_back([m] { return m->is_training(); });
  foreign.named_tensors = [m = impl.get()] {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& p : m->named_parameters()) out.emplace_back(p.key(), p.value());
    for (const auto& b : m->named_buffers()) out.emplace_back(b.key(), b.value());
    return out;
  };
  foreign.add_identities = [m = impl.get()](GuardSignature& sig) {
    detail::add_torch_module_identities(*m, sig);
  };
  if constexpr (requires { impl->thunder_state(); }) foreign.interfaces = impl->thunder_state();
  return Jitted<detail::TorchForward<Impl>>(detail::TorchForward<Impl>{std::move(impl)},
                                            std::move(options), std::move(foreign));
}

// A TorchScript module: its inlined forward graph is interpreted under
// capture (no TorchScript interpreter); parameters are captured inputs, the
// module's training flag is guarded (read from its attribute slot, found
// once), and so are every submodule's tensor identities and attribute values.
template <typename M>
requires detail::TorchScriptModule<M>
auto jit(const M& module, JitOptions options = {}) {
  auto object = module._ivalue();
  detail::ForeignModule foreign;
  if (auto slot = object->type()->findAttributeSlot("training"))  // absent in some C++-made ones
    foreign.training_flags.push_back([object, s = *slot] { return object->getSlot(s).toBool(); });
  foreign.named_tensors = [module] {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& p : module.named_parameters()) out.emplace_back(p.name, p.value);
    for (const auto& b : module.named_buffers()) out.emplace_back(b.name, b.value);
    return out;
  };
  foreign.add_identities = [object](GuardSignature& sig) {
    detail::add_slot_identities(*object, sig);
  };
  detail::TorchScriptForward<M> forward{
      module, detail::inlined_graph(module.get_method("forward").graph())};
  return Jitted<detail::TorchScriptForward<M>>(std::move(forward), std::move(options),
                                               std::move(foreign));
}

// examine of a TorchScript module: its forward graph walked by the same
// interpreter jit uses.
template <typename M, typename... A>
requires detail::TorchScriptModule<std::remove_cvref_t<M>>
ExamineReport examine(M&& module, A&&... args) {
  std::vector<at::Tensor> tensors;
  (detail::collect_tensor_argument(tensors, args), ...);
  detail::TorchScriptForward<std::remove_cvref_t<M>> forward{
      module, detail::inlined_graph(module.get_method("forward").graph())};
  return detail::examine_call([&] { (void)forward(args...); }, tensors);
}

template <typename F>
std::vector<Trace> last_traces(const Jitted<F>& j) {
  return detail::last_traces(j.state());
}
template <typename F>
std::vector<Trace> last_backward_traces(const Jitted<F>& j) {
  return detail::last_backward_traces(j.state());
}
template <typename F>
Trace last_prologue_trace(const Jitted<F>& j) {
  return detail::last_prologue_trace(j.state());
}
template <typename F>
std::vector<TensorInfo> last_saved_for_backward(const Jitted<F>& j) {
  return detail::last_saved_for_backward(j.state());
}
template <typename F>
int64_t cache_hits(const Jitted<F>& j) {
  return detail::cache_hits(j.state());
}
template <typename F>
int64_t cache_misses(const Jitted<F>& j) {
  return detail::cache_misses(j.state());
}
template <typename F>
CompileStats compile_stats(const Jitted<F>& j) {
  return detail::compile_stats(j.state());
}

}  // namespace thunder
