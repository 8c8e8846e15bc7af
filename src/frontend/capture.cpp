// Plain-libtorch capture: the session behind thunder::jit's capture path and
// thunder::examine. The user's function runs eagerly on its real inputs; each
// aten op it calls comes through the fallback (capture_key.cpp) to
// CaptureSession::on_op, which runs the op and translates it with the table
// in capture_ops.cpp into ltorch symbols on the active trace. Tensors are
// matched to trace values by TensorImpl identity. The session holds a weak
// reference to every TensorImpl the run meets: the object stays allocated (its
// address is never reused for another tensor) while its data is freed when
// the code drops it, as eagerly. Holding every intermediate's data instead
// made the capture run touch fresh memory throughout (page faults: a
// char-GPT forward took twice its eager time).
#include "thunder/frontend/capture.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>

#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "capture_session.h"
#include "dispatch.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/executors/kernel.h"
#include "thunder/frontend/captured_function.h"
#include "thunder/prims/prims.h"
#include "value_guards.h"

namespace thunder {

bool ExamineReport::all_supported() const {
  for (const Op& o : ops)
    if (o.support == Support::Unsupported) return false;  // an opaque op runs
  return true;
}

std::string ExamineReport::str() const {
  size_t width = 2;
  for (const Op& o : ops) width = std::max(width, o.name.size());
  std::ostringstream os;
  os << fmt::format("{:<{}}  {:>5}  {}\n", "op", width, "count", "status");
  int64_t n[3] = {0, 0, 0};  // by Support
  for (const Op& o : ops) {
    ++n[static_cast<int>(o.support)];
    const std::string status = o.support == Support::Translated ? std::string("translated")
                               : o.support == Support::Opaque   ? std::string("opaque (no grad)")
                                                                : "unsupported: " + o.reason;
    os << fmt::format("{:<{}}  {:>5}  {}\n", o.name, width, o.count, status);
  }
  const auto T = static_cast<int>(Support::Translated), O = static_cast<int>(Support::Opaque),
             U = static_cast<int>(Support::Unsupported);
  if (n[O] == 0)
    os << fmt::format("{} ops, {} translated, {} unsupported\n", ops.size(), n[T], n[U]);
  else
    os << fmt::format("{} ops, {} translated, {} opaque (no grad), {} unsupported\n", ops.size(),
                      n[T], n[O], n[U]);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const ExamineReport& r) { return os << r.str(); }

namespace detail {

namespace {
// Ops that read their first argument's metadata only (they overwrite it, or
// make a tensor like it): an empty tensor there is not a literal (value_of).
bool reads_first_argument_metadata_only(const std::string& name) {
  static const std::unordered_set<std::string> ops = {
      "aten::fill_.Scalar", "aten::fill_.Tensor", "aten::zero_",      "aten::copy_",
      "aten::uniform_",     "aten::normal_",      "aten::empty_like", "aten::zeros_like",
      "aten::ones_like",    "aten::full_like"};
  return ops.count(name) != 0;
}
}  // namespace

class CaptureSession {
 public:
  enum class Mode { Jit, Examine };
  explicit CaptureSession(Mode m) : mode_(m) {}

