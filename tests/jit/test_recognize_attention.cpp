// recognize_attention: attention written out by hand (matmul, scale, causal
// masked_fill, softmax, matmul) becomes one ltorch.scaled_dot_product_attention
// and runs on the attention executor, saving no [.., L, S] probabilities. Each
// form users write is checked against the same code run eagerly by libtorch
// (values and gradients, float64 reference), and each near miss (a scale or
// mask that is not sdpa's, a mask that is an input, probabilities read
// elsewhere) is left as written, with the same values.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "trace_statements.h"

namespace thunder {
namespace {

using test_util::count_statements;

enum class Scale { Mul, MulLeft, Div, Wrong };
enum class Mask { None, BoolOnes, FloatGreater, FullNotZero, PastDiagonal2 };

struct Form {
  std::string name;
  Scale scale = Scale::Mul;
  Mask mask = Mask::BoolOnes;
  bool scale_after_mask = false;
  double fill = -std::numeric_limits<double>::infinity();
};

// The factories and softmax of each library; the rest of the code is shared.
struct Eager {
  using T = at::Tensor;
  static T full(int64_t l, int64_t s, double v, at::ScalarType dt) {
    return at::full({l, s}, v, at::TensorOptions().dtype(dt));
  }
  static T ones(int64_t l, int64_t s, at::ScalarType dt) {
    return at::ones({l, s}, at::TensorOptions().dtype(dt));
  }
  static T softmax(const T& x) { return at::softmax(x, -1); }
};
struct Traced {
  using T = Tensor;
  static T full(int64_t l, int64_t s, double v, at::ScalarType dt) {
    return thunder::full({l, s}, v, at::TensorOptions().dtype(dt));
  }
  static T ones(int64_t l, int64_t s, at::ScalarType dt) {
    return thunder::ones({l, s}, at::TensorOptions().dtype(dt));
  }
  static T softmax(const T& x) { return nn::functional::softmax(x, -1); }
};

// Attention as a user writes it, in the form `f`.
template <class Lib>
typename Lib::T written_attention(const typename Lib::T& q, const typename Lib::T& k,
                                  const typename Lib::T& v, const Form& f) {
  using T = typename Lib::T;
  const int64_t l = q.size(-2), s = k.size(-2);
  const double d = static_cast<double>(q.size(-1));
  auto scaled = [&](const T& x) -> T {
    switch (f.scale) {
      case Scale::Mul:
        return x * (1.0 / std::sqrt(d));
      case Scale::MulLeft:
        return (1.0 / std::sqrt(d)) * x;
      case Scale::Div:
        return x / std::sqrt(d);
      case Scale::Wrong:
        return x * 0.5;
    }
    return x;
  };
  auto mask = [&]() -> T {
    switch (f.mask) {
      case Mask::BoolOnes:
        return Lib::ones(l, s, at::kBool).triu(1);
      case Mask::FloatGreater:
        return Lib::ones(l, s, at::kFloat).triu(1).gt(0.5);
      case Mask::FullNotZero:
        return Lib::full(l, s, 2.0, at::kDouble).triu(1).ne(0);
      case Mask::PastDiagonal2:
        return Lib::ones(l, s, at::kBool).triu(2);
      case Mask::None:
        break;
    }
    return T();
  };
  T att = q.matmul(k.transpose(-2, -1));
  if (!f.scale_after_mask) att = scaled(att);
  if (f.mask != Mask::None) att = att.masked_fill(mask(), f.fill);
  if (f.scale_after_mask) att = scaled(att);
  return Lib::softmax(att).matmul(v);
}

// Float64 to 1e-12; float32 against the float64 reference of the same
// float32 values, to 1e-5.
void expect_close(const at::Tensor& got, const at::Tensor& want64, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want64.sizes()) << what;
  const double tol = got.scalar_type() == at::kDouble ? 1e-12 : 1e-5;
  const at::Tensor g = got.to(at::kDouble);
  EXPECT_TRUE(at::allclose(g, want64, tol, tol))
      << what << ": max abs difference " << (g - want64).abs().max().item<double>();
}

struct Shapes {
  std::vector<int64_t> q, k, v;
};

// Runs `f` jitted and eagerly (float64, autograd) on the same values and
// checks the output and gq, gk, gv. Then: `recognized` says whether the
// forward now holds one scaled_dot_product_attention (with is_causal as the
// form's mask) and no softmax, and whether the backward saves nothing of the
// scores' [.., L, S] shape.
void check_form(const Form& f, const Shapes& sh, at::ScalarType dt, bool recognized,
                const JitOptions& opts = {}) {
  const std::string what = f.name + " " + std::string(at::toString(dt));
  const at::Tensor q = at::randn(sh.q, dt), k = at::randn(sh.k, dt), v = at::randn(sh.v, dt);
  std::vector<at::Tensor> ref_leaves, jit_leaves;
  for (const at::Tensor& t : {q, k, v}) {
    ref_leaves.push_back(t.to(at::kDouble).clone().requires_grad_());
    jit_leaves.push_back(t.clone().requires_grad_());
  }
  const at::Tensor ref = written_attention<Eager>(ref_leaves[0], ref_leaves[1], ref_leaves[2], f);
  const at::Tensor go = at::randn(ref.sizes(), dt);
  ref.backward(go.to(at::kDouble));

  auto jfn = jit([f](const Tensor& a, const Tensor& b,
                     const Tensor& c) { return written_attention<Traced>(a, b, c, f); },
                 opts);
  Tensor out = jfn(jit_leaves[0], jit_leaves[1], jit_leaves[2]);
  expect_close(out.aten(), ref.detach(), what + ": out");
  out.backward(go);
  const char* names[] = {"gq", "gk", "gv"};
  for (int i = 0; i < 3; ++i)
    expect_close(jit_leaves[i].grad(), ref_leaves[i].grad(), what + ": " + names[i]);

  const std::vector<Trace> fwd = last_traces(jfn);
  ASSERT_EQ(has_stage(fwd, "Recognize attention"), recognized) << what << "\n" << fwd.front();
  const int64_t l = sh.q[sh.q.size() - 2], s = sh.k[sh.k.size() - 2];
  bool saves_scores = false;
  for (const TensorInfo& t : last_saved_for_backward(jfn))
    saves_scores |= t.shape.size() >= 2 && t.shape[t.shape.size() - 2] == l && t.shape.back() == s;
  EXPECT_EQ(saves_scores, !recognized) << what;
  // What autodiff differentiated: the softmax's rule, or attention's pair.
  const Trace& joint = find_stage(fwd, "Autodiff");
  EXPECT_EQ(count_statements(joint, "ltorch.softmax"), recognized ? 0 : 1) << what << "\n" << joint;
  EXPECT_EQ(count_statements(joint, "ltorch.sdpa_forward"), recognized ? 1 : 0) << what;
  if (!recognized) return;
  const Trace& r = find_stage(fwd, "Recognize attention");
  EXPECT_EQ(count_statements(r, "ltorch.softmax"), 0) << what << "\n" << r;
  EXPECT_EQ(count_statements(r, "ltorch.matmul"), 0) << what << "\n" << r;
  ASSERT_EQ(count_statements(r, "ltorch.scaled_dot_product_attention"), 1) << what << "\n" << r;
  for (const BoundSymbol& b : r.bound_symbols())
    if (b.sym->id == "ltorch.scaled_dot_product_attention")
      EXPECT_EQ(b.args[3].as_bool(), f.mask != Mask::None) << what << "\n" << r;
  // The mask's statements went with the masked_fill that read them.
  EXPECT_EQ(count_statements(r, "ltorch.triu"), 0) << what << "\n" << r;
}

const Shapes kHeads{{2, 3, 7, 5}, {2, 3, 7, 5}, {2, 3, 7, 6}};

TEST(RecognizeAttention, FormsUsersWriteBecomeOneAttention) {
  at::manual_seed(0);
  const std::vector<Form> forms = {
      {"q k^T * c, bool triu mask (examples/models.h)"},
      {"c * (q k^T)", Scale::MulLeft},
      {"q k^T / sqrt(D)", Scale::Div},
      {"scaled after the mask", Scale::Mul, Mask::BoolOnes, true},
      {"float triu > 0.5 (TorchScript example)", Scale::Mul, Mask::FloatGreater},
      {"full(2).triu(1) != 0", Scale::Div, Mask::FullNotZero},
      {"no mask", Scale::Mul, Mask::None},
  };
  for (at::ScalarType dt : {at::kDouble, at::kFloat})
    for (const Form& f : forms) check_form(f, kHeads, dt, true);
}

// Top-left aligned causal masks of other shapes, and 3-D inputs.
TEST(RecognizeAttention, QueriesAndKeysOfDifferentLengths) {
  at::manual_seed(1);
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    check_form({"more queries"}, {{2, 9, 4}, {2, 5, 4}, {2, 5, 3}}, dt, true);
    check_form({"more keys"}, {{1, 2, 4, 8}, {1, 2, 11, 8}, {1, 2, 11, 8}}, dt, true);
  }
}

