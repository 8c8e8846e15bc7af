#include "codegen.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "fusible.h"
#include "thunder/core/error.h"
#include "thunder/prims/prims.h"
#include "vector_math.h"

namespace thunder::cpu_fuser {

namespace {

using Idx = std::vector<std::string>;

// Elements of work below which a loop nest runs on the calling thread, and the
// work per OpenMP chunk above it.
constexpr int64_t kParallelWork = 32768;
constexpr int64_t kChunkWork = 16384;
// Elements of a draw's tile in a flat loop (a multiple of 4: whole counters),
// and the longest row a row loop fills as one tile.
constexpr int64_t kTile = 1024;
constexpr int64_t kMaxRowTile = 4096;

std::string storage_type(DType d) {
  switch (d) {
    case DType::b8:
      return "bool";
    case DType::u8:
      return "uint8_t";
    case DType::i8:
      return "int8_t";
    case DType::i16:
      return "int16_t";
    case DType::i32:
      return "int32_t";
    case DType::i64:
      return "int64_t";
    case DType::f16:
      return "_Float16";
    case DType::bf16:
      return "uint16_t";
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
  }
  return "";
}

bool is_reduced_float(DType d) { return d == DType::f16 || d == DType::bf16; }

std::string compute_type(DType d) { return is_reduced_float(d) ? "float" : storage_type(d); }

// Rounds a float expression to the precision of `d` (identity for others).
std::string round_to(DType d, const std::string& e) {
  if (d == DType::f16) return "rh(" + e + ")";
  if (d == DType::bf16) return "rbf(" + e + ")";
  return e;
}

std::string double_literal(double x) {
  if (std::isnan(x)) return "__builtin_nan(\"\")";
  if (std::isinf(x)) return x > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  return fmt::format("{:.17g}", x);
}

// A literal number as a value of dtype `d` (rounded to its precision).
std::string literal(const Value& v, DType d) {
  if (is_bool(d)) return v.to_double() != 0 ? "true" : "false";
  if (is_float(d)) {
    std::string e = fmt::format("(({}){})", compute_type(d), double_literal(v.to_double()));
    return round_to(d, e);
  }
  int64_t i = v.kind() == Value::Kind::Int ? v.as_int() : static_cast<int64_t>(v.to_double());
  std::string lit = i == INT64_MIN ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", i);
  return fmt::format("(({}){})", storage_type(d), lit);
}

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
std::string linear(const Shape& shape, const Idx& idx) {
  Shape st = contiguous_strides(shape);
  std::string e;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    std::string term = st[i] == 1 ? idx[i] : fmt::format("{} * {}", idx[i], st[i]);
    e += (e.empty() ? "" : " + ") + term;
  }
  return e.empty() ? "0" : e;
}

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
        decls_ += fmt::format("  const {0} {1} = *(const {0}*)p[{2}];\n",
                              is_float(p.dtype) ? "double" : "int64_t", name, slot);
        numbers_[&p] = name;
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
    if (!reductions.empty() && cats.empty() && row_nest(reductions, outs)) {
      ks.code = fmt::format(
          "{}\n{}extern \"C\" void thunder_kernel(void* const* p, int64_t n) {{\n{}}}\n",
          kernel_preamble(), nests_, kernel_body_);
      return ks;
    }
    // Reduction results are materialised (outputs, else scratch), in order.
    for (const BoundSymbol* b : reductions) {
      const Proxy& r = *b->output.proxy();
      if (!buffers_.count(&r)) {
        add_buffer(r, fmt::format("tmp{}", slot), slot, true);
        ks.scratch.push_back({r.shape, r.dtype});
        ++slot;
      }
      reduction_nest(*b);
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
    ks.code =
        fmt::format("{}\n{}extern \"C\" void thunder_kernel(void* const* p, int64_t n) {{\n{}}}\n",
                    kernel_preamble(), nests_, kernel_body_);
    return ks;
  }

 private:
  struct Buffer {
    std::string name;
    const Proxy* proxy;
  };

  void add_buffer(const Proxy& p, std::string name, int slot, bool writable) {
    // Bools are bytes in memory: gcc does not vectorise loops that load through bool*.
    const std::string t = p.dtype == DType::b8 ? "uint8_t" : storage_type(p.dtype);
    decls_ += fmt::format("  {}{}* __restrict {} = ({}{}*)p[{}];\n", writable ? "" : "const ", t,
                          name, writable ? "" : "const ", t, slot);
    buffers_[&p] = {std::move(name), &p};
  }

