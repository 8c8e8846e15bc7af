// thunder_cpp: thunder::jit for PyTorch code written in Python.
//
// A Python function (or torch.nn.Module) runs once per cache miss on the
// caller's real tensors with dispatcher capture on (capture.h): Python's
// torch ops reach the same libtorch dispatcher as C++ code, so the aten ops
// it calls become the trace. On a cache hit Python is not entered at all:
// the guards and the compiled program run in C++ with the GIL released.
// Outputs are torch.Tensors; when something requires grad they are wired to
// the compiled backward, so loss.backward() and torch.optim work as usual.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <thunder/frontend/captured_function.h>
#include <thunder/thunder.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/autograd/python_variable.h>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// How the Python function returned its tensors, as seen when it was last
// traced (a cache hit does not run it).
enum class ResultKind : int { Tensor, Tuple, List };

struct PyFunction {
  py::object fn;
  bool is_module = false;
  std::vector<py::object> submodules;  // module.modules(), self first
  // Each submodule's _parameters, _buffers and _modules dicts, whose values'
  // identities are guarded (read per call, no attribute lookups), and the
  // identities of the children they held when the lists were last made
  // (set by read_module_state; empty until the first call).
  std::vector<py::object> member_dicts;
  std::vector<intptr_t> children;

  // (Re)reads the module tree: when jitted, and when a submodule was assigned
  // or deleted since.
  void read_tree() {
    submodules.clear();
    member_dicts.clear();
    for (py::handle m : fn.attr("modules")()) {
      submodules.push_back(py::reinterpret_borrow<py::object>(m));
      for (const char* dict : {"_parameters", "_buffers", "_modules"})
        member_dicts.push_back(submodules.back().attr(dict));
    }
  }
  std::atomic<int> result_kind{static_cast<int>(ResultKind::Tensor)};
};

std::string type_name(py::handle h) { return py::str(h.get_type().attr("__name__")); }

// The call's arguments: tensors, and up to four Python numbers, which the
// function sees as the same Python objects (an int stays an int: range(n)
// works) and which are guarded by value like C++ number arguments. `kinds`
// records, for each position, what was there (2 bits each) and how many
// positions there were, so calls of different shapes never share an entry.
constexpr size_t kMaxNumbers = 4;
enum ArgKind : int64_t { kTensorArg = 0, kIntArg = 1, kFloatArg = 2, kBoolArg = 3 };

struct SplitArgs {
  std::vector<at::Tensor> tensors;
  std::array<double, kMaxNumbers> numbers{};
  int64_t kinds = 0;
};

// With jit(..., runtime_numbers=True) an int or float argument reaches the
// function as a 0-dim int64 or float64 tensor: a runtime input of the trace
// (a new value reuses the entry), promoting like a Python number in tensor
// arithmetic (a 0-dim tensor does not widen a dimensioned tensor's dtype).
bool is_runtime_number(py::handle h, bool runtime_numbers) {
  return runtime_numbers && !PyBool_Check(h.ptr()) &&
         (PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()));
}

SplitArgs split_args(const py::args& args, bool runtime_numbers = false) {
  SplitArgs out;
  size_t n_numbers = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    py::handle h = args[i];
    int64_t kind = kTensorArg;
    if (THPVariable_Check(h.ptr())) {
      out.tensors.push_back(THPVariable_Unpack(h.ptr()));
    } else if (is_runtime_number(h, runtime_numbers)) {
      out.tensors.push_back(PyLong_Check(h.ptr())
                                ? at::scalar_tensor(h.cast<int64_t>(), at::kLong)
                                : at::scalar_tensor(h.cast<double>(), at::kDouble));
    } else if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())) {
      if (n_numbers == kMaxNumbers)
        thunder::fail("thunder_cpp.jit: argument {} is a number beyond the first {}", i,
                      kMaxNumbers);
      kind = PyBool_Check(h.ptr()) ? kBoolArg : PyLong_Check(h.ptr()) ? kIntArg : kFloatArg;
      out.numbers[n_numbers++] = h.cast<double>();
    } else {
      thunder::fail(
          "thunder_cpp.jit: argument {} is a {}; jitted Python functions take torch.Tensor "
          "and number arguments (close over other objects instead)",
          i, type_name(h));
    }
    out.kinds |= kind << (2 * i);
  }
  out.kinds |= static_cast<int64_t>(args.size()) << 40;
  return out;
}

