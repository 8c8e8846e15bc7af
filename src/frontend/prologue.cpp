#include "prologue.h"

#include "thunder/executors/kernel.h"
#include "thunder/runtime/guard.h"

namespace thunder::detail {

namespace {

// Symbols that only appear in prologue traces (printed, never executed).
// Several threads may build their first prologue at once: find_or_add.
const Symbol& prologue_symbol(const char* id) {
  if (const Symbol* s = symbol_registry().find(id)) return *s;
  Symbol p;
  p.id = id;
  p.is_prim = true;
  return symbol_registry().find_or_add(std::move(p));
}

BoundSymbol check(const char* id, std::vector<Value> args) {
  BoundSymbol b;
  b.sym = &prologue_symbol(id);
  b.args = std::move(args);
  return b;
}

BoundSymbol tensor_check(const Value& v, const at::Tensor& t) {
  return check(
      "prologue.check_tensor_metadata",
      {v, Value(t.sizes().vec()), Value(from_aten(t.device())), Value(from_aten(t.scalar_type())),
       Value(t.requires_grad()), Value(t.is_contiguous() ? "contiguous" : "strided")});
}

}  // namespace

std::vector<std::vector<ProxyPtr>> alias_groups(const TracedCall& c,
                                                const std::vector<FlatArg>& args) {
  std::vector<std::vector<ProxyPtr>> groups;
  std::vector<int> group_of(c.sources.size(), -1);
  auto arg = [&](size_t k) -> const at::Tensor* {
    if (c.sources[k].source != Program::Input::Source::ArgTensor) return nullptr;
    const at::Tensor& t = args[c.sources[k].index].tensor;
    return t.has_storage() ? &t : nullptr;
  };
  for (size_t k = 0; k < c.sources.size(); ++k) {
    for (size_t j = 0; j < k && arg(k); ++j) {
      if (!arg(j) || !arg(k)->is_alias_of(*arg(j))) continue;
      if (group_of[j] < 0) {
        group_of[j] = static_cast<int>(groups.size());
        groups.push_back({c.trace.inputs[j]});
      }
      group_of[k] = group_of[j];
      groups[group_of[k]].push_back(c.trace.inputs[k]);
      break;
    }
  }
  return groups;
}

Trace build_prologue(const TracedCall& c, const std::vector<FlatArg>& args,
                     const std::vector<std::vector<ProxyPtr>>& alias_groups, bool grad_mode,
                     const std::vector<int64_t>* module_training,
                     const std::vector<std::pair<std::string, bool>>& state_flags,
                     bool module_identities, const std::vector<EqualGuard>& equal_guards) {
  Trace p;
  p.fn_name = "prologue";
  p.inputs = c.trace.inputs;
  p.provenance = "Guards of this cache entry (compiled to a signature compare)";
  for (size_t i = 0; i < args.size(); ++i) {
    const FlatArg& a = args[i];
    const Value& v = c.arg_values[i];
    if (a.kind == FlatArg::Kind::Tensor && a.tensor.defined())
      p.bsyms.push_back(tensor_check(v, a.tensor));
    else if (a.kind == FlatArg::Kind::Scalar)
      p.bsyms.push_back(check("prologue.check_number_type", {v, Value(v.proxy()->type_str())}));
    else if (a.kind != FlatArg::Kind::Tensor)
      p.bsyms.push_back(check("prologue.check_literal", {Value(c.arg_names[i]), v}));
    else
      p.bsyms.push_back(check("prologue.check_none", {Value(c.arg_names[i])}));
  }
  const size_t first_captured = c.trace.inputs.size() - c.captured.size();
  for (size_t k = 0; k < c.captured.size(); ++k)
    p.bsyms.push_back(tensor_check(Value(c.trace.inputs[first_captured + k]), c.captured[k]));
  for (const auto& group : alias_groups) {
    std::vector<Value> members(group.begin(), group.end());
    p.bsyms.push_back(check("prologue.check_aliases", std::move(members)));
  }
  // Arguments that are one tensor (or the same view of it): part of the
  // aliasing words of the signature.
  for (size_t j = 0; j < args.size(); ++j)
    for (size_t i = 0; i < j; ++i)
      if (args[i].kind == FlatArg::Kind::Tensor && args[j].kind == FlatArg::Kind::Tensor &&
          args[i].tensor.defined() && args[j].tensor.defined() &&
          GuardSignature::same_view(args[i].tensor, args[j].tensor)) {
        p.bsyms.push_back(check("prologue.check_same_view", {c.arg_values[i], c.arg_values[j]}));
        break;
      }
  p.bsyms.push_back(check("prologue.check_grad_mode", {Value(grad_mode)}));
  if (module_training)
    p.bsyms.push_back(check("prologue.check_module_training", {Value(*module_training)}));
  for (const auto& [name, on] : state_flags)
    p.bsyms.push_back(check("prologue.check_module_state", {Value(name), Value(on)}));
  // The module still holds the parameters, buffers and submodules it held
  // (by identity): replacing one compiles a new entry.
  if (module_identities) p.bsyms.push_back(check("prologue.check_module_identities", {}));
  for (const EqualGuard& g : equal_guards)
    p.bsyms.push_back(
        check("prologue.check_equal", {c.arg_values[g.a], c.arg_values[g.b], Value(g.equal)}));
  return p;
}

}  // namespace thunder::detail
