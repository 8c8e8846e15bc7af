// The bridge to libtorch's autograd engine: a jitted call with a compiled
// backward gives its outputs a custom autograd node that owns the saved
// tensors and runs the backward program, so out.backward(), autograd::grad,
// gradient accumulation into leaves and torch::optim work unchanged. Saved
// tensors are released as soon as the backward has consumed them.
#pragma once

#include <memory>
#include <vector>

#include "thunder/runtime/buffer_pool.h"
#include "thunder/runtime/program.h"

namespace thunder {

struct CompiledBackward {
  Program program;  // inputs: saved..., cotangents... (all Input::Source::Captured)
  std::vector<int32_t> differentiable_outputs;  // flat output indices that take a cotangent
  std::shared_ptr<PoolRef> pool;                // the jitted function's buffers
};

// Runs under no-grad already done by the caller: attaches the backward node to
// the differentiable outputs (replacing them with fresh handles where needed).
void connect_autograd(const std::shared_ptr<CompiledBackward>& backward,
                      std::vector<at::Tensor>& outputs, std::vector<at::Tensor> saved,
                      const std::vector<at::Tensor>& grad_inputs);

}  // namespace thunder