py::object wrap(const at::Tensor& t) {
  if (!t.defined()) return py::none();
  return py::reinterpret_steal<py::object>(THPVariable_Wrap(t));
}

// The Python arguments again, in their order, from the split form.
py::tuple join_args(const std::vector<at::Tensor>& tensors, int64_t kinds,
                    const std::array<double, kMaxNumbers>& numbers) {
  const size_t n = static_cast<size_t>(kinds >> 40);
  py::tuple in(n);
  size_t t = 0, k = 0;
  for (size_t i = 0; i < n; ++i) {
    switch ((kinds >> (2 * i)) & 3) {
      case kTensorArg:
        in[i] = wrap(tensors[t++]);
        break;
      case kIntArg:
        in[i] = py::int_(static_cast<int64_t>(numbers[k++]));
        break;
      case kFloatArg:
        in[i] = py::float_(numbers[k++]);
        break;
      default:
        in[i] = py::bool_(numbers[k++] != 0);
        break;
    }
  }
  return in;
}

// The ctx a custom torch.autograd.Function's forward and backward get under
// capture: what torch's own ctx offers (save_for_backward, saved_tensors,
// needs_input_grad, mark_non_differentiable, set_materialize_grads, and any
// attribute the forward sets).
struct FunctionCtx {
  std::vector<py::object> saved;
  std::vector<at::Tensor> non_differentiable;
  py::tuple needs_input_grad{0};
};

std::vector<at::Tensor> tensors_of(py::handle r, const std::string& what) {
  std::vector<at::Tensor> out;
  auto add = [&](py::handle h) {
    if (!THPVariable_Check(h.ptr()))
      thunder::fail(
          "{} a {}; under thunder_cpp.jit it returns tensors (a tensor or a tuple of them)", what,
          type_name(h));
    out.push_back(THPVariable_Unpack(h.ptr()));
  };
  if (py::isinstance<py::tuple>(r))
    for (py::handle h : r) add(h);
  else
    add(r);
  return out;
}

// A stand-in for each tensor in v (one level of tuple or list too), else v.
py::object with_stand_ins(thunder::detail::CapturedFunction& call, py::handle v, bool saved) {
  if (THPVariable_Check(v.ptr())) return wrap(call.stand_in(THPVariable_Unpack(v.ptr()), saved));
  if (!py::isinstance<py::tuple>(v) && !py::isinstance<py::list>(v))
    return py::reinterpret_borrow<py::object>(v);
  py::list l;
  for (py::handle x : v)
    l.append(THPVariable_Check(x.ptr()) ? wrap(call.stand_in(THPVariable_Unpack(x.ptr()), saved))
                                        : py::reinterpret_borrow<py::object>(x));
  return py::isinstance<py::tuple>(v) ? py::object(py::tuple(l)) : py::object(l);
}

