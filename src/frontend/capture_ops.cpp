// The capture table: one row per aten op (`aten::name.overload`, as the
// dispatcher names it; no overload -> `aten::name`), each translating the
// captured call into ltorch symbols on the active trace. Adding an op is one
// row here (and a sample in tests/jit/test_capture.cpp). In-place ops use
// the row of their functional form (`aten::add_.Tensor` -> `aten::add.Tensor`,
// `aten::fill_.Scalar` -> `aten::fill.Scalar`): its result is the new value
// of a tensor the function made, or is copied (prims.copy_) into one it did
// not make (capture.cpp). Factories read shape, dtype and device from the eager
// result, which has already been computed when a row runs.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "capture_session.h"
#include "thunder/core/tracing.h"
#include "thunder/executors/kernel.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"

namespace thunder::detail {

namespace {

using C = const AtenCall&;

// A reduction's or softmax's optional dtype argument: convert first.
Value with_dtype(C c, size_t dtype_arg) {
  Value x = c.tensor(0);
  if (std::optional<DType> d = c.dtype_arg(dtype_arg)) return ltorch::to(x, *d);
  return x;
}
Value optional_scalar(C c, size_t i) { return c.is_none(i) ? Value() : c.scalar(i); }

// A factory (or *_like) call: the eager result's metadata.
std::vector<int64_t> result_shape(C c) { return c.result().sizes().vec(); }
Device result_device(C c) { return from_aten(c.result().device()); }
DType result_dtype(C c) { return from_aten(c.result().scalar_type()); }

// beta * self + alpha * (mat1 @ mat2); `t` + addmm (torch::nn::Linear) is linear.
bool is_literal(const Value& v, double x) {
  return v.is_number() && !v.is_number_proxy() && v.to_double() == x;
}
Value addmm(C c) {
  const Value beta = c.scalar(3), alpha = c.scalar(4);
  const bool unit = is_literal(beta, 1) && is_literal(alpha, 1);
  if (std::optional<Value> w = c.transpose_of(2); w && unit && c.aten(0).dim() == 1)
    return ltorch::linear(c.tensor(1), *w, c.tensor(0));
  Value mm = ltorch::matmul(c.tensor(1), c.tensor(2));
  if (!is_literal(alpha, 1)) mm = ltorch::mul(mm, alpha);
  if (is_literal(beta, 0)) return mm;  // self is ignored, even its nan
  Value self = c.tensor(0);
  if (!is_literal(beta, 1)) self = ltorch::mul(self, beta);
  return ltorch::add(self, mm);
}

// torch::nn::Linear on a batch of rank other than 2 emits matmul(x, t(w))
// then add_(b): that is linear(x, w, b), as thunder code would write it.
Value add_tensor(C c) {
  const Value alpha = c.scalar(2);
  if (auto xw = c.matmul_transposed(0);
      xw && is_literal(alpha, 1) && c.arg(1).isTensor() &&
      !c.aten(1).unsafeGetTensorImpl()->is_wrapped_number() && c.aten(1).dim() == 1 &&
      c.aten(1).size(0) == c.aten(0).size(-1) && c.aten(1).scalar_type() == c.aten(0).scalar_type())
    return ltorch::linear(xw->first, xw->second, c.tensor(1));
  return ltorch::add(c.tensor(0), c.tensor(1), alpha);
}

// x[a:b] along one dim (Python slicing): start and end as libtorch clamps
// them, read off the eager result; steps other than 1 are not translated.
Value slice(C c) {
  const c10::IValue& step = c.arg(4);
  if (!step.isNone() && step.toInt() != 1)
    c.fail("step {} (only step 1 is translated)", step.toInt());
  const int64_t dim = c.int_arg(1);
  const at::Tensor& in = c.aten(0);
  const int64_t d = dim < 0 ? dim + in.dim() : dim;
  const c10::IValue& start = c.arg(2);
  int64_t lo = start.isNone() ? 0 : start.toInt();
  if (lo < 0) lo += in.size(d);
  lo = std::clamp<int64_t>(lo, 0, in.size(d));
  const int64_t length = c.result().size(d);
  return ltorch::narrow(c.tensor(0), d, lo, length);
}

// The plain lookup only: padding_idx, scale_grad_by_freq and sparse change
// the gradient, which ltorch.embedding's rule does not do.
Value embedding(C c) {
  if (c.int_arg(2) != -1 || c.bool_arg(3) || c.bool_arg(4))
    c.fail("padding_idx, scale_grad_by_freq and sparse are not translated");
  return ltorch::embedding(c.tensor(1), c.tensor(0));
}

// Mean reduction over class indices, without weights or label smoothing.
// Targets equal to ignore_index are not skipped (ltorch.cross_entropy has no
// ignore_index): the default -100 never matches a class index.
Value cross_entropy(C c) {
  if (!c.tensor(2).is_none() || c.int_arg(3) != 1 || c.double_arg(5) != 0.0 ||
      c.aten(0).dim() != 2 || c.aten(1).dim() != 1 ||
      !at::isIntegralType(c.aten(1).scalar_type(), false))
    c.fail(
        "only [N, C] logits with [N] class indices, mean reduction, no weight and no label "
        "smoothing are translated");
  return ltorch::cross_entropy(c.tensor(0), c.tensor(1));
}

// batch_norm(input, weight, bias, running_mean, running_var, training,
// momentum, eps, cudnn_enabled): the output is ltorch.batch_norm. In
// training, aten also writes the running statistics (its schema does not
// say so; capture.cpp snapshots them for the undo): that update is recorded
// as copies into them, detached like eager's.
Value batch_norm(C c) {
  const bool training = c.bool_arg(5);
  const Value out = ltorch::batch_norm(c.tensor(0), c.tensor(3), c.tensor(4), c.tensor(1),
                                       c.tensor(2), training, c.double_arg(7));
  if (!training) return out;
  struct Detached {  // the update's ops are constants for autodiff
    TraceCtx* ctx = current_trace_ctx();
    bool was = std::exchange(ctx->grad_enabled, false);
    ~Detached() { ctx->grad_enabled = was; }
  } detached;
  const double momentum = c.double_arg(6);
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < c.aten(0).dim(); ++d) dims.push_back(d);
  for (size_t i : {3, 4}) {
    if (c.is_none(i) || !c.aten(i).defined()) continue;
    const Value stat = c.tensor(i);
    const Value x = ltorch::to(c.tensor(0), from_aten(c.aten(i).scalar_type()));
    // The batch's mean, or its unbiased variance, as aten's update uses.
    const Value batch = i == 3 ? ltorch::mean(x, dims, false) : ltorch::var(x, dims, 1.0, false);
    prims::copy_(ltorch::add(ltorch::mul(stat, 1.0 - momentum), ltorch::mul(batch, momentum)),
                 stat);
  }
  return out;
}

// squeeze of a dim whose size is not 1 returns the tensor unchanged.
Value squeeze_dim(C c) {
  if (c.result().dim() == c.aten(0).dim()) return c.tensor(0);
  return ltorch::squeeze(c.tensor(0), Value(std::vector<int64_t>{c.int_arg(1)}));
}

// detach (and detach_, which torch.tensor([...]) calls on its literal): the
// value itself when it carries no gradient in the trace.
Value detach(C c) {
  const Value x = c.tensor(0);
  if (x.is_tensor() && x.proxy()->requires_grad)
    c.fail(
        "detaches {}, a value that requires grad, which jit does not express yet; compute it "
        "under torch.no_grad() (torch::NoGradGuard) instead",
        x.proxy()->name);
  return x;
}

// repeat(x, reps) as views: x reshaped to [1, s0, 1, s1, ...] (leading 1s for
// the extra reps), expanded to [r0, s0, r1, s1, ...], reshaped to [r0*s0, ...].
Value repeat(C c) {
  const std::vector<int64_t> reps = c.int_list(1);  // at least one per dim (eager checked)
  std::vector<int64_t> sizes(c.aten(0).sizes().begin(), c.aten(0).sizes().end());
  sizes.insert(sizes.begin(), reps.size() - sizes.size(), 1);
  std::vector<int64_t> pairs, expanded, out;
  for (size_t i = 0; i < reps.size(); ++i) {
    pairs.insert(pairs.end(), {1, sizes[i]});
    expanded.insert(expanded.end(), {reps[i], sizes[i]});
    out.push_back(reps[i] * sizes[i]);
  }
  return ltorch::reshape(ltorch::expand(ltorch::reshape(c.tensor(0), pairs), expanded), out);
}

#define UNARY(op)                                             \
  {                                                           \
    "aten::" #op, [](C c) { return ltorch::op(c.tensor(0)); } \
  }
#define BINARY(op)                                                                      \
  {"aten::" #op ".Tensor", [](C c) { return ltorch::op(c.tensor(0), c.tensor(1)); }}, { \
    "aten::" #op ".Scalar", [](C c) { return ltorch::op(c.tensor(0), c.scalar(1)); }    \
  }

const std::unordered_map<std::string, Translation>& table() {
  static const std::unordered_map<std::string, Translation> rows = {
      // ---- elementwise ----
      {"aten::add.Tensor", add_tensor},
      {"aten::add.Scalar", [](C c) { return ltorch::add(c.tensor(0), c.scalar(1), c.scalar(2)); }},
      {"aten::sub.Tensor", [](C c) { return ltorch::sub(c.tensor(0), c.tensor(1), c.scalar(2)); }},
      {"aten::sub.Scalar", [](C c) { return ltorch::sub(c.tensor(0), c.scalar(1), c.scalar(2)); }},
      {"aten::rsub.Tensor", [](C c) { return ltorch::sub(c.tensor(1), c.tensor(0), c.scalar(2)); }},
      {"aten::rsub.Scalar", [](C c) { return ltorch::sub(c.scalar(1), c.tensor(0), c.scalar(2)); }},
      BINARY(mul),
      BINARY(div),
      {"aten::pow.Tensor_Tensor", [](C c) { return ltorch::pow(c.tensor(0), c.tensor(1)); }},
      {"aten::pow.Tensor_Scalar", [](C c) { return ltorch::pow(c.tensor(0), c.scalar(1)); }},
      {"aten::pow.Scalar", [](C c) { return ltorch::pow(c.scalar(0), c.tensor(1)); }},
      UNARY(neg),
      UNARY(abs),
      UNARY(exp),
      UNARY(log),
      UNARY(log1p),
      UNARY(sqrt),
      UNARY(rsqrt),
      UNARY(sin),
      UNARY(cos),
      UNARY(tanh),
      UNARY(sigmoid),
      UNARY(relu),
      UNARY(silu),
      UNARY(erf),
      UNARY(reciprocal),
      {"aten::gelu", [](C c) { return ltorch::gelu(c.tensor(0), c.string_arg(1)); }},
      {"aten::maximum", [](C c) { return ltorch::maximum(c.tensor(0), c.tensor(1)); }},
      {"aten::minimum", [](C c) { return ltorch::minimum(c.tensor(0), c.tensor(1)); }},
      {"aten::clamp",
       [](C c) {
         return ltorch::clamp(c.tensor(0), optional_scalar(c, 1), optional_scalar(c, 2));
       }},
      {"aten::where.self",
       [](C c) { return ltorch::where(c.tensor(0), c.tensor(1), c.tensor(2)); }},
      {"aten::where.ScalarSelf",
       [](C c) { return ltorch::where(c.tensor(0), c.scalar(1), c.tensor(2)); }},
      {"aten::where.ScalarOther",
       [](C c) { return ltorch::where(c.tensor(0), c.tensor(1), c.scalar(2)); }},
      // ---- comparison and logical ----
      BINARY(eq),
      BINARY(ne),
      BINARY(lt),
      BINARY(le),
      BINARY(gt),
      BINARY(ge),
      {"aten::logical_and", [](C c) { return ltorch::logical_and(c.tensor(0), c.tensor(1)); }},
      {"aten::logical_or", [](C c) { return ltorch::logical_or(c.tensor(0), c.tensor(1)); }},
      UNARY(logical_not),
      // ---- reductions ----
      {"aten::sum", [](C c) { return ltorch::sum(with_dtype(c, 1), {}, false); }},
      {"aten::sum.dim_IntList",
       [](C c) { return ltorch::sum(with_dtype(c, 3), c.int_list(1), c.bool_arg(2)); }},
      {"aten::mean", [](C c) { return ltorch::mean(with_dtype(c, 1), {}, false); }},
      {"aten::mean.dim",
       [](C c) { return ltorch::mean(with_dtype(c, 3), c.int_list(1), c.bool_arg(2)); }},
      {"aten::amax", [](C c) { return ltorch::amax(c.tensor(0), c.int_list(1), c.bool_arg(2)); }},
      {"aten::amin", [](C c) { return ltorch::amin(c.tensor(0), c.int_list(1), c.bool_arg(2)); }},
      // (values, indices): a router's top-1 choice
      {"aten::max.dim", [](C c) { return ltorch::max(c.tensor(0), c.int_arg(1), c.bool_arg(2)); }},
      {"aten::argmax",
       [](C c) {
         return ltorch::argmax(c.tensor(0), c.is_none(1) ? Value() : Value(c.int_arg(1)),
                               c.bool_arg(2));
       }},
      // ---- shape ----
      {"aten::view", [](C c) { return ltorch::view(c.tensor(0), c.int_list(1)); }},
      {"aten::reshape", [](C c) { return ltorch::reshape(c.tensor(0), c.int_list(1)); }},
      {"aten::_reshape_alias", [](C c) { return ltorch::reshape(c.tensor(0), c.int_list(1)); }},
      {"aten::flatten.using_ints",
       [](C c) { return ltorch::flatten(c.tensor(0), c.int_arg(1), c.int_arg(2)); }},
      {"aten::transpose.int",
       [](C c) { return ltorch::transpose(c.tensor(0), c.int_arg(1), c.int_arg(2)); }},
      {"aten::t",
       [](C c) {
         return c.aten(0).dim() < 2 ? c.tensor(0) : ltorch::transpose(c.tensor(0), 0, 1);
       }},
      {"aten::permute", [](C c) { return ltorch::permute(c.tensor(0), c.int_list(1)); }},
      {"aten::unsqueeze", [](C c) { return ltorch::unsqueeze(c.tensor(0), c.int_arg(1)); }},
      {"aten::squeeze", [](C c) { return ltorch::squeeze(c.tensor(0), Value()); }},
      {"aten::squeeze.dim", squeeze_dim},
      {"aten::expand", [](C c) { return ltorch::expand(c.tensor(0), c.int_list(1)); }},
      {"aten::select.int",
       [](C c) { return ltorch::select(c.tensor(0), c.int_arg(1), c.int_arg(2)); }},
      {"aten::narrow",
       [](C c) { return ltorch::narrow(c.tensor(0), c.int_arg(1), c.int_arg(2), c.int_arg(3)); }},
      {"aten::slice.Tensor", slice},
      {"aten::contiguous", [](C c) { return ltorch::contiguous(c.tensor(0)); }},
      {"aten::to.dtype", [](C c) { return ltorch::to(c.tensor(0), *c.dtype_arg(1)); }},
      // x.to(device, dtype); Python's torch.tensor([...]) literal ends in one.
      {"aten::to.device",
       [](C c) {
         if (!c.arg(1).toDevice().is_cpu())
           c.fail("moves to {}; jit runs CPU programs", c.arg(1).toDevice().str());
         return ltorch::to(c.tensor(0), *c.dtype_arg(2));
       }},
      {"aten::repeat", repeat},
      // torch.tensor([...]) in Python: the literal, made outside the
      // dispatcher, is a captured constant; lift_fresh returns it.
      {"aten::lift_fresh", [](C c) { return c.tensor(0); }},
      {"aten::detach", detach},
      {"aten::split.Tensor",
       [](C c) { return ltorch::split(c.tensor(0), c.int_arg(1), c.int_arg(2)); }},
      {"aten::split_with_sizes",
       [](C c) { return ltorch::split(c.tensor(0), c.int_list(1), c.int_arg(2)); }},
      {"aten::chunk", [](C c) { return ltorch::chunk(c.tensor(0), c.int_arg(1), c.int_arg(2)); }},
      {"aten::triu", [](C c) { return ltorch::triu(c.tensor(0), c.int_arg(1)); }},
      {"aten::masked_fill.Scalar",
       [](C c) { return ltorch::masked_fill(c.tensor(0), c.tensor(1), c.scalar(2)); }},
      {"aten::cat", [](C c) { return ltorch::cat(c.tensors(0), c.int_arg(1)); }},
      {"aten::stack", [](C c) { return ltorch::stack(c.tensors(0), c.int_arg(1)); }},
      // ---- linear algebra and nn ----
      {"aten::matmul", [](C c) { return ltorch::matmul(c.tensor(0), c.tensor(1)); }},
      {"aten::mm", [](C c) { return ltorch::matmul(c.tensor(0), c.tensor(1)); }},
      {"aten::bmm", [](C c) { return ltorch::matmul(c.tensor(0), c.tensor(1)); }},
      {"aten::addmm", addmm},
      {"aten::linear", [](C c) { return ltorch::linear(c.tensor(0), c.tensor(1), c.tensor(2)); }},
      {"aten::softmax.int", [](C c) { return ltorch::softmax(with_dtype(c, 2), c.int_arg(1)); }},
      {"aten::_softmax", [](C c) { return ltorch::softmax(c.tensor(0), c.int_arg(1)); }},
      {"aten::log_softmax.int",
       [](C c) { return ltorch::log_softmax(with_dtype(c, 2), c.int_arg(1)); }},
      {"aten::_log_softmax", [](C c) { return ltorch::log_softmax(c.tensor(0), c.int_arg(1)); }},
      {"aten::layer_norm",
       [](C c) {
         return ltorch::layer_norm(c.tensor(0), c.int_list(1), c.tensor(2), c.tensor(3),
                                   c.double_arg(4));
       }},
      // Only the normalized output; its mean and rstd have no ltorch value.
      {"aten::native_layer_norm",
       [](C c) {
         return Value(std::vector<Value>{ltorch::layer_norm(c.tensor(0), c.int_list(1), c.tensor(2),
                                                            c.tensor(3), c.double_arg(4)),
                                         Value(), Value()});
       }},
      {"aten::batch_norm", batch_norm},
      {"aten::embedding", embedding},
      // ---- indexing ----
      {"aten::gather",
       [](C c) {
         if (c.bool_arg(3)) c.fail("sparse_grad=True is not supported");
         return ltorch::gather(c.tensor(0), c.int_arg(1), c.tensor(2));
       }},
      {"aten::scatter_add",
       [](C c) {
         return ltorch::scatter_add(c.tensor(0), c.int_arg(1), c.tensor(2), c.tensor(3));
       }},
      {"aten::scatter.src",
       [](C c) { return ltorch::scatter(c.tensor(0), c.int_arg(1), c.tensor(2), c.tensor(3)); }},
      {"aten::index_select",
       [](C c) { return ltorch::index_select(c.tensor(0), c.int_arg(1), c.tensor(2)); }},
      {"aten::cross_entropy_loss", cross_entropy},
      {"aten::dropout",
       [](C c) { return ltorch::dropout(c.tensor(0), c.double_arg(1), c.bool_arg(2)); }},
      // ---- factories (shape, dtype, device from the eager result) ----
      {"aten::empty.memory_format",
       [](C c) { return ltorch::empty(result_shape(c), result_device(c), result_dtype(c)); }},
      {"aten::empty_like",
       [](C c) { return ltorch::empty(result_shape(c), result_device(c), result_dtype(c)); }},
      {"aten::zeros",
       [](C c) { return ltorch::zeros(result_shape(c), result_device(c), result_dtype(c)); }},
      {"aten::zeros_like",
       [](C c) { return ltorch::zeros(result_shape(c), result_device(c), result_dtype(c)); }},
      {"aten::ones",
       [](C c) { return ltorch::ones(result_shape(c), result_device(c), result_dtype(c)); }},
      {"aten::ones_like",
       [](C c) { return ltorch::ones(result_shape(c), result_device(c), result_dtype(c)); }},
      {"aten::full",
       [](C c) {
         return ltorch::full(result_shape(c), c.scalar(1), result_device(c), result_dtype(c));
       }},
      {"aten::full_like",
       [](C c) {
         return ltorch::full(result_shape(c), c.scalar(1), result_device(c), result_dtype(c));
       }},
      // arange(end), arange(start, end), arange(start, end, step): the
      // numbers as given, device and dtype from the eager result.
      {"aten::arange",
       [](C c) {
         return ltorch::arange(Value(int64_t{0}), c.scalar(0), Value(int64_t{1}), result_device(c),
                               result_dtype(c));
       }},
      {"aten::arange.start",
       [](C c) {
         return ltorch::arange(c.scalar(0), c.scalar(1), Value(int64_t{1}), result_device(c),
                               result_dtype(c));
       }},
      {"aten::arange.start_step",
       [](C c) {
         return ltorch::arange(c.scalar(0), c.scalar(1), c.scalar(2), result_device(c),
                               result_dtype(c));
       }},
      // The functional forms of fill_ and zero_.
      {"aten::fill.Scalar",
       [](C c) {
         return ltorch::full(result_shape(c), c.scalar(1), result_device(c), result_dtype(c));
       }},
      {"aten::zero",
       [](C c) { return ltorch::zeros(result_shape(c), result_device(c), result_dtype(c)); }},
      // copy_'s functional form: the source broadcast to the destination's
      // shape (the dtype conversion is the in-place write's).
      {"aten::copy",
       [](C c) {
         const Value src = c.tensor(1);
         return c.aten(1).sizes() == c.result().sizes() ? src
                                                        : ltorch::expand(src, result_shape(c));
       }},
  };
  return rows;
}

#undef UNARY
#undef BINARY

}  // namespace

const Translation* find_translation(const std::string& name) {
  const auto& rows = table();
  auto it = rows.find(name);
  return it == rows.end() ? nullptr : &it->second;
}

bool returns_host_value(const std::string& name) {
  static const std::unordered_map<std::string, bool> host = {
      {"aten::item", true},       {"aten::_local_scalar_dense", true},
      {"aten::is_nonzero", true}, {"aten::equal", true},
      {"aten::allclose", true},   {"aten::is_same_size", true},
  };
  return host.count(name) != 0;
}

bool has_data_dependent_shape(const std::string& name) {
  static const std::unordered_map<std::string, bool> ops = {
      {"aten::nonzero", true},
      {"aten::masked_select", true},
      {"aten::unique", true},
      {"aten::_unique", true},
      {"aten::_unique2", true},
      {"aten::unique_dim", true},
      {"aten::unique_consecutive", true},
      {"aten::argwhere", true},
  };
  return ops.count(name) != 0;
}

std::vector<std::string> translated_ops() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : table()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace thunder::detail
