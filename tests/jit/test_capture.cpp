// thunder::jit on plain libtorch code (functions over at::Tensor), captured at
// the dispatcher: a table of captured ops checked against eager libtorch
// (values, and float64 gradients for the differentiable ones), then the cache,
// captured tensors, the printed trace, errors and thunder::examine.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace thunder {
namespace {

using V = std::vector<at::Tensor>;
using Fn = std::function<at::Tensor(const V&)>;

at::Tensor R(at::IntArrayRef s, at::ScalarType t = at::kFloat) {
  return at::randn(s, at::TensorOptions().dtype(t));
}
at::Tensor Pos(at::IntArrayRef s, at::ScalarType t = at::kFloat) {
  return at::rand(s, at::TensorOptions().dtype(t)) + 0.5;
}
// A non-contiguous tensor of logical shape [a, b].
at::Tensor NC(int64_t a, int64_t b, at::ScalarType t = at::kFloat) { return R({b, a}, t).t(); }

// Class indices read from the enclosing scope (a captured input).
const at::Tensor& index_constant() {
  static const at::Tensor idx = at::tensor({3, 0, 5, 3}, at::kLong);
  return idx;
}

// Column indices for the [4, 2] sources scattered into [4, 6] (a captured input).
const at::Tensor& scatter_index() {
  static const at::Tensor idx = at::tensor({0, 5, 2, 3, 1, 0, 4, 5}, at::kLong).view({4, 2});
  return idx;
}

// One captured-op sample: plain libtorch code over 1-3 tensors.
struct CapturedOp {
  std::string name;  // the aten op(s) it exercises
  std::vector<at::Tensor> inputs;
  Fn fn;
  bool differentiable = true;
};

std::vector<CapturedOp> captured_ops() {
  std::vector<CapturedOp> ops = {
      {"add.Tensor broadcast", {R({2, 3}), R({3})}, [](const V& a) { return a[0] + a[1]; }},
      {"add.Tensor alpha",
       {R({2, 3}), NC(2, 3)},
       [](const V& a) { return at::add(a[0], a[1], 2.5); }},
      {"add.Scalar", {R({2, 3})}, [](const V& a) { return a[0].add(3, 2); }},
      {"sub.Tensor alpha", {NC(3, 4), R({4})}, [](const V& a) { return at::sub(a[0], a[1], 0.5); }},
      {"sub.Scalar", {R({3})}, [](const V& a) { return a[0] - 1.5; }},
      {"rsub via empty_like+fill_+sub_", {R({2, 3})}, [](const V& a) { return 2 - a[0]; }},
      {"mul.Tensor", {R({4, 1}), R({1, 5})}, [](const V& a) { return a[0] * a[1]; }},
      {"mul.Scalar", {NC(3, 2)}, [](const V& a) { return a[0] * 2; }},
      {"div.Tensor", {R({2, 3}), Pos({2, 3})}, [](const V& a) { return a[0] / a[1]; }},
      {"div.Scalar", {R({2, 3})}, [](const V& a) { return a[0].div(4); }},
      {"neg", {NC(2, 3)}, [](const V& a) { return -a[0]; }},
      {"exp", {R({5})}, [](const V& a) { return a[0].exp(); }},
      {"log", {Pos({2, 3})}, [](const V& a) { return at::log(a[0]); }},
      {"tanh", {NC(3, 3)}, [](const V& a) { return a[0].tanh(); }},
      {"sigmoid", {R({4})}, [](const V& a) { return at::sigmoid(a[0]); }},
      {"relu", {R({2, 5})}, [](const V& a) { return at::relu(a[0]); }},
      {"gelu", {R({2, 5})}, [](const V& a) { return at::gelu(a[0]); }},
      {"gelu tanh", {R({2, 5})}, [](const V& a) { return at::gelu(a[0], "tanh"); }},
      {"sqrt", {Pos({3})}, [](const V& a) { return a[0].sqrt(); }},
      {"rsqrt", {Pos({3, 2})}, [](const V& a) { return a[0].rsqrt(); }},
      {"pow.Tensor_Scalar", {R({3})}, [](const V& a) { return a[0].pow(2); }},
      {"pow.Tensor_Tensor", {Pos({2, 3}), R({3})}, [](const V& a) { return at::pow(a[0], a[1]); }},
      {"lt.Scalar", {R({2, 3})}, [](const V& a) { return a[0] < 0.5; }, false},
      {"ge.Tensor", {R({2, 3}), R({3})}, [](const V& a) { return a[0] >= a[1]; }, false},
      {"ne.Scalar", {R({4})}, [](const V& a) { return a[0] != 1; }, false},
      {"where.self + gt.Scalar",
       {R({2, 3}), R({2, 3})},
       [](const V& a) { return at::where(a[0] > 0, a[0], a[1]); }},
      {"sum", {NC(3, 4)}, [](const V& a) { return a[0].sum(); }},
      {"sum.dim_IntList keepdim",
       {R({2, 3, 4})},
       [](const V& a) {
         return a[0].sum(at::IntArrayRef{0, 2}, true);
       }},
      {"mean", {R({2, 3})}, [](const V& a) { return a[0].mean(); }},
      {"mean.dim", {R({2, 3})}, [](const V& a) { return a[0].mean(at::IntArrayRef{-1}); }},
      {"amax", {R({2, 3})}, [](const V& a) { return a[0].amax({1}, true); }},
      {"view",
       {R({2, 3})},
       [](const V& a) {
         return a[0].view({3, 2});
       }},
      {"reshape", {NC(2, 3)}, [](const V& a) { return a[0].reshape({6}); }},
      {"_reshape_alias",
       {R({2, 3})},
       [](const V& a) {
         return at::_reshape_alias(a[0], {3, 2}, {2, 1});
       }},
      {"transpose.int + contiguous",
       {R({2, 3, 4})},
       [](const V& a) { return a[0].transpose(0, 2).contiguous(); }},
      {"t", {R({2, 3})}, [](const V& a) { return a[0].t() * 1; }},
      {"permute",
       {R({2, 3, 4})},
       [](const V& a) {
         return a[0].permute({2, 0, 1}) * 1;
       }},
      {"unsqueeze + squeeze.dim",
       {R({2, 3})},
       [](const V& a) { return a[0].unsqueeze(1).exp().squeeze(1); }},
      {"squeeze", {R({2, 1, 3})}, [](const V& a) { return a[0].squeeze() * 1; }},
      {"expand",
       {R({3})},
       [](const V& a) {
         return a[0].expand({2, 3}) * 1;
       }},
      {"matmul", {R({2, 3, 4}), R({4, 5})}, [](const V& a) { return at::matmul(a[0], a[1]); }},
      {"mm", {NC(2, 3), R({3, 4})}, [](const V& a) { return at::mm(a[0], a[1]); }},
      {"bmm", {R({2, 3, 4}), R({2, 4, 5})}, [](const V& a) { return at::bmm(a[0], a[1]); }},
      {"addmm beta alpha",
       {R({4}), R({2, 3}), R({3, 4})},
       [](const V& a) { return at::addmm(a[0], a[1], a[2], 0.5, 2.0); }},
      {"t + addmm (linear)",
       {R({2, 3}), R({4, 3}), R({4})},
       [](const V& a) { return at::addmm(a[2], a[0], a[1].t()); }},
      {"linear",
       {R({2, 3}), R({4, 3}), R({4})},
       [](const V& a) { return at::linear(a[0], a[1], a[2]); }},
      {"softmax.int", {R({2, 5})}, [](const V& a) { return at::softmax(a[0], 1); }},
      {"log_softmax.int", {NC(3, 4)}, [](const V& a) { return at::log_softmax(a[0], -1); }},
      {"_softmax", {R({2, 5})}, [](const V& a) { return at::_softmax(a[0], 0, false); }},
      {"layer_norm",
       {R({2, 3, 4}), R({4}), R({4})},
       [](const V& a) { return at::layer_norm(a[0], {4}, a[1], a[2], 1e-5); }},
      {"native_layer_norm",
       {R({2, 4}), R({4}), R({4})},
       [](const V& a) { return std::get<0>(at::native_layer_norm(a[0], {4}, a[1], a[2], 1e-5)); }},
      {"dropout (eval)", {R({2, 3})}, [](const V& a) { return at::dropout(a[0], 0.5, false); }},
      {"to.dtype", {R({2, 3})}, [](const V& a) { return a[0].to(at::kDouble) * 2; }},
      {"arange (GPT positions)",
       {R({3, 4})},
       [](const V& a) { return a[0] + at::arange(4, at::kLong); }},
      {"arange.start", {R({5})}, [](const V& a) { return a[0] * at::arange(2, 7, at::kDouble); }},
      {"arange.start_step",
       {R({4})},
       [](const V& a) { return a[0] - at::arange(1.0, 3.0, 0.5, at::kFloat); }},
      {"ones_like + zeros",
       {R({2, 3})},
       [](const V& a) { return a[0] + at::ones_like(a[0]) + at::zeros({3}); }},
      // Tensor[] results: each element is its own value (and a view).
      {"split.Tensor", {R({2, 5})}, [](const V& a) { return a[0].split(2, 1)[2] * 3; }},
      {"split_with_sizes",
       {R({4, 3})},
       [](const V& a) {
         auto parts = a[0].split_with_sizes({1, 3}, 0);
         return parts[0] + parts[1].sum(0, true);
       }},
      {"chunk", {R({6, 2})}, [](const V& a) { return a[0].chunk(3, 0)[1].exp(); }},
      {"triu", {R({4, 4})}, [](const V& a) { return at::triu(a[0], 1) + 1; }},
      {"masked_fill.Scalar",
       {R({3, 3})},
       [](const V& a) { return a[0].masked_fill(a[0] > 0.2, -2.0); }},
      {"embedding", {R({10, 4})}, [](const V& a) { return at::embedding(a[0], index_constant()); }},
      {"max.dim values", {R({4, 6})}, [](const V& a) { return std::get<0>(a[0].max(1, true)); }},
      {"max.dim indices + argmax",
       {R({4, 6})},
       [](const V& a) { return std::get<1>(a[0].max(-1, true)) + a[0].argmax(1, true); },
       false},
      {"gather + max.dim",
       {R({4, 6})},
       [](const V& a) { return a[0].gather(1, std::get<1>(a[0].max(1, true))); }},
      {"scatter_add",
       {R({4, 6}), R({4, 2})},
       [](const V& a) { return a[0].scatter_add(1, scatter_index(), a[1]); }},
      {"scatter_add_ into zeros_like",
       {R({4, 6}), R({4, 2})},
       [](const V& a) {
         return at::zeros_like(a[0]).scatter_add_(1, scatter_index(), a[1]) * a[0];
       }},
      {"scatter.src",
       {R({4, 6}), R({4, 2})},
       [](const V& a) { return a[0].scatter(1, scatter_index(), a[1]); }},
      {"repeat", {R({2, 3})}, [](const V& a) { return a[0].repeat({2, 1, 3}); }},
      {"to.device (dtype)",
       {R({2, 3})},
       [](const V& a) { return a[0].to(at::kCPU, at::kDouble) * a[0].to(at::kCPU, at::kFloat); }},
      {"index_select",
       {R({10, 4})},
       [](const V& a) { return a[0].index_select(0, index_constant()); }},
      {"cross_entropy_loss",
       {R({4, 6})},
       [](const V& a) { return at::cross_entropy_loss(a[0], index_constant()); }},
  };
  return ops;
}

// Runs f over the inputs eagerly and jitted (two calls: the capture and a hit).
at::Tensor run_jit(const Fn& f, const std::vector<at::Tensor>& in) {
  switch (in.size()) {
    case 1: {
      auto jf = jit([&](const at::Tensor& a) { return f({a}); });
      jf(in[0]);
      at::Tensor out = jf(in[0]);
      EXPECT_EQ(cache_hits(jf), 1);
      return out;
    }
    case 2: {
      auto jf = jit([&](const at::Tensor& a, const at::Tensor& b) { return f({a, b}); });
      jf(in[0], in[1]);
      at::Tensor out = jf(in[0], in[1]);
      EXPECT_EQ(cache_hits(jf), 1);
      return out;
    }
    default: {
      auto jf = jit([&](const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
        return f({a, b, c});
      });
      jf(in[0], in[1], in[2]);
      at::Tensor out = jf(in[0], in[1], in[2]);
      EXPECT_EQ(cache_hits(jf), 1);
      return out;
    }
  }
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what,
                  double rtol, double atol) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.scalar_type(), want.scalar_type()) << what;
  if (want.is_floating_point())
    EXPECT_TRUE(at::allclose(got, want, rtol, atol)) << what << "\ngot\n"
                                                     << got << "\nwant\n"
                                                     << want;
  else
    EXPECT_TRUE(at::equal(got, want)) << what;
}

