// Timing helpers for the benchmark binary: each workload is timed eager and
// jitted in the same process and printed side by side with the ratio.
#pragma once

#include <ATen/ATen.h>
#include <thunder/runtime/memory_meter.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <string>
#include <vector>

namespace thunder::bench {

// The kernel set OpenBLAS chose for this CPU ("Zen", "SkylakeX", or a generic
// fallback such as "Prescott" when it does not know the CPU): eager's matmul
// speed depends on it. Looked up at run time; libtorch already loads OpenBLAS.
inline std::string openblas_core() {
  using CoreName = char* (*)();
  auto fn = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  return fn ? fn() : "(not OpenBLAS)";
}

// The 1-minute load average: other work on a shared machine skews timings.
inline double load_average() {
  double load = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

// The CPU model, for comparing runs across machines by ratio.
inline std::string cpu_model() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return "unknown CPU";
  char line[512];
  std::string model = "unknown CPU";
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "model name", 10) == 0) {
      model = line;
      model = model.substr(model.find(':') + 2);
      if (!model.empty() && model.back() == '\n') model.pop_back();
      break;
    }
  std::fclose(f);
  return model;
}

// Median over `reps` batches of the per-iteration time in microseconds, after a warm-up.
inline double time_us(const std::function<void()>& f, int iters, int reps = 7) {
  for (int i = 0; i < std::max(1, iters / 10); ++i) f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

// Several workloads timed in turn, batch by batch (the machine's drift hits
// them alike): per workload, the median, min and max over `reps` batches of
// the per-iteration time in microseconds, after a warm-up.
inline std::vector<Spread> interleaved_us(const std::vector<std::function<void()>>& fs, int iters,
                                          int reps = 15) {
  std::vector<std::vector<double>> t(fs.size());
  for (const auto& f : fs)
    for (int i = 0; i < std::max(1, iters / 10); ++i) f();
  for (int r = 0; r < reps; ++r)
    for (size_t k = 0; k < fs.size(); ++k) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) fs[k]();
      auto t1 = std::chrono::steady_clock::now();
      t[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
    }
  std::vector<Spread> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back({v[v.size() / 2], v.front(), v.back()});
  }
  return out;
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

inline void header() {
  std::printf("%-44s %12s %12s %10s\n", "workload", "eager", "jit", "eager/jit");
}

inline void row(const std::string& name, double eager_us, double jit_us) {
  std::printf("%-44s %10.3f us %10.3f us %9.2fx\n", name.c_str(), eager_us, jit_us,
              eager_us / jit_us);
}

}  // namespace thunder::bench
