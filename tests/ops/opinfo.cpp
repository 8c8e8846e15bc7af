#include "ops/opinfo.h"

#include "thunder/core/parse_trace.h"
#include "thunder/executors/cpu_fuser.h"

namespace thunder::testing {

void expect_same(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want,
                 double rtol, double atol, const std::string& how) {
  ASSERT_EQ(got.size(), want.size()) << how << ": number of outputs";
  for (size_t i = 0; i < got.size(); ++i) {
    const at::Tensor &g = got[i], &w = want[i];
    ASSERT_EQ(g.defined(), w.defined()) << how << ": output " << i << " definedness";
    if (!w.defined()) continue;
    ASSERT_EQ(g.sizes(), w.sizes()) << how << ": output " << i << " shape";
    ASSERT_EQ(g.scalar_type(), w.scalar_type()) << how << ": output " << i << " dtype";
    if (at::isFloatingType(w.scalar_type())) {
      at::Tensor g64 = g.to(at::kDouble), w64 = w.to(at::kDouble);
      EXPECT_TRUE(at::allclose(g64, w64, rtol, atol, /*equal_nan=*/true))
          << how << ": output " << i << " values differ; max abs diff "
          << (g64 - w64).abs().nan_to_num(0).max().item<double>() << "\n got " << g << "\n want "
          << w;
    } else {
      EXPECT_TRUE(at::equal(g, w))
          << how << ": output " << i << " values differ\n got " << g << "\n want " << w;
    }
  }
}

namespace {
// The trace parser reads back what the printer wrote. Traces with fusion
// regions are skipped: their kernels are not in the symbol registry.
void expect_round_trip(const std::vector<Trace>& stages, const std::string& how) {
  if (stages.empty()) return;
  const Trace& t = stages.back();
  for (const BoundSymbol& b : t.bsyms)
    if (b.sym->is_region) return;
  try {
    EXPECT_EQ(parse_trace(t.str()).str(), t.str()) << how << ": round trip";
  } catch (const Error& e) {
    ADD_FAILURE() << how << ": the final trace does not parse: " << e.what() << "\n" << t.str();
  }
}

std::vector<at::Tensor> to_aten(const TensorList& ts) {
  std::vector<at::Tensor> out;
  for (const Tensor& t : ts) out.push_back(t.defined() ? t.aten() : at::Tensor());
  return out;
}
TensorList to_thunder(const std::vector<at::Tensor>& ts) {
  return TensorList(ts.begin(), ts.end());
}

// The samples queued by the running OpInfoTest; null outside one.
std::vector<OpSample>* queued = nullptr;

void run_sample(const OpSample& s) {
  SCOPED_TRACE(s.name);
  std::vector<at::Tensor> want = s.torch_fn(s.inputs);
  expect_same(to_aten(s.thunder_fn(to_thunder(s.inputs))), want, s.rtol, s.atol, "eager");
  // cpu_fuser runs the decomposition (fused into generated kernels, or op by
  // op on ATen with THUNDER_DISABLE_CODEGEN=1), so it gets the prims tolerance.
  const std::vector<std::pair<std::vector<std::string>, std::string>> configs = {
      {{"aten"}, "dataflow"},
      {{"aten_prims"}, "dataflow"},
      {{"cpu_fuser", "aten"}, "consecutive"},
      {{"cpu_fuser", "aten"}, "dataflow"}};
  for (const auto& [executors, fusion_type] : configs) {
    const std::string exec =
        executors[0] == "cpu_fuser" ? "cpu_fuser " + fusion_type : executors[0];
    auto jfn = jit([&](const TensorList& xs) { return s.thunder_fn(xs); },
                   {.executors = executors, .fusion_type = fusion_type});
    std::vector<at::Tensor> got;
    try {
      got = to_aten(jfn(to_thunder(s.inputs)));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "jit " << exec << " threw: " << e.what();
      continue;
    }
    expect_round_trip(last_traces(jfn), "jit " + exec + " forward");
    expect_round_trip(last_backward_traces(jfn), "jit " + exec + " backward");
    bool prims = exec != "aten";
    expect_same(got, want, prims ? s.prims_rtol : s.rtol, prims ? s.prims_atol : s.atol,
                "jit " + exec + "\n" + last_traces(jfn).back().str());
  }
}

// Detached copies (strides, dtype and requires_grad kept): a sample may write
// to its inputs, and the warm-up must leave them as the test made them.
std::vector<at::Tensor> copies(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : ts) {
    if (!t.defined()) {
      out.push_back(t);
      continue;
    }
    at::Tensor c = t.detach().clone();
    out.push_back(c.requires_grad_(t.requires_grad()));
  }
  return out;
}

// Calls each queued sample once under both fusion strategies inside one
// KernelBatch (the regions run on the ATen fallback meanwhile), then builds
// every kernel the test needs at once. Failures here are ignored: the checks
// that follow run everything again and report them.
void build_kernels(const std::vector<OpSample>& samples) {
  const char* off = std::getenv("THUNDER_DISABLE_CODEGEN");
  if (off && std::string(off) == "1") return;
  KernelBatch batch;
  for (const OpSample& s : samples)
    for (const char* fusion_type : {"consecutive", "dataflow"}) {
      try {
        auto jfn = jit([&](const TensorList& xs) { return s.thunder_fn(xs); },
                       {.executors = {"cpu_fuser", "aten"}, .fusion_type = fusion_type});
        jfn(to_thunder(copies(s.inputs)));
      } catch (const std::exception&) {
      }
    }
  batch.build();
}

}  // namespace

