// Faults during a call or a compile: a kernel that throws, an allocation that
// fails, a compiler that fails or writes a broken library, a truncated file
// in the disk cache, and four processes building one kernel at once. Each
// leaves the caller's tensors as they were, the jitted callable usable and
// the caches unpoisoned. Compiler and disk-cache faults run in child
// processes (this binary re-run on one DISABLED_ test with
// --gtest_also_run_disabled_tests), since the compiler is chosen and kernels
// are loaded once per process.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thunder/executors/cpu_fuser.h>
#include <thunder/thunder.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace thunder {
namespace {

namespace fs = std::filesystem;

// In-place into the input, then an op whose run-time check fails (an index
// out of range): the write into x is not applied, and a good call works.
TEST(FaultInjection, AKernelThatThrowsLeavesInputsUnchangedAndTheCacheUsable) {
  auto jfn = jit([](Tensor x, const Tensor& idx) {
    x.add_(1.0);
    return x.index_select(0, idx);
  });
  at::Tensor x = at::arange(4, at::kFloat);
  const at::Tensor before = x.clone();
  try {
    (void)jfn(x, at::tensor({0, 9}, at::kLong));
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index_select"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(at::equal(x, before));
  at::Tensor out = jfn(x, at::tensor({3, 1}, at::kLong)).aten();
  EXPECT_TRUE(at::equal(x, before + 1));
  EXPECT_TRUE(at::equal(out, (before + 1).index_select(0, at::tensor({3, 1}, at::kLong))));
  EXPECT_EQ(cache_misses(jfn), 1);  // the failed call's entry is the good call's: not poisoned
}

// An allocation the system cannot satisfy (a 4 TiB intermediate) fails the
// call the same way; the next call with a small shape runs.
TEST(FaultInjection, AFailedAllocationLeavesInputsUnchangedAndTheCallableUsable) {
  auto jfn = jit(
      [](Tensor x, int64_t n) {
        x.mul_(2.0);
        return (x.expand({n, x.size(0)}) + 1.0).sum();
      },
      {.executors = {"aten"}});  // a fused kernel would never materialise the sum's input
  at::Tensor x = at::ones({1024});
  try {
    (void)jfn(x, int64_t{1} << 30);  // 2^40 floats
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not enough memory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(at::equal(x, at::ones({1024})));
  at::Tensor s = jfn(x, 3).aten();
  EXPECT_EQ(s.item<float>(), 3 * 1024 * 3.0f);
  EXPECT_TRUE(at::equal(x, at::full({1024}, 2.0f)));
}

// ---- child processes ----

Tensor child_fn(const Tensor& x) { return tanh(x * 1.5 + 0.25) * x; }

// Run only as a child (see below): jits child_fn under the environment the
// parent set and checks the result and the kernel counters it asks for.
// CHILD_SHAPES=n: also n more kernels built together by one KernelBatch.
TEST(FaultInjectionChild, DISABLED_CompileCheckAndReport) {
  auto jfn = jit(child_fn);
  const at::Tensor x = at::linspace(-3, 3, 1000);
  EXPECT_TRUE(at::allclose(jfn(x).aten(), at::tanh(x * 1.5 + 0.25) * x, 1e-5, 1e-6));
  if (const char* shapes = std::getenv("CHILD_SHAPES")) {
    // A row sum: each shape its own kernel.
    auto rows = jit([](const Tensor& x) { return child_fn(x).sum(-1); });
    auto input = [](int64_t i) { return at::linspace(-3, 3, 400 + 4 * i).reshape({4, -1}); };
    const int64_t n = std::atoi(shapes);
    {
      KernelBatch batch;
      for (int64_t i = 0; i < n; ++i) (void)rows(input(i));
      EXPECT_EQ(batch.pending(), n);
      EXPECT_EQ(batch.build(), n);
    }
    for (int64_t i = 0; i < n; ++i) {
      const at::Tensor y = input(i);
      EXPECT_TRUE(
          at::allclose(rows(y).aten(), (at::tanh(y * 1.5 + 0.25) * y).sum(-1), 1e-5, 1e-5));
    }
  }
  const CpuFuserStats s = cpu_fuser_stats();
  if (const char* want = std::getenv("EXPECT_BUILT")) {
    EXPECT_EQ(s.compiler_invocations, std::atoi(want));
  }
  if (const char* want = std::getenv("EXPECT_REBUILT")) {
    EXPECT_EQ(s.rebuilt_kernels, std::atoi(want));
  }
  if (std::getenv("EXPECT_FALLBACK")) {
    EXPECT_GE(s.fallback_regions, 1);
  }
  if (std::getenv("EXPECT_FUSED")) {
    EXPECT_EQ(s.fallback_regions, 0);
  }
}

// Starts `n` children at once with `env` added; returns their exit statuses.
std::vector<int> run_children(int n, const std::vector<std::string>& env) {
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    // The child runs one test: not the cache, compiler or gtest shard of its parent.
    if (v.rfind("THUNDER_CACHE_DIR=", 0) != 0 && v.rfind("CXX=", 0) != 0 &&
        v.rfind("GTEST_", 0) != 0)
      vars.push_back(v);
  }
  vars.insert(vars.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=FaultInjectionChild.DISABLED_CompileCheckAndReport";
  std::string disabled = "--gtest_also_run_disabled_tests";
  std::vector<char*> argv = {exe.data(), filter.data(), disabled.data(), nullptr};
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  std::vector<pid_t> pids(n);
  for (pid_t& p : pids)
    EXPECT_EQ(posix_spawn(&p, exe.c_str(), &quiet, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&quiet);
  std::vector<int> statuses;
  for (pid_t p : pids) {
    int status = -1;
    waitpid(p, &status, 0);
    statuses.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return statuses;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("thunder-fault-{}-{}", name, getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<fs::path> files_ending(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().ends_with(suffix)) out.push_back(e.path());
  return out;
}

TEST(FaultInjection, FourProcessesBuildingOneKernelNeverLoadAHalfWrittenFile) {
  const fs::path dir = fresh_dir("race");
  std::vector<int> st = run_children(4, {"THUNDER_CACHE_DIR=" + dir.string(), "EXPECT_FUSED=1"});
  EXPECT_EQ(st, std::vector<int>(4, 0));
  EXPECT_EQ(files_ending(dir, ".so").size(), 1u);  // one kernel, whoever renamed last
  EXPECT_TRUE(files_ending(dir, ".tmp.so").empty());
  EXPECT_TRUE(files_ending(dir, ".tmp.cpp").empty());
  fs::remove_all(dir);
}

TEST(FaultInjection, ATruncatedKernelInTheDiskCacheIsRebuilt) {
  const fs::path dir = fresh_dir("truncated");
  ASSERT_EQ(run_children(1, {"THUNDER_CACHE_DIR=" + dir.string()}), std::vector<int>{0});
  std::vector<fs::path> so = files_ending(dir, ".so");
  ASSERT_EQ(so.size(), 1u);
  const auto good_size = fs::file_size(so[0]);
  fs::resize_file(so[0], 200);
  EXPECT_EQ(
      run_children(1, {"THUNDER_CACHE_DIR=" + dir.string(), "EXPECT_REBUILT=1", "EXPECT_FUSED=1"}),
      std::vector<int>{0});
  EXPECT_EQ(fs::file_size(so[0]), good_size);
  // Another kernel's library under this kernel's name is caught by its key.
  {
    std::ofstream(dir / "other.cpp")
        << "extern \"C\" const char thunder_kernel_key[] = \"not-this-one\";\n"
           "extern \"C\" void thunder_kernel(void**, long) {}\n";
  }
  ASSERT_EQ(std::system(fmt::format("c++ -shared -fPIC {} -o {}", (dir / "other.cpp").string(),
                                    so[0].string())
                            .c_str()),
            0);
  EXPECT_EQ(
      run_children(1, {"THUNDER_CACHE_DIR=" + dir.string(), "EXPECT_REBUILT=1", "EXPECT_FUSED=1"}),
      std::vector<int>{0});
  fs::remove_all(dir);
}

// A compiler that fails, and one that "succeeds" with a broken library: the
// regions run op by op on ATen with the same results.
TEST(FaultInjection, AFailingOrBrokenCompilerFallsBackToATen) {
  const fs::path dir = fresh_dir("compiler");
  const fs::path broken = dir / "broken-cxx";
  {
    std::ofstream(broken) << "#!/bin/sh\n"
                             "# writes garbage where the library should go (the arg after -o)\n"
                             "while [ $# -gt 1 ]; do [ \"$1\" = -o ] && echo garbage > \"$2\"; "
                             "shift; done\n";
  }
  fs::permissions(broken, fs::perms::owner_all);
  EXPECT_EQ(
      run_children(1, {"THUNDER_CACHE_DIR=" + dir.string(), "CXX=/bin/false", "EXPECT_FALLBACK=1"}),
      std::vector<int>{0});
  EXPECT_EQ(run_children(1, {"THUNDER_CACHE_DIR=" + dir.string(), "CXX=" + broken.string(),
                             "EXPECT_FALLBACK=1"}),
            std::vector<int>{0});
  fs::remove_all(dir);
}

// A unit of several kernels that the compiler rejects (here: any with more
// than one kernel) is retried kernel by kernel: every kernel is built.
TEST(FaultInjection, ARejectedBatchIsRetriedKernelByKernel) {
  const fs::path dir = fresh_dir("batch");
  const fs::path picky = dir / "picky-cxx";
  {
    std::ofstream(picky) << "#!/bin/sh\n"
                            "for a; do case \"$a\" in *.cpp) grep -q '^namespace k' \"$a\" && "
                            "exit 1;; esac; done\n"
                            "exec c++ \"$@\"\n";
  }
  fs::permissions(picky, fs::perms::owner_all);
  EXPECT_EQ(run_children(1, {"THUNDER_CACHE_DIR=" + dir.string(), "CXX=" + picky.string(),
                             "CHILD_SHAPES=3", "EXPECT_BUILT=4", "EXPECT_FUSED=1"}),
            std::vector<int>{0});
  EXPECT_EQ(files_ending(dir, ".so").size(), 4u);
  EXPECT_TRUE(files_ending(dir, ".tmp.so").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace thunder
