// Kept apart from thunder_bench.cpp: the plain-libtorch GPT needs
// <torch/torch.h>, ~20 s of compile on its own.
#include "capture_bench.h"

#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <cstdio>
#include <numeric>

#include "bench_util.h"
#include "char_gpt.h"
#include "script_char_gpt.h"
#include "torch_char_gpt.h"

namespace thunder::bench {
namespace {

constexpr int64_t kVocab = 65, kContext = 64, kBatch = 16, kDim = 128, kHeads = 4, kLayers = 2;

// The pipeline's "Tracing" stage of the last compile: tracing (thunder code)
// or capture (running the libtorch code eagerly and translating each op).
double tracing_ms(const CompileStats& s) {
  for (const auto& [name, ms] : s.pass_ms)
    if (name == "Tracing") return ms;
  return 0;
}

template <typename F>
double once_ms(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void training_step(const at::Tensor& idx, const at::Tensor& targets);

void capture_costs() {
  std::printf("\n== Capture of plain libtorch code: cache hits, us median [min, max] ==\n");
  {
    at::NoGradGuard no_grad;
    const at::Tensor x = at::randn({3});
    auto thunder_fn = jit([](const Tensor& a) { return (a * 2.0 + 1.0).sin(); });
    auto captured = jit([](const at::Tensor& a) { return at::sin(a * 2.0 + 1.0); });
    const auto t =
        interleaved_us({[&] { at::Tensor r = at::sin(x * 2.0 + 1.0); },
                        [&] { Tensor r = thunder_fn(x); }, [&] { at::Tensor r = captured(x); }},
                       20000);
    const char* names[] = {"3 ops, libtorch eager", "3 ops, thunder::Tensor fn, jit hit",
                           "3 ops, captured at::Tensor fn, jit hit"};
    for (int i = 0; i < 3; ++i)
      std::printf("%-44s %8.3f us [%.3f, %.3f]\n", names[i], t[i].median, t[i].min, t[i].max);
    std::printf("captured hit - thunder hit: %+.3f us (target: within 0.5 us)\n",
                t[2].median - t[1].median);
  }
  {
    // A module hit also reads every submodule's training flag and the
    // identities of its registered tensors and submodules (the guards).
    at::NoGradGuard no_grad;
    torch::nn::Sequential mlp(torch::nn::Linear(8, 16), torch::nn::Tanh(),
                              torch::nn::Linear(16, 8));
    const at::Tensor x = at::randn({4, 8});
    auto jm = jit(mlp);
    const auto t = interleaved_us(
        {[&] { at::Tensor r = mlp->forward(x); }, [&] { at::Tensor r = jm(x); }}, 20000);
    std::printf("%-44s %8.3f us [%.3f, %.3f]\n", "Linear-Tanh-Linear torch::nn, eager", t[0].median,
                t[0].min, t[0].max);
    std::printf("%-44s %8.3f us [%.3f, %.3f]\n", "Linear-Tanh-Linear torch::nn, jit hit",
                t[1].median, t[1].min, t[1].max);
  }

  std::printf(
      "\n== First call of the char-GPT (B%lld T%lld C%lld, %lld layers), ms ==\n"
      "%-44s %10s %14s %14s\n",
      static_cast<long long>(kBatch), static_cast<long long>(kContext),
      static_cast<long long>(kDim), static_cast<long long>(kLayers), "model", "eager fwd",
      "trace/capture", "whole 1st call");
  const at::Tensor idx = at::randint(kVocab, {kBatch, kContext}, at::kLong);
  const at::Tensor targets = at::randint(kVocab, {kBatch, kContext}, at::kLong);
  {
    at::manual_seed(1);
    models::CharGPT model(kVocab, kContext, kDim, kHeads, kLayers);
    double eager = once_ms([&] { (void)model.forward(idx, targets); });
    for (int i = 0; i < 4; ++i)
      eager = std::min(eager, once_ms([&] { (void)model.forward(idx, targets); }));
    auto jm = jit(model);
    const double first = once_ms([&] { (void)jm(idx, targets); });
    std::printf("%-44s %10.1f %14.1f %14.1f\n", "thunder::nn (traced)", eager,
                tracing_ms(compile_stats(jm)), first);
  }
  {
    at::manual_seed(1);
    models::TorchCharGPT model(kVocab, kContext, kDim, kHeads, kLayers);
    double eager = once_ms([&] { (void)model(idx, targets); });
    for (int i = 0; i < 4; ++i)
      eager = std::min(eager, once_ms([&] { (void)model(idx, targets); }));
    auto jm = jit(model);
    const double first = once_ms([&] { (void)jm(idx, targets); });
    const double capture = tracing_ms(compile_stats(jm));
    std::printf("%-44s %10.1f %14.1f %14.1f\n", "torch::nn (captured, unmodified)", eager, capture,
                first);
    std::printf("capture beyond one eager forward: %.1f ms (target: under 20 ms)\n",
                capture - eager);
  }
  {
    at::manual_seed(1);
    models::TorchCharGPT model(kVocab, kContext, kDim, kHeads, kLayers);
    torch::jit::Module scripted = models::script_char_gpt(model);
    auto run = [&] { (void)scripted.forward({idx, targets}); };
    double eager = once_ms(run);
    for (int i = 0; i < 4; ++i) eager = std::min(eager, once_ms(run));
    auto js = jit(scripted);
    const double first = once_ms([&] { (void)js(idx, targets); });
    const double translation = tracing_ms(compile_stats(js));
    std::printf("%-44s %10.1f %14.1f %14.1f\n", "TorchScript (graph interpreted)", eager,
                translation, first);
    std::printf("TorchScript translation beyond one eager forward: %.1f ms (target: under 50 ms)\n",
                translation - eager);
  }
  std::printf(
      "eager fwd: best of 5 warm runs (TorchScript's: its own interpreter); trace/capture: the\n"
      "pipeline's Tracing stage (capture runs the model once eagerly, the TorchScript graph is\n"
      "walked by our interpreter); whole 1st call adds the other passes and building kernels.\n");
  training_step(idx, targets);
}

// One training step (forward + backward, no optimizer) of the same char-GPT
// four ways: eager torch::nn, jit of the thunder::nn model, jit of the
// unmodified torch::nn model, jit of it as a TorchScript module. Captured,
// TorchScript and thunder-written should match.
void training_step(const at::Tensor& idx, const at::Tensor& targets) {
  at::manual_seed(1);
  models::CharGPT thunder_model(kVocab, kContext, kDim, kHeads, kLayers);
  at::manual_seed(1);
  models::TorchCharGPT torch_model(kVocab, kContext, kDim, kHeads, kLayers);
  auto j_thunder = jit(thunder_model);
  auto j_captured = jit(torch_model);
  torch::jit::Module scripted = models::script_char_gpt(torch_model);
  auto j_script = jit(scripted);
  std::vector<at::Tensor> thunder_params, torch_params, script_params;
  thunder_params = thunder_model.parameters();
  for (const at::Tensor& p : torch_model->parameters()) torch_params.push_back(p);
  for (const at::Tensor& p : scripted.parameters()) script_params.push_back(p);
  auto zero = [](std::vector<at::Tensor>& ps) {
    for (at::Tensor& p : ps) p.mutable_grad() = at::Tensor();
  };
  const std::function<at::Tensor()> forwards[] = {
      [&] { return torch_model(idx, targets); }, [&] { return j_thunder(idx, targets).aten(); },
      [&] { return j_captured(idx, targets); }, [&] { return j_script(idx, targets); }};
  std::vector<at::Tensor>* params[] = {&torch_params, &thunder_params, &torch_params,
                                       &script_params};
  std::vector<std::function<void()>> steps;
  for (int k = 0; k < 4; ++k)
    steps.push_back([&, k] {
      zero(*params[k]);
      forwards[k]().backward();
    });
  const auto t = interleaved_us(steps, 3, 9);
  const char* names[] = {"torch::nn, eager", "thunder::nn, jit", "torch::nn captured, jit",
                         "TorchScript, jit"};
  std::printf(
      "\n== char-GPT training step (fwd+bwd, B%lld T%lld C%lld, %lld layers), ms median "
      "[min, max] ==\n",
      static_cast<long long>(kBatch), static_cast<long long>(kContext),
      static_cast<long long>(kDim), static_cast<long long>(kLayers));
  for (int k = 0; k < 4; ++k) {
    zero(*params[k]);
    const int64_t saved = saved_bytes(forwards[k]);
    std::printf("%-30s %8.2f [%.2f, %.2f] ms   saved %8.1f KB\n", names[k], t[k].median / 1e3,
                t[k].min / 1e3, t[k].max / 1e3, saved / 1024.0);
  }
  std::printf(
      "captured / thunder step time: %.3f, TorchScript / thunder: %.3f (target: within 5%%)\n",
      t[2].median / t[1].median, t[3].median / t[1].median);
}

}  // namespace thunder::bench
