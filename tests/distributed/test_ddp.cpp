// DDP end to end on 2 ranks over loopback Gloo: the arithmetic oracle (2
// ranks on B/2 each == 1 process on B, float64, AdamW), bitwise-equal
// replicas, no_sync accumulation, where the collectives land in the backward
// trace, and a rank that exits early.
#include <gtest/gtest.h>
#include <thunder/distributed.h>
#include <thunder/thunder.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "launch.h"
#include "oracle_mlp.h"

namespace td = thunder::distributed;
namespace F = thunder::nn::functional;
using namespace thunder_test;  // NOLINT: the shared oracle (oracle_mlp.h)
using thunder_test::launch;
using thunder_test::read_doubles;
using thunder_test::read_text;
using thunder_test::write_doubles;
using thunder_test::write_text;

// ---- oracle: 2 ranks x B/2 against 1 process x B ----

// Trains the ddp MLP on this rank's half of the batch; writes the final
// parameters and rank 0's last forward and backward traces.
int train_ddp(const std::string& dir, double bucket_size_mb, bool schedule_collectives = true,
              at::ScalarType dtype = at::kDouble) {
  td::ProcessGroup pg = td::init_process_group();
  const int rank = static_cast<int>(pg.rank());
  // Different initial values on each rank: ddp must start every replica from rank 0's.
  auto model = std::make_shared<Mlp>(100 + rank, dtype);
  auto jm = thunder::jit(td::ddp(model, pg, {.bucket_size_mb = bucket_size_mb}),
                         {.schedule_collectives = schedule_collectives});
  auto [x, y] = batch(dtype);
  const int64_t half = kBatch / pg.world_size();
  at::Tensor xr = x.narrow(0, rank * half, half), yr = y.narrow(0, rank * half, half);
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(kLr));
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    jm(xr, yr).backward();
    opt.step();
  }
  write_doubles(dir + "/params_" + std::to_string(rank) + ".bin", model->parameters());
  if (rank == 0) {
    write_text(dir + "/backward.txt", thunder::last_backward_traces(jm).back().str());
    write_text(dir + "/forward.txt", thunder::last_traces(jm).back().str());
  }
  if (pg.collective_checks() != 1) return 11;  // the ranks compared the one entry once
  return thunder::cache_misses(jm) == 1 ? 0 : 10;
}

THUNDER_WORKER(torch_oracle) {
  td::ProcessGroup pg = td::init_process_group();
  TorchMlp model(100 + pg.rank());  // ddp starts every rank from rank 0's
  auto jm = thunder::jit(td::ddp(model, pg));
  train_torch(jm, model, pg.rank(), pg.world_size());
  write_doubles(dir + "/params_" + std::to_string(pg.rank()) + ".bin", model->parameters());
  if (pg.rank() == 0)
    write_text(dir + "/backward.txt", thunder::last_backward_traces(jm).back().str());
  if (pg.collective_checks() != 1) return 11;
  return thunder::cache_misses(jm) == 1 ? 0 : 10;
}

THUNDER_WORKER(oracle) { return train_ddp(dir, 25); }
THUNDER_WORKER(oracle_unbucketed) { return train_ddp(dir, 0); }
// 0.0005 MiB = 524 bytes: the b2, w2 and b1 gradients (24 + 240 + 80 bytes)
// share a bucket; w1's (480 bytes) does not fit and goes alone.
THUNDER_WORKER(oracle_small_buckets) { return train_ddp(dir, 0.0005); }
THUNDER_WORKER(oracle_unscheduled) { return train_ddp(dir, 0, false); }
THUNDER_WORKER(oracle_f32) { return train_ddp(dir, 25, true, at::kFloat); }

TEST(Ddp, TwoRanksOnHalfBatchesMatchOneProcessOnTheBatch) {
  auto r = launch("oracle", 2);
  expect_ok(r);
  // The reference: one process, the whole batch, rank 0's initial parameters.
  expect_ranks_match_one_process(r, reference_parameters(), Mlp(100).parameters(), 1e-12, 1e-3);
}

