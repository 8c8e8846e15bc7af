// Custom autograd functions met while capturing (captured_function.h): the
// forward and the backward are recorded once, on the call's tensors; the
// statement recorded in the trace and its grad rule replay the recordings on
// the values they are given.
#include "thunder/frontend/captured_function.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "capture_session.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/transforms/trace_symbol.h"

namespace thunder::detail {

namespace {

using Substitution = std::unordered_map<const Proxy*, Value>;

Value substitute(const Value& v, const Substitution& m) {
  if (v.is_proxy()) {
    auto it = m.find(v.proxy().get());
    return it == m.end() ? v : it->second;
  }
  if (!v.is_list()) return v;
  std::vector<Value> out;
  for (const Value& x : v.as_list()) out.push_back(substitute(x, m));
  return Value(std::move(out));
}

// Calls the recorded statements' symbols again on the substituted values, in
// the active scope; m learns each recorded output's new value.
Value replay(const std::vector<BoundSymbol>& stmts, Substitution& m, const Value& result) {
  for (const BoundSymbol& b : stmts) {
    std::vector<Value> args;
    for (const Value& a : b.args) args.push_back(substitute(a, m));
    const Value out = call_symbol(*b.sym, std::move(args));
    std::vector<ProxyPtr> was, is;
    b.output.collect_proxies(was);
    out.collect_proxies(is);
    THUNDER_INTERNAL_CHECK(was.size() == is.size(), "{}: replayed with {} outputs, recorded {}",
                           b.sym->id, is.size(), was.size());
    for (size_t i = 0; i < was.size(); ++i) m[was[i].get()] = Value(is[i]);
  }
  return substitute(result, m);
}

// The values the statements (and the result) read without making them, in
// first-read order, after `first` (which come first, as given).
std::vector<ProxyPtr> free_values(const std::vector<BoundSymbol>& stmts, const Value& result,
                                  std::vector<ProxyPtr> first,
                                  const std::unordered_set<const Proxy*>& bound) {
  std::unordered_set<const Proxy*> known(bound);
  for (const ProxyPtr& p : first) known.insert(p.get());
  auto read = [&](const ProxyPtr& p) {
    if (known.insert(p.get()).second) first.push_back(p);
  };
  for (const BoundSymbol& b : stmts) {
    for (const ProxyPtr& p : b.flat_args()) read(p);
    for (const ProxyPtr& p : b.flat_outputs()) known.insert(p.get());
  }
  std::vector<ProxyPtr> outs;
  result.collect_proxies(outs);
  for (const ProxyPtr& p : outs) read(p);
  return first;
}

std::vector<Value> values_of(const std::vector<ProxyPtr>& ps) {
  return std::vector<Value>(ps.begin(), ps.end());
}

// One call's recordings, shared by its symbols' bodies and its grad rule.
struct Recording {
  std::string name;
  std::vector<BoundSymbol> forward;
  std::vector<ProxyPtr> forward_reads;  // the tensor arguments first
  Value forward_result;                 // a tensor, or a list of them
  std::vector<bool> differentiable;     // per flat output
  std::vector<BoundSymbol> backward;
  std::vector<ProxyPtr> backward_reads;    // values of the forward world
  std::unordered_set<const Proxy*> saved;  // of those, saved with ctx.save_for_backward
  std::vector<ProxyPtr> cotangents;        // per flat output; nullptr: not read
  Value backward_result;                   // a list, one per tensor argument
  size_t num_inputs = 0;
};

Value replay_forward(const Recording& r, const std::vector<Value>& args, Substitution& m) {
  for (size_t k = 0; k < r.forward_reads.size(); ++k) m[r.forward_reads[k].get()] = args.at(k);
  return replay(r.forward, m, r.forward_result);
}

Value replay_backward(const Recording& r, const OpArgs& a) {
  Substitution m;
  size_t k = 0;
  for (const ProxyPtr& p : r.backward_reads) m[p.get()] = a[k++];
  for (const ProxyPtr& c : r.cotangents)
    if (c) m[c.get()] = a[k++];
  return replay(r.backward, m, r.backward_result);
}

// The grad rule: the recorded forward, then `<name>_backward` on what the
// backward reads and the cotangents it reads.
Value apply_rule(const Recording& r, const Symbol& backward, VjpContext& v, const OpArgs& a) {
  Substitution m;
  const Value result = replay_forward(r, a.values(), m);
  std::vector<ProxyPtr> outs;
  result.collect_proxies(outs);
  bool any = false;
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!r.differentiable[j]) outs[j]->requires_grad = false;
    any = any || outs[j]->requires_grad;
  }
  if (!any) return result;
  std::vector<Value> args;
  for (const ProxyPtr& p : r.backward_reads) {
    Value x = substitute(Value(p), m);
    if (r.saved.count(p.get()) && x.is_tensor())
      x.proxy()->tags |= static_cast<uint32_t>(ProxyTag::SAVED_FOR_BACKWARD);
    args.push_back(std::move(x));
  }
  for (size_t j = 0; j < r.cotangents.size(); ++j) {
    if (!r.cotangents[j]) continue;
    const Proxy& o = *outs[j];
    args.push_back(o.requires_grad ? v.get_grad(Value(outs[j]))
                                   : ltorch::zeros(o.shape, o.device, o.dtype));
  }
  const Value grads = call_symbol(backward, std::move(args));
  for (size_t i = 0; i < r.num_inputs; ++i) {
    const Value& g = grads.as_list().at(i);
    if (!a[i].is_tensor() || !g.is_tensor() || !v.requires_grad(a[i])) continue;
    const DType want = a[i].proxy()->dtype;
    v.put_grad(a[i], g.proxy()->dtype == want ? g : ltorch::to(g, want));
  }
  return result;
}

