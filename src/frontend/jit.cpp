// thunder::jit's engine: guard lookup on every call; on a miss, trace the
// callable, hand the trace to the pipeline (pipeline.h), lower the final
// traces to programs and cache them behind the entry's guards.
#include "thunder/frontend/jit.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/equal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <iostream>
#include <mutex>

#include "dispatch.h"
#include "entry_guards.h"
#include "prologue.h"
#include "thunder/core/registry_change.h"
#include "thunder/core/stopwatch.h"
#include "thunder/frontend/guarded_state.h"
#include "thunder/frontend/pipeline.h"
#include "thunder/frontend/report.h"
#include "thunder/runtime/autograd_bridge.h"
#include "thunder/runtime/buffer_pool.h"
#include "thunder/runtime/collective_check.h"
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
  THUNDER_CHECK(o.max_cache_entries >= 1,
                "JitOptions: max_cache_entries must be at least 1, got {}", o.max_cache_entries);
}

namespace detail {

namespace {

struct CacheEntry {
  uint64_t id = 0;  // unique within its JitState (what "last" remembers)
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
  std::vector<EqualGuard> equal_guards;  // checked after the signature matches
};

// The cache entries of a JitState as calls see them. A list is never changed
// once published: a compile publishes a new one, and the old one is freed
// when no call still reads it (see CallScratch::reading).
struct EntryList {
  std::vector<std::shared_ptr<CacheEntry>> entries;
};

constexpr size_t kHitShards = 16;

// Every thread's scratch, so a compile can tell which entry lists calls are
// reading. Registered once per scratch (per thread and nesting level).
struct ScratchRegistry {
  std::mutex mu;
  std::vector<const CallScratch*> all;
};
ScratchRegistry& scratch_registry() {
  static auto* r = new ScratchRegistry;  // outlives every thread's scratch
  return *r;
}

}  // namespace

struct CallScratch {
  std::vector<FlatArg> inputs;
  std::vector<at::Tensor> outs;
  GuardSignature sig, captured_sig;
  // The entry list this call is reading (a hazard pointer): the list, and
  // the entries it holds, stay alive until the call clears it.
  std::atomic<const EntryList*> reading{nullptr};
  size_t hit_shard = 0;  // which of a JitState's hit counters this thread bumps
};

namespace {

class ScratchStack {
 public:
  ~ScratchStack() {
    ScratchRegistry& r = scratch_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& s : stack_) std::erase(r.all, s.get());
  }
  CallScratch& enter() {
    if (depth_ == stack_.size()) {
      static std::atomic<size_t> next_shard{0};
      auto s = std::make_unique<CallScratch>();
      s->hit_shard = next_shard.fetch_add(1, std::memory_order_relaxed) % kHitShards;
      ScratchRegistry& r = scratch_registry();
      std::lock_guard<std::mutex> lock(r.mu);
      r.all.push_back(s.get());
      stack_.push_back(std::move(s));
    }
    return *stack_[depth_++];
  }
  void leave(CallScratch& s) {
    s.inputs.clear();
    s.outs.clear();
    --depth_;
  }

 private:
  std::vector<std::unique_ptr<CallScratch>> stack_;
  size_t depth_ = 0;
};

thread_local ScratchStack t_scratch;

// Marks the published entry list as read by this call until the scope ends.
class ReadingList {
 public:
  ReadingList(CallScratch& s, const std::atomic<const EntryList*>& published) : s_(s) {
    const EntryList* l = published.load(std::memory_order_acquire);
    for (;;) {
      s_.reading.store(l, std::memory_order_seq_cst);
      const EntryList* again = published.load(std::memory_order_seq_cst);
      if (again == l) break;
      l = again;
    }
    list_ = l;
  }
  ~ReadingList() { s_.reading.store(nullptr, std::memory_order_release); }
  ReadingList(const ReadingList&) = delete;
  ReadingList& operator=(const ReadingList&) = delete;
  const EntryList* list() const { return list_; }

 private:
  CallScratch& s_;
  const EntryList* list_;
};

struct alignas(64) HitShard {
  std::atomic<int64_t> n{0};
};

}  // namespace

CallFrame::CallFrame() : s_(t_scratch.enter()) {}
CallFrame::~CallFrame() { t_scratch.leave(s_); }
std::vector<FlatArg>& CallFrame::inputs() { return s_.inputs; }
std::vector<at::Tensor>& CallFrame::outs() { return s_.outs; }

