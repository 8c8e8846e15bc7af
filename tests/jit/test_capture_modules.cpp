// thunder::jit on torch::nn modules as users write them (TORCH_MODULE
// holders and std::shared_ptr<Impl>), against the same module run eagerly:
// values, float64 training with torch::optim::AdamW, train()/eval() as
// separate cache entries, examine.
#include <gtest/gtest.h>
#include <thunder/thunder.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <filesystem>

#include "torch_twins.h"

namespace thunder {
namespace {

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t in, int64_t hidden, double p)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        drop(register_module("drop", torch::nn::Dropout(p))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, in))) {}
  at::Tensor forward(const at::Tensor& x) { return x + fc2(drop(torch::gelu(norm(fc1(x))))); }
  torch::nn::Linear fc1;
  torch::nn::LayerNorm norm;
  torch::nn::Dropout drop;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Block);

using test::copy_parameters;
using test::expect_same_parameters;

TEST(CaptureModules, TorchModuleTrainsWithAdamWLikeEager) {
  torch::manual_seed(0);
  Block eager(6, 16, 0.0), jitted(6, 16, 0.0);
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  torch::optim::AdamW opt_e(eager->parameters(), torch::optim::AdamWOptions(1e-2));
  torch::optim::AdamW opt_j(jitted->parameters(), torch::optim::AdamWOptions(1e-2));
  at::Tensor x = torch::randn({4, 6}, torch::kDouble), t = torch::randn({4, 6}, torch::kDouble);
  for (int step = 0; step < 5; ++step) {
    opt_e.zero_grad();
    at::Tensor le = (eager(x) - t).pow(2).mean();
    le.backward();
    opt_e.step();
    opt_j.zero_grad();
    at::Tensor lj = (jm(x) - t).pow(2).mean();
    EXPECT_TRUE(at::allclose(lj, le, 1e-12, 1e-12)) << step << ": " << lj << " vs " << le;
    lj.backward();
    opt_j.step();
  }
  expect_same_parameters(*eager, *jitted, 1e-10);
  EXPECT_EQ(cache_misses(jm), 1);
  EXPECT_EQ(cache_hits(jm), 4);
  // Parameters are the trace's inputs, named by their path in the module.
  const std::string first = last_traces(jm).front().str();
  for (const char* name : {"t_fc1_weight", "t_norm_bias", "t_fc2_bias"})
    EXPECT_NE(first.find(name), std::string::npos) << name << "\n" << first;
  EXPECT_GT(compile_stats(jm).fusion_regions, 0);
}

// Buffers updated in place by forward (a running mean and a step count under
// NoGradGuard, as batch norm keeps them): after each training step the
// jitted module's buffers and parameters equal the eager module's.
struct RunningStatsImpl : torch::nn::Module {
  RunningStatsImpl()
      : fc(register_module("fc", torch::nn::Linear(3, 2))),
        running(register_buffer("running", torch::zeros({2}, torch::kDouble))),
        steps(register_buffer("steps", torch::zeros({}, torch::kLong))) {}
  at::Tensor forward(const at::Tensor& x) {
    at::Tensor y = fc(x);
    {
      torch::NoGradGuard no_grad;
      running.mul_(0.9).add_(y.mean(0), 0.1);
      steps.add_(1);
    }
    return torch::tanh(y) * 2;
  }
  torch::nn::Linear fc;
  at::Tensor running, steps;
};
TORCH_MODULE(RunningStats);

TEST(CaptureModules, BuffersUpdatedInPlaceMatchEager) {
  torch::manual_seed(4);
  RunningStats eager, jitted;
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  torch::optim::SGD opt_e(eager->parameters(), 0.1), opt_j(jitted->parameters(), 0.1);
  at::Tensor x = torch::randn({4, 3}, torch::kDouble);
  for (int step = 0; step < 3; ++step) {
    opt_e.zero_grad();
    eager(x).sum().backward();
    opt_e.step();
    opt_j.zero_grad();
    jm(x).sum().backward();
    opt_j.step();
    EXPECT_TRUE(at::allclose(jitted->running, eager->running, 1e-12, 1e-12))
        << step << ": " << jitted->running << " vs " << eager->running;
    EXPECT_EQ(jitted->steps.item<int64_t>(), step + 1);
    EXPECT_TRUE(at::allclose(jitted->fc->weight, eager->fc->weight, 1e-12, 1e-12)) << step;
  }
  EXPECT_EQ(cache_misses(jm), 1);
}

