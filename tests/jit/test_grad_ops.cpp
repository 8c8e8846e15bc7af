// Gradients of every differentiable public op against libtorch autograd (float64),
// tie semantics of max/min reductions and elementwise ops, and dot-product
// checks <J u, v> = <u, J^T v> against central finite differences.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/prims/prims.h>
#include <thunder/thunder.h>

#include <functional>
#include <type_traits>

namespace thunder {
namespace {

namespace F = nn::functional;
using Leaves = std::vector<at::Tensor>;
using TFn = std::function<Tensor(const TensorList&)>;
using AFn = std::function<at::Tensor(const Leaves&)>;

at::Tensor rnd(at::IntArrayRef shape) { return at::randn(shape, at::kDouble); }
at::Tensor pos(at::IntArrayRef shape) { return at::rand(shape, at::kDouble) + 0.5; }
at::Tensor idx(at::IntArrayRef shape, int64_t hi) { return at::randint(hi, shape, at::kLong); }
// A rows x cols tensor from row-major values.
at::Tensor mat(std::vector<double> v, int64_t rows) {
  return at::tensor(v, at::kDouble).reshape({rows, -1});
}
at::Tensor imat(std::vector<int64_t> v, int64_t rows) {
  return at::tensor(v, at::kLong).reshape({rows, -1});
}

// Ops written once in GRAD_CHECK for both thunder::Tensor and at::Tensor.
namespace both {
Tensor matmul(const Tensor& a, const Tensor& b) { return thunder::matmul(a, b); }
at::Tensor matmul(const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); }
Tensor pow(double a, const Tensor& b) { return thunder::pow(a, b); }
at::Tensor pow(double a, const at::Tensor& b) { return at::pow(a, b); }
template <typename T>
T cat(std::initializer_list<T> ts, int64_t dim) {
  if constexpr (std::is_same_v<T, Tensor>)
    return thunder::cat(TensorList(ts), dim);
  else
    return at::cat(std::vector<at::Tensor>(ts), dim);
}
template <typename T>
T stack(std::initializer_list<T> ts, int64_t dim) {
  if constexpr (std::is_same_v<T, Tensor>)
    return thunder::stack(TensorList(ts), dim);
  else
    return at::stack(std::vector<at::Tensor>(ts), dim);
}
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = {}) { return F::linear(x, w, b); }
at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b = {}) {
  return at::linear(x, w, b);
}
Tensor gelu(const Tensor& x, const std::string& ap = "none") { return F::gelu(x, ap); }
at::Tensor gelu(const at::Tensor& x, const std::string& ap = "none") { return at::gelu(x, ap); }
Tensor softmax(const Tensor& x, int64_t dim) { return F::softmax(x, dim); }
at::Tensor softmax(const at::Tensor& x, int64_t dim) { return at::softmax(x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return F::log_softmax(x, dim); }
at::Tensor log_softmax(const at::Tensor& x, int64_t dim) { return at::log_softmax(x, dim); }
Tensor layer_norm(const Tensor& x, at::IntArrayRef s, const Tensor& w = {}, const Tensor& b = {},
                  double eps = 1e-5) {
  return F::layer_norm(x, s, w, b, eps);
}
at::Tensor layer_norm(const at::Tensor& x, at::IntArrayRef s, const at::Tensor& w = {},
                      const at::Tensor& b = {}, double eps = 1e-5) {
  return at::layer_norm(x, s, w, b, eps);
}
Tensor embedding(const Tensor& ids, const Tensor& w) { return F::embedding(ids, w); }
at::Tensor embedding(const at::Tensor& ids, const at::Tensor& w) { return at::embedding(w, ids); }
Tensor relu(const Tensor& x) { return F::relu(x); }
at::Tensor relu(const at::Tensor& x) { return at::relu(x); }
Tensor silu(const Tensor& x) { return thunder::silu(x); }
at::Tensor silu(const at::Tensor& x) { return at::silu(x); }
}  // namespace both

