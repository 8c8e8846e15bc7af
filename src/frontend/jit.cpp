// thunder::jit's engine: guard lookup on every call; on a miss, trace, run
// the pipeline (one flat function, each step recorded), lower and cache.
#include "thunder/frontend/jit.h"

#include <ATen/core/grad_mode.h>

#include <chrono>
#include <iostream>

#include "dispatch.h"
#include "thunder/core/registry_change.h"
#include "thunder/executors/claim.h"
#include "thunder/executors/cpu_fuser.h"
#include "thunder/runtime/autograd_bridge.h"
#include "thunder/runtime/buffer_pool.h"
#include "thunder/runtime/guard.h"
#include "thunder/runtime/program.h"
#include "thunder/transforms/autodiff.h"
#include "thunder/transforms/cse.h"
#include "thunder/transforms/dce.h"
#include "thunder/transforms/del_last_used.h"
#include "thunder/transforms/rematerialize.h"
#include "thunder/transforms/replace_uniform.h"
#include "thunder/transforms/functionalize.h"

namespace thunder {

void validate(const JitOptions& o) {
  THUNDER_CHECK(!o.executors.empty(), "JitOptions: executors must not be empty");
  for (const auto& e : o.executors) executor_by_name(e);
  THUNDER_CHECK(o.fusion_type == "dataflow" || o.fusion_type == "consecutive",
                "JitOptions: unknown fusion_type '{}' (expected 'dataflow' or 'consecutive')",
                o.fusion_type);
  THUNDER_CHECK(o.cache == "shapes" || o.cache == "none",
                "JitOptions: unknown cache '{}' (expected 'shapes' or 'none')", o.cache);
}

namespace detail {

namespace {

bool draws_uniform(const std::vector<BoundSymbol>& bsyms) {
  for (const BoundSymbol& b : bsyms)
    if (b.sym->id == "prims.uniform" || draws_uniform(b.subsymbols)) return true;
  return false;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int64_t saved_bytes(const std::vector<ProxyPtr>& saved) {
  int64_t n = 0;
  for (const ProxyPtr& p : saved) n += p->numel() * item_size(p->dtype);
  return n;
}

// Symbols that only appear in prologue traces (printed, never executed).
const Symbol& prologue_symbol(const char* id) {
  const Symbol* s = symbol_registry().find(id);
  if (s) return *s;
  Symbol p;
  p.id = id;
  p.is_prim = true;
  return symbol_registry().add(std::move(p));
}

struct CacheEntry {
  GuardSignature sig;
  std::vector<at::Tensor> captured;
  GuardSignature captured_sig;
  Program program;
  std::vector<Trace> traces;
  Trace prologue;
  // With a compiled backward: the forward program returns outputs then saved values.
  std::shared_ptr<CompiledBackward> backward;
  std::vector<Trace> backward_traces;
  size_t num_outputs = 0;
  std::vector<Program::Input> grad_input_sources;
  std::vector<TensorInfo> saved_info;
  // Inputs the program writes: their new values are its last flat outputs.
  std::vector<Program::Input> written_inputs;
};

}  // namespace

class JitState {
 public:
  JitState(JitOptions o, nn::Module* m) : options(std::move(o)), module(m) {
    validate(options);
    for (const auto& e : options.executors) executors.push_back(&executor_by_name(e));
    if (module) modules = module->modules();
    retrace_every_call = options.cache == "none";  // decided once: no string work per call
    install_cpu_allocator();
  }

  void call(TraceFn fn, void* ctx, std::vector<at::Tensor>& outs) {
    sig.clear();
    sig.add(at::GradMode::is_enabled());
    for (const FlatArg& a : inputs) sig.add_arg(a);
    if (module)
      for (const nn::Module* m : modules) sig.add(m->is_training());
    sig.add_aliasing(inputs);
    // Registry version: entries compiled before a grad rule or tag change are dropped.
    if (const uint64_t v = registry_version(); v != compiled_registry_version) {
      entries.clear();
      last = nullptr;
      compiled_registry_version = v;
    }
    CacheEntry* e = retrace_every_call ? nullptr : lookup();
    if (e) {
      ++hits;
    } else {
      ++misses;
      e = compile(fn, ctx);
    }
    last = e;
    PoolScope buffers(pool->get());
    if (!e->backward) {
      e->program.run(inputs.data(), e->captured, outs);
      write_back(*e, outs);
      return;
    }
    run_with_backward(*e, outs);
  }