  void line(const std::string& s) { body_ += indent_ + s + "\n"; }

  std::string offset(const Proxy& p, const Idx& idx) const {
    return flat_ ? idx[0] : linear(p.shape, idx);
  }

  // Whether p's values are read from its buffer (an input, or a reduction
  // result materialised earlier) rather than computed.
  bool is_loaded(const Proxy& p) const {
    return !row_values_.count(&p) && buffers_.count(&p) &&
           (materialised_.count(&p) || producer_.count(&p) == 0);
  }

  // p's element at linear offset `lin` of its buffer, as a variable.
  std::string loaded_at(const Proxy& p, const std::string& lin) {
    std::string key = p.name + "@" + lin;
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    std::string var = fmt::format("v{}", vars_++);
    line(fmt::format("const {} {} = {};", compute_type(p.dtype), var, load(buffers_.at(&p), lin)));
    return memo_[key] = var;
  }

  std::string load(const Buffer& b, const std::string& offset) const {
    std::string e = fmt::format("{}[{}]", b.name, offset);
    if (b.proxy->dtype == DType::b8) return "(" + e + " != 0)";
    if (b.proxy->dtype == DType::f16) return "(float)" + e;
    if (b.proxy->dtype == DType::bf16) return "bf2f(" + e + ")";
    return e;
  }

  std::string store(const Proxy& p, const Idx& idx, const std::string& v) const {
    const Buffer& b = buffers_.at(&p);
    std::string val = p.dtype == DType::f16    ? "(_Float16)" + v
                      : p.dtype == DType::bf16 ? "f2bf(" + v + ")"
                      : p.dtype == DType::b8   ? "(uint8_t)" + v
                                               : v;
    return fmt::format("{}[{}] = {};", b.name, offset(p, idx), val);
  }

  // The value of proxy p at index idx (one index expression per dim), as an
  // expression of p's compute type; statements it needs go to the body.
  std::string value_at(const Proxy& p, const Idx& idx) {
    if (p.is_number()) return numbers_.at(&p);
    auto row = row_values_.find(&p);
    if (row != row_values_.end()) {
      for (size_t d = 0; d < idx.size(); ++d)
        row_failed_ = row_failed_ || (row_shape_[d] != 1 && idx[d] != row_idx_[d]);
      return row->second;
    }
    std::string key = p.name;
    for (const auto& i : idx) key += "," + i;
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    if (size_t level = invariant_from(idx); level < loops_.size()) return hoisted(p, idx, level);
    std::string expr;
    if (is_loaded(p)) {
      expr = load(buffers_.at(&p), offset(p, idx));
    } else {
      const BoundSymbol& b = *producer_.at(&p);
      if (*fusible_kind(*b.sym) == OpKind::View) return memo_[key] = view(b, idx);
      expr = elementwise(b, idx);
    }
    std::string var = fmt::format("v{}", vars_++);
    line(fmt::format("const {} {} = {};", compute_type(p.dtype), var, expr));
    return memo_[key] = var;
  }

  // Inner loops (not the parallel one), outermost first: where each starts in
  // body_, its indentation and index variable. Values that do not depend on
  // a loop's index are computed once before it (loop-invariant hoisting).
  struct Loop {
    size_t pos;
    std::string indent, var;
  };

  void open_loop(const std::string& var, const std::string& from, const std::string& to,
                 const std::string& pragma) {
    loops_.push_back({body_.size(), indent_, var});
    if (!pragma.empty()) line("#pragma omp " + pragma);
    line(fmt::format("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{", var, from, to));
    indent_ += "  ";
  }

  void close_loop() {
    indent_ = loops_.back().indent;
    loops_.pop_back();
    line("}");
  }

  static bool uses(const std::string& e, const std::string& var) {
    for (size_t at = e.find(var); at != std::string::npos; at = e.find(var, at + 1)) {
      const bool start = at == 0 || !(std::isalnum(e[at - 1]) || e[at - 1] == '_');
      const size_t end = at + var.size();
      if (start && (end == e.size() || !(std::isalnum(e[end]) || e[end] == '_'))) return true;
    }
    return false;
  }

  // The outermost open loop from which on idx uses no loop index
  // (loops_.size() when it uses the innermost's, or when hoisting already).
  size_t invariant_from(const Idx& idx) const {
    if (hoisting_) return loops_.size();
    size_t level = loops_.size();
    while (level > 0) {
      bool used = false;
      for (const std::string& e : idx) used = used || uses(e, loops_[level - 1].var);
      if (used) break;
      --level;
    }
    return level;
  }

