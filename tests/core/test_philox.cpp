// Philox4x32-10 against Random123's published known answers
// (tests/kat_vectors of github.com/DEShawResearch/random123), and the mapping
// of its words to uniform floats (thunder/core/philox.h).
#include <gtest/gtest.h>

#include <cmath>

#include "thunder/core/philox.h"

namespace thunder::philox {
namespace {

// The generator is constexpr: the known answers hold at compile time too.
static_assert(philox4x32_10({0, 0, 0, 0}, 0, 0) ==
              Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});

TEST(Philox, KnownAnswerZeros) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, 0, 0),
            (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox, KnownAnswerAllOnes) {
  const uint32_t f = 0xffffffff;
  EXPECT_EQ(philox4x32_10({f, f, f, f}, f, f),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox, KnownAnswerPiDigits) {
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, SeedAndCounterLayout) {
  // The seed's low word is key 0; the counter's low word is counter word 0.
  const uint64_t seed = 0x299f31d0a4093822ull, c = 0x85a308d3243f6a88ull;
  EXPECT_EQ(block(seed, c), philox4x32_10({0x243f6a88, 0x85a308d3, 0, 0}, 0xa4093822, 0x299f31d0));
}

TEST(Philox, CountersPerDraw) {
  EXPECT_EQ(counters(0, DType::f32), 0);
  EXPECT_EQ(counters(4, DType::f32), 1);
  EXPECT_EQ(counters(5, DType::f16), 2);
  EXPECT_EQ(counters(5, DType::bf16), 2);
  EXPECT_EQ(counters(4, DType::f64), 2);
  EXPECT_EQ(counters(5, DType::f64), 3);
}

TEST(Philox, ElementMapping) {
  const uint64_t seed = 42, offset = 7;
  // float: element 6 is word 2 of counter offset + 1.
  const Block b1 = block(seed, offset + 1);
  EXPECT_EQ((element<float, float>(seed, offset, 6, 0.0f, 1.0f)),
            static_cast<float>(b1[2] >> 8) * 0x1p-24f);
  // double: element 3 is words 2 (low) and 3 (high) of counter offset + 1.
  const uint64_t w = (uint64_t{b1[3]} << 32) | b1[2];
  EXPECT_EQ((element<double, double>(seed, offset, 3, 0.0, 1.0)),
            static_cast<double>(w >> 11) * 0x1p-53);
  // Scaling: u * (hi - lo) + lo.
  const float u = element<float, float>(seed, offset, 6, 0.0f, 1.0f);
  EXPECT_EQ((element<float, float>(seed, offset, 6, -2.0f, 3.0f)), u * 5.0f + -2.0f);
}

TEST(Philox, UnitIntervalEndpoints) {
  EXPECT_EQ(unit_float(0), 0.0f);
  EXPECT_EQ(unit_float(0xffffffff), 1.0f - 0x1p-24f);
  EXPECT_EQ(unit_double(0, 0), 0.0);
  EXPECT_EQ(unit_double(0xffffffff, 0xffffffff), 1.0 - 0x1p-53);
}

TEST(Philox, RoundingUpToHiGivesLo) {
  // 1 + (1 - 2^-24) * 2^-23 rounds to 1 + 2^-23 = hi: the draw stays in [lo, hi).
  const float lo = 1.0f, hi = 1.0f + 0x1p-23f;
  EXPECT_EQ((scale<float, float>(unit_float(0xffffffff), lo, hi)), lo);
  EXPECT_EQ((scale<float, float>(unit_float(0), lo, hi)), lo);
}

// n draws are in range with the right mean and variance. For U(0, 1) the mean
// of n = 2^18 draws has standard deviation sqrt(1/12/n) ~ 5.6e-4; the bounds
// below are ~9 standard deviations.
template <typename T>
void check_moments(T lo, T hi) {
  const int64_t n = int64_t{1} << 18;
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T v = element<T, T>(1234, 99, i, lo, hi);
    ASSERT_GE(v, lo);
    ASSERT_LT(v, hi);
    const double unit = (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo);
    sum += unit;
    sq += unit * unit;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 5e-3);
  EXPECT_NEAR(var, 1.0 / 12, 3e-3);
}

TEST(Philox, FloatRangeAndMoments) { check_moments<float>(0.0f, 1.0f); }
TEST(Philox, FloatShiftedRangeAndMoments) { check_moments<float>(-3.0f, 5.0f); }
TEST(Philox, DoubleRangeAndMoments) { check_moments<double>(0.0, 1.0); }

TEST(Philox, DistinctSeedsAndOffsetsGiveDistinctStreams) {
  EXPECT_NE(block(1, 0), block(2, 0));
  EXPECT_NE(block(1, 0), block(1, 1));
  EXPECT_NE(block(uint64_t{1} << 32, 0), block(0, 0));  // the seed's high word matters
}

}  // namespace
}  // namespace thunder::philox
