// thunder-cpp benchmarks: every workload eager (libtorch) and jitted, side
// by side, from one process. Numbers are printed, never asserted.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thunder/executors/cpu_fuser.h>
#include <thunder/executors/dnnl_matmul.h>
#include <thunder/runtime/memory_meter.h>
#include <thunder/thunder.h>
#include <torch/csrc/api/include/torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "capture_bench.h"
#include "hand_fused.h"
#include "models.h"

using thunder::Tensor;
using thunder::bench::cpu_model;
using thunder::bench::row;
using thunder::bench::saved_bytes;
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

  // One jitted function called from several threads at once: hits read the
  // cache without locks, so the time per call should stay flat while there
  // are cores for the threads.
  std::printf("\n%-44s %12s %12s %10s\n", "3 ops, T threads calling one jitted fn", "eager", "jit",
              "eager/jit");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned threads = 1; threads <= std::min(4u, cores); threads *= 2) {
    auto per_call = [&](const std::function<void()>& f) {
      return time_us(
                 [&] {
                   std::vector<std::thread> ts;
                   for (unsigned t = 0; t < threads; ++t)
                     ts.emplace_back([&] {
                       at::NoGradGuard ng;
                       for (int i = 0; i < 2000; ++i) f();
                     });
                   for (auto& t : ts) t.join();
                 },
                 5) /
             2000;
    };
    double e = per_call([&] { at::Tensor r = at::sin(x * 2.0 + 1.0); });
    double j = per_call([&] { Tensor r = jfn(x); });
    row("T = " + std::to_string(threads) + " (us per call, each thread)", e, j);
  }
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
  at::Tensor got = jfn(x, w, b).aten(), hand = at::empty_like(x), fast = at::empty_like(x);
  const float *px = x.data_ptr<float>(), *pw = w.data_ptr<float>(), *pb = b.data_ptr<float>();
  hand_fused_gelu_chain(px, pw, pb, hand.data_ptr<float>(), n);
  hand_fused_gelu_chain_fast_math(px, pw, pb, fast.data_ptr<float>(), n);
  double eager =
      time_us([&] { at::Tensor r = at::gelu(x * w + b) * at::sigmoid(x) + at::tanh(x); }, 5);
  double jitted = time_us([&] { Tensor r = jfn(x, w, b); }, 5);
  // The hand loops write into a preallocated output (their best case).
  double scalar = time_us([&] { hand_fused_gelu_chain(px, pw, pb, hand.data_ptr<float>(), n); }, 5);
  double vector =
      time_us([&] { hand_fused_gelu_chain_fast_math(px, pw, pb, fast.data_ptr<float>(), n); }, 5);
  thunder::bench::header();
  row("libtorch eager vs jit (cpu_fuser)", eager, jitted);
  row("hand-fused, scalar libm vs jit", scalar, jitted);
  row("hand-fused, -ffast-math libmvec vs jit", vector, jitted);
  auto diff = [&](const at::Tensor& t) { return (t - want).abs().max().item<double>(); };
  std::printf("max abs diff vs eager: jit %.3g, hand-fused scalar %.3g, -ffast-math %.3g\n",
              diff(got), diff(hand), diff(fast));
}

