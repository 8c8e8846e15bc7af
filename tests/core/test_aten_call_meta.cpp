// The aten.call meta on proxies (torch-free): results typed from the
// statement, on the first tensor argument's device, printed as the trace
// shows them, and malformed statements refused naming aten.call.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/core/error.h"
#include "thunder/prims/aten_call.h"

namespace thunder {
namespace {

class AtenCallMeta : public testing::TracingTest {};

TEST_F(AtenCallMeta, ResultsComeFromTheStatementOnTheFirstTensorsDevice) {
  ProxyPtr x = in({4, 6}, DType::f64, Device::cuda(1));
  Value r = prims::aten_call("aten::kthvalue", {{DType::f64, {4}}, {DType::i64, {4}}},
                             {Value(x), Value(int64_t{2}), Value(int64_t{1}), Value(false)});
  ASSERT_TRUE(r.is_list());
  ASSERT_EQ(r.as_list().size(), 2u);
  EXPECT_EQ(r.as_list()[0].proxy()->type_str(), "cuda:1 f64[4]");
  EXPECT_EQ(r.as_list()[1].proxy()->type_str(), "cuda:1 i64[4]");
  EXPECT_EQ(bsym_str(trace_.bsyms[0]),
            "[t0, t1] = aten.call('aten::kthvalue', [[dtypes.float64, (4,)], [dtypes.int64, "
            "(4,)]], x0, 2, 1, False)  # t0: \"cuda:1 f64[4]\", t1: \"cuda:1 i64[4]\"\n");
  EXPECT_TRUE(prims::is_aten_call(trace_.bsyms[0]));
  EXPECT_EQ(prims::aten_call_op(trace_.bsyms[0]), "aten::kthvalue");
  // One result is a value, not a list; without tensor arguments it is on cpu.
  Value one = prims::aten_call("aten::eye", {{DType::f32, {3, 3}}}, {Value(int64_t{3})});
  ASSERT_TRUE(one.is_tensor());
  EXPECT_EQ(one.proxy()->type_str(), "cpu f32[3, 3]");
}

TEST_F(AtenCallMeta, MalformedStatementsAreRefused) {
  const Symbol& s = prims::aten_call_symbol();
  expect_error("aten.call: expects an operator name", [&] { call_symbol(s, {Value(1)}); });
  expect_error("aten.call: expects an operator name", [&] {
    call_symbol(s, {Value("erfinv"), Value(std::vector<Value>{})});
  });
  expect_error("aten.call: 'aten::erfinv' has no results", [&] {
    call_symbol(s, {Value("aten::erfinv"), Value(std::vector<Value>{})});
  });
  expect_error("aten.call: each result must be [dtype, shape], got (3,)", [&] {
    call_symbol(s,
                {Value("aten::erfinv"), Value(std::vector<Value>{Value(std::vector<int64_t>{3})})});
  });
  expect_error("aten.call: negative size", [&] {
    call_symbol(
        s, {Value("aten::erfinv"), Value(std::vector<Value>{Value(std::vector<Value>{
                                       Value(DType::f32), Value(std::vector<int64_t>{-1})})})});
  });
}

}  // namespace
}  // namespace thunder
