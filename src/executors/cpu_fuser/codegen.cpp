#include "codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fusible.h"
#include "loop_transforms.h"
#include "print_cpp.h"
#include "thunder/core/error.h"
#include "thunder/prims/prims.h"
#include "vector_math.h"

namespace thunder::cpu_fuser {

namespace {

using ir::BinOp;
using ir::Block;
using ir::Expr;
using Idx = std::vector<Expr>;  // one index expression per dim

// Elements of work below which a loop nest runs on the calling thread, and the
// work per OpenMP chunk above it.
constexpr int64_t kParallelWork = 32768;
constexpr int64_t kChunkWork = 16384;
// Elements of a draw's tile in a flat loop (a multiple of 4: whole counters),
// and the longest row a row loop fills as one tile.
constexpr int64_t kTile = 1024;
constexpr int64_t kMaxRowTile = 4096;
// Kept elements per iteration of a leading sum's nest: its accumulators fit
// a stack tile and each row's read is a few whole cache lines.
constexpr int64_t kSumColumns = 64;

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

// Sum of idx[i] * stride[i], skipping size-1 dims (their index is always 0).
Expr linear(const Shape& shape, const Idx& idx) {
  Shape st = contiguous_strides(shape);
  Expr e;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    Expr term = st[i] == 1 ? idx[i] : ir::binary(BinOp::Mul, idx[i], ir::int_lit(st[i]));
    e = e ? ir::binary(BinOp::Add, e, term) : term;
  }
  return e ? e : ir::int_lit(0);
}

// Index expressions of the leading `dims` of `shape` from a flat index o.
Idx unflatten(const Expr& o, const Shape& shape, size_t dims) {
  Shape st = contiguous_strides(Shape(shape.begin(), shape.begin() + dims));
  Idx idx;
  for (size_t i = 0; i < dims; ++i) {
    Expr e = st[i] == 1 ? o : ir::binary(BinOp::Div, o, ir::int_lit(st[i]));
    idx.push_back(i == 0 ? e : ir::binary(BinOp::Mod, e, ir::int_lit(shape[i])));
  }
  return idx;
}

std::string max_of(DType d) {
  switch (d) {
    case DType::b8:
      return "true";
    case DType::u8:
      return "255";
    case DType::i8:
      return "127";
    case DType::i16:
      return "32767";
    case DType::i32:
      return "2147483647";
    default:
      return "__INT64_MAX__";
  }
}

std::string min_of(DType d) {
  switch (d) {
    case DType::b8:
      return "false";
    case DType::u8:
      return "0";
    case DType::i8:
      return "(-128)";
    case DType::i16:
      return "(-32768)";
    case DType::i32:
      return "(-2147483647 - 1)";
    default:
      return "(-__INT64_MAX__ - 1)";
  }
}

// Reduced dims of b: the innermost `m` of its input's (the leading `m` for a
// leading_sum).
size_t reduced_dims(const BoundSymbol& b) {
  const size_t n = b.args[0].proxy()->shape.size();
  static const Symbol& argmax = prims::symbol("prims.argmax");
  if (b.sym == &argmax) return b.args[1].is_none() ? n : (n == 0 ? 0 : 1);
  return b.args[1].as_int_list().size();
}

// Builds a region's kernel as loop IR: one nest per reduction (or one row
// loop for all of them), per cat piece and per output shape. Values are
// computed where they are used: each prim's value is a Let in the innermost
// loop that reads it, views are index arithmetic, and only reduction
// results are materialised (outputs or scratch buffers).
class Generator {
 public:
  explicit Generator(const BoundSymbol& region) : region_(region) {
    for (const BoundSymbol& b : region.subsymbols)
      for (const ProxyPtr& p : b.flat_outputs()) producer_[p.get()] = &b;
    // Flat: only elementwise prims over one shape (horizontal merging can
    // put independent shapes into one region).
    flat_ = true;
    const Shape* shape = nullptr;
    for (const BoundSymbol& b : region.subsymbols) {
      flat_ = flat_ && *fusible_kind(*b.sym) == OpKind::Elementwise;
      for (const ProxyPtr& p : b.flat_outputs()) {
        if (!shape) shape = &p->shape;
        flat_ = flat_ && p->shape == *shape;
      }
    }
  }

