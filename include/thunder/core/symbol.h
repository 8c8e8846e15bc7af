// Symbol: an operation. A prim has a strict meta function (validate inputs,
// make output proxies); a composite has a body that is traced to record its
// decomposition. Symbols live in one registry with a dense index, so executor
// and grad-rule tables can be plain vectors indexed by Symbol::index.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "thunder/core/value.h"

namespace thunder {

// Tags on symbols. Passes read them (on a statement's own symbol and on the
// composites it was decomposed from).
enum class OpTag : uint32_t {
  ELEMENTWISE_OP = 1u << 0,
  REDUCTION_OP = 1u << 1,
  RANDOM_OP = 1u << 2,
  MATMUL_OP = 1u << 3,
  SHAPE_OP = 1u << 4,
  IN_PLACE = 1u << 5,
  DONT_DCE = 1u << 6,
  DONT_RECOMPUTE_IN_BACKWARD = 1u << 7,
  RECOMPUTE_IN_BACKWARD = 1u << 8,
};

inline uint32_t tag_bits(std::initializer_list<OpTag> tags) {
  uint32_t b = 0;
  for (OpTag t : tags) b |= static_cast<uint32_t>(t);
  return b;
}

struct Symbol;

// The arguments of one call of a symbol, with typed accessors whose errors name
// the symbol and the parameter ("prims.sum: argument dims must be an int list, got 2.0").
class OpArgs {
 public:
  OpArgs(const Symbol* sym, std::vector<Value> args) : sym_(sym), args_(std::move(args)) {}

  const Symbol& symbol() const { return *sym_; }
  size_t size() const { return args_.size(); }
  const Value& operator[](size_t i) const { return args_.at(i); }
  const std::vector<Value>& values() const { return args_; }
  // Looks an argument up by its parameter name.
  const Value& get(std::string_view name) const;

  const Proxy& tensor(size_t i) const;
  const ProxyPtr& tensor_ptr(size_t i) const;
  int64_t integer(size_t i) const;
  double number(size_t i) const;  // a number literal
  bool boolean(size_t i) const;
  const std::vector<int64_t>& ints(size_t i) const;
  DType dtype(size_t i) const;
  const std::string& string(size_t i) const;
  const std::vector<Value>& list(size_t i) const;

  const std::string& param_name(size_t i) const;

 private:
  [[noreturn]] void bad(size_t i, const char* expected) const;
  const Symbol* sym_;
  std::vector<Value> args_;
};

using MetaFn = std::function<Value(const OpArgs&)>;
using BodyFn = std::function<Value(const OpArgs&)>;

struct Symbol {
  std::string id;                   // qualified and exactly as printed: "prims.add"
  std::vector<std::string> params;  // parameter names, positional
  bool is_prim = false;
  // A fusion region: its statements' subsymbols are the prims one executor
  // runs as a single kernel. Region symbols are made by a fusion executor for
  // one trace (not registered) and owned by the traces that use them.
  bool is_region = false;
  std::string source;               // a region's generated kernel source, if any
  uint32_t tags = 0;                // OpTag bits (add_tags can extend them)
  MetaFn meta;                      // prims: validates args and makes output proxies
  BodyFn body;                      // composites: the decomposition
  int index = -1;                   // dense, assigned by the registry

  bool has_tag(OpTag t) const { return tags & static_cast<uint32_t>(t); }
  std::string_view module() const;  // "prims"
  std::string_view name() const;    // "add"
};

// The process-wide symbol table (explicit registry; symbols are never removed,
// so pointers stay valid).
class SymbolRegistry {
 public:
  // Adds a symbol; throws if the id exists. Returns the registered symbol.
  Symbol& add(Symbol s);
  const Symbol* find(std::string_view id) const;
  const Symbol& get(std::string_view id) const;  // throws thunder::Error if unknown
  Symbol& mutable_get(std::string_view id);
  size_t size() const { return symbols_.size(); }
  const Symbol& at(size_t index) const { return *symbols_[index]; }

 private:
  std::vector<std::unique_ptr<Symbol>> symbols_;
};

SymbolRegistry& symbol_registry();

}  // namespace thunder
