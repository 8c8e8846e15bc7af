// The table of named passes. Each row adapts one pass to a list of traces and
// stamps its provenance without timings, so thunder-opt prints deterministically.
#include "thunder/frontend/passes.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "thunder/core/error.h"
#include "thunder/executors/claim.h"
#include "thunder/executors/cpu_fuser.h"
#include "thunder/frontend/pipeline.h"
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

using Traces = std::vector<Trace>;

Trace stamped(Trace t, const std::string& what) {
  t.provenance = "Constructed by " + what;
  return t;
}

// A pass of one trace, run on each trace of the input (forward and backward alike).
template <typename F>
auto each(std::string what, F f) {
  return [what, f](const Traces& in, const PassOptions& o) {
    Traces out;
    for (const Trace& t : in) out.push_back(stamped(f(t, o), what));
    return out;
  };
}

const Trace& only(const Traces& in, const char* pass, const char* what) {
  THUNDER_CHECK(in.size() == 1, "{}: expects one trace ({}), got {}", pass, what, in.size());
  return in[0];
}

std::vector<Executor*> executors_of(const PassOptions& o) {
  std::vector<Executor*> ex;
  for (const std::string& name : o.executors) ex.push_back(&executor_by_name(name));
  return ex;
}

// The saved values of a forward/backward pair: the leading backward inputs
// that the forward returns (the cotangents follow them).
ForwardBackward pair_of(const Traces& in) {
  THUNDER_CHECK(in.size() == 2,
                "rematerialize: expects a forward trace followed by its backward, "
                "got {} traces",
                in.size());
  ForwardBackward fb{in[0], in[1], {}};
  std::vector<ProxyPtr> returned;
  fb.forward.output.collect_proxies(returned);
  for (const ProxyPtr& p : fb.backward.inputs) {
    if (std::find(returned.begin(), returned.end(), p) == returned.end()) break;
    fb.saved.push_back(p);
  }
  return fb;
}

Traces both(ForwardBackward fb, const std::string& what) {
  note_saved(fb.backward, fb.saved);
  return {stamped(fb.forward, what), stamped(fb.backward, what)};
}

FusionStrategy strategy_of(const PassOptions& o) {
  THUNDER_CHECK(o.fusion_type == "dataflow" || o.fusion_type == "consecutive",
                "--fusion-type: unknown '{}' (expected 'dataflow' or 'consecutive')",
                o.fusion_type);
  return o.fusion_type == "consecutive" ? FusionStrategy::Consecutive : FusionStrategy::Dataflow;
}

// Traces read from text carry no claims: claim them first.
Trace claimed(const Trace& t, const std::vector<Executor*>& ex) {
  bool any = std::any_of(t.bsyms.begin(), t.bsyms.end(),
                         [](const BoundSymbol& b) { return b.executor >= 0; });
  return any ? t : claim_executors(t, ex);
}

// One step of an executor's fusion (FusionPass::key), on its own: the first
// executor in the list that has a fusion pass with that key runs it.
NamedPass fusion_step(const std::string& key, const std::string& description) {
  return {key, description, [key](const Traces& in, const PassOptions& o) {
            std::vector<Executor*> ex = executors_of(o);
            for (size_t k = 0; k < ex.size(); ++k)
              for (const FusionPass& pass : ex[k]->fusion_passes()) {
                if (pass.key != key) continue;
                FusionContext ctx{static_cast<int>(k), &ex, strategy_of(o)};
                Traces out;
                for (const Trace& t : in)
                  out.push_back(stamped(pass.run(claimed(t, ex), ctx), pass.name));
                return out;
              }
            fail("{}: none of the executors ({}) has this fusion pass", key,
                 fmt::join(o.executors, ", "));
          }};
}

}  // namespace

const std::vector<NamedPass>& named_passes() {
  static const std::vector<NamedPass> passes = {
      {"dce", "drop statements whose outputs nothing reads",
       each("Dead Code Elimination", [](const Trace& t, const PassOptions&) { return dce(t); })},
      {"cse", "merge pure statements equal to an earlier one",
       each("Common Subexpression Elimination",
            [](const Trace& t, const PassOptions&) { return cse(t); })},
      {"functionalize", "rewrite in-place ops (prims.copy_) into pure dataflow",
       each("Functionalization",
            [](const Trace& t, const PassOptions&) { return functionalize(t).trace; })},
      {"recognize_attention", "hand-written attention -> one ltorch.scaled_dot_product_attention",
       each("Recognize attention",
            [](const Trace& t, const PassOptions&) { return recognize_attention(t); })},
      {"replace_uniform", "make random draws replayable (prims.uniform -> uniform_philox)",
       each("Replace uniform",
            [](const Trace& t, const PassOptions&) { return replace_uniform(t); })},
      {"autodiff", "build the joint forward and backward trace",
       [](const Traces& in, const PassOptions&) -> Traces {
         return {stamped(autodiff(only(in, "autodiff", "a computation trace")).trace, "Autodiff")};
       }},
      {"split", "cut a joint trace into forward and backward (saving what backward reads)",
       [](const Traces& in, const PassOptions&) {
         JointTrace j = joint_trace_from(only(in, "split", "a joint trace"));
         return both(split_forward_backward(j), "Split forward and backward");
       }},
      {"rematerialize", "choose saved-for-backward by min-cut (forward + backward in and out)",
       [](const Traces& in, const PassOptions&) {
         return both(rematerialize(pair_of(in)), "Rematerialization");
       }},
      {"bucket_all_reduces", "all_reduces in greedy 25 MiB buckets (one collective per bucket)",
       each("Bucket all_reduces",
            [](const Trace& t, const PassOptions&) { return bucket_all_reduces(t, 25 << 20); })},
      {"claim", "assign statements to executors (--executors, in priority order)",
       each("Transform for execution",
            [](const Trace& t, const PassOptions& o) {
              return claim_executors(t, executors_of(o));
            })},
      {"fusion", "form cpu_fuser regions (claims first if nothing is claimed)",
       each("Fusion",
            [](const Trace& t, const PassOptions& o) {
              std::vector<Executor*> ex = executors_of(o);
              return fusion_pass(claimed(t, ex), ex, strategy_of(o));
            })},
      fusion_step("flatten", "decompose claimed composites into the prims a fusion executor runs"),
      fusion_step("form_regions", "group fusible statements into fusion regions"),
      fusion_step("rematerialize_regions",
                  "recompute cheap producers inside the regions that consume them"),
      fusion_step("fusion_kernels", "generate and compile each region's kernel"),
      {"sort_waits", "issue collectives as early as possible, wait as late as possible",
       each("Sort waits", [](const Trace& t, const PassOptions&) { return sort_waits(t); })},
      {"del_last_used", "free each value right after its last use",
       each("Delete Last Used",
            [](const Trace& t, const PassOptions&) { return del_last_used(t); })},
  };
  return passes;
}

const NamedPass& find_pass(std::string_view name) {
  std::string known;
  for (const NamedPass& p : named_passes()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  fail("unknown pass '{}' (known passes: {})", name, known);
}

}  // namespace thunder