  KernelSource run() {
    KernelSource ks;
    ks.flat = flat_;
    int slot = 0;
    for (const Value& v : region_.args) {
      const Proxy& p = *v.proxy();
      if (p.is_number()) {
        std::string name = fmt::format("s{}", slot);
        kernel_.params.push_back({.name = name,
                                  .type = is_float(p.dtype) ? ir::Type::F64 : ir::Type::I64,
                                  .slot = slot,
                                  .buffer = false});
        numbers_[&p] = std::move(name);
      } else {
        add_buffer(p, fmt::format("in{}", slot), slot, /*writable=*/false);
      }
      ++slot;
    }
    std::vector<const Proxy*> outs;
    for (const Value& v : region_.output.as_list()) outs.push_back(v.proxy().get());
    for (const Proxy* p : outs) {
      add_buffer(*p, fmt::format("out{}", slot), slot, true);
      ks.outputs.push_back({p->shape, p->dtype});
      ++slot;
    }
    std::vector<const BoundSymbol*> reductions, cats;
    for (const BoundSymbol& b : region_.subsymbols) {
      if (*fusible_kind(*b.sym) == OpKind::Reduction) reductions.push_back(&b);
      if (*fusible_kind(*b.sym) == OpKind::Cat) cats.push_back(&b);
    }
    if (!reductions.empty() && cats.empty()) {
      if (std::optional<ir::Nest> rows = row_nest(reductions, outs, slot)) {
        kernel_.nests.push_back(std::move(*rows));
        return finish(ks);
      }
    }
    // Reduction results are materialised (outputs, else scratch), in order.
    for (const BoundSymbol* b : reductions) {
      const Proxy& r = *b->output.proxy();
      if (!buffers_.count(&r)) {
        add_buffer(r, fmt::format("tmp{}", slot), slot, true);
        ks.scratch.push_back({r.shape, r.dtype});
        ++slot;
      }
      kernel_.nests.push_back(leading_sum(*b) ? leading_sum_nest(*b) : reduction_nest(*b));
      materialised_.insert(&r);
    }
    // Cats, one loop nest per piece; the other outputs, one loop nest per shape.
    std::vector<bool> done(outs.size(), false);
    for (const BoundSymbol* b : cats) {
      cat_nests(*b);
      for (size_t i = 0; i < outs.size(); ++i)
        done[i] = done[i] || outs[i] == b->output.proxy().get();
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      if (done[i] || materialised_.count(outs[i])) continue;
      std::vector<const Proxy*> group;
      for (size_t j = i; j < outs.size(); ++j)
        if (!done[j] && !materialised_.count(outs[j]) && outs[j]->shape == outs[i]->shape) {
          group.push_back(outs[j]);
          done[j] = true;
        }
      elementwise_nest(group);
    }
    return finish(ks);
  }

 private:
  struct Buffer {
    std::string name;
    DType dtype;
  };

  // The transformations after building, then printing (the lowering, in order).
  KernelSource finish(KernelSource& ks) {
    int names = 0;
    for (ir::Nest& nest : kernel_.nests) {
      nest.body = ir::hoist_invariants(nest.body);
      nest.body = ir::tile_draws(nest.body, kTile, kMaxRowTile, names);
      ir::parallelize(nest, kParallelWork, kChunkWork);
    }
    ks.code = fmt::format("{}\n{}", kernel_preamble(), ir::print_cpp(kernel_));
    return std::move(ks);
  }

  void add_buffer(const Proxy& p, std::string name, int slot, bool writable) {
    kernel_.params.push_back(
        {.name = name, .type = storage_type(p.dtype), .slot = slot, .writable = writable});
    buffers_[&p] = {std::move(name), p.dtype};
  }

  void emit(ir::Stmt s) { block_->push_back(std::move(s)); }

