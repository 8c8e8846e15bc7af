// The ranks compare a new cache entry's collectives before its first call
// (runtime/collective_check.h): ranks that compiled different collective
// sequences all get thunder::Error instead of Gloo aborting the process;
// matching ranks compare once per entry; a rank that compiled while the
// other reused an entry fails after the group's timeout with a clear cause.
#include <gtest/gtest.h>
#include <thunder/distributed.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>

#include "launch.h"

namespace td = thunder::distributed;
namespace F = thunder::nn::functional;
using thunder_test::launch;
using thunder_test::read_doubles;
using thunder_test::read_text;
using thunder_test::write_doubles;
using thunder_test::write_text;

namespace {

constexpr int64_t kRows = 4, kIn = 6, kHidden = 10, kOut = 3;

// A float64 MLP whose second layer's bias is used only while `use_b2` is on
// (read at trace time: a rank-dependent branch, not part of the guard).
struct Mlp : thunder::nn::Module {
  thunder::Tensor w1, b1, w2, b2;
  bool use_b2 = true;
  Mlp() {
    at::manual_seed(100);
    auto o = at::TensorOptions().dtype(at::kDouble);
    w1 = register_parameter("w1", at::randn({kHidden, kIn}, o) * 0.4);
    b1 = register_parameter("b1", at::randn({kHidden}, o) * 0.1);
    w2 = register_parameter("w2", at::randn({kOut, kHidden}, o) * 0.4);
    b2 = register_parameter("b2", at::randn({kOut}, o) * 0.1);
  }
  thunder::Tensor forward(const thunder::Tensor& x, const thunder::Tensor& y) const {
    thunder::Tensor h = thunder::tanh(F::linear(x, w1, b1));
    thunder::Tensor d = (use_b2 ? F::linear(h, w2, b2) : F::linear(h, w2)) - y;
    return (d * d).mean();
  }
};

std::pair<at::Tensor, at::Tensor> batch(int64_t rank, int64_t rows = kRows) {
  at::manual_seed(7 + rank);
  auto o = at::TensorOptions().dtype(at::kDouble);
  return {at::randn({rows, kIn}, o), at::randn({rows, kOut}, o)};
}

std::string rank_file(const std::string& dir, const char* what, int64_t rank) {
  return dir + "/" + what + "_" + std::to_string(rank) + ".txt";
}

// The group still works after the failed check (nothing was half-issued).
bool group_still_works(const td::ProcessGroup& pg) {
  at::Tensor t = at::full({2}, 1.0, at::kDouble);
  pg.all_reduce_sum(t);
  return t.equal(at::full({2}, static_cast<double>(pg.world_size()), at::kDouble));
}

void expect_ok(const thunder_test::Launch& r) {
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace

// ---- (a) different bucket sizes: the same parameters, different packs ----

// Rank 0 packs the four gradients into one all_reduce of 103 values; rank 1
// all-reduces each alone. ddp's parameter check passes (same parameters);
// without the comparison Gloo would pair f64[103] with f64[3] and abort.
THUNDER_WORKER(different_buckets) {
  td::ProcessGroup pg = td::init_process_group();
  const int64_t rank = pg.rank();
  auto model = std::make_shared<Mlp>();
  auto jm = thunder::jit(td::ddp(model, pg, {.bucket_size_mb = rank == 0 ? 25.0 : 0.0}));
  auto [x, y] = batch(rank);
  try {
    jm(x, y).backward();
    return 20;  // must not get here
  } catch (const thunder::Error& e) {
    write_text(rank_file(dir, "error", rank), e.what());
  }
  return group_still_works(pg) ? 0 : 22;
}

TEST(CollectiveCheck, DifferentBucketSizesThrowOnEveryRank) {
  auto r = launch("different_buckets", 2);
  expect_ok(r);
  const std::string e0 = read_text(rank_file(r.dir, "error", 0));
  const std::string e1 = read_text(rank_file(r.dir, "error", 1));
  std::cout << "rank 0: " << e0 << "\nrank 1: " << e1 << "\n";
  for (const std::string& e : {e0, e1}) {
    EXPECT_NE(e.find("thunder::distributed: the ranks compiled different collective sequences "
                     "for this call (rank 0: 1 collectives"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("every rank must run the same program on the same shapes"), std::string::npos)
        << e;
  }
  EXPECT_NE(e0.find("this rank (0 of 2): 1 collectives"), std::string::npos) << e0;
  EXPECT_NE(e0.find("rank 1: 4 collectives"), std::string::npos) << e0;
  EXPECT_NE(e1.find("this rank (1 of 2): 4 collectives"), std::string::npos) << e1;
  // Rank 1 names the first collective where it leaves rank 0's sequence.
  EXPECT_NE(e1.find("First difference, collective #0: rank 0 issues prims.all_reduce(cpu "
                    "f64[103], 'sum', group=0), this rank prims.all_reduce(cpu f64[3], 'sum', "
                    "group=0)"),
            std::string::npos)
      << e1;
}

// ---- (a') a rank-dependent branch; then the same program: the callable recovers ----

// Rank 1's first forward leaves out b2, so its backward has no b2 gradient
// to reduce (3 all_reduces against rank 0's 4, the first of another shape).
// The failed entry is not cached: once rank 1 runs the same program, the
// next call compiles and compares again, and training proceeds in lockstep.
THUNDER_WORKER(rank_branch) {
  td::ProcessGroup pg = td::init_process_group();
  const int64_t rank = pg.rank();
  auto model = std::make_shared<Mlp>();
  auto jm = thunder::jit(td::ddp(model, pg, {.bucket_size_mb = 0}));
  auto [x, y] = batch(rank);
  model->use_b2 = rank == 0;
  try {
    jm(x, y).backward();
    return 20;
  } catch (const thunder::Error& e) {
    write_text(rank_file(dir, "error", rank), e.what());
  }
  if (pg.collective_checks() != 1) return 21;
  model->use_b2 = true;
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-2));
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    jm(x, y).backward();
    opt.step();
  }
  write_text(rank_file(dir, "counts", rank), std::to_string(pg.collective_checks()) + " " +
                                                 std::to_string(thunder::cache_misses(jm)) + " " +
                                                 std::to_string(thunder::cache_hits(jm)));
  write_doubles(dir + "/params_" + std::to_string(rank) + ".bin", model->parameters());
  return 0;
}

