// thunder-cpp: the one public header. docs/architecture.md describes the
// layers and the pipeline; the docs/ folder has one page per feature.
#pragma once

#include <ATen/core/grad_mode.h>

#include "thunder/core/error.h"
#include "thunder/core/parse_trace.h"
#include "thunder/core/registry_change.h"
#include "thunder/core/trace.h"
#include "thunder/frontend/autograd.h"
#include "thunder/frontend/autograd_function.h"
#include "thunder/frontend/capture.h"
#include "thunder/frontend/jit.h"
#include "thunder/frontend/nn.h"
#include "thunder/frontend/ops.h"
#include "thunder/frontend/options.h"
#include "thunder/frontend/passes.h"
#include "thunder/frontend/pipeline.h"
#include "thunder/frontend/remat_policy.h"
#include "thunder/frontend/report.h"
#include "thunder/frontend/scalar.h"
#include "thunder/frontend/tensor.h"

namespace thunder {
// libtorch's grad-mode guards, under thunder's names (the same types).
using NoGradGuard = at::NoGradGuard;
using AutoGradMode = at::AutoGradMode;
// Re-enables grad inside a no-grad region (torch.enable_grad).
struct EnableGradGuard : at::AutoGradMode {
  EnableGradGuard() : at::AutoGradMode(true) {}
};
namespace nn {
namespace F = functional;
}
}  // namespace thunder