  // A loop whose body `fill` emits; values computed inside stay inside.
  void loop(ir::Loop l, const std::function<void()>& fill) {
    auto memo = memo_;
    Block* outer = block_;
    block_ = &l.body;
    fill();
    block_ = outer;
    memo_ = std::move(memo);
    emit(ir::for_(std::move(l)));
  }

  // A nest over [0, range) whose body `fill` emits.
  ir::Nest nest(int64_t range, int64_t work, const std::function<void()>& fill) {
    return nest(ir::int_lit(range), work, fill);
  }
  ir::Nest nest(Expr range, int64_t work, const std::function<void()>& fill) {
    ir::Nest n{.range = std::move(range), .work = work};
    memo_.clear();
    Block* outer = block_;
    block_ = &n.body;
    fill();
    block_ = outer;
    return n;
  }

  // The nest's loop over its range, whose iterations are the elements of
  // the leading `k` dims of `shape`; `body` gets their index variables.
  void outer_loop(const Shape& shape, size_t k, const std::function<void(const Idx&)>& body) {
    loop({.var = "o", .lo = ir::var("lo"), .hi = ir::var("hi")}, [&] {
      Idx idx = unflatten(ir::var("o"), shape, k);
      for (size_t i = 0; i < idx.size(); ++i) {
        const std::string name = fmt::format("i{}", i);
        emit(ir::let(ir::Type::I64, name, idx[i]));
        idx[i] = ir::var(name);
      }
      body(idx);
    });
  }

  Expr offset(const Proxy& p, const Idx& idx) const {
    return flat_ ? idx[0] : linear(p.shape, idx);
  }

  // Whether p's values are read from its buffer (an input, or a reduction
  // result materialised earlier) rather than computed.
  bool is_loaded(const Proxy& p) const {
    return buffers_.count(&p) && (materialised_.count(&p) || producer_.count(&p) == 0);
  }

  Expr load(const Proxy& p, const Expr& offset) const {
    const Buffer& b = buffers_.at(&p);
    return ir::load(b.name, storage_type(b.dtype), offset);
  }

  ir::Stmt store(const Proxy& p, const Idx& idx, const Expr& v) const {
    const Buffer& b = buffers_.at(&p);
    return ir::store(b.name, storage_type(b.dtype), offset(p, idx), v);
  }

  // A value as a Let of a new variable, remembered under `key`.
  Expr named(const std::string& key, DType d, const Expr& e) {
    std::string name = fmt::format("v{}", vars_++);
    emit(ir::let(compute_type(d), name, e));
    return memo_[key] = ir::var(name);
  }

  // p's element at linear offset `lin` of its buffer.
  Expr loaded_at(const Proxy& p, const Expr& lin) {
    const std::string key = p.name + "@" + ir::print_expr(lin);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    return named(key, p.dtype, load(p, lin));
  }

  // The value of proxy p at index idx, in p's compute type; the Lets it
  // needs go into the current block.
  Expr value_at(const Proxy& p, const Idx& idx) {
    if (p.is_number()) return ir::var(numbers_.at(&p));
    std::string key = p.name;
    for (const Expr& i : idx) key += "," + ir::print_expr(i);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    if (is_loaded(p)) return named(key, p.dtype, load(p, offset(p, idx)));
    const BoundSymbol& b = *producer_.at(&p);
    if (*fusible_kind(*b.sym) == OpKind::View) return memo_[key] = view(b, idx);
    return named(key, p.dtype, elementwise(b, idx));
  }