// torch::nn::BatchNorm1d as users write it: in training, its output uses
// the batch's statistics and forward updates running_mean, running_var (in
// aten::batch_norm, with no alias annotation) and num_batches_tracked; in
// eval it reads the running statistics. Float64 against the eager twin.
struct NormedImpl : torch::nn::Module {
  NormedImpl()
      : fc1(register_module("fc1", torch::nn::Linear(4, 6))),
        bn(register_module("bn", torch::nn::BatchNorm1d(6))),
        fc2(register_module("fc2", torch::nn::Linear(6, 2))) {}
  at::Tensor forward(const at::Tensor& x) { return fc2(torch::tanh(bn(fc1(x)))); }
  torch::nn::Linear fc1;
  torch::nn::BatchNorm1d bn;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Normed);

TEST(CaptureModules, BatchNormTrainsAndUpdatesRunningStatsLikeEager) {
  torch::manual_seed(5);
  Normed eager, jitted;
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  torch::optim::SGD opt_e(eager->parameters(), 0.1), opt_j(jitted->parameters(), 0.1);
  for (int step = 0; step < 3; ++step) {
    at::Tensor x = torch::randn({8, 4}, torch::kDouble) * 2 + 1;
    opt_e.zero_grad();
    at::Tensor ye = eager(x);
    (ye * ye).sum().backward();
    opt_j.zero_grad();
    at::Tensor yj = jm(x);
    (yj * yj).sum().backward();
    EXPECT_TRUE(at::allclose(yj, ye, 1e-10, 1e-12)) << step;
    EXPECT_TRUE(at::allclose(jitted->bn->weight.grad(), eager->bn->weight.grad(), 1e-10, 1e-12));
    EXPECT_TRUE(at::allclose(jitted->bn->bias.grad(), eager->bn->bias.grad(), 1e-10, 1e-12));
    EXPECT_TRUE(at::allclose(jitted->fc1->weight.grad(), eager->fc1->weight.grad(), 1e-10, 1e-12))
        << step;
    opt_e.step();
    opt_j.step();
    EXPECT_TRUE(at::allclose(jitted->bn->running_mean, eager->bn->running_mean, 1e-12, 1e-12))
        << step << ": " << jitted->bn->running_mean << " vs " << eager->bn->running_mean;
    EXPECT_TRUE(at::allclose(jitted->bn->running_var, eager->bn->running_var, 1e-12, 1e-12))
        << step << ": " << jitted->bn->running_var << " vs " << eager->bn->running_var;
    EXPECT_EQ(jitted->bn->num_batches_tracked.item<int64_t>(), step + 1);
  }
  EXPECT_EQ(cache_misses(jm), 1);
  const std::string trace = last_traces(jm).front().str();
  EXPECT_NE(trace.find("ltorch.batch_norm("), std::string::npos) << trace;
  EXPECT_NE(trace.find("copy_("), std::string::npos) << trace;

  // Eval: the running statistics normalize, and nothing is written.
  eager->eval();
  jitted->eval();
  at::Tensor x = torch::randn({5, 4}, torch::kDouble);
  const at::Tensor mean_before = jitted->bn->running_mean.clone();
  EXPECT_TRUE(at::allclose(jm(x), eager(x), 1e-10, 1e-12));
  EXPECT_TRUE(at::equal(jitted->bn->running_mean, mean_before));
  EXPECT_EQ(jitted->bn->num_batches_tracked.item<int64_t>(), 3);
  EXPECT_EQ(cache_misses(jm), 2);
}