// Function.apply under capture (captured_function.h): the forward and then the
// backward run once, recorded as the bodies of `Name` and `Name_backward`.
py::object traced_apply(py::handle cls, const py::args& args) {
  if (!thunder::detail::capturing()) {  // another thread, outside any jitted call
    py::object base = py::module_::import("torch._C").attr("_FunctionBase");
    return base.attr("__dict__")["apply"].attr("__get__")(py::none(), cls)(*args);
  }
  const std::string name = py::str(cls.attr("__name__"));
  const std::string who = "custom torch.autograd.Function '" + name + "'";
  std::vector<at::Tensor> inputs;
  std::vector<int> tensor_index(args.size(), -1);
  for (size_t i = 0; i < args.size(); ++i)
    if (THPVariable_Check(args[i].ptr())) {
      tensor_index[i] = static_cast<int>(inputs.size());
      inputs.push_back(THPVariable_Unpack(args[i].ptr()));
    }
  thunder::detail::CapturedFunction call(name, inputs);
  py::object ctx_object = py::cast(FunctionCtx());
  FunctionCtx& ctx = ctx_object.cast<FunctionCtx&>();
  py::tuple needs(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    needs[i] = py::bool_(tensor_index[i] >= 0 && call.input_requires_grad(tensor_index[i]));
  ctx.needs_input_grad = needs;

  at::AutoGradMode no_grad(false);  // as torch runs both
  call.begin_forward();
  py::object result = cls.attr("forward")(ctx_object, *args);
  const std::vector<at::Tensor> outputs = tensors_of(result, who + ": forward returned");
  call.end_forward(outputs, ctx.non_differentiable);

  for (py::object& t : ctx.saved) t = with_stand_ins(call, t, true);
  py::dict attributes = ctx_object.attr("__dict__");
  for (auto [key, value] : attributes) attributes[key] = with_stand_ins(call, value, false);
  py::tuple cotangents(outputs.size());
  const std::vector<at::Tensor> ones = call.begin_backward();
  for (size_t j = 0; j < ones.size(); ++j) cotangents[j] = wrap(ones[j]);
  py::object grads = cls.attr("backward")(ctx_object, *cotangents);
  py::tuple g = py::isinstance<py::tuple>(grads) ? py::tuple(grads) : py::make_tuple(grads);
  size_t n = g.size();
  while (n > args.size() && g[n - 1].is_none()) --n;  // extra trailing Nones are fine, as in torch
  if (n != args.size())
    thunder::fail("{}: backward returned {} gradients, expected {} (one per forward argument)", who,
                  g.size(), args.size());
  std::vector<at::Tensor> per_tensor(inputs.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (g[i].is_none()) continue;
    if (tensor_index[i] < 0)
      thunder::fail("{}: backward returned a gradient for argument {}, which is a {}, not a tensor",
                    who, i, type_name(args[i]));
    if (!THPVariable_Check(g[i].ptr()))
      thunder::fail("{}: backward returned a {} for argument {}; expected a tensor or None", who,
                    type_name(g[i]), i);
    per_tensor[tensor_index[i]] = THPVariable_Unpack(g[i].ptr());
  }
  call.end_backward(per_tensor);
  call.finish();
  return result;
}

// While the Python function runs under capture, Function.apply is traced_apply.
// (Needs the GIL, which the caller holds.)
class TraceCustomFunctions {
 public:
  TraceCustomFunctions() : function_(py::module_::import("torch.autograd").attr("Function")) {
    py::dict own = function_.attr("__dict__");
    if (own.contains("apply")) saved_ = own["apply"];
    py::setattr(
        function_, "apply",
        py::module_::import("builtins").attr("classmethod")(py::cpp_function(traced_apply)));
  }
  ~TraceCustomFunctions() {
    if (saved_)
      py::setattr(function_, "apply", saved_);
    else
      py::delattr(function_, "apply");
  }

 private:
  py::object function_, saved_;
};

// Runs the Python function on real tensors (inside capture, on a cache miss).
std::vector<at::Tensor> call_python(PyFunction& f, const std::vector<at::Tensor>& tensors,
                                    int64_t kinds, const std::array<double, kMaxNumbers>& numbers) {
  py::gil_scoped_acquire gil;
  py::tuple in = join_args(tensors, kinds, numbers);
  thunder::detail::take_capture_error();
  py::object r;
  try {
    TraceCustomFunctions custom_functions;
    r = f.fn(*in);
  } catch (py::error_already_set&) {
    // torch's bindings turned capture's thunder::Error into a RuntimeError.
    if (std::exception_ptr e = thunder::detail::take_capture_error()) std::rethrow_exception(e);
    throw;
  }
  std::vector<at::Tensor> out;
  auto add = [&](py::handle h, size_t i) {
    if (!THPVariable_Check(h.ptr()))
      thunder::fail(
          "thunder_cpp.jit: result {} is a {}; a jitted Python function returns a "
          "torch.Tensor or a tuple or list of them",
          i, type_name(h));
    out.push_back(THPVariable_Unpack(h.ptr()));
  };
  if (THPVariable_Check(r.ptr())) {
    f.result_kind = static_cast<int>(ResultKind::Tensor);
    add(r, 0);
  } else if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
    f.result_kind =
        static_cast<int>(py::isinstance<py::tuple>(r) ? ResultKind::Tuple : ResultKind::List);
    size_t i = 0;
    for (py::handle h : r) add(h, i++);
  } else {
    add(r, 0);  // names the type
  }
  return out;
}

