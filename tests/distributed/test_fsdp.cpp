// FSDP (ZeRO-2 and ZeRO-3) end to end on 2 ranks over loopback Gloo: the
// arithmetic oracle (2 ranks on B/2 each == 1 process on B, float64, AdamW on
// the shards) with parameters whose dim 0 does not divide by 2 (padded
// shards), the shards the optimizer sees, where the gathers and
// reduce-scatters land in the traces, and what ZeRO-3 saves less.
#include <gtest/gtest.h>
#include <thunder/distributed.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "launch.h"
#include "oracle_mlp.h"

namespace td = thunder::distributed;
using namespace thunder_test;  // NOLINT: the shared oracle (oracle_mlp.h)

namespace {

// Trains the fsdp MLP on this rank's half of the batch; writes the gathered
// parameters, the shards' shapes, rank 0's traces and saved bytes.
int train_fsdp(const std::string& dir, td::ShardingStrategy strategy, double bucket_size_mb = 0) {
  td::ProcessGroup pg = td::init_process_group();
  const int rank = static_cast<int>(pg.rank());
  auto model = std::make_shared<Mlp>(100 + rank);  // fsdp starts from rank 0's values
  auto sharded = td::fsdp(model, pg, {.strategy = strategy, .bucket_size_mb = bucket_size_mb});
  auto jm = thunder::jit(sharded);
  auto [x, y] = batch();
  const int64_t half = kBatch / pg.world_size();
  at::Tensor xr = x.narrow(0, rank * half, half), yr = y.narrow(0, rank * half, half);
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(kLr));
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    jm(xr, yr).backward();
    opt.step();
  }
  std::vector<at::Tensor> full;
  for (auto& [name, t] : sharded->full_parameters()) full.push_back(t);
  write_doubles(dir + "/params_" + std::to_string(rank) + ".bin", full);
  std::string shapes;
  for (const at::Tensor& p : model->parameters()) shapes += c10::str(p.sizes()) + " ";
  write_text(dir + "/shards_" + std::to_string(rank) + ".txt", shapes);
  if (rank == 0) {
    write_text(dir + "/forward.txt", thunder::last_traces(jm).back().str());
    std::string backward;
    for (const auto& t : thunder::last_backward_traces(jm)) backward = t.str();
    write_text(dir + "/backward.txt", backward);
    int64_t saved = 0;
    for (const auto& t : thunder::last_saved_for_backward(jm)) saved += t.bytes;
    write_text(dir + "/saved.txt", std::to_string(saved));
  }
  if (pg.collective_checks() != 1) return 11;
  return thunder::cache_misses(jm) == 1 ? 0 : 10;
}

// Tied weights: one 7-row parameter used by both layers of an autoencoder
// (x -> tanh(x w^T + b) -> h w). FSDP gathers it once and both layers read
// the gathered value; its gradient sums both uses before the reduce-scatter.
struct TiedAutoencoder : thunder::nn::Module {
  thunder::Tensor w, b;
  explicit TiedAutoencoder(uint64_t seed) {
    at::manual_seed(seed);
    auto o = at::TensorOptions().dtype(at::kDouble);
    w = register_parameter("w", at::randn({7, kIn}, o) * 0.4);
    b = register_parameter("b", at::randn({7}, o) * 0.1);
  }
  thunder::Tensor forward(const thunder::Tensor& x, const thunder::Tensor&) const {
    namespace F = thunder::nn::functional;
    thunder::Tensor d = thunder::matmul(thunder::tanh(F::linear(x, w, b)), w) - x;
    return (d * d).mean();
  }
};

template <typename M>
std::vector<at::Tensor> train_tied(M& jm, const std::vector<at::Tensor>& params, int64_t rank,
                                   int64_t world) {
  auto [x, y] = batch();
  const int64_t part = kBatch / world;
  torch::optim::AdamW opt(params, torch::optim::AdamWOptions(kLr));
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    jm(x.narrow(0, rank * part, part), y.narrow(0, rank * part, part)).backward();
    opt.step();
  }
  return params;
}