// relu(x * a + b) on 64M floats reads 256 MB and writes 256 MB, the same
// traffic as a copy, so its yardstick is the machine's copy bandwidth
// measured here, not another compute kernel.
void bandwidth_bound_chain() {
  std::printf("\n== Bandwidth-bound chain: relu(x*a+b), 64M f32, float scalars a, b ==\n");
  at::NoGradGuard no_grad;
  const int64_t n = 64 << 20;
  const double a = 1.5, b = -0.25;
  at::Tensor x = at::randn({n});
  // a and b are plain C++ doubles: trace-time constants guarded by value,
  // like Python floats under thunder's default cache.
  auto chain = [](const Tensor& x, double a, double b) { return thunder::relu(x * a + b); };
  auto jfn = thunder::jit(chain);
  at::Tensor want = at::relu(x * a + b);
  double diff = (jfn(x, a, b).aten() - want).abs().max().item<double>();
  const int iters = 5;
  double eager = time_us([&] { at::Tensor r = at::relu(x * a + b); }, iters);
  double jitted = time_us([&] { Tensor r = jfn(x, a, b); }, iters);
  // The copy yardsticks: into a preallocated buffer (pure bandwidth), and
  // into a freshly allocated buffer each time, what a new result costs when
  // nothing recycles it (with glibc, a 256 MB block is a fresh mmap whose
  // pages fault in on first touch). jit's memory plan takes back a result
  // the caller dropped and hands it out again on the next call
  // (runtime/buffer_pool.h), so in this loop jit writes into warm pages,
  // like the preallocated copy.
  at::Tensor dst = at::empty_like(x);
  double copy_pre =
      time_us([&] { hand_copy(x.data_ptr<float>(), dst.data_ptr<float>(), n); }, iters);
  double copy_fresh = time_us(
      [&] {
        at::Tensor r = at::empty_like(x);
        hand_copy(x.data_ptr<float>(), r.data_ptr<float>(), n);
      },
      iters);
  double aten_copy = time_us([&] { dst.copy_(x); }, iters);
  double aten_clone = time_us([&] { at::Tensor r = x.clone(); }, iters);
  const double bytes = 2.0 * n * sizeof(float);  // read + write
  auto gbps = [&](double us) { return bytes / (us * 1e3); };
  thunder::bench::header();
  row("relu(x*a+b): libtorch eager vs jit", eager, jitted);
  std::printf("%-44s %12s %12s\n", "bandwidth (read+write bytes, 1 GB = 1e9 B)", "time", "GB/s");
  auto bw = [&](const char* name, double us) {
    std::printf("%-44s %9.0f us %9.2f GB/s\n", name, us, gbps(us));
  };
  bw("hand copy loop, preallocated output", copy_pre);
  bw("hand copy loop, fresh output each time", copy_fresh);
  bw("at::Tensor::copy_, preallocated output", aten_copy);
  bw("at::Tensor::clone (fresh output)", aten_clone);
  bw("relu(x*a+b) eager", eager);
  bw("relu(x*a+b) jit", jitted);
  std::printf(
      "jit bandwidth: %.0f%% of preallocated copy, %.0f%% of fresh-output copy "
      "(target >= 70%%); max abs diff vs eager %.3g\n",
      100.0 * copy_pre / jitted, 100.0 * copy_fresh / jitted, diff);
  // Whether jit's results came from fresh memory or from its buffer pool.
  thunder::CompileStats cs = thunder::compile_stats(jfn);
  std::printf("jit memory plan: %lld buffer reuses, %.0f MB idle buffers kept\n",
              static_cast<long long>(cs.buffer_reuses), cs.idle_buffer_bytes / 1e6);
}

// `leaves`: the tensors whose gradients each iteration resets.
template <typename Eager, typename Jit>
void fwd_bwd_row(const char* name, std::vector<at::Tensor> leaves, Eager&& eager, Jit&& jitted,
                 int iters, int reps = 5) {
  auto zero = [&] {
    for (auto& p : leaves) p.mutable_grad() = at::Tensor();
  };
  double e = time_us(
      [&] {
        zero();
        eager().backward();
      },
      iters, reps);
  double j = time_us(
      [&] {
        zero();
        jitted().backward();
      },
      iters, reps);
  row(std::string(name) + ": fwd+bwd", e, j);
  int64_t se = saved_bytes(eager), sj = saved_bytes(jitted);
  // Bytes below 1 KB (a replayed draw saves a 16-byte seed and offset).
  auto size = [](int64_t b) {
    return b < 1024 ? fmt::format("{:>9} B ", b) : fmt::format("{:9.1f} KB", b / 1024.0);
  };
  const std::string ratio = sj > 0 ? fmt::format("{:.2f}x", static_cast<double>(se) / sj) : "-";
  std::printf("%-44s %s %s %10s\n", (std::string(name) + ": saved").c_str(), size(se).c_str(),
              size(sj).c_str(), ratio.c_str());
}