// The training flags of a module's submodules for the call in progress on
// this thread: read from Python (GIL held) before the jitted call, then
// guarded through ForeignModule like any module's flags, one per submodule.
thread_local std::vector<char> t_training;

// The identities of the submodules' parameters, buffers and children, read
// alongside the flags: replacing one (`m.fc.weight = nn.Parameter(...)`,
// `m.fc = nn.Linear(...)`) compiles a new entry.
thread_local std::vector<intptr_t> t_identities, t_children;

// Reads the identities of every submodule's members, in dict order.
void read_identities(const PyFunction& f) {
  t_identities.clear();
  t_children.clear();
  for (size_t k = 0; k < f.member_dicts.size(); ++k) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(f.member_dicts[k].ptr(), &pos, &key, &value)) {
      t_identities.push_back(reinterpret_cast<intptr_t>(value));
      if (k % 3 == 2) t_children.push_back(reinterpret_cast<intptr_t>(value));  // _modules
    }
  }
}

void read_module_state(PyFunction& f) {
  read_identities(f);
  if (t_children != f.children) {  // a submodule assigned or deleted: walk the new tree
    f.read_tree();
    read_identities(f);
    f.children = t_children;
  }
  t_training.resize(f.submodules.size());
  for (size_t i = 0; i < f.submodules.size(); ++i) {
    t_training[i] = f.submodules[i].attr("training").cast<bool>();
    t_identities.push_back(t_training[i]);  // also those of submodules added since jit
  }
}

// One compiled callable per number of tensor arguments (a Python function is
// called with a fixed count in practice): each argument is its own input, so
// guards and trace names are those of a C++ function with that signature;
// the trailing arguments carry the Python numbers (split_args).
struct ArityJit {
  virtual ~ArityJit() = default;
  virtual std::vector<at::Tensor> call(const SplitArgs& args) = 0;
  virtual const thunder::detail::JitState& state() const = 0;
};

constexpr size_t kMaxArgs = 8;  // make_for_arity's list below

// A module's training flags (t_training) and its parameters and buffers by
// path: the trace's named inputs (t_fc1_weight), read when it is traced (the
// GIL is taken back for it).
thunder::detail::ForeignModule foreign_module_of(PyFunction* f) {
  thunder::detail::ForeignModule m;
  if (!f->is_module) return m;
  for (size_t i = 0; i < f->submodules.size(); ++i)
    m.training_flags.push_back([i] { return i < t_training.size() && t_training[i] != 0; });
  m.add_identities = [](thunder::GuardSignature& sig) {
    for (intptr_t id : t_identities) sig.add(id);
  };
  m.named_tensors = [f] {
    py::gil_scoped_acquire gil;
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const char* kind : {"named_parameters", "named_buffers"})
      for (py::handle item : f->fn.attr(kind)()) {
        py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
        out.emplace_back(pair[0].cast<std::string>(), THPVariable_Unpack(pair[1].ptr()));
      }
    return out;
  };
  return m;
}

template <size_t>
using TensorArg = at::Tensor;

template <size_t... I>
struct ArityJitOf : ArityJit {
  using Fn = std::function<std::vector<at::Tensor>(TensorArg<I>..., int64_t, double, double, double,
                                                   double)>;

  ArityJitOf(PyFunction* f, thunder::JitOptions o)
      : jitted(
            [f](TensorArg<I>... a, int64_t kinds, double n0, double n1, double n2, double n3) {
              return call_python(*f, {a...}, kinds, {n0, n1, n2, n3});
            },
            std::move(o), foreign_module_of(f)) {}
  std::vector<at::Tensor> call(const SplitArgs& args) override {
    const auto& n = args.numbers;
    return jitted(args.tensors[I]..., args.kinds, n[0], n[1], n[2], n[3]);
  }
  const thunder::detail::JitState& state() const override { return jitted.state(); }

  thunder::Jitted<Fn> jitted;
};

template <size_t... I>
std::unique_ptr<ArityJit> make_arity_jit(std::index_sequence<I...>, PyFunction* f,
                                         thunder::JitOptions o) {
  return std::make_unique<ArityJitOf<I...>>(f, std::move(o));
}

