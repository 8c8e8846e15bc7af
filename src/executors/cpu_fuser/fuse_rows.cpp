#include <fmt/format.h>

#include "loop_transforms.h"

namespace thunder::cpu_fuser::ir {

namespace {

// A buffer's row value: the value an earlier nest stored at `index`.
struct RowValue {
  std::string buffer;
  Expr index, value;
};

// e with loads of stored row values replaced; `other` names a buffer read at
// another index.
Expr with_row_values(const Expr& e, const std::vector<RowValue>& rows, std::string& other) {
  if (!e) return e;
  Expr r = e;
  for (const RowValue& rv : rows) {
    bool elsewhere = false;
    r = replace_load(r, rv.buffer, rv.index, rv.value, elsewhere);
    if (elsewhere && other.empty()) other = rv.buffer;
  }
  return r;
}

Block with_row_values(const Block& b, const std::vector<RowValue>& rows, std::string& other) {
  Block out;
  for (const Stmt& s : b) {
    Stmt t = s;
    t.expr = with_row_values(s.expr, rows, other);
    t.index = with_row_values(s.index, rows, other);
    t.body = with_row_values(s.body, rows, other);
    if (s.loop) {
      Loop l = *s.loop;
      l.lo = with_row_values(l.lo, rows, other);
      l.hi = with_row_values(l.hi, rows, other);
      l.body = with_row_values(l.body, rows, other);
      t.loop = std::make_shared<Loop>(std::move(l));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::optional<Nest> fuse_rows(const std::vector<Nest>& nests, const std::set<std::string>& scratch,
                              std::string& why) {
  if (nests.empty()) {
    why = "no nests";
    return std::nullopt;
  }
  const Nest& first = nests.front();
  Nest fused{.range = first.range};
  Loop rows;
  std::vector<RowValue> values;
  for (const Nest& n : nests) {
    if (n.body.size() != 1 || n.body[0].kind != Stmt::Kind::For || !same(n.range, first.range) ||
        n.body[0].loop->var != first.body[0].loop->var) {
      why = "the nests are not loops over the same rows";
      return std::nullopt;
    }
    const Loop& l = *n.body[0].loop;
    if (&n == &first) rows = Loop{.var = l.var, .lo = l.lo, .hi = l.hi};
    fused.work += n.work;
    std::string other;
    const Block body = with_row_values(l.body, values, other);
    if (!other.empty()) {
      why = fmt::format("{} is read at another row", other);
      return std::nullopt;
    }
    for (const Stmt& s : body) {
      if (s.kind == Stmt::Kind::Let) {  // the row's index variables, repeated by each nest
        bool repeated = false;
        for (const Stmt& t : rows.body)
          if (t.kind == Stmt::Kind::Let && t.var == s.var) {
            if (!same(t.expr, s.expr)) {
              why = fmt::format("{} is defined twice", s.var);
              return std::nullopt;
            }
            repeated = true;
          }
        if (repeated) continue;
      }
      if (s.kind == Stmt::Kind::Store) {
        values.push_back({s.var, s.index, s.expr});
        if (scratch.count(s.var)) continue;
      }
      rows.body.push_back(s);
    }
  }
  fused.body.push_back(for_(std::move(rows)));
  return fused;
}

}  // namespace thunder::cpu_fuser::ir