  const at::Tensor& input_tensor(const CacheEntry& e, const Program::Input& src) const {
    return src.source == Program::Input::Source::Captured ? e.captured[src.index]
                                                          : inputs[src.index].tensor;
  }

  // Copies the new values of written inputs (the last outputs) into the
  // caller's tensors, once, after the program, and drops them from `outs`.
  void write_back(const CacheEntry& e, std::vector<at::Tensor>& outs) {
    const size_t n = e.written_inputs.size();
    if (n == 0) return;
    const size_t first = outs.size() - n;
    // A new value may still share storage with a written input (x.copy_(y);
    // y.add_(1) leaves x's new value in y's old storage): read it first.
    for (size_t k = 0; k < n; ++k)
      for (const Program::Input& dst : e.written_inputs)
        if (outs[first + k].is_alias_of(input_tensor(e, dst))) {
          outs[first + k] = outs[first + k].clone();
          break;
        }
    at::NoGradGuard values_only;  // the caller's tensors get the values, not a graph
    for (size_t k = 0; k < n; ++k)
      const_cast<at::Tensor&>(input_tensor(e, e.written_inputs[k])).copy_(outs[first + k]);
    outs.resize(first);
  }

  // The forward runs without recording; its outputs are then wired to the
  // compiled backward through one autograd node.
  void run_with_backward(CacheEntry& e, std::vector<at::Tensor>& outs) {
    {
      at::NoGradGuard no_grad;
      e.program.run(inputs.data(), e.captured, outs);
    }
    std::vector<at::Tensor> saved(std::make_move_iterator(outs.begin() + e.num_outputs),
                                  std::make_move_iterator(outs.end()));
    outs.resize(e.num_outputs);
    std::vector<at::Tensor> grad_inputs;
    grad_inputs.reserve(e.grad_input_sources.size());
    for (const Program::Input& src : e.grad_input_sources)
      grad_inputs.push_back(input_tensor(e, src));
    connect_autograd(e.backward, outs, std::move(saved), grad_inputs);
    write_back(e, outs);
  }

  CacheEntry* lookup() {
    for (auto& e : entries) {
      if (!(e->sig == sig)) continue;
      captured_sig.clear();
      for (const at::Tensor& t : e->captured) captured_sig.add_tensor(t);
      if (captured_sig == e->captured_sig) return e.get();
    }
    return nullptr;
  }

  CacheEntry* compile(TraceFn fn, void* ctx);
  std::string input_name(size_t top, int64_t item) const {
    std::string base = top < options.arg_names.size() ? options.arg_names[top]
                                                       : "x" + std::to_string(top);
    return item < 0 ? base : base + "_" + std::to_string(item);
  }

