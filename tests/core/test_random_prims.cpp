// The stateless RNG prims on proxies (torch-free): get_and_update_rng_state
// and uniform_philox metas, their tags, and every check, with the prim and the
// offending value named in the message.
#include <gtest/gtest.h>

#include <limits>

#include "test_symbols.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

class RandomPrims : public testing::TracingTest {};

TEST_F(RandomPrims, StateIsTwoNamedCpuInt64Scalars) {
  Value s = prims::get_and_update_rng_state(Device::cpu(), 6);
  ASSERT_TRUE(s.is_list());
  ASSERT_EQ(s.as_list().size(), 2u);
  const Proxy &seed = *s.as_list()[0].proxy(), &offset = *s.as_list()[1].proxy();
  EXPECT_EQ(seed.name, "seed0");
  EXPECT_EQ(offset.name, "offset0");
  EXPECT_EQ(seed.type_str(), "cpu i64[]");
  EXPECT_EQ(offset.type_str(), "cpu i64[]");
  EXPECT_FALSE(seed.requires_grad);
  Value u = prims::uniform_philox({2, 3}, 0.0, 1.0, s.as_list()[0], s.as_list()[1], Device::cpu(),
                                  DType::bf16);
  EXPECT_EQ(u.proxy()->type_str(), "cpu bf16[2, 3]");
  // Ints are seeds and offsets too (a fixed stream, e.g. in tests).
  Value v =
      prims::uniform_philox({4}, -1.0, 1.0, int64_t{42}, int64_t{0}, Device::cpu(), DType::f64);
  EXPECT_EQ(v.proxy()->type_str(), "cpu f64[4]");
  EXPECT_EQ(bsym_str(trace_.bsyms[0]),
            "[seed0, offset0] = prims.get_and_update_rng_state(devices.Device(\"cpu\"), 6)  "
            "# seed0: \"cpu i64[]\", offset0: \"cpu i64[]\"\n");
  EXPECT_EQ(bsym_str(trace_.bsyms[1]),
            "t0 = prims.uniform_philox((2, 3), 0.0, 1.0, seed0, offset0, devices.Device(\"cpu\"), "
            "dtypes.bfloat16)  # t0: \"cpu bf16[2, 3]\"\n");
}

TEST_F(RandomPrims, Tags) {
  const Symbol& state = prims::symbol("prims.get_and_update_rng_state");
  EXPECT_TRUE(state.has_tag(OpTag::RANDOM_OP));
  EXPECT_TRUE(state.has_tag(OpTag::DONT_DCE));
  // Pure (not a stateful RANDOM_OP) and a factory: recomputable, mergeable.
  EXPECT_EQ(prims::symbol("prims.uniform_philox").tags, tag_bits({OpTag::PURE_FACTORY}));
  EXPECT_TRUE(prims::symbol("prims.uniform").has_tag(OpTag::RANDOM_OP));
  EXPECT_FALSE(prims::symbol("prims.uniform").has_tag(OpTag::PURE_FACTORY));
  EXPECT_TRUE(prims::symbol("prims.full").has_tag(OpTag::PURE_FACTORY));
  EXPECT_TRUE(prims::symbol("prims.iota").has_tag(OpTag::PURE_FACTORY));
  EXPECT_FALSE(prims::symbol("prims.empty").has_tag(OpTag::PURE_FACTORY));
}

TEST_F(RandomPrims, Errors) {
  Value s = prims::get_and_update_rng_state(Device::cpu(), 1);
  Value seed = s.as_list()[0], offset = s.as_list()[1];
  const double inf = std::numeric_limits<double>::infinity();
  auto philox = [&](Shape shape, Value lo, Value hi, Value sd, Value off, DType dt) {
    return prims::uniform_philox(shape, lo, hi, sd, off, Device::cpu(), dt);
  };
  expect_error("prims.uniform_philox: negative size in shape [2, -1]", [&] {
    philox({2, -1}, 0.0, 1.0, seed, offset, DType::f32);
  });
  expect_error(
      "prims.uniform_philox: minval must be less than maxval, got minval=1.0 and "
      "maxval=0.5",
      [&] { philox({2}, 1.0, 0.5, seed, offset, DType::f32); });
  expect_error("prims.uniform_philox: minval must be less than maxval, got minval=2 and maxval=2",
               [&] { philox({2}, int64_t{2}, int64_t{2}, seed, offset, DType::f32); });
  expect_error("prims.uniform_philox: minval and maxval must be finite, got 0.0 and inf",
               [&] { philox({2}, 0.0, inf, seed, offset, DType::f32); });
  expect_error("prims.uniform_philox: minval and maxval must be numbers, got 'a' and 1.0",
               [&] { philox({2}, "a", 1.0, seed, offset, DType::f32); });
  expect_error("prims.uniform_philox: dtype must be floating, got int64",
               [&] { philox({2}, 0.0, 1.0, seed, offset, DType::i64); });
  expect_error(
      "prims.uniform_philox: seed must be an int or a cpu int64 tensor of shape [], got "
      "x0: \"cpu f32[]\"",
      [&] { philox({2}, 0.0, 1.0, in({}, DType::f32), offset, DType::f32); });
  expect_error(
      "prims.uniform_philox: offset must be an int or a cpu int64 tensor of shape [], "
      "got x1: \"cpu i64[1]\"",
      [&] { philox({2}, 0.0, 1.0, seed, in({1}, DType::i64), DType::f32); });
  expect_error(
      "prims.uniform_philox: seed must be an int or a cpu int64 tensor of shape [], got "
      "0.5",
      [&] { philox({2}, 0.0, 1.0, 0.5, offset, DType::f32); });
  expect_error("prims.get_and_update_rng_state: counters must be non-negative, got -1",
               [&] { prims::get_and_update_rng_state(Device::cpu(), -1); });
  expect_error("prims.get_and_update_rng_state: device must be a device, got 'cpu'", [&] {
    call_symbol(prims::symbol("prims.get_and_update_rng_state"), {Value("cpu"), Value(1)});
  });
  expect_error("prims.uniform: minval must be less than maxval, got minval=1.0 and maxval=0.0",
               [&] { prims::uniform({2}, 1.0, 0.0, Device::cpu(), DType::f32); });
  expect_error("prims.uniform: dtype must be floating, got bool",
               [&] { prims::uniform({2}, 0.0, 1.0, Device::cpu(), DType::b8); });
}

}  // namespace
}  // namespace thunder
