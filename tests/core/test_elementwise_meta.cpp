// Elementwise prims and ltorch ops on proxies (torch-free): result dtypes and
// shapes of promotion and broadcasting, and every check of the metas and
// bodies, with the op and the offending value named in the message.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/core/error.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

class ElementwiseMeta : public testing::TracingTest {
 protected:
  static void expect_meta(const Value& v, const Shape& shape, DType dtype) {
    ASSERT_TRUE(v.is_tensor()) << v.str();
    EXPECT_EQ(v.proxy()->shape, shape) << v.str();
    EXPECT_EQ(v.proxy()->dtype, dtype) << v.str() << " is " << long_name(v.proxy()->dtype);
  }
};

TEST_F(ElementwiseMeta, PromotionAndBroadcasting) {
  auto i64 = in({3}, DType::i64), f16 = in({3}, DType::f16), i32 = in({2, 3}, DType::i32),
       b = in({3}, DType::b8), f32_0d = in({}, DType::f32), f64_0d = in({}, DType::f64),
       i64_0d = in({}, DType::i64), bf16 = in({1, 3}, DType::bf16), f32 = in({4, 1}, DType::f32);
  expect_meta(ltorch::mul(i64, 2.5), {3}, DType::f32);
  expect_meta(ltorch::mul(f16, 2.5), {3}, DType::f16);
  expect_meta(ltorch::add(i32, 5), {2, 3}, DType::i32);
  expect_meta(ltorch::add(b, 1), {3}, DType::i64);
  expect_meta(ltorch::add(b, true), {3}, DType::b8);
  expect_meta(ltorch::mul(b, 2.5), {3}, DType::f32);
  expect_meta(ltorch::add(f16, f32_0d), {3}, DType::f16);
  expect_meta(ltorch::add(i32, f64_0d), {2, 3}, DType::f64);
  expect_meta(ltorch::add(i32, i64_0d), {2, 3}, DType::i32);
  expect_meta(ltorch::add(f32_0d, i64_0d), {}, DType::f32);
  expect_meta(ltorch::add(f32_0d, 1.5), {}, DType::f32);
  expect_meta(ltorch::add(i64_0d, 1.5), {}, DType::f32);
  expect_meta(ltorch::add(f16, bf16), {1, 3}, DType::f32);
  expect_meta(ltorch::add(f16, i32), {2, 3}, DType::f16);
  expect_meta(ltorch::sub(2, i32), {2, 3}, DType::i32);
  expect_meta(ltorch::div(i32, i64), {2, 3}, DType::f32);
  expect_meta(ltorch::div(2, i32), {2, 3}, DType::f32);
  expect_meta(ltorch::div(f16, 2), {3}, DType::f16);
  expect_meta(ltorch::pow(2.5, i32), {2, 3}, DType::f32);
  expect_meta(ltorch::exp(b), {3}, DType::f32);
  expect_meta(ltorch::sqrt(i64), {3}, DType::f32);
  expect_meta(ltorch::neg(i32), {2, 3}, DType::i32);
  expect_meta(ltorch::relu(i32), {2, 3}, DType::i32);
  expect_meta(ltorch::eq(i64, 2.5), {3}, DType::b8);
  expect_meta(ltorch::lt(f32, bf16), {4, 3}, DType::b8);
  expect_meta(ltorch::logical_not(f16), {3}, DType::b8);
  expect_meta(ltorch::logical_and(i32, f16), {2, 3}, DType::b8);
  expect_meta(ltorch::maximum(f32, bf16), {4, 3}, DType::f32);
  expect_meta(ltorch::minimum(i64_0d, i32), {2, 3}, DType::i32);
  expect_meta(ltorch::clamp(i32, 0.5, Value()), {2, 3}, DType::f32);
  expect_meta(ltorch::clamp(i32, Value(), 2), {2, 3}, DType::i32);
  expect_meta(ltorch::clamp(b, 0, 1), {3}, DType::i64);
  expect_meta(ltorch::where(ltorch::gt(f32, 0), i64, 2.5), {4, 3}, DType::f32);
  expect_meta(ltorch::where(b, 1, 0), {3}, DType::i64);
  expect_meta(ltorch::where(b, 1.5, 0), {3}, DType::f32);
  expect_meta(ltorch::where(b, f16, f32_0d), {3}, DType::f16);
}

