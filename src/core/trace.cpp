// The trace printer: a trace reads as a small program in Thunder's style.
#include "thunder/core/trace.h"

#include <algorithm>
#include <sstream>

#include "thunder/core/del_symbol.h"
#include "thunder/core/error.h"

namespace thunder {

std::string Trace::new_name(const std::string& prefix) {
  for (;;) {
    std::string name = prefix + std::to_string(counters_[prefix]++);
    if (!name_taken(name)) return name;
  }
}

void Trace::reserve_name(const std::string& name) { reserved_.push_back(name); }

bool Trace::name_taken(const std::string& name) const {
  return std::find(reserved_.begin(), reserved_.end(), name) != reserved_.end();
}

Trace Trace::empty_like() const {
  Trace t;
  t.fn_name = fn_name;
  t.inputs = inputs;
  t.output = output;
  t.owned_symbols = owned_symbols;
  t.counters_ = counters_;
  t.reserved_ = reserved_;
  return t;
}

namespace {

// One value's type comment: its type, then what passes read that the type
// does not say. Tags are printed wherever set; requires_grad only on trace
// inputs, because a statement's outputs derive it from their arguments (the
// parser recomputes it as tracing does).
std::string typed(const Proxy& p, bool with_requires_grad) {
  std::string s = p.name + ": \"" + p.type_str() + "\"";
  if (with_requires_grad && p.requires_grad) s += " requires_grad";
  for (ProxyTag t : kProxyTags)
    if (p.has_tag(t)) s += std::string(" ") + tag_word(t);
  return s;
}

std::string type_comment(const Value& output) {
  std::vector<ProxyPtr> outs;
  output.collect_proxies(outs);
  std::string s;
  for (const auto& p : outs) {
    s += s.empty() ? "  # " : ", ";
    s += typed(*p, false);
  }
  return s;
}

void print_bsym(std::ostringstream& os, const BoundSymbol& b, int indent, bool commented) {
  os << std::string(indent, ' ') << (commented ? "# " : "");
  if (b.sym == &del_symbol()) {
    os << "del ";
    for (size_t i = 0; i < b.args.size(); ++i) os << (i ? ", " : "") << b.args[i].str();
    os << "\n";
    return;
  }
  if (!b.output.is_none()) os << b.output.str() << " = ";
  os << b.sym->id << "(";
  for (size_t i = 0; i < b.args.size(); ++i) os << (i ? ", " : "") << b.args[i].str();
  os << ")" << type_comment(b.output) << "\n";
  for (const BoundSymbol& s : b.subsymbols) print_bsym(os, s, indent + 2, true);
}

}  // namespace

std::string bsym_str(const BoundSymbol& b, int indent) {
  std::ostringstream os;
  print_bsym(os, b, indent, false);
  return os.str();
}

std::string Trace::str() const {
  std::ostringstream os;
  if (!provenance.empty()) os << "# " << provenance << "\n";
  for (const auto& n : notes) os << "# " << n << "\n";
  os << "def " << fn_name << "(";
  for (size_t i = 0; i < inputs.size(); ++i) os << (i ? ", " : "") << inputs[i]->name;
  os << "):\n";
  for (const auto& p : inputs) os << "  # " << typed(*p, true) << "\n";
  // Every statement of a trace named `backward` is a backward statement
  // (StmtTag::BACKWARD; the parser tags them all). Elsewhere (a joint trace)
  // a marker line opens each run of backward statements, and another one
  // each run of forward statements after them.
  const bool marks = fn_name != kBackwardFnName;
  bool in_backward = false;
  for (const BoundSymbol& b : bsyms) {
    if (marks && b.sym->id != "del" && b.has_tag(StmtTag::BACKWARD) != in_backward) {
      in_backward = !in_backward;
      os << "  # " << (in_backward ? kBackwardMarker : kForwardMarker) << "\n";
    }
    print_bsym(os, b, 2, false);
  }
  os << "  return " << output.str() << "\n";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Trace& t) { return os << t.str(); }

namespace {
constexpr std::string_view kConstructedBy = "Constructed by ";
constexpr std::string_view kTook = " (took ";
}  // namespace

std::string stage_provenance(std::string_view pass, double ms) {
  return fmt::format("{}{}{}{} ms)", kConstructedBy, pass, kTook, static_cast<int64_t>(ms));
}

std::string_view stage_name(const Trace& t) {
  std::string_view p = t.provenance;
  if (!p.starts_with(kConstructedBy)) return {};
  p.remove_prefix(kConstructedBy.size());
  size_t end = p.rfind(kTook);
  return end == std::string_view::npos ? std::string_view{} : p.substr(0, end);
}

bool has_stage(const std::vector<Trace>& stages, std::string_view pass) {
  return std::any_of(stages.begin(), stages.end(),
                     [&](const Trace& t) { return stage_name(t) == pass; });
}

const Trace& find_stage(const std::vector<Trace>& stages, std::string_view pass) {
  for (const Trace& t : stages)
    if (stage_name(t) == pass) return t;
  std::string names;
  for (const Trace& t : stages)
    names += fmt::format("{}'{}'", names.empty() ? "" : ", ", stage_name(t));
  fail("find_stage: no stage made by '{}' (stages: {})", pass, names);
}

}  // namespace thunder
