// parse_trace reads back what the printer writes: print(parse(print(t))) ==
// print(t) on hand-built traces, the parsed IR has the traced metadata, and
// every malformed line is an error naming its line.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_symbols.h"
#include "thunder/core/parse_trace.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"
#include "thunder/transforms/del_last_used.h"

namespace thunder {
namespace {

using testing::outer;
using testing::show;
using testing::two;

Trace round_trip(const Trace& t) {
  Trace p = parse_trace(t.str());
  EXPECT_EQ(p.str(), t.str());
  return p;
}

TEST(ParseTrace, CompositeWithNestedDecomposition) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f16, Device::cpu(), false);
    ProxyPtr y = s.ctx().add_tensor_input("y", {2, 4}, DType::i32, Device::cpu(), false);
    t.output = ltorch::add(outer(x), y);
  }
  Trace p = round_trip(t);
  ASSERT_EQ(p.bsyms.size(), 2u);
  const BoundSymbol& o = p.bsyms[0];
  EXPECT_EQ(o.sym->id, "test.outer");
  ASSERT_EQ(o.subsymbols.size(), 2u);
  ASSERT_EQ(o.subsymbols[1].subsymbols.size(), 1u);
  // Origins: the enclosing composites, outermost first, as tracing records them.
  const BoundSymbol& inner = o.subsymbols[1].subsymbols[0];
  EXPECT_EQ(inner.sym->id, "prims.mul");
  ASSERT_EQ(inner.origins.size(), 2u);
  EXPECT_EQ(inner.origins[0]->id, "test.outer");
  EXPECT_EQ(inner.origins[1]->id, "ltorch.mul");
  // A composite's output is the same value as its decomposition's last output.
  EXPECT_EQ(o.output.proxy(), o.subsymbols[1].output.proxy());
  EXPECT_EQ(o.output.proxy(), inner.output.proxy());
  // Names are reserved: a pass's new names never collide with parsed ones.
  std::string fresh = p.new_name("t");
  for (const char* used : {"t0", "t1", "t2", "t3", "t4"}) EXPECT_NE(fresh, used);
}

TEST(ParseTrace, EveryLiteralKind) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2, 3}, DType::bf16, Device::cuda(1), true);
    ProxyPtr n = s.ctx().add_number_input("n", DType::f64);
    ProxyPtr i = s.ctx().add_number_input("i", DType::i64);
    ProxyPtr b = s.ctx().add_number_input("b", DType::b8);
    Value a = show({x,
                    3,
                    -7,
                    2.0,
                    0.1,
                    1e-5,
                    -0.5,
                    1e16,
                    -2e-7,
                    true,
                    false,
                    Value(),
                    n,
                    i,
                    b,
                    std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity(),
                    std::numeric_limits<double>::quiet_NaN(),
                    0.0,
                    -0.0});
    Value c =
        show({DType::f32, DType::i64, DType::b8, DType::bf16, Device::cpu(), Device::cuda(0),
              Value("tanh"), Value(std::vector<int64_t>{2, 3}), Value(std::vector<int64_t>{4}),
              Value(std::vector<int64_t>{}), Value(std::vector<int64_t>{-1, 0})});
    Value d = show({Value(std::vector<Value>{x, a, c}), Value(std::vector<Value>{}),
                    Value(std::vector<Value>{Value(1), Value(2.5), Value()}),
                    Value(std::vector<Value>{Value(std::vector<Value>{x}), Value(DType::f16)})});
    t.output = Value(std::vector<Value>{a, d, Value(), n});
  }
  Trace p = round_trip(t);
  const auto& args = p.bsyms[0].args;
  EXPECT_EQ(args[1].kind(), Value::Kind::Int);
  EXPECT_EQ(args[3].kind(), Value::Kind::Double);
  EXPECT_EQ(args[3].as_double(), 2.0);
  EXPECT_EQ(args[5].as_double(), 1e-5);
  EXPECT_EQ(args[9].kind(), Value::Kind::Bool);
  EXPECT_TRUE(args[11].is_none());
  EXPECT_TRUE(args[12].is_number_proxy());
  EXPECT_EQ(args[12].proxy()->dtype, DType::f64);
  EXPECT_EQ(args[13].proxy()->dtype, DType::i64);
  EXPECT_EQ(args[14].proxy()->dtype, DType::b8);
  EXPECT_TRUE(std::isnan(args[17].as_double()));
  const auto& args2 = p.bsyms[1].args;
  EXPECT_EQ(args2[0].as_dtype(), DType::f32);
  EXPECT_EQ(args2[5].as_device(), Device::cuda(0));
  EXPECT_EQ(args2[6].as_string(), "tanh");
  EXPECT_EQ(args2[8].as_int_list(), std::vector<int64_t>{4});
  EXPECT_TRUE(args2[9].as_int_list().empty());
  EXPECT_EQ(p.inputs[0]->device, Device::cuda(1));
  EXPECT_TRUE(p.inputs[0]->requires_grad);
  // Outputs take requires_grad from their arguments, as tracing does.
  EXPECT_TRUE(p.bsyms[0].output.proxy()->requires_grad);
  EXPECT_FALSE(p.bsyms[1].output.proxy()->requires_grad);
}

