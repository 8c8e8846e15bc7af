// The one place where every ltorch family is registered.
#include "lang_util.h"

namespace thunder::ltorch {

void ensure_registered() {
  static const bool done = [] {
    prims::ensure_registered();
    detail::register_elementwise();
    detail::register_reduction();
    detail::register_shape();
    detail::register_indexing();
    detail::register_nn();
    detail::register_attention();
    detail::register_factory();
    detail::register_backward();
    return true;
  }();
  (void)done;
}

const Symbol& symbol(std::string_view id) {
  ensure_registered();
  return symbol_registry().get(id);
}

namespace detail {
void define(std::string id, std::vector<std::string> params, uint32_t tags, BodyFn body) {
  Symbol s;
  s.id = std::move(id);
  s.params = std::move(params);
  s.is_prim = false;
  s.tags = tags;
  s.body = std::move(body);
  symbol_registry().add(std::move(s));
}
}  // namespace detail
}  // namespace thunder::ltorch
