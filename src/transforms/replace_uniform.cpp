#include "thunder/transforms/replace_uniform.h"

#include <algorithm>

#include "thunder/core/philox.h"
#include "thunder/core/tracing.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

class Rewriter {
 public:
  explicit Rewriter(TraceCtx& ctx)
      : ctx_(ctx),
        uniform_(prims::symbol("prims.uniform")),
        philox_(prims::symbol("prims.uniform_philox")) {}

  void rewrite(const BoundSymbol& b, std::vector<BoundSymbol>& out) {
    if (b.sym == &uniform_) {
      replace(b, out);
      return;
    }
    if (!draws(b)) {
      out.push_back(b);
      return;
    }
    std::vector<const Symbol*> outer = b.origins;
    outer.push_back(b.sym);
    for (const BoundSymbol& s : b.subsymbols) {
      BoundSymbol inlined = s;
      inlined.tags |= b.tags;
      inlined.origins = outer;
      for (const Symbol* o : s.origins)
        if (std::find(outer.begin(), outer.end(), o) == outer.end()) inlined.origins.push_back(o);
      rewrite(inlined, out);
    }
  }

 private:
  bool draws(const BoundSymbol& b) const {
    return b.sym == &uniform_ || std::any_of(b.subsymbols.begin(), b.subsymbols.end(),
                                             [&](const BoundSymbol& s) { return draws(s); });
  }

  // uniform(shape, lo, hi, device, dtype) keeps its output, now drawn by
  // uniform_philox from a fresh (seed, offset); both statements inherit its
  // origins and tags.
  void replace(const BoundSymbol& u, std::vector<BoundSymbol>& out) {
    const Proxy& t = *u.output.proxy();
    std::vector<BoundSymbol> step;
    ctx_.push_scope(&step, nullptr);
    Value state = prims::get_and_update_rng_state(t.device, philox::counters(t.numel(), t.dtype));
    ctx_.pop_scope();
    step.front().origins = u.origins;
    step.front().tags = u.tags;
    out.push_back(std::move(step.front()));

    const auto& a = u.args;  // shape, minval, maxval, device, dtype
    BoundSymbol draw;
    draw.sym = &philox_;
    draw.args = {a[0], a[1], a[2], state.as_list()[0], state.as_list()[1], a[3], a[4]};
    draw.output = u.output;
    draw.origins = u.origins;
    draw.tags = u.tags;
    out.push_back(std::move(draw));
  }

  TraceCtx& ctx_;
  const Symbol& uniform_;
  const Symbol& philox_;
};

}  // namespace

Trace replace_uniform(const Trace& trace) {
  Trace out = trace.empty_like();
  {
    TracingScope scope(out);
    Rewriter r(scope.ctx());
    std::vector<BoundSymbol> bsyms;
    for (const BoundSymbol& b : trace.bsyms) r.rewrite(b, bsyms);
    out.bsyms = std::move(bsyms);
  }
  return out;
}

}  // namespace thunder