  Expr view(const BoundSymbol& b, const Idx& idx) {
    const Proxy& a = *b.args[0].proxy();
    const Proxy& out = *b.output.proxy();
    static const Symbol& broadcast_in_dim = prims::symbol("prims.broadcast_in_dim");
    static const Symbol& transpose = prims::symbol("prims.transpose");
    static const Symbol& squeeze = prims::symbol("prims.squeeze");
    Idx in(a.ndim(), ir::int_lit(0));
    if (b.sym == &broadcast_in_dim) {
      const auto& dims = b.args[2].as_int_list();
      for (size_t i = 0; i < dims.size(); ++i)
        if (a.shape[i] != 1) in[i] = idx[dims[i]];
    } else if (b.sym == &transpose) {
      const auto& perm = b.args[1].as_int_list();
      for (size_t i = 0; i < perm.size(); ++i) in[perm[i]] = idx[i];
    } else if (b.sym == &squeeze) {
      const auto& dims = b.args[1].as_int_list();
      size_t k = 0;
      for (int64_t i = 0; i < a.ndim(); ++i)
        if (std::find(dims.begin(), dims.end(), i) == dims.end()) in[i] = idx[k++];
    } else {  // prims.reshape
      // Of a buffer (contiguous): the same linear offset, no index arithmetic.
      if (is_loaded(a)) return loaded_at(a, linear(out.shape, idx));
      in = reshape_index(a.shape, out.shape, idx);
    }
    return value_at(a, in);
  }

  // Index into `from` of the element at `idx` of its reshape to `to`.
  static Idx reshape_index(const Shape& from, const Shape& to, const Idx& idx) {
    Idx in(from.size(), ir::int_lit(0));
    std::vector<size_t> fi, ti;  // dims of size != 1
    for (size_t i = 0; i < from.size(); ++i)
      if (from[i] != 1) fi.push_back(i);
    for (size_t i = 0; i < to.size(); ++i)
      if (to[i] != 1) ti.push_back(i);
    bool same = fi.size() == ti.size();
    for (size_t k = 0; same && k < fi.size(); ++k) same = from[fi[k]] == to[ti[k]];
    if (same) {  // only size-1 dims come or go
      for (size_t k = 0; k < fi.size(); ++k) in[fi[k]] = idx[ti[k]];
      return in;
    }
    const Expr lin = linear(to, idx);
    Shape st = contiguous_strides(from);
    for (size_t k : fi) {
      Expr e = st[k] == 1 ? lin : ir::binary(BinOp::Div, lin, ir::int_lit(st[k]));
      in[k] = k == fi.front() ? e : ir::binary(BinOp::Mod, e, ir::int_lit(from[k]));
    }
    return in;
  }

  // An elementwise prim's element at idx, by its emitter (fusible.cpp).
  Expr elementwise(const BoundSymbol& b, const Idx& idx) {
    const Emitter emit_value = emitter(*b.sym);
    // fusible.cpp admitted the op only with an emitter, so a missing one is a thunder bug.
    if (!emit_value) internal_fail(__FILE__, __LINE__, "cpu_fuser: no emitter for {}", b.sym->id);
    const Proxy& out = *b.output.proxy();
    static const Symbol& where = prims::symbol("prims.where");
    static const Symbol& philox = prims::symbol("prims.uniform_philox");
    // Tensor operands' Lets in argument order, whatever order an emitter asks
    // in (C++ leaves the order of a call's arguments open): the source, hence
    // its cache key, must not depend on the compiler that built thunder.
    // A draw's seed and offset are words read by `word`, not elements.
    if (b.sym != &philox)
      for (const Value& v : b.args)
        if (v.is_tensor()) value_at(*v.proxy(), idx);
    // Literals take the dtype of the tensor operands (for where: the values').
    DType operand = out.dtype;
    for (size_t i = b.sym == &where ? 1 : 0; i < b.args.size(); ++i)
      if (b.args[i].is_tensor()) {
        operand = b.args[i].proxy()->dtype;
        break;
      }
    const EmitContext c{
        .b = b,
        .operand = operand,
        .out = out.dtype,
        .arg = [&](size_t i, DType d) -> Expr {
          const Value& v = b.args[i];
          if (v.is_tensor()) return value_at(*v.proxy(), idx);
          if (v.is_number_proxy())
            return round_to(d, ir::cast(compute_type(d), value_at(*v.proxy(), idx)));
          return literal(v, d);
        },
        // Seed and offset: ints, int number proxies, or i64[] tensors (region
        // inputs read directly: a flat nest would index them with its i).
        .word = [&](size_t i) -> Expr {
          const Value& v = b.args[i];
          if (!v.is_proxy()) return ir::cast(ir::Type::U64, literal(v, DType::i64));
          const Proxy& p = *v.proxy();
          if (p.is_tensor() && buffers_.count(&p) && !producer_.count(&p))
            return ir::cast(ir::Type::U64, load(p, ir::int_lit(0)));
          return ir::cast(ir::Type::U64, value_at(p, p.is_tensor() && !flat_ ? Idx{} : idx));
        },
        .element = idx.empty() ? ir::int_lit(0) : offset(out, idx),
        .first_index = idx.empty() ? ir::int_lit(0) : idx[0],
    };
    return emit_value(c);
  }