// The fused chain again, now with a backward: eager saves every
// intermediate and runs one pass per op in both directions; jit fuses the
// forward and the backward and can recompute instead of saving.
void gelu_chain_fwd_bwd() {
  std::printf("\n== gelu(x*w+b)*sigmoid(x)+tanh(x), 16M f32, fwd+bwd (loss = sum) ==\n");
  thunder::bench::header();
  const int64_t n = 16 << 20;
  at::Tensor x = at::randn({n}).requires_grad_(), w = at::randn({n}).requires_grad_(),
             b = at::randn({n}).requires_grad_();
  auto chain = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return F::gelu(x * w + b) * thunder::sigmoid(x) + thunder::tanh(x);
  };
  auto jfn = thunder::jit(chain);
  fwd_bwd_row(
      "gelu chain 16M", {x, w, b},
      [&] { return (at::gelu(x * w + b) * at::sigmoid(x) + at::tanh(x)).sum(); },
      [&] { return jfn(x, w, b).sum().aten(); }, 3);
}

// Softmax cross-entropy over a 32000-word vocabulary: every tensor here is
// 0.5 GB, so the few passes over the logits decide the time.
void softmax_cross_entropy() {
  std::printf("\n== Softmax cross-entropy [4096, 32000] f32 logits, fwd+bwd ==\n");
  thunder::bench::header();
  at::Tensor logits = at::randn({4096, 32000}).requires_grad_();
  at::Tensor targets = at::randint(0, 32000, {4096});
  auto jce = thunder::jit([](const Tensor& logits, const Tensor& targets) {
    return F::cross_entropy(logits, targets);
  });
  fwd_bwd_row(
      "cross_entropy 4096x32000", {logits}, [&] { return at::cross_entropy_loss(logits, targets); },
      [&] { return jce(logits, targets).aten(); }, 1, 3);
}

// Each model eager and jitted, with rematerialization off (save what the
// backward reads) and on (min-cut saved set, the default).
void models_fwd_bwd() {
  std::printf("\n== Forward + backward (eager libtorch vs jit) ==\n");
  thunder::bench::header();
  at::manual_seed(0);
  // The transformer MLP block at training shape: matmuls dominate (about
  // 200 GFLOP per fwd+bwd on one thread), so one iteration per sample.
  // Eager dropout draws from libtorch's generator and jit from Philox, so
  // the values differ; the work does not.
  thunder::models::MLP mlp(1024, 4096, /*p=*/0.1);
  mlp.train();
  at::Tensor x = at::randn({4096, 1024});
  auto jmlp = thunder::jit(mlp);
  fwd_bwd_row(
      "MLP 4096x1024->4096 p=0.1, remat on", mlp.parameters(),
      [&] { return mlp.reference(x).sum(); }, [&] { return jmlp(x).sum().aten(); }, 1, 3);
  thunder::models::GPTBlock gpt(/*vocab=*/512, /*C=*/256, /*heads=*/8);
  at::Tensor idx = at::randint(0, 512, {8, 128}), tgt = at::randint(0, 512, {8, 128});
  for (bool remat : {false, true}) {
    auto jgpt = thunder::jit(gpt, {.rematerialize = remat});
    fwd_bwd_row(
        remat ? "GPT block B8 T128 C256, remat on" : "GPT block B8 T128 C256, remat off",
        gpt.parameters(), [&] { return gpt.reference(idx, tgt); },
        [&] { return jgpt(idx, tgt).aten(); }, 5);
  }
}

