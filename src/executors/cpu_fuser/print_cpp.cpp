#include "print_cpp.h"

#include <fmt/format.h>

#include <set>

namespace thunder::cpu_fuser::ir {

namespace {

// C precedence: an operand binding less tightly than its context is
// parenthesised, so the text parses as the tree.
constexpr int kPrimary = 16, kUnary = 15;

int precedence(BinOp op) {
  switch (op) {
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::Mod:
      return 13;
    case BinOp::Add:
    case BinOp::Sub:
      return 12;
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
      return 10;
    case BinOp::Eq:
    case BinOp::Ne:
      return 9;
    case BinOp::BitAnd:
      return 8;
    case BinOp::BitXor:
      return 7;
    case BinOp::BitOr:
      return 6;
    case BinOp::And:
      return 5;
    case BinOp::Or:
      return 4;
  }
  return 0;
}

const char* spelling(BinOp op) {
  static const char* const s[] = {"+",  "-",  "*",  "/",  "%",  "<", "<=", ">",
                                  ">=", "==", "!=", "&&", "||", "&", "|",  "^"};
  return s[static_cast<int>(op)];
}

int precedence(const Expr& e) {
  switch (e->kind) {
    case Node::Kind::Int:
      return e->value < 0 ? kUnary : kPrimary;
    case Node::Kind::Lit:
      return !e->text.empty() && e->text[0] == '-' ? kUnary : kPrimary;
    case Node::Kind::Unary:
    case Node::Kind::Cast:
      return kUnary;
    case Node::Kind::Binary:
      return precedence(e->bin);
    case Node::Kind::Select:
      return 3;
    default:
      return kPrimary;
  }
}

std::string print(const Expr& e, int context);

// e as an operand of an operator of precedence `context`.
std::string operand(const Expr& e, int context) {
  std::string s = print(e, context);
  return precedence(e) < context ? "(" + s + ")" : s;
}

std::string print(const Expr& e, int context) {
  switch (e->kind) {
    case Node::Kind::Int:
      return std::to_string(e->value);
    case Node::Kind::Lit:
    case Node::Kind::Var:
      return e->text;
    case Node::Kind::Load: {
      const std::string at = fmt::format("{}[{}]", e->text, print(e->args[0], 0));
      switch (e->type) {
        case Type::Bool:  // a byte in memory: a comparison, parenthesised below ==
          return context > 9 ? "(" + at + " != 0)" : at + " != 0";
        case Type::F16:
          return "(float)" + at;
        case Type::BF16:
          return "bf2f(" + at + ")";
        default:
          return at;
      }
    }
    case Node::Kind::Unary: {
      static const char* const s[] = {"-", "!", "~"};
      // An operand starting with '-' gets parentheses: "- -x", never "--x".
      std::string a = operand(e->args[0], kPrimary);
      return s[static_cast<int>(e->un)] + a;
    }
    case Node::Kind::Binary: {
      const int p = precedence(e->bin);
      return fmt::format("{} {} {}", operand(e->args[0], p), spelling(e->bin),
                         operand(e->args[1], p + 1));
    }
    case Node::Kind::Select:
      return fmt::format("{} ? {} : {}", operand(e->args[0], 4), print(e->args[1], 0),
                         operand(e->args[2], 3));
    case Node::Kind::Cast:
      return fmt::format("({}){}", c_type(e->type), operand(e->args[0], kPrimary));
    case Node::Kind::Call: {
      std::string s = e->text + "(";
      for (size_t i = 0; i < e->args.size(); ++i) s += (i ? ", " : "") + print(e->args[i], 0);
      return s + ")";
    }
  }
  return "";
}

// A value stored into memory of type t (bools as bytes).
std::string stored(Type t, const Expr& v) {
  switch (t) {
    case Type::F16:
      return "(_Float16)" + operand(v, kPrimary);
    case Type::BF16:
      return "f2bf(" + print(v, 0) + ")";
    case Type::Bool:
      return "(uint8_t)" + operand(v, kPrimary);
    default:
      return print(v, 0);
  }
}

void print_stmts(const Block& b, const std::string& indent, std::string& out);

std::string loop_head(const Loop& l) {
  const std::string step = l.step == 1 ? "++" + l.var : fmt::format("{} += {}", l.var, l.step);
  return fmt::format("for (int64_t {} = {}; {} < {}; {})", l.var, print(l.lo, 0), l.var,
                     print(l.hi, 0), step);
}

void print_stmt(const Stmt& s, const std::string& indent, std::string& out) {
  switch (s.kind) {
    case Stmt::Kind::Let:
      out += fmt::format("{}const {} {} = {};\n", indent, c_type(s.type), s.var, print(s.expr, 0));
      return;
    case Stmt::Kind::Decl:
      out += s.expr
                 ? fmt::format("{}{} {} = {};\n", indent, c_type(s.type), s.var, print(s.expr, 0))
                 : fmt::format("{}{} {};\n", indent, c_type(s.type), s.var);
      return;
    case Stmt::Kind::Assign:
      out += fmt::format("{}{} {} {};\n", indent, s.var, s.op, print(s.expr, 0));
      return;
    case Stmt::Kind::Store:
      out +=
          fmt::format("{}{}[{}] = {};\n", indent, s.var, print(s.index, 0), stored(s.type, s.expr));
      return;
    case Stmt::Kind::Alloc:
      out += fmt::format("{}{} {}[{}];\n", indent, c_type(s.type), s.var, s.size);
      return;
    case Stmt::Kind::Eval:
      out += fmt::format("{}{};\n", indent, print(s.expr, 0));
      return;
    case Stmt::Kind::If:
      out += fmt::format("{}if ({}) {{\n", indent, print(s.expr, 0));
      print_stmts(s.body, indent + "  ", out);
      out += indent + "}\n";
      return;
    case Stmt::Kind::Scope:
      out += indent + "{\n";
      print_stmts(s.body, indent + "  ", out);
      out += indent + "}\n";
      return;
    case Stmt::Kind::For: {
      const Loop& l = *s.loop;
      if (l.vector) {
        std::string pragma = indent + "#pragma omp simd";
        for (const Reduction& r : l.reductions)
          pragma += fmt::format(" reduction({}:{})", r.op, r.var);
        out += pragma + "\n";
      }
      out += fmt::format("{}{} {{\n", indent, loop_head(l));
      print_stmts(l.body, indent + "  ", out);
      out += indent + "}\n";
      return;
    }
  }
}

void print_stmts(const Block& b, const std::string& indent, std::string& out) {
  for (const Stmt& s : b) print_stmt(s, indent, out);
}

// Names read or written anywhere in a block (to declare only the parameters
// a nest uses).
void collect_names(const Expr& e, std::set<std::string>& names) {
  if (!e) return;
  if (e->kind == Node::Kind::Var || e->kind == Node::Kind::Load) names.insert(e->text);
  for (const Expr& a : e->args) collect_names(a, names);
}
void collect_names(const Block& b, std::set<std::string>& names) {
  for (const Stmt& s : b) {
    if (s.kind == Stmt::Kind::Store) names.insert(s.var);
    collect_names(s.expr, names);
    collect_names(s.index, names);
    collect_names(s.body, names);
    if (s.loop) {
      collect_names(s.loop->lo, names);
      collect_names(s.loop->hi, names);
      collect_names(s.loop->body, names);
    }
  }
}

std::string param_decl(const Param& p) {
  const char* t = c_type(p.type == Type::Bool ? Type::U8 : p.type);
  if (!p.buffer) return fmt::format("  const {0} {1} = *(const {0}*)p[{2}];\n", t, p.name, p.slot);
  const char* c = p.writable ? "" : "const ";
  return fmt::format("  {1}{0}* __restrict {2} = ({1}{0}*)p[{3}];\n", t, c, p.name, p.slot);
}

}  // namespace

std::string print_expr(const Expr& e) { return print(e, 0); }

std::string print_block(const Block& block, int indent) {
  std::string out;
  print_stmts(block, std::string(indent, ' '), out);
  return out;
}

std::string print_cpp(const Kernel& kernel) {
  std::string out, calls;
  for (size_t k = 0; k < kernel.nests.size(); ++k) {
    const Nest& nest = kernel.nests[k];
    std::set<std::string> names;
    collect_names(nest.body, names);
    out += fmt::format("static void nest{}(void* const* p, int64_t lo, int64_t hi) {{\n", k);
    for (const Param& p : kernel.params)
      if (names.count(p.name)) out += param_decl(p);
    print_stmts(nest.body, "  ", out);
    out += "}\n\n";
    const std::string range = print(nest.range, 0);
    const std::string serial = fmt::format("nest{}(p, 0, {});", k, range);
    const std::string chunked = fmt::format(
        "{{\n    const int64_t range = {0}, chunks = (range + {1} - 1) / {1};\n"
        "#pragma omp parallel for schedule(static)\n"
        "    for (int64_t c = 0; c < chunks; ++c)\n"
        "      nest{2}(p, c * {1}, c * {1} + {1} < range ? c * {1} + {1} : range);\n  }}",
        range, nest.chunk, k);
    if (nest.chunk == 0)
      calls += "  " + serial + "\n";
    else if (nest.min_parallel == 0)
      calls += "  " + chunked + "\n";
    else
      calls += fmt::format("  if ({} < {}) {{\n    {}\n  }} else {}\n", range, nest.min_parallel,
                           serial, chunked);
  }
  return out + "extern \"C\" void thunder_kernel(void* const* p, int64_t n) {\n" + calls + "}\n";
}

}  // namespace thunder::cpu_fuser::ir
