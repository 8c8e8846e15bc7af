// The tracing context: what call_symbol records (and what it does not).
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/core/error.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

// Expects `f` to throw thunder::Error mentioning `needle`.
template <typename F>
void expect_error(const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "expected thunder::Error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Tracing, CompositeReturningItsInputRecordsNothing) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
    Value r = testing::identity(x);
    EXPECT_EQ(r.proxy(), x);
    t.output = r;
  }
  EXPECT_TRUE(t.bsyms.empty());
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[3]\"\n"
            "  return x\n");
}

TEST(Tracing, ErrorsRecordNothing) {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::i64, Device::cpu(), false);
  ProxyPtr y = s.ctx().add_tensor_input("y", {4}, DType::f32, Device::cpu(), false);
  ProxyPtr z = s.ctx().add_tensor_input("z", {3}, DType::i64, Device::cpu(), false);
  ProxyPtr w = s.ctx().add_tensor_input("w", {1}, DType::f32, Device::cpu(), false);
  t.output = prims::neg(x);
  const std::string before = t.str();
  // A prim's meta fails.
  expect_error("prims.add", [&] { prims::add(x, y); });
  // A composite fails before recording anything.
  expect_error("ltorch.add", [&] { ltorch::add(x, y); });
  expect_error("ltorch.where", [&] { ltorch::where(z, x, 1); });
  // A composite fails after its body recorded prims (the broadcast of w and the
  // conversion of x): the partial decomposition is dropped too.
  expect_error("ltorch.add: a bool alpha", [&] { ltorch::add(x, w, true); });
  // A composite fails inside another composite.
  expect_error("ltorch.add", [&] { testing::outer(Value(std::string("oops"))); });
  EXPECT_EQ(t.str(), before);
  EXPECT_EQ(t.bsyms.size(), 1u);
  // The trace stays usable.
  t.output = ltorch::add(x, z);
  EXPECT_EQ(t.bsyms.size(), 2u);
}

TEST(Tracing, CallOutsideATraceThrows) {
  auto x = std::make_shared<Proxy>();
  x->name = "x";
  x->shape = {3};
  ASSERT_EQ(current_trace_ctx(), nullptr);
  expect_error("ltorch.neg: called outside of a trace", [&] { ltorch::neg(x); });
  expect_error("prims.neg: called outside of a trace", [&] { prims::neg(x); });
}

TEST(Tracing, ScopesNest) {
  Trace outer_trace, inner_trace;
  TracingScope a(outer_trace);
  EXPECT_EQ(current_trace_ctx(), &a.ctx());
  {
    TracingScope b(inner_trace);
    EXPECT_EQ(current_trace_ctx(), &b.ctx());
    ProxyPtr x = b.ctx().add_tensor_input("x", {1}, DType::f32, Device::cpu(), false);
    prims::neg(x);
  }
  EXPECT_EQ(current_trace_ctx(), &a.ctx());
  EXPECT_EQ(inner_trace.bsyms.size(), 1u);
  EXPECT_TRUE(outer_trace.bsyms.empty());
}

TEST(Tracing, RequiresGradPropagates) {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), true);
  ProxyPtr y = s.ctx().add_tensor_input("y", {3}, DType::f32, Device::cpu(), false);
  ProxyPtr i = s.ctx().add_tensor_input("i", {3}, DType::i64, Device::cpu(), false);
  Value a = ltorch::mul(x, y);
  EXPECT_TRUE(a.proxy()->requires_grad);
  EXPECT_FALSE(a.proxy()->has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH));
  // The decomposition's outputs carry it too.
  EXPECT_TRUE(t.bsyms.back().subsymbols.back().output.proxy()->requires_grad);
  EXPECT_FALSE(ltorch::mul(y, 2.0).proxy()->requires_grad);
  // Non-floating outputs never require grad.
  EXPECT_FALSE(ltorch::gt(x, y).proxy()->requires_grad);
  EXPECT_FALSE(ltorch::add(i, i).proxy()->requires_grad);
  // Through integer inputs to a float result: nothing requires grad.
  EXPECT_FALSE(ltorch::exp(i).proxy()->requires_grad);
  // Through a chain.
  EXPECT_TRUE(ltorch::sin(ltorch::exp(a)).proxy()->requires_grad);
}

TEST(Tracing, GradDisabledDetaches) {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), true);
  s.ctx().grad_enabled = false;
  Value a = ltorch::mul(x, 2.0);
  EXPECT_FALSE(a.proxy()->requires_grad);
  EXPECT_TRUE(a.proxy()->has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH));
  EXPECT_TRUE(
      t.bsyms.back().subsymbols.back().output.proxy()->has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH));
  s.ctx().grad_enabled = true;
  Value b = ltorch::mul(x, 2.0);
  EXPECT_TRUE(b.proxy()->requires_grad);
  EXPECT_FALSE(b.proxy()->has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH));
  // The detached value is a constant for autodiff: what it feeds does not require grad.
  Value c = ltorch::mul(a, a);
  EXPECT_FALSE(c.proxy()->requires_grad);
  // Inputs are never retagged.
  EXPECT_FALSE(x->has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH));
}

TEST(Tracing, OriginsListEnclosingComposites) {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
  testing::outer(x);
  ltorch::neg(x);
  ASSERT_EQ(t.bsyms.size(), 2u);
  const BoundSymbol& outer = t.bsyms[0];
  EXPECT_TRUE(outer.origins.empty());
  ASSERT_EQ(outer.subsymbols.size(), 2u);
  const Symbol& outer_sym = *outer.sym;
  for (const BoundSymbol& sub : outer.subsymbols) {
    ASSERT_EQ(sub.origins.size(), 1u);
    EXPECT_EQ(sub.origins[0], &outer_sym);
    ASSERT_EQ(sub.subsymbols.size(), 1u);
    const BoundSymbol& prim = sub.subsymbols[0];
    EXPECT_TRUE(prim.sym->is_prim);
    ASSERT_EQ(prim.origins.size(), 2u);
    EXPECT_EQ(prim.origins[0], &outer_sym);  // outermost first
    EXPECT_EQ(prim.origins[1], sub.sym);
  }
  EXPECT_EQ(t.bsyms[1].subsymbols[0].origins, std::vector<const Symbol*>{t.bsyms[1].sym});
  // has_op_tag looks through origins: a prim inside an elementwise composite.
  EXPECT_TRUE(t.bsyms[1].subsymbols[0].has_op_tag(OpTag::ELEMENTWISE_OP));
  EXPECT_FALSE(t.bsyms[1].subsymbols[0].has_op_tag(OpTag::RANDOM_OP));
}

TEST(Tracing, ArgsAndOutputsRecorded) {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), false);
  Value r = testing::two({x, 5});
  const BoundSymbol& b = t.bsyms.back();
  ASSERT_EQ(b.args.size(), 2u);
  EXPECT_EQ(b.args[1], Value(5));
  ASSERT_EQ(b.flat_args().size(), 1u);
  EXPECT_EQ(b.flat_args()[0], x);
  ASSERT_EQ(b.flat_outputs().size(), 2u);
  EXPECT_EQ(b.flat_outputs()[0], r.as_list()[0].proxy());
}

}  // namespace
}  // namespace thunder
