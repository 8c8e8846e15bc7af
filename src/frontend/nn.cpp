#include "thunder/frontend/nn.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "thunder/core/error.h"

namespace thunder::nn {

std::vector<at::Tensor> Module::parameters() const {
  std::vector<at::Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, at::Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, at::Tensor>> out = params_;
  for (const auto& [name, child] : children_)
    for (auto& [path, t] : child->named_parameters()) {
      // A submodule registered twice (shared weights) lists its parameters
      // once, under the first path, as in torch: an optimizer given both
      // would step them twice.
      const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& p) {
        return p.second.unsafeGetTensorImpl() == t.unsafeGetTensorImpl();
      });
      if (!seen) out.emplace_back(name + "." + path, t);
    }
  return out;
}

std::vector<const Module*> Module::modules() const {
  std::vector<const Module*> out{this};
  for (const auto& [name, child] : children_)
    for (const Module* m : child->modules()) out.push_back(m);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

Tensor Module::register_parameter(const std::string& name, at::Tensor t, bool requires_grad) {
  for (const auto& [n, p] : params_)
    THUNDER_CHECK(n != name, "Module.register_parameter: '{}' is already registered", name);
  t = t.detach().requires_grad_(requires_grad);
  params_.emplace_back(name, t);
  return t;
}

void Module::add_child(const std::string& name, Module* m) {
  for (const auto& [n, c] : children_)
    THUNDER_CHECK(n != name, "Module.register_module: '{}' is already registered", name);
  children_.emplace_back(name, m);
}

Linear::Linear(int64_t in, int64_t out, bool with_bias) {
  THUNDER_CHECK(in > 0 && out > 0, "nn.Linear: in_features {} and out_features {} must be positive",
                in, out);
  // torch.nn.Linear's default: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias.
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight = register_parameter("weight", at::empty({out, in}).uniform_(-bound, bound));
  if (with_bias) bias = register_parameter("bias", at::empty({out}).uniform_(-bound, bound));
}
Tensor Linear::forward(const Tensor& x) const { return functional::linear(x, weight, bias); }

Dropout::Dropout(double p_) : p(p_) {
  THUNDER_CHECK(p >= 0.0 && p <= 1.0, "nn.Dropout: p must be in [0, 1], got {}", p);
}
Tensor Dropout::forward(const Tensor& x) const { return functional::dropout(x, p, is_training()); }

LayerNorm::LayerNorm(std::vector<int64_t> shape, double eps_)
    : normalized_shape(std::move(shape)), eps(eps_) {
  weight = register_parameter("weight", at::ones(normalized_shape));
  bias = register_parameter("bias", at::zeros(normalized_shape));
}
Tensor LayerNorm::forward(const Tensor& x) const {
  return functional::layer_norm(x, normalized_shape, weight, bias, eps);
}

Embedding::Embedding(int64_t num, int64_t dim) {
  THUNDER_CHECK(num > 0 && dim > 0, "nn.Embedding: sizes {} and {} must be positive", num, dim);
  weight = register_parameter("weight", at::randn({num, dim}));
}
Tensor Embedding::forward(const Tensor& i) const { return functional::embedding(i, weight); }

Tensor GELU::forward(const Tensor& x) const { return functional::gelu(x, approximate); }
Tensor ReLU::forward(const Tensor& x) const { return functional::relu(x); }

Tensor Sequential::forward(const Tensor& x) const {
  Tensor h = x;
  for (const auto& f : layers_) h = f(h);
  return h;
}

}  // namespace thunder::nn
