// Registry changes as scoped values: register_grad and add_tags return a
// handle that restores exactly what was there before, and a jitted callable
// never runs a cache entry compiled under a rule or tag set that changed since
// (the registry version).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/lang/ltorch.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

namespace F = nn::functional;

// sin's gradient scaled by k: a rule whose effect shows in the gradient values.
GradFn scaled_sin_rule(double k) {
  return [k](GradContext& g, const CallArgs& a) -> TensorList {
    Tensor x = a.tensor(0);
    Tensor out = thunder::sin(x);
    g.put_grad(x, g.get_grad(out) * x.cos() * k);
    return {out};
  };
}

// Runs jfn(x).backward() and returns x's gradient divided by cos(x): the
// factor the active rule applied (1 for the built-in gradient).
template <typename J>
double sin_grad_factor(J& jfn) {
  at::Tensor x = at::linspace(-1.0, 1.0, 5, at::kDouble).requires_grad_();
  jfn(x).backward(at::ones({5}, at::kDouble));
  at::Tensor factor = x.grad() / x.detach().cos();
  EXPECT_TRUE(at::allclose(factor, factor[0].expand({5})));
  return factor[0].item<double>();
}

uint32_t tags_of(const char* id) { return ltorch::symbol(id).tags; }
uint32_t bit(OpTag t) { return static_cast<uint32_t>(t); }

// A symbol of these tests alone, so that permanent changes stay harmless.
const char* scratch_symbol() {
  static const char* id = [] {
    Symbol s;
    s.id = "test.registry_scopes_scratch";
    s.tags = bit(OpTag::ELEMENTWISE_OP);
    symbol_registry().add(std::move(s));
    return "test.registry_scopes_scratch";
  }();
  return id;
}

TEST(RegistryScopes, ScopedRegisterGradRestoresTheOldRule) {
  auto jfn = jit([](const Tensor& x) { return x.sin(); }, {.executors = {"aten"}});
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
  {
    auto rule = scoped_register_grad("ltorch.sin", scaled_sin_rule(3.0));
    EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 3.0);
  }
  // The built-in rule again, in the same callable (its entry was compiled under the user rule).
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
  EXPECT_EQ(cache_misses(jfn), 3);
}

TEST(RegistryScopes, NestedGradRulesRestoreInnermostFirst) {
  auto jfn = jit([](const Tensor& x) { return x.sin(); }, {.executors = {"aten"}});
  {
    auto outer = scoped_register_grad("ltorch.sin", scaled_sin_rule(3.0));
    {
      auto inner = scoped_register_grad("ltorch.sin", scaled_sin_rule(5.0));
      EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 5.0);
    }
    EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 3.0);
  }
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
}

TEST(RegistryScopes, OutOfOrderGradRuleRestoreKeepsTheNewerRule) {
  auto jfn = jit([](const Tensor& x) { return x.sin(); }, {.executors = {"aten"}});
  RegistryChange older = register_grad("ltorch.sin", scaled_sin_rule(3.0));
  RegistryChange newer = register_grad("ltorch.sin", scaled_sin_rule(5.0));
  older.restore();  // the newer rule is still in effect...
  EXPECT_FALSE(older.active());
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 5.0);
  newer.restore();  // ...and without it the older one is gone too: the built-in rule
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
  newer.restore();  // twice: nothing
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
}

