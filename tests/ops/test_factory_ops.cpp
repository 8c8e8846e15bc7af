// OpInfo samples for factories: deterministic ones exactly against libtorch
// (eager, jit "aten", jit "aten_prims"); random ones by shape, dtype, range and
// seed reproducibility; errors.
#include "ops/opinfo.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"

namespace thunder::testing {
namespace {
using FactoryOps = OpInfoTest;

using AtenList = std::vector<at::Tensor>;

// A factory sample: no inputs, exact comparison.
OpSample factory(std::string name, std::function<Tensor()> t, std::function<at::Tensor()> a) {
  return {std::move(name),
          {},
          [t](const TensorList&) { return TensorList{t()}; },
          [a](const AtenList&) { return AtenList{a()}; },
          0.0,
          0.0,
          0.0,
          0.0};
}

TEST_F(FactoryOps, ZerosOnesFull) {
  for (at::ScalarType dt : kAllTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, {}, {0, 4}, {5}, {1, 2, 1}}) {
      auto o = at::TensorOptions().dtype(dt);
      std::string tag = std::string(at::toString(dt)) + " " + c10::str(shape);
      check_sample(factory(
          "zeros " + tag, [=] { return zeros(shape, o); }, [=] { return at::zeros(shape, o); }));
      check_sample(factory(
          "ones " + tag, [=] { return ones(shape, o); }, [=] { return at::ones(shape, o); }));
      check_sample(factory(
          "full 1 " + tag, [=] { return full(shape, 1, o); },
          [=] { return at::full(shape, 1, o); }));
      if (dt != at::kBool) {
        check_sample(factory(
            "full -3 " + tag, [=] { return full(shape, -3, o); },
            [=] { return at::full(shape, -3, o); }));
      }
      if (at::isFloatingType(dt)) {
        check_sample(factory(
            "full 2.5 " + tag, [=] { return full(shape, 2.5, o); },
            [=] { return at::full(shape, 2.5, o); }));
      }
    }
  }
  // Default dtypes: float32 for zeros/ones; the fill value's kind for full.
  check_sample(factory(
      "zeros default", [] { return zeros({3}); }, [] { return at::zeros({3}); }));
  check_sample(factory(
      "ones default", [] { return ones({3}); }, [] { return at::ones({3}); }));
  check_sample(factory(
      "full int -> int64", [] { return full({2}, 7); }, [] { return at::full({2}, 7); }));
  check_sample(factory(
      "full bool -> bool", [] { return full({2}, true); }, [] { return at::full({2}, true); }));
  check_sample(factory(
      "full float -> float32", [] { return full({2}, 0.25); }, [] { return at::full({2}, 0.25); }));
  check_sample(factory(
      "full float into int truncates", [] { return full({2}, 2.7, at::kInt); },
      [] { return at::full({2}, 2.7, at::kInt); }));
  check_sample(factory(
      "full 2 into bool", [] { return full({2}, 2, at::kBool); },
      [] { return at::full({2}, 2, at::kBool); }));
  check_sample(factory(
      "full -inf", [] { return full({2}, -INFINITY); }, [] { return at::full({2}, -INFINITY); }));
}

TEST_F(FactoryOps, Empty) {
  for (at::ScalarType dt : kAllTypes) {
    auto o = at::TensorOptions().dtype(dt);
    Tensor e = empty({2, 3}, o);
    EXPECT_EQ(e.sizes(), at::IntArrayRef({2, 3}));
    EXPECT_EQ(e.dtype(), dt);
    for (const char* exec : {"aten", "aten_prims"}) {
      auto jfn = jit([o](const Tensor& x) { return empty({4, 0}, o); }, {.executors = {exec}});
      Tensor j = jfn(at::zeros({1}));
      EXPECT_EQ(j.sizes(), at::IntArrayRef({4, 0}));
      EXPECT_EQ(j.dtype(), dt);
    }
  }
  Tensor d = empty({});
  EXPECT_EQ(d.dim(), 0);
  EXPECT_EQ(d.dtype(), at::kFloat);
}

