// What the multi-process tests share: an MLP (float64 unless asked) whose forward returns
// the mean squared error (sizes that do not divide by 2 ranks: FSDP pads),
// the batch every rank and the reference see, and comparisons.
#pragma once

#include <gtest/gtest.h>
#include <thunder/prims/distributed.h>
#include <thunder/thunder.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "launch.h"

namespace thunder_test {

constexpr int64_t kBatch = 8, kIn = 6, kHidden = 10, kOut = 3;

// An MLP whose forward returns the mean squared error.
struct Mlp : thunder::nn::Module {
  thunder::Tensor w1, b1, w2, b2;
  explicit Mlp(uint64_t seed, at::ScalarType dtype = at::kDouble) {
    at::manual_seed(seed);
    auto o = at::TensorOptions().dtype(dtype);
    w1 = register_parameter("w1", at::randn({kHidden, kIn}, o) * 0.4);
    b1 = register_parameter("b1", at::randn({kHidden}, o) * 0.1);
    w2 = register_parameter("w2", at::randn({kOut, kHidden}, o) * 0.4);
    b2 = register_parameter("b2", at::randn({kOut}, o) * 0.1);
  }
  thunder::Tensor forward(const thunder::Tensor& x, const thunder::Tensor& y) const {
    namespace F = thunder::nn::functional;
    thunder::Tensor d = F::linear(thunder::tanh(F::linear(x, w1, b1)), w2, b2) - y;
    return (d * d).mean();
  }
};

// The whole batch (the same on every rank and in the reference).
inline std::pair<at::Tensor, at::Tensor> batch(at::ScalarType dtype = at::kDouble) {
  at::manual_seed(7);
  auto o = at::TensorOptions().dtype(dtype);
  return {at::randn({kBatch, kIn}, o), at::randn({kBatch, kOut}, o)};
}

inline int env_rank() { return std::atoi(std::getenv("RANK")); }

inline std::vector<at::Tensor> grads(const Mlp& m) {
  std::vector<at::Tensor> g;
  for (const at::Tensor& p : m.parameters()) g.push_back(p.grad());
  return g;
}

inline void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol,
                         const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  EXPECT_LE(worst, tol) << what << ": largest difference " << worst;
}

inline void expect_ok(const Launch& r) {
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

// Both runs' ranks ended with the same parameters, bit for bit
// (params_0.bin, params_1.bin of each).
inline void expect_same_parameters(const Launch& a, const Launch& b) {
  for (const char* f : {"/params_0.bin", "/params_1.bin"}) {
    const auto pa = read_doubles(a.dir + f), pb = read_doubles(b.dir + f);
    ASSERT_EQ(pa.size(), pb.size()) << f;
    EXPECT_EQ(std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(double)), 0)
        << f << " of " << a.dir << " and " << b.dir;
  }
}

// Whether the last compiled entry's forward or backward trace communicates:
// holds a collective, a wait or a synchronize.
template <typename J>
bool communicates(const J& jm) {
  std::vector<thunder::Trace> traces = {thunder::last_traces(jm).back()};
  if (!thunder::last_backward_traces(jm).empty())
    traces.push_back(thunder::last_backward_traces(jm).back());
  for (const thunder::Trace& t : traces)
    for (const thunder::BoundSymbol& b : t.bsyms)
      if (thunder::prims::is_collective(*b.sym) || b.sym->id == "prims.wait" ||
          b.sym->id == "prims.synchronize")
        return true;
  return false;
}

constexpr int kSteps = 5;
constexpr double kLr = 1e-2;

// One process training on the whole batch from rank 0's initial parameters
// (seed 100): the parameters 2 ranks on half batches must end with.
inline std::vector<at::Tensor> reference_parameters(at::ScalarType dtype = at::kDouble) {
  auto model = std::make_shared<Mlp>(100, dtype);
  auto jm = thunder::jit(model);
  auto [x, y] = batch(dtype);
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(kLr));
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    jm(x, y).backward();
    opt.step();
  }
  return model->parameters();
}

// The 2-rank oracle's checks on the parameters the ranks wrote
// (params_0.bin, params_1.bin): rank 0's within `tol` of the one-process
// `reference`, bitwise equal to rank 1's, and moved by training from `init`
// by more than `min_moved` (so that the comparison is not vacuous).
inline void expect_ranks_match_one_process(const Launch& r,
                                           const std::vector<at::Tensor>& reference,
                                           const std::vector<at::Tensor>& init, double tol,
                                           double min_moved) {
  write_doubles(r.dir + "/reference.bin", reference);
  write_doubles(r.dir + "/init.bin", init);
  const auto ref = read_doubles(r.dir + "/reference.bin"),
             start = read_doubles(r.dir + "/init.bin");
  const auto p0 = read_doubles(r.dir + "/params_0.bin"), p1 = read_doubles(r.dir + "/params_1.bin");
  ASSERT_EQ(p0.size(), ref.size());
  ASSERT_EQ(p1.size(), ref.size());
  ASSERT_EQ(start.size(), ref.size());
  expect_close(p0, ref, tol, "rank 0 vs one process");
  EXPECT_EQ(std::memcmp(p0.data(), p1.data(), p0.size() * sizeof(double)), 0)
      << "rank 0 and rank 1 parameters differ";
  double moved = 0;
  for (size_t i = 0; i < p0.size(); ++i) moved = std::max(moved, std::abs(p0[i] - start[i]));
  EXPECT_GT(moved, min_moved);
}

// The same MLP written with torch::nn (float64), given to ddp and fsdp unmodified.
struct TorchMlpImpl : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  explicit TorchMlpImpl(uint64_t seed) {
    at::manual_seed(seed);
    fc1 = register_module("fc1", torch::nn::Linear(kIn, kHidden));
    fc2 = register_module("fc2", torch::nn::Linear(kHidden, kOut));
    to(at::kDouble);
  }
  at::Tensor forward(const at::Tensor& x, const at::Tensor& y) {
    at::Tensor d = fc2(at::tanh(fc1(x))) - y;
    return (d * d).mean();
  }
};
TORCH_MODULE(TorchMlp);

// Trains on this rank's part of the batch (AdamW on model->parameters()).
template <typename J>
void train_torch(J& jm, TorchMlp& model, int64_t rank, int64_t world) {
  auto [x, y] = batch();
  const int64_t part = kBatch / world;
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(kLr));
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    jm(x.narrow(0, rank * part, part), y.narrow(0, rank * part, part)).backward();
    opt.step();
  }
}

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace thunder_test
