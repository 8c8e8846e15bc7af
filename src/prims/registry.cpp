// The one place where every prim family is registered.
#include "prim_util.h"

namespace thunder::prims {

void ensure_registered() {
  static const bool done = [] {
    detail::register_elementwise();
    detail::register_shape();
    detail::register_reduction();
    detail::register_linalg();
    detail::register_indexing();
    detail::register_factory();
    detail::register_random();
    detail::register_inplace();
    detail::register_distributed();
    detail::register_aten_call();
    return true;
  }();
  (void)done;
}

const Symbol& symbol(std::string_view id) {
  ensure_registered();
  return symbol_registry().get(id);
}

namespace detail {

void define(std::string id, std::vector<std::string> params, uint32_t tags, MetaFn meta) {
  Symbol s;
  s.id = std::move(id);
  s.params = std::move(params);
  s.is_prim = true;
  s.tags = tags;
  s.meta = std::move(meta);
  symbol_registry().add(std::move(s));
}

ProxyPtr new_tensor(Shape shape, DType dtype, Device device) {
  TraceCtx* ctx = current_trace_ctx();
  THUNDER_CHECK(ctx != nullptr, "prims: a tensor proxy can only be made inside a trace");
  return ctx->new_tensor(std::move(shape), dtype, device);
}

ProxyPtr new_named_tensor(const std::string& prefix, Shape shape, DType dtype, Device device) {
  TraceCtx* ctx = current_trace_ctx();
  THUNDER_CHECK(ctx != nullptr, "prims: a tensor proxy can only be made inside a trace");
  auto p = std::make_shared<Proxy>();
  p->name = ctx->trace().new_name(prefix);
  p->shape = std::move(shape);
  p->dtype = dtype;
  p->device = device;
  return p;
}

void check_shape(const char* op, const Shape& shape) {
  for (int64_t s : shape)
    THUNDER_CHECK(s >= 0, "{}: negative size in shape {}", op, shape_str(shape));
}

Value call(const Symbol& sym, std::vector<Value> args) { return call_symbol(sym, std::move(args)); }

int64_t canonical_dim(const std::string& op, int64_t dim, int64_t rank) {
  int64_t r = rank == 0 ? 1 : rank;  // 0-d tensors accept dims 0 and -1, like torch
  THUNDER_CHECK(dim >= -r && dim < r, "{}: dim {} is out of range for a tensor of rank {}", op, dim,
                rank);
  return dim < 0 ? dim + r : dim;
}

}  // namespace detail
}  // namespace thunder::prims