TEST(RecognizeAttention, NearMissesStayAsWritten) {
  at::manual_seed(2);
  const std::vector<Form> misses = {
      {"scale 0.5 is not 1/sqrt(5)", Scale::Wrong},
      {"triu(2) masks less than causal", Scale::Mul, Mask::PastDiagonal2},
      {"-1e4 is not -inf", Scale::Mul, Mask::BoolOnes, false, -1e4},
  };
  for (at::ScalarType dt : {at::kDouble, at::kFloat})
    for (const Form& f : misses) check_form(f, kHeads, dt, false);
}

TEST(RecognizeAttention, OptionTurnsItOff) {
  at::manual_seed(3);
  check_form({"recognize_attention = false"}, kHeads, at::kDouble, false,
             {.recognize_attention = false});
}

// Probabilities that the caller also gets back must exist: nothing changes.
TEST(RecognizeAttention, ProbabilitiesReadElsewhereStay) {
  auto fn = [](const Tensor& q, const Tensor& k, const Tensor& v) {
    Tensor p = nn::functional::softmax(q.matmul(k.transpose(-2, -1)) / std::sqrt(5.0), -1);
    return std::make_tuple(p.matmul(v), p);
  };
  auto jfn = jit(fn);
  const at::Tensor q = at::randn({2, 7, 5}, at::kDouble), k = at::randn({2, 7, 5}, at::kDouble),
                   v = at::randn({2, 7, 5}, at::kDouble);
  auto [o, p] = jfn(Tensor(q), Tensor(k), Tensor(v));
  const at::Tensor want_p = at::softmax(at::matmul(q, k.transpose(-2, -1)) / std::sqrt(5.0), -1);
  expect_close(p.aten(), want_p, "p");
  expect_close(o.aten(), at::matmul(want_p, v), "out");
  EXPECT_FALSE(has_stage(last_traces(jfn), "Recognize attention")) << last_traces(jfn).front();
}

// A mask passed in is a run-time value: the pass cannot know it is causal.
TEST(RecognizeAttention, MaskThatIsAnInputStays) {
  auto fn = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
    Tensor s = q.matmul(k.transpose(-2, -1)) / std::sqrt(5.0);
    return nn::functional::softmax(s.masked_fill(mask, -INFINITY), -1).matmul(v);
  };
  auto jfn = jit(fn);
  const at::Tensor q = at::randn({2, 7, 5}, at::kDouble), k = at::randn({2, 7, 5}, at::kDouble),
                   v = at::randn({2, 7, 5}, at::kDouble);
  const at::Tensor mask = at::ones({7, 7}, at::kBool).triu(1);
  Tensor o = jfn(Tensor(q), Tensor(k), Tensor(v), Tensor(mask));
  const at::Tensor s = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(5.0);
  expect_close(o.aten(), at::matmul(at::softmax(s.masked_fill(mask, -INFINITY), -1), v), "out");
  EXPECT_FALSE(has_stage(last_traces(jfn), "Recognize attention")) << last_traces(jfn).front();
}

}  // namespace
}  // namespace thunder
