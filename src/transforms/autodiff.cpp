// Reverse-mode autodiff: the joint forward+backward trace and its split.
#include "thunder/transforms/autodiff.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "grad_rule_registry.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/aten_call.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/dce.h"

namespace thunder {

namespace {

using Renames = std::unordered_map<const Proxy*, Value>;

Value renamed(const Value& v, const Renames& r) {
  if (v.is_proxy()) {
    auto it = r.find(v.proxy().get());
    return it == r.end() ? v : it->second;
  }
  if (v.is_list()) {
    std::vector<Value> l;
    for (const Value& e : v.as_list()) l.push_back(renamed(e, r));
    return Value(std::move(l));
  }
  return v;
}

void rename_args(BoundSymbol& b, const Renames& r) {
  if (r.empty()) return;
  for (Value& a : b.args) a = renamed(a, r);
  for (BoundSymbol& s : b.subsymbols) rename_args(s, r);
}

bool needs_grad(const BoundSymbol& b) {
  for (const ProxyPtr& p : b.flat_outputs())
    if (p->is_tensor() && p->requires_grad) return true;
  return false;
}

// get_grad/put_grad bookkeeping for one rule application.
class RuleContext : public VjpContext {
 public:
  explicit RuleContext(TraceCtx& ctx) : ctx_(ctx) {}
  Value get_grad(const Value& out) override {
    THUNDER_CHECK(out.is_tensor(), "get_grad: expected a tensor, got {}", out.str());
    const Proxy& p = *out.proxy();
    ProxyPtr g = ctx_.new_tensor(p.shape, p.dtype, p.device);
    gets.emplace_back(g, out.proxy());
    return Value(g);
  }
  void put_grad(const Value& x, const Value& grad) override {
    if (!requires_grad(x) || grad.is_none()) return;
    THUNDER_CHECK(grad.is_tensor(), "put_grad: the gradient of {} must be a tensor, got {}",
                  x.str(), grad.str());
    const Proxy &xp = *x.proxy(), &gp = *grad.proxy();
    THUNDER_CHECK(xp.shape == gp.shape && xp.dtype == gp.dtype,
                  "put_grad: gradient {} (\"{}\") does not match {} (\"{}\")", gp.name,
                  gp.type_str(), xp.name, xp.type_str());
    puts.emplace_back(x.proxy(), grad);
  }
  bool requires_grad(const Value& x) const override {
    return x.is_tensor() && x.proxy()->requires_grad;
  }

  std::vector<std::pair<ProxyPtr, ProxyPtr>> gets;  // placeholder, forward value
  std::vector<std::pair<ProxyPtr, Value>> puts;     // input, gradient contribution

 private:
  TraceCtx& ctx_;
};

// The backward part of one rule application, bound and emitted in reverse order.
struct BackwardBlock {
  std::vector<BoundSymbol> stmts;
  std::vector<std::pair<ProxyPtr, ProxyPtr>> gets;
  std::vector<std::pair<ProxyPtr, Value>> puts;
};

class JointBuilder {
 public:
  JointBuilder(TraceCtx& ctx) : ctx_(ctx) {}

  void forward(const BoundSymbol& original) {
    BoundSymbol b = original;
    rename_args(b, renames_);
    if (!needs_grad(b)) {
      fwd_.push_back(std::move(b));
      return;
    }
    if (const GradRuleEntry* rule = find_grad_rule_entry(*b.sym)) {
      apply_rule(rule->fn, b, rule->builtin);
      return;
    }
    // Capture makes opaque calls only where no gradient flows; a gradient that
    // reaches one anyway must not be dropped silently.
    THUNDER_CHECK(!prims::is_aten_call(b),
                  "{}: an opaque call (no translation into ltorch symbols) has no grad rule, but "
                  "its result {} requires grad; add a translation row in "
                  "src/frontend/capture_ops.cpp and a grad rule, or call it under "
                  "torch::NoGradGuard",
                  prims::aten_call_op(b), b.flat_outputs().front()->name);
    THUNDER_CHECK(!b.sym->is_prim, "{}: has no grad rule, but {} requires grad", b.sym->id,
                  b.flat_outputs().front()->name);
    // No rule: differentiate through the decomposition.
    for (const BoundSymbol& s : b.subsymbols) forward(s);
  }