// Calls look entries up without locks (ReadingList); a miss takes `mu`,
// looks again (another thread may have compiled the entry meanwhile) and
// compiles once, then publishes a new entry list. Everything else mutable
// (stats, the retired lists, introspection) is under `mu` too.
class JitState {
 public:
  JitState(JitOptions o, nn::Module* m, ForeignModule foreign)
      : options(std::move(o)),
        module(m),
        interfaces(m ? m : foreign.interfaces),
        training_flags(std::move(foreign.training_flags)),
        foreign_tensors(std::move(foreign.named_tensors)),
        foreign_identities(std::move(foreign.add_identities)) {
    validate(options);
    for (const auto& e : options.executors) executors.push_back(&executor_by_name(e));
    // Collectives run on c10d and nothing else can run them: c10d is always
    // there, last (it claims only the distributed prims).
    Executor* c10d = &executor_by_name("c10d");
    if (std::find(executors.begin(), executors.end(), c10d) == executors.end())
      executors.push_back(c10d);
    if (module)
      for (const nn::Module* sub : module->modules())
        training_flags.push_back([sub] { return sub->is_training(); });
    if (const auto* g = dynamic_cast<const GuardedState*>(interfaces))
      state_flags = g->guarded_flags();
    if (const auto* b = dynamic_cast<const GradientBuckets*>(interfaces))
      gradient_bucket_bytes = b->gradient_bucket_bytes();
    if (const auto* c = dynamic_cast<const CollectiveGroups*>(interfaces))
      collective_groups = c->collective_groups();
    retrace_every_call = options.cache == "none";  // decided once: no string work per call
    install_cpu_allocator();
    publish(std::make_unique<EntryList>());
  }

  void call(CallScratch& s, TraceFn fn, void* ctx) {
    GuardSignature& sig = s.sig;
    sig.clear();
    sig.add(at::GradMode::is_enabled());
    for (const FlatArg& a : s.inputs) sig.add_arg(a);
    for (const std::function<bool()>& training : training_flags) sig.add(training());
    for (const auto& [name, flag] : state_flags) sig.add(flag());
    if (foreign_identities) foreign_identities(sig);
    sig.add_aliasing(s.inputs);
    // Entries compiled before a grad rule or tag change are dropped.
    if (registry_version() != compiled_registry_version.load(std::memory_order_acquire))
      drop_stale_entries();
    ReadingList reading(s, published);
    CacheEntry* e = retrace_every_call ? nullptr : find(*reading.list(), s);
    std::shared_ptr<CacheEntry> compiled;  // keeps an entry this call compiled alive
    bool compiled_now = false;             // false: another thread compiled it meanwhile
    if (e) {
      hit_shards[s.hit_shard].n.fetch_add(1, std::memory_order_relaxed);
    } else {
      compiled = compile_or_wait(fn, ctx, s, compiled_now);
      e = compiled.get();
    }
    if (last_id.load(std::memory_order_relaxed) != e->id)
      last_id.store(e->id, std::memory_order_relaxed);
    // THUNDER_REPORT_DIR; outside `mu`, which the report's introspection takes.
    if (compiled_now) write_report_if_requested(*this);
    PoolScope buffers(pool->get());
    if (!e->backward) {
      // No result has autograd history (the trace said so): ATen kernels
      // must not record one from an input that requires grad.
      at::NoGradGuard no_grad;
      e->program.run(s.inputs.data(), e->captured, s.outs);
      write_back(*e, s);
      return;
    }
    run_with_backward(*e, s);
  }

  static const at::Tensor& input_tensor(const CacheEntry& e, const CallScratch& s,
                                        const Program::Input& src) {
    return src.source == Program::Input::Source::Captured ? e.captured[src.index]
                                                          : s.inputs[src.index].tensor;
  }

  // Copies the new values of written inputs (the last outputs) into the
  // caller's tensors, once, after the program, and drops them from `outs`.
  static void write_back(const CacheEntry& e, CallScratch& s) {
    std::vector<at::Tensor>& outs = s.outs;
    const size_t n = e.written_inputs.size();
    if (n == 0) return;
    const size_t first = outs.size() - n;
    // A new value may still share storage with a written input (x.copy_(y);
    // y.add_(1) leaves x's new value in y's old storage): read it first.
    for (size_t k = 0; k < n; ++k)
      for (const Program::Input& dst : e.written_inputs)
        if (outs[first + k].is_alias_of(input_tensor(e, s, dst))) {
          outs[first + k] = outs[first + k].clone();
          break;
        }
    at::NoGradGuard values_only;  // the caller's tensors get the values, not a graph
    for (size_t k = 0; k < n; ++k)
      const_cast<at::Tensor&>(input_tensor(e, s, e.written_inputs[k])).copy_(outs[first + k]);
    outs.resize(first);
  }

