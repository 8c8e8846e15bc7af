#include "loop_ir.h"

namespace thunder::cpu_fuser::ir {

const char* c_type(Type t) {
  switch (t) {
    case Type::Bool:
      return "bool";
    case Type::U8:
      return "uint8_t";
    case Type::I8:
      return "int8_t";
    case Type::I16:
      return "int16_t";
    case Type::I32:
      return "int32_t";
    case Type::I64:
      return "int64_t";
    case Type::U64:
      return "uint64_t";
    case Type::F16:
      return "_Float16";
    case Type::BF16:
      return "uint16_t";
    case Type::F32:
      return "float";
    case Type::F64:
      return "double";
  }
  return "";
}

namespace {

Expr make(Node n) { return std::make_shared<const Node>(std::move(n)); }

}  // namespace

Expr int_lit(int64_t v) { return make({.kind = Node::Kind::Int, .value = v}); }
Expr lit(std::string text) { return make({.kind = Node::Kind::Lit, .text = std::move(text)}); }
Expr var(std::string name) { return make({.kind = Node::Kind::Var, .text = std::move(name)}); }
Expr load(std::string buffer, Type t, Expr index) {
  return make({.kind = Node::Kind::Load, .text = std::move(buffer), .type = t, .args = {index}});
}
Expr unary(UnOp op, Expr a) { return make({.kind = Node::Kind::Unary, .un = op, .args = {a}}); }
Expr binary(BinOp op, Expr a, Expr b) {
  return make({.kind = Node::Kind::Binary, .bin = op, .args = {a, b}});
}
Expr select(Expr c, Expr a, Expr b) {
  return make({.kind = Node::Kind::Select, .args = {c, a, b}});
}
Expr cast(Type t, Expr a) { return make({.kind = Node::Kind::Cast, .type = t, .args = {a}}); }
Expr call(std::string fn, std::vector<Expr> args) {
  return make({.kind = Node::Kind::Call, .text = std::move(fn), .args = std::move(args)});
}

bool same(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->text != b->text || a->value != b->value ||
      a->type != b->type || a->un != b->un || a->bin != b->bin || a->args.size() != b->args.size())
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!same(a->args[i], b->args[i])) return false;
  return true;
}

bool uses(const Expr& e, const std::string& name) {
  if (e->kind == Node::Kind::Var) return e->text == name;
  for (const Expr& a : e->args)
    if (uses(a, name)) return true;
  return false;
}

namespace {

// e with each node rewritten by `f` (which returns null to keep it and
// recurse), sharing the untouched subtrees.
template <class F>
Expr rewrite(const Expr& e, const F& f) {
  if (Expr r = f(e)) return r;
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(rewrite(a, f));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  Node n = *e;
  n.args = std::move(args);
  return make(std::move(n));
}

}  // namespace

Expr substitute(const Expr& e, const std::string& name, const Expr& by) {
  return rewrite(e, [&](const Expr& x) {
    return x->kind == Node::Kind::Var && x->text == name ? by : nullptr;
  });
}

Expr replace_load(const Expr& e, const std::string& buffer, const Expr& index, const Expr& by,
                  bool& other) {
  return rewrite(e, [&](const Expr& x) -> Expr {
    if (x->kind != Node::Kind::Load || x->text != buffer) return nullptr;
    if (same(x->args[0], index)) return by;
    other = true;
    return x;
  });
}

Stmt let(Type t, std::string name, Expr e) {
  return {.kind = Stmt::Kind::Let, .type = t, .var = std::move(name), .expr = std::move(e)};
}
Stmt decl(Type t, std::string name, Expr init) {
  return {.kind = Stmt::Kind::Decl, .type = t, .var = std::move(name), .expr = std::move(init)};
}
Stmt assign(std::string name, std::string op, Expr e) {
  return {.kind = Stmt::Kind::Assign,
          .var = std::move(name),
          .op = std::move(op),
          .expr = std::move(e)};
}
Stmt store(std::string buffer, Type t, Expr index, Expr value) {
  return {.kind = Stmt::Kind::Store,
          .type = t,
          .var = std::move(buffer),
          .expr = std::move(value),
          .index = std::move(index)};
}
Stmt alloc(Type t, std::string name, int64_t size) {
  return {.kind = Stmt::Kind::Alloc, .type = t, .var = std::move(name), .size = size};
}
Stmt eval(Expr e) { return {.kind = Stmt::Kind::Eval, .expr = std::move(e)}; }
Stmt if_(Expr cond, Block body) {
  return {.kind = Stmt::Kind::If, .expr = std::move(cond), .body = std::move(body)};
}
Stmt scope(Block body) { return {.kind = Stmt::Kind::Scope, .body = std::move(body)}; }
Stmt for_(Loop loop) {
  return {.kind = Stmt::Kind::For, .loop = std::make_shared<Loop>(std::move(loop))};
}

}  // namespace thunder::cpu_fuser::ir
