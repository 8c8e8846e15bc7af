// cpu_fuser end to end: fused programs against eager libtorch under both
// region strategies, printed regions, reductions, reduced precision,
// non-contiguous and broadcast inputs, the ATen fallback, and the disk
// cache seen from a second process.
#include <gtest/gtest.h>
#include <thunder/executors/cpu_fuser.h>
#include <thunder/thunder.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace thunder {
namespace {

namespace F = nn::functional;

JitOptions fused(const char* strategy) {
  return {.executors = {"cpu_fuser", "aten"}, .fusion_type = strategy};
}

int count_regions(const Trace& t) {
  int n = 0;
  for (const BoundSymbol& b : t.bsyms) n += b.sym->is_region;
  return n;
}

void expect_close(const at::Tensor& got, const at::Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.sizes(), want.sizes());
  ASSERT_EQ(got.scalar_type(), want.scalar_type());
  EXPECT_TRUE(at::allclose(got.to(at::kDouble), want.to(at::kDouble), tol, tol, true))
      << "max abs diff " << (got.to(at::kDouble) - want.to(at::kDouble)).abs().max();
}

TEST(CpuFuser, ElementwiseChainIsOneRegion) {
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    Tensor h = x * w + b;
    return F::gelu(h) * sigmoid(x) + tanh(x);
  };
  at::Tensor x = at::randn({64, 33}), w = at::randn({33}), b = at::randn({64, 1});
  at::Tensor want = at::gelu(x * w + b) * at::sigmoid(x) + at::tanh(x);
  for (const char* s : {"consecutive", "dataflow"}) {
    auto jfn = jit(fn, fused(s));
    expect_close(jfn(x, w, b).aten(), want);
    Trace last = last_traces(jfn).back();
    EXPECT_EQ(count_regions(last), 1) << last;
    EXPECT_NE(last.str().find("= cppFusion0(x1, x0, x2)"), std::string::npos) << last;
    EXPECT_NE(last.str().find("    # t"), std::string::npos) << last;  // prims as '#' lines
  }
}

// Region symbols belong to the traces and programs of one cache entry: with
// cache = "none" each call's entry replaces the last, and its symbols go too.
TEST(CpuFuser, RegionSymbolsDieWithTheirCacheEntry) {
  auto jfn = jit([](const Tensor& x) { return exp(x * 2.0); },
                 {.executors = {"cpu_fuser", "aten"}, .cache = "none"});
  at::Tensor x = at::randn({3});
  jfn(x);
  std::weak_ptr<const Symbol> first;
  {
    const Trace last = last_traces(jfn).back();
    ASSERT_EQ(count_regions(last), 1) << last;
    ASSERT_EQ(last.owned_symbols.size(), 1u);
    first = last.owned_symbols[0];
    EXPECT_TRUE(first.lock()->is_region);
  }
  jfn(x);
  EXPECT_TRUE(first.expired());
  EXPECT_EQ(cache_misses(jfn), 2);
}

TEST(CpuFuser, PrintsRegionsWithTheirPrims) {
  auto fn = [](const Tensor& x) { return exp(x * 2.0); };
  auto jfn = jit(fn, fused("dataflow"));
  jfn(at::randn({3}));
  std::vector<Trace> traces = last_traces(jfn);
  const Trace& fusion = find_stage(traces, "Fusion kernels");
  EXPECT_NE(fusion.str().find("  [t1] = cppFusion0(x0)  # t1: \"cpu f32[3]\"\n"
                              "    # t0 = prims.mul(x0, 2.0)  # t0: \"cpu f32[3]\"\n"
                              "    # t1 = prims.exp(t0)  # t1: \"cpu f32[3]\"\n"),
            std::string::npos)
      << fusion;
  EXPECT_EQ(compile_stats(jfn).fusion_regions, 1);
}

TEST(CpuFuser, UnfusibleOpsSplitRegions) {
  auto fn = [](const Tensor& x, const Tensor& w) {
    Tensor h = matmul(relu(x * 2.0), w);
    return tanh(h) + 1.0;
  };
  at::Tensor x = at::randn({8, 16}), w = at::randn({16, 4});
  at::Tensor want = at::tanh(at::matmul(at::relu(x * 2.0), w)) + 1.0;
  for (const char* s : {"consecutive", "dataflow"}) {
    auto jfn = jit(fn, fused(s));
    expect_close(jfn(x, w).aten(), want);
    Trace t = last_traces(jfn).back();
    EXPECT_EQ(count_regions(t), 2);
    // fusion_source: the kernel of a region, nothing for the matmul.
    for (const BoundSymbol& b : t.bsyms) {
      const bool region = b.sym->is_region;
      EXPECT_EQ(fusion_source(b).find("extern \"C\" void thunder_kernel") != std::string::npos,
                region)
          << b.sym->id;
    }
  }
}