  void apply_rule(const GradRule& rule, const BoundSymbol& b, bool builtin) {
    RuleContext rc(ctx_);
    std::vector<BoundSymbol> stmts;
    // The rule's statements carry the symbol in their origins, so per-op
    // policies set on it (thunder::add_tags) reach what the rule emits.
    ctx_.push_scope(&stmts, b.sym);
    Value out;
    try {
      out = rule(rc, OpArgs(b.sym, b.args));
    } catch (...) {
      ctx_.pop_scope();
      throw;
    }
    ctx_.pop_scope();
    // Later statements read the rule's forward values in place of the original outputs.
    std::vector<ProxyPtr> old_outs = b.flat_outputs(), new_outs;
    out.collect_proxies(new_outs);
    THUNDER_CHECK(old_outs.size() == new_outs.size(),
                  "{}: its grad rule returned {} outputs, the symbol has {}", b.sym->id,
                  new_outs.size(), old_outs.size());
    for (size_t i = 0; i < old_outs.size(); ++i)
      if (old_outs[i] != new_outs[i]) renames_[old_outs[i].get()] = Value(new_outs[i]);
    // The forward part is what the rule's outputs need; everything else (what
    // depends on a cotangent, and values only the backward reads) is backward,
    // so a rule's backward recomputes cheap helpers instead of saving them.
    std::unordered_set<const Proxy*> needed;
    for (const ProxyPtr& p : new_outs) needed.insert(p.get());
    std::vector<bool> is_fwd(stmts.size(), false);
    for (size_t i = stmts.size(); i-- > 0;) {
      bool k = false;
      for (const ProxyPtr& p : stmts[i].flat_outputs()) k = k || needed.count(p.get());
      if (!k) continue;
      is_fwd[i] = true;
      for (const ProxyPtr& p : stmts[i].flat_args()) needed.insert(p.get());
    }
    // A checkpointed statement (thunder::checkpoint) stays checkpointed: the
    // rule's forward values are recomputed in the backward like the originals.
    bool checkpointed = std::any_of(old_outs.begin(), old_outs.end(), [](const ProxyPtr& p) {
      return p->has_tag(ProxyTag::RECOMPUTE_IN_BACKWARD);
    });
    if (checkpointed) {
      std::vector<ProxyPtr> args = b.flat_args();
      for (size_t i = 0; i < stmts.size(); ++i)
        for (const ProxyPtr& p : is_fwd[i] ? stmts[i].flat_outputs() : std::vector<ProxyPtr>{})
          if (std::find(args.begin(), args.end(), p) == args.end())
            p->tags |= static_cast<uint32_t>(ProxyTag::RECOMPUTE_IN_BACKWARD);
    }
    BackwardBlock block;
    for (size_t i = 0; i < stmts.size(); ++i) {
      BoundSymbol& st = stmts[i];
      st.origins.insert(st.origins.begin(), b.origins.begin(), b.origins.end());
      (is_fwd[i] ? fwd_ : block.stmts).push_back(std::move(st));
    }
    block.gets = std::move(rc.gets);
    block.puts = std::move(rc.puts);
    if (builtin) note_forward_reads(block);
    if (!block.puts.empty()) blocks_.push_back(std::move(block));
  }

  // Adds a contribution to a forward value's cotangent, summing repeats.
  void accumulate(const ProxyPtr& x, const Value& g, std::vector<BoundSymbol>& out) {
    auto it = cot_.find(x.get());
    if (it == cot_.end()) {
      cot_.emplace(x.get(), g);
      return;
    }
    ctx_.push_scope(&out, nullptr);
    it->second = prims::add(it->second, g);
    ctx_.pop_scope();
  }

  std::vector<BoundSymbol> backward() {
    std::vector<BoundSymbol> out;
    for (auto bi = blocks_.rbegin(); bi != blocks_.rend(); ++bi) {
      BackwardBlock& block = *bi;
      Renames bind;
      bool any = false;
      for (auto& [g, fv] : block.gets) any = any || cot_.count(fv.get());
      if (!any) continue;  // no gradient reaches this statement's outputs
      for (auto& [g, fv] : block.gets) {
        auto it = cot_.find(fv.get());
        if (it != cot_.end()) {
          bind[g.get()] = it->second;
          continue;
        }
        ctx_.push_scope(&out, nullptr);  // an output without gradient contributes zeros
        bind[g.get()] = prims::full(fv->shape, 0.0, fv->device, fv->dtype);
        ctx_.pop_scope();
      }
      for (BoundSymbol& s : block.stmts) {
        rename_args(s, bind);
        out.push_back(std::move(s));
      }
      for (auto& [x, g] : block.puts) accumulate(x, renamed(g, bind), out);
    }
    return out;
  }

