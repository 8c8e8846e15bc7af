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
int train_fsdp(const std::string& dir, td::ShardingStrategy strategy, double bucket_size_mb = 0,
               at::ScalarType dtype = at::kDouble) {
  td::ProcessGroup pg = td::init_process_group();
  const int rank = static_cast<int>(pg.rank());
  auto model = std::make_shared<Mlp>(100 + rank, dtype);  // fsdp starts from rank 0's values
  auto sharded = td::fsdp(model, pg, {.strategy = strategy, .bucket_size_mb = bucket_size_mb});
  auto jm = thunder::jit(sharded);
  auto [x, y] = batch(dtype);
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

// fsdp of the torch::nn MLP, unmodified: captured with its parameters
// gathered, trained on the shards; then one call under no_sync.
THUNDER_WORKER(torch_zero3) {
  td::ProcessGroup pg = td::init_process_group();
  TorchMlp model(100 + pg.rank());  // fsdp starts every rank from rank 0's
  auto sharded = td::fsdp(model, pg, {.strategy = td::ShardingStrategy::ZERO3});
  auto jm = thunder::jit(sharded);
  train_torch(jm, model, pg.rank(), pg.world_size());
  std::vector<at::Tensor> full;
  for (auto& [name, t] : sharded->full_parameters()) full.push_back(t);
  write_doubles(dir + "/params_" + std::to_string(pg.rank()) + ".bin", full);
  std::string shapes;
  for (const at::Tensor& p : model->parameters()) shapes += c10::str(p.sizes()) + " ";
  write_text(dir + "/shards_" + std::to_string(pg.rank()) + ".txt", shapes);
  if (pg.rank() == 0) {
    write_text(dir + "/forward.txt", thunder::last_traces(jm).back().str());
    write_text(dir + "/backward.txt", thunder::last_backward_traces(jm).back().str());
  }
  if (pg.collective_checks() != 1) return 11;
  if (thunder::cache_misses(jm) != 1) return 10;
  // no_sync on the torch module: its own entry, no collectives; at the exit
  // the shards' gradients are those of a synchronized call.
  auto [x, y] = batch();
  const int64_t part = kBatch / pg.world_size(), first = pg.rank() * part;
  auto take_shard_grads = [&] {
    std::vector<at::Tensor> out;
    for (at::Tensor p : model->parameters()) {
      out.push_back(p.grad().clone());
      p.mutable_grad().reset();
    }
    return out;
  };
  for (at::Tensor p : model->parameters()) p.mutable_grad().reset();
  jm(x.narrow(0, first, part), y.narrow(0, first, part)).backward();
  const std::vector<at::Tensor> synced = take_shard_grads();
  if (!communicates(jm)) return 16;  // the synced entry gathers and reduce-scatters
  {
    auto guard = td::no_sync(jm);
    jm(x.narrow(0, first, part), y.narrow(0, first, part)).backward();
    if (communicates(jm)) return 12;
    for (const at::Tensor& p : model->parameters())
      if (p.grad().defined()) return 13;
  }
  const std::vector<at::Tensor> accumulated = take_shard_grads();
  for (size_t i = 0; i < synced.size(); ++i)
    if (!at::allclose(accumulated[i], synced[i], 0, 1e-12)) return 14;
  return thunder::cache_misses(jm) == 2 && pg.collective_checks() == 2 ? 0 : 15;
}

// Rows [rank * rows, (rank + 1) * rows) of each tensor, zero-padded: what
// rank `rank` of `world` holds of it.
std::vector<at::Tensor> shards_of(const std::vector<at::Tensor>& whole, int64_t rank,
                                  int64_t world) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : whole) {
    const int64_t rows = (t.size(0) + world - 1) / world;
    std::vector<int64_t> shape = t.sizes().vec();
    shape[0] = rows * world;
    at::Tensor padded = at::zeros(shape, t.options());
    padded.narrow(0, 0, t.size(0)).copy_(t);
    out.push_back(padded.narrow(0, rank * rows, rows));
  }
  return out;
}