// Runs `fn` jitted and `ref` eagerly on cloned leaves; compares the output and,
// after backward with a random cotangent, the grads of every float input.
void check(const TFn& fn, const AFn& ref, Leaves in, double rtol = 1e-7, double atol = 1e-9) {
  for (at::Tensor& t : in)
    if (t.is_floating_point()) t.requires_grad_();
  Leaves rin;
  for (const at::Tensor& t : in)
    rin.push_back(t.detach().clone().requires_grad_(t.requires_grad()));
  auto jfn = jit([fn](const TensorList& xs) { return fn(xs); });
  Tensor out = jfn(in);
  at::Tensor expected = ref(rin);
  ASSERT_EQ(out.aten().sizes(), expected.sizes());
  ASSERT_TRUE(at::allclose(out.aten(), expected, rtol, atol, /*equal_nan=*/true))
      << "output\n"
      << out.aten() << "\nexpected\n"
      << expected;
  ASSERT_TRUE(out.aten().requires_grad());
  at::Tensor cot = at::randn_like(expected);
  out.backward(cot);
  expected.backward(cot);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].requires_grad()) continue;
    at::Tensor want = rin[i].grad().defined() ? rin[i].grad() : at::zeros_like(rin[i]);
    at::Tensor got = in[i].grad().defined() ? in[i].grad() : at::zeros_like(in[i]);
    EXPECT_TRUE(at::allclose(got, want, rtol, atol))
        << "grad of input " << i << "\ngot\n"
        << got << "\nexpected\n"
        << want << "\n"
        << (last_backward_traces(jfn).empty() ? "" : last_backward_traces(jfn).back().str());
  }
}

