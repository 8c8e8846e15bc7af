// Data-parallel training per rank, 2 ranks on this machine (run it with
// `build/bin/thunder-run --nproc 2 build/bench/distributed_bench [--steps N]`):
// the GPT block (examples/models.h: B8 T128 C256, 512-token vocabulary) and
// the char-GPT of the demo (B16 T64 C128, 2 layers), batch split over the
// ranks, one step at a time with
//   eager     the same model in libtorch (torch::nn for the char-GPT, the
//             block's ATen reference), one flat all-reduce of every gradient
//             after the backward: the baseline;
//   ddp-0-b   thunder DDP without buckets or scheduling (an all-reduce per
//             gradient, each waited for at once): the thunder baseline;
//   ddp-0     thunder DDP without buckets (an all-reduce per gradient);
//   ddp       thunder DDP with 25 MiB buckets;
//   zero2     thunder FSDP, gathered parameters kept for the backward;
//   zero3     thunder FSDP, gathered again in the backward.
// Modes run in turn, step by step (interleaved), from the same weights.
// Rank 0 prints per mode: the step time (median [min, max]); time blocked in
// waits per step (communication that did not overlap computation); bytes
// given to collectives per step; parameter + gradient + AdamW bytes held per
// rank; saved-for-backward bytes; peak live bytes during a step. Two cores
// cannot show a speedup; they show overhead, overlap and memory.
#include <ATen/ATen.h>
#include <thunder/distributed.h>
#include <thunder/prims/distributed.h>
#include <thunder/runtime/memory_meter.h>
#include <thunder/runtime/process_groups.h>
#include <thunder/thunder.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "char_gpt.h"
#include "models.h"
#include "torch_char_gpt.h"

namespace td = thunder::distributed;

