// Rematerialization on hand-built traces: the saved set after autodiff and
// split, and how value tags move it.
#include <gtest/gtest.h>

#include "thunder/core/tracing.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"
#include "thunder/transforms/rematerialize.h"

namespace thunder {
namespace {

std::string names(const std::vector<ProxyPtr>& ps) {
  std::string s;
  for (const ProxyPtr& p : ps) s += (s.empty() ? "" : ", ") + p->name;
  return s;
}

// The split of exp(sin(x)) for x: f32[4] requiring grad.
ForwardBackward sin_exp() {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f32, Device::cpu(), true);
    t.output = prims::exp(prims::sin(x));
  }
  return split_forward_backward(autodiff(t));
}

TEST(Rematerialize, ElementwiseValuesAreRecomputedFromTheInput) {
  ForwardBackward fb = sin_exp();
  EXPECT_EQ(names(fb.saved), "t6, x");  // exp's output (of its grad rule) and x (for cos)
  ForwardBackward r = rematerialize(fb);
  EXPECT_EQ(names(r.saved), "x");
  EXPECT_EQ(r.forward.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[4]\" requires_grad\n"
            "  t2 = prims.sin(x)  # t2: \"cpu f32[4]\"\n"
            "  t6 = prims.exp(t2)  # t6: \"cpu f32[4]\"\n"
            "  return [t6, x]\n");
  EXPECT_EQ(r.backward.str(),
            "def backward(x, g_t6):\n"
            "  # x: \"cpu f32[4]\" requires_grad\n"
            "  # g_t6: \"cpu f32[4]\"\n"
            "  t2 = prims.sin(x)  # t2: \"cpu f32[4]\"\n"
            "  t6 = prims.exp(t2)  # t6: \"cpu f32[4]\"\n"
            "  t8 = prims.mul(g_t6, t6)  # t8: \"cpu f32[4]\"\n"
            "  t4 = prims.cos(x)  # t4: \"cpu f32[4]\"\n"
            "  t5 = prims.mul(t8, t4)  # t5: \"cpu f32[4]\"\n"
            "  return [t5]\n");
  for (const BoundSymbol& b : r.backward.bsyms) EXPECT_TRUE(b.has_tag(StmtTag::BACKWARD));
}

TEST(Rematerialize, SavedForBackwardValuesAreNeverRecomputed) {
  // As thunder::save_for_backward marks a value inside a grad rule: exp's output.
  ForwardBackward fb = sin_exp();
  fb.forward.output.as_list()[0].proxy()->tags |=
      static_cast<uint32_t>(ProxyTag::SAVED_FOR_BACKWARD);
  EXPECT_EQ(names(rematerialize(fb).saved), "x, t6");
}

TEST(Rematerialize, RecomputeTagOverridesTheMatmulRule) {
  auto build = [](bool tag) {
    Trace t;
    {
      TracingScope s(t);
      ProxyPtr x = s.ctx().add_tensor_input("x", {4, 8}, DType::f32, Device::cpu(), true);
      ProxyPtr w = s.ctx().add_tensor_input("w", {8, 2}, DType::f32, Device::cpu(), true);
      Value m = prims::matmul(x, w);
      if (tag) m.proxy()->tags |= static_cast<uint32_t>(ProxyTag::RECOMPUTE_IN_BACKWARD);
      t.output = prims::tanh(m);
    }
    return rematerialize(split_forward_backward(autodiff(t)));
  };
  ForwardBackward plain = build(false), forced = build(true);
  // tanh's backward reads tanh's output: saved (a tie with the matmul's
  // output goes to the later value), or, when the matmul is tagged,
  // recomputed from x and w (the tag survives the matmul's grad rule).
  EXPECT_EQ(names(plain.saved), "x, w, t8");
  EXPECT_EQ(names(forced.saved), "x, w");
  EXPECT_NE(forced.backward.str().find("t2 = prims.matmul(x, w)"), std::string::npos)
      << forced.backward.str();
}

TEST(Rematerialize, StatefulRandomDrawsAreSavedNotRedrawn) {
  // x * (uniform < 0.5): the backward reads the mask; it is recomputed from
  // the draw only if the draw were saved (8x the bytes), so the mask is saved.
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f64, Device::cpu(), true);
    Value u = prims::uniform({4}, 0.0, 1.0, Device::cpu(), DType::f64);
    Value keep = prims::lt(u, 0.5);
    t.output = prims::mul(x, prims::convert_element_type(keep, DType::f64));
  }
  ForwardBackward r = rematerialize(split_forward_backward(autodiff(t)));
  ASSERT_EQ(r.saved.size(), 1u);
  EXPECT_EQ(r.saved[0]->dtype, DType::b8);
  EXPECT_EQ(r.backward.str().find("uniform"), std::string::npos) << r.backward.str();
}

}  // namespace
}  // namespace thunder
