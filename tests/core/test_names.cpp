// Deterministic names, device parsing, dtype names and torch's promotion table.
#include <gtest/gtest.h>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"

namespace thunder {
namespace {

TEST(Names, FreshNamesAreDeterministic) {
  for (int run = 0; run < 2; ++run) {
    Trace t;
    TracingScope s(t);
    EXPECT_EQ(s.ctx().new_tensor({1}, DType::f32, Device::cpu())->name, "t0");
    EXPECT_EQ(s.ctx().new_tensor({1}, DType::f32, Device::cpu())->name, "t1");
    EXPECT_EQ(s.ctx().new_number(DType::i64)->name, "i0");
    EXPECT_EQ(s.ctx().new_number(DType::f64)->name, "f0");
    EXPECT_EQ(s.ctx().new_number(DType::b8)->name, "b0");
    EXPECT_EQ(s.ctx().new_number(DType::i64)->name, "i1");
    EXPECT_EQ(s.ctx().new_tensor({}, DType::i64, Device::cpu())->name, "t2");
    EXPECT_EQ(t.new_name("t_captured_"), "t_captured_0");
    EXPECT_EQ(t.new_name("t_captured_"), "t_captured_1");
  }
}

TEST(Names, ReservedInputNamesAreSkipped) {
  Trace t;
  TracingScope s(t);
  s.ctx().add_tensor_input("t1", {2}, DType::f32, Device::cpu(), false);
  s.ctx().add_number_input("i0", DType::i64);
  s.ctx().add_tensor_input("t2", {2}, DType::f32, Device::cpu(), false);
  EXPECT_EQ(s.ctx().new_tensor({1}, DType::f32, Device::cpu())->name, "t0");
  EXPECT_EQ(s.ctx().new_tensor({1}, DType::f32, Device::cpu())->name, "t3");
  EXPECT_EQ(s.ctx().new_number(DType::i64)->name, "i1");
  EXPECT_TRUE(t.name_taken("t1"));
  EXPECT_FALSE(t.name_taken("t0"));  // generated names are not reserved, only inputs
  EXPECT_THROW(s.ctx().add_tensor_input("t1", {2}, DType::f32, Device::cpu(), false), Error);
  EXPECT_THROW(s.ctx().add_number_input("t2", DType::f64), Error);
}

TEST(Names, EmptyLikeKeepsCounters) {
  Trace t;
  {
    TracingScope s(t);
    s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    s.ctx().new_tensor({1}, DType::f32, Device::cpu());
  }
  Trace u = t.empty_like();
  EXPECT_EQ(u.inputs.size(), 1u);
  EXPECT_EQ(u.new_name("t"), "t1");
  EXPECT_TRUE(u.name_taken("x"));
}

TEST(Device, ParseGood) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), (Device{Device::Type::CUDA, -1}));
  EXPECT_EQ(Device::parse("cuda:0"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:7"), Device::cuda(7));
  EXPECT_EQ(Device::parse("cuda:12"), Device::cuda(12));
  EXPECT_EQ(Device::parse("cpu").str(), "cpu");
  EXPECT_EQ(Device::parse("cuda").str(), "cuda");
  EXPECT_EQ(Device::parse("cuda:3").str(), "cuda:3");
}

TEST(Device, ParseBad) {
  for (const char* s : {"", "gpu", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cuda:1.0",
                        "cuda:99999", "cpu:0", " cpu", "cuda0", "cuda::1"}) {
    try {
      Device::parse(s);
      ADD_FAILURE() << "parsed '" << s << "'";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find("Device: cannot parse device string '" + std::string(s) + "'"),
          std::string::npos)
          << e.what();
    }
  }
}

