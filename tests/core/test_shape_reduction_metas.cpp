// Shape and reduction ops traced by hand (no ATen): output metadata, the prims
// a composite decomposes into, and errors that name the op.
#include <gtest/gtest.h>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

// Traces `fn` over one input and returns the trace.
template <typename F>
Trace trace1(const Shape& shape, DType dtype, F fn) {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", shape, dtype, Device::cpu(), false);
  t.output = fn(Value(x));
  return t;
}

const Proxy& out(const Trace& t) { return *t.output.proxy(); }

// Expects `fn` to throw a thunder::Error whose message contains `needle`.
template <typename F>
void expect_throws(const std::string& needle, const Shape& shape, DType dtype, F fn) {
  try {
    trace1(shape, dtype, fn);
    ADD_FAILURE() << "expected an error mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ShapeReductionMetas, SumKeepdimAndDtype) {
  Trace t = trace1({2, 3, 4}, DType::i32, [](const Value& x) {
    return ltorch::sum(x, {-1, 0}, true);
  });
  EXPECT_EQ(out(t).shape, (Shape{1, 3, 1}));
  EXPECT_EQ(out(t).dtype, DType::i64);
  t = trace1({2, 3, 4}, DType::f32, [](const Value& x) { return ltorch::sum(x, {}, false); });
  EXPECT_EQ(out(t).shape, Shape{});
  EXPECT_EQ(out(t).dtype, DType::f32);
  t = trace1({}, DType::f32, [](const Value& x) { return ltorch::sum(x, {-1}, true); });
  EXPECT_EQ(out(t).shape, Shape{});
}

TEST(ShapeReductionMetas, MeanDecomposesIntoSumAndDiv) {
  Trace t = trace1({2, 3}, DType::f32, [](const Value& x) { return ltorch::mean(x, {1}, false); });
  EXPECT_EQ(t.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2, 3]\"\n"
            "  t1 = ltorch.mean(x, (1,), False)  # t1: \"cpu f32[2]\"\n"
            "    # t0 = prims.sum(x, (1,))  # t0: \"cpu f32[2]\"\n"
            "    # t1 = prims.div(t0, 3.0)  # t1: \"cpu f32[2]\"\n"
            "  return t1\n");
}

TEST(ShapeReductionMetas, HalfReductionsAccumulateInFloat) {
  Trace t = trace1({4}, DType::f16, [](const Value& x) { return ltorch::var(x, {}, 1.0, false); });
  EXPECT_EQ(out(t).dtype, DType::f16);
  const auto& subs = t.bsyms.at(0).subsymbols;
  ASSERT_EQ(subs.size(), 3u);
  EXPECT_EQ(subs[0].sym->id, "prims.convert_element_type");
  EXPECT_EQ(subs[1].sym->id, "prims.var");
  EXPECT_EQ(subs[1].output.proxy()->dtype, DType::f32);
}

TEST(ShapeReductionMetas, ArgmaxAndMax) {
  Trace t =
      trace1({2, 3}, DType::f32, [](const Value& x) { return ltorch::argmax(x, Value(), true); });
  EXPECT_EQ(out(t).shape, (Shape{1, 1}));
  EXPECT_EQ(out(t).dtype, DType::i64);
  t = trace1({2, 3}, DType::b8, [](const Value& x) { return ltorch::max(x, -1, true); });
  ASSERT_TRUE(t.output.is_list());
  const auto& outs = t.output.as_list();
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].proxy()->shape, (Shape{2, 1}));
  EXPECT_EQ(outs[0].proxy()->dtype, DType::b8);
  EXPECT_EQ(outs[1].proxy()->dtype, DType::i64);
}

TEST(ShapeReductionMetas, ReductionPrimsRejectBadDims) {
  expect_throws("prims.sum", {2, 3}, DType::f32, [](const Value& x) {
    return prims::sum(x, {1, 0});
  });
  expect_throws("prims.sum", {2, 3}, DType::f32,
                [](const Value& x) { return prims::sum(x, {-1}); });
  expect_throws("prims.amax", {2, 3}, DType::f32,
                [](const Value& x) { return prims::amax(x, {2}); });
  expect_throws("prims.amin", {0, 3}, DType::f32,
                [](const Value& x) { return prims::amin(x, {0}); });
  expect_throws("prims.var", {2, 3}, DType::i64,
                [](const Value& x) { return prims::var(x, {0}, 1.0); });
  expect_throws("prims.argmax", {2, 3}, DType::b8,
                [](const Value& x) { return prims::argmax(x, Value(int64_t{0})); });
  expect_throws("prims.argmax", {0}, DType::f32,
                [](const Value& x) { return prims::argmax(x, Value()); });
  expect_throws("prims.sum", {2}, DType::b8, [](const Value& x) { return prims::sum(x, {0}); });
}

TEST(ShapeReductionMetas, LtorchReductionErrors) {
  expect_throws("ltorch.mean", {2}, DType::i64,
                [](const Value& x) { return ltorch::mean(x, {}, false); });
  expect_throws("ltorch.sum: dim 2 is out of range", {2, 3}, DType::f32,
                [](const Value& x) { return ltorch::sum(x, {2}, false); });
  expect_throws("ltorch.amax: cannot reduce dim 0 of size 0", {0, 3}, DType::f32,
                [](const Value& x) { return ltorch::amax(x, {}, false); });
}