TEST(CollectiveCheck, RankDependentBranchThrowsThenTheSameProgramTrains) {
  auto r = launch("rank_branch", 2);
  expect_ok(r);
  const std::string e0 = read_text(rank_file(r.dir, "error", 0));
  const std::string e1 = read_text(rank_file(r.dir, "error", 1));
  std::cout << "rank 0: " << e0 << "\nrank 1: " << e1 << "\n";
  for (const std::string& e : {e0, e1})
    EXPECT_NE(e.find("the ranks compiled different collective sequences for this call (rank 0: "
                     "4 collectives"),
              std::string::npos)
        << e;
  EXPECT_NE(e1.find("this rank (1 of 2): 3 collectives"), std::string::npos) << e1;
  // Rank 0's backward reduces b2's gradient (f64[3]) first; rank 1's, w2's.
  EXPECT_NE(e1.find("First difference, collective #0: rank 0 issues prims.all_reduce(cpu f64[3], "
                    "'sum', group=0), this rank prims.all_reduce(cpu f64[3, 10], 'sum', group=0)"),
            std::string::npos)
      << e1;
  // After the error: one more compile and comparison each (2 in all), then
  // two cache hits that compare nothing; the replicas are bitwise equal.
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(read_text(rank_file(r.dir, "counts", rank)), "2 2 2") << rank;
  auto p0 = read_doubles(r.dir + "/params_0.bin"), p1 = read_doubles(r.dir + "/params_1.bin");
  ASSERT_EQ(p0.size(), static_cast<size_t>(kHidden * kIn + kHidden + kOut * kHidden + kOut));
  ASSERT_EQ(p0.size(), p1.size());
  EXPECT_EQ(std::memcmp(p0.data(), p1.data(), p0.size() * sizeof(double)), 0);
}

// ---- (b, c) the same program: one comparison per compiled entry ----