TEST(CpuFuser, ViewsReadByATenStayViews) {
  // w.t() feeds the matmul: fusing it would copy the transposed weight.
  auto fn = [](const Tensor& x, const Tensor& w) {
    return matmul(x * 2.0, w.transpose(0, 1)) + 1.0;
  };
  at::Tensor x = at::randn({4, 8}), w = at::randn({5, 8});
  auto jfn = jit(fn, fused("dataflow"));
  expect_close(jfn(x, w).aten(), at::matmul(x * 2.0, w.t()) + 1.0);
  const Trace final_trace = last_traces(jfn).back();  // a copy: last_traces returns by value
  for (const BoundSymbol& b : final_trace.bsyms)
    for (const BoundSymbol& s : b.subsymbols)
      EXPECT_NE(s.sym->id, "prims.transpose") << final_trace;
}

TEST(CpuFuser, ReductionsOverInnermostAndAllDims) {
  static const std::vector<int64_t> last{-1};
  auto fn = [](const Tensor& x) {
    return std::make_tuple(F::softmax(x, -1), x.sum(), x.amax(last), x.var(last), x.argmax(-1),
                           F::log_softmax(x * 3.0, 1), x.mean(-1, true) - x);
  };
  at::Tensor x = at::randn({7, 130});
  x[2][5] = NAN;
  for (const char* s : {"consecutive", "dataflow"}) {
    auto jfn = jit(fn, fused(s));
    auto [a, b, c, d, e, f, g] = jfn(x);
    expect_close(a.aten(), at::softmax(x, -1));
    expect_close(b.aten(), x.sum(), 1e-4);
    expect_close(c.aten(), x.amax(last));
    expect_close(d.aten(), x.var(last), 1e-4);
    EXPECT_TRUE(at::equal(e.aten(), x.argmax(-1)));
    expect_close(f.aten(), at::log_softmax(x * 3.0, 1), 1e-4);
    expect_close(g.aten(), x.mean(-1, true) - x);
    EXPECT_GE(count_regions(last_traces(jfn).back()), 1);
  }
}

// The region statements of a trace, in order.
std::vector<BoundSymbol> regions(const Trace& t) {
  std::vector<BoundSymbol> out;
  for (const BoundSymbol& b : t.bsyms)
    if (b.sym->is_region) out.push_back(b);
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Softmax, log-softmax and layer norm rows: one parallel loop over rows whose
// reductions stay in registers (no scratch buffers), values as in libtorch.
TEST(CpuFuser, RowReductionsAreOneLoopWithoutScratch) {
  static const std::vector<int64_t> normalized{48};
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return std::make_tuple(F::softmax(x, -1), F::log_softmax(x, -1),
                           F::layer_norm(x, normalized, w, b, 1e-5));
  };
  at::Tensor x = at::randn({6, 5, 48}), w = at::randn({48}), b = at::randn({48});
  x[1][2][7] = NAN;
  x[3][1].fill_(-INFINITY);
  auto jfn = jit(fn, fused("consecutive"));
  auto [s, ls, ln] = jfn(x, w, b);
  expect_close(s.aten(), at::softmax(x, -1));
  expect_close(ls.aten(), at::log_softmax(x, -1));
  expect_close(ln.aten(), at::layer_norm(x, normalized, w, b, 1e-5), 1e-4);
  // Consecutive statements: the three are one region, and still one row loop.
  std::vector<BoundSymbol> rs = regions(last_traces(jfn).back());
  ASSERT_EQ(rs.size(), 1u);
  std::string src = fusion_source(rs[0]);
  EXPECT_EQ(count(src, "static void nest"), 1) << src;
  EXPECT_EQ(count(src, "tmp"), 0) << src;  // no scratch buffer
  // softmax and log_softmax share their row max (CSE), layer norm has none.
  EXPECT_EQ(count(src, "reduction(max:acc)"), 1) << src;
}