TEST_F(ElementwiseMeta, AlphaOfOneIsLeftOut) {
  auto x = in({3}, DType::f32);
  ltorch::add(x, x, 1);
  ltorch::sub(x, x, 2);
  ASSERT_EQ(trace_.bsyms.size(), 2u);
  EXPECT_EQ(trace_.bsyms[0].subsymbols.size(), 1u);  // prims.add
  ASSERT_EQ(trace_.bsyms[1].subsymbols.size(), 2u);  // prims.mul, prims.sub
  EXPECT_EQ(trace_.bsyms[1].subsymbols[0].sym->id, "prims.mul");
  EXPECT_EQ(trace_.bsyms[1].subsymbols[0].args[1], Value(2.0));  // alpha in the result's kind
}

TEST_F(ElementwiseMeta, PrimErrors) {
  auto f32 = in({3}, DType::f32), f64 = in({3}, DType::f64), i64 = in({3}, DType::i64),
       b = in({3}, DType::b8), f32_4 = in({4}, DType::f32),
       cuda = in({3}, DType::f32, Device::cuda(0)), bcuda = in({3}, DType::b8, Device::cuda(0));
  expect_error("prims.exp: expected a floating-point tensor for a, got int64",
               [&] { prims::exp(i64); });
  expect_error("prims.sigmoid: expected a floating-point tensor for a, got bool",
               [&] { prims::sigmoid(b); });
  expect_error("prims.bitwise_and: expected an integer or bool tensor for a, got float32",
               [&] { prims::bitwise_and(f32, f32); });
  expect_error("prims.bitwise_not: expected an integer or bool tensor for a, got float64",
               [&] { prims::bitwise_not(f64); });
  expect_error("prims.add: shapes [3] (a) and [4] (b) must be equal",
               [&] { prims::add(f32, f32_4); });
  expect_error("prims.mul: dtypes float32 (a) and float64 (b) must be equal",
               [&] { prims::mul(f32, f64); });
  expect_error("prims.sub: devices cpu (a) and cuda:0 (b) must be equal",
               [&] { prims::sub(f32, cuda); });
  expect_error("prims.add: argument b must be a tensor or a number, got 's'",
               [&] { prims::add(f32, Value("s")); });
  expect_error("prims.add: argument a must be a tensor or a number, got None",
               [&] { prims::add(Value(), f32); });
  expect_error("prims.eq: expected at least one tensor operand, got only numbers",
               [&] { prims::eq(1, 2); });
  expect_error("prims.add: number 2.5 (b) is of a higher kind than the tensor dtype int64",
               [&] { prims::add(i64, 2.5); });
  expect_error("prims.mul: number 2 (a) is of a higher kind than the tensor dtype bool",
               [&] { prims::mul(2, b); });
  expect_error("prims.neg: argument a must be a tensor, got 2.0", [&] { prims::neg(2.0); });
  expect_error("prims.add: expected 2 arguments, got 3", [&] {
    call_symbol(prims::symbol("prims.add"), {f32, f32, f32});
  });
  // where
  expect_error("prims.where: pred must be bool, got float32", [&] { prims::where(f32, f32, f32); });
  expect_error("prims.where: argument pred must be a tensor, got True",
               [&] { prims::where(true, f32, f32); });
  expect_error("prims.where: expected 3 arguments, got 2", [&] {
    call_symbol(prims::symbol("prims.where"), {b, f32});
  });
  expect_error("prims.where: a or b must be a tensor, got 1 and 2", [&] { prims::where(b, 1, 2); });
  expect_error("prims.where: dtypes float32 (a) and float64 (b) must be equal",
               [&] { prims::where(b, f32, f64); });
  expect_error("prims.where: pred shape [3] and value shape [4] must be equal",
               [&] { prims::where(b, f32_4, 0.0); });
  expect_error("prims.where: devices cpu and cuda:0 must be equal",
               [&] { prims::where(b, cuda, 0.0); });
  expect_error("prims.where: devices cuda:0 and cpu must be equal",
               [&] { prims::where(bcuda, f32, 0.0); });
  expect_error("prims.where: number 0.5 (b) is of a higher kind than the tensor dtype int64",
               [&] { prims::where(b, i64, 0.5); });
  // convert_element_type
  expect_error("prims.convert_element_type: argument a must be a tensor, got 2.0",
               [&] { prims::convert_element_type(2.0, DType::f32); });
  expect_error("prims.convert_element_type: argument dtype must be a dtype, got 'f32'", [&] {
    call_symbol(prims::symbol("prims.convert_element_type"), {f32, "f32"});
  });
}