template <size_t... N>
std::unique_ptr<ArityJit> make_for_arity(size_t n, PyFunction* f, thunder::JitOptions o,
                                         std::index_sequence<N...>) {
  std::unique_ptr<ArityJit> out;
  ((n == N ? (out = make_arity_jit(std::make_index_sequence<N>{}, f, o), 0) : 0), ...);
  return out;
}

class JitFunction {
 public:
  JitFunction(py::object fn, thunder::JitOptions options, bool runtime_numbers)
      : f_(std::make_unique<PyFunction>()),
        options_(std::move(options)),
        runtime_numbers_(runtime_numbers) {
    f_->fn = std::move(fn);
    f_->is_module = py::isinstance(f_->fn, py::module_::import("torch.nn").attr("Module"));
    if (f_->is_module) f_->read_tree();
  }

  py::object call(const py::args& args) {
    SplitArgs in = split_args(args, runtime_numbers_);
    const size_t n = in.tensors.size();
    if (n < 1 || n > kMaxArgs)
      thunder::fail("thunder_cpp.jit: called with {} tensors; it takes 1 to {}", n, kMaxArgs);
    std::unique_ptr<ArityJit>& j = by_arity_[n];
    if (!j) {
      // The trace's inputs are named after the Python parameters that hold tensors.
      thunder::JitOptions o = options_;
      std::vector<std::string> names;
      for (size_t i = 0; i < args.size(); ++i)
        if (THPVariable_Check(args[i].ptr()) || is_runtime_number(args[i], runtime_numbers_))
          names.push_back(i < o.arg_names.size() && !o.arg_names[i].empty()
                              ? o.arg_names[i]
                              : "x" + std::to_string(i));
      names.insert(names.end(), {"argument_kinds", "number0", "number1", "number2", "number3"});
      o.arg_names = std::move(names);
      j = make_for_arity(n, f_.get(), std::move(o), std::index_sequence<1, 2, 3, 4, 5, 6, 7, 8>{});
    }
    last_ = j.get();
    if (f_->is_module) read_module_state(*f_);
    std::vector<at::Tensor> out;
    {
      py::gil_scoped_release no_gil;  // taken back only to run Python on a miss
      out = j->call(in);
    }
    switch (static_cast<ResultKind>(f_->result_kind.load())) {
      case ResultKind::Tensor:
        return wrap(out.at(0));
      case ResultKind::Tuple: {
        py::tuple t(out.size());
        for (size_t i = 0; i < out.size(); ++i) t[i] = wrap(out[i]);
        return t;
      }
      case ResultKind::List: {
        py::list l;
        for (const at::Tensor& o : out) l.append(wrap(o));
        return l;
      }
    }
    return py::none();
  }

  // parameters(), train(), eval(), state_dict() ... reach the original.
  py::object getattr(const std::string& name) const { return f_->fn.attr(name.c_str()); }

  // The state of the most recently called arity.
  const thunder::detail::JitState& state() const {
    if (!last_) thunder::fail("thunder_cpp: the jitted function has not been called yet");
    return last_->state();
  }

 private:
  std::unique_ptr<PyFunction> f_;  // outlives the callables that point to it
  thunder::JitOptions options_;
  bool runtime_numbers_ = false;
  std::array<std::unique_ptr<ArityJit>, kMaxArgs + 1> by_arity_;
  ArityJit* last_ = nullptr;
};

// The names of fn's positional parameters (a module's forward's), so traces
// read like the Python code; empty where Python cannot tell.
std::vector<std::string> parameter_names(const py::object& fn) {
  std::vector<std::string> names;
  try {
    py::object inspect = py::module_::import("inspect");
    py::object target = py::hasattr(fn, "forward") ? fn.attr("forward") : fn;
    for (py::handle p : inspect.attr("signature")(target).attr("parameters").attr("values")()) {
      const std::string kind = py::str(p.attr("kind").attr("name"));
      if (kind != "POSITIONAL_ONLY" && kind != "POSITIONAL_OR_KEYWORD") break;
      names.push_back(py::str(p.attr("name")));
    }
  } catch (py::error_already_set&) {
    names.clear();  // a builtin without a signature: x0, x1, ...
  }
  return names;
}