  JitOptions options;
  nn::Module* module;
  std::vector<const nn::Module*> modules;
  std::vector<Executor*> executors;
  std::vector<FlatArg> inputs;
  GuardSignature sig, captured_sig;
  std::vector<std::unique_ptr<CacheEntry>> entries;
  CacheEntry* last = nullptr;
  int64_t hits = 0, misses = 0;
  uint64_t compiled_registry_version = registry_version();  // what `entries` were compiled under
  bool warned = false;
  bool retrace_every_call = false;
  CompileStats stats;
  std::shared_ptr<PoolRef> pool = std::make_shared<PoolRef>();  // the memory plan's buffers
};

CacheEntry* JitState::compile(TraceFn fn, void* ctx) {
  auto t_compile = Clock::now();
  auto entry = std::make_unique<CacheEntry>();
  entry->sig = sig;
  std::vector<Program::Input> sources;

  // 1. Trace: proxies for tensor and Scalar arguments, literals for constants,
  //    named inputs for module parameters; captured tensors join as met.
  auto t0 = Clock::now();
  Trace trace;
  Trace prologue;
  prologue.fn_name = "prologue";
  {
    TracingScope scope(trace);
    CaptureTable captures;
    CaptureScope capture_scope(captures);
    std::vector<Value> vals;
    size_t top = 0;
    int64_t list_left = -1, item = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const FlatArg& a = inputs[i];
      bool in_list = list_left > 0;
      std::string name = input_name(top, in_list ? item : -1);
      switch (a.kind) {
        case FlatArg::Kind::Tensor:
          if (!a.tensor.defined()) {
            vals.emplace_back();
            break;
          }
          vals.emplace_back(scope.ctx().add_tensor_input(
              name, a.tensor.sizes().vec(), from_aten(a.tensor.scalar_type()),
              from_aten(a.tensor.device()), a.tensor.requires_grad()));
          sources.push_back({Program::Input::Source::ArgTensor, static_cast<int32_t>(i)});
          break;
        case FlatArg::Kind::Scalar:
          vals.emplace_back(scope.ctx().add_number_input(
              name, a.i == 1 ? DType::f64 : a.i == 2 ? DType::b8 : DType::i64));
          sources.push_back({Program::Input::Source::ArgNumber, static_cast<int32_t>(i)});
          break;
        case FlatArg::Kind::Int: vals.emplace_back(a.i); break;
        case FlatArg::Kind::ListLen: vals.emplace_back(a.i); break;
        case FlatArg::Kind::Bool: vals.emplace_back(a.i != 0); break;
        case FlatArg::Kind::Double: vals.emplace_back(a.d); break;
      }
      if (a.kind == FlatArg::Kind::ListLen) {
        list_left = a.i;
        item = 0;
        if (list_left == 0) ++top, list_left = -1;
      } else if (in_list) {
        ++item;
        if (--list_left == 0) ++top, list_left = -1;
      } else {
        ++top;
      }
      // The prologue states what this entry assumes of each argument.
      BoundSymbol check;
      if (a.kind == FlatArg::Kind::Tensor && a.tensor.defined()) {
        check.sym = &prologue_symbol("prologue.check_tensor_metadata");
        check.args = {vals.back(), Value(a.tensor.sizes().vec()),
                      Value(from_aten(a.tensor.device())), Value(from_aten(a.tensor.scalar_type())),
                      Value(a.tensor.requires_grad()),
                      Value(a.tensor.is_contiguous() ? "contiguous" : "strided")};
      } else if (a.kind == FlatArg::Kind::Scalar) {
        check.sym = &prologue_symbol("prologue.check_number_type");
        check.args = {vals.back(), Value(vals.back().proxy()->type_str())};
      } else if (a.kind != FlatArg::Kind::Tensor) {
        check.sym = &prologue_symbol("prologue.check_literal");
        check.args = {Value(name), vals.back()};
      } else {
        check.sym = &prologue_symbol("prologue.check_none");
        check.args = {Value(name)};
      }
      prologue.bsyms.push_back(std::move(check));
    }
    if (module) {
      for (const auto& [path, t] : module->named_parameters()) {
        std::string name = "t_" + path;
        std::replace(name.begin(), name.end(), '.', '_');
        captures.add(t, name);
      }
    }
    trace.output = fn(ctx, vals);
    entry->captured = captures.tensors();
  }
  for (size_t k = 0; k < entry->captured.size(); ++k) {
    sources.push_back({Program::Input::Source::Captured, static_cast<int32_t>(k)});
    entry->captured_sig.add_tensor(entry->captured[k]);
    const at::Tensor& t = entry->captured[k];
    BoundSymbol check;
    check.sym = &prologue_symbol("prologue.check_tensor_metadata");
    check.args = {Value(trace.inputs[trace.inputs.size() - entry->captured.size() + k]),
                  Value(t.sizes().vec()), Value(from_aten(t.device())),
                  Value(from_aten(t.scalar_type())), Value(t.requires_grad()),
                  Value(t.is_contiguous() ? "contiguous" : "strided")};
    prologue.bsyms.push_back(std::move(check));
  }
  // Tensor arguments that share storage in this call (the signature's aliasing words).
  std::vector<std::vector<ProxyPtr>> alias_groups;
  {
    std::vector<int> group_of(sources.size(), -1);
    auto arg = [&](size_t k) -> const at::Tensor* {
      if (sources[k].source != Program::Input::Source::ArgTensor) return nullptr;
      const at::Tensor& t = inputs[sources[k].index].tensor;
      return t.has_storage() ? &t : nullptr;
    };
    for (size_t k = 0; k < sources.size(); ++k) {
      for (size_t j = 0; j < k && arg(k); ++j) {
        if (!arg(j) || !arg(k)->is_alias_of(*arg(j))) continue;
        if (group_of[j] < 0) {
          group_of[j] = static_cast<int>(alias_groups.size());
          alias_groups.push_back({trace.inputs[j]});
        }
        group_of[k] = group_of[j];
        alias_groups[group_of[k]].push_back(trace.inputs[k]);
        break;
      }
    }
    for (const auto& group : alias_groups) {
      BoundSymbol check;
      check.sym = &prologue_symbol("prologue.check_aliases");
      for (const ProxyPtr& p : group) check.args.emplace_back(p);
      prologue.bsyms.push_back(std::move(check));
    }
  }
  {
    BoundSymbol g;
    g.sym = &prologue_symbol("prologue.check_grad_mode");
    g.args = {Value(at::GradMode::is_enabled())};
    prologue.bsyms.push_back(std::move(g));
    if (module) {
      std::vector<int64_t> flags;
      for (const nn::Module* m : modules) flags.push_back(m->is_training());
      BoundSymbol tm;
      tm.sym = &prologue_symbol("prologue.check_module_training");
      tm.args = {Value(flags)};
      prologue.bsyms.push_back(std::move(tm));
    }
  }
  prologue.inputs = trace.inputs;
  prologue.provenance = "Guards of this cache entry (compiled to a signature compare)";
  entry->prologue = std::move(prologue);