std::vector<std::string> numbered(const std::string& prefix, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

}  // namespace

Tensor captured_tensor(const at::Tensor& t) {
  const Value v = captured_value(t, "thunder_cpp.checkpoint (a result)");
  THUNDER_CHECK(v.is_tensor(), "thunder_cpp.checkpoint: a result has no tensor value ({})",
                v.str());
  return Tensor(v.proxy());
}

struct CapturedFunction::State {
  std::shared_ptr<Recording> rec = std::make_shared<Recording>();
  TraceCtx* ctx = nullptr;
  bool grad_enabled = true;
  std::vector<at::Tensor> inputs;
  std::vector<Value> input_values;
  std::vector<at::Tensor> outputs;
  std::vector<ProxyPtr> output_proxies;
  std::vector<ProxyPtr> non_differentiable;
  int open_scopes = 0;

  std::string op() const { return "custom autograd function '" + rec->name + "'"; }
};

CapturedFunction::CapturedFunction(std::string name, const std::vector<at::Tensor>& inputs)
    : s_(std::make_unique<State>()) {
  s_->rec->name = std::move(name);
  s_->ctx = current_trace_ctx();
  THUNDER_CHECK(capturing() && s_->ctx != nullptr, "{}: called outside of a capture run", s_->op());
  s_->grad_enabled = at::GradMode::is_enabled();
  s_->inputs = inputs;
  for (const at::Tensor& t : inputs) {
    s_->input_values.push_back(captured_value(t, s_->op()));
    THUNDER_CHECK(s_->input_values.back().is_tensor(), "{}: argument {} is not a tensor value ({})",
                  s_->op(), s_->input_values.size() - 1, s_->input_values.back().str());
  }
  s_->rec->num_inputs = inputs.size();
}

CapturedFunction::~CapturedFunction() {
  for (; s_->open_scopes > 0; --s_->open_scopes) s_->ctx->pop_scope();
}

bool CapturedFunction::input_requires_grad(size_t i) const {
  const Value& v = s_->input_values.at(i);
  return s_->grad_enabled && v.is_tensor() && v.proxy()->requires_grad;
}

void CapturedFunction::begin_forward() {
  s_->ctx->push_scope(&s_->rec->forward, nullptr);
  ++s_->open_scopes;
}

void CapturedFunction::end_forward(const std::vector<at::Tensor>& outputs,
                                   const std::vector<at::Tensor>& non_differentiable) {
  s_->ctx->pop_scope();
  --s_->open_scopes;
  Recording& r = *s_->rec;
  std::vector<Value> results;
  for (size_t j = 0; j < outputs.size(); ++j) {
    Value v = captured_value(outputs[j], s_->op());
    THUNDER_CHECK(v.is_tensor(), "{}: forward's result {} has no tensor value ({})", s_->op(), j,
                  v.str());
    for (const Value& in : s_->input_values)
      THUNDER_CHECK(!in.is_tensor() || in.proxy() != v.proxy(),
                    "{}: forward returns its argument {} as it is; return a new tensor "
                    "(x.clone(), or a view of it)",
                    s_->op(), in.proxy()->name);
    s_->output_proxies.push_back(v.proxy());
    results.push_back(std::move(v));
  }
  for (const at::Tensor& t : non_differentiable) {
    const Value v = captured_value(t, s_->op());
    if (v.is_tensor()) s_->non_differentiable.push_back(v.proxy());
  }
  s_->outputs = outputs;
  r.forward_result = results.size() == 1 ? results[0] : Value(std::move(results));
  std::vector<ProxyPtr> args;
  for (const Value& v : s_->input_values) args.push_back(v.proxy());
  r.forward_reads = free_values(r.forward, r.forward_result, args, {});
}

at::Tensor CapturedFunction::stand_in(const at::Tensor& t, bool saved) {
  if (!t.defined()) return t;
  Value v = captured_value(t, s_->op());
  at::Tensor copy;
  {
    CaptureKeyOff off;
    at::NoGradGuard no_grad;
    copy = t.clone();
  }
  if (saved && v.is_tensor()) s_->rec->saved.insert(v.proxy().get());
  bind_stand_in(copy, std::move(v));
  return copy;
}

