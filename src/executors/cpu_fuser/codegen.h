// C++ code generation for one fusion region (torch-free): the region built as
// loop IR (loop_ir.h), transformed (loop_transforms.h), printed (print_cpp.h).
//
// The generated translation unit defines
//   extern "C" void thunder_kernel(void* const* p, int64_t n);
// where p holds, in order, the region's inputs (tensor data pointers, which
// the caller makes contiguous; numbers as pointers to an int64_t or double),
// its outputs, then scratch buffers, all contiguous and allocated by the
// caller. Shapes are static (guards fix them per cache entry), except that a
// region over a single shape with no views or reductions is generated as one
// flat loop over `n` elements, so that its code is shared by every shape.
//
// Values are computed where they are used (inlined into each loop nest);
// only reduction results are materialised (as outputs or scratch). f16/bf16
// are loaded and stored as such and computed in f32, rounded to their dtype
// after each prim so results match eager per-op execution.
#pragma once

#include <string>
#include <vector>

#include "thunder/core/bound_symbol.h"

namespace thunder::cpu_fuser {

struct BufferSpec {
  Shape shape;
  DType dtype;
};

struct KernelSource {
  std::string code;
  bool flat = false;  // `n` is the element count of the one shape
  std::vector<BufferSpec> outputs, scratch;
};

KernelSource generate_kernel(const BoundSymbol& region);

}  // namespace thunder::cpu_fuser
