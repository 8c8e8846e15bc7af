// Random tensor programs for the differential fuzzer: a program is a list of
// ops over a pool of values (the inputs first, then one value per op). The
// same program runs on at::Tensor (eager libtorch, the reference) and on
// thunder::Tensor (under thunder::jit): ops are spelled once, through
// argument-dependent lookup, so both sides run exactly the same calls.
#pragma once

#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fuzz {

enum class Kind {
  Unary,         // fn(a): see kUnary
  Binary,        // fn(a, b) with broadcasting: see kBinary
  ScalarMul,     // a * d + d2
  Sum,           // sum(a, {i0}, flag)
  Mean,          // mean(a, {i0}, flag)
  Amax,          // amax(a, {i0}, flag)
  Transpose,     // transpose(a, i0, i1)
  Unsqueeze,     // unsqueeze(a, i0)
  Flatten,       // reshape(a, {-1})
  Narrow,        // narrow(a, i0, 0, i1)
  Softmax,       // softmax(a, i0)
  LogSoftmax,    // log_softmax(a, i0)
  Where,         // where(a > b, a, b)
  Clamp,         // clamp(a, -d, d)
  Dropout0,      // dropout(a, 0.0, true): the identity
  ToDtype,       // a.to(f64 if flag else f32)
  NoGradMul,     // under NoGradGuard: a * b (a constant for autodiff)
  InplaceAdd,    // t = a * 1.0; t.add_(b)
  InplaceView,   // t = a * 1.0; t.narrow(i0, 0, 1).mul_(d); t
  InputInplace,  // a.mul_(d) on an input that does not require grad; a
  Matmul,        // matmul(a, b)
  Gather,        // a.gather(i0, a.argmax(i0, true)): the max along i0 by index
  IndexSelect,   // a.index_select(i0, {i1 - 1, 0}) with i1 = a.size(i0)
  CustomTanh,    // a custom autograd function: tanh(a) * 2 (eager: plain ops)
};

struct Op {
  Kind kind;
  int a = 0, b = 0;  // operand indices into the pool
  int fn = 0;        // Unary / Binary function
  int64_t i0 = 0, i1 = 0;
  double d = 0, d2 = 0;
  bool flag = false;
};

struct Input {
  std::vector<int64_t> shape;
  at::ScalarType dtype = at::kFloat;
  bool requires_grad = false;
};

struct Program {
  uint64_t seed = 0;
  std::vector<Input> inputs;
  std::vector<Op> ops;
  std::vector<int> outputs;  // pool indices
};

// A valid program (every op checked by running it eagerly while generating).
Program generate(uint64_t seed);

// The program as C++ over at::Tensor, one statement a line.
std::string to_cpp(const Program& p);

// Fresh inputs for a program (values depend on the seed only).
std::vector<at::Tensor> make_inputs(const Program& p);

std::vector<at::Tensor> run(const Program& p, std::vector<at::Tensor> inputs);
thunder::TensorList run(const Program& p, thunder::TensorList inputs);

}  // namespace fuzz
