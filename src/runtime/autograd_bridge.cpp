#include "thunder/runtime/autograd_bridge.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "thunder/core/error.h"

namespace thunder {
namespace {

using torch::autograd::variable_list;

class ThunderBackward : public torch::autograd::Node {
 public:
  ThunderBackward(std::shared_ptr<CompiledBackward> bwd, std::vector<at::Tensor> saved)
      : bwd_(std::move(bwd)), saved_(std::move(saved)) {}

  std::string name() const override { return "ThunderBackward"; }
  void release_variables() override {
    saved_.clear();
    saved_.shrink_to_fit();
  }

  variable_list apply(variable_list&& grads) override {
    THUNDER_CHECK(!released_,
                  "thunder: trying to backward through a jitted call a second time; its saved "
                  "tensors were freed after the first backward (retain_graph is not supported)");
    THUNDER_CHECK(!at::GradMode::is_enabled(),
                  "thunder: double backward (create_graph=true) through a jitted call is not "
                  "supported");
    std::vector<at::Tensor> inputs = std::move(saved_);
    released_ = true;
    for (size_t i = 0; i < grads.size(); ++i) {
      // An output that received no gradient contributes zeros.
      if (!grads[i].defined()) {
        grads[i] = input_metadata(i).zeros_like();
      }
      inputs.push_back(std::move(grads[i]));
    }
    std::vector<at::Tensor> out;
    {
      PoolScope scope(bwd_->pool ? bwd_->pool->get() : nullptr);
      bwd_->program.run(nullptr, inputs, out);
    }
    inputs.clear();  // the saved tensors go now, not when the graph dies
    return variable_list(out.begin(), out.end());
  }

 private:
  std::shared_ptr<CompiledBackward> bwd_;
  std::vector<at::Tensor> saved_;
  bool released_ = false;
};

}  // namespace

void connect_autograd(const std::shared_ptr<CompiledBackward>& backward,
                      std::vector<at::Tensor>& outputs, std::vector<at::Tensor> saved,
                      const std::vector<at::Tensor>& grad_inputs) {
  auto node = std::shared_ptr<ThunderBackward>(new ThunderBackward(backward, std::move(saved)),
                                               torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(grad_inputs));
  for (int32_t i : backward->differentiable_outputs) {
    at::Tensor& o = outputs[i];
    // A fresh handle when the program returned an input or a view (or the same
    // tensor twice), so the history lands on this output alone.
    if (o.requires_grad() || o.is_view() || o.use_count() > 1) o = o.detach();
    torch::autograd::set_history(o, node);
  }
}

}  // namespace thunder
