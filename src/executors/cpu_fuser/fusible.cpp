#include "fusible.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "thunder/prims/prims.h"

namespace thunder::cpu_fuser {

namespace {

using ir::BinOp;
using ir::Expr;
using E = const EmitContext&;

// The emitters: one element of a prim's output from its operands' elements.
// Arithmetic is in the operands' compute type T, then rounded to the
// output's dtype; f32 transcendentals are vector_math.cpp's vm_ functions
// (vectorisable), f64 ones libm's.
ir::Type T(E c) { return compute_type(c.operand); }
bool fl(E c) { return is_float(c.operand); }
bool f64(E c) { return c.operand == DType::f64; }
bool bl(E c) { return is_bool(c.operand); }
Expr rounded(E c, Expr e) { return round_to(c.out, std::move(e)); }
Expr bin(E c, BinOp op) { return ir::binary(op, c.x(0), c.x(1)); }
Expr arith(E c, BinOp op) { return rounded(c, ir::cast(T(c), bin(c, op))); }
Expr cmp(E c, BinOp op) { return rounded(c, bin(c, op)); }
Expr math(E c, const char* f) {
  return rounded(
      c, ir::call(f64(c) ? fmt::format("__builtin_{}", f) : fmt::format("vm_{}f", f), {c.x(0)}));
}
Expr libm(E c, const char* f64_fn, const char* f32_fn, std::vector<Expr> args) {
  return ir::call(f64(c) ? f64_fn : f32_fn, std::move(args));
}
Expr one(E c) { return ir::cast(T(c), ir::int_lit(1)); }
Expr zero() { return ir::int_lit(0); }
Expr pick(E c, BinOp op) {  // the larger (Gt) or smaller (Lt) of two ints
  return rounded(c, ir::select(bin(c, op), c.x(0), c.x(1)));
}

// prims.uniform_philox(shape, lo, hi, seed, offset, device, dtype): element
// i of the draw is the element's row-major index in the draw's own shape.
// loop_transforms' tile_draws turns draws read at a loop's index into tiles.
Expr uniform_philox(E c) {
  const bool d = c.out == DType::f64;
  const DType ct = d ? DType::f64 : DType::f32;  // philox.h's compute type
  const char* r = c.out == DType::f16 ? "1" : (c.out == DType::bf16 ? "2" : "0");
  return ir::call(d ? "philox_uniform_d" : fmt::format("philox_uniform_f<{}>", r),
                  {c.word(3), c.word(4), c.element, c.arg(1, ct), c.arg(2, ct)});
}

// prims.iota(length, start, step, device, dtype): start + step * i, exact in int64.
Expr iota(E c) {
  const Expr start = ir::lit(fmt::format("{}LL", c.b.args[1].as_int()));
  const Expr step = ir::lit(fmt::format("{}LL", c.b.args[2].as_int()));
  return ir::cast(compute_type(c.out),
                  ir::binary(BinOp::Add, start, ir::binary(BinOp::Mul, step, c.first_index)));
}

// prims.convert_element_type: a bool becomes a number by a select, not a
// cast (GCC 12 vectorises no loop that casts a bool to a number).
Expr convert(E c) {
  const ir::Type to = compute_type(c.out);
  if (is_bool(c.out)) return ir::binary(BinOp::Ne, c.x(0), zero());
  if (bl(c))
    return rounded(c, ir::select(c.x(0), ir::cast(to, ir::int_lit(1)), ir::cast(to, zero())));
  return rounded(c, ir::cast(to, c.x(0)));
}

struct FusibleOp {
  OpKind kind;
  Emitter emit = nullptr;  // elementwise prims: how one element is computed
};

// Matmul, embedding, indexing, pad/slice, cat other than of 1-D tensors,
// empty and stateful draws stay with aten. Factories that are pure functions
// of the element index are Elementwise without tensor inputs: full, iota,
// and uniform_philox (over its 0-d seed and offset), so dropout fuses whole.
// Views, reductions and cat have no emitter: codegen.cpp makes them index
// arithmetic, loops and slices.
const std::unordered_map<std::string_view, FusibleOp>& table() {
  using K = OpKind;
  static const std::unordered_map<std::string_view, FusibleOp> t = {
      {"prims.neg",
       {K::Elementwise,
        [](E c) { return rounded(c, ir::cast(T(c), ir::unary(ir::UnOp::Neg, c.x(0)))); }}},
      {"prims.abs",
       {K::Elementwise,
        [](E c) -> Expr {
          if (fl(c)) return rounded(c, libm(c, "__builtin_fabs", "__builtin_fabsf", {c.x(0)}));
          if (bl(c)) return rounded(c, c.x(0));
          const Expr x = c.x(0);
          return rounded(c, ir::cast(T(c), ir::select(ir::binary(BinOp::Lt, x, zero()),
                                                      ir::unary(ir::UnOp::Neg, x), x)));
        }}},
      {"prims.exp", {K::Elementwise, [](E c) { return math(c, "exp"); }}},
      {"prims.log", {K::Elementwise, [](E c) { return math(c, "log"); }}},
      {"prims.log1p", {K::Elementwise, [](E c) { return math(c, "log1p"); }}},
      {"prims.sin", {K::Elementwise, [](E c) { return math(c, "sin"); }}},
      {"prims.cos", {K::Elementwise, [](E c) { return math(c, "cos"); }}},
      {"prims.tanh", {K::Elementwise, [](E c) { return math(c, "tanh"); }}},
      {"prims.erf", {K::Elementwise, [](E c) { return math(c, "erf"); }}},
      {"prims.sqrt",
       {K::Elementwise,
        [](E c) { return rounded(c, libm(c, "__builtin_sqrt", "__builtin_sqrtf", {c.x(0)})); }}},
      {"prims.rsqrt",
       {K::Elementwise,
        [](E c) {
          return rounded(c, ir::binary(BinOp::Div, one(c),
                                       libm(c, "__builtin_sqrt", "__builtin_sqrtf", {c.x(0)})));
        }}},
      {"prims.reciprocal",
       {K::Elementwise, [](E c) { return rounded(c, ir::binary(BinOp::Div, one(c), c.x(0))); }}},
      {"prims.sigmoid",
       {K::Elementwise,
        [](E c) {
          if (!f64(c)) return rounded(c, ir::call("vm_sigmoidf", {c.x(0)}));
          const Expr e = ir::call("__builtin_exp", {ir::unary(ir::UnOp::Neg, c.x(0))});
          return ir::binary(BinOp::Div, ir::lit("1.0"), ir::binary(BinOp::Add, ir::lit("1.0"), e));
        }}},
      {"prims.bitwise_not",
       {K::Elementwise,
        [](E c) {
          if (bl(c)) return rounded(c, ir::unary(ir::UnOp::Not, c.x(0)));
          return rounded(c, ir::cast(T(c), ir::unary(ir::UnOp::BitNot, c.x(0))));
        }}},
      {"prims.logical_not",
       {K::Elementwise, [](E c) { return rounded(c, ir::binary(BinOp::Eq, c.x(0), zero())); }}},
      {"prims.add",
       {K::Elementwise, [](E c) { return bl(c) ? cmp(c, BinOp::Or) : arith(c, BinOp::Add); }}},
      {"prims.sub", {K::Elementwise, [](E c) { return arith(c, BinOp::Sub); }}},
      {"prims.mul",
       {K::Elementwise, [](E c) { return bl(c) ? cmp(c, BinOp::And) : arith(c, BinOp::Mul); }}},
      {"prims.div",
       {K::Elementwise,
        [](E c) {
          if (fl(c)) return cmp(c, BinOp::Div);
          return rounded(c, ir::call(fmt::format("idiv<{}>", ir::c_type(T(c))), {c.x(0), c.x(1)}));
        }}},
      {"prims.pow",
       {K::Elementwise,
        [](E c) {
          if (fl(c))
            return rounded(c, libm(c, "__builtin_pow", "__builtin_powf", {c.x(0), c.x(1)}));
          return rounded(c, ir::call(fmt::format("ipow<{}>", ir::c_type(T(c))), {c.x(0), c.x(1)}));
        }}},
      {"prims.maximum",
       {K::Elementwise,
        [](E c) {
          return fl(c) ? rounded(c, ir::call("fmax_nan", {c.x(0), c.x(1)})) : pick(c, BinOp::Gt);
        }}},
      {"prims.minimum",
       {K::Elementwise,
        [](E c) {
          return fl(c) ? rounded(c, ir::call("fmin_nan", {c.x(0), c.x(1)})) : pick(c, BinOp::Lt);
        }}},
      {"prims.bitwise_and", {K::Elementwise, [](E c) { return arith(c, BinOp::BitAnd); }}},
      {"prims.bitwise_or", {K::Elementwise, [](E c) { return arith(c, BinOp::BitOr); }}},
      {"prims.bitwise_xor", {K::Elementwise, [](E c) { return arith(c, BinOp::BitXor); }}},
      {"prims.eq", {K::Elementwise, [](E c) { return cmp(c, BinOp::Eq); }}},
      {"prims.ne", {K::Elementwise, [](E c) { return cmp(c, BinOp::Ne); }}},
      {"prims.lt", {K::Elementwise, [](E c) { return cmp(c, BinOp::Lt); }}},
      {"prims.le", {K::Elementwise, [](E c) { return cmp(c, BinOp::Le); }}},
      {"prims.gt", {K::Elementwise, [](E c) { return cmp(c, BinOp::Gt); }}},
      {"prims.ge", {K::Elementwise, [](E c) { return cmp(c, BinOp::Ge); }}},
      {"prims.logical_and",
       {K::Elementwise,
        [](E c) {
          return rounded(c, ir::binary(BinOp::And, ir::binary(BinOp::Ne, c.x(0), zero()),
                                       ir::binary(BinOp::Ne, c.x(1), zero())));
        }}},
      {"prims.logical_or",
       {K::Elementwise,
        [](E c) {
          return rounded(c, ir::binary(BinOp::Or, ir::binary(BinOp::Ne, c.x(0), zero()),
                                       ir::binary(BinOp::Ne, c.x(1), zero())));
        }}},
      {"prims.where",
       {K::Elementwise,
        [](E c) { return rounded(c, ir::select(c.arg(0, DType::b8), c.x(1), c.x(2))); }}},
      {"prims.convert_element_type", {K::Elementwise, convert}},
      // (shape, fill_value, device, dtype)
      {"prims.full", {K::Elementwise, [](E c) { return c.arg(1, c.out); }}},
      {"prims.iota", {K::Elementwise, iota}},
      {"prims.uniform_philox", {K::Elementwise, uniform_philox}},
      {"prims.broadcast_in_dim", {K::View}},
      {"prims.reshape", {K::View}},
      {"prims.squeeze", {K::View}},
      {"prims.transpose", {K::View}},
      {"prims.sum", {K::Reduction}},
      {"prims.amax", {K::Reduction}},
      {"prims.amin", {K::Reduction}},
      {"prims.var", {K::Reduction}},
      {"prims.argmax", {K::Reduction}},
      {"prims.cat", {K::Cat}},
  };
  return t;
}

// Reduced dims must be a suffix of the input's dims (innermost or all): the
// generated loop nest keeps kept dims outside and reduced dims inside. Sums
// may also reduce a prefix (leading_sum), which has a nest of its own.
bool innermost_reduction(const BoundSymbol& b) {
  const Proxy& a = *b.args[0].proxy();
  static const Symbol& argmax = prims::symbol("prims.argmax");
  if (b.sym == &argmax) {
    const Value& dim = b.args[1];
    return dim.is_none() || a.ndim() == 0 || dim.as_int() == a.ndim() - 1;
  }
  const auto& dims = b.args[1].as_int_list();
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != a.ndim() - static_cast<int64_t>(dims.size() - i)) return false;
  return true;
}

}  // namespace

