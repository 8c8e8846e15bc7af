// In-place functionalization (see the header for the contract).
//
// Values are tracked by identity: the proxy the traced program used for a
// tensor (`x`, or a view `v` of it). `cur_` maps an identity to the value
// that currently holds its contents. A write bumps the version of the
// written storage's root; a view whose recorded version is older is stale
// and re-derived from its base before it is next read.
#include "thunder/transforms/functionalize.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"

namespace thunder {

namespace {

// Ops whose output is a view of their first argument (libtorch's views).
enum class ViewKind { Reshape, Transpose, Permute, Narrow, Select, Expand };

// Keyed by the registered symbols (looked up once), not by id strings.
const ViewKind* view_kind(const Symbol& s) {
  static const std::unordered_map<const Symbol*, ViewKind> table = [] {
    std::unordered_map<const Symbol*, ViewKind> t;
    for (auto [id, kind] : std::initializer_list<std::pair<const char*, ViewKind>>{
             {"ltorch.view", ViewKind::Reshape},
             {"ltorch.reshape", ViewKind::Reshape},
             {"ltorch.flatten", ViewKind::Reshape},
             {"ltorch.unsqueeze", ViewKind::Reshape},
             {"ltorch.squeeze", ViewKind::Reshape},
             {"ltorch.transpose", ViewKind::Transpose},
             {"ltorch.permute", ViewKind::Permute},
             {"ltorch.narrow", ViewKind::Narrow},
             {"ltorch.select", ViewKind::Select},
             {"ltorch.expand", ViewKind::Expand}})
      t.emplace(&ltorch::symbol(id), kind);
    return t;
  }();
  auto it = table.find(&s);
  return it == table.end() ? nullptr : &it->second;
}

bool is_copy(const BoundSymbol& b) {
  static const Symbol* copy = &prims::symbol("prims.copy_");
  return b.sym == copy;
}

// split and chunk return pieces that are each a view of their input.
bool returns_pieces(const Symbol& s) {
  static const Symbol* split = &ltorch::symbol("ltorch.split");
  static const Symbol* chunk = &ltorch::symbol("ltorch.chunk");
  return &s == split || &s == chunk;
}

bool contains_copy(const std::vector<BoundSymbol>& bs) {
  for (const BoundSymbol& b : bs)
    if (is_copy(b) || contains_copy(b.subsymbols)) return true;
  return false;
}

int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

constexpr uint32_t kBackward = static_cast<uint32_t>(StmtTag::BACKWARD);

class Functionalizer {
 public:
  Functionalizer(TraceCtx& ctx, const std::vector<std::vector<ProxyPtr>>& groups)
      : ctx_(ctx), out_(ctx.trace().bsyms) {
    for (size_t g = 0; g < groups.size(); ++g)
      for (const ProxyPtr& p : groups[g]) group_of_[p.get()] = g;
    members_ = groups;
  }

  void run(const std::vector<BoundSymbol>& bsyms, uint32_t tags) {
    for (const BoundSymbol& b : bsyms) {
      uint32_t t = tags | b.tags;
      if (is_copy(b)) {
        tags_ = t;
        write(b);
        continue;
      }
      if (contains_copy(b.subsymbols) && !find_grad_rule(*b.sym)) {
        // Its writes may reach its arguments: its rewritten decomposition takes its place.
        run(b.subsymbols, t);
        continue;
      }
      tags_ = t;
      BoundSymbol c = b;
      rename(c);
      refresh_grad(c);
      push(std::move(c));
      const ViewKind* k = view_kind(*b.sym);
      if (k && b.args[0].is_tensor() && b.output.is_tensor())
        add_view(b.output.proxy(), View{b.args[0].proxy(), b, *k});
      if (returns_pieces(*b.sym) && b.args[0].is_tensor()) add_pieces(b);
    }
  }

  Value read_value(const Value& v) {
    if (v.is_proxy()) return read(v.proxy());
    if (!v.is_list()) return v;
    std::vector<Value> l;
    for (const Value& e : v.as_list()) l.push_back(read_value(e));
    return Value(std::move(l));
  }

  // Trace inputs written (outside alias groups), with their final values.
  void written(const std::vector<ProxyPtr>& inputs, Functionalized& f) {
    for (const ProxyPtr& in : inputs) {
      auto v = version_.find(in.get());
      if (!in->is_tensor() || v == version_.end() || v->second == 0 || group_of_.count(in.get()))
        continue;
      f.written_inputs.push_back(in);
      f.new_values.push_back(read(in).proxy());
    }
  }

 private:
  struct View {
    ProxyPtr base;
    BoundSymbol step;  // the statement that made the view (as traced)
    ViewKind kind;
  };

  void add_view(const ProxyPtr& out, View v) {
    views_[out.get()] = std::move(v);
    const Proxy* r = root(out.get());
    seen_[out.get()] = version_[r];
    if (auto g = group_of_.find(r); g != group_of_.end()) members_[g->second].push_back(out);
  }