  // p at idx computed before loop `level` starts.
  std::string hoisted(const Proxy& p, const Idx& idx, size_t level) {
    std::string body = std::move(body_), indent = indent_;
    body_.clear();
    indent_ = loops_[level].indent;
    hoisting_ = true;
    const std::string v = value_at(p, idx);
    hoisting_ = false;
    std::string text = std::move(body_);
    body_ = std::move(body);
    indent_ = std::move(indent);
    // After what was hoisted there before (the new text may read it).
    body_.insert(loops_[level].pos, text);
    for (size_t l = level; l < loops_.size(); ++l) loops_[l].pos += text.size();
    return v;
  }

  std::string view(const BoundSymbol& b, const Idx& idx) {
    const Proxy& a = *b.args[0].proxy();
    const Proxy& out = *b.output.proxy();
    static const Symbol& broadcast_in_dim = prims::symbol("prims.broadcast_in_dim");
    static const Symbol& transpose = prims::symbol("prims.transpose");
    static const Symbol& squeeze = prims::symbol("prims.squeeze");
    Idx in(a.ndim(), "0");
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
  Idx reshape_index(const Shape& from, const Shape& to, const Idx& idx) {
    Idx in(from.size(), "0");
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
    // Inline (not a variable) so that hoisting sees which loop indices it uses.
    const std::string lin = "(" + linear(to, idx) + ")";
    Shape st = contiguous_strides(from);
    for (size_t k : fi) {
      std::string e = st[k] == 1 ? lin : fmt::format("{} / {}", lin, st[k]);
      in[k] = k == fi.front() ? "(" + e + ")" : fmt::format("({} % {})", e, from[k]);
    }
    return in;
  }

  // prims.uniform_philox: element i of the draw is the element's row-major
  // index in the draw's own shape. Read at the nest's own index, a draw fills
  // a tile before the element loop (one Philox block per counter); read any
  // other way (through a broadcast, a transpose), each element computes its own.
  std::string uniform_philox(const BoundSymbol& b, const Idx& idx) {
    const Proxy& out = *b.output.proxy();
    const bool f64 = out.dtype == DType::f64;
    const DType c = f64 ? DType::f64 : DType::f32;  // philox.h's compute type
    auto bound = [&](const Value& v) {
      return v.is_number_proxy()
                 ? fmt::format("(({}){})", compute_type(c), value_at(*v.proxy(), idx))
                 : literal(v, c);
    };
    // seed and offset: ints, int number proxies, or i64[] tensors (region
    // inputs read directly: a flat nest would index them with its i).
    bool invariant = true;  // no statements in the element loop
    auto word = [&](const Value& v) {
      if (!v.is_proxy()) return fmt::format("(uint64_t){}", literal(v, DType::i64));
      const Proxy& p = *v.proxy();
      auto buf = buffers_.find(&p);
      if (p.is_tensor() && buf != buffers_.end() && !producer_.count(&p))
        return fmt::format("(uint64_t){}[0]", buf->second.name);
      invariant = invariant && p.is_number();
      return fmt::format("(uint64_t){}", value_at(p, p.is_tensor() && !flat_ ? Idx{} : idx));
    };
    const std::string key = word(b.args[3]), counter = word(b.args[4]);
    const std::string lo = bound(b.args[1]), hi = bound(b.args[2]);
    const std::string i = offset(out, idx);
    const char* r = out.dtype == DType::f16 ? "1" : (out.dtype == DType::bf16 ? "2" : "0");
    if (invariant && !tile_.index.empty() && i == tile_.index) {
      std::string u = fmt::format("u{}", vars_++);
      tile_.code += fmt::format("{} {}[{}];\n", f64 ? "double" : "float", u, tile_.size);
      tile_.code += fmt::format("{}({}, {}, {}, {}, {}, {}, {});\n",
                                f64 ? "philox_fill_d" : fmt::format("philox_fill_f<{}>", r), u, key,
                                counter, tile_.begin, tile_.end, lo, hi);
      return fmt::format("{}[{}]", u, tile_.local);
    }
    return fmt::format("{}({}, {}, {}, {}, {})",
                       f64 ? "philox_uniform_d" : fmt::format("philox_uniform_f<{}>", r), key,
                       counter, i, lo, hi);
  }

  std::string elementwise(const BoundSymbol& b, const Idx& idx) {
    static const Symbol& philox = prims::symbol("prims.uniform_philox");
    if (b.sym == &philox) return uniform_philox(b, idx);
    const std::string op(b.sym->name());
    const DType od = b.output.proxy()->dtype;
    if (op == "full") {  // (shape, fill_value, device, dtype)
      const Value& fill = b.args[1];
      if (!fill.is_proxy()) return literal(fill, od);
      return round_to(od, fmt::format("(({}){})", compute_type(od), value_at(*fill.proxy(), idx)));
    }
    if (op == "iota") {  // (length, start, step, device, dtype): start + step * i, exact in int64
      return fmt::format("(({})({}LL + {}LL * {}))", compute_type(od), b.args[1].as_int(),
                         b.args[2].as_int(), idx.empty() ? "0" : idx[0]);
    }
    // Literals take the dtype of the tensor operands (for where: the values').
    DType operand = od;
    for (size_t i = op == "where" ? 1 : 0; i < b.args.size(); ++i)
      if (b.args[i].is_tensor()) {
        operand = b.args[i].proxy()->dtype;
        break;
      }
    std::vector<std::string> x;
    for (size_t i = 0; i < b.args.size(); ++i) {
      const Value& v = b.args[i];
      if (op == "convert_element_type" && i == 1) break;
      DType d = op == "where" && i == 0 ? DType::b8 : operand;
      if (v.is_tensor()) {
        x.push_back(value_at(*v.proxy(), idx));
      } else if (v.is_number_proxy()) {
        x.push_back(
            round_to(d, fmt::format("(({}){})", compute_type(d), value_at(*v.proxy(), idx))));
      } else {
        x.push_back(literal(v, d));
      }
    }
    return round_to(od, expression(op, operand, od, x));
  }

  static std::string expression(const std::string& op, DType d, DType od,
                                const std::vector<std::string>& x) {
    const bool fl = is_float(d), f64 = d == DType::f64, bl = is_bool(d);
    const std::string T = compute_type(d);
    auto call = [&](const char* f) {  // float math: vectorisable f32 versions, libm for f64
      return f64 ? fmt::format("__builtin_{}({})", f, x[0]) : fmt::format("vm_{}f({})", f, x[0]);
    };
    auto bin = [&](const char* o) { return fmt::format("({} {} {})", x[0], o, x[1]); };
    if (op == "neg") return fmt::format("(({})(-{}))", T, x[0]);
    if (op == "abs")
      return fl   ? (f64 ? "__builtin_fabs(" : "__builtin_fabsf(") + x[0] + ")"
             : bl ? x[0]
                  : fmt::format("(({0})({1} < 0 ? -{1} : {1}))", T, x[0]);
    if (op == "exp" || op == "log" || op == "log1p" || op == "sin" || op == "cos" || op == "tanh" ||
        op == "erf")
      return call(op.c_str());
    if (op == "sqrt") return f64 ? "__builtin_sqrt(" + x[0] + ")" : "__builtin_sqrtf(" + x[0] + ")";
    if (op == "rsqrt")
      return fmt::format("(({0})1 / {1})", T,
                         f64 ? "__builtin_sqrt(" + x[0] + ")" : "__builtin_sqrtf(" + x[0] + ")");
    if (op == "reciprocal") return fmt::format("(({})1 / {})", T, x[0]);
    if (op == "sigmoid")
      return f64 ? fmt::format("(1.0 / (1.0 + __builtin_exp(-{})))", x[0])
                 : fmt::format("vm_sigmoidf({})", x[0]);
    if (op == "bitwise_not") return bl ? "(!" + x[0] + ")" : fmt::format("(({})~{})", T, x[0]);
    if (op == "logical_not") return "(" + x[0] + " == 0)";
    if (op == "add") return bl ? bin("||") : fmt::format("(({}){})", T, bin("+"));
    if (op == "sub") return fmt::format("(({}){})", T, bin("-"));
    if (op == "mul") return bl ? bin("&&") : fmt::format("(({}){})", T, bin("*"));
    if (op == "div") return fl ? bin("/") : fmt::format("idiv<{}>({}, {})", T, x[0], x[1]);
    if (op == "pow")
      return fl ? fmt::format("{}({}, {})", f64 ? "__builtin_pow" : "__builtin_powf", x[0], x[1])
                : fmt::format("ipow<{}>({}, {})", T, x[0], x[1]);
    if (op == "maximum")
      return fl ? fmt::format("fmax_nan({}, {})", x[0], x[1])
                : fmt::format("({0} > {1} ? {0} : {1})", x[0], x[1]);
    if (op == "minimum")
      return fl ? fmt::format("fmin_nan({}, {})", x[0], x[1])
                : fmt::format("({0} < {1} ? {0} : {1})", x[0], x[1]);
    if (op == "bitwise_and") return fmt::format("(({}){})", T, bin("&"));
    if (op == "bitwise_or") return fmt::format("(({}){})", T, bin("|"));
    if (op == "bitwise_xor") return fmt::format("(({}){})", T, bin("^"));
    if (op == "eq") return bin("==");
    if (op == "ne") return bin("!=");
    if (op == "lt") return bin("<");
    if (op == "le") return bin("<=");
    if (op == "gt") return bin(">");
    if (op == "ge") return bin(">=");
    if (op == "logical_and") return fmt::format("({} != 0 && {} != 0)", x[0], x[1]);
    if (op == "logical_or") return fmt::format("({} != 0 || {} != 0)", x[0], x[1]);
    if (op == "where") return fmt::format("({} ? {} : {})", x[0], x[1], x[2]);
    if (op == "convert_element_type") {
      if (is_bool(od)) return "(" + x[0] + " != 0)";
      // A select, not a cast: GCC 12 vectorises no loop that casts a bool to a number.
      if (bl) return fmt::format("({1} ? ({0})1 : ({0})0)", compute_type(od), x[0]);
      return fmt::format("(({}){})", compute_type(od), x[0]);
    }
    // fusible.cpp admitted the op, so a missing generator is a thunder bug.
    internal_fail(__FILE__, __LINE__, "cpu_fuser: no code generator for prims.{}", op);
  }

  // Starts a loop nest function over [lo, hi) of its parallel index.
  void begin_nest() {
    body_.clear();
    memo_.clear();
    indent_ = "  ";
    tile_ = {};
  }

  // Ends it: a static function, called once or from an OpenMP loop of chunks.
  void end_nest(int64_t range, int64_t work, const std::string& range_expr) {
    int k = nest_count_++;
    nests_ +=
        fmt::format("static void nest{}(void* const* p, int64_t lo, int64_t hi) {{\n{}{}}}\n\n", k,
                    decls_, body_);
    if (!flat_) {
      if (work < kParallelWork || range <= 1) {
        kernel_body_ += fmt::format("  nest{}(p, 0, {});\n", k, range);
        return;
      }
      int64_t per = std::max<int64_t>(1, work / std::max<int64_t>(range, 1));
      int64_t chunk = std::max<int64_t>(1, kChunkWork / per);
      kernel_body_ += parallel_call(k, std::to_string(range), chunk);
      return;
    }
    kernel_body_ += fmt::format("  if ({0} < {1}) {{ nest{2}(p, 0, {0}); return; }}\n", range_expr,
                                kParallelWork, k);
    kernel_body_ += parallel_call(k, range_expr, kChunkWork);
  }

  static std::string parallel_call(int k, const std::string& range, int64_t chunk) {
    return fmt::format(
        "  {{\n    const int64_t range = {0}, chunks = (range + {1} - 1) / {1};\n"
        "#pragma omp parallel for schedule(static)\n"
        "    for (int64_t c = 0; c < chunks; ++c)\n"
        "      nest{2}(p, c * {1}, c * {1} + {1} < range ? c * {1} + {1} : range);\n  }}\n",
        range, chunk, k);
  }

  // Index expressions of the leading `dims` of `shape` from a flat index o.
  Idx unflatten(const std::string& o, const Shape& shape, size_t dims) {
    Shape st = contiguous_strides(Shape(shape.begin(), shape.begin() + dims));
    Idx idx;
    for (size_t i = 0; i < dims; ++i) {
      std::string e = st[i] == 1 ? o : fmt::format("{} / {}", o, st[i]);
      idx.push_back(i == 0 ? "(" + e + ")" : fmt::format("({} % {})", e, shape[i]));
    }
    return idx;
  }

  // Prefixes each line of `text` with two more spaces.
  static std::string indented(const std::string& text) {
    std::string r;
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      r += "  " + text.substr(at, end - at + 1);
      at = end + 1;
    }
    return r;
  }