  // The forward runs without recording; its outputs are then wired to the
  // compiled backward through one autograd node.
  static void run_with_backward(const CacheEntry& e, CallScratch& s) {
    std::vector<at::Tensor>& outs = s.outs;
    {
      at::NoGradGuard no_grad;
      e.program.run(s.inputs.data(), e.captured, outs);
    }
    std::vector<at::Tensor> saved(std::make_move_iterator(outs.begin() + e.num_outputs),
                                  std::make_move_iterator(outs.end()));
    outs.resize(e.num_outputs);
    // A saved value that is a written input (or a view of one: rematerialized
    // `h + 1` recomputes from `h`) must keep the value the forward read:
    // write_back is about to overwrite the caller's tensor.
    for (const Program::Input& dst : e.written_inputs)
      for (at::Tensor& t : saved)
        if (t.defined() && t.is_alias_of(input_tensor(e, s, dst))) t = t.clone();
    std::vector<at::Tensor> grad_inputs;
    grad_inputs.reserve(e.grad_input_sources.size());
    for (const Program::Input& src : e.grad_input_sources)
      grad_inputs.push_back(input_tensor(e, s, src));
    connect_autograd(e.backward, outs, std::move(saved), grad_inputs);
    write_back(e, s);
  }

  static bool matches(const CacheEntry& e, CallScratch& s) {
    if (!(e.sig == s.sig)) return false;
    s.captured_sig.clear();
    for (const at::Tensor& t : e.captured) s.captured_sig.add_tensor(t);
    if (!(s.captured_sig == e.captured_sig)) return false;
    for (const EqualGuard& g : e.equal_guards)
      if (at::equal(s.inputs[g.a].tensor, s.inputs[g.b].tensor) != g.equal) return false;
    return true;
  }
  static CacheEntry* find(const EntryList& list, CallScratch& s) {
    for (const auto& e : list.entries)
      if (matches(*e, s)) return e.get();
    return nullptr;
  }

  // A miss: wait for `mu`; if another thread compiled the entry meanwhile,
  // that is a hit; else compile and publish.
  std::shared_ptr<CacheEntry> compile_or_wait(TraceFn fn, void* ctx, CallScratch& s,
                                              bool& compiled_now) {
    std::lock_guard<std::mutex> lock(mu);
    if (!retrace_every_call)
      for (const auto& e : current->entries)
        if (matches(*e, s)) {
          hit_shards[s.hit_shard].n.fetch_add(1, std::memory_order_relaxed);
          return e;
        }
    misses.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<CacheEntry> e = compile(fn, ctx, s);
    // Before the entry is cached or run: if the ranks differ, every rank
    // throws here and the next call compiles (and compares) again.
    check_collectives(*e);
    compiled_now = true;
    e->id = next_id++;
    last_compiled = e;
    if (!retrace_every_call) {
      auto list = std::make_unique<EntryList>(*current);
      if (static_cast<int64_t>(list->entries.size()) >= options.max_cache_entries) {
        list->entries.erase(list->entries.begin());  // the oldest
        ++stats.cache_evictions;
      }
      list->entries.push_back(e);
      publish(std::move(list));
    }
    return e;
  }

  // The ranks compare the entry's collectives (runtime/collective_check.h);
  // nothing to do for a program that does not communicate.
  void check_collectives(const CacheEntry& e) const {
    std::vector<const Trace*> traces;
    if (!e.traces.empty()) traces.push_back(&e.traces.back());
    if (!e.backward_traces.empty()) traces.push_back(&e.backward_traces.back());
    std::vector<runtime::CollectiveInfo> seq = runtime::collectives_of(traces);
    if (seq.empty() && collective_groups.empty()) return;
    runtime::check_collectives(seq, collective_groups);
  }

  void drop_stale_entries() {
    std::lock_guard<std::mutex> lock(mu);
    const uint64_t v = registry_version();
    if (v == compiled_registry_version.load(std::memory_order_relaxed)) return;
    publish(std::make_unique<EntryList>());
    compiled_registry_version.store(v, std::memory_order_release);
  }

  // Makes `list` the one calls read (under `mu`, or in the constructor); the
  // old list is freed once no call reads it.
  void publish(std::unique_ptr<EntryList> list) {
    const EntryList* old = current.get();
    published.store(list.get(), std::memory_order_seq_cst);
    if (current) retired.push_back(std::move(current));
    current = std::move(list);
    if (old) free_unread_lists();
  }