  // split and chunk: each piece is a narrow view of the input.
  void add_pieces(const BoundSymbol& b) {
    static const Symbol& narrow = ltorch::symbol("ltorch.narrow");
    const ProxyPtr& base = b.args[0].proxy();
    const int64_t dim = wrap(b.args[2].as_int(), base->ndim());
    std::vector<ProxyPtr> pieces;
    b.output.collect_proxies(pieces);
    int64_t start = 0;
    for (const ProxyPtr& piece : pieces) {
      const int64_t len = piece->shape[dim];
      BoundSymbol step;
      step.sym = &narrow;
      step.args = {Value(base), Value(dim), Value(start), Value(len)};
      step.output = Value(piece);
      add_view(piece, View{base, std::move(step), ViewKind::Narrow});
      start += len;
    }
  }

  const Proxy* root(const Proxy* p) const {
    for (auto it = views_.find(p); it != views_.end(); it = views_.find(p))
      p = it->second.base.get();
    return p;
  }

  // The current value of an identity, re-deriving a stale view from its base.
  Value read(const ProxyPtr& p) {
    auto v = views_.find(p.get());
    if (v != views_.end()) {
      const Proxy* r = root(p.get());
      uint64_t now = version_[r];
      if (!group_of_.count(r) && seen_[p.get()] != now) {
        const View& view = v->second;
        std::vector<Value> args = view.step.args;
        args[0] = read(view.base);
        for (size_t i = 1; i < args.size(); ++i) args[i] = read_value(args[i]);
        Value nv = emit([&] { return call_symbol(*view.step.sym, std::move(args)); }, grad_of(*p));
        cur_[p.get()] = nv;
        seen_[p.get()] = now;
        return nv;
      }
    }
    auto it = cur_.find(p.get());
    return it == cur_.end() ? Value(p) : it->second;
  }

  void rename(BoundSymbol& b) {
    for (Value& a : b.args) a = read_value(a);
    for (BoundSymbol& s : b.subsymbols) rename(s);
  }

  // A write can give a value autograd history it did not have when it was
  // traced (t = a * 1.0; t.add_(w) with w requiring grad): as in eager, what
  // is computed from it afterwards requires grad. Such outputs get new
  // proxies that say so (proxies are shared with the traced program, never
  // changed), and later reads use them.
  void refresh_grad(BoundSymbol& c) {
    std::unordered_map<const Proxy*, Value> fresh;
    refresh_in(c, fresh);
    for (const auto& [old, v] : fresh) cur_[old] = v;
  }

  // Decomposition first: a composite's outputs are its last prims' outputs.
  void refresh_in(BoundSymbol& b, std::unordered_map<const Proxy*, Value>& fresh) {
    for (Value& a : b.args) a = replaced(a, fresh);
    for (BoundSymbol& s : b.subsymbols) refresh_in(s, fresh);
    std::vector<ProxyPtr> args = b.flat_args();
    if (std::any_of(args.begin(), args.end(),
                    [](const ProxyPtr& p) { return p->is_tensor() && p->requires_grad; }))
      for (const ProxyPtr& p : b.flat_outputs()) {
        if (fresh.count(p.get()) || !p->is_tensor() || p->requires_grad || !is_float(p->dtype) ||
            !grad_of(*p))
          continue;
        auto np = std::make_shared<Proxy>(*p);
        np->name = ctx_.trace().new_name("t");
        np->requires_grad = true;
        fresh[p.get()] = Value(np);
      }
    b.output = replaced(b.output, fresh);
  }

  static Value replaced(const Value& v, const std::unordered_map<const Proxy*, Value>& m) {
    if (v.is_proxy()) {
      auto it = m.find(v.proxy().get());
      return it == m.end() ? v : it->second;
    }
    if (!v.is_list()) return v;
    std::vector<Value> l;
    for (const Value& e : v.as_list()) l.push_back(replaced(e, m));
    return Value(std::move(l));
  }

  void write(const BoundSymbol& b) {
    const ProxyPtr& dst = b.args[1].proxy();
    const ProxyPtr& written = b.output.proxy();
    Value src = read(b.args[0].proxy());
    const Proxy* r = root(dst.get());
    if (auto g = group_of_.find(r); g != group_of_.end()) {
      // Storage shared at run time: write in place, then rename every alias
      // behind a barrier so no read can move above the write.
      BoundSymbol c = b;
      c.args = {src, read(dst)};
      push(std::move(c));
      // The barrier reads the write's output, so it (and every later read) stays after it.
      std::vector<ProxyPtr>& members = members_[g->second];
      if (std::find(members.begin(), members.end(), dst) == members.end()) members.push_back(dst);
      cur_[dst.get()] = b.output;
      std::vector<Value> now;
      for (const ProxyPtr& m : members) now.push_back(read(m));
      static const Symbol& barrier = prims::symbol("prims.update_aliases");
      Value renamed =
          emit([&] { return call_symbol(barrier, {Value(std::move(now))}); }, grad_of(*written));
      for (size_t i = 0; i < members.size(); ++i) cur_[members[i].get()] = renamed.as_list()[i];
      return;
    }
    // Pure form: dst now holds src; each base on the way to the root gets the
    // new value of its view scattered back in.
    std::vector<const Proxy*> path = {dst.get()};
    cur_[dst.get()] = src;
    Value nv = src;
    for (const Proxy* p = dst.get(); views_.count(p);) {
      const View& v = views_.at(p);
      nv = scatter(v, *p, read(v.base), nv, grad_of(*written));
      p = v.base.get();
      cur_[p] = nv;
      path.push_back(p);
    }
    uint64_t now = ++version_[r];
    for (const Proxy* p : path) seen_[p] = now;
    cur_[written.get()] = src;
  }

