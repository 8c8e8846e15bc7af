// The table of named passes. Each row adapts one pass to a list of traces and
// stamps its provenance without timings, so thunder-opt prints deterministically.
#include "thunder/frontend/passes.h"

#include <algorithm>

#include "thunder/core/error.h"
#include "thunder/executors/claim.h"
#include "thunder/executors/cpu_fuser.h"
#include "thunder/transforms/autodiff.h"
#include "thunder/transforms/cse.h"
#include "thunder/transforms/dce.h"
#include "thunder/transforms/del_last_used.h"
#include "thunder/transforms/functionalize.h"
#include "thunder/transforms/rematerialize.h"
#include "thunder/transforms/replace_uniform.h"

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

int64_t bytes_of(const std::vector<ProxyPtr>& values) {
  int64_t n = 0;
  for (const ProxyPtr& p : values) n += p->numel() * item_size(p->dtype);
  return n;
}

// The saved values of a forward/backward pair: the leading backward inputs
// that the forward returns (the cotangents follow them).
ForwardBackward pair_of(const Traces& in) {
  THUNDER_CHECK(in.size() == 2, "rematerialize: expects a forward trace followed by its backward, "
                                "got {} traces", in.size());
  ForwardBackward fb{in[0], in[1], {}};
  std::vector<ProxyPtr> returned;
  fb.forward.output.collect_proxies(returned);
  for (const ProxyPtr& p : fb.backward.inputs) {
    if (std::find(returned.begin(), returned.end(), p) == returned.end()) break;
    fb.saved.push_back(p);
  }
  return fb;
}

Traces both(const ForwardBackward& fb, const std::string& what) {
  return {stamped(fb.forward, what),
          stamped(fb.backward, what + " (saved for backward: " + std::to_string(bytes_of(fb.saved)) +
                                   " bytes)")};
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
      {"replace_uniform", "make random draws replayable (prims.uniform -> uniform_philox)",
       each("Replace uniform (stateless uniform_philox)",
            [](const Trace& t, const PassOptions&) { return replace_uniform(t); })},
      {"autodiff", "build the joint forward and backward trace",
       [](const Traces& in, const PassOptions&) -> Traces {
         return {stamped(autodiff(only(in, "autodiff", "a computation trace")).trace,
                         "Autodiff (joint forward and backward)")};
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
      {"claim", "assign statements to executors (--executors, in priority order)",
       each("Transform for execution", [](const Trace& t, const PassOptions& o) {
         return claim_executors(t, executors_of(o));
       })},
      {"fusion", "form cpu_fuser regions (claims first if nothing is claimed)",
       each("Fusion", [](const Trace& t, const PassOptions& o) {
         std::vector<Executor*> ex = executors_of(o);
         bool claimed = std::any_of(t.bsyms.begin(), t.bsyms.end(),
                                    [](const BoundSymbol& b) { return b.executor >= 0; });
         return fusion_pass(claimed ? t : claim_executors(t, ex), ex, o.fusion_type);
       })},
      {"del_last_used", "free each value right after its last use",
       each("Delete Last Used", [](const Trace& t, const PassOptions&) { return del_last_used(t); })},
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
