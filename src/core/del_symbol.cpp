#include "thunder/core/del_symbol.h"

namespace thunder {

const Symbol& del_symbol() {
  static const Symbol& s = []() -> const Symbol& {
    Symbol d;
    d.id = "del";
    d.is_prim = true;
    d.tags = tag_bits({OpTag::DONT_DCE});
    return symbol_registry().add(std::move(d));
  }();
  return s;
}

}  // namespace thunder