// In float32: the half batches' gradients round differently from the whole
// batch's, so the ranks agree with one process to 1e-5, not bit for bit.
TEST(Ddp, Float32TwoRanksMatchOneProcessWithin1e5) {
  auto r = launch("oracle_f32", 2);
  expect_ok(r);
  expect_ranks_match_one_process(r, reference_parameters(at::kFloat),
                                 Mlp(100, at::kFloat).parameters(), 1e-5, 1e-3);
}

// ddp of an unmodified torch::nn module: captured, its parameters
// synchronized the same way (one 25 MiB bucket), the same oracle.
TEST(Ddp, TorchModuleOnTwoRanksMatchesOneProcess) {
  auto r = launch("torch_oracle", 2);
  expect_ok(r);
  TorchMlp model(100);
  auto jm = thunder::jit(model);
  train_torch(jm, model, 0, 1);
  expect_ranks_match_one_process(r, model->parameters(), TorchMlp(100)->parameters(), 1e-12, 1e-3);
  const std::string bwd = read_text(r.dir + "/backward.txt");
  EXPECT_EQ(count(bwd, "= prims.all_reduce("), 1) << bwd;
}

// Where the collectives land without buckets: the forward synchronizes each
// parameter; the backward scales each gradient by 1/world, all-reduces it as
// soon as it is produced, and waits for every reduction only at the end,
// after the remaining backward computation.
TEST(Ddp, BackwardTraceAllReducesEachGradientAndWaitsLate) {
  auto r = launch("oracle_unbucketed", 2);
  expect_ok(r);
  const std::string fwd = read_text(r.dir + "/forward.txt");
  const std::string bwd = read_text(r.dir + "/backward.txt");
  std::cout << "---- forward (rank 0) ----\n" << fwd << "---- backward (rank 0) ----\n" << bwd;
  for (const char* p : {"t_module_w1", "t_module_b1", "t_module_w2", "t_module_b2"})
    EXPECT_NE(fwd.find(std::string("prims.synchronize(") + p + ", 0, 2)"), std::string::npos) << p;
  // Statement lines of the backward, top level only (no "#" comment lines).
  std::vector<std::string> lines;
  std::istringstream in(bwd);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("  ", 0) == 0 && l.find('#') != 2 && l.rfind("    ", 0) != 0) lines.push_back(l);
  std::vector<size_t> reduces, waits;
  size_t last_compute = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("prims.all_reduce(") != std::string::npos) {
      reduces.push_back(i);
      EXPECT_NE(lines[i].find(", 'sum', 0)"), std::string::npos) << lines[i];
    } else if (lines[i].find("prims.wait(") != std::string::npos) {
      waits.push_back(i);
    } else if (lines[i].find(" = ") != std::string::npos) {
      last_compute = i;
    }
  }
  ASSERT_EQ(reduces.size(), 4u) << bwd;
  ASSERT_EQ(waits.size(), 4u) << bwd;
  // The first reduction is issued before the backward's last computation
  // (it overlaps it), and every wait comes after all computation.
  EXPECT_LT(reduces.front(), last_compute) << bwd;
  for (size_t w : waits) EXPECT_GT(w, last_compute) << bwd;
  for (size_t w : waits) EXPECT_GT(w, reduces.back()) << bwd;
  // The 1/world scale: a division by 2.0 in the backward.
  EXPECT_NE(bwd.find(", 2.0)"), std::string::npos) << bwd;
  // The four returned gradients are the waits' results.
  const std::string ret = bwd.substr(bwd.rfind("return"));
  for (size_t w : waits) {
    std::string name = lines[w].substr(2, lines[w].find(" = ") - 2);
    EXPECT_NE(ret.find(name), std::string::npos) << name << " not returned: " << ret;
  }
}

