// The compiler pipeline: every frontend (thunder::Tensor tracing, and later
// captured libtorch code, TorchScript, Python) hands a computation trace to
// run_pipeline and gets back every stage of the forward and backward, by pass
// name and time, plus what the runtime needs to run them. The pipeline does
// not care how the trace was made; docs/architecture.md lists its stages.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "thunder/core/trace.h"
#include "thunder/executors/executor.h"

namespace thunder {

struct PipelineOptions {
  std::vector<Executor*> executors;  // in priority order
  FusionStrategy fusion_strategy = FusionStrategy::Dataflow;
  bool rematerialize = true;
  bool disable_replace_uniform = false;
  bool recognize_attention = true;  // JitOptions::recognize_attention
  bool skip_inplace_functionalization = false;
  bool strict_saved_for_backward = false;
  bool schedule_collectives = true;  // JitOptions::schedule_collectives
  // Grad mode when the computation was traced: with it on and an input that
  // requires grad, the pipeline differentiates.
  bool grad_enabled = true;
  // Sets of trace inputs that share storage at run time (functionalization
  // keeps writes into them in place).
  std::vector<std::vector<ProxyPtr>> alias_groups;
  // How long making the computation trace took (the "Tracing" stage's time).
  double tracing_ms = 0;
  // > 0: the backward's all_reduces go in buckets of this many bytes
  // (bucket_all_reduces); <= 0: one per tensor.
  int64_t gradient_bucket_bytes = 0;
};

struct CompiledTraces {
  // Every stage, from the computation trace to the final execution trace,
  // each stamped "Constructed by <pass> (took N ms)".
  std::vector<Trace> forward;
  std::vector<Trace> backward;  // empty when nothing is differentiated
  // Every pass's time in pipeline order; backward passes end in " (backward)".
  std::vector<std::pair<std::string, double>> pass_ms;
  // Trace inputs written in place; the final forward returns their new values
  // last, after the outputs (and saved values).
  std::vector<ProxyPtr> written_inputs;
  // With a backward: the final forward returns [outputs..., saved...] and
  // backward(saved..., cotangents...) returns the grads of grad_inputs.
  size_t num_outputs = 0;
  std::vector<ProxyPtr> cotangents;   // per flat output; nullptr: not differentiable
  std::vector<ProxyPtr> grad_inputs;  // trace inputs whose gradients the backward returns
  std::vector<ProxyPtr> saved;
  int64_t fusion_regions = 0;

  bool has_backward() const { return !backward.empty(); }
};

CompiledTraces run_pipeline(Trace computation, const PipelineOptions& options);

// Bytes of a set of values (tensor numel x item size).
int64_t bytes_of(const std::vector<ProxyPtr>& values);

// Replaces the backward's "saved for backward: N bytes in K values" note.
void note_saved(Trace& backward, const std::vector<ProxyPtr>& saved);

}  // namespace thunder