  void free_unread_lists() {
    ScratchRegistry& r = scratch_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    std::erase_if(retired, [&](const std::unique_ptr<EntryList>& l) {
      return std::none_of(r.all.begin(), r.all.end(), [&](const CallScratch* s) {
        return s->reading.load(std::memory_order_seq_cst) == l.get();
      });
    });
  }

  // The entry "last" means: the one most recently run by any thread, or the
  // most recently compiled one if that entry has been dropped since.
  std::shared_ptr<const CacheEntry> last_entry() const {
    std::lock_guard<std::mutex> lock(mu);
    const uint64_t id = last_id.load(std::memory_order_relaxed);
    for (const auto& e : current->entries)
      if (e->id == id) return e;
    return last_compiled;
  }

  std::vector<Trace> prologues() const {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<Trace> out;
    for (const auto& e : current->entries) out.push_back(e->prologue);
    return out;
  }

  int64_t hits() const {
    int64_t n = 0;
    for (const HitShard& h : hit_shards) n += h.n.load(std::memory_order_relaxed);
    return n;
  }

  TracedCall trace_call(TraceFn fn, void* ctx, const std::vector<FlatArg>& inputs);
  std::shared_ptr<CacheEntry> compile(TraceFn fn, void* ctx, CallScratch& s);
  std::string input_name(size_t top, int64_t item) const {
    std::string base =
        top < options.arg_names.size() ? options.arg_names[top] : "x" + std::to_string(top);
    return item < 0 ? base : base + "_" + std::to_string(item);
  }

  // Fixed at construction.
  JitOptions options;
  nn::Module* module;
  // Where GuardedState, GradientBuckets and CollectiveGroups are looked up:
  // the thunder module, or a torch::nn wrapper's thunder-side state.
  nn::Module* interfaces;
  // The training flag of each module the callable runs (thunder or torch::nn),
  // outermost first: guarded, so train() and eval() get separate entries.
  std::vector<std::function<bool()>> training_flags;
  // A GuardedState module's flags, guarded the same way.
  std::vector<std::pair<std::string, std::function<bool()>>> state_flags;
  int64_t gradient_bucket_bytes = 0;       // a GradientBuckets module's
  std::vector<int64_t> collective_groups;  // a CollectiveGroups module's
  // A torch::nn or TorchScript module's parameters and buffers by path.
  std::function<std::vector<std::pair<std::string, at::Tensor>>()> foreign_tensors;
  std::function<void(GuardSignature&)> foreign_identities;
  std::vector<Executor*> executors;
  bool retrace_every_call = false;
  std::shared_ptr<PoolRef> pool = std::make_shared<PoolRef>();  // the memory plan's buffers

  // Read by every call without locks.
  std::atomic<const EntryList*> published{nullptr};
  std::atomic<uint64_t> compiled_registry_version{registry_version()};
  std::atomic<uint64_t> last_id{0};
  std::array<HitShard, kHitShards> hit_shards;
  std::atomic<int64_t> misses{0};

  // Under `mu`.
  mutable std::mutex mu;
  std::unique_ptr<EntryList> current;               // what `published` points to
  std::vector<std::unique_ptr<EntryList>> retired;  // replaced, maybe still read
  std::shared_ptr<CacheEntry> last_compiled;
  uint64_t next_id = 1;
  bool warned = false;
  CompileStats stats;
};

// Traces the callable with proxies for tensor and Scalar arguments, literals
// for constants and named inputs for module parameters; captured tensors join
// as they are met.
TracedCall JitState::trace_call(TraceFn fn, void* ctx, const std::vector<FlatArg>& inputs) {
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
  auto add_named = [&](const std::string& path, const at::Tensor& t) {
    std::string name = "t_" + path;
    std::replace(name.begin(), name.end(), '.', '_');
    captures.add(t, name);
  };
  if (module)
    for (const auto& [path, t] : module->named_parameters()) add_named(path, t);
  if (foreign_tensors)
    for (const auto& [path, t] : foreign_tensors())
      if (t.defined()) add_named(path, t);
  c.trace.output = fn(ctx, c.arg_values);
  c.captured = captures.tensors();
  for (size_t k = 0; k < c.captured.size(); ++k)
    c.sources.push_back({Program::Input::Source::Captured, static_cast<int32_t>(k)});
  return c;
}

