// The opaque ATen call `aten.call`: an operator that has no translation into
// ltorch symbols, kept as one statement and run as is by the aten executor.
// Capture records one where no gradient flows through the op (see
// docs/capture.md). It is a boundary for fusion (no fusion executor claims
// it) and has no grad rule (autodiff refuses it, naming the op).
//
// Printed as `[t5, t6] = aten.call('aten::kthvalue', [[dtypes.float32, (4,)],
// [dtypes.int64, (4,)]], t4, 2, 1, False)`: the operator's qualified name
// (`ns::name` or `ns::name.overload`), the dtype and shape of each result,
// then the operator's arguments in schema order (tensors as values, the rest
// as literals). Results are on the device of the first tensor argument (cpu
// when there is none). Core stays torch-free: the operator is only a name
// here; the executor looks it up when it lowers the statement.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "thunder/core/bound_symbol.h"

namespace thunder::prims {

const Symbol& aten_call_symbol();
bool is_aten_call(const BoundSymbol& b);
// The operator a statement of aten.call runs ("aten::erfinv").
const std::string& aten_call_op(const BoundSymbol& b);

// Records aten.call in the active trace. One result is a tensor value,
// several are a list.
Value aten_call(const std::string& op, const std::vector<std::pair<DType, Shape>>& results,
                std::vector<Value> args);

}  // namespace thunder::prims
