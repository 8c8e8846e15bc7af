// del_last_used on hand-built traces: a `del` right after each value's last use.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/del_last_used.h"

namespace thunder {
namespace {

TEST(DelLastUsed, DelsAfterLastUse) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    ProxyPtr y = s.ctx().add_tensor_input("y", {3}, DType::f32, Device::cpu(), false);
    Value a = prims::mul(x, 2.0);  // t0; last use of x
    Value b = prims::add(a, y);    // t1; last use of t0 and y
    Value c = prims::exp(b);       // t2; last use of t1
    t.output = c;
  }
  EXPECT_EQ(del_last_used(t).str(),
            "def computation(x, y):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  # y: \"cpu f32[3]\"\n"
            "  t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[3]\"\n"
            "  del x\n"
            "  t1 = prims.add(t0, y)  # t1: \"cpu f32[3]\"\n"
            "  del t0, y\n"
            "  t2 = prims.exp(t1)  # t2: \"cpu f32[3]\"\n"
            "  del t1\n"
            "  return t2\n");
}

TEST(DelLastUsed, NeverDeletesReturnedValues) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    ProxyPtr y = s.ctx().add_tensor_input("y", {3}, DType::f32, Device::cpu(), false);
    Value a = prims::neg(x);     // t0: returned, and read later
    Value b = prims::mul(a, y);  // t1: unread, not returned
    Value c = prims::add(a, x);  // t2: returned
    (void)b;
    t.output = Value(std::vector<Value>{a, c, x});
  }
  EXPECT_EQ(del_last_used(t).str(),
            "def computation(x, y):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  # y: \"cpu f32[3]\"\n"
            "  t0 = prims.neg(x)  # t0: \"cpu f32[3]\"\n"
            "  t1 = prims.mul(t0, y)  # t1: \"cpu f32[3]\"\n"
            "  del y, t1\n"
            "  t2 = prims.add(t0, x)  # t2: \"cpu f32[3]\"\n"
            "  return [t0, t2, x]\n");
}

TEST(DelLastUsed, UnusedInputsAndNumbers) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    ProxyPtr unused = s.ctx().add_tensor_input("unused", {3}, DType::f32, Device::cpu(), false);
    ProxyPtr n = s.ctx().add_number_input("n", DType::f64);
    (void)unused;
    t.output = prims::mul(x, n);
  }
  // Number proxies are never deleted, and an input nothing reads has no del.
  EXPECT_EQ(del_last_used(t).str(),
            "def computation(x, unused, n):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  # unused: \"cpu f32[3]\"\n"
            "  # n: \"float\"\n"
            "  t0 = prims.mul(x, n)  # t0: \"cpu f32[3]\"\n"
            "  del x\n"
            "  return t0\n");
}

TEST(DelLastUsed, ListArgumentsAndMultiOutputs) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value r = testing::two({x});                                              // [t0, t1]
    Value u = testing::show({Value(std::vector<Value>{r.as_list()[0], x})});  // t2
    t.output = u;
  }
  EXPECT_EQ(del_last_used(t).str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  [t0, t1] = test.two(x)  # t0: \"cpu f32[2]\", t1: \"cpu i64[3]\"\n"
            "  del t1\n"
            "  t2 = test.show([t0, x])  # t2: \"cpu f32[2]\"\n"
            "  del x, t0\n"
            "  return t2\n");
}

TEST(DelLastUsed, DecompositionsAreNotConsulted) {
  // Only top-level statements count: names inside a composite's decomposition
  // (t0 here) are never deleted on their own.
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    t.output = testing::outer(x);
  }
  EXPECT_EQ(del_last_used(t).str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  t1 = test.outer(x)  # t1: \"cpu f32[2]\"\n"
            "    # t0 = ltorch.add(x, x, 1)  # t0: \"cpu f32[2]\"\n"
            "      # t0 = prims.add(x, x)  # t0: \"cpu f32[2]\"\n"
            "    # t1 = ltorch.mul(t0, 2.0)  # t1: \"cpu f32[2]\"\n"
            "      # t1 = prims.mul(t0, 2.0)  # t1: \"cpu f32[2]\"\n"
            "  del x\n"
            "  return t1\n");
}

}  // namespace
}  // namespace thunder
