// thunder::nn: modules with libtorch's constructor arguments. Parameters are
// ordinary libtorch leaf tensors that require grad, so parameters() works
// directly with torch::optim. Under thunder::jit(module) the parameters become
// trace inputs named after their path (fc.weight -> t_fc_weight).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "thunder/frontend/ops.h"

namespace thunder::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;

  std::vector<at::Tensor> parameters() const;
  // Recursive, with dotted paths ("fc.weight").
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;
  // This module and its descendants, depth first (used to guard training flags).
  std::vector<const Module*> modules() const;

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Registers a parameter (made a leaf that requires grad) and returns its handle.
  Tensor register_parameter(const std::string& name, at::Tensor t, bool requires_grad = true);
  // Registers a submodule held by the caller (a member, or a shared_ptr).
  template <typename M>
  M& register_module(const std::string& name, M& m) {
    add_child(name, &m);
    return m;
  }
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m.get());
    owned_.push_back(m);
    return m;
  }

 private:
  void add_child(const std::string& name, Module* m);
  bool training_ = true;
  std::vector<std::pair<std::string, at::Tensor>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
  std::vector<std::shared_ptr<Module>> owned_;
};

// y = x W^T + b, W: [out, in] initialised like torch.nn.Linear (kaiming uniform).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  Tensor weight, bias;
};

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  double p;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5);
  explicit LayerNorm(int64_t dim, double eps = 1e-5) : LayerNorm(std::vector<int64_t>{dim}, eps) {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::vector<int64_t> normalized_shape;
  double eps;
  Tensor weight, bias;
};

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor& indices) const;
  Tensor operator()(const Tensor& indices) const { return forward(indices); }
  Tensor weight;
};

class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none") : approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string approximate;
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

// Applies its modules in order; each must have `Tensor forward(const Tensor&)`.
class Sequential : public Module {
 public:
  Sequential() = default;
  template <typename... Ms>
  explicit Sequential(Ms&&... ms) {
    (push_back(std::make_shared<std::decay_t<Ms>>(std::forward<Ms>(ms))), ...);
  }
  template <typename M>
  void push_back(std::shared_ptr<M> m) {
    register_module(std::to_string(layers_.size()), m);
    layers_.push_back([m](const Tensor& x) { return m->forward(x); });
  }
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  size_t size() const { return layers_.size(); }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> layers_;
};

}  // namespace thunder::nn