// Values that depend on only some loop indices are computed once before the
// inner loops they do not depend on (here exp(y) per (i, j), exp(z) per i).
TEST(CpuFuser, LoopInvariantValuesAreHoistedCorrectly) {
  static const std::vector<int64_t> last2{1, 2};
  auto fn = [](const Tensor& x, const Tensor& y, const Tensor& z) {
    Tensor e = x * y.exp() + z.exp();
    return std::make_tuple(e.sum(last2), e.var(last2), e - e.amax(last2, true), e * z.log1p());
  };
  at::Tensor x = at::randn({4, 5, 6}), y = at::randn({4, 5, 1}), z = at::rand({4, 1, 1});
  at::Tensor e = x * y.exp() + z.exp();
  for (const char* s : {"consecutive", "dataflow"}) {
    auto jfn = jit(fn, fused(s));
    auto [a, b, c, d] = jfn(x, y, z);
    expect_close(a.aten(), e.sum(last2), 1e-4);
    expect_close(b.aten(), e.var(last2), 1e-4);
    expect_close(c.aten(), e - e.amax(last2, true));
    expect_close(d.aten(), e * z.log1p());
    std::string src;
    for (const BoundSymbol& r : regions(last_traces(jfn).back())) src += fusion_source(r);
    EXPECT_NE(src.find("vm_log1pf"), std::string::npos);
  }
}

// A reduction result read at another row's index (here along columns) cannot
// be kept per row: the region falls back to a materialised result, correctly.
TEST(CpuFuser, ReductionReadAcrossRowsIsMaterialised) {
  static const std::vector<int64_t> last{-1};
  auto fn = [](const Tensor& x) { return x + x.sum(last).unsqueeze(0) * x.amax(last, true); };
  at::Tensor x = at::randn({37, 37});
  auto jfn = jit(fn, fused("dataflow"));
  expect_close(jfn(x).aten(), x + x.sum(last).unsqueeze(0) * x.amax(last, true), 1e-4);
  std::vector<BoundSymbol> rs = regions(last_traces(jfn).back());
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_GE(count(fusion_source(rs[0]), "static void nest"), 2);
}

// prims.sum statements inside region statements (fused, not run by ATen).
int fused_sums(const Trace& t) {
  int n = 0;
  for (const BoundSymbol& r : regions(t))
    for (const BoundSymbol& s : r.subsymbols) n += s.sym->id == "prims.sum";
  return n;
}

// Sums over leading dims (a prefix of the dims, not all): one nest that reads
// the input in memory order into double (int64) accumulators, as libtorch.
TEST(CpuFuser, SumsOverLeadingDims) {
  static const std::vector<int64_t> d0{0}, d01{0, 1};
  auto s0 = [](const Tensor& x) { return x.sum(d0); };
  auto s01 = [](const Tensor& x) { return x.sum(d01); };
  for (auto [dt, tol] : {std::pair{at::kFloat, 1e-5}, std::pair{at::kDouble, 1e-12}}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{37, 13}, {1, 5}, {1000, 3}, {3, 200}}) {
      at::Tensor x = at::randn(shape, dt);
      auto jfn = jit(s0, fused("dataflow"));
      expect_close(jfn(x).aten(), x.sum(d0), tol);
      EXPECT_EQ(fused_sums(last_traces(jfn).back()), 1) << last_traces(jfn).back();
    }
    at::Tensor x3 = at::randn({4, 7, 9}, dt);
    auto jfn = jit(s01, fused("dataflow"));
    expect_close(jfn(x3).aten(), x3.sum(d01), tol);
    EXPECT_EQ(fused_sums(last_traces(jfn).back()), 1) << last_traces(jfn).back();
    // A non-contiguous input, and a transpose inside the region.
    at::Tensor xt = at::randn({13, 37}, dt).t();
    auto jt = jit(s0, fused("dataflow"));
    expect_close(jt(xt).aten(), xt.sum(d0), tol);
    auto jt2 =
        jit([](const Tensor& x) { return (x.transpose(0, 1) * 2.0).sum(d0); }, fused("dataflow"));
    expect_close(jt2(x3.select(2, 1)).aten(), (x3.select(2, 1).t() * 2.0).sum(d0), tol);
    EXPECT_EQ(fused_sums(last_traces(jt2).back()), 1) << last_traces(jt2).back();
  }
  at::Tensor xi = at::randint(-1000, 1000, {37, 2, 13}, at::kLong);
  auto ji = jit(s01, fused("dataflow"));
  EXPECT_TRUE(at::equal(ji(xi).aten(), xi.sum(d01)));
  EXPECT_EQ(fused_sums(last_traces(ji).back()), 1) << last_traces(ji).back();
}

