// Plain-libtorch capture (private to src/frontend): the session that maps the
// tensors a captured run meets to trace values, the view a translation gets of
// one aten call, and the translation table. See thunder/frontend/capture.h.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "thunder/core/dtype.h"
#include "thunder/core/error.h"
#include "thunder/core/value.h"

namespace thunder::detail {

// Switches capture on for this thread (capture_key.cpp owns the key).
// This thread's last capture error (capture.h: take_capture_error).
std::exception_ptr& capture_error();

class CaptureKeyOn {
 public:
  CaptureKeyOn();
  ~CaptureKeyOn();
  CaptureKeyOn(const CaptureKeyOn&) = delete;
  CaptureKeyOn& operator=(const CaptureKeyOn&) = delete;

 private:
  c10::impl::IncludeDispatchKeyGuard guard_;
};

// Switches capture off for this thread inside a captured run: tensors made
// for the trace's bookkeeping (custom functions' stand-ins) are not ops of it.
class CaptureKeyOff {
 public:
  CaptureKeyOff();
  ~CaptureKeyOff();
  CaptureKeyOff(const CaptureKeyOff&) = delete;
  CaptureKeyOff& operator=(const CaptureKeyOff&) = delete;

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};

// The trace value of a tensor this thread's capture run met (an unknown one
// becomes a captured input). Throws thunder::Error outside a capture run.
Value captured_value(const at::Tensor& t, const std::string& op);
// Makes t, a tensor made outside the dispatcher for this run (a stand-in),
// stand for v as a fresh value: in-place ops on it are translated as
// functional ops, never as writes into v.
void bind_stand_in(const at::Tensor& t, Value v);

// Called by the fallback with the capture key excluded: runs the op (ks is the
// rest of its key set) and records it in this thread's session, if any.
void on_captured_op(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                    torch::jit::Stack* stack);

class CaptureSession;

// One aten call as its translation sees it: the arguments as trace values,
// and the real tensors (for shapes and dtypes).
class AtenCall {
 public:
  AtenCall(CaptureSession& s, const std::string& name, const c10::FunctionSchema& schema,
           const std::vector<c10::IValue>& args, const std::vector<c10::IValue>& results)
      : s_(s), name_(name), schema_(schema), args_(args), results_(results) {}

  const std::string& name() const { return name_; }
  const c10::FunctionSchema& schema() const { return schema_; }
  size_t num_args() const { return args_.size(); }
  const c10::IValue& arg(size_t i) const { return args_[i]; }
  bool is_none(size_t i) const { return args_[i].isNone(); }

  // A tensor argument: its proxy (an unknown tensor becomes a captured input),
  // a number for a wrapped number, None when undefined or None.
  Value tensor(size_t i) const;
  std::vector<Value> tensors(size_t i) const;  // a Tensor[] argument
  // A Scalar argument (or a wrapped-number tensor) as a number literal.
  Value scalar(size_t i) const;
  int64_t int_arg(size_t i) const { return args_[i].toInt(); }
  double double_arg(size_t i) const { return args_[i].toDouble(); }
  bool bool_arg(size_t i) const { return args_[i].toBool(); }
  std::string string_arg(size_t i) const { return args_[i].toStringRef(); }
  std::vector<int64_t> int_list(size_t i) const;   // None -> {}
  std::optional<DType> dtype_arg(size_t i) const;  // None -> nullopt
  const at::Tensor& aten(size_t i) const { return args_[i].toTensor(); }
  // The eager result k (the op has already run): factories take its metadata.
  const at::Tensor& result(size_t k = 0) const { return results_[k].toTensor(); }
  // The value v when tensor argument i was produced by aten::t of a 2-D v.
  std::optional<Value> transpose_of(size_t i) const;
  // (x, w) when tensor argument i is matmul(x, t(w)) of a 2-D w.
  std::optional<std::pair<Value, Value>> matmul_transposed(size_t i) const;

  // aten::equal of two different arguments of the jitted function: the eager
  // answer, guarded for later calls (value_guards.h).
  Value equal_guarded_by_value() const;

  // Throws thunder::Error: "<aten::name.overload>: <message>".
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    thunder::fail("{}: {}", name_, fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  CaptureSession& s_;
  const std::string& name_;
  const c10::FunctionSchema& schema_;
  const std::vector<c10::IValue>& args_;
  const std::vector<c10::IValue>& results_;
};

// A translation: the trace value of the op's result (a list for several
// results; None in a list for a result that has no translation).
using Translation = Value (*)(const AtenCall& c);

// The table entry for "aten::name.overload" ("aten::relu" without overload).
const Translation* find_translation(const std::string& name);
// The names of every row of the table, sorted (docs and tests).
std::vector<std::string> translated_ops();
// Ops that hand a host value back to C++ (item, equal, ...): never traceable.
bool returns_host_value(const std::string& name);
// Ops whose result's shape depends on tensor data (nonzero, unique, ...).
bool has_data_dependent_shape(const std::string& name);

// Whether the op writes into one of its arguments (in-place or out=).
bool writes_an_argument(const c10::FunctionSchema& s);
// "aten::add_.Tensor" -> "aten::add.Tensor": the functional op an in-place
// one on a fresh tensor is translated as.
std::string functional_name(const c10::FunctionSchema& s);

// Opaque ATen calls (capture_opaque.cpp): an op without a translation runs
// as one aten.call statement where no gradient flows through it.
// Why the op cannot be an opaque call, judged by its schema ("" if it can).
std::string opaque_refusal(const c10::OperatorHandle& op);
// The translation of such an op: aten.call of the op (of its functional form
// for an in-place op) on the call's arguments, typed by the eager results.
Value opaque_call(const AtenCall& c);

}  // namespace thunder::detail