  // One loop over the elements of `shape` (flat, or rows of its last dim).
  // Draws read at the element's own index are filled into tiles before the
  // element loop: tiles of kTile elements of a flat loop, or one per row.
  // The element statements are generated first, then wrapped in the loops;
  // values that do not depend on the element index are hoisted before them.
  void elementwise_nest(const std::vector<const Proxy*>& outs) {
    const Shape& shape = outs[0]->shape;
    begin_nest();
    const bool rows = !flat_ && shape.size() > 1;
    Idx idx;
    int64_t range;
    if (!rows) {
      range = numel(shape);
      idx = shape.empty() && !flat_ ? Idx{} : Idx{"i"};
      if (!idx.empty() && offset(*outs[0], idx) == "i")
        tile_ = {
            .index = "i", .local = "i - t", .begin = "t", .end = "te", .size = kTile, .code = {}};
    } else {
      range = numel(Shape(shape.begin(), shape.end() - 1));
      idx = open_outer_loop(shape, shape.size() - 1);
      idx.push_back("j");
      if (shape.back() > 1 && shape.back() <= kMaxRowTile) {
        Idx first = idx;
        first.back() = "0";
        const std::string begin = "(" + linear(shape, first) + ")";
        tile_ = {.index = linear(shape, idx),
                 .local = "j",
                 .begin = begin,
                 .end = fmt::format("({} + {})", begin, shape.back()),
                 .size = shape.back(),
                 .code = {}};
      }
    }
    loops_.push_back({body_.size(), indent_, rows ? "j" : "i"});
    indent_ += "  ";
    for (const Proxy* p : outs) {
      std::string v = value_at(*p, idx);
      line(store(*p, idx, v));
    }
    // body_ is now: the row loop's head (rows), hoisted values, the element statements.
    const std::string before = body_.substr(0, loops_.back().pos);
    const std::string inner = body_.substr(loops_.back().pos);
    loops_.pop_back();
    const std::string tiles = indented(indented(tile_.code));
    // simd: the elements are independent (GCC's alias checks and cost model
    // would leave loops with several outputs, selects or vm_ calls scalar).
    if (rows) {
      body_ = fmt::format(
          "{}{}    #pragma omp simd\n    for (int64_t j = 0; j < {}; ++j) {{\n{}    }}\n  }}\n",
          before, tiles, shape.back(), inner);
    } else if (tile_.code.empty()) {
      body_ = fmt::format("{}  #pragma omp simd\n  for (int64_t i = lo; i < hi; ++i) {{\n{}  }}\n",
                          before, inner);
    } else {
      body_ = fmt::format(
          "{3}  for (int64_t t = lo; t < hi; t += {0}) {{\n"
          "    const int64_t te = t + {0} < hi ? t + {0} : hi;\n{1}"
          "    #pragma omp simd\n    for (int64_t i = t; i < te; ++i) {{\n{2}    }}\n  }}\n",
          kTile, tiles, indented(inner), before);
    }
    end_nest(range, numel(shape), "n");
  }

