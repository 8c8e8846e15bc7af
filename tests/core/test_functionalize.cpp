// In-place functionalization on hand-built traces.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/functionalize.h"

namespace thunder {
namespace {

constexpr uint32_t kBackward = static_cast<uint32_t>(StmtTag::BACKWARD);

void tag_last_backward(Trace& t) { t.bsyms.back().tags |= kBackward; }

bool has_symbol(const Trace& t, const std::string& id) {
  for (const BoundSymbol& b : t.bsyms)
    if (b.sym->id == id) return true;
  return false;
}

// Does any statement read `p`?
bool reads(const BoundSymbol& b, const ProxyPtr& p) {
  for (const ProxyPtr& a : b.flat_args())
    if (a == p) return true;
  return false;
}

TEST(Functionalize, WrittenInputIsReturnedAndLaterReadsSeeTheNewValue) {
  Trace t;
  ProxyPtr x;
  {
    TracingScope s(t);
    x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    prims::copy_(prims::mul(x, 2.0), x);
    t.output = prims::add(x, x);
  }
  Functionalized f = functionalize(t);
  EXPECT_EQ(f.trace.str(),
            "# written back into the caller's tensors after the call: x <- t0\n"
            "def computation(x):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[3]\"\n"
            "  t2 = prims.add(t0, t0)  # t2: \"cpu f32[3]\"\n"
            "  return [t2, t0]\n");
  ASSERT_EQ(f.written_inputs.size(), 1u);
  EXPECT_EQ(f.written_inputs[0], x);
  EXPECT_EQ(f.new_values[0]->name, "t0");
  EXPECT_TRUE(has_inplace(t));
  EXPECT_FALSE(has_inplace(f.trace));
}

TEST(Functionalize, BackwardWriteThroughAViewKeepsItsTag) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f32, Device::cpu(), false);
    Value a = prims::neg(x);               // forward
    Value v = ltorch::narrow(a, 0, 1, 2);  // forward: a view of a
    Value n = prims::exp(v);
    tag_last_backward(t);
    prims::copy_(n, v);  // a backward write into the view
    tag_last_backward(t);
    t.output = prims::sin(a);  // reads a after the write
    tag_last_backward(t);
  }
  Functionalized f = functionalize(t);
  EXPECT_FALSE(has_symbol(f.trace, "prims.copy_"));
  EXPECT_TRUE(f.written_inputs.empty());
  // The scatter of the view's new value into a (narrow pieces and a cat) is
  // backward like the write it replaces; the forward statements stay forward.
  for (const BoundSymbol& b : f.trace.bsyms) {
    bool forward =
        b.sym->id == "prims.neg" || (b.sym->id == "ltorch.narrow" && b.args[2].as_int() == 1);
    EXPECT_EQ(b.has_tag(StmtTag::BACKWARD), !forward) << bsym_str(b);
  }
  const BoundSymbol& cat = f.trace.bsyms[f.trace.bsyms.size() - 2];
  EXPECT_EQ(cat.sym->id, "ltorch.cat");
  EXPECT_TRUE(reads(f.trace.bsyms.back(), cat.output.proxy()));  // sin reads the new a
}

TEST(Functionalize, CompositeWritingItsArgumentIsFlattenedWithItsTags) {
  const Symbol& write_arg = testing::test_symbol("test.write_arg", false, 0, [](const OpArgs& a) {
    prims::copy_(prims::neg(a[0]), a[0]);
    return a[0];
  });
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    Value a = prims::abs(x);
    Value r = call_symbol(write_arg, {a});
    tag_last_backward(t);
    t.output = Value(std::vector<Value>{r, prims::exp(a)});
  }
  Functionalized f = functionalize(t);
  EXPECT_EQ(f.trace.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  t0 = prims.abs(x)  # t0: \"cpu f32[3]\"\n"
            "  # backward:\n"
            "  t1 = prims.neg(t0)  # t1: \"cpu f32[3]\"\n"
            "  t3 = prims.exp(t1)  # t3: \"cpu f32[3]\"\n"
            "  return [t1, t3]\n");
  EXPECT_TRUE(f.trace.bsyms[1].has_tag(StmtTag::BACKWARD));  // the flattened neg
  EXPECT_TRUE(f.trace.bsyms[2].has_tag(StmtTag::BACKWARD));  // reads a backward value
  EXPECT_FALSE(f.trace.bsyms[0].has_tag(StmtTag::BACKWARD));
}

TEST(Functionalize, RunTimeAliasesKeepTheWriteBehindABarrier) {
  Trace t;
  ProxyPtr a, b;
  {
    TracingScope s(t);
    a = s.ctx().add_tensor_input("a", {3}, DType::f32, Device::cpu(), false);
    b = s.ctx().add_tensor_input("b", {3}, DType::f32, Device::cpu(), false);
    prims::copy_(prims::mul(a, 2.0), a);
    t.output = prims::add(b, 1.0);
  }
  Functionalized f = functionalize(t, {{a, b}});
  EXPECT_EQ(f.trace.str(),
            "def computation(a, b):\n"
            "  # a: \"cpu f32[3]\"\n"
            "  # b: \"cpu f32[3]\"\n"
            "  t0 = prims.mul(a, 2.0)  # t0: \"cpu f32[3]\"\n"
            "  t1 = prims.copy_(t0, a)  # t1: \"cpu f32[3]\"\n"
            "  [t3, t4] = prims.update_aliases([t1, b])  # t3: \"cpu f32[3]\", t4: \"cpu f32[3]\"\n"
            "  t2 = prims.add(t4, 1.0)  # t2: \"cpu f32[3]\"\n"
            "  return t2\n");
  EXPECT_TRUE(f.written_inputs.empty());  // the write already reached the shared storage
}

}  // namespace
}  // namespace thunder