  // One loop over the elements of `shape` (flat, or rows of its last dim)
  // storing the outputs of that shape.
  void elementwise_nest(const std::vector<const Proxy*>& outs) {
    const Shape& shape = outs[0]->shape;
    auto store_all = [&](const Idx& idx) {
      for (const Proxy* p : outs) emit(store(*p, idx, value_at(*p, idx)));
    };
    // simd: the elements are independent (GCC's alias checks and cost model
    // would leave loops with several outputs, selects or vm_ calls scalar).
    if (flat_ || shape.size() <= 1) {
      const Expr range = flat_ ? ir::var("n") : ir::int_lit(numel(shape));
      kernel_.nests.push_back(nest(range, numel(shape), [&] {
        loop({.var = "i", .lo = ir::var("lo"), .hi = ir::var("hi"), .vector = true},
             [&] { store_all(shape.empty() && !flat_ ? Idx{} : Idx{ir::var("i")}); });
      }));
      return;
    }
    const size_t k = shape.size() - 1;
    kernel_.nests.push_back(nest(numel(Shape(shape.begin(), shape.end() - 1)), numel(shape), [&] {
      outer_loop(shape, k, [&](const Idx& rows) {
        loop({.var = "j", .lo = ir::int_lit(0), .hi = ir::int_lit(shape.back()), .vector = true},
             [&] {
               Idx idx = rows;
               idx.push_back(ir::var("j"));
               store_all(idx);
             });
      });
    }));
  }

  // prims.cat of 1-D values: each piece's loop computes it and writes its
  // slice of the output, so packing computed values is one pass (nothing in
  // the region reads the output: form_regions sees to it).
  void cat_nests(const BoundSymbol& b) {
    const Proxy& out = *b.output.proxy();
    int64_t at = 0;
    for (const Value& v : b.args[0].as_list()) {
      const Proxy& piece = *v.proxy();
      const int64_t n = piece.numel();
      if (n == 0) continue;
      kernel_.nests.push_back(nest(n, n, [&] {
        loop({.var = "i", .lo = ir::var("lo"), .hi = ir::var("hi"), .vector = true}, [&] {
          const Expr i = ir::var("i");
          const Expr x = value_at(piece, {i});
          emit(store(out, {at == 0 ? i : ir::binary(BinOp::Add, ir::int_lit(at), i)}, x));
        });
      }));
      at += n;
    }
  }

