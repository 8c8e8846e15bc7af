// The dnnl executor's epilogue fusion (private to the executor): a claimed
// matmul or linear whose result only feeds elementwise statements oneDNN can
// apply as post-ops (GELU erf/tanh, ReLU, a scale, a residual add) becomes one
// statement that writes the final value once. The fused statement prints as
// `t5 = dnnlMatmul0(x, w, b)` with the original statements as '#' lines.
#pragma once

#include <memory>
#include <vector>

#include "thunder/core/symbol.h"
#include "thunder/core/trace.h"

namespace thunder::dnnl {

// One step applied to the product, in order.
struct Epilogue {
  enum class Kind : uint8_t { GeluErf, GeluTanh, Relu, Scale, Add };
  Kind kind;
  double scale = 1.0;  // Scale: the literal multiplied by
  int operand = -1;    // Add: the fused statement's argument added
};

// How a statement the executor claimed runs: the product and its epilogues.
struct ProductSpec {
  bool linear = false;  // args (x, w, bias|None) rather than (a, b)
  std::vector<Epilogue> epilogues;
};

// A fused statement's symbol, made for one trace (Trace::owned_symbols).
struct FusedMatmulSymbol : Symbol {
  ProductSpec spec;
};

// At most this many post-ops per statement (oneDNN takes more; longer chains
// are not seen in practice and each step costs a key entry).
constexpr int kMaxEpilogues = 4;

// The product of a matmul or linear statement (ltorch or prims), without
// epilogues; nullptr for any other statement.
const ProductSpec* plain_product(const BoundSymbol& b);
// What a statement the executor claimed (plain or fused) runs.
const ProductSpec& product_spec(const BoundSymbol& claimed);

// The fusion pass: merges each statement claimed by executor `self` with the
// epilogue statements that alone read its result (any executor's claim).
Trace fuse_matmul_epilogues(const Trace& trace, int self);

}  // namespace thunder::dnnl
