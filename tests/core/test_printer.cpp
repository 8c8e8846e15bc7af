// Building traces by hand (no ATen) and printing them as golden text.
#include <gtest/gtest.h>

#include <cmath>

#include "test_symbols.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/del_last_used.h"

namespace thunder {
namespace {

using testing::outer;
using testing::show;
using testing::two;

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

TEST(Printer, Literals) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2, 3}, DType::bf16, Device::cuda(1), true);
    ProxyPtr n = s.ctx().add_number_input("n", DType::f64);
    Value a = show({x, 3, -7, 2.0, 0.1, 1e-5, -0.5, true, false, Value(), n});
    Value b = show({DType::f32, DType::i64, DType::b8, Device::cpu(), Device::cuda(0),
                    Value("tanh"), Value(std::vector<int64_t>{2, 3}),
                    Value(std::vector<int64_t>{4}), Value(std::vector<int64_t>{})});
    Value c = show({Value(std::vector<Value>{x, a, b}), Value(std::vector<Value>{}),
                    Value(std::vector<Value>{Value(1), Value(2.5)})});
    t.output = Value(std::vector<Value>{a, c});
  }
  EXPECT_EQ(t.str(),
            "def computation(x, n):\n"
            "  # x: \"cuda:1 bf16[2, 3]\" requires_grad\n"
            "  # n: \"float\"\n"
            "  t0 = test.show(x, 3, -7, 2.0, 0.1, 1e-05, -0.5, True, False, None, n)"
            "  # t0: \"cpu f32[2]\"\n"
            "  t1 = test.show(dtypes.float32, dtypes.int64, dtypes.bool, devices.Device(\"cpu\"), "
            "devices.Device(\"cuda:0\"), 'tanh', (2, 3), (4,), ())  # t1: \"cpu f32[2]\"\n"
            "  t2 = test.show([x, t0, t1], [], [1, 2.5])  # t2: \"cpu f32[2]\"\n"
            "  return [t0, t2]\n");
}

TEST(Printer, NumberProxyTypes) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr i = s.ctx().add_number_input("i", DType::i64);
    ProxyPtr b = s.ctx().add_number_input("b", DType::b8);
    ProxyPtr d = s.ctx().add_tensor_input("d", {}, DType::i32, Device::cpu(), false);
    t.output = show({i, b, d});
  }
  EXPECT_EQ(t.str(),
            "def computation(i, b, d):\n"
            "  # i: \"int\"\n"
            "  # b: \"bool\"\n"
            "  # d: \"cpu i32[]\"\n"
            "  t0 = test.show(i, b, d)  # t0: \"cpu f32[2]\"\n"
            "  return t0\n");
}

TEST(Printer, MultiOutputStatement) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value r = two({x});
    t.output = r.as_list()[1];
  }
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  [t0, t1] = test.two(x)  # t0: \"cpu f32[2]\", t1: \"cpu i64[3]\"\n"
            "  return t1\n");
}

TEST(Printer, NestedDecompositionTwoLevels) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f16, Device::cpu(), false);
    t.output = outer(x);
  }
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f16[4]\"\n"
            "  t1 = test.outer(x)  # t1: \"cpu f16[4]\"\n"
            "    # t0 = ltorch.add(x, x, 1)  # t0: \"cpu f16[4]\"\n"
            "      # t0 = prims.add(x, x)  # t0: \"cpu f16[4]\"\n"
            "    # t1 = ltorch.mul(t0, 2.0)  # t1: \"cpu f16[4]\"\n"
            "      # t1 = prims.mul(t0, 2.0)  # t1: \"cpu f16[4]\"\n"
            "  return t1\n");
  // bsym_str prints one statement with its decomposition at any indent.
  EXPECT_EQ(bsym_str(t.bsyms[0].subsymbols[1], 0),
            "t1 = ltorch.mul(t0, 2.0)  # t1: \"cpu f16[4]\"\n"
            "  # t1 = prims.mul(t0, 2.0)  # t1: \"cpu f16[4]\"\n");
}

TEST(Printer, PromotionAndBroadcastDecomposition) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2, 3}, DType::i32, Device::cpu(), false);
    ProxyPtr y = s.ctx().add_tensor_input("y", {3}, DType::f32, Device::cpu(), false);
    t.output = ltorch::add(x, y);
  }
  EXPECT_EQ(t.str(),
            "def computation(x, y):\n"
            "  # x: \"cpu i32[2, 3]\"\n"
            "  # y: \"cpu f32[3]\"\n"
            "  t2 = ltorch.add(x, y, 1)  # t2: \"cpu f32[2, 3]\"\n"
            "    # t0 = prims.broadcast_in_dim(y, (2, 3), (1,))  # t0: \"cpu f32[2, 3]\"\n"
            "    # t1 = prims.convert_element_type(x, dtypes.float32)  # t1: \"cpu f32[2, 3]\"\n"
            "    # t2 = prims.add(t1, t0)  # t2: \"cpu f32[2, 3]\"\n"
            "  return t2\n");
}