// With 25 MiB buckets the four gradients (824 bytes) share one all_reduce:
// packed (each divided by the world size, flattened, concatenated, in
// fusion regions) after the last gradient is produced; the wait comes after
// all computation, then slices of the result are the four gradients.
TEST(Ddp, BackwardTraceReducesOneBucket) {
  auto r = launch("oracle", 2);
  expect_ok(r);
  const std::string bwd = read_text(r.dir + "/backward.txt");
  std::cout << bwd;
  EXPECT_EQ(count(bwd, "= prims.all_reduce("), 1) << bwd;
  EXPECT_EQ(count(bwd, "= prims.wait("), 1) << bwd;
  const size_t reduce = bwd.find("= prims.all_reduce("), wait = bwd.find("= prims.wait(");
  const size_t cat = bwd.find("prims.cat(");
  ASSERT_NE(cat, std::string::npos) << bwd;
  EXPECT_LT(cat, reduce) << bwd;
  EXPECT_LT(reduce, wait) << bwd;
  // The reduced pack holds all 103 values. Each gradient is scaled by 1/2 as
  // without buckets (four divisions). The weight gradients' scales and the
  // cat are one fusion region (the pack is written in one pass, and reduced
  // as it is); the biases' are scaled in the regions that sum them over the
  // batch.
  const std::string reduce_line = bwd.substr(reduce, bwd.find('\n', reduce) - reduce);
  EXPECT_NE(reduce_line.find("\"cpu f64[103]\""), std::string::npos) << reduce_line;
  EXPECT_EQ(count(bwd, ", 2.0)"), 4) << bwd;
  const size_t region = bwd.rfind("cppFusion", cat);
  ASSERT_NE(region, std::string::npos) << bwd;
  const size_t region_line = bwd.rfind('\n', region) + 1;
  const std::string region_text = bwd.substr(region_line, cat - region_line);
  EXPECT_EQ(count(region_text, "\n  ["), 0) << region_text;  // no statement between them
  EXPECT_EQ(count(region_text, "= prims.div("), 2) << region_text;
  EXPECT_EQ(bwd.substr(bwd.rfind('\n', cat) + 1, 6), "    # ") << bwd;  // the cat is fused
  const size_t name_at = region_line + 3;  // "  [t62] = cppFusion2(...)"
  const std::string pack = bwd.substr(name_at, bwd.find(']', name_at) - name_at);
  EXPECT_NE(reduce_line.find("prims.all_reduce(" + pack + ", 'sum', 0)"), std::string::npos)
      << reduce_line;
  // Four slices of the wait's result, after it.
  EXPECT_EQ(count(bwd.substr(wait), "prims.slice("), 4) << bwd;
  EXPECT_EQ(count(bwd.substr(0, wait), "prims.slice("), 0) << bwd;
}

// Buckets change how gradients travel, not their values: 0 (one all_reduce
// per parameter), 524 bytes (two) and 25 MiB (one) give bitwise-equal
// parameters.
TEST(Ddp, BucketSizesGiveBitwiseEqualParameters) {
  auto none = launch("oracle_unbucketed", 2);
  expect_ok(none);
  auto small = launch("oracle_small_buckets", 2);
  expect_ok(small);
  auto one = launch("oracle", 2);
  expect_ok(one);
  EXPECT_EQ(count(read_text(none.dir + "/backward.txt"), "= prims.all_reduce("), 4);
  EXPECT_EQ(count(read_text(small.dir + "/backward.txt"), "= prims.all_reduce("), 2);
  EXPECT_EQ(count(read_text(one.dir + "/backward.txt"), "= prims.all_reduce("), 1);
  auto p_none = read_doubles(none.dir + "/params_0.bin");
  for (const auto* other : {&small, &one}) {
    auto p = read_doubles(other->dir + "/params_0.bin");
    ASSERT_EQ(p.size(), p_none.size());
    EXPECT_EQ(std::memcmp(p.data(), p_none.data(), p.size() * sizeof(double)), 0) << other->dir;
    auto p1 = read_doubles(other->dir + "/params_1.bin");
    EXPECT_EQ(std::memcmp(p.data(), p1.data(), p.size() * sizeof(double)), 0) << other->dir;
  }
}