// Leading sums in a region with elementwise outputs, a row reduction and a
// later read of a leading sum: no row fusion, one nest per reduction, all fused.
TEST(CpuFuser, LeadingSumsMixWithRowReductions) {
  static const std::vector<int64_t> d0{0}, last{-1};
  auto fn = [](const Tensor& x, const Tensor& w) {
    Tensor s = x.sum(d0);
    return std::make_tuple((x * w).sum(d0), s, (x * x).sum(last), x * w + 1.0, x - s * 0.5);
  };
  at::Tensor x = at::randn({37, 13}), w = at::randn({13});
  for (const char* strategy : {"consecutive", "dataflow"}) {
    auto jfn = jit(fn, fused(strategy));
    auto [a, b, c, d, e] = jfn(x, w);
    expect_close(a.aten(), (x * w).sum(d0));
    expect_close(b.aten(), x.sum(d0));
    expect_close(c.aten(), (x * x).sum(last));
    expect_close(d.aten(), x * w + 1.0);
    expect_close(e.aten(), x - x.sum(d0) * 0.5);
    const Trace t = last_traces(jfn).back();
    EXPECT_EQ(fused_sums(t), 3) << t;
    std::string src;
    for (const BoundSymbol& r : regions(t)) src += fusion_source(r);
    EXPECT_GE(count(src, "static void nest"), 3) << src;
  }
}

// A linear layer's bias gradient sums the cotangent over the leading dims.
TEST(CpuFuser, LinearBiasGradientIsFused) {
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& c) {
    return (tanh(F::linear(x, w, b)) * c).sum();
  };
  at::Tensor x = at::randn({3, 5, 7}), c = at::randn({3, 5, 11});
  at::Tensor w = at::randn({11, 7}), b = at::randn({11}).requires_grad_(true);
  at::Tensor br = b.detach().clone().requires_grad_(true);
  (at::tanh(at::linear(x, w, br)) * c).sum().backward();
  auto jfn = jit(fn, fused("dataflow"));
  jfn(x, w, b, c).backward();
  expect_close(b.grad(), br.grad(), 1e-5);
  EXPECT_GE(fused_sums(last_backward_traces(jfn).back()), 1) << last_backward_traces(jfn).back();
}

// Max/min reductions are vectorised with a separate NaN flag: NaN still wins,
// and all -inf (or +inf for amin) rows give -inf (+inf).
TEST(CpuFuser, VectorisedMaxMinKeepNaNAndInfinities) {
  static const std::vector<int64_t> last{-1};
  auto fn = [](const Tensor& x) { return std::make_tuple(x.amax(last), x.amin(last)); };
  at::Tensor x = at::randn({4, 100});
  x[0][63] = NAN;
  x[1].fill_(-INFINITY);
  x[2].fill_(INFINITY);
  x[3][99] = 1e30;
  auto jfn = jit(fn, fused("dataflow"));
  auto [mx, mn] = jfn(x);
  EXPECT_TRUE(at::equal(mx.aten().isnan(), x.amax(last).isnan()));
  EXPECT_TRUE(at::allclose(mx.aten(), x.amax(last), 0, 0, true));
  EXPECT_TRUE(at::allclose(mn.aten(), x.amin(last), 0, 0, true));
  at::Tensor xi = at::randint(-1000, 1000, {3, 77}, at::kInt);
  auto [mxi, mni] = jfn(xi);
  EXPECT_TRUE(at::equal(mxi.aten(), xi.amax(last)));
  EXPECT_TRUE(at::equal(mni.aten(), xi.amin(last)));
}

TEST(CpuFuser, NonContiguousBroadcastAndReducedPrecision) {
  auto fn = [](const Tensor& x, const Tensor& y) { return (x * y + 1.0).sigmoid() - y; };
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    at::Tensor x = at::randn({5, 6}).to(dt).t(), y = at::randn({5}).to(dt);
    at::Tensor want = (x.to(at::kFloat) * y.to(at::kFloat) + 1.0).sigmoid() - y.to(at::kFloat);
    auto jfn = jit(fn, fused("dataflow"));
    at::Tensor got = jfn(x, y).aten();
    EXPECT_EQ(got.scalar_type(), dt);
    expect_close(got.to(at::kFloat), want,
                 dt == at::kBFloat16 ? 3e-2
                 : dt == at::kHalf   ? 4e-3
                                     : 1e-5);
  }
}