TEST(Capture, OpsMatchEagerLibtorch) {
  for (const CapturedOp& op : captured_ops()) {
    SCOPED_TRACE(op.name);
    at::Tensor want = op.fn(op.inputs);
    at::Tensor got = run_jit(op.fn, op.inputs);
    expect_close(got, want, op.name, 1e-4, 1e-5);
  }
}

TEST(Capture, Float64GradientsMatchEagerLibtorch) {
  for (const CapturedOp& op : captured_ops()) {
    if (!op.differentiable) continue;
    SCOPED_TRACE(op.name);
    auto leaves = [&] {
      std::vector<at::Tensor> l;
      for (const at::Tensor& t : op.inputs)
        l.push_back(t.to(at::kDouble).detach().requires_grad_());
      return l;
    };
    std::vector<at::Tensor> eager = leaves(), jitted = leaves();
    at::Tensor want = op.fn(eager);
    at::Tensor cot = at::randn_like(want);
    (want * cot).sum().backward();
    // The first call captures; gradients are checked on the second (a cache hit).
    at::Tensor got = run_jit(op.fn, jitted);
    expect_close(got, want.detach(), op.name + " (value)", 1e-7, 1e-9);
    (got * cot).sum().backward();
    for (size_t i = 0; i < eager.size(); ++i) {
      ASSERT_TRUE(jitted[i].grad().defined()) << op.name << " input " << i;
      expect_close(jitted[i].grad(), eager[i].grad(),
                   op.name + " grad of input " + std::to_string(i), 1e-7, 1e-9);
    }
  }
}