  // A tensor argument of the jitted function and its trace input.
  void bind_argument(const at::Tensor& t, Value v, size_t index) {
    Entry& e = entry(t);
    e.value = std::move(v);
    mark_argument(t, index);
  }
  void mark_argument(const at::Tensor& t, size_t index) {
    argument_index_[t.unsafeGetTensorImpl()] = static_cast<int32_t>(index);
  }
  // Whether the run has written into t's memory (an undo snapshot holds it).
  bool written(const at::Tensor& t) const {
    if (!t.has_storage()) return false;
    for (const auto& [w, before] : undo_)
      if (w.has_storage() && w.storage().is_alias_of(t.storage())) return true;
    return false;
  }
  // The flat index of t if it is one of the jitted function's arguments.
  std::optional<int32_t> argument_index(const at::Tensor& t) const {
    auto it = argument_index_.find(t.unsafeGetTensorImpl());
    if (it == argument_index_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<EqualGuard> equal_guards;

  // The trace value of a tensor the run met, capturing an unknown one.
  Value value_of(const at::Tensor& t, const std::string& op) {
    if (!t.defined()) return Value();
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) return number_of(t);
    const Entry* known = known_entry(t, op);
    if (!known) {
      // A tensor that shares memory with one this run made came from code the
      // dispatcher did not show: capturing it would bake this run's values.
      // By storage address: the tensor it was read from may be gone, and its
      // storage cannot have been reused while t holds it.
      const c10::StorageImpl* storage =
          t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
      for (const auto& [impl, k] : entries_) {
        if (!storage || !k.produced || k.storage != storage) continue;
        // A copy of a value that is gone (`(x * 2).data`): adopt_shallow_copy
        // could not compare it, but its autograd state tells what it is.
        THUNDER_CHECK(!k.value.is_tensor() || k.value.proxy()->requires_grad == t.requires_grad(),
                      "{}: reads a copy of {} made outside the dispatcher with other autograd "
                      "state (such as .data); use the value itself",
                      op, k.value.proxy()->name);
        fail(
            "{}: reads a tensor that shares memory with {}, a value this function made, through "
            "code capture did not see",
            op, k.value.str());
      }
      CaptureTable* captures = current_captures();
      THUNDER_CHECK(captures != nullptr, "{}: captured outside of a jit trace", op);
      Entry& e = entry(t);
      e.value = Value(captures->proxy_for(t));
      return e.value;
    }
    THUNDER_CHECK(known->untranslated_by.empty(),
                  "{}: reads a tensor that {} produced, and that has no translation", op,
                  known->untranslated_by);
    return known->value;
  }

  // A tensor the run never met that is the same view of the same storage as
  // one it made: a shallow copy made outside the dispatcher, as libtorch's
  // variable factories (torch::ones_like, Python's torch.ones_like) return
  // when the result has other owners. It is that value. A copy with other
  // autograd state (`.data`) is refused: capturing it would bake this run's
  // values into the trace.
  // Returns whether t was adopted as such a copy (an entry with its value).
  bool adopt_shallow_copy(const at::Tensor& t, const std::string& op) {
    for (size_t i = 0; i < seen_.size(); ++i) {
      const c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> alive = seen_[i].lock();
      if (!alive) continue;  // gone: a copy made from it is caught by value_of
      const at::Tensor k(alive);
      if (!k.is_alias_of(t) || k.sizes() != t.sizes() || k.strides() != t.strides() ||
          k.storage_offset() != t.storage_offset() || k.scalar_type() != t.scalar_type())
        continue;
      const Entry& made = entries_.at(k.unsafeGetTensorImpl());
      if (!made.produced || made.aliased || !made.untranslated_by.empty() ||
          !made.value.is_tensor())
        continue;
      THUNDER_CHECK(made.value.proxy()->requires_grad == t.requires_grad(),
                    "{}: reads a copy of {} made outside the dispatcher with other autograd "
                    "state (such as .data); use the value itself",
                    op, made.value.proxy()->name);
      const Value v = made.value;
      Entry& e = entry(t);  // may grow seen_ and rehash: `made` is not used after
      e.value = v;
      e.produced = true;
      return true;
    }
    return false;
  }

  // Why reading these arguments would lose a gradient ("" when it would
  // not): a tensor this run made has autograd history eagerly that its trace
  // value lacks, because code the dispatcher does not show made it under
  // no_grad and attached a backward (a custom torch::autograd::Function).
  // Checked before the op runs (an in-place op gives its argument history).
  std::string lost_history(const std::vector<c10::IValue>& args) const {
    if (!at::GradMode::is_enabled()) return "";
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].isTensor() || !args[i].toTensor().requires_grad()) continue;
      auto it = entries_.find(args[i].toTensor().unsafeGetTensorImpl());
      if (it == entries_.end() || !it->second.produced) continue;
      const Value& v = it->second.value;
      if (v.is_tensor() && !v.proxy()->requires_grad)
        return fmt::format(
            "argument {} has autograd history capture did not see (made under no_grad with a "
            "backward attached, as a custom torch::autograd::Function does); its gradient "
            "would be lost",
            i);
    }
    return "";
  }