std::vector<at::Tensor> CapturedFunction::begin_backward() {
  std::vector<at::Tensor> cotangents;
  for (size_t j = 0; j < s_->outputs.size(); ++j) {
    const Proxy& o = *s_->output_proxies[j];
    at::Tensor one;
    {
      CaptureKeyOff off;
      at::NoGradGuard no_grad;
      one = at::ones_like(s_->outputs[j], at::MemoryFormat::Contiguous);
    }
    ProxyPtr p = s_->ctx->new_tensor(o.shape, o.dtype, o.device);
    bind_stand_in(one, Value(p));
    s_->rec->cotangents.push_back(std::move(p));
    cotangents.push_back(std::move(one));
  }
  s_->ctx->push_scope(&s_->rec->backward, nullptr);
  ++s_->open_scopes;
  return cotangents;
}

void CapturedFunction::end_backward(const std::vector<at::Tensor>& grads) {
  s_->ctx->pop_scope();
  --s_->open_scopes;
  Recording& r = *s_->rec;
  THUNDER_INTERNAL_CHECK(grads.size() == s_->inputs.size(), "{}: {} gradients for {} inputs",
                         s_->op(), grads.size(), s_->inputs.size());
  std::vector<Value> results;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      results.emplace_back();
      continue;
    }
    THUNDER_CHECK(grads[i].sizes() == s_->inputs[i].sizes(),
                  "{}: backward returned a gradient of shape {} for argument {} of shape {}",
                  s_->op(), c10::str(grads[i].sizes()), i, c10::str(s_->inputs[i].sizes()));
    results.push_back(captured_value(grads[i], s_->op()));
  }
  r.backward_result = Value(std::move(results));
  std::unordered_set<const Proxy*> cotangents;
  for (const ProxyPtr& c : r.cotangents) cotangents.insert(c.get());
  r.backward_reads = free_values(r.backward, r.backward_result, {}, cotangents);
  std::erase_if(r.backward_reads,
                [&](const ProxyPtr& p) { return cotangents.count(p.get()) != 0; });
  // A cotangent the backward never reads is not passed to it.
  std::unordered_set<const Proxy*> read;
  for (const BoundSymbol& b : r.backward)
    for (const ProxyPtr& p : b.flat_args()) read.insert(p.get());
  std::vector<ProxyPtr> outs;
  r.backward_result.collect_proxies(outs);
  for (const ProxyPtr& p : outs) read.insert(p.get());
  for (ProxyPtr& c : r.cotangents)
    if (!read.count(c.get())) c = nullptr;
}

void CapturedFunction::finish() {
  const std::shared_ptr<Recording> rec = s_->rec;
  const std::shared_ptr<const Symbol> backward = make_trace_symbol(
      [&] {
        Symbol s;
        s.id = rec->name + "_backward";
        s.params = numbered("saved", rec->backward_reads.size());
        size_t n = 0;
        for (const ProxyPtr& c : rec->cotangents) n += c != nullptr;
        for (const std::string& p : numbered("cotangent", n)) s.params.push_back(p);
        s.body = [rec](const OpArgs& a) { return replay_backward(*rec, a); };
        return s;
      }(),
      GradRule());
  Symbol f;
  f.id = rec->name;
  f.params = numbered("input", rec->num_inputs);
  for (size_t k = rec->num_inputs; k < rec->forward_reads.size(); ++k)
    f.params.push_back("read" + std::to_string(k - rec->num_inputs));
  f.body = [rec](const OpArgs& a) {
    Substitution m;
    return replay_forward(*rec, a.values(), m);
  };
  const std::shared_ptr<const Symbol> forward =
      make_trace_symbol(std::move(f), [rec, backward](VjpContext& v, const OpArgs& a) {
        return apply_rule(*rec, *backward, v, a);
      });

  // The outputs' autograd state, as Function.apply gives it.
  bool any_input = false;
  for (size_t i = 0; i < s_->inputs.size(); ++i) any_input = any_input || input_requires_grad(i);
  for (const ProxyPtr& p : s_->output_proxies) {
    const bool non_diff = std::find(s_->non_differentiable.begin(), s_->non_differentiable.end(),
                                    p) != s_->non_differentiable.end();
    rec->differentiable.push_back(!non_diff);
    p->requires_grad = any_input && !non_diff && is_float(p->dtype);
    const auto detached = static_cast<uint32_t>(ProxyTag::DETACHED_AUTOGRAD_GRAPH);
    p->tags = s_->grad_enabled ? (p->tags & ~detached) : (p->tags | detached);
  }

  BoundSymbol b;
  b.sym = forward.get();
  b.args = values_of(rec->forward_reads);
  b.output = rec->forward_result;
  b.subsymbols = rec->forward;
  b.origins = s_->ctx->composite_stack();
  s_->ctx->grad_enabled = s_->grad_enabled;
  s_->ctx->trace().owned_symbols.push_back(forward);
  s_->ctx->trace().owned_symbols.push_back(backward);
  s_->ctx->record(std::move(b));
}

}  // namespace thunder::detail