// at::tensor({...}) inside the function is at::empty, then the literal
// copied in outside the dispatcher: its values are a captured constant, not
// an empty tensor's (Python's torch.tensor([...]) does the same). A later
// in-place update of it is the function's own value; the constant stays.
TEST(Capture, ATensorLiteralInsideTheFunctionKeepsItsValues) {
  auto fn = [](const at::Tensor& x) {
    at::Tensor idx = at::tensor({2, 0, 1}, at::kLong);
    at::Tensor w = at::tensor({0.5, -1.0, 2.0}, at::kDouble);
    w.mul_(2.0);
    return x.index_select(0, idx) * w.unsqueeze(1) + w.sum();
  };
  auto jf = jit(fn);
  at::Tensor x = at::randn({3, 4}, at::kDouble);
  for (int call = 0; call < 3; ++call)
    EXPECT_TRUE(at::allclose(jf(x), fn(x), 1e-12, 1e-12)) << "call " << call;
  EXPECT_EQ(cache_hits(jf), 2);
}

TEST(Capture, CacheHitsAndANewShapeRecompiles) {
  auto jf =
      jit([](const at::Tensor& x, const at::Tensor& w) { return at::gelu(at::matmul(x, w)); });
  at::Tensor x = R({2, 3}), w = R({3, 4});
  at::Tensor a = jf(x, w);
  at::Tensor b = jf(x, w);
  EXPECT_EQ(cache_misses(jf), 1);
  EXPECT_EQ(cache_hits(jf), 1);
  EXPECT_TRUE(at::allclose(a, at::gelu(at::matmul(x, w)), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(b, a));
  at::Tensor x5 = R({5, 3});
  EXPECT_TRUE(at::allclose(jf(x5, w), at::gelu(at::matmul(x5, w)), 1e-5, 1e-6));
  EXPECT_EQ(cache_misses(jf), 2);
}

TEST(Capture, ACapturedTensorIsReadAtCallTime) {
  at::Tensor scale = R({3});
  auto jf = jit([&](const at::Tensor& x) { return x * scale + 1; });
  at::Tensor x = R({2, 3});
  EXPECT_TRUE(at::allclose(jf(x), x * scale + 1));
  scale.add_(2.0);  // in place: same tensor, new values
  EXPECT_TRUE(at::allclose(jf(x), x * scale + 1));
  EXPECT_EQ(cache_misses(jf), 1);
  EXPECT_NE(last_traces(jf).front().str().find("t_captured_"), std::string::npos)
      << last_traces(jf).front();
}

TEST(Capture, TraceShowsLtorchSymbols) {
  auto jf = jit([](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
    return at::addmm(b, x, w.t()).relu();
  });
  jf(R({2, 3}), R({4, 3}), R({4}));
  const std::string first = last_traces(jf).front().str();
  EXPECT_NE(first.find("ltorch.linear(x0, x1, x2)"), std::string::npos) << first;
  EXPECT_NE(first.find("ltorch.relu("), std::string::npos) << first;
  EXPECT_EQ(first.find("ltorch.matmul"), std::string::npos) << first;
}

TEST(Capture, ResultsAsTupleAndVector) {
  auto jf =
      jit([](const at::Tensor& x) { return std::make_tuple(x.exp(), x.sum(at::IntArrayRef{0})); });
  at::Tensor x = R({2, 3});
  auto [e, s] = jf(x);
  EXPECT_TRUE(at::allclose(e, x.exp()));
  EXPECT_TRUE(at::allclose(s, x.sum(at::IntArrayRef{0})));
  auto jv = jit([](const std::vector<at::Tensor>& xs) {
    return std::vector<at::Tensor>{xs[0] + xs[1], xs[0] * 2};
  });
  std::vector<at::Tensor> r = jv(std::vector<at::Tensor>{x, x});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(at::allclose(r[0], x + x));
  EXPECT_TRUE(at::allclose(r[1], x * 2));
}

TEST(Capture, DropoutInTrainingMode) {
  auto jf = jit([](const at::Tensor& x) { return at::dropout(x, 0.5, true); });
  at::Tensor x = at::ones({1000});
  at::Tensor y = jf(x);
  y = jf(x);
  EXPECT_TRUE(((y == 0) | (y == 2)).all().item<bool>());
  const double kept = (y == 2).sum().item<double>();
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
}

// cumsum has no translation; with x requiring grad a gradient would flow
// through it, so it cannot run as an opaque call (test_capture_opaque.cpp).
TEST(Capture, AnUnsupportedOpIsNamedAndTheFunctionStaysUsable) {
  auto jf = jit([](const at::Tensor& x, int64_t use_cumsum) {
    return use_cumsum ? at::cumsum(x, 0) : x.exp();
  });
  at::Tensor x = R({4}).requires_grad_();
  try {
    jf(x, 1);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("aten::cumsum"), std::string::npos) << msg;
    EXPECT_NE(msg.find("src/frontend/capture_ops.cpp"), std::string::npos) << msg;
  }
  EXPECT_TRUE(at::allclose(jf(x, 0), x.exp()));
  EXPECT_TRUE(at::allclose(jf(x, 0), x.exp()));
  EXPECT_EQ(cache_hits(jf), 1);
}