TEST(ShapeReductionMetas, ShapeOpShapes) {
  auto shape_of = [](const Shape& in, auto fn) { return out(trace1(in, DType::f32, fn)).shape; };
  EXPECT_EQ(shape_of({2, 3, 4},
                     [](const Value& x) {
                       return ltorch::reshape(x, {4, -1});
                     }),
            (Shape{4, 6}));
  EXPECT_EQ(shape_of({2, 3, 4}, [](const Value& x) { return ltorch::flatten(x, 1, -1); }),
            (Shape{2, 12}));
  EXPECT_EQ(shape_of({2, 3, 4},
                     [](const Value& x) {
                       return ltorch::permute(x, {2, 0, 1});
                     }),
            (Shape{4, 2, 3}));
  EXPECT_EQ(shape_of({2, 3}, [](const Value& x) { return ltorch::unsqueeze(x, -1); }),
            (Shape{2, 3, 1}));
  EXPECT_EQ(shape_of({2, 1, 3, 1}, [](const Value& x) { return ltorch::squeeze(x, Value()); }),
            (Shape{2, 3}));
  EXPECT_EQ(shape_of({3, 1},
                     [](const Value& x) {
                       return ltorch::expand(x, {2, -1, 5});
                     }),
            (Shape{2, 3, 5}));
  EXPECT_EQ(shape_of({4, 5}, [](const Value& x) { return ltorch::narrow(x, 1, -3, 2); }),
            (Shape{4, 2}));
  EXPECT_EQ(shape_of({4, 5}, [](const Value& x) { return ltorch::select(x, 0, -1); }), (Shape{5}));
  EXPECT_EQ(shape_of({2, 3, 4}, [](const Value& x) { return ltorch::triu(x, 1); }),
            (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of({2, 3},
                     [](const Value& x) {
                       return ltorch::stack({x, x}, -1);
                     }),
            (Shape{2, 3, 2}));
}

TEST(ShapeReductionMetas, CatPromotes) {
  Trace t;
  TracingScope s(t);
  ProxyPtr a = s.ctx().add_tensor_input("a", {2, 3}, DType::i64, Device::cpu(), false);
  ProxyPtr b = s.ctx().add_tensor_input("b", {1, 3}, DType::f16, Device::cpu(), false);
  Value r = ltorch::cat({a, b}, -2);
  EXPECT_EQ(r.proxy()->shape, (Shape{3, 3}));
  EXPECT_EQ(r.proxy()->dtype, DType::f16);
}

TEST(ShapeReductionMetas, ChunkCountsLikeTorch) {
  auto sizes = [](int64_t n, int64_t chunks) {
    Trace t = trace1({n}, DType::f32, [=](const Value& x) { return ltorch::chunk(x, chunks, 0); });
    std::vector<int64_t> r;
    for (const Value& v : t.output.as_list()) r.push_back(v.proxy()->shape[0]);
    return r;
  };
  EXPECT_EQ(sizes(6, 4), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(sizes(5, 4), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(sizes(2, 5), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(sizes(0, 3), (std::vector<int64_t>{0, 0, 0}));
}

TEST(ShapeReductionMetas, IdentityOpsRecordNothing) {
  Trace t = trace1({2, 3}, DType::f32, [](const Value& x) {
    return ltorch::to(ltorch::contiguous(ltorch::reshape(x, {2, -1})), DType::f32);
  });
  EXPECT_TRUE(t.bsyms.empty());
  EXPECT_EQ(out(t).name, "x");
}

TEST(ShapeReductionMetas, ShapeErrorsNameTheOp) {
  expect_throws("ltorch.reshape: cannot reshape [2, 3] (6 elements) to [4]", {2, 3}, DType::f32,
                [](const Value& x) { return ltorch::reshape(x, {4}); });
  expect_throws("ltorch.reshape: only one dimension", {2, 3}, DType::f32, [](const Value& x) {
    return ltorch::reshape(x, {-1, -1});
  });
  expect_throws("ltorch.split: split sizes [2, 2]", {5}, DType::f32, [](const Value& x) {
    return ltorch::split(x, std::vector<int64_t>{2, 2}, 0);
  });
  expect_throws("ltorch.chunk", {5}, DType::f32,
                [](const Value& x) { return ltorch::chunk(x, 0, 0); });
  expect_throws("ltorch.select: index 5", {5}, DType::f32,
                [](const Value& x) { return ltorch::select(x, 0, 5); });
  expect_throws("ltorch.expand", {3, 4}, DType::f32, [](const Value& x) {
    return ltorch::expand(x, {3, 5});
  });
  expect_throws("ltorch.triu", {3}, DType::f32, [](const Value& x) { return ltorch::triu(x, 0); });
  expect_throws("prims.reshape", {2, 3}, DType::f32,
                [](const Value& x) { return prims::reshape(x, {5}); });
}

}  // namespace
}  // namespace thunder
