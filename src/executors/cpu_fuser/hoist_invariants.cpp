#include "loop_transforms.h"

namespace thunder::cpu_fuser::ir {

namespace {

// Variables and buffers an expression reads.
void reads(const Expr& e, std::set<std::string>& names) {
  if (!e) return;
  if (e->kind == Node::Kind::Var || e->kind == Node::Kind::Load) names.insert(e->text);
  for (const Expr& a : e->args) reads(a, names);
}

bool reads_any(const Expr& e, const std::set<std::string>& names) {
  std::set<std::string> r;
  reads(e, r);
  for (const std::string& n : r)
    if (names.count(n)) return true;
  return false;
}

// Names a block defines or assigns other than by its own top-level Lets
// (those are decided one by one).
void written(const Block& b, bool top, std::set<std::string>& names) {
  for (const Stmt& s : b) {
    if (!s.var.empty() && (!top || s.kind != Stmt::Kind::Let)) names.insert(s.var);
    written(s.body, false, names);
    if (s.loop) {
      names.insert(s.loop->var);
      written(s.loop->body, false, names);
    }
  }
}

}  // namespace

Block hoist_invariants(const Block& block) {
  Block out;
  for (const Stmt& s : block) {
    if (s.kind == Stmt::Kind::Scope || s.kind == Stmt::Kind::If) {
      Stmt t = s;
      t.body = hoist_invariants(s.body);
      out.push_back(std::move(t));
      continue;
    }
    if (s.kind != Stmt::Kind::For) {
      out.push_back(s);
      continue;
    }
    Loop l = *s.loop;
    Block body = hoist_invariants(l.body);
    std::set<std::string> fixed_inside{l.var};
    written(body, true, fixed_inside);
    l.body.clear();
    for (Stmt& t : body) {
      if (t.kind == Stmt::Kind::Let && !reads_any(t.expr, fixed_inside)) {
        out.push_back(std::move(t));
        continue;
      }
      if (t.kind == Stmt::Kind::Let) fixed_inside.insert(t.var);
      l.body.push_back(std::move(t));
    }
    out.push_back(for_(std::move(l)));
  }
  return out;
}

}  // namespace thunder::cpu_fuser::ir
