// Fusion region formation on hand-built traces: both strategies, no cycles
// through unfused statements, no region across the forward/backward
// boundary, deterministic printing.
#include <gtest/gtest.h>

#include <memory>

#include "test_symbols.h"
#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/fusion_regions.h"
#include "thunder/transforms/rematerialize_regions.h"

namespace thunder {
namespace {

// Region symbols named like cpu_fuser's, owned by the traces.
std::shared_ptr<const Symbol> region_symbol(int k, const BoundSymbol&) {
  auto s = std::make_shared<Symbol>();
  s->id = "cppFusion" + std::to_string(k);
  s->is_region = true;
  return s;
}

// Everything but test.show is fusible.
std::vector<bool> fusible_of(const Trace& t) {
  std::vector<bool> f;
  for (const BoundSymbol& b : t.bsyms) f.push_back(b.sym->id != "test.show");
  return f;
}

Trace fuse(const Trace& t, FusionStrategy s) {
  return form_fusion_regions(t, fusible_of(t), s, 0, region_symbol);
}

// x -> a = x * 2 -> b = exp(a) -> show(b); d = a + 1 -> e = -d: the unfused
// show splits the consecutive run, while dataflow joins both sides.
Trace split_by_barrier() {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
  Value a = prims::mul(x, 2.0);
  Value b = prims::exp(a);
  Value c = testing::show({b});
  Value d = prims::add(a, 1.0);
  Value e = prims::neg(d);
  t.output = Value(std::vector<Value>{c, e});
  return t;
}

TEST(FusionRegions, ConsecutiveRunsStopAtUnfusedStatements) {
  Trace t = split_by_barrier();
  EXPECT_EQ(fuse(t, FusionStrategy::Consecutive).str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  [t0, t1] = cppFusion0(x)  # t0: \"cpu f32[2]\", t1: \"cpu f32[2]\"\n"
            "    # t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[2]\"\n"
            "    # t1 = prims.exp(t0)  # t1: \"cpu f32[2]\"\n"
            "  t2 = test.show(t1)  # t2: \"cpu f32[2]\"\n"
            "  [t4] = cppFusion1(t0)  # t4: \"cpu f32[2]\"\n"
            "    # t3 = prims.add(t0, 1.0)  # t3: \"cpu f32[2]\"\n"
            "    # t4 = prims.neg(t3)  # t4: \"cpu f32[2]\"\n"
            "  return [t2, t4]\n");
}

TEST(FusionRegions, DataflowMergesAcrossUnrelatedStatements) {
  Trace t = split_by_barrier();
  Trace f = fuse(t, FusionStrategy::Dataflow);
  EXPECT_EQ(f.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  [t1, t4] = cppFusion0(x)  # t1: \"cpu f32[2]\", t4: \"cpu f32[2]\"\n"
            "    # t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[2]\"\n"
            "    # t1 = prims.exp(t0)  # t1: \"cpu f32[2]\"\n"
            "    # t3 = prims.add(t0, 1.0)  # t3: \"cpu f32[2]\"\n"
            "    # t4 = prims.neg(t3)  # t4: \"cpu f32[2]\"\n"
            "  t2 = test.show(t1)  # t2: \"cpu f32[2]\"\n"
            "  return [t2, t4]\n");
  // Deterministic: the same input prints the same program.
  EXPECT_EQ(fuse(t, FusionStrategy::Dataflow).str(), f.str());
}

TEST(FusionRegions, DataflowRefusesCyclesThroughUnfusedStatements) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value a = prims::mul(x, 2.0);
    Value b = testing::show({a});  // a -> show -> c: a and c cannot share a region
    Value c = prims::add(a, b);
    t.output = c;
  }
  for (auto strategy : {FusionStrategy::Consecutive, FusionStrategy::Dataflow}) {
    auto groups = fusion_groups(t.bsyms, fusible_of(t), strategy);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0], std::vector<size_t>{0});
    EXPECT_EQ(groups[1], std::vector<size_t>{2});
    Trace f = fuse(t, strategy);
    ASSERT_EQ(f.bsyms.size(), 3u);
    EXPECT_EQ(f.bsyms[0].sym->id, "cppFusion0");
    EXPECT_EQ(f.bsyms[1].sym->id, "test.show");
    EXPECT_EQ(f.bsyms[2].sym->id, "cppFusion1");
  }
}

TEST(FusionRegions, NeverCrossTheBackwardBoundary) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value a = prims::mul(x, 2.0);
    Value b = prims::neg(a);
    Value c = prims::exp(x);
    t.output = Value(std::vector<Value>{b, c});
  }
  t.bsyms[1].tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
  for (auto strategy : {FusionStrategy::Consecutive, FusionStrategy::Dataflow}) {
    Trace f = fuse(t, strategy);
    for (const BoundSymbol& r : f.bsyms) {
      bool fwd = false, bwd = false;
      for (const BoundSymbol& s : r.subsymbols) (s.has_tag(StmtTag::BACKWARD) ? bwd : fwd) = true;
      EXPECT_FALSE(fwd && bwd) << f;
      EXPECT_EQ(r.has_tag(StmtTag::BACKWARD), bwd) << f;
    }
    // The forward statements mul and exp are independent: dataflow merges them.
    EXPECT_EQ(f.bsyms.size(), strategy == FusionStrategy::Dataflow ? 2u : 3u) << f;
  }
}

