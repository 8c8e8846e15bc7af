// The pipeline on its own: a trace made by hand goes through run_pipeline
// with an executor the pipeline has never heard of, whose fusion passes are
// recorded like cpu_fuser's.
#include <gtest/gtest.h>
#include <thunder/core/tracing.h>
#include <thunder/prims/prims.h>
#include <thunder/thunder.h>
#include <thunder/transforms/fusion_regions.h>

namespace thunder {
namespace {

// Fuses prims.mul and prims.add into "pairFusionN" regions (it never runs them).
class PairFuser : public Executor {
 public:
  std::string_view name() const override { return "pair_fuser"; }
  bool can_claim(const BoundSymbol& b) const override {
    static const Symbol& mul = prims::symbol("prims.mul");
    static const Symbol& add = prims::symbol("prims.add");
    return b.sym == &mul || b.sym == &add;
  }
  Kernel kernel(const BoundSymbol&) const override { return nullptr; }
  std::vector<FusionPass> fusion_passes() const override {
    return {{"Pair regions", "pair_regions", [](const Trace& t, const FusionContext& c) {
               std::vector<bool> fusible;
               for (const BoundSymbol& b : t.bsyms) fusible.push_back(b.executor == c.self);
               return form_fusion_regions(
                   t, fusible, c.strategy, c.self,
                   [](int k, const BoundSymbol&) -> std::shared_ptr<const Symbol> {
                     auto s = std::make_shared<Symbol>();
                     s->id = "pairFusion" + std::to_string(k);
                     s->is_region = true;
                     return s;
                   });
             }}};
  }
};

Trace mul_add_exp() {
  Trace t;
  TracingScope s(t);
  ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f32, Device::cpu(), false);
  t.output = prims::exp(prims::add(prims::mul(x, 2.0), 1.0));
  return t;
}

TEST(Pipeline, RunsAnExecutorsFusionPassesWithoutKnowingIt) {
  PairFuser pair;
  PipelineOptions o;
  o.executors = {&pair, &executor_by_name("aten")};
  CompiledTraces out = run_pipeline(mul_add_exp(), o);
  std::vector<std::string> names;
  for (const Trace& t : out.forward) names.emplace_back(stage_name(t));
  EXPECT_EQ(names,
            (std::vector<std::string>{"Tracing", "Dead Code Elimination", "Transform for execution",
                                      "Pair regions", "Delete Last Used"}));
  const Trace& fused = find_stage(out.forward, "Pair regions");
  ASSERT_EQ(fused.bsyms.size(), 2u) << fused;
  EXPECT_TRUE(fused.bsyms[0].sym->is_region);
  EXPECT_EQ(fused.bsyms[0].sym->id, "pairFusion0");
  EXPECT_EQ(fused.bsyms[0].subsymbols.size(), 2u);
  EXPECT_EQ(fused.bsyms[1].executor, 1);  // exp stays with aten
  EXPECT_EQ(out.fusion_regions, 1);
  EXPECT_FALSE(out.has_backward());
  ASSERT_EQ(out.pass_ms.size(), names.size());
  EXPECT_EQ(out.pass_ms[3].first, "Pair regions");
}

// A differentiable trace: the backward gets its own stages, and pass_ms names
// its passes with " (backward)".
TEST(Pipeline, BackwardPassesAreRecordedAndTimed) {
  Trace t;
  {
    TracingScope s(t);
    ProxyPtr x = s.ctx().add_tensor_input("x", {4}, DType::f32, Device::cpu(), true);
    t.output = prims::exp(prims::mul(x, 2.0));
  }
  PipelineOptions o;
  o.executors = {&executor_by_name("aten")};
  CompiledTraces out = run_pipeline(t, o);
  ASSERT_TRUE(out.has_backward());
  EXPECT_EQ(stage_name(out.backward.back()), "Delete Last Used");
  EXPECT_TRUE(has_stage(out.backward, "Rematerialization"));
  int backward_passes = 0;
  for (const auto& [name, ms] : out.pass_ms) backward_passes += name.ends_with(" (backward)");
  EXPECT_EQ(backward_passes, 3);  // CSE, claim, del (aten has no fusion passes)
  EXPECT_EQ(out.grad_inputs.size(), 1u);
  EXPECT_EQ(out.grad_inputs[0], t.inputs[0]);
  std::string last = out.backward.back().str();
  EXPECT_NE(last.find("# saved for backward: 16 bytes in 1 values"), std::string::npos) << last;
}

}  // namespace
}  // namespace thunder