  // One tensor object, or two with the same trace value.
  bool same_tensor(const at::Tensor& a, const at::Tensor& b, const std::string& op) {
    if (a.unsafeGetTensorImpl() == b.unsafeGetTensorImpl()) return true;
    const Entry* ea = known_entry(a, op);
    const Entry* eb = known_entry(b, op);
    return ea && eb && ea->value.is_tensor() && eb->value.is_tensor() &&
           ea->value.proxy() == eb->value.proxy();
  }

  std::optional<Value> transpose_of(const at::Tensor& t) const {
    auto it = entries_.find(t.unsafeGetTensorImpl());
    if (it == entries_.end()) return std::nullopt;
    return it->second.transpose_of;
  }
  std::optional<std::pair<Value, Value>> matmul_transposed(const at::Tensor& t) const {
    auto it = entries_.find(t.unsafeGetTensorImpl());
    if (it == entries_.end()) return std::nullopt;
    return it->second.matmul_transposed;
  }

  void bind_stand_in(const at::Tensor& t, Value v) {
    Entry& e = entry(t);
    e.value = std::move(v);
    e.produced = true;
    e.aliased = false;
    e.untranslated_by.clear();
  }

  // Before an op runs: an empty tensor no op wrote that it reads for its
  // data was filled outside the dispatcher (at::tensor({...}) and Python's
  // torch.tensor([...]) copy a literal in). Its values are a constant of the
  // function: a copy of them is captured (in-place ops on the tensor then
  // make the function's own values).
  void capture_literals(const std::string& name, const std::vector<c10::IValue>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].isTensor() || (i == 0 && reads_first_argument_metadata_only(name))) continue;
      auto it = entries_.find(args[i].toTensor().unsafeGetTensorImpl());
      if (it == entries_.end() || !it->second.unwritten_empty) continue;
      CaptureTable* captures = current_captures();
      THUNDER_CHECK(captures != nullptr, "{}: captured outside of a jit trace", name);
      at::Tensor constant;
      {
        CaptureKeyOff off;
        at::NoGradGuard no_grad;
        constant = args[i].toTensor().clone();
      }
      it->second.value = Value(captures->proxy_for(constant));
      it->second.unwritten_empty = false;
    }
  }

  void on_op(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);
  ExamineReport report;

  // Puts back what the eager run wrote into tensors the function did not
  // make, last write first (each undo restores what its write found).
  void undo_writes() {
    at::NoGradGuard values_only;
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) it->first.copy_(it->second);
    undo_.clear();
  }

 private:
  struct Entry {
    Value value;
    std::string untranslated_by;  // the op whose output this is, when it has no value
    bool produced = false;        // made by an op of this run (not an argument or capture)
    bool aliased = false;         // a view, or viewed: writes to it would reach others
    const c10::StorageImpl* storage = nullptr;  // compared only, never dereferenced
    std::optional<Value> transpose_of;
    // (x, w) when this is matmul(x, t(w)) of a 2-D w: torch::nn::Linear's
    // output before its bias is added (linear with bias, see capture_ops.cpp).
    std::optional<std::pair<Value, Value>> matmul_transposed;
    // Made by an empty factory and not written by any op since (value_of).
    bool unwritten_empty = false;
  };

  // The tensor arguments an op writes without a write annotation in its
  // schema (aten::batch_norm in training updates its running statistics).
  static std::vector<size_t> hidden_writes(const std::string& name,
                                           const std::vector<c10::IValue>& args) {
    std::vector<size_t> written;
    if (name == "aten::batch_norm" && args.at(5).toBool())
      for (size_t i : {3, 4})
        if (args[i].isTensor() && args[i].toTensor().defined()) written.push_back(i);
    return written;
  }

  // Whether writing into t reaches memory the function did not allocate: t
  // is an argument, parameter, buffer or captured tensor, or shares its
  // storage with one (a view).
  bool writes_external(const at::Tensor& t, const std::string& op) {
    const Entry* e = known_entry(t, op);
    if (!e || !e->produced) return true;
    const c10::StorageImpl* storage =
        t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
    for (const auto& [impl, k] : entries_)
      if (!k.produced && storage && k.storage == storage) return true;
    return false;
  }

  // The entry of a tensor the run met (a shallow copy of one it made counts,
  // see adopt_shallow_copy), or nullptr.
  Entry* known_entry(const at::Tensor& t, const std::string& op) {
    auto it = entries_.find(t.unsafeGetTensorImpl());
    if (it == entries_.end() && adopt_shallow_copy(t, op))
      it = entries_.find(t.unsafeGetTensorImpl());
    return it == entries_.end() ? nullptr : &it->second;
  }

  Entry& entry(const at::Tensor& t) {
    auto [it, fresh] = entries_.try_emplace(t.unsafeGetTensorImpl());
    if (fresh) {
      seen_.emplace_back(t.getIntrusivePtr());
      if (t.has_storage()) it->second.storage = t.storage().unsafeGetStorageImpl();
    }
    return it->second;
  }

  // The translation's value for eager result t: same shape (else the table
  // is wrong), converted where the translation's dtype differs (an in-place
  // op keeps its tensor's dtype where the functional op would promote).
  static Value matching(const Value& v, const at::Tensor& t, const std::string& op) {
    if (!v.is_tensor()) return v;
    const Proxy& p = *v.proxy();
    THUNDER_CHECK(p.shape == Shape(t.sizes().begin(), t.sizes().end()),
                  "{}: its translation made shape {} where libtorch made {} (a bug in the "
                  "capture table, src/frontend/capture_ops.cpp)",
                  op, shape_str(p.shape), shape_str(Shape(t.sizes().begin(), t.sizes().end())));
    const DType want = from_aten(t.scalar_type());
    return p.dtype == want ? v : ltorch::to(v, want);
  }

  static Value number_of(const at::Tensor& t) {
    if (t.is_floating_point()) return Value(t.item<double>());
    if (t.scalar_type() == at::kBool) return Value(t.item<bool>());
    return Value(t.item<int64_t>());
  }

  ExamineReport::Op& count(const std::string& name) {
    auto it = op_index_.find(name);
    if (it == op_index_.end()) {
      it = op_index_.emplace(name, report.ops.size()).first;
      report.ops.push_back({name, 0, ExamineReport::Support::Translated, {}});
    }
    ExamineReport::Op& o = report.ops[it->second];
    ++o.count;
    return o;
  }

  // Why the op cannot be translated (before running it), or "". Sets `tr`,
  // to &kOpaque for an op that runs as an opaque call.
  std::string refusal(const c10::OperatorHandle& op, const std::string& name,
                      const std::vector<c10::IValue>& args, const Translation*& tr);
  // Why an opaque call cannot stand for the op that made `outs` (a gradient
  // would flow through it), or "".
  std::string gradient_flow(const std::vector<c10::IValue>& args,
                            const std::vector<c10::IValue>& outs) const;

  Mode mode_;
  bool write_through_ = false;  // set by refusal(): the op writes into a tensor it did not make
  std::vector<std::pair<at::Tensor, at::Tensor>> undo_;  // (written tensor, its values before)
  std::unordered_map<const c10::TensorImpl*, Entry> entries_;
  std::unordered_map<const c10::TensorImpl*, int32_t> argument_index_;
  // Weak: keeps each TensorImpl's address reserved, not its data (see the top).
  std::vector<c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>> seen_;
  std::unordered_map<std::string, size_t> op_index_;
};

