// A jitted callable called from many threads at once, as an inference server
// or a data-parallel trainer on one host would: cache hits racing with
// misses on mixed shapes, training steps, random draws, introspection and
// cache = "none". Every result is checked against eager libtorch, on the
// main thread (workers only count mismatches).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace thunder {
namespace {

constexpr int kThreads = 8;

template <typename Body>
void on_threads(int n, Body body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(body, t);
  for (std::thread& th : threads) th.join();
}

Tensor gelu_like(const Tensor& x, const Tensor& y) { return tanh(x * 0.5 + y) * x + exp(y); }
at::Tensor gelu_like_eager(const at::Tensor& x, const at::Tensor& y) {
  return at::tanh(x * 0.5 + y) * x + at::exp(y);
}

TEST(Threads, EightThreadsMixedShapesCompileOncePerShapeAndMatchEager) {
  auto jfn = jit(gelu_like);
  const std::vector<std::vector<int64_t>> shapes = {{64}, {8, 33}, {3, 5, 7}};
  std::vector<at::Tensor> xs, ys, want;
  for (const auto& s : shapes) {
    xs.push_back(at::randn(s));
    ys.push_back(at::randn(s));
    want.push_back(gelu_like_eager(xs.back(), ys.back()));
  }
  std::atomic<int> wrong{0}, errors{0};
  constexpr int kCalls = 1000;
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < kCalls; ++i) {
      const size_t k = (t + i) % shapes.size();
      try {
        Tensor out = jfn(xs[k], ys[k]);
        if (!at::allclose(out.aten(), want[k], 1e-5, 1e-6)) ++wrong;
      } catch (const std::exception&) {
        ++errors;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  // A miss compiles once; threads that missed the same entry waited for it.
  EXPECT_EQ(cache_misses(jfn), static_cast<int64_t>(shapes.size()));
  EXPECT_EQ(compile_stats(jfn).compiles, static_cast<int64_t>(shapes.size()));
  EXPECT_EQ(cache_hits(jfn) + cache_misses(jfn), int64_t{kThreads} * kCalls);
  EXPECT_EQ(compile_stats(jfn).cache_entries, static_cast<int64_t>(shapes.size()));
}

TEST(Threads, TrainingStepsOnSeparateInputsGiveEagerGradients) {
  auto loss_fn = [](const Tensor& x, const Tensor& w) { return (tanh(x * w) * x).sum(); };
  auto jfn = jit(loss_fn);
  const at::Tensor w = at::randn({16, 8}, at::kDouble);
  std::atomic<int> wrong{0}, errors{0};
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < 100; ++i) {
      try {
        at::Tensor x = at::randn({16, 8}, at::kDouble).requires_grad_(true);
        at::Tensor wt = w.clone().requires_grad_(true);
        Tensor loss = jfn(x, wt);
        loss.backward();
        at::Tensor xe = x.detach().clone().requires_grad_(true);
        at::Tensor we = w.clone().requires_grad_(true);
        at::Tensor le = (at::tanh(xe * we) * xe).sum();
        le.backward();
        if (!at::allclose(loss.aten(), le) || !at::allclose(x.grad(), xe.grad()) ||
            !at::allclose(wt.grad(), we.grad()))
          ++wrong;
      } catch (const std::exception&) {
        ++errors;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(cache_misses(jfn), 1);
  EXPECT_TRUE(has_stage(last_backward_traces(jfn), "Delete Last Used"));
}

// Each call takes its own Philox key: no two of 800 concurrent dropout masks
// are the same (a shared or torn seed/offset would repeat one).
TEST(Threads, ConcurrentRandomDrawsEachTakeTheirOwnKey) {
  auto jfn = jit([](const Tensor& x) { return nn::functional::dropout(x, 0.5, true); });
  const at::Tensor x = at::ones({256});
  std::vector<std::vector<std::vector<uint8_t>>> masks(kThreads);
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < 100; ++i) {
      at::Tensor m = jfn(x).aten().ne(0).to(at::kByte).contiguous();
      masks[t].emplace_back(m.data_ptr<uint8_t>(), m.data_ptr<uint8_t>() + m.numel());
    }
  });
  std::set<std::vector<uint8_t>> distinct;
  for (const auto& per_thread : masks) distinct.insert(per_thread.begin(), per_thread.end());
  EXPECT_EQ(distinct.size(), size_t{kThreads} * 100);
}

// Introspection while other threads call: it sees a consistent entry (the
// one run last by some thread), never a torn one.
TEST(Threads, IntrospectionDuringCallsSeesWholeEntries) {
  auto jfn = jit([](const Tensor& x) { return exp(x) * 2.0; });
  const at::Tensor small = at::randn({4}), big = at::randn({4, 4});
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::vector<Trace> t = last_traces(jfn);
      if (!t.empty() && !has_stage(t, "Fusion kernels")) ++bad;
      (void)compile_stats(jfn);
      (void)cache_hits(jfn);
    }
  });
  on_threads(4, [&](int t) {
    for (int i = 0; i < 500; ++i) (void)jfn((t + i) % 2 ? small : big);
  });
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache_misses(jfn), 2);
  EXPECT_EQ(cache_hits(jfn), 4 * 500 - 2);
}

// cache = "none" retraces every call, on every thread, without publishing
// entries; the jitted function of each thread's own compile runs its call.
TEST(Threads, CacheNoneRetracesEveryCallOnEveryThread) {
  auto jfn = jit([](const Tensor& x, const Tensor& y) { return x * y + 1.0; }, {.cache = "none"});
  std::atomic<int> wrong{0};
  on_threads(4, [&](int t) {
    for (int i = 0; i < 20; ++i) {
      at::Tensor x = at::randn({t + 1, 3}), y = at::randn({t + 1, 3});
      if (!at::allclose(jfn(x, y).aten(), x * y + 1.0)) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache_misses(jfn), 80);
  EXPECT_EQ(cache_hits(jfn), 0);
  EXPECT_EQ(compile_stats(jfn).cache_entries, 0);
}

// Separate jitted functions compiling at the same time share the kernel
// cache (in memory and on disk) and the symbol registry.
TEST(Threads, SeparateFunctionsCompileConcurrently) {
  std::atomic<int> wrong{0};
  on_threads(kThreads, [&](int t) {
    const double scale = 1.0 + t % 3;  // three distinct kernels, each compiled by several threads
    auto jfn = jit([scale](const Tensor& x) { return sin(x) * scale + x; });
    at::Tensor x = at::randn({32});
    for (int i = 0; i < 10; ++i)
      if (!at::allclose(jfn(x).aten(), at::sin(x) * scale + x, 1e-5, 1e-6)) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
}

// The race behind the test above (seen in CI when it was the process's first
// compile): every thread finds a guard symbol missing and adds it. find_or_add
// must hand all of them the one symbol.
TEST(Threads, RacingFindOrAddRegistersOneSymbol) {
  const size_t before = symbol_registry().size();
  std::vector<const Symbol*> got(kThreads);
  std::atomic<int> ready{0};
  on_threads(kThreads, [&](int t) {
    ++ready;
    while (ready.load() < kThreads) {
    }
    Symbol s;
    s.id = "test.raced_symbol";
    got[t] = &symbol_registry().find_or_add(std::move(s));
  });
  for (const Symbol* s : got) EXPECT_EQ(s, got[0]);
  EXPECT_EQ(symbol_registry().size(), before + 1);
  EXPECT_EQ(symbol_registry().find("test.raced_symbol"), got[0]);
}

}  // namespace
}  // namespace thunder