  // prims.cat of 1-D values: each piece's loop computes it and writes its
  // slice of the output, so packing computed values is one pass (nothing in
  // the region reads the output: form_regions sees to it).
  void cat_nests(const BoundSymbol& b) {
    const Proxy& out = *b.output.proxy();
    int64_t offset = 0;
    for (const Value& v : b.args[0].as_list()) {
      const Proxy& piece = *v.proxy();
      const int64_t n = piece.numel();
      if (n == 0) continue;
      begin_nest();
      loops_.push_back({body_.size(), indent_, "i"});
      indent_ += "  ";
      const std::string x = value_at(piece, {"i"});
      line(store(out, {offset == 0 ? "i" : fmt::format("({} + i)", offset)}, x));
      const std::string before = body_.substr(0, loops_.back().pos);
      const std::string inner = body_.substr(loops_.back().pos);
      loops_.pop_back();
      body_ = fmt::format("{}  #pragma omp simd\n  for (int64_t i = lo; i < hi; ++i) {{\n{}  }}\n",
                          before, inner);
      end_nest(n, n, "");
      offset += n;
    }
  }

  // Reduced dims of b: the innermost `m` of its input's.
  static size_t reduced_dims(const BoundSymbol& b) {
    const size_t n = b.args[0].proxy()->shape.size();
    static const Symbol& argmax = prims::symbol("prims.argmax");
    if (b.sym == &argmax) return b.args[1].is_none() ? n : (n == 0 ? 0 : 1);
    return b.args[1].as_int_list().size();
  }