// The same function written once for thunder::Tensor and once for at::Tensor.
#define GRAD_CHECK(expr, ...)                                               \
  do {                                                                      \
    SCOPED_TRACE(#expr);                                                    \
    check([](const TensorList& x) -> Tensor { return expr; },               \
          [](const Leaves& x) -> at::Tensor { return expr; }, __VA_ARGS__); \
  } while (0)

// ---- elementwise ----

TEST(GradOps, Arithmetic) {
  GRAD_CHECK(x[0] + x[1], {rnd({3, 4}), rnd({3, 4})});
  GRAD_CHECK(x[0] - x[1], {rnd({3, 4}), rnd({3, 4})});
  GRAD_CHECK(x[0] * x[1], {rnd({3, 4}), rnd({3, 4})});
  GRAD_CHECK(x[0] / x[1], {rnd({3, 4}), pos({3, 4})});
  GRAD_CHECK(x[0].pow(x[1]), {pos({3, 4}), rnd({3, 4})});
  GRAD_CHECK(x[0].add(x[1], 2.5), {rnd({3, 4}), rnd({3, 4})});
  GRAD_CHECK(x[0].sub(x[1], 0.5), {rnd({3, 4}), rnd({3, 4})});
  GRAD_CHECK(-x[0], {rnd({5})});
  GRAD_CHECK(x[0] * x[0] + x[0], {rnd({5})});  // a value used twice
}

TEST(GradOps, Broadcasting) {
  GRAD_CHECK(x[0] + x[1], {rnd({3, 4}), rnd({4})});
  GRAD_CHECK(x[0] - x[1], {rnd({3, 1}), rnd({1, 4})});
  GRAD_CHECK(x[0] * x[1], {rnd({2, 3, 4}), rnd({3, 1})});
  GRAD_CHECK(x[0] / x[1], {rnd({2, 1, 4}), pos({3, 1})});
  GRAD_CHECK(x[0].pow(x[1]), {pos({3, 4}), rnd({4})});
  GRAD_CHECK(x[0] * x[1], {rnd({3, 4}), rnd({})});
  GRAD_CHECK(x[0].maximum(x[1]), {rnd({3, 4}), rnd({4})});
}

TEST(GradOps, NumberOperands) {
  GRAD_CHECK(x[0] + 2.0, {rnd({3, 4})});
  GRAD_CHECK(2.0 - x[0], {rnd({3, 4})});
  GRAD_CHECK(x[0] * 3, {rnd({3, 4})});
  GRAD_CHECK(x[0] / 3.0, {rnd({3, 4})});
  GRAD_CHECK(1.5 / x[0], {pos({3, 4})});
  GRAD_CHECK(x[0].pow(2), {rnd({3, 4})});
  GRAD_CHECK(x[0].pow(0.5), {pos({3, 4})});
  GRAD_CHECK(x[0].pow(0), {rnd({3, 4})});
  GRAD_CHECK(both::pow(2.0, x[0]), {rnd({3, 4})});
}

TEST(GradOps, UnaryMath) {
  GRAD_CHECK(x[0].abs(), {rnd({3, 4})});
  GRAD_CHECK(x[0].exp(), {rnd({3, 4})});
  GRAD_CHECK(x[0].log(), {pos({3, 4})});
  GRAD_CHECK(x[0].log1p(), {pos({3, 4})});
  GRAD_CHECK(x[0].sqrt(), {pos({3, 4})});
  GRAD_CHECK(x[0].rsqrt(), {pos({3, 4})});
  GRAD_CHECK(x[0].sin(), {rnd({3, 4})});
  GRAD_CHECK(x[0].cos(), {rnd({3, 4})});
  GRAD_CHECK(x[0].tanh(), {rnd({3, 4})});
  GRAD_CHECK(x[0].sigmoid(), {rnd({3, 4})});
  GRAD_CHECK(x[0].erf(), {rnd({3, 4})});
  GRAD_CHECK(x[0].reciprocal(), {pos({3, 4})});
  GRAD_CHECK(x[0].relu(), {rnd({3, 4})});
  GRAD_CHECK(both::relu(x[0]), {rnd({3, 4})});
  GRAD_CHECK(both::silu(x[0]), {rnd({3, 4})});
}

TEST(GradOps, UnaryAtZero) {
  at::Tensor z = at::tensor({-1.0, 0.0, 0.0, 2.0}, at::kDouble);
  GRAD_CHECK(x[0].abs(), {z.clone()});
  GRAD_CHECK(x[0].relu(), {z.clone()});
}

TEST(GradOps, MaximumMinimumTies) {
  at::Tensor a = at::tensor({1.0, 2.0, 3.0, -1.0}, at::kDouble);
  at::Tensor b = at::tensor({1.0, 5.0, 3.0, -2.0}, at::kDouble);
  GRAD_CHECK(x[0].maximum(x[1]), {a.clone(), b.clone()});
  GRAD_CHECK(x[0].minimum(x[1]), {a.clone(), b.clone()});
  GRAD_CHECK(x[0].maximum(x[0]), {a.clone()});
  // broadcast operand with ties
  GRAD_CHECK(x[0].maximum(x[1]), {mat({1.0, 2.0, 2.0, 0.0}, 2), at::tensor({2.0}, at::kDouble)});
}

TEST(GradOps, ClampWhereMaskedFill) {
  at::Tensor a = at::tensor({-2.0, -1.0, 0.0, 0.5, 1.0, 3.0}, at::kDouble);
  GRAD_CHECK(x[0].clamp(-1.0, 1.0), {a.clone()});  // ties at the bounds: full gradient
  GRAD_CHECK(x[0].clamp(0.0), {a.clone()});
  GRAD_CHECK(x[0].clamp(c10::nullopt, 0.5), {a.clone()});
  GRAD_CHECK(x[0].clamp(1.0, -1.0), {a.clone()});  // min > max
  at::Tensor c = rnd({3, 4}) > 0;
  check([c](const TensorList& x) { return thunder::where(c, x[0], x[1]); },
        [c](const Leaves& x) { return at::where(c, x[0], x[1]); }, {rnd({3, 4}), rnd({4})});
  check([c](const TensorList& x) { return thunder::where(c, x[0], 2.0); },
        [c](const Leaves& x) { return at::where(c, x[0], 2.0); }, {rnd({3, 4})});
  check([c](const TensorList& x) { return thunder::where(c, -1.0, x[0]); },
        [c](const Leaves& x) { return at::where(c, -1.0, x[0]); }, {rnd({3, 4})});
  check([](const TensorList& x) { return thunder::where(x[0] > x[1], x[0], x[1] * 2.0); },
        [](const Leaves& x) { return at::where(x[0] > x[1], x[0], x[1] * 2.0); },
        {rnd({3, 4}), rnd({3, 4})});
  at::Tensor m = rnd({4}) > 0;
  check([m](const TensorList& x) { return thunder::masked_fill(x[0], m, 0.5); },
        [m](const Leaves& x) { return x[0].masked_fill(m, 0.5); }, {rnd({3, 4})});
}

// ---- reductions ----

TEST(GradOps, Reductions) {
  GRAD_CHECK(x[0].sum(), {rnd({3, 4})});
  GRAD_CHECK(x[0].sum({1}), {rnd({3, 4, 2})});
  GRAD_CHECK(x[0].sum(at::IntArrayRef{0, 2}, true), {rnd({3, 4, 2})});
  GRAD_CHECK(x[0].mean(), {rnd({3, 4})});
  GRAD_CHECK(x[0].mean({-1}, true), {rnd({3, 4})});
  GRAD_CHECK(x[0].amax(), {rnd({3, 4})});
  GRAD_CHECK(x[0].amax({1}), {rnd({3, 4})});
  GRAD_CHECK(x[0].amin({0}, true), {rnd({3, 4})});
  GRAD_CHECK(x[0].var(), {rnd({3, 4})});
  GRAD_CHECK(x[0].var(false), {rnd({3, 4})});
  GRAD_CHECK(x[0].var({1}, true, true), {rnd({3, 4})});
  GRAD_CHECK(x[0].var(at::IntArrayRef{0, 2}, false), {rnd({3, 4, 5})});
  GRAD_CHECK(x[0].std(), {rnd({3, 4})});
  GRAD_CHECK(x[0].std({1}, true, true), {rnd({3, 4})});
  GRAD_CHECK(std::get<0>(x[0].max(1)), {rnd({3, 4})});
  GRAD_CHECK(std::get<0>(x[0].max(0, true)), {rnd({3, 4})});
}

TEST(GradOps, ReductionTies) {
  at::Tensor t = mat({1.0, 3.0, 3.0, 0.0, 2.0, 2.0, 2.0, 2.0, -1.0, 5.0, 0.0, 5.0}, 3);
  GRAD_CHECK(x[0].amax(), {t.clone()});
  GRAD_CHECK(x[0].amax({1}), {t.clone()});
  GRAD_CHECK(x[0].amin({1}, true), {t.clone()});
  GRAD_CHECK(x[0].amax({0}), {t.clone()});
  // max(dim) sends the gradient to the returned index only (like torch).
  GRAD_CHECK(std::get<0>(x[0].max(1)), {t.clone()});
  GRAD_CHECK(std::get<0>(x[0].max(1, true)), {t.clone()});
}

// ---- shape ----

TEST(GradOps, ShapeOps) {
  GRAD_CHECK(x[0].reshape({4, 3}), {rnd({3, 4})});
  GRAD_CHECK(x[0].reshape({-1}), {rnd({3, 4})});
  GRAD_CHECK(x[0].view({2, 6}), {rnd({3, 4})});
  GRAD_CHECK(x[0].flatten(1), {rnd({2, 3, 4})});
  GRAD_CHECK(x[0].transpose(0, 2), {rnd({2, 3, 4})});
  GRAD_CHECK(x[0].permute({1, 2, 0}), {rnd({2, 3, 4})});
  GRAD_CHECK(x[0].unsqueeze(1) * x[1], {rnd({3, 4}), rnd({3, 5, 4})});
  GRAD_CHECK(x[0].squeeze(), {rnd({3, 1, 4, 1})});
  GRAD_CHECK(x[0].squeeze(1), {rnd({3, 1, 4})});
  GRAD_CHECK(x[0].expand({2, 3, 4}), {rnd({3, 1})});
  GRAD_CHECK(x[0].expand({-1, 4}), {rnd({3, 1})});
  GRAD_CHECK(x[0].contiguous(), {rnd({3, 4})});
  GRAD_CHECK(x[0].narrow(1, 1, 2), {rnd({3, 4})});
  GRAD_CHECK(x[0].select(0, 1), {rnd({3, 4})});
  GRAD_CHECK(x[0].select(1, -1), {rnd({3, 4})});
  GRAD_CHECK(x[0].triu(), {rnd({4, 4})});
  GRAD_CHECK(x[0].tril(-1), {rnd({3, 5})});
  GRAD_CHECK(x[0].triu(1), {rnd({2, 3, 4})});
  GRAD_CHECK(x[0].to(at::kFloat).to(at::kDouble) * x[0], {rnd({3, 4})});
  check([](const TensorList& x) { return x[0].to(at::kFloat); },
        [](const Leaves& x) { return x[0].to(at::kFloat); }, {rnd({3, 4})}, 1e-5, 1e-6);
}

TEST(GradOps, CatStackSplit) {
  GRAD_CHECK(both::cat({x[0], x[1], x[2]}, 1), {rnd({2, 3}), rnd({2, 1}), rnd({2, 4})});
  GRAD_CHECK(both::cat({x[0], x[0] * 2.0}, 0), {rnd({2, 3})});
  GRAD_CHECK(both::stack({x[0], x[1]}, 1), {rnd({2, 3}), rnd({2, 3})});
  check(
      [](const TensorList& x) {
        auto p = x[0].split(2, 1);
        return thunder::cat({p[2], p[0] * 3.0, p[1].exp()}, 1);
      },
      [](const Leaves& x) {
        auto p = x[0].split(2, 1);
        return at::cat({p[2], p[0] * 3.0, p[1].exp()}, 1);
      },
      {rnd({3, 5})});
  check(
      [](const TensorList& x) {
        auto p = x[0].split({1, 3}, 0);
        return p[1].sum(0) * p[0].squeeze(0);
      },
      [](const Leaves& x) {
        auto p = x[0].split({1, 3}, 0);
        return p[1].sum(0) * p[0].squeeze(0);
      },
      {rnd({4, 2})});
  check(
      [](const TensorList& x) {
        auto p = x[0].chunk(3, -1);
        return p[0] * p[2];  // the middle chunk gets no gradient
      },
      [](const Leaves& x) {
        auto p = x[0].chunk(3, -1);
        return p[0] * p[2];
      },
      {rnd({2, 6})});
}

// ---- indexing ----

TEST(GradOps, Indexing) {
  at::Tensor gi = idx({3, 2}, 4);
  check([gi](const TensorList& x) { return thunder::gather(x[0], 1, gi); },
        [gi](const Leaves& x) { return at::gather(x[0], 1, gi); }, {rnd({3, 4})});
  at::Tensor gi0 = idx({2, 4}, 3);
  check([gi0](const TensorList& x) { return thunder::gather(x[0], 0, gi0); },
        [gi0](const Leaves& x) { return at::gather(x[0], 0, gi0); }, {rnd({3, 4})});
  at::Tensor si = idx({2, 3}, 4);
  // src larger than index: only its first index-shaped block is read (libtorch 1.13's own
  // gradient has the index's shape there, so the reference reads that block explicitly).
  check([si](const TensorList& x) { return thunder::scatter_add(x[0], 1, si, x[1]); },
        [si](const Leaves& x) { return at::scatter_add(x[0], 1, si, x[1].narrow(1, 0, 3)); },
        {rnd({3, 4}), rnd({2, 5})});
  check([si](const TensorList& x) { return thunder::scatter_add(x[0], 1, si, x[1]); },
        [si](const Leaves& x) { return at::scatter_add(x[0], 1, si, x[1]); },
        {rnd({3, 4}), rnd({2, 3})});
  at::Tensor ui = imat({0, 2, 3, 1}, 2);  // unique per row
  check([ui](const TensorList& x) { return thunder::scatter(x[0], 1, ui, x[1]); },
        [ui](const Leaves& x) { return at::scatter(x[0], 1, ui, x[1]); },
        {rnd({2, 4}), rnd({2, 2})});
  check([ui](const TensorList& x) { return thunder::scatter(x[0], 1, ui, x[1]); },
        [ui](const Leaves& x) { return at::scatter(x[0], 1, ui, x[1].narrow(1, 0, 2)); },
        {rnd({2, 4}), rnd({2, 3})});
  at::Tensor ii = at::tensor({2, 0, 2, 1}, at::kLong);  // a repeated index
  check([ii](const TensorList& x) { return thunder::index_select(x[0], 0, ii); },
        [ii](const Leaves& x) { return at::index_select(x[0], 0, ii); }, {rnd({3, 4})});
  check([ii](const TensorList& x) { return thunder::index_select(x[0], 1, ii); },
        [ii](const Leaves& x) { return at::index_select(x[0], 1, ii); }, {rnd({2, 3, 2})});
  at::Tensor i32 = at::tensor({1, 1}, at::kInt);
  check([i32](const TensorList& x) { return thunder::index_select(x[0], 0, i32); },
        [i32](const Leaves& x) { return at::index_select(x[0], 0, i32); }, {rnd({3, 2})});
}

// ---- matmul and nn ----

TEST(GradOps, Matmul) {
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({4}), rnd({4})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({3, 4}), rnd({4})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({4}), rnd({4, 5})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({3, 4}), rnd({4, 5})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({2, 3, 4}), rnd({4})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({4}), rnd({2, 4, 5})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({2, 3, 4}), rnd({4, 5})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({3, 4}), rnd({2, 4, 5})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({2, 3, 4}), rnd({2, 4, 5})});
  GRAD_CHECK(both::matmul(x[0], x[1]), {rnd({2, 1, 3, 4}), rnd({5, 4, 2})});  // batch broadcast
}