TEST(ParseTrace, ListOutputsNoOutputNotesAndDel) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value r = two({x});
    testing::sink({r.as_list()[0], 1});
    t.output = prims::exp(r.as_list()[0]);
  }
  t.provenance = "Constructed by Something (took 3 ms)";
  t.notes = {"saved for backward: 8 bytes in 1 values", "another note"};
  t = del_last_used(t);
  t.provenance = "Constructed by Delete Last Used";
  Trace p = round_trip(t);
  EXPECT_EQ(p.provenance, t.provenance);
  EXPECT_EQ(p.notes, t.notes);
  ASSERT_EQ(p.bsyms[0].output.as_list().size(), 2u);
  EXPECT_EQ(p.bsyms[0].output.as_list()[1].proxy()->dtype, DType::i64);
  EXPECT_TRUE(p.bsyms[1].output.is_none());
  bool saw_del = false;
  for (const BoundSymbol& b : p.bsyms) saw_del = saw_del || b.sym == &del_symbol();
  EXPECT_TRUE(saw_del);
}

TEST(ParseTrace, TagsRequiresGradAndDetached) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), true);
    x->tags |= static_cast<uint32_t>(ProxyTag::SAVED_FOR_BACKWARD);
    s.ctx().grad_enabled = false;
    Value a = ltorch::mul(x, 2.0);  // no_grad: a detached constant
    s.ctx().grad_enabled = true;
    Value b = prims::exp(x);
    b.proxy()->tags |= static_cast<uint32_t>(ProxyTag::RECOMPUTE_IN_BACKWARD);
    t.output = prims::mul(a, b);
  }
  Trace p = round_trip(t);
  EXPECT_TRUE(p.inputs[0]->has_tag(ProxyTag::SAVED_FOR_BACKWARD));
  const Proxy& a = *p.bsyms[0].output.proxy();
  EXPECT_TRUE(a.has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH));
  EXPECT_FALSE(a.requires_grad);
  EXPECT_TRUE(p.bsyms[1].output.proxy()->has_tag(ProxyTag::RECOMPUTE_IN_BACKWARD));
  EXPECT_TRUE(p.bsyms[1].output.proxy()->requires_grad);
  EXPECT_TRUE(p.bsyms[2].output.proxy()->requires_grad);
}

// A joint trace reads back with its backward statements and everything split needs.
TEST(ParseTrace, JointTraceAndSplit) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {3}, DType::f32, Device::cpu(), true);
    ProxyPtr w = s.ctx().add_tensor_input("w", {3}, DType::f32, Device::cpu(), false);
    Value y = ltorch::mul(ltorch::sin(x), w);
    t.output = Value(std::vector<Value>{y, ltorch::sum(y, std::vector<int64_t>{0}, false)});
  }
  JointTrace j = autodiff(t);
  Trace p = round_trip(j.trace);
  EXPECT_NE(j.trace.str().find("  # backward:\n"), std::string::npos);
  for (size_t k = 0; k < p.bsyms.size(); ++k)
    EXPECT_EQ(p.bsyms[k].has_tag(StmtTag::BACKWARD), j.trace.bsyms[k].has_tag(StmtTag::BACKWARD));
  JointTrace q = joint_trace_from(p);
  EXPECT_EQ(q.num_outputs, j.num_outputs);
  ASSERT_EQ(q.cotangents.size(), j.cotangents.size());
  for (size_t k = 0; k < q.cotangents.size(); ++k)
    EXPECT_EQ(q.cotangents[k] ? q.cotangents[k]->name : "-",
              j.cotangents[k] ? j.cotangents[k]->name : "-");
  ASSERT_EQ(q.grad_inputs.size(), 1u);
  EXPECT_EQ(q.grad_inputs[0]->name, "x");
  ForwardBackward a = split_forward_backward(j), b = split_forward_backward(q);
  EXPECT_EQ(b.forward.str(), a.forward.str());
  EXPECT_EQ(b.backward.str(), a.backward.str());
  // The backward trace reads back with every statement BACKWARD.
  Trace bw = round_trip(a.backward);
  for (const BoundSymbol& s : bw.bsyms) EXPECT_TRUE(s.has_tag(StmtTag::BACKWARD));
}

TEST(ParseTrace, SeveralTraces) {
  std::string text =
      "; RUN: ignored\n"
      "def computation(x):\n"
      "  # x: \"cpu f32[2]\"\n"
      "  t0 = prims.neg(x)  # t0: \"cpu f32[2]\"\n"
      "  return t0\n"
      "\n"
      "# Constructed by hand\n"
      "def backward(t0):\n"
      "  # t0: \"cpu f32[2]\"\n"
      "  return [t0, None]\n";
  ltorch::ensure_registered();
  std::vector<Trace> ts = parse_traces(text);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[1].fn_name, "backward");
  EXPECT_EQ(ts[1].provenance, "Constructed by hand");
  EXPECT_THROW(parse_trace(text), Error);
}

