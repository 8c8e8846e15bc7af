// Dot text for a trace: one node per statement (regions: one per prim inside
// a cluster), deterministic ids in statement order so two runs print the
// same graph.
#include "trace_dot.h"

#include <fmt/format.h>

#include <cctype>

#include "thunder/core/del_symbol.h"

namespace thunder::report {
namespace {

// A double-quoted dot string.
std::string dot_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

// Letters, digits and '_' only: safe in an HTML id and a dot name.
std::string ident(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string statement_label(const BoundSymbol& b) {
  std::string outs;
  for (const ProxyPtr& p : b.flat_outputs()) {
    if (!outs.empty()) outs += ", ";
    outs += p->name;
  }
  return outs.empty() ? b.sym->id : outs + " = " + b.sym->id;
}

bool makes_forward_value(const BoundSymbol& b, const DotMarks& m) {
  for (const ProxyPtr& p : b.flat_outputs())
    if (m.forward_names.contains(p->name)) return true;
  return false;
}

class DotWriter {
 public:
  DotWriter(const Trace& t, const DotMarks& m) : t_(t), m_(m) {}

  std::string write() {
    out_ += fmt::format("digraph {} {{\n", dot_string(m_.side));
    out_ +=
        "  rankdir=TB;\n  graph [fontname=\"sans-serif\", fontsize=11];\n  node [shape=box, "
        "fontname=\"monospace\", fontsize=10, style=filled, "
        "fillcolor=white];\n  edge [color=\"#555555\"];\n";
    for (size_t k = 0; k < t_.inputs.size(); ++k) input(k);
    for (size_t i = 0; i < t_.bsyms.size(); ++i) {
      const BoundSymbol& b = t_.bsyms[i];
      if (b.sym == &del_symbol()) continue;
      if (b.sym->is_region)
        region(i, b);
      else
        statement(fmt::format("s{}", i), b, "  ");
    }
    result();
    // Edges last, at the top level: an edge written inside a cluster would
    // pull both of its ends (e.g. a trace input) into the cluster.
    return out_ + edges_ + "}\n";
  }

 private:
  void input(size_t k) {
    const ProxyPtr& p = t_.inputs[k];
    const std::string id = fmt::format("in{}", k);
    auto saved = m_.saved_bytes.find(p->name);
    if (saved != m_.saved_bytes.end())
      out_ += fmt::format(
          "  {} [shape=ellipse, fillcolor=\"#ffd27f\", label={}];\n", id,
          dot_string(fmt::format("saved {}\n{}\n{} bytes", p->name, p->type_str(), saved->second)));
    else
      out_ += fmt::format("  {} [shape=ellipse, fillcolor=\"#e8e8e8\", label={}];\n", id,
                          dot_string(p->name + "\n" + p->type_str()));
    producer_[p->name] = id;
  }

  // A statement's node, with edges from whatever made its arguments.
  void statement(const std::string& id, const BoundSymbol& b, const char* indent) {
    const bool recomputed = makes_forward_value(b, m_);
    out_ += fmt::format("{}{} [label={}, tooltip={}{}];\n", indent, id,
                        dot_string((recomputed ? "recomputed: " : "") + statement_label(b)),
                        dot_string(bsym_str(b)),
                        recomputed ? ", fillcolor=\"#f4b6c2\", class=\"recomputed\"" : "");
    for (const ProxyPtr& p : b.flat_args()) edge_from(p->name, id);
    for (const ProxyPtr& p : b.flat_outputs()) producer_[p->name] = id;
  }

  void region(size_t i, const BoundSymbol& b) {
    const std::string cluster = region_cluster_id(m_.side, b);
    out_ += fmt::format(
        "  subgraph {} {{\n    id={};\n    label={};\n    href={};\n    tooltip={};\n"
        "    style=filled;\n    fillcolor=\"#e6f0ff\";\n    color=\"#3366cc\";\n",
        dot_string(cluster), dot_string(cluster), dot_string(b.sym->id + " (click for its C++)"),
        dot_string(fmt::format("#{}", region_anchor(m_.side, b))), dot_string(statement_label(b)));
    // Inside, the prims' own values connect the prims; what the region reads
    // comes from outside, and what it returns is made by one of its prims.
    for (size_t j = 0; j < b.subsymbols.size(); ++j)
      statement(fmt::format("s{}_{}", i, j), b.subsymbols[j], "    ");
    out_ += "  }\n";
    // An output no prim names (should not happen) still gets a producer.
    for (const ProxyPtr& p : b.flat_outputs())
      if (!producer_.contains(p->name)) producer_[p->name] = fmt::format("s{}_0", i);
  }

  void result() {
    std::vector<ProxyPtr> outs;
    t_.output.collect_proxies(outs);
    out_ += "  result [shape=oval, fillcolor=\"#d9f2d9\", label=\"return\"];\n";
    for (const ProxyPtr& p : outs) {
      auto saved = m_.saved_bytes.find(p->name);
      // In the forward, saved values go to a node of their own, not to the result.
      if (saved != m_.saved_bytes.end() && !is_input(p)) {
        const std::string id = "saved_" + ident(p->name);
        out_ += fmt::format(
            "  {} [shape=note, fillcolor=\"#ffd27f\", class=\"saved\", label={}];\n", id,
            dot_string(fmt::format("saved for backward\n{} {}\n{} bytes", p->name, p->type_str(),
                                   saved->second)));
        edge_from(p->name, id);
      } else {
        edge_from(p->name, "result");
      }
    }
  }

  bool is_input(const ProxyPtr& p) const {
    for (const ProxyPtr& q : t_.inputs)
      if (q->name == p->name) return true;
    return false;
  }

  void edge_from(const std::string& value, const std::string& to) {
    auto it = producer_.find(value);
    if (it != producer_.end()) edges_ += fmt::format("  {} -> {};\n", it->second, to);
  }

  const Trace& t_;
  const DotMarks& m_;
  std::map<std::string, std::string> producer_;  // value name -> node id
  std::string out_, edges_;
};

}  // namespace

std::string region_cluster_id(const std::string& side, const BoundSymbol& region) {
  return "cluster_" + ident(side) + "_" + ident(region.sym->id);
}
std::string region_anchor(const std::string& side, const BoundSymbol& region) {
  return "source-" + ident(side) + "-" + ident(region.sym->id);
}

std::string trace_to_dot(const Trace& t, const DotMarks& marks) {
  return DotWriter(t, marks).write();
}

}  // namespace thunder::report