TEST(CpuFuser, IntegerAndBoolOps) {
  auto fn = [](const Tensor& a, const Tensor& b) {
    return std::make_tuple(a * b - 3, a / b, logical_and(a > 2, b < 5), where(a > b, a, b),
                           maximum(a, b));
  };
  at::Tensor a = at::randint(-9, 9, {4, 5}, at::kInt), b = at::randint(1, 9, {5}, at::kInt);
  auto jfn = jit(fn, fused("dataflow"));
  auto [p, q, r, s, t] = jfn(a, b);
  EXPECT_TRUE(at::equal(p.aten(), a * b - 3));
  expect_close(q.aten(), a / b);
  EXPECT_TRUE(at::equal(r.aten(), at::logical_and(a > 2, b < 5)));
  EXPECT_TRUE(at::equal(s.aten(), at::where(a > b, a, b)));
  EXPECT_TRUE(at::equal(t.aten(), at::maximum(a, b)));
}

TEST(CpuFuser, ZeroDimAndEmptyTensors) {
  auto fn = [](const Tensor& x, const Tensor& y) { return std::make_tuple(exp(x) + 1.0, y * 2.0); };
  auto jfn = jit(fn, fused("dataflow"));
  at::Tensor x = at::randn({}), y = at::randn({0, 3});
  auto [a, b] = jfn(x, y);
  expect_close(a.aten(), at::exp(x) + 1.0);
  EXPECT_EQ(b.aten().sizes(), y.sizes());
}

TEST(CpuFuser, BackwardIsFusedToo) {
  auto fn = [](const Tensor& x) { return (tanh(x) * sigmoid(x)).sum(); };
  at::Tensor x = at::randn({6, 8}).requires_grad_(true);
  at::Tensor xr = x.detach().clone().requires_grad_(true);
  (at::tanh(xr) * at::sigmoid(xr)).sum().backward();
  for (const char* s : {"consecutive", "dataflow"}) {
    x.mutable_grad() = at::Tensor();
    auto jfn = jit(fn, fused(s));
    jfn(x).backward();
    expect_close(x.grad(), xr.grad(), 1e-5);
    EXPECT_GE(count_regions(last_backward_traces(jfn).back()), 1);
  }
}

TEST(CpuFuser, RuntimeScalarsAreKernelArguments) {
  auto fn = [](const Tensor& x, const Scalar& s) { return x * s + 1.0; };
  auto jfn = jit(fn, fused("dataflow"));
  at::Tensor x = at::randn({10});
  expect_close(jfn(x, Scalar(2.5)).aten(), x * 2.5 + 1.0);
  expect_close(jfn(x, Scalar(-1.0)).aten(), x * -1.0 + 1.0);
  EXPECT_EQ(cache_misses(jfn), 1);
}

// The ATen fallback runs the same regions op by op with the same results.
TEST(CpuFuser, FallbackWithoutCodegen) {
  setenv("THUNDER_DISABLE_CODEGEN", "1", 1);
  reset_cpu_fuser_stats();
  auto fn = [](const Tensor& x) { return F::softmax(x * 2.0, -1) + tanh(x); };
  at::Tensor x = at::randn({4, 9});
  auto jfn = jit(fn, fused("dataflow"));
  expect_close(jfn(x).aten(), at::softmax(x * 2.0, -1) + at::tanh(x));
  EXPECT_EQ(count_regions(last_traces(jfn).back()), 1);
  EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 0);
  EXPECT_EQ(cpu_fuser_stats().fallback_regions, 1);
  unsetenv("THUNDER_DISABLE_CODEGEN");
}

