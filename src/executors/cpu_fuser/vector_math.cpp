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

// exp(x) = 2^k exp(r), |r| <= ln2/2; 2^k applied in two halves for subnormal results.
static inline float vm_expf(float x) {
  float xc = x > 88.8f ? 88.8f : (x < -104.0f ? -104.0f : x);
  float k = __builtin_rintf(xc * 1.44269504088896341f);
  float r = FMA(k, -0.693359375f, xc);
  r = FMA(k, 2.12194440e-4f, r);
  float p = 1.394110843e-03f;
  p = FMA(p, r, 8.375126398e-03f);
  p = FMA(p, r, 4.166635290e-02f);
  p = FMA(p, r, 1.666641551e-01f);
  p = FMA(p, r, 5.000000047e-01f);
  p = FMA(p, r, 1.000000038e+00f);
  p = FMA(p, r, 1.0f);
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

// tanh: odd polynomial near 0, 1 - 2 / (exp(2|x|) + 1) elsewhere.
static inline float vm_tanhf(float x) {
  float a = __builtin_fabsf(x), s = x * x;
  float p = -6.610227831e-03f;
  p = FMA(p, s, 2.130938866e-02f);
  p = FMA(p, s, -5.390942883e-02f);
  p = FMA(p, s, 1.333311373e-01f);
  p = FMA(p, s, -3.333333201e-01f);
  float small = FMA(p * s, x, x);
  float big = 1.0f - 2.0f / (vm_expf(2.0f * a) + 1.0f);
  big = __builtin_copysignf(big, x);
  return a < 0.55f ? small : big;
}

// erf: x P(x^2) for |x| < 1, else 1 - exp(Q(|x|)) with Q fitted to log(erfc).
static inline float vm_erff(float x) {
  float a = __builtin_fabsf(x), s = x * x;
  float p = 7.875875063e-05f;
  p = FMA(p, s, -8.016864287e-04f);
  p = FMA(p, s, 5.189087423e-03f);
  p = FMA(p, s, -2.685421201e-02f);
  p = FMA(p, s, 1.128359472e-01f);
  p = FMA(p, s, -3.761262667e-01f);
  p = FMA(p, s, 1.128379166e+00f);
  float small = p * x;
  float t = a > 4.0f ? 4.0f : a;
  float q = -3.834714142e-08f;
  q = FMA(q, t, 8.925321670e-07f);
  q = FMA(q, t, -7.467047474e-06f);
  q = FMA(q, t, 7.447576280e-06f);
  q = FMA(q, t, 3.964882811e-04f);
  q = FMA(q, t, -4.261094288e-03f);
  q = FMA(q, t, 2.558692920e-02f);
  q = FMA(q, t, -1.091537219e-01f);
  q = FMA(q, t, -6.324793303e-01f);
  q = FMA(q, t, -1.129969089e+00f);
  q = FMA(q, t, 2.734751662e-04f);
  float big = __builtin_copysignf(1.0f - vm_expf(q), x);
  float r = a < 1.0f ? small : big;
  return x != x ? x : r;
}

static inline float vm_sinf(float x) { return __builtin_sinf(x); }
static inline float vm_cosf(float x) { return __builtin_cosf(x); }
)";
}

}  // namespace thunder::cpu_fuser