// Eager and jit "aten" run at::arange itself: exact. The decomposition
// computes start + step * i and rounds once, while ATen's vectorised CPU
// kernel rounds each vector's base (start + step * i0) before adding
// step * lane, so results may differ by an ulp or two.
OpSample arange_sample(std::string name, std::function<Tensor()> t, std::function<at::Tensor()> a) {
  OpSample s = factory(std::move(name), std::move(t), a);
  switch (a().scalar_type()) {
    case at::kDouble:
      s.prims_rtol = 5e-16, s.prims_atol = 1e-16;
      break;
    case at::kFloat:
      s.prims_rtol = 3e-7, s.prims_atol = 1e-7;
      break;
    case at::kHalf:
      s.prims_rtol = 2e-3, s.prims_atol = 1e-3;
      break;
    case at::kBFloat16:
      s.prims_rtol = 1.6e-2, s.prims_atol = 1e-2;
      break;
    default:
      break;  // integers are exact
  }
  return s;
}

TEST_F(FactoryOps, Arange) {
  struct Case {
    double start, end, step;
    bool integral;  // pass as integers
  };
  const Case cases[] = {{0, 5, 1, true},          {1, 10, 3, true},   {10, 0, -3, true},
                        {-4, 4, 2, true},         {5, 5, 1, true},    {0, 1, 0.1, false},
                        {-2.5, 2.5, 0.5, false},  {0.5, 5, 1, false}, {0, 4.5, 1, false},
                        {3, -1.25, -0.75, false}, {0, 100, 7, true},  {1e3, 1e3 + 1, 0.01, false}};
  for (const Case& c : cases) {
    Scalar s = c.integral ? Scalar(static_cast<int64_t>(c.start)) : Scalar(c.start);
    Scalar e = c.integral ? Scalar(static_cast<int64_t>(c.end)) : Scalar(c.end);
    Scalar st = c.integral ? Scalar(static_cast<int64_t>(c.step)) : Scalar(c.step);
    auto to_c10 = [&](const Scalar& x) {
      return c.integral ? c10::Scalar(static_cast<int64_t>(x.to_double()))
                        : c10::Scalar(x.to_double());
    };
    c10::Scalar as = to_c10(s), ae = to_c10(e), ast = to_c10(st);
    std::string tag = c10::str("arange(", c.start, ", ", c.end, ", ", c.step, ")");
    // Default dtype: int64 for integral arguments, else float32.
    check_sample(arange_sample(
        tag, [=] { return arange(s, e, st); }, [=] { return at::arange(as, ae, ast); }));
    for (at::ScalarType dt : kAllTypes) {
      if (dt == at::kBool) continue;
      // A fractional step truncates to 0 for integer dtypes (an error, tested below).
      if (at::isIntegralType(dt, false) && std::abs(c.step) < 1) continue;
      auto o = at::TensorOptions().dtype(dt);
      check_sample(arange_sample(
          tag + " " + at::toString(dt), [=] { return arange(s, e, st, o); },
          [=] { return at::arange(as, ae, ast, o); }));
    }
  }
  check_sample(factory(
      "arange(end)", [] { return arange(6); }, [] { return at::arange(6); }));
  check_sample(arange_sample(
      "arange(float end)", [] { return arange(2.5); }, [] { return at::arange(2.5); }));
  check_sample(factory(
      "arange(end, f64)", [] { return arange(4, at::kDouble); },
      [] { return at::arange(4, at::kDouble); }));
  check_sample(factory(
      "arange bool args", [] { return arange(false, true, true); },
      [] { return at::arange(false, true, true); }));
  // Large int64 values stay exact (past 2^53).
  int64_t big = (int64_t{1} << 60) + 1;
  check_sample(factory(
      "arange big int64", [=] { return arange(big, big + 5, 2); },
      [=] { return at::arange(big, big + 5, 2); }));
}