// --- Matmuls on oneDNN ------------------------------------------------------
// The dnnl executor on and off in one process: eager libtorch, jit without
// dnnl ({"cpu_fuser", "aten"}: every matmul on ATen/OpenBLAS), jit with dnnl
// deciding per shape by measurement (the default), and jit with dnnl forced
// for every shape (THUNDER_DNNL=1 while compiling). One rep runs each variant
// once, interleaved, so load drifts hit all alike; median [min, max] in ms.
void dnnl_rows() {
  std::printf("\n== Matmuls: ATen vs oneDNN (dnnl executor), fwd+bwd, ms median [min, max] ==\n");
  std::printf("%-34s %22s %22s %22s %22s\n", "workload", "eager", "jit, dnnl off",
              "jit, dnnl measured", "jit, dnnl forced");
  at::manual_seed(0);
  auto run = [](const char* name, std::vector<at::Tensor> leaves, int reps,
                std::vector<std::function<at::Tensor()>> variants) {
    std::vector<std::vector<double>> ms(variants.size());
    for (int r = -1; r < reps; ++r) {  // r = -1: warm-up (compiles, measures shapes)
      for (size_t v = 0; v < variants.size(); ++v) {
        for (auto& p : leaves) p.mutable_grad() = at::Tensor();
        auto t0 = std::chrono::steady_clock::now();
        variants[v]().backward();
        auto t1 = std::chrono::steady_clock::now();
        if (r >= 0) ms[v].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    }
    std::printf("%-34s", name);
    for (auto& t : ms) {
      std::sort(t.begin(), t.end());
      std::printf(
          " %22s",
          fmt::format("{:.1f} [{:.1f}, {:.1f}]", t[t.size() / 2], t.front(), t.back()).c_str());
    }
    std::printf("\n");
  };
  const thunder::JitOptions off = {.executors = {"cpu_fuser", "aten"}};
  thunder::dnnl::reset_choices();
  {
    thunder::models::GPTBlock gpt(/*vocab=*/512, /*C=*/256, /*heads=*/8);
    at::Tensor idx = at::randint(0, 512, {8, 128}), tgt = at::randint(0, 512, {8, 128});
    auto j_off = thunder::jit(gpt, off);
    auto j_on = thunder::jit(gpt);
    auto j_forced = thunder::jit(gpt);
    {
      // THUNDER_DNNL is read when the first call compiles.
      setenv("THUNDER_DNNL", "1", 1);
      j_forced(idx, tgt).aten().backward();
      unsetenv("THUNDER_DNNL");
    }
    run("GPT block B8 T128 C256", gpt.parameters(), 7,
        {[&] { return gpt.reference(idx, tgt); }, [&] { return j_off(idx, tgt).aten(); },
         [&] { return j_on(idx, tgt).aten(); }, [&] { return j_forced(idx, tgt).aten(); }});
  }
  {
    thunder::models::MLP mlp(1024, 4096);
    at::Tensor x = at::randn({1024, 1024});
    auto j_off = thunder::jit(mlp, off);
    auto j_on = thunder::jit(mlp);
    auto j_forced = thunder::jit(mlp);
    setenv("THUNDER_DNNL", "1", 1);
    j_forced(x).sum().aten().backward();
    unsetenv("THUNDER_DNNL");
    run("MLP 1024x1024->4096->1024", mlp.parameters(), 5,
        {[&] { return mlp.reference(x).sum(); }, [&] { return j_off(x).sum().aten(); },
         [&] { return j_on(x).sum().aten(); }, [&] { return j_forced(x).sum().aten(); }});
  }
  thunder::dnnl::ChoiceStats st = thunder::dnnl::choice_stats();
  std::printf("dnnl measured: oneDNN chosen for %lld of %lld shape classes\n",
              static_cast<long long>(st.dnnl_chosen), static_cast<long long>(st.measured));
}

// The jit's matmul throughput against isolated oneDNN sgemm on the GPT
// block's shapes (forward and backward): each product statement of the final
// traces (plain or fused with its epilogues) is timed as its own jitted
// product on contiguous operands of its shapes (oneDNN forced), and the same
// M, N, K and batch as back-to-back dnnl_sgemm calls. GFLOP/s = 2 M N K batch.
void dnnl_matmul_throughput() {
  std::printf(
      "\n== Matmul throughput: jit (oneDNN primitive) vs isolated dnnl_sgemm, GPT block "
      "B8 T128 C256 shapes ==\n");
  std::printf("%-36s %8s %12s %12s %8s\n", "shape (batch x M x K x N)", "count", "jit GF/s",
              "sgemm GF/s", "ratio");
  setenv("THUNDER_DNNL", "1", 1);
  thunder::models::GPTBlock gpt(/*vocab=*/512, /*C=*/256, /*heads=*/8);
  at::Tensor idx = at::randint(0, 512, {8, 128}), tgt = at::randint(0, 512, {8, 128});
  auto jgpt = thunder::jit(gpt);
  jgpt(idx, tgt).aten().backward();
  struct Product {
    std::vector<int64_t> a, b;
    bool linear;
    int count;
  };
  std::vector<Product> products;
  auto collect = [&](const thunder::Trace& t) {
    for (const thunder::BoundSymbol& s : t.bsyms) {
      const thunder::BoundSymbol& p = s.sym->id.starts_with("dnnlMatmul") ? s.subsymbols[0] : s;
      const bool linear = p.sym->id == "ltorch.linear" || p.sym->id == "prims.linear";
      if (!linear && p.sym->id != "ltorch.matmul" && p.sym->id != "prims.matmul") continue;
      Product q{p.args[0].proxy()->shape, p.args[1].proxy()->shape, linear, 1};
      auto same = std::find_if(products.begin(), products.end(), [&](const Product& o) {
        return o.a == q.a && o.b == q.b && o.linear == q.linear;
      });
      if (same != products.end())
        ++same->count;
      else
        products.push_back(q);
    }
  };
  std::vector<thunder::Trace> fwd = thunder::last_traces(jgpt),
                              bwd = thunder::last_backward_traces(jgpt);
  collect(fwd.back());
  collect(bwd.back());
  double flops_total = 0, jit_us_total = 0, sgemm_us_total = 0;
  for (const Product& p : products) {
    int64_t m, k, n, batch = 1;
    if (p.linear) {
      k = p.a.back();
      n = p.b[0];
      m = 1;
      for (size_t i = 0; i + 1 < p.a.size(); ++i) m *= p.a[i];
    } else {
      m = p.a[p.a.size() - 2];
      k = p.a.back();
      n = p.b.back();
      const size_t na = p.a.size() - 2, nb = p.b.size() - 2, nbatch = std::max(na, nb);
      for (size_t j = 0; j < nbatch; ++j) {
        const int64_t sa = j + na >= nbatch ? p.a[j + na - nbatch] : 1;
        const int64_t sb = j + nb >= nbatch ? p.b[j + nb - nbatch] : 1;
        batch *= std::max(sa, sb);
      }
    }
    at::Tensor x = at::randn(p.a), y = at::randn(p.b);
    double jit_us;
    at::NoGradGuard no_grad;
    if (p.linear) {
      auto j = thunder::jit([](const Tensor& a, const Tensor& w) { return F::linear(a, w); });
      jit_us = time_us([&] { Tensor r = j(x, y); }, 20);
    } else {
      auto j = thunder::jit([](const Tensor& a, const Tensor& b) { return a.matmul(b); });
      jit_us = time_us([&] { Tensor r = j(x, y); }, 20);
    }
    const double sgemm_us = thunder::dnnl::isolated_sgemm_us(batch, m, n, k, 20);
    const double flops = 2.0 * m * n * k * batch;
    flops_total += flops * p.count;
    jit_us_total += jit_us * p.count;
    sgemm_us_total += sgemm_us * p.count;
    std::printf("%-36s %8d %12.1f %12.1f %7.0f%%\n",
                fmt::format("{}x{}x{}x{}{}", batch, m, k, n, p.linear ? " linear" : "").c_str(),
                p.count, flops / jit_us / 1e3, flops / sgemm_us / 1e3, 100.0 * sgemm_us / jit_us);
  }
  std::printf("%-36s %8s %12.1f %12.1f %7.0f%%\n", "all (weighted by count)", "",
              flops_total / jit_us_total / 1e3, flops_total / sgemm_us_total / 1e3,
              100.0 * sgemm_us_total / jit_us_total);
  unsetenv("THUNDER_DNNL");
}

// --- Compile time -----------------------------------------------------------
// Kernels live in two caches: $THUNDER_CACHE_DIR on disk and a per-process
// table of loaded kernels. Only a new process sees the disk cache alone, so
// cold and warm each run in a child: this binary with --compile-child <dir>.

struct CompileChildResult {
  double fwd_ms = -1, fwd_bwd_ms = -1, compile_ms = -1, steady_fwd_bwd_ms = -1;
  long long invocations_fwd = -1, invocations = -1, disk_hits = -1;
};

// In the child: the GPT block from models_fwd_bwd, timed from constructing
// the jit through the end of its first forward, then its first backward.
int compile_child(const char* cache_dir) {
  setenv("THUNDER_CACHE_DIR", cache_dir, 1);  // before anything can compile a kernel
  at::set_num_threads(1);
  at::manual_seed(0);
  thunder::models::GPTBlock gpt(/*vocab=*/512, /*C=*/256, /*heads=*/8);
  at::Tensor idx = at::randint(0, 512, {8, 128}), tgt = at::randint(0, 512, {8, 128});
  // One eager step first, so libtorch's own lazy start-up is not billed to jit.
  gpt.reference(idx, tgt).backward();
  for (auto& p : gpt.parameters()) p.mutable_grad() = at::Tensor();
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  auto t0 = Clock::now();
  auto jgpt = thunder::jit(gpt);
  at::Tensor loss = jgpt(idx, tgt).aten();
  auto t1 = Clock::now();
  long long inv_fwd = thunder::cpu_fuser_stats().compiler_invocations;
  loss.backward();
  auto t2 = Clock::now();
  thunder::CpuFuserStats st = thunder::cpu_fuser_stats();
  // A second call runs what is already compiled: the cost of the step itself.
  for (auto& p : gpt.parameters()) p.mutable_grad() = at::Tensor();
  auto t3 = Clock::now();
  jgpt(idx, tgt).aten().backward();
  auto t4 = Clock::now();
  std::printf(
      "fwd_ms=%.3f fwd_bwd_ms=%.3f compile_ms=%.3f steady_fwd_bwd_ms=%.3f "
      "invocations_fwd=%lld invocations=%lld disk_hits=%lld\n",
      ms(t0, t1), ms(t0, t2), thunder::compile_stats(jgpt).last_compile_ms, ms(t3, t4), inv_fwd,
      static_cast<long long>(st.compiler_invocations), static_cast<long long>(st.disk_cache_hits));
  return 0;
}

// In the parent: spawn the child, read its one line from a pipe.
CompileChildResult run_compile_child(const std::string& cache_dir) {
  CompileChildResult r;
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  int fds[2];
  if (ec || pipe(fds) != 0) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string flag = "--compile-child", dir = cache_dir;
  std::vector<char*> argv = {self.data(), flag.data(), dir.data(), nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, k);
  close(fds[0]);
  int status = 0;
  if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::printf("compile child failed (spawn rc %d, status %d): %s\n", rc, status, out.c_str());
    return r;
  }
  std::sscanf(out.c_str(),
              "fwd_ms=%lf fwd_bwd_ms=%lf compile_ms=%lf steady_fwd_bwd_ms=%lf invocations_fwd=%lld "
              "invocations=%lld disk_hits=%lld",
              &r.fwd_ms, &r.fwd_bwd_ms, &r.compile_ms, &r.steady_fwd_bwd_ms, &r.invocations_fwd,
              &r.invocations, &r.disk_hits);
  return r;
}

