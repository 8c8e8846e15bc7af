#include "dispatch.h"

#include <ATen/core/grad_mode.h>

namespace thunder::detail {
namespace {

thread_local CaptureTable* tls_captures = nullptr;

Value to_traced(const OpArg& a) {
  switch (a.kind) {
    case OpArg::Kind::Literal:
      return a.value;
    case OpArg::Kind::Tensor:
      return a.tensor->defined() ? traced_value(*a.tensor) : Value();
    case OpArg::Kind::TensorList: {
      std::vector<Value> l;
      for (const Tensor& t : *a.tensors) l.push_back(traced_value(t));
      return Value(std::move(l));
    }
  }
  return {};
}

std::vector<Tensor> run_traced(const Symbol& sym, std::initializer_list<OpArg> args) {
  std::vector<Value> vals;
  vals.reserve(args.size());
  for (const OpArg& a : args) vals.push_back(to_traced(a));
  current_trace_ctx()->grad_enabled = at::GradMode::is_enabled();
  Value out = call_symbol(sym, std::move(vals));
  std::vector<ProxyPtr> flat;
  out.collect_proxies(flat);
  std::vector<Tensor> result;
  result.reserve(flat.size());
  for (auto& p : flat) result.emplace_back(std::move(p));
  return result;
}

[[noreturn]] void proxy_outside_trace(const Symbol& sym, const std::string& name) {
  fail(
      "{}: tensor proxy {} used outside of its trace (proxies only exist while thunder::jit "
      "traces a function)",
      sym.id, name);
}

// Eager calls reuse one scratch instruction per thread, so an eager op costs
// libtorch's kernel plus a few stores (kernels never re-enter run_eager).
struct EagerScratch {
  Instr instr;
  std::vector<at::Tensor> slots;
  std::vector<at::Tensor> outs;
};

void run_eager(const Symbol& sym, std::initializer_list<OpArg> args, std::vector<at::Tensor>& outs,
               EagerScratch& s) {
  Instr& instr = s.instr;
  instr.sym = &sym;
  instr.ins.resize(args.size());
  s.slots.clear();
  outs.clear();
  size_t i = 0;
  for (const OpArg& a : args) {
    Operand& o = instr.ins[i++];
    o.slots.clear();
    switch (a.kind) {
      case OpArg::Kind::Literal:
        if (a.value.is_proxy()) proxy_outside_trace(sym, a.value.proxy()->name);
        o = const_operand(a.value);
        break;
      case OpArg::Kind::Tensor:
        if (!a.tensor->defined()) {
          o = const_operand(Value());
          break;
        }
        if (a.tensor->is_proxy()) proxy_outside_trace(sym, a.tensor->proxy()->name);
        o.kind = Operand::Kind::Tensor;
        o.slot = static_cast<int32_t>(s.slots.size());
        s.slots.push_back(a.tensor->aten());
        break;
      case OpArg::Kind::TensorList:
        o.kind = Operand::Kind::TensorList;
        for (const Tensor& t : *a.tensors) {
          if (t.is_proxy()) proxy_outside_trace(sym, t.proxy()->name);
          o.slots.push_back(static_cast<int32_t>(s.slots.size()));
          s.slots.push_back(t.aten());
        }
        break;
    }
  }
  KernelCall call(instr, s.slots.data(), nullptr);
  call.collect_outputs(&outs);
  Kernel k = aten::kernel_for(sym);
  THUNDER_CHECK(k != nullptr, "{}: has no ATen kernel", sym.id);
  try {
    k(call);
  } catch (const Error&) {
    s.slots.clear();
    throw;
  } catch (const InternalError&) {  // a thunder bug stays one (not a user error)
    s.slots.clear();
    throw;
  } catch (const c10::Error& e) {
    // Eager errors speak thunder's language too: the op, then libtorch's reason.
    s.slots.clear();
    fail("{}: {}", sym.id, e.what_without_backtrace());
  } catch (const std::exception& e) {
    s.slots.clear();
    fail("{}: {}", sym.id, e.what());
  }
  s.slots.clear();  // drop the input references now
}

EagerScratch& scratch() {
  thread_local EagerScratch s;
  return s;
}

}  // namespace

std::vector<Tensor> run_op(const Symbol& sym, std::initializer_list<OpArg> args) {
  if (tracing()) return run_traced(sym, args);
  EagerScratch& s = scratch();
  run_eager(sym, args, s.outs, s);
  std::vector<Tensor> r(s.outs.begin(), s.outs.end());
  s.outs.clear();
  return r;
}

Tensor run_op1(const Symbol& sym, std::initializer_list<OpArg> args) {
  if (tracing()) {
    std::vector<Tensor> r = run_traced(sym, args);
    THUNDER_INTERNAL_CHECK(r.size() == 1, "{}: expected one output, got {}", sym.id, r.size());
    return std::move(r[0]);
  }
  EagerScratch& s = scratch();
  run_eager(sym, args, s.outs, s);
  THUNDER_INTERNAL_CHECK(s.outs.size() == 1, "{}: expected one output, got {}", sym.id,
                         s.outs.size());
  Tensor out(std::move(s.outs[0]));
  s.outs.clear();
  return out;
}

ProxyPtr CaptureTable::proxy_for(const at::Tensor& t) {
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return proxies_[i];
  TraceCtx* ctx = current_trace_ctx();
  return add(t, ctx->trace().new_name("t_captured_"));
}

ProxyPtr CaptureTable::add(const at::Tensor& t, const std::string& name) {
  TraceCtx* ctx = current_trace_ctx();
  THUNDER_CHECK(ctx != nullptr, "thunder::jit: cannot capture a tensor outside of a trace");
  ProxyPtr p = ctx->add_tensor_input(name, t.sizes().vec(), from_aten(t.scalar_type()),
                                     from_aten(t.device()), t.requires_grad());
  tensors_.push_back(t);
  proxies_.push_back(p);
  return p;
}

void CaptureTable::replace(const at::Tensor& t, ProxyPtr p) {
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
      proxies_[i] = std::move(p);
      return;
    }
  THUNDER_INTERNAL_CHECK(false, "CaptureTable::replace: the tensor was never captured");
}

CaptureTable* current_captures() { return tls_captures; }
CaptureScope::CaptureScope(CaptureTable& t) : prev_(tls_captures) { tls_captures = &t; }
CaptureScope::~CaptureScope() { tls_captures = prev_; }

Value traced_value(const Tensor& t) {
  if (t.is_proxy()) return Value(t.proxy());
  CaptureTable* c = current_captures();
  THUNDER_CHECK(c != nullptr,
                "thunder: a concrete tensor was used inside a trace that cannot capture it");
  return Value(c->proxy_for(t.aten()));
}

}  // namespace thunder::detail
