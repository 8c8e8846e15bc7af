// replace_uniform on hand-built traces (torch-free): draws become
// get_and_update_rng_state + uniform_philox at any depth, composites that draw
// are inlined with their origins and statement tags, the rest is untouched,
// and autodiff passes the stateless prims through.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_symbols.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"
#include "thunder/transforms/replace_uniform.h"

namespace thunder {
namespace {

bool has_origin(const BoundSymbol& b, std::string_view id) {
  return std::any_of(b.origins.begin(), b.origins.end(),
                     [&](const Symbol* s) { return s->id == id; });
}

TEST(ReplaceUniform, TopLevelDrawKeepsItsOutput) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2, 3}, DType::f32, Device::cpu(), false);
    Value u = prims::uniform({2, 3}, 0.0, 1.0, Device::cpu(), DType::f32);
    t.output = prims::mul(x, u);
  }
  Trace r = replace_uniform(t);
  EXPECT_EQ(r.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2, 3]\"\n"
            "  [seed0, offset0] = prims.get_and_update_rng_state(devices.Device(\"cpu\"), 2)"
            "  # seed0: \"cpu i64[]\", offset0: \"cpu i64[]\"\n"
            "  t0 = prims.uniform_philox((2, 3), 0.0, 1.0, seed0, offset0, "
            "devices.Device(\"cpu\"), dtypes.float32)  # t0: \"cpu f32[2, 3]\"\n"
            "  t1 = prims.mul(x, t0)  # t1: \"cpu f32[2, 3]\"\n"
            "  return t1\n");
  // Pure: the input trace is unchanged, and a second run finds nothing to do.
  EXPECT_EQ(t.bsyms.front().sym->id, "prims.uniform");
  EXPECT_EQ(replace_uniform(r).str(), r.str());
}

TEST(ReplaceUniform, FloatSixtyFourDrawsTakeTwoWordsPerElement) {
  Trace t;
  {
    TracingScope s(t);
    t.output = prims::uniform({5}, -1.0, 1.0, Device::cpu(), DType::f64);
  }
  Trace r = replace_uniform(t);
  ASSERT_EQ(r.bsyms.size(), 2u);
  EXPECT_EQ(r.bsyms[0].args[1], Value(int64_t{3}));  // ceil(5 / 2) counters
}

// A composite two levels above its draw: test.noisy(a) = a + ltorch.rand(shape).
Value noisy(const Value& a) {
  static const Symbol& s =
      testing::test_symbol("test.noisy", false, 0, [](const OpArgs& a) -> Value {
        const Proxy& p = a.tensor(0);
        return ltorch::add(a[0], ltorch::rand(p.shape, p.device, p.dtype));
      });
  return call_symbol(s, {a});
}

TEST(ReplaceUniform, CompositesThatDrawAreInlinedWithTheirOrigins) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f32, Device::cpu(), false);
    Value y = ltorch::mul(noisy(x), 2.0);
    t.output = y;
  }
  ASSERT_EQ(t.bsyms.size(), 2u);
  t.bsyms[0].tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
  Trace r = replace_uniform(t);
  // noisy -> [state, philox, ltorch.add]; ltorch.mul draws nothing and stays whole.
  std::vector<std::string> ids;
  for (const BoundSymbol& b : r.bsyms) ids.push_back(b.sym->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"prims.get_and_update_rng_state", "prims.uniform_philox",
                                           "ltorch.add", "ltorch.mul"}));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(has_origin(r.bsyms[i], "test.noisy")) << ids[i];
    EXPECT_TRUE(r.bsyms[i].has_tag(StmtTag::BACKWARD)) << ids[i];
  }
  EXPECT_TRUE(has_origin(r.bsyms[1], "ltorch.rand"));
  EXPECT_FALSE(has_origin(r.bsyms[2], "ltorch.rand"));
  EXPECT_FALSE(r.bsyms[3].has_tag(StmtTag::BACKWARD));
  EXPECT_FALSE(r.bsyms[3].subsymbols.empty());  // kept with its decomposition
  // The composite's output is the inlined add's output: the mul still reads it.
  EXPECT_EQ(r.bsyms[3].args[0].proxy(), r.bsyms[2].output.proxy());
  // Policies set on a composite reach its prims through origins; so does
  // ltorch.rand's RANDOM_OP: whether a statement is stateful is a property of
  // its own symbol.
  EXPECT_TRUE(r.bsyms[1].has_op_tag(OpTag::RANDOM_OP));
  EXPECT_FALSE(r.bsyms[1].sym->has_tag(OpTag::RANDOM_OP));
}

TEST(ReplaceUniform, AutodiffTreatsTheStatelessPrimsAsConstants) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), true);
    Value st = prims::get_and_update_rng_state(Device::cpu(), 1);
    Value u = prims::uniform_philox({3}, 0.0, 1.0, st.as_list()[0], st.as_list()[1], Device::cpu(),
                                    DType::f32);
    EXPECT_FALSE(u.proxy()->requires_grad);
    t.output = prims::mul(x, u);
  }
  JointTrace j = autodiff(t);
  ForwardBackward fb = split_forward_backward(j);
  // The backward multiplies the cotangent by the saved draw.
  ASSERT_EQ(fb.saved.size(), 1u);
  EXPECT_EQ(fb.saved[0]->name, t.bsyms[1].output.proxy()->name);
  EXPECT_EQ(fb.forward.bsyms.front().sym->id, "prims.get_and_update_rng_state");
}

}  // namespace
}  // namespace thunder