// Cold: an empty kernel cache, so every fused region runs the system
// compiler. Warm: a new process on the same cache, so it must compile nothing.
void gpt_compile_time() {
  std::printf("\n== Compile time: jit(GPT block B8 T128 C256), child processes ==\n");
  char tmpl[] = "/tmp/thunder-bench-cache-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::printf("mkdtemp failed\n");
    return;
  }
  CompileChildResult cold = run_compile_child(tmpl);
  CompileChildResult warm = run_compile_child(tmpl);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  std::printf("%-31s %11s %11s %11s %11s %9s %5s\n", "kernel cache", "first fwd", "first f+b",
              "2nd f+b", "jit compile", "compiler", "disk");
  std::printf("%-31s %11s %11s %11s %11s %9s %5s\n", "", "", "", "", "(stats)", "runs", "hits");
  auto line = [](const char* name, const CompileChildResult& r) {
    std::printf("%-31s %8.1f ms %8.1f ms %8.1f ms %8.1f ms %4lld/%-4lld %5lld\n", name, r.fwd_ms,
                r.fwd_bwd_ms, r.steady_fwd_bwd_ms, r.compile_ms, r.invocations_fwd, r.invocations,
                r.disk_hits);
  };
  line("cold (empty THUNDER_CACHE_DIR)", cold);
  line("warm (new process, same dir)", warm);
  std::printf(
      "first fwd / first f+b: from constructing thunder::jit through the first forward /\n"
      "its backward (both include running the step); 2nd f+b: the next step, nothing to\n"
      "compile; jit compile: compile_stats().last_compile_ms; compiler runs after the first\n"
      "fwd / after the first f+b. Targets: cold < 15 s; warm < 100 ms, 0 compiler runs.\n");
}