namespace {

thread_local CaptureSession* tls_session = nullptr;

class SessionScope {
 public:
  explicit SessionScope(CaptureSession& s) : prev_(tls_session) { tls_session = &s; }
  ~SessionScope() { tls_session = prev_; }

 private:
  CaptureSession* prev_;
};

// The eager run must not advance libtorch's default CPU generator: the
// compiled program draws from it again on the same call.
class KeepCpuGenerator {
 public:
  KeepCpuGenerator() : gen_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard<std::mutex> lock(gen_.mutex());
    state_ = gen_.get_state();
  }
  ~KeepCpuGenerator() {
    std::lock_guard<std::mutex> lock(gen_.mutex());
    gen_.set_state(state_);
  }

 private:
  at::Generator gen_;
  at::Tensor state_;
};

std::string op_name(const c10::FunctionSchema& s) {
  return s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
}

// The translation of an op without a row: an opaque call (capture_opaque.cpp).
const Translation kOpaque = opaque_call;

}  // namespace

bool writes_an_argument(const c10::FunctionSchema& s) {
  for (const c10::Argument& a : s.arguments())
    if (a.alias_info() && a.alias_info()->isWrite()) return true;
  return false;
}

std::string functional_name(const c10::FunctionSchema& s) {
  std::string base = s.name();
  if (!base.empty() && base.back() == '_') base.pop_back();
  return s.overload_name().empty() ? base : base + "." + s.overload_name();
}

