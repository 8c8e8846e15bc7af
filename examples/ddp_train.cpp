// Data-parallel training with thunder::distributed: the char-GPT of the demo
// (examples/char_gpt.h), wrapped in ddp() or fsdp() and jitted, each rank
// training on its share of every batch. The collectives are in the traces
// (DDP: the bucketed gradient all-reduce; FSDP: the parameter gathers and
// the gradient reduce-scatters), so the ranks' AdamW steps stay identical.
//
//   build/bin/thunder-run --nproc 2 build/examples/ddp_train [--steps N] [--mode ddp|zero2|zero3]
//
// Rank 0 prints the loss (the mean over the ranks) and the step time; at the
// end each rank prints its own loss, step time and bytes (parameters,
// gradients, AdamW state, saved for backward, collective inputs per step),
// and compares its parameters with rank 0's, bit for bit (FSDP: the gathered
// parameters): the program fails if any differs.
#include <ATen/ATen.h>
#include <thunder/distributed.h>
#include <thunder/prims/distributed.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "char_gpt.h"
#include "corpus.h"

namespace td = thunder::distributed;

namespace {

constexpr int64_t kContext = 64, kBatch = 16, kDim = 128, kHeads = 4, kLayers = 2;

// 1 where this rank's parameters differ from rank 0's (broadcast), else 0.
int64_t differs_from_rank0(const td::ProcessGroup& pg, const std::vector<at::Tensor>& params) {
  int64_t differ = 0;
  for (const at::Tensor& p : params) {
    at::Tensor theirs = p.detach().clone();
    pg.broadcast(theirs, 0);
    differ |= !at::equal(theirs, p.detach());
  }
  return differ;
}

struct Run {
  const td::ProcessGroup& pg;
  const std::vector<std::pair<at::Tensor, at::Tensor>>& batches;
  int steps;
  std::string mode;
};

// Trains with the jitted wrapper `jm`; `optimized`: the tensors AdamW
// updates (FSDP: the shards); `compared`: what must equal rank 0's at the end.
template <typename J>
int train(const Run& run, J& jm, const std::vector<at::Tensor>& optimized,
          const std::function<std::vector<at::Tensor>()>& compared) {
  const td::ProcessGroup& pg = run.pg;
  const int64_t rank = pg.rank(), world = pg.world_size(), share = kBatch / world;
  const int steps = run.steps;
  torch::optim::AdamW opt(optimized, torch::optim::AdamWOptions(3e-3));
  double first_loss = 0, last_loss = 0, loss_here = 0, total_ms = 0;
  for (int step = 0; step < steps; ++step) {
    const at::Tensor x = run.batches[step].first.narrow(0, rank * share, share);
    const at::Tensor y = run.batches[step].second.narrow(0, rank * share, share);
    const auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    thunder::Tensor loss = jm(x, y);
    loss.backward();
    opt.step();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (step > 0) total_ms += ms;  // step 0 compiles
    loss_here = loss.aten().item<double>();
    at::Tensor mean = loss.aten().detach().clone();
    pg.all_reduce_sum(mean);
    last_loss = mean.item<double>() / static_cast<double>(world);
    if (step == 0) first_loss = last_loss;
    if (rank == 0 && (step % 5 == 0 || step == steps - 1))
      std::printf("step %3d  loss %.4f  %8.1f ms\n", step, last_loss, ms);
  }
  int64_t param_bytes = 0, grad_bytes = 0, optimizer_bytes = 0, saved_bytes = 0, comm_bytes = 0;
  for (const at::Tensor& p : optimized) {
    param_bytes += p.nbytes();
    if (p.grad().defined()) grad_bytes += p.grad().nbytes();
  }
  for (const auto& [key, state] : opt.state()) {
    const auto& adamw = static_cast<const torch::optim::AdamWParamState&>(*state);
    optimizer_bytes += adamw.exp_avg().nbytes() + adamw.exp_avg_sq().nbytes();
  }
  for (const thunder::TensorInfo& s : thunder::last_saved_for_backward(jm)) saved_bytes += s.bytes;
  const thunder::Trace fwd = thunder::last_traces(jm).back();
  const thunder::Trace bwd = thunder::last_backward_traces(jm).back();
  int collectives = 0;
  for (const thunder::Trace* t : {&fwd, &bwd})
    for (const thunder::BoundSymbol& b : t->bsyms) {
      if (!thunder::prims::is_collective(*b.sym)) continue;
      ++collectives;
      const thunder::Proxy& p = *b.args.at(0).proxy();
      comm_bytes += p.numel() * thunder::item_size(p.dtype);
    }
  std::printf(
      "rank %lld: loss %.4f, mean step %.1f ms; bytes: parameters %lld, gradients %lld, AdamW "
      "state %lld, saved for backward %lld, collective inputs per step %lld\n",
      static_cast<long long>(rank), loss_here, steps > 1 ? total_ms / (steps - 1) : 0.0,
      static_cast<long long>(param_bytes), static_cast<long long>(grad_bytes),
      static_cast<long long>(optimizer_bytes), static_cast<long long>(saved_bytes),
      static_cast<long long>(comm_bytes));
  std::fflush(stdout);
  pg.barrier();  // the per-rank lines before rank 0's summary

  at::Tensor differ = at::full({1}, differs_from_rank0(pg, compared()), at::kLong);
  pg.all_reduce_sum(differ);
  const int64_t differing = differ.item<int64_t>();
  if (rank == 0) {
    if (steps > 1)
      std::printf("mean step after the first: %.1f ms; loss %.4f -> %.4f\n", total_ms / (steps - 1),
                  first_loss, last_loss);
    std::printf("%s: %s\n", run.mode == "ddp" ? "replicas" : "gathered parameters",
                differing == 0 ? "identical on every rank"
                               : "DIFFER (a rank's parameters are not rank 0's)");
    std::printf("traces: %zu forward and %zu backward statements, %d collectives\n",
                fwd.bsyms.size(), bwd.bsyms.size(), collectives);
  }
  return differing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 30;
  std::string mode = "ddp";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--mode") && i + 1 < argc) {
      mode = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: thunder-run --nproc N ddp_train [--steps N] [--mode ddp|zero2|zero3]\n");
      return 2;
    }
  }
  if (mode != "ddp" && mode != "zero2" && mode != "zero3") {
    std::fprintf(stderr, "ddp_train: unknown --mode '%s' (ddp, zero2, zero3)\n", mode.c_str());
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // ranks share the terminal: whole lines
  td::ProcessGroup pg = td::init_process_group();
  const int64_t rank = pg.rank(), world = pg.world_size();
  if (kBatch % world != 0) {
    if (rank == 0)
      std::fprintf(stderr, "the batch (%lld) must split evenly over %lld ranks\n",
                   static_cast<long long>(kBatch), static_cast<long long>(world));
    return 2;
  }
  const auto corpus = thunder::examples::load_corpus(THUNDER_DEMO_TEXT);
  const auto batches = thunder::examples::make_batches(corpus, steps, kBatch, kContext);
  const int64_t vocab = static_cast<int64_t>(corpus.vocab.size());

  // Different initial weights on each rank on purpose: ddp and fsdp start
  // every rank from rank 0's.
  at::manual_seed(1 + static_cast<uint64_t>(rank));
  auto model = std::make_shared<thunder::models::CharGPT>(vocab, kContext, kDim, kHeads, kLayers);
  if (rank == 0)
    std::printf(
        "ddp_train (%s): char-GPT (%lld layers, d=%lld), batch %lld over %lld ranks (%lld each)\n",
        mode.c_str(), static_cast<long long>(kLayers), static_cast<long long>(kDim),
        static_cast<long long>(kBatch), static_cast<long long>(world),
        static_cast<long long>(kBatch / world));
  const Run run{pg, batches, steps, mode};
  if (mode == "ddp") {
    auto jm = thunder::jit(td::ddp(model, pg));
    return train(run, jm, model->parameters(), [&] { return model->parameters(); });
  }
  auto sharded = td::fsdp(
      model, pg,
      {.strategy = mode == "zero3" ? td::ShardingStrategy::ZERO3 : td::ShardingStrategy::ZERO2});
  auto jm = thunder::jit(sharded);
  return train(run, jm, model->parameters(), [&] {
    std::vector<at::Tensor> full;
    for (auto& [name, t] : sharded->full_parameters()) full.push_back(t);
    return full;
  });
}
