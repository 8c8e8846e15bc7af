// The cpu_fuser executor: claiming, the fusion passes that make region
// statements and their symbols (cppFusion0, cppFusion1, ...), and the one
// kernel that runs every region, compiled or on the ATen fallback.
#include "thunder/executors/cpu_fuser.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "codegen.h"
#include "compiler.h"
#include "fusible.h"
#include "thunder/core/error.h"
#include "thunder/executors/aten.h"
#include "thunder/transforms/cse.h"
#include "thunder/transforms/dce.h"
#include "thunder/transforms/flatten_to_prims.h"
#include "thunder/transforms/fusion_regions.h"
#include "thunder/transforms/rematerialize_regions.h"

namespace thunder {

namespace cpu_fuser {
namespace {

// A region's symbol, made by region formation (`prepared` false: printable,
// not runnable) and again, with its kernel, by the kernels pass. Owned by the
// traces and programs that use it (Trace::owned_symbols). Shapes and dtypes
// are static for a cache entry.
struct FusionSymbol : Symbol {
  bool prepared = false;
  BoundSymbol region;
  // Set once the kernel is loaded; a KernelBatch sets it later, while other
  // threads may already be running the region (on the fallback until then).
  std::atomic<KernelFn> fn{nullptr};
  int64_t flat_numel = 0;
  std::vector<BufferSpec> outputs, scratch;
  std::vector<bool> number_is_float;  // per input; numbers only
  size_t slots = 0;                   // kernel arguments: inputs, outputs, scratch buffers
  // The fallback: the region's prims as ATen instructions over local slots.
  std::vector<Instr> fallback;
  std::vector<int32_t> input_slots, output_slots;
  int32_t tensor_slots = 0, number_slots = 0;
};

void run_fallback(const FusionSymbol& f, KernelCall& k) {
  std::vector<at::Tensor> t(f.tensor_slots);
  std::vector<c10::Scalar> n(f.number_slots);
  for (size_t i = 0; i < f.input_slots.size(); ++i) {
    if (k.is_tensor(i))
      t[f.input_slots[i]] = k.tensor(i);
    else
      n[f.input_slots[i]] = k.scalar(i);
  }
  for (const Instr& in : f.fallback) {
    KernelCall c(in, t.data(), n.data());
    in.fn(c);
  }
  for (size_t j = 0; j < f.output_slots.size(); ++j) k.set_output(j, t[f.output_slots[j]]);
}

// A kernel call's argument arrays, per thread (kernels run concurrently on
// several threads; a kernel never calls another, so one set per thread does).
struct KernelArgs {
  std::vector<at::Tensor> held;
  std::vector<void*> ptrs;
  std::vector<int64_t> numbers;
};

void run_fusion(KernelCall& k) {
  const auto& f = static_cast<const FusionSymbol&>(k.symbol());
  const KernelFn fn = f.fn.load(std::memory_order_acquire);
  if (!fn) return run_fallback(f, k);
  const size_t nin = f.region.args.size();
  thread_local KernelArgs args;
  if (args.held.size() < f.slots) {
    args.held.resize(f.slots);
    args.ptrs.resize(f.slots);
  }
  if (args.numbers.size() < nin) args.numbers.resize(nin);
  struct Release {  // even when the kernel throws
    std::vector<at::Tensor>& held;
    size_t n;
    ~Release() {
      for (size_t i = 0; i < n; ++i) held[i].reset();
    }
  } release{args.held, f.slots};
  size_t slot = 0;
  for (size_t i = 0; i < nin; ++i, ++slot) {
    if (k.is_tensor(i)) {
      args.held[slot] = k.tensor(i).contiguous();
      args.ptrs[slot] = args.held[slot].data_ptr();
    } else {
      const c10::Scalar& s = k.scalar(i);
      if (f.number_is_float[i]) {
        double d = s.toDouble();
        std::memcpy(&args.numbers[i], &d, sizeof d);
      } else {
        args.numbers[i] = s.toLong();
      }
      args.ptrs[slot] = &args.numbers[i];
    }
  }
  for (const auto* specs : {&f.outputs, &f.scratch})
    for (const BufferSpec& b : *specs) {
      args.held[slot] = at::empty(b.shape, at::TensorOptions().dtype(to_aten(b.dtype)));
      args.ptrs[slot] = args.held[slot].data_ptr();
      ++slot;
    }
  fn(args.ptrs.data(), f.flat_numel);
  for (size_t j = 0; j < f.outputs.size(); ++j) k.set_output(j, std::move(args.held[nin + j]));
}

void build_fallback(FusionSymbol& f) {
  std::unordered_map<const Proxy*, int32_t> slot;
  auto define = [&](const ProxyPtr& p) {
    int32_t s = p->is_number() ? f.number_slots++ : f.tensor_slots++;
    slot[p.get()] = s;
    return s;
  };
  for (const Value& v : f.region.args) f.input_slots.push_back(define(v.proxy()));
  for (const BoundSymbol& b : f.region.subsymbols) {
    Instr in;
    in.sym = b.sym;
    in.fn = aten::kernel_for(*b.sym);
    THUNDER_CHECK(in.fn != nullptr, "cpu_fuser: {} has no ATen kernel for the fallback", b.sym->id);
    for (const Value& a : b.args) {
      if (a.is_list() && !a.as_list().empty() && a.as_list()[0].is_proxy()) {  // cat's pieces
        Operand o;
        o.kind = Operand::Kind::TensorList;
        for (const Value& e : a.as_list()) o.slots.push_back(slot.at(e.proxy().get()));
        in.ins.push_back(std::move(o));
        continue;
      }
      if (!a.is_proxy()) {
        in.ins.push_back(const_operand(a));
        continue;
      }
      Operand o;
      o.kind = a.proxy()->is_number() ? Operand::Kind::Number : Operand::Kind::Tensor;
      o.slot = slot.at(a.proxy().get());
      o.constant = a;
      in.ins.push_back(std::move(o));
    }
    for (const ProxyPtr& p : b.flat_outputs()) {
      in.outs.push_back(define(p));
      in.out_is_number.push_back(p->is_number());
    }
    f.fallback.push_back(std::move(in));
  }
  for (const Value& v : f.region.output.as_list())
    f.output_slots.push_back(slot.at(v.proxy().get()));
}

// A view read outside fusion (by ATen, or returned) would be materialised as
// a region output (a transposed weight copied for a matmul); left out, it stays
// a free ATen view. Views feeding only fused statements remain index
// arithmetic inside regions.
void keep_escaping_views_out(const Trace& t, std::vector<bool>& fusible) {
  std::unordered_map<const Proxy*, size_t> producer;
  for (size_t i = 0; i < t.bsyms.size(); ++i)
    for (const ProxyPtr& p : t.bsyms[i].flat_outputs()) producer[p.get()] = i;
  std::vector<ProxyPtr> returned;
  t.output.collect_proxies(returned);
  auto unfuse_view = [&](const ProxyPtr& p) {
    auto it = producer.find(p.get());
    if (it == producer.end() || !fusible[it->second]) return false;
    const BoundSymbol& b = t.bsyms[it->second];
    if (!b.sym->is_prim || *fusible_kind(*b.sym) != OpKind::View) return false;
    fusible[it->second] = false;
    return true;
  };
  for (const ProxyPtr& p : returned) unfuse_view(p);
  // Backwards, so a view of a view that escapes escapes too.
  for (size_t i = t.bsyms.size(); i-- > 0;)
    if (!fusible[i])
      for (const ProxyPtr& p : t.bsyms[i].flat_args()) unfuse_view(p);
}

// A fused cat is the loops that write its output (codegen.cpp), so no fused
// statement may read that output; and a cat of nothing computed in fusion
// is a plain copy, left to ATen. Such cats are left out.
void keep_unfusable_cats_out(const Trace& t, std::vector<bool>& fusible) {
  std::unordered_map<const Proxy*, size_t> producer;
  std::unordered_map<const Proxy*, bool> read_fused;
  for (size_t i = 0; i < t.bsyms.size(); ++i) {
    for (const ProxyPtr& p : t.bsyms[i].flat_outputs()) producer[p.get()] = i;
    if (fusible[i])
      for (const ProxyPtr& p : t.bsyms[i].flat_args()) read_fused[p.get()] = true;
  }
  // Computed by a fused statement other than a view (looking through views).
  auto computed = [&](const ProxyPtr& p) {
    for (const Proxy* q = p.get();;) {
      auto it = producer.find(q);
      if (it == producer.end() || !fusible[it->second]) return false;
      const BoundSymbol& b = t.bsyms[it->second];
      const OpKind* kind = fusible_kind(*b.sym);
      if (kind == nullptr || *kind != OpKind::View) return true;
      q = b.args[0].proxy().get();
    }
  };
  for (size_t i = 0; i < t.bsyms.size(); ++i) {
    const BoundSymbol& b = t.bsyms[i];
    if (!fusible[i] || !b.sym->is_prim || *fusible_kind(*b.sym) != OpKind::Cat) continue;
    const std::vector<ProxyPtr> ins = b.flat_args();
    fusible[i] =
        !read_fused[b.output.proxy().get()] && std::any_of(ins.begin(), ins.end(), computed);
  }
}

// Region formation: the statements cpu_fuser claimed become regions (views
// alone are left to ATen); statements left outside regions go to the next
// executor that can run them.
Trace form_regions(const Trace& t, const FusionContext& ctx) {
  const int me = ctx.self;
  std::vector<bool> fusible(t.bsyms.size());
  for (size_t i = 0; i < t.bsyms.size(); ++i) fusible[i] = t.bsyms[i].executor == me;
  keep_unfusable_cats_out(t, fusible);
  keep_escaping_views_out(t, fusible);
  auto region_symbol = [](int k, const BoundSymbol& region) -> std::shared_ptr<const Symbol> {
    bool compute = false;
    for (const BoundSymbol& s : region.subsymbols)
      compute = compute || *fusible_kind(*s.sym) != OpKind::View;
    if (!compute) return nullptr;
    auto f = std::make_shared<FusionSymbol>();
    f->id = fmt::format("cppFusion{}", k);
    f->is_region = true;
    return f;
  };
  Trace out = form_fusion_regions(t, fusible, ctx.strategy, me, region_symbol);
  const std::vector<Executor*>& executors = *ctx.executors;
  for (BoundSymbol& b : out.bsyms) {
    if (b.executor != me || b.sym->is_region) continue;
    b.executor = -1;
    for (size_t e = me + 1; e < executors.size() && b.executor < 0; ++e)
      if (executors[e]->can_claim(b)) b.executor = static_cast<int>(e);
    THUNDER_CHECK(b.executor >= 0, "{}: no executor after cpu_fuser can run it", b.sym->id);
  }
  return out;
}

// The region's kernel: generated and compiled (regions compile in parallel),
// or its prims on ATen when code generation is off or the compile failed.
std::shared_ptr<FusionSymbol> prepare(const BoundSymbol& region, bool codegen,
                                      std::vector<std::string>& sources) {
  auto f = std::make_shared<FusionSymbol>();
  f->id = region.sym->id;
  f->is_region = true;
  f->prepared = true;
  f->region = region;
  for (const Value& v : region.args) {
    f->params.push_back(v.proxy()->name);
    f->number_is_float.push_back(v.proxy()->is_number() && is_float(v.proxy()->dtype));
  }
  build_fallback(*f);
  if (codegen) {
    KernelSource ks = generate_kernel(region);
    f->outputs = std::move(ks.outputs);
    f->scratch = std::move(ks.scratch);
    if (ks.flat) f->flat_numel = numel(f->outputs.front().shape);
    f->slots = region.args.size() + f->outputs.size() + f->scratch.size();
    f->source = ks.code;
    sources.push_back(std::move(ks.code));
  }
  return f;
}

// The kernels a KernelBatch on this thread has collected and not yet built.
struct Pending {
  std::vector<std::string> sources;
  std::vector<std::shared_ptr<FusionSymbol>> regions;
};
thread_local Pending* collecting = nullptr;

Trace compile_regions(const Trace& t, const FusionContext& ctx) {
  const bool codegen = codegen_enabled();
  Trace out = t.empty_like();
  out.bsyms = t.bsyms;
  std::vector<std::shared_ptr<FusionSymbol>> made;
  std::vector<std::string> sources;
  for (BoundSymbol& b : out.bsyms) {
    if (b.executor != ctx.self || !b.sym->is_region) continue;
    made.push_back(prepare(b, codegen, sources));
    b.sym = made.back().get();
  }
  std::vector<bool> deferred(made.size(), false);
  if (codegen) {
    std::vector<KernelFn> fns = load_kernels(sources, /*compile=*/collecting == nullptr);
    for (size_t i = 0; i < made.size(); ++i) {
      made[i]->fn.store(fns[i], std::memory_order_release);
      if (!fns[i] && collecting) {
        collecting->sources.push_back(sources[i]);
        collecting->regions.push_back(made[i]);
        deferred[i] = true;
      }
    }
  }
  for (size_t i = 0; i < made.size(); ++i) {
    if (!made[i]->fn && !deferred[i]) count_fallback_region();
    out.owned_symbols.push_back(made[i]);
  }
  // The formation pass's unprepared symbols are no longer referenced here.
  std::erase_if(out.owned_symbols, [&](const std::shared_ptr<const Symbol>& s) {
    return std::none_of(out.bsyms.begin(), out.bsyms.end(),
                        [&](const BoundSymbol& b) { return b.sym == s.get(); });
  });
  return out;
}

class CpuFuser : public Executor {
 public:
  std::string_view name() const override { return "cpu_fuser"; }
  bool can_claim(const BoundSymbol& b) const override { return fusible(b); }
  // Checked once at lowering, not per call: a region from before the kernels
  // pass cannot run.
  Kernel kernel(const BoundSymbol& b) const override {
    if (!b.sym->is_region) return nullptr;
    THUNDER_CHECK(static_cast<const FusionSymbol&>(*b.sym).prepared,
                  "{}: region has no kernel yet (run the fusion_kernels pass)", b.sym->id);
    return &run_fusion;
  }
  std::vector<FusionPass> fusion_passes() const override {
    return {
        {"Flatten to prims", "flatten",
         [](const Trace& t, const FusionContext& c) { return flatten_to_prims(t, c.self); }},
        // Composites flattened side by side may repeat each other's prims (gelu's
        // forward, recomputed in a backward, and gelu's grad rule both take erf(x / sqrt(2))).
        {"CSE on prims", "cse", [](const Trace& t, const FusionContext&) { return cse(t); }},
        {"Fusion regions", "form_regions", &form_regions},
        {"Rematerialization between regions", "rematerialize_regions",
         [](const Trace& t, const FusionContext&) { return rematerialize_regions(t); }},
        {"DCE after fusion", "dce", [](const Trace& t, const FusionContext&) { return dce(t); }},
        {"Fusion kernels", "fusion_kernels", &compile_regions},
    };
  }
};

}  // namespace

Executor& cpu_fuser_executor() {
  static CpuFuser e;
  return e;
}

}  // namespace cpu_fuser

struct KernelBatch::State {
  cpu_fuser::Pending pending;
  cpu_fuser::Pending* outer = nullptr;
};

KernelBatch::KernelBatch() : state_(std::make_unique<State>()) {
  state_->outer = cpu_fuser::collecting;
  cpu_fuser::collecting = &state_->pending;
}

KernelBatch::~KernelBatch() {
  cpu_fuser::collecting = state_->outer;
  try {
    build();
  } catch (...) {  // a destructor must not throw; the regions stay on the fallback
  }
}

int64_t KernelBatch::pending() const {
  return static_cast<int64_t>(state_->pending.sources.size());
}

int64_t KernelBatch::build() {
  cpu_fuser::Pending work;
  std::swap(work, state_->pending);
  if (work.sources.empty()) return 0;
  std::vector<cpu_fuser::KernelFn> fns = cpu_fuser::load_kernels(work.sources);
  int64_t built = 0;
  for (size_t i = 0; i < fns.size(); ++i) {
    if (fns[i]) {
      work.regions[i]->fn.store(fns[i], std::memory_order_release);
      ++built;
    } else {
      cpu_fuser::count_fallback_region();
    }
  }
  return built;
}

std::string fusion_source(const BoundSymbol& region) {
  return region.sym->is_region ? region.sym->source : std::string();
}

}  // namespace thunder