std::string CaptureSession::refusal(const c10::OperatorHandle& op, const std::string& name,
                                    const std::vector<c10::IValue>& args, const Translation*& tr) {
  const c10::FunctionSchema& schema = op.schema();
  if (name == "aten::equal") {
    // MultiheadAttention asks `equal(query, key)` to detect self-attention.
    // On one tensor (the aliasing guard keeps later calls so), or on shapes
    // that differ (guarded too), the answer is known; on two arguments it is
    // guarded by value.
    static const Translation always_true = [](const AtenCall&) { return Value(true); };
    static const Translation always_false = [](const AtenCall&) { return Value(false); };
    static const Translation by_value = [](const AtenCall& c) {
      return c.equal_guarded_by_value();
    };
    const at::Tensor &a = args.at(0).toTensor(), &b = args.at(1).toTensor();
    if (same_tensor(a, b, name)) {
      tr = &always_true;
    } else if (a.sizes() != b.sizes()) {
      tr = &always_false;
    } else if (argument_index(a) && argument_index(b) && !written(a) && !written(b)) {
      tr = &by_value;
    } else {
      return "compares two different tensors of the same shape that are not both arguments of "
             "the jitted function as it was called (unwritten): its answer depends on data that "
             "neither a trace nor a guard can hold; compare outside the jitted function";
    }
    return "";
  }
  if (has_data_dependent_shape(name))
    return "returns a tensor whose shape depends on tensor data, which a trace cannot express; "
           "compute it outside the jitted function (or use a mask with where/masked_fill)";
  if (returns_host_value(name))
    return "returns a host value to C++ (a number or bool computed from tensor data), which a "
           "trace cannot hold; compute it outside the jitted function";
  if (schema.overload_name() == "out" || schema.overload_name().ends_with("_out"))
    return "writes into an out= tensor; call the functional form";
  if (name == "aten::detach_") {  // changes autograd metadata, not values
    tr = find_translation("aten::detach");
    return "";
  }
  if (writes_an_argument(schema)) {
    const std::string functional = functional_name(schema);
    tr = find_translation(functional);
    if (!tr) {
      // Without a row, the functional op (aten::foo for aten::foo_) as an opaque call.
      const size_t dot = functional.find('.', functional.find("::"));
      auto f = c10::Dispatcher::singleton().findSchema(
          {functional.substr(0, dot), dot == std::string::npos ? "" : functional.substr(dot + 1)});
      std::string why = !f ? "is not an operator the dispatcher knows"
                        : f->schema().arguments().size() != schema.arguments().size()
                            ? "takes other arguments"
                            : opaque_refusal(*f);
      if (!why.empty())
        return fmt::format(
            "no translation for it or for {}, and {} cannot run as an opaque call: it {}; add a "
            "row to the table in src/frontend/capture_ops.cpp",
            functional, functional, why);
      tr = &kOpaque;
    }
    const at::Tensor& self = args.at(0).toTensor();
    const Entry* e = known_entry(self, name);
    if (e && e->produced && !e->aliased) return "";  // fresh: its value is the functional result
    // An argument, parameter, buffer, captured tensor or view: the functional
    // result is copied into it (prims.copy_), which functionalization turns
    // into dataflow and a write-back after the call.
    write_through_ = true;
    if (at::GradMode::is_enabled() && writes_external(self, name))
      for (size_t i = 0; i < args.size(); ++i)
        if (args[i].isTensor() && args[i].toTensor().requires_grad())
          return fmt::format(
              "writes in place into a tensor the function did not make (an argument, parameter, "
              "buffer or captured tensor, or a view of one) while argument {} requires grad; "
              "the caller's tensor gets values only, never autograd history: do the update "
              "under torch::NoGradGuard, or on a copy the function makes",
              i);
    return "";
  }
  tr = find_translation(name);
  if (tr) return "";
  if (std::string why = opaque_refusal(op); !why.empty())
    return fmt::format(
        "no translation into ltorch symbols, and it cannot run as an opaque call: it {}; add a "
        "row for it to the table in src/frontend/capture_ops.cpp",
        why);
  tr = &kOpaque;
  return "";
}