// no_sync on ZeRO-3: the first micro-batch accumulates unsharded gradients
// without communicating, the second is reduce-scattered as usual.
THUNDER_WORKER(fsdp_no_sync) {
  td::ProcessGroup pg = td::init_process_group();
  const int rank = static_cast<int>(pg.rank());
  auto model = std::make_shared<Mlp>(100);
  auto jm = thunder::jit(td::fsdp(model, pg, {.strategy = td::ShardingStrategy::ZERO3}));
  auto [x, y] = batch();
  const int64_t half = kBatch / pg.world_size(), quarter = half / 2;
  const int64_t first = rank * half;
  {
    auto guard = td::no_sync(jm);
    jm(x.narrow(0, first, quarter), y.narrow(0, first, quarter)).backward();
    // Its own compiled entry: the whole parameters gathered at the guard's
    // entry are read directly, and nothing is communicated.
    if (communicates(jm)) return 11;
    if (thunder::last_prologue_trace(jm).str().find("'fsdp.sync_gradients', False") ==
        std::string::npos)
      return 12;
    // The shards' gradients wait for the guard's exit.
    for (const at::Tensor& p : model->parameters())
      if (p.grad().defined()) return 13;
  }
  // Each rank now holds its rows of the averaged first micro-batch.
  write_doubles(dir + "/after_guard_" + std::to_string(rank) + ".bin", grads(*model));
  jm(x.narrow(0, first + quarter, quarter), y.narrow(0, first + quarter, quarter)).backward();
  if (thunder::last_backward_traces(jm).back().str().find("prims.reduce_scatter") ==
      std::string::npos)
    return 14;
  if (thunder::cache_misses(jm) != 2) return 15;
  write_doubles(dir + "/grads_" + std::to_string(rank) + ".bin", grads(*model));
  {  // A second guard reuses its entry (the same leaves, gathered again).
    auto guard = td::no_sync(jm);
    jm(x.narrow(0, first, quarter), y.narrow(0, first, quarter)).backward();
  }
  if (thunder::cache_misses(jm) != 2) return 16;
  return 0;
}

THUNDER_WORKER(zero2) { return train_fsdp(dir, td::ShardingStrategy::ZERO2); }
THUNDER_WORKER(zero2_bucketed) { return train_fsdp(dir, td::ShardingStrategy::ZERO2, 25); }
THUNDER_WORKER(zero3) { return train_fsdp(dir, td::ShardingStrategy::ZERO3); }
// 400 bytes: w2's and b2's padded gradients (320 + 32 bytes) share a bucket,
// b1's and w1's go alone.
THUNDER_WORKER(zero2_small_buckets) {
  return train_fsdp(dir, td::ShardingStrategy::ZERO2, 400.0 / (1 << 20));
}
THUNDER_WORKER(zero3_f32) { return train_fsdp(dir, td::ShardingStrategy::ZERO3, 25, at::kFloat); }

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
  auto small = launch("zero2_small_buckets", 2);
  expect_ok(small);
  auto single = launch("zero2", 2);
  expect_ok(single);
  const std::string bwd = read_text(bucketed.dir + "/backward.txt");
  std::cout << bwd;
  EXPECT_EQ(count(bwd, "= prims.reduce_scatter("), 1) << bwd;
  EXPECT_NE(bwd.find("prims.cat("), std::string::npos) << bwd;
  const std::string small_bwd = read_text(small.dir + "/backward.txt");
  EXPECT_EQ(count(small_bwd, "= prims.reduce_scatter("), 3) << small_bwd;
  expect_same_parameters(bucketed, single);
  expect_same_parameters(small, single);
  expect_matches_one_process(bucketed);
}