  // A built-in rule's backward reads count as explicitly saved (strict mode).
  void note_forward_reads(const BackwardBlock& block) {
    std::unordered_set<const Proxy*> local;
    for (const auto& [g, fv] : block.gets) local.insert(g.get());
    auto note = [&](const ProxyPtr& p) {
      if (!local.count(p.get()) && rule_saved_set_.insert(p.get()).second) rule_saved_.push_back(p);
    };
    for (const BoundSymbol& st : block.stmts) {
      for (const ProxyPtr& p : st.flat_args()) note(p);
      for (const ProxyPtr& p : st.flat_outputs()) local.insert(p.get());
    }
    for (const auto& [x, g] : block.puts)
      if (g.is_proxy()) note(g.proxy());
  }

  std::vector<ProxyPtr>& rule_saved() { return rule_saved_; }
  std::vector<BoundSymbol>& forward_stmts() { return fwd_; }
  const Renames& renames() const { return renames_; }
  std::unordered_map<const Proxy*, Value>& cotangents() { return cot_; }

 private:
  TraceCtx& ctx_;
  std::vector<BoundSymbol> fwd_;
  std::vector<BackwardBlock> blocks_;
  Renames renames_;
  std::unordered_map<const Proxy*, Value> cot_;
  std::vector<ProxyPtr> rule_saved_;
  std::unordered_set<const Proxy*> rule_saved_set_;
};

}  // namespace

JointTrace autodiff(const Trace& computation) {
  ensure_builtin_rules();
  JointTrace j;
  j.trace = computation.empty_like();
  Trace& joint = j.trace;
  TracingScope scope(joint);
  scope.ctx().grad_enabled = true;
  JointBuilder builder(scope.ctx());
  for (const BoundSymbol& b : computation.bsyms) builder.forward(b);

  // Forward outputs (renamed to the rule-produced values) and their cotangents.
  Value fwd_out = renamed(computation.output, builder.renames());
  std::vector<ProxyPtr> outs;
  fwd_out.collect_proxies(outs);
  j.num_outputs = outs.size();
  // A value returned twice gets a cotangent per occurrence, summed first.
  std::vector<BoundSymbol> bwd;
  for (const ProxyPtr& o : outs) {
    if (!o->is_tensor() || !o->requires_grad) {
      j.cotangents.push_back(nullptr);
      continue;
    }
    std::string name = "g_" + o->name;
    if (joint.name_taken(name)) name = joint.new_name(name + "_");
    ProxyPtr c = scope.ctx().add_tensor_input(name, o->shape, o->dtype, o->device, false);
    j.cotangents.push_back(c);
    builder.accumulate(o, Value(c), bwd);
  }
  for (BoundSymbol& b : builder.backward()) bwd.push_back(std::move(b));
  for (BoundSymbol& b : bwd) b.tags |= static_cast<uint32_t>(StmtTag::BACKWARD);

  joint.bsyms = std::move(builder.forward_stmts());
  for (BoundSymbol& b : bwd) joint.bsyms.push_back(std::move(b));

  std::vector<Value> results;
  for (const ProxyPtr& o : outs) results.emplace_back(o);
  for (const ProxyPtr& in : computation.inputs) {
    if (!in->is_tensor() || !in->requires_grad) continue;
    j.grad_inputs.push_back(in);
    auto it = builder.cotangents().find(in.get());
    results.push_back(it == builder.cotangents().end() ? Value() : it->second);
  }
  joint.output = Value(std::move(results));
  j.rule_saved = std::move(builder.rule_saved());
  j.trace = dce(joint);
  return j;
}

JointTrace joint_trace_from(const Trace& joint) {
  JointTrace j;
  j.trace = joint;
  for (const ProxyPtr& in : joint.inputs)
    if (in->is_tensor() && in->requires_grad) j.grad_inputs.push_back(in);
  THUNDER_CHECK(joint.output.is_list() && joint.output.as_list().size() >= j.grad_inputs.size(),
                "joint_trace_from: trace {} returns {}, not a list of outputs followed by the {} "
                "gradients of its inputs that require grad",
                joint.fn_name, joint.output.str(), j.grad_inputs.size());
  const auto& results = joint.output.as_list();
  j.num_outputs = results.size() - j.grad_inputs.size();
  size_t n_cot = 0;
  for (size_t i = 0; i < j.num_outputs; ++i)
    if (results[i].is_tensor() && results[i].proxy()->requires_grad) ++n_cot;
  THUNDER_CHECK(n_cot <= joint.inputs.size() - j.grad_inputs.size(),
                "joint_trace_from: trace {} has {} differentiable outputs but too few inputs for "
                "their cotangents",
                joint.fn_name, n_cot);
  size_t next = joint.inputs.size() - n_cot;
  for (size_t i = 0; i < j.num_outputs; ++i) {
    bool differentiable = results[i].is_tensor() && results[i].proxy()->requires_grad;
    if (!differentiable) {
      j.cotangents.push_back(nullptr);
      continue;
    }
    const ProxyPtr& c = joint.inputs[next++];
    const Proxy& o = *results[i].proxy();
    THUNDER_CHECK(c->is_tensor() && !c->requires_grad && c->shape == o.shape && c->dtype == o.dtype,
                  "joint_trace_from: input {} (\"{}\") cannot be the cotangent of output {} "
                  "(\"{}\")",
                  c->name, c->type_str(), o.name, o.type_str());
    j.cotangents.push_back(c);
  }
  return j;
}

ForwardBackward split_forward_backward(const JointTrace& j) {
  const Trace& joint = j.trace;
  ForwardBackward fb;
  std::unordered_set<const Proxy*> produced_by_bwd, cotangent;
  for (const ProxyPtr& c : j.cotangents)
    if (c) cotangent.insert(c.get());
  std::unordered_set<const Proxy*> seen;
  for (const BoundSymbol& b : joint.bsyms) {
    if (!b.has_tag(StmtTag::BACKWARD)) continue;
    for (const ProxyPtr& p : b.flat_args())
      if (!produced_by_bwd.count(p.get()) && !cotangent.count(p.get()) &&
          seen.insert(p.get()).second)
        fb.saved.push_back(p);
    for (const ProxyPtr& p : b.flat_outputs()) produced_by_bwd.insert(p.get());
  }
  const auto& results = joint.output.as_list();
  // Gradients that are forward values (e.g. the cotangent passed straight through,
  // or a value computed without any backward statement) are saved or cotangents.
  for (size_t i = j.num_outputs; i < results.size(); ++i) {
    if (!results[i].is_proxy()) continue;
    const Proxy* p = results[i].proxy().get();
    if (!produced_by_bwd.count(p) && !cotangent.count(p) && seen.insert(p).second)
      fb.saved.push_back(results[i].proxy());
  }

  fb.forward = joint.empty_like();
  size_t n_cot = std::count_if(j.cotangents.begin(), j.cotangents.end(),
                               [](const ProxyPtr& c) { return c != nullptr; });
  fb.forward.inputs.resize(joint.inputs.size() - n_cot);  // cotangents are the last inputs
  std::vector<Value> fwd_results(results.begin(), results.begin() + j.num_outputs);
  for (const ProxyPtr& s : fb.saved) fwd_results.emplace_back(s);
  fb.forward.output = Value(std::move(fwd_results));

  fb.backward = joint.empty_like();
  fb.backward.fn_name = "backward";
  fb.backward.inputs = fb.saved;
  for (const ProxyPtr& c : j.cotangents)
    if (c) fb.backward.inputs.push_back(c);
  fb.backward.output = Value(std::vector<Value>(results.begin() + j.num_outputs, results.end()));

  for (const BoundSymbol& b : joint.bsyms)
    (b.has_tag(StmtTag::BACKWARD) ? fb.backward : fb.forward).bsyms.push_back(b);
  fb.forward = dce(fb.forward);
  fb.backward = dce(fb.backward);
  return fb;
}

void check_saved_explicitly(const JointTrace& joint, const std::vector<ProxyPtr>& saved) {
  std::unordered_set<const Proxy*> allowed;
  for (const ProxyPtr& p : joint.rule_saved) allowed.insert(p.get());
  for (const ProxyPtr& p : saved) {
    if (p->has_tag(ProxyTag::SAVED_FOR_BACKWARD) || allowed.count(p.get())) continue;
    // Name the backward statement that reads it (and the rule it came from).
    std::string reader = "the returned gradients";
    for (const BoundSymbol& b : joint.trace.bsyms) {
      if (!b.has_tag(StmtTag::BACKWARD)) continue;
      for (const ProxyPtr& a : b.flat_args()) {
        if (a != p) continue;
        reader = b.sym->id;
        if (!b.origins.empty()) reader += " (from the grad rule of " + b.origins.back()->id + ")";
        break;
      }
      if (reader != "the returned gradients") break;
    }
    fail(
        "strict_saved_for_backward: the backward reads {} (\"{}\") from the forward in {}, but "
        "no grad rule saved it explicitly; call thunder::save_for_backward on it in that rule",
        p->name, p->type_str(), reader);
  }
}

}  // namespace thunder
