// thunder::jit's engine: guard lookup on every call; on a miss, trace the
// callable, hand the trace to the pipeline (pipeline.h), lower the final
// traces to programs and cache them behind the entry's guards.
#include "thunder/frontend/jit.h"

#include <ATen/core/grad_mode.h>

#include <iostream>

#include "dispatch.h"
#include "prologue.h"
#include "thunder/core/registry_change.h"
#include "thunder/core/stopwatch.h"
#include "thunder/frontend/pipeline.h"
#include "thunder/frontend/report.h"
#include "thunder/runtime/autograd_bridge.h"
#include "thunder/runtime/buffer_pool.h"
#include "thunder/runtime/guard.h"
#include "thunder/runtime/program.h"

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
      last = e;
      write_report_if_requested(*this);  // THUNDER_REPORT_DIR
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

  TracedCall trace_call(TraceFn fn, void* ctx);
  CacheEntry* compile(TraceFn fn, void* ctx);
  std::string input_name(size_t top, int64_t item) const {
    std::string base =
        top < options.arg_names.size() ? options.arg_names[top] : "x" + std::to_string(top);
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

// Traces the callable with proxies for tensor and Scalar arguments, literals
// for constants and named inputs for module parameters; captured tensors join
// as they are met.
TracedCall JitState::trace_call(TraceFn fn, void* ctx) {
  TracedCall c;
  TracingScope scope(c.trace);
  CaptureTable captures;
  CaptureScope capture_scope(captures);
  size_t top = 0;
  int64_t list_left = -1, item = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FlatArg& a = inputs[i];
    const bool in_list = list_left > 0;
    std::string name = input_name(top, in_list ? item : -1);
    Value v;
    switch (a.kind) {
      case FlatArg::Kind::Tensor:
        if (!a.tensor.defined()) break;
        v = scope.ctx().add_tensor_input(name, a.tensor.sizes().vec(),
                                         from_aten(a.tensor.scalar_type()),
                                         from_aten(a.tensor.device()), a.tensor.requires_grad());
        c.sources.push_back({Program::Input::Source::ArgTensor, static_cast<int32_t>(i)});
        break;
      case FlatArg::Kind::Scalar:
        v = scope.ctx().add_number_input(name, a.i == 1   ? DType::f64
                                               : a.i == 2 ? DType::b8
                                                          : DType::i64);
        c.sources.push_back({Program::Input::Source::ArgNumber, static_cast<int32_t>(i)});
        break;
      case FlatArg::Kind::Int:
      case FlatArg::Kind::ListLen:
        v = a.i;
        break;
      case FlatArg::Kind::Bool:
        v = a.i != 0;
        break;
      case FlatArg::Kind::Double:
        v = a.d;
        break;
    }
    c.arg_names.push_back(std::move(name));
    c.arg_values.push_back(v);
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
  }
  if (module) {
    for (const auto& [path, t] : module->named_parameters()) {
      std::string name = "t_" + path;
      std::replace(name.begin(), name.end(), '.', '_');
      captures.add(t, name);
    }
  }
  c.trace.output = fn(ctx, c.arg_values);
  c.captured = captures.tensors();
  for (size_t k = 0; k < c.captured.size(); ++k)
    c.sources.push_back({Program::Input::Source::Captured, static_cast<int32_t>(k)});
  return c;
}

CacheEntry* JitState::compile(TraceFn fn, void* ctx) {
  const Stopwatch compile_time;
  const bool grad_mode = at::GradMode::is_enabled();
  TracedCall traced = trace_call(fn, ctx);
  const double tracing_ms = compile_time.ms();

  auto entry = std::make_unique<CacheEntry>();
  entry->sig = sig;
  entry->captured = traced.captured;
  for (const at::Tensor& t : entry->captured) entry->captured_sig.add_tensor(t);
  std::vector<std::vector<ProxyPtr>> aliases = alias_groups(traced, inputs);
  std::vector<int64_t> training;
  for (const nn::Module* m : modules) training.push_back(m->is_training());
  entry->prologue =
      build_prologue(traced, inputs, aliases, grad_mode, module ? &training : nullptr);

  PipelineOptions po{.executors = executors,
                     .fusion_strategy = options.fusion_type == "consecutive"
                                            ? FusionStrategy::Consecutive
                                            : FusionStrategy::Dataflow,
                     .rematerialize = options.rematerialize,
                     .disable_replace_uniform = options.disable_replace_uniform,
                     .skip_inplace_functionalization = options.skip_inplace_functionalization,
                     .strict_saved_for_backward = options.strict_saved_for_backward,
                     .grad_enabled = grad_mode,
                     .alias_groups = std::move(aliases),
                     .tracing_ms = tracing_ms};
  const std::vector<ProxyPtr> inputs_of_trace = traced.trace.inputs;
  CompiledTraces ct = run_pipeline(std::move(traced.trace), po);

  // Lowering: where each trace input comes from at call time.
  auto source_of = [&](const ProxyPtr& p) {
    auto it = std::find(inputs_of_trace.begin(), inputs_of_trace.end(), p);
    return traced.sources[it - inputs_of_trace.begin()];
  };
  for (const ProxyPtr& p : ct.written_inputs) entry->written_inputs.push_back(source_of(p));
  if (ct.has_backward()) {
    auto bwd = std::make_shared<CompiledBackward>();
    bwd->pool = pool;
    for (size_t i = 0; i < ct.cotangents.size(); ++i)
      if (ct.cotangents[i]) bwd->differentiable_outputs.push_back(static_cast<int32_t>(i));
    entry->num_outputs = ct.num_outputs;
    for (const ProxyPtr& p : ct.grad_inputs) entry->grad_input_sources.push_back(source_of(p));
    for (const ProxyPtr& p : ct.saved)
      entry->saved_info.push_back({p->name, p->shape, to_aten(p->dtype), bytes_of({p})});
    // The backward reads its inputs (saved values, then cotangents) from the node.
    const Trace& b = ct.backward.back();
    std::vector<Program::Input> bwd_sources;
    for (size_t i = 0; i < b.inputs.size(); ++i)
      bwd_sources.push_back({Program::Input::Source::Captured, static_cast<int32_t>(i)});
    bwd->program = Program::lower(b, bwd_sources, executors);
    entry->backward = std::move(bwd);
  }
  entry->program = Program::lower(ct.forward.back(), traced.sources, executors);
  entry->traces = std::move(ct.forward);
  entry->backward_traces = std::move(ct.backward);

  stats.pass_ms = std::move(ct.pass_ms);
  stats.fusion_regions = ct.fusion_regions;
  stats.compiles++;
  stats.last_compile_ms = compile_time.ms();
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
