// The tracing context: while a TracingScope is alive on this thread, calling a
// symbol records a bound symbol into the innermost scope. A composite's body
// runs in a nested scope whose statements become its subsymbols.
#pragma once

#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

class TraceCtx {
 public:
  explicit TraceCtx(Trace& trace);

  Trace& trace() { return trace_; }
  // Grad mode as read by the frontend at each op (torch-free core cannot read it).
  bool grad_enabled = true;

  ProxyPtr new_tensor(Shape shape, DType dtype, Device device);
  ProxyPtr new_number(DType dtype);
  // Adds a named input of the trace.
  ProxyPtr add_tensor_input(const std::string& name, Shape shape, DType dtype, Device device,
                            bool requires_grad);
  ProxyPtr add_number_input(const std::string& name, DType dtype);

  // Records a statement into the innermost scope.
  void record(BoundSymbol b);

  // Nested scopes for composite bodies (composite may be nullptr: a plain
  // recording scope, e.g. for a grad rule's statements).
  void push_scope(std::vector<BoundSymbol>* out, const Symbol* composite);
  void pop_scope();
  const std::vector<const Symbol*>& composite_stack() const { return composites_; }

 private:
  Trace& trace_;
  std::vector<std::vector<BoundSymbol>*> scopes_;
  std::vector<const Symbol*> composites_;
  std::vector<bool> has_composite_;
};

// The innermost active context on this thread, or nullptr.
TraceCtx* current_trace_ctx();

// Makes a TraceCtx over `trace` current for its lifetime (nests).
class TracingScope {
 public:
  explicit TracingScope(Trace& trace);
  ~TracingScope();
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;
  TraceCtx& ctx() { return ctx_; }

 private:
  TraceCtx ctx_;
  TraceCtx* prev_;
};

// Calls a symbol inside the active trace: a prim runs its meta, a composite its
// body in a nested scope. Records the statement unless a composite merely
// returns one of its inputs. Throws thunder::Error outside a trace; on error
// nothing is recorded.
Value call_symbol(const Symbol& sym, std::vector<Value> args);

}  // namespace thunder