  // One reduction over the innermost dims, for the kept index `idx`: emits
  // its accumulation loops at the current indentation, inside a block, and
  // returns the variable holding the result (in the output's compute type).
  std::string reduction_value(const BoundSymbol& b, const Idx& idx) {
    const std::string op(b.sym->name());
    const Proxy& a = *b.args[0].proxy();
    const Proxy& r = *b.output.proxy();
    const size_t m = reduced_dims(b), k = a.shape.size() - m;
    const DType d = a.dtype;
    const bool fl = is_float(d);
    // Float sums accumulate in double: closer to libtorch's cascade summation.
    const std::string acc_t =
        (op == "sum" || op == "var") ? (fl ? "double" : "int64_t") : compute_type(d);
    const std::string init = fl ? (op == "amin" ? "__builtin_inf()" : "(-__builtin_inf())")
                                : (op == "amin" ? max_of(d) : min_of(d));
    const std::string res = fmt::format("red{}", vars_++);
    line(fmt::format("{} {};", compute_type(r.dtype), res));
    line("{");
    indent_ += "  ";
    auto saved_memo = memo_;
    // One pass over the reduced dims: `step(x)` updates the accumulators,
    // `simd` is the innermost loop's reduction clause (empty: none).
    auto pass = [&](const std::string& simd, auto step) {
      Idx full = idx;
      auto saved = memo_;
      for (size_t j = 0; j < m; ++j) {
        full.push_back(fmt::format("r{}", j));
        open_loop(full.back(), "0", std::to_string(a.shape[k + j]),
                  j + 1 == m && !simd.empty() ? "simd " + simd : "");
      }
      step(value_at(a, full));
      for (size_t j = 0; j < m; ++j) close_loop();
      memo_ = std::move(saved);
    };
    std::string result;
    if (op == "sum") {
      line(fmt::format("{} acc = 0;", acc_t));
      pass("reduction(+:acc)", [&](const std::string& x) { line(fmt::format("acc += {};", x)); });
      result = "acc";
    } else if (op == "amax" || op == "amin") {
      // Vectorised: a plain max/min, plus a flag for NaN (which wins, as in libtorch).
      line(fmt::format("{} acc = {};", acc_t, init));
      const char* cmp = op == "amax" ? ">" : "<";
      const std::string clause = fmt::format("reduction({}:acc)", op == "amax" ? "max" : "min");
      if (fl) {
        line("int nan = 0;");
        pass(clause + " reduction(|:nan)", [&](const std::string& x) {
          line(fmt::format("nan |= {0} != {0};", x));
          line(fmt::format("acc = {0} {1} acc ? {0} : acc;", x, cmp));
        });
        line("if (nan) acc = __builtin_nanf(\"\");");
      } else {
        pass(clause, [&](const std::string& x) {
          line(fmt::format("acc = {0} {1} acc ? {0} : acc;", x, cmp));
        });
      }
      result = "acc";
    } else if (op == "argmax") {
      line(fmt::format("{} best = {};", acc_t, init));
      line("int64_t best_i = 0, pos = 0;");
      pass("", [&](const std::string& x) {
        line(fl ? fmt::format("if ({0} > best || ({0} != {0} && best == best)) {{ best = {0}; "
                              "best_i = pos; }}",
                              x)
                : fmt::format("if ({0} > best) {{ best = {0}; best_i = pos; }}", x));
        line("++pos;");
      });
      result = "best_i";
    } else {  // var: two passes (mean, then squared deviations), recomputing the input
      const int64_t count = numel(Shape(a.shape.begin() + k, a.shape.end()));
      const double correction = b.args[2].to_double();
      line("double s1 = 0;");
      pass("reduction(+:s1)", [&](const std::string& x) { line(fmt::format("s1 += {};", x)); });
      line(fmt::format("const double mean = s1 / {};", count));
      line("double s2 = 0;");
      pass("reduction(+:s2)", [&](const std::string& x) {
        line(fmt::format("s2 += ((double){0} - mean) * ((double){0} - mean);", x));
      });
      double denom = static_cast<double>(count) - correction;
      result = fmt::format("(s2 / {})", double_literal(std::max(denom, 0.0)));
    }
    line(fmt::format("{} = ({}){};", res, compute_type(r.dtype), round_to(r.dtype, result)));
    memo_ = std::move(saved_memo);
    indent_.resize(indent_.size() - 2);
    line("}");
    return res;
  }