  stats.pass_ms.clear();
  auto record = [&](Trace t, const char* pass, Clock::time_point start) {
    double ms = ms_since(start);
    t.provenance = fmt::format("Constructed by {} (took {} ms)", pass, static_cast<int64_t>(ms));
    stats.pass_ms.emplace_back(pass, ms);
    entry->traces.push_back(std::move(t));
    return entry->traces.back();
  };

  // 2. The pipeline (ARCHITECTURE.md); each step's trace is kept.
  const bool fuses = std::any_of(executors.begin(), executors.end(),
                                 [](const Executor* e) { return e->name() == "cpu_fuser"; });
  int64_t regions = 0;
  auto count_regions = [](const Trace& tr) {
    return std::count_if(tr.bsyms.begin(), tr.bsyms.end(), [](const BoundSymbol& b) {
      return b.sym->index < 0 && b.sym->id.rfind("cppFusion", 0) == 0;
    });
  };
  Trace t = record(std::move(trace), "Tracing", t0);
  std::vector<ProxyPtr> written, written_values;
  if (has_inplace(t) && !options.skip_inplace_functionalization) {
    t0 = Clock::now();
    Functionalized f = functionalize(t, alias_groups);
    for (const ProxyPtr& p : f.written_inputs)
      entry->written_inputs.push_back(
          sources[std::find(t.inputs.begin(), t.inputs.end(), p) - t.inputs.begin()]);
    written = f.written_inputs;
    written_values = f.new_values;
    t = record(std::move(f.trace), "Functionalization", t0);
  }
  t0 = Clock::now();
  t = record(dce(t), "Dead Code Elimination", t0);
  bool differentiate = at::GradMode::is_enabled() &&
                       std::any_of(t.inputs.begin(), t.inputs.end(), [](const ProxyPtr& p) {
                         return p->is_tensor() && p->requires_grad;
                       });
  // Random draws become stateless uniform_philox: on the joint trace when
  // differentiating, so a backward can replay a forward draw from its seed and offset.
  // (A stage only when the trace draws at all, so other programs keep their stages.)
  bool stateless_rng = !options.disable_replace_uniform && draws_uniform(t.bsyms);
  auto replace_uniform_stage = [&](const Trace& in) {
    t0 = Clock::now();
    return record(replace_uniform(in), "Replace uniform (stateless uniform_philox)", t0);
  };
  if (differentiate) {
    // Writes into inputs carry values, never autograd history.
    for (size_t k = 0; k < written_values.size(); ++k)
      THUNDER_CHECK(!written_values[k]->requires_grad,
                    "thunder::jit: input {} is written in place with {}, which requires grad; "
                    "under thunder::jit only values without autograd history can be written into "
                    "inputs (do the update under thunder::NoGradGuard)",
                    written[k]->name, written_values[k]->name);
    // 3. Autodiff: one joint trace, split into forward and backward (saving
    //    what the backward reads), then rematerialized (saving a minimum cut).
    t0 = Clock::now();
    JointTrace joint = autodiff(t);
    record(joint.trace, "Autodiff (joint forward and backward)", t0);
    // In-place ops that autodiff brought in (a custom function's forward or
    // backward) are functionalized on the joint trace, tags kept.
    if (has_inplace(joint.trace) && !options.skip_inplace_functionalization) {
      t0 = Clock::now();
      Functionalized f = functionalize(joint.trace);
      if (!f.written_inputs.empty())
        fail("thunder::jit: a grad rule or custom backward writes in place into input {}, which "
             "is not supported", f.written_inputs[0]->name);
      joint.trace = record(std::move(f.trace), "Functionalization (joint forward and backward)", t0);
    }
    if (stateless_rng) joint.trace = replace_uniform_stage(joint.trace);
    t0 = Clock::now();
    ForwardBackward fb = split_forward_backward(joint);
    if (options.strict_saved_for_backward) check_saved_explicitly(joint, fb.saved);
    t = record(fb.forward, "Split forward and backward", t0);
    Trace b = fb.backward;
    b.provenance = fmt::format("Constructed by Split forward and backward (saved for backward: {} "
                               "bytes)", saved_bytes(fb.saved));
    entry->backward_traces.push_back(b);
    // Strict mode saves exactly what the rules saved explicitly: no min-cut.
    if (options.rematerialize && !options.strict_saved_for_backward) {
      t0 = Clock::now();
      fb = rematerialize(fb);
      t = record(fb.forward, "Rematerialization", t0);
      b = fb.backward;
      b.provenance = fmt::format("Constructed by Rematerialization (saved for backward: {} bytes)",
                                 saved_bytes(fb.saved));
      entry->backward_traces.push_back(b);
      // The recomputed forward values are often computed by grad rules too
      // (sin's rule takes cos(x), cos's takes sin(x)). A stage only when CSE
      // merged something, so other programs keep their stages.
      t0 = Clock::now();
      Trace merged = cse(b);
      if (merged.bsyms.size() != b.bsyms.size()) {
        b = std::move(merged);
        b.provenance = fmt::format("Constructed by Common Subexpression Elimination (took {} ms)",
                                   static_cast<int64_t>(ms_since(t0)));
        entry->backward_traces.push_back(b);
      }
    }
    auto bwd = std::make_shared<CompiledBackward>();
    bwd->pool = pool;
    for (size_t i = 0; i < joint.cotangents.size(); ++i)
      if (joint.cotangents[i]) bwd->differentiable_outputs.push_back(static_cast<int32_t>(i));
    entry->num_outputs = joint.num_outputs;
    for (const ProxyPtr& p : joint.grad_inputs) {
      size_t k = std::find(t.inputs.begin(), t.inputs.end(), p) - t.inputs.begin();
      entry->grad_input_sources.push_back(sources[k]);
    }
    for (const ProxyPtr& p : fb.saved)
      entry->saved_info.push_back({p->name, p->shape, to_aten(p->dtype), saved_bytes({p})});
    // The backward trace: claimed and freed like the forward.
    t0 = Clock::now();
    b = claim_executors(b, executors);
    b.provenance = fmt::format("Constructed by Transform for execution (took {} ms)",
                               static_cast<int64_t>(ms_since(t0)));
    entry->backward_traces.push_back(b);
    if (fuses) {
      t0 = Clock::now();
      b = fusion_pass(b, executors, options.fusion_type);
      b.provenance = fmt::format("Constructed by Fusion ({}) (took {} ms)", options.fusion_type,
                                 static_cast<int64_t>(ms_since(t0)));
      entry->backward_traces.push_back(b);
      regions += count_regions(b);
    }
    b = del_last_used(b);
    b.provenance = "Constructed by Delete Last Used";
    b.notes.push_back(fmt::format("saved for backward: {} bytes in {} values",
                                  saved_bytes(fb.saved), fb.saved.size()));
    entry->backward_traces.push_back(b);
    std::vector<Program::Input> bwd_sources;
    for (size_t i = 0; i < b.inputs.size(); ++i)
      bwd_sources.push_back({Program::Input::Source::Captured, static_cast<int32_t>(i)});
    bwd->program = Program::lower(b, bwd_sources, executors);
    entry->backward = std::move(bwd);
  } else if (stateless_rng) {
    t = replace_uniform_stage(t);
  }
  t0 = Clock::now();
  t = record(claim_executors(t, executors), "Transform for execution", t0);
  if (fuses) {
    // 5. Fusion: regions of cpu_fuser's statements become generated kernels.
    t0 = Clock::now();
    // In-place statements kept for debugging pin the order: no reordering.
    bool keeps_inplace = options.skip_inplace_functionalization && has_inplace(t);
    t = record(fusion_pass(t, executors, keeps_inplace ? "consecutive" : options.fusion_type),
               "Fusion", t0);
    regions += count_regions(t);
  }
  stats.fusion_regions = regions;
  t0 = Clock::now();
  t = record(del_last_used(t), "Delete Last Used", t0);