TEST(DType, NamesAndSizes) {
  struct Row {
    DType d;
    const char* short_name;
    const char* long_name;
    int64_t size;
    TypeKind kind;
  };
  const Row rows[] = {{DType::b8, "b8", "bool", 1, TypeKind::Bool},
                      {DType::u8, "u8", "uint8", 1, TypeKind::Int},
                      {DType::i8, "i8", "int8", 1, TypeKind::Int},
                      {DType::i16, "i16", "int16", 2, TypeKind::Int},
                      {DType::i32, "i32", "int32", 4, TypeKind::Int},
                      {DType::i64, "i64", "int64", 8, TypeKind::Int},
                      {DType::f16, "f16", "float16", 2, TypeKind::Float},
                      {DType::bf16, "bf16", "bfloat16", 2, TypeKind::Float},
                      {DType::f32, "f32", "float32", 4, TypeKind::Float},
                      {DType::f64, "f64", "float64", 8, TypeKind::Float}};
  for (const Row& r : rows) {
    EXPECT_EQ(short_name(r.d), r.short_name);
    EXPECT_EQ(long_name(r.d), r.long_name);
    EXPECT_EQ(item_size(r.d), r.size) << r.long_name;
    EXPECT_EQ(kind_of(r.d), r.kind) << r.long_name;
    EXPECT_EQ(is_float(r.d), r.kind == TypeKind::Float);
    EXPECT_EQ(is_bool(r.d), r.kind == TypeKind::Bool);
    EXPECT_EQ(is_integer(r.d), r.kind == TypeKind::Int);
  }
  EXPECT_FALSE(is_signed(DType::u8));
  EXPECT_FALSE(is_signed(DType::b8));
  EXPECT_TRUE(is_signed(DType::i8));
  EXPECT_TRUE(is_signed(DType::f16));
  EXPECT_EQ(kDefaultFloat, DType::f32);
}

// torch.promote_types for every pair, as printed by PyTorch's table.
TEST(DType, PromoteTypesMatchesTorch) {
  using D = DType;
  const D b8 = D::b8, u8 = D::u8, i8 = D::i8, i16 = D::i16, i32 = D::i32, i64 = D::i64,
          f16 = D::f16, bf16 = D::bf16, f32 = D::f32, f64 = D::f64;
  const D order[] = {b8, u8, i8, i16, i32, i64, f16, bf16, f32, f64};
  // Rows and columns in `order` (torch/_prims_common + c10/core/ScalarType.cpp).
  const D table[10][10] = {
      /* b8 */ {b8, u8, i8, i16, i32, i64, f16, bf16, f32, f64},
      /* u8 */ {u8, u8, i16, i16, i32, i64, f16, bf16, f32, f64},
      /* i8 */ {i8, i16, i8, i16, i32, i64, f16, bf16, f32, f64},
      /* i16 */ {i16, i16, i16, i16, i32, i64, f16, bf16, f32, f64},
      /* i32 */ {i32, i32, i32, i32, i32, i64, f16, bf16, f32, f64},
      /* i64 */ {i64, i64, i64, i64, i64, i64, f16, bf16, f32, f64},
      /* f16 */ {f16, f16, f16, f16, f16, f16, f16, f32, f32, f64},
      /* bf16 */ {bf16, bf16, bf16, bf16, bf16, bf16, f32, bf16, f32, f64},
      /* f32 */ {f32, f32, f32, f32, f32, f32, f32, f32, f32, f64},
      /* f64 */ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
  };
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      EXPECT_EQ(promote_types(order[i], order[j]), table[i][j])
          << long_name(order[i]) << " + " << long_name(order[j]);
}

TEST(Proxy, TypeStrings) {
  Proxy p;
  p.shape = {2, 3};
  p.dtype = DType::bf16;
  p.device = Device::cuda(0);
  EXPECT_EQ(p.type_str(), "cuda:0 bf16[2, 3]");
  p.shape = {};
  EXPECT_EQ(p.type_str(), "cuda:0 bf16[]");
  EXPECT_EQ(p.numel(), 1);
  p.shape = {4, 0};
  EXPECT_EQ(p.numel(), 0);
  p.kind = Proxy::Kind::Number;
  p.dtype = DType::f64;
  EXPECT_EQ(p.type_str(), "float");
  p.dtype = DType::i64;
  EXPECT_EQ(p.type_str(), "int");
  p.dtype = DType::b8;
  EXPECT_EQ(p.type_str(), "bool");
  EXPECT_EQ(shape_str({}), "[]");
  EXPECT_EQ(shape_str({5}), "[5]");
}

}  // namespace
}  // namespace thunder