// ---- no_sync: two micro-batches accumulated == one larger batch ----

THUNDER_WORKER(no_sync) {
  td::ProcessGroup pg = td::init_process_group();
  const int rank = static_cast<int>(pg.rank());
  auto model = std::make_shared<Mlp>(100);
  auto jm = thunder::jit(td::ddp(model, pg));
  auto [x, y] = batch();
  const int64_t half = kBatch / pg.world_size(), quarter = half / 2;
  const int64_t first = rank * half;
  {
    auto guard = td::no_sync(jm);
    jm(x.narrow(0, first, quarter), y.narrow(0, first, quarter)).backward();
    // Inside the guard: its own compiled entry, with no communication.
    if (communicates(jm)) return 11;
    if (thunder::last_prologue_trace(jm).str().find("'ddp.sync_gradients', False") ==
        std::string::npos)
      return 13;
    // Not communicated yet: this rank's gradient is its own micro-batch's alone.
    write_doubles(dir + "/local_" + std::to_string(rank) + ".bin", grads(*model));
  }
  jm(x.narrow(0, first + quarter, quarter), y.narrow(0, first + quarter, quarter)).backward();
  if (thunder::last_backward_traces(jm).back().str().find("prims.all_reduce") == std::string::npos)
    return 14;
  if (thunder::cache_misses(jm) != 2) return 15;
  write_doubles(dir + "/grads_" + std::to_string(rank) + ".bin", grads(*model));
  return 0;
}

TEST(Ddp, NoSyncAccumulationEqualsALargerBatch) {
  auto r = launch("no_sync", 2);
  expect_ok(r);
  auto [x, y] = batch();
  // Two micro-batches of means over kBatch/4 rows, averaged over 2 ranks:
  // twice the gradient of the mean over the whole batch.
  auto model = std::make_shared<Mlp>(100);
  auto jm = thunder::jit(model);
  jm(x, y).backward();
  std::vector<at::Tensor> twice;
  for (const at::Tensor& g : grads(*model)) twice.push_back(g * 2);
  write_doubles(r.dir + "/reference.bin", twice);
  auto ref = read_doubles(r.dir + "/reference.bin");
  auto g0 = read_doubles(r.dir + "/grads_0.bin"), g1 = read_doubles(r.dir + "/grads_1.bin");
  expect_close(g0, ref, 1e-12, "rank 0 accumulated vs one larger batch");
  ASSERT_EQ(g0.size(), g1.size());
  EXPECT_EQ(std::memcmp(g0.data(), g1.data(), g0.size() * sizeof(double)), 0);
  // Inside no_sync the ranks' gradients were their own (they differ).
  auto l0 = read_doubles(r.dir + "/local_0.bin"), l1 = read_doubles(r.dir + "/local_1.bin");
  ASSERT_EQ(l0.size(), l1.size());
  EXPECT_NE(std::memcmp(l0.data(), l1.data(), l0.size() * sizeof(double)), 0);
}

