// Autograd errors: missing grad rules and bad register_grad calls.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/lang/ltorch.h>
#include <thunder/prims/prims.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

TEST(AutogradErrors, PrimWithoutGradRuleNamesItself) {
  // prims.copy_ has no grad rule: differentiating through it is an error
  // (kept in in-place form: functionalization would remove it).
  auto jfn = jit(
      [](const Tensor& x) {
        Tensor dst = x * 0.0;
        return Tensor(prims::copy_(Value(x.proxy()), Value(dst.proxy())).proxy());
      },
      {.skip_inplace_functionalization = true});
  try {
    jfn(at::randn({3}).requires_grad_());
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prims.copy_: has no grad rule"), std::string::npos)
        << e.what();
  }
  // Without grad the same function compiles and runs.
  at::Tensor x = at::randn({3});
  EXPECT_TRUE(at::allclose(jfn(x).aten(), x));
}

TEST(AutogradErrors, RegisterGradForUnknownSymbol) {
  EXPECT_THROW(register_grad("ltorch.no_such_op",
                             [](GradContext&, const CallArgs&) -> TensorList { return {}; }),
               Error);
}

TEST(AutogradErrors, RuleReturningNothingIsAnError) {
  auto jfn = jit([](const Tensor& x) { return x.rsqrt(); });
  {
    auto bad = scoped_register_grad("ltorch.rsqrt",
                                    [](GradContext&, const CallArgs&) -> TensorList { return {}; });
    EXPECT_THROW(jfn(at::rand({3}).requires_grad_()), Error);
  }
  // The scope gave rsqrt its built-in gradient back; the callable recovered from its error.
  at::Tensor x = at::rand({3}, at::kDouble).add(0.5).requires_grad_();
  jfn(x).backward(at::ones({3}, at::kDouble));
  EXPECT_TRUE(at::allclose(x.grad(), -0.5 * x.detach().pow(-1.5)));
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

TEST(AutogradErrors, InPlaceOnALeafThatRequiresGrad) {
  Tensor w = at::ones({3}).requires_grad_();
  try {
    w.add_(1.0);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.add_"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("leaf"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(at::equal(w.aten(), at::ones({3})));  // unchanged
  {
    NoGradGuard g;  // an optimizer-style update is allowed
    w.add_(1.0);
  }
  EXPECT_TRUE(at::equal(w.aten(), at::full({3}, 2.0)));
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// A user rule whose backward reads forward values it did not save explicitly.
TEST(AutogradErrors, StrictSavedForBackwardNamesTheUnsavedValue) {
  auto silu_rule = [](bool save) {
    return [save](GradContext& g, const CallArgs& a) -> TensorList {
      Tensor x = a.tensor(0);
      Tensor s = x.sigmoid(), out = x * s;
      if (save) {
        save_for_backward(x);
        save_for_backward(s);
      }
      g.put_grad(x, g.get_grad(out) * s * (1 + x * (1 - s)));
      return {out};
    };
  };
  auto rule = scoped_register_grad("ltorch.silu", silu_rule(false));
  auto fn = [](const Tensor& x) { return thunder::silu(x); };
  auto strict = jit(fn, {.strict_saved_for_backward = true, .arg_names = {"x"}});
  at::Tensor x = at::randn({4}, at::kDouble).requires_grad_();
  try {
    strict(x);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("strict_saved_for_backward: the backward reads"), std::string::npos) << m;
    EXPECT_NE(m.find("from the grad rule of ltorch.silu"), std::string::npos) << m;
    std::cout << m << "\n";
  }
  // Without strict mode the same rule compiles.
  auto lax = jit(fn);
  lax(x).backward(at::ones({4}, at::kDouble));
  at::Tensor x2 = x.detach().clone().requires_grad_();
  at::silu(x2).backward(at::ones({4}, at::kDouble));
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));
  // Saving explicitly satisfies strict mode; the callable recovered from its error.
  rule = scoped_register_grad("ltorch.silu", silu_rule(true));
  x.mutable_grad() = at::Tensor();
  strict(x).backward(at::ones({4}, at::kDouble));
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));
  EXPECT_EQ(last_saved_for_backward(strict).size(), 2u);
}

// layer_norm's backward symbol checks the statistics it is handed: one mean
// and one rstd per normalised row, in the compute dtype; grad like a.
TEST(AutogradErrors, NativeLayerNormBackwardChecksItsStatistics) {
  auto call = [](const at::Tensor& x, const at::Tensor& mean, const at::Tensor& rstd) {
    auto jfn = jit([](const Tensor& a, const Tensor& m, const Tensor& r) {
      Value v =
          ltorch::native_layer_norm_backward(Value(a.proxy()), Value(a.proxy()), {6},
                                             Value(m.proxy()), Value(r.proxy()), Value(), true);
      return Tensor(v.as_list()[0].proxy());
    });
    try {
      jfn(x, mean, rstd);
      return std::string("no thunder::Error");
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  const at::Tensor x = at::randn({4, 6}), stat = at::randn({4, 1});
  std::string msg = call(x, at::randn({4}), stat);
  EXPECT_NE(msg.find("ltorch.native_layer_norm_backward: mean must be float32 [4, 1]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("got float32 [4]"), std::string::npos) << msg;
  msg = call(x, stat, at::randn({4, 1}, at::kDouble));
  EXPECT_NE(msg.find("rstd must be float32 [4, 1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got float64 [4, 1]"), std::string::npos) << msg;
  msg = call(at::randn({4, 5}), stat, stat);
  EXPECT_NE(msg.find("normalized_shape [6] must be the trailing dims of a's shape [4, 5]"),
            std::string::npos)
      << msg;
  // Good statistics go through (and the jitted function above stays usable).
  EXPECT_EQ(call(x, stat, stat.abs()), "no thunder::Error");
}

// layer_norm_from_stats checks its statistics the same way, and w and b.
TEST(AutogradErrors, LayerNormFromStatsChecksItsStatistics) {
  auto call = [](const at::Tensor& x, const at::Tensor& mean, const at::Tensor& w) {
    auto jfn = jit([](const Tensor& a, const Tensor& m, const Tensor& w) {
      return Tensor(ltorch::layer_norm_from_stats(Value(a.proxy()), {6}, Value(m.proxy()),
                                                  Value(m.proxy()), Value(w.proxy()), Value())
                        .proxy());
    });
    try {
      jfn(x, mean, w);
      return std::string("no thunder::Error");
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  const at::Tensor x = at::randn({4, 6}), stat = at::rand({4, 1}) + 0.5, w = at::randn({6});
  std::string msg = call(x, at::randn({4, 6}), w);
  EXPECT_NE(msg.find("ltorch.layer_norm_from_stats: mean must be float32 [4, 1]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("got float32 [4, 6]"), std::string::npos) << msg;
  msg = call(x, stat.to(at::kDouble), w);
  EXPECT_NE(msg.find("mean must be float32 [4, 1] (one per normalised row), got float64"),
            std::string::npos)
      << msg;
  msg = call(x, stat, at::randn({5}));
  EXPECT_NE(
      msg.find("ltorch.layer_norm_from_stats: w must have shape normalized_shape [6], got [5]"),
      std::string::npos)
      << msg;
  msg = call(at::randn({4, 5}), stat, w);
  EXPECT_NE(msg.find("normalized_shape [6] must equal the trailing dims of the input shape [4, 5]"),
            std::string::npos)
      << msg;
  EXPECT_EQ(call(x, stat, w), "no thunder::Error");
}

}  // namespace
}  // namespace thunder