// x + x * ones with the product under no_grad: eagerly x.grad is 1, the
// product being a constant to autograd; captured it must be the same.
TEST(Capture, NoGradRegionIsAConstantForAutodiff) {
  auto jf = jit([](const at::Tensor& x) {
    at::Tensor p;
    {
      at::NoGradGuard no_grad;
      p = x * at::ones_like(x);
    }
    return x + p;
  });
  at::Tensor x = R({4}).requires_grad_();
  jf(x).sum().backward();
  EXPECT_TRUE(at::equal(x.grad(), at::ones({4}))) << x.grad();
}

TEST(Capture, HostValuesAreRefused) {
  auto item = jit([](const at::Tensor& x) { return x * x.sum().item<double>(); });
  try {
    item(R({3}));
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("aten::item"), std::string::npos) << e.what();
  }
}

// The new rows' checks, each naming the op and the offending value.
TEST(Capture, NewRowsRefuseWhatTheyCannotExpress) {
  auto expect_refused = [](auto fn, const at::Tensor& x, const std::string& needle) {
    auto jf = jit(fn);
    try {
      (void)jf(x);
      ADD_FAILURE() << "expected thunder::Error containing " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  at::Tensor x = R({2, 3}).requires_grad_();
  expect_refused([](const at::Tensor& a) { return (a * 2).detach() + a; }, x,
                 "aten::detach: detaches t0, a value that requires grad");
  expect_refused(
      [](const at::Tensor& a) {
        return a.gather(1, at::zeros({2, 1}, at::kLong), /*sparse_grad=*/true);
      },
      x, "aten::gather: sparse_grad=True is not supported");
}

// In-place writes into tensors the function did not make: the caller's
// tensors end up as eagerly, written once per call (the capture run's own
// writes are undone before the compiled program runs), on a miss and on hits.
TEST(Capture, InPlaceOnAnArgumentIsWrittenBackOncePerCall) {
  auto fn = [](at::Tensor x, const at::Tensor& y) {
    x.add_(y);         // an argument
    x.mul_(2);         // again: reads the new value
    return x * y + 1;  // reads it too
  };
  auto jf = jit(fn);
  at::Tensor x = R({2, 3}), y = R({3});
  at::Tensor xe = x.clone();
  for (int call = 0; call < 3; ++call) {
    at::Tensor want = fn(xe, y);
    at::Tensor got = jf(x, y);
    EXPECT_TRUE(at::allclose(got, want)) << call << ": " << got << " vs " << want;
    EXPECT_TRUE(at::allclose(x, xe)) << call << ": " << x << " vs " << xe;
  }
  EXPECT_EQ(cache_misses(jf), 1);
  bool written_back = false;  // functionalization names the write-back
  for (const Trace& t : last_traces(jf))
    written_back |= t.str().find("written back") != std::string::npos;
  EXPECT_TRUE(written_back);
}

TEST(Capture, InPlaceThroughAViewOfAnArgument) {
  auto fn = [](at::Tensor x, const at::Tensor& m) {
    at::Tensor head = x.narrow(0, 0, 2);
    head.masked_fill_(m, 0.5);  // writes x's first two rows
    x.narrow(1, 1, 1).zero_();  // and a column
    return x.sum(0);            // sees both writes
  };
  auto jf = jit(fn);
  at::Tensor x = R({3, 4}), m = R({2, 4}) > 0;
  at::Tensor xe = x.clone();
  for (int call = 0; call < 2; ++call) {
    at::Tensor want = fn(xe, m);
    at::Tensor got = jf(x, m);
    EXPECT_TRUE(at::allclose(got, want)) << got << " vs " << want;
    EXPECT_TRUE(at::equal(x, xe)) << x << " vs " << xe;
  }
}

TEST(Capture, CopyIntoAnArgumentCastsAndBroadcasts) {
  auto fn = [](at::Tensor dst, const at::Tensor& src) {
    dst.copy_(src);  // f64 [3] into f32 [2, 3]
    return dst + 1;
  };
  auto jf = jit(fn);
  at::Tensor dst = R({2, 3}), src = R({3}, at::kDouble);
  at::Tensor de = dst.clone();
  at::Tensor want = fn(de, src), got = jf(dst, src);
  EXPECT_TRUE(at::allclose(got, want));
  EXPECT_TRUE(at::equal(dst, de));
  EXPECT_EQ(got.scalar_type(), at::kFloat);
}

// An SGD step on a leaf that requires grad, under NoGradGuard as optimizers
// do it: values change, the leaf stays a leaf.
TEST(Capture, SgdStepUnderNoGradOnALeafParameter) {
  auto step = jit([](at::Tensor w, const at::Tensor& g) {
    at::NoGradGuard no_grad;
    w.add_(g, -0.1);
    return w.norm();
  });
  at::Tensor w = R({4, 3}).requires_grad_(), g = R({4, 3});
  at::Tensor we = w.detach().clone();
  for (int i = 0; i < 3; ++i) {
    step(w, g);
    we.add_(g, -0.1);
  }
  EXPECT_TRUE(at::allclose(w, we)) << w << " vs " << we;
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(w.grad_fn());
}

// A tensor from the enclosing scope (a captured input) is written back too.
TEST(Capture, InPlaceOnACapturedTensor) {
  at::Tensor total = at::zeros({3});
  auto jf = jit([&total](const at::Tensor& x) {
    total.add_(x);
    return total * 2;
  });
  at::Tensor x = R({3});
  jf(x);
  at::Tensor out = jf(x);
  EXPECT_TRUE(at::allclose(total, x * 2)) << total << " vs " << x * 2;
  EXPECT_TRUE(at::allclose(out, x * 4));
}

// A write with autograd history into an argument cannot be written back (the
// caller's tensor gets values only): refused before it runs, naming the op.
TEST(Capture, AWriteThatNeedsAGradientIntoAnArgumentIsRefused) {
  auto jf = jit([](at::Tensor x, const at::Tensor& w) { return x.add_(w) * 2; });
  at::Tensor x = R({3}), w = R({3}).requires_grad_();
  const at::Tensor before = x.clone();
  try {
    jf(x, w);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("aten::add_.Tensor"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NoGradGuard"), std::string::npos) << msg;
  }
  EXPECT_TRUE(at::equal(x, before));
  EXPECT_FALSE(x.requires_grad());
  // Under no_grad the same function is fine.
  at::NoGradGuard no_grad;
  at::Tensor got = jf(x, w);
  EXPECT_TRUE(at::allclose(x, before + w));
  EXPECT_TRUE(at::allclose(got, (before + w) * 2));
}

// A capture that fails after writing into an argument leaves it unchanged.
TEST(Capture, AFailedCaptureUndoesItsWrites) {
  auto jf = jit([](at::Tensor x) {
    x.mul_(2);
    x.narrow(0, 0, 1).add_(1);
    return x * x.sum().item<double>();  // refused: a host value
  });
  at::Tensor x = R({3});
  const at::Tensor before = x.clone();
  EXPECT_THROW(jf(x), Error);
  EXPECT_TRUE(at::equal(x, before)) << x << " vs " << before;
}

TEST(Capture, TheThunderTensorPathIsUnchanged) {
  auto jf = jit([](const Tensor& x) { return (x * 2.0).exp(); });
  at::Tensor x = R({3});
  Tensor y = jf(x);
  EXPECT_TRUE(at::allclose(y.aten(), (x * 2.0).exp()));
}

// x requires grad: cumsum (no translation) is unsupported, not opaque.
TEST(Capture, ExamineListsEveryOpWithItsSupport) {
  at::Tensor x = R({2, 3}).requires_grad_(), w = R({3, 4});
  ExamineReport r = examine(
      [](const at::Tensor& x, const at::Tensor& w) {
        at::Tensor h = at::relu(at::matmul(x, w));
        h = at::cumsum(h, 1) + h * 2;
        return h.sum().item<double>() * h;
      },
      x, w);
  EXPECT_FALSE(r.all_supported());
  auto find = [&](const std::string& n) -> const ExamineReport::Op* {
    for (const auto& o : r.ops)
      if (o.name == n) return &o;
    return nullptr;
  };
  ASSERT_NE(find("aten::matmul"), nullptr) << r;
  EXPECT_EQ(find("aten::matmul")->support, ExamineReport::Support::Translated);
  ASSERT_NE(find("aten::cumsum"), nullptr) << r;
  EXPECT_EQ(find("aten::cumsum")->support, ExamineReport::Support::Unsupported);
  ASSERT_NE(find("aten::item"), nullptr) << r;
  EXPECT_EQ(find("aten::item")->support, ExamineReport::Support::Unsupported);
  // add reads cumsum's result: still an op capture translates.
  ASSERT_NE(find("aten::add.Tensor"), nullptr) << r;
  EXPECT_EQ(find("aten::add.Tensor")->support, ExamineReport::Support::Translated);
  ASSERT_NE(find("aten::mul.Scalar"), nullptr) << r;
  EXPECT_EQ(find("aten::mul.Scalar")->count, 2);  // h * 2 and item * h
  const std::string table = r.str();
  EXPECT_NE(table.find("aten::cumsum"), std::string::npos) << table;
  EXPECT_NE(table.find("unsupported"), std::string::npos) << table;

  ExamineReport ok = examine([](const at::Tensor& x) { return (x * 2).tanh(); }, x);
  EXPECT_TRUE(ok.all_supported()) << ok;
  EXPECT_EQ(ok.ops.size(), 2u) << ok;
}

// Per-call cost of a cache hit: a captured 3-op function against the same
// function written with thunder::Tensor. Prints the numbers; both paths share
// the guard and the program, so they should be close.
TEST(Capture, CacheHitOverheadMatchesTheThunderPath) {
  auto captured = jit([](const at::Tensor& x) { return (x * 2.0).exp().sum(); });
  auto traced = jit([](const Tensor& x) { return (x * 2.0).exp().sum(); });
  at::Tensor x = R({8});
  auto time_us = [&](auto& f) {
    const int n = 5000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f(x);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
               .count() /
           n;
  };
  // Alternate the two, best of five rounds each: the machine is shared.
  double c = 1e9, t = 1e9;
  for (int round = 0; round < 5; ++round) {
    t = std::min(t, time_us(traced));
    c = std::min(c, time_us(captured));
  }
  std::cout << "[capture] cache hit, 3-op function on f32[8]: captured " << c
            << " us/call, thunder::Tensor " << t << " us/call\n";
  if (std::getenv("THUNDER_CAPTURE_PRINT"))
    std::cout << last_traces(captured).back() << "\n" << last_traces(traced).back() << "\n";
  EXPECT_LT(c, 3 * t + 5);
}

}  // namespace
}  // namespace thunder