// Each malformed input fails with "line N: " and what was expected.
void expect_parse_error(const std::string& text, const std::string& needle) {
  ltorch::ensure_registered();
  try {
    parse_traces(text);
    ADD_FAILURE() << "expected a parse error mentioning '" << needle << "' for\n" << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected: " << needle;
  }
}

const char* kHead =
    "# Constructed by hand\n"
    "def computation(x, y):\n"
    "  # x: \"cpu f32[3]\"\n"
    "  # y: \"cpu f32[3]\"\n";

TEST(ParseTraceErrors, UnknownSymbolId) {
  expect_parse_error(std::string(kHead) + "  t0 = prims.frobnicate(x)  # t0: \"cpu f32[3]\"\n",
                     "line 5: unknown symbol id 'prims.frobnicate'");
  expect_parse_error(std::string(kHead) + "  [t0] = cppFusion0(x)  # t0: \"cpu f32[3]\"\n",
                     "line 5: unknown symbol id 'cppFusion0' (fusion regions");
}

TEST(ParseTraceErrors, WrongArity) {
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y, x)  # t0: \"cpu f32[3]\"\n",
                     "line 5: wrong arity: prims.add takes 2 arguments (a, b), got 3");
}

TEST(ParseTraceErrors, UndefinedName) {
  expect_parse_error(std::string(kHead) +
                         "  t0 = prims.add(x, y)  # t0: \"cpu f32[3]\"\n"
                         "  t1 = prims.mul(t0, z)  # t1: \"cpu f32[3]\"\n",
                     "line 6: undefined name 'z'");
  expect_parse_error(std::string(kHead) + "  return t9\n", "line 5: undefined name 't9'");
}

TEST(ParseTraceErrors, MalformedTypeComment) {
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y)  # t0: \"cpu f32[3\"\n",
                     "line 5: malformed type comment for t0: \"cpu f32[3\" (no shape");
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y)  # t0: \"cpu q32[3]\"\n",
                     "line 5: malformed type comment for t0: \"cpu q32[3]\" (unknown dtype");
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y)\n",
                     "line 5: malformed type comment: no type for t0");
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y)  # t0: \"cpu f32[3]\" shiny\n",
                     "line 5: malformed type comment: unknown word 'shiny' after the type of t0");
  // A type the meta disagrees with.
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y)  # t0: \"cpu f32[4]\"\n",
                     "line 5: malformed type comment: t0 is \"cpu f32[4]\", but prims.add makes "
                     "\"cpu f32[3]\"");
  expect_parse_error("def computation(x):\n  # y: \"cpu f32[3]\"\n  return x\n",
                     "line 2: expected the type comment of input x, found one for y");
}

TEST(ParseTraceErrors, BadLiteral) {
  expect_parse_error(std::string(kHead) + "  t0 = prims.mul(x, 2.0.0)  # t0: \"cpu f32[3]\"\n",
                     "line 5: bad literal: '2.0.0' is not a number");
  expect_parse_error(std::string(kHead) +
                         "  t0 = prims.convert_element_type(x, dtypes.float33)  # t0: \"cpu "
                         "f32[3]\"\n",
                     "line 5: bad literal: unknown dtype 'dtypes.float33'");
  expect_parse_error(std::string(kHead) +
                         "  t0 = prims.broadcast_in_dim(x, (3, 2.0), (0,))  # t0: \"cpu f32[3]\"\n",
                     "line 5: bad literal: int tuples hold ints only, found 2.0");
}

TEST(ParseTraceErrors, BadIndentation) {
  expect_parse_error(std::string(kHead) + "   t0 = prims.add(x, y)  # t0: \"cpu f32[3]\"\n",
                     "line 5: bad indentation");
  expect_parse_error(std::string(kHead) +
                         "  t0 = prims.add(x, y)  # t0: \"cpu f32[3]\"\n"
                         "      # t0 = prims.add(x, y)  # t0: \"cpu f32[3]\"\n",
                     "line 6: bad indentation: a decomposition line at depth 2 has no statement "
                     "at depth 1");
}

TEST(ParseTraceErrors, MetaErrorsAndStructure) {
  expect_parse_error(std::string(kHead) + "  t0 = prims.matmul(x, 2.0)  # t0: \"cpu f32[3]\"\n",
                     "line 5: prims.matmul");
  expect_parse_error(std::string(kHead) + "  t0 = prims.add(x, y)  # t0: \"cpu f32[3]\"\n",
                     "line 6: expected '  return ...' to end trace computation");
  expect_parse_error("  t0 = prims.add(x, y)\n", "line 1: expected a trace header");
}

}  // namespace
}  // namespace thunder