  // 4. Lower to a flat program.
  entry->program = Program::lower(t, sources, executors);

  stats.compiles++;
  stats.last_compile_ms = ms_since(t_compile);
  if (retrace_every_call) entries.clear();
  entries.push_back(std::move(entry));
  stats.cache_entries = static_cast<int64_t>(entries.size());
  if (misses > 8 && !warned) {
    warned = true;
    std::cerr << "thunder::jit: recompiled " << misses
              << " times; a constant argument (a plain C++ number, or a shape) keeps changing. "
                 "Pass numbers as thunder::Scalar to make them runtime inputs.\n";
  }
  return entries.back().get();
}

std::shared_ptr<JitState> make_jit_state(JitOptions options, nn::Module* module) {
  return std::make_shared<JitState>(std::move(options), module);
}

std::vector<FlatArg>& call_inputs(JitState& s) { return s.inputs; }

void jit_call(JitState& s, TraceFn fn, void* ctx, std::vector<at::Tensor>& outs) {
  s.call(fn, ctx, outs);
}

void bad_jit_argument(const char* what) {
  fail("thunder::jit: cannot pass {} as an argument of a jitted function", what);
}

Value result_value(const Tensor& t) {
  if (!t.defined()) return Value();
  return traced_value(t);
}

std::vector<Trace> last_traces(const JitState& s) {
  return s.last ? s.last->traces : std::vector<Trace>{};
}
std::vector<Trace> last_backward_traces(const JitState& s) {
  return s.last ? s.last->backward_traces : std::vector<Trace>{};
}
Trace last_prologue_trace(const JitState& s) {
  THUNDER_CHECK(s.last != nullptr, "last_prologue_trace: the function has not been called yet");
  return s.last->prologue;
}
std::vector<TensorInfo> last_saved_for_backward(const JitState& s) {
  return s.last ? s.last->saved_info : std::vector<TensorInfo>{};
}
int64_t cache_hits(const JitState& s) { return s.hits; }
int64_t cache_misses(const JitState& s) { return s.misses; }
CompileStats compile_stats(const JitState& s) {
  CompileStats c = s.stats;
  c.buffer_reuses = s.pool->get()->reuses();
  c.idle_buffer_bytes = static_cast<int64_t>(s.pool->get()->idle_bytes());
  return c;
}

}  // namespace detail
}  // namespace thunder