// Jitted draws are uniform_philox (stateless, recomputable); eager libtorch
// draws from its Mersenne Twister and saves a float mask.
void random_draws() {
  std::printf("\n== Random draws (eager libtorch vs jit with uniform_philox) ==\n");
  thunder::bench::header();
  auto jrand = thunder::jit([] { return thunder::rand({1024, 1024}); });
  row("rand 1024x1024",
      time_us(
          [] {
            at::Tensor r = at::rand({1024, 1024});
          },
          50),
      time_us([&] { Tensor r = jrand(); }, 50));
  auto jrand16m = thunder::jit([] { return thunder::rand({16 << 20}); });
  row("rand 16M", time_us([] { at::Tensor r = at::rand({16 << 20}); }, 5),
      time_us([&] { Tensor r = jrand16m(); }, 5));
  // Dropout under each policy (docs/rematerialization.md).
  at::Tensor x = at::randn({1024, 1024}).requires_grad_();
  auto drop = [](const Tensor& x) { return F::dropout(x, 0.9, true); };
  auto eager = [&] { return at::dropout(x, 0.9, true).sum(); };
  auto jdrop = thunder::jit(drop);
  fwd_bwd_row(
      "dropout p=0.9 1024x1024 (replay mask)", {x}, eager, [&] { return jdrop(x).sum().aten(); },
      20);
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
  fwd_bwd_row(
      "dropout (disable_replace_uniform)", {x}, eager, [&] { return jstateful(x).sum().aten(); },
      20);
  {  // scoped: the rows after this one run with dropout's own tags
    auto tagged =
        thunder::scoped_add_tags("ltorch.dropout", {thunder::OpTag::DONT_RECOMPUTE_IN_BACKWARD});
    auto jsaved = thunder::jit(drop);
    fwd_bwd_row(
        "dropout (DONT_RECOMPUTE_IN_BACKWARD)", {x}, eager, [&] { return jsaved(x).sum().aten(); },
        20);
  }
}

