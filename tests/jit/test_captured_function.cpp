// The recording behind Python's traced torch.autograd.Function
// (thunder/frontend/captured_function.h), driven from captured C++ code the
// way python/thunder_cpp.cpp drives it: a gate selection whose backward
// scatters the cotangent into a zero tensor it saved, in place. Checked
// against eager libtorch's own gradient of gather, in float64.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/frontend/captured_function.h>
#include <thunder/thunder.h>

#include <string>

namespace thunder {
namespace {

// SelectGates.apply(gates, selected) as thunder_cpp runs it under capture.
at::Tensor select_gates(const at::Tensor& gates, const at::Tensor& selected) {
  if (!detail::capturing()) return gates.gather(-1, selected);  // eager: autograd's gather
  detail::CapturedFunction call("SelectGates", {gates, selected});
  at::AutoGradMode no_grad(false);
  call.begin_forward();
  at::Tensor masked_gates = at::zeros_like(gates);
  at::Tensor out = gates.gather(-1, selected);
  call.end_forward({out}, {});
  at::Tensor saved = call.stand_in(masked_gates, true);
  at::Tensor saved_selected = call.stand_in(selected, true);
  std::vector<at::Tensor> cotangents = call.begin_backward();
  saved.scatter_add_(-1, saved_selected, cotangents[0]);
  call.end_backward({saved, at::Tensor()});
  call.finish();
  return out;
}

at::Tensor router(const at::Tensor& hidden, const at::Tensor& w_gate) {
  at::Tensor logits = at::linear(hidden, w_gate);
  at::Tensor selected = std::get<1>(logits.max(-1, true));
  at::Tensor probs =
      at::softmax(logits.masked_fill(logits < std::get<0>(logits.max(-1, true)), -1.0), -1);
  return select_gates(probs, selected) * probs.gather(-1, selected);
}

TEST(CapturedFunction, RecordedForwardAndBackwardMatchEager) {
  at::Tensor hidden = at::randn({16, 8}, at::kDouble);
  at::Tensor w = at::randn({4, 8}, at::kDouble).requires_grad_();
  at::Tensor w_eager = w.detach().clone().requires_grad_();
  at::Tensor expected = router(hidden, w_eager);
  expected.square().sum().backward();
  auto jrouter = jit(router);
  for (int call = 0; call < 2; ++call) {
    w.mutable_grad() = at::Tensor();
    at::Tensor out = jrouter(hidden, w);
    EXPECT_TRUE(at::allclose(out, expected, 1e-12, 1e-12)) << "call " << call;
    out.square().sum().backward();
    EXPECT_TRUE(at::allclose(w.grad(), w_eager.grad(), 1e-12, 1e-12)) << "call " << call << "\n"
                                                                      << w.grad() << "\n"
                                                                      << w_eager.grad();
  }
  EXPECT_GT(w_eager.grad().abs().sum().item<double>(), 0.0);
  EXPECT_EQ(cache_hits(jrouter), 1);
  const std::string first = last_traces(jrouter).front().str();
  EXPECT_NE(first.find(" = SelectGates(t"), std::string::npos) << first;
  std::string backward;
  for (const Trace& t : last_backward_traces(jrouter)) backward += t.str();
  EXPECT_NE(backward.find("SelectGates_backward("), std::string::npos) << backward;
}

// A gradient of the wrong shape names the function and both shapes.
TEST(CapturedFunction, AGradientOfTheWrongShapeIsAnError) {
  auto fn = [](const at::Tensor& x) {
    detail::CapturedFunction call("Sum0", {x});
    at::AutoGradMode no_grad(false);
    call.begin_forward();
    at::Tensor out = x.sum(0);
    call.end_forward({out}, {});
    std::vector<at::Tensor> g = call.begin_backward();
    call.end_backward({g[0]});
    call.finish();
    return out;
  };
  auto jfn = jit(fn);
  at::Tensor x = at::randn({3, 4}, at::kDouble).requires_grad_();
  try {
    (void)jfn(x);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("custom autograd function 'Sum0': backward returned a "
                                         "gradient of shape [4] for argument 0 of shape [3, 4]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace thunder