TEST(GradOps, Linear) {
  GRAD_CHECK(both::linear(x[0], x[1], x[2]), {rnd({5, 3}), rnd({4, 3}), rnd({4})});
  GRAD_CHECK(both::linear(x[0], x[1]), {rnd({5, 3}), rnd({4, 3})});
  GRAD_CHECK(both::linear(x[0], x[1], x[2]), {rnd({2, 5, 3}), rnd({4, 3}), rnd({4})});
  GRAD_CHECK(both::linear(x[0], x[1], x[2]), {rnd({3}), rnd({4, 3}), rnd({4})});
  GRAD_CHECK(both::linear(x[0], x[1]), {rnd({2, 2, 5, 3}), rnd({4, 3})});
}

TEST(GradOps, Activations) {
  GRAD_CHECK(both::gelu(x[0]), {rnd({3, 4})});
  GRAD_CHECK(both::gelu(x[0], "tanh"), {rnd({3, 4})});
  GRAD_CHECK(both::softmax(x[0], 1), {rnd({3, 4})});
  GRAD_CHECK(both::softmax(x[0], 0), {rnd({3, 4, 2})});
  GRAD_CHECK(both::log_softmax(x[0], -1), {rnd({3, 4})});
  GRAD_CHECK(both::relu(x[0]) * both::silu(x[1]), {rnd({3, 4}), rnd({3, 4})});
}

