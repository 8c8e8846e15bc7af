// Building traces by hand (no ATen) and printing them as golden text.
#include <gtest/gtest.h>

#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

TEST(Printer, CompositeWithDecomposition) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    t.output = ltorch::mul(x, 2.0);
  }
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  t0 = ltorch.mul(x, 2.0)  # t0: \"cpu f32[3]\"\n"
            "    # t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[3]\"\n"
            "  return t0\n");
}

}  // namespace
}  // namespace thunder
