#include "thunder/transforms/cse.h"

#include <functional>
#include <string>
#include <unordered_map>

namespace thunder {

namespace {

using Renaming = std::unordered_map<const Proxy*, ProxyPtr>;

// Pure: the same arguments always give the same values and nothing else
// happens. Stateful randomness (RANDOM_OP; the stateless uniform_philox is not
// tagged) is checked on the symbol and its decomposition, not via origins:
// ltorch.dropout's keep mask is deterministic given the draw.
bool is_pure(const BoundSymbol& b) {
  if (b.has_op_tag(OpTag::DONT_DCE) || b.has_op_tag(OpTag::IN_PLACE)) return false;
  if (b.sym->has_tag(OpTag::RANDOM_OP)) return false;
  for (const BoundSymbol& s : b.subsymbols)
    if (!is_pure(s)) return false;
  return true;
}

Value renamed(const Value& v, const Renaming& r) {
  if (v.is_proxy()) {
    auto it = r.find(v.proxy().get());
    return it == r.end() ? v : Value(it->second);
  }
  if (!v.is_list()) return v;
  std::vector<Value> items;
  items.reserve(v.as_list().size());
  for (const Value& x : v.as_list()) items.push_back(renamed(x, r));
  return Value(std::move(items));
}

// Renames arguments; outputs are never renamed (they are fresh proxies).
void rename_args(BoundSymbol& b, const Renaming& r) {
  for (Value& a : b.args) a = renamed(a, r);
  for (BoundSymbol& s : b.subsymbols) rename_args(s, r);
}

// Used only to bucket candidates; equality is checked with Value's ==, so the
// hash may collide (and may use pointers) without affecting the result.
size_t hash_value(const Value& v) {
  size_t h = std::hash<int>()(static_cast<int>(v.kind()));
  auto mix = [&h](size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (v.is_proxy())
    mix(std::hash<const Proxy*>()(v.proxy().get()));
  else if (v.is_list())
    for (const Value& x : v.as_list()) mix(hash_value(x));
  else
    mix(std::hash<std::string>()(v.str()));
  return h;
}

size_t hash_statement(const BoundSymbol& b) {
  size_t h = std::hash<const Symbol*>()(b.sym) ^ (b.has_tag(StmtTag::BACKWARD) ? 0x51ed27 : 0);
  for (const Value& a : b.args) h = h * 1000003 ^ hash_value(a);
  return h;
}

bool same_proxy_kind(const Proxy& a, const Proxy& b) {
  return a.is_tensor() == b.is_tensor() && a.dtype == b.dtype && a.shape == b.shape &&
         a.requires_grad == b.requires_grad && a.tags == b.tags;
}

// The outputs of `later` renamed to those of `earlier`, or false if they do not pair up.
bool pair_outputs(const BoundSymbol& earlier, const BoundSymbol& later, Renaming& r) {
  std::vector<ProxyPtr> a = earlier.flat_outputs(), b = later.flat_outputs();
  if (a.empty() || a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!same_proxy_kind(*a[k], *b[k])) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k] != b[k]) r[b[k].get()] = a[k];
  return true;
}

}  // namespace

std::vector<BoundSymbol> cse(const std::vector<BoundSymbol>& bsyms, Value& output) {
  Renaming r;
  std::unordered_map<size_t, std::vector<size_t>> seen;  // hash -> kept statements
  std::vector<BoundSymbol> out;
  out.reserve(bsyms.size());
  for (const BoundSymbol& original : bsyms) {
    BoundSymbol b = original;
    if (!r.empty()) rename_args(b, r);
    if (is_pure(b)) {
      std::vector<size_t>& bucket = seen[hash_statement(b)];
      bool merged = false;
      for (size_t i : bucket) {
        const BoundSymbol& e = out[i];
        if (e.sym == b.sym && e.has_tag(StmtTag::BACKWARD) == b.has_tag(StmtTag::BACKWARD) &&
            e.args == b.args && pair_outputs(e, b, r)) {
          merged = true;
          break;
        }
      }
      if (merged) continue;
      bucket.push_back(out.size());
    }
    out.push_back(std::move(b));
  }
  if (!r.empty()) output = renamed(output, r);
  return out;
}

Trace cse(const Trace& trace) {
  Trace out = trace.empty_like();
  out.output = trace.output;
  out.bsyms = cse(trace.bsyms, out.output);
  return out;
}

}  // namespace thunder
