// thunder-cpp benchmarks: every workload eager (libtorch) and jitted, side
// by side, from one process. Numbers are printed, never asserted.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <thunder/thunder.h>

#include <torch/csrc/api/include/torch/version.h>

#include <cstdio>
#include <cstring>

#include <thunder/runtime/memory_meter.h>

#include "bench_util.h"
#include "hand_fused.h"
#include "models.h"

using thunder::Tensor;
using thunder::bench::row;
using thunder::bench::time_us;
namespace F = thunder::nn::functional;

namespace {

void per_call_overhead() {
  std::printf("\n== Per-call overhead (3-element tensors, grad mode off) ==\n");
  thunder::bench::header();
  at::NoGradGuard no_grad;
  at::Tensor x = at::randn({3});
  auto three_ops = [](const Tensor& a) { return (a * 2.0 + 1.0).sin(); };
  auto jfn = thunder::jit(three_ops);
  double eager = time_us([&] { at::Tensor r = at::sin(x * 2.0 + 1.0); }, 20000);
  double thunder_eager = time_us([&] { Tensor r = three_ops(x); }, 20000);
  double jitted = time_us([&] { Tensor r = jfn(x); }, 20000);
  row("3 ops: libtorch eager vs jit", eager, jitted);
  row("3 ops: thunder::Tensor eager vs jit", thunder_eager, jitted);
  auto fused = thunder::jit(three_ops, {.executors = {"cpu_fuser", "aten"}});
  row("3 ops: libtorch eager vs jit (cpu_fuser)", eager,
      time_us([&] { Tensor r = fused(x); }, 20000));

  // Guard and dispatch cost alone: a function returning its first input runs no kernel.
  std::printf("\n%-44s %12s %16s\n", "identity function, N tensor inputs", "jit call",
              "per extra input");
  double base = 0;
  for (int n : {1, 8, 64}) {
    std::vector<at::Tensor> xs;
    for (int i = 0; i < n; ++i) xs.push_back(at::randn({3}));
    auto id = thunder::jit([](const thunder::TensorList& ts) { return ts[0]; });
    double us = time_us([&] { Tensor r = id(xs); }, 20000);
    if (n == 1) base = us;
    std::printf("%-44s %9.3f us %13.4f us\n", ("N = " + std::to_string(n)).c_str(), us,
                n == 1 ? 0.0 : (us - base) / (n - 1));
  }
  std::printf("(eager libtorch dispatch of one op on 3 elements: %.3f us)\n",
              time_us([&] { at::Tensor r = at::sin(x); }, 20000));
}

// One fused elementwise chain on 16M floats: eager libtorch (one pass per op),
// jit with cpu_fuser (one generated kernel), and the same chain hand-fused.
void fused_elementwise_chain() {
  std::printf("\n== Fused elementwise chain: gelu(x*w+b)*sigmoid(x)+tanh(x), 16M f32 ==\n");
  at::NoGradGuard no_grad;
  const int64_t n = 16 << 20;
  at::Tensor x = at::randn({n}), w = at::randn({n}), b = at::randn({n});
  auto chain = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return thunder::nn::functional::gelu(x * w + b) * thunder::sigmoid(x) + thunder::tanh(x);
  };
  auto jfn = thunder::jit(chain, {.executors = {"cpu_fuser", "aten"}});
  at::Tensor want = at::gelu(x * w + b) * at::sigmoid(x) + at::tanh(x);
  at::Tensor got = jfn(x, w, b).aten(), hand = at::empty_like(x);
  hand_fused_gelu_chain(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                        hand.data_ptr<float>(), n);
  double eager = time_us([&] { at::Tensor r = at::gelu(x * w + b) * at::sigmoid(x) + at::tanh(x); }, 5);
  double jitted = time_us([&] { Tensor r = jfn(x, w, b); }, 5);
  double fused = time_us([&] {
    at::Tensor r = at::empty_like(x);
    hand_fused_gelu_chain(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                          r.data_ptr<float>(), n);
  }, 5);
  thunder::bench::header();
  row("libtorch eager vs jit (cpu_fuser)", eager, jitted);
  row("hand-fused loop vs jit (cpu_fuser)", fused, jitted);
  std::printf("max abs diff vs eager: jit %.3g, hand-fused %.3g\n",
              (got - want).abs().max().item<double>(), (hand - want).abs().max().item<double>());
}

// Bytes the forward leaves alive for the backward (besides its output).
template <typename F>
int64_t saved_bytes(F&& forward) {
  int64_t before = thunder::MemoryMeter::live_bytes();
  at::Tensor out = forward();
  int64_t saved = thunder::MemoryMeter::live_bytes() - before - out.nbytes();
  out.backward(at::ones_like(out));
  return saved;
}