TEST(Printer, ProvenanceNotesAndDel) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {1}, DType::f64, Device::cpu(), false);
    Value a = prims::neg(x);
    t.output = prims::exp(a);
  }
  t.provenance = "Constructed by Delete Last Used (took 0 ms)";
  t.notes = {"note one", "note two"};
  t.fn_name = "backward";
  BoundSymbol d;
  d.sym = &del_symbol();
  d.args = {Value(t.inputs[0])};
  t.bsyms.insert(t.bsyms.begin() + 1, d);
  EXPECT_EQ(t.str(),
            "# Constructed by Delete Last Used (took 0 ms)\n"
            "# note one\n"
            "# note two\n"
            "def backward(x):\n"
            "  # x: \"cpu f64[1]\"\n"
            "  t0 = prims.neg(x)  # t0: \"cpu f64[1]\"\n"
            "  del x\n"
            "  t1 = prims.exp(t0)  # t1: \"cpu f64[1]\"\n"
            "  return t1\n");
}

TEST(Printer, StatementWithoutOutputAndNoneReturn) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {1}, DType::f32, Device::cpu(), false);
    testing::sink({x, 1});
  }
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[1]\"\n"
            "  test.sink(x, 1)\n"
            "  return None\n");
}

TEST(Printer, ProxyTagsAndRequiresGradOfInputs) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), true);
    x->tags |= static_cast<uint32_t>(ProxyTag::SAVED_FOR_BACKWARD);
    s.ctx().grad_enabled = false;
    Value a = prims::neg(x);
    s.ctx().grad_enabled = true;
    a.proxy()->tags |= static_cast<uint32_t>(ProxyTag::RECOMPUTE_IN_BACKWARD);
    t.output = prims::exp(x);
  }
  // requires_grad only on inputs: outputs derive it from their arguments.
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\" requires_grad saved_for_backward\n"
            "  t0 = prims.neg(x)  # t0: \"cpu f32[2]\" detached recompute_in_backward\n"
            "  t1 = prims.exp(x)  # t1: \"cpu f32[2]\"\n"
            "  return t1\n");
}

TEST(Printer, BackwardMarkers) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value a = prims::neg(x);
    Value b = prims::exp(a);
    t.output = prims::sin(b);
  }
  t.bsyms[1].tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
  // A joint trace marks each run of backward statements and the forward run after it.
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  t0 = prims.neg(x)  # t0: \"cpu f32[2]\"\n"
            "  # backward:\n"
            "  t1 = prims.exp(t0)  # t1: \"cpu f32[2]\"\n"
            "  # forward:\n"
            "  t2 = prims.sin(t1)  # t2: \"cpu f32[2]\"\n"
            "  return t2\n");
  // In a trace named backward, every statement is a backward statement.
  t.fn_name = "backward";
  EXPECT_EQ(t.str().find(":\n"), t.str().find("(x):\n") + 3);
  EXPECT_EQ(t.str().find("forward:"), std::string::npos);
}

TEST(Printer, FormatDouble) {
  EXPECT_EQ(format_double(2.0), "2.0");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(1e-05), "1e-05");
  EXPECT_EQ(format_double(1e+16), "1e+16");
  EXPECT_EQ(format_double(INFINITY), "inf");
  EXPECT_EQ(format_double(-INFINITY), "-inf");
  EXPECT_EQ(format_double(NAN), "nan");
  EXPECT_EQ(format_double(-0.5), "-0.5");
  EXPECT_EQ(format_double(0.0), "0.0");
  EXPECT_EQ(format_double(-0.0), "-0.0");
  EXPECT_EQ(format_double(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(format_double(1.5e300), "1.5e+300");
  EXPECT_EQ(format_double(2.5e-300), "2.5e-300");
  // Python's repr is positional for exponents in [-4, 16).
  EXPECT_EQ(format_double(100000.0), "100000.0");
  EXPECT_EQ(format_double(1e15), "1000000000000000.0");
  EXPECT_EQ(format_double(123456789012.5), "123456789012.5");
  EXPECT_EQ(format_double(0.0001), "0.0001");
  EXPECT_EQ(format_double(0.00012), "0.00012");
  EXPECT_EQ(format_double(1.5e16), "1.5e+16");
  EXPECT_EQ(format_double(-2e-7), "-2e-07");
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// Stages are found by their pass's exact name, never by position.
TEST(Stages, FoundByPassName) {
  std::vector<Trace> stages(3);
  stages[0].provenance = stage_provenance("Tracing", 0.4);
  stages[1].provenance = stage_provenance("Rematerialization between regions", 12.7);
  stages[2].provenance = stage_provenance("Rematerialization", 3);
  EXPECT_EQ(stages[1].provenance, "Constructed by Rematerialization between regions (took 12 ms)");
  EXPECT_EQ(stage_name(stages[1]), "Rematerialization between regions");
  EXPECT_EQ(&find_stage(stages, "Rematerialization"), &stages[2]);
  EXPECT_TRUE(has_stage(stages, "Tracing"));
  EXPECT_FALSE(has_stage(stages, "Remat"));
  try {
    find_stage(stages, "Fusion");
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "find_stage: no stage made by 'Fusion' (stages: 'Tracing', "
              "'Rematerialization between regions', 'Rematerialization')");
  }
  Trace guards;
  guards.provenance = "Guards of this cache entry";
  EXPECT_EQ(stage_name(guards), "");
}

}  // namespace
}  // namespace thunder