TEST_F(FactoryOps, Like) {
  std::vector<at::Tensor> inputs = {make_tensor({2, 3}),         make_tensor({4}, at::kDouble),
                                    make_tensor({}, at::kHalf),  make_tensor({3, 0}, at::kInt),
                                    make_tensor({2}, at::kLong), make_tensor({3}, at::kBool),
                                    make_noncontiguous({3, 4}),  make_tensor({2}, at::kBFloat16)};
  for (const at::Tensor& x : inputs) {
    std::string tag = c10::str(x.scalar_type(), x.sizes());
    auto sample = [&](std::string name, std::function<Tensor(const Tensor&)> t,
                      std::function<at::Tensor(const at::Tensor&)> a) {
      check_sample({name + " " + tag,
                    {x},
                    [t](const TensorList& xs) { return TensorList{t(xs[0])}; },
                    [a](const AtenList& xs) { return AtenList{a(xs[0])}; },
                    0.0,
                    0.0,
                    0.0,
                    0.0});
    };
    sample(
        "zeros_like", [](const Tensor& t) { return zeros_like(t); },
        [](const at::Tensor& t) { return at::zeros_like(t); });
    sample(
        "ones_like", [](const Tensor& t) { return ones_like(t); },
        [](const at::Tensor& t) { return at::ones_like(t); });
    sample(
        "full_like", [](const Tensor& t) { return full_like(t, 1); },
        [](const at::Tensor& t) { return at::full_like(t, 1); });
    if (at::isFloatingType(x.scalar_type())) {
      sample(
          "full_like 0.5", [](const Tensor& t) { return full_like(t, 0.5); },
          [](const at::Tensor& t) { return at::full_like(t, 0.5); });
    }
    // The result takes the input's dtype and device, whatever else is computed.
    sample(
        "x + zeros_like(x)", [](const Tensor& t) { return t + zeros_like(t); },
        [](const at::Tensor& t) { return t + at::zeros_like(t); });
    Tensor e = empty_like(Tensor(x));
    EXPECT_EQ(e.sizes(), x.sizes());
    EXPECT_EQ(e.dtype(), x.scalar_type());
  }
}