  // The new value of a view's base, given the base's value and the view's new value.
  Value scatter(const View& v, const Proxy& view, const Value& base, const Value& nv, bool grad) {
    const Proxy& b = *base.proxy();
    const std::vector<Value>& a = v.step.args;
    return emit(
        [&]() -> Value {
          switch (v.kind) {
            case ViewKind::Reshape:
              return ltorch::reshape(nv, b.shape);
            case ViewKind::Transpose:
              return ltorch::transpose(nv, a[1].as_int(), a[2].as_int());
            case ViewKind::Permute: {
              std::vector<int64_t> inverse(b.ndim());
              const std::vector<int64_t>& dims = a[1].as_int_list();
              for (size_t i = 0; i < dims.size(); ++i) inverse[wrap(dims[i], b.ndim())] = i;
              return ltorch::permute(nv, inverse);
            }
            case ViewKind::Narrow:
            case ViewKind::Select: {
              const bool narrow = v.kind == ViewKind::Narrow;
              const int64_t dim = wrap(a[1].as_int(), b.ndim()), size = b.shape[dim];
              const int64_t start = wrap(a[2].as_int(), size), len = narrow ? a[3].as_int() : 1;
              std::vector<Value> pieces;
              if (start > 0) pieces.push_back(ltorch::narrow(base, dim, 0, start));
              pieces.push_back(narrow ? nv : ltorch::unsqueeze(nv, dim));
              if (start + len < size)
                pieces.push_back(ltorch::narrow(base, dim, start + len, size - start - len));
              return pieces.size() == 1 ? pieces[0] : ltorch::cat(pieces, dim);
            }
            case ViewKind::Expand:
              THUNDER_CHECK(
                  b.shape == view.shape,
                  "prims.copy_: in-place write into {}, an expanded view of {} ({} to {}): "
                  "more than one element would refer to the same memory location",
                  view.name, v.base->name, shape_str(b.shape), shape_str(view.shape));
              return nv;
          }
          return nv;
        },
        grad);
  }

  // Runs `f` recording into a scratch scope, then appends what it recorded
  // with the current statement's tags.
  template <typename F>
  Value emit(F&& f, bool grad_enabled) {
    std::vector<BoundSymbol> made;
    ctx_.push_scope(&made, nullptr);
    ctx_.grad_enabled = grad_enabled;
    Value out;
    try {
      out = f();
    } catch (...) {
      ctx_.pop_scope();
      throw;
    }
    ctx_.pop_scope();
    for (BoundSymbol& s : made) push(std::move(s));
    return out;
  }

  void push(BoundSymbol b) {
    b.tags |= tags_;
    for (const ProxyPtr& p : b.flat_args())
      if (backward_values_.count(p.get())) b.tags |= kBackward;
    if (b.has_tag(StmtTag::BACKWARD))
      for (const ProxyPtr& p : b.flat_outputs()) backward_values_.insert(p.get());
    out_.push_back(std::move(b));
  }

  // Values made for a statement traced under no_grad stay detached.
  static bool grad_of(const Proxy& p) { return !p.has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH); }

  TraceCtx& ctx_;
  std::vector<BoundSymbol>& out_;
  std::unordered_map<const Proxy*, Value> cur_;
  std::unordered_map<const Proxy*, View> views_;
  std::unordered_map<const Proxy*, uint64_t> version_, seen_;
  std::unordered_map<const Proxy*, size_t> group_of_;
  std::vector<std::vector<ProxyPtr>> members_;  // per alias group: every identity aliasing it
  std::unordered_set<const Proxy*> backward_values_;
  uint32_t tags_ = 0;
};

}  // namespace

bool has_inplace(const Trace& trace) { return contains_copy(trace.bsyms); }

Functionalized functionalize(const Trace& trace,
                             const std::vector<std::vector<ProxyPtr>>& alias_groups) {
  Functionalized f;
  f.trace = trace.empty_like();
  TracingScope scope(f.trace);
  Functionalizer fz(scope.ctx(), alias_groups);
  fz.run(trace.bsyms, 0);
  Value out = fz.read_value(trace.output);
  fz.written(trace.inputs, f);
  if (!f.written_inputs.empty()) {
    std::string w;
    for (size_t i = 0; i < f.written_inputs.size(); ++i)
      w += (i ? ", " : "") + f.written_inputs[i]->name + " <- " + f.new_values[i]->name;
    f.trace.notes.push_back("written back into the caller's tensors after the call: " + w);
    std::vector<Value> all = {out};
    for (const ProxyPtr& p : f.new_values) all.emplace_back(p);
    out = Value(std::move(all));
  }
  f.trace.output = std::move(out);
  return f;
}

}  // namespace thunder
