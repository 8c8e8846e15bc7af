// make demo: train a small character-level GPT on a short text bundled with
// the repo, once eagerly and once with thunder::jit, from the same initial
// weights and batches; then show what the compiler did: the loss curves,
// step time, the bytes the forward keeps alive for the backward, and the
// final forward and backward traces (written to build/demo/). Then the same
// for the same GPT written in plain libtorch (torch::nn modules), jitted
// unmodified.
#include <ATen/ATen.h>
#include <thunder/runtime/memory_meter.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "char_gpt.h"
#include "corpus.h"
#include "torch_char_gpt.h"

using thunder::Tensor;
using thunder::examples::Corpus;

namespace {

constexpr int64_t kContext = 64, kBatch = 16, kDim = 128, kHeads = 4, kLayers = 2;
constexpr int kSteps = 200, kWarmup = 5;

struct Run {
  std::vector<double> losses;
  double step_ms = 0;
  int64_t saved_bytes = 0;
};

const at::Tensor& aten_of(const Tensor& t) { return t.aten(); }
const at::Tensor& aten_of(const at::Tensor& t) { return t; }

template <typename Loss>
Run train(const std::vector<at::Tensor>& parameters, Loss&& loss_fn,
          const std::vector<std::pair<at::Tensor, at::Tensor>>& batches) {
  torch::optim::AdamW opt(parameters, torch::optim::AdamWOptions(3e-3));
  Run run;
  double total_ms = 0;
  for (int step = 0; step < kSteps; ++step) {
    const auto& [x, y] = batches[step];
    auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    int64_t before = thunder::MemoryMeter::live_bytes();
    auto loss = loss_fn(x, y);
    // What the forward left alive besides the loss: the tensors autograd saved.
    run.saved_bytes = thunder::MemoryMeter::live_bytes() - before - aten_of(loss).nbytes();
    loss.backward();
    opt.step();
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
    if (step >= kWarmup) total_ms += ms.count();  // skip warm-up (and the jit's compile)
    run.losses.push_back(aten_of(loss).template item<double>());
  }
  run.step_ms = total_ms / (kSteps - kWarmup);
  return run;
}

void print_runs(const Run& eager, const Run& jit) {
  std::printf("%6s %12s %12s\n", "step", "eager loss", "jit loss");
  for (int s = 0; s < kSteps; s += 20)
    std::printf("%6d %12.4f %12.4f\n", s, eager.losses[s], jit.losses[s]);
  std::printf("%6d %12.4f %12.4f\n\n", kSteps - 1, eager.losses.back(), jit.losses.back());
  std::printf("%-34s %12s %12s %9s\n", "", "eager", "jit", "eager/jit");
  std::printf("%-34s %9.2f ms %9.2f ms %8.2fx\n", "train step (fwd+bwd+AdamW)", eager.step_ms,
              jit.step_ms, eager.step_ms / jit.step_ms);
  std::printf("%-34s %9.1f KB %9.1f KB %8.2fx\n", "saved for backward", eager.saved_bytes / 1024.0,
              jit.saved_bytes / 1024.0, static_cast<double>(eager.saved_bytes) / jit.saved_bytes);
}

// Same weights, same batches: the runs differ only by float rounding order.
bool report_outcome(const Run& eager, const Run& jit) {
  const bool learned = jit.losses.back() < 0.6 * jit.losses.front();
  const bool same = std::abs(eager.losses.back() - jit.losses.back()) < 0.02 * eager.losses.back();
  std::printf("loss %s (%.3f -> %.3f); eager and jit final losses %s\n",
              learned ? "falls" : "DOES NOT FALL", jit.losses.front(), jit.losses.back(),
              same ? "agree" : "DIFFER");
  return learned && same;
}

void write_traces(const std::vector<thunder::Trace>& traces, const std::string& stem) {
  for (size_t i = 0; i < traces.size(); ++i) {
    std::ofstream f("build/demo/" + stem + "_" + std::to_string(i) + ".txt");
    f << traces[i];
  }
}

}  // namespace

