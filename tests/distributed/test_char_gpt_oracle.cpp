// The arithmetic oracle on transformers: the char-GPT (examples/char_gpt.h:
// embeddings, layer norms, attention, an MLP, cross-entropy; in float64) and
// the GPT block (examples/models.h: one block between a token embedding and
// a language-model loss) trained 5 AdamW steps on 2 ranks x B/2 with DDP,
// ZeRO-2 and ZeRO-3 must end with the parameters of one process on the
// whole batch B. Several of their parameters' dim 0 do not divide by 2 (the
// 37-token vocabulary): FSDP pads them.
#include <gtest/gtest.h>
#include <thunder/distributed.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "char_gpt.h"
#include "launch.h"
#include "models.h"
#include "oracle_mlp.h"

namespace td = thunder::distributed;
using namespace thunder_test;  // NOLINT: the shared oracle (oracle_mlp.h)

namespace {

constexpr int64_t kVocab = 37, kContext = 16, kDim = 32, kHeads = 2, kLayers = 2, kGptBatch = 8;

// In float64: in float32 the half-batch gradients round differently from the
// whole batch's, and AdamW's g / sqrt(v) turns a rounding difference in a
// near-zero gradient into a visible step (2.4e-4 after 5 steps, DDP included).
// The attention's key bias has an analytically zero gradient (softmax ignores
// a constant added to every key), so its float32 gradient is rounding noise
// that AdamW scales to whole steps: 3.7e-4 on the GPT block even against one
// process that averages the two halves' gradients exactly as the ranks do,
// while every other parameter agrees within 2.4e-7.
template <typename M>
std::shared_ptr<M> make_model(uint64_t seed) {
  at::manual_seed(seed);
  const caffe2::TypeMeta was = at::get_default_dtype();
  at::set_default_dtype(caffe2::TypeMeta::Make<double>());
  std::shared_ptr<M> m;
  if constexpr (std::is_same_v<M, thunder::models::CharGPT>)
    m = std::make_shared<M>(kVocab, kContext, kDim, kHeads, kLayers);
  else
    m = std::make_shared<M>(kVocab, kDim, kHeads);
  at::set_default_dtype(was);
  return m;
}

// The batches of the 5 steps (the same everywhere).
std::vector<std::pair<at::Tensor, at::Tensor>> gpt_batches() {
  at::manual_seed(11);
  std::vector<std::pair<at::Tensor, at::Tensor>> out;
  for (int s = 0; s < kSteps; ++s)
    out.emplace_back(at::randint(kVocab, {kGptBatch, kContext}, at::kLong),
                     at::randint(kVocab, {kGptBatch, kContext}, at::kLong));
  return out;
}

template <typename J>
void train(J& jm, const std::vector<at::Tensor>& params, int64_t rank, int64_t world) {
  torch::optim::AdamW opt(params, torch::optim::AdamWOptions(1e-2));
  const int64_t share = kGptBatch / world;
  for (const auto& [x, y] : gpt_batches()) {
    opt.zero_grad();
    jm(x.narrow(0, rank * share, share), y.narrow(0, rank * share, share)).backward();
    opt.step();
  }
}

template <typename M>
int train_ranks(const std::string& dir, const std::string& mode) {
  td::ProcessGroup pg = td::init_process_group();
  const int64_t rank = pg.rank();
  auto model = make_model<M>(100 + rank);  // the wrappers start from rank 0's values
  std::vector<at::Tensor> final_params;
  if (mode == "ddp") {
    auto jm = thunder::jit(td::ddp(model, pg));
    train(jm, model->parameters(), rank, pg.world_size());
    final_params = model->parameters();
  } else {
    auto sharded = td::fsdp(
        model, pg,
        {.strategy = mode == "zero3" ? td::ShardingStrategy::ZERO3 : td::ShardingStrategy::ZERO2});
    auto jm = thunder::jit(sharded);
    train(jm, model->parameters(), rank, pg.world_size());
    for (auto& [name, t] : sharded->full_parameters()) final_params.push_back(t);
  }
  write_doubles(dir + "/params_" + std::to_string(rank) + ".bin", final_params);
  return 0;
}

using thunder::models::CharGPT;
using thunder::models::GPTBlock;
THUNDER_WORKER(gpt_ddp) { return train_ranks<CharGPT>(dir, "ddp"); }
THUNDER_WORKER(gpt_zero2) { return train_ranks<CharGPT>(dir, "zero2"); }
THUNDER_WORKER(gpt_zero3) { return train_ranks<CharGPT>(dir, "zero3"); }
THUNDER_WORKER(block_ddp) { return train_ranks<GPTBlock>(dir, "ddp"); }
THUNDER_WORKER(block_zero2) { return train_ranks<GPTBlock>(dir, "zero2"); }
THUNDER_WORKER(block_zero3) { return train_ranks<GPTBlock>(dir, "zero3"); }

template <typename M>
void expect_matches_one_process(const std::string& worker) {
  auto r = launch(worker, 2);
  expect_ok(r);
  auto model = make_model<M>(100);
  const std::vector<at::Tensor> init = [&] {
    std::vector<at::Tensor> c;
    for (const at::Tensor& p : model->parameters()) c.push_back(p.detach().clone());
    return c;
  }();
  auto jm = thunder::jit(model);
  train(jm, model->parameters(), 0, 1);
  expect_ranks_match_one_process(r, model->parameters(), init, 1e-12, 1e-2);
}

}  // namespace

TEST(CharGptOracle, Ddp) { expect_matches_one_process<CharGPT>("gpt_ddp"); }
TEST(CharGptOracle, Zero2) { expect_matches_one_process<CharGPT>("gpt_zero2"); }
TEST(CharGptOracle, Zero3) { expect_matches_one_process<CharGPT>("gpt_zero3"); }
TEST(GptBlockOracle, Ddp) { expect_matches_one_process<GPTBlock>("block_ddp"); }
TEST(GptBlockOracle, Zero2) { expect_matches_one_process<GPTBlock>("block_zero2"); }
TEST(GptBlockOracle, Zero3) { expect_matches_one_process<GPTBlock>("block_zero3"); }