// `leaves`: the tensors whose gradients each iteration resets.
template <typename Eager, typename Jit>
void fwd_bwd_row(const char* name, std::vector<at::Tensor> leaves, Eager&& eager, Jit&& jitted,
                 int iters) {
  auto zero = [&] {
    for (auto& p : leaves) p.mutable_grad() = at::Tensor();
  };
  double e = time_us([&] { zero(); eager().backward(); }, iters, 5);
  double j = time_us([&] { zero(); jitted().backward(); }, iters, 5);
  row(std::string(name) + ": fwd+bwd", e, j);
  int64_t se = saved_bytes(eager), sj = saved_bytes(jitted);
  std::printf("%-44s %9.1f KB %9.1f KB %9.2fx\n", (std::string(name) + ": saved").c_str(),
              se / 1024.0, sj / 1024.0, static_cast<double>(se) / sj);
}

// Each model eager and jitted, with rematerialization off (save what the
// backward reads) and on (min-cut saved set, the default).
void models_fwd_bwd() {
  std::printf("\n== Forward + backward (eager libtorch vs jit) ==\n");
  thunder::bench::header();
  at::manual_seed(0);
  thunder::models::MLP mlp(1024, 4096);
  at::Tensor x = at::randn({512, 1024});
  for (bool remat : {false, true}) {
    auto jmlp = thunder::jit(mlp, {.rematerialize = remat});
    fwd_bwd_row(remat ? "MLP 512x1024->4096, remat on" : "MLP 512x1024->4096, remat off",
                mlp.parameters(), [&] { return mlp.reference(x).sum(); },
                [&] { return jmlp(x).sum().aten(); }, 5);
  }
  thunder::models::GPTBlock gpt(/*vocab=*/512, /*C=*/256, /*heads=*/8);
  at::Tensor idx = at::randint(0, 512, {8, 128}), tgt = at::randint(0, 512, {8, 128});
  for (bool remat : {false, true}) {
    auto jgpt = thunder::jit(gpt, {.rematerialize = remat});
    fwd_bwd_row(remat ? "GPT block B8 T128 C256, remat on" : "GPT block B8 T128 C256, remat off",
                gpt.parameters(), [&] { return gpt.reference(idx, tgt); },
                [&] { return jgpt(idx, tgt).aten(); }, 5);
  }
}

// Jitted draws are uniform_philox (stateless, recomputable); eager libtorch
// draws from its Mersenne Twister and saves a float mask.
void random_draws() {
  std::printf("\n== Random draws (eager libtorch vs jit with uniform_philox) ==\n");
  thunder::bench::header();
  auto jrand = thunder::jit([] { return thunder::rand({1024, 1024}); });
  row("rand 1024x1024", time_us([] { at::Tensor r = at::rand({1024, 1024}); }, 50),
      time_us([&] { Tensor r = jrand(); }, 50));
  auto jrand16m = thunder::jit([] { return thunder::rand({16 << 20}); });
  row("rand 16M", time_us([] { at::Tensor r = at::rand({16 << 20}); }, 5),
      time_us([&] { Tensor r = jrand16m(); }, 5));
  // Dropout under each policy (docs/rematerialization.md).
  at::Tensor x = at::randn({1024, 1024}).requires_grad_();
  auto drop = [](const Tensor& x) { return F::dropout(x, 0.9, true); };
  auto eager = [&] { return at::dropout(x, 0.9, true).sum(); };
  auto jdrop = thunder::jit(drop);
  fwd_bwd_row("dropout p=0.9 1024x1024 (replay mask)", {x}, eager,
              [&] { return jdrop(x).sum().aten(); }, 20);
  // Without the sum: the backward's gradient is a given tensor.
  at::Tensor g = at::ones({1024, 1024});
  auto zero = [&] { x.mutable_grad() = at::Tensor(); };
  auto eager_g = [&] {
    zero();
    at::dropout(x, 0.9, true).backward(g);
  };
  auto jit_g = [&] {
    zero();
    jdrop(x).backward(g);
  };
  row("dropout p=0.9 1024x1024, no sum: fwd+bwd", time_us(eager_g, 20, 5), time_us(jit_g, 20, 5));
  auto jstateful = thunder::jit(drop, {.disable_replace_uniform = true});
  fwd_bwd_row("dropout (disable_replace_uniform)", {x}, eager,
              [&] { return jstateful(x).sum().aten(); }, 20);
  auto& dropout = thunder::symbol_registry().mutable_get("ltorch.dropout");
  uint32_t tags = dropout.tags;
  thunder::add_tags("ltorch.dropout", {thunder::OpTag::DONT_RECOMPUTE_IN_BACKWARD});
  auto jsaved = thunder::jit(drop);
  fwd_bwd_row("dropout (DONT_RECOMPUTE_IN_BACKWARD)", {x}, eager,
              [&] { return jsaved(x).sum().aten(); }, 20);
  dropout.tags = tags;
}

}  // namespace

// With arguments, only the named sections (overhead, chain, models, random).
int main(int argc, char** argv) {
  thunder::MemoryMeter::install();
  at::set_num_threads(1);
  std::printf("thunder-cpp benchmarks (libtorch %d.%d, 1 intra-op thread)\n", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
  auto wanted = [&](const char* name) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], name) == 0) return true;
    return false;
  };
  if (wanted("overhead")) per_call_overhead();
  if (wanted("chain")) fused_elementwise_chain();
  if (wanted("models")) models_fwd_bwd();
  if (wanted("random")) random_draws();
  return 0;
}