// Without collective scheduling each wait follows its all_reduce (nothing
// overlaps), and the parameters are the scheduled run's, bit for bit.
TEST(Ddp, UnscheduledCollectivesBlockAndGiveTheSameParameters) {
  auto r = launch("oracle_unscheduled", 2);
  expect_ok(r);
  auto scheduled = launch("oracle_unbucketed", 2);
  expect_ok(scheduled);
  expect_same_parameters(r, scheduled);
  const std::string bwd = read_text(r.dir + "/backward.txt");
  std::vector<std::string> lines;  // top-level statements, without del
  std::istringstream in(bwd);
  for (std::string l; std::getline(in, l);)
    if (l.find(" = ") != std::string::npos && l.rfind("    ", 0) != 0) lines.push_back(l);
  int reduces = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("prims.all_reduce(") == std::string::npos) continue;
    ++reduces;
    const std::string future = lines[i].substr(2, lines[i].find(" = ") - 2);
    ASSERT_LT(i + 1, lines.size()) << bwd;
    EXPECT_NE(lines[i + 1].find("prims.wait(" + future + ")"), std::string::npos) << bwd;
  }
  EXPECT_EQ(reduces, 4) << bwd;
}

// ---- a rank that exits early: the other fails clearly, within the timeout ----

// Both ranks first run one step, so that rank 0's second call is a cache hit
// (a rank that exits before the first call fails the first call's
// comparison instead: CollectiveCheck.RankThatExitsBeforeTheFirstCall...).
THUNDER_WORKER(early_exit) {
  td::ProcessGroup pg = td::init_process_group({.timeout_s = 20});
  auto model = std::make_shared<Mlp>(100);
  auto jm = thunder::jit(td::ddp(model, pg));
  auto [x, y] = batch();
  jm(x, y).backward();
  if (pg.rank() == 1) return 0;  // leaves before the second backward
  jm(x, y).backward();           // rank 0: must throw thunder::Error (exit code 3)
  return 20;
}

TEST(Ddp, RankThatExitsEarlyMakesTheOtherFailWithAClearError) {
  auto r = launch("early_exit", 2, 120);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 3) << r.output;
  // The wait of the second step's gradient all-reduce fails (Gloo sees the
  // peer gone), and says which group, which rank, and why.
  EXPECT_NE(r.output.find("rank 0: thunder::Error: prims.wait: the collective on process group 0 "
                          "failed on rank 0 of 2"),
            std::string::npos)
      << r.output;
  EXPECT_LT(r.seconds, 60) << r.output;
}

// ---- the launcher ----

THUNDER_WORKER(env) {
  const char* vars[] = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  std::string s;
  for (const char* v : vars)
    s += std::string(v) + "=" + (std::getenv(v) ? std::getenv(v) : "") + "\n";
  write_text(dir + "/env_" + std::getenv("RANK") + ".txt", s);
  td::ProcessGroup pg = td::init_process_group();
  at::Tensor t = at::full({3}, static_cast<double>(pg.rank() + 1), at::kDouble);
  pg.all_reduce_sum(t);
  return t.equal(at::full({3}, 3.0, at::kDouble)) ? 0 : 30;
}

TEST(ThunderRun, SetsTheEnvironmentOfEachRank) {
  auto r = launch("env", 2);
  expect_ok(r);
  for (int rank = 0; rank < 2; ++rank) {
    std::string e = read_text(r.dir + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_NE(e.find("RANK=" + std::to_string(rank) + "\n"), std::string::npos) << e;
    EXPECT_NE(e.find("LOCAL_RANK=" + std::to_string(rank) + "\n"), std::string::npos) << e;
    EXPECT_NE(e.find("WORLD_SIZE=2\n"), std::string::npos) << e;
    EXPECT_NE(e.find("MASTER_ADDR=127.0.0.1\n"), std::string::npos) << e;
    EXPECT_EQ(e.find("MASTER_PORT=\n"), std::string::npos) << e;
  }
}

THUNDER_WORKER(fail_rank1) {
  if (std::atoi(std::getenv("RANK")) == 1) return 7;
  sleep(100);  // thunder-run must stop this rank once rank 1 failed
  return 0;
}

TEST(ThunderRun, ForwardsTheFailingExitCodeAndStopsTheOthers) {
  auto r = launch("fail_rank1", 2, 60);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 7) << r.output;
  EXPECT_LT(r.seconds, 30) << r.output;
}
