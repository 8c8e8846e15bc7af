// The pipeline, one pass a line (docs/architecture.md follows it line by
// line). Each pass's trace is recorded as a stage with its name and time.
#include "thunder/frontend/pipeline.h"

#include "thunder/core/error.h"
#include "thunder/core/stopwatch.h"
#include "thunder/executors/claim.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"
#include "thunder/transforms/bucket_all_reduces.h"
#include "thunder/transforms/cse.h"
#include "thunder/transforms/dce.h"
#include "thunder/transforms/del_last_used.h"
#include "thunder/transforms/functionalize.h"
#include "thunder/transforms/recognize_attention.h"
#include "thunder/transforms/rematerialize.h"
#include "thunder/transforms/replace_uniform.h"
#include "thunder/transforms/sort_waits.h"

namespace thunder {

namespace {

// The record of one side (forward or backward): each pass's trace and time.
class Stages {
 public:
  Stages(std::vector<Trace>& traces, std::vector<std::pair<std::string, double>>& pass_ms,
         std::string suffix)
      : traces_(traces), pass_ms_(pass_ms), suffix_(std::move(suffix)) {}

  // Runs `pass` (a callable returning a Trace), records and returns its trace.
  template <typename F>
  Trace run(const std::string& name, F&& pass) {
    Stopwatch watch;
    Trace t = pass();
    return add(name, std::move(t), watch.ms());
  }

  Trace add(const std::string& name, Trace t, double ms) {
    pass_ms_.emplace_back(name + suffix_, ms);
    return keep(name, std::move(t), ms);
  }

  // The second trace of a pass that made two (split, rematerialization),
  // timed once on the forward side.
  Trace keep(const std::string& name, Trace t, double ms) {
    t.provenance = stage_provenance(name, ms);
    traces_.push_back(t);
    return t;
  }

