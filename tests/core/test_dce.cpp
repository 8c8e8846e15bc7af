// Dead code elimination on hand-built traces.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/dce.h"

namespace thunder {
namespace {

TEST(Dce, DropsUnusedKeepsProducersOfOutputs) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    ProxyPtr y = s.ctx().add_tensor_input("y", {3}, DType::f32, Device::cpu(), false);
    Value a = prims::mul(x, 2.0);  // t0: used by t2
    prims::exp(y);                 // t1: unused
    Value c = prims::add(a, y);    // t2: returned
    Value d = prims::neg(c);       // t3: only used by the unused t4
    prims::sin(d);                 // t4: unused
    t.output = c;
  }
  Trace out = dce(t);
  EXPECT_EQ(out.str(),
            "def computation(x, y):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  # y: \"cpu f32[3]\"\n"
            "  t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[3]\"\n"
            "  t2 = prims.add(t0, y)  # t2: \"cpu f32[3]\"\n"
            "  return t2\n");
  // The input trace is untouched (passes are pure).
  EXPECT_EQ(t.bsyms.size(), 5u);
  // A second run changes nothing.
  EXPECT_EQ(dce(out).str(), out.str());
}

TEST(Dce, KeepsDontDceAndInPlaceAndWhatTheyRead) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    Value a = prims::neg(x);  // t0: read by the sink
    testing::sink({a});       // DONT_DCE, no output
    Value b = prims::abs(x);  // t1: read by the in-place op
    testing::inplace(b);      // t2: IN_PLACE, its output unused
    prims::exp(x);            // t3: unused
    t.output = x;
  }
  EXPECT_EQ(dce(t).str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  t0 = prims.neg(x)  # t0: \"cpu f32[3]\"\n"
            "  test.sink(t0)\n"
            "  t1 = prims.abs(x)  # t1: \"cpu f32[3]\"\n"
            "  t2 = test.inplace(t1)  # t2: \"cpu f32[3]\"\n"
            "  return x\n");
}

TEST(Dce, MultiOutputKeptWhenAnyOutputIsUsed) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value r = testing::two({x});       // [t0, t1]
    Value unused = testing::two({x});  // [t2, t3]
    t.output = Value(std::vector<Value>{r.as_list()[1], x});
  }
  EXPECT_EQ(dce(t).str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  [t0, t1] = test.two(x)  # t0: \"cpu f32[2]\", t1: \"cpu i64[3]\"\n"
            "  return [t1, x]\n");
}

TEST(Dce, CompositeKeptWhole) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    t.output = testing::outer(x);
    testing::outer(x);
  }
  Trace out = dce(t);
  ASSERT_EQ(out.bsyms.size(), 1u);
  EXPECT_EQ(out.bsyms[0].sym->id, "test.outer");
  EXPECT_EQ(out.bsyms[0].subsymbols.size(), 2u);  // the decomposition stays with it
}

TEST(Dce, EmptyTraceAndNoOutputs) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    prims::neg(x);
  }
  EXPECT_EQ(dce(t).str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  return None\n");
}

}  // namespace
}  // namespace thunder