namespace {

// Runs the collectives of these traces one after the other, each waited for
// at once, on zero tensors of their shapes: their time without computation
// to overlap (ms).
double collectives_alone_ms(const std::vector<thunder::Trace>& traces) {
  namespace rt = thunder::runtime;
  const auto t0 = std::chrono::steady_clock::now();
  for (const thunder::Trace& t : traces)
    for (const thunder::BoundSymbol& b : t.bsyms) {
      if (!thunder::prims::is_collective(*b.sym)) continue;
      const thunder::Proxy& p = *b.args.at(0).proxy();
      at::Tensor in = at::zeros(p.shape, at::TensorOptions().dtype(at::kFloat));
      const std::string& id = b.sym->id;
      if (id == "prims.all_reduce") {
        rt::start_all_reduce_sum(b.args.at(2).as_int(), in);
        rt::finish(in);
      } else {
        const thunder::Proxy& o = *b.output.proxy();
        at::Tensor out = at::empty(o.shape, in.options());
        if (id == "prims.reduce_scatter")
          rt::start_reduce_scatter_sum(b.args.at(2).as_int(), in, out);
        else
          rt::start_all_gather(b.args.at(1).as_int(), in, out);
        rt::finish(out);
      }
    }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Mode {
  std::string name;
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> step;  // returns the loss
  std::function<int64_t()> state_bytes;       // parameters + gradients + AdamW state
  std::function<int64_t()> collective_bytes;  // given to collectives per step
  std::function<int64_t()> saved_bytes;
  std::function<std::vector<thunder::Trace>()> traces;  // none for eager
  std::vector<double> ms, blocked_ms, peak, alone_ms;
};

int64_t adamw_bytes(const torch::optim::AdamW& opt, const std::vector<at::Tensor>& params) {
  int64_t n = 0;
  for (const at::Tensor& p : params) {
    n += p.nbytes();
    if (p.grad().defined()) n += p.grad().nbytes();
  }
  for (const auto& [key, state] : opt.state()) {
    const auto& s = static_cast<const torch::optim::AdamWParamState&>(*state);
    n += s.exp_avg().nbytes() + s.exp_avg_sq().nbytes();
  }
  return n;
}

template <typename J>
int64_t trace_collective_bytes(const J& jm) {
  int64_t n = 0;
  std::vector<thunder::Trace> traces = {thunder::last_traces(jm).back(),
                                        thunder::last_backward_traces(jm).back()};
  for (const thunder::Trace& t : traces)
    for (const thunder::BoundSymbol& b : t.bsyms)
      if (thunder::prims::is_collective(*b.sym)) {
        const thunder::Proxy& p = *b.args.at(0).proxy();
        n += p.numel() * thunder::item_size(p.dtype);
      }
  return n;
}

template <typename J>
int64_t trace_saved_bytes(const J& jm) {
  int64_t n = 0;
  for (const thunder::TensorInfo& s : thunder::last_saved_for_backward(jm)) n += s.bytes;
  return n;
}

struct Stats {
  double median, min, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

// The eager baseline: a loss over parameters that autograd differentiates.
struct EagerModel {
  std::vector<at::Tensor> params;
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> loss;
};

// Trains one model five ways (see the top), interleaved step by step, and
// prints rank 0's table. `make_thunder(seed)` builds the thunder model.
template <typename MakeThunder>
void bench_model(td::ProcessGroup& pg, int steps, const std::string& title, int64_t vocab,
                 int64_t batch, int64_t context, EagerModel eager, MakeThunder make_thunder) {
  const int64_t rank = pg.rank(), world = pg.world_size(), share = batch / world;
  at::manual_seed(5);
  std::vector<std::pair<at::Tensor, at::Tensor>> batches;
  for (int s = 0; s <= steps; ++s)
    batches.emplace_back(at::randint(vocab, {batch, context}, at::kLong),
                         at::randint(vocab, {batch, context}, at::kLong));

  std::vector<Mode> modes;
  double eager_blocked_ms = 0;  // the eager mode's all-reduce, which blocks
  // Eager libtorch: backward, then every gradient packed, scaled and
  // all-reduced at once, then AdamW.
  auto eager_params = eager.params;
  auto eager_opt = std::make_shared<torch::optim::AdamW>(eager_params);
  modes.push_back({"eager libtorch + flat all-reduce",
                   [&](const at::Tensor& x, const at::Tensor& y) {
                     eager_opt->zero_grad();
                     at::Tensor loss = eager.loss(x, y);
                     loss.backward();
                     std::vector<at::Tensor> flat;
                     for (const at::Tensor& p : eager_params) flat.push_back(p.grad().view(-1));
                     at::Tensor packed = at::cat(flat) / static_cast<double>(world);
                     const auto t0 = std::chrono::steady_clock::now();
                     pg.all_reduce_sum(packed);  // blocking: all of it is waiting
                     eager_blocked_ms += std::chrono::duration<double, std::milli>(
                                             std::chrono::steady_clock::now() - t0)
                                             .count();
                     int64_t offset = 0;
                     for (const at::Tensor& p : eager_params) {
                       p.grad().copy_(packed.narrow(0, offset, p.numel()).view_as(p));
                       offset += p.numel();
                     }
                     eager_opt->step();
                     return loss;
                   },
                   [&] { return adamw_bytes(*eager_opt, eager_params); },
                   [&] {
                     int64_t n = 0;
                     for (const at::Tensor& p : eager_params) n += p.nbytes();
                     return n;
                   },
                   [] { return int64_t{-1}; },
                   {}});

  // The thunder modes: each its own model from the same seed.
  auto add_thunder = [&](const std::string& name, auto make_wrapper,
                         thunder::JitOptions options = {}) {
    auto model = make_thunder(1);
    auto wrapped = make_wrapper(model);
    auto jm = std::make_shared<decltype(thunder::jit(wrapped))>(thunder::jit(wrapped, options));
    auto params = std::make_shared<std::vector<at::Tensor>>(model->parameters());
    auto opt = std::make_shared<torch::optim::AdamW>(*params);
    modes.push_back(
        {name,
         [jm, opt, model, wrapped](const at::Tensor& x, const at::Tensor& y) {
           opt->zero_grad();
           thunder::Tensor loss = (*jm)(x, y);
           loss.backward();
           opt->step();
           return loss.aten();
         },
         [opt, params] { return adamw_bytes(*opt, *params); },
         [jm] { return trace_collective_bytes(*jm); }, [jm] { return trace_saved_bytes(*jm); },
         [jm] {
           return std::vector<thunder::Trace>{thunder::last_traces(*jm).back(),
                                              thunder::last_backward_traces(*jm).back()};
         }});
  };
  add_thunder("thunder ddp, no buckets or overlap",
              [&](auto m) { return td::ddp(m, pg, {.bucket_size_mb = 0}); },
              {.schedule_collectives = false});
  add_thunder("thunder ddp, no buckets",
              [&](auto m) { return td::ddp(m, pg, {.bucket_size_mb = 0}); });
  add_thunder("thunder ddp, 25 MiB buckets", [&](auto m) { return td::ddp(m, pg); });
  add_thunder("thunder fsdp ZeRO-2",
              [&](auto m) { return td::fsdp(m, pg, {.strategy = td::ShardingStrategy::ZERO2}); });
  add_thunder("thunder fsdp ZeRO-3",
              [&](auto m) { return td::fsdp(m, pg, {.strategy = td::ShardingStrategy::ZERO3}); });

  for (int s = 0; s <= steps; ++s) {
    const at::Tensor x = batches[s].first.narrow(0, rank * share, share);
    const at::Tensor y = batches[s].second.narrow(0, rank * share, share);
    for (Mode& m : modes) {
      pg.barrier();  // both ranks start the mode's step together
      const double waited = thunder::runtime::wait_stats().seconds + eager_blocked_ms / 1e3;
      thunder::MemoryMeter::reset_peak();
      const int64_t before = thunder::MemoryMeter::live_bytes();
      const auto t0 = std::chrono::steady_clock::now();
      (void)m.step(x, y);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (s == 0) continue;  // compiles
      m.ms.push_back(ms);
      m.blocked_ms.push_back(
          1e3 * (thunder::runtime::wait_stats().seconds + eager_blocked_ms / 1e3 - waited));
      m.peak.push_back(static_cast<double>(thunder::MemoryMeter::peak_bytes() - before));
    }
  }
  // The same collectives alone, 5 times each (both ranks run the same ones).
  for (Mode& m : modes) {
    if (!m.traces) continue;
    const std::vector<thunder::Trace> traces = m.traces();
    for (int r = 0; r < 5; ++r) {
      pg.barrier();
      m.alone_ms.push_back(collectives_alone_ms(traces));
    }
  }
  if (rank != 0) return;
  std::printf("\n%s, %lld ranks (%lld each), %d steps after the first\n", title.c_str(),
              static_cast<long long>(world), static_cast<long long>(share), steps);
  // peak live: the most bytes a step allocated on top of what it started
  // with; held + peak: that plus parameters, gradients and AdamW state.
  std::printf("%-34s %24s %10s %10s %8s %11s %12s %8s %10s %10s\n", "rank 0, per step",
              "step ms [min, max]", "blocked", "alone", "overlap", "collective", "params+grads",
              "saved", "peak live", "held+peak");
  std::printf("%-34s %24s %10s %10s %8s %11s %12s %8s %10s %10s\n", "", "", "in wait ms", "ms", "",
              "KB", "+AdamW KB", "KB", "KB", "KB");
  for (Mode& m : modes) {
    const Stats t = stats(m.ms), b = stats(m.blocked_ms), p = stats(m.peak);
    const int64_t saved = m.saved_bytes();
    char step[64], alone[32], overlap[32];
    std::snprintf(step, sizeof step, "%.1f [%.1f, %.1f]", t.median, t.min, t.max);
    if (m.alone_ms.empty()) {
      std::snprintf(alone, sizeof alone, "-");
      std::snprintf(overlap, sizeof overlap, "-");
    } else {
      const double a = stats(m.alone_ms).median;
      std::snprintf(alone, sizeof alone, "%.1f", a);
      // The share of the collectives' own time that computation hid.
      std::snprintf(overlap, sizeof overlap, "%.0f%%", 100.0 * std::max(0.0, 1.0 - b.median / a));
    }
    const double held = static_cast<double>(m.state_bytes());
    std::printf("%-34s %24s %10.1f %10s %8s %11.1f %12.1f %8s %10.1f %10.1f\n", m.name.c_str(),
                step, b.median, alone, overlap, m.collective_bytes() / 1024.0, held / 1024.0,
                saved < 0 ? "-" : std::to_string(saved / 1024).c_str(), p.median / 1024.0,
                (held + p.median) / 1024.0);
  }
}

int main(int argc, char** argv) {
  int steps = 12;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: thunder-run --nproc 2 distributed_bench [--steps N]\n");
      return 2;
    }
  }
  thunder::MemoryMeter::install();
  td::ProcessGroup pg = td::init_process_group();
  if (pg.rank() == 0)
    std::printf("distributed_bench: %s, %u hardware threads\n", thunder::bench::cpu_model().c_str(),
                std::thread::hardware_concurrency());

  {  // The GPT block: eagerly, its ATen reference on a twin's parameters.
    constexpr int64_t kVocab = 512, kDim = 256, kHeads = 8, kBatch = 8, kContext = 128;
    at::manual_seed(1);
    auto twin = std::make_shared<thunder::models::GPTBlock>(kVocab, kDim, kHeads);
    bench_model(pg, steps, "GPT block B8 T128 C256, 512-token vocabulary", kVocab, kBatch, kContext,
                {twin->parameters(), [twin](const at::Tensor& x,
                                            const at::Tensor& y) { return twin->reference(x, y); }},
                [=](uint64_t seed) {
                  at::manual_seed(seed);
                  return std::make_shared<thunder::models::GPTBlock>(kVocab, kDim, kHeads);
                });
  }
  {  // The char-GPT: eagerly, its torch::nn twin.
    constexpr int64_t kVocab = 65, kContext = 64, kBatch = 16, kDim = 128, kHeads = 4, kLayers = 2;
    at::manual_seed(1);
    thunder::models::TorchCharGPT twin(kVocab, kContext, kDim, kHeads, kLayers);
    bench_model(pg, steps, "char-GPT B16 T64 C128, 2 layers", kVocab, kBatch, kContext,
                {twin->parameters(),
                 [twin](const at::Tensor& x, const at::Tensor& y) mutable { return twin(x, y); }},
                [=](uint64_t seed) {
                  at::manual_seed(seed);
                  return std::make_shared<thunder::models::CharGPT>(kVocab, kContext, kDim, kHeads,
                                                                    kLayers);
                });
  }
  return 0;
}
