// Rematerialization between fusion regions: a consumer region on the far
// side of a matmul recomputes a cheap producer value from the producer's
// inputs instead of reading it back, when that moves fewer bytes; results and
// gradients equal eager libtorch.
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

JitOptions fused() { return {.executors = {"cpu_fuser", "aten"}, .fusion_type = "dataflow"}; }

std::vector<const BoundSymbol*> regions(const Trace& t) {
  std::vector<const BoundSymbol*> out;
  for (const BoundSymbol& b : t.bsyms)
    if (b.sym->is_region) out.push_back(&b);
  return out;
}

bool reads(const BoundSymbol& b, const std::string& name) {
  for (const ProxyPtr& p : b.flat_args())
    if (p->name == name) return true;
  return false;
}

bool computes(const BoundSymbol& region, const std::string& prim) {
  for (const BoundSymbol& s : region.subsymbols)
    if (s.sym->id == prim) return true;
  return false;
}

// y = sin(x) * b (b broadcast) feeds the matmul (as y * 2) and the add after
// it: the region of sin and mul cannot take the add (that would be a cycle
// through the matmul), so without rematerialization it writes y for the add.
Tensor producer_consumer(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor y = sin(x) * b;
  return matmul(y * 2.0, w) + y;
}
at::Tensor producer_consumer_ref(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  at::Tensor y = at::sin(x) * b;
  return at::matmul(y * 2.0, w) + y;
}

TEST(RegionRemat, ConsumerRecomputesProducerValueAcrossMatmul) {
  at::Tensor x = at::randn({64, 32}), w = at::randn({32, 32}), b = at::randn({32});
  auto jfn = jit(producer_consumer, fused());
  at::Tensor got = jfn(x, w, b).aten();
  EXPECT_TRUE(at::allclose(got, producer_consumer_ref(x, w, b), 1e-5, 1e-5));
  Trace last = last_traces(jfn).back();
  std::vector<const BoundSymbol*> rs = regions(last);
  ASSERT_EQ(rs.size(), 2u) << last;
  // The producer writes only the matmul's operand (y * 2), not y.
  EXPECT_EQ(rs[0]->flat_outputs().size(), 1u) << last;
  // The consumer reads x and b (64x32 + 32 floats) instead of y (64x32)
  // written and read back, and computes sin itself.
  EXPECT_TRUE(reads(*rs[1], "x0")) << last;
  EXPECT_TRUE(reads(*rs[1], "x2")) << last;
  EXPECT_TRUE(computes(*rs[1], "prims.sin")) << last;
  EXPECT_EQ(rs[1]->flat_args().size(), 3u) << last;  // x, b and the matmul's result
}

TEST(RegionRemat, GradientsMatchLibtorch) {
  at::Tensor x = at::randn({16, 8}, at::kDouble), w = at::randn({8, 8}, at::kDouble),
             b = at::randn({8}, at::kDouble);
  at::Tensor xr = x.clone().requires_grad_(), wr = w.clone().requires_grad_();
  producer_consumer_ref(xr, wr, b).sum().backward();
  at::Tensor xj = x.clone().requires_grad_(), wj = w.clone().requires_grad_();
  auto jfn = jit(producer_consumer, fused());
  at::Tensor out = jfn(xj, wj, b).aten();
  EXPECT_TRUE(at::allclose(out, producer_consumer_ref(x, w, b), 1e-12, 1e-12));
  out.sum().backward();
  EXPECT_TRUE(at::allclose(xj.grad(), xr.grad(), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(wj.grad(), wr.grad(), 1e-12, 1e-12));
}

// A value computed from a reduction is not recomputed: the consumer reads it.
TEST(RegionRemat, ReductionsStayInTheProducer) {
  auto fn = [](const Tensor& x, const Tensor& w) {
    Tensor y = x - x.sum({1}, true);
    return matmul(y * 2.0, w) + y;
  };
  at::Tensor x = at::randn({16, 8}), w = at::randn({8, 8});
  auto jfn = jit(fn, fused());
  at::Tensor y = x - x.sum({1}, true);
  EXPECT_TRUE(at::allclose(jfn(x, w).aten(), at::matmul(y * 2.0, w) + y, 1e-5, 1e-5));
  Trace last = last_traces(jfn).back();
  std::vector<const BoundSymbol*> rs = regions(last);
  ASSERT_EQ(rs.size(), 2u) << last;
  EXPECT_EQ(rs[0]->flat_outputs().size(), 2u) << last;
  EXPECT_FALSE(computes(*rs[1], "prims.sum")) << last;
}

// Without a matmul between them the regions are one: nothing to recompute.
TEST(RegionRemat, SingleRegionUnchanged) {
  auto fn = [](const Tensor& x) { return sin(x) * 2.0 + sin(x); };
  auto jfn = jit(fn, fused());
  at::Tensor x = at::randn({8});
  EXPECT_TRUE(at::allclose(jfn(x).aten(), at::sin(x) * 2.0 + at::sin(x)));
  Trace last = last_traces(jfn).back();
  ASSERT_EQ(regions(last).size(), 1u) << last;
  // CSE before fusion: sin(x) once.
  int sins = 0;
  for (const BoundSymbol& s : regions(last)[0]->subsymbols) sins += s.sym->id == "prims.sin";
  EXPECT_EQ(sins, 1) << last;
}

}  // namespace
}  // namespace thunder
