// make demo: train a small MLP regressor with thunder::jit and with eager
// libtorch from the same initial weights, then show what the compiler did:
// the traces, the guards, step time and the bytes the forward keeps alive
// for the backward.
#include <ATen/ATen.h>
#include <thunder/runtime/memory_meter.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace F = thunder::nn::functional;
using thunder::Tensor;

// A residual MLP block stack: Linear -> GELU -> LayerNorm, twice, then a head.
struct Regressor : thunder::nn::Module {
  thunder::nn::Linear inp{16, 64}, hidden{64, 64}, head{64, 1};
  thunder::nn::LayerNorm norm{64};
  Regressor() {
    register_module("inp", inp);
    register_module("hidden", hidden);
    register_module("head", head);
    register_module("norm", norm);
  }
  Tensor forward(const Tensor& x, const Tensor& y) {
    Tensor h = F::gelu(inp(x), "tanh");
    h = norm(h + F::gelu(hidden(h), "tanh"));
    Tensor err = head(h) - y;
    return (err * err).mean();  // mean squared error
  }
};

struct Run {
  std::vector<double> losses;
  double step_us = 0;
  int64_t saved_bytes = 0;
};

template <typename Loss>
Run train(Regressor& model, Loss&& loss_fn, const at::Tensor& x, const at::Tensor& y, int steps) {
  torch::optim::AdamW opt(model.parameters(), torch::optim::AdamWOptions(3e-3));
  Run run;
  double total_us = 0;
  for (int step = 0; step < steps; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    int64_t before = thunder::MemoryMeter::live_bytes();
    Tensor loss = loss_fn(x, y);
    // What the forward left alive besides the loss: the tensors autograd saved.
    int64_t saved = thunder::MemoryMeter::live_bytes() - before - loss.aten().nbytes();
    loss.backward();
    opt.step();
    auto us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0);
    if (step >= 5) total_us += us.count();  // skip warm-up (and the jit's compile)
    run.saved_bytes = saved;
    run.losses.push_back(loss.item<double>());
  }
  run.step_us = total_us / (steps - 5);
  return run;
}

int main() {
  thunder::MemoryMeter::install();
  const int steps = 200;
  at::manual_seed(0);
  at::Tensor x = at::randn({256, 16});
  at::Tensor y = at::sin(x.sum(1, true)) + 0.1 * at::randn({256, 1});

  at::manual_seed(1);
  Regressor eager_model;
  at::manual_seed(1);
  Regressor jit_model;  // identical initial weights
  auto jloss = thunder::jit(jit_model);

  Run eager = train(eager_model, [&](auto& a, auto& b) { return eager_model.forward(a, b); }, x, y,
                    steps);
  Run jit = train(jit_model, [&](auto& a, auto& b) { return jloss(a, b); }, x, y, steps);

  std::printf("thunder-cpp demo: 3-layer MLP regressor, batch 256, AdamW, %d steps\n\n", steps);
  std::printf("%6s %14s %14s\n", "step", "eager loss", "jit loss");
  for (int s : {0, 1, 10, 50, 100, 150, steps - 1})
    std::printf("%6d %14.6f %14.6f\n", s, eager.losses[s], jit.losses[s]);

  std::vector<thunder::Trace> traces = thunder::last_traces(jloss);
  std::printf("\nThe jitted program (%zu traces: tracing -> dce -> executors -> del):\n\n%s\n",
              traces.size(), traces.back().str().c_str());
  std::printf("Its guards:\n%s\n", thunder::last_prologue_trace(jloss).str().c_str());
  std::printf("cache: %lld miss, %lld hits\n\n", static_cast<long long>(thunder::cache_misses(jloss)),
              static_cast<long long>(thunder::cache_hits(jloss)));
  std::printf("%-34s %12s %12s %9s\n", "", "eager", "jit", "ratio");
  std::printf("%-34s %9.1f us %9.1f us %8.2fx\n", "train step (fwd+bwd+AdamW)", eager.step_us,
              jit.step_us, eager.step_us / jit.step_us);
  std::printf("%-34s %9.1f KB %9.1f KB %8.2fx\n", "saved for backward", eager.saved_bytes / 1024.0,
              jit.saved_bytes / 1024.0, static_cast<double>(eager.saved_bytes) / jit.saved_bytes);

  std::filesystem::create_directories("build/demo");
  for (size_t i = 0; i < traces.size(); ++i) {
    std::ofstream f("build/demo/forward_" + std::to_string(i) + ".txt");
    f << traces[i];
  }
  std::printf("\nEvery intermediate trace is in build/demo/forward_*.txt\n");
  bool same = std::abs(eager.losses.back() - jit.losses.back()) <
              1e-4 * std::max(1.0, std::abs(eager.losses.back()));
  std::printf("final losses %s\n", same ? "match" : "DIFFER");
  return same ? 0 : 1;
}