thunder::JitOptions options_from(const py::kwargs& kw) {
  thunder::JitOptions o;
  for (auto [key, value] : kw) {
    const std::string k = py::str(key);
    if (k == "executors")
      o.executors = value.cast<std::vector<std::string>>();
    else if (k == "fusion_type")
      o.fusion_type = value.cast<std::string>();
    else if (k == "rematerialize")
      o.rematerialize = value.cast<bool>();
    else if (k == "disable_replace_uniform")
      o.disable_replace_uniform = value.cast<bool>();
    else if (k == "recognize_attention")
      o.recognize_attention = value.cast<bool>();
    else if (k == "skip_inplace_functionalization")
      o.skip_inplace_functionalization = value.cast<bool>();
    else if (k == "strict_saved_for_backward")
      o.strict_saved_for_backward = value.cast<bool>();
    else if (k == "schedule_collectives")
      o.schedule_collectives = value.cast<bool>();
    else if (k == "cache")
      o.cache = value.cast<std::string>();
    else if (k == "arg_names")
      o.arg_names = value.cast<std::vector<std::string>>();
    else if (k == "max_cache_entries")
      o.max_cache_entries = value.cast<int64_t>();
    else
      thunder::fail(
          "thunder_cpp.jit: unknown option '{}' (executors, fusion_type, rematerialize, "
          "disable_replace_uniform, recognize_attention, skip_inplace_functionalization, "
          "strict_saved_for_backward, schedule_collectives, cache, arg_names, max_cache_entries, "
          "runtime_numbers)",
          k);
  }
  thunder::validate(o);
  return o;
}

}  // namespace

