// The named pass table (thunder-opt's passes) from C++: a trace read from
// text, the fusion steps run one at a time, and the lowered program run on
// real tensors against eager libtorch. Lowering refuses a region whose
// kernel the fusion_kernels step has not built yet.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/frontend/passes.h>
#include <thunder/runtime/program.h>
#include <thunder/thunder.h>

#include "thunder/core/parse_trace.h"
#include "thunder/lang/ltorch.h"

namespace thunder {
namespace {

constexpr const char* kExpTanh = R"(def computation(x):
  # x: "cpu f32[8]"
  t0 = ltorch.exp(x)  # t0: "cpu f32[8]"
    # t0 = prims.exp(x)  # t0: "cpu f32[8]"
  t1 = ltorch.tanh(t0)  # t1: "cpu f32[8]"
    # t1 = prims.tanh(t0)  # t1: "cpu f32[8]"
  return t1
)";

// The text names ltorch symbols: registered before it is read (parse_trace.h).
Trace parse(const char* text) {
  ltorch::ensure_registered();
  return parse_trace(text);
}

Trace run_passes(Trace t, const std::vector<std::string>& names) {
  std::vector<Trace> traces = {std::move(t)};
  for (const std::string& name : names) traces = find_pass(name).run(traces, PassOptions{});
  return traces.back();
}

Program lower(const Trace& t) {
  return Program::lower(t, {{Program::Input::Source::ArgTensor, 0}},
                        {&executor_by_name("dnnl"), &executor_by_name("cpu_fuser"),
                         &executor_by_name("aten")});  // PassOptions' default list
}

int regions(const Trace& t) {
  int n = 0;
  for (const BoundSymbol& b : t.bsyms) n += b.sym->is_region;
  return n;
}

TEST(NamedPasses, LoweringARegionWithoutItsKernelIsAnError) {
  const Trace formed = run_passes(parse(kExpTanh), {"claim", "flatten", "form_regions"});
  ASSERT_EQ(regions(formed), 1) << formed;
  try {
    lower(formed);
    FAIL() << "lowered a region that has no kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("region has no kernel yet"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("fusion_kernels"), std::string::npos) << e.what();
  }
}

TEST(NamedPasses, FusionStepsOneAtATimeRunLikeEager) {
  const Trace done =
      run_passes(parse(kExpTanh), {"claim", "flatten", "form_regions", "fusion_kernels"});
  ASSERT_EQ(regions(done), 1) << done;
  const Program program = lower(done);
  at::Tensor x = at::randn({8});
  FlatArg arg;
  arg.kind = FlatArg::Kind::Tensor;
  arg.tensor = x;
  std::vector<at::Tensor> outs;
  program.run(&arg, {}, outs);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(at::allclose(outs[0], at::tanh(at::exp(x)), 1e-6, 1e-6)) << outs[0];
}

TEST(NamedPasses, UnknownPassNamesTheKnownOnes) {
  try {
    find_pass("fuse_everything");
    FAIL() << "found a pass that does not exist";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fuse_everything"), std::string::npos) << what;
    EXPECT_NE(what.find("form_regions"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace thunder