int main() {
  thunder::MemoryMeter::install();
  Corpus corpus = thunder::examples::load_corpus(THUNDER_DEMO_TEXT);
  auto batches = thunder::examples::make_batches(corpus, kSteps, kBatch, kContext);
  const int64_t V = static_cast<int64_t>(corpus.vocab.size());

  at::manual_seed(1);
  thunder::models::CharGPT eager_model(V, kContext, kDim, kHeads, kLayers);
  at::manual_seed(1);
  thunder::models::CharGPT jit_model(V, kContext, kDim, kHeads, kLayers);  // same weights
  auto jloss = thunder::jit(jit_model);

  std::printf(
      "thunder-cpp demo: character-level GPT (%lld layers, d=%lld, %lld heads, context "
      "%lld, vocabulary %lld) on %zu characters of bundled text; batch %lld, AdamW, %d "
      "steps\n\n",
      static_cast<long long>(kLayers), static_cast<long long>(kDim), static_cast<long long>(kHeads),
      static_cast<long long>(kContext), static_cast<long long>(V), corpus.text.size(),
      static_cast<long long>(kBatch), kSteps);
  Run eager = train(
      eager_model.parameters(), [&](auto& a, auto& b) { return eager_model.forward(a, b); },
      batches);
  Run jit = train(
      jit_model.parameters(), [&](auto& a, auto& b) { return jloss(a, b); }, batches);
  print_runs(eager, jit);
  thunder::CompileStats stats = thunder::compile_stats(jloss);
  std::printf("compile: %.0f ms; cache: %lld miss, %lld hits\n", stats.last_compile_ms,
              static_cast<long long>(thunder::cache_misses(jloss)),
              static_cast<long long>(thunder::cache_hits(jloss)));

  std::filesystem::create_directories("build/demo");
  auto fwd = thunder::last_traces(jloss), bwd = thunder::last_backward_traces(jloss);
  write_traces(fwd, "forward");
  write_traces(bwd, "backward");
  std::printf(
      "\nFinal backward trace (first lines; all %zu forward and %zu backward stages are in "
      "build/demo/):\n\n",
      fwd.size(), bwd.size());
  std::istringstream lines(bwd.back().str());
  std::string line;
  for (int i = 0; i < 25 && std::getline(lines, line); ++i) std::printf("%s\n", line.c_str());
  std::printf("  ...\n\n");
  thunder::write_report(jloss, "build/demo/report.html");
  std::printf("Compile report (stages, graphs, saved for backward, guards, times): %s\n\n",
              std::filesystem::absolute("build/demo/report.html").c_str());

  const bool thunder_ok = report_outcome(eager, jit);

  // The same GPT in plain libtorch: torch::nn modules jitted as they are.
  at::manual_seed(1);
  thunder::models::TorchCharGPT torch_eager(V, kContext, kDim, kHeads, kLayers);
  at::manual_seed(1);
  thunder::models::TorchCharGPT torch_jitted(V, kContext, kDim, kHeads, kLayers);
  auto torch_jloss = thunder::jit(torch_jitted);
  std::printf(
      "\nThe same GPT written in plain libtorch (torch::nn modules, at::Tensor), jitted "
      "unmodified:\n\n");
  Run torch_eager_run = train(
      torch_eager->parameters(), [&](auto& a, auto& b) { return torch_eager(a, b); }, batches);
  Run torch_jit_run = train(
      torch_jitted->parameters(), [&](auto& a, auto& b) { return torch_jloss(a, b); }, batches);
  print_runs(torch_eager_run, torch_jit_run);
  const thunder::CompileStats torch_stats = thunder::compile_stats(torch_jloss);
  std::printf("compile (capture + pipeline): %.0f ms; %lld fusion regions\n",
              torch_stats.last_compile_ms, static_cast<long long>(torch_stats.fusion_regions));
  const bool torch_ok = report_outcome(torch_eager_run, torch_jit_run);
  return thunder_ok && torch_ok ? 0 : 1;
}