  // Opens the parallel loop over the leading `k` dims of `shape` and returns
  // their index variables.
  Idx open_outer_loop(const Shape& shape, size_t k) {
    body_ += "  for (int64_t o = lo; o < hi; ++o) {\n";
    indent_ = "    ";
    Idx idx = unflatten("o", shape, k);
    for (size_t i = 0; i < idx.size(); ++i) line(fmt::format("const int64_t i{} = {};", i, idx[i]));
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = fmt::format("i{}", i);
    return idx;
  }

  void reduction_nest(const BoundSymbol& b) {
    const Proxy& a = *b.args[0].proxy();
    const size_t k = a.shape.size() - reduced_dims(b);
    begin_nest();
    const Idx idx = open_outer_loop(a.shape, k);
    const std::string v = reduction_value(b, idx);
    line(store(*b.output.proxy(), idx, v));
    body_ += "  }\n";
    end_nest(numel(Shape(a.shape.begin(), a.shape.begin() + k)), a.numel(), "");
  }

  // Row fusion: when every reduction keeps the same leading dims and every
  // output starts with them, the region is one parallel loop over those dims
  // and each iteration does a whole row: its reductions in order (results in
  // registers, not scratch memory), then the outputs' elements. A softmax or
  // layer norm row is read from cache instead of memory by its later passes.
  // Applies only if every read of a reduction result is of the current row
  // (checked while generating); otherwise returns false with nothing emitted.
  bool row_nest(const std::vector<const BoundSymbol*>& reductions,
                const std::vector<const Proxy*>& outs) {
    const Proxy& a0 = *reductions.front()->args[0].proxy();
    const size_t k = a0.shape.size() - reduced_dims(*reductions.front());
    const Shape outer(a0.shape.begin(), a0.shape.begin() + k);
    if (k == 0) return false;
    int64_t work = 0;
    for (const BoundSymbol* b : reductions) {
      const Proxy& a = *b->args[0].proxy();
      if (a.shape.size() - reduced_dims(*b) != k ||
          !std::equal(outer.begin(), outer.end(), a.shape.begin()))
        return false;
      work += a.numel();
    }
    for (const Proxy* p : outs) {
      if (p->shape.size() < k || !std::equal(outer.begin(), outer.end(), p->shape.begin()))
        return false;
      work += p->numel();
    }
    const std::string saved_nests = nests_, saved_kernel = kernel_body_;
    const int saved_vars = vars_, saved_count = nest_count_;
    begin_nest();
    row_idx_ = open_outer_loop(outer, k);
    row_shape_ = outer;
    row_failed_ = false;
    for (const BoundSymbol* b : reductions)
      row_values_[b->output.proxy().get()] = reduction_value(*b, row_idx_);
    for (const Proxy* p : outs) {
      if (row_values_.count(p)) {
        line(store(*p, row_idx_, row_values_.at(p)));
        continue;
      }
      Idx idx = row_idx_;
      auto saved = memo_;
      for (size_t d = k; d < p->shape.size(); ++d) {
        idx.push_back(fmt::format("j{}", d));
        open_loop(idx.back(), "0", std::to_string(p->shape[d]),
                  d + 1 == p->shape.size() ? "simd" : "");
      }
      line(store(*p, idx, value_at(*p, idx)));
      for (size_t d = k; d < p->shape.size(); ++d) close_loop();
      memo_ = std::move(saved);
    }
    body_ += "  }\n";
    row_values_.clear();
    if (row_failed_) {
      nests_ = saved_nests;
      kernel_body_ = saved_kernel;
      vars_ = saved_vars;
      nest_count_ = saved_count;
      return false;
    }
    end_nest(numel(outer), work, "");
    return true;
  }

