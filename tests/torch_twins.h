// Two copies of a torch::nn module, one run eagerly and one under jit:
// the same starting parameters, and their gradients compared.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

namespace thunder::test {

inline void copy_parameters(torch::nn::Module& from, torch::nn::Module& to) {
  at::NoGradGuard no_grad;
  auto src = from.parameters(), dst = to.parameters();
  ASSERT_EQ(src.size(), dst.size());
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

// Every parameter of `jitted` is within tol of eager's (after training both).
inline void expect_same_parameters(torch::nn::Module& eager, torch::nn::Module& jitted,
                                   double tol) {
  auto pe = eager.named_parameters(), pj = jitted.named_parameters();
  ASSERT_EQ(pe.size(), pj.size());
  for (size_t i = 0; i < pe.size(); ++i)
    EXPECT_TRUE(at::allclose(pj[i].value(), pe[i].value(), tol, tol))
        << pe[i].key() << ": max diff "
        << (pj[i].value() - pe[i].value()).abs().max().item<double>();
}

// Every parameter of `jitted` has a gradient within tol of eager's.
inline void expect_same_gradients(torch::nn::Module& eager, torch::nn::Module& jitted, double tol) {
  auto pe = eager.named_parameters(), pj = jitted.named_parameters();
  ASSERT_EQ(pe.size(), pj.size());
  for (size_t i = 0; i < pe.size(); ++i) {
    const at::Tensor& ge = pe[i].value().grad();
    const at::Tensor& gj = pj[i].value().grad();
    ASSERT_TRUE(ge.defined()) << pe[i].key();
    ASSERT_TRUE(gj.defined()) << "no gradient reached " << pj[i].key();
    EXPECT_TRUE(at::allclose(gj, ge, tol, tol))
        << pe[i].key() << ": max diff " << (gj - ge).abs().max().item<double>();
  }
}

}  // namespace thunder::test