  // One reduction over the innermost dims, for the kept index `idx`: emits
  // its accumulation loops in a scope of their own and returns the variable
  // holding the result (in the output's compute type).
  Expr reduction_value(const BoundSymbol& b, const Idx& idx) {
    const std::string op(b.sym->name());
    const Proxy& a = *b.args[0].proxy();
    const Proxy& r = *b.output.proxy();
    const size_t m = reduced_dims(b), k = a.shape.size() - m;
    const DType d = a.dtype;
    const bool fl = is_float(d);
    // Float sums accumulate in double: closer to libtorch's cascade summation.
    const ir::Type acc_t =
        (op == "sum" || op == "var") ? (fl ? ir::Type::F64 : ir::Type::I64) : compute_type(d);
    const Expr init = ir::lit(fl ? (op == "amin" ? "__builtin_inf()" : "(-__builtin_inf())")
                                 : (op == "amin" ? max_of(d) : min_of(d)));
    const std::string res = fmt::format("red{}", vars_++);
    emit(ir::decl(compute_type(r.dtype), res));
    Block body;
    Block* outer = block_;
    block_ = &body;
    auto memo = memo_;
    // One pass over the reduced dims: `step(x)` updates the accumulators;
    // the innermost loop is a vector loop with `clauses` unless `scalar`.
    auto pass = [&](std::vector<ir::Reduction> clauses, bool scalar,
                    const std::function<void(const Expr&)>& step) {
      std::function<void(size_t, Idx)> level = [&](size_t j, Idx full) {
        if (j == m) return step(value_at(a, full));
        ir::Loop l{.var = fmt::format("r{}", j),
                   .lo = ir::int_lit(0),
                   .hi = ir::int_lit(a.shape[k + j]),
                   .vector = j + 1 == m && !scalar};
        if (l.vector) l.reductions = clauses;
        full.push_back(ir::var(l.var));
        loop(std::move(l), [&] { level(j + 1, full); });
      };
      auto saved = memo_;
      level(0, idx);
      memo_ = std::move(saved);
    };
    Expr result;
    const Expr acc = ir::var("acc");
    if (op == "sum") {
      emit(ir::decl(acc_t, "acc", ir::int_lit(0)));
      pass({{"+", "acc"}}, false, [&](const Expr& x) { emit(ir::assign("acc", "+=", x)); });
      result = acc;
    } else if (op == "amax" || op == "amin") {
      // Vectorised: a plain max/min, plus a flag for NaN (which wins, as in libtorch).
      emit(ir::decl(acc_t, "acc", init));
      const BinOp cmp = op == "amax" ? BinOp::Gt : BinOp::Lt;
      std::vector<ir::Reduction> clauses{{op == "amax" ? "max" : "min", "acc"}};
      auto keep = [&](const Expr& x) {
        emit(ir::assign("acc", "=", ir::select(ir::binary(cmp, x, acc), x, acc)));
      };
      if (fl) {
        emit(ir::decl(ir::Type::I32, "nan", ir::int_lit(0)));
        clauses.push_back({"|", "nan"});
        pass(clauses, false, [&](const Expr& x) {
          emit(ir::assign("nan", "|=", ir::binary(BinOp::Ne, x, x)));
          keep(x);
        });
        emit(ir::if_(ir::var("nan"), {ir::assign("acc", "=", ir::lit("__builtin_nanf(\"\")"))}));
      } else {
        pass(clauses, false, keep);
      }
      result = acc;
    } else if (op == "argmax") {
      const Expr best = ir::var("best");
      emit(ir::decl(acc_t, "best", init));
      emit(ir::decl(ir::Type::I64, "best_i", ir::int_lit(0)));
      emit(ir::decl(ir::Type::I64, "pos", ir::int_lit(0)));
      pass({}, true, [&](const Expr& x) {
        Expr better = ir::binary(BinOp::Gt, x, best);
        if (fl)  // NaN wins, the first one
          better = ir::binary(BinOp::Or, better,
                              ir::binary(BinOp::And, ir::binary(BinOp::Ne, x, x),
                                         ir::binary(BinOp::Eq, best, best)));
        emit(ir::if_(better,
                     {ir::assign("best", "=", x), ir::assign("best_i", "=", ir::var("pos"))}));
        emit(ir::assign("pos", "+=", ir::int_lit(1)));
      });
      result = ir::var("best_i");
    } else {  // var: two passes (mean, then squared deviations), recomputing the input
      const int64_t count = numel(Shape(a.shape.begin() + k, a.shape.end()));
      const double correction = b.args[2].to_double();
      emit(ir::decl(ir::Type::F64, "s1", ir::int_lit(0)));
      pass({{"+", "s1"}}, false, [&](const Expr& x) { emit(ir::assign("s1", "+=", x)); });
      emit(ir::let(ir::Type::F64, "mean",
                   ir::binary(BinOp::Div, ir::var("s1"), ir::int_lit(count))));
      emit(ir::decl(ir::Type::F64, "s2", ir::int_lit(0)));
      pass({{"+", "s2"}}, false, [&](const Expr& x) {
        const Expr dev = ir::binary(BinOp::Sub, ir::cast(ir::Type::F64, x), ir::var("mean"));
        emit(ir::assign("s2", "+=", ir::binary(BinOp::Mul, dev, dev)));
      });
      const double denom = static_cast<double>(count) - correction;
      result = ir::binary(BinOp::Div, ir::var("s2"), ir::lit(double_literal(std::max(denom, 0.0))));
    }
    emit(ir::assign(res, "=", ir::cast(compute_type(r.dtype), round_to(r.dtype, result))));
    memo_ = std::move(memo);
    block_ = outer;
    emit(ir::scope(std::move(body)));
    return ir::var(res);
  }

