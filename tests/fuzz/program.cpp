#include "program.h"

#include <fmt/format.h>

#include <random>

namespace fuzz {

namespace {

namespace F = thunder::nn::functional;

// The few ops whose spellings differ between libtorch and thunder.
at::Tensor softmax_of(const at::Tensor& x, int64_t d) { return at::softmax(x, d); }
thunder::Tensor softmax_of(const thunder::Tensor& x, int64_t d) { return F::softmax(x, d); }
at::Tensor log_softmax_of(const at::Tensor& x, int64_t d) { return at::log_softmax(x, d); }
thunder::Tensor log_softmax_of(const thunder::Tensor& x, int64_t d) { return F::log_softmax(x, d); }
at::Tensor dropout_of(const at::Tensor& x) { return at::dropout(x, 0.0, true); }
thunder::Tensor dropout_of(const thunder::Tensor& x) { return F::dropout(x, 0.0, true); }

// An index tensor made inside the program (a constant to the jit).
at::Tensor last_and_first(int64_t n) { return at::tensor({n - 1, int64_t{0}}, at::kLong); }
at::Tensor index_of(const at::Tensor&, int64_t n) { return last_and_first(n); }
thunder::Tensor index_of(const thunder::Tensor&, int64_t n) {
  return thunder::Tensor(last_and_first(n));
}

// tanh(x) * 2 with a hand-written backward from the saved output; eagerly
// the same function through libtorch's autograd, so gradients are compared
// against a rule thunder did not write.
struct CustomTanh : thunder::autograd::Function<CustomTanh> {
  static thunder::Tensor forward(thunder::autograd::AutogradContext* ctx, thunder::Tensor x) {
    thunder::Tensor y = tanh(x);
    ctx->save_for_backward({y});
    return y * 2.0;
  }
  static thunder::TensorList backward(thunder::autograd::AutogradContext* ctx,
                                      thunder::TensorList grad) {
    thunder::Tensor y = ctx->get_saved_variables()[0];
    return {grad[0] * 2.0 * (1.0 - y * y)};
  }
};
at::Tensor custom_tanh(const at::Tensor& x) { return at::tanh(x) * 2.0; }
thunder::Tensor custom_tanh(const thunder::Tensor& x) { return CustomTanh::apply(x); }

// Unary functions, bounded where the plain one overflows or leaves its domain
// (as C++ over at::Tensor, for printing).
constexpr const char* kUnary[] = {"at::tanh({0})",
                                  "at::sigmoid({0})",
                                  "at::relu({0})",
                                  "at::neg({0})",
                                  "at::abs({0})",
                                  "at::sin({0})",
                                  "at::cos({0})",
                                  "at::exp(at::tanh({0}))",
                                  "at::log(at::abs({0}) + 1.0)",
                                  "at::sqrt(at::abs({0}) + 0.5)",
                                  "at::erf({0})",
                                  "{0} * at::sigmoid({0})"};
constexpr int kNumUnary = sizeof(kUnary) / sizeof(kUnary[0]);

template <typename T>
T unary(int fn, const T& a) {
  switch (fn) {
    case 0:
      return tanh(a);
    case 1:
      return sigmoid(a);
    case 2:
      return relu(a);
    case 3:
      return neg(a);
    case 4:
      return abs(a);
    case 5:
      return sin(a);
    case 6:
      return cos(a);
    case 7:
      return exp(tanh(a));
    case 8:
      return log(abs(a) + 1.0);
    case 9:
      return sqrt(abs(a) + 0.5);
    case 10:
      return erf(a);
    default:
      return a * sigmoid(a);
  }
}

constexpr const char* kBinary[] = {"{0} + {1}",
                                   "{0} - {1}",
                                   "{0} * {1}",
                                   "{0} / (at::abs({1}) + 0.5)",
                                   "at::maximum({0}, {1})",
                                   "at::minimum({0}, {1})"};
constexpr int kNumBinary = sizeof(kBinary) / sizeof(kBinary[0]);

template <typename T>
T binary(int fn, const T& a, const T& b) {
  switch (fn) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / (abs(b) + 0.5);
    case 4:
      return maximum(a, b);
    default:
      return minimum(a, b);
  }
}

template <typename T>
T apply_op(const Op& op, std::vector<T>& pool) {
  T& a = pool[op.a];
  const T& b = pool[op.b];
  switch (op.kind) {
    case Kind::Unary:
      return unary(op.fn, a);
    case Kind::Binary:
      return binary(op.fn, a, b);
    case Kind::ScalarMul:
      return a * op.d + op.d2;
    case Kind::Sum:
      return sum(a, {op.i0}, op.flag);
    case Kind::Mean:
      return mean(a, {op.i0}, op.flag);
    case Kind::Amax:
      return amax(a, {op.i0}, op.flag);
    case Kind::Transpose:
      return transpose(a, op.i0, op.i1);
    case Kind::Unsqueeze:
      return unsqueeze(a, op.i0);
    case Kind::Flatten:
      return reshape(a, {-1});
    case Kind::Narrow:
      return narrow(a, op.i0, 0, op.i1);
    case Kind::Softmax:
      return softmax_of(a, op.i0);
    case Kind::LogSoftmax:
      return log_softmax_of(a, op.i0);
    case Kind::Where:
      return where(a > b, a, b);
    case Kind::Clamp:
      return clamp(a, -op.d, op.d);
    case Kind::Dropout0:
      return dropout_of(a);
    case Kind::ToDtype:
      return a.to(op.flag ? at::kDouble : at::kFloat);
    case Kind::NoGradMul: {
      at::NoGradGuard no_grad;
      return a * b;
    }
    case Kind::InplaceAdd: {
      T t = a * 1.0;
      t.add_(b);
      return t;
    }
    case Kind::InplaceView: {
      T t = a * 1.0;
      T v = narrow(t, op.i0, 0, 1);
      v.mul_(op.d);
      return t;
    }
    case Kind::InputInplace: {
      at::NoGradGuard no_grad;
      a.mul_(op.d);
      return a;
    }
    case Kind::Matmul:
      return matmul(a, b);
    case Kind::Gather:
      return a.gather(op.i0, a.argmax(op.i0, true));
    case Kind::IndexSelect:
      return a.index_select(op.i0, index_of(a, op.i1));
    case Kind::CustomTanh:
      return custom_tanh(a);
  }
  return a;
}

template <typename T>
std::vector<T> run_pool(const Program& p, std::vector<T> pool) {
  for (const Op& op : p.ops) pool.push_back(apply_op(op, pool));
  std::vector<T> out;
  for (int i : p.outputs) out.push_back(pool[i]);
  return out;
}

std::string statement(const Op& op, int index) {
  std::string a = fmt::format("v{}", op.a), b = fmt::format("v{}", op.b);
  std::string rhs;
  switch (op.kind) {
    case Kind::Unary:
      rhs = fmt::format(fmt::runtime(kUnary[op.fn]), a);
      break;
    case Kind::Binary:
      rhs = fmt::format(fmt::runtime(kBinary[op.fn]), a, b);
      break;
    case Kind::ScalarMul:
      rhs = fmt::format("{} * {} + {}", a, op.d, op.d2);
      break;
    case Kind::Sum:
      rhs = fmt::format("at::sum({}, {{{}}}, {})", a, op.i0, op.flag);
      break;
    case Kind::Mean:
      rhs = fmt::format("at::mean({}, {{{}}}, {})", a, op.i0, op.flag);
      break;
    case Kind::Amax:
      rhs = fmt::format("at::amax({}, {{{}}}, {})", a, op.i0, op.flag);
      break;
    case Kind::Transpose:
      rhs = fmt::format("{}.transpose({}, {})", a, op.i0, op.i1);
      break;
    case Kind::Unsqueeze:
      rhs = fmt::format("{}.unsqueeze({})", a, op.i0);
      break;
    case Kind::Flatten:
      rhs = fmt::format("{}.reshape({{-1}})", a);
      break;
    case Kind::Narrow:
      rhs = fmt::format("{}.narrow({}, 0, {})", a, op.i0, op.i1);
      break;
    case Kind::Softmax:
      rhs = fmt::format("at::softmax({}, {})", a, op.i0);
      break;
    case Kind::LogSoftmax:
      rhs = fmt::format("at::log_softmax({}, {})", a, op.i0);
      break;
    case Kind::Where:
      rhs = fmt::format("at::where({0} > {1}, {0}, {1})", a, b);
      break;
    case Kind::Clamp:
      rhs = fmt::format("at::clamp({}, -{}, {})", a, op.d, op.d);
      break;
    case Kind::Dropout0:
      rhs = fmt::format("at::dropout({}, 0.0, true)", a);
      break;
    case Kind::ToDtype:
      rhs = fmt::format("{}.to({})", a, op.flag ? "at::kDouble" : "at::kFloat");
      break;
    case Kind::NoGradMul:
      return fmt::format("at::Tensor v{}; {{ at::NoGradGuard g; v{} = {} * {}; }}", index, index, a,
                         b);
    case Kind::InplaceAdd:
      return fmt::format("at::Tensor v{0} = {1} * 1.0; v{0}.add_({2});", index, a, b);
    case Kind::InplaceView:
      return fmt::format("at::Tensor v{0} = {1} * 1.0; v{0}.narrow({2}, 0, 1).mul_({3});", index, a,
                         op.i0, op.d);
    case Kind::InputInplace:
      return fmt::format("{{ at::NoGradGuard g; {}.mul_({}); }} at::Tensor v{} = {};", a, op.d,
                         index, a);
    case Kind::Matmul:
      rhs = fmt::format("at::matmul({}, {})", a, b);
      break;
    case Kind::Gather:
      rhs = fmt::format("{0}.gather({1}, {0}.argmax({1}, true))", a, op.i0);
      break;
    case Kind::IndexSelect:
      rhs = fmt::format("{}.index_select({}, at::tensor({{{}LL, 0LL}}))", a, op.i0, op.i1 - 1);
      break;
    case Kind::CustomTanh:
      rhs = fmt::format("CustomTanh::apply({})  /* tanh(x) * 2, backward from saved tanh */", a);
      break;
  }
  return fmt::format("at::Tensor v{} = {};", index, rhs);
}

}  // namespace

