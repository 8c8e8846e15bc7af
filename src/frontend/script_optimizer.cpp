// ScriptOptimizerOff (jit.h): the one file that reaches into TorchScript's
// graph executor settings (a thread-local flag in libtorch 1.13).
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "thunder/frontend/jit.h"

namespace thunder::detail {

ScriptOptimizerOff::ScriptOptimizerOff() : old_(torch::jit::getGraphExecutorOptimize()) {
  torch::jit::setGraphExecutorOptimize(false);
}

ScriptOptimizerOff::~ScriptOptimizerOff() { torch::jit::setGraphExecutorOptimize(old_); }

}  // namespace thunder::detail
