// Metas of the linear algebra, indexing and in-place prims on hand-built
// traces (no ATen): output shapes, tags, and the errors of strict metas.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

// Runs fn inside a fresh trace with inputs of the given shapes and dtypes.
struct Ctx {
  Trace trace;
  TracingScope scope{trace};
  int n = 0;
  ProxyPtr in(Shape shape, DType dtype = DType::f32) {
    return scope.ctx().add_tensor_input("x" + std::to_string(n++), std::move(shape), dtype,
                                        Device::cpu(), false);
  }
};

Shape shape_of(const Value& v) { return v.proxy()->shape; }

void expect_throws(const std::string& needle, const std::function<void()>& fn) {
  try {
    fn();
    ADD_FAILURE() << "expected thunder::Error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(LinalgPrims, MatmulShapes) {
  Ctx c;
  EXPECT_EQ(shape_of(prims::matmul(c.in({3, 4}), c.in({4, 5}))), (Shape{3, 5}));
  EXPECT_EQ(shape_of(prims::matmul(c.in({4}), c.in({4}))), (Shape{}));
  EXPECT_EQ(shape_of(prims::matmul(c.in({4}), c.in({2, 4, 5}))), (Shape{2, 5}));
  EXPECT_EQ(shape_of(prims::matmul(c.in({2, 3, 4}), c.in({4}))), (Shape{2, 3}));
  EXPECT_EQ(shape_of(prims::matmul(c.in({2, 3, 4}), c.in({2, 4, 6}))), (Shape{2, 3, 6}));
}

TEST(LinalgPrims, MatmulErrors) {
  Ctx c;
  expect_throws("prims.matmul: shapes [3, 4] and [5, 6] cannot be multiplied (4 != 5)", [&] {
    prims::matmul(c.in({3, 4}), c.in({5, 6}));
  });
  expect_throws("batch dims [2] and [3]", [&] { prims::matmul(c.in({2, 3, 4}), c.in({3, 4, 5})); });
  expect_throws("batch dims", [&] { prims::matmul(c.in({2, 3, 4}), c.in({4, 5})); });
  expect_throws("dtypes float32 (a) and float64 (b)", [&] {
    prims::matmul(c.in({3, 4}), c.in({4, 5}, DType::f64));
  });
  expect_throws("floating-point", [&] {
    prims::matmul(c.in({3, 4}, DType::i64), c.in({4, 5}, DType::i64));
  });
  expect_throws("at least 1-D", [&] { prims::matmul(c.in({}), c.in({4})); });
}

TEST(LinalgPrims, LinearAndEmbedding) {
  Ctx c;
  EXPECT_EQ(shape_of(prims::linear(c.in({2, 3, 4}), c.in({5, 4}), c.in({5}))), (Shape{2, 3, 5}));
  EXPECT_EQ(shape_of(prims::linear(c.in({4}), c.in({5, 4}), Value())), (Shape{5}));
  expect_throws("prims.linear: bias must have shape [5]", [&] {
    prims::linear(c.in({3, 4}), c.in({5, 4}), c.in({4}));
  });
  expect_throws("prims.linear: shapes [3, 4] and [5, 3]", [&] {
    prims::linear(c.in({3, 4}), c.in({5, 3}), Value());
  });
  Value e = prims::embedding(c.in({2, 3}, DType::i64), c.in({10, 4}, DType::f64));
  EXPECT_EQ(shape_of(e), (Shape{2, 3, 4}));
  EXPECT_EQ(e.proxy()->dtype, DType::f64);
  expect_throws("prims.embedding: indices must be int64 or int32", [&] {
    prims::embedding(c.in({2}), c.in({10, 4}));
  });
  expect_throws("prims.embedding: weight must be 2-D",
                [&] { prims::embedding(c.in({2}, DType::i64), c.in({10})); });
  EXPECT_TRUE(prims::symbol("prims.linear").has_tag(OpTag::MATMUL_OP));
}

TEST(IndexingPrims, Metas) {
  Ctx c;
  EXPECT_EQ(shape_of(prims::take_along_axis(c.in({3, 4}), c.in({3, 7}, DType::i64), 1)),
            (Shape{3, 7}));
  EXPECT_EQ(shape_of(prims::index_select(c.in({3, 4}), 1, c.in({6}, DType::i32))), (Shape{3, 6}));
  EXPECT_EQ(shape_of(prims::index_select(c.in({3, 4}), 0, c.in({}, DType::i64))), (Shape{1, 4}));
  EXPECT_EQ(shape_of(prims::scatter_add(c.in({3, 4}), 0, c.in({5, 4}, DType::i64), c.in({5, 4}))),
            (Shape{3, 4}));
  EXPECT_EQ(shape_of(prims::scatter(c.in({3, 4}), 1, c.in({3, 2}, DType::i64), c.in({3, 3}))),
            (Shape{3, 4}));
  expect_throws("prims.take_along_axis: index must be int64", [&] {
    prims::take_along_axis(c.in({3, 4}), c.in({3, 4}, DType::i32), 0);
  });
  expect_throws("prims.take_along_axis: dim -1 must be in [0, 2)", [&] {
    prims::take_along_axis(c.in({3, 4}), c.in({3, 4}, DType::i64), -1);
  });
  expect_throws("exceeds a shape [3, 4] in dim 1", [&] {
    prims::take_along_axis(c.in({3, 4}), c.in({3, 5}, DType::i64), 0);
  });
  expect_throws("prims.index_select: index must be 0-d or 1-D", [&] {
    prims::index_select(c.in({3, 4}), 0, c.in({2, 2}, DType::i64));
  });
  expect_throws("prims.scatter_add: dtypes float32 (a) and float64 (src)", [&] {
    prims::scatter_add(c.in({3, 4}), 0, c.in({2, 4}, DType::i64), c.in({2, 4}, DType::f64));
  });
  expect_throws("exceeds src shape", [&] {
    prims::scatter(c.in({3, 4}), 0, c.in({2, 4}, DType::i64), c.in({1, 4}));
  });
}

TEST(InplacePrims, CopyMetaAndTags) {
  Ctx c;
  ProxyPtr dst = c.in({2, 3});
  Value out = prims::copy_(c.in({2, 3}), dst);
  EXPECT_NE(out.proxy(), dst);  // a fresh SSA value for dst's new contents
  EXPECT_EQ(shape_of(out), (Shape{2, 3}));
  const Symbol& s = prims::symbol("prims.copy_");
  EXPECT_TRUE(s.has_tag(OpTag::IN_PLACE));
  EXPECT_TRUE(s.has_tag(OpTag::DONT_DCE));
  expect_throws("prims.copy_: shapes [3] (src) and [2, 3] (dst)",
                [&] { prims::copy_(c.in({3}), dst); });
  expect_throws("prims.copy_: dtypes float64 (src) and float32 (dst)", [&] {
    prims::copy_(c.in({2, 3}, DType::f64), dst);
  });
}

}  // namespace
}  // namespace thunder