TEST_F(FactoryOps, FactoriesAppearInTrace) {
  auto fn = [](const Tensor& x) {
    return x + zeros({3}) + ones({3}, at::kDouble) + full({3}, 2.0) + arange(3) + zeros_like(x);
  };
  at::Tensor x = make_tensor({3});
  auto want = x + at::zeros({3}) + at::ones({3}, at::kDouble) + at::full({3}, 2.0) + at::arange(3) +
              at::zeros_like(x);
  auto jfn = jit(fn, {.executors = {"aten"}});
  Tensor out = jfn(x);
  expect_same({out.aten()}, {want}, 0, 0, "jit");
  std::string text = last_traces(jfn).front().str();
  for (const char* s : {"ltorch.zeros((3,), devices.Device(\"cpu\"), dtypes.float32)",
                        "ltorch.ones((3,), devices.Device(\"cpu\"), dtypes.float64)",
                        "ltorch.full((3,), 2.0, devices.Device(\"cpu\"), dtypes.float32)",
                        "ltorch.arange(0, 3, 1, devices.Device(\"cpu\"), dtypes.int64)",
                        "# t0 = prims.full((3,), 0.0, devices.Device(\"cpu\"), dtypes.float32)",
                        "prims.iota(3, 0, 1, devices.Device(\"cpu\"), dtypes.int64)"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
}

TEST_F(FactoryOps, ArangeFloatDecomposition) {
  Trace t;
  {
    TracingScope s(t);
    t.output = ltorch::arange(0.5, 2.0, 0.5, Device::cpu(), DType::f32);
  }
  EXPECT_EQ(t.str(),
            "def computation():\n"
            "  t4 = ltorch.arange(0.5, 2.0, 0.5, devices.Device(\"cpu\"), dtypes.float32)"
            "  # t4: \"cpu f32[3]\"\n"
            "    # t0 = prims.iota(3, 0, 1, devices.Device(\"cpu\"), dtypes.int64)"
            "  # t0: \"cpu i64[3]\"\n"
            "    # t1 = prims.convert_element_type(t0, dtypes.float64)  # t1: \"cpu f64[3]\"\n"
            "    # t2 = prims.mul(t1, 0.5)  # t2: \"cpu f64[3]\"\n"
            "    # t3 = prims.add(t2, 0.5)  # t3: \"cpu f64[3]\"\n"
            "    # t4 = prims.convert_element_type(t3, dtypes.float32)  # t4: \"cpu f32[3]\"\n"
            "  return t4\n");
}

TEST_F(FactoryOps, RequiresGradOptionEager) {
  Tensor z = zeros({2, 2}, at::TensorOptions().requires_grad(true));
  EXPECT_TRUE(z.requires_grad());
  EXPECT_TRUE(z.aten().is_leaf());
  Tensor r = randn({3}, at::TensorOptions().dtype(at::kDouble).requires_grad(true));
  EXPECT_TRUE(r.requires_grad());
  EXPECT_EQ(r.dtype(), at::kDouble);
  EXPECT_FALSE(ones({2}).requires_grad());
  // *_like never inherits requires_grad (as in libtorch).
  at::Tensor leaf = at::ones({2}, at::requires_grad());
  EXPECT_FALSE(zeros_like(Tensor(leaf)).requires_grad());
}

TEST_F(FactoryOps, RandomShapesDtypesAndRanges) {
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    for (const char* exec : {"", "aten", "aten_prims"}) {
      auto fn = [dt](const Tensor& x) {
        return TensorList{rand({200, 5}, dt), randn({1000}, dt), rand_like(x),
                          randn_like(x),      rand({}, dt),      randn({0, 3}, dt)};
      };
      at::Tensor x = make_tensor({50, 4}, dt);
      TensorList r;
      if (std::string(exec).empty()) {
        r = fn(x);
      } else {
        auto jfn = jit(fn, {.executors = {exec}});
        r = jfn(x);
      }
      SCOPED_TRACE(c10::str(dt, " ", exec));
      ASSERT_EQ(r.size(), 6u);
      std::vector<std::vector<int64_t>> shapes = {{200, 5}, {1000}, {50, 4}, {50, 4}, {}, {0, 3}};
      for (size_t i = 0; i < r.size(); ++i) {
        EXPECT_EQ(r[i].sizes(), at::IntArrayRef(shapes[i])) << i;
        EXPECT_EQ(r[i].dtype(), dt) << i;
      }
      at::Tensor u = r[0].aten().to(at::kDouble), n = r[1].aten().to(at::kDouble);
      EXPECT_GE(u.min().item<double>(), 0.0);
      EXPECT_LE(u.max().item<double>(), 1.0);  // half rounding may reach 1.0
      EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.05);
      EXPECT_LT(n.min().item<double>(), -1.0);
      EXPECT_GT(n.max().item<double>(), 1.0);
      EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.15);
      EXPECT_NEAR(n.std().item<double>(), 1.0, 0.1);
      EXPECT_FALSE(at::equal(r[2].aten(), r[3].aten()));
    }
  }
  // Default dtype float32.
  EXPECT_EQ(rand({2}).dtype(), at::kFloat);
  EXPECT_EQ(randn({2}).dtype(), at::kFloat);
}