std::vector<at::Tensor> run(const Program& p, std::vector<at::Tensor> inputs) {
  return run_pool(p, std::move(inputs));
}
thunder::TensorList run(const Program& p, thunder::TensorList inputs) {
  return run_pool(p, std::move(inputs));
}

std::vector<at::Tensor> make_inputs(const Program& p) {
  at::Generator g = at::detail::createCPUGenerator(p.seed * 7919 + 1);
  std::vector<at::Tensor> out;
  for (const Input& in : p.inputs) {
    at::Tensor t = at::randn(in.shape, g, at::TensorOptions().dtype(in.dtype));
    out.push_back(in.requires_grad ? t.requires_grad_() : t);
  }
  return out;
}

Program generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto coin = [&](int percent) { return pick(100) < percent; };
  const std::vector<std::vector<int64_t>> shapes = {{3, 4},    {4}, {1, 4}, {3, 1},
                                                    {2, 3, 4}, {},  {5, 2}};
  Program p;
  p.seed = seed;
  const int num_inputs = 1 + pick(3);
  for (int i = 0; i < num_inputs; ++i) {
    Input in;
    in.shape = shapes[pick(static_cast<int>(shapes.size()))];
    in.dtype = coin(75) ? at::kFloat : at::kDouble;
    in.requires_grad = coin(60);
    p.inputs.push_back(in);
  }
  std::vector<at::Tensor> pool = make_inputs(p);
  const int num_ops = 3 + pick(10);
  for (int k = 0; k < num_ops; ++k) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      Op op;
      op.kind = static_cast<Kind>(pick(static_cast<int>(Kind::CustomTanh) + 1));
      op.a = pick(static_cast<int>(pool.size()));
      op.b = pick(static_cast<int>(pool.size()));
      const int64_t rank = pool[op.a].dim();
      op.fn =
          pick(std::max(kNumUnary, kNumBinary)) % (op.kind == Kind::Unary ? kNumUnary : kNumBinary);
      op.i0 = rank > 0 ? pick(static_cast<int>(rank)) - (coin(30) ? rank : 0) : 0;
      op.i1 = rank > 0 ? pick(static_cast<int>(rank)) : 0;
      op.d = 0.5 + pick(4) * 0.25;
      op.d2 = pick(3) - 1.0;
      op.flag = coin(50);
      if (op.kind == Kind::Narrow && rank > 0)
        op.i1 = 1 + pick(std::max<int>(1, pool[op.a].size(op.i0)));
      if (op.kind == Kind::IndexSelect && rank > 0) op.i1 = pool[op.a].size(op.i0);
      if ((op.kind == Kind::Gather || op.kind == Kind::IndexSelect) &&
          (rank == 0 || pool[op.a].size(op.i0) == 0))
        continue;
      // Writes into an input only where it does not require grad.
      if (op.kind == Kind::InputInplace &&
          (op.a >= static_cast<int>(p.inputs.size()) || p.inputs[op.a].requires_grad))
        continue;
      if (rank == 0 &&
          (op.kind == Kind::Transpose || op.kind == Kind::Narrow || op.kind == Kind::InplaceView))
        continue;
      try {
        at::Tensor v = apply_op(op, pool);
        pool.push_back(v);
        p.ops.push_back(op);
        break;
      } catch (const std::exception&) {
        // shapes that do not broadcast, a dim out of range, ...: draw another op
      }
    }
  }
  // Outputs: the values no later op reads (newest first, at most three), so
  // most of the program is live.
  std::vector<bool> read(pool.size(), false);
  for (const Op& op : p.ops) {
    read[op.a] = true;
    if (op.kind == Kind::Binary || op.kind == Kind::Where || op.kind == Kind::NoGradMul ||
        op.kind == Kind::InplaceAdd || op.kind == Kind::Matmul)
      read[op.b] = true;
  }
  for (int i = static_cast<int>(pool.size()) - 1;
       i >= static_cast<int>(p.inputs.size()) && p.outputs.size() < 3; --i)
    if (!read[i]) p.outputs.push_back(i);
  if (p.outputs.empty()) p.outputs.push_back(static_cast<int>(pool.size()) - 1);
  return p;
}

std::string to_cpp(const Program& p) {
  std::string s = fmt::format("// fuzz program, seed {}\n", p.seed);
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    std::string shape;
    for (int64_t d : p.inputs[i].shape) shape += fmt::format("{}{}", shape.empty() ? "" : ", ", d);
    s += fmt::format("at::Tensor v{} = at::randn({{{}}}, at::{}){};\n", i, shape,
                     p.inputs[i].dtype == at::kFloat ? "kFloat" : "kDouble",
                     p.inputs[i].requires_grad ? ".requires_grad_()" : "");
  }
  for (size_t k = 0; k < p.ops.size(); ++k)
    s += statement(p.ops[k], static_cast<int>(p.inputs.size() + k)) + "\n";
  s += "return {";
  for (size_t i = 0; i < p.outputs.size(); ++i)
    s += fmt::format("{}v{}", i ? ", " : "", p.outputs[i]);
  return s + "};\n";
}

}  // namespace fuzz