std::string CaptureSession::gradient_flow(const std::vector<c10::IValue>& args,
                                          const std::vector<c10::IValue>& outs) const {
  if (!at::GradMode::is_enabled()) return "";
  bool float_out = false;
  for (const c10::IValue& o : outs) float_out |= o.isTensor() && o.toTensor().is_floating_point();
  if (!float_out) return "";  // integer and bool results carry no gradient, as eagerly
  auto requires_grad = [&](const at::Tensor& t) {
    if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return false;
    auto it = entries_.find(t.unsafeGetTensorImpl());
    if (it != entries_.end() && it->second.value.is_tensor())
      return it->second.value.proxy()->requires_grad;
    return t.requires_grad();  // an argument or captured tensor: its input mirrors it
  };
  for (size_t i = 0; i < args.size(); ++i) {
    bool grad = args[i].isTensor() && requires_grad(args[i].toTensor());
    if (args[i].isTensorList())
      for (const at::Tensor& t : args[i].toTensorVector()) grad = grad || requires_grad(t);
    if (grad)
      return fmt::format(
          "no translation into ltorch symbols, and a gradient flows through it (input {} "
          "requires grad); add a translation row in src/frontend/capture_ops.cpp and a grad "
          "rule, or call it under torch::NoGradGuard",
          i);
  }
  return "";
}