  static std::string max_of(DType d) {
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
  static std::string min_of(DType d) {
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

  const BoundSymbol& region_;
  bool flat_;
  std::unordered_map<const Proxy*, const BoundSymbol*> producer_;
  std::unordered_map<const Proxy*, Buffer> buffers_;
  std::unordered_map<const Proxy*, std::string> numbers_;
  std::unordered_set<const Proxy*> materialised_;
  // Row fusion: reduction results of the current row, the row's index
  // variables and shape, and whether some read was of another row.
  std::unordered_map<const Proxy*, std::string> row_values_;
  Idx row_idx_;
  Shape row_shape_;
  bool row_failed_ = false;
  std::vector<Loop> loops_;
  bool hoisting_ = false;
  std::unordered_map<std::string, std::string> memo_;
  // The current nest's tile of draws: the element index it serves ("": no
  // tiles), the element's position in it, its element range, size and code.
  struct Tile {
    std::string index, local, begin, end;
    int64_t size = 0;
    std::string code;
  } tile_;
  std::string decls_, body_, nests_, kernel_body_, indent_;
  int vars_ = 0, nest_count_ = 0;
};

}  // namespace

KernelSource generate_kernel(const BoundSymbol& region) { return Generator(region).run(); }

}  // namespace thunder::cpu_fuser