TEST(RegistryScopes, ScopedAddTagsRestoresTheOldBits) {
  const uint32_t before = tags_of("ltorch.dropout");
  ASSERT_FALSE(before & bit(OpTag::DONT_RECOMPUTE_IN_BACKWARD));
  {
    auto g = scoped_add_tags("ltorch.dropout", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
    EXPECT_EQ(tags_of("ltorch.dropout"), before | bit(OpTag::DONT_RECOMPUTE_IN_BACKWARD));
  }
  EXPECT_EQ(tags_of("ltorch.dropout"), before);
  {  // a tag the symbol already has stays after the restore
    auto g = scoped_add_tags("ltorch.dropout", {OpTag::RANDOM_OP, OpTag::RECOMPUTE_IN_BACKWARD});
    EXPECT_EQ(tags_of("ltorch.dropout"), before | bit(OpTag::RECOMPUTE_IN_BACKWARD));
  }
  EXPECT_EQ(tags_of("ltorch.dropout"), before);
}

TEST(RegistryScopes, NestedAndOutOfOrderTagRestores) {
  const uint32_t before = tags_of("ltorch.gelu");
  const uint32_t d = bit(OpTag::DONT_RECOMPUTE_IN_BACKWARD), r = bit(OpTag::RECOMPUTE_IN_BACKWARD);
  ScopedRegistryChange a = add_tags("ltorch.gelu", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
  ScopedRegistryChange b =
      add_tags("ltorch.gelu", {OpTag::DONT_RECOMPUTE_IN_BACKWARD, OpTag::RECOMPUTE_IN_BACKWARD});
  EXPECT_EQ(tags_of("ltorch.gelu"), before | d | r);
  a.restore();  // b still asks for DONT_RECOMPUTE_IN_BACKWARD: it stays
  EXPECT_EQ(tags_of("ltorch.gelu"), before | d | r);
  b.restore();
  EXPECT_EQ(tags_of("ltorch.gelu"), before);
  // In reverse order each restore gives back exactly the bits before its change.
  ScopedRegistryChange c = add_tags("ltorch.gelu", {OpTag::RECOMPUTE_IN_BACKWARD});
  {
    ScopedRegistryChange e = add_tags("ltorch.gelu", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
    EXPECT_EQ(tags_of("ltorch.gelu"), before | d | r);
  }
  EXPECT_EQ(tags_of("ltorch.gelu"), before | r);
  c.restore();
  EXPECT_EQ(tags_of("ltorch.gelu"), before);
}

TEST(RegistryScopes, ADiscardedChangeIsPermanentAndReleaseKeepsIt) {
  const char* id = scratch_symbol();
  const uint32_t before = symbol_registry().get(id).tags;
  add_tags(id, {OpTag::DONT_DCE});  // the return value is dropped: the change stays
  EXPECT_EQ(symbol_registry().get(id).tags, before | bit(OpTag::DONT_DCE));
  RegistryChange kept;
  {
    auto g = scoped_add_tags(id, {OpTag::MATMUL_OP});
    kept = g.release();
    EXPECT_FALSE(g.active());
  }
  EXPECT_TRUE(symbol_registry().get(id).has_tag(OpTag::MATMUL_OP));
  kept.restore();  // a released change can still be taken back by hand
  EXPECT_EQ(symbol_registry().get(id).tags, before | bit(OpTag::DONT_DCE));
}

TEST(RegistryScopes, EveryChangeAndRestoreBumpsTheVersion) {
  uint64_t v0 = registry_version();
  ScopedRegistryChange g = add_tags("ltorch.gelu", {OpTag::RECOMPUTE_IN_BACKWARD});
  uint64_t v1 = registry_version();
  EXPECT_GT(v1, v0);
  g.restore();
  EXPECT_GT(registry_version(), v1);
  uint64_t v2 = registry_version();
  g.restore();  // nothing to undo: no bump
  EXPECT_EQ(registry_version(), v2);
  auto r = scoped_register_grad("ltorch.sin", scaled_sin_rule(2.0));
  EXPECT_GT(registry_version(), v2);
}

// A cache entry compiled before a tag change is not reused after it, and is
// reused again while nothing changes.
TEST(RegistryScopes, CacheEntryIsNotReusedAfterAddTags) {
  constexpr int64_t n = 256;  // the mask (64 KiB as bool) dwarfs seed and offset
  auto jfn = jit([](const Tensor& x) { return F::dropout(x, 0.5, true); });
  auto run = [&] {
    at::Tensor x = at::randn({n, n}).requires_grad_();
    jfn(x).backward(at::ones({n, n}));
    bool mask_saved = false;
    for (const TensorInfo& s : last_saved_for_backward(jfn))
      mask_saved = mask_saved || (s.dtype == at::kBool && s.shape == std::vector<int64_t>{n, n});
    return mask_saved;
  };
  EXPECT_FALSE(run());  // default: seed and offset saved, the mask recomputed
  EXPECT_FALSE(run());
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_EQ(cache_hits(jfn), 1);
  {
    auto g = scoped_add_tags("ltorch.dropout", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
    EXPECT_TRUE(run());  // recompiled under the new policy: the mask is saved
    EXPECT_EQ(cache_misses(jfn), 2);
    EXPECT_TRUE(run());  // nothing changed since: reused
    EXPECT_EQ(cache_misses(jfn), 2);
    EXPECT_EQ(cache_hits(jfn), 2);
  }
  EXPECT_FALSE(run());  // the restore is a change too
  EXPECT_EQ(cache_misses(jfn), 3);
  EXPECT_FALSE(run());
  EXPECT_EQ(cache_misses(jfn), 3);
  EXPECT_EQ(cache_hits(jfn), 3);
}

TEST(RegistryScopes, CacheEntryIsNotReusedAfterAGradRuleReplacement) {
  auto jfn = jit([](const Tensor& x) { return x.sin(); });
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 1.0);
  EXPECT_EQ(cache_misses(jfn), 1);
  auto rule = scoped_register_grad("ltorch.sin", scaled_sin_rule(4.0));
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 4.0);
  EXPECT_EQ(cache_misses(jfn), 2);
  EXPECT_DOUBLE_EQ(sin_grad_factor(jfn), 4.0);
  EXPECT_EQ(cache_misses(jfn), 2);
  EXPECT_EQ(cache_hits(jfn), 2);
}

}  // namespace
}  // namespace thunder
