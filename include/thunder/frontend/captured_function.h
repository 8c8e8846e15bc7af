// A custom autograd function met while capturing: Python's
// torch.autograd.Function subclasses called by a function thunder_cpp.jit
// captures. Eagerly such a function runs its forward under no_grad and
// attaches its backward as one autograd node, which the dispatcher never
// shows. Here the caller (python/thunder_cpp.cpp, which replaces
// Function.apply while it captures) runs the class's forward and then its
// backward, each once, with capture recording their aten ops:
//
//   t5 = SelectGates(probs, selected)       # the forward's ops, as its body
//
// and the statement's grad rule replays the recorded forward and calls
// `SelectGates_backward(saved..., cotangents...)`, whose body is the recorded
// backward. The backward runs on stand-ins: copies of the tensors it reads
// (so an in-place update of a saved tensor, `scatter_add_`, changes neither
// the caller's tensors nor the values the rest of the capture sees) and
// cotangents of ones. Gradients are exactly what the backward computes, for
// any cotangent, as long as it does not branch on tensor data (capture
// refuses that as everywhere else).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "thunder/frontend/tensor.h"

namespace thunder::detail {

// Whether this thread runs code under capture (thunder::jit or examine).
bool capturing();

// The trace value of a tensor this thread's capture run met, as a
// thunder::Tensor (thunder_cpp.checkpoint's region outputs).
Tensor captured_tensor(const at::Tensor& t);

class CapturedFunction {
 public:
  // A call of the class `name` on its tensor arguments, in order.
  CapturedFunction(std::string name, const std::vector<at::Tensor>& inputs);
  ~CapturedFunction();
  CapturedFunction(const CapturedFunction&) = delete;
  CapturedFunction& operator=(const CapturedFunction&) = delete;

  // Whether tensor argument i gets a gradient (ctx.needs_input_grad).
  bool input_requires_grad(size_t i) const;

  // The caller runs the forward between these, under no_grad.
  void begin_forward();
  void end_forward(const std::vector<at::Tensor>& outputs,
                   const std::vector<at::Tensor>& non_differentiable);

  // A copy of a tensor the forward met, standing for its value in the
  // backward. `saved`: saved with ctx.save_for_backward (tagged for
  // JitOptions::strict_saved_for_backward), else a ctx attribute.
  at::Tensor stand_in(const at::Tensor& t, bool saved);

  // The caller runs the backward between these, under no_grad, on the
  // cotangents begin_backward returns (one per output). end_backward takes
  // one gradient per tensor argument (undefined: none).
  std::vector<at::Tensor> begin_backward();
  void end_backward(const std::vector<at::Tensor>& grads);

  // Records `name(arguments...)` in the trace being captured.
  void finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace thunder::detail