// float32, ZeRO-3 with a bucket: within 1e-5 of one process (the half
// batches round differently), bitwise-equal replicas.
TEST(Fsdp, Float32Zero3MatchesOneProcessWithin1e5) {
  auto r = launch("zero3_f32", 2);
  expect_ok(r);
  expect_ranks_match_one_process(r, reference_parameters(at::kFloat),
                                 Mlp(100, at::kFloat).parameters(), 1e-5, 1e-3);
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
  try {
    auto guard = td::no_sync(jp);
    ADD_FAILURE() << "expected thunder::Error";
  } catch (const thunder::Error& e) {
    EXPECT_NE(std::string(e.what()).find("distributed.no_sync: the jitted callable was not made "
                                         "from a ddp(...) or fsdp(...) model"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(at::allclose(jm(x, y).aten(), jp(x, y).aten(), 1e-12, 1e-12));
  std::filesystem::remove(store);
}

// fsdp of an unmodified torch::nn module: the same oracle as the thunder MLP.
TEST(Fsdp, TorchModuleOnTwoRanksMatchesOneProcess) {
  auto r = launch("torch_zero3", 2);
  expect_ok(r);
  TorchMlp model(100);
  auto jm = thunder::jit(model);
  train_torch(jm, model, 0, 1);
  expect_ranks_match_one_process(r, model->parameters(), TorchMlp(100)->parameters(), 1e-12, 1e-3);
  for (int rank = 0; rank < 2; ++rank)  // fc1: 10 rows, fc2: 3 (padded)
    EXPECT_EQ(read_text(r.dir + "/shards_" + std::to_string(rank) + ".txt"),
              "[5, 6] [5] [2, 10] [2] ")
        << "rank " << rank;
  const std::string fwd = read_text(r.dir + "/forward.txt");
  const std::string bwd = read_text(r.dir + "/backward.txt");
  EXPECT_EQ(count(fwd, "= prims.all_gather("), 4) << fwd;
  // The default 25 MiB bucket: one reduce-scatter of all four gradients.
  EXPECT_EQ(count(bwd, "= prims.reduce_scatter("), 1) << bwd;
  const size_t at = bwd.find("= prims.reduce_scatter(");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(bwd.substr(at, bwd.find('\n', at) - at).find("\"cpu f64[1, 57]\""), std::string::npos)
      << bwd;
}

// Two micro-batches of a quarter each, the first under no_sync: the shards'
// gradients equal those of one larger batch (twice the mean's gradient).
TEST(Fsdp, NoSyncAccumulationEqualsALargerBatch) {
  auto r = launch("fsdp_no_sync", 2);
  expect_ok(r);
  auto [x, y] = batch();
  auto model = std::make_shared<Mlp>(100);
  auto jm = thunder::jit(model);
  jm(x, y).backward();
  std::vector<at::Tensor> twice;
  for (const at::Tensor& g : grads(*model)) twice.push_back(g * 2);
  // The first micro-batch alone (rows 0-1 on rank 0, 4-5 on rank 1), averaged.
  auto first = std::make_shared<Mlp>(100);
  auto jf = thunder::jit(first);
  jf(x.narrow(0, 0, 2), y.narrow(0, 0, 2)).backward();
  jf(x.narrow(0, 4, 2), y.narrow(0, 4, 2)).backward();
  std::vector<at::Tensor> first_avg;
  for (const at::Tensor& g : grads(*first)) first_avg.push_back(g / 2);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string k = std::to_string(rank);
    write_doubles(r.dir + "/reference_" + k + ".bin", shards_of(twice, rank, 2));
    write_doubles(r.dir + "/first_" + k + ".bin", shards_of(first_avg, rank, 2));
    expect_close(read_doubles(r.dir + "/grads_" + k + ".bin"),
                 read_doubles(r.dir + "/reference_" + k + ".bin"), 1e-12,
                 "accumulated shard gradients vs one larger batch");
    expect_close(read_doubles(r.dir + "/after_guard_" + k + ".bin"),
                 read_doubles(r.dir + "/first_" + k + ".bin"), 1e-12,
                 "shard gradients at the guard's exit vs the first micro-batch's average");
  }
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
