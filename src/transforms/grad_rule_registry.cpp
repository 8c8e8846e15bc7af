// The grad-rule table: per symbol a base rule (built-in, or a new symbol's)
// and the layers that register_grad_rule pushed over it, newest last. The
// layers make each registration undoable on its own (registry_change.h).
#include "grad_rule_registry.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "thunder/core/error.h"
#include "thunder/lang/ltorch.h"
#include "thunder/transforms/trace_symbol.h"

namespace thunder {

namespace {

struct RuleSlot {
  GradRuleEntry base;
  std::vector<std::pair<uint64_t, GradRuleEntry>> layers;  // (layer id, rule), oldest first

  const GradRuleEntry& current() const { return layers.empty() ? base : layers.back().second; }
};

std::vector<RuleSlot>& rule_table() {
  static std::vector<RuleSlot> t;
  return t;
}

uint64_t& next_layer() {
  static uint64_t n = 0;
  return n;
}

// Only built-in rules are registered before this flips (see ensure_builtin_rules).
bool& registering_builtins() {
  static bool b = false;
  return b;
}

RuleSlot& slot(const Symbol& s) {
  auto& t = rule_table();
  if (t.size() <= static_cast<size_t>(s.index)) t.resize(s.index + 1);
  return t[s.index];
}

void remove_layer(int index, uint64_t layer) {
  auto& layers = rule_table()[index].layers;
  auto it =
      std::find_if(layers.begin(), layers.end(), [&](const auto& l) { return l.first == layer; });
  if (it == layers.end()) return;
  layers.erase(it);
  bump_registry_version();
}

// The rules of trace symbols (trace_symbol.h), removed with their symbol.
class TraceSymbolRules {
 public:
  void add(const Symbol* s, GradRule rule) {
    std::lock_guard<std::mutex> lock(mu_);
    rules_[s] = std::make_unique<GradRuleEntry>(GradRuleEntry{std::move(rule), false});
  }
  void remove(const Symbol* s) {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.erase(s);
  }
  // Stable while the symbol lives (the caller holds a trace that keeps it).
  const GradRuleEntry* find(const Symbol* s) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rules_.find(s);
    return it == rules_.end() ? nullptr : it->second.get();
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<const Symbol*, std::unique_ptr<GradRuleEntry>> rules_;
};

TraceSymbolRules& trace_symbol_rules() {
  static auto* t = new TraceSymbolRules;  // outlives symbols freed at exit
  return *t;
}

}  // namespace

std::shared_ptr<const Symbol> make_trace_symbol(Symbol s, GradRule rule) {
  s.index = -1;
  std::shared_ptr<const Symbol> sym(new Symbol(std::move(s)), [](const Symbol* p) {
    trace_symbol_rules().remove(p);
    delete p;
  });
  trace_symbol_rules().add(sym.get(), std::move(rule));
  return sym;
}

void ensure_builtin_rules() {
  static const bool done = [] {
    ltorch::ensure_registered();
    registering_builtins() = true;
    register_builtin_grad_rules();
    register_composite_grad_rules();
    register_distributed_grad_rules();
    registering_builtins() = false;
    return true;
  }();
  (void)done;
}

void set_grad_rule(std::string_view id, GradRule rule) {
  const Symbol& s = symbol_registry().get(id);
  slot(s).base = {std::move(rule), registering_builtins()};
}

RegistryChange register_grad_rule(std::string_view id, GradRule rule) {
  ensure_builtin_rules();
  const Symbol& s = symbol_registry().get(id);
  const uint64_t layer = next_layer()++;
  slot(s).layers.emplace_back(layer, GradRuleEntry{std::move(rule), false});
  bump_registry_version();
  return RegistryChange([index = s.index, layer] { remove_layer(index, layer); });
}

void register_grad_rule_of_new_symbol(std::string_view id, GradRule rule) {
  ensure_builtin_rules();
  set_grad_rule(id, std::move(rule));
}

const GradRuleEntry* find_grad_rule_entry(const Symbol& sym) {
  ensure_builtin_rules();
  if (sym.index < 0) return trace_symbol_rules().find(&sym);
  const auto& t = rule_table();
  if (static_cast<size_t>(sym.index) >= t.size()) return nullptr;
  const GradRuleEntry& e = t[sym.index].current();
  return e.fn ? &e : nullptr;
}

const GradRule* find_grad_rule(const Symbol& sym) {
  const GradRuleEntry* e = find_grad_rule_entry(sym);
  return e ? &e->fn : nullptr;
}

}  // namespace thunder