// A KernelBatch: calls on four new shapes run on the ATen fallback (bit for
// bit eager's ops) and compile nothing; build() compiles all four in at most
// one compiler process per core, and from then on the same cache entries run
// the generated kernels (bit for bit what a fresh jit of the function runs,
// which differs from ATen in the last bits: the kernels' own tanh). The
// reduction makes each shape its own kernel (elementwise-only regions share
// one flat kernel across shapes).
TEST(CpuFuser, KernelBatchBuildsKernelsTogether) {
  if (std::getenv("THUNDER_DISABLE_CODEGEN")) GTEST_SKIP() << "codegen disabled";
  char tmpl[] = "/tmp/thunder-batch-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  setenv("THUNDER_CACHE_DIR", tmpl, 1);
  auto fn = [](const Tensor& x) { return tanh(x * 0.375) + x.sum(-1, true); };
  auto eager = [](const at::Tensor& x) { return at::tanh(x * 0.375) + x.sum(-1, true); };
  auto jfn = jit(fn, fused("dataflow"));
  const std::vector<at::Tensor> xs = {at::randn({3, 257}), at::randn({6, 70}),
                                      at::randn({8, 3, 20}), at::randn({171})};
  reset_cpu_fuser_stats();
  {
    KernelBatch batch;
    for (const at::Tensor& x : xs) EXPECT_TRUE(at::equal(jfn(x).aten(), eager(x)));
    EXPECT_EQ(batch.pending(), 4);
    EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 0);
    EXPECT_EQ(cpu_fuser_stats().fallback_regions, 0);  // deferred, not given up
    EXPECT_EQ(batch.build(), 4);
    EXPECT_EQ(batch.pending(), 0);
  }
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 4);
  EXPECT_EQ(cpu_fuser_stats().compiler_runs, std::min<int64_t>(4, cores));
  bool kernel_differs_from_aten = false;
  for (const at::Tensor& x : xs) {
    const at::Tensor got = jfn(x).aten();
    EXPECT_TRUE(at::equal(got, jit(fn, fused("dataflow"))(x).aten()));
    // Against float64: a float32 sum of 257 values (its order is the
    // kernel's) and tanh + sum cancelling drifted past atol 1e-6 now and then.
    const at::Tensor want = eager(x.to(at::kDouble)).to(at::kFloat);
    EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5)) << (got - want).abs().max();
    kernel_differs_from_aten = kernel_differs_from_aten || !at::equal(got, eager(x));
  }
  EXPECT_TRUE(kernel_differs_from_aten) << "the entries still run on the ATen fallback";
  EXPECT_EQ(cache_misses(jfn), 4);
  EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 4);
  // One file per kernel in the disk cache (links to the libraries built).
  int libraries = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmpl))
    libraries += e.path().extension() == ".so";
  EXPECT_EQ(libraries, 4);
  // Nested batches: the innermost collects; leaving it builds.
  {
    KernelBatch outer;
    {
      KernelBatch inner;
      (void)jfn(at::randn({7, 33}));
      (void)jfn(xs[0]);  // a hit: nothing to build
      EXPECT_EQ(inner.pending(), 1);
      EXPECT_EQ(outer.pending(), 0);
    }
    EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 5);
    EXPECT_EQ(outer.pending(), 0);
  }
  std::filesystem::remove_all(tmpl);
  unsetenv("THUNDER_CACHE_DIR");
}

at::Tensor cache_workload() {
  auto fn = [](const Tensor& x) { return exp(x * 1.25) - 0.5; };
  auto jfn = jit(fn, fused("dataflow"));
  at::Tensor x = at::arange(12, at::kFloat);
  at::Tensor out = jfn(x).aten();
  EXPECT_TRUE(at::allclose(out, at::exp(x * 1.25) - 0.5));
  return out;
}

// A second process with the same cache dir loads the kernel from disk. The
// test runs itself as that second process (THUNDER_EXPECT_WARM_CACHE set).
TEST(CpuFuserCache, SecondProcessCompilesNothing) {
  if (std::getenv("THUNDER_DISABLE_CODEGEN")) GTEST_SKIP() << "codegen disabled";
  if (std::getenv("THUNDER_EXPECT_WARM_CACHE")) {  // the child: the parent's cache dir
    reset_cpu_fuser_stats();
    cache_workload();
    EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 0);
    EXPECT_EQ(cpu_fuser_stats().disk_cache_hits, 1);
    return;
  }
  char tmpl[] = "/tmp/thunder-cache-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  setenv("THUNDER_CACHE_DIR", tmpl, 1);
  reset_cpu_fuser_stats();
  cache_workload();
  EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 1);
  std::string cmd =
      std::string("THUNDER_EXPECT_WARM_CACHE=1 ") + "/proc/" + std::to_string(getpid()) +
      "/exe --gtest_filter=CpuFuserCache.SecondProcessCompilesNothing > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "the child compiled or failed";
  std::filesystem::remove_all(tmpl);
  unsetenv("THUNDER_CACHE_DIR");
}

}  // namespace
}  // namespace thunder