TEST(GradOps, LayerNorm) {
  GRAD_CHECK(both::layer_norm(x[0], {4}), {rnd({3, 4})});
  GRAD_CHECK(both::layer_norm(x[0], {4}, x[1], x[2]), {rnd({3, 4}), rnd({4}), rnd({4})});
  GRAD_CHECK(both::layer_norm(x[0], {3, 4}, x[1], x[2], 1e-3),
             {rnd({2, 3, 4}), rnd({3, 4}), rnd({3, 4})});
  GRAD_CHECK(both::layer_norm(x[0], {4}, x[1]), {rnd({2, 4}), rnd({4})});
}

TEST(GradOps, EmbeddingAndCrossEntropy) {
  at::Tensor ids = imat({1, 3, 1, 0, 3, 3}, 2);  // repeated rows
  check([ids](const TensorList& x) { return F::embedding(ids, x[0]); },
        [ids](const Leaves& x) { return at::embedding(x[0], ids); }, {rnd({5, 4})});
  GRAD_CHECK(both::embedding(x[0], x[1]), {idx({4}, 6), rnd({6, 3})});  // indices as an input
  at::Tensor tgt = idx({5}, 4);
  check([tgt](const TensorList& x) { return F::cross_entropy(x[0], tgt); },
        [tgt](const Leaves& x) { return at::cross_entropy_loss(x[0], tgt); }, {rnd({5, 4})});
}