void check_sample(const OpSample& s) {
  if (queued)
    queued->push_back(s);
  else
    run_sample(s);
}

void OpInfoTest::SetUp() { queued = &samples_; }

void OpInfoTest::TearDown() {
  queued = nullptr;
  build_kernels(samples_);
  for (const OpSample& s : samples_) run_sample(s);
  samples_.clear();
}

void expect_error(const std::string& needle, const std::vector<at::Tensor>& inputs,
                  const ThunderFn& fn) {
  auto check = [&](const std::function<void()>& f, const char* how) {
    try {
      f();
      ADD_FAILURE() << how << ": expected thunder::Error mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << how << ": message '" << e.what() << "' does not mention '" << needle << "'";
    } catch (const std::exception& e) {
      ADD_FAILURE() << how << ": expected thunder::Error, got " << e.what();
    }
  };
  check([&] { fn(to_thunder(inputs)); }, "eager");
  auto jfn = jit([&](const TensorList& xs) { return fn(xs); });
  check([&] { jfn(to_thunder(inputs)); }, "jit");
  EXPECT_EQ(cache_hits(jfn), 0);
}

at::Tensor make_tensor(at::IntArrayRef shape, at::ScalarType dtype, double lo, double hi) {
  static at::Generator gen = at::detail::createCPUGenerator(1234);
  if (dtype == at::kBool) return at::rand(shape, gen) > 0.5;
  if (at::isFloatingType(dtype))
    return (at::rand(shape, gen, at::kDouble) * (hi - lo) + lo).to(dtype);
  return at::randint(static_cast<int64_t>(lo), static_cast<int64_t>(hi) + 1, shape, gen,
                     at::TensorOptions().dtype(dtype));
}

at::Tensor make_noncontiguous(at::IntArrayRef shape, at::ScalarType dtype) {
  std::vector<int64_t> rev(shape.rbegin(), shape.rend());
  at::Tensor t = make_tensor(rev, dtype);
  std::vector<int64_t> perm;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) perm.push_back(i);
  return t.permute(perm);
}

void check1(const std::string& name, const at::Tensor& x, TF tf, AF af, double tol) {
  OpSample s{name,
             {x},
             [tf](const TensorList& v) { return TensorList{tf(v[0])}; },
             [af](const std::vector<at::Tensor>& v) { return std::vector<at::Tensor>{af(v[0])}; }};
  if (tol > 0) s.rtol = s.atol = s.prims_rtol = s.prims_atol = tol;
  check_sample(s);
}

void error1(const std::string& needle, const at::Tensor& x, TF tf) {
  expect_error(needle, {x}, [tf](const TensorList& v) { return TensorList{tf(v[0])}; });
}

}  // namespace thunder::testing