std::shared_ptr<CacheEntry> JitState::compile(TraceFn fn, void* ctx, CallScratch& s) {
  const Stopwatch compile_time;
  const bool grad_mode = at::GradMode::is_enabled();
  const std::vector<FlatArg>& inputs = s.inputs;
  take_traced_equal_guards();  // none left from a capture that failed
  TracedCall traced = trace_call(fn, ctx, inputs);
  std::vector<EqualGuard> equal_guards = take_traced_equal_guards();
  const double tracing_ms = compile_time.ms();

  auto entry = std::make_shared<CacheEntry>();
  entry->sig = s.sig;
  entry->captured = traced.captured;
  for (const at::Tensor& t : entry->captured) entry->captured_sig.add_tensor(t);
  std::vector<std::vector<ProxyPtr>> aliases = alias_groups(traced, inputs);
  std::vector<int64_t> training;
  for (const std::function<bool()>& flag : training_flags) training.push_back(flag());
  std::vector<std::pair<std::string, bool>> states;
  for (const auto& [name, flag] : state_flags) states.emplace_back(name, flag());
  entry->prologue = build_prologue(traced, inputs, aliases, grad_mode,
                                   training_flags.empty() ? nullptr : &training, states,
                                   static_cast<bool>(foreign_identities), equal_guards);
  entry->equal_guards = std::move(equal_guards);

  PipelineOptions po{.executors = executors,
                     .fusion_strategy = options.fusion_type == "consecutive"
                                            ? FusionStrategy::Consecutive
                                            : FusionStrategy::Dataflow,
                     .rematerialize = options.rematerialize,
                     .disable_replace_uniform = options.disable_replace_uniform,
                     .recognize_attention = options.recognize_attention,
                     .skip_inplace_functionalization = options.skip_inplace_functionalization,
                     .strict_saved_for_backward = options.strict_saved_for_backward,
                     .schedule_collectives = options.schedule_collectives,
                     .grad_enabled = grad_mode,
                     .alias_groups = std::move(aliases),
                     .tracing_ms = tracing_ms,
                     .gradient_bucket_bytes = gradient_bucket_bytes};
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
  const int64_t n_misses = misses.load(std::memory_order_relaxed);
  if (!retrace_every_call && n_misses > 8 && !warned) {
    warned = true;
    std::cerr << "thunder::jit: recompiled " << n_misses
              << " times; a constant argument (a plain C++ number, or a shape) keeps changing. "
                 "Pass numbers as thunder::Scalar to make them runtime inputs.\n";
  }
  return entry;
}

std::shared_ptr<JitState> make_jit_state(JitOptions options, nn::Module* module,
                                         ForeignModule foreign) {
  return std::make_shared<JitState>(std::move(options), module, std::move(foreign));
}

nn::Module* jit_module(const JitState& s) { return s.interfaces; }

void jit_call(JitState& s, CallFrame& frame, TraceFn fn, void* ctx) {
  s.call(frame.scratch(), fn, ctx);
}

void bad_script_result(const std::string& kind) {
  fail("thunder::jit of a TorchScript module: forward returned a {}; one tensor is supported",
       kind);
}

void bad_jit_argument(const char* what) {
  fail("thunder::jit: cannot pass {} as an argument of a jitted function", what);
}

Value result_value(const Tensor& t) {
  if (!t.defined()) return Value();
  return traced_value(t);
}

std::vector<Trace> last_traces(const JitState& s) {
  auto e = s.last_entry();
  return e ? e->traces : std::vector<Trace>{};
}
std::vector<Trace> last_backward_traces(const JitState& s) {
  auto e = s.last_entry();
  return e ? e->backward_traces : std::vector<Trace>{};
}
Trace last_prologue_trace(const JitState& s) {
  auto e = s.last_entry();
  THUNDER_CHECK(e != nullptr, "last_prologue_trace: the function has not been called yet");
  return e->prologue;
}
std::vector<Trace> entry_prologues(const JitState& s) { return s.prologues(); }
std::vector<TensorInfo> last_saved_for_backward(const JitState& s) {
  auto e = s.last_entry();
  return e ? e->saved_info : std::vector<TensorInfo>{};
}
int64_t cache_hits(const JitState& s) { return s.hits(); }
int64_t cache_misses(const JitState& s) { return s.misses.load(std::memory_order_relaxed); }
CompileStats compile_stats(const JitState& s) {
  CompileStats c;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    c = s.stats;
    c.cache_entries = static_cast<int64_t>(s.current->entries.size());
  }
  c.buffer_reuses = s.pool->get()->reuses();
  c.idle_buffer_bytes = static_cast<int64_t>(s.pool->get()->idle_bytes());
  return c;
}

}  // namespace detail
}  // namespace thunder