THUNDER_WORKER(tied_zero3) {
  td::ProcessGroup pg = td::init_process_group();
  auto model = std::make_shared<TiedAutoencoder>(100 + pg.rank());
  auto sharded = td::fsdp(model, pg, {.strategy = td::ShardingStrategy::ZERO3});
  auto jm = thunder::jit(sharded);
  train_tied(jm, model->parameters(), pg.rank(), pg.world_size());
  std::vector<at::Tensor> full;
  for (auto& [name, t] : sharded->full_parameters()) full.push_back(t);
  write_doubles(dir + "/params_" + std::to_string(pg.rank()) + ".bin", full);
  return 0;
}

THUNDER_WORKER(zero2) { return train_fsdp(dir, td::ShardingStrategy::ZERO2); }
THUNDER_WORKER(zero2_bucketed) { return train_fsdp(dir, td::ShardingStrategy::ZERO2, 25); }
THUNDER_WORKER(zero3) { return train_fsdp(dir, td::ShardingStrategy::ZERO3); }

void expect_matches_one_process(const Launch& r) {
  expect_ranks_match_one_process(r, reference_parameters(), Mlp(100).parameters(), 1e-12, 1e-3);
  // Each rank's optimizer held shards: ceil(rows / 2) rows (w2 and b2 have
  // 3 rows: a padded second shard).
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(read_text(r.dir + "/shards_" + std::to_string(rank) + ".txt"),
              "[5, 6] [5] [2, 10] [2] ")
        << "rank " << rank;
}

}  // namespace

TEST(Fsdp, Zero2TwoRanksOnHalfBatchesMatchOneProcessOnTheBatch) {
  auto r = launch("zero2", 2);
  expect_ok(r);
  expect_matches_one_process(r);
}

TEST(Fsdp, Zero3TwoRanksOnHalfBatchesMatchOneProcessOnTheBatch) {
  auto r = launch("zero3", 2);
  expect_ok(r);
  expect_matches_one_process(r);
}

// 25 MiB buckets: one reduce_scatter of a [2, n] pack (row r: every
// gradient's r-th block) instead of four; the same parameters, bit for bit.
TEST(Fsdp, BucketedReduceScatterGivesBitwiseEqualParameters) {
  auto bucketed = launch("zero2_bucketed", 2);
  expect_ok(bucketed);
  auto single = launch("zero2", 2);
  expect_ok(single);
  const std::string bwd = read_text(bucketed.dir + "/backward.txt");
  std::cout << bwd;
  EXPECT_EQ(count(bwd, "= prims.reduce_scatter("), 1) << bwd;
  EXPECT_NE(bwd.find("prims.cat("), std::string::npos) << bwd;
  for (const char* f : {"/params_0.bin", "/params_1.bin"}) {
    auto a = read_doubles(bucketed.dir + f), b = read_doubles(single.dir + f);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << f;
  }
  expect_matches_one_process(bucketed);
}