// --- Attention ---------------------------------------------------------------
// sdpa fwd+bwd on [B, H, T, D] head views of a [B, T, 3C] qkv buffer (the
// char-GPT's layout): eager (torch's math path written with ATen ops, as a
// user would), jit without the attention executor (its decomposition:
// matmuls, fused masking and softmax) and jit with it (the default).
// Interleaved rep by rep; median [min, max] in ms, and the bytes each saves
// for backward.
void attention_rows() {
  std::printf("\n== Attention: causal sdpa fwd+bwd on qkv head views, ms median [min, max] ==\n");
  std::printf("%-26s %22s %22s %22s\n", "workload", "eager", "jit, no attention", "jit, attention");
  at::manual_seed(0);
  struct Shape {
    int64_t b, h, t, d;
    int iters;
  };
  for (const Shape& s : {Shape{16, 4, 64, 32, 10}, Shape{8, 8, 256, 32, 2}}) {
    const int64_t c = s.h * s.d;
    at::Tensor x = at::randn({s.b, s.t, 3 * c}).requires_grad_();
    auto heads = [&](const auto& qkv, int64_t part) {
      return qkv.narrow(2, part * c, c).view({s.b, s.t, s.h, s.d}).transpose(1, 2);
    };
    auto eager = [&] {
      at::Tensor q = heads(x, 0), k = heads(x, 1), v = heads(x, 2);
      at::Tensor scores =
          at::matmul(q * (1.0 / std::sqrt(static_cast<double>(s.d))), k.transpose(-2, -1));
      at::Tensor keep = at::ones({s.t, s.t}, at::kBool).tril();
      scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
      return at::matmul(at::softmax(scores, -1), v).sum();
    };
    auto attention = [&](const Tensor& qkv) {
      return F::scaled_dot_product_attention(heads(qkv, 0), heads(qkv, 1), heads(qkv, 2), true);
    };
    auto j_off = thunder::jit(attention, {.executors = {"dnnl", "cpu_fuser", "aten"}});
    auto j_on = thunder::jit(attention);
    std::vector<std::function<at::Tensor()>> variants = {
        eager, [&] { return j_off(x).aten().sum(); }, [&] { return j_on(x).aten().sum(); }};
    std::vector<std::function<void()>> steps;
    for (auto& v : variants)
      steps.push_back([&] {
        x.mutable_grad() = at::Tensor();
        v().backward();
      });
    const auto t = thunder::bench::interleaved_us(steps, s.iters, 9);
    const std::string name = fmt::format("B{} H{} T{} D{}", s.b, s.h, s.t, s.d);
    std::printf("%-26s", name.c_str());
    for (const auto& r : t)
      std::printf(
          " %22s",
          fmt::format("{:.2f} [{:.2f}, {:.2f}]", r.median / 1e3, r.min / 1e3, r.max / 1e3).c_str());
    std::printf("\n%-26s", (name + ": saved").c_str());
    for (auto& v : variants) std::printf(" %19.1f KB", saved_bytes(v) / 1024.0);
    std::printf("\n");
  }
}
}  // namespace

