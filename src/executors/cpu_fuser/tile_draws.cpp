#include <fmt/format.h>

#include "loop_transforms.h"

namespace thunder::cpu_fuser::ir {

namespace {

constexpr std::string_view kDraw = "philox_uniform_";

// The base of an index `base + var` (or `var`: 0), or null.
Expr base_of(const Expr& index, const std::string& var) {
  if (index->kind == Node::Kind::Var && index->text == var) return int_lit(0);
  if (index->kind == Node::Kind::Binary && index->bin == BinOp::Add &&
      index->args[1]->kind == Node::Kind::Var && index->args[1]->text == var &&
      !uses(index->args[0], var))
    return index->args[0];
  return nullptr;
}

void reads(const Expr& e, std::set<std::string>& names) {
  if (e->kind == Node::Kind::Var || e->kind == Node::Kind::Load) names.insert(e->text);
  for (const Expr& a : e->args) reads(a, names);
}

void defined(const Block& b, std::set<std::string>& names) {
  for (const Stmt& s : b) {
    if (!s.var.empty()) names.insert(s.var);
    defined(s.body, names);
    if (s.loop) {
      names.insert(s.loop->var);
      defined(s.loop->body, names);
    }
  }
}

// A draw the loop can fill tiles of: its index and the names it reads
// otherwise are fixed in the loop.
bool tileable(const Expr& e, const Loop& l, const std::set<std::string>& inside) {
  if (e->kind != Node::Kind::Call || e->text.compare(0, kDraw.size(), kDraw) != 0) return false;
  if (!base_of(e->args[2], l.var)) return false;
  for (size_t i = 0; i < e->args.size(); ++i) {
    std::set<std::string> r;
    reads(i == 2 ? base_of(e->args[2], l.var) : e->args[i], r);
    for (const std::string& n : r)
      if (inside.count(n)) return false;
  }
  return true;
}

// The tile reads and fills of one loop's draws.
struct Tiles {
  Block fills;                               // before the element loop
  std::vector<std::pair<Expr, Expr>> reads;  // draw -> its tile element
};

Expr with_tiles(const Expr& e, const Loop& l, const std::set<std::string>& inside,
                const Expr& begin, const Expr& end, const Expr& local, int64_t size, Tiles& tiles,
                int& names) {
  if (tileable(e, l, inside)) {
    for (const auto& [draw, tile] : tiles.reads)
      if (same(draw, e)) return tile;
    const bool f64 = e->text == "philox_uniform_d";
    const std::string u = fmt::format("u{}", names++);
    const Expr base = base_of(e->args[2], l.var);
    auto offset = [&](const Expr& x) {
      return base->kind == Node::Kind::Int && base->value == 0 ? x : binary(BinOp::Add, base, x);
    };
    tiles.fills.push_back(alloc(f64 ? Type::F64 : Type::F32, u, size));
    const std::string fill =
        f64 ? "philox_fill_d" : "philox_fill_f" + e->text.substr(e->text.find('<'));
    tiles.fills.push_back(eval(call(fill, {var(u), e->args[0], e->args[1], offset(begin),
                                           offset(end), e->args[3], e->args[4]})));
    const Expr tile = load(u, f64 ? Type::F64 : Type::F32, local);
    tiles.reads.push_back({e, tile});
    return tile;
  }
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(with_tiles(a, l, inside, begin, end, local, size, tiles, names));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  Node n = *e;
  n.args = std::move(args);
  return std::make_shared<const Node>(std::move(n));
}

bool has_draw(const Block& b, const Loop& l, const std::set<std::string>& inside) {
  std::vector<Expr> todo;
  for (const Stmt& s : b)
    if (s.kind == Stmt::Kind::Let) todo.push_back(s.expr);
  while (!todo.empty()) {
    Expr e = todo.back();
    todo.pop_back();
    if (tileable(e, l, inside)) return true;
    for (const Expr& a : e->args) todo.push_back(a);
  }
  return false;
}

// The fills and the loop reading its tiles, for the element range [begin,
// end) whose element i is tile element `local`.
Block tiled(const Loop& l, const std::set<std::string>& inside, const Expr& begin, const Expr& end,
            const Expr& local, int64_t size, int& names) {
  Tiles tiles;
  Loop inner = l;
  inner.body.clear();
  for (const Stmt& s : l.body) {
    Stmt t = s;
    if (s.kind == Stmt::Kind::Let)
      t.expr = with_tiles(s.expr, l, inside, begin, end, local, size, tiles, names);
    inner.body.push_back(std::move(t));
  }
  Block out = std::move(tiles.fills);
  out.push_back(for_(std::move(inner)));
  return out;
}

}  // namespace

Loop tile_loop(const Loop& loop, int64_t size, const std::string& tile_var,
               const std::string& end_var) {
  const Expr t = var(tile_var), next = binary(BinOp::Add, t, int_lit(size));
  Loop inner = loop;
  inner.lo = t;
  inner.hi = var(end_var);
  Loop outer{.var = tile_var, .lo = loop.lo, .hi = loop.hi, .step = size};
  outer.body.push_back(
      let(Type::I64, end_var, select(binary(BinOp::Lt, next, loop.hi), next, loop.hi)));
  outer.body.push_back(for_(std::move(inner)));
  return outer;
}

Block tile_draws(const Block& block, int64_t size, int64_t max_whole, int& names) {
  Block out;
  for (const Stmt& s : block) {
    Stmt t = s;
    t.body = tile_draws(s.body, size, max_whole, names);
    if (s.kind != Stmt::Kind::For) {
      out.push_back(std::move(t));
      continue;
    }
    Loop l = *s.loop;
    l.body = tile_draws(l.body, size, max_whole, names);
    std::set<std::string> inside{l.var};
    defined(l.body, inside);
    if (!l.vector || l.step != 1 || !has_draw(l.body, l, inside)) {
      out.push_back(for_(std::move(l)));
      continue;
    }
    const Expr i = var(l.var);
    if (l.lo->kind == Node::Kind::Int && l.hi->kind == Node::Kind::Int &&
        l.hi->value - l.lo->value <= max_whole) {  // the whole loop is one tile
      const Expr local = l.lo->value == 0 ? i : binary(BinOp::Sub, i, l.lo);
      for (Stmt& f : tiled(l, inside, l.lo, l.hi, local, l.hi->value - l.lo->value, names))
        out.push_back(std::move(f));
      continue;
    }
    const std::string tv = fmt::format("t{}", names), te = fmt::format("te{}", names);
    ++names;
    Loop outer = tile_loop(l, size, tv, te);
    const Loop inner = *outer.body.back().loop;
    outer.body.pop_back();
    for (Stmt& f :
         tiled(inner, inside, var(tv), var(te), binary(BinOp::Sub, i, var(tv)), size, names))
      outer.body.push_back(std::move(f));
    out.push_back(for_(std::move(outer)));
  }
  return out;
}

}  // namespace thunder::cpu_fuser::ir