// One process (a world of one, in this test's own process): fsdp's checks
// name the problem, and the wrapper trains like the plain model.
TEST(Fsdp, OneRankChecksAndTrainsLikeThePlainModel) {
  const std::string store =
      (std::filesystem::temp_directory_path() / ("thunder_fsdp_" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove(store);
  td::ProcessGroup pg = td::init_process_group({.rank = 0, .world_size = 1, .store_path = store});
  auto [x, y] = batch();
  try {
    (void)td::fsdp(std::make_shared<Mlp>(100), pg, {.bucket_size_mb = -1});
    ADD_FAILURE() << "expected thunder::Error";
  } catch (const thunder::Error& e) {
    EXPECT_NE(std::string(e.what()).find("distributed.fsdp: bucket_size_mb must be >= 0, got -1"),
              std::string::npos)
        << e.what();
  }
  auto model = std::make_shared<Mlp>(100);
  auto sharded = td::fsdp(model, pg);
  try {
    (void)(*sharded)(thunder::Tensor(x), thunder::Tensor(y));
    ADD_FAILURE() << "expected thunder::Error";
  } catch (const thunder::Error& e) {
    EXPECT_NE(std::string(e.what()).find("call it through thunder::jit"), std::string::npos)
        << e.what();
  }
  auto jm = thunder::jit(sharded);
  auto plain = std::make_shared<Mlp>(100);
  auto jp = thunder::jit(plain);
  EXPECT_TRUE(at::allclose(jm(x, y).aten(), jp(x, y).aten(), 1e-12, 1e-12));
  std::filesystem::remove(store);
}

TEST(Fsdp, TiedWeightsMatchOneProcess) {
  auto r = launch("tied_zero3", 2);
  expect_ok(r);
  auto model = std::make_shared<TiedAutoencoder>(100);
  auto jm = thunder::jit(model);
  expect_ranks_match_one_process(r, train_tied(jm, model->parameters(), 0, 1),
                                 TiedAutoencoder(100).parameters(), 1e-12, 1e-3);
}

// The forward gathers each parameter (prims.all_gather, then wait; w2 and b2
// sliced back to 3 rows), at most two gathers ahead of their waits; the
// backward reduce-scatters each padded, 1/2-scaled gradient and waits late.
// ZeRO-3 gathers again in the backward and saves less for it than ZeRO-2.
TEST(Fsdp, TracesShowGathersAndReduceScattersAndZero3SavesLess) {
  auto z2 = launch("zero2", 2);
  expect_ok(z2);
  auto z3 = launch("zero3", 2);
  expect_ok(z3);
  const std::string fwd = read_text(z2.dir + "/forward.txt");
  const std::string bwd2 = read_text(z2.dir + "/backward.txt");
  const std::string bwd3 = read_text(z3.dir + "/backward.txt");
  std::cout << "---- ZeRO-2 forward ----\n"
            << fwd << "---- ZeRO-2 backward ----\n"
            << bwd2 << "---- ZeRO-3 backward ----\n"
            << bwd3;
  for (const char* g :
       {"(t_module_w1, 0, 2)", "(t_module_b1, 0, 2)", "(t_module_w2, 0, 2)", "(t_module_b2, 0, 2)"})
    EXPECT_NE(fwd.find(std::string("prims.all_gather") + g), std::string::npos) << g;
  EXPECT_EQ(count(fwd, "= prims.wait("), 4) << fwd;
  EXPECT_EQ(count(fwd, "prims.slice("), 2) << fwd;  // w2 and b2: 4 rows gathered, 3 kept
  // In statement order, never more than two gathers issued and not waited for.
  int in_flight = 0, most = 0;
  std::istringstream lines(fwd);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("  #", 0) == 0 || l.rfind("    ", 0) == 0) continue;
    if (l.find("= prims.all_gather(") != std::string::npos) most = std::max(most, ++in_flight);
    if (l.find("= prims.wait(") != std::string::npos) --in_flight;
  }
  EXPECT_EQ(most, 2) << fwd;
  for (const std::string* bwd : {&bwd2, &bwd3}) {
    EXPECT_EQ(count(*bwd, "= prims.reduce_scatter("), 4) << *bwd;
    EXPECT_NE(bwd->find(", 'sum', 0, 2)"), std::string::npos) << *bwd;
  }
  // The backward reads w2 (the hidden layer's gradient), not w1 (x needs no
  // gradient): ZeRO-2 saves the gathered w2 (240 bytes), ZeRO-3 saves its
  // shard (160 bytes) and gathers it again.
  EXPECT_EQ(count(bwd2, "prims.all_gather("), 0) << bwd2;
  EXPECT_EQ(count(bwd3, "= prims.all_gather(t_module_w2, 0, 2)"), 1) << bwd3;
  const int64_t saved2 = std::stoll(read_text(z2.dir + "/saved.txt"));
  const int64_t saved3 = std::stoll(read_text(z3.dir + "/saved.txt"));
  std::cout << "saved for backward: ZeRO-2 " << saved2 << " bytes, ZeRO-3 " << saved3 << "\n";
  EXPECT_EQ(saved2 - saved3, 240 - 160);
}
