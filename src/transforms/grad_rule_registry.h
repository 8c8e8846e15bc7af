// Private to src/transforms: the grad-rule table behind register_grad_rule and
// find_grad_rule (thunder/transforms/autodiff.h), and the hooks that fill it
// with the built-in rules. One definition of these, instead of forward
// declarations in every file that registers rules.
#pragma once

#include <string_view>

#include "thunder/transforms/autodiff.h"

namespace thunder {

// A symbol's grad rule as autodiff sees it.
struct GradRuleEntry {
  GradRule fn;
  // Built-in rules' backward reads count as explicitly saved
  // (JitOptions::strict_saved_for_backward).
  bool builtin = false;
};

// Stores the base rule of a symbol (below any register_grad_rule layer)
// without registering the built-in rules first and without bumping the
// registry version: for the built-in rules (while they are registered) and
// for symbols made just now. Marked builtin while the built-ins are registered.
void set_grad_rule(std::string_view id, GradRule rule);

// The rule autodiff uses for `sym` (its newest layer in effect, else its
// base), or nullptr. Registers the built-in rules on first use.
const GradRuleEntry* find_grad_rule_entry(const Symbol& sym);

// Registers the built-in rules once (thread-safe); every lookup calls it.
void ensure_builtin_rules();

// The proxy behind a rule's tensor argument (rules only see tensor proxies).
inline const Proxy& P(const Value& v) { return *v.proxy(); }

void register_builtin_grad_rules();      // grad_rules.cpp
void register_composite_grad_rules();    // grad_rules_composite.cpp
void register_distributed_grad_rules();  // grad_rules_distributed.cpp

}  // namespace thunder