// momentum None (a cumulative average) divides by num_batches_tracked's
// value, read with item(): refused naming aten::item, the buffers as they were.
TEST(CaptureModules, BatchNormWithCumulativeAverageIsRefused) {
  torch::nn::BatchNorm1d bn(torch::nn::BatchNormOptions(3).momentum(c10::nullopt));
  auto jm = jit(bn);
  at::Tensor x = torch::randn({4, 3});
  try {
    jm(x);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("aten::item"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(at::equal(bn->running_mean, torch::zeros({3})));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
}

TEST(CaptureModules, SharedPtrToImplAndTrainEvalAreSeparateEntries) {
  torch::manual_seed(1);
  auto model = std::make_shared<BlockImpl>(5, 8, 0.5);
  auto jm = jit(model);
  at::Tensor x = torch::randn({3, 5});
  model->eval();
  EXPECT_TRUE(at::allclose(jm(x), model->forward(x), 1e-5, 1e-6));
  model->train();
  at::Tensor dropped = jm(x);  // dropout on: a different program
  EXPECT_FALSE(at::allclose(dropped, model->forward(x).detach()));  // masks differ; p = 0.5
  model->eval();
  EXPECT_TRUE(at::allclose(jm(x), model->forward(x), 1e-5, 1e-6));
  EXPECT_EQ(cache_misses(jm), 2);
  EXPECT_EQ(cache_hits(jm), 1);
  const std::string guards = last_prologue_trace(jm).str();
  EXPECT_NE(guards.find("prologue.check_module_training"), std::string::npos) << guards;
}

TEST(CaptureModules, ExamineAModule) {
  Block model(4, 4, 0.0);
  ExamineReport r = examine(model, torch::randn({2, 4}));
  EXPECT_TRUE(r.all_supported()) << r;
  EXPECT_NE(r.str().find("aten::addmm"), std::string::npos) << r;  // the C++ frontend's linear
  EXPECT_NE(r.str().find("aten::layer_norm"), std::string::npos) << r;
}

// A TorchScript module made in C++, saved and loaded as a user's model.pt
// would be: values and the parameter's gradient equal eager TorchScript's.
TEST(CaptureModules, TorchScriptModuleFromAFile) {
  torch::manual_seed(2);
  torch::jit::Module made("Scaled");
  made.register_attribute("training", c10::BoolType::get(), true);  // as Python's modules have
  made.register_parameter("w", torch::randn({4, 3}, torch::kDouble).requires_grad_(),
                          /*is_buffer=*/false);
  made.define(R"(
def forward(self, x):
    return torch.tanh(torch.matmul(x, self.w)) * 2.0 + x.sum(1, keepdim=True)
)");
  const std::string path =
      (std::filesystem::temp_directory_path() / "thunder_capture_script.pt").string();
  made.save(path);
  torch::jit::Module eager = torch::jit::load(path), loaded = torch::jit::load(path);
  auto js = jit(loaded);
  at::Tensor x = torch::randn({5, 4}, torch::kDouble);
  at::Tensor want = eager.forward({x}).toTensor();
  at::Tensor got = js(x);
  EXPECT_TRUE(at::allclose(got, want, 1e-12, 1e-12));
  want.sum().backward();
  got.sum().backward();
  at::Tensor gw = loaded.attr("w").toTensor().grad(), ew = eager.attr("w").toTensor().grad();
  ASSERT_TRUE(gw.defined());
  EXPECT_TRUE(at::allclose(gw, ew, 1e-12, 1e-12));
  js(x);
  EXPECT_EQ(cache_hits(js), 1);
  EXPECT_NE(last_traces(js).front().str().find("ltorch.tanh"), std::string::npos)
      << last_traces(js).front();
  EXPECT_NE(last_traces(js).front().str().find("t_w"), std::string::npos)
      << last_traces(js).front();
  loaded.eval();
  js(x);
  EXPECT_EQ(cache_misses(js), 2);  // the training flag is guarded
  std::filesystem::remove(path);
}

// Replacing a TorchScript module's parameter (a new tensor object in its
// slot, as setattr does) compiles a new entry that reads the new tensor; an
// in-place update of the same tensor does not recompile.
TEST(CaptureModules, ReplacingATorchScriptParameterRecompiles) {
  torch::jit::Module m("Affine");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("w", torch::ones({3}, torch::kDouble), /*is_buffer=*/false);
  m.define(R"(
def forward(self, x):
    return x * self.w + 1.0
)");
  auto js = jit(m);
  at::Tensor x = torch::arange(3, torch::kDouble);
  EXPECT_TRUE(at::allclose(js(x), x + 1));
  {
    torch::NoGradGuard no_grad;
    m.attr("w").toTensor().mul_(2);
  }
  EXPECT_TRUE(at::allclose(js(x), x * 2 + 1));
  EXPECT_EQ(cache_misses(js), 1);
  m.register_parameter("w", torch::full({3}, 5.0, torch::kDouble), /*is_buffer=*/false);
  EXPECT_TRUE(at::allclose(js(x), x * 5 + 1)) << js(x);
  EXPECT_EQ(cache_misses(js), 2);
  js(x);
  EXPECT_EQ(cache_hits(js), 2);
  EXPECT_NE(last_prologue_trace(js).str().find("prologue.check_module_identities()"),
            std::string::npos)
      << last_prologue_trace(js);
}

// torch::nn::Sequential's forward is a template that takes any argument; jit
// still captures it (it used to try it on thunder::Tensor and fail inside
// AnyModule). Values, and SGD steps equal to eager's.
TEST(CaptureModules, SequentialIsCapturedAndTrainsLikeEager) {
  torch::manual_seed(6);
  torch::nn::Sequential eager(torch::nn::Linear(6, 8), torch::nn::GELU(), torch::nn::Linear(8, 2));
  torch::nn::Sequential jitted(torch::nn::Linear(6, 8), torch::nn::GELU(), torch::nn::Linear(8, 2));
  eager->to(torch::kDouble);
  jitted->to(torch::kDouble);
  copy_parameters(*eager, *jitted);
  auto jm = jit(jitted);
  torch::optim::SGD opt_e(eager->parameters(), 0.1), opt_j(jitted->parameters(), 0.1);
  for (int step = 0; step < 3; ++step) {
    at::Tensor x = torch::randn({5, 6}, torch::kDouble);
    opt_e.zero_grad();
    opt_j.zero_grad();
    at::Tensor le = eager->forward(x).pow(2).mean(), lj = jm(x).pow(2).mean();
    EXPECT_TRUE(at::allclose(lj, le, 1e-12, 1e-12)) << step;
    le.backward();
    lj.backward();
    opt_e.step();
    opt_j.step();
  }
  expect_same_parameters(*eager, *jitted, 1e-12);
  EXPECT_EQ(cache_misses(jm), 1);
  EXPECT_NE(last_traces(jm).front().str().find("t_0_weight"), std::string::npos)
      << last_traces(jm).front();
}

// A torch::nn module's registered tensors and submodules are guarded by
// identity (read without allocating): replace_module, or a parameter
// registered after jit, compiles a new entry that reads the new tensors; an
// optimizer's in-place step does not.
struct TwoLayerImpl : torch::nn::Module {
  TwoLayerImpl()
      : fc1(register_module("fc1", torch::nn::Linear(3, 4))),
        fc2(register_module("fc2", torch::nn::Linear(4, 2))) {}
  at::Tensor forward(const at::Tensor& x) { return fc2(torch::tanh(fc1(x))); }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(TwoLayer);

TEST(CaptureModules, ReplacingATorchNnSubmoduleRecompiles) {
  torch::manual_seed(5);
  TwoLayer model;
  auto jm = jit(model);
  at::Tensor x = torch::randn({5, 3});
  EXPECT_TRUE(at::allclose(jm(x), model(x)));
  {
    torch::NoGradGuard no_grad;
    model->fc1->weight.mul_(2);
  }
  EXPECT_TRUE(at::allclose(jm(x), model(x)));
  EXPECT_EQ(cache_misses(jm), 1);
  model->fc2 = model->replace_module("fc2", torch::nn::Linear(4, 2));
  EXPECT_TRUE(at::allclose(jm(x), model(x)));
  EXPECT_EQ(cache_misses(jm), 2);
  model->fc1->register_parameter("scale", torch::ones({1}));
  jm(x);
  EXPECT_EQ(cache_misses(jm), 3);
  jm(x);
  EXPECT_EQ(cache_hits(jm), 2);
  EXPECT_NE(last_prologue_trace(jm).str().find("prologue.check_module_identities()"),
            std::string::npos)
      << last_prologue_trace(jm);
}

// A torch::autograd::Function's forward runs under no_grad and attaches its
// backward outside the dispatcher: capture cannot see it, so reading its
// result is refused (it would silently lose the gradient: x.grad 1, not 3).
struct TimesTwo : torch::autograd::Function<TimesTwo> {
  static at::Tensor forward(torch::autograd::AutogradContext*, const at::Tensor& x) {
    return x * 2;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list g) {
    return {g[0] * 2};
  }
};

TEST(CaptureModules, ATorchAutogradFunctionIsRefusedNotSilentlyWrong) {
  auto jf = jit([](const at::Tensor& x) { return TimesTwo::apply(x) + x; });
  at::Tensor x = torch::randn({3}).requires_grad_();
  try {
    jf(x);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("aten::add.Tensor"), std::string::npos) << what;
    EXPECT_NE(what.find("autograd history capture did not see"), std::string::npos) << what;
  }
  // Under no_grad nothing is lost: the same function compiles and runs.
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(at::allclose(jf(x), x * 3));
}

// libtorch's variable factories (torch::ones_like, torch::zeros) return a
// shallow copy of the tensor the dispatcher saw made: still that value in the
// trace, not a constant captured from the first run.
TEST(CaptureModules, TorchFactoriesAreTraced) {
  auto jf = jit([](const at::Tensor& x) {
    return x * torch::ones_like(x) + torch::zeros({x.size(0), 1});
  });
  at::Tensor x = torch::randn({3, 2});
  EXPECT_TRUE(at::allclose(jf(x), x));
  const std::string first = last_traces(jf).front().str();
  EXPECT_EQ(first.find("t_captured"), std::string::npos) << first;
  EXPECT_NE(first.find("ltorch.ones("), std::string::npos) << first;
}

}  // namespace
}  // namespace thunder
