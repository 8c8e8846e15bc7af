#include "thunder/core/tracing.h"

#include <algorithm>

#include "thunder/core/error.h"

namespace thunder {

namespace {
thread_local TraceCtx* tls_ctx = nullptr;
}

TraceCtx* current_trace_ctx() { return tls_ctx; }

TraceCtx::TraceCtx(Trace& trace) : trace_(trace) { scopes_.push_back(&trace.bsyms); }

ProxyPtr TraceCtx::new_tensor(Shape shape, DType dtype, Device device) {
  auto p = std::make_shared<Proxy>();
  p->name = trace_.new_name("t");
  p->shape = std::move(shape);
  p->dtype = dtype;
  p->device = device;
  return p;
}

ProxyPtr TraceCtx::new_number(DType dtype) {
  auto p = std::make_shared<Proxy>();
  p->kind = Proxy::Kind::Number;
  p->name = trace_.new_name(dtype == DType::b8 ? "b" : is_float(dtype) ? "f" : "i");
  p->dtype = dtype;
  return p;
}

ProxyPtr TraceCtx::add_tensor_input(const std::string& name, Shape shape, DType dtype,
                                    Device device, bool requires_grad) {
  THUNDER_CHECK(!trace_.name_taken(name), "trace: input name '{}' is used twice", name);
  trace_.reserve_name(name);
  auto p = std::make_shared<Proxy>();
  p->name = name;
  p->shape = std::move(shape);
  p->dtype = dtype;
  p->device = device;
  p->requires_grad = requires_grad;
  trace_.inputs.push_back(p);
  return p;
}

ProxyPtr TraceCtx::add_number_input(const std::string& name, DType dtype) {
  THUNDER_CHECK(!trace_.name_taken(name), "trace: input name '{}' is used twice", name);
  trace_.reserve_name(name);
  auto p = std::make_shared<Proxy>();
  p->kind = Proxy::Kind::Number;
  p->name = name;
  p->dtype = dtype;
  trace_.inputs.push_back(p);
  return p;
}

void TraceCtx::record(BoundSymbol b) { scopes_.back()->push_back(std::move(b)); }

void TraceCtx::push_scope(std::vector<BoundSymbol>* out, const Symbol* composite) {
  scopes_.push_back(out);
  has_composite_.push_back(composite != nullptr);
  if (composite) composites_.push_back(composite);
}

void TraceCtx::pop_scope() {
  scopes_.pop_back();
  if (has_composite_.back()) composites_.pop_back();
  has_composite_.pop_back();
}

TracingScope::TracingScope(Trace& trace) : ctx_(trace), prev_(tls_ctx) { tls_ctx = &ctx_; }
TracingScope::~TracingScope() { tls_ctx = prev_; }

namespace {

// Autograd metadata of fresh outputs: they require grad if grad mode is on and a
// tensor input requires grad (floating outputs only); under no_grad they are
// detached constants for autodiff.
void set_grad_metadata(const std::vector<ProxyPtr>& ins, bool grad_enabled,
                       const std::vector<ProxyPtr>& fresh) {
  bool any = grad_enabled && std::any_of(ins.begin(), ins.end(), [](const ProxyPtr& p) {
               return p->is_tensor() && p->requires_grad;
             });
  for (const ProxyPtr& p : fresh) {
    if (!p->is_tensor()) continue;
    p->requires_grad = any && is_float(p->dtype);
    if (!grad_enabled) p->tags |= static_cast<uint32_t>(ProxyTag::DETACHED_AUTOGRAD_GRAPH);
  }
}

}  // namespace

Value call_symbol(const Symbol& sym, std::vector<Value> args) {
  TraceCtx* ctx = current_trace_ctx();
  THUNDER_CHECK(ctx != nullptr, "{}: called outside of a trace", sym.id);
  OpArgs a(&sym, std::move(args));
  BoundSymbol b;
  b.sym = &sym;
  b.origins = ctx->composite_stack();
  if (sym.is_prim) {
    b.output = sym.meta(a);
  } else {
    ctx->push_scope(&b.subsymbols, &sym);
    try {
      b.output = sym.body(a);
    } catch (...) {
      ctx->pop_scope();
      throw;
    }
    ctx->pop_scope();
  }
  std::vector<ProxyPtr> ins;
  for (const Value& v : a.values()) v.collect_proxies(ins);
  std::vector<ProxyPtr> outs, fresh;
  b.output.collect_proxies(outs);
  for (const ProxyPtr& p : outs)
    if (std::find(ins.begin(), ins.end(), p) == ins.end()) fresh.push_back(p);
  // A composite that only forwards its inputs (e.g. `to` the same dtype) records nothing.
  if (!sym.is_prim && fresh.empty() && b.subsymbols.empty()) return b.output;
  set_grad_metadata(ins, ctx->grad_enabled, fresh);
  Value out = b.output;
  b.args = a.values();
  ctx->record(std::move(b));
  return out;
}

}  // namespace thunder
