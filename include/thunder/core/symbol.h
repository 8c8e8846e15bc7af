// Symbol: an operation. A prim has a strict meta function (validate inputs,
// make output proxies); a composite has a body that is traced to record its
// decomposition. Symbols live in one registry with a dense index, so executor
// and grad-rule tables can be plain vectors indexed by Symbol::index.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "thunder/core/registry_change.h"
#include "thunder/core/value.h"

namespace thunder {

// Tags on symbols. Passes read them (on a statement's own symbol and on the
// composites it was decomposed from). Passes decide behaviour from tags (and
// from pointers to registered symbols), never from a symbol's id string.
enum class OpTag : uint32_t {
  ELEMENTWISE_OP = 1u << 0,
  REDUCTION_OP = 1u << 1,
  // A *stateful* random draw: it reads and advances a generator, so running it
  // twice gives different values. Never recomputed, deduplicated or dropped
  // as dead by value. The stateless prims.uniform_philox (a pure function of
  // its seed and offset) is deliberately not RANDOM_OP; it is PURE_FACTORY.
  RANDOM_OP = 1u << 2,
  MATMUL_OP = 1u << 3,
  SHAPE_OP = 1u << 4,
  IN_PLACE = 1u << 5,
  DONT_DCE = 1u << 6,
  DONT_RECOMPUTE_IN_BACKWARD = 1u << 7,
  RECOMPUTE_IN_BACKWARD = 1u << 8,
  // A prim that makes a tensor from its (non-tensor or scalar) arguments alone,
  // with no state: prims.full, prims.iota, prims.uniform_philox. As cheap to
  // recompute as an elementwise op (rematerialization may recompute it).
  PURE_FACTORY = 1u << 9,
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
  std::string source;  // a region's generated kernel source, if any
  uint32_t tags = 0;   // OpTag bits (add_tags can extend them)
  MetaFn meta;         // prims: validates args and makes output proxies
  BodyFn body;         // composites: the decomposition
  int index = -1;      // dense, assigned by the registry

  bool has_tag(OpTag t) const { return tags & static_cast<uint32_t>(t); }
  std::string_view module() const;  // "prims"
  std::string_view name() const;    // "add"
};

// The process-wide symbol table (explicit registry; symbols are never removed,
// so pointers stay valid). Adding and finding are safe from any thread (a
// custom function registers its symbol when first traced, perhaps on several
// threads at once); tag changes are for set-up code, not concurrent calls.
class SymbolRegistry {
 public:
  // Adds a symbol; throws if the id exists. Returns the registered symbol.
  // (A new symbol cannot change a compiled program: the registry version stays.)
  Symbol& add(Symbol s);
  // The symbol with s.id, adding s first if no symbol has that id. One lock
  // covers both, so threads that race to add the same symbol all get one.
  const Symbol& find_or_add(Symbol s);
  const Symbol* find(std::string_view id) const;
  const Symbol& get(std::string_view id) const;  // throws thunder::Error if unknown
  // Adds OpTag bits to a symbol, bumps the registry version and returns the
  // handle that takes exactly this change back (layered, see registry_change.h).
  // Throws thunder::Error if the id is unknown.
  RegistryChange add_tags(std::string_view id, uint32_t bits);
  // Mutable access bumps the registry version (the caller may change tags or
  // the meta): jitted callables recompile on their next call. Prefer add_tags.
  Symbol& mutable_get(std::string_view id);
  size_t size() const;
  const Symbol& at(size_t index) const;

 private:
  struct TagLayer {
    uint64_t id;
    const Symbol* sym;
    uint32_t asked;  // the bits the change asked for
    uint32_t owned;  // the bits it turned on (and takes back when restored)
  };
  void remove_tag_layer(uint64_t layer);
  mutable std::mutex mu_;  // guards symbols_
  std::vector<std::unique_ptr<Symbol>> symbols_;
  std::vector<TagLayer> tag_layers_;  // add_tags changes still in effect, oldest first
  uint64_t next_layer_ = 0;
};

SymbolRegistry& symbol_registry();

}  // namespace thunder
