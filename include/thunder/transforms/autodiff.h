// Reverse-mode autodiff on traces. `autodiff` builds one joint trace: the
// forward statements (where a statement has a grad rule, the rule's own
// forward computation replaces it) followed by the backward statements, tagged
// BACKWARD, in reverse order. `split_forward_backward` cuts it into a forward
// trace (returns outputs and saved values) and a backward trace
// `backward(saved..., cotangents...)` returning the input gradients.
//
// Grad rules are written with the same tracing API as ops: a rule computes the
// forward with ordinary ops, reads output cotangents with get_grad and adds
// input cotangents with put_grad (Thunder's register_grad). Statements of the
// rule that depend on a cotangent are backward statements; the rest is forward.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "thunder/core/registry_change.h"
#include "thunder/core/trace.h"

namespace thunder {

class VjpContext {
 public:
  virtual ~VjpContext() = default;
  // The cotangent of a forward value the rule produced (bound when the backward is built).
  virtual Value get_grad(const Value& out) = 0;
  // Adds `grad` to the cotangent of a tensor argument of the rule.
  virtual void put_grad(const Value& x, const Value& grad) = 0;
  // Does a gradient for this argument matter? (rules may skip work otherwise)
  virtual bool requires_grad(const Value& x) const = 0;
};

// A rule returns the forward result, structured like the symbol's output.
using GradRule = std::function<Value(VjpContext&, const OpArgs&)>;

// The registry of grad rules, keyed by symbol id. A later registration replaces
// an earlier one (user rules replace built-in rules) until the returned handle
// restores it; discarding the handle keeps the rule (registry_change.h, which
// also says how nested and out-of-order restores behave). Registering bumps
// the registry version, so jitted callables recompile on their next call.
// What a user rule's backward reads from the forward must be marked with
// ProxyTag::SAVED_FOR_BACKWARD (thunder::save_for_backward) to pass
// strict_saved_for_backward; the built-in rules' reads count as explicitly saved.
RegistryChange register_grad_rule(std::string_view id, GradRule rule);
// The rule of a symbol registered just now (a custom autograd::Function): no
// compiled program can have used the symbol, so the registry version stays and
// no jitted callable recompiles. Not undoable.
void register_grad_rule_of_new_symbol(std::string_view id, GradRule rule);
const GradRule* find_grad_rule(const Symbol& sym);

// The joint forward+backward trace of a computation trace. Gradients are
// computed for inputs that require grad; the joint trace returns
// [outputs, grads of the inputs that require grad (None where no gradient flows)].
// Cotangent inputs are appended to the trace inputs, one per differentiable output.
struct JointTrace {
  Trace trace;
  std::vector<ProxyPtr> grad_inputs;  // inputs whose gradients are returned, in order
  std::vector<ProxyPtr> cotangents;   // one per flat output (nullptr: not differentiable)
  size_t num_outputs = 0;             // flat forward outputs
  // Forward values that built-in rules' backward statements read.
  std::vector<ProxyPtr> rule_saved;
};
JointTrace autodiff(const Trace& computation);

// The JointTrace of a joint trace read back from text (parse_trace): its
// structure says everything the split needs. The grad inputs are the tensor
// inputs that require grad (autodiff differentiates exactly those), so the
// first `output.size() - grad_inputs.size()` results are the forward outputs;
// each of them that is a tensor requiring grad has a cotangent, and the
// cotangents are the last inputs, in that order. rule_saved (strict mode's
// bookkeeping) is not printed and comes back empty. Throws thunder::Error if
// the trace is not shaped like a joint trace.
JointTrace joint_trace_from(const Trace& joint);

struct ForwardBackward {
  Trace forward;   // returns [flat outputs..., saved...]
  Trace backward;  // backward(saved..., cotangents...) -> [grads of grad_inputs]
  std::vector<ProxyPtr> saved;
};
ForwardBackward split_forward_backward(const JointTrace& joint);

// JitOptions::strict_saved_for_backward: throws thunder::Error naming the first
// saved value that is neither tagged SAVED_FOR_BACKWARD nor read by a built-in rule.
void check_saved_explicitly(const JointTrace& joint, const std::vector<ProxyPtr>& saved);

}  // namespace thunder