TEST_F(ElementwiseMeta, LtorchErrors) {
  auto f32 = in({3}, DType::f32), i64 = in({3}, DType::i64), i32 = in({3}, DType::i32),
       b = in({3}, DType::b8), m23 = in({2, 3}, DType::f32), m32 = in({3, 2}, DType::f32);
  // Operands.
  expect_error("ltorch.exp: argument a must be a tensor, got 2.0", [&] { ltorch::exp(2.0); });
  expect_error("ltorch.neg: argument a must be a tensor, got None", [&] { ltorch::neg(Value()); });
  expect_error("ltorch.mul: expected a tensor operand, got 2 and 3", [&] { ltorch::mul(2, 3); });
  expect_error("ltorch.add: expected a tensor operand, got 2 and 3.0",
               [&] { ltorch::add(2, 3.0); });
  expect_error("ltorch.pow: expected a tensor operand, got 2 and 3", [&] { ltorch::pow(2, 3); });
  expect_error("ltorch.mul: expected tensors or numbers, got 's'",
               [&] { ltorch::mul(f32, Value("s")); });
  expect_error("ltorch.eq: expected tensors or numbers, got None",
               [&] { ltorch::eq(f32, Value()); });
  // Broadcasting.
  expect_error("ltorch.add: shapes [2, 3] and [3, 2] cannot be broadcast together (dim 0: 2 vs 3)",
               [&] { ltorch::add(m23, m32); });
  expect_error("ltorch.where: shapes [3] and [3, 2] cannot be broadcast together (dim 1: 3 vs 2)",
               [&] { ltorch::where(b, f32, m32); });
  // alpha
  expect_error("ltorch.add: alpha must be a number, got 'two'",
               [&] { ltorch::add(f32, f32, "two"); });
  expect_error("ltorch.add: alpha 2.5 must be an integer for an int64 result",
               [&] { ltorch::add(i64, i64, 2.5); });
  expect_error("ltorch.sub: alpha 0.5 must be an integer for an int32 result",
               [&] { ltorch::sub(i32, 1, 0.5); });
  expect_error("ltorch.add: a bool alpha (True) is only supported for bool results, not float32",
               [&] { ltorch::add(f32, f32, true); });
  // sub with bools.
  expect_error("ltorch.sub: subtraction with a bool operand (x3 - x3)", [&] { ltorch::sub(b, b); });
  expect_error("ltorch.sub: subtraction with a bool operand (x0 - True)",
               [&] { ltorch::sub(f32, true); });
  expect_error("ltorch.sub: subtraction with a bool operand (1 - x3)", [&] { ltorch::sub(1, b); });
  // Bool tensors.
  expect_error("ltorch.neg: not supported for bool tensors", [&] { ltorch::neg(b); });
  expect_error("ltorch.abs: not supported for bool tensors", [&] { ltorch::abs(b); });
  expect_error("ltorch.relu: not defined for bool tensors", [&] { ltorch::relu(b); });
  expect_error("ltorch.pow: not supported for bool operands (x3 and True)",
               [&] { ltorch::pow(b, true); });
  expect_error("ltorch.clamp: not supported for bool results (a is bool)",
               [&] { ltorch::clamp(b, false, true); });
  // Domain of the op.
  expect_error("ltorch.silu: expected a floating-point tensor, got int64",
               [&] { ltorch::silu(i64); });
  expect_error("ltorch.pow: integers to negative integer powers are not allowed (int32 ** -1)",
               [&] { ltorch::pow(i32, -1); });
  expect_error("ltorch.pow: integers to negative integer powers are not allowed (bool ** -2)",
               [&] { ltorch::pow(b, -2); });
  // clamp and where.
  expect_error("ltorch.clamp: at least one of min and max must not be None",
               [&] { ltorch::clamp(f32, Value(), Value()); });
  expect_error("ltorch.clamp: argument a must be a tensor, got 2.0",
               [&] { ltorch::clamp(2.0, 1, Value()); });
  expect_error("ltorch.where: pred must be a bool tensor, got float32",
               [&] { ltorch::where(f32, f32, f32); });
  expect_error("ltorch.where: argument pred must be a tensor, got True",
               [&] { ltorch::where(true, f32, f32); });
  expect_error("ltorch.where: expected tensors or numbers, got None",
               [&] { ltorch::where(b, f32, Value()); });
}

}  // namespace
}  // namespace thunder