void CaptureSession::on_op(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                           torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::string name = op_name(schema);
  const size_t n_args = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - n_args, stack->end());
  ExamineReport::Op& rep = count(name);

  const Translation* tr = nullptr;
  write_through_ = false;
  std::string why = refusal(op, name, args, tr);
  if (why.empty()) why = lost_history(args);
  if (!why.empty() && mode_ == Mode::Jit) fail("{}: {}", name, why);
  const bool write_through = write_through_;
  // The eager run must leave the caller's tensors as they were: the compiled
  // program runs on them next, and writes back once.
  if (mode_ == Mode::Jit) {
    std::vector<size_t> written = hidden_writes(name, args);
    if (write_through) written.push_back(0);
    for (size_t i : written) {
      const at::Tensor& t = args[i].toTensor();
      if (!writes_external(t, name)) continue;
      at::NoGradGuard values_only;
      undo_.emplace_back(t, t.clone());
    }
  }

  capture_literals(name, args);
  op.redispatchBoxed(ks, stack);  // the eager result the rest of the run computes with
  const size_t n_out = schema.returns().size();
  std::vector<c10::IValue> outs(stack->end() - n_out, stack->end());
  // Whether a gradient flows shows in the results (a float one) as well as the inputs.
  const bool opaque = tr == &kOpaque;
  if (why.empty() && opaque) {
    why = gradient_flow(args, outs);
    if (!why.empty() && mode_ == Mode::Jit) fail("{}: {}", name, why);
  }

  // Outputs without a trace value: any later use is an error naming `by`.
  auto untranslated = [&](const std::string& by) {
    for (const c10::IValue& o : outs) {
      if (o.isTensor()) entry(o.toTensor()).untranslated_by = by;
      if (o.isTensorList())
        for (const at::Tensor& t : o.toTensorVector()) entry(t).untranslated_by = by;
    }
    if (writes_an_argument(schema) && args.at(0).isTensor())
      entry(args[0].toTensor()).untranslated_by = by;
  };
  if (!why.empty()) {
    if (rep.support != ExamineReport::Support::Unsupported) {
      rep.support = ExamineReport::Support::Unsupported;
      rep.reason = why;
    }
    untranslated(name);
    return;
  }

  Value result;
  // Under no_grad (torch.no_grad() in Python, at::NoGradGuard in C++) the
  // op's values are constants for autodiff, as eager would record them.
  if (auto* ctx = current_trace_ctx()) ctx->grad_enabled = at::GradMode::is_enabled();
  try {
    result = (*tr)(AtenCall(*this, name, schema, args, outs));
  } catch (const Error& e) {
    if (mode_ == Mode::Jit) throw;
    const std::string msg = e.what();
    // An input made by an untranslated op says nothing about this one.
    if (msg.find("that has no translation") == std::string::npos &&
        rep.support != ExamineReport::Support::Unsupported) {
      rep.support = ExamineReport::Support::Unsupported;
      rep.reason = msg;
    }
    untranslated(name);
    return;
  }
  if (opaque && rep.support == ExamineReport::Support::Translated)
    rep.support = ExamineReport::Support::Opaque;

  const bool made_empty = name == "aten::empty.memory_format" || name == "aten::empty_like" ||
                          name == "aten::empty_strided";
  // Each result tensor (a Tensor[] result: each element) gets its value.
  auto record = [&](const at::Tensor& t, const Value& v, const std::string& which,
                    const c10::AliasInfo* alias) {
    const bool is_new = entries_.find(t.unsafeGetTensorImpl()) == entries_.end();
    Entry& e = entry(t);
    if (v.is_none()) {
      e.untranslated_by = fmt::format("{} (its result {})", name, which);
      return;
    }
    e.value = matching(v, t, name);
    e.untranslated_by.clear();
    e.unwritten_empty = made_empty;
    if (is_new) e.produced = true;
    if (alias && !alias->isWrite()) {  // a view of an argument
      e.aliased = true;
      for (const c10::IValue& a : args)
        if (a.isTensor() && a.toTensor().defined()) entry(a.toTensor()).aliased = true;
    }
  };
  for (size_t k = 0; k < n_out; ++k) {
    const Value v = n_out == 1 ? result : result.as_list().at(k);
    const c10::AliasInfo* alias = schema.returns()[k].alias_info();
    if (write_through && alias && alias->isWrite() && outs[k].isTensor()) {
      // The written tensor keeps its value; the write is recorded on it.
      const at::Tensor& self = outs[k].toTensor();
      prims::copy_(matching(v, self, name), value_of(self, name));
      continue;
    }
    if (outs[k].isTensor()) record(outs[k].toTensor(), v, std::to_string(k), alias);
    if (!outs[k].isTensorList()) continue;
    const std::vector<at::Tensor> items = outs[k].toTensorVector();
    THUNDER_INTERNAL_CHECK(v.is_list() && v.as_list().size() == items.size(),
                           "{}: the translation returned {} for {} tensors", name, v.str(),
                           items.size());
    // Tensor(a)[]: the alias set is on the element type; the elements are views.
    if (alias && !alias->containedTypes().empty()) alias = &alias->containedTypes()[0];
    for (size_t j = 0; j < items.size(); ++j)
      record(items[j], v.as_list()[j], fmt::format("{}[{}]", k, j), alias);
  }
  if (name == "aten::t" && args[0].toTensor().dim() == 2 && outs[0].isTensor())
    entry(outs[0].toTensor()).transpose_of = value_of(args[0].toTensor(), name);
  if (name == "aten::matmul" && outs[0].isTensor())
    if (std::optional<Value> w = transpose_of(args[1].toTensor()))
      entry(outs[0].toTensor()).matmul_transposed =
          std::make_pair(value_of(args[0].toTensor(), name), *w);
}

void on_captured_op(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                    torch::jit::Stack* stack) {
  if (CaptureSession* s = tls_session) return s->on_op(op, ks, stack);
  op.redispatchBoxed(ks, stack);
}

bool capturing() { return tls_session != nullptr; }

Value captured_value(const at::Tensor& t, const std::string& op) {
  THUNDER_CHECK(tls_session != nullptr, "{}: called outside of a capture run", op);
  return tls_session->value_of(t, op);
}

void bind_stand_in(const at::Tensor& t, Value v) {
  THUNDER_INTERNAL_CHECK(tls_session != nullptr, "bind_stand_in outside of a capture run");
  tls_session->bind_stand_in(t, std::move(v));
}

// ---- AtenCall ----

