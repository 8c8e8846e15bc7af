// Capturing plain libtorch code at the dispatcher. A function written against
// at::Tensor cannot be traced with proxies, so thunder runs it once on its
// real inputs with a capture dispatch key switched on: every aten op it calls
// reaches one boxed fallback, which runs the op eagerly and translates it
// (through one table keyed by `aten::name.overload`, src/frontend/capture_ops.cpp)
// into ltorch symbols on the trace being built. An op without a translation
// becomes an opaque ATen call (aten.call) where no gradient flows through it.
// The trace then goes through the same pipeline as traced thunder::Tensor
// code. docs/capture.md lists the translated ops and the limits.
//
// thunder::jit picks capture by itself for a callable that takes at::Tensor
// and cannot take thunder::Tensor; thunder::examine says in advance which
// ops of a function capture can translate.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "thunder/core/value.h"
#include "thunder/runtime/flat_args.h"

namespace thunder {

// Every aten op one run of a function called, in first-seen order.
struct ExamineReport {
  // Opaque: no translation, but it runs as an opaque ATen call (no gradient
  // flowed through it); a later value is appended, never inserted.
  enum class Support : uint8_t { Translated, Unsupported, Opaque };
  struct Op {
    std::string name;  // "aten::add.Tensor", "aten::relu"
    int64_t count = 0;
    Support support = Support::Translated;
    std::string reason;  // why it is unsupported (the first time it was)
  };
  std::vector<Op> ops;

  // Nothing is Unsupported (an Opaque op runs).
  bool all_supported() const;
  std::string str() const;  // the table operator<< prints
};
std::ostream& operator<<(std::ostream& os, const ExamineReport& r);

namespace detail {

// Runs `run` (which calls the user's function on the real arguments `args`
// and appends its flat results to the vector) with capture on, inside the
// active trace: tensor arguments stand for `arg_values` (the trace's inputs).
// Returns the list of the results' trace values.
using CaptureRun = void (*)(void* ctx, std::vector<at::Tensor>& results);
Value capture_call(const std::vector<FlatArg>& args, const std::vector<Value>& arg_values,
                   CaptureRun run, void* ctx);

// Runs `run` once with capture on, translating into a scratch trace, and
// reports every op met (translation failures are recorded, not thrown).
// `arguments`: the tensors passed to the function (what jit would guard).
ExamineReport examine_call(const std::function<void()>& run,
                           const std::vector<at::Tensor>& arguments = {});

template <typename T>
void collect_tensor_argument(std::vector<at::Tensor>& out, const T& a) {
  if constexpr (std::is_same_v<T, at::Tensor>) out.push_back(a);
}

// The thunder::Error the capture of an op threw on this thread, taken once
// (then empty). A caller between capture and the user's code (Python's torch
// bindings turn every C++ exception into a RuntimeError) rethrows it as is.
std::exception_ptr take_capture_error();

}  // namespace detail

// Runs fn(args...) once (eagerly, on the real arguments) and reports the aten
// ops it calls and whether thunder::jit translates each of them, runs it as
// an opaque call, or cannot run it.
template <typename F, typename... A>
ExamineReport examine(F&& fn, A&&... args) {
  std::vector<at::Tensor> tensors;
  (detail::collect_tensor_argument(tensors, args), ...);
  return detail::examine_call([&] { (void)std::invoke(fn, args...); }, tensors);
}

}  // namespace thunder
