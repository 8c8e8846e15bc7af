// What an elementwise prim's emitter (its row in fusible.cpp's table) sees
// and uses to build its value as a loop-IR expression: its operands, already
// converted, and the dtype helpers shared with codegen.cpp (f16/bf16 are
// computed in f32 and rounded to their dtype after every prim).
#pragma once

#include <functional>

#include "loop_ir.h"
#include "thunder/core/bound_symbol.h"

namespace thunder::cpu_fuser {

struct EmitContext {
  const BoundSymbol& b;
  DType operand;  // of literal operands: the first tensor argument's (where: its values')
  DType out;
  // Argument i as a value of dtype d: a tensor's element here, a runtime
  // number or a literal converted (and rounded) to d.
  std::function<ir::Expr(size_t, DType)> arg;
  // Argument i (uniform_philox's seed or offset) as a uint64_t word.
  std::function<ir::Expr(size_t)> word;
  ir::Expr element;      // the element's row-major index in the output
  ir::Expr first_index;  // its index in dim 0 (0 for a 0-d output)

  ir::Expr x(size_t i) const { return arg(i, operand); }
};

// Builds the value of one element of a prim's output.
using Emitter = ir::Expr (*)(const EmitContext&);

ir::Type storage_type(DType d);  // in memory (bool: a byte)
ir::Type compute_type(DType d);  // in registers (f16, bf16: f32)
// A float expression rounded to the precision of d (identity unless f16/bf16).
ir::Expr round_to(DType d, ir::Expr e);
// A literal number as a value of dtype d (rounded to its precision).
ir::Expr literal(const Value& v, DType d);
std::string double_literal(double x);

}  // namespace thunder::cpu_fuser