 private:
  std::vector<Trace>& traces_;
  std::vector<std::pair<std::string, double>>& pass_ms_;
  std::string suffix_;
};

bool draws_uniform(const std::vector<BoundSymbol>& bsyms) {
  static const Symbol& uniform = prims::symbol("prims.uniform");
  for (const BoundSymbol& b : bsyms)
    if (b.sym == &uniform || draws_uniform(b.subsymbols)) return true;
  return false;
}

bool requires_grad(const Value& v) {
  if (v.is_list())
    return std::any_of(v.as_list().begin(), v.as_list().end(),
                       [](const Value& e) { return requires_grad(e); });
  return v.is_tensor() && v.proxy()->requires_grad;
}

// A backward exists when some result has autograd history (an input that
// requires grad, used under no_grad only, gives none: no backward to build).
bool requires_grad(const Trace& t) {
  return std::any_of(t.inputs.begin(), t.inputs.end(),
                     [](const ProxyPtr& p) { return p->is_tensor() && p->requires_grad; }) &&
         requires_grad(t.output);
}

// States the saved set on a backward trace (replacing an older statement).
}  // namespace

void note_saved(Trace& backward, const std::vector<ProxyPtr>& saved) {
  std::erase_if(backward.notes, [](const std::string& n) { return n.starts_with("saved for"); });
  backward.notes.push_back(
      fmt::format("saved for backward: {} bytes in {} values", bytes_of(saved), saved.size()));
}

namespace {

// Writes into inputs carry values, never autograd history.
void check_written_values(const Functionalized& f) {
  for (size_t k = 0; k < f.new_values.size(); ++k)
    THUNDER_CHECK(!f.new_values[k]->requires_grad,
                  "thunder::jit: input {} is written in place with {}, which requires grad; "
                  "under thunder::jit only values without autograd history can be written into "
                  "inputs (do the update under thunder::NoGradGuard)",
                  f.written_inputs[k]->name, f.new_values[k]->name);
}

// Claim, then each executor's fusion passes in priority order, then del.
void transform_for_execution(Stages& s, Trace t, const PipelineOptions& o,
                             FusionStrategy strategy) {
  t = s.run("Transform for execution", [&] { return claim_executors(t, o.executors); });
  for (size_t k = 0; k < o.executors.size(); ++k) {
    FusionContext ctx{static_cast<int>(k), &o.executors, strategy};
    for (const FusionPass& pass : o.executors[k]->fusion_passes())
      t = s.run(pass.name, [&] { return pass.run(t, ctx); });
  }
  if (o.schedule_collectives && has_collectives(t))
    t = s.run("Sort waits", [&] { return sort_waits(t); });
  s.run("Delete Last Used", [&] { return del_last_used(t); });
}

int64_t count_regions(const Trace& t) {
  return std::count_if(t.bsyms.begin(), t.bsyms.end(),
                       [](const BoundSymbol& b) { return b.sym->is_region; });
}

// Autodiff to one joint trace, split into forward and backward, then the
// min-cut of what the forward saves. Records the runtime's view of the split
// in `out`.
ForwardBackward differentiate(Stages& fwd, Stages& bwd, const Trace& t, bool stateless_rng,
                              const PipelineOptions& o, CompiledTraces& out) {
  JointTrace joint;
  joint.trace = fwd.run("Autodiff", [&] {
    joint = autodiff(t);
    return joint.trace;
  });
  // In-place ops that autodiff brought in (a custom function's backward).
  if (!o.skip_inplace_functionalization && has_inplace(joint.trace))
    joint.trace = fwd.run("Functionalization of the joint trace", [&] {
      Functionalized f = functionalize(joint.trace);
      THUNDER_CHECK(f.written_inputs.empty(),
                    "thunder::jit: a grad rule or custom backward writes in place into input {}, "
                    "which is not supported",
                    f.written_inputs.empty() ? "" : f.written_inputs[0]->name);
      return f.trace;
    });
  if (stateless_rng)
    joint.trace = fwd.run("Replace uniform", [&] { return replace_uniform(joint.trace); });

  Stopwatch split;
  ForwardBackward fb = split_forward_backward(joint);
  if (o.strict_saved_for_backward) check_saved_explicitly(joint, fb.saved);
  note_saved(fb.backward, fb.saved);
  const double split_ms = split.ms();
  fwd.add("Split forward and backward", fb.forward, split_ms);
  bwd.keep("Split forward and backward", fb.backward, split_ms);
  // Strict mode saves exactly what the rules saved explicitly: no min-cut.
  if (o.rematerialize && !o.strict_saved_for_backward) {
    Stopwatch remat;
    fb = rematerialize(fb);
    note_saved(fb.backward, fb.saved);
    const double remat_ms = remat.ms();
    fwd.add("Rematerialization", fb.forward, remat_ms);
    bwd.keep("Rematerialization", fb.backward, remat_ms);
    // Recomputed forward values are often what grad rules compute too (sin's
    // rule takes cos(x), cos's takes sin(x)).
    fb.backward = bwd.run("Common Subexpression Elimination", [&] { return cse(fb.backward); });
  }
  out.num_outputs = joint.num_outputs;
  out.cotangents = joint.cotangents;
  out.grad_inputs = joint.grad_inputs;
  out.saved = fb.saved;
  return fb;
}

}  // namespace

int64_t bytes_of(const std::vector<ProxyPtr>& values) {
  int64_t n = 0;
  for (const ProxyPtr& p : values) n += p->numel() * item_size(p->dtype);
  return n;
}

CompiledTraces run_pipeline(Trace t, const PipelineOptions& o) {
  CompiledTraces out;
  Stages fwd(out.forward, out.pass_ms, ""), bwd(out.backward, out.pass_ms, " (backward)");
  t = fwd.add("Tracing", std::move(t), o.tracing_ms);
  const bool functionalizes = !o.skip_inplace_functionalization;
  if (functionalizes && has_inplace(t)) {
    t = fwd.run("Functionalization", [&] {
      Functionalized f = functionalize(t, o.alias_groups);
      out.written_inputs = f.written_inputs;
      check_written_values(f);
      return f.trace;
    });
  }
  t = fwd.run("Dead Code Elimination", [&] { return dce(t); });
  // A stage only where it found attention (most traces have none).
  if (o.recognize_attention) {
    Stopwatch watch;
    Trace r = recognize_attention(t);
    if (r.bsyms.size() != t.bsyms.size()) t = fwd.add("Recognize attention", r, watch.ms());
  }
  // Random draws become stateless uniform_philox (on the joint trace when
  // differentiating, so the backward replays a forward draw from seed and offset).
  const bool stateless_rng = !o.disable_replace_uniform && draws_uniform(t.bsyms);
  if (o.grad_enabled && requires_grad(t)) {
    ForwardBackward fb = differentiate(fwd, bwd, t, stateless_rng, o, out);
    t = fb.forward;
    if (o.gradient_bucket_bytes > 0 && has_collectives(fb.backward))
      fb.backward = bwd.run("Bucket all_reduces", [&] {
        return bucket_all_reduces(fb.backward, o.gradient_bucket_bytes);
      });
    transform_for_execution(bwd, fb.backward, o, o.fusion_strategy);
    note_saved(out.backward.back(), out.saved);
  } else if (stateless_rng) {
    t = fwd.run("Replace uniform", [&] { return replace_uniform(t); });
  }
  // In-place statements kept for debugging pin the order: no reordering.
  const bool keeps_inplace = !functionalizes && has_inplace(t);
  transform_for_execution(fwd, t, o,
                          keeps_inplace ? FusionStrategy::Consecutive : o.fusion_strategy);
  out.fusion_regions = count_regions(out.forward.back()) +
                       (out.has_backward() ? count_regions(out.backward.back()) : 0);
  return out;
}

}  // namespace thunder