TEST(GradOps, ScaledDotProductAttention) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    check(
        [causal](const TensorList& x) {
          return F::scaled_dot_product_attention(x[0], x[1], x[2], causal);
        },
        [causal](const Leaves& x) {
          at::Tensor s =
              at::matmul(x[0], x[1].transpose(-2, -1)) / std::sqrt(double(x[0].size(-1)));
          if (causal) {
            at::Tensor keep = at::ones({s.size(-2), s.size(-1)}, at::kBool).tril();
            s = s.masked_fill(keep.logical_not(), -INFINITY);
          }
          return at::matmul(at::softmax(s, -1), x[2]);
        },
        {rnd({2, 3, 5, 4}), rnd({2, 3, 5, 4}), rnd({2, 3, 5, 4})});
  }
}

TEST(GradOps, Composite) {
  // A small MLP block: everything at once, inputs used several times.
  GRAD_CHECK(both::softmax(
                 both::layer_norm(both::gelu(both::linear(x[0], x[1], x[2])) + x[0].sum({-1}, true),
                                  {4}, x[3], x[4]),
                 -1),
             {rnd({2, 3, 4}), rnd({4, 4}), rnd({4}), rnd({4}), rnd({4})});
}

// ---- <J u, v> = <u, J^T v> with central finite differences ----

