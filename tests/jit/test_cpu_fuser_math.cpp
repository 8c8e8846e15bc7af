// Accuracy of cpu_fuser's vectorised f32 math (src/executors/cpu_fuser/
// vector_math.cpp) against double-precision libm, in units in the last place
// of the f32 result, over a dense sweep of each function's interesting range
// plus special values. The measured maxima are printed.
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <cmath>
#include <limits>

namespace thunder {
namespace {

double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want)) return got == static_cast<float>(want) ? 0 : INFINITY;
  float w = static_cast<float>(want);
  if (std::isinf(w)) return std::isinf(got) && std::signbit(got) == std::signbit(w) ? 0 : INFINITY;
  float next = std::nextafter(std::fabs(w), INFINITY);
  double ulp = static_cast<double>(next) - std::fabs(static_cast<double>(w));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct Case {
  const char* name;
  Tensor (*fn)(const Tensor&);
  double (*ref)(double);
  double lo, hi, max_ulp;
};

TEST(CpuFuserMath, F32WithinFewUlpOfLibm) {
  const Case cases[] = {
      {"exp", [](const Tensor& x) { return exp(x); }, [](double x) { return std::exp(x); }, -110,
       90, 2},
      {"log", [](const Tensor& x) { return log(x); }, [](double x) { return std::log(x); }, 1e-30,
       1e30, 2},
      {"log1p", [](const Tensor& x) { return log1p(x); }, [](double x) { return std::log1p(x); },
       -0.999, 1e6, 3},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double x) { return std::tanh(x); }, -12,
       12, 3},
      {"erf", [](const Tensor& x) { return erf(x); }, [](double x) { return std::erf(x); }, -5, 5,
       3},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, -90, 30, 3},
  };
  for (const Case& c : cases) {
    const int64_t n = 1 << 20;
    at::Tensor x;
    if (c.lo > 0)  // geometric sweep for ranges spanning decades
      x = at::exp(at::linspace(std::log(c.lo), std::log(c.hi), n, at::kDouble)).to(at::kFloat);
    else
      x = at::linspace(c.lo, c.hi, n, at::kDouble).to(at::kFloat);
    const float inf = std::numeric_limits<float>::infinity();
    x = at::cat({x, at::tensor({0.0f, -0.0f, inf, -inf, NAN, 1e-40f, -1e-40f, 1e-7f, -1e-7f})});
    auto jfn = jit(c.fn, {.executors = {"cpu_fuser", "aten"}});
    at::Tensor got = jfn(x).aten();
    const float* g = got.data_ptr<float>();
    const float* xs = x.data_ptr<float>();
    double worst = 0;
    float worst_x = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (std::string(c.name) == "log" && xs[i] < 0) continue;
      double e = ulp_error(g[i], c.ref(static_cast<double>(xs[i])));
      if (e > worst) worst = e, worst_x = xs[i];
    }
    std::printf("vm_%sf: max error %.2f ulp (at x = %.9g)\n", c.name, worst, worst_x);
    EXPECT_LE(worst, c.max_ulp) << c.name << " at x = " << worst_x;
  }
}

}  // namespace
}  // namespace thunder
