// Common subexpression elimination on hand-built traces: duplicates merge
// (transitively), their outputs are renamed everywhere later, and statements
// with state or side effects never merge.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/cse.h"

namespace thunder {
namespace {

TEST(Cse, MergesDuplicatesAndRenamesLaterUsesAndOutputs) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    Value a = prims::mul(x, 2.0);  // t0
    Value b = prims::mul(x, 2.0);  // t1: same as t0
    Value c = prims::mul(x, 2);    // t2: an int literal is another constant
    Value d = prims::sin(a);       // t3
    Value e = prims::sin(b);       // t4: same as t3 once t1 is t0
    Value f = prims::add(d, e);    // t5
    t.output = Value(std::vector<Value>{f, b, c, e});
  }
  Trace out = cse(t);
  EXPECT_EQ(out.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[3]\"\n"
            "  t2 = prims.mul(x, 2)  # t2: \"cpu f32[3]\"\n"
            "  t3 = prims.sin(t0)  # t3: \"cpu f32[3]\"\n"
            "  t5 = prims.add(t3, t3)  # t5: \"cpu f32[3]\"\n"
            "  return [t5, t0, t2, t3]\n");
  EXPECT_EQ(t.bsyms.size(), 6u);  // the input trace is untouched
  // Deterministic and idempotent.
  EXPECT_EQ(cse(t).str(), out.str());
  EXPECT_EQ(cse(out).str(), out.str());
}

TEST(Cse, RenamesInsideDecompositions) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    prims::exp(x);                 // t0
    Value b = prims::exp(x);       // t1
    t.output = testing::outer(b);  // reads b in its subsymbols too
  }
  Trace out = cse(t);
  ASSERT_EQ(out.bsyms.size(), 2u) << out;
  // t1 (the duplicate exp) is read nowhere, not even in outer's decomposition.
  EXPECT_EQ(out.str().find("t1"), std::string::npos) << out;
  EXPECT_EQ(out.bsyms[1].args[0].proxy(), out.bsyms[0].flat_outputs()[0]);
  EXPECT_EQ(out.bsyms[1].subsymbols.front().args[0].proxy(), out.bsyms[0].flat_outputs()[0]);
}

TEST(Cse, KeepsStatefulRandomAndSideEffects) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value u1 = prims::uniform({2}, 0.0, 1.0, Device::cpu(), DType::f32);
    Value u2 = prims::uniform({2}, 0.0, 1.0, Device::cpu(), DType::f32);  // a new draw
    Value st1 = prims::get_and_update_rng_state(Device::cpu(), 1);
    Value st2 = prims::get_and_update_rng_state(Device::cpu(), 1);  // advances the state
    testing::sink({x});
    testing::sink({x});  // a side effect, twice
    Value i1 = testing::inplace(x);
    Value i2 = testing::inplace(x);
    const auto& seed = st1.as_list()[0];
    const auto& offset = st1.as_list()[1];
    // Stateless draws with the same seed and offset are the same values.
    Value p1 = prims::uniform_philox({2}, 0.0, 1.0, seed, offset, Device::cpu(), DType::f32);
    Value p2 = prims::uniform_philox({2}, 0.0, 1.0, seed, offset, Device::cpu(), DType::f32);
    t.output = Value(std::vector<Value>{u1, u2, st2, i1, i2, p1, p2});
  }
  Trace out = cse(t);
  ASSERT_EQ(out.bsyms.size(), t.bsyms.size() - 1) << out;
  EXPECT_EQ(out.bsyms.back().sym->id, "prims.uniform_philox");
  const auto& outs = out.output.as_list();
  EXPECT_NE(outs[0].proxy(), outs[1].proxy());
  EXPECT_NE(outs[3].proxy(), outs[4].proxy());
  EXPECT_EQ(outs[5].proxy(), outs[6].proxy());
}

TEST(Cse, NeverMergesForwardWithBackward) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value a = prims::cos(x);
    Value b = prims::cos(x);
    Value c = prims::cos(x);
    t.output = Value(std::vector<Value>{a, b, c});
  }
  t.bsyms[1].tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
  t.bsyms[2].tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
  Trace out = cse(t);
  ASSERT_EQ(out.bsyms.size(), 2u) << out;
  EXPECT_FALSE(out.bsyms[0].has_tag(StmtTag::BACKWARD));
  EXPECT_TRUE(out.bsyms[1].has_tag(StmtTag::BACKWARD));
  const auto& outs = out.output.as_list();
  EXPECT_NE(outs[0].proxy(), outs[1].proxy());
  EXPECT_EQ(outs[1].proxy(), outs[2].proxy());
}

}  // namespace
}  // namespace thunder