void dot_product_check(const TFn& fn, Leaves in) {
  auto jfn = jit([fn](const TensorList& x) { return fn(x); });
  for (at::Tensor& t : in) t.requires_grad_();
  Tensor out = jfn(in);
  at::Tensor v = at::randn_like(out.aten());
  out.backward(v);
  Leaves u;
  for (const at::Tensor& t : in) u.push_back(at::randn_like(t));
  double lhs_jtv = 0;  // <u, J^T v>
  for (size_t i = 0; i < in.size(); ++i) lhs_jtv += (u[i] * in[i].grad()).sum().item<double>();
  const double eps = 1e-6;
  Leaves plus, minus;
  for (size_t i = 0; i < in.size(); ++i) {
    plus.push_back((in[i].detach() + eps * u[i]));
    minus.push_back((in[i].detach() - eps * u[i]));
  }
  NoGradGuard ng;
  at::Tensor ju = (jfn(plus).aten() - jfn(minus).aten()) / (2 * eps);
  double rhs_juv = (ju * v).sum().item<double>();  // <J u, v>
  EXPECT_NEAR(lhs_jtv, rhs_juv, 1e-6 * std::max(1.0, std::abs(rhs_juv)));
}

// Prims no frontend op reaches in every form: strided slices, pad with
// interior and negative padding, scatter with a larger src.
Tensor prim_pad(const Tensor& x, std::vector<int64_t> cfg) {
  return Tensor(prims::pad(Value(x.proxy()), 0.5, cfg).proxy());
}
Tensor prim_slice(const Tensor& x, std::vector<int64_t> start, std::vector<int64_t> end,
                  std::vector<int64_t> strides) {
  return Tensor(prims::slice(Value(x.proxy()), start, end, strides).proxy());
}

TEST(GradOps, SliceAndPadPrims) {
  check(
      [](const TensorList& x) {
        return prim_slice(x[0], {1, 0}, {6, 5}, {2, 3});
      },
      [](const Leaves& x) { return x[0].slice(0, 1, 6, 2).slice(1, 0, 5, 3); }, {rnd({7, 5})});
  check(
      [](const TensorList& x) {
        return prim_slice(x[0], {2, 1}, {2, 4}, {1, 2});
      },
      [](const Leaves& x) { return x[0].slice(0, 2, 2).slice(1, 1, 4, 2); }, {rnd({3, 5})});
  check(
      [](const TensorList& x) {
        return prim_pad(x[0], {1, 2, 0, -1, 0, 0});
      },
      [](const Leaves& x) {
        return at::constant_pad_nd(x[0], {-1, 0, 1, 2}, 0.5);
      },
      {rnd({3, 4})});
  for (std::vector<int64_t> cfg :
       {std::vector<int64_t>{1, 2, 1, 0, 0, 2}, std::vector<int64_t>{-2, 1, 1, -1, -3, 2},
        std::vector<int64_t>{0, -2, 0, 2, -1, 0}}) {
    SCOPED_TRACE(Value(cfg).str());
    dot_product_check([cfg](const TensorList& x) { return prim_pad(x[0], cfg).exp(); },
                      {rnd({3, 4})});
  }
  dot_product_check(
      [](const TensorList& x) {
        return prim_slice(x[0], {0, 1}, {5, 4}, {3, 2}).sin();
      },
      {rnd({5, 4})});
}

TEST(GradOps, DotProductFiniteDifferences) {
  {
    SCOPED_TRACE("tanh(matmul)");
    dot_product_check([](const TensorList& x) { return thunder::matmul(x[0], x[1]).tanh(); },
                      {rnd({2, 3, 4}), rnd({4, 5})});
  }
  {
    SCOPED_TRACE("layer_norm");
    dot_product_check([](const TensorList& x) { return F::layer_norm(x[0], {5}, x[1], x[2]); },
                      {rnd({3, 5}), rnd({5}), rnd({5})});
  }
  {
    SCOPED_TRACE("softmax");
    dot_product_check([](const TensorList& x) { return F::softmax(x[0] * x[1], -1); },
                      {rnd({3, 5}), rnd({5})});
  }
  {
    SCOPED_TRACE("var / pow / div");
    dot_product_check(
        [](const TensorList& x) {
          return x[0].var({1}, true, true) * x[0].pow(3.0) / (x[1].exp() + 1.0);
        },
        {rnd({3, 5}), rnd({3, 5})});
  }
  {
    SCOPED_TRACE("sdpa");
    dot_product_check(
        [](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], true); },
        {rnd({1, 2, 4, 3}), rnd({1, 2, 4, 3}), rnd({1, 2, 4, 3})});
  }
}

}  // namespace
}  // namespace thunder
