// Gradients of a thunder::nn model under jit against a plain-libtorch
// reference loss over the same parameters (tests of models and executors).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <functional>
#include <vector>

namespace thunder::test {

// Runs the jitted loss's backward, keeps the gradients, clears them, runs the
// reference's backward: the losses and every parameter's gradient agree.
template <typename M>
void expect_grads_match(M& model, const std::function<Tensor()>& jit_loss,
                        const std::function<at::Tensor()>& ref_loss, double rtol, double atol) {
  Tensor loss = jit_loss();
  loss.backward();
  std::vector<at::Tensor> jit_grads;
  for (auto& p : model.parameters()) {
    jit_grads.push_back(p.grad().clone());
    p.mutable_grad() = at::Tensor();
  }
  at::Tensor ref = ref_loss();
  ref.backward();
  EXPECT_TRUE(at::allclose(loss.aten(), ref, rtol, atol)) << loss << " vs " << ref;
  auto named = model.named_parameters();
  for (size_t i = 0; i < named.size(); ++i) {
    ASSERT_TRUE(jit_grads[i].defined()) << named[i].first;
    EXPECT_TRUE(at::allclose(jit_grads[i], named[i].second.grad(), rtol, atol))
        << named[i].first << " max diff "
        << (jit_grads[i] - named[i].second.grad()).abs().max().template item<double>();
  }
}

}  // namespace thunder::test