  // A nest over the kept dims of one reduction, storing its result.
  ir::Nest reduction_nest(const BoundSymbol& b) {
    const Proxy& a = *b.args[0].proxy();
    const size_t k = a.shape.size() - reduced_dims(b);
    return nest(numel(Shape(a.shape.begin(), a.shape.begin() + k)), a.numel(), [&] {
      outer_loop(a.shape, k, [&](const Idx& idx) {
        emit(store(*b.output.proxy(), idx, reduction_value(b, idx)));
      });
    });
  }

  // A sum over the leading dims: iterations are blocks of kSumColumns kept
  // elements, each summed over every reduced row (reading the input in memory
  // order) into a stack tile in the accumulation type of reduction_value, then
  // stored rounded. Threads split the columns, not the rows, so no partial
  // sums are combined and the result does not depend on the thread count.
  ir::Nest leading_sum_nest(const BoundSymbol& b) {
    const Proxy& a = *b.args[0].proxy();
    const Proxy& r = *b.output.proxy();
    const size_t m = reduced_dims(b);
    const Shape kept(a.shape.begin() + m, a.shape.end());
    const int64_t cols = numel(kept);
    const ir::Type acc_t = is_float(a.dtype) ? ir::Type::F64 : ir::Type::I64;
    const std::string acc = fmt::format("sum{}", vars_++);
    const std::string c0 = fmt::format("c{}", vars_++), c1 = fmt::format("c{}", vars_++);
    const Expr j = ir::var("j");
    const Expr at = ir::binary(BinOp::Sub, j, ir::var(c0));  // j's accumulator
    // A vector loop over the block's columns.
    auto columns = [&](const std::function<void()>& body) {
      loop({.var = "j", .lo = ir::var(c0), .hi = ir::var(c1), .vector = true}, body);
    };
    return nest((cols + kSumColumns - 1) / kSumColumns, a.numel(), [&] {
      emit(ir::alloc(acc_t, acc, std::max<int64_t>(1, std::min(cols, kSumColumns))));
      loop({.var = "o", .lo = ir::var("lo"), .hi = ir::var("hi")}, [&] {
        const Expr first = ir::binary(BinOp::Mul, ir::var("o"), ir::int_lit(kSumColumns));
        emit(ir::let(ir::Type::I64, c0, first));
        const Expr end = ir::binary(BinOp::Add, ir::var(c0), ir::int_lit(kSumColumns));
        emit(ir::let(
            ir::Type::I64, c1,
            ir::select(ir::binary(BinOp::Lt, end, ir::int_lit(cols)), end, ir::int_lit(cols))));
        columns([&] { emit(ir::store(acc, acc_t, at, ir::int_lit(0))); });
        std::function<void(size_t, Idx)> rows = [&](size_t d, Idx idx) {
          if (d == m)
            return columns([&] {
              Idx full = idx;
              for (const Expr& e : unflatten(j, kept, kept.size())) full.push_back(e);
              const Expr x = value_at(a, full);
              emit(ir::store(acc, acc_t, at, ir::binary(BinOp::Add, ir::load(acc, acc_t, at), x)));
            });
          ir::Loop l{
              .var = fmt::format("r{}", d), .lo = ir::int_lit(0), .hi = ir::int_lit(a.shape[d])};
          idx.push_back(ir::var(l.var));
          loop(std::move(l), [&] { rows(d + 1, idx); });
        };
        rows(0, {});
        const Buffer& out = buffers_.at(&r);
        columns([&] {
          const Expr v =
              ir::cast(compute_type(r.dtype), round_to(r.dtype, ir::load(acc, acc_t, at)));
          emit(ir::store(out.name, storage_type(out.dtype), j, v));
        });
      });
    });
  }

