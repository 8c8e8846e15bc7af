// The ATen executor: an ATen kernel for every prim and every ltorch symbol.
// Registered as one table indexed by Symbol::index. As "aten" it claims every
// symbol it has a kernel for (composites whole, with libtorch's own fused
// implementations); as "aten_prims" it claims prims only, so every composite
// runs as its decomposition (for testing decompositions and for debugging).
// Eager thunder::Tensor ops run the same ltorch kernels.
#pragma once

#include "thunder/executors/executor.h"

namespace thunder::aten {

// The kernel for a symbol, or nullptr.
Kernel kernel_for(const Symbol& sym);

// How many times lowering has looked an operator of aten.call up by name
// (once per statement per program; never per call).
int64_t operator_lookups();

// Runs one ltorch symbol eagerly on concrete operands (see KernelCall). Used by
// the frontend's eager path.
void run_eager(const Symbol& sym, const Instr& instr, at::Tensor* tensors, c10::Scalar* numbers);

}  // namespace thunder::aten
