// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3",
// SC'11) and the mapping of its words to uniform floats: the whole definition
// of prims.uniform_philox. A draw is a pure function of (seed, offset), so a
// backward can recompute a forward's random values bit for bit instead of
// saving them. Torch-free and header-only: the ATen kernel, the tests and
// generated fusion code must all compute exactly what is written here.
//
// The element mapping. A draw of n elements of dtype T from U(lo, hi) with
// key `seed` and first counter `offset`:
//
//   E = elements_per_counter(T): 4 for f32, f16, bf16 (one 32-bit word each),
//       2 for f64 (two words each).
//   Element i uses the counter c = offset + i / E (64-bit, wrapping) as the
//   128-bit Philox counter {lo32(c), hi32(c), 0, 0} with the key
//   {lo32(seed), hi32(seed)}; call the result block[0..3].
//     f32, f16, bf16: w = block[i % 4];          u = float(w >> 8) * 2^-24
//     f64:            w = block[2*(i%2)] | uint64(block[2*(i%2) + 1]) << 32;
//                                                u = double(w >> 11) * 2^-53
//   (u is exact and in [0, 1).) In the compute type C (float, or double for
//   f64), with l = C(lo) and h = C(hi):
//     v = u * (h - l) + l        each operation rounded: no fused multiply-add
//                                (generated code compiles with -ffp-contract=off)
//     r = T(v)                   round to nearest even (identity for f32/f64)
//     r = T(l) if !(r < T(h))    keeps [lo, hi) when rounding reached hi
//   A draw consumes counters(n, T) = ceil(n / E) counters: the next draw from
//   the same key starts at offset + counters(n, T).
#pragma once

#include <array>
#include <cstdint>

#include "thunder/core/dtype.h"

namespace thunder::philox {

using Block = std::array<uint32_t, 4>;

// Multipliers and key increments (Weyl sequence) of Philox4x32.
inline constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kBump0 = 0x9E3779B9u, kBump1 = 0xBB67AE85u;

// Ten rounds; the key is bumped before every round but the first.
constexpr Block philox4x32_10(Block ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kBump0;
      k1 += kBump1;
    }
    const uint64_t p0 = uint64_t{kMul0} * ctr[0], p1 = uint64_t{kMul1} * ctr[2];
    ctr = {static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ k0, static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ k1, static_cast<uint32_t>(p0)};
  }
  return ctr;
}

// The block of counter `c` under a 64-bit seed (the mapping's key and counter layout).
constexpr Block block(uint64_t seed, uint64_t c) {
  return philox4x32_10({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

constexpr int64_t elements_per_counter(DType t) { return t == DType::f64 ? 2 : 4; }

constexpr int64_t counters(int64_t n, DType t) {
  const int64_t e = elements_per_counter(t);
  return (n + e - 1) / e;
}

// Words to [0, 1): the top 24 (float) or 53 (double) bits, exactly.
constexpr float unit_float(uint32_t w) { return static_cast<float>(w >> 8) * 0x1p-24f; }
constexpr double unit_double(uint32_t lo_word, uint32_t hi_word) {
  const uint64_t w = (uint64_t{hi_word} << 32) | lo_word;
  return static_cast<double>(w >> 11) * 0x1p-53;
}

// [0, 1) to [l, h) in the compute type C, rounded to the output type T
// (T is C, or a 16-bit float type constructible from float).
template <typename T, typename C>
T scale(C u, C l, C h) {
  const C prod = u * (h - l);  // its own statement: ISO C++ contracts only within one
  const T r = static_cast<T>(prod + l);
  return r < static_cast<T>(h) ? r : static_cast<T>(l);
}

// Element i of a draw (the reference the fast kernels are tested against).
// C is double for T = double, float otherwise.
template <typename T, typename C>
T element(uint64_t seed, uint64_t offset, int64_t i, C lo, C hi) {
  if constexpr (sizeof(C) == 8) {
    const Block b = block(seed, offset + static_cast<uint64_t>(i / 2));
    const int w = 2 * static_cast<int>(i % 2);
    return scale<T, C>(unit_double(b[w], b[w + 1]), lo, hi);
  } else {
    const Block b = block(seed, offset + static_cast<uint64_t>(i / 4));
    return scale<T, C>(unit_float(b[i % 4]), lo, hi);
  }
}

}  // namespace thunder::philox