// Different batch sizes on the ranks are fine (the gradients have the
// parameters' shapes); hits compare nothing; the no_sync entry, which has
// no collectives, is compared too (a rank that skipped communication would
// be seen).
THUNDER_WORKER(once_per_entry) {
  td::ProcessGroup pg = td::init_process_group();
  const int64_t rank = pg.rank();
  auto model = std::make_shared<Mlp>();
  auto jm = thunder::jit(td::ddp(model, pg));
  auto [x, y] = batch(rank, rank == 0 ? 4 : 6);
  std::string counts;
  for (int step = 0; step < 3; ++step) {
    jm(x, y).backward();
    counts += std::to_string(pg.collective_checks()) + " ";
  }
  {
    auto guard = td::no_sync(jm);
    jm(x, y).backward();
    jm(x, y).backward();
    counts += std::to_string(pg.collective_checks()) + " ";
  }
  jm(x, y).backward();
  counts += std::to_string(pg.collective_checks());
  write_text(rank_file(dir, "counts", rank), counts);
  return 0;
}

TEST(CollectiveCheck, ComparesOncePerCompiledEntry) {
  auto r = launch("once_per_entry", 2);
  expect_ok(r);
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(read_text(rank_file(r.dir, "counts", rank)), "1 1 1 2 2") << rank;
}

// ---- a rank that compiles while the other reuses an entry ----

// Rank 1's second call has another batch size (a new entry, compared);
// rank 0's is a hit (nothing compared) whose backward all-reduces. Neither
// hangs or aborts: rank 1's comparison and rank 0's wait both fail after
// the group's timeout (10 s here) with thunder::Error.
THUNDER_WORKER(hit_and_miss) {
  td::ProcessGroup pg = td::init_process_group({.timeout_s = 10});
  const int64_t rank = pg.rank();
  auto model = std::make_shared<Mlp>();
  auto jm = thunder::jit(td::ddp(model, pg));
  auto [x, y] = batch(rank);
  jm(x, y).backward();
  pg.barrier();  // both compiled the first entry
  auto [x2, y2] = batch(rank, rank == 0 ? kRows : kRows + 2);
  try {
    jm(x2, y2).backward();
    return 20;
  } catch (const thunder::Error& e) {
    write_text(rank_file(dir, "error", rank), e.what());
  }
  // Rank 0 serves the store: it stays until rank 1 has its own error.
  if (rank == 0)
    for (int i = 0; i < 600 && !std::filesystem::exists(rank_file(dir, "error", 1)); ++i)
      usleep(100 * 1000);
  return 0;
}

TEST(CollectiveCheck, RankThatCompilesWhileTheOtherHitsFailsAfterTheTimeout) {
  auto r = launch("hit_and_miss", 2);
  expect_ok(r);
  const std::string e0 = read_text(rank_file(r.dir, "error", 0));
  const std::string e1 = read_text(rank_file(r.dir, "error", 1));
  std::cout << "rank 0: " << e0 << "\nrank 1: " << e1 << "\n";
  EXPECT_NE(e1.find("thunder::distributed: comparing the collectives of a new cache entry with "
                    "the other ranks failed: another rank did not compile a new entry for "
                    "this call (its shapes or program differ"),
            std::string::npos)
      << e1;
  EXPECT_NE(e0.find("prims.wait: the collective on process group 0 failed on rank 0 of 2"),
            std::string::npos)
      << e0;
  EXPECT_LT(r.seconds, 90) << r.output;
}

// ---- a rank that exits before the first call ----

THUNDER_WORKER(exit_before_first_call) {
  td::ProcessGroup pg = td::init_process_group({.timeout_s = 100});
  auto model = std::make_shared<Mlp>();
  auto jm = thunder::jit(td::ddp(model, pg));
  if (pg.rank() == 1) return 0;
  auto [x, y] = batch(0);
  jm(x, y).backward();  // rank 0: the comparison must throw thunder::Error (exit code 3)
  return 20;
}

// Gloo sees the peer gone: rank 0 fails at once, not after the 100 s timeout.
TEST(CollectiveCheck, RankThatExitsBeforeTheFirstCallFailsTheComparisonAtOnce) {
  auto r = launch("exit_before_first_call", 2, 200);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("rank 0: thunder::Error: thunder::distributed: comparing the "
                          "collectives of a new cache entry with the other ranks failed"),
            std::string::npos)
      << r.output;
  EXPECT_LT(r.seconds, 60) << r.output;
}