TEST_F(FactoryOps, SameSeedSameValues) {
  auto fn = [](const Tensor& x) {
    return TensorList{rand({4, 5}), randn({7}, at::kDouble), rand_like(x), randn_like(x)};
  };
  at::Tensor x = make_tensor({3, 2});
  at::manual_seed(42);
  TensorList a = fn(x);
  at::manual_seed(42);
  TensorList b = fn(x);
  at::manual_seed(42);
  AtenList ref = {at::rand({4, 5}), at::randn({7}, at::kDouble), at::rand_like(x),
                  at::randn_like(x)};
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(at::equal(a[i].aten(), b[i].aten())) << i;
    EXPECT_TRUE(at::equal(a[i].aten(), ref[i])) << i;
  }
  // The ltorch kernels and the prims (uniform, randn) draw the same numbers
  // from libtorch's generator, so jit reproduces eager under the same seed
  // when it keeps the stateful uniform (test_rng.cpp covers uniform_philox).
  for (const char* exec : {"aten", "aten_prims"}) {
    auto jfn = jit(fn, {.executors = {exec}, .disable_replace_uniform = true});
    at::manual_seed(42);
    TensorList j = jfn(x);
    for (size_t i = 0; i < j.size(); ++i)
      EXPECT_TRUE(at::equal(j[i].aten(), ref[i])) << exec << " output " << i;
  }
}

TEST_F(FactoryOps, Errors) {
  auto none = std::vector<at::Tensor>{};
  expect_error("ltorch.zeros", none, [](const TensorList&) { return TensorList{zeros({2, -1})}; });
  expect_error("ltorch.full", none, [](const TensorList&) { return TensorList{full({-3}, 1.0)}; });
  expect_error("ltorch.rand", none,
               [](const TensorList&) { return TensorList{rand({2}, at::kLong)}; });
  expect_error("ltorch.randn", none,
               [](const TensorList&) { return TensorList{randn({2}, at::kInt)}; });
  expect_error("ltorch.rand", {make_tensor({2}, at::kInt)},
               [](const TensorList& x) { return TensorList{rand_like(x[0])}; });
  expect_error("step must be nonzero", none,
               [](const TensorList&) { return TensorList{arange(0, 5, 0)}; });
  expect_error("step must be nonzero", none,
               [](const TensorList&) { return TensorList{arange(0.0, 5.0, 0.0)}; });
  // A float step that truncates to 0 for an integer dtype.
  expect_error("step must be nonzero", none,
               [](const TensorList&) { return TensorList{arange(0, 5, 0.5, at::kLong)}; });
  expect_error("inconsistent with step sign", none,
               [](const TensorList&) { return TensorList{arange(5, 0, 1)}; });
  expect_error("inconsistent with step sign", none,
               [](const TensorList&) { return TensorList{arange(0.0, 1.0, -0.1)}; });
  expect_error("ltorch.arange", none,
               [](const TensorList&) { return TensorList{arange(0, 3, 1, at::kBool)}; });
  expect_error("ltorch.arange", none,
               [](const TensorList&) { return TensorList{arange(0.0, INFINITY, 1.0)}; });
  expect_error("zeros_like", {},
               [](const TensorList&) { return TensorList{zeros_like(Tensor())}; });
}

TEST_F(FactoryOps, ArangeWithRuntimeNumberIsAnError) {
  auto jfn = jit([](const Tensor& x, const Scalar& n) { return x + arange(n); });
  try {
    jfn(at::zeros({3}), Scalar(int64_t{3}));
    ADD_FAILURE() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ltorch.arange: end must be a constant number"),
              std::string::npos)
        << e.what();
  }
  // A runtime fill value is fine: it never decides a shape.
  auto jf = jit([](const Tensor& x, const Scalar& v) { return x + full({3}, v); });
  at::Tensor x = make_tensor({3});
  expect_same({jf(x, Scalar(2.5)).aten()}, {x + 2.5}, 1e-6, 1e-6, "first");
  expect_same({jf(x, Scalar(-1.0)).aten()}, {x - 1.0}, 1e-6, 1e-6, "second");
  EXPECT_EQ(cache_misses(jf), 1);
}

}  // namespace
}  // namespace thunder::testing
