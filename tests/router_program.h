// The MoE-router seed program, shared by the in-place and report tests: an
// in-place update of an argument, a max/masked softmax, and a custom autograd
// function whose backward scatters the gradient into a saved tensor in place.
#pragma once

#include <thunder/thunder.h>

namespace thunder::test {

// Gathers the selected gate values; its backward scatters the incoming
// gradient into a zero tensor it saved, in place.
struct SelectGates : autograd::Function<SelectGates> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor gates, Tensor selected) {
    Tensor masked_gates = zeros_like(gates);
    ctx->save_for_backward({masked_gates, selected});
    return gates.gather(-1, selected);
  }
  static TensorList backward(autograd::AutogradContext* ctx, TensorList grad) {
    TensorList saved = ctx->get_saved_variables();
    Tensor masked_gates = saved[0];
    masked_gates.scatter_add_(-1, saved[1], grad[0]);
    return {masked_gates, Tensor()};
  }
};

inline Tensor router(Tensor hidden, Tensor w_gate) {
  hidden.mul_(0.5);
  Tensor logits = nn::functional::linear(hidden, w_gate);  // [tokens, experts]
  auto [top, selected] = logits.max(-1, true);
  Tensor probs = nn::functional::softmax(logits.masked_fill(logits < top, -1e4), -1);
  Tensor gate = SelectGates::apply(probs, selected);
  return gate * probs.gather(-1, selected) + hidden.sum({1}, true);
}

}  // namespace thunder::test
