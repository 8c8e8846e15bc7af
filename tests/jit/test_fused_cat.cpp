// cpu_fuser's cat of 1-D values computed in fusion (a gradient bucket's
// pack): one region writes the whole output, piece by piece, with the same
// values as eager libtorch, generated or on the ATen fallback.
#include <gtest/gtest.h>
#include <thunder/executors/cpu_fuser.h>
#include <thunder/thunder.h>

#include <cstdlib>

namespace thunder {
namespace {

JitOptions fused() { return {.executors = {"cpu_fuser", "aten"}}; }

// Pieces: a reshape of a computed 2-D value, an elementwise 1-D value, a
// reduction result, and a one-element value.
Tensor pack(const Tensor& a, const Tensor& b, const Tensor& c) {
  return cat({(a / 3.0).reshape({-1}), b * 2.0, (c * c).sum(-1), (b.sum() / 3.0).reshape({1})}, 0);
}
at::Tensor eager_pack(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  return at::cat({(a / 3.0).reshape({-1}), b * 2.0, (c * c).sum(-1), (b.sum() / 3.0).reshape({1})},
                 0);
}

void check_pack() {
  at::manual_seed(0);
  at::Tensor a = at::randn({3, 4}, at::kDouble), b = at::randn({5}, at::kDouble),
             c = at::randn({2, 7}, at::kDouble);
  auto jfn = jit(&pack, fused());
  at::Tensor got = jfn(a, b, c).aten(), want = eager_pack(a, b, c);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got, want, 1e-12, 1e-12)) << got << want;
  // The scaled and doubled pieces are exact: bitwise eager's.
  EXPECT_TRUE(at::equal(got.narrow(0, 0, 17), want.narrow(0, 0, 17)));
  const Trace last = last_traces(jfn).back();
  int regions = 0;
  for (const BoundSymbol& s : last.bsyms) {
    regions += s.sym->is_region;
    EXPECT_EQ(s.sym->id.find("cat"), std::string::npos) << "cat outside a region:\n" << last;
  }
  EXPECT_EQ(regions, 1) << last;
}

TEST(FusedCat, PackOfComputedPiecesIsOneRegion) { check_pack(); }

TEST(FusedCat, PackOnTheAtenFallback) {
  setenv("THUNDER_DISABLE_CODEGEN", "1", 1);
  reset_cpu_fuser_stats();
  check_pack();
  EXPECT_EQ(cpu_fuser_stats().fallback_regions, 1);
  unsetenv("THUNDER_DISABLE_CODEGEN");
}

}  // namespace
}  // namespace thunder