// Every section at 1 and then 2 intra-op threads (eager ATen kernels and the
// generated kernels' OpenMP loops alike); `--threads 1` runs one setting.
// With other arguments, only the named sections: overhead chain bandwidth
// gelu_bwd cross_entropy models dnnl attention compile random capture.
int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--compile-child") return compile_child(argv[2]);
  thunder::MemoryMeter::install();
  std::vector<int> thread_counts = {1, 2};
  std::vector<std::string> sections;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      thread_counts = {std::atoi(argv[++i])};
    else
      sections.emplace_back(argv[i]);
  }
  auto wanted = [&](const char* name) {
    return sections.empty() || std::find(sections.begin(), sections.end(), name) != sections.end();
  };
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "(unset)";
  };
  std::printf(
      "thunder-cpp benchmarks (libtorch %d.%d) on %s, %u hardware threads\n"
      "OpenBLAS core %s (OPENBLAS_CORETYPE=%s), OMP_WAIT_POLICY=%s, load average %.2f\n",
      TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, cpu_model().c_str(),
      std::thread::hardware_concurrency(), thunder::bench::openblas_core().c_str(),
      env("OPENBLAS_CORETYPE"), env("OMP_WAIT_POLICY"), thunder::bench::load_average());
  for (int threads : thread_counts) {
    at::set_num_threads(threads);
    std::printf("\n######## %d intra-op thread%s ########\n", threads, threads == 1 ? "" : "s");
    if (wanted("overhead")) per_call_overhead();
    if (wanted("chain")) fused_elementwise_chain();
    if (wanted("bandwidth")) bandwidth_bound_chain();
    if (wanted("gelu_bwd")) gelu_chain_fwd_bwd();
    if (wanted("cross_entropy")) softmax_cross_entropy();
    if (wanted("models")) models_fwd_bwd();
    if (wanted("dnnl")) {
      dnnl_rows();
      dnnl_matmul_throughput();
    }
    if (wanted("attention")) attention_rows();
    // Compile time does not depend on the thread count: once.
    if (wanted("compile") && threads == thread_counts.front()) gpt_compile_time();
    if (wanted("random")) random_draws();
    if (wanted("capture")) thunder::bench::capture_costs();
  }
  std::printf("\nload average at the end %.2f\n", thunder::bench::load_average());
  return 0;
}
