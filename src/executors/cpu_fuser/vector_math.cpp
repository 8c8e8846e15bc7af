#include "vector_math.h"

namespace thunder::cpu_fuser {

std::string_view kernel_preamble() {
  return R"(#include <stdint.h>

static inline float asf(int32_t i) { float f; __builtin_memcpy(&f, &i, 4); return f; }
static inline int32_t asi(float f) { int32_t i; __builtin_memcpy(&i, &f, 4); return i; }
static inline float bf2f(uint16_t v) { return asf((int32_t)((uint32_t)v << 16)); }
static inline uint16_t f2bf(float f) {  // round to nearest even; NaN stays NaN
  uint32_t u = (uint32_t)asi(f);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)0x7fc0 : (uint16_t)r;
}
static inline float rh(float x) { return (float)(_Float16)x; }
static inline float rbf(float x) { return bf2f(f2bf(x)); }

template <class T> static inline T fmax_nan(T a, T b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
template <class T> static inline T fmin_nan(T a, T b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
// Truncating division; x / 0 gives 0 (libtorch raises) instead of trapping.
template <class T> static inline T idiv(T a, T b) {
  if (b == 0) return 0;
  if ((T)-1 < 0 && b == (T)-1) return (T)(0ull - (unsigned long long)a);
  return (T)(a / b);
}
template <class T> static inline T ipow(T a, T b) {
  if ((T)-1 < 0 && b < 0) return a == 1 ? 1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : 1) : 0);
  unsigned long long r = 1, x = (unsigned long long)a;
  for (unsigned long long e = (unsigned long long)b; e; e >>= 1) { if (e & 1) r *= x; x *= x; }
  return (T)r;
}

#define FMA(a, b, c) __builtin_fmaf(a, b, c)
static const float kInf = __builtin_inff();

// exp(r) for x = k ln2 + r, |r| <= ln2/2 (k returned): vm_expf's core, for
// callers that apply 2^k themselves; x within [-104, 88.8] (NaN gives NaN).
static inline float vm_exp_reduced(float x, float& k) {
  k = __builtin_rintf(x * 1.44269504088896341f);
  float r = FMA(k, -0.693359375f, x);
  r = FMA(k, 2.12194440e-4f, r);
  float p = 1.394110843e-03f;
  p = FMA(p, r, 8.375126398e-03f);
  p = FMA(p, r, 4.166635290e-02f);
  p = FMA(p, r, 1.666641551e-01f);
  p = FMA(p, r, 5.000000047e-01f);
  p = FMA(p, r, 1.000000038e+00f);
  return FMA(p, r, 1.0f);
}

// exp(x) = 2^k exp(r); 2^k applied in two halves for subnormal results.
static inline float vm_expf(float x) {
  float xc = x > 88.8f ? 88.8f : (x < -104.0f ? -104.0f : x);
  float k;
  const float p = vm_exp_reduced(xc, k);
  int32_t ki = (int32_t)k, k1 = ki >> 1;
  float y = p * asf((k1 + 127) << 23) * asf((ki - k1 + 127) << 23);
  return x != x ? x : y;
}

// log(x) = e ln2 + 2 atanh((m - 1) / (m + 1)), m in [sqrt(1/2), sqrt(2)).
static inline float vm_logf(float x) {
  int sub = x < 1.17549435e-38f;
  float xs = sub ? x * 8388608.0f : x;
  int32_t ix = asi(xs);
  int32_t e = ((ix >> 23) & 0xff) - 127 - (sub ? 23 : 0);
  float m = asf((ix & 0x007fffff) | 0x3f800000);
  int big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e += big;
  float z = (m - 1.0f) / (m + 1.0f), w = z * z;
  float p = 1.166645640e-01f;
  p = FMA(p, w, 1.427536542e-01f);
  p = FMA(p, w, 2.000006132e-01f);
  p = FMA(p, w, 3.333333328e-01f);
  float fe = (float)e;
  float r = FMA(2.0f * z * w, p, 2.0f * z);
  r = FMA(fe, 0.693147182f, FMA(fe, -1.90465430e-09f, r));
  r = x == 0 ? -kInf : r;
  r = x < 0 ? __builtin_nanf("") : r;
  r = x == kInf ? kInf : r;
  return x != x ? x : r;
}

// log1p(x) = log(u) * x / (u - 1), u = 1 + x, exact where u rounds to 1.
static inline float vm_log1pf(float x) {
  float u = 1.0f + x, d = u - 1.0f;
  float r = d == 0 ? x : vm_logf(u) * (x / d);
  return x == kInf ? kInf : r;
}

// exp of -|x| never overflows, so large negative x keeps its subnormal result.
static inline float vm_sigmoidf(float x) {
  float e = vm_expf(-__builtin_fabsf(x));
  return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

// tanh: odd polynomial near 0, 1 - 2 / (exp(2|x|) + 1) elsewhere. The exp is
// vm_expf's without its clamps: |x| is clamped to 9.1 (tanh rounds to 1 from
// 9.02), so 2^k is added to the exponent bits. NaN takes the small path.
static inline float vm_tanhf(float x) {
  float a = __builtin_fabsf(x), s = x * x;
  float p = -6.610227831e-03f;
  p = FMA(p, s, 2.130938866e-02f);
  p = FMA(p, s, -5.390942883e-02f);
  p = FMA(p, s, 1.333311373e-01f);
  p = FMA(p, s, -3.333333201e-01f);
  float small = FMA(p * s, x, x);
  float k;
  float e = vm_exp_reduced(2.0f * (a < 9.1f ? a : 9.1f), k);
  e = asf(asi(e) + ((int32_t)k << 23));
  float big = __builtin_copysignf(1.0f - 2.0f / (e + 1.0f), x);
  return a >= 0.55f ? big : small;
}

// erf: x + x P(x^2) for |x| < 0.875, else 1 - erfc with erfc = 2^Q(|x|), Q
// fitted to log2(erfc) on [0.875, 4] (erfc(4) < 2^-25, so erf rounds to 1
// beyond) and 2^Q = 2^k 2^f, k = rint(Q), |f| <= 1/2, 2^k applied to the
// exponent bits (-27 <= k < 0: no subnormal). NaN takes the small path.
// Weighted minimax fits (scripts/fit_erf_f32.py: mpmath, Lawson's iteration,
// coefficients rounded to f32 one at a time and the rest refitted).
static inline float vm_erff(float x) {
  float a = __builtin_fabsf(x), s = x * x;
  float p = -6.128973910e-04f;
  p = FMA(p, s, 5.017030053e-03f);
  p = FMA(p, s, -2.678043209e-02f);
  p = FMA(p, s, 1.128211766e-01f);
  p = FMA(p, s, -3.761251271e-01f);
  p = FMA(p, s, 1.283791512e-01f);
  float small = FMA(x, p, x);
  float t = a < 4.0f ? a : 4.0f;
  float q = 2.883874695e-04f;
  q = FMA(q, t, -4.446316510e-03f);
  q = FMA(q, t, 3.228884563e-02f);
  q = FMA(q, t, -1.504011005e-01f);
  q = FMA(q, t, -9.187380075e-01f);
  q = FMA(q, t, -1.627200484e+00f);
  q = FMA(q, t, -2.080270642e-04f);
  float k = __builtin_rintf(q), f = q - k;
  float e = 1.532927854e-04f;
  e = FMA(e, f, 1.339097042e-03f);
  e = FMA(e, f, 9.618499316e-03f);
  e = FMA(e, f, 5.550359562e-02f);
  e = FMA(e, f, 2.402264774e-01f);
  e = FMA(e, f, 6.931471825e-01f);
  e = FMA(e, f, 1.0f);
  e = asf(asi(e) - ((int32_t)-k << 23));  // k < 0
  float big = __builtin_copysignf(1.0f - e, x);
  return a >= 0.875f ? big : small;
}

static inline float vm_sinf(float x) { return __builtin_sinf(x); }
static inline float vm_cosf(float x) { return __builtin_cosf(x); }

// prims.uniform_philox, bit for bit thunder/core/philox.h. philox_fill_*
// computes each block once (its loop over counters vectorises) into a tile
// that the element loop reads; philox_uniform_* is element i alone (its
// whole block, 4x redundant but branch-free) for draws read out of order.
static inline uint32_t philox_mulhi(uint32_t a, uint32_t b) {
  return (uint32_t)(((uint64_t)a * b) >> 32);
}
static inline void philox_block(uint64_t key, uint64_t c, uint32_t& x0, uint32_t& x1,
                                uint32_t& x2, uint32_t& x3) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  x0 = (uint32_t)c; x1 = (uint32_t)(c >> 32); x2 = 0; x3 = 0;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    const uint32_t h0 = philox_mulhi(0xD2511F53u, x0), l0 = 0xD2511F53u * x0;
    const uint32_t h1 = philox_mulhi(0xCD9E8D57u, x2), l1 = 0xCD9E8D57u * x2;
    x0 = h1 ^ x1 ^ k0; x1 = l1; x2 = h0 ^ x3 ^ k1; x3 = l0;
  }
}
// Words to [0, 1): the top 24 bits of one word, or 53 of two.
static inline float philox_unit_f(uint32_t w) { return (float)(int32_t)(w >> 8) * 0x1p-24f; }
static inline double philox_unit_d(uint32_t lo, uint32_t hi) {
  return (double)(int64_t)(((uint64_t)hi << 32 | lo) >> 11) * 0x1p-53;
}
// [0, 1) to [l, h): two roundings (no FMA), then to the output type (R: 0
// f32, 1 f16, 2 bf16, all held in float), then T(l) where that reached T(h).
template <int R> static inline float philox_round(float x) {
  return R == 1 ? rh(x) : (R == 2 ? rbf(x) : x);
}
template <int R> static inline float philox_scale_f(float u, float l, float h) {
  const float prod = u * (h - l);
  const float r = philox_round<R>(prod + l);
  return r < philox_round<R>(h) ? r : philox_round<R>(l);
}
static inline double philox_scale_d(double u, double l, double h) {
  const double prod = u * (h - l);
  const double r = prod + l;
  return r < h ? r : l;
}
// Element i of a draw: counter offset + i/4, word i%4 (f64: i/2, words 2(i%2), 2(i%2)+1).
template <int R> static inline float philox_uniform_f(uint64_t key, uint64_t offset, int64_t i,
                                                      float l, float h) {
  uint32_t x0, x1, x2, x3;
  philox_block(key, offset + (uint64_t)(i >> 2), x0, x1, x2, x3);
  const int64_t j = i & 3;
  const uint32_t w = j == 0 ? x0 : (j == 1 ? x1 : (j == 2 ? x2 : x3));
  return philox_scale_f<R>(philox_unit_f(w), l, h);
}
static inline double philox_uniform_d(uint64_t key, uint64_t offset, int64_t i, double l,
                                      double h) {
  uint32_t x0, x1, x2, x3;
  philox_block(key, offset + (uint64_t)(i >> 1), x0, x1, x2, x3);
  return philox_scale_d((i & 1) ? philox_unit_d(x2, x3) : philox_unit_d(x0, x1), l, h);
}
// Elements [a, b) of a draw into u[0, b - a): whole counters one block each,
// element by element at the ends.
template <int R> static inline void philox_fill_f(float* __restrict u, uint64_t key,
                                                  uint64_t offset, int64_t a, int64_t b, float l,
                                                  float h) {
  int64_t i = a;
  for (; i < b && (i & 3) != 0; ++i) u[i - a] = philox_uniform_f<R>(key, offset, i, l, h);
  const int64_t c0 = i >> 2, c1 = b >> 2;
  float* __restrict v = u + (i - a);
  for (int64_t c = c0; c < c1; ++c) {
    uint32_t x[4];
    philox_block(key, offset + (uint64_t)c, x[0], x[1], x[2], x[3]);
    for (int k = 0; k < 4; ++k) v[4 * (c - c0) + k] = philox_scale_f<R>(philox_unit_f(x[k]), l, h);
  }
  for (i = c1 > c0 ? 4 * c1 : i; i < b; ++i) u[i - a] = philox_uniform_f<R>(key, offset, i, l, h);
}
static inline void philox_fill_d(double* __restrict u, uint64_t key, uint64_t offset, int64_t a,
                                 int64_t b, double l, double h) {
  int64_t i = a;
  if (i < b && (i & 1) != 0) { u[0] = philox_uniform_d(key, offset, i, l, h); ++i; }
  const int64_t c0 = i >> 1, c1 = b >> 1;
  double* __restrict v = u + (i - a);
  for (int64_t c = c0; c < c1; ++c) {
    uint32_t x0, x1, x2, x3;
    philox_block(key, offset + (uint64_t)c, x0, x1, x2, x3);
    v[2 * (c - c0)] = philox_scale_d(philox_unit_d(x0, x1), l, h);
    v[2 * (c - c0) + 1] = philox_scale_d(philox_unit_d(x2, x3), l, h);
  }
  for (i = c1 > c0 ? 2 * c1 : i; i < b; ++i) u[i - a] = philox_uniform_d(key, offset, i, l, h);
}
)";
}

}  // namespace thunder::cpu_fuser