  // Row fusion: when every reduction keeps the same leading dims and every
  // output starts with them, each reduction and each output is built as a
  // nest over those dims (rows), and ir::fuse_rows makes them one loop over
  // rows whose reductions stay in registers (no scratch memory): a softmax
  // or layer norm row is read from cache instead of memory by its later
  // passes. Refused when a reduction result is read at another row; then
  // nothing of this attempt stays and the region gets one nest per reduction.
  std::optional<ir::Nest> row_nest(const std::vector<const BoundSymbol*>& reductions,
                                   const std::vector<const Proxy*>& outs, int slot) {
    // A leading sum's rows are its reduced dims: nothing to fuse by row.
    for (const BoundSymbol* b : reductions)
      if (leading_sum(*b)) return std::nullopt;
    const Proxy& a0 = *reductions.front()->args[0].proxy();
    const size_t k = a0.shape.size() - reduced_dims(*reductions.front());
    const Shape outer(a0.shape.begin(), a0.shape.begin() + k);
    if (k == 0) return std::nullopt;
    int64_t work = 0;
    for (const BoundSymbol* b : reductions) {
      const Proxy& a = *b->args[0].proxy();
      if (a.shape.size() - reduced_dims(*b) != k ||
          !std::equal(outer.begin(), outer.end(), a.shape.begin()))
        return std::nullopt;
      work += a.numel();
    }
    for (const Proxy* p : outs) {
      if (p->shape.size() < k || !std::equal(outer.begin(), outer.end(), p->shape.begin()))
        return std::nullopt;
      work += p->numel();
    }
    const size_t params = kernel_.params.size();
    std::set<std::string> scratch;
    std::vector<ir::Nest> nests;
    for (const BoundSymbol* b : reductions) {
      const Proxy& r = *b->output.proxy();
      if (!buffers_.count(&r)) {
        scratch.insert(fmt::format("tmp{}", slot));
        add_buffer(r, fmt::format("tmp{}", slot), slot, true);
        ++slot;
      }
      nests.push_back(reduction_nest(*b));
      materialised_.insert(&r);
    }
    for (const Proxy* p : outs) {
      if (materialised_.count(p)) continue;
      nests.push_back(nest(numel(outer), p->numel(), [&] {
        outer_loop(outer, k, [&](const Idx& rows) {
          std::function<void(size_t, Idx)> level = [&](size_t d, Idx idx) {
            if (d == p->shape.size()) return emit(store(*p, idx, value_at(*p, idx)));
            ir::Loop l{.var = fmt::format("j{}", d),
                       .lo = ir::int_lit(0),
                       .hi = ir::int_lit(p->shape[d]),
                       .vector = d + 1 == p->shape.size()};
            idx.push_back(ir::var(l.var));
            loop(std::move(l), [&] { level(d + 1, idx); });
          };
          level(k, rows);
        });
      }));
    }
    std::string why;
    std::optional<ir::Nest> fused = ir::fuse_rows(nests, scratch, why);
    // Scratch buffers exist only where rows are not fused.
    kernel_.params.resize(params);
    for (auto it = buffers_.begin(); it != buffers_.end();)
      it = scratch.count(it->second.name) ? buffers_.erase(it) : std::next(it);
    materialised_.clear();
    if (fused) fused->work = work;
    return fused;
  }

  const BoundSymbol& region_;
  bool flat_;
  ir::Kernel kernel_;
  Block* block_ = nullptr;  // where emit() appends
  std::unordered_map<const Proxy*, const BoundSymbol*> producer_;
  std::unordered_map<const Proxy*, Buffer> buffers_;
  std::unordered_map<const Proxy*, std::string> numbers_;
  std::unordered_set<const Proxy*> materialised_;
  // Values computed in the current block or a block around it, by proxy and index.
  std::unordered_map<std::string, Expr> memo_;
  int vars_ = 0;
};

}  // namespace

KernelSource generate_kernel(const BoundSymbol& region) { return Generator(region).run(); }

}  // namespace thunder::cpu_fuser
