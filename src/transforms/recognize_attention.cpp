#include "thunder/transforms/recognize_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/transforms/dce.h"

namespace thunder {
namespace {

std::optional<double> literal(const Value& v) {
  if (!v.is_number() || v.is_number_proxy()) return std::nullopt;
  return v.to_double();
}

// A dim as a non-negative index into a rank-`rank` tensor.
int64_t wrapped(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

class Matcher {
 public:
  explicit Matcher(const Trace& t) : t_(t) {
    for (size_t i = 0; i < t.bsyms.size(); ++i) {
      for (const ProxyPtr& p : t.bsyms[i].flat_outputs()) producer_[p.get()] = i;
      for (const ProxyPtr& p : t.bsyms[i].flat_args()) ++uses_[p.get()];
    }
    std::vector<ProxyPtr> outs;
    t.output.collect_proxies(outs);
    for (const ProxyPtr& p : outs) ++uses_[p.get()];
  }

  struct Match {
    Value q, k, v;
    bool causal = false;
    std::vector<size_t> chain;  // the statements before the last that it replaces
  };

  // The attention whose last statement is t.bsyms[i], if it is one.
  std::optional<Match> attention_at(size_t i) const {
    const BoundSymbol& out = t_.bsyms[i];
    if (out.sym != &matmul_) return std::nullopt;
    Match m;
    m.v = out.args[1];
    const BoundSymbol* sm = single_use_producer(out.args[0], softmax_);
    if (!sm) return std::nullopt;
    const int64_t rank = sm->output.proxy()->ndim();
    if (rank < 2 || wrapped(sm->args[1].as_int(), rank) != rank - 1) return std::nullopt;
    m.chain.push_back(index_of(sm));
    // The scale and the mask, in either order, each once.
    Value s = sm->args[0];
    std::optional<double> scale;
    for (int step = 0; step < 2; ++step) {
      if (const BoundSymbol* mf = single_use_producer(s, masked_fill_); mf && !m.causal) {
        std::optional<double> fill = literal(mf->args[2]);
        if (!fill || *fill != -std::numeric_limits<double>::infinity() ||
            !is_causal_mask(mf->args[1], *s.proxy()))
          return std::nullopt;
        m.causal = true;
        m.chain.push_back(index_of(mf));
        s = mf->args[0];
      } else if (const BoundSymbol* mul = single_use_producer(s, mul_); mul && !scale) {
        const int t = literal(mul->args[0]) ? 1 : 0;  // the tensor operand
        scale = literal(mul->args[1 - t]);
        if (!scale || !mul->args[t].is_tensor()) return std::nullopt;
        m.chain.push_back(index_of(mul));
        s = mul->args[t];
      } else if (const BoundSymbol* div = single_use_producer(s, div_); div && !scale) {
        std::optional<double> d = literal(div->args[1]);
        if (!d || !div->args[0].is_tensor()) return std::nullopt;
        scale = 1.0 / *d;
        m.chain.push_back(index_of(div));
        s = div->args[0];
      }
    }
    const BoundSymbol* scores = single_use_producer(s, matmul_);
    if (!scores || !scale) return std::nullopt;
    m.chain.push_back(index_of(scores));
    m.q = scores->args[0];
    const BoundSymbol* kt = producer(scores->args[1], transpose_);
    if (!kt || !m.q.is_tensor()) return std::nullopt;
    m.k = kt->args[0];
    const int64_t krank = m.k.proxy()->ndim();
    const int64_t d0 = wrapped(kt->args[1].as_int(), krank),
                  d1 = wrapped(kt->args[2].as_int(), krank);
    if (krank < 2 || std::min(d0, d1) != krank - 2 || std::max(d0, d1) != krank - 1)
      return std::nullopt;
    // torch's scale: 1 / sqrt(D), to within the rounding of how it was written.
    const double head = static_cast<double>(m.q.proxy()->shape.back());
    if (std::abs(*scale * std::sqrt(head) - 1.0) > 1e-12) return std::nullopt;
    return m;
  }

 private:
  const BoundSymbol* producer(const Value& v, const Symbol& sym) const {
    if (!v.is_tensor()) return nullptr;
    auto it = producer_.find(v.proxy().get());
    if (it == producer_.end() || t_.bsyms[it->second].sym != &sym) return nullptr;
    return &t_.bsyms[it->second];
  }

  // The producer of a value nothing else reads (not even the trace's output).
  const BoundSymbol* single_use_producer(const Value& v, const Symbol& sym) const {
    const BoundSymbol* b = producer(v, sym);
    return b && uses_.at(v.proxy().get()) == 1 ? b : nullptr;
  }

  size_t index_of(const BoundSymbol* b) const { return static_cast<size_t>(b - t_.bsyms.data()); }

  // True when `mask` is torch's top-left causal mask for `scores` (key j
  // masked for query i iff j > i), computed from constants alone.
  bool is_causal_mask(const Value& mask, const Proxy& scores) const {
    if (!mask.is_tensor() || mask.proxy()->dtype != DType::b8) return false;
    const Shape& ms = mask.proxy()->shape;
    const Shape& ss = scores.shape;
    if (ms.size() < 2 || ms.size() > ss.size() || ms[ms.size() - 2] != ss[ss.size() - 2] ||
        ms.back() != ss.back() ||
        std::any_of(ms.begin(), ms.end() - 2, [](int64_t d) { return d != 1; }))
      return false;
    // The masked (above the diagonal) entries hold `fill`, the others 0,
    // until a comparison maps both to bool.
    auto masked_if = [&](const Value& v) -> std::optional<double> {
      const BoundSymbol* tri = producer(v, triu_);
      if (!tri || tri->args[1].as_int() != 1) return std::nullopt;
      if (producer(tri->args[0], ones_)) return 1.0;
      if (const BoundSymbol* f = producer(tri->args[0], full_)) return literal(f->args[1]);
      return std::nullopt;
    };
    if (std::optional<double> fill = masked_if(mask)) return *fill != 0;
    if (const BoundSymbol* gt = producer(mask, gt_)) {
      std::optional<double> fill = masked_if(gt->args[0]), c = literal(gt->args[1]);
      return fill && c && 0 <= *c && *c < *fill;
    }
    if (const BoundSymbol* ne = producer(mask, ne_)) {
      std::optional<double> fill = masked_if(ne->args[0]), c = literal(ne->args[1]);
      return fill && c && *c == 0 && *fill != 0;
    }
    return false;
  }

  const Trace& t_;
  std::unordered_map<const Proxy*, size_t> producer_;
  std::unordered_map<const Proxy*, int> uses_;
  const Symbol& matmul_ = ltorch::symbol("ltorch.matmul");
  const Symbol& softmax_ = ltorch::symbol("ltorch.softmax");
  const Symbol& masked_fill_ = ltorch::symbol("ltorch.masked_fill");
  const Symbol& mul_ = ltorch::symbol("ltorch.mul");
  const Symbol& div_ = ltorch::symbol("ltorch.div");
  const Symbol& transpose_ = ltorch::symbol("ltorch.transpose");
  const Symbol& triu_ = ltorch::symbol("ltorch.triu");
  const Symbol& ones_ = ltorch::symbol("ltorch.ones");
  const Symbol& full_ = ltorch::symbol("ltorch.full");
  const Symbol& gt_ = ltorch::symbol("ltorch.gt");
  const Symbol& ne_ = ltorch::symbol("ltorch.ne");
};

// Every occurrence of `from` (as an argument or an output) becomes `to`.
void replace_proxy(Value& v, const Proxy* from, const ProxyPtr& to) {
  if (v.is_proxy() && v.proxy().get() == from) v = Value(to);
  if (v.is_list())
    for (Value& e : v.as_list()) replace_proxy(e, from, to);
}
void replace_proxy(BoundSymbol& b, const Proxy* from, const ProxyPtr& to) {
  for (Value& a : b.args) replace_proxy(a, from, to);
  replace_proxy(b.output, from, to);
  for (BoundSymbol& s : b.subsymbols) replace_proxy(s, from, to);
}

// ltorch.scaled_dot_product_attention of the match, writing `old`'s output,
// or nothing when the op rejects q, k and v (nothing is then recorded).
std::optional<BoundSymbol> attention_statement(TraceCtx& ctx, const Matcher::Match& m,
                                               const BoundSymbol& old) {
  std::vector<BoundSymbol> step;
  ctx.push_scope(&step, nullptr);
  try {
    ltorch::scaled_dot_product_attention(m.q, m.k, m.v, m.causal);
  } catch (const Error&) {
    ctx.pop_scope();
    return std::nullopt;
  }
  ctx.pop_scope();
  if (step.size() != 1) return std::nullopt;
  BoundSymbol b = std::move(step.front());
  const Proxy &made = *b.output.proxy(), &want = *old.output.proxy();
  if (made.shape != want.shape || made.dtype != want.dtype) return std::nullopt;
  replace_proxy(b, &made, old.output.proxy());
  b.tags = old.tags;
  b.origins = old.origins;
  return b;
}

}  // namespace

Trace recognize_attention(const Trace& trace) {
  Matcher matcher(trace);
  Trace out = trace.empty_like();
  std::vector<BoundSymbol> bsyms = trace.bsyms;
  std::vector<bool> dropped(bsyms.size(), false);
  bool changed = false;
  {
    TracingScope scope(out);
    for (size_t i = 0; i < trace.bsyms.size(); ++i) {
      std::optional<Matcher::Match> m = matcher.attention_at(i);
      if (!m) continue;
      std::optional<BoundSymbol> b = attention_statement(scope.ctx(), *m, trace.bsyms[i]);
      if (!b) continue;
      for (size_t j : m->chain) dropped[j] = true;
      bsyms[i] = std::move(*b);
      changed = true;
    }
  }
  if (!changed) return trace;
  std::vector<BoundSymbol> kept;
  for (size_t i = 0; i < bsyms.size(); ++i)
    if (!dropped[i]) kept.push_back(std::move(bsyms[i]));
  out.bsyms = dce(kept, trace.output);
  return out;
}

}  // namespace thunder