const OpKind* fusible_kind(const Symbol& sym) {
  auto it = table().find(sym.id);
  if (it == table().end()) return nullptr;
  // An elementwise prim without an emitter could not be generated.
  if (it->second.kind == OpKind::Elementwise && !it->second.emit) return nullptr;
  return &it->second.kind;
}

Emitter emitter(const Symbol& sym) {
  auto it = table().find(sym.id);
  return it == table().end() ? nullptr : it->second.emit;
}

bool fusible(const BoundSymbol& b) {
  if (!b.sym->is_prim) {
    if (b.subsymbols.empty()) return false;
    for (const BoundSymbol& s : b.subsymbols)
      if (!fusible(s)) return false;
    return true;
  }
  const OpKind* kind = fusible_kind(*b.sym);
  if (!kind) return false;
  for (const ProxyPtr& p : b.flat_args())
    if (p->is_tensor() && p->device.type != Device::Type::CPU) return false;
  for (const ProxyPtr& p : b.flat_outputs())
    if (!p->is_tensor() || p->device.type != Device::Type::CPU) return false;
  // iota's start and step are written into the kernel as constants.
  static const Symbol& iota = prims::symbol("prims.iota");
  if (b.sym == &iota && (b.args[1].is_proxy() || b.args[2].is_proxy())) return false;
  if (*kind == OpKind::Cat)  // a gradient bucket's pack: 1-D pieces, one after another
    return std::all_of(b.args[0].as_list().begin(), b.args[0].as_list().end(),
                       [](const Value& v) { return v.is_tensor() && v.proxy()->ndim() == 1; });
  return *kind != OpKind::Reduction || innermost_reduction(b) || leading_sum(b);
}

bool leading_sum(const BoundSymbol& b) {
  static const Symbol& sum = prims::symbol("prims.sum");
  if (b.sym != &sum) return false;
  const auto& dims = b.args[1].as_int_list();
  // All dims (or none) is an innermost reduction.
  if (dims.empty() || static_cast<int64_t>(dims.size()) >= b.args[0].proxy()->ndim()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace thunder::cpu_fuser
