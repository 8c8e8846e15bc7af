// A gradient bucket's pack with its 1/world scale, three ways: cat then
// scale (a cat, then a fusion region over the pack: two passes), scale then
// cat fused by cpu_fuser (one kernel, one pass: what bucket_all_reduces
// makes), and eager ATen (at::cat(...) / world). Prints each one's time and
// the effective bandwidth of one pass (pack bytes read + written).
//   bucket_pack [world=2] [reps=50]
#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

template <typename F>
double median_ms(F&& f, int reps) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double world = argc > 1 ? std::atof(argv[1]) : 2;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 50;
  // A transformer block's worth of f32 gradients (about 21 MB: one 25 MiB bucket).
  std::vector<at::Tensor> g = {at::randn({1024, 1024}), at::randn({1024}), at::randn({4096, 1024}),
                               at::randn({4096})};
  int64_t numel = 0;
  for (const auto& t : g) numel += t.numel();
  const double mb = numel * 4 / 1e6;
  using thunder::Tensor;
  using thunder::TensorList;
  auto cat_then_scale = thunder::jit([world](const TensorList& xs) {
    TensorList flat;
    for (const Tensor& x : xs) flat.push_back(x.reshape({-1}));
    return thunder::cat(flat, 0) / world;
  });
  auto scale_then_cat = thunder::jit([world](const TensorList& xs) {
    TensorList flat;
    for (const Tensor& x : xs) flat.push_back((x / world).reshape({-1}));
    return thunder::cat(flat, 0);
  });
  at::Tensor a = cat_then_scale(g).aten(), b = scale_then_cat(g).aten();
  std::vector<at::Tensor> flat;
  for (const auto& t : g) flat.push_back(t.reshape({-1}));
  at::Tensor e = at::cat(flat) / world;
  std::printf("world %g, pack of %lld floats (%.1f MB), %d reps, median\n", world,
              static_cast<long long>(numel), mb, reps);
  std::printf("bitwise equal: cat-then-scale vs fused %s, fused vs eager %s\n",
              std::memcmp(a.data_ptr(), b.data_ptr(), numel * 4) == 0 ? "yes" : "NO",
              std::memcmp(b.data_ptr(), e.data_ptr(), numel * 4) == 0 ? "yes" : "NO");
  auto report = [&](const char* what, double ms) {
    std::printf("  %-34s %7.3f ms  %6.1f GB/s (one pass: %.0f MB read + written)\n", what, ms,
                2 * mb / ms, 2 * mb);
  };
  report("cat, then scale (2 passes)", median_ms([&] { cat_then_scale(g); }, reps));
  report("scale + cat fused (1 pass)", median_ms([&] { scale_then_cat(g); }, reps));
  report("eager at::cat(...) / world", median_ms(
                                           [&] {
                                             std::vector<at::Tensor> f;
                                             for (const auto& t : g) f.push_back(t.reshape({-1}));
                                             (void)(at::cat(f) / world);
                                           },
                                           reps));
  report("plain copy (at::cat, no scale)", median_ms([&] { (void)at::cat(flat); }, reps));
  std::printf("\n%s\n%s\n", thunder::last_traces(cat_then_scale).back().str().c_str(),
              thunder::last_traces(scale_then_cat).back().str().c_str());
  return 0;
}