TEST(FusionRegions, DataflowMergesIndependentGroupsHorizontally) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    ProxyPtr y = s.ctx().add_tensor_input("y", {2}, DType::f32, Device::cpu(), false);
    Value a = prims::exp(x);
    Value b = testing::show({x});
    Value c = prims::sin(y);
    t.output = Value(std::vector<Value>{a, b, c});
  }
  EXPECT_EQ(fusion_groups(t.bsyms, fusible_of(t), FusionStrategy::Consecutive).size(), 2u);
  auto groups = fusion_groups(t.bsyms, fusible_of(t), FusionStrategy::Dataflow);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{0, 2}));
}

// A group that feeds a collective is not merged with one that reads a later
// statement: the merged region would run after it and hold the
// communication back (a gradient bucket waiting for the next matmul).
TEST(FusionRegions, HorizontalMergingDoesNotHoldBackACollective) {
  for (bool late_input : {true, false}) {
    Trace t;
    {
      TracingScope s(t);
      ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
      ProxyPtr y = s.ctx().add_tensor_input("y", {2}, DType::f32, Device::cpu(), false);
      Value a = prims::exp(x);                   // 0: the bucket's scaling
      Value m = testing::show({y});              // 1: unfused, like a matmul
      Value c = prims::sin(late_input ? m : y);  // 2
      Value f = prims::all_reduce(a, "sum", 0);  // 3
      Value w = prims::wait(f);                  // 4
      t.output = Value(std::vector<Value>{w, c});
    }
    std::vector<bool> fusible = {true, false, true, false, false};
    auto groups = fusion_groups(t.bsyms, fusible, FusionStrategy::Dataflow);
    if (late_input) {
      ASSERT_EQ(groups.size(), 2u) << t;
      EXPECT_EQ(groups[0], std::vector<size_t>{0});
      EXPECT_EQ(groups[1], std::vector<size_t>{2});
    } else {  // both ready at the start: merging delays nothing
      ASSERT_EQ(groups.size(), 1u) << t;
      EXPECT_EQ(groups[0], (std::vector<size_t>{0, 2}));
    }
  }
}

TEST(FusionRegions, DeclinedRegionsKeepTheirStatements) {
  Trace t = split_by_barrier();
  Trace f = form_fusion_regions(
      t, fusible_of(t), FusionStrategy::Consecutive, 0,
      [](int, const BoundSymbol&) -> std::shared_ptr<const Symbol> { return nullptr; });
  EXPECT_EQ(f.str(), t.str());
}

}  // namespace
}  // namespace thunder

namespace thunder {
namespace {

// Rematerialization between regions: the consecutive split of
// split_by_barrier() leaves region 1 reading t0 = x * 2 from region 0;
// recomputing it from x saves region 0's write of t0 and is no more reading.
TEST(FusionRegions, ConsumerRecomputesCheapProducerValue) {
  Trace t = split_by_barrier();
  Trace f = rematerialize_regions(fuse(t, FusionStrategy::Consecutive));
  EXPECT_EQ(f.str(),
            "def computation(x):\n"
            "  # x: \"cpu f32[2]\"\n"
            "  [t1] = cppFusion0(x)  # t1: \"cpu f32[2]\"\n"
            "    # t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[2]\"\n"
            "    # t1 = prims.exp(t0)  # t1: \"cpu f32[2]\"\n"
            "  t2 = test.show(t1)  # t2: \"cpu f32[2]\"\n"
            "  [t4] = cppFusion1(x)  # t4: \"cpu f32[2]\"\n"
            "    # t0 = prims.mul(x, 2.0)  # t0: \"cpu f32[2]\"\n"
            "    # t3 = prims.add(t0, 1.0)  # t3: \"cpu f32[2]\"\n"
            "    # t4 = prims.neg(t3)  # t4: \"cpu f32[2]\"\n"
            "  return [t2, t4]\n");
}

// A value the program returns stays written; reading x instead of it would
// add bytes, so the consumer keeps reading it.
TEST(FusionRegions, ReturnedProducerValueIsNotRecomputed) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {2}, DType::f32, Device::cpu(), false);
    Value a = prims::mul(x, 2.0);
    Value b = testing::show({a});
    Value c = prims::add(a, b);
    t.output = Value(std::vector<Value>{a, c});
  }
  Trace plain = fuse(t, FusionStrategy::Dataflow);
  Trace f = rematerialize_regions(plain);
  EXPECT_EQ(f.str(), plain.str());
}

}  // namespace
}  // namespace thunder
