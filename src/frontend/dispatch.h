// How a frontend op runs (private to src/frontend): under an active trace it
// records its ltorch symbol (concrete tensors met on the way become captured
// inputs of the trace); otherwise it runs the symbol's ATen kernel eagerly.
#pragma once

#include <initializer_list>
#include <string_view>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/executors/aten.h"
#include "thunder/frontend/ops.h"
#include "thunder/lang/ltorch.h"

namespace thunder::detail {

// One argument of a frontend op.
struct OpArg {
  enum class Kind : uint8_t { Literal, Tensor, TensorList };
  Kind kind = Kind::Literal;
  Value value;                     // literal or number proxy
  const Tensor* tensor = nullptr;  // Kind::Tensor (may be undefined = None)
  const TensorList* tensors = nullptr;

  OpArg(const Tensor& t) : kind(Kind::Tensor), tensor(&t) {}
  OpArg(const TensorList& ts) : kind(Kind::TensorList), tensors(&ts) {}
  OpArg(const Scalar& s) : value(s.value()) {}
  OpArg(Value v) : value(std::move(v)) {}
  OpArg(int v) : value(int64_t{v}) {}
  OpArg(int64_t v) : value(v) {}
  OpArg(double v) : value(v) {}
  OpArg(bool v) : value(v) {}
  OpArg(const char* s) : value(std::string(s)) {}
  OpArg(const std::string& s) : value(s) {}
  OpArg(at::IntArrayRef l) : value(std::vector<int64_t>(l.begin(), l.end())) {}
  OpArg(DType d) : value(d) {}
  OpArg(Device d) : value(d) {}
};

// Runs an ltorch symbol (looked up once per call site) and returns its outputs.
std::vector<Tensor> run_op(const Symbol& sym, std::initializer_list<OpArg> args);
Tensor run_op1(const Symbol& sym, std::initializer_list<OpArg> args);

// Is a trace being recorded on this thread?
inline bool tracing() { return current_trace_ctx() != nullptr; }

// The frontend side of an active jit trace: concrete tensors met while tracing
// (module parameters, captured closures, tensors made with libtorch directly)
// become named inputs of the trace.
class CaptureTable {
 public:
  // The proxy standing for a concrete tensor, adding a trace input on first sight.
  ProxyPtr proxy_for(const at::Tensor& t);
  // Pre-registers a tensor under a chosen input name (module parameters).
  ProxyPtr add(const at::Tensor& t, const std::string& name);
  // From now on `t` reads as `p` (a value computed from t's input, e.g. the
  // parameter after distributed synchronize); t's trace input stays.
  void replace(const at::Tensor& t, ProxyPtr p);
  const std::vector<at::Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<at::Tensor> tensors_;
  std::vector<ProxyPtr> proxies_;
};

// The capture table of the active jit trace on this thread, or nullptr.
CaptureTable* current_captures();
class CaptureScope {
 public:
  explicit CaptureScope(CaptureTable& t);
  ~CaptureScope();

 private:
  CaptureTable* prev_;
};

// Value of a tensor under the active trace (proxy, or captured concrete tensor).
Value traced_value(const Tensor& t);

}  // namespace thunder::detail

// Looks the ltorch symbol up once per call site, then runs it.
#define THUNDER_OP(id, ...)                                             \
  static const ::thunder::Symbol& sym_ = ::thunder::ltorch::symbol(id); \
  return ::thunder::detail::run_op1(sym_, {__VA_ARGS__})
#define THUNDER_OP_MULTI(id, ...)                                       \
  static const ::thunder::Symbol& sym_ = ::thunder::ltorch::symbol(id); \
  return ::thunder::detail::run_op(sym_, {__VA_ARGS__})