Value AtenCall::tensor(size_t i) const {
  const c10::IValue& a = args_[i];
  if (a.isNone()) return Value();
  THUNDER_CHECK(a.isTensor(), "{}: argument {} ('{}') is not a tensor", name_, i,
                schema_.arguments()[i].name());
  return s_.value_of(a.toTensor(), name_);
}

std::vector<Value> AtenCall::tensors(size_t i) const {
  std::vector<Value> out;
  for (const at::Tensor& t : args_[i].toTensorVector()) out.push_back(s_.value_of(t, name_));
  return out;
}

Value AtenCall::scalar(size_t i) const {
  const c10::IValue& a = args_[i];
  if (a.isTensor()) return tensor(i);
  if (a.isDouble()) return Value(a.toDouble());
  if (a.isBool()) return Value(a.toBool());
  if (a.isInt()) return Value(a.toInt());
  fail("argument '{}' is {}, not a real number", schema_.arguments()[i].name(), a.tagKind());
}

std::vector<int64_t> AtenCall::int_list(size_t i) const {
  const c10::IValue& a = args_[i];
  if (a.isNone()) return {};
  if (a.isInt()) return {a.toInt()};
  std::vector<int64_t> out;
  for (const c10::IValue& e : a.toListRef()) {
    if (!e.isInt())
      fail("argument '{}' holds {}, not an int", schema_.arguments()[i].name(), e.tagKind());
    out.push_back(e.toInt());
  }
  return out;
}

std::optional<DType> AtenCall::dtype_arg(size_t i) const {
  if (args_[i].isNone()) return std::nullopt;
  return from_aten(args_[i].toScalarType());
}

std::optional<Value> AtenCall::transpose_of(size_t i) const {
  if (!args_[i].isTensor()) return std::nullopt;
  return s_.transpose_of(args_[i].toTensor());
}

std::optional<std::pair<Value, Value>> AtenCall::matmul_transposed(size_t i) const {
  if (!args_[i].isTensor()) return std::nullopt;
  return s_.matmul_transposed(args_[i].toTensor());
}

Value AtenCall::equal_guarded_by_value() const {
  const bool equal = results_.at(0).toBool();
  s_.equal_guards.push_back({*s_.argument_index(aten(0)), *s_.argument_index(aten(1)), equal});
  return Value(equal);
}

namespace {
thread_local std::vector<EqualGuard> t_traced_equal_guards;
}  // namespace

void set_traced_equal_guards(std::vector<EqualGuard> guards) {
  t_traced_equal_guards = std::move(guards);
}
std::vector<EqualGuard> take_traced_equal_guards() {
  return std::exchange(t_traced_equal_guards, {});
}

// ---- entry points ----

Value capture_call(const std::vector<FlatArg>& args, const std::vector<Value>& arg_values,
                   CaptureRun run, void* ctx) {
  CaptureSession s(CaptureSession::Mode::Jit);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == FlatArg::Kind::Tensor && args[i].tensor.defined() &&
        arg_values[i].is_proxy())
      s.bind_argument(args[i].tensor, arg_values[i], i);
  std::vector<at::Tensor> results;
  try {
    SessionScope scope(s);
    KeepCpuGenerator rng;
    CaptureKeyOn on;
    run(ctx, results);
  } catch (...) {
    s.undo_writes();
    throw;
  }
  s.undo_writes();
  set_traced_equal_guards(std::move(s.equal_guards));
  std::vector<Value> out;
  for (const at::Tensor& r : results) out.push_back(s.value_of(r, "thunder::jit (a result)"));
  return Value(std::move(out));
}

ExamineReport examine_call(const std::function<void()>& run,
                           const std::vector<at::Tensor>& arguments) {
  ltorch::ensure_registered();
  Trace scratch;
  TracingScope tracing(scratch);
  CaptureTable captures;
  CaptureScope capture_scope(captures);
  CaptureSession s(CaptureSession::Mode::Examine);
  for (size_t i = 0; i < arguments.size(); ++i) s.mark_argument(arguments[i], i);
  {
    SessionScope scope(s);
    CaptureKeyOn on;
    run();
  }
  return std::move(s.report);
}

}  // namespace detail
}  // namespace thunder