PYBIND11_MODULE(thunder_cpp, m) {
  m.doc() = "thunder-cpp: a compiler for PyTorch programs (thunder::jit from Python)";
  py::register_exception<thunder::Error>(m, "Error", PyExc_RuntimeError);

  py::class_<thunder::Trace>(m, "Trace", "One stage of a compiled program, printed as Python.")
      .def("__str__", &thunder::Trace::str)
      .def("__repr__",
           [](const thunder::Trace& t) {
             return "<thunder_cpp.Trace '" + std::string(thunder::stage_name(t)) + "'>";
           })
      .def_property_readonly(
          "stage", [](const thunder::Trace& t) { return std::string(thunder::stage_name(t)); });

  py::class_<FunctionCtx>(m, "FunctionCtx", py::dynamic_attr(),
                          "The ctx of a custom torch.autograd.Function traced by jit.")
      .def("save_for_backward",
           [](FunctionCtx& c, const py::args& a) {
             c.saved.clear();
             for (py::handle h : a) c.saved.push_back(py::reinterpret_borrow<py::object>(h));
           })
      .def_property_readonly("saved_tensors",
                             [](const FunctionCtx& c) {
                               py::tuple t(c.saved.size());
                               for (size_t i = 0; i < c.saved.size(); ++i) t[i] = c.saved[i];
                               return t;
                             })
      .def("mark_non_differentiable",
           [](FunctionCtx& c, const py::args& a) {
             for (const at::Tensor& t : tensors_of(a, "mark_non_differentiable: got"))
               c.non_differentiable.push_back(t);
           })
      .def("mark_dirty",
           [](FunctionCtx&, const py::args&) {
             thunder::fail(
                 "custom torch.autograd.Function: mark_dirty (a forward that writes its "
                 "arguments in place) is not traced by thunder_cpp.jit; return a new tensor");
           })
      // Accepted for torch's API; the recorded backward always gets tensors
      // (ones while recording, then the real cotangents or zeros).
      .def("set_materialize_grads", [](FunctionCtx&, bool) {})
      .def_readonly("needs_input_grad", &FunctionCtx::needs_input_grad);

  py::class_<JitFunction>(m, "JitFunction", "A compiled function or module.")
      .def("__call__", &JitFunction::call)
      .def("__getattr__", &JitFunction::getattr);

  m.def(
      "jit",
      [](py::object fn, const py::kwargs& kw) {
        if (!PyCallable_Check(fn.ptr()))
          thunder::fail("thunder_cpp.jit: expected a function or torch.nn.Module, got a {}",
                        type_name(fn));
        py::kwargs options;
        bool runtime_numbers = false;
        for (auto [key, value] : kw) {
          if (py::str(key).cast<std::string>() == "runtime_numbers")
            runtime_numbers = value.cast<bool>();
          else
            options[key] = value;
        }
        thunder::JitOptions o = options_from(options);
        if (o.arg_names.empty()) o.arg_names = parameter_names(fn);
        return JitFunction(std::move(fn), std::move(o), runtime_numbers);
      },
      py::arg("fn"),
      "Compiles fn (a function over torch.Tensors, or a torch.nn.Module); keyword options "
      "are JitOptions fields, and runtime_numbers=True (int and float arguments reach fn as "
      "0-dim tensors: runtime inputs instead of values guarded one by one).");

  m.def("last_traces",
        [](const JitFunction& j) { return thunder::detail::last_traces(j.state()); });
  m.def("last_backward_traces",
        [](const JitFunction& j) { return thunder::detail::last_backward_traces(j.state()); });
  m.def("last_prologue_trace",
        [](const JitFunction& j) { return thunder::detail::last_prologue_trace(j.state()); });
  m.def("cache_hits", [](const JitFunction& j) { return thunder::detail::cache_hits(j.state()); });
  m.def("cache_misses",
        [](const JitFunction& j) { return thunder::detail::cache_misses(j.state()); });
  m.def("compile_stats", [](const JitFunction& j) {
    const thunder::CompileStats s = thunder::detail::compile_stats(j.state());
    py::dict d;
    d["compiles"] = s.compiles;
    d["last_compile_ms"] = s.last_compile_ms;
    d["pass_ms"] = s.pass_ms;
    d["fusion_regions"] = s.fusion_regions;
    d["cache_entries"] = s.cache_entries;
    d["cache_evictions"] = s.cache_evictions;
    return d;
  });
  m.def("last_saved_for_backward", [](const JitFunction& j) {
    py::list out;
    for (const thunder::TensorInfo& t : thunder::detail::last_saved_for_backward(j.state())) {
      py::handle dtype(reinterpret_cast<PyObject*>(torch::getTHPDtype(t.dtype)));
      out.append(py::make_tuple(t.name, py::tuple(py::cast(t.shape)),
                                py::reinterpret_borrow<py::object>(dtype), t.bytes));
    }
    return out;
  });
  m.def(
      "write_report",
      [](const JitFunction& j, const std::string& path) {
        thunder::detail::write_report(j.state(), path);
      },
      py::arg("jfn"), py::arg("path"),
      "Writes the last compile of jfn as one self-contained HTML page (docs/report.md).");
  m.def(
      "examine",
      [](py::object fn, const py::args& args) {
        SplitArgs in = split_args(args);
        PyFunction f;
        f.fn = std::move(fn);
        return thunder::detail::examine_call(
                   [&] { call_python(f, in.tensors, in.kinds, in.numbers); }, in.tensors)
            .str();
      },
      "Runs fn(*args) once and returns a table of the aten ops it called and whether "
      "thunder_cpp.jit can translate each.");

  m.def(
      "checkpoint",
      [](py::object fn, const py::args& args) {
        if (!thunder::detail::capturing()) return fn(*args);  // eagerly: the same values
        thunder::detail::CheckpointRegion region;
        py::object out = fn(*args);
        thunder::TensorList outs;
        for (const at::Tensor& t : tensors_of(out, "thunder_cpp.checkpoint: the function returned"))
          outs.push_back(thunder::detail::captured_tensor(t));
        region.finish(outs);
        return out;
      },
      py::arg("fn"),
      "Calls fn(*args); inside a jitted function the values fn makes are recomputed in the "
      "backward instead of saved (activation checkpointing, like torch.utils.checkpoint).");

  py::enum_<thunder::OpTag>(m, "OpTag")
      .value("DONT_RECOMPUTE_IN_BACKWARD", thunder::OpTag::DONT_RECOMPUTE_IN_BACKWARD)
      .value("RECOMPUTE_IN_BACKWARD", thunder::OpTag::RECOMPUTE_IN_BACKWARD);
  m.def(
      "add_tags",
      [](const std::string& symbol_id, const std::vector<thunder::OpTag>& tags) {
        thunder::RegistryChange permanent = thunder::add_tags(symbol_id, tags);
      },
      "Adds recompute-policy tags to a symbol for the rest of the process (every jitted "
      "function recompiles on its next call).");
}
